#!/usr/bin/env python3
"""make_models.py - small GGUF language models with seeded random weights,
for the "every type and architecture" test of issue 48.

    make_models.py OUTDIR [--only NAME[,NAME...]] [--list]

Writes OUTDIR/NAME.gguf for each model below through the gguf package's
GGUFWriter, laid out as llama.cpp's converter (convert_hf_to_gguf.py) and
llama-quantize lay them out, with the SmolLM2-135M-Instruct tokenizer
(every tokenizer.* key copied from $TG_DEPS_DIR/models/
SmolLM2-135M-Instruct.Q4_1.gguf, so the vocabulary is 49152 tokens), and
OUTDIR/models.txt, one line a model:
    NAME ARCH WEIGHT_TYPE EMBD_TYPE OUTPUT_TYPE|tied
tests/llm/ref_forward.py computes the logits the C model must give.

The models (2 layers each; weights N(0,1)/sqrt(fan_in) times a gain,
norm weights 1 + N(0, 0.1^2) so that every per-channel scale matters):

  llama-<T>, T in f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q4_k q5_k q6_k:
      arch llama, GQA (4 heads, 2 kv heads), tied embeddings; every 2-D
      weight of the blocks in type T, token_embd (and so the output) in T
      too, except llama-f32 whose token_embd is Q4_0 (an F32 one would
      be 25 MB of the ~150 MB the set may take; the vocabulary matrix
      is each file's big tensor, so the files not testing its type keep
      it in a small one).  n_embd 128 (head_dim
      32), n_ff 256; the K-quant ones n_embd 256 (head_dim 64), n_ff
      512, since a K-quant row holds whole 256-value blocks.
  llama3-rope: arch llama with a rope_freqs.weight tensor (Llama 3.1/3.2
      rope scaling), 4 heads over 1 kv head, Q8_0 blocks, untied:
      token_embd Q4_1, output Q5_0.  Its
      factors come from the converter's llama3 formula with an
      original context of 16 (factor 8, low 1, high 4) so that they
      change the angles of the first few positions, where a test looks.
  qwen2:  arch qwen2, q/k/v biases, GQA, tied, Q5_0 blocks, Q5_1 embd;
      no rope.dimension_count (nor in the qwen3s and olmoe: their
      converter writes none; n_rot defaults to head_dim).
  qwen3:  arch qwen3, per-head q/k RMSNorm, head_dim 128 given by
      attention.key_length while n_embd/n_head = 64, untied; a Q4_K_M
      mix as llama-quantize makes it (Q4_K, with attn_v and ffn_down
      Q6_K, output Q6_K, token_embd Q4_K), n_embd 256.
  qwen3moe: arch qwen3moe, 8 experts, 2 used, softmax router, the
      chosen weights renormalised; expert ffn 128 wide while
      feed_forward_length says 512 (the converter writes the dense
      intermediate_size there); Q8_0 blocks and experts, Q4_1 embd,
      tied.
  olmoe:  arch olmoe, 8 experts, 2 used, NOT renormalised; q/k RMSNorm
      over the whole projection (not per head); n_head_kv = n_head;
      untied (olmoe requires output.weight); no rope.freq_base key (the
      default, 10000, applies); Q5_1 blocks, Q4_0 embd and output.

======================================================================
THE CONTRACT (what a loader must do to match llama.cpp and ref_forward)
======================================================================
Sources checked (ggml-org/llama.cpp): src/llama-model.cpp (load_hparams'
generic part, llama_model_rope_type), src/models/llama.cpp, qwen2.cpp,
qwen3.cpp, qwen3moe.cpp, olmoe.cpp, src/llama-graph.cpp (build_norm,
build_ffn, build_moe_ffn, build_attn), ggml/src/ggml-cpu ops (rope),
convert_hf_to_gguf.py (LlamaModel: Q/K permutation, rope_freqs), and the
gguf package's constants (MODEL_ARCH, MODEL_TENSORS, Keys).

Keys ({A} = general.architecture, one of llama qwen2 qwen3 qwen3moe
olmoe; anything else is refused by name):
  {A}.block_count                    n_layer          required
  {A}.context_length                 n_ctx_train      required
  {A}.embedding_length               n_embd           required
  {A}.feed_forward_length            n_ff             (dense archs; olmoe
                                     experts' width)
  {A}.attention.head_count           n_head           required
  {A}.attention.head_count_kv        n_head_kv        default n_head
  {A}.attention.key_length           head_dim_k       default n_embd/n_head
  {A}.attention.value_length         head_dim_v       default n_embd/n_head
      (all five archs need head_dim_k == head_dim_v)
  {A}.attention.layer_norm_rms_epsilon  eps           required
  {A}.rope.freq_base                 base             default 10000.0
  {A}.rope.dimension_count           n_rot            default head_dim_k;
      these archs need n_rot == head_dim_k (llama refuses otherwise,
      the qwens and olmoe assert it)
  {A}.rope.scaling.type / .factor    absent here ("linear" and 1.0 are
      the defaults: no scaling)
  {A}.expert_count, {A}.expert_used_count    MoE (required for
      qwen3moe/olmoe, 0 < used <= count)
  {A}.expert_feed_forward_length     qwen3moe expert width; if absent
      n_ff / expert_used_count (qwen3moe.cpp).  Safer: take the widths
      from the tensors' shapes, which must agree.
  {A}.expert_weights_scale           absent here; if present and not 0
      or 1, the chosen expert weights are multiplied by it
  {A}.vocab_size                     written for llama only; the
      vocabulary is token_embd's row count (= tokenizer.ggml.tokens).
Tensors (GGUF dims are ne, innermost first; numpy/PyTorch shape is the
reverse; W below is numpy shape (out, in), y = x @ W.T):
  token_embd.weight        (n_vocab, n_embd)   rows looked up per token
  output_norm.weight       (n_embd,)           F32
  output.weight            (n_vocab, n_embd)   absent = tied: use
                                               token_embd (not olmoe)
  rope_freqs.weight        (n_rot/2,) F32      llama only, optional
  blk.N.attn_norm.weight   (n_embd,)           F32
  blk.N.attn_q.weight      (n_head*hd, n_embd)
  blk.N.attn_k.weight      (n_head_kv*hd, n_embd)
  blk.N.attn_v.weight      (n_head_kv*hd, n_embd)
  blk.N.attn_q.bias/k.bias/v.bias  F32         qwen2 (required there)
  blk.N.attn_output.weight (n_embd, n_head*hd)
  blk.N.attn_q_norm.weight (hd,) qwen3/qwen3moe; (n_embd,) olmoe   F32
  blk.N.attn_k_norm.weight (hd,) qwen3/qwen3moe; (n_head_kv*hd,) olmoe
  blk.N.ffn_norm.weight    (n_embd,)           F32
  blk.N.ffn_gate.weight    (n_ff, n_embd)      dense
  blk.N.ffn_up.weight      (n_ff, n_embd)      dense
  blk.N.ffn_down.weight    (n_embd, n_ff)      dense
  blk.N.ffn_gate_inp.weight (n_expert, n_embd) MoE router, F32 (the
                                               converter and quantizer
                                               keep it F32)
  blk.N.ffn_gate_exps.weight (n_expert, n_ff_exp, n_embd)  experts first
  blk.N.ffn_up_exps.weight   (n_expert, n_ff_exp, n_embd)
  blk.N.ffn_down_exps.weight (n_expert, n_embd, n_ff_exp)
  Norm weights and biases are F32 in every file; matmul weights and
  token_embd in the types listed above.  Types decode exactly as
  gguf.quants.dequantize does.
Forward (per token position p = 0..T-1, causal, no KV cache needed):
  x = token_embd[tok]                       (no scaling of embeddings)
  per layer:
    h = rmsnorm(x) * attn_norm      rmsnorm(v) = v / sqrt(mean(v^2) + eps)
    q = h Wq^T (+bq), k = h Wk^T (+bk), v = h Wv^T (+bv)
    olmoe:   q = rmsnorm(q) * q_norm, k = rmsnorm(k) * k_norm over the
             whole vector (n_head*hd values), before splitting heads
    split q into n_head heads of hd, k and v into n_head_kv heads
    qwen3, qwen3moe: each head of q (of k) = rmsnorm(head) * q_norm
             (k_norm), same eps, before RoPE
    RoPE on q and k, angle for pair i (0 <= i < n_rot/2) at position p:
        theta = p * base^(-2i/n_rot) / ff[i]
      ff = rope_freqs.weight if the file has it, else 1.
      Layout by arch (llama_model_rope_type):
        llama                       NORM: pairs (x[2i], x[2i+1])
        qwen2, qwen3, qwen3moe, olmoe  NEOX: pairs (x[i], x[i+n_rot/2])
      (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos).  The weights are
      used AS STORED: the llama converter already permuted Q/K rows for
      the NORM layout; nothing is permuted at load.
    attention: query head j reads kv head j / (n_head/n_head_kv)
      (integer division, consecutive query heads share a kv head);
      scores = q.k / sqrt(hd), keys at positions <= p only, softmax,
      weighted sum of v; heads concatenated in order; o = . Wo^T
    x = x + o
    h = rmsnorm(x) * ffn_norm
    dense: f = (silu(h Wg^T) * (h Wu^T)) Wd^T,  silu(a) = a/(1+e^-a)
    MoE:   r = softmax(h Wr^T) over all n_expert; pick the
           expert_used_count largest (ties: lower index first is fine,
           the files are made with a margin); w = r[picked];
           qwen3moe (and llama-with-experts): w /= max(sum(w), 6.1035e-5)
           olmoe: w as is (no renormalisation)
           f = sum_e w_e * (silu(h Wg_e^T) * (h Wu_e^T)) Wd_e^T
    x = x + f
  logits = (rmsnorm(x) * output_norm) Wout^T  (Wout = output or token_embd)
No bias on attn_output or on the ffn in these files (llama may carry
optional ones: attn_output.bias, ffn_*.bias, added when present).
Numerics: ref_forward.py computes in float64 from the decoded weights;
ggml computes the RoPE angles in float32 (theta_scale powers), which
moves nothing visible at these positions.  The logits' std is 1.1-1.7
and |logit| <= ~8; a float32 C forward lands within ~1e-5 of the
reference, while every convention broken (layout, grouping, factors,
renormalisation) moves the logits by >= 10% of their largest value
(check_models.py shows each), so a tolerance like 1e-3 absolute (or
1e-4 of the largest |logit|) separates right from wrong.
MoE: picking experts is discontinuous; feed tokens whose router gaps are
well above rounding: check_models.TOKENS =
1,9906,314,2088,17,28,100,4000,49151,0,55,2 has a smallest gap between
the last chosen and first rejected router logit of 0.022 (qwen3moe) and
0.039 (olmoe); for other tokens run ref_forward.py --min-gap 1e-3.
Self-check of these files and conventions: check_models.py OUTDIR.
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT, GGUFValueType as VT

SMOL = "models/SmolLM2-135M-Instruct.Q4_1.gguf"
N_VOCAB = 49152


# ----------------------------------------------------------------------
# K-quant encoders: the gguf package decodes Q4_K, Q5_K and Q6_K but does
# not encode them.  These are plain (not error-optimising) encoders that
# write valid blocks; the reference decodes whatever they write with
# gguf.quants.dequantize, so their accuracy only keeps activations sane.

def _f16(a):
    return np.asarray(a, dtype=np.float16)


def _div(a, b):
    return np.divide(a, b, out=np.zeros_like(a), where=b != 0)


def _scales_mins(x, qmax):
    """x: (nb, 8, 32).  6-bit sub-block scales and mins with the block's
    f16 d and dmin, and the quantized values 0..qmax."""
    mn = np.minimum(x.min(-1), 0.0)
    sc_f = (x.max(-1) - mn) / qmax
    mi_f = -mn
    d = _f16(sc_f.max(-1) / 63)
    dmin = _f16(mi_f.max(-1) / 63)
    d32, dm32 = d.astype(np.float32), dmin.astype(np.float32)
    sc = np.clip(np.rint(_div(sc_f, d32[:, None])), 0, 63).astype(np.uint8)
    mi = np.clip(np.rint(_div(mi_f, dm32[:, None])), 0, 63).astype(np.uint8)
    step = d32[:, None] * sc
    off = dm32[:, None] * mi
    q = np.rint(_div(x + off[..., None],
                     np.broadcast_to(step[..., None], x.shape)))
    q = np.clip(q, 0, qmax).astype(np.uint8)
    return d, dmin, sc, mi, q


def _pack_scales(sc, mi):
    """The 12 bytes holding eight 6-bit scales and mins (ggml's
    get_scale_min_k4 reads them back)."""
    s = np.zeros((sc.shape[0], 12), np.uint8)
    s[:, 0:4] = sc[:, 0:4] | ((sc[:, 4:8] >> 4) << 6)
    s[:, 4:8] = mi[:, 0:4] | ((mi[:, 4:8] >> 4) << 6)
    s[:, 8:12] = (sc[:, 4:8] & 15) | ((mi[:, 4:8] & 15) << 4)
    return s


def _nibbles(q):
    """q: (nb, 8, 32) 4-bit values: sub-blocks 2c and 2c+1 share 32
    bytes, low and high nibble."""
    lo, hi = q[:, 0::2, :] & 15, q[:, 1::2, :] & 15
    return (lo | (hi << 4)).reshape(q.shape[0], 128)


def enc_q4_k(x):
    x = x.reshape(-1, 8, 32)
    d, dmin, sc, mi, q = _scales_mins(x, 15)
    return np.concatenate([d.view(np.uint8).reshape(-1, 2),
                           dmin.view(np.uint8).reshape(-1, 2),
                           _pack_scales(sc, mi), _nibbles(q)], axis=1)


def enc_q5_k(x):
    x = x.reshape(-1, 8, 32)
    d, dmin, sc, mi, q = _scales_mins(x, 31)
    qh = np.zeros((x.shape[0], 32), np.uint8)
    for j in range(8):
        qh |= ((q[:, j, :] >> 4) & 1) << j
    return np.concatenate([d.view(np.uint8).reshape(-1, 2),
                           dmin.view(np.uint8).reshape(-1, 2),
                           _pack_scales(sc, mi), qh, _nibbles(q)], axis=1)


def enc_q6_k(x):
    x = x.reshape(-1, 16, 16)
    sc_f = np.abs(x).max(-1) / 31
    d = _f16(sc_f.max(-1) / 127)
    d32 = d.astype(np.float32)
    sc = np.clip(np.rint(_div(sc_f, d32[:, None])), 0, 127).astype(np.int8)
    step = d32[:, None] * sc
    q = np.rint(_div(x, np.broadcast_to(step[..., None], x.shape)))
    q = (np.clip(q, -32, 31) + 32).astype(np.uint8).reshape(-1, 2, 4, 32)
    # per 128-value half n: quarter k = values n*128 + 32k + l
    ql = np.concatenate([(q[:, :, 0] & 15) | ((q[:, :, 2] & 15) << 4),
                         (q[:, :, 1] & 15) | ((q[:, :, 3] & 15) << 4)],
                        axis=2).reshape(-1, 128)
    qh = ((q[:, :, 0] >> 4) | ((q[:, :, 1] >> 4) << 2) |
          ((q[:, :, 2] >> 4) << 4) | ((q[:, :, 3] >> 4) << 6)).reshape(-1, 64)
    return np.concatenate([ql, qh, sc.view(np.uint8),
                           d.view(np.uint8).reshape(-1, 2)], axis=1)


K_ENC = {QT.Q4_K: enc_q4_k, QT.Q5_K: enc_q5_k, QT.Q6_K: enc_q6_k}


def encode(w, t):
    """w (float32, any rank, last dim the row) in ggml type t, as the
    array GGUFWriter.add_tensor takes with raw_dtype=t."""
    w = np.ascontiguousarray(w, dtype=np.float32)
    if t == QT.F32:
        return w
    if t == QT.F16:
        return w.astype(np.float16)
    if t in K_ENC:
        blk, size = gguf.GGML_QUANT_SIZES[t]
        assert w.shape[-1] % blk == 0, (t.name, w.shape)
        b = K_ENC[t](w.reshape(-1))
        assert b.shape[1] == size
        return b.reshape(*w.shape[:-1], w.shape[-1] // blk * size)
    return gguf.quants.quantize(w, t)


# ----------------------------------------------------------------------
# The models.

def sweep(t):
    k = t in K_ENC
    return dict(arch="llama", n_embd=256 if k else 128,
                n_ff=512 if k else 256, n_head=4, n_head_kv=2,
                wtype=t, embd=QT.Q4_0 if t == QT.F32 else t, out=None,
                base=10000.0, eps=1e-5, rope_dims=True)


MODELS = {"llama-" + t.name.lower(): sweep(t) for t in
          (QT.F32, QT.F16, QT.BF16, QT.Q4_0, QT.Q4_1, QT.Q5_0, QT.Q5_1,
           QT.Q8_0, QT.Q4_K, QT.Q5_K, QT.Q6_K)}
MODELS.update({
    "llama3-rope": dict(arch="llama", n_embd=128, n_ff=256, n_head=4,
                        n_head_kv=1, wtype=QT.Q8_0, embd=QT.Q4_1,
                        out=QT.Q5_0, base=500000.0, eps=1e-5,
                        rope_dims=True,
                        llama3=dict(factor=8.0, low=1.0, high=4.0,
                                    orig_ctx=16)),
    "qwen2": dict(arch="qwen2", n_embd=128, n_ff=256, n_head=4, n_head_kv=2,
                  wtype=QT.Q5_0, embd=QT.Q5_1, out=None, base=1000000.0,
                  eps=1e-6, bias=True),
    "qwen3": dict(arch="qwen3", n_embd=256, n_ff=512, n_head=4, n_head_kv=2,
                  head_dim=128, wtype=QT.Q4_K,
                  wtype_v=QT.Q6_K, embd=QT.Q4_K, out=QT.Q6_K,
                  base=1000000.0, eps=1e-6, qk_norm="head"),
    "qwen3moe": dict(arch="qwen3moe", n_embd=128, n_ff=512, n_head=4,
                     n_head_kv=2, head_dim=32, wtype=QT.Q8_0, embd=QT.Q4_1,
                     out=None, base=1000000.0, eps=1e-6, qk_norm="head",
                     n_expert=8, n_expert_used=2, n_ff_exp=128),
    "olmoe": dict(arch="olmoe", n_embd=128, n_ff=128, n_head=4, n_head_kv=4,
                  wtype=QT.Q5_1, embd=QT.Q4_0, out=QT.Q4_0, base=None,
                  eps=1e-5, qk_norm="full", n_expert=8, n_expert_used=2),
})
N_LAYER = 2
N_CTX = 512


def llama3_factors(m, n_rot, base):
    """rope_freqs as convert_hf_to_gguf.py's LlamaModel computes it for
    rope_scaling type llama3: 1 for short wavelengths, `factor` for long
    ones, a smooth blend between."""
    p = m["llama3"]
    lo_wl = p["orig_ctx"] / p["low"]
    hi_wl = p["orig_ctx"] / p["high"]
    out = []
    for i in range(n_rot // 2):
        freq = 1.0 / base ** (2 * i / n_rot)
        wl = 2 * math.pi / freq
        if wl < hi_wl:
            out.append(1.0)
        elif wl > lo_wl:
            out.append(p["factor"])
        else:
            s = (p["orig_ctx"] / wl - p["low"]) / (p["high"] - p["low"])
            out.append(1 / ((1 - s) / p["factor"] + s))
    return np.array(out, np.float32)


def tokenizer_fields(path):
    """Every tokenizer.* key of the SmolLM2 file as (key, value, vtype,
    subtype), in the file's order."""
    return gguf_fields(gguf.GGUFReader(path),
                       lambda key: key.startswith("tokenizer."))


def gguf_fields(r, keep):
    """The keys of GGUFReader r that keep(key) accepts, as (key, value,
    vtype, subtype) for GGUFWriter.add_key_value, in the file's order."""
    out = []
    for key, f in r.fields.items():
        if not keep(key):
            continue
        vt = f.types[0]
        if vt == VT.ARRAY:
            st = f.types[1]
            if st == VT.STRING:
                val = [bytes(f.parts[i]) for i in f.data]
            else:
                val = [f.parts[i][0].item() for i in f.data]
            out.append((key, val, vt, st))
        elif vt == VT.STRING:
            out.append((key, bytes(f.parts[f.data[0]]), vt, None))
        else:
            out.append((key, f.parts[f.data[0]][0].item(), vt, None))
    return out


class Gen:
    """Seeded weights for one model."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def mat(self, *shape, gain=1.0):
        return (self.rng.standard_normal(shape) * gain /
                math.sqrt(shape[-1])).astype(np.float32)

    def norm(self, n):
        return (1.0 + 0.1 * self.rng.standard_normal(n)).astype(np.float32)

    def vec(self, n, scale):
        return (scale * self.rng.standard_normal(n)).astype(np.float32)


def add(w, name, arr, t):
    w.add_tensor(name, encode(arr, t), raw_dtype=t)


def write_keys(w, m, hd):
    a = m["arch"]
    w.add_name("tgcore test " + a)
    w.add_block_count(N_LAYER)
    w.add_context_length(N_CTX)
    w.add_embedding_length(m["n_embd"])
    w.add_feed_forward_length(m["n_ff"])
    w.add_head_count(m["n_head"])
    w.add_head_count_kv(m["n_head_kv"])
    if "head_dim" in m:
        w.add_key_length(hd)
        w.add_value_length(hd)
    w.add_layer_norm_rms_eps(m["eps"])
    if m["base"] is not None:
        w.add_rope_freq_base(m["base"])
    if m.get("rope_dims"):
        w.add_rope_dimension_count(hd)
    if "n_expert" in m:
        w.add_expert_count(m["n_expert"])
        w.add_expert_used_count(m["n_expert_used"])
    if "n_ff_exp" in m:
        w.add_expert_feed_forward_length(m["n_ff_exp"])
    if a == "llama":
        w.add_vocab_size(N_VOCAB)


def write_attn(w, g, m, i, hd):
    d, nh, nkv = m["n_embd"], m["n_head"], m["n_head_kv"]
    p = "blk.%d." % i
    wt = m["wtype"]
    add(w, p + "attn_norm.weight", g.norm(d), QT.F32)
    add(w, p + "attn_q.weight", g.mat(nh * hd, d), wt)
    add(w, p + "attn_k.weight", g.mat(nkv * hd, d), wt)
    add(w, p + "attn_v.weight", g.mat(nkv * hd, d), m.get("wtype_v", wt))
    if m.get("bias"):
        add(w, p + "attn_q.bias", g.vec(nh * hd, 0.5), QT.F32)
        add(w, p + "attn_k.bias", g.vec(nkv * hd, 0.5), QT.F32)
        add(w, p + "attn_v.bias", g.vec(nkv * hd, 0.5), QT.F32)
    if m.get("qk_norm") == "head":
        add(w, p + "attn_q_norm.weight", g.norm(hd), QT.F32)
        add(w, p + "attn_k_norm.weight", g.norm(hd), QT.F32)
    elif m.get("qk_norm") == "full":
        add(w, p + "attn_q_norm.weight", g.norm(nh * hd), QT.F32)
        add(w, p + "attn_k_norm.weight", g.norm(nkv * hd), QT.F32)
    add(w, p + "attn_output.weight", g.mat(d, nh * hd), wt)


def write_ffn(w, g, m, i):
    d, p, wt = m["n_embd"], "blk.%d." % i, m["wtype"]
    add(w, p + "ffn_norm.weight", g.norm(d), QT.F32)
    if "n_expert" not in m:
        f = m["n_ff"]
        add(w, p + "ffn_gate.weight", g.mat(f, d), wt)
        add(w, p + "ffn_up.weight", g.mat(f, d), wt)
        add(w, p + "ffn_down.weight", g.mat(d, f), m.get("wtype_v", wt))
        return
    e, f = m["n_expert"], m.get("n_ff_exp", m["n_ff"])
    # a router gain of 4 spreads the probabilities, so that the chosen
    # experts win by a margin no rounding can overturn
    add(w, p + "ffn_gate_inp.weight", g.mat(e, d, gain=4.0), QT.F32)
    add(w, p + "ffn_gate_exps.weight", g.mat(e, f, d), wt)
    add(w, p + "ffn_up_exps.weight", g.mat(e, f, d), wt)
    add(w, p + "ffn_down_exps.weight", g.mat(e, d, f), wt)


def write_model(path, m, seed, tok):
    g = Gen(seed)
    hd = m.get("head_dim", m["n_embd"] // m["n_head"])
    w = gguf.GGUFWriter(path, m["arch"])
    write_keys(w, m, hd)
    for key, val, vt, st in tok:
        w.add_key_value(key, val, vt, sub_type=st)
    # embeddings of std 0.1: logits = 0.1 * sqrt(n_embd) * O(1), spread
    # enough that the comparison is not between near-equal numbers
    add(w, "token_embd.weight",
        g.mat(N_VOCAB, m["n_embd"], gain=0.1 * math.sqrt(m["n_embd"])),
        m["embd"])
    if "llama3" in m:
        add(w, "rope_freqs.weight", llama3_factors(m, hd, m["base"]),
            QT.F32)
    for i in range(N_LAYER):
        write_attn(w, g, m, i, hd)
        write_ffn(w, g, m, i)
    add(w, "output_norm.weight", g.norm(m["n_embd"]), QT.F32)
    if m["out"] is not None:
        add(w, "output.weight",
            g.mat(N_VOCAB, m["n_embd"], gain=0.1 * math.sqrt(m["n_embd"])),
            m["out"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--list", action="store_true",
                    help="print the model names and exit")
    ap.add_argument("--vocab-from", help="the SmolLM2 GGUF file "
                    "(default $TG_DEPS_DIR/" + SMOL + ")")
    a = ap.parse_args()
    if a.list:
        print("\n".join(MODELS))
        return 0
    names = list(MODELS)
    if a.only:
        names = a.only.split(",")
        bad = [n for n in names if n not in MODELS]
        if bad:
            sys.exit("make_models.py: unknown model %s (have: %s)" %
                     (", ".join(bad), " ".join(MODELS)))
    src = a.vocab_from
    if src is None:
        deps = os.environ.get("TG_DEPS_DIR",
                              os.path.expanduser("~/.cache/tgcore-deps"))
        src = os.path.join(deps, SMOL)
    if not os.path.exists(src):
        sys.exit("make_models.py: no SmolLM2 vocabulary at %s" % src)
    os.makedirs(a.outdir, exist_ok=True)
    t0 = time.time()
    tok = tokenizer_fields(src)
    with open(os.path.join(a.outdir, "models.txt"), "w") as f:
        for n in names:
            m = MODELS[n]
            seed = 4800 + list(MODELS).index(n)
            write_model(os.path.join(a.outdir, n + ".gguf"), m, seed, tok)
            f.write("%s %s %s %s %s\n" % (
                n, m["arch"], m["wtype"].name, m["embd"].name,
                m["out"].name if m["out"] is not None else "tied"))
    print("make_models.py: %d models in %.1f s" % (len(names),
                                                   time.time() - t0),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

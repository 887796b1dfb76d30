#!/usr/bin/env python3
"""ref_forward.py - an independent reference forward pass of a GGUF
language model (llama, qwen2, qwen3, qwen3moe, olmoe) in numpy, float64
throughout, weights decoded by gguf.quants.dequantize.

    ref_forward.py FILE (--tokens 1,2,3 | --prompt TEXT)
                   [--out LOGITS] [--greedy N] [--stats]
                   [--ignore-rope-freqs] [--min-gap G]

--out writes the logits of every position, T x n_vocab little-endian
float32, row t the logits after reading tokens 0..t (a causal forward
without a KV cache).  --greedy N then appends the argmax token N times
(recomputing the whole sequence each step) and prints the ids and text.
--prompt tokenizes TEXT with the file's byte-level BPE vocabulary
(tokenizer.ggml.model gpt2, SmolLM2's pre-tokenizer: single digits then
GPT-2's split) through the `tokenizers` package.  --stats prints the
logits' spread and, for mixture-of-experts models, the smallest gap
between the router logits of the last chosen and the first rejected
expert (a C implementation agrees on the experts only if that gap is
well above its rounding; --min-gap G exits 3 when it is not).
--ignore-rope-freqs drops rope_freqs.weight (to show a test that the
factors change the logits).

The semantics are the contract written at the top of make_models.py:
RMSNorm, RoPE in the arch's layout (llama NORM: adjacent pairs; qwen2,
qwen3, qwen3moe, olmoe NEOX: halves) on the weights as stored, llama3
frequency factors, grouped-query causal attention, SwiGLU, qwen2's
biases, qwen3's per-head and olmoe's whole-vector q/k norms, a softmax
router with top-k (renormalised for qwen3moe, not for olmoe), tied
embeddings when output.weight is absent.
"""
import argparse
import sys

import numpy as np
import gguf

ARCHS = ("llama", "qwen2", "qwen3", "qwen3moe", "olmoe")
NEOX = ("qwen2", "qwen3", "qwen3moe", "olmoe")
RENORM = ("llama", "qwen3moe")        # MoE weights renormalised
HEAD_QK_NORM = ("qwen3", "qwen3moe")  # per head, before RoPE
FULL_QK_NORM = ("olmoe",)             # whole projection, before RoPE


class Model:
    def __init__(self, path, ignore_rope_freqs=False):
        self.r = gguf.GGUFReader(path)
        self.t = {t.name: t for t in self.r.tensors}
        a = self.str("general.architecture")
        if a not in ARCHS:
            raise SystemExit("ref_forward.py: architecture %r is not "
                             "supported (have %s)" % (a, ", ".join(ARCHS)))
        self.arch = a
        self.n_layer = self.int(a + ".block_count")
        self.n_embd = self.int(a + ".embedding_length")
        self.n_head = self.int(a + ".attention.head_count")
        self.n_head_kv = self.int(a + ".attention.head_count_kv",
                                  self.n_head)
        self.hd = self.int(a + ".attention.key_length",
                           self.n_embd // self.n_head)
        hdv = self.int(a + ".attention.value_length",
                       self.n_embd // self.n_head)
        assert hdv == self.hd, "key_length != value_length"
        self.n_rot = self.int(a + ".rope.dimension_count", self.hd)
        assert self.n_rot == self.hd, "n_rot != head_dim"
        self.base = self.float(a + ".rope.freq_base", 10000.0)
        self.eps = self.float(a + ".attention.layer_norm_rms_epsilon")
        self.n_expert = self.int(a + ".expert_count", 0)
        self.n_used = self.int(a + ".expert_used_count", 0)
        self.w_scale = self.float(a + ".expert_weights_scale", 0.0)
        self.cache = {}
        self.ff = None
        if "rope_freqs.weight" in self.t and not ignore_rope_freqs:
            self.ff = self.w("rope_freqs.weight")
        self.margin = np.inf

    # metadata
    def field(self, key):
        f = self.r.fields.get(key)
        return None if f is None else f.parts[f.data[0]]

    def str(self, key):
        p = self.field(key)
        return None if p is None else bytes(p).decode()

    def int(self, key, default=None):
        p = self.field(key)
        if p is None:
            if default is None:
                raise SystemExit("ref_forward.py: no key " + key)
            return default
        return int(p[0])

    def float(self, key, default=None):
        p = self.field(key)
        if p is None:
            if default is None:
                raise SystemExit("ref_forward.py: no key " + key)
            return default
        return float(p[0])

    # weights, decoded once
    def w(self, name):
        if name not in self.cache:
            t = self.t.get(name)
            if t is None:
                return None
            self.cache[name] = gguf.quants.dequantize(
                t.data, t.tensor_type).astype(np.float64)
        return self.cache[name]

    def need(self, name):
        x = self.w(name)
        if x is None:
            raise SystemExit("ref_forward.py: no tensor " + name)
        return x


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


def linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


def rope(x, m):
    """x: (T, heads, hd) at positions 0..T-1."""
    T, n = x.shape[0], m.n_rot
    i = np.arange(n // 2)
    inv = m.base ** (-2.0 * i / n)
    if m.ff is not None:
        inv = inv / m.ff
    ang = np.arange(T)[:, None] * inv[None, :]
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    out = x.copy()
    if m.arch in NEOX:
        x0, x1 = x[..., :n // 2], x[..., n // 2:n]
        out[..., :n // 2] = x0 * c - x1 * s
        out[..., n // 2:n] = x0 * s + x1 * c
    else:
        x0, x1 = x[..., 0:n:2], x[..., 1:n:2]
        out[..., 0:n:2] = x0 * c - x1 * s
        out[..., 1:n:2] = x0 * s + x1 * c
    return out


def attention(m, h, p):
    T, hd = h.shape[0], m.hd
    q = linear(h, m.need(p + "attn_q.weight"), m.w(p + "attn_q.bias"))
    k = linear(h, m.need(p + "attn_k.weight"), m.w(p + "attn_k.bias"))
    v = linear(h, m.need(p + "attn_v.weight"), m.w(p + "attn_v.bias"))
    if m.arch in FULL_QK_NORM:
        q = rmsnorm(q, m.need(p + "attn_q_norm.weight"), m.eps)
        k = rmsnorm(k, m.need(p + "attn_k_norm.weight"), m.eps)
    q = q.reshape(T, m.n_head, hd)
    k = k.reshape(T, m.n_head_kv, hd)
    v = v.reshape(T, m.n_head_kv, hd)
    if m.arch in HEAD_QK_NORM:
        q = rmsnorm(q, m.need(p + "attn_q_norm.weight"), m.eps)
        k = rmsnorm(k, m.need(p + "attn_k_norm.weight"), m.eps)
    q, k = rope(q, m), rope(k, m)
    group = m.n_head // m.n_head_kv
    mask = np.triu(np.full((T, T), -np.inf), 1)
    out = np.empty((T, m.n_head, hd))
    for j in range(m.n_head):
        kv = j // group
        s = q[:, j, :] @ k[:, kv, :].T / np.sqrt(hd) + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        out[:, j, :] = s @ v[:, kv, :]
    return linear(out.reshape(T, m.n_head * hd),
                  m.need(p + "attn_output.weight"),
                  m.w(p + "attn_output.bias"))


def dense_ffn(m, h, p):
    g = linear(h, m.need(p + "ffn_gate.weight"), m.w(p + "ffn_gate.bias"))
    u = linear(h, m.need(p + "ffn_up.weight"), m.w(p + "ffn_up.bias"))
    return linear(silu(g) * u, m.need(p + "ffn_down.weight"),
                  m.w(p + "ffn_down.bias"))


def moe_ffn(m, h, p):
    logits = h @ m.need(p + "ffn_gate_inp.weight").T
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    gate = m.need(p + "ffn_gate_exps.weight")
    up = m.need(p + "ffn_up_exps.weight")
    down = m.need(p + "ffn_down_exps.weight")
    out = np.zeros_like(h)
    for t in range(h.shape[0]):
        order = np.argsort(-probs[t], kind="stable")
        pick = order[:m.n_used]
        if m.n_used < m.n_expert:
            m.margin = min(m.margin, logits[t, order[m.n_used - 1]] -
                           logits[t, order[m.n_used]])
        w = probs[t, pick]
        if m.arch in RENORM:
            w = w / max(w.sum(), 6.103515625e-5)
        if m.w_scale not in (0.0, 1.0):
            w = w * m.w_scale
        for e, we in zip(pick, w):
            y = silu(gate[e] @ h[t]) * (up[e] @ h[t])
            out[t] += we * (down[e] @ y)
    return out


def forward(m, tokens):
    """Logits (T, n_vocab) for the token ids."""
    emb = m.need("token_embd.weight")
    x = emb[np.asarray(tokens)]
    for i in range(m.n_layer):
        p = "blk.%d." % i
        h = rmsnorm(x, m.need(p + "attn_norm.weight"), m.eps)
        x = x + attention(m, h, p)
        h = rmsnorm(x, m.need(p + "ffn_norm.weight"), m.eps)
        if m.n_expert:
            x = x + moe_ffn(m, h, p)
        else:
            x = x + dense_ffn(m, h, p)
    x = rmsnorm(x, m.need("output_norm.weight"), m.eps)
    out = m.w("output.weight")
    return x @ (emb if out is None else out).T


# tokens <-> text, for --prompt and --greedy's printout

def byte_decoder():
    """GPT-2's byte-level alphabet reversed: the character standing for
    each byte back to the byte."""
    keep = (list(range(ord("!"), ord("~") + 1)) +
            list(range(ord("\xa1"), ord("\xac") + 1)) +
            list(range(ord("\xae"), ord("\xff") + 1)))
    chars, n = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + n)] = b
            n += 1
    return chars


def vocab(m):
    f = m.r.fields["tokenizer.ggml.tokens"]
    return [bytes(f.parts[i]).decode() for i in f.data]


def detok(toks, ids):
    dec = byte_decoder()
    out = bytearray()
    for i in ids:
        s = toks[i]
        if all(c in dec for c in s):
            out += bytes(dec[c] for c in s)
        else:
            out += s.encode()
    return out.decode("utf-8", "replace")


def tokenize(m, text):
    from tokenizers import Tokenizer, models, pre_tokenizers
    toks = vocab(m)
    f = m.r.fields["tokenizer.ggml.merges"]
    merges = [tuple(bytes(f.parts[i]).decode().split(" ", 1)) for i in f.data]
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(toks)}, merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    return tok.encode(text, add_special_tokens=False).ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--tokens", help="comma-separated token ids")
    g.add_argument("--prompt", help="text, tokenized with the file's BPE")
    ap.add_argument("--out", help="write T x n_vocab float32 logits here")
    ap.add_argument("--greedy", type=int, default=0)
    ap.add_argument("--greedy-text", help="write the greedy continuation's "
                    "text (UTF-8) here")
    ap.add_argument("--stats", action="store_true")
    ap.add_argument("--ignore-rope-freqs", action="store_true")
    ap.add_argument("--min-gap", type=float, default=0.0,
                    help="exit 3 if an MoE router gap is smaller")
    a = ap.parse_args()
    m = Model(a.file, a.ignore_rope_freqs)
    ids = (tokenize(m, a.prompt) if a.prompt is not None
           else [int(x) for x in a.tokens.split(",")])
    logits = forward(m, ids)
    if a.out:
        logits.astype("<f4").tofile(a.out)
    if a.stats:
        std = logits.std(axis=-1)
        print("arch %s tokens %d vocab %d logits std %.4f..%.4f "
              "range %.3f..%.3f argmax %s" % (
                  m.arch, len(ids), logits.shape[1], std.min(), std.max(),
                  logits.min(), logits.max(),
                  ",".join(str(i) for i in logits.argmax(-1))))
        if m.n_expert:
            print("moe min router logit gap %.3g" % m.margin)
    if m.n_expert and m.margin < a.min_gap:
        print("ref_forward.py: router logit gap %.3g < %g: the experts "
              "chosen are not robust to rounding; pick other tokens" %
              (m.margin, a.min_gap), file=sys.stderr)
        return 3
    if a.greedy:
        seq = list(ids)
        for _ in range(a.greedy):
            seq.append(int(np.argmax(forward(m, seq)[-1])))
        toks = vocab(m)
        print("prompt ids: %s" % ",".join(map(str, ids)))
        print("greedy ids: %s" % ",".join(map(str, seq[len(ids):])))
        print("text: %r + %r" % (detok(toks, ids),
                                 detok(toks, seq[len(ids):])))
        if a.greedy_text:
            with open(a.greedy_text, "w", encoding="utf-8") as f:
                f.write(detok(toks, seq[len(ids):]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check_models.py - checks that make_models.py's files and ref_forward.py's
logits make a meaningful test, before any C code is compared with them.

    check_models.py OUTDIR [SMOLLM2.gguf]

Makes every model into OUTDIR (make_models.py), then for each: the
reference logits of TOKENS are finite and spread (std > 0.5 in every
row, not the same argmax everywhere), the MoE models' router gaps are
well above rounding, and each convention the C side must follow changes
the logits when it is broken: the RoPE layout (NORM for llama, NEOX for
the others), the llama3 frequency factors, the grouped-query head
mapping, and the MoE renormalisation rule.  The K-quant encoders are
checked against gguf.quants.dequantize.  With SMOLLM2.gguf, the greedy
continuation of "The capital of France is" must start with " Paris".
Prints one line a check; exits 1 on the first failure."""
import os
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # the source tree may be read-only
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models as mm  # noqa: E402
import ref_forward as rf  # noqa: E402
import gguf  # noqa: E402

# the token ids a test feeds (0 and 49151 are the vocabulary's ends)
TOKENS = [1, 9906, 314, 2088, 17, 28, 100, 4000, 49151, 0, 55, 2]


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        sys.exit(1)


def rel(a, b):
    return float(np.abs(a - b).max() / np.abs(a).max())


def logits(model, **patch):
    """The reference logits of model (an rf.Model, its weights decoded
    once) with module-level conventions patched for the call."""
    saved = {k: getattr(rf, k) for k in patch}
    for k, v in patch.items():
        setattr(rf, k, v)
    model.margin = np.inf
    try:
        return rf.forward(model, TOKENS)
    finally:
        for k, v in saved.items():
            setattr(rf, k, v)


def grouped_wrong(m, h, p):
    """attention() with query head j on kv head j % n_head_kv (the wrong
    grouping) instead of j / (n_head / n_head_kv): k and v (and their
    biases) expanded to one head per query head in that order, then the
    plain attention with n_head_kv = n_head."""
    order = [j % m.n_head_kv for j in range(m.n_head)]
    names = [p + n for n in ("attn_k.weight", "attn_v.weight",
                             "attn_k.bias", "attn_v.bias")]
    save = {n: m.w(n) for n in names}
    for n, x in save.items():
        if x is not None:
            x = x.reshape(m.n_head_kv, m.hd, -1)[order]
            m.cache[n] = x.reshape(m.n_head * m.hd, -1).squeeze(-1) \
                if x.shape[-1] == 1 else x.reshape(m.n_head * m.hd, -1)
    nkv, m.n_head_kv = m.n_head_kv, m.n_head
    try:
        return ATTN(m, h, p)
    finally:
        m.n_head_kv = nkv
        for n, x in save.items():
            if x is not None:
                m.cache[n] = x


ATTN = rf.attention


def check_kquants():
    rng = np.random.default_rng(48)
    for t in mm.K_ENC:
        x = (0.1 * rng.standard_normal((64, 512))).astype(np.float32)
        x[1] = 0
        x[2] = np.abs(x[2])
        d = gguf.quants.dequantize(mm.encode(x, t), t)
        err = np.sqrt(np.mean((d - x) ** 2)) / x.std()
        bound = {gguf.GGMLQuantizationType.Q4_K: 0.1,
                 gguf.GGMLQuantizationType.Q5_K: 0.05,
                 gguf.GGMLQuantizationType.Q6_K: 0.03}[t]
        check(err < bound and not d[1].any(),
              "%s encoder: relative rms error %.4f < %g, zero row "
              "stays zero" % (t.name, err, bound))


def check_model(out, name):
    path = os.path.join(out, name + ".gguf")
    m = mm.MODELS[name]
    model = rf.Model(path)
    y = logits(model)
    std = y.std(axis=-1)
    check(np.isfinite(y).all() and std.min() > 0.5 and
          len(set(y.argmax(-1))) > len(TOKENS) // 2,
          "%s: logits finite, std %.3f..%.3f, %d distinct argmaxes" %
          (name, std.min(), std.max(), len(set(y.argmax(-1)))))
    if model.n_expert:
        gap = model.margin
        check(gap > 1e-3, "%s: router logit gap %.4f > 1e-3" % (name, gap))
        flip = ("llama",) if m["arch"] in rf.RENORM else \
            ("llama", m["arch"])
        z = logits(model, RENORM=flip)
        check(rel(y, z) > 0.05, "%s: the renormalisation rule matters "
              "(%.3f)" % (name, rel(y, z)))
    neox = () if m["arch"] in rf.NEOX else ("llama",)
    z = logits(model, NEOX=neox)
    check(rel(y, z) > 0.05, "%s: the RoPE layout matters (%.3f)" %
          (name, rel(y, z)))
    if m["n_head_kv"] not in (1, m["n_head"]):
        z = logits(model, attention=grouped_wrong)
        check(rel(y, z) > 0.05, "%s: the GQA head mapping matters (%.3f)"
              % (name, rel(y, z)))
    if "llama3" in m:
        ff, model.ff = model.ff, None
        z = logits(model)
        model.ff = ff
        check(rel(y, z) > 0.05, "%s: rope_freqs matter (%.3f)" %
              (name, rel(y, z)))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = sys.argv[1]
    subprocess.run([sys.executable, os.path.join(HERE, "make_models.py"),
                    out], check=True)
    check_kquants()
    for name in mm.MODELS:
        check_model(out, name)
    if len(sys.argv) == 3:
        m = rf.Model(sys.argv[2])
        ids = rf.tokenize(m, "The capital of France is")
        seq = list(ids)
        for _ in range(3):
            seq.append(int(np.argmax(rf.forward(m, seq)[-1])))
        text = rf.detok(rf.vocab(m), seq[len(ids):])
        check(text.startswith(" Paris"), "SmolLM2 greedy: %r" % text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

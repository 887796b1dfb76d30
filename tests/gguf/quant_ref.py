"""References for tests/test_ggml_dequant.c: GGML blocks and the gguf
package's own decoding of them (gguf.quants.dequantize).

    quant_ref.py OUTDIR

For each case, OUTDIR/<name>.raw holds the tensor's bytes and
OUTDIR/<name>.want its values: float32 from gguf.quants.dequantize
for the float and quantized types, and for the integer types and F64
(which the package reads as they are) the values in their own dtype,
which are the bytes themselves.  OUTDIR/cases.txt lists the cases, one
a line: "name type ndim dims...".  The bytes come from
gguf.quants.quantize of seeded random float32 data where the package
quantizes the type, and from random blocks built here (random bytes,
half-float scales that are finite: normal, subnormal and zero) for
every type, since the package quantizes no K-quant.

OUTDIR/matvec.txt lists weight matrices of each quantized type, "name
type rows cols": with
<name>.raw (the weight's bytes), <name>.x (a float32 vector of cols
values) and <name>.y (numpy's float32 W @ x, W the package's
dequantized weight).
"""
import os
import sys

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType as T
from gguf import quants

# The half-float fields (byte offsets) of each block type's layout.
HALVES = {T.Q4_0: (0,), T.Q4_1: (0, 2), T.Q5_0: (0,), T.Q5_1: (0, 2),
          T.Q8_0: (0,), T.Q4_K: (0, 2), T.Q5_K: (0, 2), T.Q6_K: (208,)}
QUANTIZABLE = (T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1,
               T.Q8_0)
NATIVE = {T.F32: np.float32, T.F16: np.float16, T.BF16: np.uint16,
          T.F64: np.float64, T.I8: np.int8, T.I16: np.int16,
          T.I32: np.int32, T.I64: np.int64}
TYPES = list(NATIVE) + list(HALVES)


def halves(rng, n):
    """n finite half floats: most normal, of either sign and a wide
    range of exponents; some subnormal; some +0 and -0."""
    mag = np.exp2(rng.uniform(-14, 6, n)) * rng.uniform(1, 2, n)
    v = np.where(rng.random(n) < 0.5, -mag, mag)
    kind = rng.random(n)
    v = np.where(kind < 0.05, rng.uniform(-6e-5, 6e-5, n), v)
    v = np.where(kind > 0.97, np.where(kind > 0.985, 0.0, -0.0), v)
    return v.astype(np.float16)


def random_native(rng, t, n):
    """n random values of a native type, as bytes: every bit pattern for
    the integers; for the floats, finite values across the range with
    zeros, subnormals and infinities (and NaNs for F32 and F64, whose
    bits pass through untouched; a device's float16 and bfloat16
    widening may quiet or change a NaN, which the package does not
    model)."""
    dt = NATIVE[t]
    if t in (T.I8, T.I16, T.I32, T.I64):
        return rng.integers(0, 256, n * np.dtype(dt).itemsize,
                            dtype=np.uint8)
    if t == T.F16:
        v = halves(rng, n)
        v[:4] = np.array([np.inf, -np.inf, 65504, -6e-8], np.float16)[:n]
        return v.view(np.uint8)
    if t == T.BF16:
        u = rng.integers(0, 1 << 16, n, dtype=np.uint16)
        e = (u >> 7) & 0xFF
        u = np.where(e == 0xFF, u & 0x807F, u)  # exponent 255 -> 0
        u[:2] = np.array([0x7F80, 0x0001], np.uint16)[:n]  # inf, subnormal
        return u.astype(np.uint16).view(np.uint8)
    v = (rng.standard_normal(n) * np.exp2(rng.integers(-40, 40, n)))
    v = v.astype(dt)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dt)
    k = min(n, len(special))
    v[:k] = special[:k]
    if n > 6:
        v[5] = np.finfo(dt).smallest_subnormal
    return v.view(np.uint8)


def random_blocks(rng, t, nblocks):
    """nblocks valid blocks of a quantized type: random bytes with
    finite half-float scales."""
    size = GGML_QUANT_SIZES[t][1]
    b = rng.integers(0, 256, (nblocks, size), dtype=np.uint8)
    for off in HALVES[t]:
        b[:, off:off + 2] = halves(rng, nblocks).view(np.uint8).reshape(
            nblocks, 2)
    return b.reshape(-1)


def want(t, raw):
    """The reference values of raw's bytes."""
    if t in (T.I8, T.I16, T.I32, T.I64, T.F64):
        return raw  # read as they are: the bytes of the values
    return quants.dequantize(raw, t).astype(np.float32, copy=False)


def shapes(t):
    """One block, many blocks in a row, and a weight matrix."""
    e = GGML_QUANT_SIZES[t][0]
    return [(e,), (37 * e,), (5, 3 * e)]


def cases(rng):
    for t in TYPES:
        e, size = GGML_QUANT_SIZES[t]
        for i, shape in enumerate(shapes(t)):
            n = int(np.prod(shape))
            raw = (random_native(rng, t, n) if t in NATIVE
                   else random_blocks(rng, t, n // e))
            yield f"{t.name}_random{i}", t, shape, raw
        if t in QUANTIZABLE:
            shape = shapes(t)[-1]
            x = rng.standard_normal(shape).astype(np.float32)
            raw = quants.quantize(x, t).view(np.uint8).reshape(-1)
            yield f"{t.name}_quantized", t, shape, raw


def write(outdir, name, data):
    with open(os.path.join(outdir, name), "wb") as f:
        f.write(np.ascontiguousarray(data).tobytes())


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(48)
    lines = []
    for name, t, shape, raw in cases(rng):
        write(outdir, name + ".raw", raw)
        write(outdir, name + ".want", want(t, raw))
        lines.append(" ".join(str(v) for v in
                              (name, int(t), len(shape), *shape)))
    with open(os.path.join(outdir, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    lines = []
    for t in HALVES:
        rows, cols = 96, 512
        e = GGML_QUANT_SIZES[t][0]
        name = f"matvec_{t.name}"
        raw = (quants.quantize(rng.standard_normal((rows, cols)).astype(
            np.float32), t).reshape(-1) if t in QUANTIZABLE
               else random_blocks(rng, t, rows * cols // e))
        w = quants.dequantize(raw, t).reshape(rows, cols)
        x = rng.standard_normal(cols).astype(np.float32)
        write(outdir, name + ".raw", raw)
        write(outdir, name + ".x", x)
        write(outdir, name + ".y", w @ x)
        lines.append(f"{name} {int(t)} {rows} {cols}")
    with open(os.path.join(outdir, "matvec.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

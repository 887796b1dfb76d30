#!/usr/bin/env python3
"""make_files.py - GGUF files for tests/test_gguf.c, and what the gguf
package (llama.cpp's own reader and writer) reads in them.

    python3 make_files.py OUTDIR [MODEL.gguf]

Writes, with gguf.GGUFWriter, OUTDIR/small.gguf: version 3, a
general.alignment of 64, a pair of every value type, arrays of every
element type (strings with a NUL and non-ASCII among them, an array of
arrays), and tensors of several ggml types (F32, F16, BF16, I32, Q8_0,
Q4_1, TQ2_0 through gguf.quants.quantize, and Q4_K of random blocks).  Then dumps
what gguf.GGUFReader reads in it (and in MODEL, when given) to
NAME.txt, the bytes of its smaller tensors to NAME.bin, and the ggml type table of
gguf.constants to ggml.txt, in a line format the C test parses:

    version V / alignment A / counts NKV NTENSOR
    kv KEY VTYPE VALUE            a scalar or a string
    arr KEY ETYPE COUNT           then COUNT lines "e VALUE" (none for
                                  an array of arrays)
    tensor NAME TYPE NDIM DIMS... NBYTES FILE_OFFSET BIN_OFFSET
                                  (BIN_OFFSET -1: bytes not dumped)
    ggml TYPE BLOCK_ELEMS BLOCK_BYTES

Keys, names and strings are hex ("x" then two digits a byte, so that
the empty string is "x"); integers are decimal, floats repr()'s.  The
dims are in PyTorch's order (GGUF's ne reversed).
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGUFValueType as VT, GGMLQuantizationType as QT


def hexs(b):
    if isinstance(b, str):
        b = b.encode()
    return "x" + bytes(b).hex()


def write_small(path):
    w = gguf.GGUFWriter(path, "test")
    w.add_custom_alignment(64)
    w.add_uint8("t.u8", 250)
    w.add_int8("t.i8", -128)
    w.add_uint16("t.u16", 65535)
    w.add_int16("t.i16", -32768)
    w.add_uint32("t.u32", 4294967295)
    w.add_int32("t.i32", -2147483648)
    w.add_float32("t.f32", 3.14159)
    w.add_bool("t.bool", True)
    w.add_bool("t.false", False)
    w.add_string("t.str", "h\u00e9llo, w\u00f6rld \U0001F600")
    w.add_string("t.empty", "")
    w.add_key_value("t.nul", b"a\0b", VT.STRING)
    w.add_uint64("t.u64", 18446744073709551615)
    w.add_uint64("t.u64small", 1 << 40)
    w.add_int64("t.i64", -9223372036854775808)
    w.add_float64("t.f64", -2.5e-300)
    for vt, vals in [(VT.UINT8, [0, 1, 255]), (VT.INT8, [-1, 127]),
                     (VT.UINT16, [7, 65535]), (VT.INT16, [-300, 300]),
                     (VT.UINT32, [1, 2, 3, 4000000000]),
                     (VT.INT32, [-5, 5]), (VT.FLOAT32, [0.5, -1e-3]),
                     (VT.BOOL, [True, False, True]),
                     (VT.UINT64, [0, 1 << 63]), (VT.INT64, [-(1 << 62), 9]),
                     (VT.FLOAT64, [1e300, -0.0])]:
        w.add_key_value("a." + vt.name.lower(), vals, VT.ARRAY, sub_type=vt)
    w.add_array("a.string", ["", "tok", "\u0120the", "x\0y", "\u00e9"])
    w.add_array("a.nested", [[1, 2], [3]])
    rng = np.random.default_rng(48)
    w.add_tensor("f32", rng.standard_normal((3, 5)).astype(np.float32))
    w.add_tensor("f16.vec", rng.standard_normal(7).astype(np.float16))
    bf = gguf.quants.quantize(rng.standard_normal((2, 4)).astype(np.float32),
                              QT.BF16)
    w.add_tensor("bf16", bf, raw_dtype=QT.BF16)
    w.add_tensor("i32", np.arange(6, dtype=np.int32).reshape(1, 2, 3))
    for qt, shape in [(QT.Q8_0, (2, 64)), (QT.Q4_1, (32,)),
                      (QT.TQ2_0, (2, 256))]:
        x = rng.standard_normal(shape).astype(np.float32)
        w.add_tensor(qt.name.lower(), gguf.quants.quantize(x, qt),
                     raw_dtype=qt)
    # gguf-py cannot quantize to the K types: random blocks will do
    w.add_tensor("q4_k", rng.integers(0, 256, (3, 144), dtype=np.uint8),
                 raw_dtype=QT.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def value(vt, v):
    if vt == VT.STRING:
        return hexs(v)
    if vt in (VT.FLOAT32, VT.FLOAT64):
        return repr(float(v))
    return str(int(v))


def dump_field(f, out):
    vt = f.types[0]
    key = hexs(f.name)
    if vt != VT.ARRAY:
        if vt == VT.STRING:
            v = bytes(f.parts[-1])
        else:
            v = f.parts[-1][0]
        out.write(f"kv {key} {int(vt)} {value(vt, v)}\n")
        return
    et = GGUFValueType_of(f.parts[3][0])
    count = int(f.parts[4][0])
    out.write(f"arr {key} {int(et)} {count}\n")
    if et == VT.ARRAY:
        return
    for i in f.data:
        v = bytes(f.parts[i]) if et == VT.STRING else f.parts[i][0]
        out.write(f"e {value(et, v)}\n")


def GGUFValueType_of(n):
    return VT(int(n))


def dump(path, base, max_bin):
    """Every pair and tensor info; the bytes of tensors of at most
    max_bin bytes (the others' BIN_OFFSET is -1)."""
    r = gguf.GGUFReader(path)
    fields = [f for f in r.fields.values() if not f.name.startswith("GGUF.")]
    with open(base + ".txt", "w") as out, open(base + ".bin", "wb") as binf:
        out.write(f"version {int(r.fields['GGUF.version'].parts[0][0])}\n")
        out.write(f"alignment {r.alignment}\n")
        out.write(f"counts {len(fields)} {len(r.tensors)}\n")
        for f in fields:
            dump_field(f, out)
        for t in r.tensors:
            dims = [int(d) for d in reversed(t.shape.tolist())]
            pos = binf.tell() if t.n_bytes <= max_bin else -1
            out.write(f"tensor {hexs(t.name)} {int(t.tensor_type)} "
                      f"{len(dims)} {' '.join(map(str, dims))} {t.n_bytes} "
                      f"{t.data_offset} {pos}\n")
            if pos >= 0:
                data = t.data.tobytes()
                assert len(data) == t.n_bytes
                binf.write(data)


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    small = os.path.join(outdir, "small.gguf")
    write_small(small)
    dump(small, os.path.join(outdir, "small"), 1 << 20)
    if len(sys.argv) > 2:  # the norms' and attention's weights, not all
        dump(sys.argv[2], os.path.join(outdir, "model"), 100000)
    with open(os.path.join(outdir, "ggml.txt"), "w") as out:
        for qt, (blk, size) in gguf.constants.GGML_QUANT_SIZES.items():
            out.write(f"ggml {int(qt)} {blk} {size}\n")


if __name__ == "__main__":
    main()

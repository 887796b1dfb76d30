#!/usr/bin/env python3
"""make_seeds.py - writes the seed corpora of the libFuzzer targets.

    python3 tests/fuzz/make_seeds.py

Each target gets a few valid inputs and a few that must be refused,
one reason each, under tests/fuzz/corpus/<target>/.  The output is the
same on every run (gzip's timestamp is 0), so the committed files are
this script's; add a case here rather than a file by hand.  Inputs a
fuzzer finds worth keeping can be added beside them (libFuzzer's
-merge=1 keeps the ones that add coverage).
"""
import gzip
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ------------------------------------------------------------ safetensors

def st_file(header, data=b"", pad=True, hlen=None):
    """8-byte length, the header (padded to 8 as writers do), data."""
    h = header if isinstance(header, bytes) else header.encode()
    if pad:
        h += b" " * (-len(h) % 8)
    n = len(h) if hlen is None else hlen
    return struct.pack("<Q", n) + h + data


def st_json(entries, meta=None):
    obj = {}
    if meta is not None:
        obj["__metadata__"] = meta
    obj.update(entries)
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


SIZES = {"BOOL": 1, "I8": 1, "U8": 1, "I16": 2, "U16": 2, "I32": 4,
         "U32": 4, "I64": 8, "U64": 8, "F16": 2, "BF16": 2, "F32": 4,
         "F64": 8}


def safetensors_seeds():
    t = "fuzz_safetensors"
    write(t, "one_f32.st", st_file(
        st_json({"w": entry("F32", [2, 3], 0, 24)}), bytes(range(24))))
    # every dtype, two elements each, laid out in order
    ents, off = {}, 0
    for dt, size in SIZES.items():
        ents["t_" + dt.lower()] = entry(dt, [2], off, off + 2 * size)
        off += 2 * size
    write(t, "every_dtype.st", st_file(st_json(ents), bytes(off)))
    # metadata, escaped and non-ASCII names, a scalar, zero elements,
    # the tensors listed out of offset order
    write(t, "names_meta.st", st_file(st_json({
        "b\u00e9": entry("I8", [3], 4, 7),
        "\U0001F600": entry("U8", [], 3, 4),
        "a/b.c\n": entry("I16", [1, 1], 1, 3),
        "empty": entry("F64", [0, 7], 7, 7),
        "x": entry("BOOL", [1], 0, 1),
    }, meta={"format": "pt", "k\"ey": "v\\al"}), bytes(7)))
    write(t, "empty.st", st_file("{}"))
    write(t, "unpadded.st", st_file(
        st_json({"w": entry("U16", [2], 0, 4)}), b"\1\2\3\4", pad=False))
    write(t, "escapes.st", st_file(
        '{"\\u0041\\n\\t\\"\\\\\\/\\ud83d\\ude00":'
        '{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"z"))
    # refused, one reason each
    write(t, "short.st", b"\x10\0\0\0\0\0\0")
    write(t, "len_past_end.st", st_file("{}", hlen=1 << 40))
    write(t, "bad_dtype.st", st_file(
        st_json({"w": entry("F8", [1], 0, 1)}), b"\0"))
    write(t, "overlap.st", st_file(st_json({
        "a": entry("U8", [2], 0, 2), "b": entry("U8", [2], 1, 3)}),
        bytes(3)))
    write(t, "gap.st", st_file(st_json({
        "a": entry("U8", [1], 0, 1), "b": entry("U8", [1], 2, 3)}),
        bytes(3)))
    write(t, "huge_shape.st", st_file(st_json({
        "w": entry("F32", [1 << 32, 1 << 32], 0, 0)})))
    write(t, "zero_huge.st", st_file(st_json({
        "w": entry("F32", [0, (1 << 63) - 1, 1], 0, 0)})))
    write(t, "numbers.st", st_file(
        '{"w":{"dtype":"U8","shape":[01, 1e3, -1],'
        '"data_offsets":[0,18446744073709551616]}}'))
    write(t, "dup_name.st", st_file(
        '{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]},'
        '"w":{"dtype":"U8","shape":[],"data_offsets":[1,2]}}', b"ab"))


# ------------------------------------------------------------- config

def config_seeds():
    t = "fuzz_config"
    with open(os.path.join(HERE, "..", "..", "conf", "tgcore.ini")) as f:
        write(t, "tgcore.ini", f.read())
    write(t, "valid.ini", "[core]\nDEBUG = 2\nCACHELEVEL=0\n"
          "DEFAULT_FLOAT = half\nNOOPT=yes\nLRU = off\n"
          "REDUCEOP_SPLIT_THRESHOLD = 9223372036854775807\n"
          "devices = cpu, mock\nplugins_disable = cuda*\n"
          "[cpu]\ncc = gcc -O2\nthreads = 2\n[mock]\nmemory_limit=1024\n")
    write(t, "case.ini", "[Core]\ndebug = 1\nverify: true\n"
          "[CPU]\nCC=clang\n[core]\nDEBUG=3\n")
    write(t, "comments.ini", "\ufeff; a comment\n# another\n[core]\n"
          "DEVICE = cpu ; inline\nBEAM = 4\n  continued\n\n"
          "[cpu]\ncc =\n")
    write(t, "crlf.ini", "[core]\r\nTC = 2\r\nTC_OPT = 0\r\n")
    write(t, "long_line.ini", "[cpu]\ncc = " + "x" * 300 + "\n"
          "[core]\nJIT = 0\n")
    write(t, "bad_value.ini", "[core]\nBEAM = 65\n")
    write(t, "bad_float.ini", "[core]\nDEFAULT_FLOAT = int8\n")
    write(t, "bad_bool.ini", "[core]\nNOOPT = maybe\n")
    write(t, "unknown_key.ini", "[core]\nNOPE = 1\n")
    write(t, "no_section.ini", "DEBUG = 1\n[core]\n")
    write(t, "syntax.ini", "[core\nDEBUG\n")
    write(t, "nul.ini", b"[core]\nDEBUG = 1\0 2\n")


# ---------------------------------------------------------------- IDX

def idx(shape, data, dtype=0x08):
    return (bytes([0, 0, dtype, len(shape)]) +
            b"".join(struct.pack(">I", n) for n in shape) + data)


def gz(data):
    return gzip.compress(data, mtime=0)


def idx_seeds():
    t = "fuzz_idx"
    write(t, "labels.idx1.gz", gz(idx([5], bytes([3, 1, 4, 1, 5]))))
    write(t, "images.idx3.gz", gz(idx([2, 3, 3], bytes(range(18)))))
    write(t, "four_dims.idx4.gz", gz(idx([1, 2, 1, 2], b"abcd")))
    write(t, "plain.idx2", idx([2, 2], b"\0\1\2\3"))
    write(t, "empty.idx1.gz", gz(idx([0], b"")))
    # refused, one reason each
    whole = gz(idx([4, 4], bytes(16)))
    write(t, "cut_gzip.gz", whole[:len(whole) // 2])
    write(t, "cut_data.idx1.gz", gz(idx([10], b"abc")))
    write(t, "cut_header.gz", gz(b"\0\0\x08\x02\0\0"))
    write(t, "float_type.idx1.gz", gz(idx([1], b"\0\0\0\0", dtype=0x0d)))
    write(t, "five_dims.gz", gz(idx([1, 1, 1, 1, 1], b"x")))
    write(t, "overflow.idx4.gz", gz(idx([0xffffffff] * 4, b"")))
    # a header that announces 4 GiB and holds 4 bytes
    write(t, "huge_claim.idx2.gz", gz(idx([0xffff, 0xffff], b"abcd")))

# ---------------------------------------------------------------- GGUF

def g_str(s):
    b = s if isinstance(s, bytes) else s.encode()
    return struct.pack("<Q", len(b)) + b


# value types: (number, struct format) of the fixed-size ones
GV = {"u8": (0, "B"), "i8": (1, "b"), "u16": (2, "H"), "i16": (3, "h"),
      "u32": (4, "I"), "i32": (5, "i"), "f32": (6, "f"), "bool": (7, "?"),
      "u64": (10, "Q"), "i64": (11, "q"), "f64": (12, "d")}


def g_kv(key, vt, val):
    if vt == "str":
        return g_str(key) + struct.pack("<I", 8) + g_str(val)
    if vt == "arr":
        et, items = val
        if et == "str":
            body = b"".join(g_str(x) for x in items)
            return (g_str(key) + struct.pack("<IIQ", 9, 8, len(items)) +
                    body)
        n, f = GV[et]
        return (g_str(key) + struct.pack("<IIQ", 9, n, len(items)) +
                struct.pack("<%d%s" % (len(items), f), *items))
    n, f = GV[vt]
    return g_str(key) + struct.pack("<I" + f, n, val)


def g_tensor(name, ne, ggml, off):
    return (g_str(name) + struct.pack("<I", len(ne)) +
            struct.pack("<%dQ" % len(ne), *ne) + struct.pack("<IQ", ggml, off))


def gguf_file(kvs, tensors, data, version=3, align=32, nkv=None, nt=None):
    out = b"GGUF" + struct.pack("<IQQ", version,
                                len(tensors) if nt is None else nt,
                                len(kvs) if nkv is None else nkv)
    out += b"".join(kvs) + b"".join(tensors)
    out += bytes(-len(out) % align)
    return out + data


def gguf_seeds():
    t = "fuzz_gguf"
    every = [g_kv("general.architecture", "str", "llama")]
    every += [g_kv("v." + k, k, 1) for k in GV]
    every += [g_kv("a.str", "arr", ("str", ["", "a", "\u0120b"])),
              g_kv("a.i32", "arr", ("i32", [1, -2, 3])),
              g_kv("a.bool", "arr", ("bool", [True, False]))]
    write(t, "every_type.gguf", gguf_file(every, [], b""))
    # tensors of several ggml types: F32 (2,3), F16 (4,), Q8_0 (32,),
    # Q4_K (256,), at alignment 32
    tens = [g_tensor("w", [3, 2], 0, 0), g_tensor("h", [4], 1, 32),
            g_tensor("q", [32], 8, 64), g_tensor("k", [256], 12, 128)]
    write(t, "tensors.gguf", gguf_file(
        [g_kv("general.architecture", "str", "llama")], tens,
        bytes(range(256)) + bytes(16)))
    write(t, "v2.gguf", gguf_file([g_kv("x", "u32", 7)],
                                  [g_tensor("w", [4], 0, 0)], bytes(16),
                                  version=2))
    write(t, "aligned64.gguf", gguf_file(
        [g_kv("general.alignment", "u32", 64)],
        [g_tensor("a", [2], 0, 0), g_tensor("b", [2], 0, 64)],
        bytes(72), align=64))
    nested = (g_str("n") + struct.pack("<IIQ", 9, 9, 2) +
              struct.pack("<IQ", 5, 1) + struct.pack("<i", 4) +
              struct.pack("<IQ", 8, 1) + g_str("s"))
    write(t, "nested.gguf", gguf_file([nested], [], b""))
    # refused, one reason each
    write(t, "v1.gguf", gguf_file([], [], b"", version=1))
    write(t, "huge_count.gguf", gguf_file([], [], b"", nkv=1 << 60))
    write(t, "overlap.gguf", gguf_file(
        [], [g_tensor("a", [16], 0, 0), g_tensor("b", [4], 0, 32)],
        bytes(64)))
    write(t, "misaligned.gguf", gguf_file(
        [], [g_tensor("a", [4], 0, 4)], bytes(32)))
    write(t, "dup_key.gguf", gguf_file(
        [g_kv("k", "u8", 1), g_kv("k", "u8", 2)], [], b""))
    write(t, "bad_block.gguf", gguf_file(
        [], [g_tensor("q", [33], 8, 0)], bytes(68)))
    write(t, "cut.gguf", gguf_file(every, [], b"", align=1)[:-3])


if __name__ == "__main__":
    safetensors_seeds()
    gguf_seeds()
    config_seeds()
    idx_seeds()

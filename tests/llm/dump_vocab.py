#!/usr/bin/env python3
"""The tokenizer.ggml.* keys of a GGUF file, read with the gguf package's
GGUFReader, as a plain file that tests/test_llm_tokenizer.c loads into a
tg_tok_spec (until the core's GGUF reader is there to read them itself).

The dump:
    tgtok 1
    model NAME / pre NAME          (pre: "-" when the file has none)
    bos ID / eos ID / unk ID / pad ID / add_bos B / add_eos B /
    add_space_prefix B            (-1 when the file has none)
    tokens N, then per token "LEN TYPE SCORE\\n" + LEN bytes + "\\n"
    merges N, then per merge "LEN\\n" + LEN bytes + "\\n"

Usage: dump_vocab.py MODEL.gguf OUT"""
import sys

KEYS = [("bos", "tokenizer.ggml.bos_token_id"),
        ("eos", "tokenizer.ggml.eos_token_id"),
        ("unk", "tokenizer.ggml.unknown_token_id"),
        ("pad", "tokenizer.ggml.padding_token_id"),
        ("add_bos", "tokenizer.ggml.add_bos_token"),
        ("add_eos", "tokenizer.ggml.add_eos_token"),
        ("add_space_prefix", "tokenizer.ggml.add_space_prefix")]


def read_gguf(path):
    """The tokenizer of a GGUF file as a dict: model, pre, tokens
    (bytes), types, scores, merges (bytes) and the scalar KEYS."""
    import gguf
    r = gguf.GGUFReader(path)

    def scalar(key):
        f = r.fields.get(key)
        return None if f is None else f.parts[f.data[0]][0].item()

    def string(key):
        f = r.fields.get(key)
        return None if f is None else bytes(f.parts[f.data[0]]).decode()

    def array(key, conv):
        f = r.fields.get(key)
        return [] if f is None else [conv(f.parts[i]) for i in f.data]

    v = {"model": string("tokenizer.ggml.model"),
         "pre": string("tokenizer.ggml.pre"),
         "tokens": array("tokenizer.ggml.tokens", bytes),
         "types": array("tokenizer.ggml.token_type", lambda p: int(p[0])),
         "scores": array("tokenizer.ggml.scores", lambda p: float(p[0])),
         "merges": array("tokenizer.ggml.merges", bytes)}
    for name, key in KEYS:
        x = scalar(key)
        v[name] = -1 if x is None else int(x)
    return v


def write_dump(v, out):
    """Writes the dict of read_gguf (or one made alike) to path out."""
    n = len(v["tokens"])
    types = v.get("types") or [1] * n
    scores = v.get("scores") or [0.0] * n
    with open(out, "wb") as f:
        f.write(b"tgtok 1\n")
        f.write(("model %s\npre %s\n" % (v["model"], v.get("pre") or "-")).encode())
        for name, _ in KEYS:
            f.write(("%s %d\n" % (name, v.get(name, -1))).encode())
        f.write(b"tokens %d\n" % n)
        for t, ty, sc in zip(v["tokens"], types, scores):
            f.write(b"%d %d %r\n" % (len(t), ty, sc) + t + b"\n")
        f.write(b"merges %d\n" % len(v["merges"]))
        for m in v["merges"]:
            f.write(b"%d\n" % len(m) + m + b"\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    write_dump(read_gguf(sys.argv[1]), sys.argv[2])

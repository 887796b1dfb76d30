#!/usr/bin/env python3
"""Writes GGUF models that tg_llm_model_load must refuse, each a copy of
a good model (one of make_models.py's) with one thing wrong, and the
message tgcore gives for it: OUTDIR/bad.txt has one line per file,
"NAME<TAB>expected message", where {path} stands for the file's path.

    bad_models.py GOOD.gguf OUTDIR

The copy goes through the gguf package (GGUFReader, GGUFWriter): every
key and tensor as the good file has it, but for the change."""
import os
import sys

import gguf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import gguf_fields  # noqa: E402

VT = gguf.GGUFValueType


def copy(r, path, arch="llama", set_keys=None, drop_keys=(),
         drop_tensors=()):
    set_keys = dict(set_keys or {})
    w = gguf.GGUFWriter(path, arch)
    # GGUF.* and the architecture: the writer adds them
    for key, val, vt, st in gguf_fields(
            r, lambda k: not k.startswith("GGUF.") and
            k != "general.architecture"):
        if key in drop_keys:
            continue
        if key in set_keys:
            val, vt = set_keys.pop(key)
            st = None
        w.add_key_value(key, val, vt, sub_type=st)
    for key, (val, vt) in set_keys.items():
        w.add_key_value(key, val, vt)
    for t in r.tensors:
        if t.name in drop_tensors:
            continue
        w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    good, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    r = gguf.GGUFReader(good)
    n_embd = int(r.fields["llama.embedding_length"].parts[-1][0])
    P = "llm_model_load: "
    cases = [
        ("arch", dict(arch="bert"),
         P + 'the architecture "bert" is not supported (llama, qwen2, '
         'qwen3, qwen3moe and olmoe are)'),
        ("no-tensor", dict(drop_tensors=("blk.1.ffn_up.weight",)),
         P + "the file has no tensor blk.1.ffn_up.weight"),
        ("no-norm", dict(drop_tensors=("output_norm.weight",)),
         P + "the file has no tensor output_norm.weight"),
        ("no-key", dict(drop_keys=("llama.block_count",)),
         P + "the file has no llama.block_count"),
        ("kv-heads", dict(set_keys={"llama.attention.head_count_kv":
                                    (4, VT.UINT32)}),
         P + "tensor blk.0.attn_k.weight is (64,%d), the model's "
         "hyperparameters make it (128,%d)" % (n_embd, n_embd)),
        ("heads", dict(set_keys={"llama.attention.head_count":
                                 (3, VT.UINT32)}),
         P + "llama has 3 heads, not a multiple of its 2 key-value "
         "heads"),
        ("key-type", dict(set_keys={"llama.embedding_length":
                                    ("128", VT.STRING)}),
         P + "gguf_get_int: {path}: key 'llama.embedding_length' is a "
         "string, not an integer"),
        ("layers", dict(set_keys={"llama.block_count": (0, VT.UINT32)}),
         P + "llama.block_count is 0, not in [1, 4096]"),
        ("yarn", dict(set_keys={"llama.rope.scaling.type":
                                ("yarn", VT.STRING)}),
         P + 'llama.rope.scaling.type "yarn" is not supported (linear '
         "and llama3's factors are)"),
    ]
    with open(os.path.join(out, "bad.txt"), "w") as f:
        for name, change, msg in cases:
            copy(r, os.path.join(out, "bad-%s.gguf" % name), **change)
            f.write("bad-%s\t%s\n" % (name, msg))
    return 0


if __name__ == "__main__":
    sys.exit(main())

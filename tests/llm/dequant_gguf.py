#!/usr/bin/env python3
"""A copy of a GGUF file with every tensor dequantized to F32 (the gguf
package's own dequantization), the metadata as it was but
general.file_type (0, all F32).

llama.cpp runs such a file in float32 throughout (its F32 matmuls do not
round the activations to 8 bits as its quantized ones do), so on it
llama.cpp computes what transformers and tgcore compute on the quantized
file: the three agree to float32's rounding (tests/llm/compare_refs.py).

Usage: dequant_gguf.py MODEL.gguf OUT.gguf"""
import sys

import numpy as np
import gguf


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[-1])
    r = gguf.GGUFReader(sys.argv[1])
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(sys.argv[2], arch=arch)
    for key, f in r.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        val = 0 if key == "general.file_type" else f.contents()
        if f.types[0] == gguf.GGUFValueType.ARRAY:
            w.add_key_value(key, val, f.types[0], sub_type=f.types[-1])
        else:
            w.add_key_value(key, val, f.types[0])
    for t in r.tensors:
        d = gguf.quants.dequantize(t.data, t.tensor_type)
        w.add_tensor(t.name, d.astype(np.float32).reshape(
            [int(n) for n in reversed(t.shape)]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()

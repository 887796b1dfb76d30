#!/usr/bin/env python3
"""How closely the two references of reference.py agree on a model: for
each of a few fixed prompts (plain text, and chat through the model's
template), the greedy tokens of both backends for N steps (where they
first differ) and, over the first K steps, the largest absolute
difference of their logits and that difference relative to the largest
|logit| of the step (transformers' logits the base).  These numbers set
the tolerance a test of tgcore (which computes as transformers does:
float32 on dequantized weights) can hold against each reference.

Usage: compare_refs.py MODEL.gguf [-n 32] [-k 4] [--threads 1]"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref  # noqa: E402
import numpy as np  # noqa: E402

PROMPTS = [
    ("text", "The capital of France is"),
    ("text", "Once upon a time, there was a little robot who"),
    ("text", "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number."),
    ("text", "1, 2, 3, 5, 8, 13,"),
    ("chat", "What is the tallest mountain in the world?"),
    ("chat", "Write a haiku about the sea."),
]


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--kv-f16", action="store_true")
    args = ap.parse_args()
    hf = ref.Transformers(args.model, args.threads)
    cpp = ref.LlamaCpp(args.model, args.threads, 512, args.kv_f16)
    for kind, text in PROMPTS:
        if kind == "chat":
            msgs = [{"role": "user", "content": text}]
            prompt = list(hf.tok.apply_chat_template(
                msgs, add_generation_prompt=True, tokenize=True))
        else:
            prompt = hf.tokenize(text)
            if cpp.tokenize(text) != prompt:
                print(f"tokenizers differ on {text!r}", file=sys.stderr)
        t_hf, l_hf = ref.greedy(hf, prompt, args.n, args.k)
        t_cpp, l_cpp = ref.greedy(cpp, prompt, args.n, args.k)
        d = first_diff(t_hf, t_cpp)
        k = min(args.k, d if d is not None else args.k)
        steps = []
        for s in range(k):
            a, b = l_cpp[s].astype(np.float64), l_hf[s].astype(np.float64)
            err = np.abs(a - b)
            top = np.sort(b)[-2:]
            steps.append({"max_abs": round(float(err.max()), 5),
                          "rel": round(float(err.max() / np.abs(b).max()),
                                       6),
                          "mean_abs": round(float(err.mean()), 5),
                          "max_logit": round(float(np.abs(b).max()), 3),
                          "top1_margin": round(float(top[1] - top[0]), 4)})
        print(json.dumps({"kind": kind, "text": text,
                          "prompt_len": len(prompt),
                          "same_tokens": t_hf == t_cpp,
                          "first_diff": d, "transformers": t_hf,
                          "llamacpp": t_cpp, "steps": steps,
                          "completion": hf.detokenize(t_hf)}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

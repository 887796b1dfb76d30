#!/usr/bin/env python3
"""How closely the two references of reference.py agree on a model: for
each of a few fixed prompts (plain text, and chat through the model's
template), the greedy tokens of both backends for N steps (where they
first differ) and, over the first K steps, the largest absolute
difference of their logits and that difference relative to the largest
|logit| of the step (transformers' logits the base).  These numbers set
the tolerance a test of tgcore (which computes as transformers does:
float32 on dequantized weights) can hold against each reference.  The
same model in float64 (transformers) shows how much of that is float32's
own rounding: "f32_err" is the largest |float32 - float64| logit.  And
llama.cpp once more on a copy of the file dequantized to F32
(dequant_gguf.py): "f32file_max_abs" and "f32file_same_tokens" show that,
without its 8-bit activations, llama.cpp computes what transformers does.

Each backend runs in its own process (reference.py --batch), so this
also shows the commands a test runs.

Usage: compare_refs.py MODEL.gguf WORKDIR [-n 32] [-k 4] [--threads 1]"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

PROMPTS = [
    {"text": "The capital of France is"},
    {"text": "Once upon a time, there was a little robot who"},
    {"text": "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number."},
    {"text": "1, 2, 3, 5, 8, 13,"},
    {"chat": [{"role": "user",
               "content": "What is the tallest mountain in the world?"}]},
    {"chat": [{"role": "user", "content": "Write a haiku about the sea."}]},
]


def run(args, name, extra, n):
    """reference.py on every prompt: its JSON lines and logits."""
    here = os.path.dirname(os.path.abspath(__file__))
    logits = os.path.join(args.workdir, name + ".f32")
    cmd = [sys.executable, os.path.join(here, "reference.py"), args.model,
           "--batch", os.path.join(args.workdir, "prompts.jsonl"),
           "-n", str(n), "--logits", logits,
           "--logits-steps", str(args.k), "--threads", str(args.threads)]
    out = subprocess.run(cmd + extra, check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    res = [json.loads(line) for line in out.splitlines()]
    v = res[0]["logits"]["vocab"]
    return res, np.fromfile(logits, "<f4").reshape(len(res), args.k, v)


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("workdir")
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    with open(os.path.join(args.workdir, "prompts.jsonl"), "w") as f:
        for p in PROMPTS:
            f.write(json.dumps(p) + "\n")
    hf, l_hf = run(args, "hf", ["--backend", "transformers"], args.n)
    hf64, l_64 = run(args, "hf64", ["--backend", "transformers",
                                    "--dtype", "float64"], args.k)
    cpp, l_cpp = run(args, "cpp", ["--backend", "llamacpp"], args.n)
    f32 = os.path.join(args.workdir, "model-f32.gguf")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "dequant_gguf.py"),
                    args.model, f32], check=True)
    model, args.model = args.model, f32
    cpf, l_cpf = run(args, "cppf32", ["--backend", "llamacpp"], args.n)
    args.model = model
    for i, p in enumerate(PROMPTS):
        if hf[i]["prompt"] != cpp[i]["prompt"]:
            print(f"prompt {i}: the tokenizers differ", file=sys.stderr)
        t_hf, t_cpp = hf[i]["tokens"], cpp[i]["tokens"]
        d = first_diff(t_hf, t_cpp)
        d64 = first_diff(t_hf, hf64[i]["tokens"])
        steps = []
        for s in range(min(args.k, d if d is not None else args.k)):
            a = l_cpp[i, s].astype(np.float64)
            b = l_hf[i, s].astype(np.float64)
            err = np.abs(a - b)
            top = np.sort(b)[-2:]
            e32 = np.abs(b - l_64[i, s]).max() \
                if d64 is None or d64 > s else float("nan")
            ef = np.abs(l_cpf[i, s].astype(np.float64) - b).max() \
                if first_diff(t_hf, cpf[i]["tokens"]) in (None,) or \
                first_diff(t_hf, cpf[i]["tokens"]) > s else float("nan")
            steps.append({"max_abs": round(float(err.max()), 5),
                          "f32file_max_abs": float("%.3g" % ef),
                          "rel": round(float(err.max() / np.abs(b).max()),
                                       6),
                          "mean_abs": round(float(err.mean()), 5),
                          "f32_err": float("%.3g" % e32),
                          "max_logit": round(float(np.abs(b).max()), 3),
                          "top1_margin": round(float(top[1] - top[0]), 4)})
        print(json.dumps({"prompt": p, "prompt_len": len(hf[i]["prompt"]),
                          "same_tokens": t_hf == t_cpp, "first_diff": d,
                          "f64_first_diff": d64,
                          "f32file_same_tokens": cpf[i]["tokens"] == t_hf,
                          "transformers": t_hf, "llamacpp": t_cpp,
                          "steps": steps,
                          "completion": hf[i]["completion"]}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Greedy decoding of a GGUF model by a reference implementation, for the
language-model tests and bench_llm to compare tgcore against.

Backends:
  llamacpp      llama.cpp through llama-cpp-python (CPU, built by deps.sh
                with the host's native flags).  The KV cache is float32
                (llama.cpp's default is F16) so that the cache adds no
                rounding of its own; --kv-f16 gives llama.cpp's default.
                Its quantized dot products still round activations to
                Q8_1/Q8_0, so its logits differ from a float32 model's.
  transformers  Hugging Face transformers reading the GGUF file into
                PyTorch: the weights dequantized (the gguf package) and
                run in float32, as tgcore computes.  Fully offline.

The prompt is token ids (--ids 1,2,3), or a text (--text) tokenized by
the backend's own tokenizer (no BOS: SmolLM2's file says add_bos_token
false; control tokens written in the text are parsed as such), or, with
--chat, the text as one user message (--system adds a system message;
--messages takes a JSON list of {"role", "content"} instead) through the
model's chat template as transformers applies it (apply_chat_template,
generation prompt added), whichever backend then runs it.

Decoding is greedy: each step's token is the argmax of that step's raw
logits (the lowest id on a tie), taken here, not by a sampler.  Step 0's
logits are those after the whole prompt (one batch); step i's follow
the prompt and the first i decoded tokens.  With --logits FILE the first
--logits-steps steps' logits (full vocabulary, float32) are written to
FILE, steps x vocab in row-major order: a .npy file when FILE ends in
.npy, else raw little-endian float32.

Prints one JSON object: backend, versions, prompt (ids), tokens (the
decoded ids), completion (their text, for people), and with --logits
the file, steps, vocab and format.  --tokenize TEXT prints the backend
tokenizer's ids for TEXT ({"backend", "text", "ids"}) and exits.
--plain prints, instead of JSON, lines a C test reads with scanf:
    prompt N a b ...
    tokens N a b ...
(--tokenize: "ids N a b ...").

--batch FILE runs many prompts with one model load (transformers takes
seconds to dequantize the weights): one JSON object a line, {"ids":
[...]}, {"text": "..."} or {"chat": [{"role", "content"}, ...]} (the
template applied), each with an optional "n"; the output is one JSON
line (or one prompt/tokens pair) per prompt, in order, and --logits
holds every prompt's K steps one after another (prompts x K x vocab;
a prompt of fewer than K steps is padded with zeros).

Nothing is downloaded: HF_HUB_OFFLINE is set before transformers is
imported, and the model is the given file.

Usage:
  reference.py MODEL.gguf --backend B (--ids IDS | --text T [--chat]
               [--system S] | --chat --messages JSON) [-n N]
               [--logits FILE [--logits-steps K]] [--threads T]
  reference.py MODEL.gguf --backend B --batch FILE [-n N] [--logits ...]
  reference.py MODEL.gguf --backend B --tokenize TEXT  [--plain]"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # the source tree may be read-only
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["TQDM_DISABLE"] = "1"  # transformers' bar over the tensors

import numpy as np  # noqa: E402


def hf_tokenizer(path):
    """transformers' tokenizer of the GGUF file (its metadata only)."""
    from transformers import AutoTokenizer
    from transformers.utils import logging
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    d, f = os.path.split(os.path.abspath(path))
    return AutoTokenizer.from_pretrained(d, gguf_file=f)


class LlamaCpp:
    """llama.cpp: one context sized for the prompt and the decoded
    tokens, the prompt evaluated in one batch, then one token a step."""

    def __init__(self, path, threads, n_ctx=512, kv_f16=False):
        import llama_cpp
        self.llama_cpp = llama_cpp
        n_ctx = max(256, (n_ctx + 255) // 256 * 256)
        kw = {}
        if not kv_f16:
            kw = {"type_k": llama_cpp.GGML_TYPE_F32,
                  "type_v": llama_cpp.GGML_TYPE_F32}
        self.llm = llama_cpp.Llama(
            model_path=path, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx,
            n_threads=threads, n_threads_batch=threads, n_gpu_layers=0,
            logits_all=False, flash_attn=False, seed=0, verbose=False,
            **kw)
        self.n_ctx = n_ctx
        self.vocab = self.llm.n_vocab()

    def versions(self):
        return {"llama_cpp_python": self.llama_cpp.__version__}

    def tokenize(self, text):
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False,
                                 special=True)

    def detokenize(self, ids):
        return self.llm.detokenize(ids).decode("utf-8", "replace")

    def _last_logits(self):
        p = self.llm._ctx.get_logits_ith(-1)
        return np.ctypeslib.as_array(p, shape=(self.vocab,)).copy()

    def steps(self, prompt, n):
        """Yields each step's logits; send() the chosen token back."""
        if len(prompt) + n > self.n_ctx:
            raise SystemExit(f"reference.py: {len(prompt)} prompt tokens + "
                             f"{n} steps exceed the context ({self.n_ctx})")
        self.llm.reset()
        self.llm.eval(list(prompt))
        for _ in range(n):
            tok = yield self._last_logits()
            self.llm.eval([tok])


class Transformers:
    """transformers in float32, eager attention, the whole sequence run
    again at each step (no KV cache: the plainest forward pass)."""

    def __init__(self, path, threads, dtype="float32"):
        import torch
        self.torch = torch
        self.dtype = getattr(torch, dtype)
        torch.set_num_threads(threads)
        torch.manual_seed(0)
        self.path = path
        self.tok = hf_tokenizer(path)
        self.model = None

    def versions(self):
        import transformers
        return {"transformers": transformers.__version__,
                "torch": self.torch.__version__}

    def _load(self):
        from transformers import AutoModelForCausalLM
        d, f = os.path.split(os.path.abspath(self.path))
        self.model = AutoModelForCausalLM.from_pretrained(
            d, gguf_file=f, torch_dtype=self.torch.float32,
            attn_implementation="eager")
        self.model.to(self.dtype).eval()

    def tokenize(self, text):
        return self.tok.encode(text, add_special_tokens=False)

    def detokenize(self, ids):
        return self.tok.decode(ids)

    def steps(self, prompt, n):
        if self.model is None:
            self._load()
        ids = list(prompt)
        for _ in range(n):
            with self.torch.no_grad():
                x = self.torch.tensor([ids], dtype=self.torch.long)
                out = self.model(input_ids=x, use_cache=False).logits
            ids.append((yield out[0, -1].numpy()))


def parse_ids(s):
    try:
        ids = [int(t) for t in s.replace(",", " ").split()]
    except ValueError:
        raise SystemExit(f"reference.py: --ids '{s}' is not a list of "
                         "integers")
    if not ids:
        raise SystemExit("reference.py: --ids is empty")
    return ids


def chat_prompt(args):
    if args.messages is not None:
        try:
            msgs = json.loads(args.messages)
        except json.JSONDecodeError as e:
            raise SystemExit(f"reference.py: --messages: {e}")
    else:
        msgs = []
        if args.system is not None:
            msgs.append({"role": "system", "content": args.system})
        msgs.append({"role": "user", "content": args.text})
    return apply_template(args.model, msgs)


_templater = None


def apply_template(model, msgs):
    """transformers' apply_chat_template with the generation prompt."""
    global _templater
    if _templater is None:
        _templater = hf_tokenizer(model)
    return list(_templater.apply_chat_template(
        msgs, add_generation_prompt=True, tokenize=True))


def read_batch(path, model, default_n):
    """The prompts of a --batch file: (prompt or text, n) pairs."""
    jobs = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                job = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"reference.py: {path}:{no}: {e}")
            n = job.get("n", default_n)
            if "ids" in job:
                jobs.append((("ids", [int(t) for t in job["ids"]]), n))
            elif "text" in job:
                jobs.append((("text", job["text"]), n))
            elif "chat" in job:
                jobs.append((("ids", apply_template(model, job["chat"])),
                             n))
            else:
                raise SystemExit(f"reference.py: {path}:{no}: no ids, "
                                 "text or chat")
    return jobs


def greedy(backend, prompt, n, keep):
    """The n greedy tokens and the first `keep` steps' logits."""
    tokens, rows = [], []
    if n == 0:
        return tokens, np.zeros((0, 0), np.float32)
    gen = backend.steps(prompt, n)
    logits = next(gen)
    while True:
        logits = np.asarray(logits)
        if len(rows) < keep:
            rows.append(logits.copy())
        tok = int(np.argmax(logits))
        tokens.append(tok)
        if len(tokens) == n:
            break
        logits = gen.send(tok)
    gen.close()
    return tokens, np.stack(rows) if rows else np.zeros((0, 0), np.float32)


def write_logits(path, rows):
    if path.endswith(".npy"):
        np.save(path, rows.astype("<f4"))
        return "npy"
    rows.astype("<f4").tofile(path)
    return "f32le"


def parse_args():
    ap = argparse.ArgumentParser(
        description="Greedy decoding by a reference implementation.")
    ap.add_argument("model", help="the GGUF file")
    ap.add_argument("--backend", required=True,
                    choices=["llamacpp", "transformers"])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--ids", help="the prompt's token ids: 1,2,3")
    src.add_argument("--text", help="the prompt as text")
    src.add_argument("--messages", help="chat messages as JSON (--chat)")
    src.add_argument("--batch", metavar="FILE",
                     help="many prompts, one JSON object a line")
    src.add_argument("--tokenize", metavar="TEXT",
                     help="print the tokenizer's ids for TEXT and exit")
    ap.add_argument("--chat", action="store_true",
                    help="apply the model's chat template to --text")
    ap.add_argument("--system", help="a system message before --text")
    ap.add_argument("-n", type=int, default=32, help="steps (32)")
    ap.add_argument("--logits", metavar="FILE",
                    help="write the first steps' logits here")
    ap.add_argument("--logits-steps", type=int, default=4, metavar="K",
                    help="how many steps' logits --logits keeps (4)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dtype", choices=["float32", "float64"],
                    default="float32",
                    help="transformers: the precision it runs in")
    ap.add_argument("--kv-f16", action="store_true",
                    help="llamacpp: llama.cpp's default F16 KV cache")
    ap.add_argument("--plain", action="store_true",
                    help="print 'prompt N ...' and 'tokens N ...' lines")
    args = ap.parse_args()
    if not os.path.isfile(args.model):
        ap.error(f"no model file '{args.model}'")
    if args.n < 0 or args.logits_steps < 0 or args.threads < 1:
        ap.error("-n and --logits-steps must be >= 0, --threads >= 1")
    if (args.messages is not None or args.system is not None) \
            and not args.chat:
        ap.error("--messages and --system need --chat")
    if args.chat and args.text is None and args.messages is None:
        ap.error("--chat needs --text or --messages")
    return args


def ids_line(name, ids):
    return f"{name} {len(ids)}" + "".join(f" {t}" for t in ids)


def main():
    args = parse_args()
    if args.batch is not None:
        jobs = read_batch(args.batch, args.model, args.n)
    elif args.ids is not None:
        jobs = [(("ids", parse_ids(args.ids)), args.n)]
    elif args.chat:
        jobs = [(("ids", chat_prompt(args)), args.n)]
    elif args.text is not None:
        jobs = [(("text", args.text), args.n)]
    else:
        jobs = []
    if args.backend == "llamacpp":
        need = max([len(p) if k == "ids" else 4 * len(p.encode()) + 8
                    for (k, p), n in jobs] + [0]) + \
            max([n for _, n in jobs] + [0])
        be = LlamaCpp(args.model, args.threads, need, args.kv_f16)
    else:
        be = Transformers(args.model, args.threads, args.dtype)

    if args.tokenize is not None:
        ids = be.tokenize(args.tokenize)
        print(ids_line("ids", ids) if args.plain else
              json.dumps({"backend": args.backend, "text": args.tokenize,
                          "ids": ids}))
        return
    keep = args.logits_steps if args.logits else 0
    blocks = []
    for (kind, p), n in jobs:
        prompt = be.tokenize(p) if kind == "text" else p
        bad = [t for t in prompt if t < 0 or t >= be_vocab(be)]
        if bad or not prompt:
            raise SystemExit("reference.py: an empty prompt" if not prompt
                             else f"reference.py: token id {bad[0]} is "
                             "outside the vocabulary "
                             f"(0..{be_vocab(be) - 1})")
        tokens, rows = greedy(be, prompt, n, keep)
        block = np.zeros((keep, be_vocab(be)), np.float32)
        if rows.size:
            block[:rows.shape[0]] = rows
        blocks.append(block)
        if args.plain:
            print(ids_line("prompt", prompt))
            print(ids_line("tokens", tokens))
            continue
        out = {"backend": args.backend, "versions": be.versions(),
               "prompt": prompt, "tokens": tokens,
               "completion": be.detokenize(tokens)}
        if args.logits:
            out["logits"] = {"file": args.logits, "steps": keep,
                             "vocab": be_vocab(be),
                             "format": "npy" if args.logits.endswith(
                                 ".npy") else "f32le"}
        print(json.dumps(out))
    if args.logits:
        write_logits(args.logits, np.concatenate(blocks) if blocks
                     else np.zeros((0, be_vocab(be)), np.float32))


def be_vocab(be):
    if isinstance(be, LlamaCpp):
        return be.vocab
    return len(be.tok)


if __name__ == "__main__":
    main()

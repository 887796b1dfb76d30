#!/usr/bin/env python3
"""The references of tests/test_llm_tokenizer.c, made with Hugging Face's
`tokenizers` (nothing is downloaded: each tokenizer is built here from a
vocabulary).

For SmolLM2's vocabulary and merges (read from the GGUF file), four
byte-level BPE tokenizers, one per pre-tokenizer tgcore knows:
  smollm  - Digits(individual) then ByteLevel's GPT-2 pattern, as SmolLM2's
            own tokenizer.json;
  gpt2    - ByteLevel's GPT-2 pattern alone;
  llama3  - Llama 3's split pattern, ignore_merges (as Llama 3's);
  qwen2   - Qwen 2's pattern;
and a tiny SentencePiece BPE (spm), trained here on a few sentences, in
tokenizers' Llama 2 form: Prepend and Replace of U+2581, byte fallback.

Writes, into OUT: smollm.dump and spm.dump (dump_vocab.py's format),
spm.gguf (the SentencePiece vocabulary as a GGUF file of no tensors),
the GGUF files of bad vocabularies bad-*.gguf, and
one corpus per tokenizer, NAME.corpus: per string
    case LEN\\n + LEN bytes + \\n
    ids N a b ...\\n      (control tokens in the text parsed as such)
    ids N a b ...\\n      (their text tokenized as text)
Usage: corpus.py MODEL.gguf OUT"""
import os
import random
import sys

from tokenizers import AddedToken, Regex, Tokenizer, models
from tokenizers import normalizers, pre_tokenizers

sys.dont_write_bytecode = True  # the source tree may be read-only
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_vocab  # noqa: E402

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|"
          r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")

SCRIPTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Portez ce vieux whisky au juge blond qui fume : à l'été, où ça ?",
    "Falsches Üben von Xylophonmusik quält jeden größeren Zwerg",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία",
    "نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر",
    "דג סקרן שט בים מאוכזב ולפתע מצא חברה",
    "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश",
    "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า",
    "我能吞下玻璃而不伤身体。你好，世界！",
    "いろはにほへと ちりぬるを わかよたれそ つねならむ",
    "키스의 고유조건은 입술끼리 만나야 하고",
    "Ég get etið gler án þess að meiða mig.",
    "Zażółć gęślą jaźń",
    "Tiếng Việt có dấu: Nguyễn Văn Ánh",
    "ქართული ენა",
    "Հայերեն լեզու",
    "ᚠᛇᚻ᛫ᛒᛦᚦ᛫ᚠᚱᚩᚠᚢᚱ",
]
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷🇯🇵", "❤️", "🧑🏿‍💻", "✨🎉",
         "😂😂😂", "👩‍❤️‍💋‍👨", "🤖 robot", "☕️ café", "1️⃣2️⃣"]
COMBINING = ["e\u0301", "n\u0303o", "a\u030a\u0301", "Z\u0351\u036b\u0343a\u0310l\u0357go",
             "\u0915\u094d\u0937", "o\u0308\u0304", "\u0627\u064e\u0644\u0652"]
SPACES = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r\n\r\n",
          " \n ", "\u00a0", "\u3000", "\u2028", "\u2003", " \t\n", "\n   ",
          "\x0b", "\x0c", "\u0085", "\u200b", "\x04", "\x00", "\x7f",
          "a\x1cb", "\x1f \x1e\n", "\u180e", "\ufeff"]
DIGITS = ["0", "42", "123", "1234", "12345678901234567890", "3.14159",
          "1,000,000", "-7", "2024-11-29", "0x1F", "1e-9", "٣٤٥", "²³",
          "Ⅻ", "½", "१२३", "99.9%", "$1,234.56", "v1.2.3"]
CODE = [
    "def f(x):\n    return x ** 2  # square\n",
    "int main(void) {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
    "<div class=\"x\">Hello &amp; bye</div>",
    "for (i = 0; i < n; i++) a[i] += b[i];",
    "SELECT * FROM t WHERE id = 7 AND name LIKE '%x%';",
    "if x != y && z >= 3 || !w { return; }",
    "    indented\n        more\n\ttab\n",
    "#include <stdio.h>\n#define MAX(a,b) ((a)>(b)?(a):(b))",
    "x = [i for i in range(10) if i % 2 == 0]",
    "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }",
    "$ ls -la | grep '.txt' > out.log 2>&1",
]
CONTRACTIONS = ["I'm", "you're", "they'll", "we've", "he'd", "it's", "DON'T",
                "I'M", "She'S", "can't", "'s", "''", "rock'n'roll", "o'clock"]
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<repo_name>",
           "<|im_start", "im_end|>", "< |im_end|>", "<|im_start|><|im_end|>"]
WORDS = ["hello", "world", "tokenizer", "Hello", "WORLD", "the", "a", "of",
         "straße", "naïve", "coöperate", "über", "日本語", "中文", "ok",
         "x", "Z", "-", "--", "...", "!!!", "?", "(", ")", "[", "]", "{}",
         "\"", "'", "`", "~", "@", "#", "_", "__init__", "snake_case",
         "CamelCase", "http://example.com/a?b=c", "a.b.c", "foo/bar",
         "C:\\path", "e-mail", "—", "–", "…", "«", "»", "•", "→", "∑", "√2",
         "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𝟘𝟙𝟚", "ﬁ", "Ⓐ", "½", "µ", "ß", "İ", "ǅ", "ⅷ",
         "\U00040000", "\U000F0000"]


def corpus(specials):
    """At least 1,000 strings: each fixed one, then random mixtures."""
    fixed = [""] + SCRIPTS + EMOJI + COMBINING + SPACES + DIGITS + CODE + \
        CONTRACTIONS + WORDS
    if specials:
        fixed += SPECIAL + ["<|im_start|>user\nHi there!<|im_end|>\n"
                            "<|im_start|>assistant\n",
                            "text<|endoftext|>more text", "<|im_end|> x",
                            "x <|im_end|>", "\n<|im_start|>\n"]
    fixed += [s + " " for s in SCRIPTS] + [" " + s for s in WORDS]
    fixed += ["a" * 300, " " * 40, "\n" * 10, "1" * 50, "ab" * 100,
              "x\n\n\n   \n y", "end with space ", " lead", "\t\tx\t\t"]
    pools = [SCRIPTS, EMOJI, COMBINING, SPACES, SPACES, DIGITS, CODE,
             CONTRACTIONS, WORDS, WORDS, WORDS] + ([SPECIAL] if specials else [])
    rng = random.Random(48)
    out = list(fixed)
    while len(out) < 1100:
        parts = []
        for _ in range(rng.randint(1, 8)):
            p = rng.choice(rng.choice(pools))
            if len(p) > 12 and rng.random() < 0.5:
                i = rng.randrange(len(p))
                p = p[i:i + rng.randint(1, 12)]
            parts.append(p)
        out.append("".join(parts))
    return out


def write_corpus(tok, strings, path):
    with open(path, "wb") as f:
        for s in strings:
            b = s.encode()
            f.write(b"case %d\n" % len(b) + b + b"\n")
            for as_text in (False, True):
                tok.encode_special_tokens = as_text
                ids = tok.encode(s, add_special_tokens=False).ids
                f.write(("ids %d %s\n" % (len(ids), " ".join(map(str, ids)))).encode())
            tok.encode_special_tokens = False


def added(tok, v):
    """Control tokens (3) as special added tokens, user-defined (4) as
    plain ones, as the GGUF converters take them from tokenizer.json."""
    for i, (t, ty) in enumerate(zip(v["tokens"], v["types"])):
        if ty in (3, 4):
            a = AddedToken(t.decode(), special=ty == 3, normalized=False)
            tok.add_tokens([a]) if ty == 4 else tok.add_special_tokens([a])


def byte_level(v, pre):
    vocab = {t.decode(): i for i, t in enumerate(v["tokens"])}
    merges = [tuple(m.decode().split(" ", 1)) for m in v["merges"]]
    tok = Tokenizer(models.BPE(vocab, merges, ignore_merges=pre == "llama3"))
    bl = pre_tokenizers.ByteLevel(add_prefix_space=False,
                                  use_regex=pre in ("smollm", "gpt2"))
    if pre == "gpt2":
        tok.pre_tokenizer = bl
    elif pre == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), bl])
    else:
        pat = LLAMA3 if pre == "llama3" else QWEN2
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(pat), behavior="isolated"), bl])
    added(tok, v)
    return tok


SPM_TRAIN = """Once upon a time there was a little tokenizer that lived in a
library. It liked to split words into pieces, and the pieces into smaller
pieces, until every piece was a token. The other libraries laughed at it,
but the tokenizer kept on merging: th, the, then, there, these, those.
Numbers like 123 and 2024 were hard; punctuation like !?., was easy.
Les mots français étaient là aussi, avec des accents: été, où, déjà."""


def spm_vocab():
    """A SentencePiece BPE vocabulary trained on SPM_TRAIN: <unk>, <s>,
    </s>, the 256 byte tokens, the characters, then 400 merges, each
    scored below the one before; and tokenizers' merges for it: every
    split of a token into two tokens, by the token's score."""
    words = []
    for line in SPM_TRAIN.split("\n"):
        words += ["\u2581" + w for w in line.split(" ")]
    seqs = [list(w) for w in words]
    toks = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    chars = sorted({c for w in words for c in w})
    toks += chars
    types += [1] * len(chars)
    scores = [0.0] * 259 + [-1000.0 - i for i in range(len(chars))]
    for r in range(400):
        count = {}
        for s in seqs:
            for a, b in zip(s, s[1:]):
                count[(a, b)] = count.get((a, b), 0) + 1
        if not count:
            break
        (a, b), _ = max(count.items(), key=lambda kv: (kv[1], kv[0]))
        if a + b not in toks:
            toks.append(a + b)
            types.append(1)
            scores.append(-float(r))
        for s in seqs:
            i = 0
            while i < len(s) - 1:
                if s[i] == a and s[i + 1] == b:
                    s[i:i + 2] = [a + b]
                i += 1
    index = {t: i for i, t in enumerate(toks)}
    merges = []
    for t in toks[259:]:
        for k in range(1, len(t)):
            if t[:k] in index and t[k:] in index and types[index[t]] == 1:
                merges.append((scores[index[t]], index[t[:k]], index[t[k:]],
                               t[:k], t[k:]))
    merges.sort(key=lambda m: (-m[0], m[1], m[2]))
    return {"model": "llama", "pre": None,
            "tokens": [t.encode() for t in toks], "types": types,
            "scores": scores, "merges": [],
            "bos": 1, "eos": 2, "unk": 0, "pad": -1, "add_bos": 1,
            "add_eos": 0, "add_space_prefix": 1}, [(m[3], m[4]) for m in merges]


def spm_tokenizer(v, merges):
    vocab = {t.decode(): i for i, t in enumerate(v["tokens"])}
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>",
                               byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    added(tok, v)
    return tok


def write_gguf(path, model, tokens, types=None, scores=None, merges=None,
               ids=None):
    """A GGUF file of no tensors holding a tokenizer's keys."""
    import gguf
    w = gguf.GGUFWriter(path, "llama")
    if model is not None:
        w.add_tokenizer_model(model)
    if tokens is not None:
        w.add_token_list(tokens)
    if types is not None:
        w.add_token_types(types)
    if scores is not None:
        w.add_token_scores(scores)
    if merges is not None:
        w.add_token_merges(merges)
    for name, value in (ids or {}).items():
        getattr(w, "add_" + name)(value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def bad_ggufs(out):
    """Vocabularies tg_llm_tokenizer_from_gguf must refuse, by name."""
    base = [bytes([b]) if 0x21 <= b <= 0x7E else b"x%d" % b for b in range(256)]
    write_gguf(os.path.join(out, "bad-bert.gguf"), "bert", base)
    write_gguf(os.path.join(out, "bad-notokens.gguf"), "gpt2", None)
    write_gguf(os.path.join(out, "bad-nomodel.gguf"), None, base)
    write_gguf(os.path.join(out, "bad-merge.gguf"), "gpt2", base + [b"ab"],
               merges=["a b", "a zz"])
    write_gguf(os.path.join(out, "bad-types.gguf"), "gpt2", base + [b"ab"],
               types=[1] * 256)
    write_gguf(os.path.join(out, "bad-type9.gguf"), "gpt2", base,
               types=[1] * 200 + [9] + [1] * 55)
    write_gguf(os.path.join(out, "bad-bos.gguf"), "gpt2", base,
               ids={"bos_token_id": 999})


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    v = dump_vocab.read_gguf(sys.argv[1])
    dump_vocab.write_dump(v, os.path.join(out, "smollm.dump"))
    strings = corpus(True)
    for pre in ("smollm", "gpt2", "llama3", "qwen2"):
        write_corpus(byte_level(v, pre), strings,
                     os.path.join(out, pre + ".corpus"))
    sv, merges = spm_vocab()
    dump_vocab.write_dump(sv, os.path.join(out, "spm.dump"))
    write_gguf(os.path.join(out, "spm.gguf"), "llama", sv["tokens"],
               sv["types"], sv["scores"],
               ids={"bos_token_id": 1, "eos_token_id": 2, "unk_token_id": 0,
                    "add_bos_token": True, "add_eos_token": False,
                    "add_space_prefix": True})
    bad_ggufs(out)
    # U+2581 is SentencePiece's space: text holding it does not come back
    sstrings = [s.replace("<|", "<").replace("|>", ">")
                for s in corpus(True) if "\u2581" not in s]
    sstrings += ["<s>", "a<s>b", "</s> x", "x </s>", "<s><s>", " <s> "]
    write_corpus(spm_tokenizer(sv, merges), sstrings,
                 os.path.join(out, "spm.corpus"))


main()

/*
 * llm.h - libtgcore-llm's internals.  The library uses tgcore through
 * its public API only (tg/tg.h), as any program would.
 *
 * The tokenizer: a vocabulary (token texts, types, scores), a hash of
 * text to id, and for byte-level BPE the merges by rank.  Everything a
 * tokenizer holds is allocated in tg_tok_new and freed together by
 * tg_llm_tokenizer_free; encoding and decoding only read it, so one
 * tokenizer may serve several threads at once.
 */
#ifndef TG_LLM_INTERNAL_H
#define TG_LLM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <tg/llm.h>

/* What a tokenizer is made from: the GGUF file's tokenizer.ggml.* keys
 * as plain arrays (tg_llm_tokenizer_from_gguf fills it; tests fill it
 * from a dump).  Borrowed by tg_tok_new, which copies what it keeps. */
typedef struct tg_tok_spec {
	const char *model;         /* tokenizer.ggml.model: "gpt2", "llama" */
	const char *pre;           /* tokenizer.ggml.pre, NULL: "default" */
	size_t n_tokens;
	const char *const *tokens; /* n_tokens texts ... */
	const size_t *token_lens;  /* ... of these lengths (NULL: strlen) */
	const int32_t *types;      /* n_tokens TG_LLM_TOKEN_*, NULL: normal */
	const float *scores;       /* n_tokens, NULL: 0 (SentencePiece's) */
	size_t n_merges;
	const char *const *merges; /* "left right", byte-level BPE's ... */
	const size_t *merge_lens;  /* ... of these lengths (NULL: strlen) */
	int64_t bos, eos, unk, pad; /* ids, -1 when the file has none */
	int add_bos, add_eos;      /* -1: the model's default */
	int add_space_prefix;      /* SentencePiece's, -1: default (yes) */
} tg_tok_spec;

/* A new tokenizer, or NULL with an error naming what in spec is bad. */
tg_llm_tokenizer *tg_tok_new(const tg_tok_spec *spec);

/* ---- Unicode (unicode.c, unicode_tab.c) ---- */

enum { TOK_OTHER, TOK_LETTER, TOK_NUMBER, TOK_SPACE };

typedef struct tok_urange {
	uint32_t lo, hi;
	uint8_t cls; /* TOK_LETTER or TOK_NUMBER */
} tok_urange;

extern const tok_urange tok_uranges[];
extern const size_t tok_nuranges;

/* One character of text: its code point (that of U+FFFD for a byte
 * that starts no valid UTF-8 sequence, which then stands alone), its
 * length in bytes and its class. */
typedef struct tok_char {
	uint32_t cp;
	uint8_t len, cls;
} tok_char;

/* Decodes s[0..n) (n > 0) into *c. */
void tok_utf8_next(const char *s, size_t n, tok_char *c);
/* The class of a code point: TOK_SPACE for Unicode's White_Space. */
int tok_uclass(uint32_t cp);
/* Writes cp as UTF-8 into out (4 bytes at most); returns the length. */
int tok_utf8_put(uint32_t cp, char *out);
/* The length of the longest prefix of s[0..n) that ends on a character
 * boundary: all of it unless it ends inside a sequence that could still
 * complete. */
size_t tok_utf8_complete(const char *s, size_t n);

/* ---- pre-tokenizers (pretok.c) ---- */

typedef enum tok_pre {
	TOK_PRE_GPT2,   /* GPT-2's pattern */
	TOK_PRE_SMOLLM, /* each \p{N} alone, then GPT-2's (starcoder...) */
	TOK_PRE_LLAMA3, /* Llama 3's: \p{N}{1,3}, newline runs */
	TOK_PRE_QWEN2   /* Llama 3's with each \p{N} alone */
} tok_pre;

/* The pre-tokenizer named by tokenizer.ggml.pre; -1 (with an error
 * listing the known names) when unknown. */
int tok_pre_from_name(const char *name);
/* The characters of text are split into pieces; each piece's end
 * (index into c, exclusive) is stored in ends.  Returns the count. */
size_t tok_pre_split(tok_pre pre, const tok_char *c, size_t n,
                     size_t *ends);

/* ---- the tokenizer (vocab.c) ---- */

typedef struct tok_entry {
	char *text;   /* as in the file (byte-level: GPT-2's characters) */
	size_t len;
	float score;
	int32_t type; /* TG_LLM_TOKEN_* */
	char *bytes;  /* what it decodes to */
	size_t nbytes;
} tok_entry;

typedef struct tok_merge { /* a slot of the merge hash */
	int32_t left, right, result, rank; /* rank -1: empty slot */
} tok_merge;

enum { TOK_MODEL_GPT2, TOK_MODEL_LLAMA };

struct tg_llm_tokenizer {
	int model; /* TOK_MODEL_* */
	tok_pre pre;
	int ignore_merges; /* a piece that is a token is that token */
	size_t n;
	tok_entry *tok;
	int32_t *hash; /* text -> id, open addressing; -1 empty */
	size_t hash_mask;
	tok_merge *merges;
	size_t merge_mask;
	int32_t byte_tok[256]; /* byte -> its token (-1: none) */
	int32_t *specials;     /* control and user-defined ids, longest first */
	size_t n_specials;
	int32_t bos, eos, unk, pad;
	int add_bos, add_eos, add_space_prefix;
};

/* The id of the token spelled s[0..n), or -1. */
int32_t tok_find(const tg_llm_tokenizer *t, const char *s, size_t n);
/* The result and rank of merging left and right; rank -1 when none. */
const tok_merge *tok_merge_find(const tg_llm_tokenizer *t, int32_t left,
                                int32_t right);

/* ---- encoding (bpe.c, spm.c) ---- */

/* A growing array of ids. */
typedef struct tok_ids {
	int32_t *v;
	size_t n, cap;
} tok_ids;

int tok_ids_push(tok_ids *ids, int32_t id);
/* Byte-level BPE of a fragment of text: pre-tokenized, then each piece
 * merged; 0 or TG_ENOMEM. */
int tok_bpe_text(const tg_llm_tokenizer *t, const char *s, size_t n,
                 tok_ids *out);
/* SentencePiece BPE of a fragment of text (spaces as U+2581, the prefix
 * space when prefix is set, byte fallback). */
int tok_spm_text(const tg_llm_tokenizer *t, const char *s, size_t n,
                 int prefix, tok_ids *out);

/* The GPT-2 byte <-> character map: the character standing for byte b,
 * and the byte a character stands for (-1: none). */
uint32_t tok_byte_char(int b);
int tok_char_byte(uint32_t cp);

/* A min-heap of candidate merges, shared by bpe.c and spm.c.  The key
 * is the priority (lower first) above the left symbol's index (so the
 * leftmost of equal pairs first): one integer to compare, and 16 bytes
 * a candidate, for the cache's sake on long pieces. */
typedef struct tok_cand {
	uint64_t key;  /* priority << 32 | left symbol */
	int32_t right; /* the right symbol */
	uint32_t size; /* SentencePiece: the two symbols' bytes together */
} tok_cand;

static inline int32_t tok_cand_left(const tok_cand *c)
{
	return (int32_t)(c->key & 0xffffffffu);
}

typedef struct tok_heap {
	tok_cand *v;
	size_t n, cap;
} tok_heap;

int tok_heap_push(tok_heap *h, tok_cand c);
tok_cand tok_heap_pop(tok_heap *h);

#endif

/*
 * spm.c - SentencePiece BPE (tokenizer.ggml.model "llama"): spaces
 * become U+2581 (and one goes before the text), the text starts as one
 * symbol per character, and neighbours whose concatenation is a token
 * merge, the highest score first (then the leftmost), as SentencePiece
 * and llama.cpp do.  A symbol left that is no token becomes its bytes'
 * <0xXX> tokens (byte fallback), or the unknown token without them.
 */
#include <stdlib.h>
#include <string.h>

#include "llm.h"

typedef struct sym {
	size_t start, len; /* in the escaped text; len 0: merged away */
	int32_t prev, next;
} sym;

/* The text with U+2581 for each space, and one before it if prefix. */
static char *escape(const char *s, size_t n, int prefix, size_t *out_n)
{
	char *e = malloc(3 * (n + 1));
	size_t o = 0;

	if (!e)
		return NULL;
	for (size_t i = 0; i < n + (size_t)prefix; i++) {
		if (i < (size_t)prefix || s[i - (size_t)prefix] == ' ')
			o += (size_t)tok_utf8_put(0x2581, e + o);
		else
			e[o++] = s[i - (size_t)prefix];
	}
	*out_n = o;
	return e;
}

/* The priority of a score: higher scores first, as an unsigned key
 * that orders as the float does, reversed. */
static uint32_t score_key(float score)
{
	uint32_t u;

	memcpy(&u, &score, sizeof u);
	u = u & 0x80000000u ? ~u : u | 0x80000000u;
	return ~u;
}

/* Pushes the merge of symbol a with its right neighbour when the two
 * spell a token. */
static int push_pair(const tg_llm_tokenizer *t, const char *text,
                     const sym *sy, tok_heap *h, int32_t a)
{
	int32_t b = a >= 0 ? sy[a].next : -1, id;
	size_t size;

	if (b < 0)
		return 0;
	size = sy[a].len + sy[b].len;
	id = tok_find(t, text + sy[a].start, size);
	if (id < 0)
		return 0;
	return tok_heap_push(h, (tok_cand){
		(uint64_t)score_key(t->tok[id].score) << 32 | (uint32_t)a, b,
		(uint32_t)size });
}

static int merge_all(const tg_llm_tokenizer *t, const char *text, sym *sy,
                     tok_heap *h)
{
	while (h->n) {
		tok_cand c = tok_heap_pop(h);
		int32_t left = tok_cand_left(&c);
		sym *a = &sy[left], *b = &sy[c.right];

		if (!a->len || !b->len || a->len + b->len != c.size ||
		    a->next != c.right)
			continue;
		a->len += b->len;
		b->len = 0;
		a->next = b->next;
		if (a->next >= 0)
			sy[a->next].prev = left;
		if (push_pair(t, text, sy, h, a->prev) < 0 ||
		    push_pair(t, text, sy, h, left) < 0)
			return TG_ENOMEM;
	}
	return 0;
}

/* A symbol as ids: its token, or its bytes' tokens. */
static int emit(const tg_llm_tokenizer *t, const char *s, size_t n,
                tok_ids *out)
{
	int32_t id = tok_find(t, s, n);

	if (id >= 0)
		return tok_ids_push(out, id);
	for (size_t i = 0; i < n; i++) {
		id = t->byte_tok[(unsigned char)s[i]];
		if (id < 0) { /* no byte tokens: one unknown for the symbol */
			return t->unk >= 0 ? tok_ids_push(out, t->unk) : 0;
		}
		if (tok_ids_push(out, id) < 0)
			return TG_ENOMEM;
	}
	return 0;
}

static int spm(const tg_llm_tokenizer *t, const char *e, size_t n, sym *sy,
               tok_heap *h, tok_ids *out)
{
	int32_t k = 0;

	for (size_t i = 0; i < n; k++) {
		tok_char c;

		tok_utf8_next(e + i, n - i, &c);
		sy[k] = (sym){ i, c.len, k - 1, -1 };
		if (k > 0)
			sy[k - 1].next = k;
		i += c.len;
	}
	for (int32_t i = 0; i + 1 < k; i++)
		if (push_pair(t, e, sy, h, i) < 0)
			return TG_ENOMEM;
	if (merge_all(t, e, sy, h) < 0)
		return TG_ENOMEM;
	for (int32_t i = k ? 0 : -1; i >= 0; i = sy[i].next)
		if (emit(t, e + sy[i].start, sy[i].len, out) < 0)
			return TG_ENOMEM;
	return 0;
}

int tok_spm_text(const tg_llm_tokenizer *t, const char *s, size_t n,
                 int prefix, tok_ids *out)
{
	size_t en = 0;
	char *e = escape(s, n, prefix, &en);
	sym *sy = malloc((en ? en : 1) * sizeof *sy);
	tok_heap h = { 0 };
	int rc = e && sy ? spm(t, e, en, sy, &h, out) : TG_ENOMEM;

	free(h.v);
	free(sy);
	free(e);
	return rc;
}

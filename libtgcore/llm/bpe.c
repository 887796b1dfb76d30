/*
 * bpe.c - byte-level BPE (tokenizer.ggml.model "gpt2"): GPT-2's map of
 * bytes to printable characters, and the merges of one piece by rank.
 * A piece starts as one symbol per byte; the candidate merges of
 * neighbours wait in a min-heap by rank (then position, so that the
 * leftmost of equal pairs goes first, as in tokenizers), and a
 * candidate whose symbols have changed since it was pushed is dropped
 * when it comes out.  That keeps a piece of n bytes at O(n log n), so a
 * megabyte of one letter is no worse than a megabyte of prose.
 */
#include <stdlib.h>
#include <string.h>

#include "llm.h"

/* GPT-2 keeps the printable bytes of Latin-1 as themselves and moves
 * the 68 others (0x00-0x20, 0x7F-0xA0, 0xAD), in order, to U+0100 on. */
uint32_t tok_byte_char(int b)
{
	if (b <= 0x20)
		return 0x100 + (uint32_t)b;
	if (b >= 0x7F && b <= 0xA0)
		return 0x100 + 33 + (uint32_t)(b - 0x7F);
	if (b == 0xAD)
		return 0x100 + 67;
	return (uint32_t)b;
}

int tok_char_byte(uint32_t cp)
{
	if (cp < 0x100)
		return tok_byte_char((int)cp) == cp ? (int)cp : -1;
	if (cp < 0x100 + 33)
		return (int)(cp - 0x100);
	if (cp < 0x100 + 67)
		return (int)(cp - 0x100 - 33 + 0x7F);
	return cp == 0x100 + 67 ? 0xAD : -1;
}

int tok_ids_push(tok_ids *ids, int32_t id)
{
	if (ids->n == ids->cap) {
		size_t cap = ids->cap ? 2 * ids->cap : 64;
		int32_t *v = realloc(ids->v, cap * sizeof *v);

		if (!v)
			return TG_ENOMEM;
		ids->v = v;
		ids->cap = cap;
	}
	ids->v[ids->n++] = id;
	return 0;
}

/* ---- the heap ---- */

static int cand_less(const tok_cand *a, const tok_cand *b)
{
	return a->key < b->key;
}

int tok_heap_push(tok_heap *h, tok_cand c)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		tok_cand *v = realloc(h->v, cap * sizeof *v);

		if (!v)
			return TG_ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	for (i = h->n++; i > 0 && cand_less(&c, &h->v[(i - 1) / 2]); i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = c;
	return 0;
}

tok_cand tok_heap_pop(tok_heap *h)
{
	tok_cand top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && cand_less(&h->v[c + 1], &h->v[c]))
			c++;
		if (!cand_less(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

/* ---- merging one piece ---- */

/* Scratch reused across the pieces of one text. */
typedef struct work {
	int32_t *id, *next, *prev; /* per symbol; id -2: merged away */
	size_t cap;
	tok_heap heap;
	char *mapped; /* the piece in GPT-2's characters (ignore_merges) */
} work;

static int work_fit(work *w, size_t n)
{
	if (n <= w->cap)
		return 0;
	free(w->id), free(w->next), free(w->prev), free(w->mapped);
	w->id = malloc(n * sizeof *w->id);
	w->next = malloc(n * sizeof *w->next);
	w->prev = malloc(n * sizeof *w->prev);
	w->mapped = malloc(2 * n);
	w->cap = w->id && w->next && w->prev && w->mapped ? n : 0;
	return w->cap ? 0 : TG_ENOMEM;
}

/* Pushes the merge of symbol a with its right neighbour, if any. */
static int push_pair(const tg_llm_tokenizer *t, work *w, int32_t a)
{
	int32_t b = a >= 0 ? w->next[a] : -1;
	const tok_merge *m;

	if (b < 0 || w->id[a] < 0 || w->id[b] < 0)
		return 0;
	m = tok_merge_find(t, w->id[a], w->id[b]);
	if (!m)
		return 0;
	return tok_heap_push(&w->heap, (tok_cand){
		(uint64_t)(uint32_t)m->rank << 32 | (uint32_t)a, b, 0 });
}

/* The whole piece as one token, when the vocabulary has it. */
static int32_t whole_piece(const tg_llm_tokenizer *t, work *w,
                           const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
		o += (size_t)tok_utf8_put(tok_byte_char((unsigned char)s[i]),
		                          w->mapped + o);
	return tok_find(t, w->mapped, o);
}

static int merge_all(const tg_llm_tokenizer *t, work *w)
{
	while (w->heap.n) {
		tok_cand c = tok_heap_pop(&w->heap);
		const tok_merge *m;
		int32_t a = tok_cand_left(&c), b = c.right;

		if (w->id[a] < 0 || w->id[b] < 0 || w->next[a] != b)
			continue;
		m = tok_merge_find(t, w->id[a], w->id[b]);
		if (!m || m->rank != (int32_t)(c.key >> 32))
			continue;
		w->id[a] = m->result;
		w->id[b] = -2;
		w->next[a] = w->next[b];
		if (w->next[a] >= 0)
			w->prev[w->next[a]] = a;
		if (push_pair(t, w, w->prev[a]) < 0 || push_pair(t, w, a) < 0)
			return TG_ENOMEM;
	}
	return 0;
}

static int bpe_piece(const tg_llm_tokenizer *t, work *w, const char *s,
                     size_t n, tok_ids *out)
{
	int32_t whole;

	if (work_fit(w, n) < 0)
		return TG_ENOMEM;
	if (t->ignore_merges && (whole = whole_piece(t, w, s, n)) >= 0)
		return tok_ids_push(out, whole);
	w->heap.n = 0;
	for (size_t i = 0; i < n; i++) {
		w->id[i] = t->byte_tok[(unsigned char)s[i]];
		w->prev[i] = (int32_t)i - 1;
		w->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
	}
	for (size_t i = 0; i + 1 < n; i++)
		if (push_pair(t, w, (int32_t)i) < 0)
			return TG_ENOMEM;
	if (merge_all(t, w) < 0)
		return TG_ENOMEM;
	/* a byte the vocabulary has no character for is dropped, as
	 * llama.cpp and tokenizers (without an unknown token) do */
	for (int32_t i = 0; i >= 0; i = w->next[i])
		if (w->id[i] >= 0 && tok_ids_push(out, w->id[i]) < 0)
			return TG_ENOMEM;
	return 0;
}

int tok_bpe_text(const tg_llm_tokenizer *t, const char *s, size_t n,
                 tok_ids *out)
{
	tok_char *c = malloc((n ? n : 1) * sizeof *c);
	size_t *ends = malloc((n ? n : 1) * sizeof *ends);
	size_t nc = 0, np, byte = 0;
	work w = { 0 };
	int rc = c && ends ? 0 : TG_ENOMEM;

	for (size_t i = 0; rc == 0 && i < n; i += c[nc++].len)
		tok_utf8_next(s + i, n - i, &c[nc]);
	np = rc == 0 ? tok_pre_split(t->pre, c, nc, ends) : 0;
	for (size_t p = 0, ci = 0; rc == 0 && p < np; p++) {
		size_t start = byte;

		for (; ci < ends[p]; ci++)
			byte += c[ci].len;
		rc = bpe_piece(t, &w, s + start, byte - start, out);
	}
	free(w.id), free(w.next), free(w.prev), free(w.mapped), free(w.heap.v);
	free(c);
	free(ends);
	return rc;
}

/*
 * vocab.c - a tokenizer made from its spec (the GGUF file's keys as
 * arrays): the tokens and what each decodes to, the hash of text to id,
 * the merges of byte-level BPE by rank, the special tokens, and the
 * small public queries.  Everything is checked here, once, so that
 * encoding never meets an id out of range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static size_t pow2_above(size_t n)
{
	size_t m = 16;

	while (m < 2 * n)
		m *= 2;
	return m;
}

int32_t tok_find(const tg_llm_tokenizer *t, const char *s, size_t n)
{
	for (size_t h = hash_bytes(s, n) & t->hash_mask;; h = (h + 1) & t->hash_mask) {
		int32_t id = t->hash[h];

		if (id < 0)
			return -1;
		if (t->tok[id].len == n && memcmp(t->tok[id].text, s, n) == 0)
			return id;
	}
}

static uint64_t pair_hash(int32_t a, int32_t b)
{
	uint64_t k = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	return k ^ (k >> 33);
}

const tok_merge *tok_merge_find(const tg_llm_tokenizer *t, int32_t left,
                                int32_t right)
{
	size_t h;

	if (!t->merges)
		return NULL;
	for (h = pair_hash(left, right) & t->merge_mask;; h = (h + 1) & t->merge_mask) {
		const tok_merge *m = &t->merges[h];

		if (m->rank < 0)
			return NULL;
		if (m->left == left && m->right == right)
			return m;
	}
}

/* ---- construction ---- */

/* What token i decodes to: byte-level BPE's characters back to bytes,
 * SentencePiece's U+2581 to spaces and <0xXX> to its byte; special
 * tokens (and characters outside the byte map) as written. */
static int entry_bytes(tg_llm_tokenizer *t, tok_entry *e)
{
	size_t o = 0;
	unsigned v;

	e->bytes = malloc(e->len + 1);
	if (!e->bytes)
		return TG_ENOMEM;
	if (t->model == TOK_MODEL_LLAMA && e->type == TG_LLM_TOKEN_BYTE &&
	    e->len == 6 && sscanf(e->text, "<0x%2x>", &v) == 1) {
		e->bytes[0] = (char)v;
		e->nbytes = 1;
		return 0;
	}
	for (size_t i = 0; i < e->len;) {
		tok_char c;
		int b = -1;

		tok_utf8_next(e->text + i, e->len - i, &c);
		if (e->type != TG_LLM_TOKEN_CONTROL &&
		    e->type != TG_LLM_TOKEN_USER_DEFINED)
			b = t->model == TOK_MODEL_GPT2 ? tok_char_byte(c.cp)
			    : c.cp == 0x2581 ? ' ' : -1;
		if (b >= 0)
			e->bytes[o++] = (char)b;
		else
			memcpy(e->bytes + o, e->text + i, c.len), o += c.len;
		i += c.len;
	}
	e->nbytes = o;
	return 0;
}

/* Copies token i of spec into t; 0 or a status. */
static int add_token(tg_llm_tokenizer *t, const tg_tok_spec *sp, size_t i)
{
	tok_entry *e = &t->tok[i];
	int32_t type = sp->types ? sp->types[i] : TG_LLM_TOKEN_NORMAL;

	if (!sp->tokens[i])
		return tg_set_error(TG_EINVAL, "tokenizer: token %zu is NULL", i);
	if (type < 0 || type > TG_LLM_TOKEN_BYTE)
		return tg_set_error(TG_EINVAL,
		                    "tokenizer: token %zu has type %d "
		                    "(tokenizer.ggml.token_type: 0 to 6)",
		                    i, (int)type);
	e->len = sp->token_lens ? sp->token_lens[i] : strlen(sp->tokens[i]);
	e->text = malloc(e->len + 1);
	if (!e->text)
		return TG_ENOMEM;
	memcpy(e->text, sp->tokens[i], e->len);
	e->text[e->len] = '\0';
	e->type = type;
	e->score = sp->scores ? sp->scores[i] : 0.0f;
	return entry_bytes(t, e);
}

/* The hash of text to id: a text spelled twice keeps its first id. */
static int build_hash(tg_llm_tokenizer *t)
{
	size_t m = pow2_above(t->n);

	t->hash = malloc(m * sizeof *t->hash);
	if (!t->hash)
		return TG_ENOMEM;
	memset(t->hash, 0xff, m * sizeof *t->hash);
	t->hash_mask = m - 1;
	for (size_t i = 0; i < t->n; i++) {
		const tok_entry *e = &t->tok[i];
		size_t h = hash_bytes(e->text, e->len) & t->hash_mask;

		if (tok_find(t, e->text, e->len) >= 0)
			continue;
		while (t->hash[h] >= 0)
			h = (h + 1) & t->hash_mask;
		t->hash[h] = (int32_t)i;
	}
	return 0;
}

/* The message for merge i, s[0..n) split at sp, whose half (or whose
 * concatenation) is not a token. */
static int merge_error(const char *s, size_t n, const char *sp, size_t i,
                       int32_t a, int32_t b)
{
	int la = (int)(sp - s), lb = (int)(n - (size_t)la - 1);

	if (a < 0 || b < 0)
		return tg_set_error(TG_EINVAL, "tokenizer: merge %zu '%.*s': "
		                    "'%.*s' is not a token", i, (int)n, s,
		                    a < 0 ? la : lb, a < 0 ? s : sp + 1);
	return tg_set_error(TG_EINVAL, "tokenizer: merge %zu '%.*s': '%.*s%.*s' "
	                    "is not a token", i, (int)n, s, la, s, lb, sp + 1);
}

/* Merge i, "left right", into the merge hash; 0 or a status naming the
 * token that is missing. */
static int add_merge(tg_llm_tokenizer *t, const char *s, size_t n, size_t i)
{
	const char *sp = memchr(s, ' ', n);
	int32_t a, b, r = -1;
	char *cat;
	size_t h, la;

	if (!sp)
		return tg_set_error(TG_EINVAL, "tokenizer: merge %zu '%.*s' has "
		                    "no space between its two tokens", i, (int)n, s);
	la = (size_t)(sp - s);
	a = tok_find(t, s, la);
	b = tok_find(t, sp + 1, n - la - 1);
	if (!(cat = malloc(n)))
		return TG_ENOMEM;
	memcpy(cat, s, la);
	memcpy(cat + la, sp + 1, n - la - 1);
	if (a >= 0 && b >= 0)
		r = tok_find(t, cat, n - 1);
	free(cat);
	if (r < 0)
		return merge_error(s, n, sp, i, a, b);
	for (h = pair_hash(a, b) & t->merge_mask; t->merges[h].rank >= 0;
	     h = (h + 1) & t->merge_mask)
		if (t->merges[h].left == a && t->merges[h].right == b)
			return 0; /* listed twice: the first rank stands */
	t->merges[h] = (tok_merge){ a, b, r, (int32_t)i };
	return 0;
}

static int build_merges(tg_llm_tokenizer *t, const tg_tok_spec *sp)
{
	size_t m;

	if (t->model != TOK_MODEL_GPT2)
		return 0;
	if (sp->n_merges > INT32_MAX)
		return tg_set_error(TG_EINVAL, "tokenizer: %zu merges", sp->n_merges);
	m = pow2_above(sp->n_merges);
	t->merges = malloc(m * sizeof *t->merges);
	if (!t->merges)
		return TG_ENOMEM;
	for (size_t i = 0; i < m; i++)
		t->merges[i].rank = -1;
	t->merge_mask = m - 1;
	for (size_t i = 0; i < sp->n_merges; i++) {
		const char *s = sp->merges[i];
		int rc;

		if (!s)
			return tg_set_error(TG_EINVAL, "tokenizer: merge %zu is NULL", i);
		rc = add_merge(t, s, sp->merge_lens ? sp->merge_lens[i] : strlen(s), i);
		if (rc < 0)
			return rc;
	}
	return 0;
}

typedef struct len_id {
	size_t len;
	int32_t id;
} len_id;

/* longest first, then by id */
static int by_length(const void *a, const void *b)
{
	const len_id *x = a, *y = b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->id < y->id ? -1 : 1;
}

static int is_special(const tok_entry *e)
{
	return (e->type == TG_LLM_TOKEN_CONTROL ||
	        e->type == TG_LLM_TOKEN_USER_DEFINED) && e->len > 0;
}

/* Control and user-defined tokens, longest first, for the text scan. */
static int build_specials(tg_llm_tokenizer *t)
{
	size_t k = 0;
	len_id *v;

	for (size_t i = 0; i < t->n; i++)
		k += (size_t)is_special(&t->tok[i]);
	v = malloc((k ? k : 1) * sizeof *v);
	t->specials = malloc((k ? k : 1) * sizeof *t->specials);
	if (!v || !t->specials) {
		free(v);
		return TG_ENOMEM;
	}
	for (size_t i = 0, j = 0; i < t->n; i++)
		if (is_special(&t->tok[i]))
			v[j++] = (len_id){ t->tok[i].len, (int32_t)i };
	qsort(v, k, sizeof *v, by_length);
	for (size_t j = 0; j < k; j++)
		t->specials[j] = v[j].id;
	t->n_specials = k;
	free(v);
	return 0;
}

/* The token each byte becomes when nothing longer spells it: GPT-2's
 * character for it, or SentencePiece's <0xXX>. */
static void build_byte_tokens(tg_llm_tokenizer *t)
{
	for (int b = 0; b < 256; b++) {
		char s[8];
		int n;

		if (t->model == TOK_MODEL_GPT2) {
			n = tok_utf8_put(tok_byte_char(b), s);
		} else {
			n = snprintf(s, sizeof s, "<0x%02X>", b);
		}
		t->byte_tok[b] = tok_find(t, s, (size_t)n);
	}
}

/* A special id from the file: -1 (none) or in range. */
static int check_id(const tg_llm_tokenizer *t, int64_t id, const char *key,
                    int32_t *out)
{
	if (id < -1 || id >= (int64_t)t->n)
		return tg_set_error(TG_EINVAL, "tokenizer: %s is %lld, not a token "
		                    "(the vocabulary has %zu)", key,
		                    (long long)id, t->n);
	*out = (int32_t)id;
	return 0;
}

static int set_model(tg_llm_tokenizer *t, const tg_tok_spec *sp)
{
	int pre;

	if (!sp->model || (strcmp(sp->model, "gpt2") && strcmp(sp->model, "llama")))
		return tg_set_error(TG_EUNSUPPORTED, "tokenizer: model '%s' "
		                    "(tokenizer.ggml.model) is not supported; "
		                    "known: gpt2, llama",
		                    sp->model ? sp->model : "(none)");
	t->model = strcmp(sp->model, "gpt2") == 0 ? TOK_MODEL_GPT2 : TOK_MODEL_LLAMA;
	pre = t->model == TOK_MODEL_GPT2 ? tok_pre_from_name(sp->pre) : TOK_PRE_GPT2;
	if (pre < 0)
		return TG_EUNSUPPORTED;
	t->pre = (tok_pre)pre;
	t->ignore_merges = t->pre == TOK_PRE_LLAMA3;
	t->add_bos = sp->add_bos >= 0 ? sp->add_bos : t->model == TOK_MODEL_LLAMA;
	t->add_eos = sp->add_eos > 0;
	t->add_space_prefix = sp->add_space_prefix != 0;
	if (sp->n_tokens == 0 || sp->n_tokens > INT32_MAX || !sp->tokens)
		return tg_set_error(TG_EINVAL, "tokenizer: %zu tokens "
		                    "(tokenizer.ggml.tokens)", sp->n_tokens);
	return 0;
}

static int fill(tg_llm_tokenizer *t, const tg_tok_spec *sp)
{
	int rc;

	if ((rc = set_model(t, sp)) < 0)
		return rc;
	t->n = sp->n_tokens;
	t->tok = calloc(t->n, sizeof *t->tok);
	if (!t->tok)
		return TG_ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		if ((rc = add_token(t, sp, i)) < 0)
			return rc;
	if ((rc = build_hash(t)) < 0 || (rc = build_merges(t, sp)) < 0 ||
	    (rc = build_specials(t)) < 0)
		return rc;
	build_byte_tokens(t);
	if ((rc = check_id(t, sp->bos, "tokenizer.ggml.bos_token_id", &t->bos)) < 0 ||
	    (rc = check_id(t, sp->eos, "tokenizer.ggml.eos_token_id", &t->eos)) < 0 ||
	    (rc = check_id(t, sp->unk, "tokenizer.ggml.unknown_token_id", &t->unk)) < 0 ||
	    (rc = check_id(t, sp->pad, "tokenizer.ggml.padding_token_id", &t->pad)) < 0)
		return rc;
	return 0;
}

tg_llm_tokenizer *tg_tok_new(const tg_tok_spec *spec)
{
	tg_llm_tokenizer *t;

	if (!spec) {
		tg_set_error(TG_EINVAL, "tokenizer: NULL spec");
		return NULL;
	}
	tg_clear_error();
	t = calloc(1, sizeof *t);
	if (!t) {
		tg_set_error(TG_ENOMEM, "tokenizer: out of memory");
		return NULL;
	}
	if (fill(t, spec) < 0) {
		if (tg_last_status() == TG_OK)
			tg_set_error(TG_ENOMEM, "tokenizer: out of memory for "
			             "%zu tokens", spec->n_tokens);
		tg_llm_tokenizer_free(t);
		return NULL;
	}
	return t;
}

void tg_llm_tokenizer_free(tg_llm_tokenizer *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->tok && i < t->n; i++) {
		free(t->tok[i].text);
		free(t->tok[i].bytes);
	}
	free(t->tok);
	free(t->hash);
	free(t->merges);
	free(t->specials);
	free(t);
}

/* ---- queries ---- */

/* The entry of id, or NULL with an error naming op. */
static const tok_entry *entry(const tg_llm_tokenizer *t, int32_t id,
                              const char *op)
{
	if (!t) {
		tg_set_error(TG_EINVAL, "%s: NULL tokenizer", op);
		return NULL;
	}
	if (id < 0 || (size_t)id >= t->n) {
		tg_set_error(TG_EINVAL, "%s: token %ld is out of range (the "
		             "vocabulary has %zu)", op, (long)id, t->n);
		return NULL;
	}
	return &t->tok[id];
}

size_t tg_llm_vocab_size(const tg_llm_tokenizer *t)
{
	return t ? t->n : 0;
}

const char *tg_llm_token_text(const tg_llm_tokenizer *t, int32_t id,
                              size_t *len)
{
	const tok_entry *e = entry(t, id, "tg_llm_token_text");

	if (e && len)
		*len = e->len;
	return e ? e->text : NULL;
}

int tg_llm_token_type(const tg_llm_tokenizer *t, int32_t id)
{
	const tok_entry *e = entry(t, id, "tg_llm_token_type");

	return e ? e->type : TG_EINVAL;
}

long tg_llm_token_bytes(const tg_llm_tokenizer *t, int32_t id, char *buf,
                        size_t n)
{
	const tok_entry *e = entry(t, id, "tg_llm_token_bytes");

	if (!e)
		return TG_EINVAL;
	if (buf)
		memcpy(buf, e->bytes, e->nbytes < n ? e->nbytes : n);
	return (long)e->nbytes;
}

int32_t tg_llm_bos(const tg_llm_tokenizer *t)
{
	return t ? t->bos : -1;
}

int32_t tg_llm_eos(const tg_llm_tokenizer *t)
{
	return t ? t->eos : -1;
}

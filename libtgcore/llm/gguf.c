/*
 * gguf.c - a tokenizer from a GGUF file's tokenizer.ggml.* keys: the
 * keys are read through tg.h's GGUF reader into a tg_tok_spec, which
 * vocab.c checks and builds from.  The arrays' strings stay the
 * reader's (borrowed while the spec is built); the spec's own arrays
 * are freed here.
 */
#include <stdlib.h>
#include <string.h>

#include "llm.h"

/* The arrays a spec borrows or owns while it is built. */
typedef struct spec_mem {
	const char **tokens, **merges;
	size_t *token_lens, *merge_lens;
	int32_t *types;
	float *scores;
} spec_mem;

static void spec_mem_free(spec_mem *m)
{
	free(m->tokens), free(m->merges), free(m->token_lens);
	free(m->merge_lens), free(m->types), free(m->scores);
}

/* The string array under key: *n entries into texts and lens (new);
 * absent and optional: *n 0.  0 or a status naming the key. */
static int str_array(const tg_gguf *g, const char *key, int optional,
                     const char ***texts, size_t **lens, size_t *n)
{
	int vt;

	*n = 0;
	if (tg_gguf_kv_find(g, key) < 0) {
		if (optional)
			return 0;
		return tg_set_error(TG_EINVAL, "tokenizer: the file has no %s", key);
	}
	if (tg_gguf_get_array(g, key, &vt, n) < 0)
		return tg_last_status();
	*texts = malloc((*n ? *n : 1) * sizeof **texts);
	*lens = malloc((*n ? *n : 1) * sizeof **lens);
	if (!*texts || !*lens)
		return tg_set_error(TG_ENOMEM, "tokenizer: out of memory for "
		                    "%zu entries of %s", *n, key);
	for (size_t i = 0; i < *n; i++) {
		(*texts)[i] = tg_gguf_array_str(g, key, i, &(*lens)[i]);
		if (!(*texts)[i])
			return tg_last_status();
	}
	return 0;
}

/* Token types and scores, optional, each as long as the tokens. */
static int num_arrays(const tg_gguf *g, size_t n, spec_mem *m)
{
	static const char *const tk = "tokenizer.ggml.token_type";
	static const char *const sk = "tokenizer.ggml.scores";
	size_t cnt;
	int vt;

	if (tg_gguf_kv_find(g, tk) >= 0) {
		if (tg_gguf_get_array(g, tk, &vt, &cnt) < 0)
			return tg_last_status();
		if (cnt != n)
			return tg_set_error(TG_EINVAL, "tokenizer: %s has %zu "
			                    "entries for %zu tokens", tk, cnt, n);
		if (!(m->types = malloc(n * sizeof *m->types)))
			return TG_ENOMEM;
		for (size_t i = 0; i < n; i++) {
			int64_t v;

			if (tg_gguf_array_int(g, tk, i, &v) < 0)
				return tg_last_status();
			if (v < 0 || v > TG_LLM_TOKEN_BYTE)
				return tg_set_error(TG_EINVAL, "tokenizer: %s[%zu] is "
				                    "%lld (0 to 6)", tk, i, (long long)v);
			m->types[i] = (int32_t)v;
		}
	}
	if (tg_gguf_kv_find(g, sk) >= 0) {
		if (tg_gguf_get_array(g, sk, &vt, &cnt) < 0)
			return tg_last_status();
		if (cnt != n)
			return tg_set_error(TG_EINVAL, "tokenizer: %s has %zu "
			                    "entries for %zu tokens", sk, cnt, n);
		if (!(m->scores = malloc(n * sizeof *m->scores)))
			return TG_ENOMEM;
		for (size_t i = 0; i < n; i++) {
			double v;

			if (tg_gguf_array_float(g, sk, i, &v) < 0)
				return tg_last_status();
			m->scores[i] = (float)v;
		}
	}
	return 0;
}

/* An integer key, def when absent. */
static int int_key(const tg_gguf *g, const char *key, int64_t def,
                   int64_t *out)
{
	*out = def;
	if (tg_gguf_kv_find(g, key) < 0)
		return 0;
	return tg_gguf_get_int(g, key, out) < 0 ? tg_last_status() : 0;
}

static int scalars(const tg_gguf *g, tg_tok_spec *s)
{
	int64_t v[7];
	int rc;

	if ((rc = int_key(g, "tokenizer.ggml.bos_token_id", -1, &v[0])) < 0 ||
	    (rc = int_key(g, "tokenizer.ggml.eos_token_id", -1, &v[1])) < 0 ||
	    (rc = int_key(g, "tokenizer.ggml.unknown_token_id", -1, &v[2])) < 0 ||
	    (rc = int_key(g, "tokenizer.ggml.padding_token_id", -1, &v[3])) < 0 ||
	    (rc = int_key(g, "tokenizer.ggml.add_bos_token", -1, &v[4])) < 0 ||
	    (rc = int_key(g, "tokenizer.ggml.add_eos_token", -1, &v[5])) < 0 ||
	    (rc = int_key(g, "tokenizer.ggml.add_space_prefix", -1, &v[6])) < 0)
		return rc;
	s->bos = v[0], s->eos = v[1], s->unk = v[2], s->pad = v[3];
	s->add_bos = (int)(v[4] < 0 ? -1 : v[4] != 0);
	s->add_eos = (int)(v[5] < 0 ? -1 : v[5] != 0);
	s->add_space_prefix = (int)(v[6] < 0 ? -1 : v[6] != 0);
	return 0;
}

/* A string key as a NUL-terminated copy (new), NULL when absent. */
static int str_key(const tg_gguf *g, const char *key, int required,
                   char **out)
{
	const char *s;
	size_t n;

	*out = NULL;
	if (tg_gguf_kv_find(g, key) < 0)
		return required ? tg_set_error(TG_EINVAL, "tokenizer: the file "
		                               "has no %s", key) : 0;
	if (!(s = tg_gguf_get_str(g, key, &n)))
		return tg_last_status();
	if (!(*out = malloc(n + 1)))
		return TG_ENOMEM;
	memcpy(*out, s, n);
	(*out)[n] = '\0';
	return 0;
}

tg_llm_tokenizer *tg_llm_tokenizer_from_gguf(const tg_gguf *g)
{
	tg_tok_spec s = { 0 };
	spec_mem m = { 0 };
	char *model = NULL, *pre = NULL;
	tg_llm_tokenizer *t = NULL;
	int rc;

	if (!g) {
		tg_set_error(TG_EINVAL, "tg_llm_tokenizer_from_gguf: NULL file");
		return NULL;
	}
	if ((rc = str_key(g, "tokenizer.ggml.model", 1, &model)) < 0 ||
	    (rc = str_key(g, "tokenizer.ggml.pre", 0, &pre)) < 0 ||
	    (rc = str_array(g, "tokenizer.ggml.tokens", 0, &m.tokens,
	                    &m.token_lens, &s.n_tokens)) < 0 ||
	    (rc = str_array(g, "tokenizer.ggml.merges", 1, &m.merges,
	                    &m.merge_lens, &s.n_merges)) < 0 ||
	    (rc = num_arrays(g, s.n_tokens, &m)) < 0 || (rc = scalars(g, &s)) < 0)
		goto out;
	s.model = model, s.pre = pre;
	s.tokens = m.tokens, s.token_lens = m.token_lens;
	s.merges = m.merges, s.merge_lens = m.merge_lens;
	s.types = m.types, s.scores = m.scores;
	t = tg_tok_new(&s);
out:
	if (rc == TG_ENOMEM && tg_last_status() != TG_ENOMEM)
		tg_set_error(TG_ENOMEM, "tg_llm_tokenizer_from_gguf: out of memory");
	spec_mem_free(&m);
	free(model);
	free(pre);
	return t;
}

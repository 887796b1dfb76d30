/*
 * context.c - a model's running state: the KV cache on the device, the
 * RoPE tables, the position, and the decode step's JIT.
 *
 * Prefill runs the prompt's tokens as one batch, eagerly (its shapes
 * change with each prompt).  Decode runs one token per sequence through
 * a tg_jit whose step reads the position from a tg_variable: the
 * capture serves every position, so nothing compiles as the context
 * grows.  The step's input is the tokens' embedding rows as the file
 * stores them, read from the file's mapping on the host.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define PAD_MASK (-1e30f) /* finite: a padded query keeps a valid row */

struct tg_llm_context {
	tg_llm_model *m;
	int64_t n_ctx, n_seq, pos;
	tg_variable *var;
	tg_tensor **kc, **vc, *cos, *sin, *mask;
	float *host_mask;       /* the mask's values (n_seq, n_ctx) */
	uint8_t *rows;          /* embedding rows of one call */
	size_t rows_cap;
	int32_t *chunk;         /* one prefill batch's tokens */
	size_t chunk_cap;
	tg_tensor *positions;   /* 0 .. n_ctx-1, for the causal mask */
	tg_jit *jit;
};

static tg_tensor *zeros(tg_dev *dev, size_t nd, const int64_t *shape)
{
	tg_tensor *t = llm_own(tg_contiguous(tg_zeros(dev, TG_FLOAT32, nd,
	                                              shape)));

	return t && !tg_realize(t) ? t : (tg_tensor_unref(t), NULL);
}

/* The frequency of each pair of dimensions, in double:
 * base^(-2i/rope_dim), divided by llama3's factor where the file has
 * them and by the linear scale; into freq (rope_dim/2). */
static int rope_freqs(const tg_llm_context *c, double *freq)
{
	const llm_hparams *hp = &c->m->hp;
	int64_t half = hp->rope_dim / 2;
	float *ff = malloc((size_t)half * sizeof *ff);
	int rc = 0;

	if (!ff)
		return tg_set_error(TG_ENOMEM, "llm_context_new: out of memory");
	for (int64_t i = 0; i < half; i++)
		ff[i] = 1;
	if (c->m->rope_freqs)
		rc = tg_tensor_data(c->m->rope_freqs, ff, (size_t)half * sizeof *ff);
	for (int64_t i = 0; !rc && i < half; i++)
		freq[i] = pow(hp->rope_base, -2.0 * (double)i /
		                             (double)hp->rope_dim) /
		          ff[i] / hp->rope_scale;
	free(ff);
	return rc;
}

/* cos and sin of each position times each pair's frequency. */
static int rope_tables(tg_llm_context *c)
{
	int64_t half = c->m->hp.rope_dim / 2, n = c->n_ctx * half;
	float *cs = malloc((size_t)n * sizeof *cs);
	float *sn = malloc((size_t)n * sizeof *sn);
	double *freq = malloc((size_t)half * sizeof *freq);
	int rc;

	if (!cs || !sn || !freq)
		rc = tg_set_error(TG_ENOMEM, "llm_context_new: out of memory for "
		                  "the RoPE tables");
	else if (!(rc = rope_freqs(c, freq))) {
		for (int64_t p = 0; p < c->n_ctx; p++)
			for (int64_t i = 0; i < half; i++) {
				double th = (double)p * freq[i];

				cs[p * half + i] = (float)cos(th);
				sn[p * half + i] = (float)sin(th);
			}
		c->cos = llm_own(tg_tensor_new(c->m->dev, TG_FLOAT32, 2,
		                               (int64_t[]){ c->n_ctx, half }, cs));
		c->sin = llm_own(tg_tensor_new(c->m->dev, TG_FLOAT32, 2,
		                               (int64_t[]){ c->n_ctx, half }, sn));
		rc = c->cos && c->sin && !tg_realize(c->cos) &&
		     !tg_realize(c->sin) ? 0 : tg_last_status();
	}
	free(cs);
	free(sn);
	free(freq);
	return rc;
}

static int caches(tg_llm_context *c)
{
	const llm_hparams *hp = &c->m->hp;
	size_t L = (size_t)hp->n_layer;
	int64_t ks[4] = { c->n_seq, hp->n_head_kv, c->n_ctx, hp->head_dim };
	int64_t vs[4] = { c->n_seq, hp->n_head_kv, c->n_ctx, hp->head_dim_v };

	c->kc = calloc(L, sizeof *c->kc);
	c->vc = calloc(L, sizeof *c->vc);
	if (!c->kc || !c->vc)
		return tg_set_error(TG_ENOMEM, "llm_context_new: out of memory");
	for (size_t l = 0; l < L; l++)
		if (!(c->kc[l] = zeros(c->m->dev, 4, ks)) ||
		    !(c->vc[l] = zeros(c->m->dev, 4, vs)))
			return tg_last_status();
	if (c->n_seq == 1)
		return 0;
	c->host_mask = calloc((size_t)(c->n_seq * c->n_ctx), sizeof(float));
	if (!c->host_mask)
		return tg_set_error(TG_ENOMEM, "llm_context_new: out of memory");
	c->mask = zeros(c->m->dev, 2, (int64_t[]){ c->n_seq, c->n_ctx });
	return c->mask ? 0 : tg_last_status();
}

/* A variable named "pos", or "pos2", "pos3"... while others live. */
static tg_variable *position(int64_t max)
{
	char name[32] = "pos";
	tg_variable *v = NULL;

	for (int i = 2; !v && i < 1000; i++) {
		v = tg_variable_new(name, 0, max);
		snprintf(name, sizeof name, "pos%d", i);
	}
	return v;
}

static int decode_step(void *ctx, tg_tensor *const *in, size_t nin,
                       tg_tensor **out, size_t nout);

tg_llm_context *tg_llm_context_new(tg_llm_model *m, int64_t n_ctx,
                                   int64_t n_seq)
{
	tg_llm_context *c;

	if (!m) {
		tg_set_error(TG_EINVAL, "llm_context_new: NULL model");
		return NULL;
	}
	if (n_ctx == 0)
		n_ctx = m->hp.n_ctx_train;
	if (n_seq == 0)
		n_seq = 1;
	if (n_ctx < 1 || n_ctx > (INT64_C(1) << 24) || n_seq < 1 ||
	    n_seq > 4096) {
		tg_set_error(TG_EINVAL, "llm_context_new: %lld positions for "
		             "%lld sequences (1 to 2^24 and 1 to 4096)",
		             (long long)n_ctx, (long long)n_seq);
		return NULL;
	}
	if (!(c = calloc(1, sizeof *c))) {
		tg_set_error(TG_ENOMEM, "llm_context_new: out of memory");
		return NULL;
	}
	c->m = m;
	c->n_ctx = n_ctx;
	c->n_seq = n_seq;
	tg_scope_begin();
	c->positions = llm_own(tg_contiguous(tg_arange(m->dev, TG_INT32, 0,
	                                               (double)n_ctx, 1)));
	if (!c->positions || tg_realize(c->positions) ||
	    !(c->var = position(n_ctx - 1)) || rope_tables(c) || caches(c) ||
	    !(c->jit = tg_jit_new(decode_step, c))) {
		tg_scope_end();
		tg_llm_context_free(c);
		return NULL;
	}
	tg_scope_end();
	return c;
}

void tg_llm_context_free(tg_llm_context *c)
{
	if (!c)
		return;
	for (int64_t l = 0; c->kc && l < c->m->hp.n_layer; l++)
		tg_tensor_unref(c->kc[l]);
	for (int64_t l = 0; c->vc && l < c->m->hp.n_layer; l++)
		tg_tensor_unref(c->vc[l]);
	free(c->kc);
	free(c->vc);
	tg_tensor_unref(c->cos);
	tg_tensor_unref(c->sin);
	tg_tensor_unref(c->mask);
	tg_jit_free(c->jit);
	tg_variable_free(c->var);
	free(c->host_mask);
	free(c->rows);
	free(c->chunk);
	tg_tensor_unref(c->positions);
	free(c);
}

int64_t tg_llm_context_pos(const tg_llm_context *c)
{
	return c ? c->pos : -1;
}

int64_t tg_llm_context_size(const tg_llm_context *c)
{
	return c ? c->n_ctx : -1;
}

int tg_llm_context_reset(tg_llm_context *c)
{
	if (!c)
		return tg_set_error(TG_EINVAL, "llm_context_reset: NULL context");
	c->pos = 0;
	if (!c->host_mask)
		return 0;
	memset(c->host_mask, 0, (size_t)(c->n_seq * c->n_ctx) * sizeof(float));
	return tg_setitem_s(c->mask, 0, NULL, 0);
}

static int upload_mask(tg_llm_context *c);

int tg_llm_context_rewind(tg_llm_context *c, int64_t pos)
{
	if (!c)
		return tg_set_error(TG_EINVAL, "llm_context_rewind: NULL context");
	if (pos < 0 || pos > c->pos)
		return tg_set_error(TG_EINVAL, "llm_context_rewind: position %lld "
		                    "is not in [0, %lld]", (long long)pos,
		                    (long long)c->pos);
	if (pos == c->pos)
		return 0;
	if (!c->host_mask || pos == 0)
		return pos == 0 ? tg_llm_context_reset(c) : (c->pos = pos, 0);
	for (int64_t b = 0; b < c->n_seq; b++)
		for (int64_t i = pos; i < c->pos; i++)
			c->host_mask[b * c->n_ctx + i] = 0;
	c->pos = pos;
	return upload_mask(c);
}

static llm_pass pass(tg_llm_context *c, int64_t pos, int64_t n)
{
	llm_pass p = { c->kc, c->vc, c->cos, c->sin, c->mask, c->positions,
	               pos, n, c->n_ctx };

	return p;
}

/* The embedding rows of tokens (n_seq x n) as a uint8 tensor
 * (n_seq, n, row bytes) on the device. */
static tg_tensor *token_rows(tg_llm_context *c, const int32_t *tokens,
                             int64_t n)
{
	int64_t rb = c->m->embd_row_bytes;
	size_t need = (size_t)(c->n_seq * n * rb);

	if (need > c->rows_cap) {
		uint8_t *r = realloc(c->rows, need);

		if (!r) {
			tg_set_error(TG_ENOMEM, "llm: out of memory for %zu "
			             "bytes of embedding rows", need);
			return NULL;
		}
		c->rows = r;
		c->rows_cap = need;
	}
	if (llm_embed_rows(c->m, tokens, (size_t)(c->n_seq * n), c->rows))
		return NULL;
	return tg_tensor_new(c->m->dev, TG_UINT8, 3,
	                     (int64_t[]){ c->n_seq, n, rb }, c->rows);
}

static int decode_step(void *ctx, tg_tensor *const *in, size_t nin,
                       tg_tensor **out, size_t nout)
{
	tg_llm_context *c = ctx;
	llm_pass p = pass(c, tg_variable_dim(c->var), 1);
	tg_tensor *h;

	(void)nin;
	(void)nout;
	h = llm_forward(c->m, &p, llm_embed(c->m, in[0]));
	out[0] = h ? tg_reshape(llm_logits(c->m, h), 2,
	                        (int64_t[]){ c->n_seq, c->m->hp.n_vocab })
	           : NULL;
	return out[0] ? 0 : tg_last_status();
}

/* The host's padding mask into the device's, in place (the JIT's
 * capture reads that memory). */
static int upload_mask(tg_llm_context *c)
{
	int rc;

	tg_scope_begin();
	rc = tg_assign(c->mask, tg_tensor_new(c->m->dev, TG_FLOAT32, 2,
	                                      (int64_t[]){ c->n_seq, c->n_ctx },
	                                      c->host_mask));
	rc = rc ? rc : tg_realize(c->mask);
	tg_scope_end();
	return rc;
}

/* Checks tokens (n_seq x n): ids in the vocabulary, or -1 (padding)
 * where there are several sequences; then sets the mask of their
 * places to what they are, padding or not (a place keeps no mark from
 * a call that failed there before). */
static int check_tokens(tg_llm_context *c, const char *op,
                        const int32_t *tokens, int64_t n)
{
	int dirty = 0;

	for (int64_t b = 0; b < c->n_seq; b++)
		for (int64_t i = 0; i < n; i++) {
			int32_t t = tokens[b * n + i];

			if (t >= c->m->hp.n_vocab || t < -1 ||
			    (t == -1 && c->n_seq == 1))
				return tg_set_error(TG_EINVAL, "%s: token %d (sequence "
				                    "%lld, place %lld) is not in the "
				                    "vocabulary (%lld tokens%s)", op,
				                    (int)t, (long long)b, (long long)i,
				                    (long long)c->m->hp.n_vocab,
				                    c->n_seq > 1 ? "; -1 pads" : "");
		}
	for (int64_t b = 0; c->host_mask && b < c->n_seq; b++)
		for (int64_t i = 0; i < n; i++) {
			float *at = &c->host_mask[b * c->n_ctx + c->pos + i];
			float v = tokens[b * n + i] == -1 ? PAD_MASK : 0;

			dirty |= *at != v;
			*at = v;
		}
	return dirty ? upload_mask(c) : 0;
}

static int check_room(const tg_llm_context *c, const char *op, int64_t n)
{
	if (n < 1 || n > c->n_ctx - c->pos)
		return tg_set_error(TG_EINVAL, "%s: %lld tokens at position %lld "
		                    "do not fit the context of %lld", op,
		                    (long long)n, (long long)c->pos,
		                    (long long)c->n_ctx);
	return 0;
}

/* Copies logits (any float shape) to the host. */
static int read_logits(tg_tensor *lg, float *out)
{
	size_t n = (size_t)tg_tensor_numel(lg);

	return lg ? tg_tensor_data(lg, out, n * sizeof *out) : tg_last_status();
}

/* The batch a prefill of n tokens runs: a power of two from 8 to
 * PREFILL_MAX (padded on the right, where the causal mask hides the
 * padding from the real tokens), so that prompts of every length share
 * a few compiled shapes; the position is symbolic, so they serve every
 * place in the context too.  n itself where padding would not fit. */
#define PREFILL_MAX 512

static int64_t bucket(const tg_llm_context *c, int64_t n)
{
	int64_t b = 8;

	while (b < n)
		b *= 2;
	return c->pos + b <= c->n_ctx ? b : n;
}

/* Rows off .. off+len of each sequence's tokens (n a sequence) into
 * c->chunk, padded with token 0 to w. */
static int32_t *chunk_tokens(tg_llm_context *c, const int32_t *tokens,
                             size_t n, size_t off, size_t len, size_t w)
{
	size_t need = (size_t)c->n_seq * w;

	if (need > c->chunk_cap) {
		int32_t *p = realloc(c->chunk, need * sizeof *p);

		if (!p) {
			tg_set_error(TG_ENOMEM, "llm_prefill: out of memory");
			return NULL;
		}
		c->chunk = p;
		c->chunk_cap = need;
	}
	for (int64_t b = 0; b < c->n_seq; b++) {
		memcpy(c->chunk + (size_t)b * w, tokens + (size_t)b * n + off,
		       len * sizeof *tokens);
		memset(c->chunk + (size_t)b * w + len, 0,
		       (w - len) * sizeof *tokens);
	}
	return c->chunk;
}

/* Logits of rows [a, b) of hidden states h (B, w, E) into out, whose
 * sequences are `stride` rows apart. */
static int chunk_logits(tg_llm_context *c, tg_tensor *h, int64_t a,
                        int64_t b, float *out, size_t stride)
{
	size_t V = (size_t)c->m->hp.n_vocab, rows = (size_t)(b - a);
	tg_tensor *lg = llm_logits(c->m, tg_shrink(h, 3, (int64_t[]){
		0, c->n_seq, a, b, 0, c->m->hp.n_embd }));
	float *tmp = malloc((size_t)c->n_seq * rows * V * sizeof *tmp);
	int rc = tmp ? read_logits(lg, tmp)
	             : tg_set_error(TG_ENOMEM, "llm_prefill: out of memory");

	for (int64_t q = 0; !rc && q < c->n_seq; q++)
		memcpy(out + (size_t)q * stride * V, tmp + (size_t)q * rows * V,
		       rows * V * sizeof *tmp);
	free(tmp);
	return rc;
}

/* Runs tokens off .. off+len of each sequence at the position. */
static int prefill_chunk(tg_llm_context *c, const int32_t *tokens,
                         size_t n, size_t off, size_t len, float *logits,
                         int flags)
{
	int64_t w = bucket(c, (int64_t)len);
	int32_t *ids = chunk_tokens(c, tokens, n, off, len, (size_t)w);
	size_t V = (size_t)c->m->hp.n_vocab;
	llm_pass p;
	tg_tensor *h;
	int rc;

	if (!ids || (rc = tg_variable_bind(c->var, c->pos)))
		return tg_last_status();
	tg_scope_begin();
	p = pass(c, tg_variable_dim(c->var), w);
	h = llm_forward(c->m, &p, llm_embed(c->m, token_rows(c, ids, w)));
	if (!h)
		rc = tg_last_status();
	else if (logits && (flags & TG_LLM_LOGITS_ALL))
		rc = chunk_logits(c, h, 0, (int64_t)len, logits + off * V, n);
	else if (logits && off + len == n)
		rc = chunk_logits(c, h, (int64_t)len - 1, (int64_t)len, logits,
		                  1);
	else
		rc = tg_realize(h);
	tg_scope_end();
	if (!rc)
		c->pos += (int64_t)len;
	return rc;
}

int tg_llm_prefill(tg_llm_context *c, const int32_t *tokens, size_t n,
                   float *logits, int flags)
{
	int rc;

	if (!c || !tokens)
		return tg_set_error(TG_EINVAL, "llm_prefill: NULL %s",
		                    c ? "tokens" : "context");
	if (flags & ~TG_LLM_LOGITS_ALL)
		return tg_set_error(TG_EINVAL, "llm_prefill: unknown flags %#x",
		                    (unsigned)flags);
	if ((rc = check_room(c, "llm_prefill", (int64_t)n)) ||
	    (rc = check_tokens(c, "llm_prefill", tokens, (int64_t)n)))
		return rc;
	for (size_t off = 0; off < n; off += PREFILL_MAX) {
		size_t len = n - off < PREFILL_MAX ? n - off : PREFILL_MAX;

		/* a chunk that fails leaves the position where it was: the
		 * chunks before it stay in the cache */
		if ((rc = prefill_chunk(c, tokens, n, off, len, logits, flags)))
			return tg_set_error(rc, "llm_prefill: %s", tg_last_error());
	}
	return 0;
}

int tg_llm_decode(tg_llm_context *c, const int32_t *tokens, float *logits)
{
	tg_tensor *rows, *out = NULL;
	int rc;

	if (!c || !tokens || !logits)
		return tg_set_error(TG_EINVAL, "llm_decode: NULL %s",
		                    !c ? "context" : !tokens ? "tokens" : "logits");
	if ((rc = check_room(c, "llm_decode", 1)) ||
	    (rc = check_tokens(c, "llm_decode", tokens, 1)) ||
	    (rc = tg_variable_bind(c->var, c->pos)))
		return rc;
	tg_scope_begin();
	rows = token_rows(c, tokens, 1);
	rc = rows ? tg_jit_call(c->jit, &rows, 1, &out, 1) : tg_last_status();
	if (!rc)
		rc = read_logits(out, logits);
	tg_scope_end();
	if (rc)
		return tg_set_error(rc, "llm_decode: %s", tg_last_error());
	c->pos++;
	return 0;
}

int tg_llm_context_jit_info(const tg_llm_context *c, tg_jit_info *out)
{
	if (!c)
		return tg_set_error(TG_EINVAL, "llm_context_jit_info: NULL "
		                    "context");
	return tg_jit_get_info(c->jit, out);
}

/*
 * attention.c - RoPE and grouped-query self-attention over the KV
 * cache.  Keys and values of the new rows are written into the cache
 * through a view at rows pos .. pos+n (pos a tg_variable in a decode
 * step, so one JIT capture writes wherever the position is), and the
 * queries attend over rows 0 .. pos+n of it.
 */
#include <math.h>

#include "model.h"

/* t[..., a:b] along the last axis. */
static tg_tensor *last_range(const tg_tensor *t, int64_t a, int64_t b)
{
	size_t nd = tg_tensor_ndim(t);
	const int64_t *s = tg_tensor_shape(t);
	int64_t pairs[16];

	if (!t || nd < 1 || nd > 8)
		return NULL;
	for (size_t i = 0; i < nd; i++) {
		pairs[2 * i] = 0;
		pairs[2 * i + 1] = s[i];
	}
	pairs[2 * nd - 2] = a;
	pairs[2 * nd - 1] = b;
	return tg_shrink(t, nd, pairs);
}

/* The tables' rows pos .. pos+n as (1, n, 1, rope_dim/2). */
static tg_tensor *table_rows(const llm_pass *p, tg_tensor *table)
{
	int64_t half = tg_tensor_shape(table)[1];
	int64_t at[4] = { p->pos, tg_dim_affine(p->pos, 1, p->n), 0, half };

	return tg_reshape(tg_shrink(table, 2, at), 4,
	                  (int64_t[]){ 1, p->n, 1, half });
}

/* (x0, x1) rotated by the angle: x0 cos - x1 sin, x0 sin + x1 cos. */
static void rotate(const tg_tensor *x0, const tg_tensor *x1,
                   const tg_tensor *c, const tg_tensor *s, tg_tensor **o0,
                   tg_tensor **o1)
{
	*o0 = tg_sub(tg_mul(x0, c), tg_mul(x1, s));
	*o1 = tg_add(tg_mul(x0, s), tg_mul(x1, c));
}

tg_tensor *llm_rope(const tg_llm_model *m, const llm_pass *p,
                    const tg_tensor *x)
{
	int64_t rd = m->hp.rope_dim, hd = tg_tensor_shape(x)[3];
	const int64_t *s = tg_tensor_shape(x);
	tg_tensor *c = table_rows(p, p->cos), *sn = table_rows(p, p->sin);
	tg_tensor *xr = last_range(x, 0, rd), *x0, *x1, *o0, *o1, *r;

	if (m->hp.arch->rope == LLM_ROPE_NEOX) {
		x0 = last_range(xr, 0, rd / 2);
		x1 = last_range(xr, rd / 2, rd);
		rotate(x0, x1, c, sn, &o0, &o1);
		r = tg_cat((const tg_tensor *const[]){ o0, o1 }, 2, -1);
	} else {
		/* adjacent pairs: (..., rd/2, 2) */
		tg_tensor *pr = tg_reshape(xr, 5, (int64_t[]){ s[0], s[1], s[2],
		                                               rd / 2, 2 });
		int64_t one[10] = { 0, s[0], 0, s[1], 0, s[2], 0, rd / 2, 0, 1 };
		int64_t two[10] = { 0, s[0], 0, s[1], 0, s[2], 0, rd / 2, 1, 2 };

		x0 = tg_reshape(tg_shrink(pr, 5, one), 4,
		                (int64_t[]){ s[0], s[1], s[2], rd / 2 });
		x1 = tg_reshape(tg_shrink(pr, 5, two), 4,
		                (int64_t[]){ s[0], s[1], s[2], rd / 2 });
		rotate(x0, x1, c, sn, &o0, &o1);
		r = tg_reshape(tg_stack((const tg_tensor *const[]){ o0, o1 }, 2, -1),
		               4, (int64_t[]){ s[0], s[1], s[2], rd });
	}
	if (rd < hd)
		r = tg_cat((const tg_tensor *const[]){ r, last_range(x, rd, hd) }, 2,
		           -1);
	return r;
}

/* Writes t (B, heads, n, d) into cache rows pos .. pos+n; returns the
 * view written (realize it to write). */
static tg_tensor *put_rows(const llm_pass *p, tg_tensor *cache,
                           const tg_tensor *t)
{
	const int64_t *s = tg_tensor_shape(cache);
	int64_t at[8] = { 0, s[0], 0, s[1], p->pos,
	                  tg_dim_affine(p->pos, 1, p->n), 0, s[3] };
	tg_tensor *view = tg_shrink(cache, 4, at);

	return view && !tg_assign(view, t) ? view : NULL;
}

/* Cache rows 0 .. pos+n, (B, heads, S, d). */
static tg_tensor *cached(const llm_pass *p, tg_tensor *cache)
{
	const int64_t *s = tg_tensor_shape(cache);
	int64_t at[8] = { 0, s[0], 0, s[1], 0,
	                  tg_dim_affine(p->pos, 1, p->n), 0, s[3] };

	return tg_shrink(cache, 4, at);
}

/* x (B, n, heads*d) -> (B, heads, n, d) after the optional norm and
 * RoPE. */
static tg_tensor *heads(const tg_llm_model *m, const llm_pass *p,
                        tg_tensor *x, int64_t h, int64_t d,
                        const tg_tensor *norm, int rope)
{
	const int64_t *s = tg_tensor_shape(x);
	int whole = m->hp.arch->qk_norm == LLM_QK_WHOLE;

	if (norm && whole)
		x = llm_rmsnorm(x, norm, m->hp.eps);
	x = tg_reshape(x, 4, (int64_t[]){ s[0], s[1], h, d });
	if (norm && !whole)
		x = llm_rmsnorm(x, norm, m->hp.eps);
	if (rope)
		x = llm_rope(m, p, x);
	return tg_permute(x, 4, (int[]){ 0, 2, 1, 3 });
}

/* The additive mask (1 or B, 1, 1, n, S): causal for n > 1, and the
 * context's padding mask; NULL when nothing is masked. */
static tg_tensor *attn_mask(const llm_pass *p, int64_t B)
{
	int64_t S = tg_dim_affine(p->pos, 1, p->n);
	tg_tensor *mask = NULL;

	if (p->n > 1) {
		/* key s is visible to query i when s <= pos + i; both read
		 * from the positions, so that pos may be symbolic */
		tg_tensor *ks = tg_shrink(p->positions, 1, (int64_t[]){ 0, S });
		tg_tensor *qs = tg_shrink(p->positions, 1, (int64_t[]){
			p->pos, tg_dim_affine(p->pos, 1, p->n) });
		tg_tensor *ok = tg_le(tg_reshape(ks, 2, (int64_t[]){ 1, S }),
		                      tg_reshape(qs, 2, (int64_t[]){ p->n, 1 }));

		mask = tg_reshape(tg_where_s(ok, 0, -INFINITY), 5,
		                  (int64_t[]){ 1, 1, 1, p->n, S });
	}
	if (p->mask) {
		int64_t at[4] = { 0, B, 0, S };
		tg_tensor *pm = tg_reshape(tg_shrink(p->mask, 2, at), 5,
		                           (int64_t[]){ B, 1, 1, 1, S });

		mask = mask ? tg_add(mask, pm) : pm;
	}
	return mask;
}

static tg_tensor *bias(tg_tensor *x, const tg_tensor *b)
{
	return b ? tg_add(x, b) : x;
}

tg_tensor *llm_attention(const tg_llm_model *m, const llm_pass *p,
                         size_t l, const tg_tensor *x)
{
	const llm_hparams *hp = &m->hp;
	const llm_layer *ly = &m->layers[l];
	int64_t B = tg_tensor_shape(x)[0], kv = hp->n_head_kv;
	int64_t G = hp->n_head / kv, S = tg_dim_affine(p->pos, 1, p->n);
	tg_tensor *q, *k, *v, *kw, *vw, *sc, *mask;

	q = heads(m, p, bias(llm_linear(x, &ly->wq), ly->bq), hp->n_head,
	          hp->head_dim, ly->q_norm, 1);
	k = heads(m, p, bias(llm_linear(x, &ly->wk), ly->bk), kv,
	          hp->head_dim, ly->k_norm, 1);
	v = heads(m, p, bias(llm_linear(x, &ly->wv), ly->bv), kv,
	          hp->head_dim_v, NULL, 0);
	kw = put_rows(p, p->kc[l], k);
	vw = put_rows(p, p->vc[l], v);
	if (!kw || !vw || tg_realize_many((tg_tensor *[]){ kw, vw }, 2))
		return NULL;
	/* queries grouped by the key-value head they share */
	q = tg_reshape(q, 5, (int64_t[]){ B, kv, G, p->n, hp->head_dim });
	k = tg_reshape(cached(p, p->kc[l]), 5,
	               (int64_t[]){ B, kv, 1, S, hp->head_dim });
	v = tg_reshape(cached(p, p->vc[l]), 5,
	               (int64_t[]){ B, kv, 1, S, hp->head_dim_v });
	sc = tg_mul_s(tg_matmul(q, tg_transpose(k, -1, -2)),
	              1.0 / sqrt((double)hp->head_dim));
	if ((mask = attn_mask(p, B)))
		sc = tg_add(sc, mask);
	v = tg_matmul(tg_softmax(sc, -1), v);   /* (B, kv, G, n, dv) */
	v = tg_permute(tg_reshape(v, 4, (int64_t[]){ B, hp->n_head, p->n,
	                                             hp->head_dim_v }),
	               4, (int[]){ 0, 2, 1, 3 });
	return tg_reshape(v, 3, (int64_t[]){ B, p->n,
	                                     hp->n_head * hp->head_dim_v });
}

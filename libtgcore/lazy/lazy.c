/*
 * lazy/lazy.c - lazy buffers: construction-time folding, views, the
 * lazy cache and reference counting (tinygrad's lazy.py).
 *
 * Every buffer but a BUFFER or ASSIGN is looked up in the lazy cache
 * before it is made, so building the same expression twice gives the
 * same node and the scheduler computes it once.  The cache holds no
 * references; a node leaves it when its last reference goes, under the
 * cache lock so a lookup never revives a dying node.
 */
#include <stdlib.h>
#include <string.h>

#include "lazy/lazy.h"
#include "device/device.h"
#include "ir/ir.h"

static pthread_mutex_t lz_lock = PTHREAD_MUTEX_INITIALIZER;
static tg_lazy **lz_bucket;
static size_t lz_nbucket, lz_count;
static uint64_t lz_next_id;

/* ------------------------------------------------------------- hashing */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_sint(uint64_t h, tg_sint s)
{
	return mix(h, s.u ? (uint64_t)(uintptr_t)s.u : (uint64_t)s.c);
}

static uint64_t st_hash(const tg_st *st)
{
	uint64_t h = st->nviews;
	size_t i, d;

	for (i = 0; i < st->nviews; i++) {
		const tg_view *v = st->views[i];

		h = mix_sint(mix(h, v->ndim), v->offset);
		for (d = 0; d < v->ndim; d++)
			h = mix_sint(mix_sint(h, v->shape[d]), v->strides[d]);
		for (d = 0; v->mask && d < 2 * v->ndim; d++)
			h = mix_sint(h, v->mask[d]);
	}
	return h;
}

static uint64_t lazy_hash(const tg_lazy *lb)
{
	uint64_t h = mix(lb->kind, (uintptr_t)lb->base);
	uint32_t i;

	h = mix(mix(mix(h, lb->op), lb->dtype), (uintptr_t)lb->dev);
	h = mix(mix(h, lb->value.u), lb->axes);
	for (i = 0; i < lb->nsrc; i++)
		h = mix(h, (uintptr_t)lb->src[i]);
	return mix(h, st_hash(lb->st));
}

static int lazy_same(const tg_lazy *a, const tg_lazy *b)
{
	uint32_t i;

	if (a->hash != b->hash || a->kind != b->kind || a->op != b->op ||
	    a->dtype != b->dtype || a->dev != b->dev || a->base != b->base ||
	    a->value.u != b->value.u || a->axes != b->axes ||
	    a->nsrc != b->nsrc)
		return 0;
	for (i = 0; i < a->nsrc; i++)
		if (a->src[i] != b->src[i])
			return 0;
	return tg_st_eq(a->st, b->st);
}

static int cacheable(const tg_lazy *lb)
{
	return lb->kind != TG_LZ_BUFFER && lb->kind != TG_LZ_ASSIGN;
}

/* Called with lz_lock held. */
static int cache_grow(void)
{
	size_t n = lz_nbucket ? lz_nbucket * 2 : 256, i;
	tg_lazy **nb = calloc(n, sizeof *nb);

	if (!nb)
		return tg_error_oom("lazy cache");
	for (i = 0; i < lz_nbucket; i++) {
		tg_lazy *e = lz_bucket[i], *next;

		for (; e; e = next) {
			next = e->cache_next;
			e->cache_next = nb[e->hash & (n - 1)];
			nb[e->hash & (n - 1)] = e;
		}
	}
	free(lz_bucket);
	lz_bucket = nb;
	lz_nbucket = n;
	return 0;
}

/* Called with lz_lock held. */
static void cache_remove(tg_lazy *lb)
{
	tg_lazy **p;

	if (!lz_nbucket)
		return;
	for (p = &lz_bucket[lb->hash & (lz_nbucket - 1)]; *p;
	     p = &(*p)->cache_next)
		if (*p == lb) {
			*p = lb->cache_next;
			lz_count--;
			return;
		}
}

/* The cached twin of `proto` with a new reference, or NULL after
 * inserting proto (which then becomes the cached one). */
static tg_lazy *cache_intern(tg_lazy *proto)
{
	tg_lazy *e = NULL;

	pthread_mutex_lock(&lz_lock);
	proto->id = lz_next_id++;
	if (!cacheable(proto))
		goto out;
	if (lz_nbucket)
		for (e = lz_bucket[proto->hash & (lz_nbucket - 1)]; e;
		     e = e->cache_next)
			if (lazy_same(e, proto)) {
				atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
				goto out;
			}
	if ((lz_count + 1) * 2 > lz_nbucket && cache_grow())
		goto out; /* no cache: still correct, just no sharing */
	proto->cache_next = lz_bucket[proto->hash & (lz_nbucket - 1)];
	lz_bucket[proto->hash & (lz_nbucket - 1)] = proto;
	lz_count++;
out:
	pthread_mutex_unlock(&lz_lock);
	return e;
}

/* ----------------------------------------------------------- lifetime */

tg_lazy *tg_lazy_ref(tg_lazy *lb)
{
	if (lb) {
		pthread_mutex_lock(&lz_lock);
		/* atomic too: the memory planner reads counts unlocked */
		atomic_fetch_add_explicit(&lb->refs, 1, memory_order_relaxed);
		pthread_mutex_unlock(&lz_lock);
	}
	return lb;
}

/* Frees one node whose count reached 0; the references it held go to
 * work[] (at most 4: three sources and a base) for the caller to drop. */
static void lazy_destroy(tg_lazy *lb, tg_lazy **work, size_t *nwork)
{
	uint32_t i;

	for (i = 0; i < lb->nsrc; i++)
		work[(*nwork)++] = lb->src[i];
	if (lb->base)
		work[(*nwork)++] = lb->base;
	/* shards are never MULTI: this recursion is one level deep */
	tg_multi_free(lb->multi);
	tg_buffer_unref(lb->buf);
	tg_st_free(lb->st);
	tg_st_free(lb->cchild_st);
	tg_st_free(lb->assign_st);
	free(lb);
}

/* Called with lz_lock held: no thread can find lb again, through the
 * cache or as its source's contiguous child. */
static void hide(tg_lazy *lb)
{
	uint32_t i;

	cache_remove(lb);
	for (i = 0; i < lb->nsrc; i++)
		if (tg_lazy_base(lb->src[i])->cchild == lb)
			tg_lazy_base(lb->src[i])->cchild = NULL;
}

/* Drops one reference; 1 when it was the last (lb is hidden). */
static int release(tg_lazy *lb)
{
	int dead;

	pthread_mutex_lock(&lz_lock);
	dead = atomic_fetch_sub_explicit(&lb->refs, 1,
	                                 memory_order_relaxed) == 1;
	if (dead)
		hide(lb);
	pthread_mutex_unlock(&lz_lock);
	return dead;
}

int tg_lazy_locked(int (*fn)(void *ctx), void *ctx)
{
	int r;

	pthread_mutex_lock(&lz_lock);
	r = fn(ctx);
	pthread_mutex_unlock(&lz_lock);
	return r;
}

void tg_lazy_hide_locked(tg_lazy *lb)
{
	hide(lb);
}

int tg_lazy_child(tg_lazy *base, tg_lazy **child, tg_st **st)
{
	int r = 0;

	*child = NULL;
	*st = NULL;
	pthread_mutex_lock(&lz_lock);
	if (base->cchild) {
		if ((*st = tg_st_copy(base->cchild_st))) {
			*child = base->cchild;
			atomic_fetch_add_explicit(&(*child)->refs, 1,
			                          memory_order_relaxed);
		} else {
			r = TG_ENOMEM;
		}
	}
	pthread_mutex_unlock(&lz_lock);
	return r;
}

void tg_lazy_set_child(tg_lazy *base, tg_lazy *child, tg_st *st)
{
	pthread_mutex_lock(&lz_lock);
	if (!base->cchild) {
		base->cchild = child;
		tg_st_free(base->cchild_st);
		base->cchild_st = st;
		st = NULL;
	}
	pthread_mutex_unlock(&lz_lock);
	tg_st_free(st);
}

void tg_lazy_unref(tg_lazy *lb)
{
	/* Iterative, and allocation-free so it cannot fail: the dying
	 * nodes are out of the cache, so their cache_next links them. */
	tg_lazy *dying, *local[4];
	size_t nlocal, i;

	if (!lb || !release(lb))
		return;
	lb->cache_next = NULL;
	dying = lb;
	while (dying) {
		tg_lazy *d = dying;

		dying = d->cache_next;
		nlocal = 0;
		lazy_destroy(d, local, &nlocal);
		for (i = 0; i < nlocal; i++)
			if (release(local[i])) {
				local[i]->cache_next = dying;
				dying = local[i];
			}
	}
}

int64_t tg_lazy_numel(const tg_lazy *lb)
{
	return tg_st_size(lb->st);
}

void tg_lazy_dims(const tg_lazy *lb, int64_t *out)
{
	for (size_t i = 0; i < tg_lazy_ndim(lb); i++)
		out[i] = tg_dim_encode(tg_lazy_shape(lb)[i]);
}

int tg_lazy_is_sym(const tg_lazy *lb)
{
	return !tg_sints_all_int(tg_lazy_shape(lb), tg_lazy_ndim(lb));
}

/* ------------------------------------------------------------ builders */

/* Integer sizes (callers checked them). */
static void to_sints(size_t n, const int64_t *in, tg_sint *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = tg_si(in[i]);
}

/* A tracker op on symbolic entries needs the shape context. */
#define WITH_SYMCTX(sym, ir, expr) do {                              \
	tg_ir *ir = (sym) ? tg_symctx_enter() : NULL;                 \
	if (!(sym) || ir) {                                           \
		expr;                                                 \
		if (sym)                                              \
			tg_symctx_leave();                            \
	}                                                             \
} while (0)

static tg_lazy *lazy_alloc(uint8_t kind, tg_dtype dt, tg_dev *dev,
                           tg_st *st)
{
	tg_lazy *lb;

	if (!st)
		return NULL;
	if (!(lb = calloc(1, sizeof *lb))) {
		tg_st_free(st);
		tg_error_oom("lazy buffer");
		return NULL;
	}
	lb->refs = 1;
	lb->kind = kind;
	lb->dtype = dt;
	lb->dev = dev;
	lb->st = st;
	return lb;
}

/* Finishes a new node: hashes it and returns the cached twin (freeing
 * lb, whose references are dropped) or lb itself. */
tg_lazy *tg_lazy_finish_(tg_lazy *lb)
{
	tg_lazy *twin;

	lb->hash = lazy_hash(lb);
	if (!(twin = cache_intern(lb)))
		return lb;
	lb->refs = 0;
	{
		tg_lazy *work[5];
		size_t n = 0, i;

		lazy_destroy(lb, work, &n);
		for (i = 0; i < n; i++)
			tg_lazy_unref(work[i]);
	}
	return twin;
}

/* A base of kind/op over srcs (references taken here) with shape of
 * ndim sints.  A 0-size shape becomes CONST 0 (tinygrad does the same:
 * nothing to compute). */
tg_lazy *tg_lazy_new_base_(uint8_t kind, unsigned op, tg_dtype dt,
                         tg_dev *dev, size_t ndim, const tg_sint *shape,
                         tg_lazy *const *src, uint32_t nsrc)
{
	tg_st *st = NULL;
	tg_lazy *lb;
	uint32_t i;

	WITH_SYMCTX(!tg_sints_all_int(shape, ndim), ir,
	            st = tg_st_from_shape(ir, ndim, shape));

	if (st && tg_st_size(st) == 0 && kind != TG_LZ_BUFFER) {
		kind = TG_LZ_CONST;
		nsrc = 0;
	}
	if (!(lb = lazy_alloc(kind, dt, dev, st)))
		return NULL;
	lb->op = (uint16_t)op;
	lb->nsrc = nsrc;
	for (i = 0; i < nsrc; i++)
		lb->src[i] = tg_lazy_ref(src[i]);
	return lb;
}

tg_lazy *tg_lazy_new_multi_(tg_dev *group, tg_dtype dt, size_t ndim,
                            const int64_t *shape, tg_multi *m)
{
	tg_sint s[TG_MAX_DIMS];
	tg_lazy *lb;

	to_sints(ndim, shape, s);
	if (!(lb = lazy_alloc(TG_LZ_MULTI, dt, group,
	                      tg_st_from_shape(NULL, ndim, s)))) {
		tg_multi_free(m);
		return NULL;
	}
	lb->multi = m;
	return lb;
}

/* A 0-size buffer: a CONST 0 base of that shape (nothing to compute). */
static tg_lazy *zero_size(tg_dev *dev, tg_dtype dt, size_t ndim,
                          const int64_t *shape)
{
	tg_sint s[TG_MAX_DIMS];
	tg_lazy *c;

	to_sints(ndim, shape, s);
	c = tg_lazy_new_base_(TG_LZ_CONST, 0, dt, dev, ndim, s, NULL, 0);
	return c ? tg_lazy_finish_(c) : NULL;
}

tg_lazy *tg_lazy_const(tg_dev *dev, tg_dtype dt, tg_scalar v, size_t ndim,
                       const int64_t *shape)
{
	tg_lazy *c, *r, *e;
	int64_t ones[TG_MAX_DIMS];
	size_t i;

	if (ndim > TG_MAX_DIMS) {
		tg_error(TG_EINVAL, "const: %zu dims (at most %d)", ndim,
		         TG_MAX_DIMS);
		return NULL;
	}
	if (dev && dev->ngroup)
		return tg_multi_const(dev, dt, v, ndim, shape);
	for (i = 0; i < ndim; i++)
		if (shape[i] == 0)
			return zero_size(dev, dt, ndim, shape);
	if (!(c = tg_lazy_new_base_(TG_LZ_CONST, 0, dt, dev, 0, NULL, NULL, 0)))
		return NULL;
	c->value = tg_scalar_from_bits(tg_scalar_to_bits(v, dt), dt);
	if (!(c = tg_lazy_finish_(c)) || ndim == 0)
		return c;
	for (i = 0; i < ndim; i++)
		ones[i] = 1;
	r = tg_lazy_reshape(c, ndim, ones);
	e = tg_lazy_expand(r, ndim, shape);
	tg_lazy_unref(c);
	tg_lazy_unref(r);
	return e;
}

/* The same constant value as lb's base, in another shape. */
static tg_lazy *const_like(const tg_lazy *lb, tg_scalar v, size_t ndim,
                           const tg_sint *shape)
{
	int64_t s[TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < ndim; i++)
		s[i] = tg_dim_encode(shape[i]);
	return tg_lazy_const(lb->dev, lb->dtype, v, ndim, s);
}

tg_lazy *tg_lazy_from_buffer(tg_buffer *buf, size_t ndim,
                             const int64_t *shape)
{
	tg_sint s[TG_MAX_DIMS];
	int64_t n = 1;
	size_t i;
	tg_lazy *lb;

	if (!buf)
		return NULL;
	if (ndim > TG_MAX_DIMS)
		return tg_error(TG_EINVAL, "from_buffer: %zu dims (at most %d)",
		                ndim, TG_MAX_DIMS), NULL;
	for (i = 0; i < ndim && n >= 0; i++)  /* overflow: -1, refused */
		if (__builtin_mul_overflow(n, shape[i], &n))
			n = -1;
	if (n < 0 || (uint64_t)n != tg_buffer_count(buf)) {
		tg_error(TG_EINVAL, "from_buffer: shape of %lld elements over a "
		         "buffer of %zu", (long long)n, tg_buffer_count(buf));
		return NULL;
	}
	to_sints(ndim, shape, s);
	lb = tg_lazy_new_base_(TG_LZ_BUFFER, 0, tg_buffer_dtype(buf),
	              tg_buffer_dev(buf), ndim, s, NULL, 0);
	if (lb)
		lb->buf = tg_buffer_ref(buf);
	return lb ? tg_lazy_finish_(lb) : NULL;
}

tg_lazy *tg_lazy_empty(tg_dev *dev, tg_dtype dt, size_t ndim,
                       const int64_t *shape)
{
	int64_t n = 1;
	size_t i;
	tg_buffer *buf;
	tg_lazy *lb;

	if (ndim > TG_MAX_DIMS)
		return tg_error(TG_EINVAL, "empty: %zu dims (at most %d)", ndim,
		                TG_MAX_DIMS), NULL;
	if (dev && dev->ngroup)
		return tg_multi_empty(dev, dt, ndim, shape);
	for (i = 0; i < ndim; i++) {
		if (shape[i] < 0)
			return tg_error(TG_EINVAL, "empty: negative size %lld "
			                "on axis %zu", (long long)shape[i], i),
			       NULL;
		if (__builtin_mul_overflow(n, shape[i], &n))
			return tg_error(TG_EINVAL, "empty: more than %lld "
			                "elements (axis %zu)",
			                (long long)INT64_MAX, i), NULL;
	}
	if (!(buf = tg_buffer_new(dev, (size_t)(n ? n : 1), dt)))
		return NULL;
	if (n == 0) {
		tg_scalar z = { 0 };

		tg_buffer_unref(buf);
		return tg_lazy_const(dev, dt, z, ndim, shape);
	}
	lb = tg_lazy_from_buffer(buf, ndim, shape);
	tg_buffer_unref(buf);
	return lb;
}

int tg_lazy_is_unmasked_const(const tg_lazy *lb, tg_scalar *v)
{
	const tg_lazy *b = tg_lazy_base(lb);
	size_t i;

	if (b->kind != TG_LZ_CONST)
		return 0;
	for (i = 0; i < lb->st->nviews; i++)
		if (lb->st->views[i]->mask)
			return 0;
	if (v)
		*v = b->value;
	return 1;
}

/* ---------------------------------------------------------------- views */

static int mask_is_empty(const tg_view *v)
{
	size_t i;

	for (i = 0; v->mask && i < v->ndim; i++)
		if (tg_sint_eq(v->mask[2 * i], v->mask[2 * i + 1]))
			return 1;
	return 0;
}

/* A view of lb's base through st (taken).  tinygrad's _view. */
tg_lazy *tg_lazy_view_(const tg_lazy *lb, tg_st *st)
{
	tg_lazy *base = tg_lazy_base(lb), *v;
	const tg_view *last;

	if (!st)
		return NULL;
	last = st->views[st->nviews - 1];
	if (tg_st_size(lb->st) == 0 || tg_st_size(st) == 0 ||
	    mask_is_empty(last)) {
		tg_scalar z = { 0 };
		tg_lazy *c = const_like(lb, z, tg_st_ndim(st), tg_st_shape(st));

		tg_st_free(st);
		return c;
	}
	if (tg_st_contiguous(st) && tg_st_ndim(st) == tg_lazy_ndim(base) &&
	    tg_sints_eq(tg_st_shape(st), tg_lazy_shape(base),
	                tg_st_ndim(st))) {
		tg_st_free(st);
		return tg_lazy_ref(base);
	}
	if (!(v = lazy_alloc(TG_LZ_VIEW, base->dtype, base->dev, st)))
		return NULL;
	v->base = tg_lazy_ref(base);
	return tg_lazy_finish_(v);
}

/* The tracker ops that take int64 sizes (one per axis, or pairs). */
enum { MV_RESHAPE, MV_EXPAND, MV_PAD, MV_SHRINK };
static const char *const mv_name[] = { "reshape", "expand", "pad",
                                       "shrink" };

static tg_st *sized_op(int kind, tg_ir *ir, const tg_st *st, size_t n,
                       const tg_sint *s)
{
	switch (kind) {
	case MV_RESHAPE: return tg_st_reshape(ir, st, n, s);
	case MV_EXPAND: return tg_st_expand(ir, st, n, s);
	case MV_PAD: return tg_st_pad(ir, st, n, s);
	default: return tg_st_shrink(ir, st, n, s);
	}
}

static tg_lazy *move_sized(int kind, tg_lazy *a, size_t n,
                           const int64_t *v)
{
	size_t nv = kind >= MV_PAD ? 2 * n : n;  /* pads and shrinks: pairs */
	tg_sint s[2 * TG_MAX_DIMS];
	tg_st *st = NULL;

	if (!a)
		return NULL;
	if (n > TG_MAX_DIMS)
		return tg_error(TG_EINVAL, "%s: %zu dims (at most %d)",
		                mv_name[kind], n, TG_MAX_DIMS), NULL;
	if (tg_lazy_is_multi(a))
		return tg_multi_move(kind == MV_RESHAPE ? TG_MM_RESHAPE :
		                     kind == MV_EXPAND ? TG_MM_EXPAND :
		                     kind == MV_PAD ? TG_MM_PAD : TG_MM_SHRINK,
		                     a, n, v);
	if (tg_dims_decode(nv, v, s))
		return tg_error_prefix("%s", mv_name[kind]), NULL;
	WITH_SYMCTX(tg_st_is_sym(a->st) || tg_dims_sym(nv, v), ir,
	            st = sized_op(kind, ir, a->st, n, s));
	return tg_lazy_view_(a, st);
}

tg_lazy *tg_lazy_reshape(tg_lazy *a, size_t ndim, const int64_t *shape)
{
	return move_sized(MV_RESHAPE, a, ndim, shape);
}

tg_lazy *tg_lazy_expand(tg_lazy *a, size_t ndim, const int64_t *shape)
{
	return move_sized(MV_EXPAND, a, ndim, shape);
}

tg_lazy *tg_lazy_pad(tg_lazy *a, size_t n, const int64_t *pairs)
{
	return move_sized(MV_PAD, a, n, pairs);
}

tg_lazy *tg_lazy_shrink(tg_lazy *a, size_t n, const int64_t *pairs)
{
	return move_sized(MV_SHRINK, a, n, pairs);
}

tg_lazy *tg_lazy_permute(tg_lazy *a, size_t n, const uint32_t *axis)
{
	tg_st *st = NULL;

	if (!a)
		return NULL;
	if (tg_lazy_is_multi(a))
		return tg_multi_move(TG_MM_PERMUTE, a, n, axis);
	WITH_SYMCTX(tg_st_is_sym(a->st), ir,
	            st = tg_st_permute(ir, a->st, n, axis));
	return tg_lazy_view_(a, st);
}

tg_lazy *tg_lazy_stride(tg_lazy *a, size_t n, const int64_t *mul)
{
	tg_st *st = NULL;

	if (!a)
		return NULL;
	if (tg_lazy_is_multi(a))
		return tg_multi_move(TG_MM_STRIDE, a, n, mul);
	WITH_SYMCTX(tg_st_is_sym(a->st), ir,
	            st = tg_st_stride(ir, a->st, n, mul));
	return tg_lazy_view_(a, st);
}

tg_lazy *tg_lazy_as_strided(tg_lazy *a, size_t ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset)
{
	tg_st *st = NULL;

	if (!a)
		return NULL;
	if (tg_lazy_is_multi(a))
		return tg_error(TG_EUNSUPPORTED, "as_strided: a tensor on the "
		                "device group %s (sliding windows of a sharded "
		                "tensor are not supported; tg_to one device "
		                "first)", tg_dev_name(a->dev)), NULL;
	WITH_SYMCTX(tg_st_is_sym(a->st), ir,
	            st = tg_st_as_strided(ir, a->st, ndim, shape, strides,
	                                  offset));
	return tg_lazy_view_(a, st);
}

void tg_lazy_mark_realized(tg_lazy *b)
{
	tg_lazy *src[3];
	tg_st *ast;
	uint32_t i, n;

	pthread_mutex_lock(&lz_lock);
	hide(b);
	b->kind = TG_LZ_BUFFER;
	ast = b->assign_st;
	b->assign_st = NULL;
	n = b->nsrc;
	memcpy(src, b->src, sizeof src);
	memset(b->src, 0, sizeof b->src);
	b->nsrc = 0;
	b->op = 0;
	b->axes = 0;
	pthread_mutex_unlock(&lz_lock);
	tg_st_free(ast);
	for (i = 0; i < n; i++)
		tg_lazy_unref(src[i]);
}

/*
 * shapetracker.c - a stack of views (tinygrad's ShapeTracker): movement
 * ops on the last view, reshape that pushes a view when one view cannot
 * express it, and simplification by merging adjacent views.
 *
 * Trackers are values: every op returns a new tracker and leaves its
 * input alone, so lazy buffers can share one freely.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

/* A tracker with room for n views, none set: one allocation (trackers
 * are copied many times per schedule), the view pointers after it. */
static tg_st *st_alloc(size_t n, const char *op)
{
	tg_st *st = calloc(1, sizeof *st + (n ? n : 1) * sizeof *st->views);

	if (!st) {
		tg_error_oom(op);
		return NULL;
	}
	st->views = (tg_view **)(st + 1);
	st->nviews = n;
	return st;
}

void tg_st_free(tg_st *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->nviews; i++)
		tg_view_free(st->views[i]);
	free(st);  /* the view pointers share its allocation */
}

/* A tracker of views[0..n-1] (shared) with room for `extra` more, the
 * extra slots NULL and not counted.  NULL on OOM. */
static tg_st *st_copy_views(tg_view *const *views, size_t n, size_t extra)
{
	tg_st *st = st_alloc(n + extra, "shapetracker");
	size_t i;

	if (!st)
		return NULL;
	st->nviews = n;
	for (i = 0; i < n; i++)
		st->views[i] = tg_view_share(views[i]);
	return st;
}

tg_st *tg_st_from_views(tg_view *const *views, size_t n)
{
	if (!n) {
		tg_error(TG_EINVAL, "shapetracker: no views");
		return NULL;
	}
	return st_copy_views(views, n, 0);
}

tg_st *tg_st_copy(const tg_st *st)
{
	return st_copy_views(st->views, st->nviews, 0);
}

tg_st *tg_st_from_shape(tg_ir *ir, size_t ndim, const tg_sint *shape)
{
	tg_view *v;
	tg_st *st;

	if (tg_view_from_shape(ir, ndim, shape, &v))
		return NULL;
	if (!(st = st_alloc(1, "shapetracker"))) {
		tg_view_free(v);
		return NULL;
	}
	st->views[0] = v;
	return st;
}

/* st's first `keep` views copied, then v (taken over, freed on
 * failure).  NULL when v is NULL, which passes an op's error on. */
static tg_st *st_with(const tg_st *st, size_t keep, tg_view *v)
{
	tg_st *r;

	if (!v)
		return NULL;
	if (!(r = st_copy_views(st->views, keep, 1))) {
		tg_view_free(v);
		return NULL;
	}
	r->views[r->nviews++] = v;
	return r;
}

static const tg_view *last(const tg_st *st)
{
	return st->views[st->nviews - 1];
}

int tg_st_eq(const tg_st *a, const tg_st *b)
{
	size_t i;

	if (a->nviews != b->nviews)
		return 0;
	for (i = 0; i < a->nviews; i++)
		if (!tg_view_eq(a->views[i], b->views[i]))
			return 0;
	return 1;
}

int tg_st_contiguous(const tg_st *st)
{
	return st->nviews == 1 && st->views[0]->contiguous;
}

/* Row-major with any offset: a slice of a buffer that can be copied in
 * one piece. */
int tg_st_consecutive(const tg_st *st)
{
	tg_sint rm[TG_MAX_DIMS];
	const tg_view *v = st->views[0];

	if (st->nviews != 1 || v->mask)
		return 0;
	tg_strides_for_shape(NULL, v->ndim, v->shape, rm);
	return tg_sints_eq(rm, v->strides, v->ndim);
}

int64_t tg_st_size(const tg_st *st)
{
	return tg_view_size(last(st));
}

char *tg_st_format(const tg_st *st)
{
	tg_strbuf sb;
	char *s;
	size_t i;

	tg_strbuf_init(&sb);
	tg_strbuf_add(&sb, "ShapeTracker(views=(");
	for (i = 0; i < st->nviews; i++) {
		if (!(s = tg_view_format(st->views[i]))) {
			tg_strbuf_release(&sb);
			return NULL;
		}
		tg_strbuf_addf(&sb, "%s%s", i ? ", " : "", s);
		free(s);
	}
	tg_strbuf_add(&sb, st->nviews == 1 ? ",))" : "))");
	if (!(s = tg_strbuf_finish(&sb)))
		tg_error_oom("shapetracker format");
	return s;
}

/* The movement ops replace the last view; a failed op left v NULL. */
static tg_st *on_last(const tg_st *st, int rc, tg_view *v)
{
	return rc ? NULL : st_with(st, st->nviews - 1, v);
}

tg_st *tg_st_pad(tg_ir *ir, const tg_st *st, size_t n, const tg_sint *arg)
{
	tg_view *v;
	int rc = tg_view_pad(ir, last(st), n, arg, &v);

	return on_last(st, rc, v);
}

tg_st *tg_st_shrink(tg_ir *ir, const tg_st *st, size_t n,
                    const tg_sint *arg)
{
	tg_view *v;
	int rc = tg_view_shrink(ir, last(st), n, arg, &v);

	return on_last(st, rc, v);
}

tg_st *tg_st_expand(tg_ir *ir, const tg_st *st, size_t ndim,
                    const tg_sint *shape)
{
	tg_view *v;
	int rc = tg_view_expand(ir, last(st), ndim, shape, &v);

	return on_last(st, rc, v);
}

tg_st *tg_st_permute(tg_ir *ir, const tg_st *st, size_t n,
                     const uint32_t *axis)
{
	tg_view *v;
	int rc = tg_view_permute(ir, last(st), n, axis, &v);

	return on_last(st, rc, v);
}

tg_st *tg_st_stride(tg_ir *ir, const tg_st *st, size_t n,
                    const int64_t *mul)
{
	tg_view *v;
	int rc = tg_view_stride(ir, last(st), n, mul, &v);

	return on_last(st, rc, v);
}

/* A flip is a stride of -1; checked here to name "flip" in errors. */
tg_st *tg_st_flip(tg_ir *ir, const tg_st *st, size_t n,
                  const uint8_t *flip)
{
	int64_t mul[TG_MAX_DIMS];
	size_t i;

	if (n != tg_st_ndim(st)) {
		tg_error(TG_EINVAL, "flip: %zu flags for %zu dims", n,
		         tg_st_ndim(st));
		return NULL;
	}
	for (i = 0; i < n; i++)
		mul[i] = flip[i] ? -1 : 1;
	return tg_st_stride(ir, st, n, mul);
}

/* Tries the last view first (tinygrad's MERGE_VIEW); a new contiguous
 * view over the old one's output always works. */
tg_st *tg_st_reshape(tg_ir *ir, const tg_st *st, size_t ndim,
                     const tg_sint *shape)
{
	tg_view *v;

	if (tg_view_reshape(ir, last(st), ndim, shape, &v))
		return NULL;
	if (v)
		return st_with(st, st->nviews - 1, v);
	if (tg_view_make(ir, "reshape", ndim, shape, NULL, tg_si(0), NULL, &v))
		return NULL;
	return st_with(st, st->nviews, v);
}

/* Merges st's last two views while they merge; st is ours to edit. */
static int simplify_in_place(tg_ir *ir, tg_st *st)
{
	tg_view *m;
	int rc;

	while (st->nviews >= 2) {
		rc = tg_view_merge(ir, st->views[st->nviews - 2],
		                   st->views[st->nviews - 1], &m);
		if (rc || !m)
			return rc;
		tg_view_free(st->views[--st->nviews]);
		tg_view_free(st->views[st->nviews - 1]);
		st->views[st->nviews - 1] = m;
	}
	return 0;
}

/* The lowest and highest flat index a mask-less view reads ([0, -1]
 * when it reads nothing); -1 on overflow. */
static int reach(size_t ndim, const int64_t *shape, const int64_t *strides,
                 int64_t offset, int64_t *lo, int64_t *hi)
{
	*lo = *hi = offset;
	for (size_t i = 0; i < ndim; i++) {
		int64_t e;

		if (!shape[i]) {
			*lo = 0, *hi = -1;
			return 0;
		}
		if (__builtin_mul_overflow(shape[i] - 1, strides[i], &e) ||
		    __builtin_add_overflow(e < 0 ? *lo : *hi, e,
		                           e < 0 ? lo : hi))
			return -1;
	}
	return 0;
}

/* A new view over st's shape read as row-major: tinygrad has no such
 * movement op; it is how a sliding window (the input of a convolution)
 * and the window of its gradient are one view instead of a repeat with
 * reshapes, so their index math has no division. */
tg_st *tg_st_as_strided(tg_ir *ir, const tg_st *st, size_t ndim,
                        const int64_t *shape, const int64_t *strides,
                        int64_t offset)
{
	tg_sint sh[TG_MAX_DIMS], sd[TG_MAX_DIMS];
	int64_t lo = 0, hi = 0, n = tg_st_size(st);
	tg_view *v;
	tg_st *r;

	if (ndim > TG_MAX_DIMS)
		return tg_error(TG_EINVAL, "as_strided: %zu dims (at most %d)",
		                ndim, TG_MAX_DIMS), NULL;
	for (size_t i = 0; i < ndim; i++) {
		if (shape[i] < 0)
			return tg_error(TG_EINVAL, "as_strided: axis %zu has "
			                "size %lld", i, (long long)shape[i]), NULL;
		sh[i] = tg_si(shape[i]);
		sd[i] = tg_si(strides[i]);
	}
	if (tg_st_is_sym(st) || n < 0 ||
	    reach(ndim, shape, strides, offset, &lo, &hi) ||
	    (lo < 0 || hi >= n))
		return tg_error(TG_EINVAL, "as_strided: the view reads [%lld, "
		                "%lld] of %lld elements", (long long)lo,
		                (long long)hi, (long long)n), NULL;
	if (tg_view_make(ir, "as_strided", ndim, sh, sd, tg_si(offset), NULL,
	                 &v))
		return NULL;
	if (!(r = st_with(st, st->nviews, v)))
		return NULL;
	if (simplify_in_place(ir, r)) {
		tg_st_free(r);
		return NULL;
	}
	return r;
}

/* Fewer views mean shorter index math in every kernel that reads st. */
tg_st *tg_st_simplify(tg_ir *ir, const tg_st *st)
{
	tg_st *r = tg_st_copy(st);

	if (r && simplify_in_place(ir, r)) {
		tg_st_free(r);
		return NULL;
	}
	return r;
}

/* Pushing one view at a time lets each merge see the smallest pair. */
tg_st *tg_st_concat(tg_ir *ir, const tg_st *a, const tg_st *b)
{
	tg_st *r = st_copy_views(a->views, a->nviews, b->nviews);
	size_t i;

	for (i = 0; r && i < b->nviews; i++) {
		r->views[r->nviews++] = tg_view_share(b->views[i]);
		if (simplify_in_place(ir, r)) {
			tg_st_free(r);
			return NULL;
		}
	}
	return r;
}

/* Inverts each view, last first, against the shape of the view before
 * it (out_shape for the first); 1 when some view is not invertible. */
static int invert_views(tg_ir *ir, const tg_st *st, size_t ndim,
                        const tg_sint *out_shape, tg_st *inv)
{
	size_t k, n = st->nviews;
	int rc;

	for (k = 0; k < n; k++) {
		const tg_view *v = st->views[n - 1 - k];
		const tg_view *prev = k + 1 < n ? st->views[n - 2 - k] : NULL;

		rc = tg_view_invert(ir, v, prev ? prev->ndim : ndim,
		                    prev ? prev->shape : out_shape,
		                    &inv->views[k]);
		if (rc)
			return rc;
		if (!inv->views[k])
			return 1;
	}
	return 0;
}

/* The inverted views in reverse order, then reshaped to out_shape (the
 * inverses' shapes are the views' own, not out_shape). */
int tg_st_invert(tg_ir *ir, const tg_st *st, size_t ndim,
                 const tg_sint *out_shape, tg_st **out)
{
	tg_st *inv = st_alloc(st->nviews, "invert");
	int rc;

	*out = NULL;
	if (!inv)
		return TG_ENOMEM;
	rc = invert_views(ir, st, ndim, out_shape, inv);
	if (!rc && !(*out = tg_st_reshape(ir, inv, ndim, out_shape)))
		rc = tg_last_status();
	tg_st_free(inv);
	return rc > 0 ? 0 : rc;
}

/* ------------------------------------------------- trackers as nodes */

tg_uop *tg_st_uop(tg_ir *ir, const tg_st *st)
{
	tg_uop **src = malloc(st->nviews * sizeof *src), *u;

	if (!src)
		return tg_ir_fail(ir, TG_ENOMEM, "st_uop: out of memory");
	for (size_t i = 0; i < st->nviews; i++)
		src[i] = tg_view_uop(ir, st->views[i]);
	u = tg_uop_new(ir, TG_SHAPETRACKER, TG_VOID, src, st->nviews, NULL);
	free(src);
	return u;
}

tg_st *tg_st_of_uop(const tg_uop *u)
{
	tg_st *st;

	if (u->op != TG_SHAPETRACKER || u->nsrc == 0) {
		tg_error(TG_EINVAL, "st_of_uop: %%%u is a %s, not a "
		         "SHAPETRACKER of views", (unsigned)u->id,
		         tg_op_name(u->op));
		return NULL;
	}
	if (!(st = st_alloc(u->nsrc, "st_of_uop")))
		return NULL;
	for (size_t i = 0; i < u->nsrc; i++)
		if (tg_view_of_uop(u->src[i], &st->views[i])) {
			tg_st_free(st);
			return NULL;
		}
	return st;
}

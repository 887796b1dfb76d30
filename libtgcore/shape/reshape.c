/*
 * reshape.c - reshaping one view without a copy (tinygrad's
 * View.reshape, _merge_dims, _reshape_mask) and minify.
 *
 * The idea: merge runs of axes that walk memory as one axis (contiguous
 * runs, or runs of stride 0), then split each merged axis again into the
 * new sizes.  A new size that straddles two merged axes cannot be
 * expressed by one stride, and the reshape needs a second view.  A mask
 * survives only when it stays a box in the new shape.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

/* A merged run of axes: its size, the stride of its last axis, and its
 * size without the stride-0 (expanded) axes, 0 when all are. */
struct mdim {
	tg_sint size, stride, real;
};

/* Whether axis i has one valid index: such an axis merges into the
 * next whatever its stride, since it never moves. */
static int mask_is_one(tg_ir *ir, const tg_view *v, size_t i)
{
	if (!v->mask)
		return tg_sint_is(v->shape[i], 1);
	return tg_sint_is(tg_sint_sub(ir, v->mask[2 * i + 1], v->mask[2 * i]),
	                  1);
}

/* Runs of v's axes that index like one axis.  An axis with one valid
 * index merges into the next, whatever its stride. */
static size_t merge_dims(tg_ir *ir, const tg_view *v, struct mdim *out)
{
	size_t i, n = 1;
	int merging;

	if (!v->ndim)
		return 0;
	out[0].size = v->shape[0];
	out[0].stride = v->strides[0];
	out[0].real = tg_sint_is(v->strides[0], 0) ? tg_si(0) : v->shape[0];
	merging = mask_is_one(ir, v, 0);
	for (i = 1; i < v->ndim; i++) {
		tg_sint s = v->shape[i], st = v->strides[i];
		struct mdim *last = &out[n - 1];
		int zero = tg_sint_is(st, 0);

		if (tg_sint_is(s, 1))
			continue;
		if (merging ||
		    tg_sint_eq(last->stride, tg_sint_mul(ir, s, st))) {
			last->real = zero ? tg_si(0) : merging ? s
			             : tg_sint_mul(ir, last->real, s);
			last->size = tg_sint_mul(ir, last->size, s);
			last->stride = st;
		} else {
			out[n].size = s;
			out[n].stride = st;
			out[n++].real = zero ? tg_si(0) : s;
		}
		merging = mask_is_one(ir, v, i);
	}
	return n;
}

/* Reverse walks over a shape and its mask, yielding 1 and [0, 1) past
 * the front, as tinygrad's next(reversed(...), default) does. */
struct rwalk {
	const tg_sint *shape, *mask;
	size_t left, mleft;
};

/* The next axis size from the end (1 past the front). */
static int64_t next_dim(struct rwalk *w)
{
	return w->left ? w->shape[--w->left].c : 1;
}

/* The next mask pair from the end ([0, 1) past the front). */
static void next_mask(struct rwalk *w, int64_t m[2])
{
	if (!w->mleft) {
		m[0] = 0;
		m[1] = 1;
		return;
	}
	w->mleft--;
	m[0] = w->mask[2 * w->mleft].c;
	m[1] = w->mask[2 * w->mleft + 1].c;
}

/* The state of carrying a mask to a new shape, both walked from the
 * last axis: `cur` is the stride inside the old extent `od` where new
 * axis `nd` starts, and m the old mask over `od`. */
struct carry {
	struct rwalk o, n;
	int64_t cur, od, nd, m[2];
};

/* New axis nd covers what is left of od: copy the mask over. */
static void carry_whole(struct carry *c, tg_sint *out)
{
	out[0] = tg_si(c->m[0] / c->cur);
	out[1] = tg_si((c->m[1] - 1) / c->cur + 1);
	c->cur = 1;
	c->od = next_dim(&c->o);
	c->nd = next_dim(&c->n);
	next_mask(&c->o, c->m);
}

/* New axis nd splits od: fine unless the mask cuts across it. */
static int carry_split(struct carry *c, int64_t ns, tg_sint *out)
{
	int64_t b = c->m[0], e = c->m[1];

	if (((b % ns || e % ns) && b / ns != (e - 1) / ns) || c->od % ns)
		return 0;
	out[0] = tg_si(b % ns / c->cur);
	out[1] = tg_si((e - 1) % ns / c->cur + 1);
	c->cur = ns;
	c->nd = next_dim(&c->n);
	return 1;
}

/* New axis nd spans more than od: fold in the next old axis, which only
 * works when od is fully valid or the next axis has one valid index. */
static int carry_combine(struct carry *c)
{
	int64_t nm[2];

	if (!c->o.left)
		return 0;  /* the sizes disagree; reshape checked them */
	next_mask(&c->o, nm);
	if ((c->m[0] != 0 || c->m[1] != c->od) && nm[1] - nm[0] != 1)
		return 0;
	c->m[0] += nm[0] * c->od;
	c->m[1] += (nm[1] - 1) * c->od;
	c->od *= next_dim(&c->o);
	return 1;
}

/* The box mask of an integer view carried to the new shape; 1 when it
 * stays a box, 0 when it does not, -1 when nothing is valid. */
static int split_mask(const tg_view *v, size_t ndim, const tg_sint *shape,
                      tg_sint *out)
{
	struct carry c = { { v->shape, v->mask, v->ndim, v->ndim },
	                   { shape, NULL, ndim, 0 }, 1, 0, 0, { 0, 0 } };
	size_t k = ndim;
	int64_t ns;

	c.od = next_dim(&c.o);
	c.nd = next_dim(&c.n);
	next_mask(&c.o, c.m);
	while (k > 0) {
		ns = c.nd * c.cur;
		if (c.od == ns)
			carry_whole(&c, out + 2 * --k);
		else if (c.od > ns ? !carry_split(&c, ns, out + 2 * --k)
		                   : !carry_combine(&c))
			return 0;
	}
	while (c.o.mleft) {  /* leading old axes of size 1 must be valid */
		next_mask(&c.o, c.m);
		if (c.m[0] != 0 || c.m[1] != 1)
			return -1;
	}
	return 1;
}

/* The new mask in out[2*ndim] (a full one when v has none); 0 when the
 * reshape cannot keep the mask. */
static int reshape_mask(const tg_view *v, size_t ndim, const tg_sint *shape,
                        tg_sint *out)
{
	size_t i;
	int r;

	for (i = 0; !v->mask && i < ndim; i++) {
		out[2 * i] = tg_si(0);
		out[2 * i + 1] = shape[i];
	}
	if (!v->mask)
		return 1;
	if (!tg_sints_all_int(v->mask, 2 * v->ndim) ||
	    !tg_sints_all_int(v->shape, v->ndim) ||
	    !tg_sints_all_int(shape, ndim))
		return 0;
	for (i = 0; i < v->ndim; i++)
		if (v->mask[2 * i + 1].c - v->mask[2 * i].c < 1)
			break;
	r = i < v->ndim ? -1 : split_mask(v, ndim, shape, out);
	for (i = 0; r < 0 && i < 2 * ndim; i++)
		out[i] = tg_si(0);  /* nothing valid before, nothing after */
	return r != 0;
}

/* Bounds-decided comparisons, true unless the bounds rule them out. */
static int maybe_le(tg_ir *ir, tg_sint a, tg_sint b)
{
	return tg_sint_vmin(tg_sint_sub(ir, a, b)) <= 0;
}

static int maybe_lt(tg_ir *ir, tg_sint a, tg_sint b)
{
	return tg_sint_vmin(tg_sint_sub(ir, a, b)) < 0;
}

/* Splits each merged run of v into the new sizes, last axis first, into
 * rs[] (reversed strides).  0 when a new size straddles two runs. */
static int split_strides(tg_ir *ir, const tg_view *v, size_t ndim,
                         const tg_sint *shape, tg_sint *rs)
{
	struct mdim d[TG_MAX_DIMS];
	size_t nd = merge_dims(ir, v, d), k = 0, j = ndim, i;

	for (i = nd; i-- > 0;) {
		tg_sint acc = tg_si(1), st = d[i].stride;

		while (maybe_le(ir, acc, d[i].size) &&
		       !tg_sint_eq(acc, d[i].size) && j > 0 &&
		       !tg_sint_is(shape[j - 1], 0)) {
			tg_sint s = shape[--j];

			rs[k++] = st;
			if (tg_sint_is(s, 1))
				continue;
			acc = tg_sint_mul(ir, acc, s);
			/* past the expanded part the stride no longer moves */
			st = tg_sint_mul(ir, st, maybe_lt(ir, acc, d[i].real)
			               ? s : tg_si(0));
		}
		if (!tg_sint_eq(acc, d[i].size))
			return 0;
	}
	while (k < ndim)
		rs[k++] = tg_si(0);
	return 1;
}

/* The reshape that keeps v one view, or 0 with *out NULL. */
static int restride(tg_ir *ir, const tg_view *v, size_t ndim,
                    const tg_sint *shape, tg_view **out)
{
	tg_sint rs[TG_MAX_DIMS], st[TG_MAX_DIMS], mask[2 * TG_MAX_DIMS];
	tg_sint off = v->offset;
	size_t i;

	if (!split_strides(ir, v, ndim, shape, rs) ||
	    !reshape_mask(v, ndim, shape, mask))
		return 0;
	for (i = 0; i < ndim; i++) {
		tg_sint ext = tg_sint_sub(ir, mask[2 * i + 1], mask[2 * i]);

		st[i] = tg_sint_is(ext, 1) ? tg_si(0) : rs[ndim - 1 - i];
		off = tg_sint_sub(ir, off, tg_sint_mul(ir, mask[2 * i], st[i]));
	}
	for (i = 0; v->mask && i < v->ndim; i++)
		off = tg_sint_add(ir, off, tg_sint_mul(ir, v->mask[2 * i],
		                                   v->strides[i]));
	return tg_view_make(ir, "reshape", ndim, shape, st, off, mask, out);
}

/* The value of u with every bound variable at its bound value; TG_EINVAL
 * when u has an unbound variable, TG_ENOMEM. */
static int bound_value(const tg_uop *u, int64_t *out)
{
	TG_VEC(const tg_uop *) vars = { 0 };
	TG_VEC(int64_t) vals = { 0 };
	size_t n, i;
	tg_uop **all = tg_uop_toposort(u, &n);
	int rc = all ? 0 : tg_error_oom("reshape");

	for (i = 0; !rc && i < n; i++) {
		if (all[i]->op != TG_BIND)
			continue;
		if (TG_VEC_PUSH(&vars, all[i]->src[0]) ||
		    TG_VEC_PUSH(&vals, all[i]->src[1]->arg.v.i))
			rc = tg_error_oom("reshape");
	}
	if (!rc)
		rc = tg_sym_eval(u, vars.v, vals.v, vars.n, out);
	free(all);
	TG_VEC_FREE(&vars);
	TG_VEC_FREE(&vals);
	return rc;
}

/* The element count of shape with bound variables at their values;
 * symbolic sizes must be bound variables. */
static int bound_size(const tg_sint *shape, size_t ndim, int64_t *out)
{
	char buf[128];
	int64_t n = 1, val;
	size_t i;
	int rc;

	for (i = 0; i < ndim; i++) {
		const tg_uop *u = shape[i].u;

		val = shape[i].c;
		rc = !u ? 0 : u->op == TG_BIND ? bound_value(u, &val)
		                               : TG_EINVAL;
		if (rc == TG_ENOMEM)
			return rc;
		if (rc)
			break;
		n *= val;  /* at most the maximum, which cannot overflow */
	}
	if (i < ndim)
		return tg_error(TG_EINVAL, "reshape: size %s is not a bound "
		                "variable",
		                tg_sint_format(shape[i], buf, sizeof buf));
	*out = n;
	return 0;
}

/* "reshape: cannot reshape (3,4) to (5,): 12 elements vs 5". */
static int size_error(const tg_view *v, size_t ndim, const tg_sint *shape,
                      int64_t from, int64_t to)
{
	char b1[512], b2[512];

	return tg_error(TG_EINVAL, "reshape: cannot reshape %s to %s: %lld "
	                "elements vs %lld",
	                tg_sints_format(v->shape, v->ndim, b1, sizeof b1),
	                tg_sints_format(shape, ndim, b2, sizeof b2),
	                (long long)from, (long long)to);
}

/* An integer view takes a symbolic shape only axis for axis, each size
 * equal to the bound value; the strides stay as they are. */
static int symbolic_reshape(const tg_view *v, size_t ndim,
                            const tg_sint *shape, tg_view **out)
{
	char b1[512], b2[512];
	int64_t val;
	size_t i;
	int rc;

	for (i = 0; ndim == v->ndim && i < ndim; i++) {
		val = shape[i].c;
		rc = shape[i].u ? bound_value(shape[i].u, &val) : 0;
		if (rc == TG_ENOMEM)
			return rc;
		if (rc || val != v->shape[i].c)
			break;
	}
	if (ndim != v->ndim || i < ndim)
		return tg_error(TG_EINVAL, "reshape: cannot reshape "
		                "non-contiguous %s to symbolic %s",
		                tg_sints_format(v->shape, v->ndim, b1,
		                                sizeof b1),
		                tg_sints_format(shape, ndim, b2, sizeof b2));
	if ((rc = tg_view_copy(v, out)))
		return rc;
	memcpy((*out)->shape, shape, ndim * sizeof *shape);
	return 0;
}

/* Elements of shape with symbolic axes at their maximum. */
static int64_t max_size(const tg_sint *shape, size_t ndim)
{
	int64_t n = 1;
	size_t i;

	for (i = 0; i < ndim; i++)
		n *= tg_sint_vmax(shape[i]);  /* tg_shape_check bounded it */
	return n;
}

/* The size checks; 1 when the result is decided (*out, or an error in
 * *rc), 0 to go on. */
static int reshape_checks(tg_ir *ir, const tg_view *v, size_t ndim,
                          const tg_sint *shape, tg_view **out, int *rc)
{
	int64_t to = 0;

	if ((*rc = tg_shape_check("reshape", ndim, shape)))
		return 1;
	if (tg_sints_has(v->shape, v->ndim, 0)) {
		*rc = tg_sints_has(shape, ndim, 0)
		      ? tg_view_from_shape(ir, ndim, shape, out)
		      : size_error(v, ndim, shape, 0, max_size(shape, ndim));
		return 1;
	}
	if (!tg_sints_all_int(v->shape, v->ndim))
		return 0;
	if ((*rc = bound_size(shape, ndim, &to)))
		return 1;
	if (tg_view_size(v) != to)
		*rc = size_error(v, ndim, shape, tg_view_size(v), to);
	return *rc != 0;
}

/* Whether some axis of the mask is empty. */
static int mask_empty(const tg_view *v)
{
	size_t i;

	for (i = 0; v->mask && i < v->ndim; i++)
		if (tg_sint_eq(v->mask[2 * i], v->mask[2 * i + 1]))
			return 1;
	return 0;
}

/* tinygrad's order: same shape, checks, empty views, an empty mask to
 * (), contiguous views (any shape is one view), integer to symbolic
 * shapes (axis for axis only), and then restriding. */
int tg_view_reshape(tg_ir *ir, const tg_view *v, size_t ndim,
                    const tg_sint *shape, tg_view **out)
{
	int rc;

	*out = NULL;
	if (ndim == v->ndim && tg_sints_eq(v->shape, shape, ndim))
		return tg_view_copy(v, out);
	if (reshape_checks(ir, v, ndim, shape, out, &rc))
		return rc;
	if (!ndim && mask_empty(v))
		return 0;
	if (v->contiguous)
		return tg_view_from_shape(ir, ndim, shape, out);
	if (tg_sints_all_int(v->shape, v->ndim) &&
	    !tg_sints_all_int(shape, ndim))
		return symbolic_reshape(v, ndim, shape, out);
	return restride(ir, v, ndim, shape, out);
}

/* Reshapes to the merged runs; a mask that does not survive the merge
 * keeps v as it is. */
int tg_view_minify(tg_ir *ir, const tg_view *v, tg_view **out)
{
	struct mdim d[TG_MAX_DIMS];
	tg_sint shape[TG_MAX_DIMS];
	size_t n = merge_dims(ir, v, d), i;
	int rc;

	for (i = 0; i < n; i++)
		shape[i] = d[i].size;
	if ((rc = tg_view_reshape(ir, v, n, shape, out)) || *out)
		return rc;
	return tg_view_copy(v, out);
}

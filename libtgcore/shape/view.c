/*
 * view.c - one view: canonical construction and the movement ops that
 * edit a single view in place of copying data (tinygrad's View.create,
 * pad, shrink, expand, permute, stride), plus its index expression.
 *
 * Symbolic entries follow tinygrad's truthiness: a comparison whose
 * bounds cannot decide it counts as true, so a symbolic shape only takes
 * a special path (a dropped mask, a zeroed stride) when its bounds prove
 * the path right.
 */
#include "config.h"

#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

/* The struct and its arrays in one block, so a view is one free(). */
static tg_view *view_alloc(size_t ndim)
{
	size_t n = ndim ? ndim : 1;
	tg_view *v = malloc(sizeof *v + 4 * n * sizeof(tg_sint));

	if (!v)
		return NULL;
	v->ndim = (uint32_t)ndim;
	v->contiguous = 0;
	atomic_init(&v->refs, 1);
	v->offset = tg_si(0);
	v->shape = (tg_sint *)(v + 1);
	v->strides = v->shape + n;
	v->mask = v->strides + n;
	return v;
}

static int known_zero(tg_sint s) { return tg_sint_is(s, 0); }

/* The sticky status of ir after symbolic math (0 without a context). */
static int ir_status(tg_ir *ir)
{
	return ir ? tg_ir_status(ir) : 0;
}

/* Python's tuple text, so messages read like tinygrad's. */
const char *tg_sints_format(const tg_sint *v, size_t n, char *buf,
                            size_t len)
{
	size_t used = 0;
	char one[128];
	size_t i;

	if (!len)
		return buf;
	used += (size_t)snprintf(buf, len, "(");
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		                         i ? "," : "",
		                         tg_sint_format(v[i], one, sizeof one));
	if (used < len)
		snprintf(buf + used, len - used, n == 1 ? ",)" : ")");
	return buf;
}

static void add_sints(tg_strbuf *sb, const tg_sint *v, size_t n)
{
	char buf[1024];

	tg_strbuf_add(sb, tg_sints_format(v, n, buf, sizeof buf));
}

char *tg_view_format(const tg_view *v)
{
	tg_strbuf sb;
	char *s;
	char buf[128];
	size_t i;

	tg_strbuf_init(&sb);
	tg_strbuf_add(&sb, "View(shape=");
	add_sints(&sb, v->shape, v->ndim);
	tg_strbuf_add(&sb, ", strides=");
	add_sints(&sb, v->strides, v->ndim);
	tg_strbuf_addf(&sb, ", offset=%s, mask=",
	               tg_sint_format(v->offset, buf, sizeof buf));
	if (!v->mask)
		tg_strbuf_add(&sb, "None");
	for (i = 0; v->mask && i < v->ndim; i++) {
		tg_strbuf_add(&sb, i ? "," : "(");
		add_sints(&sb, v->mask + 2 * i, 2);
	}
	if (v->mask)
		tg_strbuf_add(&sb, v->ndim == 1 ? ",)" : v->ndim ? ")" : "()");
	tg_strbuf_addf(&sb, ", contiguous=%d)", v->contiguous);
	if (!(s = tg_strbuf_finish(&sb)))
		tg_error_oom("view format");
	return s;
}

/* Row-major strides of shape, 0 on size-1 axes. */
void tg_strides_for_shape(tg_ir *ir, size_t ndim, const tg_sint *shape,
                          tg_sint *out)
{
	tg_sint acc = tg_si(1);
	size_t i;

	for (i = ndim; i-- > 0;) {
		out[i] = tg_sint_is(shape[i], 1) ? tg_si(0) : acc;
		acc = tg_sint_mul(ir, acc, shape[i]);
	}
}

/* Axes whose mask leaves at most one index read one element: stride 0,
 * with the offset moved to that element.  An empty axis empties the
 * whole view: zero strides, offset 0, all-empty mask. */
static void fold_single_masks(tg_ir *ir, tg_view *v)
{
	int elim[TG_MAX_DIMS], any = 0, empty = 0;
	tg_sint *m = v->mask, moved;
	size_t i;

	for (i = 0; i < v->ndim; i++) {
		tg_sint len = tg_sint_sub(ir, m[2 * i + 1], m[2 * i]);
		int64_t most = tg_sint_vmax(len);

		elim[i] = most <= 1;
		empty |= most <= 0;
		any |= elim[i];
	}
	if (!any)
		return;
	for (i = 0; empty && i < v->ndim; i++) {
		v->strides[i] = tg_si(0);
		m[2 * i] = m[2 * i + 1] = tg_si(0);
	}
	if (empty)
		v->offset = tg_si(0);
	for (i = 0; i < v->ndim; i++) {
		if (!elim[i])
			continue;
		moved = tg_sint_mul(ir, v->strides[i], m[2 * i]);
		v->offset = tg_sint_add(ir, v->offset, moved);
		v->strides[i] = tg_si(0);
	}
}

static int mask_is_full(const tg_sint *mask, const tg_sint *shape,
                        size_t ndim)
{
	size_t i;

	for (i = 0; i < ndim; i++)
		if (!tg_sint_is(mask[2 * i], 0) ||
		    !tg_sint_eq(mask[2 * i + 1], shape[i]))
			return 0;
	return 1;
}

/* Contiguous means the plain row-major read of the whole buffer: the
 * fast paths (merging, realizing without a copy) test only this flag. */
static void set_contiguous(tg_ir *ir, tg_view *v)
{
	tg_sint rm[TG_MAX_DIMS];

	tg_strides_for_shape(ir, v->ndim, v->shape, rm);
	v->contiguous = tg_sint_is(v->offset, 0) && !v->mask &&
	                tg_sints_eq(v->strides, rm, v->ndim);
}

/* View.create on a filled-in view (mask NULL or 2*ndim entries). */
static void canonicalize(tg_ir *ir, tg_view *v, int given_strides)
{
	size_t i;

	if (!given_strides || !v->ndim)
		tg_strides_for_shape(ir, v->ndim, v->shape, v->strides);
	for (i = 0; i < v->ndim; i++)
		if (tg_sint_is(v->shape[i], 1))
			v->strides[i] = tg_si(0);
	if (tg_sints_has(v->shape, v->ndim, 0)) {
		for (i = 0; i < v->ndim; i++)
			v->strides[i] = tg_si(0);
		v->offset = tg_si(0);
		v->mask = NULL;
		v->contiguous = 1;  /* nothing to read: any layout will do */
		return;
	}
	if (v->mask && mask_is_full(v->mask, v->shape, v->ndim))
		v->mask = NULL;
	if (v->mask)
		fold_single_masks(ir, v);
	set_contiguous(ir, v);
}

/* Refuses what no view can hold: too many dims, negative sizes, element
 * counts past int64. */
int tg_shape_check(const char *op, size_t ndim, const tg_sint *shape)
{
	int negative = 0, overflow = 0;
	char buf[512];
	int64_t n = 1;
	size_t i;

	if (ndim > TG_MAX_DIMS)
		return tg_error(TG_EINVAL, "%s: %zu dims, at most %d", op,
		                ndim, TG_MAX_DIMS);
	for (i = 0; i < ndim && !negative && !overflow; i++) {
		negative = tg_sint_vmin(shape[i]) < 0;
		overflow = __builtin_mul_overflow(n, tg_sint_vmax(shape[i]),
		                                  &n);
	}
	if (!negative && !overflow)
		return 0;
	tg_sints_format(shape, ndim, buf, sizeof buf);
	if (negative)
		return tg_error(TG_EINVAL, "%s: negative size in %s", op, buf);
	return tg_error(TG_EINVAL, "%s: %s has too many elements", op, buf);
}

/* tg_view_new for the ops: `op` names the caller in messages. */
int tg_view_make(tg_ir *ir, const char *op, size_t ndim,
                 const tg_sint *shape, const tg_sint *strides,
                 tg_sint offset, const tg_sint *mask, tg_view **out)
{
	tg_view *v;
	int rc;

	*out = NULL;
	if ((rc = tg_shape_check(op, ndim, shape)))
		return rc;
	if (!(v = view_alloc(ndim)))
		return tg_error_oom(op);
	if (ndim) /* a 0-dim shape may be NULL */
		memcpy(v->shape, shape, ndim * sizeof *shape);
	if (strides)
		memcpy(v->strides, strides, ndim * sizeof *strides);
	if (mask)
		memcpy(v->mask, mask, 2 * ndim * sizeof *mask);
	else
		v->mask = NULL;
	v->offset = offset;
	canonicalize(ir, v, strides != NULL);
	if ((rc = ir_status(ir))) {
		free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int tg_view_new(tg_ir *ir, size_t ndim, const tg_sint *shape,
                const tg_sint *strides, tg_sint offset,
                const tg_sint *mask, tg_view **out)
{
	return tg_view_make(ir, "view", ndim, shape, strides, offset, mask,
	                    out);
}

int tg_view_from_shape(tg_ir *ir, size_t ndim, const tg_sint *shape,
                       tg_view **out)
{
	return tg_view_new(ir, ndim, shape, NULL, tg_si(0), NULL, out);
}

void tg_view_free(tg_view *v)
{
	if (v && atomic_fetch_sub(&v->refs, 1) == 1)
		free(v);
}

tg_view *tg_view_share(const tg_view *v)
{
	tg_view *m = (tg_view *)v;  /* only the count changes */

	atomic_fetch_add(&m->refs, 1);
	return m;
}

/* A plain copy: v is canonical already, so no create rules rerun. */
int tg_view_copy(const tg_view *v, tg_view **out)
{
	tg_view *c = view_alloc(v->ndim);

	*out = NULL;
	if (!c)
		return tg_error_oom("view copy");
	memcpy(c->shape, v->shape, v->ndim * sizeof(tg_sint));
	memcpy(c->strides, v->strides, v->ndim * sizeof(tg_sint));
	if (v->mask)
		memcpy(c->mask, v->mask, 2 * v->ndim * sizeof(tg_sint));
	else
		c->mask = NULL;
	c->offset = v->offset;
	c->contiguous = v->contiguous;
	*out = c;
	return 0;
}

int tg_view_eq(const tg_view *a, const tg_view *b)
{
	if (a->ndim != b->ndim || a->contiguous != b->contiguous ||
	    !tg_sint_eq(a->offset, b->offset) || !a->mask != !b->mask)
		return 0;
	if (!tg_sints_eq(a->shape, b->shape, a->ndim) ||
	    !tg_sints_eq(a->strides, b->strides, a->ndim))
		return 0;
	return !a->mask || tg_sints_eq(a->mask, b->mask, 2 * a->ndim);
}

int64_t tg_view_size(const tg_view *v)
{
	int64_t n = 1;
	size_t i;

	for (i = 0; i < v->ndim; i++)
		n *= tg_sint_vmax(v->shape[i]);  /* tg_shape_check bounded it */
	return n;
}

/* Every op takes one argument per axis; say which op got how many. */
static int check_count(const char *op, size_t n, const tg_view *v,
                       const char *what)
{
	char buf[512];

	if (n == v->ndim)
		return 0;
	return tg_error(TG_EINVAL, "%s: %zu %s for shape %s (%u dims)", op, n,
	                what, tg_sints_format(v->shape, v->ndim, buf,
	                                      sizeof buf), v->ndim);
}

/* x clamped to [0, len]. */
static tg_sint clamp(tg_ir *ir, tg_sint x, tg_sint len)
{
	return tg_sint_max(ir, tg_si(0), tg_sint_min(ir, x, len));
}

/* The window [arg[2i], arg[2i+1]) of each axis, which may reach outside
 * the view (pad); the old mask moves with the window and is and-ed with
 * `mask` (NULL for none).  No checks: pad and shrink did them. */
static int resize(tg_ir *ir, const char *op, const tg_view *v,
                  const tg_sint *arg, const tg_sint *mask, tg_view **out)
{
	tg_sint shape[TG_MAX_DIMS], nm[2 * TG_MAX_DIMS], off = v->offset;
	size_t i;

	for (i = 0; i < v->ndim; i++) {
		tg_sint a = arg[2 * i], *m = nm + 2 * i;

		off = tg_sint_add(ir, off, tg_sint_mul(ir, v->strides[i], a));
		shape[i] = tg_sint_sub(ir, arg[2 * i + 1], a);
		if (!v->mask)
			continue;
		m[0] = clamp(ir, tg_sint_sub(ir, v->mask[2 * i], a), shape[i]);
		m[1] = clamp(ir, tg_sint_sub(ir, v->mask[2 * i + 1], a),
		             shape[i]);
		if (!mask)
			continue;
		m[0] = tg_sint_max(ir, m[0], mask[2 * i]);
		m[1] = tg_sint_min(ir, m[1], mask[2 * i + 1]);
	}
	return tg_view_make(ir, op, v->ndim, shape, v->strides, off,
	                    v->mask ? nm : mask, out);
}

/* "<op> (b,e) <what><axis>[ of size <s>]" for a bad pair. */
static int pair_error(const char *op, const char *what, const tg_sint *p,
                      size_t axis, const tg_view *v)
{
	char b1[64], b2[64], b3[64];

	return tg_error(TG_EINVAL, "%s (%s,%s) %s%zu%s%s", op,
	                tg_sint_format(p[0], b1, sizeof b1),
	                tg_sint_format(p[1], b2, sizeof b2), what, axis,
	                v ? " of size " : "",
	                v ? tg_sint_format(v->shape[axis], b3, sizeof b3) : "");
}

/* Padding is a window that starts before the view and ends after it,
 * with a mask over the part that exists: no data moves, reads outside
 * give 0. */
int tg_view_pad(tg_ir *ir, const tg_view *v, size_t n, const tg_sint *arg,
                tg_view **out)
{
	tg_sint win[2 * TG_MAX_DIMS], mask[2 * TG_MAX_DIMS];
	int any = 0, rc;
	size_t i;

	*out = NULL;
	if ((rc = check_count("pad", n, v, "pairs")))
		return rc;
	for (i = 0; i < 2 * n; i++) {
		if (tg_sint_vmax(arg[i]) < 0)
			return pair_error("pad: negative padding", "on axis ",
			                  arg + (i & ~(size_t)1), i / 2, NULL);
		any |= !known_zero(arg[i]);
	}
	if (!any)
		return tg_view_copy(v, out);
	for (i = 0; i < n; i++) {
		win[2 * i] = tg_sint_sub(ir, tg_si(0), arg[2 * i]);
		win[2 * i + 1] = tg_sint_add(ir, v->shape[i], arg[2 * i + 1]);
		mask[2 * i] = arg[2 * i];
		mask[2 * i + 1] = tg_sint_add(ir, v->shape[i], arg[2 * i]);
	}
	return resize(ir, "pad", v, win, mask, out);
}

/* Whether a < 0 for every value (tinygrad refuses only what is known
 * wrong). */
static int known_neg(tg_sint a)
{
	return tg_sint_vmax(a) < 0;
}

/* A shrink moves the offset to the window's start; the old mask moves
 * with it. */
int tg_view_shrink(tg_ir *ir, const tg_view *v, size_t n,
                   const tg_sint *arg, tg_view **out)
{
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = check_count("shrink", n, v, "pairs")))
		return rc;
	for (i = 0; i < n; i++) {
		tg_sint b = arg[2 * i], e = arg[2 * i + 1];

		if (known_neg(b) || known_neg(tg_sint_sub(ir, e, b)) ||
		    known_neg(tg_sint_sub(ir, v->shape[i], e)))
			return pair_error("shrink:", "out of range for axis ",
			                  arg + 2 * i, i, v);
	}
	return resize(ir, "shrink", v, arg, NULL, out);
}

static int expand_error(const tg_view *v, const tg_sint *shape, size_t i)
{
	char b1[512], b2[512], b3[64];

	return tg_error(TG_EINVAL, "expand: cannot expand %s to %s: axis %zu "
	                "has size %s, not 1",
	                tg_sints_format(v->shape, v->ndim, b1, sizeof b1),
	                tg_sints_format(shape, v->ndim, b2, sizeof b2), i,
	                tg_sint_format(v->shape[i], b3, sizeof b3));
}

/* A 0-size view expands only to sizes that are multiples per axis (and
 * stays empty); it has no layout to keep. */
static int expand_empty(tg_ir *ir, const tg_view *v, const tg_sint *shape,
                        tg_view **out)
{
	size_t i;

	for (i = 0; i < v->ndim; i++) {
		tg_sint s = v->shape[i], x = shape[i];

		if (known_zero(s) ? !known_zero(x)
		                  : s.u || x.u || x.c % s.c != 0)
			return expand_error(v, shape, i);
	}
	return tg_view_make(ir, "expand", v->ndim, shape, NULL, tg_si(0),
	                    NULL, out);
}

/* Expanding a stride-0 axis repeats one element, so only the shape
 * changes; the axis' mask was [0,1) (all valid) or empty. */
int tg_view_expand(tg_ir *ir, const tg_view *v, size_t ndim,
                   const tg_sint *shape, tg_view **out)
{
	tg_sint mask[2 * TG_MAX_DIMS];
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = check_count("expand", ndim, v, "sizes")))
		return rc;
	if (tg_sints_has(v->shape, v->ndim, 0))
		return expand_empty(ir, v, shape, out);
	for (i = 0; i < ndim; i++) {
		int same = tg_sint_eq(v->shape[i], shape[i]);

		if (!same && !(tg_sint_is(v->shape[i], 1) &&
		               known_zero(v->strides[i])))
			return expand_error(v, shape, i);
		if (!v->mask)
			continue;
		mask[2 * i] = v->mask[2 * i];
		mask[2 * i + 1] = v->mask[2 * i + 1];
		if (same)
			continue;
		/* a size-1 axis is all valid or all masked */
		mask[2 * i] = tg_si(0);
		mask[2 * i + 1] = tg_sint_is(v->mask[2 * i], 0) &&
		                  tg_sint_is(v->mask[2 * i + 1], 1)
		                  ? shape[i] : tg_si(0);
	}
	return tg_view_make(ir, "expand", ndim, shape, v->strides, v->offset,
	                    v->mask ? mask : NULL, out);
}

/* A permutation names each axis once (a bitmask: at most 32 axes). */
static int check_perm(const tg_view *v, size_t n, const uint32_t *axis)
{
	uint32_t seen = 0;
	char buf[512];
	size_t i, used = 0;
	int rc;

	if ((rc = check_count("permute", n, v, "axes")))
		return rc;
	for (i = 0; i < n; i++) {
		if (axis[i] >= n || (seen >> axis[i] & 1u))
			break;
		seen |= 1u << axis[i];
	}
	if (i == n)
		return 0;
	for (i = 0; i < n && used < sizeof buf; i++)
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%u",
		                         i ? "," : "", axis[i]);
	return tg_error(TG_EINVAL, "permute: (%s) is not a permutation of "
	                "%zu axes", buf, n);
}

/* Reorders shape, strides and mask together; the offset stays. */
int tg_view_permute(tg_ir *ir, const tg_view *v, size_t n,
                    const uint32_t *axis, tg_view **out)
{
	tg_sint shape[TG_MAX_DIMS], strides[TG_MAX_DIMS];
	tg_sint mask[2 * TG_MAX_DIMS];
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = check_perm(v, n, axis)))
		return rc;
	for (i = 0; i < n; i++) {
		shape[i] = v->shape[axis[i]];
		strides[i] = v->strides[axis[i]];
		if (!v->mask)
			continue;
		mask[2 * i] = v->mask[2 * axis[i]];
		mask[2 * i + 1] = v->mask[2 * axis[i] + 1];
	}
	return tg_view_make(ir, "permute", n, shape, strides, v->offset,
	                    v->mask ? mask : NULL, out);
}

/* ceil(x / k) for x >= 0, k >= 1. */
static tg_sint ceil_div(tg_ir *ir, tg_sint x, int64_t k)
{
	if (!x.u)
		return tg_si(x.c / k + (x.c % k != 0));
	return tg_sint_idiv(ir, tg_sint_add(ir, x, tg_si(k - 1)), tg_si(k));
}

/* The mask [vm[0], vm[1]) of an axis of size s taken every k-th element,
 * from the end when flip. */
static void stride_mask(tg_ir *ir, const tg_sint *vm, tg_sint s, int64_t k,
                        int flip, tg_sint *out)
{
	out[0] = ceil_div(ir, flip ? tg_sint_sub(ir, s, vm[1]) : vm[0], k);
	out[1] = ceil_div(ir, flip ? tg_sint_sub(ir, s, vm[0]) : vm[1], k);
}

static int check_mul(const tg_view *v, size_t n, const int64_t *mul)
{
	size_t i;
	int rc;

	if ((rc = check_count("stride", n, v, "multipliers")))
		return rc;
	for (i = 0; i < n; i++)
		if (mul[i] == 0 || mul[i] == INT64_MIN)
			return tg_error(TG_EINVAL, "stride: invalid "
			                "multiplier %lld on axis %zu",
			                (long long)mul[i], i);
	return 0;
}

/* Every k-th element is stride*k over ceil(s/k) elements; a negative
 * multiplier also flips, so the offset starts at the last element and
 * the mask is mirrored. */
int tg_view_stride(tg_ir *ir, const tg_view *v, size_t n,
                   const int64_t *mul, tg_view **out)
{
	tg_sint shape[TG_MAX_DIMS], strides[TG_MAX_DIMS];
	tg_sint mask[2 * TG_MAX_DIMS], off = v->offset;
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = check_mul(v, n, mul)))
		return rc;
	for (i = 0; i < n; i++) {
		tg_sint s = v->shape[i], last = tg_sint_sub(ir, s, tg_si(1));
		int64_t k = mul[i] < 0 ? -mul[i] : mul[i];

		if (!s.u && k > s.c)  /* picks one element either way; */
			k = s.c > 1 ? s.c : 1;  /* keeps the products small */
		strides[i] = tg_sint_mul(ir, v->strides[i],
		                         tg_si(mul[i] < 0 ? -k : k));
		shape[i] = ceil_div(ir, s, k);
		if (mul[i] < 0)  /* a flip starts at the old last element */
			off = tg_sint_add(ir, off,
			                  tg_sint_mul(ir, v->strides[i], last));
		if (v->mask)
			stride_mask(ir, v->mask + 2 * i, s, k, mul[i] < 0,
			            mask + 2 * i);
	}
	return tg_view_make(ir, "stride", n, shape, strides, off,
	                    v->mask ? mask : NULL, out);
}

/* and-s cond into *acc, skipping the always-true (tinygrad's ands). */
static void and_into(tg_ir *ir, tg_uop **acc, tg_uop *cond)
{
	if (!cond || tg_uop_is_const_int(cond, 1))
		return;
	*acc = *acc ? tg_sym_and(ir, *acc, cond) : cond;
}

/* The bounds of axis i's mask on idx, and-ed into *ok. */
static void and_mask(tg_ir *ir, const tg_sint *m, tg_uop *idx, tg_uop **ok)
{
	and_into(ir, ok, tg_sym_ge(ir, idx, tg_sint_uop(ir, m[0])));
	and_into(ir, ok, tg_sym_lt(ir, idx, tg_sint_uop(ir, m[1])));
}

/* Size-1 and stride-0 axes add nothing to the index (tinygrad skips
 * them too, so expressions stay small); every mask bound is and-ed,
 * the simplifier drops those the index bounds already imply. */
int tg_view_expr(tg_ir *ir, const tg_view *v, tg_uop *const *idxs,
                 tg_uop *valid_in, tg_uop **idx, tg_uop **valid)
{
	tg_uop *ix = tg_sint_uop(ir, v->offset), *ok = NULL;
	size_t i;
	int rc;

	*idx = *valid = NULL;
	if ((rc = tg_ir_status(ir)))  /* an index failed to build */
		return rc;
	for (i = 0; i < v->ndim; i++)
		if (!idxs[i])
			return tg_error(TG_EINVAL, "expr: no index for "
			                "axis %zu", i);
	and_into(ir, &ok, valid_in);
	for (i = 0; i < v->ndim; i++) {
		if (!tg_sint_is(v->shape[i], 1) && !known_zero(v->strides[i]))
			ix = tg_sym_add(ir, ix, tg_sym_mul(ir, idxs[i],
			                tg_sint_uop(ir, v->strides[i])));
		if (v->mask)
			and_mask(ir, v->mask + 2 * i, idxs[i], &ok);
	}
	if (!ok)
		ok = tg_uop_const_int(ir, TG_BOOL, 1);
	if ((rc = tg_ir_status(ir)) || !ix || !ok)
		return rc ? rc : tg_error(TG_EINTERNAL, "expr: a builder "
		                          "failed without an error");
	*idx = ix;
	*valid = ok;
	return 0;
}

/* ----------------------------------------------------- views as nodes */

/* Appends the nodes of n sints (imported into ir) to src. */
static void sints_to_nodes(tg_ir *ir, const tg_sint *v, size_t n,
                           tg_uop **src)
{
	for (size_t i = 0; i < n; i++)
		src[i] = v[i].u ? tg_uop_import(ir, v[i].u)
		                : tg_sym_int(ir, v[i].c);
}

tg_uop *tg_view_uop(tg_ir *ir, const tg_view *v)
{
	size_t nd = v->ndim, n = 2 * nd + 1 + (v->mask ? 2 * nd : 0);
	tg_uop *src[5 * TG_MAX_DIMS + 1];
	tg_arg a;

	if (nd > TG_MAX_DIMS)
		return tg_ir_fail(ir, TG_EINVAL, "view_uop: %zu dims", nd);
	sints_to_nodes(ir, v->shape, nd, src);
	sints_to_nodes(ir, v->strides, nd, src + nd);
	sints_to_nodes(ir, &v->offset, 1, src + 2 * nd);
	if (v->mask)
		sints_to_nodes(ir, v->mask, 2 * nd, src + 2 * nd + 1);
	memset(&a, 0, sizeof a);
	a.a = (int64_t)nd;
	a.b = v->mask != NULL;
	a.v.i = v->contiguous;
	return tg_uop_new(ir, TG_VIEW, TG_VOID, src, n, &a);
}

/* Whether u is a VIEW node whose sources fit its arg. */
static int view_node_ok(const tg_uop *u)
{
	int64_t nd = u->arg.a;

	return u->op == TG_VIEW && nd >= 0 && nd <= TG_MAX_DIMS &&
	       u->nsrc == (uint32_t)(2 * nd + 1 + (u->arg.b ? 2 * nd : 0));
}

int tg_view_of_uop(const tg_uop *u, tg_view **out)
{
	tg_view *v;
	size_t nd;

	*out = NULL;
	if (!view_node_ok(u))
		return tg_error(TG_EINVAL, "view_of_uop: %%%u is a malformed "
		                "%s", (unsigned)u->id, tg_op_name(u->op));
	nd = (size_t)u->arg.a;
	if (!(v = view_alloc(nd)))
		return tg_error_oom("view_of_uop");
	for (size_t i = 0; i < nd; i++) {
		v->shape[i] = tg_sint_of(u->src[i]);
		v->strides[i] = tg_sint_of(u->src[nd + i]);
	}
	v->offset = tg_sint_of(u->src[2 * nd]);
	if (u->arg.b)
		for (size_t i = 0; i < 2 * nd; i++)
			v->mask[i] = tg_sint_of(u->src[2 * nd + 1 + i]);
	else
		v->mask = NULL;
	v->contiguous = (uint8_t)(u->arg.v.i != 0);
	*out = v;
	return 0;
}

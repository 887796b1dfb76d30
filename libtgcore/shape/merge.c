/*
 * merge.c - folding two views into one (tinygrad's View.__add__) and
 * inverting a view (View.invert).
 *
 * vm1 indexes the flat space of vm2.  Un-flattening vm1's offset and
 * each of its stride steps into vm2's coordinates tells, per vm1 axis,
 * how far it moves along each vm2 axis; weighting those moves by vm2's
 * strides gives the merged strides.  That is only right if no index of
 * vm1 carries across a vm2 axis, which the bounds of each axis' term
 * check; axes of vm2 that a term must cross are merged first.  A mask
 * on vm2 turns into a mask on vm1 when each violated vm2 axis is driven
 * by exactly one vm1 axis.
 *
 * The projection works on integers: when vm2's shape or vm1's layout is
 * symbolic the views are left unmerged (a correct, if longer, tracker).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

/* Merges recurse through reshapes and masks; each level makes progress,
 * the bound only guards against a loop we did not foresee. */
#define MAX_DEPTH 64

/* Python's // and ceil: offsets and steps projected onto vm2 may be
 * negative, where C's truncation would pick the wrong coordinate. */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return -floor_div(-a, b);
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The scratch of one projection, on the heap: merges recurse. */
struct proj {
	int64_t origin[TG_MAX_DIMS];             /* vm1's offset in vm2 */
	int64_t step[TG_MAX_DIMS][TG_MAX_DIMS];  /* [d2][d1] */
	tg_sint strides[TG_MAX_DIMS];            /* merged, per vm1 axis */
	int64_t ext_size[TG_MAX_DIMS];           /* last vm2 axis first */
	int64_t ext_lo[TG_MAX_DIMS], ext_hi[TG_MAX_DIMS];
	size_t next;
};

static int merge(tg_ir *ir, const tg_view *vm2, const tg_view *vm1,
                 tg_view **out, int depth);

/* vm2's coordinates of flat offset off (tinygrad's un1d). */
static void un1d(const tg_view *vm2, int64_t off, int64_t *out)
{
	tg_sint st[TG_MAX_DIMS];
	size_t i;

	tg_strides_for_shape(NULL, vm2->ndim, vm2->shape, st);
	for (i = 0; i < vm2->ndim; i++) {
		out[i] = st[i].c ? floor_div(off, st[i].c) : 0;
		off -= out[i] * st[i].c;
	}
}

/* Fills origin, step and strides. */
static void project(tg_ir *ir, const tg_view *vm2, const tg_view *vm1,
                    struct proj *p)
{
	int64_t at[TG_MAX_DIMS];
	size_t d1, d2;

	memset(p->step, 0, sizeof p->step);  /* stride-0 axes never move */
	un1d(vm2, vm1->offset.c, p->origin);
	for (d1 = 0; d1 < vm1->ndim; d1++) {
		p->strides[d1] = tg_si(0);
		if (!vm1->strides[d1].c)
			continue;
		un1d(vm2, vm1->offset.c + vm1->strides[d1].c, at);
		for (d2 = 0; d2 < vm2->ndim; d2++) {
			int64_t s1 = at[d2] - p->origin[d2];

			p->step[d2][d1] = s1;
			p->strides[d1] = tg_sint_add(ir, p->strides[d1],
			        tg_sint_mul(ir, tg_si(s1), vm2->strides[d2]));
		}
	}
}

/* Bounds of sum(coef[d1] * idx[d1]) + c over vm1's index box. */
static void term_bounds(const tg_view *vm1, const int64_t *coef,
                        int64_t c, int64_t *lo, int64_t *hi)
{
	size_t d1;

	*lo = *hi = c;
	for (d1 = 0; d1 < vm1->ndim; d1++) {
		int64_t t = coef[d1] * (vm1->shape[d1].c - 1);

		*lo += t < 0 ? t : 0;
		*hi += t > 0 ? t : 0;
	}
}

/* Groups vm2's axes, last first, into extents whose term stays inside
 * [0, size): no vm1 index carries out of them.  0 when the leftover
 * term is not zero (vm1 reaches outside vm2). */
static int extents(const tg_view *vm2, const tg_view *vm1, struct proj *p)
{
	int64_t coef[TG_MAX_DIMS] = { 0 }, c = 0, size = 1, lo = 0, hi = 0;
	size_t d1, d2;

	p->next = 0;
	for (d2 = vm2->ndim; d2-- > 0;) {
		for (d1 = 0; d1 < vm1->ndim; d1++)
			coef[d1] += p->step[d2][d1] * size;
		c += p->origin[d2] * size;
		size *= vm2->shape[d2].c;
		term_bounds(vm1, coef, c, &lo, &hi);
		if (hi >= size || lo < 0)
			continue;
		p->ext_size[p->next] = size;
		p->ext_lo[p->next] = lo;
		p->ext_hi[p->next++] = hi;
		memset(coef, 0, sizeof coef);
		c = lo = hi = 0;
		size = 1;
	}
	return lo == 0 && hi == 0;
}

/* Narrows vm1's box [b, e) so vm2's mask holds on each axis; *bad when
 * some violated vm2 axis has no single vm1 axis behind it. */
static void project_mask(const tg_view *vm2, const tg_view *vm1,
                         const struct proj *p, int64_t *b, int64_t *e,
                         int *bad)
{
	size_t d1, d2, n, k = 0;

	for (d2 = 0; d2 < vm2->ndim; d2++) {
		tg_sint mb = vm2->mask[2 * d2], me = vm2->mask[2 * d2 + 1];
		size_t x = p->next - 1 - d2;
		int64_t o = p->origin[d2], s1;

		if (p->ext_lo[x] >= tg_sint_vmax(mb) &&
		    p->ext_hi[x] < tg_sint_vmin(me))
			continue;  /* the mask never cuts this axis */
		if (mb.u || me.u) {
			*bad = 1;
			continue;
		}
		for (d1 = 0, n = 0; d1 < vm1->ndim; d1++)
			if (p->step[d2][d1])
				k = d1, n++;
		if (n != 1) {
			if (n == 0 && vm1->ndim)
				e[0] = 0;  /* one fixed coordinate, outside */
			else
				*bad = 1;
			continue;
		}
		s1 = p->step[d2][k];
		b[k] = max64(b[k], ceil_div(s1 > 0 ? mb.c - o : me.c - o - 1,
		                            s1));
		e[k] = min64(e[k], floor_div(s1 < 0 ? mb.c - o
		                             : me.c - o - 1, s1) + 1);
	}
}

/* With vm2's mask carried onto vm1: merge again with vm1 masked, give
 * up when the mask could not be carried, or go on (1). */
static int apply_mask(tg_ir *ir, const tg_view *vm2, const tg_view *vm1,
                      const struct proj *p, tg_view **out, int depth)
{
	int64_t b[TG_MAX_DIMS] = { 0 }, e[TG_MAX_DIMS];
	tg_sint mask[2 * TG_MAX_DIMS];
	tg_view *masked;
	int bad = 0, narrowed = 0, rc;
	size_t i;

	for (i = 0; i < vm1->ndim; i++)
		e[i] = vm1->shape[i].c;
	project_mask(vm2, vm1, p, b, e, &bad);
	for (i = 0; i < vm1->ndim; i++) {
		narrowed |= b[i] != 0 || e[i] != vm1->shape[i].c;
		mask[2 * i] = tg_si(b[i]);
		mask[2 * i + 1] = tg_si(e[i]);
	}
	if (!narrowed)
		return bad ? 0 : 1;
	if ((rc = tg_view_make(ir, "merge", vm1->ndim, vm1->shape,
	                       vm1->strides, vm1->offset, mask, &masked)))
		return rc;
	rc = merge(ir, vm2, masked, out, depth + 1);
	tg_view_free(masked);
	return rc;
}

/* The projection divides offsets by vm2's strides and bounds each
 * term over vm1's box: both need integers. */
static int projectable(const tg_view *vm2, const tg_view *vm1)
{
	return tg_sints_all_int(vm2->shape, vm2->ndim) &&
	       tg_sints_all_int(vm1->shape, vm1->ndim) &&
	       tg_sints_all_int(vm1->strides, vm1->ndim) && !vm1->offset.u;
}

/* The general case: vm1 has no mask. */
static int merge_projected(tg_ir *ir, const tg_view *vm2,
                           const tg_view *vm1, struct proj *p,
                           tg_view **out, int depth)
{
	tg_sint shape[TG_MAX_DIMS], off = vm2->offset;
	tg_view *r2;
	size_t i;
	int rc;

	project(ir, vm2, vm1, p);
	if (!extents(vm2, vm1, p))
		return 0;
	for (i = 0; i < p->next; i++)
		shape[i] = tg_si(p->ext_size[p->next - 1 - i]);
	if (p->next != vm2->ndim || !tg_sints_eq(shape, vm2->shape, p->next)) {
		if ((rc = tg_view_reshape(ir, vm2, p->next, shape, &r2)) || !r2)
			return rc;
		rc = merge(ir, r2, vm1, out, depth + 1);
		tg_view_free(r2);
		return rc;
	}
	if (vm2->mask && (rc = apply_mask(ir, vm2, vm1, p, out, depth)) <= 0)
		return rc;
	for (i = 0; i < vm2->ndim; i++)
		off = tg_sint_add(ir, off, tg_sint_mul(ir, tg_si(p->origin[i]),
		                                   vm2->strides[i]));
	return tg_view_make(ir, "merge", vm1->ndim, vm1->shape, p->strides,
	                    off, NULL, out);
}

/* A view of shape that reads nothing: zero strides, all-empty mask. */
static int empty_view(tg_ir *ir, const tg_view *v, tg_view **out)
{
	tg_sint zero[2 * TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < 2 * v->ndim; i++)
		zero[i] = tg_si(0);
	return tg_view_make(ir, "merge", v->ndim, v->shape, zero, tg_si(0),
	                    zero, out);
}

/* vm1 masked: merge its valid box, then pad it back out. */
static int merge_masked(tg_ir *ir, const tg_view *vm2, const tg_view *vm1,
                        tg_view **out, int depth)
{
	const tg_sint *m = vm1->mask;
	tg_sint pad[2 * TG_MAX_DIMS];
	tg_view *shrunk, *merged;
	size_t i;
	int rc;

	for (i = 0; i < vm1->ndim; i++) {
		if (tg_sint_vmax(tg_sint_sub(ir, m[2 * i + 1], m[2 * i])) <= 0)
			return empty_view(ir, vm1, out);
		pad[2 * i] = m[2 * i];
		pad[2 * i + 1] = tg_sint_sub(ir, vm1->shape[i], m[2 * i + 1]);
	}
	if ((rc = tg_view_shrink(ir, vm1, vm1->ndim, m, &shrunk)))
		return rc;
	rc = merge(ir, vm2, shrunk, &merged, depth + 1);
	tg_view_free(shrunk);
	if (rc || !merged)
		return rc;
	rc = tg_view_pad(ir, merged, merged->ndim, pad, out);
	tg_view_free(merged);
	return rc;
}

/* vm2 reshaped to vm1's shape, when that is one view. */
static int merge_reshape(tg_ir *ir, const tg_view *vm2, const tg_view *vm1,
                         tg_view **out)
{
	int rc;

	if (tg_view_size(vm1) != tg_view_size(vm2))
		return 0;
	rc = tg_view_reshape(ir, vm2, vm1->ndim, vm1->shape, out);
	if (rc == TG_EINVAL) {  /* a symbolic mismatch: just not mergeable */
		tg_clear_error();
		rc = 0;
	}
	return rc;
}

/* Cheap cases first, as tinygrad: a contiguous vm2 is the identity, a
 * contiguous vm1 is a reshape of vm2; masked vm1 next, then the
 * projection. */
static int merge(tg_ir *ir, const tg_view *vm2, const tg_view *vm1,
                 tg_view **out, int depth)
{
	struct proj *p;
	int rc;

	*out = NULL;
	if (depth > MAX_DEPTH)
		return 0;
	if (vm2->contiguous)
		return tg_view_copy(vm1, out);
	if (vm1->contiguous && vm1->ndim == vm2->ndim &&
	    tg_sints_eq(vm1->shape, vm2->shape, vm1->ndim))
		return tg_view_copy(vm2, out);
	if (vm1->contiguous && ((rc = merge_reshape(ir, vm2, vm1, out)) ||
	                        *out))
		return rc;
	if (vm1->mask)
		return merge_masked(ir, vm2, vm1, out, depth);
	if (!projectable(vm2, vm1))
		return 0;
	if (!(p = malloc(sizeof *p)))
		return tg_error_oom("merge");
	rc = merge_projected(ir, vm2, vm1, p, out, depth);
	free(p);
	return rc;
}

int tg_view_merge(tg_ir *ir, const tg_view *vm2, const tg_view *vm1,
                  tg_view **out)
{
	return merge(ir, vm2, vm1, out, 0);
}

/* Stable argsort of the strides by tinygrad's key: positive strides
 * descending first, then the others ascending. */
static void invert_order(const tg_view *v, uint32_t *axis)
{
	int64_t key[TG_MAX_DIMS];
	size_t i, j;

	for (i = 0; i < v->ndim; i++) {
		int64_t s = v->strides[i].c;

		key[i] = s > 0 ? -s : s;
		for (j = i; j > 0 && key[axis[j - 1]] > key[i]; j--)
			axis[j] = axis[j - 1];
		axis[j] = (uint32_t)i;
	}
}

/* The steps of tg_view_invert; *out may be NULL (not invertible). */
static int invert_steps(tg_ir *ir, const tg_view *v, tg_view **out)
{
	int64_t mul[TG_MAX_DIMS];
	uint32_t axis[TG_MAX_DIMS];
	tg_view *a, *b;
	size_t i;
	int rc;

	if ((rc = tg_view_from_shape(ir, v->ndim, v->shape, &a)))
		return rc;
	if (v->mask) {
		rc = tg_view_shrink(ir, a, v->ndim, v->mask, &b);
		tg_view_free(a);
		if (rc)
			return rc;
		a = b;
	}
	for (i = 0; i < v->ndim; i++)
		mul[i] = v->strides[i].c < 0 ? -1 : 1;
	rc = tg_view_stride(ir, a, v->ndim, mul, &b);
	tg_view_free(a);
	if (rc)
		return rc;
	invert_order(v, axis);
	rc = tg_view_permute(ir, b, v->ndim, axis, out);
	tg_view_free(b);
	return rc;
}

/* Undoes flips and permutes on v's own shape; the element count tells
 * whether v also shrank, expanded or strided, which cannot be undone. */
int tg_view_invert(tg_ir *ir, const tg_view *v, size_t ndim,
                   const tg_sint *out_shape, tg_view **out)
{
	tg_sint want = tg_si(1), got = tg_si(1);
	size_t i;
	int rc;

	*out = NULL;
	if (!tg_sints_all_int(v->strides, v->ndim))
		return 0;
	if ((rc = invert_steps(ir, v, out)))
		return rc;
	for (i = 0; i < ndim; i++)
		want = tg_sint_mul(ir, want, out_shape[i]);
	for (i = 0; i < (*out)->ndim; i++)
		got = tg_sint_mul(ir, got, (*out)->shape[i]);
	rc = ir ? tg_ir_status(ir) : 0;
	if (rc || !tg_sint_eq(want, got)) {  /* a shrink, expand, stride */
		tg_view_free(*out);
		*out = NULL;
	}
	return rc;
}

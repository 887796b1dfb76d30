/*
 * tensor/reduce.c - reductions and the ops made of them: sum, max, min,
 * mean, var, std, any, all, argmax, argmin, logsumexp, softmax,
 * log_softmax and cumsum (tinygrad's tensor.py, with its accumulation
 * dtypes: ints sum in int32/uint32, half in float32).
 */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "ir/ir.h"

/* The bit mask of the listed axes (NULL: all); -1 on a bad axis. */
static int64_t axis_mask(const char *op, const tg_tensor *t, const int *axes,
                         size_t naxes)
{
	uint32_t m = 0;
	size_t i;
	int a;

	if (!axes) /* ndim <= TG_MAX_DIMS (32); 1u << 32 is undefined */
		return t->ndim ? (int64_t)(UINT32_MAX >> (32 - t->ndim)) : 0;
	for (i = 0; i < naxes; i++) {
		if ((a = tg_t_axis(op, axes[i], t->ndim)) < 0)
			return -1;
		m |= t->ndim ? 1u << a : 0;
	}
	return m;
}

/* t without the axes of mask (keepdim off). */
static tg_tensor *drop_axes(const tg_tensor *t, uint32_t mask)
{
	int64_t s[TG_MAX_DIMS];
	size_t i, n = 0;

	if (!t)
		return NULL;
	for (i = 0; i < t->ndim; i++)
		if (!((mask >> i) & 1))
			s[n++] = t->shape[i];
	return tg_reshape(t, n, s);
}

/* The reduce with op over mask, in dtype acc (the tensor's own when
 * TG_NDTYPES). */
static tg_tensor *reduce(unsigned op, const tg_tensor *t, uint32_t mask,
                         int keepdim, tg_dtype acc)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	tg_scope_begin();
	r = acc != TG_NDTYPES && acc != tg_tensor_dtype(t) ? tg_cast(t, acc)
	                                                   : (tg_tensor *)t;
	r = tg_t_reduce(op, r, mask);
	if (!keepdim)
		r = drop_axes(r, mask);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* The number of elements each output of a reduce over mask sums. */
static int64_t reduced_count(const tg_tensor *t, uint32_t mask)
{
	int64_t n = 1;
	size_t i;

	for (i = 0; i < t->ndim; i++)
		if ((mask >> i) & 1)
			n *= t->shape[i];
	return n;
}


/* tinygrad's sum: accumulate in sum_acc_dtype; half results go back to
 * half. */
static tg_tensor *sum_mask(const tg_tensor *t, uint32_t mask, int keepdim)
{
	tg_dtype dt = tg_tensor_dtype(t);
	tg_tensor *r;

	tg_scope_begin();
	r = reduce(TG_ADD, t, mask, keepdim, tg_dtype_sum_acc(dt));
	if (tg_scalar_is_half(dt))
		r = tg_cast(r, dt);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

tg_tensor *tg_sum(const tg_tensor *t, const int *axes, size_t naxes,
                  int keepdim)
{
	int64_t m;

	if (!t || (m = axis_mask("sum", t, axes, naxes)) < 0)
		return NULL;
	return sum_mask(t, (uint32_t)m, keepdim);
}

/* 0 when acc names a dtype (a float one with `need_float`), else -1
 * with the message. */
static int check_acc(const char *op, tg_dtype acc, int need_float)
{
	if ((int)acc < 0 || acc >= TG_NDTYPES) {
		tg_error(TG_EINVAL, "%s: accumulation dtype %d is not a dtype",
		         op, (int)acc);
		return -1;
	}
	if (need_float && !tg_dtype_is_float(acc)) {
		tg_error(TG_EINVAL, "%s: accumulation dtype %s is not a float "
		         "dtype", op, tg_dtype_name(acc));
		return -1;
	}
	return 0;
}

/* tinygrad's sum(acc_dtype=): the input cast to acc, summed there, and
 * the result left in acc. */
tg_tensor *tg_sum_acc(const tg_tensor *t, const int *axes, size_t naxes,
                      int keepdim, tg_dtype acc)
{
	int64_t m;

	if (!t || check_acc("sum", acc, 0) ||
	    (m = axis_mask("sum", t, axes, naxes)) < 0)
		return NULL;
	return reduce(TG_ADD, t, (uint32_t)m, keepdim, acc);
}

tg_tensor *tg_max(const tg_tensor *t, const int *axes, size_t naxes,
                  int keepdim)
{
	int64_t m;

	if (!t || (m = axis_mask("max", t, axes, naxes)) < 0)
		return NULL;
	return reduce(TG_MAX, t, (uint32_t)m, keepdim, TG_NDTYPES);
}

/* An order-reversing map of t's dtype: -x for floats, ~x for ints,
 * not for bool.  min is max of it mapped back; argmin is argmax of it. */
static tg_tensor *flip_order(const tg_tensor *t)
{
	tg_dtype dt = tg_tensor_dtype(t);

	if (dt == TG_BOOL)
		return tg_logical_not(t);
	return tg_dtype_is_float(dt) ? tg_neg(t) : tg_bitwise_not(t);
}

tg_tensor *tg_min(const tg_tensor *t, const int *axes, size_t naxes,
                  int keepdim)
{
	int64_t m;
	tg_tensor *r;

	if (!t || (m = axis_mask("min", t, axes, naxes)) < 0)
		return NULL;
	tg_scope_begin();
	r = tg_keep(flip_order(reduce(TG_MAX, flip_order(t), (uint32_t)m,
	                              keepdim, TG_NDTYPES)));
	tg_scope_end();
	return r;
}

/* mean over mask: the sum in the accumulation dtype (acc, or when
 * TG_NDTYPES t's sum_acc_dtype) over the count, in acc or else t's
 * dtype if float, else the default float.  tinygrad returns the (zero)
 * sum for 0-size inputs. */
static tg_tensor *mean_mask(const tg_tensor *t, uint32_t mask, int keepdim,
                            tg_dtype acc)
{
	tg_dtype dt = tg_tensor_dtype(t);
	tg_dtype out = acc != TG_NDTYPES ? acc : tg_dtype_is_float(dt) ? dt
	               : tg_dtype_default_float();
	int64_t n = reduced_count(t, mask);
	tg_tensor *r;
	char b[160];

	for (size_t i = 0; i < t->ndim; i++)
		if ((mask >> i) & 1 && tg_dim_is_sym(t->shape[i]))
			return tg_t_fail(TG_EUNSUPPORTED, "mean", "axis %zu of %s "
			                 "is symbolic (sum, then divide by the "
			                 "count you know)", i,
			                 tg_tensor_shape_str(t, b, sizeof b));
	tg_scope_begin();
	r = reduce(TG_ADD, t, mask, keepdim,
	           acc != TG_NDTYPES ? acc : tg_dtype_sum_acc(dt));
	if (n && tg_tensor_numel(t))
		r = tg_div_s(r, (double)n);
	r = tg_keep(tg_cast(r, out));
	tg_scope_end();
	return r;
}

tg_tensor *tg_mean(const tg_tensor *t, const int *axes, size_t naxes,
                   int keepdim)
{
	int64_t m;

	if (!t || (m = axis_mask("mean", t, axes, naxes)) < 0)
		return NULL;
	return mean_mask(t, (uint32_t)m, keepdim, TG_NDTYPES);
}

tg_tensor *tg_mean_acc(const tg_tensor *t, const int *axes, size_t naxes,
                       int keepdim, tg_dtype acc)
{
	int64_t m;

	if (!t || check_acc("mean", acc, 1) ||
	    (m = axis_mask("mean", t, axes, naxes)) < 0)
		return NULL;
	return mean_mask(t, (uint32_t)m, keepdim, acc);
}

tg_tensor *tg_var(const tg_tensor *t, const int *axes, size_t naxes,
                  int keepdim, double correction)
{
	int64_t m;
	double n;
	tg_tensor *sq, *r;

	if (!t || (m = axis_mask("var", t, axes, naxes)) < 0)
		return NULL;
	n = (double)reduced_count(t, (uint32_t)m) - correction;
	tg_scope_begin();
	sq = tg_square(tg_sub(t, mean_mask(t, (uint32_t)m, 1, TG_NDTYPES)));
	r = tg_div_s(sum_mask(sq, (uint32_t)m, keepdim), n > 0 ? n : 0);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

tg_tensor *tg_std(const tg_tensor *t, const int *axes, size_t naxes,
                  int keepdim, double correction)
{
	tg_tensor *r;

	if (!t || axis_mask("std", t, axes, naxes) < 0)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_sqrt(tg_var(t, axes, naxes, keepdim, correction)));
	tg_scope_end();
	return r;
}

tg_tensor *tg_any(const tg_tensor *t, const int *axes, size_t naxes,
                  int keepdim)
{
	tg_tensor *r;

	if (!t || axis_mask("any", t, axes, naxes) < 0)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_max(tg_cast(t, TG_BOOL), axes, naxes, keepdim));
	tg_scope_end();
	return r;
}

tg_tensor *tg_all(const tg_tensor *t, const int *axes, size_t naxes,
                  int keepdim)
{
	tg_tensor *r;

	if (!t || axis_mask("all", t, axes, naxes) < 0)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_logical_not(tg_any(tg_logical_not(tg_cast(t, TG_BOOL)),
	                                  axes, naxes, keepdim)));
	tg_scope_end();
	return r;
}

/* ---------------------------------------------------------- arg ops */

/* tinygrad's argmax: the equal-to-max mask times a countdown n-1..0,
 * whose max is n-1 minus the first maximum's index. */
static tg_tensor *argmax_axis(const char *op, const tg_tensor *t, int a,
                              int keepdim)
{
	int64_t n = t->shape[a], s[TG_MAX_DIMS];
	size_t i, k = 0;
	tg_tensor *m, *idx, *down, *r;
	char b[160];

	if (!n)
		return tg_t_fail(TG_EINVAL, op, "axis %d of %s is empty", a,
		                 TG_T_SHAPE(t, b));
	for (i = (size_t)a; i < t->ndim; i++)
		s[k++] = i == (size_t)a ? n : 1;
	tg_scope_begin();
	m = tg_eq(t, tg_max(t, &a, 1, 1));
	down = tg_reshape(tg_arange(tg_tensor_dev(t), TG_INT32, (double)(n - 1),
	                            -1, -1), k, s);
	idx = tg_mul(m, down);
	r = tg_rsub_s(tg_max(idx, &a, 1, keepdim), (double)(n - 1));
	r = tg_keep(tg_cast(r, TG_INT32));
	tg_scope_end();
	return r;
}

static tg_tensor *argmax_op(const char *op, const tg_tensor *t, int axis,
                            int keepdim)
{
	tg_tensor *f, *r;
	int a;

	if (!t)
		return NULL;
	if (axis == TG_AXIS_NONE || !t->ndim) {
		if (axis != TG_AXIS_NONE && tg_t_axis(op, axis, 0) < 0)
			return NULL;
		tg_scope_begin();
		f = tg_reshape(t, 1, (int64_t[]){ tg_tensor_numel(t) });
		r = argmax_axis(op, f, 0, 0);
		if (keepdim && axis != TG_AXIS_NONE)
			r = tg_reshape(r, 0, NULL);
		r = tg_keep(r);
		tg_scope_end();
		return r;
	}
	if ((a = tg_t_axis(op, axis, t->ndim)) < 0)
		return NULL;
	return argmax_axis(op, t, a, keepdim);
}

tg_tensor *tg_argmax(const tg_tensor *t, int axis, int keepdim)
{
	return argmax_op("argmax", t, axis, keepdim);
}

tg_tensor *tg_argmin(const tg_tensor *t, int axis, int keepdim)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	tg_scope_begin();
	r = tg_keep(argmax_op("argmin", flip_order(t), axis, keepdim));
	tg_scope_end();
	return r;
}

/* ------------------------------------------------------ softmax family */

tg_tensor *tg_logsumexp(const tg_tensor *t, int axis, int keepdim)
{
	tg_tensor *m, *r;
	int a;

	if (!t || (a = tg_t_axis("logsumexp", axis, t->ndim)) < 0)
		return NULL;
	tg_scope_begin();
	m = tg_max(t, &a, 1, 1);
	r = tg_log(tg_sum(tg_exp(tg_sub(t, m)), &a, 1, keepdim));
	r = tg_keep(tg_add(r, keepdim || !t->ndim ? m : tg_squeeze(m, a)));
	tg_scope_end();
	return r;
}

/* x - max(x) and the sum of its exp along a (kept). */
static int softmax_parts(const char *op, const tg_tensor *t, int axis,
                         tg_tensor **shifted, tg_tensor **e, tg_tensor **ss)
{
	int a;

	if ((a = tg_t_axis(op, axis, t->ndim)) < 0)
		return -1;
	*shifted = tg_sub(t, tg_max(t, &a, 1, 1));
	*e = tg_exp(*shifted);
	*ss = tg_sum(*e, &a, 1, 1);
	return 0;
}

tg_tensor *tg_softmax(const tg_tensor *t, int axis)
{
	tg_tensor *m, *e, *ss, *r = NULL;

	if (!t)
		return NULL;
	tg_scope_begin();
	if (!softmax_parts("softmax", t, axis, &m, &e, &ss))
		r = tg_keep(tg_div(e, ss));
	tg_scope_end();
	return r;
}

tg_tensor *tg_log_softmax(const tg_tensor *t, int axis)
{
	tg_tensor *m, *e, *ss, *r = NULL;

	if (!t)
		return NULL;
	tg_scope_begin();
	if (!softmax_parts("log_softmax", t, axis, &m, &e, &ss))
		r = tg_keep(tg_sub(m, tg_log(ss)));
	tg_scope_end();
	return r;
}

/* ------------------------------------------------------------- cumsum */

/* tinygrad's _cumsum on the last axis: pad n-1 zeros in front (n with
 * first_zero, dropping the last element), pool windows of n, sum. */
static tg_tensor *cumsum_last(const tg_tensor *t, int first_zero)
{
	int64_t n, pads[2 * TG_MAX_DIMS] = { 0 }, k[1];
	size_t last;
	int ax = -1;

	if (!t)  /* the view before failed (out of memory): its error */
		return NULL;
	n = k[0] = t->shape[t->ndim - 1];
	last = t->ndim - 1;
	pads[2 * last] = first_zero ? n : n - (n != 0);
	pads[2 * last + 1] = -first_zero;
	return tg_sum(tg_t_pool(tg_pad(t, t->ndim, pads, 0), 1, k, NULL, NULL),
	              &ax, 1, 0);
}

#define CUMSUM_SPLIT 256

/* Long axes in two levels as tinygrad does: blocks of CUMSUM_SPLIT,
 * then each block plus the running total of the blocks before it. */
static tg_tensor *cumsum_split(const tg_tensor *t)
{
	int64_t n = t->shape[t->ndim - 1], pads[2 * TG_MAX_DIMS] = { 0 };
	int64_t sizes[2] = { -1, CUMSUM_SPLIT }, up, bs[TG_MAX_DIMS];
	tg_slice_spec sl[TG_MAX_DIMS];
	tg_tensor *blocks, *last, *base;
	size_t i, nd = t->ndim;

	up = (n + CUMSUM_SPLIT - 1) / CUMSUM_SPLIT * CUMSUM_SPLIT;
	pads[2 * (nd - 1)] = up - n;
	blocks = cumsum_last(tg_unflatten(tg_pad(t, nd, pads, 0), -1, 2, sizes),
	                     0);
	if (!blocks)
		return NULL;
	for (i = 0; i < nd; i++)
		sl[i] = TG_SLICE_ALL;
	sl[nd] = TG_INDEX_AT(-1);
	last = tg_slice(blocks, nd + 1, sl);
	if (!last)
		return NULL;
	base = cumsum_last(last, 1);
	base = tg_unsqueeze(base, -1);
	memcpy(bs, blocks->shape, (nd + 1) * sizeof *bs);
	base = tg_expand(base, nd + 1, bs);
	blocks = tg_add(tg_flatten(blocks, -2, -1), tg_flatten(base, -2, -1));
	sl[nd - 1] = TG_SLICE(up - n, up);
	return tg_slice(blocks, nd, sl);
}

tg_tensor *tg_cumsum(const tg_tensor *t, int axis)
{
	tg_tensor *x, *r;
	int a;

	if (!t || (a = tg_t_axis("cumsum", axis, t->ndim)) < 0)
		return NULL;
	/* tinygrad returns 0-dim and 0-size inputs as they are (a size-0
	 * axis would make the pool's window empty) */
	if (!t->ndim || !tg_tensor_numel(t))
		return tg_reshape(t, t->ndim, t->shape);
	tg_scope_begin();
	x = tg_transpose(t, a, -1);
	r = t->shape[a] <= 2 * CUMSUM_SPLIT ? cumsum_last(x, 0)
	                                   : cumsum_split(x);
	r = tg_keep(tg_transpose(r, a, -1));
	tg_scope_end();
	return r;
}

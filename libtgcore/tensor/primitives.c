/*
 * tensor/primitives.c - the recorded primitives every tensor op is
 * built from: movement ops, casts, copies, contiguous, assign, and the
 * ALU and reduce primitives.  Each records its autograd node
 * (tensor/autograd.c) when an input needs a gradient.
 */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "device/device.h"
#include "ir/ir.h"
#include "shape/shape.h"

/* The new tensor out, made from t by a movement op, cast or copy,
 * with its autograd node (tensor/autograd.c). */
#define REC(out, kind, t, arg, narg) \
	tg_t_record((out), (kind), 0, (const tg_tensor *const[]){ (t) }, 1, \
	            (arg), (narg))

/* -1 in a symbolic reshape: the old shape's product over the known
 * sizes', computed in the shape context.  TG_DIM_INVALID (error set)
 * when it does not divide. */
static int64_t infer_sym(const tg_tensor *t, size_t ndim,
                         const int64_t *shape, size_t infer)
{
	tg_sint old[TG_MAX_DIMS], nw[TG_MAX_DIMS], a = tg_si(1), k = tg_si(1),
	        q;
	int64_t d = TG_DIM_INVALID;
	tg_ir *ir;
	char b[160];

	if (tg_dims_decode(t->ndim, t->shape, old) ||
	    tg_dims_decode(ndim, shape, nw) || !(ir = tg_symctx_enter()))
		return TG_DIM_INVALID;
	for (size_t i = 0; i < t->ndim; i++)
		a = tg_sint_mul(ir, a, old[i]);
	for (size_t i = 0; i < ndim; i++)
		if (i != infer)
			k = tg_sint_mul(ir, k, nw[i]);
	if (!tg_sint_is(k, 0) && !tg_ir_status(ir)) {
		q = tg_sint_idiv(ir, a, k);
		if (!tg_ir_status(ir) && tg_sint_eq(tg_sint_mul(ir, q, k), a))
			d = tg_dim_encode(q);
	}
	tg_symctx_leave();
	if (d == TG_DIM_INVALID)
		tg_t_fail(TG_EINVAL, "reshape", "cannot infer -1 of %s from "
		          "the other sizes", TG_T_SHAPE(t, b));
	return d;
}

tg_tensor *tg_reshape(const tg_tensor *t, size_t ndim, const int64_t *shape)
{
	int64_t s[TG_MAX_DIMS], known = 1, numel;
	size_t i, infer = SIZE_MAX;
	char b[160];

	if (TG_T_BAD(t, "reshape") ||
	    tg_t_null("reshape", "shape", shape, ndim))
		return NULL;
	if (ndim > TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "reshape", "%zu dims (at most %d)",
		                 ndim, TG_MAX_DIMS);
	for (i = 0; i < ndim; i++) {
		s[i] = shape[i];
		if (shape[i] == -1 && infer == SIZE_MAX)
			infer = i;
		else if (tg_dim_is_sym(shape[i]))
			continue;
		else if (shape[i] < 0)
			return tg_t_fail(TG_EINVAL, "reshape", "bad size %lld "
			                 "in the new shape of %s",
			                 (long long)shape[i], TG_T_SHAPE(t, b));
		else if (__builtin_mul_overflow(known, shape[i], &known))
			return tg_t_fail(TG_EINVAL, "reshape", "the new shape "
			                 "of %s has more than %lld elements",
			                 TG_T_SHAPE(t, b),
			                 (long long)INT64_MAX);
	}
	if (tg_dims_sym(t->ndim, t->shape) || tg_dims_sym(ndim, shape)) {
		/* the tracker checks the sizes symbolically */
		if (infer != SIZE_MAX &&
		    (s[infer] = infer_sym(t, ndim, s, infer)) == TG_DIM_INVALID)
			return NULL;
		return REC(tg_t_wrap(tg_lazy_reshape(t->lazy, ndim, s)),
		           TG_FN_RESHAPE, t, NULL, 0);
	}
	numel = tg_tensor_numel(t);
	if (infer != SIZE_MAX) {
		if (known == 0 || numel % known)
			return tg_t_fail(TG_EINVAL, "reshape", "cannot infer -1: "
			                 "%lld elements of %s into parts of %lld",
			                 (long long)numel, TG_T_SHAPE(t, b),
			                 (long long)known);
		s[infer] = numel / known;
	}
	return REC(tg_t_wrap(tg_lazy_reshape(t->lazy, ndim, s)), TG_FN_RESHAPE,
	           t, NULL, 0);
}

tg_tensor *tg_expand(const tg_tensor *t, size_t ndim, const int64_t *shape)
{
	int64_t s[TG_MAX_DIMS], one[TG_MAX_DIMS];
	size_t i, lead;
	tg_tensor *r, *res;
	char b[160];

	if (TG_T_BAD(t, "expand") || tg_t_null("expand", "shape", shape, ndim))
		return NULL;
	if (ndim > TG_MAX_DIMS || ndim < t->ndim)
		return tg_t_fail(TG_EINVAL, "expand", "cannot expand %s to "
		                 "%zu dims", TG_T_SHAPE(t, b), ndim);
	lead = ndim - t->ndim;
	if (tg_t_too_big("expand", ndim, shape))
		return NULL;
	for (i = 0; i < ndim; i++) {
		one[i] = i < lead ? 1 : t->shape[i - lead];
		s[i] = shape[i] == -1 ? one[i] : shape[i];
		if (one[i] != 1 && s[i] != one[i])
			return tg_t_fail(TG_EINVAL, "expand", "axis %zu of %s is "
			                 "%lld, not 1, and cannot become %lld",
			                 i - lead, TG_T_SHAPE(t, b),
			                 (long long)one[i], (long long)s[i]);
	}
	tg_scope_begin();
	r = lead ? tg_reshape(t, ndim, one) : (tg_tensor *)t;
	res = r ? REC(tg_t_wrap(tg_lazy_expand(r->lazy, ndim, s)),
	              TG_FN_EXPAND, r, NULL, 0) : NULL;
	res = tg_keep(res);
	tg_scope_end();
	return res;
}

tg_tensor *tg_permute(const tg_tensor *t, size_t n, const int *order)
{
	uint32_t ax[TG_MAX_DIMS];
	int64_t arg[TG_MAX_DIMS];
	size_t i;
	int a;

	if (TG_T_BAD(t, "permute") || tg_t_null("permute", "order", order, n))
		return NULL;
	if (n != t->ndim)
		return tg_t_fail(TG_EINVAL, "permute", "%zu axes for %zu dims",
		                 n, t->ndim);
	for (i = 0; i < n; i++) {
		if ((a = tg_t_axis("permute", order[i], n)) < 0)
			return NULL;
		ax[i] = (uint32_t)a;
		arg[i] = a;
	}
	return REC(tg_t_wrap(tg_lazy_permute(t->lazy, n, ax)), TG_FN_PERMUTE,
	           t, arg, n);
}

tg_tensor *tg_flip(const tg_tensor *t, const int *axes, size_t n)
{
	int64_t mul[TG_MAX_DIMS];
	size_t i;
	int a;

	if (TG_T_BAD(t, "flip") || tg_t_null("flip", "axes", axes, n))
		return NULL;
	for (i = 0; i < t->ndim; i++)
		mul[i] = 1;
	for (i = 0; i < n; i++) {
		if ((a = tg_t_axis("flip", axes[i], t->ndim)) < 0)
			return NULL;
		if (mul[a] == -1)
			return tg_t_fail(TG_EINVAL, "flip", "axis %d given twice",
			                 axes[i]);
		mul[a] = -1;
	}
	return tg_t_stride(t, t->ndim, mul);
}

tg_tensor *tg_t_stride(const tg_tensor *t, size_t n, const int64_t *mul)
{
	if (TG_T_BAD(t, "stride"))
		return NULL;
	return REC(tg_t_wrap(tg_lazy_stride(t->lazy, n, mul)), TG_FN_STRIDE,
	           t, mul, n);
}

tg_tensor *tg_t_as_strided(const tg_tensor *t, size_t ndim,
                           const int64_t *shape, const int64_t *strides,
                           int64_t offset)
{
	if (TG_T_BAD(t, "as_strided"))
		return NULL;
	return tg_t_wrap(tg_lazy_as_strided(t->lazy, ndim, shape, strides,
	                                    offset));
}

void tg_t_row_major(const tg_tensor *t, int64_t *s)
{
	int64_t acc = 1;

	for (size_t i = t->ndim; i-- > 0;) {
		s[i] = acc;
		acc *= t->shape[i];
	}
}

tg_tensor *tg_t_window(const tg_tensor *t, size_t nk, const int64_t *k,
                       const int64_t *d)
{
	int64_t shape[TG_MAX_DIMS], st[TG_MAX_DIMS], s[TG_MAX_DIMS];
	int64_t arg[2 * TG_MAX_DIMS];
	size_t lead, i;

	if (TG_T_BAD(t, "pool"))
		return NULL;
	lead = t->ndim - nk;
	tg_t_row_major(t, s);
	for (i = 0; i < lead; i++)
		shape[i] = t->shape[i], st[i] = s[i];
	for (i = 0; i < nk; i++) {
		shape[lead + i] = t->shape[lead + i] - d[i] * (k[i] - 1);
		st[lead + i] = s[lead + i];
		shape[lead + nk + i] = k[i];
		st[lead + nk + i] = d[i] * s[lead + i];
		arg[i] = k[i];
		arg[nk + i] = d[i];
	}
	return REC(tg_t_wrap(tg_lazy_as_strided(t->lazy, lead + 2 * nk, shape,
	                                        st, 0)),
	           TG_FN_WINDOW, t, arg, 2 * nk);
}

/* Whether pairs keep every axis whole: (0, size) for a shrink, (0, 0)
 * for the first n axes of a pad. */
static int no_change(const tg_tensor *t, size_t n, const int64_t *pairs,
                     int shrink)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pairs[2 * i] != 0 ||
		    pairs[2 * i + 1] != (shrink ? t->shape[i] : 0))
			return 0;
	return 1;
}

tg_tensor *tg_shrink(const tg_tensor *t, size_t n, const int64_t *pairs)
{
	if (TG_T_BAD(t, "shrink") || tg_t_null("shrink", "pairs", pairs, n))
		return NULL;
	if (n != t->ndim)
		return tg_t_fail(TG_EINVAL, "shrink", "%zu pairs for %zu dims", n,
		                 t->ndim);
	if (no_change(t, n, pairs, 1))
		return tg_t_same(t);
	return REC(tg_t_wrap(tg_lazy_shrink(t->lazy, n, pairs)), TG_FN_SHRINK,
	           t, pairs, 2 * n);
}

/* Negative padding crops (a shrink), positive pads; a nonzero value is
 * where(mask, x, value) over a padded ones mask, as tinygrad does.
 * Zero amounts everywhere give t itself. */
tg_tensor *tg_pad(const tg_tensor *t, size_t n, const int64_t *pairs,
                  double value)
{
	int64_t pos[2 * TG_MAX_DIMS], crop[2 * TG_MAX_DIMS];
	size_t i;
	tg_tensor *c, *p, *res = NULL;

	if (TG_T_BAD(t, "pad") || tg_t_null("pad", "pairs", pairs, n))
		return NULL;
	if (n > t->ndim)
		return tg_t_fail(TG_EINVAL, "pad", "%zu pairs for %zu dims", n,
		                 t->ndim);
	if (no_change(t, n, pairs, 0))
		return tg_t_same(t);
	for (i = 0; i < t->ndim; i++) {
		int64_t lo = i < n ? pairs[2 * i] : 0;
		int64_t hi = i < n ? pairs[2 * i + 1] : 0;

		if (tg_dim_is_sym(lo) || tg_dim_is_sym(hi) ||
		    tg_dim_is_sym(t->shape[i])) {
			/* symbolic: a pad, never a crop (the tracker checks
			 * that it cannot be negative) */
			if ((!tg_dim_is_sym(lo) && lo < 0) ||
			    (!tg_dim_is_sym(hi) && hi < 0))
				return tg_t_fail(TG_EINVAL, "pad", "axis %zu: a "
				                 "negative pad of a symbolic axis "
				                 "or next to a symbolic pad", i);
			crop[2 * i] = 0;
			crop[2 * i + 1] = t->shape[i];
			pos[2 * i] = lo;
			pos[2 * i + 1] = hi;
			continue;
		}
		crop[2 * i] = lo < 0 ? -lo : 0;
		crop[2 * i + 1] = t->shape[i] - (hi < 0 ? -hi : 0);
		if (crop[2 * i + 1] < crop[2 * i])
			return tg_t_fail(TG_EINVAL, "pad", "axis %zu of size %lld "
			                 "cropped by %lld and %lld", i,
			                 (long long)t->shape[i], (long long)-lo,
			                 (long long)-hi);
		pos[2 * i] = lo > 0 ? lo : 0;
		pos[2 * i + 1] = hi > 0 ? hi : 0;
	}
	tg_scope_begin();
	c = tg_shrink(t, t->ndim, crop);
	p = c ? REC(tg_t_wrap(tg_lazy_pad(c->lazy, t->ndim, pos)), TG_FN_PAD,
	            c, pos, 2 * t->ndim) : NULL;
	if (p && value != 0) {
		tg_tensor *ones = tg_t_const(c, TG_BOOL, 1, c->ndim, c->shape);
		tg_tensor *m = ones ? tg_t_wrap(tg_lazy_pad(ones->lazy, t->ndim,
		                                            pos)) : NULL;
		tg_tensor *v = tg_t_const(p, p->lazy->dtype, value, p->ndim,
		                          p->shape);

		p = tg_t_alu(TG_WHERE, m, p, v);
	}
	res = tg_keep(p);
	tg_scope_end();
	return res;
}

tg_tensor *tg_cast(const tg_tensor *t, tg_dtype dt)
{
	if (TG_T_BAD(t, "cast"))
		return NULL;
	return REC(tg_t_wrap(tg_lazy_cast(t->lazy, dt, 0)), TG_FN_CAST, t,
	           NULL, 0);
}

tg_tensor *tg_bitcast(const tg_tensor *t, tg_dtype dt)
{
	if (TG_T_BAD(t, "bitcast"))
		return NULL;
	return REC(tg_t_wrap(tg_lazy_cast(t->lazy, dt, 1)), TG_FN_BITCAST,
	           t, NULL, 0);
}

tg_tensor *tg_contiguous(const tg_tensor *t)
{
	if (TG_T_BAD(t, "contiguous"))
		return NULL;
	return REC(tg_t_wrap(tg_lazy_contiguous(t->lazy)), TG_FN_CONTIGUOUS,
	           t, NULL, 0);
}

tg_tensor *tg_shard(const tg_tensor *t, tg_dev *group, int axis)
{
	char b[160];

	if (TG_T_BAD(t, "shard"))
		return NULL;
	if (!group || !tg_dev_group_size(group))
		return tg_t_fail(TG_EINVAL, "shard", "%s is not a device group "
		                 "(tg_dev_group makes one)", tg_dev_name(group));
	if (axis < -(int)t->ndim || axis >= (int)t->ndim)
		return tg_t_fail(TG_EINVAL, "shard", "axis %d of a tensor %s",
		                 axis, TG_T_SHAPE(t, b));
	if (axis < 0)
		axis += (int)t->ndim;
	return REC(tg_t_wrap(tg_multi_shard(t->lazy, group, axis)),
	           TG_FN_COPY, t, NULL, 0);
}

int tg_shard_axis(const tg_tensor *t)
{
	if (TG_T_BAD(t, "shard_axis") || !tg_lazy_is_multi(t->lazy))
		return -1;
	return t->lazy->multi->axis;
}

tg_tensor *tg_to(const tg_tensor *t, tg_dev *dev)
{
	if (TG_T_BAD(t, "to"))
		return NULL;
	if (!dev)
		return tg_t_fail(TG_EINVAL, "to", "no device given");
	return REC(tg_t_wrap(tg_lazy_copy(t->lazy, dev)), TG_FN_COPY, t, NULL,
	           0);
}

/* The tensor object stays; its value becomes value's (tinygrad's
 * assign, which optimizers and state loading use to update parameters
 * in place).  Lazy: nothing runs until t is realized. */
/* An assign to a tensor on DISK writes the file now, from a value on
 * any device, as tinygrad's does: no kernel could store it later.
 * The target is a range of the file (a BUFVIEW), the value its
 * realized memory. */
static int assign_disk(tg_tensor *t, const tg_tensor *value)
{
	tg_tensor *dst, *src;
	tg_buffer *db = NULL, *sb = NULL;
	int rc;

	tg_scope_begin();
	dst = tg_contiguous(t);
	src = tg_contiguous(value);
	if (!dst || !src || !(db = tg_tensor_buffer(dst)) ||
	    !(sb = tg_tensor_buffer(src)))
		rc = tg_last_status();
	else
		rc = tg_buffer_transfer(db, sb, NULL);
	tg_buffer_unref(db);
	tg_buffer_unref(sb);
	tg_scope_end();
	return rc ? tg_error_prefix("assign to %s", tg_dev_name(t->lazy->dev))
	          : 0;
}

int tg_assign(tg_tensor *t, const tg_tensor *value)
{
	char b1[160], b2[160];
	tg_lazy *old;

	if (!t || !value)
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (tg_t_dead(t, "assign") || tg_t_dead(value, "assign"))
		return TG_EINVAL;
	if (t->ndim != value->ndim ||
	    memcmp(t->shape, value->shape, t->ndim * sizeof *t->shape))
		return tg_error(TG_EINVAL, "assign: shape %s to a tensor of %s",
		                TG_T_SHAPE(value, b1), TG_T_SHAPE(t, b2));
	if (t->lazy->dtype != value->lazy->dtype)
		return tg_error(TG_EINVAL, "assign: %s to a %s tensor",
		                tg_dtype_name(value->lazy->dtype),
		                tg_dtype_name(t->lazy->dtype));
	if (tg_disk_is(t->lazy->dev))
		return assign_disk(t, value);
	if (t->lazy->dev != value->lazy->dev)
		return tg_error(TG_EINVAL, "assign: a tensor on %s to one on %s",
		                tg_dev_name(value->lazy->dev),
		                tg_dev_name(t->lazy->dev));
	if (t->lazy == value->lazy)
		return 0;
	old = t->lazy;
	if (tg_lazy_is_multi(old)) {
		/* shard by shard, each as below */
		t->lazy = tg_lazy_assign(old, value->lazy);
	} else if (tg_lazy_is_plain(old)) {
		/* realized: write its memory, which the JIT and every view
		 * of it read (tinygrad's assign) */
		t->lazy = tg_lazy_assign(old, value->lazy);
	} else if (tg_lazy_base(old)->kind == TG_LZ_BUFFER &&
	           tg_lazy_numel(old) > 0) {
		/* a view of realized memory: write through the view */
		const char *why;

		if (!tg_lazy_writable_view(old, &why))
			return tg_error(TG_EUNSUPPORTED, "assign: cannot write "
			                "through the view %s: %s (assign to a "
			                "tg_contiguous copy instead)",
			                TG_T_SHAPE(t, b1), why);
		t->lazy = tg_lazy_assign_view(old, value->lazy);
	} else {
		t->lazy = tg_lazy_ref(value->lazy);
	}
	if (!t->lazy) {
		t->lazy = old;
		return tg_error_prefix("assign");
	}
	tg_lazy_unref(old);
	return 0;
}

tg_tensor *tg_t_alu(unsigned op, const tg_tensor *a, const tg_tensor *b,
                    const tg_tensor *c)
{
	const tg_tensor *in[3] = { a, b, c };
	size_t n = tg_op_arity(op), i;

	for (i = 0; i < n; i++)
		if (TG_T_BAD(in[i], tg_op_name(op)))
			return NULL;
	return tg_t_record(tg_t_wrap(tg_lazy_alu(op, a->lazy,
	                                         n > 1 ? b->lazy : NULL,
	                                         n > 2 ? c->lazy : NULL)),
	                   TG_FN_ALU, op, in, n, NULL, 0);
}

/* A reduce starts an operation: its settings snapshot gives the size
 * from which it is split in two kernels (SPLIT_REDUCEOP and
 * REDUCEOP_SPLIT_THRESHOLD; 0: never) and how a multi-device one is
 * all-reduced (RING). */
tg_tensor *tg_t_reduce(unsigned op, const tg_tensor *t, uint32_t axes)
{
	int64_t mask = axes;
	tg_settings set;
	tg_lazy *lb;

	if (TG_T_BAD(t, "reduce"))
		return NULL;
	tg_settings_read(&set);
	lb = tg_lazy_reduce_split(op, t->lazy, axes,
	                          set.split_reduceop ?
	                          set.reduceop_split_threshold : 0,
	                          set.ring);
	return tg_t_record(tg_t_wrap(lb), TG_FN_REDUCE, op, &t, 1, &mask, 1);
}

/* ------------------------------------------------------------- results */

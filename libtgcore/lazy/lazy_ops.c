/*
 * lazy/lazy_ops.c - computing lazy buffers: ALU, cast, reduce,
 * contiguous, copy and assign, with tinygrad's construction-time folding
 * (LazyBuffer.e, cast, r, contiguous, copy_to_device).
 */
#include <stdlib.h>
#include <string.h>

#include "lazy/lazy.h"
#include "device/device.h"
#include "ir/ir.h"

static tg_lazy *base_of(uint8_t kind, unsigned op, tg_dtype dt,
                        tg_dev *dev, const tg_lazy *shape_of,
                        tg_lazy *const *src, uint32_t nsrc)
{
	return tg_lazy_new_base_(kind, op, dt, dev, tg_lazy_ndim(shape_of),
	                         tg_lazy_shape(shape_of), src, nsrc);
}

static const char *dtn(tg_dtype dt) { return tg_dtype_name(dt); }

static void shape_str(const tg_lazy *lb, char *buf, size_t n)
{
	tg_sints_format(tg_lazy_shape(lb), tg_lazy_ndim(lb), buf, n);
}

/* A constant with lb's device, dtype dt and shape. */
static tg_lazy *const_of(const tg_lazy *lb, tg_dtype dt, tg_scalar v)
{
	int64_t s[TG_MAX_DIMS];

	tg_lazy_dims(lb, s);
	return tg_lazy_const(lb->dev, dt, v, tg_lazy_ndim(lb), s);
}

/* Operands agree in shape, device and dtype (WHERE: a bool condition
 * and two values of one dtype). */
static int check_alu(unsigned op, tg_lazy *const *s, size_t n)
{
	size_t i, first = op == TG_WHERE ? 1 : 0;
	char b0[128], b1[128];

	for (i = 1; i < n; i++) {
		if (tg_lazy_ndim(s[i]) != tg_lazy_ndim(s[0]) ||
		    !tg_sints_eq(tg_lazy_shape(s[i]), tg_lazy_shape(s[0]),
		                 tg_lazy_ndim(s[0]))) {
			shape_str(s[0], b0, sizeof b0);
			shape_str(s[i], b1, sizeof b1);
			return tg_error(TG_EINVAL, "%s: shapes %s and %s differ",
			                tg_op_name(op), b0, b1);
		}
		if (s[i]->dev != s[0]->dev)
			return tg_error(TG_EINVAL, "%s: operands on %s and %s",
			                tg_op_name(op), tg_dev_name(s[0]->dev),
			                tg_dev_name(s[i]->dev));
	}
	for (i = first + 1; i < n; i++)
		if (s[i]->dtype != s[first]->dtype)
			return tg_error(TG_EINVAL, "%s: dtypes %s and %s differ",
			                tg_op_name(op), dtn(s[first]->dtype),
			                dtn(s[i]->dtype));
	if (op == TG_WHERE && s[0]->dtype != TG_BOOL)
		return tg_error(TG_EINVAL, "WHERE: condition is %s, not bool",
		                dtn(s[0]->dtype));
	if (op == TG_THREEFRY && s[0]->dtype != TG_UINT64)
		return tg_error(TG_EINVAL, "THREEFRY: operands are %s, not uint64",
		                dtn(s[0]->dtype));
	if (op == TG_NEG && s[0]->dtype == TG_BOOL)
		return tg_error(TG_EINVAL, "NEG: not defined on bool");
	if ((tg_op_flags(op) & TG_OPF_INT) && tg_dtype_is_float(s[n - 1]->dtype))
		return tg_error(TG_EINVAL, "%s: not defined on %s",
		                tg_op_name(op), dtn(s[n - 1]->dtype));
	return 0;
}

/* Folding of all-constant operands; NULL when it does not apply. */
static tg_lazy *fold_consts(unsigned op, tg_lazy *const *s, size_t n,
                            tg_dtype out)
{
	tg_scalar v[3], r;
	size_t i;

	for (i = 0; i < n; i++)
		if (!tg_lazy_is_unmasked_const(s[i], &v[i]))
			return NULL;
	if (tg_exec_alu(op, s[n - 1]->dtype, v, &r))
		return NULL; /* undefined (x/0): left for the device */
	return const_of(s[0], out, r);
}

/* x+0, x*1, x*0, x//1 and -(-x) (tinygrad's e() shortcuts). */
static tg_lazy *fold_identity(unsigned op, tg_lazy *const *s, size_t n)
{
	tg_scalar v;
	tg_lazy *b;
	int i;

	if (op == TG_NEG && !s[0]->base && s[0]->kind == TG_LZ_ALU &&
	    s[0]->op == TG_NEG)
		return tg_lazy_ref(s[0]->src[0]);
	if (n != 2)
		return NULL;
	for (i = 0; i < 2; i++) {
		if (!tg_lazy_is_unmasked_const(s[i], &v))
			continue;
		b = s[1 - i];
		if (op == TG_ADD && tg_scalar_to_double(v, s[i]->dtype) == 0)
			return tg_lazy_ref(b);
		if (op == TG_MUL && tg_scalar_to_double(v, s[i]->dtype) == 1)
			return tg_lazy_ref(b);
		if (op == TG_MUL && tg_scalar_to_double(v, s[i]->dtype) == 0)
			return tg_lazy_ref(s[i]);
		if (op == TG_IDIV && i == 1 &&
		    tg_scalar_to_double(v, s[i]->dtype) == 1)
			return tg_lazy_ref(b);
	}
	return NULL;
}

/* A source that is a base with a live contiguous child reads the
 * child's memory instead (tinygrad's contiguous_child). */
static tg_lazy *through_child(tg_lazy *s)
{
	tg_lazy *child, *v;
	tg_st *st;

	if (s->base)
		return tg_lazy_ref(s);
	if (tg_lazy_child(s, &child, &st) < 0) {
		tg_error_oom("lazy: contiguous child");
		return NULL;
	}
	if (!child)
		return tg_lazy_ref(s);
	v = tg_lazy_view_(child, st);
	tg_lazy_unref(child);
	return v;
}

tg_lazy *tg_lazy_alu(unsigned op, tg_lazy *a, tg_lazy *b, tg_lazy *c)
{
	tg_lazy *in[3] = { a, b, c }, *s[3] = { 0 }, *r = NULL;
	size_t n = tg_op_arity(op), i;
	tg_dtype out;

	if (n == 0)
		return tg_error(TG_EINVAL, "alu: %s is not an ALU op",
		                tg_op_name(op)), NULL;
	for (i = 0; i < n; i++)
		if (tg_lazy_is_multi(in[i]))
			return tg_multi_alu(op, in, n);
	for (i = 0; i < n; i++)
		if (!in[i])
			return NULL;
	if (check_alu(op, in, n))
		return NULL;
	out = (tg_op_flags(op) & TG_OPF_CMP) ? TG_BOOL : in[n - 1]->dtype;
	if ((r = fold_consts(op, in, n, out)) || (r = fold_identity(op, in, n)))
		return r;
	for (i = 0; i < n; i++)
		if (!(s[i] = through_child(in[i])))
			goto out;
	r = base_of(TG_LZ_ALU, op, out, a->dev, a, s, (uint32_t)n);
	r = r ? tg_lazy_finish_(r) : NULL;
out:
	for (i = 0; i < n; i++)
		tg_lazy_unref(s[i]);
	return r;
}

/* On DISK (tinygrad's view_supported_devices, of which tgcore has
 * DISK only) a consecutive range of memory becomes a buffer view
 * instead of a kernel: a, shaped ndim/shape, as dtype dt.  Anything
 * else would need a kernel there, and is refused now with the
 * reason. */
static tg_lazy *disk_view(tg_lazy *a, tg_dtype dt, size_t ndim,
                          const tg_sint *shape, const char *op)
{
	tg_lazy *r;
	char sh[96];

	if (!tg_st_consecutive(a->st) || a->st->views[0]->offset.u ||
	    !tg_sints_all_int(tg_lazy_shape(a), tg_lazy_ndim(a))) {
		shape_str(a, sh, sizeof sh);
		return tg_error(TG_EUNSUPPORTED, "%s: a tensor %s on %s is "
		                "not one contiguous range of the file (a "
		                "permute, stride, pad or expand); only such a "
		                "range can be used there: tg_to another device "
		                "first", op, sh, tg_dev_name(a->dev)), NULL;
	}
	r = tg_lazy_new_base_(TG_LZ_BUFVIEW, 0, dt, a->dev, ndim, shape, &a,
	                      1);
	return r ? tg_lazy_finish_(r) : NULL;
}

/* A bitcast on DISK: a buffer view.  Its size may differ from the
 * source's, as tinygrad allows there alone: the last axis is scaled
 * (and must come out whole). */
static tg_lazy *disk_bitcast(tg_lazy *a, tg_dtype dt)
{
	size_t n = tg_lazy_ndim(a), from = tg_dtype_size(a->dtype),
	       to = tg_dtype_size(dt);
	tg_sint shape[TG_MAX_DIMS];
	char sh[96];

	memcpy(shape, tg_lazy_shape(a), n * sizeof *shape);
	if (!tg_sints_all_int(shape, n))  /* refused there, with the reason */
		return disk_view(a, dt, n, shape, "bitcast");
	if (from != to) {
		int64_t last = n ? shape[n - 1].c * (int64_t)from : (int64_t)from;

		if (last % (int64_t)to || !n) {
			shape_str(a, sh, sizeof sh);
			return tg_error(TG_EINVAL, "bitcast: the last axis of %s "
			                "%s is %lld bytes, not a whole number of "
			                "%s (%zu bytes)", sh, dtn(a->dtype),
			                (long long)last, dtn(dt), to), NULL;
		}
		shape[n - 1] = tg_si(last / (int64_t)to);
	}
	return disk_view(a, dt, n, shape, "bitcast");
}

tg_lazy *tg_lazy_cast(tg_lazy *a, tg_dtype dt, int bitcast)
{
	tg_scalar v, r;
	tg_lazy *res, *b;
	tg_st *st;

	if (!a)
		return NULL;
	if ((unsigned)dt >= TG_NDTYPES)
		return tg_error(TG_EINVAL, "cast: dtype %d is not a dtype",
		                (int)dt), NULL;
	if (dt == a->dtype)
		return tg_lazy_ref(a);
	if (tg_lazy_is_multi(a))
		return tg_multi_cast(a, dt, bitcast);
	if (tg_disk_is(a->dev) && !bitcast)
		return tg_error(TG_EUNSUPPORTED, "cast: a tensor on %s can "
		                "only be bitcast (%s to %s needs a kernel): "
		                "tg_to another device first",
		                tg_dev_name(a->dev), dtn(a->dtype), dtn(dt)),
		       NULL;
	if (tg_disk_is(a->dev))
		return disk_bitcast(a, dt);
	if (bitcast && tg_dtype_size(dt) != tg_dtype_size(a->dtype))
		return tg_error(TG_EINVAL, "bitcast: %s (%zu bytes) to %s "
		                "(%zu bytes); only on DISK may the sizes "
		                "differ", dtn(a->dtype),
		                tg_dtype_size(a->dtype), dtn(dt),
		                tg_dtype_size(dt)), NULL;
	if (tg_lazy_is_unmasked_const(a, &v) &&
	    !(bitcast ? tg_exec_bitcast(v, a->dtype, dt, &r)
	              : tg_exec_cast(v, a->dtype, dt, &r)))
		return const_of(a, dt, r);
	/* Narrowing casts go before the view: fewer bytes move. */
	if (a->base && tg_dtype_size(dt) <= tg_dtype_size(a->dtype)) {
		if (!(b = tg_lazy_cast(a->base, dt, bitcast)))
			return NULL;
		st = tg_st_copy(a->st);
		res = st ? tg_lazy_view_(b, st) : NULL;
		tg_lazy_unref(b);
		return res;
	}
	res = base_of(bitcast ? TG_LZ_BITCAST : TG_LZ_CAST, 0, dt, a->dev, a,
	              &a, 1);
	return res ? tg_lazy_finish_(res) : NULL;
}

/* The identity of a reduce: 0 for ADD, the dtype's least value for MAX. */
static tg_scalar reduce_identity(unsigned op, tg_dtype dt)
{
	tg_scalar z = { 0 };

	return op == TG_MAX ? tg_dtype_min(dt) : z;
}

static tg_lazy *reduce_node(unsigned op, tg_lazy *a, uint32_t axes)
{
	tg_sint shape[TG_MAX_DIMS];
	size_t i, n = tg_lazy_ndim(a);
	tg_lazy *r;

	for (i = 0; i < n; i++)
		shape[i] = (axes >> i) & 1 ? tg_si(1) : tg_lazy_shape(a)[i];
	r = tg_lazy_new_base_(TG_LZ_REDUCE, op, a->dtype, a->dev, n, shape,
	                      &a, 1);
	if (r)
		r->axes = axes;
	return r ? tg_lazy_finish_(r) : NULL;
}

/* The axis and factor tinygrad splits a large reduce on: a reduced axis
 * with a nonzero stride divisible by the largest factor in [8, 256]
 * that keeps the first stage's output under 2^22 elements. */
static int split_choice(const tg_lazy *a, uint32_t axes, int64_t out_n,
                        size_t *axis, int64_t *factor)
{
	size_t n = tg_lazy_ndim(a), i;
	tg_sint strides[TG_MAX_DIMS];
	uint8_t known[TG_MAX_DIMS];
	int64_t top = ((int64_t)1 << 22) / (out_n ? out_n : 1), x;
	tg_ir *ir = tg_ir_new();
	int rc;

	if (!ir)
		return -1;
	rc = tg_st_real_strides(ir, a->st, 1, strides, known);
	if (top > 256)
		top = 256;
	for (i = 0; rc == 0 && i < n; i++) {
		if (!((axes >> i) & 1) || (known[i] && tg_sint_is(strides[i], 0)))
			continue;
		for (x = top; x >= 8; x--)
			if (tg_lazy_shape(a)[i].c % x == 0) {
				*axis = i;
				*factor = x;
				tg_ir_free(ir);
				return 1;
			}
	}
	tg_ir_free(ir);
	return rc < 0 ? rc : 0;
}

/* reduce(x) = reduce_last(reduce(reshape+permute x)): the first kernel
 * keeps `factor` partial results per output, the second folds them. */
static tg_lazy *reduce_split(unsigned op, tg_lazy *a, uint32_t axes,
                             size_t d, int64_t factor)
{
	size_t n = tg_lazy_ndim(a), i, k = 0;
	int64_t shape[TG_MAX_DIMS + 1], out[TG_MAX_DIMS];
	uint32_t perm[TG_MAX_DIMS + 1];
	tg_lazy *sp, *pe, *r1, *r2, *res;

	if (n + 1 > TG_MAX_DIMS)
		return reduce_node(op, a, axes);
	for (i = 0; i < n; i++) {
		out[i] = (axes >> i) & 1 ? 1 : tg_lazy_shape(a)[i].c;
		if (i == d) {
			shape[k++] = factor;
			shape[k++] = tg_lazy_shape(a)[i].c / factor;
		} else {
			shape[k++] = tg_lazy_shape(a)[i].c;
		}
	}
	for (i = 0, k = 0; i <= n; i++)
		if (i != d)
			perm[k++] = (uint32_t)i;
	perm[n] = (uint32_t)d;
	sp = tg_lazy_reshape(a, n + 1, shape);
	pe = tg_lazy_permute(sp, n + 1, perm);
	r1 = pe ? reduce_node(op, pe, axes) : NULL;
	r2 = r1 ? reduce_node(op, r1, (uint32_t)1 << n) : NULL;
	res = tg_lazy_reshape(r2, n, out);
	tg_lazy_unref(sp);
	tg_lazy_unref(pe);
	tg_lazy_unref(r1);
	tg_lazy_unref(r2);
	if (tg_debug_level() >= 3 && res)
		tg_debug_log(3, "split reduce by %lld on axis %zu",
		             (long long)factor, d);
	return res;
}

/* A constant of a's device and dtype in a's shape with `axes` reduced. */
static tg_lazy *reduce_const_(const tg_lazy *a, uint32_t axes, tg_scalar v)
{
	int64_t shape[TG_MAX_DIMS];
	size_t i, n = tg_lazy_ndim(a);

	tg_lazy_dims(a, shape);
	for (i = 0; i < n; i++)
		if ((axes >> i) & 1)
			shape[i] = 1;
	return tg_lazy_const(a->dev, a->dtype, v, n, shape);
}

tg_lazy *tg_lazy_reduce(unsigned op, tg_lazy *a, uint32_t axes)
{
	return tg_lazy_reduce_split(op, a, axes, TG_REDUCE_SPLIT_DEFAULT,
	                            TG_RING_DEFAULT);
}

tg_lazy *tg_lazy_reduce_split(unsigned op, tg_lazy *a, uint32_t axes,
                              int64_t threshold, int ring)
{
	size_t n, i;
	int64_t in_n = 1, out_n = 1, f;
	tg_scalar v, r;
	size_t d;
	int has0 = 0, sym_red = 0, rc;

	if (!a)
		return NULL;
	if (op != TG_ADD && op != TG_MAX)
		return tg_error(TG_EINVAL, "reduce: op %s (only ADD and MAX)",
		                tg_op_name(op)), NULL;
	n = tg_lazy_ndim(a);
	if (tg_lazy_is_multi(a) && !(n < 32 && axes >> n))
		return tg_multi_reduce(op, a, axes, threshold, ring);
	if (n < 32 && axes >> n)
		return tg_error(TG_EINVAL, "reduce: axis mask 0x%x on %zu dims",
		                axes, n), NULL;
	for (i = 0; i < n; i++) {
		tg_sint si = tg_lazy_shape(a)[i];
		int64_t s = tg_sint_vmax(si);

		if (!si.u && s == 1)
			axes &= ~((uint32_t)1 << i);
		sym_red |= si.u && (axes >> i) & 1;
		in_n *= s;
		out_n *= (axes >> i) & 1 ? 1 : s;
		has0 |= !si.u && s == 0;
	}
	if (!axes)
		return tg_lazy_ref(a);
	if (has0 && out_n != 0)
		return reduce_const_(a, axes, reduce_identity(op, a->dtype));
	if (tg_lazy_is_unmasked_const(a, &v) && op == TG_MAX)
		return reduce_const_(a, axes, v);
	if (!sym_red && tg_lazy_is_unmasked_const(a, &v)) {
		tg_scalar cnt = tg_scalar_from_int(in_n / (out_n ? out_n : 1),
		                                   a->dtype), src[2] = { v, cnt };

		if (!tg_exec_alu(TG_MUL, a->dtype, src, &r))
			return reduce_const_(a, axes, r);
	}
	if (!has0 && !tg_lazy_is_sym(a) && threshold > 0 &&
	    in_n / out_n >= threshold) {
		if ((rc = split_choice(a, axes, out_n, &d, &f)) < 0)
			return NULL;
		if (rc)
			return reduce_split(op, a, axes, d, f);
	}
	return reduce_node(op, a, axes);
}

int tg_lazy_is_plain(const tg_lazy *lb)
{
	const tg_lazy *b = tg_lazy_base(lb);

	return b->kind == TG_LZ_BUFFER && b->buf && tg_st_contiguous(lb->st) &&
	       tg_lazy_numel(lb) == tg_lazy_numel(b) && !tg_st_is_sym(lb->st);
}

tg_lazy *tg_lazy_assign(tg_lazy *target, tg_lazy *value)
{
	tg_lazy *b, *r;

	if (!target || !value)
		return NULL;
	if (tg_lazy_is_multi(target) || tg_lazy_is_multi(value))
		return tg_multi_assign(target, value);
	if (TG_NEVER(!tg_lazy_is_plain(target))) {
		tg_error(TG_EINTERNAL, "assign: the target is not a realized "
		         "buffer read in order");
		return NULL;
	}
	b = tg_lazy_base(target);
	r = tg_lazy_new_base_(TG_LZ_ASSIGN, 0, target->dtype, target->dev,
	                      tg_lazy_ndim(target), tg_lazy_shape(target),
	                      (tg_lazy *[]){ value, b }, 2);
	if (!r)
		return NULL;
	/* the kernel writes the target's memory */
	r->buf = tg_buffer_ref(b->buf);
	return tg_lazy_finish_(r);
}

int tg_lazy_writable_view(const tg_lazy *view, const char **why)
{
	const tg_lazy *b = tg_lazy_base(view);
	const tg_view *v = view->st->views[0];
	uint32_t i;

	*why = NULL;
	if (b->kind != TG_LZ_BUFFER || !b->buf)
		*why = "its memory is not realized";
	else if (view->st->nviews != 1)
		*why = "it is a reshape no single view can express";
	else if (v->mask)
		*why = "it is padded";
	for (i = 0; !*why && i < v->ndim; i++)
		if (v->shape[i].c > 1 && v->strides[i].c == 0)
			*why = "it broadcasts an axis (several elements would be "
			       "one)";
	return !*why;
}

tg_lazy *tg_lazy_assign_view(tg_lazy *view, tg_lazy *value)
{
	tg_lazy *b, *val, *r, *res;
	const char *why;
	tg_st *st;

	if (!view || !value)
		return NULL;
	if (TG_NEVER(!tg_lazy_writable_view(view, &why))) {
		tg_error(TG_EINTERNAL, "assign: the target view %s", why);
		return NULL;
	}
	b = tg_lazy_base(view);
	if (!(val = tg_lazy_contiguous(value)))
		return NULL;
	r = tg_lazy_new_base_(TG_LZ_ASSIGN, 0, b->dtype, b->dev,
	                      tg_lazy_ndim(b), tg_lazy_shape(b),
	                      (tg_lazy *[]){ val, b }, 2);
	tg_lazy_unref(val);
	if (!r)
		return NULL;
	r->buf = tg_buffer_ref(b->buf);
	if (!(r->assign_st = tg_st_copy(view->st)) ||
	    !(r = tg_lazy_finish_(r)))
		return tg_lazy_unref(r), (tg_lazy *)NULL;
	st = tg_st_copy(view->st);
	res = st ? tg_lazy_view_(r, st) : NULL;
	tg_lazy_unref(r);
	return res;
}

tg_lazy *tg_lazy_contiguous(tg_lazy *a)
{
	tg_lazy *base, *r;
	tg_st *inv = NULL;

	if (!a)
		return NULL;
	if (tg_lazy_is_multi(a))
		return tg_multi_contiguous(a);
	base = tg_lazy_base(a);
	if (tg_disk_is(a->dev) && !(tg_st_contiguous(a->st) &&
	                             tg_lazy_numel(a) == tg_lazy_numel(base)))
		return disk_view(a, a->dtype, tg_lazy_ndim(a),
		                 tg_lazy_shape(a), "contiguous");
	if (tg_st_contiguous(a->st) &&
	    tg_lazy_numel(a) == tg_lazy_numel(base) &&
	    !tg_lazy_is_unmasked_const(a, NULL) && base->kind != TG_LZ_CONST) {
		atomic_store_explicit(&base->forced_realize, 1, memory_order_relaxed);
		return tg_lazy_ref(a);
	}
	r = tg_lazy_new_base_(TG_LZ_CONTIGUOUS, 0, a->dtype, a->dev,
	                      tg_lazy_ndim(a), tg_lazy_shape(a), &a, 1);
	if (!r || !(r = tg_lazy_finish_(r)))
		return NULL;
	if (a->base &&
	    tg_st_invert(NULL, a->st, tg_lazy_ndim(base), tg_lazy_shape(base),
	                 &inv) == 0 && inv)
		tg_lazy_set_child(base, r, inv);
	return r;
}

/* COPY of src to dev, shaped like `like` (same element count). */
static tg_lazy *tg_lazy_copy_base_(tg_lazy *src, tg_dev *dev,
                                   const tg_lazy *like)
{
	int64_t shape[TG_MAX_DIMS];
	size_t n = tg_lazy_ndim(like);
	tg_lazy *c, *r;

	if (src->dev == dev)
		c = tg_lazy_ref(src);
	else
		c = tg_lazy_new_base_(TG_LZ_COPY, 0, src->dtype, dev,
	                      tg_lazy_ndim(src), tg_lazy_shape(src), &src, 1);
	if (c && c != src)
		c = tg_lazy_finish_(c);
	if (!c)
		return NULL;
	tg_lazy_dims(like, shape);
	r = tg_lazy_reshape(c, n, shape);
	tg_lazy_unref(c);
	return r;
}

tg_lazy *tg_lazy_copy(tg_lazy *a, tg_dev *dev)
{
	tg_lazy *base, *c, *r;
	tg_st *st;

	if (!a || !dev)
		return NULL;
	if (a->dev == dev)
		return tg_lazy_ref(a);
	if (tg_lazy_is_multi(a))
		return tg_multi_copy(a, dev);
	if (dev->ngroup)  /* tinygrad's to(tuple): a copy on each */
		return tg_multi_shard(a, dev, -1);
	base = tg_lazy_base(a);
	if (base->kind == TG_LZ_CONST) {
		c = tg_lazy_const(dev, a->dtype, base->value, 0, NULL);
		st = tg_st_copy(a->st);
		r = c && st ? tg_lazy_view_(c, st) : (tg_st_free(st), NULL);
		tg_lazy_unref(c);
		return r;
	}
	if (!tg_st_contiguous(a->st) ||
	    tg_lazy_numel(a) != tg_lazy_numel(base)) {
		c = tg_lazy_contiguous(a);
		r = tg_lazy_copy(c, dev);
		tg_lazy_unref(c);
		return r;
	}
	/* copy of a copy: copy the original */
	if (base->kind == TG_LZ_COPY)
		return tg_lazy_copy_base_(base->src[0], dev, a);
	return tg_lazy_copy_base_(base, dev, a);
}

/*
 * tensor/elementwise.c - elementwise tensor ops (tinygrad's tensor.py
 * binary math): broadcasting, promotion, the binary ops and their
 * scalar variants, where and lerp, all built from tg_t_alu.  The unary
 * ops and the activations are in unary.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "ir/ir.h"

/* ------------------------------------------------------- broadcasting */

tg_dtype tg_t_scalar_dtype(tg_dtype dt, double v)
{
	if (tg_dtype_is_float(dt))
		return dt;
	if (isfinite(v) && v == floor(v))
		return dt;
	return tg_dtype_default_float();
}

static void shape_str(size_t n, const int64_t *s, char *buf, size_t len)
{
	size_t i, o = 0;

	o += (size_t)snprintf(buf + o, len - o, "(");
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld",
		                      i ? "," : "", (long long)s[i]);
	if (n == 1 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ",");
	if (o < len)
		snprintf(buf + o, len - o, ")");
}

/* The numpy broadcast of two shapes into out (TG_MAX_DIMS); -1 when
 * they don't broadcast (message set). */
static int bshape(const char *op, size_t na, const int64_t *sa, size_t nb,
                  const int64_t *sb, int64_t *out, size_t *nout)
{
	size_t n = na > nb ? na : nb, i;

	for (i = 0; i < n; i++) {
		int64_t x = i < na ? sa[na - 1 - i] : 1;
		int64_t y = i < nb ? sb[nb - 1 - i] : 1;
		if (x != y && x != 1 && y != 1) {
			char b1[128], b2[128];
			shape_str(na, sa, b1, sizeof b1);
			shape_str(nb, sb, b2, sizeof b2);
			tg_t_fail(TG_EINVAL, op, "shapes %s and %s don't broadcast",
			          b1, b2);
			return -1;
		}
		out[n - 1 - i] = x == 1 ? y : x;
	}
	*nout = n;
	return 0;
}

/* A new (scope-held) reference to the same values. */
tg_tensor *tg_t_view(const tg_tensor *t)
{
	return t ? tg_reshape(t, t->ndim, t->shape) : NULL;
}

/* t reshaped (leading 1s) and expanded to shape. */
static tg_tensor *expand_to(const tg_tensor *t, size_t n, const int64_t *s)
{
	int64_t rs[TG_MAX_DIMS];
	size_t i, pad = n - t->ndim;
	tg_tensor *r;

	if (t->ndim == n && !memcmp(t->shape, s, n * sizeof *s))
		return tg_t_view(t);
	for (i = 0; i < n; i++)
		rs[i] = i < pad ? 1 : t->shape[i - pad];
	tg_scope_begin();
	r = tg_keep(tg_expand(tg_reshape(t, n, rs), n, s));
	tg_scope_end();
	return r;
}

static tg_tensor *cast_to(const tg_tensor *t, tg_dtype dt)
{
	if (!t)
		return NULL;
	if (tg_tensor_dtype(t) == dt)
		return tg_t_view(t);
	return tg_cast(t, dt);
}

int tg_t_broadcast2(const char *op, const tg_tensor *a, const tg_tensor *b,
                    tg_tensor **ra, tg_tensor **rb)
{
	int64_t s[TG_MAX_DIMS];
	size_t n;
	tg_dtype dt;
	tg_tensor *x, *y;

	*ra = *rb = NULL;
	if (!a || !b)
		return TG_EINVAL;
	if (tg_t_same_dev(op, a, b))
		return TG_EINVAL;
	if (bshape(op, a->ndim, a->shape, b->ndim, b->shape, s, &n))
		return TG_EINVAL;
	dt = tg_dtype_lub(tg_tensor_dtype(a), tg_tensor_dtype(b));
	tg_scope_begin();
	x = cast_to(expand_to(a, n, s), dt);
	y = cast_to(expand_to(b, n, s), dt);
	if (!x || !y) {
		tg_scope_end();
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	}
	{
		tg_tensor *xy[2] = { x, y };
		int rc = tg_t_keep_all(xy, 2);

		tg_scope_end();
		if (rc)
			return rc;
	}
	*ra = x;
	*rb = y;
	return 0;
}

/* ------------------------------------------------------------ helpers */

int tg_t_is_float(const tg_tensor *t)
{
	return tg_dtype_is_float(tg_tensor_dtype(t));
}

/* A scalar constant shaped like t (the scalar's dtype rule applied). */
static tg_tensor *scal(const tg_tensor *t, double v)
{
	return tg_t_const(t, tg_t_scalar_dtype(tg_tensor_dtype(t), v), v,
	                  t->ndim, t->shape);
}

/* Same dtype and shape as t. */
tg_tensor *tg_t_like(const tg_tensor *t, double v)
{
	return t ? tg_t_const_like(t, v) : NULL;
}

/* t cast to the default float unless already float. */
tg_tensor *tg_t_floatify(const tg_tensor *t)
{
	if (!t)
		return NULL;
	return cast_to(t, tg_t_is_float(t) ? tg_tensor_dtype(t)
	                                   : tg_dtype_default_float());
}

/* Broadcast and apply one ALU op; checks. */
enum { NEED_INT = 1, NEED_FLOAT_OK = 0 };
static tg_tensor *binop(const char *name, unsigned op, const tg_tensor *a,
                        const tg_tensor *b, int flags)
{
	tg_tensor *x, *y, *r = NULL;

	if (!a || !b)
		return NULL;
	tg_scope_begin();
	if (tg_t_broadcast2(name, a, b, &x, &y)) {
		tg_scope_end();
		return NULL;
	}
	if ((flags & NEED_INT) && tg_t_is_float(x))
		r = tg_t_fail(TG_EINVAL, name, "not defined on %s",
		              tg_dtype_name(tg_tensor_dtype(x)));
	else
		r = tg_keep(tg_t_alu(op, x, y, NULL));
	tg_scope_end();
	return r;
}

#define SCALAR_VARIANT(name)                                     \
	tg_tensor *tg_##name##_s(const tg_tensor *a, double b)   \
	{                                                        \
		tg_tensor *r;                                    \
		if (!a)                                          \
			return NULL;                             \
		tg_scope_begin();                                \
		r = tg_keep(tg_##name(a, scal(a, b)));           \
		tg_scope_end();                                  \
		return r;                                        \
	}

/* ------------------------------------------------------------- binary */

tg_tensor *tg_add(const tg_tensor *a, const tg_tensor *b)
{
	return binop("add", TG_ADD, a, b, 0);
}

tg_tensor *tg_mul(const tg_tensor *a, const tg_tensor *b)
{
	return binop("mul", TG_MUL, a, b, 0);
}

tg_tensor *tg_neg(const tg_tensor *t)
{
	if (!t)
		return NULL;
	if (tg_tensor_dtype(t) == TG_BOOL)
		return tg_logical_not(t);
	return tg_t_alu(TG_NEG, t, NULL, NULL);
}

tg_tensor *tg_sub(const tg_tensor *a, const tg_tensor *b)
{
	tg_tensor *x, *y, *r;

	if (!a || !b)
		return NULL;
	tg_scope_begin();
	if (tg_t_broadcast2("sub", a, b, &x, &y)) {
		tg_scope_end();
		return NULL;
	}
	r = tg_keep(tg_t_alu(TG_ADD, x, tg_neg(y), NULL));
	tg_scope_end();
	return r;
}

tg_tensor *tg_div(const tg_tensor *a, const tg_tensor *b)
{
	tg_tensor *x, *y, *r;

	if (!a || !b)
		return NULL;
	tg_scope_begin();
	if (tg_t_broadcast2("div", a, b, &x, &y)) {
		tg_scope_end();
		return NULL;
	}
	r = tg_keep(tg_t_alu(TG_MUL, tg_t_floatify(x),
	                     tg_t_alu(TG_RECIP, tg_t_floatify(y), NULL, NULL),
	                     NULL));
	tg_scope_end();
	return r;
}

tg_tensor *tg_idiv(const tg_tensor *a, const tg_tensor *b)
{
	return binop("idiv", TG_IDIV, a, b, NEED_INT);
}

tg_tensor *tg_maximum(const tg_tensor *a, const tg_tensor *b)
{
	return binop("maximum", TG_MAX, a, b, 0);
}

tg_tensor *tg_lt(const tg_tensor *a, const tg_tensor *b)
{
	return binop("lt", TG_CMPLT, a, b, 0);
}

tg_tensor *tg_gt(const tg_tensor *a, const tg_tensor *b)
{
	return binop("gt", TG_CMPLT, b, a, 0);
}

tg_tensor *tg_ne(const tg_tensor *a, const tg_tensor *b)
{
	return binop("ne", TG_CMPNE, a, b, 0);
}

tg_tensor *tg_logical_not(const tg_tensor *t)
{
	tg_tensor *r, *x;

	if (!t)
		return NULL;
	tg_scope_begin();
	x = cast_to(t, TG_BOOL);
	r = tg_keep(tg_t_alu(TG_XOR, x, tg_t_like(x, 1), NULL));
	tg_scope_end();
	return r;
}

#define NOT_OF(name, inner)                                            \
	tg_tensor *tg_##name(const tg_tensor *a, const tg_tensor *b)   \
	{                                                              \
		tg_tensor *r;                                          \
		if (!a || !b)                                          \
			return NULL;                                   \
		tg_scope_begin();                                      \
		r = tg_keep(tg_logical_not(inner));                    \
		tg_scope_end();                                        \
		return r;                                              \
	}
NOT_OF(eq, binop("eq", TG_CMPNE, a, b, 0))
NOT_OF(le, binop("le", TG_CMPLT, b, a, 0))
NOT_OF(ge, binop("ge", TG_CMPLT, a, b, 0))

tg_tensor *tg_minimum(const tg_tensor *a, const tg_tensor *b)
{
	tg_tensor *x, *y, *r;

	if (!a || !b)
		return NULL;
	tg_scope_begin();
	if (tg_t_broadcast2("minimum", a, b, &x, &y)) {
		tg_scope_end();
		return NULL;
	}
	if (tg_t_is_float(x))
		r = tg_t_alu(TG_NEG, tg_t_alu(TG_MAX, tg_t_alu(TG_NEG, x, NULL, NULL),
		                              tg_t_alu(TG_NEG, y, NULL, NULL), NULL),
		             NULL, NULL);
	else
		r = tg_t_alu(TG_WHERE, tg_t_alu(TG_CMPLT, x, y, NULL), x, y);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

tg_tensor *tg_bitwise_xor(const tg_tensor *a, const tg_tensor *b)
{
	return binop("bitwise_xor", TG_XOR, a, b, NEED_INT);
}

tg_tensor *tg_bitwise_and(const tg_tensor *a, const tg_tensor *b)
{
	return binop("bitwise_and", TG_AND, a, b, NEED_INT);
}

tg_tensor *tg_bitwise_or(const tg_tensor *a, const tg_tensor *b)
{
	return binop("bitwise_or", TG_OR, a, b, NEED_INT);
}

tg_tensor *tg_lshift(const tg_tensor *a, const tg_tensor *b)
{
	return binop("lshift", TG_SHL, a, b, NEED_INT);
}

tg_tensor *tg_rshift(const tg_tensor *a, const tg_tensor *b)
{
	return binop("rshift", TG_SHR, a, b, NEED_INT);
}

/* Python's modulo (the divisor's sign); floats as a - b*floor(a/b). */
tg_tensor *tg_mod(const tg_tensor *a, const tg_tensor *b)
{
	tg_tensor *x, *y, *r;

	if (!a || !b)
		return NULL;
	tg_scope_begin();
	if (tg_t_broadcast2("mod", a, b, &x, &y)) {
		tg_scope_end();
		return NULL;
	}
	if (tg_t_is_float(x)) {
		r = tg_sub(x, tg_mul(y, tg_floor(tg_div(x, y))));
	} else if (tg_tensor_dtype(x) == TG_BOOL) {
		r = tg_t_fail(TG_EINVAL, "mod", "not defined on bool");
	} else {
		tg_tensor *m = tg_t_alu(TG_MOD, x, y, NULL);
		if (tg_dtype_is_unsigned(tg_tensor_dtype(x))) {
			r = m;
		} else {
			tg_tensor *z = tg_t_like(m, 0);
			/* m != 0 and (m < 0) != (y < 0) */
			tg_tensor *fix = tg_t_alu(
				TG_AND, tg_t_alu(TG_CMPNE, m, z, NULL),
				tg_t_alu(TG_CMPNE, tg_t_alu(TG_CMPLT, m, z, NULL),
				         tg_t_alu(TG_CMPLT, y, z, NULL), NULL),
				NULL);
			r = tg_t_alu(TG_WHERE, fix, tg_t_alu(TG_ADD, m, y, NULL), m);
		}
	}
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* pow: float (ints promote), exp2(b*log2|a|) with the sign fixed for
 * negative bases and integral exponents (NaN otherwise); x**0 = 1. */
tg_tensor *tg_pow(const tg_tensor *a, const tg_tensor *b)
{
	tg_tensor *x, *y, *r;

	if (!a || !b)
		return NULL;
	tg_scope_begin();
	if (tg_t_broadcast2("pow", a, b, &x, &y)) {
		tg_scope_end();
		return NULL;
	}
	{
		tg_tensor *fx = tg_t_floatify(x), *fy = tg_t_floatify(y);
		tg_tensor *mag = tg_exp2(tg_mul(tg_log2(tg_abs(fx)), fy));
		tg_tensor *isint = tg_eq(tg_trunc(fy), fy);
		tg_tensor *odd = tg_ne(tg_mul_s(tg_trunc(tg_mul_s(fy, 0.5)), 2), fy);
		tg_tensor *neg = tg_lt_s(fx, 0);
		tg_tensor *nb = tg_where(isint, tg_where(odd, tg_neg(mag), mag),
		                         tg_t_like(mag, NAN));
		r = tg_where(tg_eq_s(fy, 0), tg_t_like(mag, 1),
		             tg_where(neg, nb, mag));
		if (r && !tg_t_is_float(x))
			r = tg_cast(tg_round(r), tg_tensor_dtype(x));
	}
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

static tg_tensor *pow_int(const tg_tensor *t, long e)
{
	tg_tensor *acc = NULL, *p = (tg_tensor *)t;

	if (e == 0)
		return tg_full_like(t, 1);
	while (e) {
		if (e & 1)
			acc = acc ? tg_mul(acc, p) : tg_t_view(p);
		e >>= 1;
		if (e)
			p = tg_mul(p, p);
	}
	return acc;
}

tg_tensor *tg_pow_s(const tg_tensor *a, double b)
{
	tg_tensor *r;

	if (!a)
		return NULL;
	tg_scope_begin();
	if (b == floor(b) && fabs(b) <= 64) {
		if (b < 0)
			r = pow_int(tg_reciprocal(a), (long)-b);
		else
			r = pow_int(a, (long)b);
	} else if (b == floor(b) + 0.5 && fabs(b) <= 64 && b > 0) {
		r = tg_mul(pow_int(tg_t_floatify(a), (long)floor(b)),
		           tg_sqrt(a));
	} else {
		r = tg_pow(a, scal(a, b));
	}
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

SCALAR_VARIANT(add)
SCALAR_VARIANT(sub)
SCALAR_VARIANT(mul)
SCALAR_VARIANT(div)
SCALAR_VARIANT(idiv)
SCALAR_VARIANT(mod)
SCALAR_VARIANT(maximum)
SCALAR_VARIANT(minimum)
SCALAR_VARIANT(bitwise_xor)
SCALAR_VARIANT(bitwise_and)
SCALAR_VARIANT(bitwise_or)
SCALAR_VARIANT(lshift)
SCALAR_VARIANT(rshift)
SCALAR_VARIANT(lt)
SCALAR_VARIANT(le)
SCALAR_VARIANT(gt)
SCALAR_VARIANT(ge)
SCALAR_VARIANT(eq)
SCALAR_VARIANT(ne)

tg_tensor *tg_rsub_s(const tg_tensor *a, double b)
{
	tg_tensor *r;

	if (!a)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_sub(scal(a, b), a));
	tg_scope_end();
	return r;
}

tg_tensor *tg_rdiv_s(const tg_tensor *a, double b)
{
	tg_tensor *r;

	if (!a)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_div(scal(a, b), a));
	tg_scope_end();
	return r;
}

tg_tensor *tg_rpow_s(const tg_tensor *a, double b)
{
	tg_tensor *r;

	if (!a)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_pow(scal(a, b), a));
	tg_scope_end();
	return r;
}

tg_tensor *tg_where(const tg_tensor *cond, const tg_tensor *a,
                    const tg_tensor *b)
{
	tg_tensor *x, *y, *r;
	int64_t s[TG_MAX_DIMS];
	size_t n;

	if (!cond || !a || !b)
		return NULL;
	tg_scope_begin();
	if (tg_t_broadcast2("where", a, b, &x, &y)) {
		tg_scope_end();
		return NULL;
	}
	if (tg_t_same_dev("where", cond, x) ||
	    bshape("where", cond->ndim, cond->shape, x->ndim, x->shape, s, &n)) {
		r = NULL;
	} else {
		tg_tensor *c, *xx, *yy;
		c = cast_to(expand_to(cond, n, s), TG_BOOL);
		xx = expand_to(x, n, s);
		yy = expand_to(y, n, s);
		r = tg_keep(tg_t_alu(TG_WHERE, c, xx, yy));
	}
	tg_scope_end();
	return r;
}

tg_tensor *tg_where_s(const tg_tensor *cond, double a, double b)
{
	tg_dtype dt;
	tg_tensor *r;

	if (!cond)
		return NULL;
	/* Python ints stay int; inf and nan are floats */
	dt = (isfinite(a) && isfinite(b) && a == floor(a) && b == floor(b))
	     ? TG_INT32 : tg_dtype_default_float();
	tg_scope_begin();
	r = tg_keep(tg_where(cond, tg_t_const(cond, dt, a, cond->ndim, cond->shape),
	                     tg_t_const(cond, dt, b, cond->ndim, cond->shape)));
	tg_scope_end();
	return r;
}

tg_tensor *tg_masked_fill(const tg_tensor *t, const tg_tensor *mask,
                          double value)
{
	tg_tensor *r;

	if (!t || !mask)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_where(mask, scal(t, value), t));
	tg_scope_end();
	return r;
}

tg_tensor *tg_lerp(const tg_tensor *a, const tg_tensor *b, const tg_tensor *w)
{
	tg_tensor *r;

	if (!a || !b || !w)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_add(a, tg_mul(tg_sub(b, a), w)));
	tg_scope_end();
	return r;
}

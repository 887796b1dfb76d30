/*
 * tensor/unary.c - unary tensor ops (tinygrad's tensor.py unary math
 * and activations): the transcendentals and their compositions,
 * rounding, sign, abs and bitwise not, and the activations (relu,
 * sigmoid, gelu, mish, elu, softplus, clip and the rest), all built
 * from tg_t_alu and the binary ops.  Separate from elementwise.c:
 * each takes one tensor, so broadcasting and promotion are reached
 * only through the binary ops it calls.
 */
#include <math.h>

#include "tensor/tensor.h"
#include "ir/ir.h"

#define LN2 0.69314718055994530942
#define LOG2E 1.44269504088896340736
#define PI_2 1.57079632679489661923

/* Defines tg_NAME(t) as EXPR over `x` (t, or t as a float when FL). */
#define UNARY(name, fl, expr)                                    \
	tg_tensor *tg_##name(const tg_tensor *t)                 \
	{                                                        \
		tg_tensor *r, *x;                                \
		if (!t)                                          \
			return NULL;                             \
		tg_scope_begin();                                \
		x = (fl) ? tg_t_floatify(t) : (tg_tensor *)t;    \
		r = tg_keep(expr);                               \
		tg_scope_end();                                  \
		return r;                                        \
	}

UNARY(log2, 1, tg_t_alu(TG_LOG2, x, NULL, NULL))
UNARY(exp2, 1, tg_t_alu(TG_EXP2, x, NULL, NULL))
UNARY(sqrt, 1, tg_t_alu(TG_SQRT, x, NULL, NULL))
UNARY(sin, 1, tg_t_alu(TG_SIN, x, NULL, NULL))
UNARY(reciprocal, 1, tg_t_alu(TG_RECIP, x, NULL, NULL))
UNARY(log, 1, tg_mul_s(tg_log2(x), LN2))
UNARY(exp, 1, tg_exp2(tg_mul_s(x, LOG2E)))
UNARY(rsqrt, 1, tg_reciprocal(tg_sqrt(x)))
UNARY(cos, 1, tg_sin(tg_rsub_s(x, PI_2)))
UNARY(tan, 1, tg_div(tg_sin(x), tg_cos(x)))
UNARY(square, 0, tg_mul(x, x))
/* max(x, 0) with tinygrad's Relu gradient: 0 at 0 (maximum's would
 * split it). */
tg_tensor *tg_relu(const tg_tensor *t)
{
	tg_tensor *r;
	int was;

	if (!t)
		return NULL;
	was = tg_set_grad_enabled(0);
	r = tg_maximum_s(t, 0);
	tg_set_grad_enabled(was);
	return tg_t_record(r, TG_FN_RELU, 0, &t, 1, NULL, 0);
}
UNARY(sigmoid, 1,
      tg_reciprocal(tg_add_s(tg_exp2(tg_mul_s(x, -1 / LN2)), 1)))
UNARY(tanh, 1, tg_sub_s(tg_mul_s(tg_sigmoid(tg_mul_s(x, 2)), 2), 1))
UNARY(silu, 1, tg_mul(x, tg_sigmoid(x)))
UNARY(swish, 1, tg_silu(x))
UNARY(relu6, 0, tg_sub(tg_relu(x), tg_relu(tg_sub_s(x, 6))))
UNARY(hardswish, 1, tg_mul_s(tg_mul(x, tg_relu6(tg_add_s(x, 3))), 1.0 / 6))
UNARY(hardsigmoid, 1,
      tg_sub(tg_relu(tg_add_s(tg_mul_s(x, 1.0 / 6), 0.5)),
             tg_relu(tg_sub_s(tg_add_s(tg_mul_s(x, 1.0 / 6), 0.5), 1))))
UNARY(gelu, 1,
      tg_mul(tg_mul_s(x, 0.5),
             tg_add_s(tg_tanh(tg_mul(tg_mul_s(x, 0.7978845608028654),
                                     tg_add_s(tg_mul_s(tg_square(x), 0.044715),
                                              1))),
                      1)))
UNARY(quick_gelu, 1, tg_mul(x, tg_sigmoid(tg_mul_s(x, 1.702))))
UNARY(mish, 1, tg_mul(x, tg_tanh(tg_softplus(x, 1))))
UNARY(softsign, 1, tg_div(x, tg_add_s(tg_abs(x), 1)))
UNARY(sinh, 1, tg_mul_s(tg_sub(tg_exp(x), tg_exp(tg_neg(x))), 0.5))
UNARY(cosh, 1, tg_mul_s(tg_add(tg_exp(x), tg_exp(tg_neg(x))), 0.5))
UNARY(atanh, 1,
      tg_mul_s(tg_log(tg_div(tg_add_s(x, 1), tg_rsub_s(x, 1))), 0.5))
UNARY(asinh, 1, tg_log(tg_add(x, tg_sqrt(tg_add_s(tg_square(x), 1)))))
UNARY(acosh, 1, tg_log(tg_add(x, tg_sqrt(tg_sub_s(tg_square(x), 1)))))

tg_tensor *tg_trunc(const tg_tensor *t)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	if (!tg_t_is_float(t))
		return tg_t_view(t);
	tg_scope_begin();
	r = tg_keep(tg_cast(tg_cast(t, TG_INT32), tg_tensor_dtype(t)));
	tg_scope_end();
	return r;
}

/* trunc(t) moved one step toward -inf (dir -1, floor) or +inf (dir 1,
 * ceil) where it lies on the wrong side of t. */
static tg_tensor *trunc_toward(const tg_tensor *t, int dir)
{
	tg_tensor *r, *b;

	if (!t)
		return NULL;
	if (!tg_t_is_float(t))
		return tg_t_view(t);
	tg_scope_begin();
	b = tg_trunc(t);
	r = tg_keep(tg_where(dir < 0 ? tg_gt(b, t) : tg_lt(b, t),
	                     tg_add_s(b, dir), b));
	tg_scope_end();
	return r;
}

tg_tensor *tg_floor(const tg_tensor *t) { return trunc_toward(t, -1); }
tg_tensor *tg_ceil(const tg_tensor *t) { return trunc_toward(t, 1); }

/* Half to even. */
tg_tensor *tg_round(const tg_tensor *t)
{
	tg_tensor *r, *f, *d, *odd;

	if (!t)
		return NULL;
	if (!tg_t_is_float(t))
		return tg_t_view(t);
	tg_scope_begin();
	f = tg_floor(t);
	d = tg_sub(t, f);
	/* f odd: f - 2*floor(f/2) */
	odd = tg_sub(f, tg_mul_s(tg_floor(tg_mul_s(f, 0.5)), 2));
	r = tg_where(tg_gt_s(d, 0.5), tg_add_s(f, 1),
	             tg_where(tg_lt_s(d, 0.5), f, tg_add(f, odd)));
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

tg_tensor *tg_sign(const tg_tensor *t)
{
	tg_tensor *r;
	tg_dtype dt;

	if (!t)
		return NULL;
	dt = tg_tensor_dtype(t);
	tg_scope_begin();
	if (dt == TG_BOOL)
		r = tg_t_view(t);
	else
		r = tg_sub(tg_cast(tg_gt_s(t, 0), dt), tg_cast(tg_lt_s(t, 0), dt));
	/* NaN stays NaN (numpy, PyTorch; tinygrad mid-2024 gave 1) */
	if (tg_t_is_float(t))
		r = tg_where(tg_ne(t, t), t, r);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

tg_tensor *tg_abs(const tg_tensor *t)
{
	tg_tensor *r;
	tg_dtype dt;

	if (!t)
		return NULL;
	dt = tg_tensor_dtype(t);
	if (dt == TG_BOOL || tg_dtype_is_unsigned(dt))
		return tg_t_view(t);
	tg_scope_begin();
	r = tg_keep(tg_where(tg_lt_s(t, 0), tg_neg(t), t));
	tg_scope_end();
	return r;
}

tg_tensor *tg_bitwise_not(const tg_tensor *t)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	if (tg_tensor_dtype(t) == TG_BOOL)
		return tg_logical_not(t);
	if (tg_t_is_float(t))
		return tg_t_fail(TG_EINVAL, "bitwise_not", "not defined on %s",
		                 tg_dtype_name(tg_tensor_dtype(t)));
	tg_scope_begin();
	r = tg_keep(tg_t_alu(TG_XOR, t,
	                     tg_t_like(t, tg_dtype_is_unsigned(
	                                      tg_tensor_dtype(t))
	                                  ? ldexp(1.0, 8 * (int)tg_dtype_size(
	                                               tg_tensor_dtype(t))) - 1
	                                  : -1),
	                     NULL));
	tg_scope_end();
	return r;
}

tg_tensor *tg_elu(const tg_tensor *t, double alpha)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_sub(tg_relu(t),
	                   tg_mul_s(tg_relu(tg_rsub_s(tg_exp(t), 1)), alpha)));
	tg_scope_end();
	return r;
}

tg_tensor *tg_celu(const tg_tensor *t, double alpha)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_add(tg_maximum_s(t, 0),
	                   tg_minimum_s(tg_mul_s(tg_sub_s(tg_exp(tg_div_s(t, alpha)),
	                                                  1),
	                                         alpha),
	                                0)));
	tg_scope_end();
	return r;
}

tg_tensor *tg_leakyrelu(const tg_tensor *t, double slope)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_sub(tg_relu(t), tg_relu(tg_mul_s(t, -slope))));
	tg_scope_end();
	return r;
}

tg_tensor *tg_softplus(const tg_tensor *t, double beta)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_mul_s(tg_log(tg_add_s(tg_exp(tg_mul_s(t, beta)), 1)),
	                     1 / beta));
	tg_scope_end();
	return r;
}

tg_tensor *tg_clip(const tg_tensor *t, double lo, double hi)
{
	tg_tensor *r;

	if (!t)
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_minimum_s(tg_maximum_s(t, lo), hi));
	tg_scope_end();
	return r;
}

tg_tensor *tg_hardtanh(const tg_tensor *t, double lo, double hi)
{
	return tg_clip(t, lo, hi);
}

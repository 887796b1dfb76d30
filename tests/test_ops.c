/*
 * test_ops.c - the elementwise tensor ops (tensor/elementwise.c) checked
 * against plain-C double references: every op over a 0-dim tensor, a
 * size-0 tensor, broadcasting (3,1)x(1,4), an odd size (37) and a
 * permuted (non-contiguous) input, in each dtype the op is defined on;
 * the scalar (_s) variants and their dtype rule; where/masked_fill/lerp;
 * and the error messages.
 */
#include "config.h"

#include "optest.h"

/* ---- inputs ---- */

enum dom { ANY, POS, UNIT, GT1, NZ, SH, Q, HALF };

static double gen(int i, int which, int dom, tg_dtype dt)
{
	double u = ot_u01(i, which);

	if (dt == TG_BOOL)
		return u > 0.5;
	if (!tg_dtype_is_float(dt)) {
		int uns = tg_dtype_is_unsigned(dt);
		switch (dom) {
		case POS: case GT1: return 1 + floor(9 * u);
		case NZ: {
			double v = 1 + floor(9 * u);
			return (!uns && ot_u01(i, which + 7) < 0.5) ? -v : v;
		}
		case SH: return floor(4 * u);
		default: return uns ? floor(21 * u) : floor(21 * u) - 10;
		}
	}
	switch (dom) {
	case POS: return 0.1 + 3.9 * u;
	case UNIT: return -0.9 + 1.8 * u;
	case GT1: return 1.1 + 2.9 * u;
	case NZ: return (ot_u01(i, which + 7) < 0.5 ? -1 : 1) * (0.5 + 2.5 * u);
	case Q: return floor(u * 12) / 2 - 3;
	case HALF: return floor(u * 24) / 4 - 3;
	default: return -3 + 6 * u;
	}
}

/* A tensor of `shape` with generated values, in dtype dt. */
static tg_tensor *mk(tg_dtype dt, size_t n, const int64_t *s, int which,
                     int dom)
{
	float v[64];
	int64_t k = ot_numel(n, s), i;

	ck_assert(k <= 64);
	for (i = 0; i < k; i++)
		v[i] = (float)gen((int)i, which, dom, dt);
	return tg_cast(tg_tensor_new(NULL, TG_FLOAT32, n, s, k ? v : NULL), dt);
}

/* The shapes: per case, a's shape, b's shape (and the output's). */
struct shp {
	const char *name;
	size_t na; int64_t a[2];
	size_t nb; int64_t b[2];
	int permute_a; /* a is built (b1,b0) and permuted */
};
static const struct shp SH2[] = {
	{ "scalar", 0, { 0 }, 0, { 0 }, 0 },
	{ "size0", 2, { 0, 1 }, 2, { 1, 3 }, 0 },
	{ "bcast", 2, { 3, 1 }, 2, { 1, 4 }, 0 },
	{ "odd37", 1, { 37 }, 1, { 37 }, 0 },
	{ "permuted", 2, { 5, 4 }, 2, { 5, 4 }, 1 },
};
#define NSH (sizeof SH2 / sizeof SH2[0])

static tg_tensor *mk_shaped(tg_dtype dt, size_t n, const int64_t *s,
                            int perm, int which, int dom)
{
	if (perm) {
		int64_t r[2] = { s[1], s[0] };
		return tg_permute(mk(dt, 2, r, which, dom), 2, (int[]){ 1, 0 });
	}
	return mk(dt, n, s, which, dom);
}

/* t expanded to `out` (n dims) and read as doubles (through float32:
 * every value tested fits). */
static int64_t read_as(const tg_tensor *t, size_t n, const int64_t *out,
                       double *dst)
{
	float f[64];
	tg_tensor *e;
	int64_t k, i;

	if (tg_tensor_ndim(t) < n) {
		int64_t rs[2];
		size_t pad = n - tg_tensor_ndim(t), j;
		for (j = 0; j < n; j++)
			rs[j] = j < pad ? 1 : tg_tensor_shape(t)[j - pad];
		t = tg_reshape(t, n, rs);
	}
	e = tg_cast(tg_expand(t, n, out), TG_FLOAT32);
	ck_assert_msg(e != NULL, "%s", tg_last_error());
	k = tg_tensor_numel(e);
	ck_assert(k <= 64);
	if (k)
		ck_assert_msg(tg_tensor_data(e, f, (size_t)k * sizeof *f) == 0,
		              "%s", tg_last_error());
	for (i = 0; i < k; i++)
		dst[i] = f[i];
	return k;
}

static int ncases;

static void check_vals(const char *op, const char *shape, tg_dtype dt,
                       const double *got, const double *want, int64_t k,
                       double tol, int exact)
{
	ot_check_vals(op, shape, dt, got, want, k, tol, exact,
	              OT_NONFINITE_EXACT);
	ncases++;
}

static double tol_of(tg_dtype dt, double f16mul)
{
	return dt == TG_FLOAT16 ? 2e-3 * f16mul : 1e-5;
}

/* ---- binary ops ---- */

typedef tg_tensor *(*binfn)(const tg_tensor *, const tg_tensor *);
typedef double (*bref)(double, double, tg_dtype);

static double r_add(double a, double b, tg_dtype d) { (void)d; return a + b; }
static double r_sub(double a, double b, tg_dtype d) { (void)d; return a - b; }
static double r_mul(double a, double b, tg_dtype d) { (void)d; return a * b; }
static double r_div(double a, double b, tg_dtype d) { (void)d; return a / b; }
static double r_idiv(double a, double b, tg_dtype d) { (void)d; return trunc(a / b); }
static double r_mod(double a, double b, tg_dtype d)
{
	double r;
	if (tg_dtype_is_float(d))
		return a - b * floor(a / b);
	r = fmod(a, b);
	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}
static double r_max(double a, double b, tg_dtype d) { (void)d; return a > b ? a : b; }
static double r_min(double a, double b, tg_dtype d) { (void)d; return a < b ? a : b; }
static double r_pow(double a, double b, tg_dtype d) { (void)d; return pow(a, b); }
static double r_xor(double a, double b, tg_dtype d) { (void)d; return (double)((int64_t)a ^ (int64_t)b); }
static double r_and(double a, double b, tg_dtype d) { (void)d; return (double)((int64_t)a & (int64_t)b); }
static double r_or(double a, double b, tg_dtype d) { (void)d; return (double)((int64_t)a | (int64_t)b); }
static double r_shl(double a, double b, tg_dtype d) { (void)d; return a * ldexp(1, (int)b); }
static double r_shr(double a, double b, tg_dtype d) { (void)d; return floor(a / ldexp(1, (int)b)); }
static double r_lt(double a, double b, tg_dtype d) { (void)d; return a < b; }
static double r_le(double a, double b, tg_dtype d) { (void)d; return a <= b; }
static double r_gt(double a, double b, tg_dtype d) { (void)d; return a > b; }
static double r_ge(double a, double b, tg_dtype d) { (void)d; return a >= b; }
static double r_eq(double a, double b, tg_dtype d) { (void)d; return a == b; }
static double r_ne(double a, double b, tg_dtype d) { (void)d; return a != b; }

enum { F = 1, I = 2, B = 4 }; /* float32/16, int32/int8/uint8, bool */

struct bop {
	const char *name;
	binfn f;
	bref ref;
	int da, db;
	unsigned kinds;
	int cmp;      /* result is bool */
	double f16mul;
};

static const struct bop BOPS[] = {
	{ "add", tg_add, r_add, ANY, ANY, F | I, 0, 1 },
	{ "sub", tg_sub, r_sub, ANY, ANY, F | I, 0, 1 },
	{ "mul", tg_mul, r_mul, ANY, ANY, F | I, 0, 1 },
	{ "div", tg_div, r_div, ANY, NZ, F, 0, 1 },
	{ "idiv", tg_idiv, r_idiv, ANY, NZ, I, 0, 1 },
	{ "mod", tg_mod, r_mod, ANY, NZ, F | I, 0, 4 },
	{ "pow", tg_pow, r_pow, POS, ANY, F, 0, 4 },
	{ "maximum", tg_maximum, r_max, ANY, ANY, F | I, 0, 1 },
	{ "minimum", tg_minimum, r_min, ANY, ANY, F | I, 0, 1 },
	{ "bitwise_xor", tg_bitwise_xor, r_xor, ANY, ANY, I | B, 0, 1 },
	{ "bitwise_and", tg_bitwise_and, r_and, ANY, ANY, I | B, 0, 1 },
	{ "bitwise_or", tg_bitwise_or, r_or, ANY, ANY, I | B, 0, 1 },
	{ "lshift", tg_lshift, r_shl, ANY, SH, I, 0, 1 },
	{ "rshift", tg_rshift, r_shr, POS, SH, I, 0, 1 },
	{ "lt", tg_lt, r_lt, Q, Q, F | I, 1, 1 },
	{ "le", tg_le, r_le, Q, Q, F | I, 1, 1 },
	{ "gt", tg_gt, r_gt, Q, Q, F | I, 1, 1 },
	{ "ge", tg_ge, r_ge, Q, Q, F | I, 1, 1 },
	{ "eq", tg_eq, r_eq, Q, Q, F | I | B, 1, 1 },
	{ "ne", tg_ne, r_ne, Q, Q, F | I | B, 1, 1 },
};

static const tg_dtype FDT[] = { TG_FLOAT32, TG_FLOAT16 };
static const tg_dtype IDT[] = { TG_INT32, TG_INT8, TG_UINT8 };

static void run_binary(const struct bop *o, tg_dtype dt)
{
	size_t si;

	if (!ot_dtypes_ok(dt, o->cmp ? TG_BOOL : dt))
		return;
	for (si = 0; si < NSH; si++) {
		const struct shp *s = &SH2[si];
		double a[64], b[64], got[64], want[64];
		int64_t out[2], k, i;
		size_t n = s->na > s->nb ? s->na : s->nb, j;
		tg_tensor *x, *y, *r;
		int isf = tg_dtype_is_float(dt);

		for (j = 0; j < n; j++)
			out[j] = s->a[j] == 1 ? s->b[j] : s->a[j];
		tg_scope_begin();
		x = mk_shaped(dt, s->na, s->a, s->permute_a, 1, o->da);
		y = mk(dt, s->nb, s->b, 2, o->db);
		r = o->f(x, y);
		ck_assert_msg(r != NULL, "%s %s %s: %s", o->name, s->name,
		              tg_dtype_name(dt), tg_last_error());
		ck_assert_int_eq(tg_tensor_dtype(r), o->cmp ? TG_BOOL : dt);
		ck_assert_uint_eq(tg_tensor_ndim(r), n);
		read_as(x, n, out, a);
		read_as(y, n, out, b);
		k = read_as(r, n, out, got);
		for (i = 0; i < k; i++)
			want[i] = o->cmp ? o->ref(a[i], b[i], dt)
			                 : ot_wrap(o->ref(a[i], b[i], dt), dt);
		check_vals(o->name, s->name, dt, got, want, k,
		           tol_of(dt, o->f16mul), !isf || o->cmp);
		tg_scope_end();
	}
}

START_TEST(binary_ops_match_reference)
{
	size_t oi, d;

	ncases = 0;
	for (oi = 0; oi < sizeof BOPS / sizeof BOPS[0]; oi++) {
		const struct bop *o = &BOPS[oi];
		if (o->kinds & F)
			for (d = 0; d < 2; d++)
				run_binary(o, FDT[d]);
		if (o->kinds & I)
			for (d = 0; d < 3; d++)
				run_binary(o, IDT[d]);
		if (o->kinds & B)
			run_binary(o, TG_BOOL);
	}
	fprintf(stderr, "binary cases: %d\n", ncases);
}
END_TEST

/* ---- unary ops ---- */

typedef tg_tensor *(*unfn)(const tg_tensor *);
typedef double (*uref)(double);

static double sig(double x) { return 1 / (1 + exp(-x)); }
static double softplus1(double x) { return log1p(exp(x)); }
static double u_neg(double x) { return -x; }
static double u_log2(double x) { return log2(x); }
static double u_exp2(double x) { return exp2(x); }
static double u_rsqrt(double x) { return 1 / sqrt(x); }
static double u_round(double x) { return nearbyint(x); }
static double u_sign(double x) { return (x > 0) - (x < 0); }
static double u_recip(double x) { return 1 / x; }
static double u_relu(double x) { return x > 0 ? x : 0; }
static double u_silu(double x) { return x * sig(x); }
static double u_relu6(double x) { return fmin(fmax(x, 0), 6); }
static double u_hswish(double x) { return x * u_relu6(x + 3) / 6; }
static double u_hsig(double x) { return fmin(fmax(x / 6 + 0.5, 0), 1); }
static double u_gelu(double x)
{
	return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
static double u_qgelu(double x) { return x * sig(1.702 * x); }
static double u_mish(double x) { return x * tanh(softplus1(x)); }
static double u_softsign(double x) { return x / (1 + fabs(x)); }
static double u_square(double x) { return x * x; }
static double u_elu(double x) { return x > 0 ? x : exp(x) - 1; }
static double u_leaky(double x) { return x > 0 ? x : 0.01 * x; }
static double u_clip(double x) { return fmin(fmax(x, -0.5), 0.5); }
static double u_htanh(double x) { return fmin(fmax(x, -1), 1); }
static double u_lnot(double x) { return x == 0; }

static tg_tensor *f_elu(const tg_tensor *t) { return tg_elu(t, 1.0); }
static tg_tensor *f_celu(const tg_tensor *t) { return tg_celu(t, 1.0); }
static tg_tensor *f_leaky(const tg_tensor *t) { return tg_leakyrelu(t, 0.01); }
static tg_tensor *f_softplus(const tg_tensor *t) { return tg_softplus(t, 1); }
static tg_tensor *f_clip(const tg_tensor *t) { return tg_clip(t, -0.5, 0.5); }
static tg_tensor *f_htanh(const tg_tensor *t) { return tg_hardtanh(t, -1, 1); }

struct uop {
	const char *name;
	unfn f;
	uref ref;
	int dom;
	unsigned kinds;
	double f16mul;
};

static const struct uop UOPS[] = {
	{ "neg", tg_neg, u_neg, ANY, F | I, 1 },
	{ "log", tg_log, log, POS, F, 1 },
	{ "log2", tg_log2, u_log2, POS, F, 1 },
	{ "exp", tg_exp, exp, ANY, F, 2 },
	{ "exp2", tg_exp2, u_exp2, ANY, F, 1 },
	{ "sqrt", tg_sqrt, sqrt, POS, F, 1 },
	{ "rsqrt", tg_rsqrt, u_rsqrt, POS, F, 1 },
	{ "sin", tg_sin, sin, ANY, F, 1 },
	{ "cos", tg_cos, cos, ANY, F, 2 },
	{ "tan", tg_tan, tan, UNIT, F, 2 },
	{ "trunc", tg_trunc, trunc, ANY, F, 1 },
	{ "floor", tg_floor, floor, HALF, F, 1 },
	{ "ceil", tg_ceil, ceil, HALF, F, 1 },
	{ "round", tg_round, u_round, HALF, F, 1 },
	{ "sign", tg_sign, u_sign, Q, F | I, 1 },
	{ "abs", tg_abs, fabs, ANY, F | I, 1 },
	{ "reciprocal", tg_reciprocal, u_recip, NZ, F, 1 },
	{ "relu", tg_relu, u_relu, ANY, F | I, 1 },
	{ "sigmoid", tg_sigmoid, sig, ANY, F, 1 },
	{ "tanh", tg_tanh, tanh, ANY, F, 2 },
	{ "silu", tg_silu, u_silu, ANY, F, 2 },
	{ "swish", tg_swish, u_silu, ANY, F, 2 },
	{ "relu6", tg_relu6, u_relu6, ANY, F, 1 },
	{ "hardswish", tg_hardswish, u_hswish, ANY, F, 2 },
	{ "hardsigmoid", tg_hardsigmoid, u_hsig, ANY, F, 1 },
	{ "gelu", tg_gelu, u_gelu, ANY, F, 2 },
	{ "quick_gelu", tg_quick_gelu, u_qgelu, ANY, F, 2 },
	{ "mish", tg_mish, u_mish, ANY, F, 2 },
	{ "softsign", tg_softsign, u_softsign, ANY, F, 1 },
	{ "sinh", tg_sinh, sinh, ANY, F, 2 },
	{ "cosh", tg_cosh, cosh, ANY, F, 2 },
	{ "atanh", tg_atanh, atanh, UNIT, F, 4 },
	{ "asinh", tg_asinh, asinh, ANY, F, 2 },
	{ "acosh", tg_acosh, acosh, GT1, F, 2 },
	{ "square", tg_square, u_square, ANY, F | I, 1 },
	{ "elu", f_elu, u_elu, ANY, F, 2 },
	{ "celu", f_celu, u_elu, ANY, F, 2 },
	{ "leakyrelu", f_leaky, u_leaky, ANY, F, 1 },
	{ "softplus", f_softplus, softplus1, ANY, F, 2 },
	{ "hardtanh", f_htanh, u_htanh, ANY, F, 1 },
	{ "clip", f_clip, u_clip, ANY, F, 1 },
	{ "logical_not", tg_logical_not, u_lnot, ANY, B, 1 },
};

static void run_unary(const struct uop *o, tg_dtype dt)
{
	size_t si;

	if (!ot_dtypes_ok(dt, o->ref == u_lnot ? TG_BOOL : dt))
		return;
	for (si = 0; si < NSH; si++) {
		const struct shp *s = &SH2[si];
		double a[64], got[64], want[64];
		int64_t k, i;
		size_t n = s->na;
		tg_tensor *x, *r;
		int isf = tg_dtype_is_float(dt);
		tg_dtype rdt = o->ref == u_lnot ? TG_BOOL : dt;

		tg_scope_begin();
		x = mk_shaped(dt, s->na, s->a, s->permute_a, 3, o->dom);
		r = o->f(x);
		ck_assert_msg(r != NULL, "%s %s %s: %s", o->name, s->name,
		              tg_dtype_name(dt), tg_last_error());
		ck_assert_int_eq(tg_tensor_dtype(r), rdt);
		read_as(x, n, s->a, a);
		k = read_as(r, n, s->a, got);
		for (i = 0; i < k; i++)
			want[i] = ot_wrap(o->ref(a[i]), rdt);
		check_vals(o->name, s->name, dt, got, want, k,
		           tol_of(dt, o->f16mul), !isf);
		tg_scope_end();
	}
}

START_TEST(unary_ops_match_reference)
{
	size_t oi, d;

	ncases = 0;
	for (oi = 0; oi < sizeof UOPS / sizeof UOPS[0]; oi++) {
		const struct uop *o = &UOPS[oi];
		if (o->kinds & F)
			for (d = 0; d < 2; d++)
				run_unary(o, FDT[d]);
		if (o->kinds & I)
			for (d = 0; d < 3; d++)
				run_unary(o, IDT[d]);
		if (o->kinds & B)
			run_unary(o, TG_BOOL);
	}
	fprintf(stderr, "unary cases: %d\n", ncases);
}
END_TEST

/* Unary float ops on ints compute in the default float. */
START_TEST(unary_float_ops_promote_ints)
{
	int64_t s[1] = { 4 };
	int32_t v[4] = { 1, 2, 4, 8 };
	float got[4];
	tg_tensor *x, *r;
	int i;

	if (!ot_dtype_ok(TG_INT32))
		return;
	tg_scope_begin();
	x = tg_tensor_new(NULL, TG_INT32, 1, s, v);
	r = tg_log2(x);
	ck_assert_int_eq(tg_tensor_dtype(r), TG_FLOAT32);
	ck_assert_int_eq(tg_tensor_data(r, got, sizeof got), 0);
	for (i = 0; i < 4; i++)
		ck_assert_float_eq_tol(got[i], i, 1e-6);
	r = tg_div(x, tg_full_like(x, 2));
	ck_assert_int_eq(tg_tensor_dtype(r), TG_FLOAT32);
	ck_assert_int_eq(tg_tensor_data(r, got, sizeof got), 0);
	ck_assert_float_eq_tol(got[0], 0.5, 1e-7);
	tg_scope_end();
}
END_TEST

/* ---- scalar variants ---- */

typedef tg_tensor *(*sfn)(const tg_tensor *, double);
struct sop {
	const char *name;
	sfn f;
	bref ref;
	int reverse;
	int cmp;
};
static double r_pow2(double a, double b, tg_dtype d) { (void)d; return pow(a, b); }
static const struct sop SOPS[] = {
	{ "add_s", tg_add_s, r_add, 0, 0 },
	{ "sub_s", tg_sub_s, r_sub, 0, 0 },
	{ "mul_s", tg_mul_s, r_mul, 0, 0 },
	{ "maximum_s", tg_maximum_s, r_max, 0, 0 },
	{ "minimum_s", tg_minimum_s, r_min, 0, 0 },
	{ "rsub_s", tg_rsub_s, r_sub, 1, 0 },
	{ "lt_s", tg_lt_s, r_lt, 0, 1 },
	{ "le_s", tg_le_s, r_le, 0, 1 },
	{ "gt_s", tg_gt_s, r_gt, 0, 1 },
	{ "ge_s", tg_ge_s, r_ge, 0, 1 },
	{ "eq_s", tg_eq_s, r_eq, 0, 1 },
	{ "ne_s", tg_ne_s, r_ne, 0, 1 },
};

static void run_scalar(sfn f, bref ref, int reverse, int cmp, const char *name,
                       tg_dtype dt, double v, tg_dtype want_dt, int dom)
{
	int64_t s[1] = { 37 };
	double a[64], got[64], want[64];
	int64_t k, i;
	tg_tensor *x, *r;

	if (!ot_dtypes_ok(dt, want_dt))
		return;
	tg_scope_begin();
	x = mk(dt, 1, s, 5, dom);
	r = f(x, v);
	ck_assert_msg(r != NULL, "%s: %s", name, tg_last_error());
	ck_assert_msg(tg_tensor_dtype(r) == (cmp ? TG_BOOL : want_dt),
	              "%s %s %g: dtype %s", name, tg_dtype_name(dt), v,
	              tg_dtype_name(tg_tensor_dtype(r)));
	read_as(x, 1, s, a);
	k = read_as(r, 1, s, got);
	for (i = 0; i < k; i++)
		want[i] = ot_wrap(reverse ? ref(v, a[i], dt)
		                          : ref(a[i], v, dt),
		                  cmp ? TG_BOOL : want_dt);
	check_vals(name, "odd37", dt, got, want, k, tol_of(want_dt, 2),
	           !tg_dtype_is_float(want_dt) || cmp);
	tg_scope_end();
}

static tg_tensor *f_div_s(const tg_tensor *t, double v) { return tg_div_s(t, v); }
static tg_tensor *f_rdiv_s(const tg_tensor *t, double v) { return tg_rdiv_s(t, v); }
static tg_tensor *f_pow_s(const tg_tensor *t, double v) { return tg_pow_s(t, v); }

START_TEST(scalar_variants_and_their_dtype)
{
	static const double pw[] = { 0, 1, 2, 3, 0.5, 2.5, -1, -2, 1.3 };
	size_t i;

	ncases = 0;
	for (i = 0; i < sizeof SOPS / sizeof SOPS[0]; i++) {
		const struct sop *o = &SOPS[i];
		run_scalar(o->f, o->ref, o->reverse, o->cmp, o->name, TG_FLOAT32,
		           1.5, TG_FLOAT32, Q);
		run_scalar(o->f, o->ref, o->reverse, o->cmp, o->name, TG_FLOAT16,
		           -0.5, TG_FLOAT16, Q);
		run_scalar(o->f, o->ref, o->reverse, o->cmp, o->name, TG_INT32, 3,
		           TG_INT32, ANY);
		run_scalar(o->f, o->ref, o->reverse, o->cmp, o->name, TG_INT8, -2,
		           TG_INT8, ANY);
		/* a non-integral scalar promotes an int tensor to float */
		run_scalar(o->f, o->ref, o->reverse, o->cmp, o->name, TG_INT32, 0.5,
		           TG_FLOAT32, ANY);
	}
	run_scalar(f_div_s, r_div, 0, 0, "div_s", TG_FLOAT32, 4, TG_FLOAT32, ANY);
	run_scalar(f_div_s, r_div, 0, 0, "div_s", TG_INT32, 4, TG_FLOAT32, ANY);
	run_scalar(f_rdiv_s, r_div, 1, 0, "rdiv_s", TG_FLOAT32, 3, TG_FLOAT32, NZ);
	run_scalar(tg_idiv_s, r_idiv, 0, 0, "idiv_s", TG_INT32, -3, TG_INT32, ANY);
	run_scalar(tg_mod_s, r_mod, 0, 0, "mod_s", TG_INT32, 4, TG_INT32, ANY);
	run_scalar(tg_lshift_s, r_shl, 0, 0, "lshift_s", TG_INT32, 2, TG_INT32, ANY);
	run_scalar(tg_rshift_s, r_shr, 0, 0, "rshift_s", TG_INT32, 1, TG_INT32, POS);
	run_scalar(tg_bitwise_and_s, r_and, 0, 0, "bitwise_and_s", TG_INT32, 6,
	           TG_INT32, ANY);
	run_scalar(tg_bitwise_or_s, r_or, 0, 0, "bitwise_or_s", TG_INT8, 5,
	           TG_INT8, ANY);
	run_scalar(tg_bitwise_xor_s, r_xor, 0, 0, "bitwise_xor_s", TG_UINT8, 9,
	           TG_UINT8, ANY);
	for (i = 0; i < sizeof pw / sizeof pw[0]; i++)
		run_scalar(f_pow_s, r_pow2, 0, 0, "pow_s", TG_FLOAT32, pw[i],
		           TG_FLOAT32, POS);
	/* integral exponents of negative bases (repeated multiplication) */
	run_scalar(f_pow_s, r_pow2, 0, 0, "pow_s", TG_FLOAT32, 3, TG_FLOAT32, ANY);
	run_scalar(f_pow_s, r_pow2, 0, 0, "pow_s", TG_FLOAT32, -2, TG_FLOAT32, NZ);
	run_scalar(f_pow_s, r_pow2, 0, 0, "pow_s", TG_INT32, 2, TG_INT32, ANY);
	run_scalar(tg_rpow_s, r_pow2, 1, 0, "rpow_s", TG_FLOAT32, 2, TG_FLOAT32,
	           ANY);
	run_scalar(tg_rpow_s, r_pow2, 1, 0, "rpow_s", TG_FLOAT32, 0.5,
	           TG_FLOAT32, ANY);
	fprintf(stderr, "scalar cases: %d\n", ncases);
}
END_TEST

/* pow with a tensor exponent and negative bases: the sign of odd
 * integral exponents, NaN for fractional ones, x**0 = 1. */
START_TEST(pow_negative_bases)
{
	int64_t s[1] = { 5 };
	float a[5] = { -2, -2, -2, 0, 3 }, b[5] = { 3, 2, 0.5, 0, 0 }, g[5];
	tg_tensor *r;

	tg_scope_begin();
	r = tg_pow(tg_tensor_new(NULL, TG_FLOAT32, 1, s, a),
	           tg_tensor_new(NULL, TG_FLOAT32, 1, s, b));
	ck_assert_int_eq(tg_tensor_data(r, g, sizeof g), 0);
	ck_assert_float_eq_tol(g[0], -8, 1e-5);
	ck_assert_float_eq_tol(g[1], 4, 1e-5);
	ck_assert(isnan(g[2]));
	ck_assert_float_eq(g[3], 1);
	ck_assert_float_eq(g[4], 1);
	tg_scope_end();
}
END_TEST

/* The corners tg/tg.h documents, on the device under test: NaN
 * through maximum, minimum, relu, sign and the max reduce; the mean of
 * nothing; integer idiv truncating and mod taking the divisor's sign. */
START_TEST(nan_empty_and_integer_division_semantics)
{
	int64_t s4[1] = { 4 }, z[1] = { 0 };
	float a[4] = { NAN, 1, -2, 0 }, b[4] = { 1, NAN, NAN, 5 }, g[4];
	int32_t p[4] = { 7, -7, 7, -7 }, q[4] = { 2, 2, -2, -2 }, gi[4];
	tg_tensor *x, *y, *ip, *iq;
	int i;

	tg_scope_begin();
	x = tg_tensor_new(NULL, TG_FLOAT32, 1, s4, a);
	y = tg_tensor_new(NULL, TG_FLOAT32, 1, s4, b);
	ck_assert_int_eq(tg_tensor_data(tg_maximum(x, y), g, sizeof g), 0);
	ck_assert(isnan(g[0]) && isnan(g[1]) && isnan(g[2]) && g[3] == 5);
	ck_assert_int_eq(tg_tensor_data(tg_minimum(y, x), g, sizeof g), 0);
	ck_assert(isnan(g[0]) && isnan(g[1]) && isnan(g[2]) && g[3] == 0);
	ck_assert_int_eq(tg_tensor_data(tg_relu(x), g, sizeof g), 0);
	ck_assert(isnan(g[0]) && g[1] == 1 && g[2] == 0 && g[3] == 0);
	ck_assert_int_eq(tg_tensor_data(tg_sign(x), g, sizeof g), 0);
	ck_assert(isnan(g[0]) && g[1] == 1 && g[2] == -1 && g[3] == 0);
	ck_assert_int_eq(tg_tensor_data(tg_max(y, NULL, 0, 0), g, 4), 0);
	ck_assert(isnan(g[0]));
	ck_assert_int_eq(tg_tensor_data(tg_min(x, NULL, 0, 0), g, 4), 0);
	ck_assert(isnan(g[0]));
	ck_assert_int_eq(tg_tensor_data(tg_mean(tg_zeros(NULL, TG_FLOAT32, 1,
	                                                 z), NULL, 0, 0), g, 4),
	                 0);
	ck_assert_float_eq(g[0], 0);
	if (ot_dtype_ok(TG_INT32)) {
		static const int32_t wd[4] = { 3, -3, -3, 3 };
		static const int32_t wm[4] = { 1, 1, -1, -1 };

		ip = tg_tensor_new(NULL, TG_INT32, 1, s4, p);
		iq = tg_tensor_new(NULL, TG_INT32, 1, s4, q);
		ck_assert_int_eq(tg_tensor_data(tg_idiv(ip, iq), gi, sizeof gi),
		                 0);
		for (i = 0; i < 4; i++)
			ck_assert_int_eq(gi[i], wd[i]);
		ck_assert_int_eq(tg_tensor_data(tg_mod(ip, iq), gi, sizeof gi), 0);
		for (i = 0; i < 4; i++)
			ck_assert_int_eq(gi[i], wm[i]);
	}
	tg_scope_end();
}
END_TEST

/* ---- where, masked_fill, lerp ---- */

START_TEST(where_broadcasts_and_promotes)
{
	static const struct { size_t nc, na, nb; int64_t c[2], a[2], b[2]; } S[] = {
		{ 0, 0, 0, { 0 }, { 0 }, { 0 } },
		{ 2, 2, 0, { 3, 1 }, { 1, 4 }, { 0 } },
		{ 1, 2, 1, { 4 }, { 3, 1 }, { 4 } },
		{ 1, 1, 1, { 37 }, { 37 }, { 37 } },
		{ 2, 1, 2, { 0, 1 }, { 3 }, { 1, 3 } },
	};
	static const tg_dtype vd[][2] = {
		{ TG_FLOAT32, TG_FLOAT32 }, { TG_INT32, TG_INT32 },
		{ TG_INT8, TG_FLOAT16 }, { TG_BOOL, TG_BOOL },
	};
	size_t si, d, j;

	ncases = 0;
	for (si = 0; si < sizeof S / sizeof S[0]; si++)
		for (d = 0; d < sizeof vd / sizeof vd[0]; d++) {
			double c[64], a[64], b[64], got[64], want[64];
			int64_t out[2], k, i;
			size_t n = S[si].nc;
			tg_tensor *tc, *ta, *tb, *r;
			tg_dtype rdt = tg_dtype_least_upper(vd[d][0], vd[d][1]);

			if (!ot_dtypes_ok(vd[d][0], vd[d][1]) ||
			    !ot_dtypes_ok(d == 1 ? TG_INT32 : TG_BOOL, rdt))
				continue;
			if (S[si].na > n) n = S[si].na;
			if (S[si].nb > n) n = S[si].nb;
			for (j = 0; j < n; j++) {
				int64_t m = 1, x;
				size_t q;
				for (q = 0; q < 3; q++) {
					size_t nn = q == 0 ? S[si].nc : q == 1 ? S[si].na : S[si].nb;
					const int64_t *sh = q == 0 ? S[si].c : q == 1 ? S[si].a : S[si].b;
					x = j + nn >= n ? sh[j + nn - n] : 1;
					if (x != 1) m = x;
				}
				out[j] = m;
			}
			tg_scope_begin();
			/* an int32 condition: cast to bool by where */
			tc = mk(d == 1 ? TG_INT32 : TG_BOOL, S[si].nc, S[si].c, 7, ANY);
			ta = mk(vd[d][0], S[si].na, S[si].a, 8, ANY);
			tb = mk(vd[d][1], S[si].nb, S[si].b, 9, ANY);
			r = tg_where(tc, ta, tb);
			ck_assert_msg(r != NULL, "%s", tg_last_error());
			ck_assert_int_eq(tg_tensor_dtype(r), rdt);
			read_as(tc, n, out, c);
			read_as(ta, n, out, a);
			read_as(tb, n, out, b);
			k = read_as(r, n, out, got);
			for (i = 0; i < k; i++)
				want[i] = c[i] != 0 ? a[i] : b[i];
			check_vals("where", "", rdt, got, want, k, 0, 1);
			tg_scope_end();
		}
	fprintf(stderr, "where cases: %d\n", ncases);
}
END_TEST

START_TEST(where_s_masked_fill_and_lerp)
{
	int64_t s[1] = { 4 };
	uint8_t m[4] = { 1, 0, 0, 1 };
	float a[4] = { 0, 1, 2, 3 }, b[4] = { 10, 10, 10, 10 };
	float w[4] = { 0, 0.5f, 1, 0.25f };
	float g[4];
	int32_t gi[4];
	tg_tensor *tm, *ta, *r;

	if (!ot_dtypes_ok(TG_BOOL, TG_INT32))
		return;
	tg_scope_begin();
	tm = tg_tensor_new(NULL, TG_BOOL, 1, s, m);
	ta = tg_tensor_new(NULL, TG_FLOAT32, 1, s, a);
	r = tg_where_s(tm, 5, -1);
	ck_assert_int_eq(tg_tensor_dtype(r), TG_INT32);
	ck_assert_int_eq(tg_tensor_data(r, gi, sizeof gi), 0);
	ck_assert_int_eq(gi[0], 5);
	ck_assert_int_eq(gi[1], -1);
	r = tg_where_s(tm, 0.5, -1);
	ck_assert_int_eq(tg_tensor_dtype(r), TG_FLOAT32);
	ck_assert_int_eq(tg_tensor_data(r, g, sizeof g), 0);
	ck_assert_float_eq(g[3], 0.5f);
	ck_assert_float_eq(g[2], -1);
	/* infinities are floats, not Python ints */
	r = tg_where_s(tm, 0, -INFINITY);
	ck_assert_int_eq(tg_tensor_dtype(r), TG_FLOAT32);
	ck_assert_int_eq(tg_tensor_data(r, g, sizeof g), 0);
	ck_assert_float_eq(g[0], 0);
	ck_assert(isinf(g[1]) && g[1] < 0);
	r = tg_masked_fill(ta, tm, -7);
	ck_assert_int_eq(tg_tensor_data(r, g, sizeof g), 0);
	ck_assert_float_eq(g[0], -7);
	ck_assert_float_eq(g[1], 1);
	ck_assert_float_eq(g[3], -7);
	r = tg_lerp(ta, tg_tensor_new(NULL, TG_FLOAT32, 1, s, b),
	            tg_tensor_new(NULL, TG_FLOAT32, 1, s, w));
	ck_assert_int_eq(tg_tensor_data(r, g, sizeof g), 0);
	ck_assert_float_eq_tol(g[0], 0, 1e-6);
	ck_assert_float_eq_tol(g[1], 5.5, 1e-6);
	ck_assert_float_eq_tol(g[2], 10, 1e-6);
	ck_assert_float_eq_tol(g[3], 3 + 7 * 0.25, 1e-6);
	tg_scope_end();
}
END_TEST

START_TEST(bitwise_not_and_promotion)
{
	int64_t s[1] = { 3 };
	int8_t v8[3] = { 0, 5, -1 }, g8[3];
	uint8_t u8[3] = { 0, 5, 255 }, gu[3];
	int16_t g16[3];
	tg_tensor *a, *b, *r;

	if (!ot_dtypes_ok(TG_INT8, TG_UINT8) || !ot_dtype_ok(TG_INT16))
		return;
	tg_scope_begin();
	a = tg_tensor_new(NULL, TG_INT8, 1, s, v8);
	b = tg_tensor_new(NULL, TG_UINT8, 1, s, u8);
	r = tg_bitwise_not(a);
	ck_assert_int_eq(tg_tensor_data(r, g8, sizeof g8), 0);
	ck_assert_int_eq(g8[0], -1);
	ck_assert_int_eq(g8[1], -6);
	ck_assert_int_eq(g8[2], 0);
	r = tg_bitwise_not(b);
	ck_assert_int_eq(tg_tensor_data(r, gu, sizeof gu), 0);
	ck_assert_int_eq(gu[0], 255);
	ck_assert_int_eq(gu[2], 0);
	/* int8 + uint8 -> int16 */
	r = tg_add(a, b);
	ck_assert_int_eq(tg_tensor_dtype(r), TG_INT16);
	ck_assert_int_eq(tg_tensor_data(r, g16, sizeof g16), 0);
	ck_assert_int_eq(g16[2], 254);
	tg_scope_end();
}
END_TEST

START_TEST(errors_name_the_op)
{
	int64_t s23[2] = { 2, 3 }, s4[1] = { 4 };
	tg_tensor *a, *b;

	tg_scope_begin();
	a = tg_zeros(NULL, TG_FLOAT32, 2, s23);
	b = tg_zeros(NULL, TG_FLOAT32, 1, s4);
	ck_assert_ptr_null(tg_add(a, b));
	ck_assert_error("add: shapes (2,3) and (4,) don't broadcast");
	ck_assert_ptr_null(tg_bitwise_and(a, a));
	ck_assert_error("bitwise_and: not defined on float32");
	ck_assert_ptr_null(tg_bitwise_not(a));
	ck_assert_error("bitwise_not: not defined on float32");
	ck_assert_ptr_null(tg_where(a, a, b));
	ck_assert_error("where: shapes (2,3) and (4,) don't broadcast");
	tg_clear_error();
	ck_assert_ptr_null(tg_mul(NULL, a));
	ck_assert_ptr_null(tg_exp(NULL));
	ck_assert_ptr_null(tg_add_s(NULL, 1));
	ck_assert_str_eq(tg_last_error(), "");
	tg_scope_end();
}
END_TEST

static Suite *ops_suite(void)
{
	Suite *s = suite_create("ops");
	TCase *t = ot_tcase("ops", 300);

	tcase_add_test(t, binary_ops_match_reference);
	tcase_add_test(t, unary_ops_match_reference);
	tcase_add_test(t, unary_float_ops_promote_ints);
	tcase_add_test(t, scalar_variants_and_their_dtype);
	tcase_add_test(t, pow_negative_bases);
	tcase_add_test(t, nan_empty_and_integer_division_semantics);
	tcase_add_test(t, where_broadcasts_and_promotes);
	tcase_add_test(t, where_s_masked_fill_and_lerp);
	tcase_add_test(t, bitwise_not_and_promotion);
	tcase_add_test(t, errors_name_the_op);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(ops_suite());
}

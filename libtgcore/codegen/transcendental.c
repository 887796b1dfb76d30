/*
 * codegen/transcendental.c - exp2, log2 and sin from adds, multiplies,
 * comparisons and selects (tinygrad's transcendental.py), for devices
 * without them: a device that sets needs_transcendental_fallback, and
 * float64 in GLSL, which has no double exp2/log2/sin.
 *
 * No bit casts are needed, so the rules work wherever float and int32
 * arithmetic do:
 *  - exp2(x): x = q + f with q = round(x), |f| <= 1/2; 2^f by its
 *    Taylor series (|f ln 2| <= 0.35: 14 terms reach 2^-60), times 2^q
 *    built from the bits of q as two halves (so neither overflows
 *    before the product, and a subnormal result rounds once).
 *  - log2(x): x = m * 2^e found by halving and doubling by 2^(2^k),
 *    exact for powers of two, with m in (sqrt(1/2), sqrt(2)]; then
 *    ln m = 2 atanh((m-1)/(m+1)) by its odd series (|t| < 0.172).
 *  - sin(x): n = round(x * 2/pi), x - n*pi/2 in four pieces
 *    (Cody-Waite with fdlibm's split of pi/2: exact for |n| < 2^20, so
 *    |x| below about 1.6e6; in float32 for |n| < 2^16, |x| below about
 *    1e5), then the sine or cosine series by the quadrant.  Larger arguments lose accuracy (no Payne-Hanek
 *    reduction), and beyond 1e9 the result is NaN.
 * Special values: NaN stays NaN, exp2(+-inf) = inf and 0, log2 of 0,
 * a negative and inf are -inf, NaN and inf, sin(+-inf) is NaN.
 * float16 computes in float32.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

#define LN2 0.693147180559945309417232121458176568
#define SQRT2 1.41421356237309504880168872420969808
#define TWO_OVER_PI 0.636619772367581343075535053490057448

typedef struct tx {
	tg_ir *ir;
	tg_type t;   /* the float type computed in */
	tg_type i;   /* int32 with t's lanes */
	tg_type b;   /* bool with t's lanes */
	int f64;
} tx;

static tg_uop *cf(tx *c, double v) { return tg_uop_const_float(c->ir, c->t, v); }
static tg_uop *ci(tx *c, int64_t v) { return tg_uop_const_int(c->ir, c->i, v); }
static tg_uop *add(tx *c, tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(c->ir, TG_ADD, a, b, NULL);
}
static tg_uop *mul(tx *c, tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(c->ir, TG_MUL, a, b, NULL);
}
static tg_uop *sub(tx *c, tg_uop *a, tg_uop *b)
{
	return add(c, a, tg_uop_alu(c->ir, TG_NEG, b, NULL, NULL));
}
static tg_uop *lt(tx *c, tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(c->ir, TG_CMPLT, a, b, NULL);
}
static tg_uop *sel(tx *c, tg_uop *cond, tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(c->ir, TG_WHERE, cond, a, b);
}
/* a >= b; true when either is NaN (callers put NaN back at the end) */
static tg_uop *ge(tx *c, tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(c->ir, TG_CMPNE, lt(c, a, b),
	                  tg_uop_const_int(c->ir, c->b, 1), NULL);
}
static tg_uop *isnan_(tx *c, tg_uop *x)
{
	return tg_uop_alu(c->ir, TG_CMPNE, x, x, NULL);
}
static tg_uop *to_int(tx *c, tg_uop *x) { return tg_uop1(c->ir, TG_CAST, c->i, x); }
static tg_uop *to_float(tx *c, tg_uop *q) { return tg_uop1(c->ir, TG_CAST, c->t, q); }

/* The nearest integer (ties away from zero) of x, |x| < 2^31. */
static tg_uop *round_int(tx *c, tg_uop *x)
{
	return to_int(c, add(c, x, sel(c, lt(c, x, cf(c, 0)), cf(c, -0.5),
	                                 cf(c, 0.5))));
}

/* sum coef[k] * x^k, k < n, by Horner. */
static tg_uop *horner(tx *c, tg_uop *x, const double *coef, int n)
{
	tg_uop *r = cf(c, coef[n - 1]);

	while (--n > 0)
		r = add(c, mul(c, r, x), cf(c, coef[n - 1]));
	return r;
}

/* 2^q for an int q with |q| < 2^10: the product of 2^(2^k) over q's
 * bits, inverted for negative q (exact: powers of two, all normal). */
static tg_uop *pow2i(tx *c, tg_uop *q)
{
	tg_uop *neg = lt(c, q, ci(c, 0));
	tg_uop *a = sel(c, neg, tg_uop_alu(c->ir, TG_NEG, q, NULL, NULL), q);
	tg_uop *r = cf(c, 1);
	int k;

	for (k = 0; k < (c->f64 ? 10 : 7); k++) {
		tg_uop *bit = tg_uop_alu(c->ir, TG_CMPNE,
		                         tg_uop_alu(c->ir, TG_AND, a, ci(c, 1 << k),
		                                    NULL), ci(c, 0), NULL);

		r = mul(c, r, sel(c, bit, cf(c, ldexp(1, 1 << k)), cf(c, 1)));
	}
	return sel(c, neg, tg_uop_alu(c->ir, TG_RECIP, r, NULL, NULL), r);
}

static tg_uop *exp2_(tx *c, tg_uop *x)
{
	double coef[15];
	double lim = c->f64 ? 1100 : 200;
	tg_uop *xc, *q, *f, *p, *q1;
	int k;

	for (coef[0] = 1, k = 1; k < 15; k++)
		coef[k] = coef[k - 1] * LN2 / k;
	/* clamped so q fits; beyond it the result is inf or 0 anyway */
	xc = sel(c, lt(c, x, cf(c, -lim)), cf(c, -lim),
	         sel(c, lt(c, cf(c, lim), x), cf(c, lim), x));
	q = round_int(c, xc);
	f = sub(c, xc, to_float(c, q));
	p = horner(c, f, coef, c->f64 ? 15 : 9);
	q1 = tg_uop_alu(c->ir, TG_IDIV, q, ci(c, 2), NULL);
	p = mul(c, mul(c, p, pow2i(c, q1)),
	        pow2i(c, add(c, q, tg_uop_alu(c->ir, TG_NEG, q1, NULL,
	                                      NULL))));
	return sel(c, isnan_(c, x), x, p);
}

static tg_uop *log2_(tx *c, tg_uop *x)
{
	double odd[11];
	int kmax = c->f64 ? 9 : 6, k;
	double tiny = c->f64 ? 0x1p-1000 : 0x1p-100;
	int pre = c->f64 ? 100 : 40;
	tg_uop *y, *e, *small, *m, *t, *t2, *r, *big;

	for (k = 0; k < 11; k++)
		odd[k] = 2.0 / (2 * k + 1) / LN2;
	/* subnormals first into the normal range (exact) */
	small = lt(c, x, cf(c, tiny));
	y = sel(c, small, mul(c, x, cf(c, ldexp(1, pre))), x);
	e = sel(c, small, cf(c, -pre), cf(c, 0));
	for (k = kmax; k >= 0; k--) {
		double s = ldexp(1, 1 << k);

		big = ge(c, y, cf(c, s));
		y = sel(c, big, mul(c, y, cf(c, 1 / s)), y);
		e = add(c, e, sel(c, big, cf(c, 1 << k), cf(c, 0)));
	}
	for (k = kmax; k >= 0; k--) {
		double s = ldexp(1, 1 << k);
		tg_uop *up = lt(c, y, cf(c, 2 / s));

		y = sel(c, up, mul(c, y, cf(c, s)), y);
		e = add(c, e, sel(c, up, cf(c, -(1 << k)), cf(c, 0)));
	}
	/* y in [1, 2): m in (sqrt(1/2), sqrt(2)] */
	big = lt(c, cf(c, SQRT2), y);
	m = sel(c, big, mul(c, y, cf(c, 0.5)), y);
	e = add(c, e, sel(c, big, cf(c, 1), cf(c, 0)));
	t = mul(c, sub(c, m, cf(c, 1)),
	        tg_uop_alu(c->ir, TG_RECIP, add(c, m, cf(c, 1)), NULL, NULL));
	t2 = mul(c, t, t);
	r = add(c, e, mul(c, t, horner(c, t2, odd, c->f64 ? 11 : 6)));
	/* 0 -> -inf, < 0 -> NaN, inf -> inf, NaN -> NaN */
	r = sel(c, tg_uop_alu(c->ir, TG_CMPNE, x, cf(c, 0), NULL), r,
	        cf(c, -INFINITY));
	r = sel(c, lt(c, x, cf(c, 0)), cf(c, NAN), r);
	r = sel(c, lt(c, cf(c, c->f64 ? DBL_MAX : FLT_MAX), x), x, r);
	return sel(c, isnan_(c, x), x, r);
}

/* v rounded to its top `bits` significant bits. */
static double top_bits(double v, int bits)
{
	int e;
	double m = frexp(v, &e);

	return ldexp(nearbyint(ldexp(m, bits)), e - bits);
}

/* pi/2 as pieces whose products with n are exact: float64, fdlibm's
 * three 33-bit pieces and a tail (|n| < 2^20); float32, five 8-bit
 * pieces cut from those and a tail (|n| < 2^16).  Returns the count. */
static int pio2_pieces(int f64, double *p)
{
	static const double d[4] = { 1.57079632673412561417e+00,
	                             6.07710050630396597660e-11,
	                             2.02226624871116645580e-21,
	                             8.47842766036889956997e-32 };
	double hi = d[0], lo = d[1] + d[2] + d[3];
	int k;

	if (f64) {
		memcpy(p, d, sizeof d);
		return 4;
	}
	/* hi + lo is pi/2 to about 2^-100; each piece is taken off hi
	 * exactly (it is hi's top bits), lo joins once hi is small */
	for (k = 0; k < 5; k++) {
		p[k] = top_bits(hi, 8);
		hi -= p[k];
		if (k == 1) {
			hi += lo;
			lo = 0;
		}
	}
	p[5] = (float)hi;
	return 6;
}

static tg_uop *sin_(tx *c, tg_uop *x)
{
	double sc[12], cc[12], pio2[6];
	tg_uop *n, *fn, *r, *r2, *s, *co, *q, *v, *bad;
	int k, np;

	for (sc[0] = 1, cc[0] = 1, k = 1; k < 12; k++) {
		sc[k] = -sc[k - 1] / ((2 * k) * (2 * k + 1));
		cc[k] = -cc[k - 1] / ((2 * k - 1) * (2 * k));
	}
	/* inf and NaN never reach the int conversion */
	bad = tg_uop_alu(c->ir, TG_OR, isnan_(c, x),
	                 lt(c, cf(c, 1e9), sel(c, lt(c, x, cf(c, 0)),
	                                       tg_uop_alu(c->ir, TG_NEG, x,
	                                                  NULL, NULL), x)),
	                 NULL);
	v = sel(c, bad, cf(c, 0), x);
	n = round_int(c, mul(c, v, cf(c, TWO_OVER_PI)));
	fn = to_float(c, n);
	np = pio2_pieces(c->f64, pio2);
	r = v;
	for (k = 0; k < np; k++)
		r = sub(c, r, mul(c, fn, cf(c, pio2[k])));
	r2 = mul(c, r, r);
	s = mul(c, r, horner(c, r2, sc, c->f64 ? 12 : 7));
	co = horner(c, r2, cc, c->f64 ? 12 : 7);
	q = tg_uop_alu(c->ir, TG_AND, n, ci(c, 3), NULL);
	r = sel(c, tg_uop_alu(c->ir, TG_CMPNE,
	                      tg_uop_alu(c->ir, TG_AND, q, ci(c, 1), NULL),
	                      ci(c, 0), NULL), co, s);
	r = sel(c, tg_uop_alu(c->ir, TG_CMPNE,
	                      tg_uop_alu(c->ir, TG_AND, q, ci(c, 2), NULL),
	                      ci(c, 0), NULL),
	        tg_uop_alu(c->ir, TG_NEG, r, NULL, NULL), r);
	/* NaN and inf give NaN; beyond 1e9 the reduction is meaningless */
	return sel(c, bad, sel(c, isnan_(c, x), x, cf(c, NAN)), r);
}

static tg_uop *expand(tg_rw *rw, tg_uop **cap)
{
	const int *all = rw->ctx;
	tg_uop *u = cap[0], *x = u->src[0], *r;
	unsigned s = tg_type_scalar(u->dtype), lanes = tg_type_count(u->dtype);
	tx c = { rw->ir, 0, 0, 0, 0 };

	if (!tg_scalar_is_float(s) || (!*all && s != TG_FLOAT64))
		return NULL;
	c.f64 = s == TG_FLOAT64;
	c.t = tg_type_vec(c.f64 ? TG_FLOAT64 : TG_FLOAT32, lanes);
	c.i = tg_type_vec(TG_INT32, lanes);
	c.b = tg_type_vec(TG_BOOL, lanes);
	if (!c.f64 && s != TG_FLOAT32)
		x = tg_uop1(rw->ir, TG_CAST, c.t, x);
	r = u->op == TG_EXP2 ? exp2_(&c, x) : u->op == TG_LOG2 ? log2_(&c, x)
	    : sin_(&c, x);
	if (r && r->dtype != u->dtype)
		r = tg_uop1(rw->ir, TG_CAST, u->dtype, r);
	return r;
}

static const tg_rule tx_table[] = {
	{ "exp2(x) -> series * 2^round(x)", P_OP(0, TG_EXP2), expand },
	{ "log2(x) -> exponent + atanh series", P_OP(0, TG_LOG2), expand },
	{ "sin(x) -> reduced by pi/2, series", P_OP(0, TG_SIN), expand },
};
static tg_ruleset tx_rules = TG_RULESET("transcendental", tx_table, NULL);

tg_uop *tg_transcendental(tg_ir *ir, tg_uop *sink, int all, int glsl)
{
	if (!all && !glsl)
		return sink;
	return tg_rewrite(ir, sink, &tx_rules, &all);
}

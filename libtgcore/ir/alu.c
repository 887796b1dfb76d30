/*
 * ir/alu.c - evaluates ALU ops on constants (tinygrad's exec_alu), for
 * constant folding and for the tests.
 *
 * Each op is C's on the operands' kind, made total: integers wrap in
 * two's complement (computed on 64-bit unsigned patterns, so no C
 * overflow happens here); integer division by zero and min / -1 have
 * the values tg.h documents (on the index kind they are refused), and
 * what else C leaves undefined is refused with TG_EINVAL instead of
 * guessed (QBE's foldint skips the same
 * cases).
 * Floats: float64 computes in double; float32 and the narrow floats call
 * the float versions of the math functions, as C code on them would, and
 * round each result to their kind.  Their +, * and 1/x are computed in
 * double and rounded once to the kind, which gives the same bits as
 * float arithmetic (and as float arithmetic rounded to half): double has
 * more than 2p+2 bits for p = 24, so rounding twice is harmless.
 * MULACC on floats is a fused multiply-add (one rounding, C's fma and
 * fmaf): accumulators use it, on every device, for a*b summed into an
 * accumulator.  On integers it is a*b+c, wrapping.
 */
#include "config.h"

#include <math.h>

#include "ir/ir.h"

/* Operands per op (0: not an ALU op); only that many are read. */
static const unsigned char arity[TG_NOPS] = {
#define ARITY(name, n, flags) [TG_##name] = n,
	TG_OPS(ARITY)
#undef ARITY
};

/* ---------------------------------------------------------- integers */

/* An integer kind: width and signedness.  Operands and results are
 * 64-bit patterns, sign-extended for signed kinds. */
typedef struct ikind {
	unsigned bits;
	int sgn;
} ikind;

typedef int ifn(const uint64_t *x, ikind k, uint64_t *r);

/* The kind's least value is -1 * 2^(bits-1) for signed kinds. */
static int is_min(uint64_t x, ikind k)
{
	return k.sgn &&
	       tg_sval(x) == -(int64_t)(UINT64_MAX >> (65 - k.bits)) - 1;
}

/* Shifting by a negative amount or by the width or more. */
static int bad_shift(uint64_t n, ikind k)
{
	return k.sgn ? tg_sval(n) < 0 || tg_sval(n) >= k.bits : n >= k.bits;
}

/* On bool, NEG is logical not (tinygrad's), not C's -x != 0. */
static int ineg(const uint64_t *x, ikind k, uint64_t *r)
{
	*r = k.bits == 1 ? !x[0] : 0 - x[0];
	return 0;
}

static int iadd(const uint64_t *x, ikind k, uint64_t *r)
{
	(void)k;
	*r = x[0] + x[1];
	return 0;
}

static int imul(const uint64_t *x, ikind k, uint64_t *r)
{
	(void)k;
	*r = x[0] * x[1];
	return 0;
}

/* Truncates toward zero, as C does; C leaves x / 0 and min / -1
 * undefined (x86 traps on both), so they get tinygrad's x / 0 = 0 and
 * the wrapped quotient min / -1 = min, the values every device's
 * kernels give too (codegen/intdiv.c). */
static int idiv(const uint64_t *x, ikind k, uint64_t *r)
{
	if (x[1] == 0)
		*r = 0;
	else if (is_min(x[0], k) && tg_sval(x[1]) == -1)
		*r = x[0];
	else
		*r = k.sgn ? (uint64_t)(tg_sval(x[0]) / tg_sval(x[1]))
		           : x[0] / x[1];
	return 0;
}

/* The dividend's sign, as C does; x % 0 = x (so that x / 0 * 0 + x % 0
 * is x, as for every other divisor) and min % -1 = 0. */
static int imod(const uint64_t *x, ikind k, uint64_t *r)
{
	if (x[1] == 0)
		*r = x[0];
	else if (is_min(x[0], k) && tg_sval(x[1]) == -1)
		*r = 0;
	else
		*r = k.sgn ? (uint64_t)(tg_sval(x[0]) % tg_sval(x[1]))
		           : x[0] % x[1];
	return 0;
}

static int imax(const uint64_t *x, ikind k, uint64_t *r)
{
	int lt = k.sgn ? tg_sval(x[0]) < tg_sval(x[1]) : x[0] < x[1];

	*r = lt ? x[1] : x[0];
	return 0;
}

static int ixor(const uint64_t *x, ikind k, uint64_t *r)
{
	(void)k;
	*r = x[0] ^ x[1];
	return 0;
}

static int ior(const uint64_t *x, ikind k, uint64_t *r)
{
	(void)k;
	*r = x[0] | x[1];
	return 0;
}

static int iand(const uint64_t *x, ikind k, uint64_t *r)
{
	(void)k;
	*r = x[0] & x[1];
	return 0;
}

/* Bits shifted past the width are dropped when the result wraps. */
static int ishl(const uint64_t *x, ikind k, uint64_t *r)
{
	if (bad_shift(x[1], k))
		return TG_EINVAL;
	*r = x[0] << x[1];
	return 0;
}

/* Arithmetic for signed kinds (copies of the sign come in), logical for
 * unsigned ones. */
static int ishr(const uint64_t *x, ikind k, uint64_t *r)
{
	if (bad_shift(x[1], k))
		return TG_EINVAL;
	*r = k.sgn && x[0] >> 63 ? ~(~x[0] >> x[1]) : x[0] >> x[1];
	return 0;
}

static uint32_t rotl32(uint32_t v, unsigned n)
{
	return v << n | v >> (32 - n);
}

/* tinygrad's threefry2x32 (codegen/uopgraph.py): the counter x and the
 * key are each two 32-bit words, low word first; the key schedule is
 * (key1, key0 ^ key1 ^ 0x1BD11BDA, key0); 5 rounds of 4 mix steps, each
 * round then injecting the schedule and the round number.  Returns the
 * two words as (x1 << 32) | x0. */
static uint64_t threefry(uint64_t x, uint64_t key)
{
	static const unsigned char rot[2][4] = {
		{ 13, 15, 26, 6 }, { 17, 29, 16, 24 },
	};
	uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
	uint32_t ks[3] = { k1, k0 ^ k1 ^ 0x1BD11BDAu, k0 };
	uint32_t a = (uint32_t)x + ks[2], b = (uint32_t)(x >> 32) + ks[0];
	unsigned i, j;

	for (i = 0; i < 5; i++) {
		for (j = 0; j < 4; j++) {
			a += b;
			b = rotl32(b, rot[i % 2][j]) ^ a;
		}
		a += ks[i % 3];
		b += ks[(i + 1) % 3] + i + 1;
	}
	return (uint64_t)b << 32 | a;
}

/* Only on uint64, the type tinygrad gives it. */
static int ithreefry(const uint64_t *x, ikind k, uint64_t *r)
{
	if (k.bits != 64 || k.sgn)
		return TG_EINVAL;
	*r = threefry(x[0], x[1]);
	return 0;
}

static int imulacc(const uint64_t *x, ikind k, uint64_t *r)
{
	(void)k;
	*r = x[0] * x[1] + x[2];
	return 0;
}

static ifn *const iops[TG_NOPS] = {
	[TG_NEG] = ineg, [TG_ADD] = iadd, [TG_MUL] = imul,
	[TG_IDIV] = idiv, [TG_MOD] = imod, [TG_MAX] = imax,
	[TG_XOR] = ixor, [TG_OR] = ior, [TG_AND] = iand,
	[TG_SHL] = ishl, [TG_SHR] = ishr, [TG_THREEFRY] = ithreefry,
	[TG_MULACC] = imulacc,
};

/* Ints and bool; the result wraps to the kind (bool: nonzero is true,
 * as C's conversion to _Bool, so ADD is or and MUL is and). */
static int int_alu(unsigned op, unsigned s, const tg_scalar *src,
                   tg_scalar *out)
{
	ikind k = { tg_scalar_bits(s), !tg_scalar_is_unsigned(s) };
	uint64_t x[3] = { 0, 0, 0 }, r;
	unsigned i;
	int rc;

	if (!iops[op])
		return TG_EINVAL;
	k.sgn &= s != TG_BOOL;
	for (i = 0; i < arity[op]; i++)
		x[i] = s == TG_UINT64 ? src[i].u : (uint64_t)src[i].i;
	/* index arithmetic (shapes, symbolic sizes) that divides by zero
	 * or overflows is a bug to report, not a value */
	if ((op == TG_IDIV || op == TG_MOD) && s == TG_INDEX &&
	    (x[1] == 0 || (is_min(x[0], k) && tg_sval(x[1]) == -1)))
		return TG_EINVAL;
	if ((rc = iops[op](x, k, &r)))
		return rc;
	*out = tg_scalar_from_bits(s == TG_BOOL ? r != 0 : r, s);
	return 0;
}

/* ------------------------------------------------------------ floats */

static double neg_f(const double *x)
{
	return -x[0];
}

/* 1/±0 is ±inf (IEEE division, C's Annex F). */
static double recip_f(const double *x)
{
	return 1.0 / x[0];
}

static double add_f(const double *x)
{
	return x[0] + x[1];
}

static double mul_f(const double *x)
{
	return x[0] * x[1];
}

/* NaN wins; +0 is above -0, so MAX commutes even on zeros. */
static double max_f(const double *x)
{
	if (isnan(x[0]) || isnan(x[1]))
		return isnan(x[0]) ? x[0] : x[1];
	if (x[0] == x[1])
		return signbit(x[0]) ? x[1] : x[0];
	return x[0] > x[1] ? x[0] : x[1];
}

static double (*const fops[TG_NOPS])(const double *x) = {
	[TG_NEG] = neg_f, [TG_RECIP] = recip_f, [TG_ADD] = add_f,
	[TG_MUL] = mul_f, [TG_MAX] = max_f,
};

/* The libm functions, in double and in float. */
static const struct {
	double (*d)(double);
	float (*f)(float);
} fmath[TG_NOPS] = {
	[TG_EXP2] = { exp2, exp2f }, [TG_LOG2] = { log2, log2f },
	[TG_SIN] = { sin, sinf }, [TG_SQRT] = { sqrt, sqrtf },
};

/* One float op, its result rounded to kind s. */
static int float_op(unsigned op, unsigned s, const double *x, double *r)
{
	if (fmath[op].d && s == TG_FLOAT64)
		*r = fmath[op].d(x[0]);
	else if (fmath[op].d)
		*r = fmath[op].f((float)x[0]);
	else if (fops[op])
		*r = fops[op](x);
	else
		return TG_EINVAL;
	*r = tg_float_round(*r, s);
	return 0;
}

static int float_alu(unsigned op, unsigned s, const tg_scalar *src,
                     tg_scalar *out)
{
	double x[3] = { 0, 0, 0 };
	unsigned i;

	for (i = 0; i < arity[op]; i++)
		x[i] = src[i].f;
	out->u = 0;
	if (op != TG_MULACC)
		return float_op(op, s, x, &out->f);
	/* fused, rounded once to float64 or float32 (narrower kinds then
	 * round again: codegen makes no MULACC of them) */
	out->f = tg_float_round(s == TG_FLOAT64
	                        ? fma(x[0], x[1], x[2])
	                        : (double)fmaf((float)x[0], (float)x[1],
	                                       (float)x[2]), s);
	return 0;
}

/* ------------------------------------------------------------- common */

/* Comparisons give bool; NaN compares unequal and not less. */
static void compare(unsigned op, unsigned s, const tg_scalar *x,
                    tg_scalar *out)
{
	int lt, ne;

	if (tg_scalar_is_float(s)) {
		lt = x[0].f < x[1].f;
		ne = x[0].f != x[1].f;
	} else if (s == TG_UINT64) {
		lt = x[0].u < x[1].u;
		ne = x[0].u != x[1].u;
	} else {
		lt = x[0].i < x[1].i;
		ne = x[0].i != x[1].i;
	}
	out->i = op == TG_CMPLT ? lt : ne;
}

int tg_exec_alu(unsigned op, unsigned s, const tg_scalar *src,
                tg_scalar *out)
{
	if (op >= TG_NOPS || !arity[op] || s >= TG_VOID)
		return TG_EINVAL;
	if (op == TG_WHERE) {
		*out = src[0].i ? src[1] : src[2];
		return 0;
	}
	if (op == TG_CMPLT || op == TG_CMPNE) {
		compare(op, s, src, out);
		return 0;
	}
	if (tg_scalar_is_float(s))
		return float_alu(op, s, src, out);
	return int_alu(op, s, src, out);
}

/*
 * fuzz_alu.c - compares tg_exec_alu, tg_exec_cast and tg_exec_bitcast
 * with an oracle written in plain C on native types (tinygrad's
 * test/external/fuzz_* idea, QBE's fold tests).
 *
 *   fuzz_alu [--seed N|random] [--cases N] [--seconds S]
 *
 * Each case draws an op, a kind and operands (edge values half of the
 * time, random bit patterns otherwise), runs both sides and compares the
 * result bits; any NaN equals any NaN.  Where the oracle's C would be
 * undefined, integer division gives tg.h's values (x/0 = 0, x%0 = x,
 * INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0), and the rest (shifts by the
 * width, out-of-range float-to-int casts) must be refused with
 * TG_EINVAL; signed
 * wraparound is computed through unsigned arithmetic.  float16 uses
 * GCC's _Float16 (cases are skipped without it); bfloat16 rounds float
 * results with round-to-nearest-even on the 16 dropped bits, and casts
 * round the exact long double value.  `make check` runs the fixed
 * default seed; exit status 1 on any mismatch.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/ir.h"

#define NKINDS (TG_INDEX + 1)
#define MAX_REPORTS 10

typedef struct fcase {
	unsigned op, s, to;  /* `to` for CAST and BITCAST */
	uint64_t x[3];       /* operand bits; x[0] is WHERE's bool */
} fcase;

static const char *const op_names[TG_NOPS] = {
#define OP_NAME(name, arity, flags) [TG_##name] = #name,
	TG_OPS(OP_NAME)
#undef OP_NAME
};

static const unsigned fuzz_ops[] = {
	TG_EXP2, TG_LOG2, TG_SIN, TG_SQRT, TG_NEG, TG_RECIP, TG_ADD, TG_MUL,
	TG_IDIV, TG_MAX, TG_MOD, TG_CMPLT, TG_CMPNE, TG_XOR, TG_SHL, TG_SHR,
	TG_OR, TG_AND, TG_THREEFRY, TG_WHERE, TG_MULACC, TG_CAST, TG_BITCAST,
};

/* ------------------------------------------------------------ random */

static uint64_t rng_state;

/* splitmix64 */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

static uint64_t mask(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* ------------------------------------------------ native encodings */

static float f32_of(uint64_t b)
{
	uint32_t u = (uint32_t)b;
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

static uint64_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof u);
	return u;
}

static double f64_of(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof d);
	return d;
}

static uint64_t f64_bits(double d)
{
	uint64_t b;

	memcpy(&b, &d, sizeof b);
	return b;
}

static float bf16_of(uint64_t b)
{
	return f32_of(b << 16);
}

static uint64_t bf16_bits(float f)
{
	return f32_bits(f) >> 16;
}

/* A float rounded to bfloat16: round to nearest even on the 16 bits
 * that bfloat16 drops (a carry rounds up into the exponent, and out of
 * the largest binade to inf). */
static float bf16_round(float f)
{
	uint32_t u = (uint32_t)f32_bits(f);

	if (isnan(f))
		return f;
	u += 0x7fff + ((u >> 16) & 1);
	return f32_of(u & 0xffff0000u);
}

/* An exact value rounded to bfloat16 (casts): scale to the quantum,
 * nearbyintl under the default rounding mode, overflow past the largest
 * finite value. */
static float bf16_round_ld(long double v)
{
	int e;

	if (isnan(v) || isinf(v) || v == 0)
		return (float)v;
	frexpl(v, &e);
	e = (e - 1 < -126 ? -126 : e - 1) - 7;
	v = ldexpl(nearbyintl(ldexpl(v, -e)), e);
	if (fabsl(v) > 0x1.fep127L)
		return v < 0 ? -INFINITY : INFINITY;
	return (float)v;
}

#ifdef __FLT16_MAX__
static _Float16 f16_of(uint64_t b)
{
	uint16_t u = (uint16_t)b;
	_Float16 h;

	memcpy(&h, &u, sizeof h);
	return h;
}

static uint64_t f16_bits(_Float16 h)
{
	uint16_t u;

	memcpy(&u, &h, sizeof u);
	return u;
}
#endif

static int bits_are_nan(uint64_t b, unsigned s)
{
	switch (s) {
	case TG_FLOAT16:
		return (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
	case TG_BFLOAT16:
		return isnan(bf16_of(b));
	case TG_FLOAT32:
		return isnan(f32_of(b));
	case TG_FLOAT64:
		return isnan(f64_of(b));
	}
	return 0;
}

/* ------------------------------------------------------- the oracle */

/* threefry2x32 transcribed from tinygrad's Python: multiplications and
 * floor divisions by powers of two on uint32 values. */
static uint64_t threefry_ref(uint64_t x, uint64_t key)
{
	static const int rotations[2][4] = {
		{ 13, 15, 26, 6 }, { 17, 29, 16, 24 },
	};
	uint32_t key0 = (uint32_t)(key % 4294967296u);
	uint32_t key1 = (uint32_t)(key / 4294967296u);
	uint32_t ks[3] = { key1, key0 ^ key1 ^ 0x1BD11BDA, key0 };
	uint32_t xr[2] = { (uint32_t)(x % 4294967296u) + ks[2],
	                   (uint32_t)(x / 4294967296u) + ks[0] };
	uint32_t x0;
	int i, j, r;

	for (i = 0; i < 5; i++) {
		for (j = 0; j < 4; j++) {
			r = rotations[i % 2][j];
			x0 = xr[0] + xr[1];
			xr[1] = x0 ^ (uint32_t)(xr[1] * (1u << r) + xr[1] /
			                        (UINT64_C(1) << (32 - r)));
			xr[0] = x0;
		}
		xr[0] = xr[0] + ks[i % 3];
		xr[1] = xr[1] + ks[(i + 1) % 3] + (uint32_t)i + 1;
	}
	return (uint64_t)xr[1] * 4294967296u | xr[0];
}

/* Helpers that keep GCC from judging the macro below per type: a
 * product is a plain uint64_t, a sign test works on any integer. */
static uint64_t mul64(uint64_t a, uint64_t b)
{
	return a * b;
}

static int is_negative(int64_t v)
{
	return v < 0;
}

/* One integer kind: T the C type, its width, whether it is signed (and
 * its least value), whether it is bool, whether it is the index kind
 * (whose bad divisions are refused). */
#define INT_ORACLE(NAME, T, BITS, SGN, MIN, ISBOOL, INDEX)                 \
static int NAME(unsigned op, const uint64_t *x, uint64_t *r)              \
{                                                                         \
	T a = (T)x[1 * (op == TG_WHERE)], b = (T)x[1 + (op == TG_WHERE)];   \
	T c = (T)x[2], v;                                                   \
	int bad_div = b == 0 || (SGN && a == MIN && b == (T)-1);            \
	int bad_sh = (SGN && is_negative((int64_t)b)) ||                    \
	             (uint64_t)b >= (BITS);                                 \
                                                                          \
	switch (op) {                                                       \
	case TG_NEG: v = ISBOOL ? !a : (T)(0 - (uint64_t)a); break;         \
	case TG_ADD: v = (T)((uint64_t)a + (uint64_t)b); break;             \
	case TG_MUL: v = (T)mul64((uint64_t)a, (uint64_t)b); break;         \
	case TG_IDIV: if (bad_div && (INDEX)) return TG_EINVAL;             \
		v = b == 0 ? 0 : bad_div ? a : (T)(a / b); break;           \
	case TG_MOD: if (bad_div && (INDEX)) return TG_EINVAL;              \
		v = b == 0 ? a : bad_div ? 0 : (T)(a % b); break;           \
	case TG_MAX: v = a > b ? a : b; break;                              \
	case TG_CMPLT: *r = a < b; return 0;                                \
	case TG_CMPNE: *r = a != b; return 0;                               \
	case TG_XOR: v = (T)(a ^ b); break;                                 \
	case TG_OR: v = (T)(a | b); break;                                  \
	case TG_AND: v = (T)(a & b); break;                                 \
	case TG_SHL: if (bad_sh) return TG_EINVAL;                          \
		v = (T)((uint64_t)a << b); break;                           \
	case TG_SHR: if (bad_sh) return TG_EINVAL; v = (T)(a >> b); break;  \
	case TG_MULACC:                                                     \
		v = (T)(mul64((uint64_t)a, (uint64_t)b) + (uint64_t)c);     \
		break;                                                      \
	case TG_WHERE: v = x[0] ? a : b; break;                             \
	case TG_THREEFRY: if ((BITS) != 64 || SGN) return TG_EINVAL;        \
		v = (T)threefry_ref((uint64_t)a, (uint64_t)b); break;       \
	default: return TG_EINVAL;                                          \
	}                                                                   \
	*r = (uint64_t)v & mask(BITS);                                      \
	return 0;                                                           \
}

INT_ORACLE(o_bool, bool, 1, 0, 0, 1, 0)
INT_ORACLE(o_i8, int8_t, 8, 1, INT8_MIN, 0, 0)
INT_ORACLE(o_u8, uint8_t, 8, 0, 0, 0, 0)
INT_ORACLE(o_i16, int16_t, 16, 1, INT16_MIN, 0, 0)
INT_ORACLE(o_u16, uint16_t, 16, 0, 0, 0, 0)
INT_ORACLE(o_i32, int32_t, 32, 1, INT32_MIN, 0, 0)
INT_ORACLE(o_u32, uint32_t, 32, 0, 0, 0, 0)
INT_ORACLE(o_i64, int64_t, 64, 1, INT64_MIN, 0, 0)
INT_ORACLE(o_u64, uint64_t, 64, 0, 0, 0, 0)
INT_ORACLE(o_index, int64_t, 64, 1, INT64_MIN, 0, 1)

/* NaN wins, +0 is above -0 (ir.h's MAX). */
#define MAXNAN(a, b) (isnan((float)(a)) ? (a) : isnan((float)(b)) ? (b) : \
	(a) == (b) ? (signbit((float)(a)) ? (b) : (a)) : (a) > (b) ? (a) : (b))

/* One float kind: T the C type, DEC/ENC its bits, R(x) rounds an
 * expression to the kind, M(fn, x) calls libm at the kind's precision.
 * MULACC is fused: C's fma in double, fmaf (then R) for the others. */
#define FLOAT_ORACLE(NAME, T, DEC, ENC, R, M)                              \
static int NAME(unsigned op, const uint64_t *x, uint64_t *r)              \
{                                                                         \
	T a = DEC(x[1 * (op == TG_WHERE)]), b = DEC(x[1 + (op == TG_WHERE)]); \
	T c = DEC(x[2]), v;                                                 \
                                                                          \
	switch (op) {                                                       \
	case TG_EXP2: v = R(M(exp2, a)); break;                             \
	case TG_LOG2: v = R(M(log2, a)); break;                             \
	case TG_SIN: v = R(M(sin, a)); break;                               \
	case TG_SQRT: v = R(M(sqrt, a)); break;                             \
	case TG_NEG: v = -a; break;                                         \
	case TG_RECIP: v = R(1 / a); break;                                 \
	case TG_ADD: v = R(a + b); break;                                   \
	case TG_MUL: v = R(a * b); break;                                   \
	case TG_MAX: v = MAXNAN(a, b); break;                               \
	case TG_CMPLT: *r = a < b; return 0;                                \
	case TG_CMPNE: *r = a != b; return 0;                               \
	case TG_WHERE: v = x[0] ? a : b; break;                             \
	case TG_MULACC: v = R(sizeof(T) == 8 ? fma(a, b, c)                 \
	                : fmaf((float)a, (float)b, (float)c)); break;       \
	default: return TG_EINVAL;                                          \
	}                                                                   \
	*r = ENC(v);                                                        \
	return 0;                                                           \
}

#define ID(x) (x)
#define MF(fn, x) fn##f((float)(x))
#define MD(fn, x) fn(x)
#define R32(x) ((float)(x))
FLOAT_ORACLE(o_f32, float, f32_of, f32_bits, R32, MF)
FLOAT_ORACLE(o_f64, double, f64_of, f64_bits, ID, MD)
FLOAT_ORACLE(o_bf16, float, bf16_of, bf16_bits, bf16_round, MF)
#ifdef __FLT16_MAX__
#define R16(x) ((_Float16)(x))
FLOAT_ORACLE(o_f16, _Float16, f16_of, f16_bits, R16, MF)
#endif

typedef int oracle_fn(unsigned op, const uint64_t *x, uint64_t *r);

static oracle_fn *const oracles[NKINDS] = {
	[TG_BOOL] = o_bool, [TG_INT8] = o_i8, [TG_UINT8] = o_u8,
	[TG_INT16] = o_i16, [TG_UINT16] = o_u16, [TG_INT32] = o_i32,
	[TG_UINT32] = o_u32, [TG_INT64] = o_i64, [TG_UINT64] = o_u64,
#ifdef __FLT16_MAX__
	[TG_FLOAT16] = o_f16,
#endif
	[TG_BFLOAT16] = o_bf16, [TG_FLOAT32] = o_f32, [TG_FLOAT64] = o_f64,
	[TG_INDEX] = o_index,
};

/* --------------------------------------------------- cast oracle */

/* The exact value of float bits of kind s. */
static long double float_value(uint64_t b, unsigned s)
{
	switch (s) {
#ifdef __FLT16_MAX__
	case TG_FLOAT16: return f16_of(b);
#endif
	case TG_BFLOAT16: return bf16_of(b);
	case TG_FLOAT32: return f32_of(b);
	default: return f64_of(b);
	}
}

/* The C conversion of an integer pattern to int kind `to`. */
static uint64_t int_to_int(uint64_t v, unsigned to)
{
	switch (to) {
	case TG_INT8: return (uint8_t)(int8_t)v;
	case TG_UINT8: return (uint8_t)v;
	case TG_INT16: return (uint16_t)(int16_t)v;
	case TG_UINT16: return (uint16_t)v;
	case TG_INT32: return (uint32_t)(int32_t)v;
	case TG_UINT32: return (uint32_t)v;
	default: return v;
	}
}

/* An exact value (integer or float) converted by C to float kind
 * `to`: one rounding, as the long double holds every source exactly. */
static uint64_t to_float(long double v, unsigned to)
{
	switch (to) {
#ifdef __FLT16_MAX__
	case TG_FLOAT16: return f16_bits((_Float16)v);
#endif
	case TG_BFLOAT16: return bf16_bits(bf16_round_ld(v));
	case TG_FLOAT32: return f32_bits((float)v);
	default: return f64_bits((double)v);
	}
}

/* Float to int: undefined unless the truncated value fits. */
static int float_to_int(long double v, unsigned to, uint64_t *r)
{
	unsigned bits = tg_scalar_bits(to);
	int sgn = !tg_scalar_is_unsigned(to);
	long double t = truncl(v), hi = ldexpl(1, (int)bits - sgn);

	if (isnan(v) || t >= hi || t < (sgn ? -hi : 0))
		return TG_EINVAL;
	*r = int_to_int(sgn ? (uint64_t)(int64_t)t : (uint64_t)t, to);
	return 0;
}

/* Integer to float32/float64 by C's own conversion from the integer
 * type (not through long double, which valgrind runs at double
 * precision). */
static uint64_t int_to_native_float(uint64_t x, int sgn, unsigned to)
{
	if (to == TG_FLOAT32)
		return f32_bits(sgn ? (float)(int64_t)x : (float)x);
	return f64_bits(sgn ? (double)(int64_t)x : (double)x);
}

static int cast_oracle(const fcase *c, uint64_t *r)
{
	int isf = tg_scalar_is_float(c->s);
	int sgn = c->s != TG_BOOL && !tg_scalar_is_unsigned(c->s);
	uint64_t x = c->x[0];
	long double v;

	if (sgn && tg_scalar_bits(c->s) < 64 &&
	    x >> (tg_scalar_bits(c->s) - 1))
		x |= ~mask(tg_scalar_bits(c->s));  /* sign-extend */
	v = isf ? float_value(x, c->s) : sgn ? (long double)(int64_t)x
	                                     : (long double)x;
	if (c->to == TG_BOOL)
		*r = isf ? v != 0 : x != 0;
	else if (!isf && (c->to == TG_FLOAT32 || c->to == TG_FLOAT64))
		*r = int_to_native_float(x, sgn, c->to);
	else if (tg_scalar_is_float(c->to))
		*r = to_float(v, c->to);
	else if (isf)
		return float_to_int(v, c->to, r);
	else
		*r = int_to_int(x, c->to) & mask(tg_scalar_bits(c->to));
	return 0;
}

/* A bitcast keeps the bits; sizes must match and bool takes 0 or 1. */
static int bitcast_oracle(const fcase *c, uint64_t *r)
{
	size_t from = c->s == TG_INDEX ? 8 : tg_dtype_size(c->s);
	size_t to = c->to == TG_INDEX ? 8 : tg_dtype_size(c->to);

	if (from != to || (c->to == TG_BOOL && c->x[0] > 1))
		return TG_EINVAL;
	*r = c->x[0];
	return 0;
}

static int oracle(const fcase *c, uint64_t *r)
{
	if (c->op == TG_CAST)
		return cast_oracle(c, r);
	if (c->op == TG_BITCAST)
		return bitcast_oracle(c, r);
	return oracles[c->s](c->op, c->x, r);
}

/* ---------------------------------------------------- library side */

static unsigned result_kind(const fcase *c)
{
	if (c->op == TG_CAST || c->op == TG_BITCAST)
		return c->to;
	return c->op == TG_CMPLT || c->op == TG_CMPNE ? TG_BOOL : c->s;
}

static int library(const fcase *c, uint64_t *r)
{
	tg_scalar x[3], out;
	int rc, i;

	for (i = 0; i < 3; i++)
		x[i] = tg_scalar_from_bits(c->x[i], i == 0 && c->op == TG_WHERE
		                                    ? TG_BOOL : c->s);
	if (c->op == TG_CAST)
		rc = tg_exec_cast(x[0], c->s, c->to, &out);
	else if (c->op == TG_BITCAST)
		rc = tg_exec_bitcast(x[0], c->s, c->to, &out);
	else
		rc = tg_exec_alu(c->op, c->s, x, &out);
	*r = rc ? 0 : tg_scalar_to_bits(out, result_kind(c));
	return rc;
}

/* ------------------------------------------------------- drawing */

/* Edge values of a kind, as bit patterns. */
static uint64_t edge(unsigned s)
{
	static const uint64_t f16[] = { 0, 0x8000, 0x3c00, 0xbc00, 0x7c00,
		0xfc00, 0x7e00, 0x7bff, 0x0001, 0x0400, 0x03ff, 0x4000 };
	static const uint64_t bf[] = { 0, 0x8000, 0x3f80, 0xbf80, 0x7f80,
		0xff80, 0x7fc0, 0x7f7f, 0x0001, 0x0080, 0x007f, 0x4000 };
	static const double f[] = { 0, -0.0, 1, -1, INFINITY, -INFINITY, NAN,
		0.5, 2, 3, -7, 255, 65504, 65520, 0x1p-24, 0x1p-149, 0x1p63,
		0x1p64, -0x1p63, 1e300, 0x1p-1074, 128, -129, 4294967295.0 };
	unsigned bits = tg_scalar_bits(s);
	uint64_t small = (uint64_t)((int64_t)below(75) - 3);

	if (s == TG_FLOAT16)
		return f16[below(TG_ARRAY_LEN(f16))];
	if (s == TG_BFLOAT16)
		return bf[below(TG_ARRAY_LEN(bf))];
	if (s == TG_FLOAT32)
		return f32_bits((float)f[below(TG_ARRAY_LEN(f))]);
	if (s == TG_FLOAT64)
		return f64_bits(f[below(TG_ARRAY_LEN(f))]);
	switch (below(4)) {
	case 0: return small & mask(bits);               /* -3..71 */
	case 1: return mask(bits) >> 1;                  /* signed max */
	case 2: return (mask(bits) >> 1) + 1;            /* signed min */
	default: return mask(bits) - below(2);           /* -1, -2 */
	}
}

/* A value of kind s: an edge, a small float, or random bits. */
static uint64_t draw(unsigned s)
{
	double d = ldexp((double)below(1u << 20) - (1 << 19),
	                 (int)below(60) - 40);

	if (s == TG_BOOL)
		return below(2);
	if (below(2))
		return edge(s);
	if (tg_scalar_is_float(s) && below(2))
		return tg_scalar_to_bits(tg_scalar_from_bits(f64_bits(d),
		                                             TG_FLOAT64), s);
	return rnd() & mask(tg_scalar_bits(s));
}

static void draw_case(fcase *c)
{
	c->op = fuzz_ops[below(TG_ARRAY_LEN(fuzz_ops))];
	c->s = (unsigned)below(NKINDS);
	c->to = (unsigned)below(NKINDS);
	if (c->op == TG_THREEFRY && below(2))
		c->s = TG_UINT64;
	c->x[0] = c->op == TG_WHERE ? below(2) : draw(c->s);
	c->x[1] = draw(c->s);
	c->x[2] = draw(c->s);
}

static const char *kind_name(unsigned s)
{
	return s == TG_INDEX ? "index" : tg_dtype_name((tg_dtype)s);
}

static int skip(const fcase *c)
{
#ifdef __FLT16_MAX__
	(void)c;
	return 0;
#else
	return c->s == TG_FLOAT16 || c->to == TG_FLOAT16;
#endif
}

/* Whether both sides agree: same status, and when 0 the same bits or
 * two NaNs. */
static int agree(const fcase *c, int rc1, uint64_t r1, int rc2, uint64_t r2)
{
	unsigned rs = result_kind(c);

	if (rc1 != rc2)
		return 0;
	return rc1 || r1 == r2 ||
	       (bits_are_nan(r1, rs) && bits_are_nan(r2, rs));
}

static void report(const fcase *c, int rc1, uint64_t r1, int rc2,
                   uint64_t r2)
{
	fprintf(stderr, "mismatch: %s %s", op_names[c->op], kind_name(c->s));
	if (c->op == TG_CAST || c->op == TG_BITCAST)
		fprintf(stderr, " -> %s", kind_name(c->to));
	fprintf(stderr, " (0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64 "): "
	        "library %d/0x%" PRIx64 ", oracle %d/0x%" PRIx64 "\n",
	        c->x[0], c->x[1], c->x[2], rc1, r1, rc2, r2);
}

/* ------------------------------------------------------------ main */

typedef struct opts {
	uint64_t seed;
	unsigned long cases;
	double seconds;
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seed") &&
		    !strcmp(argv[i + 1], "random"))
			o->seed = (uint64_t)time(NULL) ^
			          (uint64_t)getpid() << 32;
		else if (!strcmp(argv[i], "--seed"))
			o->seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--cases"))
			o->cases = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seconds"))
			o->seconds = strtod(argv[i + 1], NULL);
		else
			break;
	}
	if (i == argc)
		return 0;
	fprintf(stderr, "usage: %s [--seed N|random] [--cases N] "
	        "[--seconds S]\n", argv[0]);
	return -1;
}

int main(int argc, char **argv)
{
	opts o = { 1, 200000, 30 };
	unsigned long n, bad = 0, refused = 0, skipped = 0;
	time_t start = time(NULL);
	uint64_t r1, r2;
	int rc1, rc2;
	fcase c;

	if (parse_args(argc, argv, &o))
		return 2;
	rng_state = o.seed;
	for (n = 0; n < o.cases; n++) {
		if (n % 4096 == 0 && difftime(time(NULL), start) > o.seconds)
			break;
		draw_case(&c);
		if (skip(&c)) {
			skipped++;
			continue;
		}
		rc1 = library(&c, &r1);
		rc2 = oracle(&c, &r2);
		refused += rc1 != 0;
		if (!agree(&c, rc1, r1, rc2, r2) && bad++ < MAX_REPORTS)
			report(&c, rc1, r1, rc2, r2);
	}
	printf("fuzz_alu: seed %" PRIu64 ", %lu cases (%lu refused, %lu "
	       "skipped), %lu mismatches%s\n", o.seed, n, refused, skipped,
	       bad, n < o.cases ? " (stopped at the time limit)" : "");
	return bad ? 1 : 0;
}

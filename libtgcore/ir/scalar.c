/*
 * ir/scalar.c - constants of a scalar kind: rounding to the narrow float
 * formats and their encodings, conversion from integers, casts and
 * bitcasts.
 *
 * Float constants are doubles that their kind can hold exactly, so every
 * rounding here goes straight from the exact value (a double or a 64-bit
 * integer) to the target format: nothing rounds twice, which would give
 * wrong bfloat16 results near ties.  The rounding is written out with
 * integer-exact steps rather than taken from the FPU, so it does not
 * depend on the current rounding mode.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* An IEEE 754 binary format: significand bits (the hidden one
 * included) and exponent bits. */
typedef struct fmt {
	int p, ebits;
} fmt;

static const fmt fmts[] = {
	[TG_FLOAT16 - TG_FLOAT16] = { 11, 5 },
	[TG_BFLOAT16 - TG_FLOAT16] = { 8, 8 },
	[TG_FLOAT32 - TG_FLOAT16] = { 24, 8 },
	[TG_FLOAT64 - TG_FLOAT16] = { 53, 11 },
};

static const fmt *fmt_of(unsigned s)
{
	return tg_scalar_is_float(s) ? &fmts[s - TG_FLOAT16] : NULL;
}

/* Exponent of the least normal number: -14 for float16. */
static int emin(const fmt *f)
{
	return 2 - (1 << (f->ebits - 1));
}

/* The greatest finite value: 65504 for float16. */
static double maxval(const fmt *f)
{
	return ldexp(2 - ldexp(1, 1 - f->p), -emin(f) + 1);
}

static uint64_t mask(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* y rounded to an integer, ties to even.  y is exact and below 2^53 in
 * magnitude, so floor and the difference are exact. */
static double rne(double y)
{
	double r = floor(y), d = y - r;

	if (d > 0.5 || (d == 0.5 && fmod(r, 2) != 0))
		r += 1;
	return r;
}

/* x rounded to f: to a multiple of the quantum of x's binade (of the
 * least normal binade for subnormals), overflowing to inf. */
static double round_to(double x, const fmt *f)
{
	int e;

	if (!isfinite(x) || x == 0 || f->p == 53)
		return x;
	frexp(x, &e);                    /* 2^(e-1) <= |x| < 2^e */
	e = (e - 1 < emin(f) ? emin(f) : e - 1) - (f->p - 1);
	x = copysign(ldexp(rne(ldexp(x, -e)), e), x);  /* keeps -0 */
	return fabs(x) > maxval(f) ? copysign(INFINITY, x) : x;
}

double tg_float_round(double x, unsigned s)
{
	const fmt *f = fmt_of(s);

	return f ? round_to(x, f) : x;
}

/* The top payload bits of a NaN, at least the quiet bit, so a NaN
 * survives decoding and encoding with its payload. */
static uint64_t nan_payload(double x, int mbits)
{
	uint64_t b, m;

	memcpy(&b, &x, sizeof b);
	m = (b >> (52 - mbits)) & mask((unsigned)mbits);
	return m ? m : UINT64_C(1) << (mbits - 1);
}

/* x (rounded to f first) in f's encoding. */
static uint64_t encode(double x, const fmt *f)
{
	int mb = f->p - 1, e;
	uint64_t sign = (uint64_t)(signbit(x) != 0) << (f->ebits + mb);
	uint64_t inf = mask((unsigned)f->ebits) << mb;
	double a = fabs(round_to(x, f));

	if (isnan(x))
		return sign | inf | nan_payload(x, mb);
	if (isinf(a))
		return sign | inf;
	if (a < ldexp(1, emin(f)))       /* subnormal or zero */
		return sign | (uint64_t)ldexp(a, mb - emin(f));
	frexp(a, &e);
	e--;
	return sign | (uint64_t)(e - emin(f) + 1) << mb |
	       ((uint64_t)ldexp(a, mb - e) & mask((unsigned)mb));
}

/* The value of f's encoding `bits`. */
static double decode(uint64_t bits, const fmt *f)
{
	int mb = f->p - 1;
	uint64_t m = bits & mask((unsigned)mb), nan;
	uint64_t ex = (bits >> mb) & mask((unsigned)f->ebits);
	double a;

	if (ex == mask((unsigned)f->ebits) && m) {
		nan = UINT64_C(0x7ff) << 52 | m << (52 - mb);
		memcpy(&a, &nan, sizeof a);
	} else if (ex == mask((unsigned)f->ebits)) {
		a = INFINITY;
	} else if (ex == 0) {
		a = ldexp((double)m, emin(f) - mb);
	} else {
		a = ldexp((double)(m | UINT64_C(1) << mb),
		          (int)ex - 1 + emin(f) - mb);
	}
	return copysign(a, (bits >> (mb + f->ebits)) & 1 ? -1.0 : 1.0);
}

uint16_t tg_f16_bits(double x)
{
	return (uint16_t)encode(x, fmt_of(TG_FLOAT16));
}

double tg_f16_value(uint16_t bits)
{
	return decode(bits, fmt_of(TG_FLOAT16));
}

uint16_t tg_bf16_bits(double x)
{
	return (uint16_t)encode(x, fmt_of(TG_BFLOAT16));
}

double tg_bf16_value(uint16_t bits)
{
	return decode(bits, fmt_of(TG_BFLOAT16));
}

/* The signed value of a 64-bit two's complement pattern, without the
 * implementation-defined conversion. */
/* The integer (neg ? -mag : mag) rounded to the float kind s in one
 * step: round to the format's precision on the integer itself, then
 * convert exactly. */
static double int_to_float(uint64_t mag, int neg, unsigned s)
{
	const fmt *f = fmt_of(s);
	int sh = 0;
	uint64_t q, rem, half;
	double a;

	while (sh < 64 && mag >> sh >> f->p)
		sh++;                    /* mag >> sh now fits p bits */
	if (sh > 0) {
		q = mag >> sh;
		rem = mag & mask((unsigned)sh);
		half = UINT64_C(1) << (sh - 1);
		if (rem > half || (rem == half && (q & 1)))
			q++;
		mag = q;
	}
	a = round_to(ldexp((double)mag, sh), f);  /* exact but overflow */
	return neg ? -a : a;
}

/* The value's 64-bit two's complement pattern: sign-extended for signed
 * kinds, zero-extended for unsigned ones and bool. */
static uint64_t pattern(tg_scalar v, unsigned s)
{
	return s == TG_UINT64 ? v.u : (uint64_t)v.i;
}

tg_scalar tg_scalar_from_int(int64_t v, unsigned s)
{
	tg_scalar r = { 0 };
	uint64_t mag;

	if (s == TG_BOOL) {
		r.i = v != 0;
	} else if (tg_scalar_is_float(s)) {
		mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
		r.f = int_to_float(mag, v < 0, s);
	} else if (tg_scalar_is_int(s)) {
		r = tg_scalar_from_bits((uint64_t)v, s);
	}
	return r;
}

double tg_scalar_to_double(tg_scalar v, unsigned s)
{
	if (tg_scalar_is_float(s))
		return v.f;
	return s == TG_UINT64 ? (double)v.u : (double)v.i;
}

uint64_t tg_scalar_to_bits(tg_scalar v, unsigned s)
{
	uint64_t b;

	if (s == TG_FLOAT64) {
		memcpy(&b, &v.f, sizeof b);
		return b;
	}
	if (tg_scalar_is_float(s))
		return encode(v.f, fmt_of(s));
	return pattern(v, s) & mask(tg_scalar_bits(s));
}

/* Int kinds take the low bits, sign- or zero-extended; bool the low
 * bit. */
tg_scalar tg_scalar_from_bits(uint64_t bits, unsigned s)
{
	unsigned n = tg_scalar_bits(s);
	tg_scalar r = { 0 };

	bits &= mask(n);
	if (s == TG_FLOAT64)
		memcpy(&r.f, &bits, sizeof r.f);
	else if (tg_scalar_is_float(s))
		r.f = decode(bits, fmt_of(s));
	else if (s == TG_UINT64)
		r.u = bits;
	else if (!tg_scalar_is_unsigned(s) && n > 1 && bits >> (n - 1))
		r.i = tg_sval(bits | ~mask(n));
	else
		r.i = (int64_t)bits;
	return r;
}

/* Every kind fills all 64 bits of the union, so one comparison covers
 * ints (as integers) and floats (bitwise). */
int tg_scalar_eq(tg_scalar a, tg_scalar b, unsigned s)
{
	(void)s;
	return a.u == b.u;
}

/* Integers below 10^15 as "100.0"; others as the shortest "%.*g" text
 * that reads back as f in kind s, with a ".0" when it would otherwise
 * look like an integer. */
static void format_float(double f, unsigned s, char *buf, size_t n)
{
	int prec;

	if (f == trunc(f) && fabs(f) < 1e15) {
		snprintf(buf, n, "%.1f", f);
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, n, "%.*g", prec, f);
		if (tg_float_round(strtod(buf, NULL), s) == f)
			break;
	}
	snprintf(buf, n, "%.*g", prec, f);
	if (!strpbrk(buf, ".e") && strlen(buf) + 2 < n)
		strcat(buf, ".0");
}

/* NAN and INFINITY as C's <math.h> spells them; float32 gets an "f",
 * the narrow floats a cast. */
const char *tg_scalar_format(tg_scalar v, unsigned s, char *buf, size_t n)
{
	static const char *const cast[] = { "(half)", "(__bf16)", "", "" };
	char num[64];

	if (!tg_scalar_is_float(s)) {
		if (s == TG_BOOL)
			snprintf(buf, n, "%s", v.i ? "true" : "false");
		else if (s == TG_UINT64)
			snprintf(buf, n, "%" PRIu64, v.u);
		else
			snprintf(buf, n, "%" PRId64, v.i);
		return buf;
	}
	if (isnan(v.f))
		snprintf(num, sizeof num, "NAN");
	else if (isinf(v.f))
		snprintf(num, sizeof num, "%sINFINITY", v.f < 0 ? "-" : "");
	else
		format_float(v.f, s, num, sizeof num);
	snprintf(buf, n, "%s%s%s", cast[s - TG_FLOAT16], num,
	         s != TG_FLOAT64 && isfinite(v.f) ? "f" : "");
	return buf;
}

/* The greatest value of int kind s as a pattern; its least is -max-1
 * for signed kinds and 0 for unsigned ones. */
static uint64_t int_max(unsigned s)
{
	uint64_t m = mask(tg_scalar_bits(s));

	return tg_scalar_is_unsigned(s) ? m : m >> 1;
}

tg_scalar tg_dtype_min(unsigned s)
{
	tg_scalar r = { 0 };

	if (tg_scalar_is_float(s))
		r.f = -INFINITY;
	else if (tg_scalar_is_int(s) && !tg_scalar_is_unsigned(s))
		r.i = -(int64_t)int_max(s) - 1;
	return r;
}

tg_scalar tg_dtype_max(unsigned s)
{
	tg_scalar r = { 0 };

	if (tg_scalar_is_float(s))
		r.f = INFINITY;
	else if (s == TG_BOOL)
		r.i = 1;
	else if (tg_scalar_is_int(s))
		r = tg_scalar_from_bits(int_max(s), s);
	return r;
}

static int is_value(unsigned s)
{
	return s < TG_VOID;
}

/* Float to int kind: truncation, refused where C leaves it undefined
 * (the truncated value does not fit). */
static int float_to_int(double f, unsigned to, tg_scalar *out)
{
	double t = trunc(f), hi = ldexp(1, (int)tg_scalar_bits(to));
	int sgn = !tg_scalar_is_unsigned(to);

	if (sgn)
		hi /= 2;
	if (!isfinite(f) || t >= hi || t < (sgn ? -hi : 0))
		return TG_EINVAL;
	if (sgn)
		*out = tg_scalar_from_int((int64_t)t, to);
	else
		*out = tg_scalar_from_bits((uint64_t)t, to);
	return 0;
}

int tg_exec_cast(tg_scalar v, unsigned from, unsigned to, tg_scalar *out)
{
	uint64_t x = pattern(v, from);
	int neg = from != TG_UINT64 && v.i < 0;

	if (!is_value(from) || !is_value(to))
		return TG_EINVAL;
	out->u = 0;
	if (to == TG_BOOL)
		out->i = tg_scalar_is_float(from) ? v.f != 0 : x != 0;
	else if (tg_scalar_is_float(from) && tg_scalar_is_float(to))
		out->f = tg_float_round(v.f, to);
	else if (tg_scalar_is_float(from))
		return float_to_int(v.f, to, out);
	else if (tg_scalar_is_float(to))
		out->f = int_to_float(neg ? 0 - x : x, neg, to);
	else
		*out = tg_scalar_from_bits(x, to);
	return 0;
}

/* Bytes of a kind's values; 0 for TG_VOID and outside the kinds. */
static size_t kind_size(unsigned s)
{
	return s == TG_INDEX ? 8 : tg_dtype_size((tg_dtype)s);
}

/* Only 0 and 1 are bools: other bytes are no value of the kind. */
int tg_exec_bitcast(tg_scalar v, unsigned from, unsigned to,
                    tg_scalar *out)
{
	uint64_t bits = tg_scalar_to_bits(v, from);

	if (!kind_size(from) || kind_size(from) != kind_size(to) ||
	    (to == TG_BOOL && bits > 1))
		return TG_EINVAL;
	*out = tg_scalar_from_bits(bits, to);
	return 0;
}

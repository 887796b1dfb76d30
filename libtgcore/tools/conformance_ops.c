/*
 * conformance_ops.c - tg-conformance's "ops" cases: elementwise,
 * reductions, matmul, movement, int32 and integer division, the other
 * float dtypes and casts, and random numbers, each against plain C
 * loops (in double precision, or the exact integer or threefry
 * reference).  Separate from the contract and memory cases
 * (conformance_cases.c): these compute, and need references.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

typedef tg_tensor *(*binary_fn)(const tg_tensor *, const tg_tensor *);
typedef tg_tensor *(*unary_fn)(const tg_tensor *);

static double relu(double x) { return x > 0 ? x : 0; }
static double sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double neg(double x) { return -x; }

enum { EW_N = 257 };  /* elements of the elementwise case's inputs */

/* The binary ops on ta and tb (a and b on the host). */
static enum cf_verdict ew_binary(struct cf_ctx *c, const float *a,
                                 const float *b, tg_tensor *ta,
                                 tg_tensor *tb)
{
	static const struct {
		const char *name;
		binary_fn fn;
		int op;
	} bins[] = {
		{ "add", tg_add, '+' }, { "sub", tg_sub, '-' },
		{ "mul", tg_mul, '*' }, { "div", tg_div, '/' },
		{ "maximum", tg_maximum, 'M' },
	};
	double ref[EW_N];
	enum cf_verdict v = CF_PASS;
	size_t k, i;

	for (k = 0; k < sizeof bins / sizeof *bins && !v; k++) {
		for (i = 0; i < EW_N; i++) {
			double x = a[i], y = b[i];

			ref[i] = bins[k].op == '+' ? x + y : bins[k].op == '-'
				? x - y : bins[k].op == '*' ? x * y
				: bins[k].op == '/' ? x / y : fmax(x, y);
		}
		v = cf_check(c, bins[k].name, cf_keep(c, bins[k].fn(ta, tb)),
		             ref, EW_N, 1e-6, 1e-6);
	}
	return v;
}

/* The unary ops on ta, or on tb (> 0) where they need it. */
static enum cf_verdict ew_unary(struct cf_ctx *c, const float *a,
                                const float *b, tg_tensor *ta,
                                tg_tensor *tb)
{
	static const struct {
		const char *name;
		unary_fn fn;
		double (*ref)(double);
		int positive; /* takes b, which is > 0 */
		double rtol;
	} uns[] = {
		{ "neg", tg_neg, neg, 0, 0 },
		{ "exp", tg_exp, exp, 0, 1e-5 },
		{ "log", tg_log, log, 1, 1e-5 },
		{ "sqrt", tg_sqrt, sqrt, 1, 1e-6 },
		{ "sin", tg_sin, sin, 0, 1e-5 },
		{ "relu", tg_relu, relu, 0, 0 },
		{ "sigmoid", tg_sigmoid, sigmoid, 0, 1e-5 },
	};
	double ref[EW_N];
	enum cf_verdict v = CF_PASS;
	size_t k, i;

	for (k = 0; k < sizeof uns / sizeof *uns && !v; k++) {
		const float *x = uns[k].positive ? b : a;

		for (i = 0; i < EW_N; i++)
			ref[i] = uns[k].ref(x[i]);
		v = cf_check(c, uns[k].name, cf_keep(c,
		             uns[k].fn(uns[k].positive ? tb : ta)), ref, EW_N,
		             1e-6, uns[k].rtol + 1e-6);
	}
	return v;
}

/* A comparison and a select, cast to float32. */
static enum cf_verdict ew_where(struct cf_ctx *c, const float *a,
                                const float *b, tg_tensor *ta,
                                tg_tensor *tb)
{
	double ref[EW_N];

	for (size_t i = 0; i < EW_N; i++)
		ref[i] = a[i] < b[i] - 1.5 ? 1.0 : 0.0;
	return cf_check(c, "where(a < b - 1.5, 1, 0)", cf_keep(c, tg_cast(
	                cf_keep(c, tg_where_s(cf_keep(c, tg_lt(ta,
	                cf_keep(c, tg_sub_s(tb, 1.5)))), 1.0, 0.0)),
	                TG_FLOAT32)), ref, EW_N, 0, 0);
}

enum cf_verdict cf_ops_elementwise(struct cf_ctx *c)
{
	static const int64_t n = EW_N;
	float a[EW_N], b[EW_N];
	enum cf_verdict v;
	tg_tensor *ta, *tb;

	cf_fill(a, EW_N, 2, -2, 2);
	cf_fill(b, EW_N, 3, 0.5, 3);
	ta = cf_from(c, a, 1, &n);
	tb = cf_from(c, b, 1, &n);
	if (!(v = ew_binary(c, a, b, ta, tb)) &&
	    !(v = ew_unary(c, a, b, ta, tb)))
		v = ew_where(c, a, b, ta, tb);
	return v;
}

enum cf_verdict cf_ops_reduce(struct cf_ctx *c)
{
	enum { R = 33, C = 65 };
	static const int64_t shape[2] = { R, C };
	float x[R * C];
	double ref[R * C > 0 ? C : 1], s;
	int ax0 = 0, ax1 = 1;
	tg_tensor *t;
	enum cf_verdict v;
	int i, j;

	cf_fill(x, R * C, 4, -1, 1);
	t = cf_from(c, x, 2, shape);
	for (i = 0; i < R; i++) {
		for (s = 0, j = 0; j < C; j++)
			s += x[i * C + j];
		ref[i] = s;
	}
	if ((v = cf_check(c, "sum over axis 1",
	                  cf_keep(c, tg_sum(t, &ax1, 1, 0)), ref, R, 1e-5,
	                  1e-5)))
		return v;
	for (j = 0; j < C; j++) {
		ref[j] = -INFINITY;
		for (i = 0; i < R; i++)
			ref[j] = fmax(ref[j], x[i * C + j]);
	}
	if ((v = cf_check(c, "max over axis 0",
	                  cf_keep(c, tg_max(t, &ax0, 1, 0)), ref, C, 0, 0)))
		return v;
	for (s = 0, i = 0; i < R * C; i++)
		s += x[i];
	ref[0] = s / (R * C);
	return cf_check(c, "mean of all", cf_keep(c, tg_mean(t, NULL, 0, 0)),
	                ref, 1, 1e-6, 1e-5);
}

/* (m, k) @ (k, n) against a double loop. */
static enum cf_verdict matmul_case(struct cf_ctx *c, int m, int k, int n)
{
	int64_t sa[2] = { m, k }, sb[2] = { k, n };
	float *a = malloc(sizeof *a * (size_t)(m * k));
	float *b = malloc(sizeof *b * (size_t)(k * n));
	double *ref = malloc(sizeof *ref * (size_t)(m * n));
	char what[64];
	enum cf_verdict v;

	if (!a || !b || !ref) {
		v = cf_fail(c, "out of host memory");
		goto out;
	}
	cf_fill(a, (size_t)(m * k), 5, -1, 1);
	cf_fill(b, (size_t)(k * n), 6, -1, 1);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;

			for (int l = 0; l < k; l++)
				s += (double)a[i * k + l] * b[l * n + j];
			ref[i * n + j] = s;
		}
	snprintf(what, sizeof what, "matmul (%d, %d) @ (%d, %d)", m, k, k, n);
	v = cf_check(c, what, cf_keep(c, tg_matmul(cf_from(c, a, 2, sa),
	             cf_from(c, b, 2, sb))), ref, (size_t)(m * n), 1e-5, 1e-4);
out:
	free(a);
	free(b);
	free(ref);
	return v;
}

enum cf_verdict cf_ops_matmul(struct cf_ctx *c)
{
	enum cf_verdict v = matmul_case(c, 17, 33, 29);

	return v ? v : matmul_case(c, 64, 64, 64);
}

/* permute, pad and expand, then + 1: the index arithmetic of views. */
enum cf_verdict cf_ops_movement(struct cf_ctx *c)
{
	static const int64_t shape[3] = { 4, 5, 6 }, pads[6] = { 1, 0, 0, 2,
	                                                         0, 0 };
	static const int order[3] = { 2, 0, 1 };
	float x[120];
	double ref[3 * 7 * 4 * 7];
	tg_tensor *p;

	cf_fill(x, 120, 7, -5, 5);
	/* (4, 5, 6) permuted to (6, 4, 5), padded by (1, 0) on axis 0 and
	 * (0, 2) on axis 1: (7, 6, 5).  Element [i][j][k] is x[j][k][i-1]
	 * inside the pads, 0 outside. */
	p = cf_keep(c, tg_pad(cf_keep(c, tg_permute(cf_from(c, x, 3, shape), 3,
	            order)), 3, pads, 0.0));
	for (int i = 0; i < 7; i++)
		for (int j = 0; j < 6; j++)
			for (int k = 0; k < 5; k++) {
				int d2 = i - 1, d0 = j, d1 = k;
				double val = 0;

				if (d2 >= 0 && d0 < 4)
					val = x[(d0 * 5 + d1) * 6 + d2];
				ref[(i * 6 + j) * 5 + k] = val + 1.0;
			}
	return cf_check(c, "pad(permute(x)) + 1", cf_keep(c, tg_add_s(p, 1.0)),
	                ref, 7 * 6 * 5, 1e-6, 1e-6);
}

/* int32 arithmetic, exact. */
enum cf_verdict cf_ops_int32(struct cf_ctx *c)
{
	enum { N = 101 };
	static const int64_t n = N;
	int32_t a[N], b[N];
	double ref[N];
	tg_tensor *ta, *tb, *r;
	enum cf_verdict v;
	int i;

	if (!cf_has_dtype(c, TG_INT32))
		return cf_fail(c, "int32 is not computed"), CF_SKIP;
	for (i = 0; i < N; i++) {
		a[i] = i * 37 - 1800;
		b[i] = i % 13 + 1;
	}
	ta = cf_keep(c, tg_tensor_new(c->dev, TG_INT32, 1, &n, a));
	tb = cf_keep(c, tg_tensor_new(c->dev, TG_INT32, 1, &n, b));
	for (i = 0; i < N; i++)
		ref[i] = (double)a[i] * b[i] + a[i];
	r = cf_keep(c, tg_cast(cf_keep(c, tg_add(cf_keep(c, tg_mul(ta, tb)),
	            ta)), TG_FLOAT32));
	if ((v = cf_check(c, "int32 a * b + a", r, ref, N, 0, 0)))
		return v;
	for (i = 0; i < N; i++)  /* tinygrad's idiv truncates toward 0 */
		ref[i] = (double)(a[i] / b[i]);
	return cf_check(c, "int32 a // b", cf_keep(c, tg_cast(cf_keep(c,
	                tg_idiv(ta, tb)), TG_FLOAT32)), ref, N, 0, 0);
}

/* tg.h's integer division of a by b in a kind of `bits` bits: a / 0 =
 * 0, a % 0 = a, min / -1 = min, min % -1 = 0; mod takes the divisor's
 * sign.  Operands are sign- or zero-extended to 64 bits. */
static void idiv_ref(int64_t a, int64_t b, int sgn, unsigned bits,
                     int64_t *q, int64_t *r)
{
	int64_t min = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));

	if (b == 0) {
		*q = 0;
		*r = a;
	} else if (sgn && a == min && b == -1) {
		*q = min;
		*r = 0;
	} else if (!sgn) {
		*q = (int64_t)((uint64_t)a / (uint64_t)b);
		*r = (int64_t)((uint64_t)a % (uint64_t)b);
	} else {
		*q = a / b;
		*r = a % b;
		if (*r && (*r < 0) != (b < 0))
			*r += b;
	}
}

/* Element i of an integer buffer of dtype dt, extended to 64 bits. */
static int64_t int_at(const void *p, tg_dtype dt, size_t i)
{
	switch (dt) {
	case TG_INT8: return ((const int8_t *)p)[i];
	case TG_INT16: return ((const int16_t *)p)[i];
	case TG_INT32: return ((const int32_t *)p)[i];
	case TG_UINT8: return ((const uint8_t *)p)[i];
	case TG_UINT16: return ((const uint16_t *)p)[i];
	case TG_UINT32: return ((const uint32_t *)p)[i];
	default: return ((const int64_t *)p)[i];
	}
}

/* The operands of the division case in dtype dt, wrapped to it: zero
 * and -1 divisors against the least and greatest values. */
static void idiv_operands(tg_dtype dt, void *a, void *b, size_t n)
{
	static const int64_t va[] = { 7, -7, INT64_MIN, INT64_MIN, 5, 0,
	                              INT64_MAX, -1, 100, -100, 3, -3 };
	static const int64_t vb[] = { 0, 0, -1, 0, 2, 0, -1, -1, 7, 7, -2, -2 };
	unsigned bits = 8 * (unsigned)tg_dtype_size(dt);

	for (size_t i = 0; i < n; i++) {
		/* the least and greatest of this kind, not int64's */
		int64_t x = va[i] == INT64_MIN && bits < 64
		            ? -((int64_t)1 << (bits - 1))
		            : va[i] == INT64_MAX && bits < 64
		            ? ((int64_t)1 << (bits - 1)) - 1 : va[i];

		memcpy((char *)a + i * (bits / 8), &x, bits / 8);
		memcpy((char *)b + i * (bits / 8), &vb[i], bits / 8);
	}
}

/* The device's values of tg_idiv and tg_mod of the buffers, against
 * the reference, element by element; "" when all agree. */
static enum cf_verdict idiv_check(struct cf_ctx *c, tg_dtype dt,
                                  const char *what, tg_tensor *t,
                                  const void *a, const void *b, size_t n,
                                  int mod)
{
	int sgn = dt == TG_INT8 || dt == TG_INT16 || dt == TG_INT32 ||
	          dt == TG_INT64;
	unsigned bits = 8 * (unsigned)tg_dtype_size(dt);
	unsigned char out[12 * 8];
	int64_t q, r, want, got;

	if (!t || tg_tensor_data(t, out, n * (bits / 8)))
		return cf_fail(c, "%s %s: %s", tg_dtype_name(dt), what,
		               tg_last_error());
	for (size_t i = 0; i < n; i++) {
		int64_t x = int_at(a, dt, i), y = b ? int_at(b, dt, i) : 0;

		idiv_ref(x, y, sgn, bits, &q, &r);
		want = mod ? r : q;
		got = int_at(out, dt, i);
		if (got != want)
			return cf_fail(c, "%s %s: element %zu: %lld %s %lld gave "
			               "%lld, want %lld", tg_dtype_name(dt), what,
			               i, (long long)x, mod ? "mod" : "idiv",
			               (long long)y, (long long)got,
			               (long long)want);
	}
	return CF_PASS;
}

/* Integer division and modulo by zero and the overflowing min / -1, in
 * every integer dtype the device computes: tg.h's values, no trap,
 * with the divisor in memory and a constant zero. */
enum cf_verdict cf_ops_int_division(struct cf_ctx *c)
{
	static const tg_dtype dts[] = { TG_INT8, TG_INT16, TG_INT32, TG_INT64,
	                                TG_UINT8, TG_UINT16, TG_UINT32,
	                                TG_UINT64 };
	static const int64_t n = 12;
	unsigned char a[12 * 8], b[12 * 8];
	enum cf_verdict v = CF_PASS;
	int any = 0;

	for (size_t k = 0; k < sizeof dts / sizeof *dts && !v; k++) {
		tg_dtype dt = dts[k];
		tg_tensor *ta, *tb, *z;

		if (!cf_has_dtype(c, dt))
			continue;
		any = 1;
		idiv_operands(dt, a, b, (size_t)n);
		ta = cf_keep(c, tg_tensor_new(c->dev, dt, 1, &n, a));
		tb = cf_keep(c, tg_tensor_new(c->dev, dt, 1, &n, b));
		z = cf_keep(c, tg_zeros(c->dev, dt, 1, &n));
		if (!(v = idiv_check(c, dt, "a // b", cf_keep(c, tg_idiv(ta, tb)),
		                     a, b, (size_t)n, 0)) &&
		    !(v = idiv_check(c, dt, "a % b", cf_keep(c, tg_mod(ta, tb)),
		                     a, b, (size_t)n, 1)) &&
		    !(v = idiv_check(c, dt, "a // 0", cf_keep(c, tg_idiv(ta, z)),
		                     a, NULL, (size_t)n, 0)))
			v = idiv_check(c, dt, "a % 0", cf_keep(c, tg_mod(ta, z)),
			               a, NULL, (size_t)n, 1);
	}
	if (!any)
		return cf_fail(c, "no integer dtype is computed"), CF_SKIP;
	return v;
}

/* float16, bfloat16 and float64: x * y + x and a sum, computed in the
 * dtype (cast on the device), read back as float32. */
enum cf_verdict cf_ops_other_floats(struct cf_ctx *c)
{
	enum { N = 129 };
	static const int64_t n = N;
	static const tg_dtype dts[] = { TG_FLOAT16, TG_BFLOAT16, TG_FLOAT64 };
	static const double tol[] = { 4e-3, 3e-2, 1e-6 };
	float a[N], b[N];
	double ref[N], s;
	int any = 0;

	cf_fill(a, N, 8, -2, 2);
	cf_fill(b, N, 9, -2, 2);
	for (size_t k = 0; k < 3; k++) {
		tg_dtype dt = dts[k];
		tg_tensor *x, *y, *r;
		enum cf_verdict v;
		char what[64];

		if (!cf_has_dtype(c, dt))
			continue;
		any = 1;
		x = cf_keep(c, tg_cast(cf_from(c, a, 1, &n), dt));
		y = cf_keep(c, tg_cast(cf_from(c, b, 1, &n), dt));
		r = cf_keep(c, tg_add(cf_keep(c, tg_mul(x, y)), x));
		for (int i = 0; i < N; i++)
			ref[i] = (double)a[i] * b[i] + a[i];
		snprintf(what, sizeof what, "%s x * y + x", tg_dtype_name(dt));
		if ((v = cf_check(c, what, cf_keep(c, tg_cast(r, TG_FLOAT32)),
		                  ref, N, tol[k], tol[k])))
			return v;
		s = 0;
		for (int i = 0; i < N; i++)
			s += a[i];
		snprintf(what, sizeof what, "%s sum", tg_dtype_name(dt));
		if ((v = cf_check(c, what, cf_keep(c, tg_cast(cf_keep(c,
		                  tg_sum(x, NULL, 0, 0)), TG_FLOAT32)), &s, 1,
		                  tol[k] * 8, tol[k])))
			return v;
	}
	if (!any)
		return cf_fail(c, "none of float16, bfloat16, float64 is "
		               "computed"), CF_SKIP;
	return CF_PASS;
}

/* float32 -> int32 truncates toward zero; int32 -> float32 is exact. */
enum cf_verdict cf_ops_cast(struct cf_ctx *c)
{
	enum { N = 64 };
	static const int64_t n = N;
	float a[N];
	double ref[N];

	if (!cf_has_dtype(c, TG_INT32))
		return cf_fail(c, "int32 is not computed"), CF_SKIP;
	cf_fill(a, N, 10, -1000, 1000);
	for (int i = 0; i < N; i++)
		ref[i] = trunc(a[i]);
	return cf_check(c, "float32 -> int32 -> float32", cf_keep(c, tg_cast(
	                cf_keep(c, tg_cast(cf_from(c, a, 1, &n), TG_INT32)),
	                TG_FLOAT32)), ref, N, 0, 0);
}

/* Threefry2x32 with 20 rounds (Salmon et al.; JAX's threefry_2x32) of
 * the counter words (lo, hi) = x under the key (k0, k1) = (low, high
 * word of key): the host's reference for tg_rand's bits. */
static uint64_t threefry_ref(uint64_t x, uint64_t key)
{
	static const unsigned rot[8] = { 13, 15, 26, 6, 17, 29, 16, 24 };
	uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
	uint32_t ks[3] = { k1, k0 ^ k1 ^ 0x1BD11BDAu, k0 };
	uint32_t a = (uint32_t)x + ks[2], b = (uint32_t)(x >> 32) + ks[0];

	for (unsigned i = 0; i < 5; i++) {
		for (unsigned j = 0; j < 4; j++) {
			unsigned r = rot[i % 2 * 4 + j];

			a += b;
			b = ((b << r) | (b >> (32 - r))) ^ a;
		}
		a += ks[i % 3];
		b += ks[(i + 1) % 3] + i + 1;
	}
	return (uint64_t)b << 32 | a;
}

/* tg_rand of n values, drawn when the device's counter is at ctr:
 * counters ctr..ctr+h-1 (h = ceil(n/2)) paired with ctr+h..ctr+2h-1
 * form Threefry blocks under the seed; the low words then the high
 * words, first n of them, give the top 23 bits of a mantissa in [1, 2)
 * less one (tensor/random.c, tinygrad's Tensor.rand). */
static void rand_ref(uint64_t seed, uint32_t ctr, size_t n, double *out)
{
	size_t h = (n + 1) / 2;

	for (size_t i = 0; i < n; i++) {
		uint32_t c = ctr + (uint32_t)(i % h);
		uint64_t w = threefry_ref((uint64_t)(c + h) << 32 | c, seed);
		uint32_t bits = i < h ? (uint32_t)w : (uint32_t)(w >> 32);
		union { uint32_t u; float f; } m = {
			.u = bits >> 9 | 0x3f800000u };

		out[i] = (double)m.f - 1.0;
	}
}

/* tg_rand of 1 to 9 values in turn, then a (1,5) uniform (a Linear(5,
 * 1)'s weight as initialized): every
 * size must give the host reference's numbers bit for bit, the one
 * value of a (1,) draw too (PoCL once refused that kernel: the program
 * had fewer parameters than the launch gave buffers). */
enum cf_verdict cf_ops_random(struct cf_ctx *c)
{
	/* the reference against JAX: threefry_2x32((0, 1337), (3, 13)) */
	static const uint64_t seed = 20250101;
	double ref[9];
	uint32_t ctr = 0;
	enum cf_verdict v = CF_PASS;
	char what[64];

	if (threefry_ref((uint64_t)13 << 32 | 3, (uint64_t)1337 << 32) !=
	    ((uint64_t)2570072943u << 32 | 1967534793u))
		return cf_fail(c, "the host's Threefry reference is wrong");
	if (!cf_has_dtype(c, TG_UINT64))
		return cf_fail(c, "uint64 is not computed"), CF_SKIP;
	tg_manual_seed(seed);
	for (int64_t n = 1; n <= 9 && v == CF_PASS; n++) {
		snprintf(what, sizeof what, "rand of %lld", (long long)n);
		rand_ref(seed, ctr, (size_t)n, ref);
		v = cf_check(c, what, cf_keep(c, tg_rand(c->dev, TG_FLOAT32, 1,
		                                         &n)), ref, (size_t)n,
		             0, 0);
		ctr += (uint32_t)n;
	}
	if (v == CF_PASS) {
		static const int64_t shape[2] = { 1, 5 };

		rand_ref(seed, ctr, 5, ref);
		for (int i = 0; i < 5; i++)  /* tinygrad's kaiming bound */
			ref[i] = ref[i] * 2 - 1;
		v = cf_check(c, "uniform (1,5) in [-1, 1)", cf_keep(c,
		             tg_uniform(c->dev, TG_FLOAT32, 2, shape, -1, 1)),
		             ref, 5, 1e-7, 0);
	}
	return v;
}

/*
 * test_ops_reduce.c - the reductions (tensor/reduce.c), the movement ops
 * (tensor/movement.c) and the indexing ops (tensor/indexing.c) checked
 * against plain-C double references, in the spirit of tinygrad's
 * test_ops: every reduction over all axes, single axes (positive and
 * negative), axis lists and keepdim, on a 0-dim tensor, a 0-size one, odd
 * sizes and non-contiguous (permuted, flipped) inputs, in each dtype it
 * is defined on; argmax/argmin ties (the first index wins); cumsum on
 * short and long (two-level) axes; arange and eye; transpose, flatten,
 * squeeze, slicing with Python's semantics, gather, cat, stack, repeat,
 * split, chunk, triu/tril and one_hot; and the error messages.
 *
 * Inputs are exact in every dtype used (floats on a 1/64 grid), so int
 * results are compared bit for bit and float ones within 1e-5 (float32)
 * or 1e-2 (float16) relative.
 */
#include "config.h"

#include <sys/mman.h>

#include "optest.h"
#include "tensor/tensor.h" /* TG_MAX_DIMS, tg_tensor.refs */

/* ---- case counting: tests run in forked children, so the total lives
 * in shared memory that main() maps before running them ---- */

static int *total_cases;
static int ncases;

static void count_case(void)
{
	ncases++;
	if (total_cases)
		__atomic_add_fetch(total_cases, 1, __ATOMIC_RELAXED);
}

/* ---- inputs ---- */

enum dom { ANY, Q, POS };

/* Values exact in the dtype: floats on a 1/64 grid in [-3, 3) (Q: a
 * coarse grid with many ties), ints in [-10, 10] ([0, 20] unsigned). */
static double gen(int i, int which, int dom, tg_dtype dt)
{
	double u = ot_u01(i, which);

	if (dt == TG_BOOL)
		return u > 0.5;
	if (!tg_dtype_is_float(dt)) {
		int uns = tg_dtype_is_unsigned(dt);
		switch (dom) {
		case Q: return floor(4 * u) - (uns ? 0 : 1);
		case POS: return 1 + floor(9 * u);
		default: return uns ? floor(21 * u) : floor(21 * u) - 10;
		}
	}
	switch (dom) {
	case Q: return floor(u * 6) / 2 - 1.5;
	case POS: return 0.25 + floor(u * 256) / 64;
	default: return floor(u * 384) / 64 - 3;
	}
}

static uint16_t f2h(float f)
{
	uint32_t x, sign, man, h, rem;
	int32_t e;

	memcpy(&x, &f, sizeof x);
	sign = (x >> 16) & 0x8000;
	man = x & 0x7fffff;
	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
	e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		uint32_t shift, half;
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		shift = (uint32_t)(14 - e);
		h = man >> shift;
		rem = man & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	h = ((uint32_t)e << 10) | (man >> 13);
	rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

static double h2f(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e == 0 ? ldexp(m, -24)
	           : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);

	return (h & 0x8000) ? -v : v;
}

/* A tensor of shape s holding v (converted to dt on the host). */
static tg_tensor *mkv(tg_dtype dt, size_t nd, const int64_t *s,
                      const double *v)
{
	int64_t k = ot_numel(nd, s), i;
	size_t sz = tg_dtype_size(dt);
	unsigned char *raw = malloc((size_t)(k ? k : 1) * sz);
	tg_tensor *t;

	ck_assert_ptr_nonnull(raw);
	for (i = 0; i < k; i++) {
		void *p = raw + (size_t)i * sz;
		double x = v[i];
		switch (dt) {
		case TG_BOOL: *(uint8_t *)p = x != 0; break;
		case TG_INT8: *(int8_t *)p = (int8_t)x; break;
		case TG_UINT8: *(uint8_t *)p = (uint8_t)x; break;
		case TG_INT16: *(int16_t *)p = (int16_t)x; break;
		case TG_UINT16: *(uint16_t *)p = (uint16_t)x; break;
		case TG_INT32: *(int32_t *)p = (int32_t)x; break;
		case TG_UINT32: *(uint32_t *)p = (uint32_t)x; break;
		case TG_INT64: *(int64_t *)p = (int64_t)x; break;
		case TG_UINT64: *(uint64_t *)p = (uint64_t)x; break;
		case TG_FLOAT16: *(uint16_t *)p = f2h((float)x); break;
		case TG_FLOAT32: *(float *)p = (float)x; break;
		case TG_FLOAT64: *(double *)p = x; break;
		default: ck_abort_msg("mkv: dtype %s", tg_dtype_name(dt));
		}
	}
	t = tg_tensor_new(NULL, dt, nd, s, k ? raw : NULL);
	free(raw);
	ck_assert_msg(t != NULL, "tensor_new: %s", tg_last_error());
	return t;
}

/* Layouts of an input: contiguous, permuted (built with the axes
 * reversed, then permuted back) or flipped on axis 0. */
enum { CONTIG, PERMUTED, FLIPPED };

/* An input of logical shape s in layout `kind` with generated values;
 * the logical (row-major) values into lv. */
static tg_tensor *mk_in(tg_dtype dt, size_t nd, const int64_t *s, int kind,
                        int which, int dom, double *lv)
{
	int64_t k = ot_numel(nd, s), i, idx[TG_MAX_DIMS], bi[TG_MAX_DIMS];
	int64_t bs[TG_MAX_DIMS];
	double *bv = malloc((size_t)(k ? k : 1) * sizeof *bv);
	int order[TG_MAX_DIMS], zero = 0;
	size_t j;
	tg_tensor *t;

	ck_assert_ptr_nonnull(bv);
	for (j = 0; j < nd; j++) {
		bs[j] = kind == PERMUTED ? s[nd - 1 - j] : s[j];
		order[j] = (int)(nd - 1 - j);
	}
	for (i = 0; i < k; i++)
		bv[i] = gen((int)i, which, dom, dt);
	for (i = 0; i < k; i++) {
		ot_unravel(i, nd, s, idx);
		for (j = 0; j < nd; j++)
			bi[j] = kind == PERMUTED ? idx[nd - 1 - j] : idx[j];
		if (kind == FLIPPED)
			bi[0] = s[0] - 1 - idx[0];
		lv[i] = bv[ot_ravel(nd, bs, bi)];
	}
	t = mkv(dt, nd, bs, bv);
	free(bv);
	if (kind == PERMUTED)
		t = tg_permute(t, nd, order);
	else if (kind == FLIPPED)
		t = tg_flip(t, &zero, 1);
	ck_assert_msg(t != NULL, "%s", tg_last_error());
	return t;
}

/* t's values, row-major, as doubles (exact for every dtype); at most
 * cap.  Returns the count. */
static const char *rd_what = ""; /* the case being read, for messages */

static int64_t rd(tg_tensor *t, double *dst, int64_t cap)
{
	int64_t k, i;
	tg_dtype dt;
	size_t sz;
	unsigned char *raw;

	ck_assert_msg(t != NULL, "rd: %s", tg_last_error());
	k = tg_tensor_numel(t);
	ck_assert_msg(k <= cap, "rd: %lld elements, room for %lld",
	              (long long)k, (long long)cap);
	if (!k)
		return 0;
	dt = tg_tensor_dtype(t);
	sz = tg_dtype_size(dt);
	raw = malloc((size_t)k * sz);
	ck_assert_ptr_nonnull(raw);
	ck_assert_msg(tg_tensor_data(t, raw, (size_t)k * sz) == 0, "%s: %s",
	              rd_what, tg_last_error());
	for (i = 0; i < k; i++) {
		const void *p = raw + (size_t)i * sz;
		switch (dt) {
		case TG_BOOL: dst[i] = *(const uint8_t *)p != 0; break;
		case TG_INT8: dst[i] = *(const int8_t *)p; break;
		case TG_UINT8: dst[i] = *(const uint8_t *)p; break;
		case TG_INT16: dst[i] = *(const int16_t *)p; break;
		case TG_UINT16: dst[i] = *(const uint16_t *)p; break;
		case TG_INT32: dst[i] = *(const int32_t *)p; break;
		case TG_UINT32: dst[i] = *(const uint32_t *)p; break;
		case TG_INT64: dst[i] = (double)*(const int64_t *)p; break;
		case TG_UINT64: dst[i] = (double)*(const uint64_t *)p; break;
		case TG_FLOAT16: dst[i] = h2f(*(const uint16_t *)p); break;
		case TG_FLOAT32: dst[i] = *(const float *)p; break;
		case TG_FLOAT64: dst[i] = *(const double *)p; break;
		default: ck_abort_msg("rd: dtype %s", tg_dtype_name(dt));
		}
	}
	free(raw);
	return k;
}

static void check_vals(const char *op, const char *desc, tg_dtype dt,
                       const double *got, const double *want, int64_t k,
                       double tol, int exact)
{
	ot_check_vals(op, desc, dt, got, want, k, tol, exact,
	              OT_NONFINITE_EXACT);
	count_case();
}

static double tol_of(tg_dtype dt)
{
	return dt == TG_FLOAT16 ? 1e-2 : 1e-5;
}

/* Asserts t's dtype and shape. */
static void check_meta(const char *op, const char *desc, const tg_tensor *t,
                       tg_dtype dt, size_t nd, const int64_t *s)
{
	char b[160];
	size_t i;

	ck_assert_msg(t != NULL, "%s %s: %s", op, desc, tg_last_error());
	ck_assert_msg(tg_tensor_dtype(t) == dt, "%s %s: dtype %s, want %s", op,
	              desc, tg_dtype_name(tg_tensor_dtype(t)),
	              tg_dtype_name(dt));
	ck_assert_msg(tg_tensor_ndim(t) == nd, "%s %s: shape %s, want %zu dims",
	              op, desc, tg_tensor_shape_str(t, b, sizeof b), nd);
	for (i = 0; i < nd; i++)
		ck_assert_msg(tg_tensor_shape(t)[i] == s[i],
		              "%s %s: shape %s, axis %zu want %lld", op, desc,
		              tg_tensor_shape_str(t, b, sizeof b), i,
		              (long long)s[i]);
}

/* Reads t (shape checked by the caller) and compares with want. */
static void check_t(const char *op, const char *desc, tg_tensor *t,
                    const double *want, double tol)
{
	static double got[8192];
	static char what[192];
	tg_dtype dt = tg_tensor_dtype(t);
	int64_t k;

	snprintf(what, sizeof what, "%s %s %s", op, desc, tg_dtype_name(dt));
	rd_what = what;
	k = rd(t, got, 8192);

	check_vals(op, desc, dt, got, want, k, tol, !tg_dtype_is_float(dt));
}

/* ---- reference reductions ---- */

enum rop { R_SUM, R_MAX, R_MIN, R_MEAN, R_VAR, R_STD, R_ANY, R_ALL,
           R_ARGMAX, R_ARGMIN, R_LSE };

static double red1(int op, const double *v, int64_t n, double corr)
{
	double acc = 0, m;
	int64_t i, best = 0;

	switch (op) {
	case R_SUM: case R_MEAN:
		for (i = 0; i < n; i++)
			acc += v[i];
		return op == R_MEAN && n ? acc / (double)n : acc;
	case R_MAX: case R_MIN: case R_ARGMAX: case R_ARGMIN:
		for (i = 1; i < n; i++)
			if ((op == R_MAX || op == R_ARGMAX) ? v[i] > v[best]
			                                    : v[i] < v[best])
				best = i;
		return op == R_ARGMAX || op == R_ARGMIN ? (double)best : v[best];
	case R_VAR: case R_STD:
		m = red1(R_MEAN, v, n, 0);
		for (i = 0; i < n; i++)
			acc += (v[i] - m) * (v[i] - m);
		acc /= fmax(0, (double)n - corr);
		return op == R_STD ? sqrt(acc) : acc;
	case R_ANY:
		for (i = 0; i < n; i++)
			if (v[i] != 0)
				return 1;
		return 0;
	case R_ALL:
		for (i = 0; i < n; i++)
			if (v[i] == 0)
				return 0;
		return 1;
	case R_LSE:
		m = red1(R_MAX, v, n, 0);
		for (i = 0; i < n; i++)
			acc += exp(v[i] - m);
		return m + log(acc);
	}
	return NAN;
}

/* Reduces in (shape s, nd dims) over the axes of mask with op, into out
 * (row-major over the kept axes); returns the output count. */
static int64_t ref_reduce(int op, size_t nd, const int64_t *s, uint32_t mask,
                          const double *in, double corr, double *out)
{
	int64_t os[TG_MAX_DIMS], idx[TG_MAX_DIMS], oi[TG_MAX_DIMS];
	int64_t nin = ot_numel(nd, s), nout, o, i, n;
	double *grp = malloc((size_t)(nin ? nin : 1) * sizeof *grp);
	size_t j, k;

	ck_assert_ptr_nonnull(grp);
	for (j = 0; j < nd; j++)
		os[j] = (mask >> j) & 1 ? 1 : s[j];
	nout = ot_numel(nd, os);
	for (o = 0; o < nout; o++) {
		n = 0;
		for (i = 0; i < nin; i++) {
			ot_unravel(i, nd, s, idx);
			for (j = 0, k = 0; j < nd; j++)
				oi[k++] = (mask >> j) & 1 ? 0 : idx[j];
			if (ot_ravel(nd, os, oi) == o)
				grp[n++] = in[i];
		}
		out[o] = red1(op, grp, n, corr);
	}
	free(grp);
	return nout;
}

/* ---- reductions over every shape, axis set, keepdim and dtype ---- */

struct rshape {
	const char *name;
	size_t nd;
	int64_t s[3];
	int kind;
};
static const struct rshape RSH[] = {
	{ "scalar", 0, { 0 }, CONTIG },
	{ "odd37", 1, { 37 }, CONTIG },
	{ "3x5x7", 3, { 3, 5, 7 }, CONTIG },
	{ "permuted4x6", 2, { 4, 6 }, PERMUTED },
	{ "flipped3x4x5", 3, { 3, 4, 5 }, FLIPPED },
};

struct axspec {
	const char *name;
	int all;
	size_t n;
	int ax[3];
};
/* Per rank, the axis sets tried. */
static const struct axspec AX0[] = {
	{ "all", 1, 0, { 0 } }, { "{0}", 0, 1, { 0 } }, { "{-1}", 0, 1, { -1 } },
};
static const struct axspec AX1[] = {
	{ "all", 1, 0, { 0 } }, { "{0}", 0, 1, { 0 } }, { "{-1}", 0, 1, { -1 } },
};
static const struct axspec AX2[] = {
	{ "all", 1, 0, { 0 } }, { "{0}", 0, 1, { 0 } }, { "{-1}", 0, 1, { -1 } },
	{ "{0,1}", 0, 2, { 0, 1 } },
};
static const struct axspec AX3[] = {
	{ "all", 1, 0, { 0 } }, { "{1}", 0, 1, { 1 } }, { "{-1}", 0, 1, { -1 } },
	{ "{0,2}", 0, 2, { 0, 2 } }, { "{-3,1}", 0, 2, { -3, 1 } },
	{ "{}", 0, 0, { 0 } },
};

static uint32_t mask_of(const struct axspec *a, size_t nd)
{
	uint32_t m = 0;
	size_t i;

	if (a->all)
		return nd ? (1u << nd) - 1 : 0;
	for (i = 0; i < a->n && nd; i++)
		m |= 1u << (a->ax[i] < 0 ? a->ax[i] + (int)nd : a->ax[i]);
	return m;
}

static tg_dtype sum_dtype(tg_dtype dt)
{
	if (dt == TG_FLOAT16 || dt == TG_FLOAT32 || dt == TG_FLOAT64)
		return dt;
	return tg_dtype_is_unsigned(dt) ? TG_UINT32 : TG_INT32;
}

struct red {
	const char *name;
	int op;
	double corr;
	size_t ndt;
	tg_dtype dts[6];
};
#define ALLDT 6, { TG_FLOAT32, TG_FLOAT16, TG_INT32, TG_INT8, TG_UINT8, TG_BOOL }
static const struct red REDS[] = {
	{ "sum", R_SUM, 0, ALLDT },
	{ "max", R_MAX, 0, ALLDT },
	{ "min", R_MIN, 0, ALLDT },
	{ "mean", R_MEAN, 0, 4, { TG_FLOAT32, TG_FLOAT16, TG_INT32, TG_UINT8 } },
	{ "var", R_VAR, 1, 3, { TG_FLOAT32, TG_FLOAT16, TG_INT32 } },
	{ "var0", R_VAR, 0, 1, { TG_FLOAT32 } },
	{ "std", R_STD, 1, 2, { TG_FLOAT32, TG_INT8 } },
	{ "any", R_ANY, 0, 3, { TG_FLOAT32, TG_INT32, TG_BOOL } },
	{ "all", R_ALL, 0, 3, { TG_FLOAT32, TG_INT32, TG_BOOL } },
};

static tg_tensor *call_red(const struct red *r, const tg_tensor *t,
                           const struct axspec *a, int kd)
{
	const int *ax = a->all ? NULL : a->ax;

	switch (r->op) {
	case R_SUM: return tg_sum(t, ax, a->n, kd);
	case R_MAX: return tg_max(t, ax, a->n, kd);
	case R_MIN: return tg_min(t, ax, a->n, kd);
	case R_MEAN: return tg_mean(t, ax, a->n, kd);
	case R_VAR: return tg_var(t, ax, a->n, kd, r->corr);
	case R_STD: return tg_std(t, ax, a->n, kd, r->corr);
	case R_ANY: return tg_any(t, ax, a->n, kd);
	case R_ALL: return tg_all(t, ax, a->n, kd);
	}
	return NULL;
}

static tg_dtype red_dtype(int op, tg_dtype dt)
{
	switch (op) {
	case R_SUM: return sum_dtype(dt);
	case R_MAX: case R_MIN: return dt;
	case R_ANY: case R_ALL: return TG_BOOL;
	case R_ARGMAX: case R_ARGMIN: return TG_INT32;
	default: return tg_dtype_is_float(dt) ? dt : TG_FLOAT32;
	}
}

/* The output shape of a reduce over mask. */
static size_t red_shape(size_t nd, const int64_t *s, uint32_t mask, int kd,
                        int64_t *out)
{
	size_t i, n = 0;

	for (i = 0; i < nd; i++)
		if (!((mask >> i) & 1))
			out[n++] = s[i];
		else if (kd)
			out[n++] = 1;
	return n;
}

START_TEST(reductions_match_reference)
{
	size_t ri, si, ai, di;
	int flip = 0;

	ncases = 0;
	for (ri = 0; ri < sizeof REDS / sizeof REDS[0]; ri++)
		for (si = 0; si < sizeof RSH / sizeof RSH[0]; si++) {
			const struct rshape *s = &RSH[si];
			const struct axspec *axs = s->nd == 0 ? AX0 : s->nd == 1 ? AX1
			                           : s->nd == 2 ? AX2 : AX3;
			size_t nax = s->nd == 0 ? 3 : s->nd == 1 ? 3
			             : s->nd == 2 ? 4 : 6;

			for (ai = 0; ai < nax; ai++)
				for (di = 0; di < REDS[ri].ndt; di++) {
					const struct red *r = &REDS[ri];
					tg_dtype dt = r->dts[di];
					double in[128], want[128];
					int64_t os[3];
					uint32_t m = mask_of(&axs[ai], s->nd);
					int kd = flip++ & 1;
					size_t ond = red_shape(s->nd, s->s, m, kd, os);
					char desc[96];
					tg_tensor *x, *y;

					if (!ot_dtypes_ok(dt, red_dtype(r->op, dt)))
						continue;
					snprintf(desc, sizeof desc, "%s axes %s keepdim %d",
					         s->name, axs[ai].name, kd);
					tg_scope_begin();
					x = mk_in(dt, s->nd, s->s, s->kind, (int)ri + 1,
					          ANY, in);
					y = call_red(r, x, &axs[ai], kd);
					check_meta(r->name, desc, y, red_dtype(r->op, dt),
					           ond, os);
					ref_reduce(r->op, s->nd, s->s, m, in, r->corr, want);
					check_t(r->name, desc, y, want,
					        tol_of(red_dtype(r->op, dt)));
					tg_scope_end();
				}
		}
	fprintf(stderr, "reduction cases: %d\n", ncases);
}
END_TEST

/* Every keepdim/axis combination on one input in one realize, to cover
 * keepdim both ways for the same axes. */
START_TEST(keepdim_both_ways)
{
	int64_t s[3] = { 2, 3, 4 };
	static const int axl[][2] = { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 0, 2 },
	                              { -1, -2 } };
	size_t i;
	int kd;

	if (!ot_dtype_ok(TG_INT32))
		return;
	ncases = 0;
	for (i = 0; i < sizeof axl / sizeof axl[0]; i++)
		for (kd = 0; kd < 2; kd++) {
			struct axspec a = { "", 0, axl[i][0] == axl[i][1] ? 1 : 2,
			                    { axl[i][0], axl[i][1], 0 } };
			double in[24], want[24];
			int64_t os[3];
			uint32_t m = mask_of(&a, 3);
			size_t ond = red_shape(3, s, m, kd, os);
			tg_tensor *x;

			tg_scope_begin();
			x = mk_in(TG_INT32, 3, s, CONTIG, 40, ANY, in);
			ref_reduce(R_SUM, 3, s, m, in, 0, want);
			{
				tg_tensor *y = tg_sum(x, a.ax, a.n, kd);
				check_meta("sum", "keepdim", y, TG_INT32, ond, os);
				check_t("sum", "keepdim", y, want, 0);
			}
			ref_reduce(R_MAX, 3, s, m, in, 0, want);
			{
				tg_tensor *y = tg_max(x, a.ax, a.n, kd);
				check_meta("max", "keepdim", y, TG_INT32, ond, os);
				check_t("max", "keepdim", y, want, 0);
			}
			tg_scope_end();
		}
	fprintf(stderr, "keepdim cases: %d\n", ncases);
}
END_TEST

/* sum of bool counts, max of bool is any, min of bool is all; int8 sums
 * do not wrap (int32 accumulation); uint8 sums are uint32. */
START_TEST(reduction_dtype_rules)
{
	int64_t s[1] = { 300 };
	double v[300], want[1];
	tg_tensor *x, *y;
	int i;

	ncases = 0;
	tg_scope_begin();
	if (ot_dtypes_ok(TG_INT8, TG_INT32)) {
		for (i = 0; i < 300; i++)
			v[i] = 100;
		x = mkv(TG_INT8, 1, s, v);
		y = tg_sum(x, NULL, 0, 0);
		check_meta("sum", "int8 300x100", y, TG_INT32, 0, NULL);
		want[0] = 30000;
		check_t("sum", "int8 300x100", y, want, 0);
	}
	if (ot_dtypes_ok(TG_UINT8, TG_UINT32)) {
		for (i = 0; i < 300; i++)
			v[i] = 250;
		x = mkv(TG_UINT8, 1, s, v);
		y = tg_sum(x, NULL, 0, 0);
		check_meta("sum", "uint8 300x250", y, TG_UINT32, 0, NULL);
		want[0] = 75000;
		check_t("sum", "uint8 300x250", y, want, 0);
		y = tg_mean(x, NULL, 0, 0);
		check_meta("mean", "uint8 300x250", y, TG_FLOAT32, 0, NULL);
		want[0] = 250;
		check_t("mean", "uint8 300x250", y, want, 1e-6);
	}
	if (ot_dtypes_ok(TG_BOOL, TG_INT32)) {
		for (i = 0; i < 300; i++)
			v[i] = i % 3 == 0;
		x = mkv(TG_BOOL, 1, s, v);
		y = tg_sum(x, NULL, 0, 0);
		check_meta("sum", "bool count", y, TG_INT32, 0, NULL);
		want[0] = 100;
		check_t("sum", "bool count", y, want, 0);
		y = tg_max(x, NULL, 0, 0);
		check_meta("max", "bool", y, TG_BOOL, 0, NULL);
		want[0] = 1;
		check_t("max", "bool", y, want, 0);
		y = tg_min(x, NULL, 0, 0);
		want[0] = 0;
		check_t("min", "bool", y, want, 0);
	}
	/* float16 sums accumulate in float32: 2048 + 300 * 0.5 is not
	 * reachable adding in half (2048 + 0.5 rounds back to 2048) */
	if (ot_dtype_ok(TG_FLOAT16)) {
		for (i = 0; i < 300; i++)
			v[i] = i ? 0.5 : 2048;
		x = mkv(TG_FLOAT16, 1, s, v);
		y = tg_sum(x, NULL, 0, 0);
		check_meta("sum", "float16 acc", y, TG_FLOAT16, 0, NULL);
		want[0] = 2048 + 299 * 0.5;
		check_t("sum", "float16 acc", y, want, 1e-3);
	}
	/* min of ints at the dtype's extremes (computed as ~max(~x)) */
	{
		int64_t s3[1] = { 3 };
		double a[3] = { -128, 127, 0 }, b[3] = { 255, 0, 7 };
		double c[3] = { INT32_MIN, INT32_MAX, -1 };
		want[0] = -128;
		if (ot_dtypes_ok(TG_INT8, TG_INT32))
			check_t("min", "int8 extremes", tg_min(mkv(TG_INT8, 1, s3, a), NULL,
			                                       0, 0), want, 0);
		want[0] = 127;
		if (ot_dtypes_ok(TG_INT8, TG_INT32))
			check_t("max", "int8 extremes", tg_max(mkv(TG_INT8, 1, s3, a), NULL,
			                                       0, 0), want, 0);
		want[0] = 0;
		if (ot_dtypes_ok(TG_UINT8, TG_INT32))
			check_t("min", "uint8 extremes", tg_min(mkv(TG_UINT8, 1, s3, b),
			                                        NULL, 0, 0), want, 0);
		want[0] = INT32_MIN;
		check_t("min", "int32 extremes", tg_min(mkv(TG_INT32, 1, s3, c),
		                                        NULL, 0, 0), want, 0);
		want[0] = 1;
		if (ot_dtypes_ok(TG_UINT8, TG_INT32))
			check_t("argmin", "uint8 extremes",
			        tg_argmin(mkv(TG_UINT8, 1, s3, b), 0, 0), want, 0);
	}
	tg_scope_end();
	fprintf(stderr, "dtype rule cases: %d\n", ncases);
}
END_TEST

/* tinygrad's acc_dtype arguments: the sum (and the matmul's products'
 * sum) runs in the given dtype and the result keeps it, wrapping where
 * that dtype wraps. */
START_TEST(accumulation_dtype_arguments)
{
	int64_t s[1] = { 300 }, sa[2] = { 2, 3 }, sb[2] = { 3, 2 };
	double v[300], want[4], ten[6];
	tg_tensor *x, *y;
	int i;

	ncases = 0;
	tg_scope_begin();
	for (i = 0; i < 300; i++)
		v[i] = 100;
	if (ot_dtypes_ok(TG_INT8, TG_INT16)) {
		x = mkv(TG_INT8, 1, s, v);
		y = tg_sum_acc(x, NULL, 0, 0, TG_INT16);
		check_meta("sum_acc", "int8 in int16", y, TG_INT16, 0, NULL);
		want[0] = 30000;
		check_t("sum_acc", "int8 in int16", y, want, 0);
		/* 30000 = 117 * 256 + 48 */
		y = tg_sum_acc(x, NULL, 0, 0, TG_INT8);
		check_meta("sum_acc", "int8 in int8", y, TG_INT8, 0, NULL);
		want[0] = 48;
		check_t("sum_acc", "int8 in int8 wraps", y, want, 0);
	}
	if (ot_dtypes_ok(TG_UINT8, TG_FLOAT64)) {
		for (i = 0; i < 300; i++)
			v[i] = 250 - i % 2;
		y = tg_mean_acc(mkv(TG_UINT8, 1, s, v), NULL, 0, 0, TG_FLOAT64);
		check_meta("mean_acc", "uint8 in float64", y, TG_FLOAT64, 0,
		           NULL);
		want[0] = 249.5; /* divided as a product with 1/300 */
		check_t("mean_acc", "uint8 in float64", y, want, 1e-12);
	}
	if (ot_dtype_ok(TG_FLOAT16)) {
		for (i = 0; i < 300; i++)
			v[i] = i ? 0.5 : 2048;
		y = tg_sum_acc(mkv(TG_FLOAT16, 1, s, v), NULL, 0, 0, TG_FLOAT32);
		check_meta("sum_acc", "float16 in float32", y, TG_FLOAT32, 0,
		           NULL);
		want[0] = 2048 + 299 * 0.5;
		check_t("sum_acc", "float16 in float32", y, want, 0);
	}
	/* products 10 * 10 fit int8, three of them summed do not */
	if (ot_dtypes_ok(TG_INT8, TG_INT32)) {
		tg_tensor *a, *b;

		for (i = 0; i < 6; i++)
			ten[i] = 10;
		a = mkv(TG_INT8, 2, sa, ten);
		b = mkv(TG_INT8, 2, sb, ten);
		y = tg_matmul_acc(a, b, TG_INT32);
		check_meta("matmul_acc", "int8 in int32", y, TG_INT32, 2,
		           (int64_t[]){ 2, 2 });
		for (i = 0; i < 4; i++)
			want[i] = 300;
		check_t("matmul_acc", "int8 in int32", y, want, 0);
		y = tg_matmul(a, b);
		check_meta("matmul", "int8", y, TG_INT8, 2, (int64_t[]){ 2, 2 });
		for (i = 0; i < 4; i++)
			want[i] = 44; /* 300 - 256 */
		check_t("matmul", "int8 wraps", y, want, 0);
	}
	x = mkv(TG_FLOAT32, 1, s, v);
	ck_assert_ptr_null(tg_mean_acc(x, NULL, 0, 0, TG_INT32));
	ck_assert_error("mean: accumulation dtype int32 is not a float dtype");
	ck_assert_ptr_null(tg_sum_acc(x, NULL, 0, 0, (tg_dtype)99));
	ck_assert_error("sum: accumulation dtype 99 is not a dtype");
	ck_assert_ptr_null(tg_sum_acc(x, (int[]){ 1 }, 1, 0, TG_FLOAT32));
	ck_assert_error("sum: axis 1 out of range for 1 dims");
	ck_assert_ptr_null(tg_matmul_acc(x, x, (tg_dtype)-1));
	ck_assert_error("matmul: accumulation dtype -1 is not a dtype");
	ck_assert_ptr_null(tg_matmul_acc(NULL, x, TG_FLOAT32));
	tg_scope_end();
}
END_TEST

/* TG_MAX_DIMS dims: "every axis" must be all of them (a mask of 32
 * bits); 0-dim tensors stack into a vector. */
START_TEST(full_rank_and_scalars)
{
	int64_t big[TG_MAX_DIMS];
	tg_tensor *f, *y, *ts[3];
	double want[3] = { 1.5, -2, 4 };
	size_t i;
	int last = TG_MAX_DIMS - 1;

	ncases = 0;
	for (i = 0; i < TG_MAX_DIMS; i++)
		big[i] = 1;
	big[TG_MAX_DIMS - 1] = 3;
	tg_scope_begin();
	f = tg_reshape(mkv(TG_FLOAT32, 1, (int64_t[]){ 3 }, want), TG_MAX_DIMS,
	               big);
	ck_assert_msg(f != NULL, "%s", tg_last_error());
	y = tg_sum(f, NULL, 0, 0);
	check_meta("sum", "32 dims, all axes", y, TG_FLOAT32, 0, NULL);
	check_t("sum", "32 dims, all axes", y, (double[]){ 3.5 }, 1e-6);
	y = tg_max(f, NULL, 0, 1);
	for (i = 0; i < TG_MAX_DIMS; i++)
		big[i] = 1;
	check_meta("max", "32 dims, all axes keepdim", y, TG_FLOAT32,
	           TG_MAX_DIMS, big);
	check_t("max", "32 dims, all axes keepdim", y, (double[]){ 4 }, 0);
	y = tg_argmin(f, last, 0);
	check_t("argmin", "32 dims, last axis", y, (double[]){ 1 }, 0);
	for (i = 0; i < 3; i++)
		ts[i] = tg_tensor_scalar(NULL, TG_FLOAT32, want[i]);
	y = tg_stack((const tg_tensor *const *)ts, 3, 0);
	check_meta("stack", "scalars", y, TG_FLOAT32, 1, (int64_t[]){ 3 });
	check_t("stack", "scalars", y, want, 0);
	y = tg_stack((const tg_tensor *const *)ts, 3, -1);
	check_meta("stack", "scalars axis -1", y, TG_FLOAT32, 1,
	           (int64_t[]){ 3 });
	ck_assert_ptr_null(tg_cat((const tg_tensor *const *)ts, 3, 0));
	ck_assert_error("cat: 0-dim tensors cannot be concatenated");
	count_case();
	tg_scope_end();
	fprintf(stderr, "full-rank/scalar cases: %d\n", ncases);
}
END_TEST

/* A (0,3) input: sum 0, max the reduce identity (-inf, the dtype's
 * least value), min its mirror, mean 0 (tinygrad), var NaN, any false,
 * all true, logsumexp -inf; the empty output side stays empty. */
START_TEST(reductions_of_zero_size)
{
	static const tg_dtype dts[] = { TG_FLOAT32, TG_FLOAT16, TG_INT32,
	                                TG_INT8, TG_UINT8, TG_BOOL };
	int64_t s[2] = { 0, 3 }, o3[1] = { 3 }, o0[1] = { 0 };
	int ax0 = 0, ax1 = 1;
	size_t d;
	int i;

	ncases = 0;
	for (d = 0; d < sizeof dts / sizeof dts[0]; d++) {
		tg_dtype dt = dts[d];
		int isf = tg_dtype_is_float(dt);
		double mx, mn, want[3];
		tg_tensor *x, *y;

		if (!ot_dtypes_ok(dt, sum_dtype(dt)))
			continue;
		switch (dt) {
		case TG_INT32: mx = INT32_MIN; mn = INT32_MAX; break;
		case TG_INT8: mx = -128; mn = 127; break;
		case TG_UINT8: mx = 0; mn = 255; break;
		case TG_BOOL: mx = 0; mn = 1; break;
		default: mx = -INFINITY; mn = INFINITY; break;
		}
		tg_scope_begin();
		x = mkv(dt, 2, s, NULL);
		y = tg_sum(x, &ax0, 1, 0);
		check_meta("sum", "(0,3) axis 0", y, sum_dtype(dt), 1, o3);
		for (i = 0; i < 3; i++)
			want[i] = 0;
		check_t("sum", "(0,3) axis 0", y, want, 0);
		y = tg_sum(x, NULL, 0, 0);
		check_meta("sum", "(0,3) all", y, sum_dtype(dt), 0, NULL);
		check_t("sum", "(0,3) all", y, want, 0);
		y = tg_sum(x, &ax1, 1, 0);
		check_meta("sum", "(0,3) axis 1", y, sum_dtype(dt), 1, o0);
		check_t("sum", "(0,3) axis 1", y, want, 0);
		y = tg_max(x, &ax0, 1, 0);
		check_meta("max", "(0,3) axis 0", y, dt, 1, o3);
		for (i = 0; i < 3; i++)
			want[i] = mx;
		check_t("max", "(0,3) axis 0", y, want, 0);
		y = tg_min(x, &ax0, 1, 1);
		check_meta("min", "(0,3) axis 0", y, dt, 2,
		           (int64_t[]){ 1, 3 });
		for (i = 0; i < 3; i++)
			want[i] = mn;
		check_t("min", "(0,3) axis 0", y, want, 0);
		y = tg_any(x, &ax0, 1, 0);
		for (i = 0; i < 3; i++)
			want[i] = 0;
		check_meta("any", "(0,3) axis 0", y, TG_BOOL, 1, o3);
		check_t("any", "(0,3) axis 0", y, want, 0);
		y = tg_all(x, NULL, 0, 0);
		want[0] = 1;
		check_meta("all", "(0,3) all", y, TG_BOOL, 0, NULL);
		check_t("all", "(0,3) all", y, want, 0);
		if (dt == TG_BOOL)
			goto done;
		y = tg_mean(x, &ax0, 1, 0);
		check_meta("mean", "(0,3) axis 0", y, isf ? dt : TG_FLOAT32, 1, o3);
		for (i = 0; i < 3; i++)
			want[i] = 0;
		check_t("mean", "(0,3) axis 0", y, want, 0);
		y = tg_var(x, &ax0, 1, 0, 1);
		for (i = 0; i < 3; i++)
			want[i] = NAN;
		check_t("var", "(0,3) axis 0", y, want, 0);
		/* tinygrad returns a 0-size input as it is */
		y = tg_cumsum(x, 0);
		check_meta("cumsum", "(0,3) axis 0", y, dt, 2, s);
		count_case();
		y = tg_cumsum(x, -1);
		check_meta("cumsum", "(0,3) axis 1", y, dt, 2, s);
		count_case();
		if (!isf)
			goto done;
		y = tg_logsumexp(x, 0, 0);
		check_meta("logsumexp", "(0,3) axis 0", y, dt, 1, o3);
		for (i = 0; i < 3; i++)
			want[i] = -INFINITY;
		check_t("logsumexp", "(0,3) axis 0", y, want, 0);
		y = tg_softmax(x, 1);
		check_meta("softmax", "(0,3) axis 1", y, dt, 2, s);
		count_case();
done:
		/* argmax over the non-empty axis: an empty result */
		y = tg_argmax(x, 1, 0);
		check_meta("argmax", "(0,3) axis 1", y, TG_INT32, 1, o0);
		count_case();
		tg_scope_end();
	}
	fprintf(stderr, "zero-size cases: %d\n", ncases);
}
END_TEST

/* ---- argmax / argmin ---- */

START_TEST(argmax_argmin_first_index_wins)
{
	static const tg_dtype dts[] = { TG_FLOAT32, TG_FLOAT16, TG_INT32,
	                                TG_INT8, TG_UINT8, TG_BOOL };
	static const struct { size_t si; int axis; } C[] = {
		{ 0, TG_AXIS_NONE }, { 0, 0 }, { 0, -1 },
		{ 1, 0 }, { 1, TG_AXIS_NONE },
		{ 2, 0 }, { 2, 1 }, { 2, -1 }, { 2, TG_AXIS_NONE },
		{ 3, 0 }, { 3, 1 }, { 3, TG_AXIS_NONE },
		{ 4, 0 }, { 4, -2 },
	};
	size_t c, d;
	int flip = 0, am;

	ncases = 0;
	for (c = 0; c < sizeof C / sizeof C[0]; c++)
		for (d = 0; d < sizeof dts / sizeof dts[0]; d++)
			for (am = 0; am < 2; am++) {
				const struct rshape *s = &RSH[C[c].si];
				int axis = C[c].axis, kd = flip++ & 1;
				double in[128], want[128];
				int64_t os[3], fl[1];
				uint32_t m;
				size_t ond;
				char desc[96];
				tg_tensor *x, *y;

				if (!ot_dtypes_ok(dts[d], TG_INT32))
					continue;
				if (axis == TG_AXIS_NONE) {
					m = 1;
					fl[0] = ot_numel(s->nd, s->s);
					ond = 0;
				} else {
					m = s->nd ? 1u << (axis < 0 ? axis + (int)s->nd
					                            : axis) : 0;
					ond = red_shape(s->nd, s->s, m, kd, os);
				}
				snprintf(desc, sizeof desc, "%s axis %d keepdim %d",
				         s->name, axis, kd);
				tg_scope_begin();
				x = mk_in(dts[d], s->nd, s->s, s->kind, 50 + (int)c, Q, in);
				y = am ? tg_argmin(x, axis, kd) : tg_argmax(x, axis, kd);
				check_meta(am ? "argmin" : "argmax", desc, y, TG_INT32, ond,
				           os);
				if (axis == TG_AXIS_NONE)
					ref_reduce(am ? R_ARGMIN : R_ARGMAX, 1, fl, 1, in, 0,
					           want);
				else
					ref_reduce(am ? R_ARGMIN : R_ARGMAX, s->nd, s->s, m,
					           in, 0, want);
				check_t(am ? "argmin" : "argmax", desc, y, want, 0);
				tg_scope_end();
			}
	/* explicit ties */
	{
		int64_t s5[1] = { 5 }, s23[2] = { 2, 3 };
		double a[5] = { 1, 3, 3, 0, 3 }, b[5] = { 2, 0, 5, 0, 0 };
		double c2[6] = { 7, 7, 7, 1, 1, 1 }, w[3];
		tg_scope_begin();
		w[0] = 1;
		check_t("argmax", "ties", tg_argmax(mkv(TG_FLOAT32, 1, s5, a), 0, 0),
		        w, 0);
		check_t("argmin", "ties", tg_argmin(mkv(TG_INT32, 1, s5, b), 0, 0),
		        w, 0);
		w[0] = 0;
		if (ot_dtype_ok(TG_INT8))
			check_t("argmax", "all equal", tg_argmax(mkv(TG_INT8, 2, s23, c2),
			                                         TG_AXIS_NONE, 0), w, 0);
		w[0] = 3;
		if (ot_dtype_ok(TG_INT8))
			check_t("argmin", "all equal rows",
			        tg_argmin(mkv(TG_INT8, 2, s23, c2), TG_AXIS_NONE, 0), w, 0);
		w[0] = w[1] = w[2] = 0;
		if (ot_dtype_ok(TG_UINT8))
			check_t("argmax", "columns", tg_argmax(mkv(TG_UINT8, 2, s23, c2), 0,
			                                       0), w, 0);
		w[0] = w[1] = w[2] = 1;
		if (ot_dtype_ok(TG_FLOAT16))
			check_t("argmin", "columns", tg_argmin(mkv(TG_FLOAT16, 2, s23, c2),
			                                       0, 0), w, 0);
		tg_scope_end();
	}
	fprintf(stderr, "argmax cases: %d\n", ncases);
}
END_TEST

/* ---- logsumexp, softmax, log_softmax ---- */

START_TEST(softmax_family)
{
	static const tg_dtype dts[] = { TG_FLOAT32, TG_FLOAT16, TG_INT32 };
	static const struct { size_t si; int axis; } C[] = {
		{ 0, 0 }, { 1, 0 }, { 1, -1 }, { 2, 0 }, { 2, 1 }, { 2, -1 },
		{ 3, 0 }, { 3, -1 }, { 4, 0 }, { 4, 2 },
	};
	size_t c, d;
	int flip = 0, op;

	ncases = 0;
	for (c = 0; c < sizeof C / sizeof C[0]; c++)
		for (d = 0; d < sizeof dts / sizeof dts[0]; d++)
			for (op = 0; op < 3; op++) {
				const struct rshape *s = &RSH[C[c].si];
				int axis = C[c].axis, kd = flip++ & 1;
				int a = s->nd ? (axis < 0 ? axis + (int)s->nd : axis) : 0;
				uint32_t m = s->nd ? 1u << a : 0;
				tg_dtype rdt = tg_dtype_is_float(dts[d]) ? dts[d]
				               : TG_FLOAT32;
				double in[128], lse[128], want[128];
				int64_t os[3], idx[3], oi[3], i, k = ot_numel(s->nd, s->s);
				size_t ond, j;
				char desc[96];
				const char *name = op == 0 ? "logsumexp" : op == 1
				                   ? "softmax" : "log_softmax";
				tg_tensor *x, *y;

				if (!ot_dtypes_ok(dts[d], rdt))
					continue;
				snprintf(desc, sizeof desc, "%s axis %d keepdim %d",
				         s->name, axis, kd);
				tg_scope_begin();
				x = mk_in(dts[d], s->nd, s->s, s->kind, 70 + (int)c, ANY,
				          in);
				ref_reduce(R_LSE, s->nd, s->s, m, in, 0, lse);
				if (op == 0) {
					y = tg_logsumexp(x, axis, kd);
					ond = red_shape(s->nd, s->s, m, kd, os);
					check_meta(name, desc, y, rdt, ond, os);
					check_t(name, desc, y, lse, tol_of(rdt));
				} else {
					y = op == 1 ? tg_softmax(x, axis)
					            : tg_log_softmax(x, axis);
					check_meta(name, desc, y, rdt, s->nd, s->s);
					for (j = 0; j < s->nd; j++)
						os[j] = j == (size_t)a ? 1 : s->s[j];
					for (i = 0; i < k; i++) {
						ot_unravel(i, s->nd, s->s, idx);
						memcpy(oi, idx, sizeof oi);
						if (s->nd)
							oi[a] = 0;
						want[i] = in[i] - lse[ot_ravel(s->nd, os, oi)];
						if (op == 1)
							want[i] = exp(want[i]);
					}
					check_t(name, desc, y, want, tol_of(rdt));
				}
				tg_scope_end();
			}
	fprintf(stderr, "softmax cases: %d\n", ncases);
}
END_TEST

/* ---- cumsum ---- */

START_TEST(cumsum_short_and_long_axes)
{
	static const struct {
		const char *name;
		size_t nd;
		int64_t s[3];
		int kind, axis;
		tg_dtype dt;
	} C[] = {
		{ "scalar", 0, { 0 }, CONTIG, 0, TG_FLOAT32 },
		{ "odd37", 1, { 37 }, CONTIG, 0, TG_FLOAT32 },
		{ "odd37", 1, { 37 }, CONTIG, -1, TG_INT32 },
		{ "odd37", 1, { 37 }, CONTIG, 0, TG_INT8 },
		{ "odd37", 1, { 37 }, CONTIG, 0, TG_UINT8 },
		{ "odd37", 1, { 37 }, CONTIG, 0, TG_FLOAT16 },
		{ "3x5x7", 3, { 3, 5, 7 }, CONTIG, 0, TG_FLOAT32 },
		{ "3x5x7", 3, { 3, 5, 7 }, CONTIG, 1, TG_FLOAT32 },
		{ "3x5x7", 3, { 3, 5, 7 }, CONTIG, 2, TG_INT32 },
		{ "3x5x7", 3, { 3, 5, 7 }, CONTIG, -2, TG_INT8 },
		{ "permuted4x6", 2, { 4, 6 }, PERMUTED, 0, TG_FLOAT32 },
		{ "permuted4x6", 2, { 4, 6 }, PERMUTED, 1, TG_INT32 },
		{ "flipped3x4x5", 3, { 3, 4, 5 }, FLIPPED, 0, TG_FLOAT32 },
		{ "bool20", 1, { 20 }, CONTIG, 0, TG_BOOL },
		{ "512", 1, { 512 }, CONTIG, 0, TG_FLOAT32 },
		{ "513", 1, { 513 }, CONTIG, 0, TG_INT32 },
		{ "1000", 1, { 1000 }, CONTIG, 0, TG_FLOAT32 },
		{ "1000", 1, { 1000 }, CONTIG, 0, TG_INT32 },
		{ "2x1000", 2, { 2, 1000 }, CONTIG, -1, TG_FLOAT32 },
		{ "1000x3", 2, { 1000, 3 }, CONTIG, 0, TG_INT32 },
		{ "permuted600x2", 2, { 600, 2 }, PERMUTED, 0, TG_FLOAT32 },
		{ "flipped1000", 1, { 1000 }, FLIPPED, 0, TG_INT8 },
	};
	static double in[4096], want[4096];
	size_t c;

	ncases = 0;
	for (c = 0; c < sizeof C / sizeof C[0]; c++) {
		size_t nd = C[c].nd;
		int a = nd ? (C[c].axis < 0 ? C[c].axis + (int)nd : C[c].axis) : 0;
		int64_t k = ot_numel(nd, C[c].s), i, idx[3], t;
		tg_tensor *x, *y;
		char desc[64];

		if (!ot_dtypes_ok(C[c].dt, nd ? sum_dtype(C[c].dt) : C[c].dt))
			continue;
		snprintf(desc, sizeof desc, "%s axis %d", C[c].name, C[c].axis);
		tg_scope_begin();
		x = mk_in(C[c].dt, nd, C[c].s, C[c].kind, 90 + (int)c, ANY, in);
		y = tg_cumsum(x, C[c].axis);
		check_meta("cumsum", desc, y, nd ? sum_dtype(C[c].dt) : C[c].dt,
		           nd, C[c].s);
		for (i = 0; i < k; i++) {
			ot_unravel(i, nd, C[c].s, idx);
			want[i] = 0;
			if (!nd) {
				want[i] = in[i];
				continue;
			}
			for (t = 0; t <= idx[a]; t++) {
				int64_t j[3];
				memcpy(j, idx, sizeof j);
				j[a] = t;
				want[i] += in[ot_ravel(nd, C[c].s, j)];
			}
		}
		check_t("cumsum", desc, y, want, tol_of(tg_tensor_dtype(y)));
		tg_scope_end();
	}
	fprintf(stderr, "cumsum cases: %d\n", ncases);
}
END_TEST

/* ---- arange, eye ---- */

START_TEST(arange_and_eye)
{
	static const struct { double a, b, s; tg_dtype dt; } A[] = {
		{ 0, 10, 1, TG_INT32 }, { 10, 0, -1, TG_INT32 },
		{ 2, -7, -3, TG_INT32 }, { 0, 100, 7, TG_INT32 },
		{ 5, 0, 1, TG_INT32 }, { 0, 0, 1, TG_INT32 },
		{ 0, 1, 0.1, TG_FLOAT32 }, { -3, 3, 0.5, TG_FLOAT32 },
		{ 1.5, -2, -0.25, TG_FLOAT32 }, { 0, 5, -1, TG_FLOAT32 },
		{ -1, 1, 0.75, TG_FLOAT32 }, { 0, 600, 1, TG_INT32 },
		{ 0, 8, 2, TG_FLOAT16 },
	};
	static const int64_t E[][2] = { { 3, 3 }, { 4, 2 }, { 2, 5 }, { 1, 1 },
	                                { 5, 1 }, { 0, 3 } };
	static const tg_dtype edt[] = { TG_FLOAT32, TG_INT32, TG_BOOL };
	double want[1024];
	size_t i, d;

	ncases = 0;
	for (i = 0; i < sizeof A / sizeof A[0]; i++) {
		double cnt = ceil((A[i].b - A[i].a) / A[i].s);
		int64_t n = cnt > 0 ? (int64_t)cnt : 0, j;
		char desc[64];
		tg_tensor *y;

		if (!ot_dtype_ok(A[i].dt))
			continue;
		snprintf(desc, sizeof desc, "(%g, %g, %g)", A[i].a, A[i].b, A[i].s);
		tg_scope_begin();
		y = tg_arange(NULL, A[i].dt, A[i].a, A[i].b, A[i].s);
		check_meta("arange", desc, y, A[i].dt, 1, &n);
		for (j = 0; j < n; j++)
			want[j] = A[i].a + (double)j * A[i].s;
		check_t("arange", desc, y, want, tol_of(A[i].dt));
		tg_scope_end();
	}
	for (i = 0; i < sizeof E / sizeof E[0]; i++)
		for (d = 0; d < sizeof edt / sizeof edt[0]; d++) {
			int64_t r, c;
			char desc[64];
			tg_tensor *y;

			if (!ot_dtype_ok(edt[d]))
				continue;
			snprintf(desc, sizeof desc, "%lldx%lld", (long long)E[i][0],
			         (long long)E[i][1]);
			tg_scope_begin();
			y = tg_eye(NULL, edt[d], E[i][0], E[i][1]);
			check_meta("eye", desc, y, edt[d], 2, E[i]);
			for (r = 0; r < E[i][0]; r++)
				for (c = 0; c < E[i][1]; c++)
					want[r * E[i][1] + c] = r == c;
			check_t("eye", desc, y, want, 0);
			tg_scope_end();
		}
	fprintf(stderr, "arange/eye cases: %d\n", ncases);
}
END_TEST

/* ---- transpose, flatten, unflatten, squeeze, unsqueeze ---- */

/* Checks y (shape ns) holds x's values (shape s) permuted by order
 * (new axis i is old axis order[i]); reshapes pass the identity with
 * the same count. */
static void check_perm(const char *op, const char *desc, tg_tensor *y,
                       const double *in, size_t nd, const int64_t *s,
                       const int *order)
{
	double want[256];
	int64_t ns[TG_MAX_DIMS], idx[TG_MAX_DIMS], oi[TG_MAX_DIMS], i;
	int64_t k = ot_numel(nd, s);
	size_t j;

	for (j = 0; j < nd; j++)
		ns[j] = s[order[j]];
	for (i = 0; i < k; i++) {
		ot_unravel(i, nd, ns, idx);
		for (j = 0; j < nd; j++)
			oi[order[j]] = idx[j];
		want[i] = in[ot_ravel(nd, s, oi)];
	}
	check_t(op, desc, y, want, 0);
}

START_TEST(transpose_flatten_squeeze)
{
	int64_t s[3] = { 2, 3, 4 }, s4[4] = { 1, 3, 1, 2 };
	static const int tp[][2] = { { 0, 2 }, { -1, 1 }, { 1, 1 }, { -3, -2 } };
	static const int fl[][2] = { { 0, 1 }, { 1, 2 }, { 0, -1 }, { 1, 1 },
	                             { -2, -1 } };
	static const int ident[4] = { 0, 1, 2, 3 };
	double in[64], in4[64];
	tg_tensor *x, *x4, *y;
	size_t i;

	ncases = 0;
	tg_scope_begin();
	x = mk_in(TG_INT32, 3, s, PERMUTED, 11, ANY, in);
	for (i = 0; i < sizeof tp / sizeof tp[0]; i++) {
		int order[3] = { 0, 1, 2 }, a = tp[i][0] < 0 ? tp[i][0] + 3 : tp[i][0];
		int b = tp[i][1] < 0 ? tp[i][1] + 3 : tp[i][1];
		int64_t ns[3];
		size_t j;

		order[a] = b;
		order[b] = a;
		for (j = 0; j < 3; j++)
			ns[j] = s[order[j]];
		y = tg_transpose(x, tp[i][0], tp[i][1]);
		check_meta("transpose", "", y, TG_INT32, 3, ns);
		check_perm("transpose", "", y, in, 3, s, order);
	}
	for (i = 0; i < sizeof fl / sizeof fl[0]; i++) {
		int a = fl[i][0] < 0 ? fl[i][0] + 3 : fl[i][0];
		int b = fl[i][1] < 0 ? fl[i][1] + 3 : fl[i][1], j;
		int64_t ns[3], m = 1;
		size_t n = 0;

		for (j = 0; j < 3; j++) {
			if (j < a || j > b)
				ns[n++] = s[j];
			else if ((m *= s[j]), j == b)
				ns[n++] = m;
		}
		y = tg_flatten(x, fl[i][0], fl[i][1]);
		check_meta("flatten", "", y, TG_INT32, n, ns);
		check_perm("flatten", "", tg_reshape(y, 3, s), in, 3, s, ident);
	}
	/* flatten of a 0-dim tensor is (1,) */
	y = tg_flatten(tg_tensor_scalar(NULL, TG_FLOAT32, 2.5), 0, -1);
	check_meta("flatten", "scalar", y, TG_FLOAT32, 1, (int64_t[]){ 1 });
	in4[0] = 2.5;
	check_t("flatten", "scalar", y, in4, 0);
	/* unflatten */
	y = tg_unflatten(x, 2, 2, (int64_t[]){ 2, 2 });
	check_meta("unflatten", "axis 2", y, TG_INT32, 4,
	           (int64_t[]){ 2, 3, 2, 2 });
	check_perm("unflatten", "", tg_reshape(y, 3, s), in, 3, s, ident);
	y = tg_unflatten(tg_flatten(x, 0, 1), 0, 2, (int64_t[]){ -1, 2 });
	check_meta("unflatten", "-1", y, TG_INT32, 3, (int64_t[]){ 3, 2, 4 });
	check_perm("unflatten", "-1", y, in, 3, (int64_t[]){ 3, 2, 4 }, ident);
	y = tg_unflatten(x, -1, 3, (int64_t[]){ 1, 4, 1 });
	check_meta("unflatten", "axis -1", y, TG_INT32, 5,
	           (int64_t[]){ 2, 3, 1, 4, 1 });
	/* squeeze / unsqueeze */
	x4 = mk_in(TG_FLOAT32, 4, s4, CONTIG, 12, ANY, in4);
	y = tg_squeeze(x4, TG_AXIS_NONE);
	check_meta("squeeze", "none", y, TG_FLOAT32, 2, (int64_t[]){ 3, 2 });
	check_perm("squeeze", "none", y, in4, 2, (int64_t[]){ 3, 2 }, ident);
	y = tg_squeeze(x4, 0);
	check_meta("squeeze", "0", y, TG_FLOAT32, 3, (int64_t[]){ 3, 1, 2 });
	count_case();
	y = tg_squeeze(x4, -2);
	check_meta("squeeze", "-2", y, TG_FLOAT32, 3, (int64_t[]){ 1, 3, 2 });
	count_case();
	y = tg_squeeze(x4, 1); /* size 3: unchanged */
	check_meta("squeeze", "1", y, TG_FLOAT32, 4, s4);
	count_case();
	y = tg_squeeze(tg_tensor_scalar(NULL, TG_INT32, 3), TG_AXIS_NONE);
	check_meta("squeeze", "scalar", y, TG_INT32, 0, NULL);
	count_case();
	y = tg_unsqueeze(x, 0);
	check_meta("unsqueeze", "0", y, TG_INT32, 4, (int64_t[]){ 1, 2, 3, 4 });
	check_perm("unsqueeze", "0", tg_reshape(y, 3, s), in, 3, s, ident);
	y = tg_unsqueeze(x, -1);
	check_meta("unsqueeze", "-1", y, TG_INT32, 4, (int64_t[]){ 2, 3, 4, 1 });
	count_case();
	y = tg_unsqueeze(x, -3);
	check_meta("unsqueeze", "-3", y, TG_INT32, 4, (int64_t[]){ 2, 1, 3, 4 });
	count_case();
	y = tg_unsqueeze(x, 3);
	check_meta("unsqueeze", "3", y, TG_INT32, 4, (int64_t[]){ 2, 3, 4, 1 });
	count_case();
	y = tg_unsqueeze(tg_tensor_scalar(NULL, TG_INT32, 3), -1);
	check_meta("unsqueeze", "scalar", y, TG_INT32, 1, (int64_t[]){ 1 });
	count_case();
	tg_scope_end();
	fprintf(stderr, "transpose/flatten/squeeze cases: %d\n", ncases);
}
END_TEST

/* ---- slicing (Python semantics, re-implemented) ---- */

/* Python's slice.indices and the count; 0 for a bad index. */
static int py_slice(const tg_slice_spec *sp, int64_t len, int64_t *first,
                    int64_t *step, int64_t *count)
{
	int64_t st = sp->has_step ? sp->step : 1, lower, upper, a, b;

	if (sp->is_index) {
		a = sp->start < 0 ? sp->start + len : sp->start;
		if (a < 0 || a >= len)
			return 0;
		*first = a;
		*step = 1;
		*count = 1;
		return 1;
	}
	lower = st < 0 ? -1 : 0;
	upper = st < 0 ? len - 1 : len;
	if (!sp->has_start) {
		a = st < 0 ? upper : lower;
	} else {
		a = sp->start;
		if (a < 0) {
			a += len;
			if (a < lower)
				a = lower;
		} else if (a > upper) {
			a = upper;
		}
	}
	if (!sp->has_stop) {
		b = st < 0 ? lower : upper;
	} else {
		b = sp->stop;
		if (b < 0) {
			b += len;
			if (b < lower)
				b = lower;
		} else if (b > upper) {
			b = upper;
		}
	}
	if (st > 0)
		*count = b > a ? (b - a - 1) / st + 1 : 0;
	else
		*count = a > b ? (a - b - 1) / -st + 1 : 0;
	*first = a;
	*step = st;
	return 1;
}

#define SL_START(a) ((tg_slice_spec){ (a), 0, 1, 1, 0, 0, 0 })
#define SL_STOP(b) ((tg_slice_spec){ 0, (b), 1, 0, 1, 0, 0 })
#define SL_STEP(s) ((tg_slice_spec){ 0, 0, (s), 0, 0, 1, 0 })

START_TEST(slice_matches_python)
{
	static const struct {
		const char *name;
		size_t n;
		tg_slice_spec s[3];
	} C[] = {
		{ "[::-1]", 1, { SL_STEP(-1) } },
		{ "[1:-1:2]", 1, { TG_SLICE_STEP(1, -1, 2) } },
		{ "[-1]", 1, { TG_INDEX_AT(-1) } },
		{ "[5:2:-2]", 1, { TG_SLICE_STEP(5, 2, -2) } },
		{ "[:0]", 1, { SL_STOP(0) } },
		{ "[2:]", 1, { SL_START(2) } },
		{ "[-100:100]", 1, { TG_SLICE(-100, 100) } },
		{ "[100:-100:-1]", 1, { TG_SLICE_STEP(100, -100, -1) } },
		{ "[::3]", 1, { SL_STEP(3) } },
		{ "[::-4]", 1, { SL_STEP(-4) } },
		{ "[3:3]", 1, { TG_SLICE(3, 3) } },
		{ "[4:1]", 1, { TG_SLICE(4, 1) } },
		{ "[0]", 1, { TG_INDEX_AT(0) } },
		{ ":,[::-1]", 2, { TG_SLICE_ALL, SL_STEP(-1) } },
		{ "[1],[-2]", 2, { TG_INDEX_AT(1), TG_INDEX_AT(-2) } },
		{ "[::-2],[1:5:3]", 2, { SL_STEP(-2), TG_SLICE_STEP(1, 5, 3) } },
		{ "[-3:],[:,:-1]", 2, { SL_START(-3), SL_STOP(-1) } },
		{ "[1:4],[2],[::-1]", 3, { TG_SLICE(1, 4), TG_INDEX_AT(2),
		                           SL_STEP(-1) } },
		{ "[-1],[5:0:-2],[-2:]", 3, { TG_INDEX_AT(-1),
		                              TG_SLICE_STEP(5, 0, -2),
		                              SL_START(-2) } },
		{ "[0],[0],[0]", 3, { TG_INDEX_AT(0), TG_INDEX_AT(0),
		                      TG_INDEX_AT(0) } },
		{ "[:0],[::-1]", 2, { SL_STOP(0), SL_STEP(-1) } },
	};
	static const struct { size_t nd; int64_t s[3]; int kind; } X[] = {
		{ 1, { 7 }, CONTIG }, { 1, { 8 }, FLIPPED },
		{ 3, { 5, 6, 4 }, CONTIG }, { 3, { 5, 6, 4 }, PERMUTED },
	};
	double in[256], want[256];
	size_t c, xi;

	ncases = 0;
	for (xi = 0; xi < sizeof X / sizeof X[0]; xi++)
		for (c = 0; c < sizeof C / sizeof C[0]; c++) {
			size_t nd = X[xi].nd, j, nout = 0;
			int64_t first[3], step[3], cnt[3], os[3], full[3], idx[3], oi[3];
			int64_t k, i;
			char desc[96];
			tg_tensor *x, *y;

			if (C[c].n > nd)
				continue;
			snprintf(desc, sizeof desc, "%s on %zu-d kind %d", C[c].name,
			         nd, X[xi].kind);
			for (j = 0; j < nd; j++) {
				if (j < C[c].n) {
					ck_assert(py_slice(&C[c].s[j], X[xi].s[j], &first[j],
					                   &step[j], &cnt[j]));
				} else {
					first[j] = 0;
					step[j] = 1;
					cnt[j] = X[xi].s[j];
				}
				full[j] = cnt[j];
				if (j >= C[c].n || !C[c].s[j].is_index)
					os[nout++] = cnt[j];
			}
			tg_scope_begin();
			x = mk_in(TG_INT32, nd, X[xi].s, X[xi].kind, 20 + (int)xi, ANY,
			          in);
			y = tg_slice(x, C[c].n, C[c].s);
			check_meta("slice", desc, y, TG_INT32, nout, os);
			k = ot_numel(nd, full);
			for (i = 0; i < k; i++) {
				ot_unravel(i, nd, full, idx);
				for (j = 0; j < nd; j++)
					oi[j] = first[j] + idx[j] * step[j];
				want[i] = in[ot_ravel(nd, X[xi].s, oi)];
			}
			check_t("slice", desc, y, want, 0);
			tg_scope_end();
		}
	fprintf(stderr, "slice cases: %d\n", ncases);
}
END_TEST

/* ---- gather ---- */

/* ---- tg_index (getitem) ---- */

/* x (4,5,6) holds 100i + 10j + k, so a value names its source.  The
 * index tensors: */
static const double IA[3] = { 2, -1, 0 };     /* -> 2, 3, 0 */
static const double IB[3] = { 4, 0, -5 };     /* -> 4, 0, 0 on size 5 */
static const double IC[4] = { 1, 3, 0, 2 };   /* (2,2) */
static const double IR[3] = { 4, -5, 7 };     /* out of range on 4 */
static const double I31[3] = { 0, 3, 1 };     /* (3,1) */
static const double I2[2] = { 5, -6 };        /* -> 5, 0 on size 6 */

static int64_t wrap(double i, int64_t n)
{
	int64_t v = (int64_t)i;

	return v < 0 ? v + n : v;
}

/* x's value at (i,j,k), or 0 when an index is outside its axis. */
static double xat(int64_t i, int64_t j, int64_t k)
{
	if (i < 0 || i >= 4 || j < 0 || j >= 5 || k < 0 || k >= 6)
		return 0;
	return (double)(100 * i + 10 * j + k);
}

/* The expected value of case c at output position o: each case spelled
 * out as numpy (and tinygrad) index it. */
static double index_ref(int c, const int64_t *o)
{
	switch (c) {
	case 0: /* x[IA] -> (3,5,6) */
		return xat(wrap(IA[o[0]], 4), o[1], o[2]);
	case 1: /* x[:, IC] -> (4,2,2,6) */
		return xat(o[0], wrap(IC[o[1] * 2 + o[2]], 5), o[3]);
	case 2: /* x[IA, IB] -> (3,6) */
		return xat(wrap(IA[o[0]], 4), wrap(IB[o[0]], 5), o[1]);
	case 3: /* x[:, IB, I2 broadcast (3,1) x (2,)]: I31 on j, I2 on k
	         * -> (4,3,2) */
		return xat(o[0], wrap(I31[o[1]], 5), wrap(I2[o[2]], 6));
	case 4: /* x[IA, :, IA] (apart: index axes first) -> (3,5) */
		return xat(wrap(IA[o[0]], 4), o[1], wrap(IA[o[0]], 6));
	case 5: /* x[1:3, IB] -> (2,3,6) */
		return xat(1 + o[0], wrap(IB[o[1]], 5), o[2]);
	case 6: /* x[1, :, IA] (the int is basic: tinygrad's, not numpy's)
	         * -> (5,3) */
		return xat(1, o[0], wrap(IA[o[1]], 6));
	case 7: /* x[IR] -> (3,5,6), out of range rows are 0 */
		return xat(wrap(IR[o[0]], 4), o[1], o[2]);
	case 8: /* x[None, ..., IA] -> (1,4,5,3) */
		return xat(o[1], o[2], wrap(IA[o[3]], 6));
	case 9: /* x[::-1, 3, ::2] -> (4,3), a view */
		return xat(3 - o[0], 3, 2 * o[1]);
	default: /* x[IA, None, IB]: apart, but the first index is axis 0,
	          * so nothing moves -> (3,1,6) */
		return xat(wrap(IA[o[0]], 4), wrap(IB[o[0]], 5), o[2]);
	}
}

START_TEST(index_matches_numpy)
{
	static const struct {
		const char *name;
		size_t nd;
		int64_t out[4];
	} C[] = {
		{ "x[IA]", 3, { 3, 5, 6 } },
		{ "x[:, IC]", 4, { 4, 2, 2, 6 } },
		{ "x[IA, IB]", 2, { 3, 6 } },
		{ "x[:, I31, I2]", 3, { 4, 3, 2 } },
		{ "x[IA, :, IA]", 2, { 3, 5 } },
		{ "x[1:3, IB]", 3, { 2, 3, 6 } },
		{ "x[1, :, IA]", 2, { 5, 3 } },
		{ "x[IR]", 3, { 3, 5, 6 } },
		{ "x[None, ..., IA]", 4, { 1, 4, 5, 3 } },
		{ "x[::-1, 3, ::2]", 2, { 4, 3 } },
		{ "x[IA, None, IB]", 3, { 3, 1, 6 } },
	};
	int64_t xs[3] = { 4, 5, 6 }, s3[1] = { 3 }, s22[2] = { 2, 2 };
	int64_t s31[2] = { 3, 1 }, s2[1] = { 2 }, o[4], i;
	double xv[120], xv8[120], want[240];
	tg_dtype dts[3] = { TG_INT32, TG_FLOAT32, TG_INT8 };
	size_t c, d;

	/* int8 holds them mod 256 */
	for (i = 0; i < 120; i++) {
		xv[i] = (double)(100 * (i / 30) + 10 * (i / 6 % 5) + i % 6);
		xv8[i] = (double)(int8_t)(int64_t)xv[i];
	}
	ncases = 0;
	for (d = 0; d < 3; d++)
		for (c = 0; c < sizeof C / sizeof C[0]; c++) {
			tg_dtype dt = dts[d], it = d == 2 ? TG_INT64 : TG_INT32;
			tg_tensor *x, *ia, *ib, *ic, *ir, *i31, *i2, *y = NULL;
			int64_t n = ot_numel(C[c].nd, C[c].out);

			if (!ot_dtypes_ok(dt, it) || (dt == TG_INT8 && c != 0 &&
			                              c != 3))
				continue;
			tg_scope_begin();
			x = mkv(dt, 3, xs, dt == TG_INT8 ? xv8 : xv);
			ia = mkv(it, 1, s3, IA), ib = mkv(it, 1, s3, IB);
			ic = mkv(it, 2, s22, IC), ir = mkv(it, 1, s3, IR);
			i31 = mkv(it, 2, s31, I31), i2 = mkv(it, 1, s2, I2);
#define IX(...) tg_index(x, sizeof((tg_index_spec[]){ __VA_ARGS__ }) /    \
                         sizeof(tg_index_spec),                          \
                         (tg_index_spec[]){ __VA_ARGS__ })
			switch (c) {
			case 0: y = IX(TG_IX_TENSOR(ia)); break;
			case 1: y = IX(TG_IX_ALL, TG_IX_TENSOR(ic)); break;
			case 2: y = IX(TG_IX_TENSOR(ia), TG_IX_TENSOR(ib)); break;
			case 3: y = IX(TG_IX_ALL, TG_IX_TENSOR(i31),
			               TG_IX_TENSOR(i2)); break;
			case 4: y = IX(TG_IX_TENSOR(ia), TG_IX_ALL,
			               TG_IX_TENSOR(ia)); break;
			case 5: y = IX(TG_IX_SLICE(1, 3), TG_IX_TENSOR(ib)); break;
			case 6: y = IX(TG_IX_INT(1), TG_IX_ALL, TG_IX_TENSOR(ia));
				break;
			case 7: y = IX(TG_IX_TENSOR(ir)); break;
			case 8: y = IX(TG_IX_NEWAXIS, TG_IX_ELLIPSIS,
			               TG_IX_TENSOR(ia)); break;
			case 9: y = IX(TG_IX_STEP(-1, -5, -1), TG_IX_INT(3),
			               TG_IX_STEP(0, 6, 2)); break;
			default: y = IX(TG_IX_TENSOR(ia), TG_IX_NEWAXIS,
			                TG_IX_TENSOR(ib)); break;
			}
#undef IX
			check_meta("index", C[c].name, y, dt, C[c].nd, C[c].out);
			for (i = 0; i < n; i++) {
				ot_unravel(i, C[c].nd, C[c].out, o);
				want[i] = index_ref((int)c, o);
				if (dt == TG_INT8)
					want[i] = (double)(int8_t)(int64_t)want[i];
			}
			check_t("index", C[c].name, y, want, 0);
			tg_scope_end();
		}
	fprintf(stderr, "index cases: %d\n", ncases);
}
END_TEST

/* Indexing by realized tensors is tinygrad's (mid-2024) three kernels:
 * the arange (a cumsum), the indices with negatives wrapped (expanded
 * into a reduce, so realized on their own) and the masked sum; slices
 * and new axes alone are a view, no kernel. */
START_TEST(index_kernel_counts)
{
	int64_t xs[2] = { 6, 7 }, s3[1] = { 3 };
	double xv[42] = { 0 }, iv[3] = { 5, 0, 2 };
	tg_tensor *x, *ix, *y;
	tg_counters c;

	tg_scope_begin();
	x = tg_contiguous(mkv(TG_FLOAT32, 2, xs, xv));
	ix = tg_contiguous(mkv(TG_INT32, 1, s3, iv));
	ck_assert_int_eq(tg_realize(x), 0);
	ck_assert_int_eq(tg_realize(ix), 0);
	tg_counters_reset();
	y = tg_index(x, 2, (tg_index_spec[]){ TG_IX_TENSOR(ix),
	                                      TG_IX_SLICE(1, 4) });
	ck_assert_int_eq(tg_realize(y), 0);
	tg_counters_get(&c);
	ck_assert_uint_eq(c.kernels, 3);
	tg_counters_reset();
	y = tg_index(x, 2, (tg_index_spec[]){ TG_IX_SLICE(1, 4),
	                                      TG_IX_NEWAXIS });
	ck_assert_int_eq(tg_realize(y), 0);
	tg_counters_get(&c);
	ck_assert_uint_eq(c.kernels, 0);
	tg_scope_end();
}
END_TEST

START_TEST(index_errors_name_the_item)
{
	int64_t xs[2] = { 3, 4 }, s2[1] = { 2 }, s3[1] = { 3 };
	double xv[12] = { 0 }, iv[3] = { 0, 1, 2 };
	tg_tensor *x, *f, *b, *i2, *i3;
	tg_index_spec bad = TG_IX_ALL;

	tg_scope_begin();
	x = mkv(TG_FLOAT32, 2, xs, xv);
	f = mkv(TG_FLOAT32, 1, s2, iv);
	b = mkv(TG_BOOL, 1, s2, iv);
	i2 = mkv(TG_INT32, 1, s2, iv);
	i3 = mkv(TG_INT32, 1, s3, iv);
	ck_assert_ptr_null(tg_index(x, 3, (tg_index_spec[]){ TG_IX_ALL,
	                   TG_IX_INT(0), TG_IX_ALL }));
	ck_assert_error("index: 3 indices for (3,4)");
	ck_assert_ptr_null(tg_index(x, 2, (tg_index_spec[]){ TG_IX_ELLIPSIS,
	                   TG_IX_ELLIPSIS }));
	ck_assert_error("index: items 0 and 1 are both an ellipsis");
	ck_assert_ptr_null(tg_index(x, 1, (tg_index_spec[]){
	                   TG_IX_TENSOR(f) }));
	ck_assert_error("index: item 0: index tensor (2,) is float32, not an "
	                "int dtype");
	ck_assert_ptr_null(tg_index(x, 2, (tg_index_spec[]){ TG_IX_ALL,
	                   TG_IX_TENSOR(b) }));
	ck_assert_error("index: item 1: index tensor (2,) is bool, not an int "
	                "dtype (a bool mask's result has a data-dependent "
	                "shape: use tg_where)");
	ck_assert_ptr_null(tg_index(x, 2, (tg_index_spec[]){ TG_IX_TENSOR(i2),
	                   TG_IX_TENSOR(i3) }));
	ck_assert_error("index: index tensors (2,) and (3,) don't broadcast");
	ck_assert_ptr_null(tg_index(x, 1, (tg_index_spec[]){ TG_IX_INT(3) }));
	ck_assert_error("index: slice: index 3 out of range for axis 0 of size "
	                "3");
	ck_assert_ptr_null(tg_index(x, 2, (tg_index_spec[]){ TG_IX_ALL,
	                   TG_IX_STEP(0, 4, 0) }));
	ck_assert_error("index: slice: step 0 on axis 1");
	bad.kind = (tg_index_kind)9;
	ck_assert_ptr_null(tg_index(x, 1, &bad));
	ck_assert_error("index: item 0 has kind 9");
	ck_assert_ptr_null(tg_index(x, 1, NULL));
	ck_assert_error("index: 1 items, NULL");
	/* no items: x itself, as x[()] */
	ck_assert_ptr_nonnull(tg_index(x, 0, NULL));
	tg_clear_error();
	ck_assert_ptr_null(tg_index(NULL, 1, (tg_index_spec[]){ TG_IX_ALL }));
	ck_assert_ptr_null(tg_index(x, 1, (tg_index_spec[]){
	                   TG_IX_TENSOR(NULL) }));
	ck_assert_str_eq(tg_last_error(), "");
	tg_scope_end();
}
END_TEST

START_TEST(gather_matches_torch)
{
	static const struct {
		int axis;
		int64_t is[3];
		tg_dtype dt, idt;
		int kind;
	} C[] = {
		{ 0, { 2, 3, 4 }, TG_FLOAT32, TG_INT32, CONTIG },
		{ 0, { 5, 2, 3 }, TG_INT32, TG_INT32, CONTIG },
		{ 1, { 2, 3, 4 }, TG_FLOAT32, TG_INT32, PERMUTED },
		{ 1, { 1, 6, 2 }, TG_INT8, TG_INT8, CONTIG },
		{ 2, { 2, 3, 4 }, TG_FLOAT16, TG_INT32, FLIPPED },
		{ -1, { 2, 2, 7 }, TG_FLOAT32, TG_UINT8, CONTIG },
		{ -3, { 1, 1, 1 }, TG_INT32, TG_INT32, CONTIG },
		{ 2, { 2, 3, 0 }, TG_FLOAT32, TG_INT32, CONTIG },
	};
	int64_t s[3] = { 2, 3, 4 };
	double in[64], ix[128], want[128];
	size_t c;

	ncases = 0;
	for (c = 0; c < sizeof C / sizeof C[0]; c++) {
		int a = C[c].axis < 0 ? C[c].axis + 3 : C[c].axis;
		int64_t k = ot_numel(3, C[c].is), i, idx[3];
		char desc[64];
		tg_tensor *x, *ti, *y;

		if (!ot_dtypes_ok(C[c].dt, C[c].idt))
			continue;
		snprintf(desc, sizeof desc, "axis %d index (%lld,%lld,%lld)",
		         C[c].axis, (long long)C[c].is[0], (long long)C[c].is[1],
		         (long long)C[c].is[2]);
		for (i = 0; i < k; i++)
			ix[i] = floor(ot_u01((int)i, 30 + (int)c) *
			              (double)s[a]);
		tg_scope_begin();
		x = mk_in(C[c].dt, 3, s, C[c].kind, 31 + (int)c, ANY, in);
		ti = mkv(C[c].idt, 3, C[c].is, ix);
		y = tg_gather(x, C[c].axis, ti);
		check_meta("gather", desc, y, C[c].dt, 3, C[c].is);
		for (i = 0; i < k; i++) {
			ot_unravel(i, 3, C[c].is, idx);
			idx[a] = (int64_t)ix[i];
			want[i] = in[ot_ravel(3, s, idx)];
		}
		check_t("gather", desc, y, want, 0);
		tg_scope_end();
	}
	/* 1-D and 2-D */
	{
		int64_t s1[1] = { 6 }, i1[1] = { 4 }, s2[2] = { 3, 2 }, i2[2] = { 2, 2 };
		double v1[6] = { 10, 11, 12, 13, 14, 15 }, x1[4] = { 5, 0, 0, 3 };
		double w1[4] = { 15, 10, 10, 13 };
		double v2[6] = { 1, 2, 3, 4, 5, 6 }, x2[4] = { 0, 0, 1, 0 };
		double w2[4] = { 1, 1, 4, 3 };
		tg_scope_begin();
		check_t("gather", "1-d", tg_gather(mkv(TG_FLOAT32, 1, s1, v1), 0,
		                                   mkv(TG_INT32, 1, i1, x1)), w1, 0);
		/* torch.gather(t, 1, [[0,0],[1,0]]) = [[1,1],[4,3]] */
		check_t("gather", "2-d", tg_gather(mkv(TG_INT32, 2, s2, v2), 1,
		                                   mkv(TG_INT32, 2, i2, x2)), w2, 0);
		tg_scope_end();
	}
	fprintf(stderr, "gather cases: %d\n", ncases);
}
END_TEST

/* ---- cat, stack ---- */

START_TEST(cat_and_stack)
{
	static const struct {
		size_t n;
		int axis;
		int64_t sz[4]; /* sizes along the axis */
		tg_dtype dt[4];
	} C[] = {
		{ 2, 0, { 2, 3 }, { TG_FLOAT32, TG_FLOAT32 } },
		{ 3, 1, { 1, 4, 2 }, { TG_INT32, TG_INT32, TG_INT32 } },
		{ 4, -1, { 3, 1, 2, 5 }, { TG_INT8, TG_INT8, TG_INT8, TG_INT8 } },
		{ 2, 2, { 2, 2 }, { TG_INT8, TG_UINT8 } },
		{ 3, 0, { 1, 0, 2 }, { TG_INT32, TG_FLOAT16, TG_FLOAT32 } },
		{ 2, -2, { 3, 2 }, { TG_BOOL, TG_INT32 } },
		{ 2, 1, { 2, 3 }, { TG_FLOAT16, TG_INT8 } },
	};
	int64_t base[3] = { 2, 3, 4 };
	double in[4][128], want[512];
	size_t c, i, j;

	ncases = 0;
	for (c = 0; c < sizeof C / sizeof C[0]; c++) {
		int a = C[c].axis < 0 ? C[c].axis + 3 : C[c].axis;
		tg_tensor *ts[4], *y;
		tg_dtype dt = C[c].dt[0];
		int64_t os[3], at[4], idx[3], k, q;
		char desc[64];

		for (i = 0; i < C[c].n; i++)
			if (!ot_dtype_ok(C[c].dt[i]))
				break;
		if (i < C[c].n)
			continue;
		memcpy(os, base, sizeof os);
		os[a] = 0;
		for (i = 0; i < C[c].n; i++) {
			at[i] = os[a];
			os[a] += C[c].sz[i];
			dt = tg_dtype_least_upper(dt, C[c].dt[i]);
		}
		if (!ot_dtype_ok(dt))
			continue;
		snprintf(desc, sizeof desc, "%zu tensors axis %d", C[c].n,
		         C[c].axis);
		tg_scope_begin();
		for (i = 0; i < C[c].n; i++) {
			int64_t s[3];
			memcpy(s, base, sizeof s);
			s[a] = C[c].sz[i];
			ts[i] = mk_in(C[c].dt[i], 3, s, i == 1 ? PERMUTED : CONTIG,
			              60 + (int)(c * 4 + i), ANY, in[i]);
		}
		y = tg_cat((const tg_tensor *const *)ts, C[c].n, C[c].axis);
		check_meta("cat", desc, y, dt, 3, os);
		k = ot_numel(3, os);
		for (q = 0; q < k; q++) {
			int64_t s[3];
			ot_unravel(q, 3, os, idx);
			for (i = C[c].n; i-- > 0;)
				if (idx[a] >= at[i] && C[c].sz[i])
					break;
			memcpy(s, base, sizeof s);
			s[a] = C[c].sz[i];
			idx[a] -= at[i];
			want[q] = in[i][ot_ravel(3, s, idx)];
		}
		check_t("cat", desc, y, want, 0);
		tg_scope_end();
	}
	/* stack: (2,3) x3 at axis 0, 1, 2, -1 */
	{
		int64_t s[2] = { 2, 3 };
		static const int ax[] = { 0, 1, 2, -1, -3 };
		for (j = 0; j < sizeof ax / sizeof ax[0]; j++) {
			int a = ax[j] < 0 ? ax[j] + 3 : ax[j];
			int64_t os[3], idx[3], q, r[2];
			size_t d, n = 0;
			tg_tensor *ts[3], *y;
			char desc[32];

			for (d = 0; d < 3; d++)
				os[d] = (int)d == a ? 3 : s[n++];
			snprintf(desc, sizeof desc, "axis %d", ax[j]);
			tg_scope_begin();
			for (i = 0; i < 3; i++)
				ts[i] = mk_in(TG_INT32, 2, s, i == 2 ? PERMUTED : CONTIG,
				              80 + (int)i, ANY, in[i]);
			y = tg_stack((const tg_tensor *const *)ts, 3, ax[j]);
			check_meta("stack", desc, y, TG_INT32, 3, os);
			for (q = 0; q < 18; q++) {
				ot_unravel(q, 3, os, idx);
				for (d = 0, n = 0; d < 3; d++)
					if ((int)d != a)
						r[n++] = idx[d];
				want[q] = in[idx[a]][ot_ravel(2, s, r)];
			}
			check_t("stack", desc, y, want, 0);
			tg_scope_end();
		}
	}
	fprintf(stderr, "cat/stack cases: %d\n", ncases);
}
END_TEST

/* ---- repeat ---- */

START_TEST(repeat_tiles)
{
	static const struct { size_t n; int64_t r[4]; } C[] = {
		{ 2, { 1, 1 } }, { 2, { 2, 1 } }, { 2, { 1, 3 } }, { 2, { 2, 2 } },
		{ 3, { 2, 1, 2 } }, { 4, { 2, 1, 3, 1 } }, { 2, { 0, 2 } },
	};
	int64_t s[2] = { 2, 3 };
	double in[6], want[512];
	size_t c, j;
	int kind;

	ncases = 0;
	for (kind = 0; kind < 2; kind++)
		for (c = 0; c < sizeof C / sizeof C[0]; c++) {
			size_t n = C[c].n, lead = n - 2;
			int64_t os[4], idx[4], r[2], k, q;
			char desc[32];
			tg_tensor *y;

			for (j = 0; j < n; j++)
				os[j] = C[c].r[j] * (j < lead ? 1 : s[j - lead]);
			snprintf(desc, sizeof desc, "case %zu kind %d", c, kind);
			tg_scope_begin();
			y = tg_repeat(mk_in(TG_FLOAT32, 2, s, kind ? PERMUTED : CONTIG,
			                    5, ANY, in), n, C[c].r);
			check_meta("repeat", desc, y, TG_FLOAT32, n, os);
			k = ot_numel(n, os);
			for (q = 0; q < k; q++) {
				ot_unravel(q, n, os, idx);
				r[0] = idx[lead] % s[0];
				r[1] = idx[lead + 1] % s[1];
				want[q] = in[ot_ravel(2, s, r)];
			}
			check_t("repeat", desc, y, want, 0);
			tg_scope_end();
		}
	fprintf(stderr, "repeat cases: %d\n", ncases);
}
END_TEST

/* ---- repeat_interleave ---- */

/* Each element repeats times in a row along the axis (or along the
 * flattened input): out index i reads input index i / repeats on that
 * axis, on contiguous and permuted inputs. */
START_TEST(repeat_interleave_rows)
{
	static const struct { int has_axis, axis; int64_t rep; } C[] = {
		{ 1, 0, 2 }, { 1, 1, 3 }, { 1, -1, 1 }, { 1, -2, 0 },
		{ 0, 0, 2 }, { 0, 0, 3 },
	};
	int64_t s[2] = { 2, 3 };
	double in[6], want[64];
	int kind;

	ncases = 0;
	for (kind = 0; kind < 2; kind++)
		for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
			int a = C[c].axis < 0 ? C[c].axis + 2 : C[c].axis;
			int64_t os[2] = { s[0], s[1] }, idx[2], k, q;
			size_t nd = 2;
			char desc[48];
			tg_tensor *y;

			if (C[c].has_axis) {
				os[a] *= C[c].rep;
			} else {
				nd = 1;
				os[0] = 6 * C[c].rep;
			}
			snprintf(desc, sizeof desc, "case %zu kind %d", c, kind);
			tg_scope_begin();
			y = tg_repeat_interleave(mk_in(TG_FLOAT32, 2, s,
			                               kind ? PERMUTED : CONTIG,
			                               5, ANY, in), C[c].rep,
			                         C[c].has_axis ? &C[c].axis
			                                       : NULL);
			check_meta("repeat_interleave", desc, y, TG_FLOAT32, nd,
			           os);
			k = ot_numel(nd, os);
			for (q = 0; q < k; q++) {
				if (nd == 1) {
					want[q] = in[q / C[c].rep];
					continue;
				}
				ot_unravel(q, 2, os, idx);
				idx[a] /= C[c].rep;
				want[q] = in[ot_ravel(2, s, idx)];
			}
			check_t("repeat_interleave", desc, y, want, 0);
			tg_scope_end();
		}
	fprintf(stderr, "repeat_interleave cases: %d\n", ncases);
}
END_TEST

/* ---- split, split_sizes, chunk ---- */

/* Checks the pieces of x (values in, shape s) along a, of sizes sz. */
static void check_pieces(const char *op, const char *desc, tg_tensor **out,
                         size_t n, const int64_t *sz, const double *in,
                         size_t nd, const int64_t *s, int a)
{
	double want[256];
	int64_t at = 0, ps[3], idx[3], k, q;
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(ps, s, nd * sizeof *ps);
		ps[a] = sz[i];
		check_meta(op, desc, out[i], TG_INT32, nd, ps);
		k = ot_numel(nd, ps);
		for (q = 0; q < k; q++) {
			ot_unravel(q, nd, ps, idx);
			idx[a] += at;
			want[q] = in[ot_ravel(nd, s, idx)];
		}
		check_t(op, desc, out[i], want, 0);
		at += sz[i];
	}
}

START_TEST(split_and_chunk)
{
	int64_t s[2] = { 7, 4 }, s0[2] = { 0, 3 };
	double in[64];
	tg_tensor *x, *out[16];
	size_t n, i;

	ncases = 0;
	tg_scope_begin();
	x = mk_in(TG_INT32, 2, s, PERMUTED, 7, ANY, in);
	n = 16;
	ck_assert_int_eq(tg_split(x, 3, 0, out, &n), 0);
	ck_assert_uint_eq(n, 3);
	check_pieces("split", "3 on axis 0", out, n, (int64_t[]){ 3, 3, 1 }, in,
	             2, s, 0);
	n = 16;
	ck_assert_int_eq(tg_split(x, 2, -1, out, &n), 0);
	ck_assert_uint_eq(n, 2);
	check_pieces("split", "2 on axis -1", out, n, (int64_t[]){ 2, 2 }, in,
	             2, s, 1);
	n = 16;
	ck_assert_int_eq(tg_split(x, 10, 0, out, &n), 0);
	ck_assert_uint_eq(n, 1);
	check_pieces("split", "10 on axis 0", out, n, (int64_t[]){ 7 }, in, 2,
	             s, 0);
	ck_assert_int_eq(tg_split_sizes(x, (int64_t[]){ 2, 0, 5 }, 3, 0, out),
	                 0);
	check_pieces("split_sizes", "2,0,5", out, 3, (int64_t[]){ 2, 0, 5 }, in,
	             2, s, 0);
	ck_assert_int_eq(tg_split_sizes(x, (int64_t[]){ 1, 3 }, 2, 1, out), 0);
	check_pieces("split_sizes", "1,3", out, 2, (int64_t[]){ 1, 3 }, in, 2,
	             s, 1);
	/* torch.chunk: pieces of ceil(len / chunks) */
	ck_assert_int_eq(tg_chunk(x, 3, 0, out, &n), 0);
	ck_assert_uint_eq(n, 3);
	check_pieces("chunk", "7 in 3", out, n, (int64_t[]){ 3, 3, 1 }, in, 2,
	             s, 0);
	ck_assert_int_eq(tg_chunk(x, 4, 0, out, &n), 0);
	ck_assert_uint_eq(n, 4);
	check_pieces("chunk", "7 in 4", out, n, (int64_t[]){ 2, 2, 2, 1 }, in,
	             2, s, 0);
	ck_assert_int_eq(tg_chunk(x, 3, 1, out, &n), 0);
	ck_assert_uint_eq(n, 2); /* 4 in 3: pieces of 2, only two of them */
	check_pieces("chunk", "4 in 3", out, n, (int64_t[]){ 2, 2 }, in, 2, s,
	             1);
	ck_assert_int_eq(tg_chunk(x, 1, -1, out, &n), 0);
	ck_assert_uint_eq(n, 1);
	check_pieces("chunk", "4 in 1", out, n, (int64_t[]){ 4 }, in, 2, s, 1);
	ck_assert_int_eq(tg_chunk(x, 9, 0, out, &n), 0);
	ck_assert_uint_eq(n, 7);
	check_pieces("chunk", "7 in 9", out, n,
	             (int64_t[]){ 1, 1, 1, 1, 1, 1, 1 }, in, 2, s, 0);
	/* a 0-size axis: `chunks` empty pieces (tinygrad) */
	x = mkv(TG_INT32, 2, s0, NULL);
	ck_assert_int_eq(tg_chunk(x, 3, 0, out, &n), 0);
	ck_assert_uint_eq(n, 3);
	for (i = 0; i < n; i++)
		check_meta("chunk", "0-size", out[i], TG_INT32, 2, s0);
	count_case();
	tg_scope_end();
	fprintf(stderr, "split cases: %d\n", ncases);
}
END_TEST

/* The pieces are new references held by the caller's scope, like any
 * op's result: an inner scope's end drops them, and without a scope
 * the caller owns them. */
START_TEST(split_pieces_belong_to_the_scope)
{
	int64_t s[1] = { 7 };
	tg_tensor *x, *out[8];
	size_t n = 8, i;

	ncases = 0;
	tg_scope_begin();
	x = tg_zeros(NULL, TG_INT32, 1, s);
	tg_scope_begin();
	ck_assert_int_eq(tg_split(x, 3, 0, out, &n), 0);
	ck_assert_uint_eq(n, 3);
	for (i = 0; i < n; i++)
		tg_tensor_ref(out[i]);
	tg_scope_end();
	for (i = 0; i < n; i++) {
		ck_assert_msg(out[i]->refs == 1, "split piece %zu: %u refs after "
		              "its scope ended, want 1", i, out[i]->refs);
		tg_tensor_unref(out[i]);
	}
	count_case();
	tg_scope_begin();
	ck_assert_int_eq(tg_chunk(x, 2, 0, out, &n), 0);
	ck_assert_uint_eq(n, 2);
	for (i = 0; i < n; i++)
		tg_tensor_ref(out[i]);
	tg_scope_end();
	for (i = 0; i < n; i++) {
		ck_assert_msg(out[i]->refs == 1, "chunk piece %zu: %u refs", i,
		              out[i]->refs);
		tg_tensor_unref(out[i]);
	}
	count_case();
	x = tg_keep(x);
	tg_scope_end();
	/* no scope: the caller owns each piece */
	ck_assert_int_eq(tg_split_sizes(x, (int64_t[]){ 3, 4 }, 2, 0, out), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(out[i]->refs, 1);
		tg_tensor_unref(out[i]);
	}
	count_case();
	tg_tensor_unref(x);
	fprintf(stderr, "split ownership cases: %d\n", ncases);
}
END_TEST

/* ---- triu, tril, one_hot ---- */

START_TEST(triu_tril_one_hot)
{
	static const struct { size_t nd; int64_t s[3]; tg_dtype dt; } X[] = {
		{ 2, { 4, 5 }, TG_FLOAT32 }, { 2, { 5, 3 }, TG_INT32 },
		{ 3, { 2, 3, 4 }, TG_INT8 }, { 2, { 3, 3 }, TG_BOOL },
	};
	static const int64_t K[] = { -1, 0, 2, -5, 9 };
	double in[64], want[64];
	size_t xi, ki;
	int up;

	ncases = 0;
	for (xi = 0; xi < sizeof X / sizeof X[0]; xi++)
		for (ki = 0; ki < sizeof K / sizeof K[0]; ki++)
			for (up = 0; up < 2; up++) {
				size_t nd = X[xi].nd;
				int64_t k = ot_numel(nd, X[xi].s), i, idx[3], d;
				char desc[64];
				tg_tensor *x, *y;

				if (!ot_dtype_ok(X[xi].dt))
					continue;
				snprintf(desc, sizeof desc, "%zu-d k %lld", nd,
				         (long long)K[ki]);
				tg_scope_begin();
				x = mk_in(X[xi].dt, nd, X[xi].s, xi == 1 ? PERMUTED : CONTIG,
				          3 + (int)xi, POS, in);
				y = up ? tg_triu(x, K[ki]) : tg_tril(x, K[ki]);
				check_meta(up ? "triu" : "tril", desc, y, X[xi].dt, nd,
				           X[xi].s);
				for (i = 0; i < k; i++) {
					ot_unravel(i, nd, X[xi].s, idx);
					d = idx[nd - 1] - idx[nd - 2];
					want[i] = (up ? d >= K[ki] : d <= K[ki]) ? in[i] : 0;
				}
				check_t(up ? "triu" : "tril", desc, y, want, 0);
				tg_scope_end();
			}
	/* one_hot */
	{
		static const struct { size_t nd; int64_t s[2]; tg_dtype dt;
		                      int64_t nc; } O[] = {
			{ 1, { 6 }, TG_INT32, 4 }, { 2, { 2, 3 }, TG_INT8, 5 },
			{ 0, { 0 }, TG_INT32, 3 }, { 1, { 5 }, TG_UINT8, 1 },
			{ 1, { 4 }, TG_INT32, 0 },
		};
		double ix[8], w[64];
		size_t oi;

		for (oi = 0; oi < sizeof O / sizeof O[0]; oi++) {
			int64_t n = ot_numel(O[oi].nd, O[oi].s), i, c, os[3];
			char desc[32];
			tg_tensor *y;

			if (!ot_dtypes_ok(O[oi].dt, TG_INT32))
				continue;
			for (i = 0; i < n; i++)
				ix[i] = O[oi].nc ? floor(ot_u01((int)i, 9) * (double)O[oi].nc)
				                 : 0;
			memcpy(os, O[oi].s, sizeof O[oi].s);
			os[O[oi].nd] = O[oi].nc;
			snprintf(desc, sizeof desc, "%lld classes",
			         (long long)O[oi].nc);
			tg_scope_begin();
			y = tg_one_hot(mkv(O[oi].dt, O[oi].nd, O[oi].s, ix), O[oi].nc);
			check_meta("one_hot", desc, y, TG_INT32, O[oi].nd + 1, os);
			for (i = 0; i < n; i++)
				for (c = 0; c < O[oi].nc; c++)
					w[i * O[oi].nc + c] = ix[i] == (double)c;
			check_t("one_hot", desc, y, w, 0);
			tg_scope_end();
		}
	}
	fprintf(stderr, "triu/tril/one_hot cases: %d\n", ncases);
}
END_TEST

/* ---- errors ---- */

typedef tg_tensor *(*axfn)(const tg_tensor *, int);
static tg_tensor *e_sum(const tg_tensor *t, int a) { return tg_sum(t, &a, 1, 0); }
static tg_tensor *e_max(const tg_tensor *t, int a) { return tg_max(t, &a, 1, 0); }
static tg_tensor *e_min(const tg_tensor *t, int a) { return tg_min(t, &a, 1, 1); }
static tg_tensor *e_mean(const tg_tensor *t, int a) { return tg_mean(t, &a, 1, 0); }
static tg_tensor *e_var(const tg_tensor *t, int a) { return tg_var(t, &a, 1, 0, 1); }
static tg_tensor *e_std(const tg_tensor *t, int a) { return tg_std(t, &a, 1, 0, 1); }
static tg_tensor *e_any(const tg_tensor *t, int a) { return tg_any(t, &a, 1, 0); }
static tg_tensor *e_all(const tg_tensor *t, int a) { return tg_all(t, &a, 1, 0); }
static tg_tensor *e_argmax(const tg_tensor *t, int a) { return tg_argmax(t, a, 0); }
static tg_tensor *e_argmin(const tg_tensor *t, int a) { return tg_argmin(t, a, 0); }
static tg_tensor *e_lse(const tg_tensor *t, int a) { return tg_logsumexp(t, a, 0); }

START_TEST(reduction_errors_name_the_op)
{
	static const struct { const char *name; axfn f; } E[] = {
		{ "sum", e_sum }, { "max", e_max }, { "min", e_min },
		{ "mean", e_mean }, { "var", e_var }, { "std", e_std },
		{ "any", e_any }, { "all", e_all }, { "argmax", e_argmax },
		{ "argmin", e_argmin }, { "logsumexp", e_lse },
		{ "softmax", tg_softmax }, { "log_softmax", tg_log_softmax },
		{ "cumsum", tg_cumsum },
	};
	int64_t s[2] = { 2, 3 };
	static const int bad[] = { 2, -3, 7 };
	tg_tensor *x;
	size_t i, j;
	char want[96];

	ncases = 0;
	tg_scope_begin();
	x = tg_zeros(NULL, TG_FLOAT32, 2, s);
	for (i = 0; i < sizeof E / sizeof E[0]; i++)
		for (j = 0; j < sizeof bad / sizeof bad[0]; j++) {
			tg_clear_error();
			ck_assert_msg(E[i].f(x, bad[j]) == NULL, "%s axis %d", E[i].name,
			              bad[j]);
			snprintf(want, sizeof want, "%s: axis %d out of range for 2 dims",
			         E[i].name, bad[j]);
			ck_assert_error(want);
			count_case();
		}
	/* an axis list with one bad entry */
	ck_assert_ptr_null(tg_sum(x, (int[]){ 0, 2 }, 2, 0));
	ck_assert_error("sum: axis 2 out of range for 2 dims");
	count_case();
	/* 0-dim tensors take axis 0 and -1 only */
	ck_assert_ptr_null(tg_max(tg_tensor_scalar(NULL, TG_INT32, 1),
	                          (int[]){ 1 }, 1, 0));
	ck_assert_error("max: axis 1 out of range for 0 dims");
	count_case();
	/* argmax/argmin on an empty axis */
	x = tg_zeros(NULL, TG_FLOAT32, 2, (int64_t[]){ 0, 3 });
	ck_assert_ptr_null(tg_argmax(x, 0, 0));
	ck_assert_error("argmax: axis 0 of (0,3) is empty");
	count_case();
	ck_assert_ptr_null(tg_argmin(x, -2, 1));
	ck_assert_error("argmin: axis 0 of (0,3) is empty");
	count_case();
	ck_assert_ptr_null(tg_argmax(x, TG_AXIS_NONE, 0));
	ck_assert_error("argmax: axis 0 of (0,) is empty");
	count_case();
	/* NULL in, NULL out, error untouched */
	tg_clear_error();
	ck_assert_ptr_null(tg_sum(NULL, NULL, 0, 0));
	ck_assert_ptr_null(tg_argmax(NULL, 0, 0));
	ck_assert_ptr_null(tg_cumsum(NULL, 0));
	ck_assert_ptr_null(tg_std(NULL, NULL, 0, 0, 1));
	ck_assert_ptr_null(tg_softmax(NULL, 0));
	ck_assert_str_eq(tg_last_error(), "");
	count_case();
	tg_scope_end();
	fprintf(stderr, "reduction error cases: %d\n", ncases);
}
END_TEST

START_TEST(movement_errors_name_the_op)
{
	int64_t s23[2] = { 2, 3 }, s24[2] = { 2, 4 }, s5[1] = { 5 };
	int64_t big[TG_MAX_DIMS];
	tg_tensor *x, *y, *f, *out[8];
	const tg_tensor *two[2];
	size_t n, i;
	char msg[160];
	const char *dn = tg_dev_name(ot_dev());

	ncases = 0;
	tg_scope_begin();
	x = tg_zeros(NULL, TG_FLOAT32, 2, s23);
	y = tg_zeros(NULL, TG_FLOAT32, 2, s24);
	/* slice */
	ck_assert_ptr_null(tg_slice(x, 1, (tg_slice_spec[]){ TG_INDEX_AT(2) }));
	ck_assert_error("slice: index 2 out of range for axis 0 of size 2");
	count_case();
	ck_assert_ptr_null(tg_slice(x, 2, (tg_slice_spec[]){
		TG_SLICE_ALL, TG_INDEX_AT(-4) }));
	ck_assert_error("slice: index -4 out of range for axis 1 of size 3");
	count_case();
	ck_assert_ptr_null(tg_slice(x, 2, (tg_slice_spec[]){
		TG_SLICE_ALL, TG_SLICE_STEP(0, 3, 0) }));
	ck_assert_error("slice: step 0 on axis 1");
	count_case();
	ck_assert_ptr_null(tg_slice(x, 3, (tg_slice_spec[]){
		TG_SLICE_ALL, TG_SLICE_ALL, TG_SLICE_ALL }));
	ck_assert_error("slice: 3 indices for (2,3)");
	count_case();
	/* cat / stack */
	two[0] = x;
	two[1] = y;
	ck_assert_ptr_null(tg_cat(two, 2, 0));
	snprintf(msg, sizeof msg, "cat: tensor 1 (2,4) on %s does not match "
	         "tensor 0 (2,3) on %s except on axis 0", dn, dn);
	ck_assert_error(msg);
	count_case();
	ck_assert_ptr_null(tg_cat(two, 2, 2));
	ck_assert_error("cat: axis 2 out of range for 2 dims");
	count_case();
	ck_assert_ptr_null(tg_stack(two, 2, 0));
	snprintf(msg, sizeof msg, "stack: tensor 1 (2,4) on %s does not "
	         "match tensor 0 (2,3) on %s", dn, dn);
	ck_assert_error(msg);
	count_case();
	ck_assert_ptr_null(tg_cat(two, 0, 0));
	ck_assert_error("cat: no tensors");
	count_case();
	/* gather */
	f = tg_zeros(NULL, TG_FLOAT32, 2, s23);
	ck_assert_ptr_null(tg_gather(x, 0, f));
	ck_assert_error("gather: index (2,3) must be an int dtype, not float32");
	count_case();
	ck_assert_ptr_null(tg_gather(x, 0, tg_zeros(NULL, TG_INT32, 1, s5)));
	ck_assert_error("gather: index (5,) and input (2,3) need the same "
	                "number of dims");
	count_case();
	ck_assert_ptr_null(tg_gather(x, 0, tg_zeros(NULL, TG_INT32, 2, s24)));
	ck_assert_error("gather: index (2,4) is larger than input (2,3) on "
	                "axis 1");
	count_case();
	ck_assert_ptr_null(tg_gather(x, 2, tg_zeros(NULL, TG_INT32, 2, s23)));
	ck_assert_error("gather: axis 2 out of range for 2 dims");
	count_case();
	/* split / chunk */
	ck_assert_int_eq(tg_split_sizes(x, (int64_t[]){ 1, 1 }, 2, 1, out),
	                 TG_EINVAL);
	ck_assert_error("split: sizes sum to 2, axis 1 has 3");
	count_case();
	ck_assert_int_eq(tg_split_sizes(x, (int64_t[]){ 3, -1 }, 2, 1, out),
	                 TG_EINVAL);
	ck_assert_error("split: negative size -1");
	count_case();
	n = 8;
	ck_assert_int_eq(tg_split(x, 0, 1, out, &n), TG_EINVAL);
	ck_assert_error("split: piece size 0");
	count_case();
	n = 1;
	ck_assert_int_eq(tg_split(x, 1, 1, out, &n), TG_EINVAL);
	ck_assert_error("split: 3 pieces of 1, room for 1");
	count_case();
	ck_assert_int_eq(tg_chunk(x, 0, 0, out, &n), TG_EINVAL);
	ck_assert_error("chunk: 0 chunks");
	count_case();
	ck_assert_int_eq(tg_chunk(x, 2, 3, out, &n), TG_EINVAL);
	ck_assert_error("chunk: axis 3");
	count_case();
	/* triu / tril / one_hot */
	ck_assert_ptr_null(tg_triu(tg_zeros(NULL, TG_FLOAT32, 1, s5), 0));
	ck_assert_error("triu: input (5,) needs at least 2 dims");
	count_case();
	ck_assert_ptr_null(tg_tril(tg_tensor_scalar(NULL, TG_FLOAT32, 1), 0));
	ck_assert_error("tril: input () needs at least 2 dims");
	count_case();
	ck_assert_ptr_null(tg_one_hot(tg_zeros(NULL, TG_FLOAT32, 1, s5), 3));
	ck_assert_error("one_hot: class indices (5,) must be an int dtype, not "
	                "float32");
	count_case();
	ck_assert_ptr_null(tg_one_hot(tg_zeros(NULL, TG_INT32, 1, s5), -2));
	ck_assert_error("one_hot: -2 classes");
	count_case();
	/* arange / eye */
	ck_assert_ptr_null(tg_arange(NULL, TG_INT32, 0, 5, 0));
	ck_assert_error("arange: start 0, stop 5, step 0");
	count_case();
	ck_assert_ptr_null(tg_arange(NULL, TG_FLOAT32, 0, INFINITY, 1));
	ck_assert_error("arange: start 0, stop inf, step 1");
	count_case();
	ck_assert_ptr_null(tg_eye(NULL, TG_FLOAT32, -1, 3));
	ck_assert_error("eye: negative size -1 x 3");
	count_case();
	ck_assert_ptr_null(tg_eye(NULL, TG_FLOAT32, 2, -4));
	ck_assert_error("eye: negative size 2 x -4");
	count_case();
	/* flatten / unflatten / transpose / squeeze / unsqueeze / repeat */
	ck_assert_ptr_null(tg_flatten(x, 1, 0));
	ck_assert_error("flatten: start axis 1 after end axis 0");
	count_case();
	ck_assert_ptr_null(tg_flatten(x, 0, 2));
	ck_assert_error("flatten: axis 2 out of range for 2 dims");
	count_case();
	ck_assert_ptr_null(tg_transpose(x, 0, -3));
	ck_assert_error("transpose: axis -3 out of range for 2 dims");
	count_case();
	ck_assert_ptr_null(tg_squeeze(x, 2));
	ck_assert_error("squeeze: axis 2 out of range for 2 dims");
	count_case();
	ck_assert_ptr_null(tg_unsqueeze(x, 3));
	ck_assert_error("unsqueeze: axis 3 out of range for 3 dims");
	count_case();
	ck_assert_ptr_null(tg_unflatten(x, 1, 2, (int64_t[]){ 2, 2 }));
	ck_assert_error("unflatten: reshape: cannot reshape (2,3) to (2,2,2)");
	count_case();
	ck_assert_ptr_null(tg_repeat(x, 1, (int64_t[]){ 2 }));
	ck_assert_error("repeat: 1 repeats for (2,3)");
	count_case();
	ck_assert_ptr_null(tg_repeat(x, 2, (int64_t[]){ 1, -1 }));
	ck_assert_error("repeat: negative repeat -1 for axis 1");
	count_case();
	ck_assert_ptr_null(tg_repeat_interleave(x, -2, NULL));
	ck_assert_error("repeat_interleave: negative repeats -2");
	count_case();
	ck_assert_ptr_null(tg_repeat_interleave(x, 2, &(int){ 2 }));
	ck_assert_error("repeat_interleave: axis 2");
	count_case();
	for (i = 0; i < TG_MAX_DIMS; i++)
		big[i] = 1;
	f = tg_reshape(tg_tensor_scalar(NULL, TG_FLOAT32, 1), TG_MAX_DIMS, big);
	ck_assert_msg(f != NULL, "%s", tg_last_error());
	ck_assert_ptr_null(tg_unsqueeze(f, 0));
	{
		char want[64];
		snprintf(want, sizeof want, "unsqueeze: %d dims already",
		         TG_MAX_DIMS);
		ck_assert_error(want);
	}
	count_case();
	tg_scope_end();
	fprintf(stderr, "movement error cases: %d\n", ncases);
}
END_TEST

static Suite *ops_reduce_suite(void)
{
	Suite *s = suite_create("ops_reduce");
	TCase *t = ot_tcase("ops_reduce", 600);

	tcase_add_test(t, reductions_match_reference);
	tcase_add_test(t, keepdim_both_ways);
	tcase_add_test(t, reduction_dtype_rules);
	tcase_add_test(t, accumulation_dtype_arguments);
	tcase_add_test(t, reductions_of_zero_size);
	tcase_add_test(t, full_rank_and_scalars);
	tcase_add_test(t, argmax_argmin_first_index_wins);
	tcase_add_test(t, softmax_family);
	tcase_add_test(t, cumsum_short_and_long_axes);
	tcase_add_test(t, arange_and_eye);
	tcase_add_test(t, transpose_flatten_squeeze);
	tcase_add_test(t, slice_matches_python);
	tcase_add_test(t, index_matches_numpy);
	tcase_add_test(t, index_kernel_counts);
	tcase_add_test(t, index_errors_name_the_item);
	tcase_add_test(t, gather_matches_torch);
	tcase_add_test(t, cat_and_stack);
	tcase_add_test(t, repeat_tiles);
	tcase_add_test(t, repeat_interleave_rows);
	tcase_add_test(t, split_and_chunk);
	tcase_add_test(t, split_pieces_belong_to_the_scope);
	tcase_add_test(t, triu_tril_one_hot);
	tcase_add_test(t, reduction_errors_name_the_op);
	tcase_add_test(t, movement_errors_name_the_op);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	int rc;

	total_cases = mmap(NULL, sizeof *total_cases, PROT_READ | PROT_WRITE,
	                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (total_cases == MAP_FAILED)
		total_cases = NULL;
	rc = tl_run(ops_reduce_suite());
	fprintf(stderr, "test_ops_reduce: %d cases\n",
	        total_cases ? *total_cases : ncases);
	return rc;
}

/*
 * test_autograd.c - autograd (tensor/autograd.c, issue 5).
 *
 * Gradient checks: every differentiable op of tg/tg.h, on small float64
 * inputs on the CPU, against central finite differences.  For an op f
 * of inputs x... and a fixed random weight tensor w of f's output shape,
 * L = sum(f(x...) * w); the analytic gradient is tg_grad(x) after
 * tg_backward(L), the numeric one (L(x + h) - L(x - h)) / 2h per element
 * with h = 1e-6, L evaluated with gradient recording off.  They must
 * agree within 1e-6 + 1e-5 |numeric|.  Inputs are generated
 * deterministically (tests/optest.h's hash) in ranges that keep them
 * inside the op's domain and away from its kinks; ops with a maximum
 * (max, max_pool2d, maximum) get distinct values, so no ties.  Each op
 * (or variant) is its own Check test, named in every failure message.
 *
 * Then the rules around it: max with ties, relu at 0, backward twice,
 * non-scalar backward, explicit gradients, accumulation, set_grad,
 * detach, no-grad mode, requires_grad's tri-state, ops without a
 * gradient (comparisons, integer ops), and a few checks in float32.
 */
#include "config.h"

#include <math.h>

#include "testlib.h"
#include "optest.h"

#define MAXIN 4
#define H 1e-6
#define ATOL 1e-6
#define RTOL 1e-5

/* ---------------------------------------------------------- harness */

/* How an input's values are made from ot_u01 (u): */
enum gen {
	G_UNIF,   /* lo + (hi - lo) u */
	G_SIGNED, /* +-(lo + (hi - lo) u): magnitudes in [lo, hi), away from 0 */
	G_QUANT   /* G_UNIF rounded to a multiple of 1/1024 (exact in float32) */
};

typedef struct gin {
	size_t nd;
	int64_t s[6];
	int gen;
	double lo, hi;
} gin;

typedef tg_tensor *(*gfn)(tg_tensor *const *x, int v);

typedef struct gcase {
	const char *name;
	gfn f;
	int v; /* f's variant */
	size_t nin;
	gin in[MAXIN];
	/* numeric check of every k-th element only (and the last); 0: all */
	int every;
} gcase;

static tg_dev *cpu(void)
{
	tg_dev *d = tg_dev_get("CPU");

	ck_assert_ptr_nonnull(d);
	return d;
}

static double gen_value(const gin *in, int64_t j, int which)
{
	double u = ot_u01(j, which), v = in->lo + (in->hi - in->lo) * u;

	switch (in->gen) {
	case G_SIGNED:
		return ot_u01(j, which + 50) < 0.5 ? -v : v;
	case G_QUANT:
		return floor(v * 1024) / 1024;
	default:
		return v;
	}
}

/* A tensor of dt (float32 or float64) holding the doubles v. */
static tg_tensor *make(tg_dtype dt, size_t nd, const int64_t *s,
                       const double *v)
{
	int64_t i, n = ot_numel(nd, s);
	tg_tensor *t;

	if (dt == TG_FLOAT64)
		t = tg_tensor_new(cpu(), dt, nd, s, v);
	else {
		float *f = malloc((size_t)(n ? n : 1) * sizeof *f);

		ck_assert_ptr_nonnull(f);
		for (i = 0; i < n; i++)
			f[i] = (float)v[i];
		t = tg_tensor_new(cpu(), dt, nd, s, f);
		free(f);
	}
	ck_assert_msg(t != NULL, "tensor_new: %s", tg_last_error());
	return t;
}

/* The values of t (float32 or float64) as doubles into out[n]. */
static void read_doubles(tg_tensor *t, double *out, int64_t n)
{
	int64_t i;

	ck_assert_int_eq(tg_tensor_numel(t), n);
	if (tg_tensor_dtype(t) == TG_FLOAT64) {
		ck_assert_msg(tg_tensor_data(t, out, (size_t)n * sizeof *out)
		              == 0, "data: %s", tg_last_error());
		return;
	} else {
		float *f = malloc((size_t)(n ? n : 1) * sizeof *f);

		ck_assert_ptr_nonnull(f);
		ck_assert_msg(tg_tensor_data(t, f, (size_t)n * sizeof *f) == 0,
		              "data: %s", tg_last_error());
		for (i = 0; i < n; i++)
			out[i] = f[i];
		free(f);
	}
}

/* sum(f(x) * w) in float64 from the host values (no gradients). */
static double loss(const gcase *c, double *const *x, const double *w,
                   int64_t wn)
{
	tg_tensor *t[MAXIN], *y, *l;
	double v;
	size_t i;

	tg_scope_begin();
	for (i = 0; i < c->nin; i++)
		t[i] = make(TG_FLOAT64, c->in[i].nd, c->in[i].s, x[i]);
	y = c->f(t, c->v);
	ck_assert_msg(y != NULL, "%s: %s", c->name, tg_last_error());
	ck_assert_int_eq(tg_tensor_numel(y), wn);
	l = tg_sum(tg_mul(y, make(TG_FLOAT64, tg_tensor_ndim(y),
	                          tg_tensor_shape(y), w)), NULL, 0, 0);
	ck_assert_msg(l && tg_tensor_item(l, &v) == 0, "%s: loss: %s",
	              c->name, tg_last_error());
	tg_scope_end();
	return v;
}

/* Checks c's gradients computed in dt against central differences of
 * the float64 loss (with float32 the inputs are float32 values, so both
 * look at the same point). */
static void gradcheck_dt(const gcase *c, tg_dtype dt, double atol,
                         double rtol)
{
	double *x[MAXIN], *ga[MAXIN], *w;
	int64_t n[MAXIN], wn, j;
	tg_tensor *t[MAXIN], *y, *l;
	size_t i;
	int was;

	ck_assert_int_le(c->nin, MAXIN);
	for (i = 0; i < c->nin; i++) {
		n[i] = ot_numel(c->in[i].nd, c->in[i].s);
		x[i] = malloc((size_t)n[i] * sizeof **x);
		ga[i] = malloc((size_t)n[i] * sizeof **ga);
		ck_assert(x[i] && ga[i]);
		for (j = 0; j < n[i]; j++) {
			x[i][j] = gen_value(&c->in[i], j, (int)i + 1);
			if (dt == TG_FLOAT32)
				x[i][j] = (float)x[i][j];
		}
	}

	/* analytic */
	ck_assert(tg_is_grad_enabled());
	tg_scope_begin();
	for (i = 0; i < c->nin; i++) {
		t[i] = make(dt, c->in[i].nd, c->in[i].s, x[i]);
		ck_assert_int_eq(tg_set_requires_grad(t[i], 1), 0);
	}
	y = c->f(t, c->v);
	ck_assert_msg(y != NULL, "%s: %s", c->name, tg_last_error());
	ck_assert_msg(tg_tensor_dtype(y) == dt, "%s: result is %s", c->name,
	              tg_dtype_name(tg_tensor_dtype(y)));
	ck_assert_msg(tg_requires_grad(y) == 1, "%s: result requires_grad %d",
	              c->name, tg_requires_grad(y));
	wn = tg_tensor_numel(y);
	w = malloc((size_t)(wn ? wn : 1) * sizeof *w);
	ck_assert_ptr_nonnull(w);
	for (j = 0; j < wn; j++)
		w[j] = 2 * ot_u01(j, 99) - 1;
	l = tg_sum(tg_mul(y, make(dt, tg_tensor_ndim(y), tg_tensor_shape(y),
	                          w)), NULL, 0, 0);
	ck_assert_msg(l != NULL, "%s: %s", c->name, tg_last_error());
	ck_assert_msg(tg_backward(l, NULL) == 0, "%s: backward: %s", c->name,
	              tg_last_error());
	for (i = 0; i < c->nin; i++) {
		tg_tensor *g = tg_grad(t[i]);

		ck_assert_msg(g != NULL, "%s: input %zu has no gradient",
		              c->name, i);
		ck_assert_msg(tg_tensor_ndim(g) == c->in[i].nd &&
		              !memcmp(tg_tensor_shape(g), c->in[i].s,
		                      c->in[i].nd * sizeof(int64_t)),
		              "%s: gradient of input %zu has the wrong shape",
		              c->name, i);
		ck_assert_msg(tg_tensor_dtype(g) == dt, "%s: gradient of input "
		              "%zu is %s", c->name, i,
		              tg_dtype_name(tg_tensor_dtype(g)));
		read_doubles(g, ga[i], n[i]);
	}
	tg_scope_end();

	/* numeric */
	was = tg_set_grad_enabled(0);
	for (i = 0; i < c->nin; i++)
		for (j = 0; j < n[i]; j++) {
			double keep = x[i][j], lp, lm, num, a = ga[i][j];

			if (c->every > 1 && j % c->every && j != n[i] - 1)
				continue;
			x[i][j] = keep + H;
			lp = loss(c, x, w, wn);
			x[i][j] = keep - H;
			lm = loss(c, x, w, wn);
			x[i][j] = keep;
			num = (lp - lm) / (2 * H);
			ck_assert_msg(fabs(a - num) <= atol + rtol * fabs(num),
			              "%s (%s): d/d input %zu [%lld] (x = %.9g): "
			              "analytic %.12g, numeric %.12g", c->name,
			              tg_dtype_name(dt), i, (long long)j, keep, a,
			              num);
		}
	tg_set_grad_enabled(was);
	for (i = 0; i < c->nin; i++)
		free(x[i]), free(ga[i]);
	free(w);
}

/* ------------------------------------------------------- the ops */

#define UN(op)                                                    \
	static tg_tensor *f_##op(tg_tensor *const *x, int v)     \
	{                                                         \
		(void)v;                                          \
		return tg_##op(x[0]);                             \
	}
UN(neg) UN(log) UN(log2) UN(exp) UN(exp2) UN(sqrt) UN(rsqrt) UN(sin)
UN(cos) UN(tan) UN(reciprocal) UN(square) UN(abs) UN(relu) UN(sigmoid)
UN(tanh) UN(silu) UN(swish) UN(relu6) UN(hardswish) UN(hardsigmoid)
UN(gelu) UN(quick_gelu) UN(mish) UN(softsign) UN(sinh) UN(cosh) UN(atanh)
UN(asinh) UN(acosh) UN(contiguous)
#undef UN

static tg_tensor *f_elu(tg_tensor *const *x, int v)
{
	return tg_elu(x[0], v ? 1.5 : 1.0);
}

static tg_tensor *f_celu(tg_tensor *const *x, int v)
{
	return tg_celu(x[0], v ? 0.7 : 1.0);
}

static tg_tensor *f_leakyrelu(tg_tensor *const *x, int v)
{
	return tg_leakyrelu(x[0], v ? 0.2 : 0.01);
}

static tg_tensor *f_softplus(tg_tensor *const *x, int v)
{
	return tg_softplus(x[0], v ? 1.5 : 1.0);
}

static tg_tensor *f_hardtanh(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_hardtanh(x[0], -1.0, 1.5);
}

static tg_tensor *f_clip(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_clip(x[0], -0.5, 1.25);
}

#define BIN(op)                                                   \
	static tg_tensor *f_##op(tg_tensor *const *x, int v)     \
	{                                                         \
		(void)v;                                          \
		return tg_##op(x[0], x[1]);                       \
	}
BIN(add) BIN(sub) BIN(mul) BIN(div) BIN(pow) BIN(maximum) BIN(minimum)
BIN(matmul) BIN(dot)
#undef BIN

/* op(x, s) with the scalar s of variant v */
static tg_tensor *f_scalar(tg_tensor *const *x, int v)
{
	switch (v) {
	case 0: return tg_add_s(x[0], 1.5);
	case 1: return tg_sub_s(x[0], -0.75);
	case 2: return tg_mul_s(x[0], -2.5);
	case 3: return tg_div_s(x[0], 0.375);
	case 4: return tg_rsub_s(x[0], 3.0);
	case 5: return tg_rdiv_s(x[0], 2.0);
	case 6: return tg_pow_s(x[0], 2.5);
	case 7: return tg_pow_s(x[0], -1.5);
	case 8: return tg_pow_s(x[0], 3.0);
	case 9: return tg_rpow_s(x[0], 2.5);
	case 10: return tg_rpow_s(x[0], 0.5);
	case 11: return tg_maximum_s(x[0], 0.3);
	default: return tg_minimum_s(x[0], 0.3);
	}
}

/* a fixed (3,4) boolean pattern */
static tg_tensor *mask34(void)
{
	static const uint8_t m[12] = { 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1 };
	const int64_t s[2] = { 3, 4 };
	tg_tensor *t = tg_tensor_new(cpu(), TG_BOOL, 2, s, m);

	ck_assert_ptr_nonnull(t);
	return t;
}

static tg_tensor *f_where(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_where(mask34(), x[0], x[1]);
}

static tg_tensor *f_masked_fill(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_masked_fill(x[0], mask34(), -2.5);
}

static tg_tensor *f_lerp(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_lerp(x[0], x[1], x[2]);
}

/* reductions: variant v picks the axes and keepdim */
static const struct red {
	int axes[3];
	size_t naxes;
	int all, keepdim;
} RED[] = {
	{ { 0 }, 0, 1, 0 },     /* every axis */
	{ { 1 }, 1, 0, 0 },
	{ { 0, 2 }, 2, 0, 1 },
	{ { -1 }, 1, 0, 1 },
	{ { 2, 1 }, 2, 0, 0 },
};
#define RAX(v) (RED[v].all ? NULL : RED[v].axes), RED[v].naxes, RED[v].keepdim

static tg_tensor *f_sum(tg_tensor *const *x, int v)
{
	return tg_sum(x[0], RAX(v));
}

static tg_tensor *f_mean(tg_tensor *const *x, int v)
{
	return tg_mean(x[0], RAX(v));
}

static tg_tensor *f_max(tg_tensor *const *x, int v)
{
	return tg_max(x[0], RAX(v));
}

static tg_tensor *f_min(tg_tensor *const *x, int v)
{
	return tg_min(x[0], RAX(v));
}

static tg_tensor *f_var(tg_tensor *const *x, int v)
{
	return tg_var(x[0], RAX(v), v == 1 ? 0.0 : 1.0);
}

static tg_tensor *f_std(tg_tensor *const *x, int v)
{
	return tg_std(x[0], RAX(v), v == 0 ? 0.0 : 1.0);
}

static tg_tensor *f_logsumexp(tg_tensor *const *x, int v)
{
	return tg_logsumexp(x[0], v ? -1 : 1, v);
}

static tg_tensor *f_softmax(tg_tensor *const *x, int v)
{
	return tg_softmax(x[0], v);
}

static tg_tensor *f_log_softmax(tg_tensor *const *x, int v)
{
	return tg_log_softmax(x[0], v);
}

static tg_tensor *f_cumsum(tg_tensor *const *x, int v)
{
	return tg_cumsum(x[0], v);
}

/* movement */
static tg_tensor *f_reshape(tg_tensor *const *x, int v)
{
	static const int64_t s[2] = { 4, -1 };

	(void)v;
	return tg_reshape(x[0], 2, s);
}

static tg_tensor *f_expand(tg_tensor *const *x, int v)
{
	static const int64_t s0[2] = { 3, 4 }, s1[3] = { 2, 3, 4 };

	return v ? tg_expand(x[0], 3, s1) : tg_expand(x[0], 2, s0);
}

static tg_tensor *f_permute(tg_tensor *const *x, int v)
{
	static const int o[3] = { 2, 0, 1 };

	(void)v;
	return tg_permute(x[0], 3, o);
}

static tg_tensor *f_flip(tg_tensor *const *x, int v)
{
	static const int a[2] = { 0, 2 };

	(void)v;
	return tg_flip(x[0], a, 2);
}

static tg_tensor *f_shrink(tg_tensor *const *x, int v)
{
	static const int64_t p[4] = { 1, 3, 1, 5 };

	(void)v;
	return tg_shrink(x[0], 2, p);
}

static tg_tensor *f_pad(tg_tensor *const *x, int v)
{
	static const int64_t p0[4] = { 1, 2, 0, 1 }, p1[4] = { -1, 1, 2, -2 };

	return tg_pad(x[0], 2, v ? p1 : p0, 2.5);
}

static tg_tensor *f_transpose(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_transpose(x[0], 0, 2);
}

static tg_tensor *f_flatten(tg_tensor *const *x, int v)
{
	return v ? tg_flatten(x[0], 0, -1) : tg_flatten(x[0], 1, 2);
}

static tg_tensor *f_unflatten(tg_tensor *const *x, int v)
{
	static const int64_t s[2] = { 2, 2 };

	(void)v;
	return tg_unflatten(x[0], 1, 2, s);
}

static tg_tensor *f_squeeze(tg_tensor *const *x, int v)
{
	return tg_squeeze(x[0], v ? TG_AXIS_NONE : 1);
}

static tg_tensor *f_unsqueeze(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_unsqueeze(x[0], 1);
}

static tg_tensor *f_slice(tg_tensor *const *x, int v)
{
	tg_slice_spec s[3];

	switch (v) {
	case 0: /* x[4:0:-2, ::-1] of (5,6) */
		s[0] = TG_SLICE_STEP(4, 0, -2);
		s[1] = (tg_slice_spec){ 0, 0, -1, 0, 0, 1, 0 };
		return tg_slice(x[0], 2, s);
	case 1: /* x[1::2, -2] of (5,6) */
		s[0] = (tg_slice_spec){ 1, 0, 2, 1, 0, 1, 0 };
		s[1] = TG_INDEX_AT(-2);
		return tg_slice(x[0], 2, s);
	default: /* x[:, ::3, ::-1] and x[:, -1::-3] of (2,7,2) */
		s[0] = TG_SLICE_ALL;
		s[1] = (tg_slice_spec){ 0, 0, 3, 0, 0, 1, 0 };
		s[2] = (tg_slice_spec){ 0, 0, -1, 0, 0, 1, 0 };
		{
			tg_tensor *a = tg_slice(x[0], 3, s);

			s[1] = (tg_slice_spec){ -1, 0, -3, 1, 0, 1, 0 };
			return tg_mul(a, tg_slice(x[0], 2, s));
		}
	}
}

static tg_tensor *f_gather(tg_tensor *const *x, int v)
{
	/* repeated indices: their gradients add up */
	static const int32_t i1[15] = { 0, 3, 3, 1, 0, 2, 2, 2, 1, 3,
	                                1, 0, 3, 0, 1 };
	static const int32_t i0[8] = { 2, 0, 1, 2, 0, 0, 2, 1 };
	static const int64_t s1[2] = { 3, 5 }, s0[2] = { 2, 4 };
	tg_tensor *idx = v ? tg_tensor_new(cpu(), TG_INT32, 2, s0, i0)
	                   : tg_tensor_new(cpu(), TG_INT32, 2, s1, i1);

	ck_assert_ptr_nonnull(idx);
	return tg_gather(x[0], v ? 0 : 1, idx);
}

static tg_tensor *f_cat(tg_tensor *const *x, int v)
{
	const tg_tensor *ts[3] = { x[0], x[1], x[2] };

	return tg_cat(ts, 3, v);
}

static tg_tensor *f_stack(tg_tensor *const *x, int v)
{
	const tg_tensor *ts[3] = { x[0], x[1], x[2] };

	return v ? tg_stack(ts, 3, 0) : tg_stack(ts, 2, 1);
}

static tg_tensor *f_repeat(tg_tensor *const *x, int v)
{
	static const int64_t r[3] = { 2, 1, 2 };

	(void)v;
	return tg_repeat(x[0], 3, r);
}

static tg_tensor *f_repeat_interleave(tg_tensor *const *x, int v)
{
	static const int ax1 = 1;

	/* v: along axis 1, else flattened */
	return tg_repeat_interleave(x[0], 3, v ? &ax1 : NULL);
}

static tg_tensor *f_split(tg_tensor *const *x, int v)
{
	tg_tensor *p[4];
	const tg_tensor *ts[3];
	size_t n = 4;

	(void)v;
	/* (3,5) in pieces of 2 along axis 1: 2, 2, 1 */
	ck_assert_int_eq(tg_split(x[0], 2, 1, p, &n), 0);
	ck_assert_uint_eq(n, 3);
	ts[0] = p[2];
	ts[1] = p[0];
	ts[2] = tg_square(p[1]);
	return tg_cat(ts, 3, 1);
}

static tg_tensor *f_chunk(tg_tensor *const *x, int v)
{
	tg_tensor *p[3];
	size_t n;

	(void)v;
	/* (6,2) in 3 chunks along axis 0 */
	ck_assert_int_eq(tg_chunk(x[0], 3, 0, p, &n), 0);
	ck_assert_uint_eq(n, 3);
	return tg_sub(tg_mul(p[0], p[1]), tg_mul_s(p[2], 2));
}

static tg_tensor *f_split_sizes(tg_tensor *const *x, int v)
{
	static const int64_t sz[3] = { 1, 3, 2 };
	tg_tensor *p[3];

	(void)v;
	/* (2,6) into 1 + 3 + 2 along axis 1 */
	ck_assert_int_eq(tg_split_sizes(x[0], sz, 3, 1, p), 0);
	return tg_add(tg_mul(p[1], p[0]), tg_sum(tg_exp(p[2]), (int[]){ 1 },
	                                         1, 1));
}

static tg_tensor *f_triu(tg_tensor *const *x, int v)
{
	return tg_triu(x[0], v);
}

static tg_tensor *f_tril(tg_tensor *const *x, int v)
{
	return tg_tril(x[0], v);
}

/* processing */
static tg_tensor *f_linear(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_linear(x[0], x[1], x[2]);
}

static const tg_conv_opts CONV[] = {
	{ { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 }, 1, { 0, 0 } },
	/* groups 2, stride (2,1), padding (1,0,1,1) */
	{ { 2, 1 }, { 1, 1 }, { 1, 0, 1, 1 }, 2, { 0, 0 } },
	/* dilation 2, padding 1 */
	{ { 1, 1 }, { 2, 2 }, { 1, 1, 1, 1 }, 1, { 0, 0 } },
	/* stride 2, padding 1 */
	{ { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 }, 1, { 0, 0 } },
	/* stride 2, padding 1, output padding 1 */
	{ { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 }, 1, { 1, 1 } },
	/* groups 2 */
	{ { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 }, 2, { 0, 0 } },
};

static tg_tensor *f_conv2d(tg_tensor *const *x, int v)
{
	return tg_conv2d(x[0], x[1], v == 2 ? NULL : x[2], &CONV[v]);
}

static tg_tensor *f_conv_transpose2d(tg_tensor *const *x, int v)
{
	return tg_conv_transpose2d(x[0], x[1], x[2], &CONV[v]);
}

/* 1-D (stride 2, padding (1,0), output padding 1) and 3-D (padding
 * 1 on D, dilation 2 on W) */
static const tg_conv_opts CONVND[] = {
	{ .stride = { 2 }, .padding = { 1, 0 }, .output_padding = { 1 } },
	{ .dilation = { 1, 1, 2 }, .padding = { 1, 1 } },
};

static tg_tensor *f_conv(tg_tensor *const *x, int v)
{
	tg_conv_opts o = CONVND[v];

	memset(o.output_padding, 0, sizeof o.output_padding);
	return tg_conv(x[0], x[1], x[2], &o);
}

static tg_tensor *f_conv_transpose(tg_tensor *const *x, int v)
{
	return tg_conv_transpose(x[0], x[1], x[2], &CONVND[v]);
}

/* x[I, 1:3] with a repeated row (its gradient adds up) and x[:, J]
 * with a negative and an out-of-range index (no gradient there). */
static tg_tensor *f_index(tg_tensor *const *x, int v)
{
	static const int32_t I[3] = { 0, 2, 0 }, J[3] = { 3, -1, 9 };
	static const int64_t s3[1] = { 3 };
	tg_tensor *ix = tg_tensor_new(cpu(), TG_INT32, 1, s3, v ? J : I);

	ck_assert_ptr_nonnull(ix);
	if (v)
		return tg_index(x[0], 2, (tg_index_spec[]){ TG_IX_ALL,
		                                            TG_IX_TENSOR(ix) });
	return tg_index(x[0], 2, (tg_index_spec[]){ TG_IX_TENSOR(ix),
	                                            TG_IX_SLICE(1, 3) });
}

static tg_tensor *f_einsum(tg_tensor *const *x, int v)
{
	static const char *const f[] = { "ij,jk->ki", "bii->bi", "...i,i->",
	                                 "ij,ij,j->i" };
	static const size_t n[] = { 2, 1, 2, 3 };

	return tg_einsum(f[v], n[v], x);
}

static tg_tensor *f_avg_pool2d(tg_tensor *const *x, int v)
{
	static const int64_t k2[2] = { 2, 2 }, k3[2] = { 3, 3 };
	tg_conv_opts o = { { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, 1, { 0, 0 } };

	if (v == 0)
		return tg_avg_pool2d(x[0], k2, NULL, 1);
	return tg_avg_pool2d(x[0], k3, &o, v == 1);
}

static tg_tensor *f_max_pool2d(tg_tensor *const *x, int v)
{
	static const int64_t k2[2] = { 2, 2 }, k3[2] = { 3, 3 };
	tg_conv_opts o = { { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 }, 1, { 0, 0 } };

	if (v == 0)
		return tg_max_pool2d(x[0], k2, NULL);
	if (v == 2) /* padded with -inf: the pads never win */
		o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
	return tg_max_pool2d(x[0], k3, &o);
}

static tg_tensor *f_sdpa(tg_tensor *const *x, int v)
{
	static const uint8_t m[9] = { 1, 0, 1, 1, 1, 0, 0, 1, 1 };
	static const int64_t s[2] = { 3, 3 };
	tg_tensor *mask = NULL;

	if (v == 2) {
		mask = tg_tensor_new(cpu(), TG_BOOL, 2, s, m);
		ck_assert_ptr_nonnull(mask);
	}
	return tg_scaled_dot_product_attention(x[0], x[1], x[2], mask, v == 1);
}

/* The losses: fixed labels / targets, the inputs are the predictions. */
static tg_tensor *f_sparse_ce(tg_tensor *const *x, int v)
{
	static const int32_t y[4] = { 2, 0, -1, 1 };
	static const int64_t s[1] = { 4 };

	return tg_sparse_categorical_crossentropy(
	        x[0], tg_tensor_new(cpu(), TG_INT32, 1, s, y), -1,
	        v ? 0.1 : 0);
}

static tg_tensor *f_bce(tg_tensor *const *x, int v)
{
	static const double y[6] = { 0, 1, 1, 0, 1, 0 };
	static const int64_t s[2] = { 2, 3 };
	tg_tensor *t = tg_tensor_new(cpu(), TG_FLOAT64, 2, s, y);

	return v ? tg_binary_crossentropy_logits(x[0], t)
	         : tg_binary_crossentropy(x[0], t);
}

static tg_tensor *f_cast_chain(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_cast(tg_cast(x[0], TG_FLOAT32), TG_FLOAT64);
}

static tg_tensor *f_contiguous_view(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_mul(tg_contiguous(tg_transpose(x[0], 0, 1)),
	              tg_contiguous(tg_transpose(x[0], 0, 1)));
}

static tg_tensor *f_to(tg_tensor *const *x, int v)
{
	(void)v;
	return tg_to(x[0], tg_tensor_dev(x[0]));
}

/* ------------------------------------------------------- the table */

#define IN(g, lo, hi, nd, ...) { (nd), { __VA_ARGS__ }, (g), (lo), (hi) }
#define U34(lo, hi) IN(G_UNIF, lo, hi, 2, 3, 4)
#define S34(lo, hi) IN(G_SIGNED, lo, hi, 2, 3, 4)
#define U234(lo, hi) IN(G_UNIF, lo, hi, 3, 2, 3, 4)
#define C1(nm, fn, vv, ...) { nm, fn, vv, 1, { __VA_ARGS__ }, 0 }
#define C2(nm, fn, vv, ...) { nm, fn, vv, 2, { __VA_ARGS__ }, 0 }
#define C3(nm, fn, vv, ...) { nm, fn, vv, 3, { __VA_ARGS__ }, 0 }

static const gcase CASES[] = {
	/* unary (kinks: relu 0, relu6 0/6, hardswish/hardsigmoid +-3,
	 * hardtanh/clip at their bounds; the uniform draws come nowhere
	 * near them at h = 1e-6) */
	C1("neg", f_neg, 0, U34(-2, 2)),
	C1("log", f_log, 0, U34(0.5, 3)),
	C1("log2", f_log2, 0, U34(0.5, 3)),
	C1("exp", f_exp, 0, U34(-2, 2)),
	C1("exp2", f_exp2, 0, U34(-2, 2)),
	C1("sqrt", f_sqrt, 0, U34(0.5, 3)),
	C1("rsqrt", f_rsqrt, 0, U34(0.5, 3)),
	C1("sin", f_sin, 0, U34(-3, 3)),
	C1("cos", f_cos, 0, U34(-3, 3)),
	C1("tan", f_tan, 0, U34(-1.2, 1.2)),
	C1("reciprocal", f_reciprocal, 0, S34(0.5, 2)),
	C1("square", f_square, 0, U34(-2, 2)),
	C1("abs", f_abs, 0, S34(0.2, 2)),
	C1("relu", f_relu, 0, S34(0.1, 2)),
	C1("sigmoid", f_sigmoid, 0, U34(-3, 3)),
	C1("tanh", f_tanh, 0, U34(-2, 2)),
	C1("elu", f_elu, 0, S34(0.1, 2)),
	C1("elu alpha=1.5", f_elu, 1, S34(0.1, 2)),
	C1("celu", f_celu, 0, S34(0.1, 2)),
	C1("celu alpha=0.7", f_celu, 1, S34(0.1, 2)),
	C1("silu", f_silu, 0, U34(-3, 3)),
	C1("swish", f_swish, 0, U34(-3, 3)),
	C1("relu6", f_relu6, 0, U34(-3, 9)),
	C1("hardswish", f_hardswish, 0, U34(-5, 5)),
	C1("hardtanh(-1,1.5)", f_hardtanh, 0, U34(-3, 3)),
	C1("hardsigmoid", f_hardsigmoid, 0, U34(-5, 5)),
	C1("gelu", f_gelu, 0, U34(-3, 3)),
	C1("quick_gelu", f_quick_gelu, 0, U34(-3, 3)),
	C1("leakyrelu", f_leakyrelu, 0, S34(0.1, 2)),
	C1("leakyrelu slope=0.2", f_leakyrelu, 1, S34(0.1, 2)),
	C1("mish", f_mish, 0, U34(-3, 3)),
	C1("softplus", f_softplus, 0, U34(-3, 3)),
	C1("softplus beta=1.5", f_softplus, 1, U34(-3, 3)),
	C1("softsign", f_softsign, 0, U34(-3, 3)),
	C1("sinh", f_sinh, 0, U34(-2, 2)),
	C1("cosh", f_cosh, 0, U34(-2, 2)),
	C1("atanh", f_atanh, 0, U34(-0.8, 0.8)),
	C1("asinh", f_asinh, 0, U34(-3, 3)),
	C1("acosh", f_acosh, 0, U34(1.2, 4)),
	C1("clip(-0.5,1.25)", f_clip, 0, U34(-2, 2)),

	/* binary, broadcasting (expand's gradient sums) */
	C2("add (3,4)+(4)", f_add, 0, U34(-2, 2), IN(G_UNIF, -2, 2, 1, 4)),
	C2("sub (3,1)-(1,4)", f_sub, 0, IN(G_UNIF, -2, 2, 2, 3, 1),
	   IN(G_UNIF, -2, 2, 2, 1, 4)),
	C2("mul (2,3,4)*(3,1)", f_mul, 0, U234(-2, 2),
	   IN(G_UNIF, -2, 2, 2, 3, 1)),
	C2("div (3,4)/(3,1)", f_div, 0, U34(-2, 2),
	   IN(G_SIGNED, 0.5, 2, 2, 3, 1)),
	C2("div (4)/(3,4)", f_div, 0, IN(G_UNIF, -2, 2, 1, 4), S34(0.5, 2)),
	C2("pow (3,4)**(4)", f_pow, 0, U34(0.5, 2), IN(G_UNIF, -1.5, 2, 1, 4)),
	C2("maximum (3,4),(4)", f_maximum, 0, U34(-2, 2),
	   IN(G_UNIF, -2, 2, 1, 4)),
	C2("minimum (3,1),(1,4)", f_minimum, 0, IN(G_UNIF, -2, 2, 2, 3, 1),
	   IN(G_UNIF, -2, 2, 2, 1, 4)),
	C1("add_s", f_scalar, 0, U34(-2, 2)),
	C1("sub_s", f_scalar, 1, U34(-2, 2)),
	C1("mul_s", f_scalar, 2, U34(-2, 2)),
	C1("div_s", f_scalar, 3, U34(-2, 2)),
	C1("rsub_s", f_scalar, 4, U34(-2, 2)),
	C1("rdiv_s", f_scalar, 5, S34(0.5, 2)),
	C1("pow_s 2.5", f_scalar, 6, U34(0.5, 2)),
	C1("pow_s -1.5", f_scalar, 7, U34(0.5, 2)),
	C1("pow_s 3", f_scalar, 8, U34(0.5, 2)),
	C1("rpow_s 2.5**x", f_scalar, 9, U34(-2, 2)),
	C1("rpow_s 0.5**x", f_scalar, 10, U34(-2, 2)),
	C1("maximum_s", f_scalar, 11, U34(-2, 2)),
	C1("minimum_s", f_scalar, 12, U34(-2, 2)),
	C2("where (both branches, b broadcast)", f_where, 0, U34(-2, 2),
	   IN(G_UNIF, -2, 2, 1, 4)),
	C1("masked_fill", f_masked_fill, 0, U34(-2, 2)),
	C3("lerp", f_lerp, 0, U34(-2, 2), U34(-2, 2),
	   IN(G_UNIF, -1, 2, 1, 4)),

	/* reductions on (2,3,4) */
	C1("sum all", f_sum, 0, U234(-2, 2)),
	C1("sum axis 1", f_sum, 1, U234(-2, 2)),
	C1("sum axes (0,2) keepdim", f_sum, 2, U234(-2, 2)),
	C1("sum axis -1 keepdim", f_sum, 3, U234(-2, 2)),
	C1("mean all", f_mean, 0, U234(-2, 2)),
	C1("mean axes (2,1)", f_mean, 4, U234(-2, 2)),
	C1("var axis 1 correction 0", f_var, 1, U234(-2, 2)),
	C1("var all correction 1", f_var, 0, U234(-2, 2)),
	C1("var axes (0,2) keepdim", f_var, 2, U234(-2, 2)),
	C1("std all correction 0", f_std, 0, U234(-2, 2)),
	C1("std axis -1 keepdim", f_std, 3, U234(-2, 2)),
	C1("max all", f_max, 0, U234(-2, 2)),
	C1("max axis 1", f_max, 1, U234(-2, 2)),
	C1("max axes (0,2) keepdim", f_max, 2, U234(-2, 2)),
	C1("min axis -1 keepdim", f_min, 3, U234(-2, 2)),
	C1("min all", f_min, 0, U234(-2, 2)),
	C1("logsumexp axis 1", f_logsumexp, 0, U234(-2, 2)),
	C1("logsumexp axis -1 keepdim", f_logsumexp, 1, U234(-2, 2)),
	C1("softmax axis 0", f_softmax, 0, U234(-2, 2)),
	C1("softmax axis -1", f_softmax, -1, U234(-2, 2)),
	C1("log_softmax axis 1", f_log_softmax, 1, U234(-2, 2)),
	C1("log_softmax axis -1", f_log_softmax, -1, U234(-2, 2)),
	C1("cumsum axis 1", f_cumsum, 1, IN(G_UNIF, -2, 2, 2, 3, 5)),
	C1("cumsum axis 0", f_cumsum, 0, IN(G_UNIF, -2, 2, 2, 4, 3)),
	/* 600 > 512: the two-level path.  The numeric check looks at every
	 * 37th element (and the last): each takes two evaluations of the
	 * whole cumsum, and cumsum is linear, so a sample of positions
	 * across both levels (block starts and ends included) suffices. */
	{ "cumsum long axis (600, two-level)", f_cumsum, 0, 1,
	  { IN(G_UNIF, -2, 2, 1, 600) }, 37 },
	{ "cumsum long axis (2,600) axis 1", f_cumsum, 1, 1,
	  { IN(G_UNIF, -2, 2, 2, 2, 600) }, 97 },

	/* movement */
	C1("reshape", f_reshape, 0, U234(-2, 2)),
	C1("expand (3,1)->(3,4)", f_expand, 0, IN(G_UNIF, -2, 2, 2, 3, 1)),
	C1("expand (4)->(2,3,4)", f_expand, 1, IN(G_UNIF, -2, 2, 1, 4)),
	C1("permute", f_permute, 0, U234(-2, 2)),
	C1("flip", f_flip, 0, U234(-2, 2)),
	C1("shrink", f_shrink, 0, IN(G_UNIF, -2, 2, 2, 4, 5)),
	C1("pad value 2.5", f_pad, 0, U34(-2, 2)),
	C1("pad negative (crop)", f_pad, 1, IN(G_UNIF, -2, 2, 2, 4, 5)),
	C1("transpose", f_transpose, 0, U234(-2, 2)),
	C1("flatten 1..2", f_flatten, 0, U234(-2, 2)),
	C1("flatten all", f_flatten, 1, U234(-2, 2)),
	C1("unflatten", f_unflatten, 0, U34(-2, 2)),
	C1("squeeze axis", f_squeeze, 0, IN(G_UNIF, -2, 2, 3, 3, 1, 4)),
	C1("squeeze all", f_squeeze, 1, IN(G_UNIF, -2, 2, 4, 1, 3, 1, 4)),
	C1("unsqueeze", f_unsqueeze, 0, U34(-2, 2)),
	C1("slice [4:0:-2, ::-1]", f_slice, 0, IN(G_UNIF, -2, 2, 2, 5, 6)),
	C1("slice [1::2, -2]", f_slice, 1, IN(G_UNIF, -2, 2, 2, 5, 6)),
	C1("slice [:, ::3, ::-1] * [:, -1::-3]", f_slice, 2,
	   IN(G_UNIF, -2, 2, 3, 2, 7, 2)),
	C1("gather axis 1 (repeated indices)", f_gather, 0, U34(-2, 2)),
	C1("gather axis 0", f_gather, 1, U34(-2, 2)),
	C3("cat axis 0", f_cat, 0, IN(G_UNIF, -2, 2, 2, 2, 3),
	   IN(G_UNIF, -2, 2, 2, 1, 3), IN(G_UNIF, -2, 2, 2, 3, 3)),
	C3("cat axis 1", f_cat, 1, IN(G_UNIF, -2, 2, 2, 3, 2),
	   IN(G_UNIF, -2, 2, 2, 3, 1), IN(G_UNIF, -2, 2, 2, 3, 3)),
	C2("stack axis 1", f_stack, 0, U34(-2, 2), U34(-2, 2)),
	C3("stack axis 0 (3 tensors)", f_stack, 1,
	   IN(G_UNIF, -2, 2, 2, 2, 3), IN(G_UNIF, -2, 2, 2, 2, 3),
	   IN(G_UNIF, -2, 2, 2, 2, 3)),
	C1("repeat (2,1,2)", f_repeat, 0, IN(G_UNIF, -2, 2, 2, 2, 3)),
	C1("repeat_interleave 3 axis 1", f_repeat_interleave, 1,
	   IN(G_UNIF, -2, 2, 2, 2, 3)),
	C1("repeat_interleave 3 flat", f_repeat_interleave, 0,
	   IN(G_UNIF, -2, 2, 2, 2, 3)),
	C1("split pieces", f_split, 0, IN(G_UNIF, -2, 2, 2, 3, 5)),
	C1("chunk pieces", f_chunk, 0, IN(G_UNIF, -2, 2, 2, 6, 2)),
	C1("split_sizes pieces", f_split_sizes, 0,
	   IN(G_UNIF, -2, 2, 2, 2, 6)),
	C1("triu k=0", f_triu, 0, U34(-2, 2)),
	C1("triu k=1 batched", f_triu, 1, IN(G_UNIF, -2, 2, 3, 2, 3, 3)),
	C1("tril k=-1", f_tril, -1, U34(-2, 2)),
	C1("tril k=0 batched", f_tril, 0, IN(G_UNIF, -2, 2, 3, 2, 3, 3)),

	/* processing */
	C2("matmul 2-D", f_matmul, 0, U34(-2, 2), IN(G_UNIF, -2, 2, 2, 4, 2)),
	C2("matmul batched broadcast (2,1,2,3)@(3,3,2)", f_matmul, 0,
	   IN(G_UNIF, -2, 2, 4, 2, 1, 2, 3), IN(G_UNIF, -2, 2, 3, 3, 3, 2)),
	C2("matmul (4)@(4,3)", f_matmul, 0, IN(G_UNIF, -2, 2, 1, 4),
	   IN(G_UNIF, -2, 2, 2, 4, 3)),
	C2("matmul (3,4)@(4)", f_matmul, 0, U34(-2, 2),
	   IN(G_UNIF, -2, 2, 1, 4)),
	C2("dot 1-D", f_dot, 0, IN(G_UNIF, -2, 2, 1, 5),
	   IN(G_UNIF, -2, 2, 1, 5)),
	C2("dot 2-D", f_dot, 0, IN(G_UNIF, -2, 2, 2, 2, 3),
	   IN(G_UNIF, -2, 2, 2, 3, 2)),
	C3("linear with bias", f_linear, 0, IN(G_UNIF, -2, 2, 2, 2, 4),
	   IN(G_UNIF, -1, 1, 2, 4, 3), IN(G_UNIF, -1, 1, 1, 3)),
	C3("linear 1-D weight", f_linear, 0, U34(-2, 2),
	   IN(G_UNIF, -1, 1, 1, 4), IN(G_UNIF, -1, 1, 1, 4)),
	C3("conv2d with bias", f_conv2d, 0, IN(G_UNIF, -1, 1, 4, 1, 2, 4, 4),
	   IN(G_UNIF, -1, 1, 4, 3, 2, 2, 2), IN(G_UNIF, -1, 1, 1, 3)),
	C3("conv2d groups 2 stride (2,1) padding (1,0,1,1)", f_conv2d, 1,
	   IN(G_UNIF, -1, 1, 4, 1, 4, 3, 4), IN(G_UNIF, -1, 1, 4, 2, 2, 3, 3),
	   IN(G_UNIF, -1, 1, 1, 2)),
	C2("conv2d dilation 2 padding 1 batch 2", f_conv2d, 2,
	   IN(G_UNIF, -1, 1, 4, 2, 1, 4, 4), IN(G_UNIF, -1, 1, 4, 2, 1, 2, 2)),
	C3("conv_transpose2d stride 2 padding 1", f_conv_transpose2d, 3,
	   IN(G_UNIF, -1, 1, 4, 1, 2, 3, 3), IN(G_UNIF, -1, 1, 4, 2, 1, 3, 3),
	   IN(G_UNIF, -1, 1, 1, 1)),
	C3("conv_transpose2d stride 2 padding 1 output_padding 1",
	   f_conv_transpose2d, 4, IN(G_UNIF, -1, 1, 4, 1, 1, 3, 3),
	   IN(G_UNIF, -1, 1, 4, 1, 2, 3, 3), IN(G_UNIF, -1, 1, 1, 2)),
	C3("conv_transpose2d groups 2", f_conv_transpose2d, 5,
	   IN(G_UNIF, -1, 1, 4, 1, 2, 3, 3), IN(G_UNIF, -1, 1, 4, 2, 1, 2, 2),
	   IN(G_UNIF, -1, 1, 1, 2)),
	C3("conv 1-D stride 2 padding (1,0)", f_conv, 0,
	   IN(G_UNIF, -1, 1, 3, 2, 2, 7), IN(G_UNIF, -1, 1, 3, 3, 2, 3),
	   IN(G_UNIF, -1, 1, 1, 3)),
	C3("conv 3-D padding 1 on D dilation 2 on W", f_conv, 1,
	   IN(G_UNIF, -1, 1, 5, 1, 2, 2, 3, 5), IN(G_UNIF, -1, 1, 5, 2, 2, 2, 2, 2),
	   IN(G_UNIF, -1, 1, 1, 2)),
	C3("conv_transpose 1-D stride 2 output_padding 1", f_conv_transpose, 0,
	   IN(G_UNIF, -1, 1, 3, 2, 2, 4), IN(G_UNIF, -1, 1, 3, 2, 3, 3),
	   IN(G_UNIF, -1, 1, 1, 3)),
	C3("conv_transpose 3-D", f_conv_transpose, 1,
	   IN(G_UNIF, -1, 1, 5, 1, 2, 2, 2, 3), IN(G_UNIF, -1, 1, 5, 2, 1, 2, 2, 2),
	   IN(G_UNIF, -1, 1, 1, 1)),
	C1("index x[I, 1:3] (a repeated row)", f_index, 0, U34(-2, 2)),
	C1("index x[:, J] (negative, out of range)", f_index, 1, U34(-2, 2)),
	C2("einsum ij,jk->ki", f_einsum, 0, U34(-2, 2),
	   IN(G_UNIF, -1, 1, 2, 4, 2)),
	C1("einsum bii->bi (diagonal)", f_einsum, 1,
	   IN(G_UNIF, -2, 2, 3, 2, 3, 3)),
	C2("einsum ...i,i-> (ellipsis summed)", f_einsum, 2, U234(-2, 2),
	   IN(G_UNIF, -1, 1, 1, 4)),
	C3("einsum ij,ij,j->i (size-1 broadcast)", f_einsum, 3,
	   IN(G_UNIF, -1, 1, 2, 3, 1), U34(-1, 1), IN(G_UNIF, -1, 1, 1, 4)),
	C1("avg_pool2d 2x2", f_avg_pool2d, 0,
	   IN(G_UNIF, -2, 2, 4, 1, 2, 4, 4)),
	C1("avg_pool2d 3x3 stride 1 padding 1 count_include_pad",
	   f_avg_pool2d, 1, IN(G_UNIF, -2, 2, 4, 1, 1, 4, 4)),
	C1("avg_pool2d 3x3 stride 1 padding 1", f_avg_pool2d, 2,
	   IN(G_UNIF, -2, 2, 4, 1, 1, 4, 4)),
	C1("max_pool2d 2x2", f_max_pool2d, 0,
	   IN(G_UNIF, -2, 2, 4, 1, 2, 4, 4)),
	C1("max_pool2d 3x3 stride 1 (overlapping)", f_max_pool2d, 1,
	   IN(G_UNIF, -2, 2, 4, 1, 1, 4, 5)),
	C1("max_pool2d 3x3 stride 1 padding 1", f_max_pool2d, 2,
	   IN(G_UNIF, -2, 2, 4, 1, 1, 4, 4)),
	C3("scaled_dot_product_attention", f_sdpa, 0, U234(-1, 1),
	   U234(-1, 1), U234(-1, 1)),
	C3("scaled_dot_product_attention causal", f_sdpa, 1, U234(-1, 1),
	   U234(-1, 1), U234(-1, 1)),
	C3("scaled_dot_product_attention bool mask", f_sdpa, 2, U234(-1, 1),
	   U234(-1, 1), U234(-1, 1)),

	/* the losses (labels and targets fixed) */
	C1("sparse_categorical_crossentropy (one label ignored)", f_sparse_ce,
	   0, IN(G_UNIF, -2, 2, 2, 4, 3)),
	C1("sparse_categorical_crossentropy label smoothing", f_sparse_ce, 1,
	   IN(G_UNIF, -2, 2, 2, 4, 3)),
	C1("binary_crossentropy", f_bce, 0, IN(G_UNIF, 0.1, 0.9, 2, 2, 3)),
	C1("binary_crossentropy_logits", f_bce, 1,
	   IN(G_UNIF, -3, 3, 2, 2, 3)),

	/* contiguous and copies (the float64 -> float32 -> float64 cast
	 * chain has its own test, gc_cast_chain, below) */
	C1("contiguous", f_contiguous, 0, U34(-2, 2)),
	C1("contiguous of a transpose", f_contiguous_view, 0, U34(-2, 2)),
	C1("to (same device)", f_to, 0, U34(-2, 2)),
};
#define NCASES ((int)TG_ARRAY_LEN(CASES))

START_TEST(gradcheck)
{
	gradcheck_dt(&CASES[_i], TG_FLOAT64, ATOL, RTOL);
}
END_TEST

/* float64 -> float32 -> float64.  A perturbation of 1e-6 does not
 * survive the rounding to float32 (its spacing near 1 is 1.2e-7, so the
 * difference quotient would be off by up to ~10%); the step is 2^-10
 * instead, with inputs that are multiples of 2^-10, so x +- h are exact
 * in float32 and the chain is linear: the numeric derivative is w up to
 * float64 rounding of L.  The analytic one is w rounded to float32 (the
 * gradient flows through the float32 cast): relative error <= 2^-24,
 * within the usual tolerance. */
START_TEST(gc_cast_chain)
{
	static const gcase c = C1("cast float64->float32->float64",
	                          f_cast_chain, 0, IN(G_QUANT, -2, 2, 2, 3, 4));
	const int64_t s[2] = { 3, 4 };
	double x[12], w[12], g[12];
	const double h = 1.0 / 1024;
	double *xp[1] = { x };
	tg_tensor *t, *y, *l;
	int64_t j;
	int was;

	for (j = 0; j < 12; j++) {
		x[j] = gen_value(&c.in[0], j, 1);
		w[j] = 2 * ot_u01(j, 99) - 1;
	}
	tg_scope_begin();
	t = make(TG_FLOAT64, 2, s, x);
	tg_set_requires_grad(t, 1);
	y = f_cast_chain(&t, 0);
	l = tg_sum(tg_mul(y, make(TG_FLOAT64, 2, s, w)), NULL, 0, 0);
	ck_assert_msg(tg_backward(l, NULL) == 0, "%s", tg_last_error());
	ck_assert_ptr_nonnull(tg_grad(t));
	ck_assert_int_eq(tg_tensor_dtype(tg_grad(t)), TG_FLOAT64);
	read_doubles(tg_grad(t), g, 12);
	tg_scope_end();
	was = tg_set_grad_enabled(0);
	for (j = 0; j < 12; j++) {
		double keep = x[j], lp, lm, num;

		x[j] = keep + h;
		lp = loss(&c, xp, w, 12);
		x[j] = keep - h;
		lm = loss(&c, xp, w, 12);
		x[j] = keep;
		num = (lp - lm) / (2 * h);
		ck_assert_msg(fabs(g[j] - num) <= ATOL + RTOL * fabs(num),
		              "%s [%lld]: analytic %.12g, numeric %.12g", c.name,
		              (long long)j, g[j], num);
	}
	tg_set_grad_enabled(was);
}
END_TEST

/* float32: the gradient computed in float32, against the float64
 * central difference at the same (float32-representable) point.
 * float32 keeps ~7 digits and these gradients sum a few dozen terms,
 * so 1e-4 absolute + 1e-4 relative; a wrong rule is off by far more. */
static const gcase F32[] = {
	C1("tanh", f_tanh, 0, U34(-2, 2)),
	C1("log_softmax axis -1", f_log_softmax, -1, U234(-2, 2)),
	C2("matmul 2-D", f_matmul, 0, U34(-2, 2), IN(G_UNIF, -2, 2, 2, 4, 2)),
	C3("conv2d with bias", f_conv2d, 0, IN(G_UNIF, -1, 1, 4, 1, 2, 4, 4),
	   IN(G_UNIF, -1, 1, 4, 3, 2, 2, 2), IN(G_UNIF, -1, 1, 1, 3)),
	C2("div (3,4)/(3,1)", f_div, 0, U34(-2, 2),
	   IN(G_SIGNED, 0.5, 2, 2, 3, 1)),
	C1("max axis 1", f_max, 1, U234(-2, 2)),
};
#define NF32 ((int)TG_ARRAY_LEN(F32))

START_TEST(gradcheck_f32)
{
	gradcheck_dt(&F32[_i], TG_FLOAT32, 1e-4, 1e-4);
}
END_TEST

/* ------------------------------------------- rules (no differences) */

static tg_tensor *vec(size_t n, const double *v)
{
	int64_t s = (int64_t)n;

	return make(TG_FLOAT64, 1, &s, v);
}

static void grad_is(const char *what, tg_tensor *t, size_t n,
                    const double *want)
{
	double got[16];
	size_t i;

	ck_assert_msg(tg_grad(t) != NULL, "%s: no gradient", what);
	read_doubles(tg_grad(t), got, (int64_t)n);
	for (i = 0; i < n; i++)
		ck_assert_msg(fabs(got[i] - want[i]) <= 1e-12,
		              "%s [%zu]: got %.17g want %.17g", what, i, got[i],
		              want[i]);
}

static void setup(void)
{
	ot_setup();
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	ot_teardown();
}

/* tinygrad: the gradient of max splits evenly between tied maxima. */
START_TEST(max_ties_split)
{
	tg_tensor *x = vec(3, (double[]){ 1, 3, 3 });
	tg_tensor *x2 = vec(4, (double[]){ 2, 2, 2, -1 });
	tg_tensor *a = vec(2, (double[]){ 2, 1 }), *b = vec(2, (double[]){ 2, 3 });
	tg_tensor *m = vec(4, (double[]){ 5, 5, 1, 2 });

	tg_set_requires_grad(x, 1);
	ck_assert_int_eq(tg_backward(tg_max(x, NULL, 0, 0), NULL), 0);
	grad_is("max [1,3,3]", x, 3, (double[]){ 0, 0.5, 0.5 });

	tg_set_requires_grad(x2, 1);
	ck_assert_int_eq(tg_backward(tg_sum(tg_mul_s(tg_max(x2, NULL, 0, 0),
	                                             3), NULL, 0, 0), NULL), 0);
	grad_is("3 * max [2,2,2,-1]", x2, 4, (double[]){ 1, 1, 1, 0 });

	/* maximum(a, b) with a tie: half each */
	tg_set_requires_grad(a, 1);
	tg_set_requires_grad(b, 1);
	ck_assert_int_eq(tg_backward(tg_sum(tg_maximum(a, b), NULL, 0, 0),
	                             NULL), 0);
	grad_is("maximum tie a", a, 2, (double[]){ 0.5, 0 });
	grad_is("maximum tie b", b, 2, (double[]){ 0.5, 1 });

	/* min ties split the same way */
	tg_set_requires_grad(m, 1);
	ck_assert_int_eq(tg_backward(tg_min(tg_neg(m), NULL, 0, 0), NULL), 0);
	grad_is("min(-[5,5,1,2])", m, 4, (double[]){ -0.5, -0.5, 0, 0 });
}
END_TEST

START_TEST(relu_at_zero)
{
	tg_tensor *x = vec(4, (double[]){ 0, -1, 2, 0 });

	tg_set_requires_grad(x, 1);
	ck_assert_int_eq(tg_backward(tg_sum(tg_relu(x), NULL, 0, 0), NULL), 0);
	grad_is("relu [0,-1,2,0]", x, 4, (double[]){ 0, 0, 1, 0 });
}
END_TEST

START_TEST(backward_twice_fails)
{
	tg_tensor *x = vec(3, (double[]){ 1, 2, 3 }), *l;

	tg_set_requires_grad(x, 1);
	l = tg_sum(tg_mul(x, x), NULL, 0, 0);
	ck_assert_int_eq(tg_backward(l, NULL), 0);
	grad_is("x*x", x, 3, (double[]){ 2, 4, 6 });
	ck_assert_int_eq(tg_backward(l, NULL), TG_EINVAL);
	ck_assert_error("backward: the tensor () has no graph");
	ck_assert_error("backward already ran through it");
	/* the first gradient is untouched */
	grad_is("x*x after the failed backward", x, 3, (double[]){ 2, 4, 6 });
}
END_TEST

START_TEST(backward_non_scalar)
{
	tg_tensor *x = vec(3, (double[]){ 1, 2, 3 }), *y;

	tg_set_requires_grad(x, 1);
	y = tg_mul(x, x);
	ck_assert_int_eq(tg_backward(y, NULL), TG_EINVAL);
	ck_assert_error("backward: (3,) is not a scalar; pass the gradient");
	ck_assert_ptr_null(tg_grad(x));

	/* a wrong shape */
	ck_assert_int_eq(tg_backward(y, vec(2, (double[]){ 1, 1 })),
	                 TG_EINVAL);
	ck_assert_error("backward: gradient (2,) for a tensor of (3,)");
	ck_assert_ptr_null(tg_grad(x));

	/* the right one: d(x*x) . g = 2 x g */
	ck_assert_int_eq(tg_backward(y, vec(3, (double[]){ 1, -2, 0.5 })), 0);
	grad_is("x*x with a gradient", x, 3, (double[]){ 2, -8, 3 });

	/* a one-element tensor of shape (1,1) needs none */
	{
		const int64_t s[2] = { 1, 1 };
		tg_tensor *z = tg_reshape(tg_sum(tg_mul_s(x, 3), NULL, 0, 0),
		                          2, s);

		tg_set_grad(x, NULL);
		ck_assert_int_eq(tg_backward(z, NULL), 0);
		grad_is("3x (1,1)", x, 3, (double[]){ 3, 3, 3 });
	}
}
END_TEST

START_TEST(grads_accumulate)
{
	tg_tensor *x = vec(3, (double[]){ 1, 2, 3 });

	tg_set_requires_grad(x, 1);
	ck_assert_int_eq(tg_backward(tg_sum(tg_mul_s(x, 2), NULL, 0, 0),
	                             NULL), 0);
	grad_is("2x", x, 3, (double[]){ 2, 2, 2 });
	ck_assert_int_eq(tg_backward(tg_sum(tg_mul(x, x), NULL, 0, 0), NULL),
	                 0);
	grad_is("2x then x*x", x, 3, (double[]){ 4, 6, 8 });

	/* set_grad(NULL) clears; the next backward starts from nothing */
	ck_assert_int_eq(tg_set_grad(x, NULL), 0);
	ck_assert_ptr_null(tg_grad(x));
	ck_assert_int_eq(tg_backward(tg_sum(tg_neg(x), NULL, 0, 0), NULL), 0);
	grad_is("-x after clearing", x, 3, (double[]){ -1, -1, -1 });

	/* set_grad with a tensor replaces; a wrong shape is refused */
	ck_assert_int_eq(tg_set_grad(x, vec(3, (double[]){ 7, 8, 9 })), 0);
	grad_is("set_grad", x, 3, (double[]){ 7, 8, 9 });
	ck_assert_int_eq(tg_set_grad(x, vec(2, (double[]){ 1, 1 })), TG_EINVAL);
	ck_assert_error("set_grad: gradient (2,) for a tensor of (3,)");
	grad_is("after a refused set_grad", x, 3, (double[]){ 7, 8, 9 });
}
END_TEST

START_TEST(detach_stops_gradient)
{
	tg_tensor *x = vec(3, (double[]){ 1, 2, 3 }), *d;

	tg_set_requires_grad(x, 1);
	d = tg_detach(x);
	ck_assert_int_eq(tg_requires_grad(d), 0);
	/* d(detach(x) * x)/dx = x, not 2x */
	ck_assert_int_eq(tg_backward(tg_sum(tg_mul(d, x), NULL, 0, 0), NULL),
	                 0);
	grad_is("detach(x) * x", x, 3, (double[]){ 1, 2, 3 });
	ck_assert_ptr_null(tg_grad(d));
	/* nothing requires a gradient behind a detach */
	ck_assert_int_eq(tg_backward(tg_sum(tg_exp(tg_detach(tg_mul(x, x))),
	                                    NULL, 0, 0), NULL), TG_EINVAL);
	ck_assert_error("has no graph");
}
END_TEST

START_TEST(no_grad_records_nothing)
{
	tg_tensor *x = vec(3, (double[]){ 1, 2, 3 }), *l;

	tg_set_requires_grad(x, 1);
	ck_assert_int_eq(tg_is_grad_enabled(), 1);
	ck_assert_int_eq(tg_set_grad_enabled(0), 1);
	ck_assert_int_eq(tg_is_grad_enabled(), 0);
	l = tg_sum(tg_mul(x, x), NULL, 0, 0);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(tg_set_grad_enabled(1), 0);
	ck_assert_int_eq(tg_backward(l, NULL), TG_EINVAL);
	ck_assert_error("has no graph");
	ck_assert_ptr_null(tg_grad(x));
	/* recording again once enabled */
	ck_assert_int_eq(tg_backward(tg_sum(tg_mul(x, x), NULL, 0, 0), NULL),
	                 0);
	grad_is("x*x after no_grad", x, 3, (double[]){ 2, 4, 6 });

	/* training is a separate switch */
	ck_assert_int_eq(tg_is_training(), 0);
	ck_assert_int_eq(tg_set_training(1), 0);
	ck_assert_int_eq(tg_is_training(), 1);
	ck_assert_int_eq(tg_set_training(0), 1);
	ck_assert_int_eq(tg_is_grad_enabled(), 1);
}
END_TEST

START_TEST(requires_grad_tristate)
{
	tg_tensor *n = vec(2, (double[]){ 1, 2 }); /* -1: undecided */
	tg_tensor *z = vec(2, (double[]){ 1, 2 }), *o = vec(2, (double[]){ 1, 2 });
	tg_tensor *z2 = vec(2, (double[]){ 3, 4 }), *r;

	ck_assert_int_eq(tg_requires_grad(n), -1);
	ck_assert_int_eq(tg_set_requires_grad(z, 0), 0);
	ck_assert_int_eq(tg_set_requires_grad(z2, 0), 0);
	ck_assert_int_eq(tg_set_requires_grad(o, 1), 0);
	ck_assert_int_eq(tg_requires_grad(z), 0);
	ck_assert_int_eq(tg_requires_grad(o), 1);

	ck_assert_int_eq(tg_requires_grad(tg_exp(n)), -1);
	ck_assert_int_eq(tg_requires_grad(tg_add(n, n)), -1);
	ck_assert_int_eq(tg_requires_grad(tg_add(z, z2)), 0);
	ck_assert_int_eq(tg_requires_grad(tg_neg(z)), 0);
	ck_assert_int_eq(tg_requires_grad(tg_sum(tg_mul(z, z2), NULL, 0, 0)),
	                 0);
	ck_assert_int_eq(tg_requires_grad(tg_flip(z, (int[]){ 0 }, 1)), 0);
	ck_assert_int_eq(tg_requires_grad(tg_max(z, NULL, 0, 0)), 0);
	/* constants an op brings in (Python scalars) need no gradient */
	ck_assert_int_eq(tg_requires_grad(tg_exp(z)), 0);
	ck_assert_int_eq(tg_requires_grad(tg_mul_s(z, 2)), 0);
	ck_assert_int_eq(tg_requires_grad(tg_softmax(z, 0)), 0);
	ck_assert_int_eq(tg_requires_grad(tg_add(z, n)), -1);
	ck_assert_int_eq(tg_requires_grad(tg_add(o, z)), 1);
	ck_assert_int_eq(tg_requires_grad(tg_add(n, o)), 1);
	ck_assert_int_eq(tg_requires_grad(tg_where(tg_gt_s(z, 1), o, n)), 1);
	/* composites follow the same rule through their primitives */
	ck_assert_int_eq(tg_requires_grad(tg_softmax(n, 0)), -1);
	ck_assert_int_eq(tg_requires_grad(tg_matmul(z, o)), 1);

	/* a no-grad op still computes requires_grad (as tinygrad does), but
	 * records nothing: a later op on it is recorded and its backward
	 * stops there, at r */
	tg_set_grad_enabled(0);
	r = tg_mul(o, z);
	tg_set_grad_enabled(1);
	ck_assert_int_eq(tg_requires_grad(r), 1);
	ck_assert_int_eq(tg_backward(tg_sum(tg_mul_s(r, 2), NULL, 0, 0), NULL),
	                 0);
	grad_is("r behind no_grad", r, 2, (double[]){ 2, 2 });
	ck_assert_ptr_null(tg_grad(o));

	/* set_requires_grad maps any negative to -1, anything else to 0/1 */
	ck_assert_int_eq(tg_set_requires_grad(z, -7), 0);
	ck_assert_int_eq(tg_requires_grad(z), -1);
	ck_assert_int_eq(tg_set_requires_grad(z, 5), 0);
	ck_assert_int_eq(tg_requires_grad(z), 1);
	ck_assert_int_eq(tg_requires_grad(tg_detach(z)), 0);
}
END_TEST

/* Comparisons, integer ops and where's condition pass no gradient. */
START_TEST(no_gradient_through_comparisons)
{
	tg_tensor *x = vec(5, (double[]){ -1, 2, 0.5, -3, 4 });
	tg_tensor *y = vec(3, (double[]){ 1, -2, 3 });
	tg_tensor *k;
	const int64_t s = 3;
	double got[3];
	size_t i;

	tg_set_requires_grad(x, 1);
	/* sum(where(x > 0, x, 0)): the mask */
	ck_assert_int_eq(tg_backward(tg_sum(tg_where(tg_gt_s(x, 0), x,
	                                             tg_zeros_like(x)),
	                                    NULL, 0, 0), NULL), 0);
	grad_is("where(x > 0, x, 0)", x, 5, (double[]){ 0, 1, 1, 0, 1 });

	/* a loss made only of comparisons gives x nothing */
	tg_set_requires_grad(y, 1);
	ck_assert_int_eq(tg_backward(tg_sum(tg_cast(tg_gt_s(y, 0), TG_FLOAT64),
	                                    NULL, 0, 0), NULL), 0);
	if (tg_grad(y)) {
		read_doubles(tg_grad(y), got, 3);
		for (i = 0; i < 3; i++)
			ck_assert_msg(got[i] == 0, "comparison grad [%zu] %g", i,
			              got[i]);
	}

	/* an integer input with requires_grad: idiv and mod give none */
	k = tg_tensor_new(cpu(), TG_INT32, 1, &s, (int32_t[]){ 7, -4, 9 });
	ck_assert_ptr_nonnull(k);
	tg_set_requires_grad(k, 1);
	ck_assert_int_eq(tg_backward(tg_sum(tg_add(tg_idiv_s(k, 2),
	                                           tg_mod_s(k, 3)), NULL, 0, 0),
	                             NULL), 0);
	if (tg_grad(k)) {
		int32_t gi[3];

		ck_assert_int_eq(tg_tensor_data(tg_grad(k), gi, sizeof gi), 0);
		for (i = 0; i < 3; i++)
			ck_assert_int_eq(gi[i], 0);
	}
}
END_TEST

/* A long chain: the walk over the graph is iterative, and backward
 * frees every node it passes (valgrind sees the rest). */
START_TEST(deep_chain)
{
	tg_tensor *x = vec(2, (double[]){ 1, 2 }), *y;
	int i;

	tg_set_requires_grad(x, 1);
	y = x;
	for (i = 0; i < 2000; i++)
		y = tg_add(y, x);
	ck_assert_int_eq(tg_backward(tg_sum(y, NULL, 0, 0), NULL), 0);
	grad_is("x + x + ... (2001 times)", x, 2, (double[]){ 2001, 2001 });
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("autograd");
	TCase *tc = tcase_create("gradcheck");
	TCase *tr = tcase_create("rules");

	/* generous: each op evaluates the loss twice per input element,
	 * which under valgrind takes a while */
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, gradcheck, 0, NCASES);
	tcase_add_test(tc, gc_cast_chain);
	tcase_add_loop_test(tc, gradcheck_f32, 0, NF32);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(tr, setup, teardown);
	tcase_set_timeout(tr, 120);
	tcase_add_test(tr, max_ties_split);
	tcase_add_test(tr, relu_at_zero);
	tcase_add_test(tr, backward_twice_fails);
	tcase_add_test(tr, backward_non_scalar);
	tcase_add_test(tr, grads_accumulate);
	tcase_add_test(tr, detach_stops_gradient);
	tcase_add_test(tr, no_grad_records_nothing);
	tcase_add_test(tr, requires_grad_tristate);
	tcase_add_test(tr, no_gradient_through_comparisons);
	tcase_add_test(tr, deep_chain);
	suite_add_tcase(s, tr);
	return s;
}

int main(void)
{
	printf("autograd: %d ops and variants checked against central "
	       "differences in float64 (+1 cast chain), %d in float32\n",
	       NCASES, NF32);
	return tl_run(suite());
}

/*
 * test_kernels.c - kernel counts of common programs built through the
 * public tensor API.  Each expected count is what tinygrad's mid-2024
 * scheduler (engine/schedule.py, test/test_schedule.py's check_schedule:
 * kernels only, realized inputs count 0) gives for the same program on
 * the same shapes.  Every program is then realized and, for most, its
 * values are checked against plain C double loops, so the counts are of
 * graphs that compute the right thing.
 *
 * Also: binary ops on tensors of two different devices (the MOCK test
 * plugin's two devices) fail with a message naming both.
 */
#include "config.h"

#include "optest.h"
#include "../libtgcore/tensor/tensor.h"
#include "../libtgcore/engine/engine.h"

/* The device under test: the default device (DEVICE=OPENCL etc.; CPU
 * when unset), and its name, kept for tests that change the plugin
 * path. */
static tg_dev *dev;
static char dev_name[64];

static void setup(void)
{
	ot_suite = "kernels";
	dev = ot_dev();
	ck_assert_msg(dev != NULL, "no default device: %s", tg_last_error());
	snprintf(dev_name, sizeof dev_name, "%s", tg_dev_name(dev));
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	ot_report_refused();
	tg_shutdown();
}

/* Schedules outs together and returns how many kernels (items with an
 * AST; copies are not kernels) the schedule has.  Runs nothing. */
static size_t nkernels(tg_tensor **outs, size_t n)
{
	tg_lazy *lz[8];
	tg_schedule s;
	tg_settings set;
	size_t i, k = 0;

	ck_assert_uint_le(n, TG_ARRAY_LEN(lz));
	for (i = 0; i < n; i++) {
		ck_assert_msg(outs[i] != NULL, "output %zu: %s", i,
		              tg_last_error());
		lz[i] = outs[i]->lazy;
	}
	ck_assert_int_eq(tg_settings_read(&set), 0);
	ck_assert_msg(tg_schedule_create(lz, n, &set, &s) == 0, "%s",
	              tg_last_error());
	for (i = 0; i < s.items.n; i++)
		if (s.items.v[i].ast)
			k++;
	tg_schedule_free(&s);
	return k;
}

/* Counts the kernels of outs, then realizes them (one schedule); the
 * public counters (tg_counters) must see the same number run. */
static size_t count_and_realize(tg_tensor **outs, size_t n)
{
	size_t k = nkernels(outs, n);
	tg_counters c;

	tg_counters_reset();
	ck_assert_msg(tg_realize_many(outs, n) == 0, "%s", tg_last_error());
	tg_counters_get(&c);
	ck_assert_msg(c.kernels == k, "the counters saw %llu kernels run, "
	              "the schedule has %zu", (unsigned long long)c.kernels, k);
	return k;
}

static size_t count1(tg_tensor *out)
{
	return count_and_realize(&out, 1);
}

/* A realized float32 input holding distinct values in (-1, 1) (or
 * (0, 1) when pos), also written to h. */
static tg_tensor *inp_(float *h, size_t ndim, const int64_t *shape,
                       int seed, int pos)
{
	size_t i, n = (size_t)ot_numel(ndim, shape);
	tg_tensor *t;

	for (i = 0; i < n; i++) {
		double v = sin((double)(i + 1) * 0.731 + seed * 1.37);

		h[i] = (float)(pos ? 0.5 + 0.49 * v : v);
	}
	t = tg_tensor_new(dev, TG_FLOAT32, ndim, shape, h);
	ck_assert_msg(t != NULL, "%s", tg_last_error());
	ck_assert_msg(tg_realize(t) == 0, "%s", tg_last_error());
	return t;
}

static tg_tensor *inp(float *h, size_t ndim, const int64_t *shape,
                      int seed)
{
	return inp_(h, ndim, shape, seed, 0);
}

static tg_tensor *inp_i32(const int32_t *h, size_t ndim,
                          const int64_t *shape)
{
	tg_tensor *t = tg_tensor_new(dev, TG_INT32, ndim, shape, h);

	ck_assert_msg(t != NULL, "%s", tg_last_error());
	ck_assert_msg(tg_realize(t) == 0, "%s", tg_last_error());
	return t;
}

/* Reads n float32 values of t into a new array (free it). */
static float *get(tg_tensor *t, size_t n)
{
	float *out = malloc(n * sizeof *out);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(tg_tensor_numel(t), (int64_t)n);
	ck_assert_msg(tg_tensor_data(t, out, n * sizeof *out) == 0, "%s",
	              tg_last_error());
	return out;
}

static void get_i32(tg_tensor *t, int32_t *out, size_t n)
{
	ck_assert_int_eq(tg_tensor_dtype(t), TG_INT32);
	ck_assert_int_eq(tg_tensor_numel(t), (int64_t)n);
	ck_assert_msg(tg_tensor_data(t, out, n * sizeof *out) == 0, "%s",
	              tg_last_error());
}

/* Asserts t holds want[0..n) within tol (relative above magnitude 1). */
static void expect(tg_tensor *t, const double *want, size_t n, double tol)
{
	float *got = get(t, n);
	size_t i;

	for (i = 0; i < n; i++)
		ck_assert_msg(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])),
		              "element %zu: got %.7g, want %.7g", i,
		              (double)got[i], want[i]);
	free(got);
}

static const int ax0[1] = { 0 }, ax1[1] = { 1 }, axm1[1] = { -1 };

/* ----------------------------------------------- elementwise and sums */

START_TEST(elementwise_chain_is_one_kernel)
{
	int64_t s[2] = { 4, 4 };
	float ha[16], hb[16], hc[16];
	tg_tensor *a = inp(ha, 2, s, 1), *b = inp(hb, 2, s, 2);
	tg_tensor *c = inp(hc, 2, s, 3);
	double w[16];
	int i;

	ck_assert_uint_eq(count1(tg_sqrt(tg_exp(tg_mul(tg_add(a, b), c)))),
	                  1);
	for (i = 0; i < 16; i++)
		w[i] = sqrt(exp((ha[i] + hb[i]) * hc[i]));
	expect(tg_sqrt(tg_exp(tg_mul(tg_add(a, b), c))), w, 16, 1e-5);
}
END_TEST

START_TEST(sum_of_product_is_one_kernel)
{
	int64_t s[2] = { 4, 4 };
	float ha[16], hb[16];
	tg_tensor *a = inp(ha, 2, s, 1), *b = inp(hb, 2, s, 2);
	tg_tensor *o = tg_sum(tg_mul(a, b), NULL, 0, 0);
	double w = 0;
	int i;

	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 16; i++)
		w += (double)ha[i] * hb[i];
	expect(o, &w, 1, 1e-5);
}
END_TEST

START_TEST(sum_of_sum_plus_vector_is_one_kernel)
{
	/* (a+b).sum(1) + c */
	int64_t s[2] = { 4, 4 }, s4[1] = { 4 };
	float ha[16], hb[16], hc[4];
	tg_tensor *a = inp(ha, 2, s, 1), *b = inp(hb, 2, s, 2);
	tg_tensor *c = inp(hc, 1, s4, 3);
	tg_tensor *o = tg_add(tg_sum(tg_add(a, b), ax1, 1, 0), c);
	double w[4];
	int i, j;

	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 4; i++) {
		w[i] = hc[i];
		for (j = 0; j < 4; j++)
			w[i] += (double)ha[i * 4 + j] + hb[i * 4 + j];
	}
	expect(o, w, 4, 1e-5);
}
END_TEST

START_TEST(sum_and_max_of_one_input_are_two_kernels)
{
	int64_t s[2] = { 8, 16 };
	float hx[128];
	tg_tensor *x = inp(hx, 2, s, 1);
	tg_tensor *outs[2] = { tg_sum(x, NULL, 0, 0), tg_max(x, NULL, 0, 0) };
	double w[2] = { 0, -INFINITY };
	int i;

	ck_assert_uint_eq(count_and_realize(outs, 2), 2);
	for (i = 0; i < 128; i++) {
		w[0] += hx[i];
		w[1] = fmax(w[1], hx[i]);
	}
	expect(outs[0], &w[0], 1, 1e-5);
	expect(outs[1], &w[1], 1, 0);
}
END_TEST

START_TEST(two_sums_over_different_axes_are_two_kernels)
{
	/* (img.sum(0) + img.sum(1)).relu() */
	int64_t s[2] = { 8, 8 };
	float h[64];
	tg_tensor *img = inp(h, 2, s, 1);
	tg_tensor *o = tg_relu(tg_add(tg_sum(img, ax0, 1, 0),
	                              tg_sum(img, ax1, 1, 0)));
	double w[8];
	int i, j;

	ck_assert_uint_eq(count1(o), 2);
	for (i = 0; i < 8; i++) {
		double c = 0, r = 0;

		for (j = 0; j < 8; j++)
			c += h[j * 8 + i], r += h[i * 8 + j];
		w[i] = fmax(c + r, 0);
	}
	expect(o, w, 8, 1e-5);
}
END_TEST

START_TEST(where_of_a_compare_is_one_kernel)
{
	int64_t s[2] = { 4, 4 };
	float ha[16], hb[16];
	tg_tensor *a = inp(ha, 2, s, 1), *b = inp(hb, 2, s, 2);
	tg_tensor *o = tg_where(tg_gt(a, b), a, b);
	double w[16];
	int i;

	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 16; i++)
		w[i] = fmax(ha[i], hb[i]);
	expect(o, w, 16, 0);
}
END_TEST

START_TEST(mean_is_one_kernel)
{
	int64_t s[2] = { 8, 16 };
	float h[128];
	tg_tensor *x = inp(h, 2, s, 1);
	tg_tensor *all = tg_mean(x, NULL, 0, 0), *rows = tg_mean(x, ax1, 1, 0);
	double wa = 0, wr[8] = { 0 };
	int i;

	ck_assert_uint_eq(count1(all), 1);
	ck_assert_uint_eq(count1(rows), 1);
	for (i = 0; i < 128; i++) {
		wa += h[i] / 128.0;
		wr[i / 16] += h[i] / 16.0;
	}
	expect(all, &wa, 1, 1e-5);
	expect(rows, wr, 8, 1e-5);
}
END_TEST

/* mean and sample variance of each row of h (r rows of c) */
static void row_stats(const float *h, int r, int c, double *mean,
                      double *var)
{
	int i, j;

	for (i = 0; i < r; i++) {
		double m = 0, v = 0;

		for (j = 0; j < c; j++)
			m += h[i * c + j];
		m /= c;
		for (j = 0; j < c; j++)
			v += (h[i * c + j] - m) * (h[i * c + j] - m);
		mean[i] = m;
		var[i] = v;
	}
}

START_TEST(var_and_std_are_two_kernels)
{
	int64_t s[2] = { 8, 16 };
	float h[128];
	tg_tensor *x = inp(h, 2, s, 1);
	tg_tensor *var = tg_var(x, ax1, 1, 0, 1), *sd = tg_std(x, ax1, 1, 0, 1);
	double m[8], v[8], wsd[8];
	int i;

	/* counted before either runs: std is sqrt of the same variance */
	ck_assert_uint_eq(nkernels(&var, 1), 2);
	ck_assert_uint_eq(nkernels(&sd, 1), 2);
	ck_assert_int_eq(tg_realize(var), 0);
	ck_assert_int_eq(tg_realize(sd), 0);
	row_stats(h, 8, 16, m, v);
	for (i = 0; i < 8; i++) {
		v[i] /= 15;
		wsd[i] = sqrt(v[i]);
	}
	expect(var, v, 8, 1e-5);
	expect(sd, wsd, 8, 1e-5);
}
END_TEST

START_TEST(reduce_broadcast_back_is_two_kernels)
{
	/* x - x.sum(1, keepdim): the sum is read through an expand */
	int64_t s[2] = { 8, 16 };
	float h[128];
	tg_tensor *x = inp(h, 2, s, 1);
	tg_tensor *o = tg_sub(x, tg_sum(x, ax1, 1, 1));
	double w[128], r[8] = { 0 };
	int i;

	ck_assert_uint_eq(count1(o), 2);
	for (i = 0; i < 128; i++)
		r[i / 16] += h[i];
	for (i = 0; i < 128; i++)
		w[i] = h[i] - r[i / 16];
	expect(o, w, 128, 1e-5);
}
END_TEST

START_TEST(large_sum_splits_into_two_kernels)
{
	/* 32768*32 elements: past REDUCEOP_SPLIT_THRESHOLD (32768) */
	int64_t s[1] = { 32768 * 32 };
	float *h = malloc(32768 * 32 * sizeof *h);
	tg_tensor *x, *o;
	double w = 0;
	size_t i;

	ck_assert_ptr_nonnull(h);
	x = inp_(h, 1, s, 1, 1);
	o = tg_sum(x, NULL, 0, 0);
	ck_assert_uint_eq(count1(o), 2);
	for (i = 0; i < 32768 * 32; i++)
		w += h[i];
	expect(o, &w, 1, 1e-4);
	free(h);
}
END_TEST

/* The settings reach the split: SPLIT_REDUCEOP=0 keeps the large sum
 * one kernel, a lower REDUCEOP_SPLIT_THRESHOLD splits a small one. */
START_TEST(split_settings_choose_the_kernels)
{
	int64_t s[1] = { 32768 * 4 }, t[1] = { 4096 };
	float *h = malloc(32768 * 4 * sizeof *h), g[4096];
	tg_tensor *x, *y;
	double w = 0, v = 0;
	size_t i;

	ck_assert_ptr_nonnull(h);
	x = inp_(h, 1, s, 1, 1);
	y = inp_(g, 1, t, 2, 1);
	ck_assert_int_eq(tg_config_set("SPLIT_REDUCEOP", "0"), 0);
	ck_assert_uint_eq(count1(tg_sum(x, NULL, 0, 0)), 1);
	ck_assert_int_eq(tg_config_set("SPLIT_REDUCEOP", NULL), 0);
	ck_assert_uint_eq(count1(tg_sum(y, NULL, 0, 0)), 1);
	ck_assert_int_eq(tg_config_set("REDUCEOP_SPLIT_THRESHOLD", "1024"), 0);
	ck_assert_uint_eq(count1(tg_sum(y, NULL, 0, 0)), 2);
	ck_assert_int_eq(tg_config_set("REDUCEOP_SPLIT_THRESHOLD", NULL), 0);
	for (i = 0; i < 4096; i++)
		v += g[i];
	expect(tg_sum(y, NULL, 0, 0), &v, 1, 1e-4);
	for (i = 0; i < 32768 * 4; i++)
		w += h[i];
	expect(tg_sum(x, NULL, 0, 0), &w, 1, 1e-4);
	free(h);
}
END_TEST

/* ------------------------------------------------ softmax and norms */

START_TEST(softmax_is_three_kernels)
{
	int64_t s[2] = { 8, 16 };
	float h[128];
	tg_tensor *x = inp(h, 2, s, 1);
	tg_tensor *o = tg_softmax(x, -1);
	double w[128];
	int i, j;

	ck_assert_uint_eq(count1(o), 3);
	for (i = 0; i < 8; i++) {
		double m = -INFINITY, z = 0;

		for (j = 0; j < 16; j++)
			m = fmax(m, h[i * 16 + j]);
		for (j = 0; j < 16; j++)
			z += exp(h[i * 16 + j] - m);
		for (j = 0; j < 16; j++)
			w[i * 16 + j] = exp(h[i * 16 + j] - m) / z;
	}
	expect(o, w, 128, 1e-5);
}
END_TEST

START_TEST(log_softmax_is_three_kernels)
{
	int64_t s[2] = { 8, 16 };
	float h[128];
	tg_tensor *x = inp(h, 2, s, 1);
	tg_tensor *o = tg_log_softmax(x, -1);
	double w[128];
	int i, j;

	ck_assert_uint_eq(count1(o), 3);
	for (i = 0; i < 8; i++) {
		double m = -INFINITY, z = 0;

		for (j = 0; j < 16; j++)
			m = fmax(m, h[i * 16 + j]);
		for (j = 0; j < 16; j++)
			z += exp(h[i * 16 + j] - m);
		for (j = 0; j < 16; j++)
			w[i * 16 + j] = h[i * 16 + j] - m - log(z);
	}
	expect(o, w, 128, 1e-5);
}
END_TEST

START_TEST(layernorm_is_three_kernels)
{
	/* (x - mean) / sqrt(var + eps) * w + b over the last axis */
	int64_t s[2] = { 8, 16 }, s16[1] = { 16 };
	float h[128], hw[16], hb[16];
	tg_tensor *x = inp(h, 2, s, 1), *w = inp(hw, 1, s16, 2);
	tg_tensor *b = inp(hb, 1, s16, 3);
	tg_tensor *d = tg_sub(x, tg_mean(x, axm1, 1, 1));
	tg_tensor *var = tg_mean(tg_mul(d, d), axm1, 1, 1);
	tg_tensor *o = tg_add(tg_mul(tg_div(d, tg_sqrt(tg_add_s(var, 1e-5))),
	                             w), b);
	double m[8], v[8], want[128];
	int i;

	ck_assert_uint_eq(count1(o), 3);
	row_stats(h, 8, 16, m, v);
	for (i = 0; i < 128; i++)
		want[i] = (h[i] - m[i / 16]) / sqrt(v[i / 16] / 16 + 1e-5) *
		          hw[i % 16] + hb[i % 16];
	expect(o, want, 128, 1e-4);
}
END_TEST

/* ----------------------------------------------------------- matmul */

/* a (8,16) @ b (16,5) (+ bias, relu) in want */
static void mm_ref(const float *a, const float *b, const float *bias,
                   int relu, double *want)
{
	int i, j, k;

	for (i = 0; i < 8; i++)
		for (j = 0; j < 5; j++) {
			double acc = bias ? bias[j] : 0;

			for (k = 0; k < 16; k++)
				acc += (double)a[i * 16 + k] * b[k * 5 + j];
			want[i * 5 + j] = relu ? fmax(acc, 0) : acc;
		}
}

START_TEST(matmul_is_one_kernel)
{
	int64_t sa[2] = { 8, 16 }, sb[2] = { 16, 5 };
	float ha[128], hb[80];
	tg_tensor *a = inp(ha, 2, sa, 1), *b = inp(hb, 2, sb, 2);
	tg_tensor *o = tg_matmul(a, b);
	double w[40];

	ck_assert_uint_eq(count1(o), 1);
	mm_ref(ha, hb, NULL, 0, w);
	expect(o, w, 40, 1e-5);
}
END_TEST

START_TEST(matmul_bias_relu_is_one_kernel)
{
	int64_t sa[2] = { 8, 16 }, sb[2] = { 16, 5 }, s5[1] = { 5 };
	float ha[128], hb[80], hbias[5];
	tg_tensor *a = inp(ha, 2, sa, 1), *b = inp(hb, 2, sb, 2);
	tg_tensor *bias = inp(hbias, 1, s5, 3);
	tg_tensor *o = tg_relu(tg_add(tg_matmul(a, b), bias));
	double w[40];

	ck_assert_uint_eq(count1(o), 1);
	mm_ref(ha, hb, hbias, 1, w);
	expect(o, w, 40, 1e-5);
}
END_TEST

START_TEST(linear_is_one_kernel)
{
	int64_t sa[2] = { 8, 16 }, sb[2] = { 16, 5 }, s5[1] = { 5 };
	float ha[128], hb[80], hbias[5];
	tg_tensor *a = inp(ha, 2, sa, 1), *b = inp(hb, 2, sb, 2);
	tg_tensor *bias = inp(hbias, 1, s5, 3);
	tg_tensor *o = tg_linear(a, b, bias);
	double w[40];

	ck_assert_uint_eq(count1(o), 1);
	mm_ref(ha, hb, hbias, 0, w);
	expect(o, w, 40, 1e-5);
}
END_TEST

/* ------------------------------------------------- convs and pools */

/* x (2,3,8,8) conv w (4,3,3,3) (+ bias, relu) -> (2,4,6,6) */
static void conv_ref(const float *x, const float *w, const float *bias,
                     int relu, double *out)
{
	int n, o, i, y, xx, ky, kx;

	for (n = 0; n < 2; n++)
		for (o = 0; o < 4; o++)
			for (y = 0; y < 6; y++)
				for (xx = 0; xx < 6; xx++) {
					double acc = bias ? bias[o] : 0;

					for (i = 0; i < 3; i++)
						for (ky = 0; ky < 3; ky++)
							for (kx = 0; kx < 3; kx++)
								acc += (double)x[((n * 3 + i) * 8 + y + ky) * 8 + xx + kx] *
								       w[((o * 3 + i) * 3 + ky) * 3 + kx];
					out[((n * 4 + o) * 6 + y) * 6 + xx] =
						relu ? fmax(acc, 0) : acc;
				}
}

#define CONV_INPUTS                                                        \
	int64_t sx[4] = { 2, 3, 8, 8 }, sw[4] = { 4, 3, 3, 3 },            \
	        sbias[1] = { 4 };                                          \
	float hx[384], hw[108], hbias[4];                                  \
	tg_tensor *x = inp(hx, 4, sx, 1), *w = inp(hw, 4, sw, 2);          \
	tg_tensor *bias = inp(hbias, 1, sbias, 3);                         \
	tg_conv_opts opts = { 0 }

START_TEST(conv2d_is_one_kernel)
{
	CONV_INPUTS;
	tg_tensor *o = tg_conv2d(x, w, NULL, &opts);
	double want[288];

	(void)bias;
	ck_assert_uint_eq(count1(o), 1);
	conv_ref(hx, hw, NULL, 0, want);
	expect(o, want, 288, 1e-5);
}
END_TEST

START_TEST(conv2d_relu_is_one_kernel)
{
	CONV_INPUTS;
	tg_tensor *o = tg_relu(tg_conv2d(x, w, NULL, &opts));
	double want[288];

	(void)bias;
	ck_assert_uint_eq(count1(o), 1);
	conv_ref(hx, hw, NULL, 1, want);
	expect(o, want, 288, 1e-5);
}
END_TEST

START_TEST(conv2d_bias_relu_is_one_kernel)
{
	CONV_INPUTS;
	tg_tensor *o = tg_relu(tg_conv2d(x, w, bias, &opts));
	double want[288];

	ck_assert_uint_eq(count1(o), 1);
	conv_ref(hx, hw, hbias, 1, want);
	expect(o, want, 288, 1e-5);
}
END_TEST

START_TEST(max_pool_after_conv_is_two_kernels)
{
	CONV_INPUTS;
	int64_t k[2] = { 2, 2 };
	tg_tensor *o = tg_max_pool2d(tg_relu(tg_conv2d(x, w, bias, &opts)), k,
	                             NULL);
	double c[288], want[72];
	int p, y, xx;

	ck_assert_uint_eq(count1(o), 2);
	conv_ref(hx, hw, hbias, 1, c);
	for (p = 0; p < 8; p++)
		for (y = 0; y < 3; y++)
			for (xx = 0; xx < 3; xx++) {
				const double *q = c + p * 36 + 2 * y * 6 + 2 * xx;

				want[(p * 3 + y) * 3 + xx] =
					fmax(fmax(q[0], q[1]), fmax(q[6], q[7]));
			}
	expect(o, want, 72, 1e-5);
}
END_TEST

START_TEST(pools_are_one_kernel)
{
	CONV_INPUTS;
	int64_t k[2] = { 2, 2 };
	tg_tensor *avg = tg_avg_pool2d(x, k, NULL, 1);
	tg_tensor *mx = tg_max_pool2d(x, k, NULL);
	double wa[96], wm[96];
	int p, y, xx;

	(void)w, (void)bias, (void)opts;
	ck_assert_uint_eq(count1(avg), 1);
	ck_assert_uint_eq(count1(mx), 1);
	for (p = 0; p < 6; p++)
		for (y = 0; y < 4; y++)
			for (xx = 0; xx < 4; xx++) {
				const float *q = hx + p * 64 + 2 * y * 8 + 2 * xx;

				wa[(p * 4 + y) * 4 + xx] =
					((double)q[0] + q[1] + q[8] + q[9]) / 4;
				wm[(p * 4 + y) * 4 + xx] =
					fmax(fmax(q[0], q[1]), fmax(q[8], q[9]));
			}
	expect(avg, wa, 96, 1e-5);
	expect(mx, wm, 96, 0);
}
END_TEST

/* -------------------------------------------------------- indexing */

START_TEST(argmax_is_three_kernels)
{
	int64_t s[2] = { 8, 16 };
	float h[128];
	tg_tensor *x = inp(h, 2, s, 1);
	tg_tensor *rows = tg_argmax(x, -1, 0), *flat = tg_argmax(x, TG_AXIS_NONE,
	                                                         0);
	int32_t got[8], gf;
	int i, j, best = 0;

	ck_assert_uint_eq(count1(rows), 3);
	ck_assert_uint_eq(count1(flat), 3);
	get_i32(rows, got, 8);
	for (i = 0; i < 8; i++) {
		int b = 0;

		for (j = 1; j < 16; j++)
			if (h[i * 16 + j] > h[i * 16 + b])
				b = j;
		ck_assert_int_eq(got[i], b);
	}
	for (i = 1; i < 128; i++)
		if (h[i] > h[best])
			best = i;
	get_i32(flat, &gf, 1);
	ck_assert_int_eq(gf, best);
}
END_TEST

START_TEST(cumsum_is_one_kernel)
{
	int64_t s[2] = { 4, 8 };
	float h[32];
	tg_tensor *x = inp(h, 2, s, 1);
	tg_tensor *o = tg_cumsum(x, 1);
	double w[32];
	int i, j;

	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 4; i++) {
		double acc = 0;

		for (j = 0; j < 8; j++)
			w[i * 8 + j] = acc += h[i * 8 + j];
	}
	expect(o, w, 32, 1e-5);
}
END_TEST

START_TEST(arange_is_one_kernel)
{
	tg_tensor *o = tg_arange(dev, TG_INT32, 0, 16, 1);
	int32_t got[16];
	int i;

	ck_assert_uint_eq(count1(o), 1);
	get_i32(o, got, 16);
	for (i = 0; i < 16; i++)
		ck_assert_int_eq(got[i], i);
}
END_TEST

START_TEST(arange_plus_input_is_one_kernel)
{
	int64_t s[1] = { 16 };
	float h[16];
	tg_tensor *x = inp(h, 1, s, 1);
	tg_tensor *o = tg_add(tg_arange(dev, TG_INT32, 0, 16, 1), x);
	double w[16];
	int i;

	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 16; i++)
		w[i] = i + h[i];
	expect(o, w, 16, 1e-6);
}
END_TEST

START_TEST(one_hot_is_two_kernels)
{
	static const int32_t hi[6] = { 0, 4, 2, 2, 1, 3 };
	int64_t s[1] = { 6 };
	tg_tensor *o = tg_one_hot(inp_i32(hi, 1, s), 5);
	int32_t got[30];
	int i, j;

	ck_assert_uint_eq(count1(o), 2);
	get_i32(o, got, 30);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 5; j++)
			ck_assert_int_eq(got[i * 5 + j], hi[i] == j);
}
END_TEST

START_TEST(gather_is_two_kernels)
{
	static const int32_t hi[12] = { 0, 4, 1, 3, 3, 2, 4, 0, 0, 1, 2, 4 };
	int64_t sx[2] = { 4, 5 }, si[2] = { 4, 3 };
	float hx[20];
	tg_tensor *x = inp(hx, 2, sx, 1);
	tg_tensor *o = tg_gather(x, 1, inp_i32(hi, 2, si));
	double w[12];
	int i;

	ck_assert_uint_eq(count1(o), 2);
	for (i = 0; i < 12; i++)
		w[i] = hx[(i / 3) * 5 + hi[i]];
	expect(o, w, 12, 0);
}
END_TEST

START_TEST(cat_of_computed_tensors_is_one_kernel)
{
	int64_t s[2] = { 4, 4 };
	float ha[16], hb[16];
	tg_tensor *a = inp(ha, 2, s, 1), *b = inp(hb, 2, s, 2);
	const tg_tensor *parts[2];
	tg_tensor *o;
	double w[32];
	int i;

	parts[0] = tg_add_s(a, 1);
	parts[1] = tg_mul_s(b, 2);
	o = tg_cat(parts, 2, 0);
	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 16; i++) {
		w[i] = ha[i] + 1.0;
		w[16 + i] = hb[i] * 2.0;
	}
	expect(o, w, 32, 1e-6);
}
END_TEST

START_TEST(contiguous_permute_is_one_kernel)
{
	int64_t s[2] = { 4, 6 };
	static const int order[2] = { 1, 0 };
	float h[24];
	tg_tensor *x = inp(h, 2, s, 1);
	tg_tensor *o = tg_contiguous(tg_permute(x, 2, order));
	double w[24];
	int i, j;

	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 4; j++)
			w[i * 4 + j] = h[j * 6 + i];
	expect(o, w, 24, 0);
}
END_TEST

/* ------------------------------------------- sharing, casts, pads */

START_TEST(independent_outputs_are_one_kernel_each)
{
	int64_t s[2] = { 4, 4 };
	float ha[16], hb[16], hc[16];
	tg_tensor *a = inp(ha, 2, s, 1), *b = inp(hb, 2, s, 2);
	tg_tensor *c = inp(hc, 2, s, 3);
	tg_tensor *outs[2] = { tg_add(a, b), tg_exp(tg_mul_s(c, 2)) };
	double w0[16], w1[16];
	int i;

	ck_assert_uint_eq(count_and_realize(outs, 2), 2);
	for (i = 0; i < 16; i++) {
		w0[i] = (double)ha[i] + hb[i];
		w1[i] = exp(hc[i] * 2.0);
	}
	expect(outs[0], w0, 16, 1e-6);
	expect(outs[1], w1, 16, 1e-5);
}
END_TEST

START_TEST(shared_subexpression_is_one_kernel)
{
	/* ab = a+b; ab*ab + exp(ab) */
	int64_t s[2] = { 4, 4 };
	float ha[16], hb[16];
	tg_tensor *a = inp(ha, 2, s, 1), *b = inp(hb, 2, s, 2);
	tg_tensor *ab = tg_add(a, b);
	tg_tensor *o = tg_add(tg_mul(ab, ab), tg_exp(ab));
	double w[16];
	int i;

	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 16; i++) {
		double v = (double)ha[i] + hb[i];

		w[i] = v * v + exp(v);
	}
	expect(o, w, 16, 1e-5);
}
END_TEST

START_TEST(cast_chain_is_one_kernel)
{
	/* float32 -> int32 -> float16 -> float32 */
	int64_t s[2] = { 4, 4 };
	float ha[16];
	tg_tensor *a, *o;
	double w[16];
	int i;

	if (!ot_dtypes_ok(TG_INT32, TG_FLOAT16))
		return;
	a = inp(ha, 2, s, 1);
	o = tg_cast(tg_cast(tg_cast(tg_mul_s(a, 10), TG_INT32), TG_FLOAT16),
	            TG_FLOAT32);
	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 16; i++)
		w[i] = trunc((double)(ha[i] * 10.0f));
	expect(o, w, 16, 0);
}
END_TEST

START_TEST(pad_with_value_of_elementwise_is_one_kernel)
{
	int64_t s[2] = { 4, 4 }, p[4] = { 1, 1, 1, 1 };
	float ha[16], hb[16];
	tg_tensor *a = inp(ha, 2, s, 1), *b = inp(hb, 2, s, 2);
	tg_tensor *o = tg_pad(tg_add(a, b), 2, p, 2.0);
	double w[36];
	int i, j;

	ck_assert_uint_eq(count1(o), 1);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++)
			w[i * 6 + j] = i < 1 || i > 4 || j < 1 || j > 4 ? 2.0 :
			               (double)ha[(i - 1) * 4 + j - 1] +
			               hb[(i - 1) * 4 + j - 1];
	expect(o, w, 36, 1e-6);
}
END_TEST

START_TEST(log_of_padded_sum_is_one_kernel)
{
	/* the padded op (add) has f(0) == 0: the pad fuses */
	int64_t s[2] = { 4, 4 }, p[4] = { 1, 1, 1, 1 };
	float ha[16], hb[16];
	tg_tensor *a = inp_(ha, 2, s, 1, 1), *b = inp_(hb, 2, s, 2, 1);
	tg_tensor *o = tg_log(tg_pad(tg_add(a, b), 2, p, 0));
	float *got;
	int i, j;

	ck_assert_uint_eq(count1(o), 1);
	got = get(o, 36);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++) {
			float g = got[i * 6 + j];

			if (i < 1 || i > 4 || j < 1 || j > 4)
				ck_assert_msg(isinf(g) && g < 0, "pad %d,%d: %g",
				              i, j, (double)g);
			else
				ck_assert_double_eq_tol(
					g, log((double)ha[(i - 1) * 4 + j - 1] +
					       hb[(i - 1) * 4 + j - 1]), 1e-5);
		}
	free(got);
}
END_TEST

START_TEST(unsafe_pad_is_realized_first)
{
	/* exp2(0) != 0: the exp2 is realized before the pad */
	int64_t s[2] = { 4, 4 }, p[4] = { 1, 1, 1, 1 };
	float ha[16];
	tg_tensor *a = inp(ha, 2, s, 1);
	tg_tensor *o = tg_sqrt(tg_pad(tg_exp2(a), 2, p, 0));
	double w[36];
	int i, j;

	ck_assert_uint_eq(count1(o), 2);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++)
			w[i * 6 + j] = i < 1 || i > 4 || j < 1 || j > 4 ? 0 :
			               sqrt(exp2(ha[(i - 1) * 4 + j - 1]));
	expect(o, w, 36, 1e-5);
}
END_TEST

START_TEST(sum_of_unsafe_pad_with_value_is_two_kernels)
{
	/* a.log2().pad(..., 1.0).sum() */
	int64_t s[2] = { 4, 4 }, p[4] = { 0, 1, 0, 1 };
	float ha[16];
	tg_tensor *a = inp_(ha, 2, s, 1, 1);
	tg_tensor *o = tg_sum(tg_pad(tg_log2(a), 2, p, 1.0), NULL, 0, 0);
	double w = 9; /* the 9 padded cells */
	int i;

	ck_assert_uint_eq(count1(o), 2);
	for (i = 0; i < 16; i++)
		w += log2(ha[i]);
	expect(o, &w, 1, 1e-5);
}
END_TEST

/* triu/tril: the mask is views of a constant, fused into the where. */
START_TEST(triu_and_tril_are_one_kernel)
{
	int64_t s[2] = { 5, 5 };
	float h[25];
	tg_tensor *x = inp(h, 2, s, 4);
	static const int64_t ks[4] = { 0, 1, -1, 3 };
	double w[25];
	int i, j, q;

	for (q = 0; q < 4; q++) {
		ck_assert_uint_eq(count1(tg_triu(x, ks[q])), 1);
		ck_assert_uint_eq(count1(tg_tril(x, ks[q])), 1);
		for (i = 0; i < 5; i++)
			for (j = 0; j < 5; j++)
				w[i * 5 + j] = j - i >= ks[q] ? h[i * 5 + j] : 0;
		expect(tg_triu(x, ks[q]), w, 25, 0);
		for (i = 0; i < 5; i++)
			for (j = 0; j < 5; j++)
				w[i * 5 + j] = j - i <= ks[q] ? h[i * 5 + j] : 0;
		expect(tg_tril(x, ks[q]), w, 25, 0);
	}
}
END_TEST

/* -------------------------------------------------------- attention */

/* q, k, v (2,2,8,4); keep (8,8) or NULL: where false, the score is
 * -inf; causal: keep j <= i */
static void sdpa_ref(const float *q, const float *k, const float *v,
                     const uint8_t *keep, int causal, double *out)
{
	int bh, i, j, d;

	for (bh = 0; bh < 4; bh++)
		for (i = 0; i < 8; i++) {
			double sc[8], m = -INFINITY, z = 0;

			for (j = 0; j < 8; j++) {
				double acc = 0;
				int off = (causal && j > i) ||
				          (keep && !keep[i * 8 + j]);

				for (d = 0; d < 4; d++)
					acc += (double)q[(bh * 8 + i) * 4 + d] *
					       k[(bh * 8 + j) * 4 + d];
				sc[j] = off ? -INFINITY : acc / 2;
				m = fmax(m, sc[j]);
			}
			for (j = 0; j < 8; j++)
				z += sc[j] = exp(sc[j] - m);
			for (d = 0; d < 4; d++) {
				double acc = 0;

				for (j = 0; j < 8; j++)
					acc += sc[j] / z * v[(bh * 8 + j) * 4 + d];
				out[(bh * 8 + i) * 4 + d] = acc;
			}
		}
}

START_TEST(attention_is_five_kernels)
{
	int64_t s[4] = { 2, 2, 8, 4 }, sm[2] = { 8, 8 };
	float hq[128], hk[128], hv[128];
	uint8_t keep[64];
	tg_tensor *q = inp(hq, 4, s, 1), *k = inp(hk, 4, s, 2);
	tg_tensor *v = inp(hv, 4, s, 3), *mask;
	tg_tensor *o, *om, *oc;
	double w[128];
	int i;

	for (i = 0; i < 64; i++)
		keep[i] = (i * 5) % 7 != 3 || i % 8 == 0;
	mask = tg_tensor_new(dev, TG_BOOL, 2, sm, keep);
	ck_assert_msg(mask && tg_realize(mask) == 0, "%s", tg_last_error());
	o = tg_scaled_dot_product_attention(q, k, v, NULL, 0);
	om = tg_scaled_dot_product_attention(q, k, v, mask, 0);
	/* the causal mask is views of a constant, as tinygrad's */
	oc = tg_scaled_dot_product_attention(q, k, v, NULL, 1);
	/* counted before any runs: they share q k^T */
	ck_assert_uint_eq(nkernels(&o, 1), 5);
	ck_assert_uint_eq(nkernels(&om, 1), 6);
	ck_assert_uint_eq(nkernels(&oc, 1), 6);
	ck_assert_int_eq(tg_realize(o), 0);
	ck_assert_int_eq(tg_realize(om), 0);
	ck_assert_int_eq(tg_realize(oc), 0);
	sdpa_ref(hq, hk, hv, NULL, 0, w);
	expect(o, w, 128, 1e-5);
	sdpa_ref(hq, hk, hv, keep, 0, w);
	expect(om, w, 128, 1e-5);
	sdpa_ref(hq, hk, hv, NULL, 1, w);
	expect(oc, w, 128, 1e-5);
}
END_TEST

/* ------------------------------------------------------------ errors */

/* Two devices of the MOCK test plugin (it has two). */
static void mock_devices(tg_dev **d0, tg_dev **d1)
{
	char path[512];

	tg_scope_end();
	tl_use_plugins(tl_plugin("mock", path, sizeof path));
	tg_scope_begin();
	*d0 = tg_dev_get("MOCK");
	ck_assert_msg(*d0 != NULL, "%s", tg_last_error());
	*d1 = tg_dev_get("MOCK:1");
	ck_assert_msg(*d1 != NULL, "%s", tg_last_error());
	ck_assert_ptr_ne(*d0, *d1);
}

/* Whether hay contains needle, ignoring ASCII case. */
static int has_nocase(const char *hay, const char *needle)
{
	size_t i, n = strlen(needle);

	for (; *hay; hay++) {
		for (i = 0; i < n && hay[i]; i++)
			if ((hay[i] | 0x20) != (needle[i] | 0x20))
				break;
		if (i == n)
			return 1;
	}
	return 0;
}

/* Asserts the last error names op (in any case) and both devices. */
static void expect_dev_error(const char *op)
{
	const char *e = tg_last_error();

	ck_assert_msg(has_nocase(e, op), "\"%s\" lacks \"%s\"", e, op);
	ck_assert_msg(strstr(e, "MOCK:1") != NULL, "\"%s\" lacks MOCK:1", e);
	ck_assert_msg(strstr(e, "MOCK ") != NULL || strstr(e, "MOCK,") ||
	              strstr(e, "MOCK)"), "\"%s\" lacks MOCK", e);
}

START_TEST(binary_op_across_devices_fails)
{
	int64_t s[2] = { 2, 3 };
	tg_dev *d0, *d1;
	tg_tensor *a, *b;

	mock_devices(&d0, &d1);
	a = tg_zeros(d0, TG_FLOAT32, 2, s);
	b = tg_zeros(d1, TG_FLOAT32, 2, s);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	tg_clear_error();
	ck_assert_ptr_null(tg_add(a, b));
	expect_dev_error("add");
}
END_TEST

START_TEST(where_and_matmul_across_devices_fail)
{
	int64_t s[2] = { 3, 3 };
	tg_dev *d0, *d1;
	tg_tensor *a, *b;

	mock_devices(&d0, &d1);
	a = tg_zeros(d0, TG_FLOAT32, 2, s);
	b = tg_zeros(d1, TG_FLOAT32, 2, s);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	tg_clear_error();
	ck_assert_ptr_null(tg_where(tg_lt(a, a), a, b));
	expect_dev_error("where");
	tg_clear_error();
	ck_assert_ptr_null(tg_matmul(a, b));
	expect_dev_error("matmul");
}
END_TEST

/* Every binary op names itself and both devices. */
START_TEST(each_binary_op_names_itself_across_devices)
{
	static const struct {
		const char *msg;
		tg_tensor *(*fn)(const tg_tensor *, const tg_tensor *);
	} ops[] = {
		{ "sub: tensors on MOCK and MOCK:1", tg_sub },
		{ "div: tensors on MOCK and MOCK:1", tg_div },
		{ "pow: tensors on MOCK and MOCK:1", tg_pow },
		{ "eq: tensors on MOCK and MOCK:1", tg_eq },
		{ "lt: tensors on MOCK and MOCK:1", tg_lt },
		{ "maximum: tensors on MOCK and MOCK:1", tg_maximum },
		{ "bitwise_xor: tensors on MOCK and MOCK:1", tg_bitwise_xor },
	};
	int64_t s[1] = { 4 };
	tg_dev *d0, *d1;
	tg_tensor *a, *b;
	size_t i;

	mock_devices(&d0, &d1);
	a = tg_zeros(d0, TG_INT32, 1, s);
	b = tg_zeros(d1, TG_INT32, 1, s);
	for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		tg_clear_error();
		ck_assert_ptr_null(ops[i].fn(a, b));
		ck_assert_error(ops[i].msg);
	}
	ck_assert_ptr_null(tg_where(tg_lt(b, b), a, a));
	ck_assert_error("where: tensors on MOCK:1 and MOCK");
}
END_TEST

/* The copies and kernels of one schedule for t. */
static void count_items(tg_tensor *t, size_t *kernels, size_t *copies)
{
	tg_lazy *l = t->lazy;
	tg_schedule sc;
	tg_settings set;
	size_t i;

	*kernels = *copies = 0;
	ck_assert_int_eq(tg_settings_read(&set), 0);
	ck_assert_msg(tg_schedule_create(&l, 1, &set, &sc) == 0, "%s",
	              tg_last_error());
	for (i = 0; i < sc.items.n; i++) {
		*kernels += sc.items.v[i].ast != NULL;
		*copies += sc.items.v[i].ast == NULL;
	}
	tg_schedule_free(&sc);
}

/* CPU -> MOCK -> CPU (CPU standing for the device under test) with
 * values kept.  A copy there and straight back
 * folds away (tinygrad's copy of a copy); realized on MOCK in between,
 * each way is one copy item. */
START_TEST(copies_between_devices_keep_values)
{
	char path[1024], mock[512];
	const char *cpu = getenv("TG_PLUGIN_PATH");
	int64_t s[1] = { 10 };
	float hx[10], got[10];
	tg_dev *c, *m;
	tg_tensor *x, *on_m, *r;
	size_t i, nk, nc;

	snprintf(path, sizeof path, "%s:%s", cpu ? cpu : "plugins/cpu",
	         tl_plugin("mock", mock, sizeof mock));
	tg_scope_end();
	tl_use_plugins(path);
	tg_scope_begin();
	c = tg_dev_get(dev_name);
	m = tg_dev_get("MOCK");
	ck_assert_msg(c && m, "%s", tg_last_error());
	for (i = 0; i < 10; i++)
		hx[i] = (float)i - 4.5f;
	x = tg_tensor_new(c, TG_FLOAT32, 1, s, hx);
	ck_assert_int_eq(tg_realize(x), 0);
	r = tg_to(tg_to(tg_mul_s(x, 2), m), c);
	count_items(r, &nk, &nc);
	ck_assert_uint_eq(nk, 1);
	ck_assert_uint_eq(nc, 0);
	on_m = tg_to(tg_mul_s(x, 2), m);
	ck_assert_ptr_eq(tg_tensor_dev(on_m), m);
	count_items(on_m, &nk, &nc);
	ck_assert_uint_eq(nk, 1);
	ck_assert_uint_eq(nc, 1);
	ck_assert_int_eq(tg_realize(on_m), 0);
	r = tg_add_s(tg_to(on_m, c), 1);
	ck_assert_ptr_eq(tg_tensor_dev(r), c);
	count_items(r, &nk, &nc);
	ck_assert_uint_eq(nk, 1);
	ck_assert_uint_eq(nc, 1);
	ck_assert_int_eq(tg_tensor_data(r, got, sizeof got), 0);
	for (i = 0; i < 10; i++)
		ck_assert_float_eq(got[i], 2 * hx[i] + 1);
	ck_assert_int_eq(tg_tensor_data(on_m, got, sizeof got), 0);
	for (i = 0; i < 10; i++)
		ck_assert_float_eq(got[i], 2 * hx[i]);
}
END_TEST

static Suite *kernels_suite(void)
{
	Suite *s = suite_create("kernels");
	TCase *t = tcase_create("counts");
	TCase *e = tcase_create("errors");

	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, elementwise_chain_is_one_kernel);
	tcase_add_test(t, sum_of_product_is_one_kernel);
	tcase_add_test(t, sum_of_sum_plus_vector_is_one_kernel);
	tcase_add_test(t, sum_and_max_of_one_input_are_two_kernels);
	tcase_add_test(t, two_sums_over_different_axes_are_two_kernels);
	tcase_add_test(t, where_of_a_compare_is_one_kernel);
	tcase_add_test(t, mean_is_one_kernel);
	tcase_add_test(t, var_and_std_are_two_kernels);
	tcase_add_test(t, reduce_broadcast_back_is_two_kernels);
	tcase_add_test(t, large_sum_splits_into_two_kernels);
	tcase_add_test(t, split_settings_choose_the_kernels);
	tcase_add_test(t, softmax_is_three_kernels);
	tcase_add_test(t, log_softmax_is_three_kernels);
	tcase_add_test(t, layernorm_is_three_kernels);
	tcase_add_test(t, matmul_is_one_kernel);
	tcase_add_test(t, matmul_bias_relu_is_one_kernel);
	tcase_add_test(t, linear_is_one_kernel);
	tcase_add_test(t, conv2d_is_one_kernel);
	tcase_add_test(t, conv2d_relu_is_one_kernel);
	tcase_add_test(t, conv2d_bias_relu_is_one_kernel);
	tcase_add_test(t, max_pool_after_conv_is_two_kernels);
	tcase_add_test(t, pools_are_one_kernel);
	tcase_add_test(t, argmax_is_three_kernels);
	tcase_add_test(t, cumsum_is_one_kernel);
	tcase_add_test(t, arange_is_one_kernel);
	tcase_add_test(t, arange_plus_input_is_one_kernel);
	tcase_add_test(t, one_hot_is_two_kernels);
	tcase_add_test(t, gather_is_two_kernels);
	tcase_add_test(t, cat_of_computed_tensors_is_one_kernel);
	tcase_add_test(t, contiguous_permute_is_one_kernel);
	tcase_add_test(t, independent_outputs_are_one_kernel_each);
	tcase_add_test(t, shared_subexpression_is_one_kernel);
	tcase_add_test(t, cast_chain_is_one_kernel);
	tcase_add_test(t, pad_with_value_of_elementwise_is_one_kernel);
	tcase_add_test(t, log_of_padded_sum_is_one_kernel);
	tcase_add_test(t, unsafe_pad_is_realized_first);
	tcase_add_test(t, sum_of_unsafe_pad_with_value_is_two_kernels);
	tcase_add_test(t, triu_and_tril_are_one_kernel);
	tcase_add_test(t, attention_is_five_kernels);
	suite_add_tcase(s, t);
	tcase_add_checked_fixture(e, setup, teardown);
	tcase_add_test(e, binary_op_across_devices_fails);
	tcase_add_test(e, where_and_matmul_across_devices_fail);
	tcase_add_test(e, each_binary_op_names_itself_across_devices);
	tcase_add_test(e, copies_between_devices_keep_values);
	suite_add_tcase(s, e);
	return s;
}

int main(void)
{
	return tl_run(kernels_suite());
}

/*
 * test_nn.c - the nn layers (nn/linear.c, conv.c, norm.c, params.c): each layer's output
 * shape, its values on tiny inputs with weights set by tg_assign against
 * C loops in double, the initializations' bounds read back from the
 * tensors, BatchNorm in training (batch statistics, running statistics
 * updated once realized) and in eval mode with exact numbers, dropout,
 * gradients through every layer, the parameter names, and the errors.
 */
#include "config.h"

#include <math.h>

#include "testlib.h"
#include "../libtgcore/tensor/tensor.h"

#define TOL 1e-4

static int was_training;

static void setup(void)
{
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	was_training = tg_set_training(0);
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	tg_set_training(was_training);
	tg_shutdown();
}

/* ------------------------------------------------------------ helpers */

/* Deterministic test values in [-1.25, 1.25], multiples of 1/4. */
static float val(int64_t i, int salt)
{
	return (float)(((i * 7 + salt * 3) % 11) - 5) * 0.25f;
}

static int64_t numel(size_t nd, const int64_t *s)
{
	int64_t n = 1;
	size_t i;

	for (i = 0; i < nd; i++)
		n *= s[i];
	return n;
}

/* A float32 tensor of shape s filled with val(., salt). */
static tg_tensor *filled(size_t nd, const int64_t *s, int salt, float *out)
{
	static float buf[4096];
	int64_t i, n = numel(nd, s);

	ck_assert_int_le(n, 4096);
	for (i = 0; i < n; i++)
		buf[i] = val(i, salt);
	if (out)
		memcpy(out, buf, (size_t)n * sizeof *buf);
	return tg_tensor_new(NULL, TG_FLOAT32, nd, s, buf);
}

/* Assigns val(., salt) to a layer's tensor; the values into out. */
static void set(tg_tensor *t, int salt, float *out)
{
	tg_tensor *v = filled(tg_tensor_ndim(t), tg_tensor_shape(t), salt, out);

	ck_assert_int_eq(tg_assign(t, v), 0);
	ck_assert_int_eq(tg_realize(t), 0);
}

static void set_vals(tg_tensor *t, const float *v)
{
	tg_tensor *x = tg_tensor_new(NULL, TG_FLOAT32, tg_tensor_ndim(t),
	                             tg_tensor_shape(t), v);

	ck_assert_int_eq(tg_assign(t, x), 0);
	ck_assert_int_eq(tg_realize(t), 0);
}

static void expect_shape(const tg_tensor *t, size_t nd, const int64_t *s)
{
	char b[160];
	size_t i;

	ck_assert_msg(t != NULL, "NULL tensor: %s", tg_last_error());
	ck_assert_msg(tg_tensor_ndim(t) == nd, "shape %s, expected %zu dims",
	              tg_tensor_shape_str(t, b, sizeof b), nd);
	for (i = 0; i < nd; i++)
		ck_assert_msg(tg_tensor_shape(t)[i] == s[i], "shape %s: axis "
		              "%zu should be %lld",
		              tg_tensor_shape_str(t, b, sizeof b), i,
		              (long long)s[i]);
}

/* Reads t (float32) into a buffer of n floats (static). */
static float *readf(tg_tensor *t, int64_t n)
{
	static float buf[8192];

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(tg_tensor_numel(t), n);
	ck_assert_int_eq(tg_tensor_data(t, buf, (size_t)n * sizeof *buf), 0);
	return buf;
}

static void expect_values(tg_tensor *t, const double *want, int64_t n)
{
	float *got = readf(t, n);
	int64_t i;

	for (i = 0; i < n; i++)
		ck_assert_msg(fabs(got[i] - want[i]) <=
		              TOL * (1 + fabs(want[i])),
		              "element %lld: %.7g, expected %.7g", (long long)i,
		              got[i], want[i]);
}

/* All values within [-bound, bound] and some near it (a spread that a
 * smaller bound would not give). */
static void expect_bound(tg_tensor *t, double bound)
{
	int64_t i, n = tg_tensor_numel(t);
	float *v = readf(t, n);
	double mx = 0;

	for (i = 0; i < n; i++) {
		ck_assert_msg(fabs(v[i]) <= bound, "%g outside +-%g", v[i],
		              bound);
		mx = fmax(mx, fabs(v[i]));
	}
	if (n >= 16) /* the chance of no value past bound/2 is below 2^-16 */
		ck_assert_msg(mx > 0.5 * bound, "largest |value| %g, bound %g",
		              mx, bound);
}

/* conv2d in double: x (n,ci,h,w), w (co,ci/g,kh,kw), padding p on every
 * side, stride s, dilation d; out (n,co,oh,ow). */
typedef struct cgeom {
	int64_t n, ci, h, w, co, kh, kw, g, p, s, d;
} cgeom;

static int64_t out_size(int64_t in, int64_t k, const cgeom *c)
{
	return (in + 2 * c->p - c->d * (k - 1) - 1) / c->s + 1;
}

/* One output of the convolution: sample n, channel o, at (y, z). */
static double conv_at(const cgeom *c, const float *x, const float *w,
                      int64_t n, int64_t o, int64_t y, int64_t z)
{
	int64_t cpg = c->ci / c->g, opg = c->co / c->g, i, ky, kx, iy, ix;
	const float *xs, *ws;
	double acc = 0;

	for (i = 0; i < cpg; i++) {
		xs = x + (n * c->ci + o / opg * cpg + i) * c->h * c->w;
		ws = w + (o * cpg + i) * c->kh * c->kw;
		for (ky = 0; ky < c->kh; ky++)
			for (kx = 0; kx < c->kw; kx++) {
				iy = y * c->s + ky * c->d - c->p;
				ix = z * c->s + kx * c->d - c->p;
				if (iy < 0 || iy >= c->h || ix < 0 ||
				    ix >= c->w)
					continue; /* padding */
				acc += (double)xs[iy * c->w + ix] *
				       ws[ky * c->kw + kx];
			}
	}
	return acc;
}

static void conv_ref(const cgeom *c, const float *x, const float *w,
                     const float *b, double *out)
{
	int64_t oh = out_size(c->h, c->kh, c), ow = out_size(c->w, c->kw, c);
	int64_t n, o, y, z;

	for (n = 0; n < c->n; n++)
		for (o = 0; o < c->co; o++)
			for (y = 0; y < oh; y++)
				for (z = 0; z < ow; z++)
					*out++ = b[o] +
					         conv_at(c, x, w, n, o, y, z);
}

/* Backward from sum(out); w and b (b may be NULL) get gradients of
 * their own shapes (realized). */
static void expect_grads(tg_tensor *out, tg_tensor *w, tg_tensor *b)
{
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(tg_backward(tg_sum(out, NULL, 0, 0), NULL), 0);
	ck_assert_ptr_nonnull(tg_grad(w));
	expect_shape(tg_grad(w), tg_tensor_ndim(w), tg_tensor_shape(w));
	ck_assert_int_eq(tg_realize(tg_grad(w)), 0);
	if (b) {
		ck_assert_ptr_nonnull(tg_grad(b));
		expect_shape(tg_grad(b), tg_tensor_ndim(b), tg_tensor_shape(b));
		ck_assert_int_eq(tg_realize(tg_grad(b)), 0);
	}
}

static void want_grad(tg_tensor *w, tg_tensor *b)
{
	ck_assert_int_eq(tg_set_requires_grad(w, 1), 0);
	if (b)
		ck_assert_int_eq(tg_set_requires_grad(b, 1), 0);
}

/* ------------------------------------------------------------- Linear */

START_TEST(linear_values_shapes_and_bias)
{
	tg_nn_linear m, nb;
	float w[6], b[2], x[6];
	double want[4];
	int64_t xs[2] = { 2, 3 }, i, o, k;
	tg_tensor *in;

	ck_assert_int_eq(tg_nn_linear_init(&m, NULL, 3, 2, 1), 0);
	expect_shape(m.weight, 2, (int64_t[]){ 2, 3 });
	expect_shape(m.bias, 1, (int64_t[]){ 2 });
	set(m.weight, 1, w);
	set(m.bias, 2, b);
	in = filled(2, xs, 3, x);
	for (i = 0; i < 2; i++)
		for (o = 0; o < 2; o++) {
			want[i * 2 + o] = b[o];
			for (k = 0; k < 3; k++)
				want[i * 2 + o] += (double)x[i * 3 + k] *
				                   w[o * 3 + k];
		}
	expect_values(tg_nn_linear_forward(&m, in), want, 4);
	in = filled(3, (int64_t[]){ 4, 5, 3 }, 0, NULL);
	expect_shape(tg_nn_linear_forward(&m, in), 3, (int64_t[]){ 4, 5, 2 });

	ck_assert_int_eq(tg_nn_linear_init(&nb, NULL, 3, 2, 0), 0);
	ck_assert_ptr_null(nb.bias);
	set(nb.weight, 1, NULL);
	for (i = 0; i < 4; i++)
		want[i] -= b[i % 2];
	expect_values(tg_nn_linear_forward(&nb, filled(2, xs, 3, NULL)), want,
	              4);
	tg_nn_linear_free(&m);
	tg_nn_linear_free(&nb);
	ck_assert_ptr_null(m.weight);
	tg_nn_linear_free(NULL);
}
END_TEST

START_TEST(linear_init_is_uniform_within_1_over_sqrt_in)
{
	tg_nn_linear m;

	ck_assert_int_eq(tg_nn_linear_init(&m, NULL, 16, 64, 1), 0);
	ck_assert_int_eq(tg_requires_grad(m.weight), -1);
	ck_assert_int_eq(tg_requires_grad(m.bias), -1);
	ck_assert_int_eq(tg_tensor_dtype(m.weight), TG_FLOAT32);
	expect_bound(m.weight, 0.25);
	expect_bound(m.bias, 0.25);
	tg_nn_linear_free(&m);
}
END_TEST

/* d sum(x W^T + b) / dW[o][i] = sum_n x[n][i]; / db[o] = N. */
START_TEST(linear_gradient_values)
{
	tg_nn_linear m;
	float x[6];
	double gw[6], gb[2];
	int64_t o, i;

	ck_assert_int_eq(tg_nn_linear_init(&m, NULL, 3, 2, 1), 0);
	set(m.weight, 1, NULL);
	want_grad(m.weight, m.bias);
	expect_grads(tg_nn_linear_forward(&m, filled(2, (int64_t[]){ 2, 3 }, 3,
	                                             x)),
	             m.weight, m.bias);
	for (o = 0; o < 2; o++) {
		gb[o] = 2;
		for (i = 0; i < 3; i++)
			gw[o * 3 + i] = (double)x[i] + x[3 + i];
	}
	expect_values(tg_grad(m.weight), gw, 6);
	expect_values(tg_grad(m.bias), gb, 2);
	tg_nn_linear_free(&m);
}
END_TEST

/* Parameters made inside a caller's scope belong to the layer. */
START_TEST(layer_tensors_outlive_the_callers_scope)
{
	tg_nn_linear m;
	tg_tensor *y;

	tg_scope_begin();
	ck_assert_int_eq(tg_nn_linear_init(&m, NULL, 4, 3, 1), 0);
	tg_scope_end();
	tg_scope_begin();
	y = tg_keep(tg_nn_linear_forward(&m, filled(2, (int64_t[]){ 2, 4 }, 1,
	                                            NULL)));
	tg_scope_end();
	ck_assert_int_eq(tg_realize(y), 0);
	tg_nn_linear_free(&m);
}
END_TEST

/* ------------------------------------------------------- convolutions */

START_TEST(conv2d_values_with_groups_stride_padding)
{
	cgeom c = { .n = 2, .ci = 4, .h = 5, .w = 5, .co = 2, .kh = 3, .kw = 3,
	            .g = 2, .p = 1, .s = 2, .d = 1 };
	tg_conv_opts o = { .stride = { 2, 2 }, .padding = { 1, 1, 1, 1 },
	                   .groups = 2 };
	tg_nn_conv2d m;
	float x[200], w[36], b[2];
	double want[36];
	tg_tensor *y;

	ck_assert_int_eq(tg_nn_conv2d_init(&m, NULL, 4, 2, (int64_t[]){ 3, 3 },
	                                   &o, 1), 0);
	expect_shape(m.weight, 4, (int64_t[]){ 2, 2, 3, 3 });
	ck_assert_int_eq(m.opts.dilation[0], 1);
	set(m.weight, 1, w);
	set(m.bias, 2, b);
	y = tg_nn_conv2d_forward(&m, filled(4, (int64_t[]){ 2, 4, 5, 5 }, 3,
	                                    x));
	expect_shape(y, 4, (int64_t[]){ 2, 2, 3, 3 });
	conv_ref(&c, x, w, b, want);
	expect_values(y, want, 36);
	tg_nn_conv2d_free(&m);
}
END_TEST

START_TEST(conv2d_default_opts_and_init_bounds)
{
	tg_nn_conv2d m;
	tg_tensor *x;

	ck_assert_int_eq(tg_nn_conv2d_init(&m, NULL, 8, 16, (int64_t[]){ 3, 2 },
	                                   NULL, 1), 0);
	ck_assert_int_eq(m.opts.stride[1], 1);
	ck_assert_int_eq(m.opts.groups, 1);
	/* kaiming_uniform(a=sqrt(5)): 1/sqrt(fan_in), fan_in = 8*3*2 */
	expect_bound(m.weight, 1 / sqrt(48.0));
	expect_bound(m.bias, 1 / sqrt(48.0));
	x = filled(4, (int64_t[]){ 1, 8, 6, 5 }, 0, NULL);
	expect_shape(tg_nn_conv2d_forward(&m, x), 4,
	             (int64_t[]){ 1, 16, 4, 4 });
	tg_nn_conv2d_free(&m);
	/* groups: fan_in counts one group's channels */
	ck_assert_int_eq(tg_nn_conv2d_init(&m, NULL, 8, 16, (int64_t[]){ 3, 3 },
	                                   &(tg_conv_opts){ .groups = 4 }, 0),
	                 0);
	ck_assert_ptr_null(m.bias);
	expect_shape(m.weight, 4, (int64_t[]){ 16, 2, 3, 3 });
	expect_bound(m.weight, 1 / sqrt(18.0));
	tg_nn_conv2d_free(&m);
}
END_TEST

START_TEST(conv1d_values_and_shapes)
{
	cgeom c = { .n = 2, .ci = 2, .h = 1, .w = 7, .co = 3, .kh = 1, .kw = 3,
	            .g = 1, .p = 0, .s = 1, .d = 2 };
	tg_nn_conv1d m;
	float x[28], w[18], b[3];
	double want[42];
	tg_tensor *y;
	int64_t i;

	ck_assert_int_eq(tg_nn_conv1d_init(&m, NULL, 2, 3, 3, 1, 1, 2, 1, 1),
	                 0);
	expect_shape(m.weight, 3, (int64_t[]){ 3, 2, 3 });
	expect_bound(m.weight, 1 / sqrt(6.0));
	set(m.weight, 1, w);
	set(m.bias, 2, b);
	y = tg_nn_conv1d_forward(&m, filled(3, (int64_t[]){ 2, 2, 7 }, 3, x));
	/* L = 7 + 2 - 2*2 = 5; the reference pads H too, so pad W by hand */
	expect_shape(y, 3, (int64_t[]){ 2, 3, 5 });
	{
		float xp[36] = { 0 };

		for (i = 0; i < 28; i++)
			xp[i / 7 * 9 + i % 7 + 1] = x[i];
		c.w = 9;
		conv_ref(&c, xp, w, b, want);
	}
	expect_values(y, want, 30);
	tg_nn_conv1d_free(&m);
}
END_TEST

/* Stride 2 with a 2x2 kernel: each input pixel paints its own 2x2
 * block of the output, x[ci][i][j] * w[ci][co] added over ci. */
static void convt_ref(const float *x, const float *w, const float *b,
                      double *want)
{
	int64_t ci, co, y, z, px, k;

	for (co = 0; co < 3; co++)
		for (y = 0; y < 6; y++)
			for (z = 0; z < 6; z++) {
				double acc = b[co];

				px = y / 2 * 3 + z / 2;
				k = y % 2 * 2 + z % 2;
				for (ci = 0; ci < 2; ci++)
					acc += (double)x[ci * 9 + px] *
					       w[(ci * 3 + co) * 4 + k];
				want[(co * 6 + y) * 6 + z] = acc;
			}
}

START_TEST(conv_transpose2d_values_and_shapes)
{
	tg_conv_opts o = { .stride = { 2, 2 } };
	int64_t k[2] = { 2, 2 };
	tg_nn_conv_transpose2d m;
	float x[18], w[24], b[3];
	double want[108];
	tg_tensor *in, *y;

	ck_assert_int_eq(tg_nn_conv_transpose2d_init(&m, NULL, 2, 3, k, &o, 1),
	                 0);
	expect_shape(m.weight, 4, (int64_t[]){ 2, 3, 2, 2 });
	expect_bound(m.weight, 1 / sqrt(12.0));
	expect_bound(m.bias, 1 / sqrt(12.0));
	set(m.weight, 1, w);
	set(m.bias, 2, b);
	in = filled(4, (int64_t[]){ 1, 2, 3, 3 }, 3, x);
	convt_ref(x, w, b, want);
	y = tg_nn_conv_transpose2d_forward(&m, in);
	expect_shape(y, 4, (int64_t[]){ 1, 3, 6, 6 });
	expect_values(y, want, 108);
	tg_nn_conv_transpose2d_free(&m);
}
END_TEST

/* ConvTranspose1d from its definition (scatter-add): x[ci][i] *
 * w[ci][co][k] lands on output i*2 - 1 + k; L = (4-1)*2 - 2 + 2 + 1 + 1
 * = 8 with output_padding 1. */
START_TEST(conv_transpose1d_values_and_shapes)
{
	tg_conv_opts o = { .stride = { 2 }, .padding = { 1, 1 },
	                   .output_padding = { 1 } };
	tg_nn_conv_transpose1d m;
	float x[16], w[18], b[3];
	double want[48];
	int64_t n, ci, co, i, k;
	tg_tensor *y;

	ck_assert_int_eq(tg_nn_conv_transpose1d_init(&m, NULL, 2, 3, 3, &o, 1),
	                 0);
	expect_shape(m.weight, 3, (int64_t[]){ 2, 3, 3 });
	expect_bound(m.weight, 1 / sqrt(9.0));
	expect_bound(m.bias, 1 / sqrt(9.0));
	ck_assert_int_eq(m.opts.dilation[0], 1);
	set(m.weight, 1, w);
	set(m.bias, 2, b);
	for (i = 0; i < 48; i++)
		want[i] = b[i / 8 % 3];
	y = tg_nn_conv_transpose1d_forward(&m, filled(3, (int64_t[]){ 2, 2, 4 },
	                                              3, x));
	for (n = 0; n < 2; n++)
		for (ci = 0; ci < 2; ci++)
			for (i = 0; i < 4; i++)
				for (co = 0; co < 3; co++)
					for (k = 0; k < 3; k++) {
						int64_t at = i * 2 - 1 + k;

						if (at >= 0 && at < 8)
							want[(n * 3 + co) * 8 + at] +=
								(double)x[(n * 2 + ci) * 4 + i] *
								w[(ci * 3 + co) * 3 + k];
					}
	expect_shape(y, 3, (int64_t[]){ 2, 3, 8 });
	expect_values(y, want, 48);
	tg_nn_conv_transpose1d_free(&m);
	ck_assert_ptr_null(m.weight);
}
END_TEST

START_TEST(conv_gradients_have_parameter_shapes)
{
	tg_nn_conv2d c2;
	tg_nn_conv1d c1;
	tg_nn_conv_transpose2d ct;
	tg_nn_conv_transpose1d ct1;
	tg_conv_opts o = { 0 };
	int64_t k[2] = { 3, 3 };
	tg_tensor *x;

	ck_assert_int_eq(tg_nn_conv2d_init(&c2, NULL, 2, 3, (int64_t[]){ 2, 2 },
	                                   NULL, 1), 0);
	want_grad(c2.weight, c2.bias);
	x = filled(4, (int64_t[]){ 1, 2, 4, 4 }, 1, NULL);
	expect_grads(tg_nn_conv2d_forward(&c2, x), c2.weight, c2.bias);
	ck_assert_int_eq(tg_nn_conv1d_init(&c1, NULL, 2, 3, 3, 1, 0, 1, 1, 1),
	                 0);
	want_grad(c1.weight, c1.bias);
	x = filled(3, (int64_t[]){ 2, 2, 6 }, 1, NULL);
	expect_grads(tg_nn_conv1d_forward(&c1, x), c1.weight, c1.bias);
	o.groups = 2;
	ck_assert_int_eq(tg_nn_conv_transpose2d_init(&ct, NULL, 2, 4, k, &o,
	                                             1), 0);
	want_grad(ct.weight, ct.bias);
	x = filled(4, (int64_t[]){ 1, 2, 3, 3 }, 1, NULL);
	expect_grads(tg_nn_conv_transpose2d_forward(&ct, x), ct.weight,
	             ct.bias);
	ck_assert_int_eq(tg_nn_conv_transpose1d_init(&ct1, NULL, 2, 4, 2, &o,
	                                             1), 0);
	want_grad(ct1.weight, ct1.bias);
	x = filled(3, (int64_t[]){ 2, 2, 5 }, 1, NULL);
	expect_grads(tg_nn_conv_transpose1d_forward(&ct1, x), ct1.weight,
	             ct1.bias);
	tg_nn_conv_transpose1d_free(&ct1);
	tg_nn_conv2d_free(&c2);
	tg_nn_conv1d_free(&c1);
	tg_nn_conv_transpose2d_free(&ct);
}
END_TEST

/* ---------------------------------------------------------- BatchNorm */

/* x (2,2,1,2): channel 0 holds 1,2,3,4 (mean 2.5, variance 1.25,
 * unbiased 5/3), channel 1 holds 2,2,6,6 (mean 4, variance 4, unbiased
 * 16/3).  weight (2, 1), bias (0, 1). */
static const float bn_x[8] = { 1, 2, 2, 2, 3, 4, 6, 6 };

static tg_tensor *bn_input(void)
{
	return tg_tensor_new(NULL, TG_FLOAT32, 4, (int64_t[]){ 2, 2, 1, 2 },
	                     bn_x);
}

static void bn_expect(tg_tensor *y, const double *mean, const double *var)
{
	static const double w[2] = { 2, 1 }, b[2] = { 0, 1 };
	double want[8];
	int i;

	for (i = 0; i < 8; i++) {
		int c = i / 2 % 2;

		want[i] = (bn_x[i] - mean[c]) * w[c] / sqrt(var[c] + 1e-5) +
		          b[c];
	}
	expect_values(y, want, 8);
}

START_TEST(batchnorm_train_then_eval)
{
	tg_nn_batchnorm m;
	tg_tensor *y, *all[4];
	double mean0[2] = { 0, 0 }, var0[2] = { 1, 1 };
	double mean[2] = { 2.5, 4 }, var[2] = { 1.25, 4 };
	double rm[2] = { 0.25, 0.4 };
	double rv[2] = { 0.9 + 0.1 * 5 / 3.0, 0.9 + 0.1 * 16 / 3.0 };
	double one = 1;

	ck_assert_int_eq(tg_nn_batchnorm_init(&m, NULL, 2, 1e-5, 0.1, 1, 1), 0);
	ck_assert_int_eq(tg_requires_grad(m.running_mean), 0);
	ck_assert_int_eq(tg_requires_grad(m.num_batches_tracked), 0);
	ck_assert_int_eq(tg_requires_grad(m.weight), -1);
	expect_shape(m.num_batches_tracked, 1, (int64_t[]){ 1 });
	set_vals(m.weight, (float[]){ 2, 1 });
	set_vals(m.bias, (float[]){ 0, 1 });
	/* eval before any training: running stats 0 and 1 */
	bn_expect(tg_nn_batchnorm_forward(&m, bn_input()), mean0, var0);

	tg_set_training(1);
	y = tg_nn_batchnorm_forward(&m, bn_input());
	all[0] = y;
	all[1] = m.running_mean;
	all[2] = m.running_var;
	all[3] = m.num_batches_tracked;
	ck_assert_int_eq(tg_realize_many(all, 4), 0);
	bn_expect(y, mean, var);
	expect_values(m.running_mean, rm, 2);
	expect_values(m.running_var, rv, 2);
	expect_values(m.num_batches_tracked, &one, 1);

	tg_set_training(0);
	bn_expect(tg_nn_batchnorm_forward(&m, bn_input()), rm, rv);
	/* eval leaves the running stats alone */
	expect_values(m.running_mean, rm, 2);
	expect_values(m.num_batches_tracked, &one, 1);
	tg_nn_batchnorm_free(&m);
	ck_assert_ptr_null(m.running_var);
}
END_TEST

START_TEST(batchnorm_2d_input_untracked_and_plain)
{
	tg_nn_batchnorm m;
	/* (4,2): channel 0 holds 1,2,3,4; channel 1 holds 2,2,6,6 */
	float x[8] = { 1, 2, 2, 2, 3, 6, 4, 6 };
	double want[8], mean[2] = { 2.5, 4 }, var[2] = { 1.25, 4 };
	double zero[2] = { 0, 0 };
	int i;

	ck_assert_int_eq(tg_nn_batchnorm_init(&m, NULL, 2, 1e-5, 0.1, 0, 0), 0);
	ck_assert_ptr_null(m.weight);
	ck_assert_ptr_null(m.bias);
	for (i = 0; i < 8; i++)
		want[i] = (x[i] - mean[i % 2]) / sqrt(var[i % 2] + 1e-5);
	tg_set_training(1);
	expect_values(tg_nn_batchnorm_forward(
		&m, tg_tensor_new(NULL, TG_FLOAT32, 2, (int64_t[]){ 4, 2 }, x)),
		want, 8);
	expect_values(m.running_mean, zero, 2);
	expect_values(m.num_batches_tracked, zero, 1);
	tg_nn_batchnorm_free(&m);
}
END_TEST

START_TEST(batchnorm_gradients)
{
	tg_nn_batchnorm m;
	tg_tensor *y;

	ck_assert_int_eq(tg_nn_batchnorm_init(&m, NULL, 3, 1e-5, 0.1, 1, 1), 0);
	want_grad(m.weight, m.bias);
	tg_set_training(1);
	y = tg_nn_batchnorm_forward(&m, filled(4, (int64_t[]){ 2, 3, 2, 2 }, 1,
	                                       NULL));
	expect_grads(tg_mul(y, y), m.weight, m.bias);
	ck_assert_ptr_null(tg_grad(m.running_mean));
	tg_nn_batchnorm_free(&m);
}
END_TEST

START_TEST(functional_batchnorm_and_layernorm)
{
	float x[12];
	double want[12];
	int64_t s[2] = { 3, 4 }, i, j;
	tg_tensor *in = filled(2, s, 5, x), *mean, *invstd;

	mean = tg_tensor_new(NULL, TG_FLOAT32, 1, (int64_t[]){ 4 },
	                     (float[]){ 1, 0, -1, 0.5 });
	invstd = tg_tensor_new(NULL, TG_FLOAT32, 1, (int64_t[]){ 4 },
	                       (float[]){ 2, 1, 0.5, 4 });
	for (i = 0; i < 12; i++)
		want[i] = (x[i] - (double[]){ 1, 0, -1, 0.5 }[i % 4]) *
		          (double[]){ 2, 1, 0.5, 4 }[i % 4];
	expect_values(tg_batchnorm(in, NULL, NULL, mean, invstd), want, 12);
	for (i = 0; i < 3; i++) {
		double mu = 0, v = 0;

		for (j = 0; j < 4; j++)
			mu += x[i * 4 + j] / 4.0;
		for (j = 0; j < 4; j++)
			v += (x[i * 4 + j] - mu) * (x[i * 4 + j] - mu) / 4.0;
		for (j = 0; j < 4; j++)
			want[i * 4 + j] = (x[i * 4 + j] - mu) / sqrt(v + 1e-5);
	}
	expect_values(tg_layernorm(in, 1, 1e-5), want, 12);
	ck_assert_ptr_null(tg_layernorm(in, 3, 1e-5));
	ck_assert_error("layernorm: 3 axes of an input (3,4) (1 to its 2 "
	                "dims)");
	ck_assert_ptr_null(tg_batchnorm(in, NULL, NULL, in, invstd));
	ck_assert_error("batchnorm: mean (3,4) for 4 channels");
}
END_TEST

/* ------------------------------------------- Group, Instance, Layer */

/* Normalizes x (n, groups, m) rows into want, scaled per channel. */
static void norm_ref(const float *x, int64_t n, int64_t groups, int64_t cpg,
                     int64_t sp, const float *w, const float *b,
                     double *want)
{
	int64_t i, g, m = cpg * sp;

	for (i = 0; i < n * groups; i++) {
		const float *r = x + i * m;
		double mu = 0, v = 0;

		for (g = 0; g < m; g++)
			mu += r[g] / (double)m;
		for (g = 0; g < m; g++)
			v += (r[g] - mu) * (r[g] - mu) / (double)m;
		for (g = 0; g < m; g++) {
			int64_t c = i % groups * cpg + g / sp;

			want[i * m + g] = (r[g] - mu) / sqrt(v + 1e-5) * w[c] +
			                  b[c];
		}
	}
}

START_TEST(groupnorm_and_instancenorm_values)
{
	tg_nn_groupnorm gn;
	tg_nn_instancenorm in;
	float x[48], w[4], b[4];
	double want[48];
	int64_t s[4] = { 2, 4, 2, 3 };

	ck_assert_int_eq(tg_nn_groupnorm_init(&gn, NULL, 2, 4, 1e-5, 1), 0);
	set(gn.weight, 1, w);
	set(gn.bias, 2, b);
	filled(4, s, 3, x);
	norm_ref(x, 2, 2, 2, 6, w, b, want);
	expect_values(tg_nn_groupnorm_forward(&gn, filled(4, s, 3, NULL)), want,
	              48);
	want_grad(gn.weight, gn.bias);
	expect_grads(tg_nn_groupnorm_forward(&gn, filled(4, s, 3, NULL)),
	             gn.weight, gn.bias);

	ck_assert_int_eq(tg_nn_instancenorm_init(&in, NULL, 4, 1e-5, 1), 0);
	set(in.weight, 1, w);
	set(in.bias, 2, b);
	norm_ref(x, 2, 4, 1, 6, w, b, want);
	expect_values(tg_nn_instancenorm_forward(&in, filled(4, s, 3, NULL)),
	              want, 48);
	want_grad(in.weight, in.bias);
	expect_grads(tg_nn_instancenorm_forward(&in, filled(4, s, 3, NULL)),
	             in.weight, in.bias);
	tg_nn_groupnorm_free(&gn);
	tg_nn_instancenorm_free(&in);
	/* not affine: no parameters, plain normalization */
	ck_assert_int_eq(tg_nn_groupnorm_init(&gn, NULL, 1, 4, 1e-5, 0), 0);
	ck_assert_ptr_null(gn.weight);
	norm_ref(x, 2, 1, 4, 6, (float[]){ 1, 1, 1, 1 },
	         (float[]){ 0, 0, 0, 0 }, want);
	expect_values(tg_nn_groupnorm_forward(&gn, filled(4, s, 3, NULL)), want,
	              48);
	tg_nn_groupnorm_free(&gn);
}
END_TEST

START_TEST(layernorm_values_over_two_axes)
{
	tg_nn_layernorm m;
	float x[24], w[6], b[6];
	double want[24];
	int64_t s[3] = { 4, 2, 3 }, i, j;

	ck_assert_int_eq(tg_nn_layernorm_init(&m, NULL, 2, (int64_t[]){ 2, 3 },
	                                      1e-5, 1), 0);
	expect_shape(m.weight, 2, (int64_t[]){ 2, 3 });
	set(m.weight, 1, w);
	set(m.bias, 2, b);
	filled(3, s, 3, x);
	for (i = 0; i < 4; i++) {
		double mu = 0, v = 0;

		for (j = 0; j < 6; j++)
			mu += x[i * 6 + j] / 6.0;
		for (j = 0; j < 6; j++)
			v += (x[i * 6 + j] - mu) * (x[i * 6 + j] - mu) / 6.0;
		for (j = 0; j < 6; j++)
			want[i * 6 + j] = (x[i * 6 + j] - mu) /
			                  sqrt(v + 1e-5) * w[j] + b[j];
	}
	expect_values(tg_nn_layernorm_forward(&m, filled(3, s, 3, NULL)), want,
	              24);
	want_grad(m.weight, m.bias);
	expect_grads(tg_nn_layernorm_forward(&m, filled(3, s, 3, NULL)),
	             m.weight, m.bias);
	tg_nn_layernorm_free(&m);
}
END_TEST

/* LayerNorm2d: each pixel of (N,C,H,W) normalized over its C values,
 * then scaled and shifted per channel. */
START_TEST(layernorm2d_normalizes_each_pixel_over_channels)
{
	tg_nn_layernorm m;
	float x[48], w[3], b[3];
	double want[48];
	int64_t s[4] = { 2, 3, 2, 4 }, n, c, p;

	ck_assert_int_eq(tg_nn_layernorm_init(&m, NULL, 1, (int64_t[]){ 3 },
	                                      1e-5, 1), 0);
	set(m.weight, 1, w);
	set(m.bias, 2, b);
	filled(4, s, 3, x);
	for (n = 0; n < 2; n++)
		for (p = 0; p < 8; p++) {
			double mu = 0, v = 0;

			for (c = 0; c < 3; c++)
				mu += x[(n * 3 + c) * 8 + p] / 3.0;
			for (c = 0; c < 3; c++) {
				double d = x[(n * 3 + c) * 8 + p] - mu;

				v += d * d / 3.0;
			}
			for (c = 0; c < 3; c++)
				want[(n * 3 + c) * 8 + p] =
					(x[(n * 3 + c) * 8 + p] - mu) /
					sqrt(v + 1e-5) * w[c] + b[c];
		}
	expect_values(tg_nn_layernorm2d_forward(&m, filled(4, s, 3, NULL)),
	              want, 48);
	want_grad(m.weight, m.bias);
	expect_grads(tg_nn_layernorm2d_forward(&m, filled(4, s, 3, NULL)),
	             m.weight, m.bias);
	ck_assert_ptr_null(tg_nn_layernorm2d_forward(
		&m, filled(4, (int64_t[]){ 2, 4, 2, 3 }, 0, NULL)));
	ck_assert_error("layernorm2d: input (2,4,2,3) must be (N,C,H,W) with C "
	                "the layer's 3 channels (a normalized shape of 1 dim, "
	                "has 1)");
	ck_assert_ptr_null(tg_nn_layernorm2d_forward(
		&m, filled(3, (int64_t[]){ 2, 3, 2 }, 0, NULL)));
	ck_assert_error("layernorm2d: input (2,3,2) must be (N,C,H,W)");
	tg_nn_layernorm_free(&m);
	ck_assert_int_eq(tg_nn_layernorm_init(&m, NULL, 2, (int64_t[]){ 3, 2 },
	                                      1e-5, 0), 0);
	ck_assert_ptr_null(tg_nn_layernorm2d_forward(&m, filled(4, s, 3,
	                                                        NULL)));
	ck_assert_error("(a normalized shape of 1 dim, has 2)");
	tg_nn_layernorm_free(&m);
	ck_assert_ptr_null(tg_nn_layernorm2d_forward(&m, filled(4, s, 3,
	                                                        NULL)));
	ck_assert_error("layernorm2d: no layer or not initialized");
}
END_TEST

START_TEST(rmsnorm_values)
{
	tg_nn_rmsnorm m;
	float x[12], w[4];
	double want[12];
	int64_t s[2] = { 3, 4 }, i, j;

	ck_assert_int_eq(tg_nn_rmsnorm_init(&m, NULL, 4, 1e-6), 0);
	ck_assert_double_eq(m.eps, 1e-6);
	set(m.weight, 1, w);
	filled(2, s, 3, x);
	for (i = 0; i < 3; i++) {
		double ms = 0;

		for (j = 0; j < 4; j++)
			ms += x[i * 4 + j] * x[i * 4 + j] / 4.0;
		for (j = 0; j < 4; j++)
			want[i * 4 + j] = x[i * 4 + j] / sqrt(ms + 1e-6) * w[j];
	}
	expect_values(tg_nn_rmsnorm_forward(&m, filled(2, s, 3, NULL)), want,
	              12);
	want_grad(m.weight, NULL);
	expect_grads(tg_nn_rmsnorm_forward(&m, filled(2, s, 3, NULL)), m.weight,
	             NULL);
	tg_nn_rmsnorm_free(&m);
}
END_TEST

/* ---------------------------------------------------------- Embedding */

START_TEST(embedding_rows_bounds_and_gradient)
{
	tg_nn_embedding m;
	float w[15];
	int32_t idx[4] = { 0, 4, 2, 2 };
	double want[12];
	int64_t i, j, s[2] = { 2, 2 };
	tg_tensor *ix;

	ck_assert_int_eq(tg_nn_embedding_init(&m, NULL, 5, 3), 0);
	expect_bound(m.weight, sqrt(6 / 8.0)); /* glorot: sqrt(6/(5+3)) */
	set(m.weight, 1, w);
	ix = tg_tensor_new(NULL, TG_INT32, 2, s, idx);
	for (i = 0; i < 4; i++)
		for (j = 0; j < 3; j++)
			want[i * 3 + j] = w[idx[i] * 3 + j];
	expect_shape(tg_nn_embedding_forward(&m, ix), 3,
	             (int64_t[]){ 2, 2, 3 });
	expect_values(tg_nn_embedding_forward(&m, ix), want, 12);
	/* an index out of range selects zeros, as tinygrad's */
	ix = tg_tensor_new(NULL, TG_INT32, 1, (int64_t[]){ 2 },
	                   (int32_t[]){ 7, 1 });
	for (j = 0; j < 3; j++) {
		want[j] = 0;
		want[3 + j] = w[3 + j];
	}
	expect_values(tg_nn_embedding_forward(&m, ix), want, 6);
	expect_shape(tg_nn_embedding_forward(&m, tg_empty(NULL, TG_INT32, 2,
	                                                  (int64_t[]){ 0, 2 })),
	             3, (int64_t[]){ 0, 2, 3 });
	want_grad(m.weight, NULL);
	ix = tg_tensor_new(NULL, TG_INT32, 2, s, idx);
	expect_grads(tg_nn_embedding_forward(&m, ix), m.weight, NULL);
	/* row 2 was picked twice, rows 1 and 3 never */
	{
		double g[15] = { 1, 1, 1, 0, 0, 0, 2, 2, 2, 0, 0, 0, 1, 1, 1 };

		expect_values(tg_grad(m.weight), g, 15);
	}
	tg_nn_embedding_free(&m);
}
END_TEST

/* ------------------------------------------------------------ dropout */

START_TEST(dropout_train_and_eval)
{
	int64_t n = 8000, i, zeros = 0;
	tg_tensor *x = tg_ones(NULL, TG_FLOAT32, 1, &n);
	float *v;

	v = readf(tg_dropout(x, 0.5), n);
	for (i = 0; i < n; i++)
		ck_assert_float_eq(v[i], 1.0f);
	tg_set_training(1);
	v = readf(tg_dropout(x, 0), n);
	for (i = 0; i < n; i++)
		ck_assert_float_eq(v[i], 1.0f);
	v = readf(tg_dropout(x, 0.25), n);
	for (i = 0; i < n; i++) {
		if (v[i] == 0)
			zeros++;
		else
			ck_assert_float_eq_tol(v[i], 1 / 0.75f, 1e-6);
	}
	ck_assert_msg(llabs(zeros - n / 4) < n / 40, "%lld of %lld zeroed",
	              (long long)zeros, (long long)n);
	ck_assert_ptr_null(tg_dropout(x, 1));
	ck_assert_error("dropout: probability 1 outside [0, 1)");
	tg_set_training(0);
	ck_assert_ptr_null(tg_dropout(x, -0.5));
	ck_assert_error("dropout: probability -0.5 outside [0, 1)");
	/* the gradient passes through the kept elements, scaled */
	tg_set_training(1);
	x = tg_ones(NULL, TG_FLOAT32, 1, &n);
	tg_set_requires_grad(x, 1);
	ck_assert_int_eq(tg_backward(tg_sum(tg_dropout(x, 0.5), NULL, 0, 0),
	                             NULL), 0);
	v = readf(tg_grad(x), n);
	for (i = 0; i < n; i++)
		ck_assert(v[i] == 0 || v[i] == 2);
}
END_TEST

/* ------------------------------------------------------------- params */

START_TEST(params_use_tinygrads_names)
{
	static const char *const bn[] = { "bn.weight", "bn.bias",
	                                  "bn.running_mean", "bn.running_var",
	                                  "bn.num_batches_tracked" };
	tg_state *s = tg_state_new();
	tg_nn_linear fc, nb;
	tg_nn_batchnorm b;
	tg_nn_conv2d c;
	tg_nn_conv_transpose1d ct;
	size_t i;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(tg_nn_linear_init(&fc, NULL, 2, 3, 1), 0);
	ck_assert_int_eq(tg_nn_linear_init(&nb, NULL, 2, 3, 0), 0);
	ck_assert_int_eq(tg_nn_batchnorm_init(&b, NULL, 3, 1e-5, 0.1, 1, 1), 0);
	ck_assert_int_eq(tg_nn_conv2d_init(&c, NULL, 1, 2, (int64_t[]){ 3, 3 },
	                                   NULL, 1), 0);
	ck_assert_int_eq(tg_nn_linear_params(&fc, s, "fc1"), 0);
	ck_assert_int_eq(tg_nn_linear_params(&nb, s, "fc2"), 0);
	ck_assert_int_eq(tg_nn_batchnorm_params(&b, s, "bn"), 0);
	ck_assert_int_eq(tg_nn_conv2d_params(&c, s, NULL), 0);
	ck_assert_uint_eq(tg_state_count(s), 10);
	ck_assert_str_eq(tg_state_name(s, 0), "fc1.weight");
	ck_assert_str_eq(tg_state_name(s, 1), "fc1.bias");
	ck_assert_str_eq(tg_state_name(s, 2), "fc2.weight");
	for (i = 0; i < 5; i++)
		ck_assert_str_eq(tg_state_name(s, 3 + i), bn[i]);
	ck_assert_str_eq(tg_state_name(s, 8), "weight");
	ck_assert_str_eq(tg_state_name(s, 9), "bias");
	ck_assert_ptr_eq(tg_state_get(s, "bn.running_var"), b.running_var);
	ck_assert_int_eq(tg_nn_conv_transpose1d_init(&ct, NULL, 2, 2, 3, NULL,
	                                             0), 0);
	ck_assert_int_eq(tg_nn_conv_transpose1d_params(&ct, s, "up"), 0);
	ck_assert_uint_eq(tg_state_count(s), 11);
	ck_assert_str_eq(tg_state_name(s, 10), "up.weight");
	tg_nn_conv_transpose1d_free(&ct);
	/* a second listing under the same names is refused */
	ck_assert_int_lt(tg_nn_linear_params(&fc, s, "fc1"), 0);
	ck_assert_int_lt(tg_nn_linear_params(NULL, s, "x"), 0);
	ck_assert_error("linear_params: no layer (NULL)");
	tg_nn_linear_free(&fc);
	tg_nn_linear_free(&nb);
	tg_nn_batchnorm_free(&b);
	tg_nn_conv2d_free(&c);
	/* the state keeps its own references */
	ck_assert_int_eq(tg_realize(tg_state_get(s, "fc1.weight")), 0);
	tg_state_free(s);
}
END_TEST

/* ------------------------------------------------------------- errors */

START_TEST(init_errors_name_the_layer_and_values)
{
	tg_nn_linear l;
	tg_nn_conv2d c;
	tg_nn_conv1d c1;
	tg_nn_conv_transpose1d ct1;
	tg_nn_batchnorm bn;
	tg_nn_groupnorm gn;
	tg_nn_layernorm ln;
	tg_nn_embedding e;
	tg_nn_rmsnorm r;
	tg_nn_instancenorm in;

	ck_assert_int_eq(tg_nn_linear_init(&l, NULL, 0, 3, 1), TG_EINVAL);
	ck_assert_error("linear: 0 inputs and 3 outputs");
	ck_assert_ptr_null(l.weight);
	ck_assert_int_eq(tg_nn_conv2d_init(&c, NULL, 6, 4, (int64_t[]){ 3, 3 },
	                                   &(tg_conv_opts){ .groups = 4 }, 1),
	                 TG_EINVAL);
	ck_assert_error("conv2d: 4 groups don't divide 6 in and 4 out "
	                "channels");
	ck_assert_int_eq(tg_nn_conv2d_init(&c, NULL, 6, 4, (int64_t[]){ 0, 3 },
	                                   NULL, 1), TG_EINVAL);
	ck_assert_error("conv2d: 6 in and 4 out channels, kernel (0,3)");
	ck_assert_int_eq(tg_nn_conv1d_init(&c1, NULL, 2, 2, 3, 1, -1, 1, 1, 1),
	                 TG_EINVAL);
	ck_assert_error("conv1d: padding -1 is negative");
	ck_assert_int_eq(tg_nn_conv1d_init(&c1, NULL, 2, 2, 0, 1, 0, 1, 1, 1),
	                 TG_EINVAL);
	ck_assert_error("conv1d: 2 in and 2 out channels, kernel (0,) (all "
	                "must be positive)");
	ck_assert_int_eq(tg_nn_conv_transpose1d_init(&ct1, NULL, 3, 2, 2,
	                                             &(tg_conv_opts){
	                                                     .groups = 2 }, 1),
	                 TG_EINVAL);
	ck_assert_error("conv_transpose1d: 2 groups don't divide 3 in and 2 "
	                "out channels");
	ck_assert_ptr_null(ct1.weight);
	ck_assert_int_eq(tg_nn_conv_transpose1d_init(NULL, NULL, 3, 2, 2, NULL,
	                                             1), TG_EINVAL);
	ck_assert_error("conv_transpose1d: no layer (NULL)");
	ck_assert_int_eq(tg_nn_batchnorm_init(&bn, NULL, 0, 1e-5, 0.1, 1, 1),
	                 TG_EINVAL);
	ck_assert_error("batchnorm: 0 features");
	ck_assert_int_eq(tg_nn_groupnorm_init(&gn, NULL, 3, 8, 1e-5, 1),
	                 TG_EINVAL);
	ck_assert_error("groupnorm: 3 groups don't divide 8 channels");
	ck_assert_int_eq(tg_nn_layernorm_init(&ln, NULL, 9, (int64_t[9]){ 0 },
	                                      1e-5, 1), TG_EINVAL);
	ck_assert_error("layernorm: a normalized shape of 9 dims (1 to 8)");
	ck_assert_int_eq(tg_nn_embedding_init(&e, NULL, 10, -1), TG_EINVAL);
	ck_assert_error("embedding: vocabulary 10 and size -1");
	ck_assert_int_eq(tg_nn_rmsnorm_init(&r, NULL, 0, 1e-6), TG_EINVAL);
	ck_assert_error("rmsnorm: dim 0");
	ck_assert_int_eq(tg_nn_instancenorm_init(&in, NULL, -2, 1e-5, 1),
	                 TG_EINVAL);
	ck_assert_error("instancenorm: -2 features");
	ck_assert_int_eq(tg_nn_linear_init(NULL, NULL, 1, 1, 1), TG_EINVAL);
	ck_assert_error("linear: no layer (NULL)");
}
END_TEST

START_TEST(forward_errors_name_the_layer_and_values)
{
	tg_nn_linear l;
	tg_nn_conv2d c;
	tg_nn_conv1d c1;
	tg_nn_conv_transpose2d ct;
	tg_nn_conv_transpose1d ct1;
	tg_nn_batchnorm bn;
	tg_nn_groupnorm gn;
	tg_nn_layernorm ln;
	tg_nn_embedding e;
	tg_nn_rmsnorm r;
	tg_nn_instancenorm in;
	tg_tensor *x4 = filled(4, (int64_t[]){ 8, 3, 5, 5 }, 0, NULL);
	tg_tensor *x3 = filled(3, (int64_t[]){ 2, 3, 5 }, 0, NULL);

	ck_assert_int_eq(tg_nn_linear_init(&l, NULL, 4, 2, 1), 0);
	ck_assert_ptr_null(tg_nn_linear_forward(&l, x3));
	ck_assert_error("linear: input (2,3,5) has 5 features, the layer 4");
	ck_assert_int_eq(tg_nn_batchnorm_init(&bn, NULL, 4, 1e-5, 0.1, 1, 1),
	                 0);
	ck_assert_ptr_null(tg_nn_batchnorm_forward(&bn, x4));
	ck_assert_error("batchnorm: input (8,3,5,5) has 3 channels, the "
	                "layer 4");
	ck_assert_ptr_null(tg_nn_batchnorm_forward(
		&bn, tg_ones(NULL, TG_FLOAT32, 1, (int64_t[]){ 4 })));
	ck_assert_error("batchnorm: input (4,) has 1 dims, the layer needs at "
	                "least 2");
	tg_set_training(1);
	ck_assert_ptr_null(tg_nn_batchnorm_forward(
		&bn, tg_ones(NULL, TG_FLOAT32, 2, (int64_t[]){ 1, 4 })));
	ck_assert_error("batchnorm: training needs more than one value per "
	                "channel, input (1,4)");
	tg_set_training(0);
	ck_assert_int_eq(tg_nn_conv2d_init(&c, NULL, 4, 2, (int64_t[]){ 3, 3 },
	                                   NULL, 1), 0);
	ck_assert_ptr_null(tg_nn_conv2d_forward(&c, x4));
	ck_assert_error("conv2d: input (8,3,5,5) has 3 channels, the layer 4");
	ck_assert_ptr_null(tg_nn_conv2d_forward(&c, x3));
	ck_assert_error("conv2d: input (2,3,5) has 3 dims, the layer needs at "
	                "least 4");
	ck_assert_int_eq(tg_nn_conv1d_init(&c1, NULL, 2, 2, 3, 0, 0, 0, 0, 1),
	                 0);
	ck_assert_ptr_null(tg_nn_conv1d_forward(&c1, x3));
	ck_assert_error("conv1d: input (2,3,5) has 3 channels, the layer 2");
	ck_assert_int_eq(tg_nn_conv_transpose2d_init(&ct, NULL, 2, 2,
	                                             (int64_t[]){ 2, 2 }, NULL,
	                                             1), 0);
	ck_assert_ptr_null(tg_nn_conv_transpose2d_forward(&ct, x4));
	ck_assert_error("conv_transpose2d: input (8,3,5,5) has 3 channels, the "
	                "layer 2");
	ck_assert_int_eq(tg_nn_conv_transpose1d_init(&ct1, NULL, 3, 2, 2, NULL,
	                                             1), 0);
	ck_assert_ptr_null(tg_nn_conv_transpose1d_forward(&ct1, x4));
	ck_assert_error("conv_transpose1d: input (8,3,5,5) must be (N,C,L)");
	ck_assert_ptr_null(tg_nn_conv_transpose1d_forward(
		&ct1, filled(3, (int64_t[]){ 2, 2, 4 }, 0, NULL)));
	ck_assert_error("conv_transpose1d: input (2,2,4) has 2 channels, the "
	                "layer 3");
	ck_assert_int_eq(tg_nn_groupnorm_init(&gn, NULL, 2, 4, 1e-5, 1), 0);
	ck_assert_ptr_null(tg_nn_groupnorm_forward(&gn, x3));
	ck_assert_error("groupnorm: input (2,3,5) has 3 channels, the layer 4");
	ck_assert_int_eq(tg_nn_instancenorm_init(&in, NULL, 4, 1e-5, 1), 0);
	ck_assert_ptr_null(tg_nn_instancenorm_forward(&in, x4));
	ck_assert_error("instancenorm: input (8,3,5,5) has 3 channels, the "
	                "layer 4");
	ck_assert_int_eq(tg_nn_layernorm_init(&ln, NULL, 1, (int64_t[]){ 4 },
	                                      1e-5, 1), 0);
	ck_assert_ptr_null(tg_nn_layernorm_forward(&ln, x3));
	ck_assert_error("layernorm: the last dims of input (2,3,5) must be the "
	                "normalized shape (4,)");
	ck_assert_int_eq(tg_nn_rmsnorm_init(&r, NULL, 4, 1e-6), 0);
	ck_assert_ptr_null(tg_nn_rmsnorm_forward(&r, x3));
	ck_assert_error("rmsnorm: input (2,3,5) has 5 features, the layer 4");
	ck_assert_int_eq(tg_nn_embedding_init(&e, NULL, 4, 2), 0);
	ck_assert_ptr_null(tg_nn_embedding_forward(&e, x3));
	ck_assert_error("embedding: indices (2,3,5) are float32, not an int "
	                "dtype");
	/* NULL inputs give NULL and leave the error alone */
	tg_clear_error();
	ck_assert_ptr_null(tg_nn_linear_forward(&l, NULL));
	ck_assert_ptr_null(tg_nn_batchnorm_forward(&bn, NULL));
	ck_assert_ptr_null(tg_dropout(NULL, 0.5));
	ck_assert_str_eq(tg_last_error(), "");
	tg_nn_linear_free(&l);
	ck_assert_ptr_null(tg_nn_linear_forward(&l, x3));
	ck_assert_error("linear: the layer is not initialized");
	tg_nn_batchnorm_free(&bn);
	tg_nn_conv2d_free(&c);
	tg_nn_conv1d_free(&c1);
	tg_nn_conv_transpose1d_free(&ct1);
	tg_nn_conv_transpose2d_free(&ct);
	tg_nn_groupnorm_free(&gn);
	tg_nn_instancenorm_free(&in);
	tg_nn_layernorm_free(&ln);
	tg_nn_rmsnorm_free(&r);
	tg_nn_embedding_free(&e);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nn");
	TCase *tc = tcase_create("layers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, linear_values_shapes_and_bias);
	tcase_add_test(tc, linear_init_is_uniform_within_1_over_sqrt_in);
	tcase_add_test(tc, linear_gradient_values);
	tcase_add_test(tc, layer_tensors_outlive_the_callers_scope);
	tcase_add_test(tc, conv2d_values_with_groups_stride_padding);
	tcase_add_test(tc, conv2d_default_opts_and_init_bounds);
	tcase_add_test(tc, conv1d_values_and_shapes);
	tcase_add_test(tc, conv_transpose2d_values_and_shapes);
	tcase_add_test(tc, conv_transpose1d_values_and_shapes);
	tcase_add_test(tc, conv_gradients_have_parameter_shapes);
	tcase_add_test(tc, batchnorm_train_then_eval);
	tcase_add_test(tc, batchnorm_2d_input_untracked_and_plain);
	tcase_add_test(tc, batchnorm_gradients);
	tcase_add_test(tc, functional_batchnorm_and_layernorm);
	tcase_add_test(tc, groupnorm_and_instancenorm_values);
	tcase_add_test(tc, layernorm_values_over_two_axes);
	tcase_add_test(tc, layernorm2d_normalizes_each_pixel_over_channels);
	tcase_add_test(tc, rmsnorm_values);
	tcase_add_test(tc, embedding_rows_bounds_and_gradient);
	tcase_add_test(tc, dropout_train_and_eval);
	tcase_add_test(tc, params_use_tinygrads_names);
	tcase_add_test(tc, init_errors_name_the_layer_and_values);
	tcase_add_test(tc, forward_errors_name_the_layer_and_values);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

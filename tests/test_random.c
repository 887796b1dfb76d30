/*
 * test_random.c - random tensors (tensor/random.c): Threefry2x32 in a
 * generated kernel and in the constant folder against JAX's reference
 * values (the ones tinygrad's test_randomness pins), determinism under
 * tg_manual_seed, ranges and moments of every distribution, the
 * initializers' bounds, and the errors.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "testlib.h"
#include "../libtgcore/tensor/tensor.h"

static void setup(void)
{
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	tg_shutdown();
}

/* jax.extend.random.threefry_2x32((0, 1337), arange(20, dtype=uint32)):
 * counter words (i, i + 10) for i < 10; the first ten results are the
 * low output words, the last ten the high ones. */
static const uint32_t jax_ref[20] = {
	2221762175u, 1752107825u, 653745012u, 1967534793u, 1395205442u,
	3840423848u, 2159346757u, 603508235u, 3319473678u, 3363866483u,
	3544324138u, 1436466838u, 2169858556u, 2570072943u, 2387150698u,
	3678370550u, 2911697663u, 403244401u, 2560861638u, 1692360114u,
};
#define JAX_KEY ((uint64_t)1337 << 32)

START_TEST(threefry_kernel_matches_jax)
{
	uint64_t x[10], out[10];
	int64_t n = 10;
	tg_tensor *xs, *key, *r;
	int i;

	for (i = 0; i < 10; i++)
		x[i] = (uint64_t)(i + 10) << 32 | (uint64_t)i;
	xs = tg_tensor_new(NULL, TG_UINT64, 1, &n, x);
	key = tg_t_wrap(tg_lazy_const(tg_tensor_dev(xs), TG_UINT64,
	                              (tg_scalar){ .u = JAX_KEY }, 1, &n));
	r = tg_t_alu(TG_THREEFRY, xs, key, NULL);
	ck_assert_int_eq(tg_tensor_data(r, out, sizeof out), 0);
	for (i = 0; i < 10; i++) {
		ck_assert_uint_eq((uint32_t)out[i], jax_ref[i]);
		ck_assert_uint_eq((uint32_t)(out[i] >> 32), jax_ref[10 + i]);
	}
}
END_TEST

/* Both operands constant: the lazy layer folds it on the host. */
START_TEST(threefry_folded_matches_jax)
{
	int64_t one = 1;
	tg_dev *dev = tg_dev_get("CPU");
	tg_tensor *x, *key, *r;
	uint64_t out;

	x = tg_t_wrap(tg_lazy_const(dev, TG_UINT64,
	                            (tg_scalar){ .u = (uint64_t)13 << 32 | 3 },
	                            1, &one));
	key = tg_t_wrap(tg_lazy_const(dev, TG_UINT64,
	                              (tg_scalar){ .u = JAX_KEY }, 1, &one));
	r = tg_t_alu(TG_THREEFRY, x, key, NULL);
	ck_assert_int_eq(tg_tensor_data(r, &out, sizeof out), 0);
	ck_assert_uint_eq((uint32_t)out, jax_ref[3]);
	ck_assert_uint_eq((uint32_t)(out >> 32), jax_ref[13]);
}
END_TEST

START_TEST(threefry_needs_uint64)
{
	int64_t n = 2;
	tg_tensor *a = tg_zeros(NULL, TG_UINT32, 1, &n);

	ck_assert_ptr_null(tg_t_alu(TG_THREEFRY, a, a, NULL));
	ck_assert_error("THREEFRY: operands are uint32, not uint64");
}
END_TEST

#define N 20000
static float buf[N];

static void moments(tg_tensor *t, double *mean, double *var, double *lo,
                    double *hi)
{
	double s = 0, s2 = 0;
	int i;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(tg_tensor_numel(t), N);
	ck_assert_int_eq(tg_tensor_data(tg_cast(t, TG_FLOAT32), buf,
	                                sizeof buf), 0);
	*lo = INFINITY;
	*hi = -INFINITY;
	for (i = 0; i < N; i++) {
		s += buf[i];
		s2 += (double)buf[i] * buf[i];
		*lo = fmin(*lo, buf[i]);
		*hi = fmax(*hi, buf[i]);
	}
	*mean = s / N;
	*var = s2 / N - *mean * *mean;
}

START_TEST(rand_is_uniform_in_0_1)
{
	int64_t s[2] = { 100, N / 100 };
	double m, v, lo, hi;

	tg_manual_seed(7);
	moments(tg_rand(NULL, TG_FLOAT32, 2, s), &m, &v, &lo, &hi);
	ck_assert(lo >= 0 && hi < 1);
	ck_assert_double_eq_tol(m, 0.5, 0.01);
	ck_assert_double_eq_tol(v, 1.0 / 12, 0.005);
	moments(tg_rand(NULL, TG_FLOAT16, 2, s), &m, &v, &lo, &hi);
	ck_assert(lo >= 0 && hi <= 1);
	ck_assert_double_eq_tol(m, 0.5, 0.01);
}
END_TEST

START_TEST(seed_and_call_sequence_fix_the_numbers)
{
	int64_t n = 64;
	float a[64], b[64], c[64];

	tg_manual_seed(1234);
	ck_assert_int_eq(tg_tensor_data(tg_rand(NULL, TG_FLOAT32, 1, &n), a,
	                                sizeof a), 0);
	ck_assert_int_eq(tg_tensor_data(tg_rand(NULL, TG_FLOAT32, 1, &n), b,
	                                sizeof b), 0);
	/* the counter moved: the second call differs */
	ck_assert(memcmp(a, b, sizeof a) != 0);
	tg_manual_seed(1234);
	ck_assert_int_eq(tg_tensor_data(tg_rand(NULL, TG_FLOAT32, 1, &n), c,
	                                sizeof c), 0);
	ck_assert(memcmp(a, c, sizeof a) == 0);
	tg_manual_seed(1235);
	ck_assert_int_eq(tg_tensor_data(tg_rand(NULL, TG_FLOAT32, 1, &n), c,
	                                sizeof c), 0);
	ck_assert(memcmp(a, c, sizeof a) != 0);
}
END_TEST

/* The first rand after seeding is the top 23 bits of the Threefry words
 * of counters (i, i + h) as a float in [1, 2), minus one: recomputed
 * here from the constant folder's Threefry. */
START_TEST(rand_bits_follow_the_documented_layout)
{
	int64_t n = 5, one = 1;
	tg_dev *dev = tg_dev_get("CPU");
	float got[5];
	uint32_t words[6];
	int i;

	tg_manual_seed(99);
	ck_assert_int_eq(tg_tensor_data(tg_rand(NULL, TG_FLOAT32, 1, &n), got,
	                                sizeof got), 0);
	for (i = 0; i < 3; i++) {
		uint64_t out;
		tg_tensor *x = tg_t_wrap(tg_lazy_const(dev, TG_UINT64,
		        (tg_scalar){ .u = (uint64_t)(i + 3) << 32 | (uint64_t)i },
		        1, &one));
		tg_tensor *k = tg_t_wrap(tg_lazy_const(dev, TG_UINT64,
		        (tg_scalar){ .u = 99 }, 1, &one));
		ck_assert_int_eq(tg_tensor_data(tg_t_alu(TG_THREEFRY, x, k,
		                                         NULL), &out, sizeof out),
		                 0);
		words[i] = (uint32_t)out;
		words[3 + i] = (uint32_t)(out >> 32);
	}
	for (i = 0; i < 5; i++) {
		uint32_t bits = words[i] >> 9 | 0x3f800000u;
		float f;

		memcpy(&f, &bits, 4);
		ck_assert_float_eq(got[i], f - 1.0f);
	}
}
END_TEST

START_TEST(normal_distributions_have_their_moments)
{
	int64_t s[1] = { N };
	double m, v, lo, hi;

	tg_manual_seed(3);
	moments(tg_randn(NULL, TG_FLOAT32, 1, s), &m, &v, &lo, &hi);
	ck_assert_double_eq_tol(m, 0, 0.03);
	ck_assert_double_eq_tol(v, 1, 0.05);
	ck_assert(lo < -3 && hi > 3 && isfinite(lo) && isfinite(hi));
	moments(tg_normal(NULL, TG_FLOAT32, 1, s, 5, 2), &m, &v, &lo, &hi);
	ck_assert_double_eq_tol(m, 5, 0.06);
	ck_assert_double_eq_tol(v, 4, 0.2);
	moments(tg_uniform(NULL, TG_FLOAT32, 1, s, -2, 6), &m, &v, &lo, &hi);
	ck_assert(lo >= -2 && hi < 6);
	ck_assert_double_eq_tol(m, 2, 0.08);
	ck_assert_double_eq_tol(v, 64.0 / 12, 0.2);
}
END_TEST

START_TEST(randint_covers_its_range)
{
	int64_t s[1] = { N };
	int32_t *v = malloc(N * sizeof *v);
	int seen[7] = { 0 }, i;
	tg_tensor *t;

	tg_manual_seed(5);
	t = tg_randint(NULL, 1, s, -3, 4);
	ck_assert_int_eq(tg_tensor_dtype(t), TG_INT32);
	ck_assert_int_eq(tg_tensor_data(t, v, N * sizeof *v), 0);
	for (i = 0; i < N; i++) {
		ck_assert(v[i] >= -3 && v[i] < 4);
		seen[v[i] + 3]++;
	}
	for (i = 0; i < 7; i++)
		ck_assert_int_gt(seen[i], N / 7 - N / 35);
	free(v);
}
END_TEST

START_TEST(initializers_respect_their_bounds)
{
	int64_t s[2] = { 200, N / 200 };
	double m, v, lo, hi, b;

	tg_manual_seed(11);
	moments(tg_scaled_uniform(NULL, TG_FLOAT32, 2, s), &m, &v, &lo, &hi);
	b = 1 / sqrt((double)N);
	ck_assert(lo >= -b && hi < b && hi > 0.9 * b);
	moments(tg_glorot_uniform(NULL, TG_FLOAT32, 2, s), &m, &v, &lo, &hi);
	b = sqrt(6.0 / (200 + N / 200));
	ck_assert(lo >= -b && hi < b && hi > 0.9 * b);
	moments(tg_kaiming_uniform(NULL, TG_FLOAT32, 2, s, sqrt(5)), &m, &v,
	        &lo, &hi);
	b = sqrt(3.0) * sqrt(2.0 / 6) / sqrt(N / 200.0);
	ck_assert(lo >= -b && hi < b && hi > 0.9 * b);
	moments(tg_kaiming_normal(NULL, TG_FLOAT32, 2, s, 0), &m, &v, &lo, &hi);
	ck_assert_double_eq_tol(sqrt(v), sqrt(2.0) / sqrt(N / 200.0), 0.01);
}
END_TEST

/* The draw under a seed, redone here: the same seed gives the same
 * uniforms (one rand call of (samples, rows, 1)), and the index is the
 * number of CDF entries <= u, with the CDF in double.  The weights'
 * CDFs are exact in float32, so no draw sits on a rounding edge. */
START_TEST(multinomial_inverts_the_cdf_of_the_same_draw)
{
	static const float w[2][4] = { { 1, 1, 2, 4 }, { 0, 3, 0, 1 } };
	int64_t ws[2] = { 2, 4 }, us[3] = { 50, 2, 1 }, i, r, j;
	tg_tensor *t = tg_tensor_new(NULL, TG_FLOAT32, 2, ws, w), *m;
	int32_t got[100];
	float u[100];

	tg_manual_seed(7);
	ck_assert_int_eq(tg_tensor_data(tg_rand(NULL, TG_FLOAT32, 3, us), u,
	                                sizeof u), 0);
	tg_manual_seed(7);
	m = tg_multinomial(t, 50, 1);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(tg_tensor_dtype(m), TG_INT32);
	ck_assert_int_eq(tg_tensor_shape(m)[0], 2);
	ck_assert_int_eq(tg_tensor_shape(m)[1], 50);
	ck_assert_int_eq(tg_tensor_data(m, got, sizeof got), 0);
	for (r = 0; r < 2; r++)
		for (i = 0; i < 50; i++) {
			double tot = 0, acc = 0;
			int32_t want = 0;

			for (j = 0; j < 4; j++)
				tot += w[r][j];
			for (j = 0; j < 4; j++) {
				acc += w[r][j];
				want += (double)u[i * 2 + r] >= acc / tot;
			}
			ck_assert_msg(got[r * 50 + i] == want, "row %lld sample "
			              "%lld: %d, want %d (u %.9g)", (long long)r,
			              (long long)i, got[r * 50 + i], want,
			              u[i * 2 + r]);
			ck_assert_int_ne(w[r][want], 0);
		}
}
END_TEST

/* 20000 draws from weights 1:2:3:4 (int32, 1-D): each frequency within
 * 5 standard deviations of its probability. */
START_TEST(multinomial_frequencies_follow_the_weights)
{
	static const int32_t w[4] = { 1, 2, 3, 4 };
	static int32_t got[20000];
	int64_t s[1] = { 4 }, i;
	tg_tensor *m;
	int cnt[4] = { 0 };

	tg_manual_seed(11);
	m = tg_multinomial(tg_tensor_new(NULL, TG_INT32, 1, s, w), 20000, 1);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(tg_tensor_ndim(m), 1);
	ck_assert_int_eq(tg_tensor_data(m, got, sizeof got), 0);
	for (i = 0; i < 20000; i++) {
		ck_assert(got[i] >= 0 && got[i] < 4);
		cnt[got[i]]++;
	}
	for (i = 0; i < 4; i++) {
		double p = (i + 1) / 10.0, f = cnt[i] / 20000.0;

		ck_assert_msg(fabs(f - p) < 5 * sqrt(p * (1 - p) / 20000),
		              "index %lld: frequency %g, probability %g",
		              (long long)i, f, p);
	}
	/* one sample without replacement is allowed */
	ck_assert_ptr_nonnull(tg_multinomial(tg_tensor_new(NULL, TG_INT32, 1, s,
	                                                   w), 1, 0));
}
END_TEST

START_TEST(empty_shapes_and_errors)
{
	int64_t z[2] = { 3, 0 }, s[1] = { 4 };
	tg_tensor *t = tg_rand(NULL, TG_FLOAT32, 2, z);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(tg_tensor_numel(t), 0);
	ck_assert_int_eq(tg_realize(t), 0);
	ck_assert_ptr_null(tg_rand(NULL, TG_INT32, 1, s));
	ck_assert_error("rand: dtype int32 is not a float dtype");
	ck_assert_ptr_null(tg_randn(NULL, TG_BOOL, 1, s));
	ck_assert_error("randn: dtype bool is not a float dtype");
	ck_assert_ptr_null(tg_uniform(NULL, TG_UINT8, 1, s, 0, 1));
	ck_assert_error("uniform: dtype uint8");
	ck_assert_ptr_null(tg_randint(NULL, 1, s, 4, 4));
	ck_assert_error("randint: empty or too wide range [4, 4)");
	ck_assert_ptr_null(tg_multinomial(tg_ones(NULL, TG_FLOAT32, 1, s), 2,
	                                  0));
	ck_assert_error("multinomial: 2 samples without replacement (only 1 "
	                "is supported, as in tinygrad)");
	ck_assert_ptr_null(tg_multinomial(tg_ones(NULL, TG_FLOAT32, 1, s), 0,
	                                  1));
	ck_assert_error("multinomial: weights (4,) must be 1-D or 2-D and 0 "
	                "samples positive");
	ck_assert_ptr_null(tg_multinomial(tg_ones(NULL, TG_FLOAT32, 3,
	                                          (int64_t[]){ 1, 2, 2 }), 1,
	                                  1));
	ck_assert_error("multinomial: weights (1,2,2) must be 1-D or 2-D");
	ck_assert_ptr_null(tg_multinomial(tg_ones(NULL, TG_FLOAT32, 2, z), 1,
	                                  1));
	ck_assert_error("multinomial: weights (3,0): no categories");
	tg_clear_error();
	ck_assert_ptr_null(tg_multinomial(NULL, 1, 1));
	ck_assert_str_eq(tg_last_error(), "");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("random");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, threefry_kernel_matches_jax);
	tcase_add_test(tc, threefry_folded_matches_jax);
	tcase_add_test(tc, threefry_needs_uint64);
	tcase_add_test(tc, rand_is_uniform_in_0_1);
	tcase_add_test(tc, seed_and_call_sequence_fix_the_numbers);
	tcase_add_test(tc, rand_bits_follow_the_documented_layout);
	tcase_add_test(tc, normal_distributions_have_their_moments);
	tcase_add_test(tc, randint_covers_its_range);
	tcase_add_test(tc, initializers_respect_their_bounds);
	tcase_add_test(tc, multinomial_inverts_the_cdf_of_the_same_draw);
	tcase_add_test(tc, multinomial_frequencies_follow_the_weights);
	tcase_add_test(tc, empty_shapes_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

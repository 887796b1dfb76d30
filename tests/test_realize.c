/*
 * test_realize.c - the forward path end to end on the CPU plugin: lazy
 * graphs scheduled, lowered, rendered, compiled, cached and run, with
 * results checked against plain C loops in double precision.
 */
#include "config.h"

#include <float.h>
#include <math.h>

#include "testlib.h"
#include "../libtgcore/engine/engine.h"

static tg_dev *dev;
static tg_lazy *made[256];
static size_t nmade;

static tg_lazy *keep(tg_lazy *lb)
{
	ck_assert_msg(lb != NULL, "%s", tg_last_error());
	ck_assert_uint_lt(nmade, TG_ARRAY_LEN(made));
	return made[nmade++] = lb;
}

static void setup(void)
{
	dev = tg_dev_get("CPU");
	ck_assert_ptr_nonnull(dev);
	nmade = 0;
}

static void teardown(void)
{
	while (nmade)
		tg_lazy_unref(made[--nmade]);
	tg_shutdown();
}

/* A float32 input of shape (a, b) holding f(i) at flat index i. */
static tg_lazy *input(int64_t a, int64_t b, float (*f)(int64_t))
{
	int64_t s[2] = { a, b }, i;
	tg_buffer *buf = tg_buffer_new(dev, (size_t)(a * b), TG_FLOAT32);
	float *v = malloc(sizeof(float) * (size_t)(a * b));
	tg_lazy *lb;

	for (i = 0; i < a * b; i++)
		v[i] = f(i);
	ck_assert_int_eq(tg_buffer_copyin(buf, v, sizeof(float) *
	                                  (size_t)(a * b)), 0);
	free(v);
	lb = tg_lazy_from_buffer(buf, 2, s);
	tg_buffer_unref(buf);
	return keep(lb);
}

static float ramp(int64_t i) { return (float)(i % 7) - 3.0f; }
static float wave(int64_t i) { return (float)sin((double)i * 0.37); }

static tg_lazy *kf(double v, int64_t a, int64_t b)
{
	int64_t s[2] = { a, b };
	tg_scalar x = { .f = v };

	return keep(tg_lazy_const(dev, TG_FLOAT32, x, 2, s));
}

static tg_lazy *alu(unsigned op, tg_lazy *a, tg_lazy *b)
{
	return keep(tg_lazy_alu(op, a, b, NULL));
}

static tg_lazy *expand2(tg_lazy *a, int64_t x, int64_t y)
{
	int64_t s[2] = { x, y };

	return keep(tg_lazy_expand(a, 2, s));
}

/* Realizes lb (a base or a contiguous view of one) and reads it. */
static void fetch(tg_lazy *lb, float *out, size_t n)
{
	tg_lazy *c = keep(tg_lazy_contiguous(lb));

	ck_assert_msg(tg_lazy_realize(&c, 1) == 0, "%s", tg_last_error());
	ck_assert_int_eq(tg_lazy_base(c)->kind, TG_LZ_BUFFER);
	ck_assert_int_eq(tg_buffer_copyout(tg_lazy_base(c)->buf, out,
	                                   n * sizeof(float)), 0);
}

static void near(const float *got, const double *want, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ck_assert_msg(fabs(got[i] - want[i]) <=
		              1e-5 * (1 + fabs(want[i])),
		              "[%zu]: %g, expected %g", i, got[i], want[i]);
}

START_TEST(elementwise_add_mul)
{
	tg_lazy *a = input(3, 5, ramp), *b = input(3, 5, wave);
	float got[15];
	double want[15];
	int i;

	fetch(alu(TG_MUL, alu(TG_ADD, a, b), kf(2, 3, 5)), got, 15);
	for (i = 0; i < 15; i++)
		want[i] = ((double)ramp(i) + wave(i)) * 2;
	near(got, want, 15);
}
END_TEST

START_TEST(sum_rows)
{
	tg_lazy *a = input(4, 5, ramp);
	float got[4];
	double want[4] = { 0 };
	int i;

	fetch(keep(tg_lazy_reduce(TG_ADD, a, 2)), got, 4);
	for (i = 0; i < 20; i++)
		want[i / 5] += ramp(i);
	near(got, want, 4);
}
END_TEST

START_TEST(max_columns_of_a_transpose)
{
	tg_lazy *a = input(4, 6, wave);
	uint32_t p[2] = { 1, 0 };
	tg_lazy *t = keep(tg_lazy_permute(a, 2, p)); /* (6,4) */
	float got[6];
	double want[6];
	int i, j;

	fetch(keep(tg_lazy_reduce(TG_MAX, t, 2)), got, 6);
	for (i = 0; i < 6; i++) {
		want[i] = -INFINITY;
		for (j = 0; j < 4; j++)
			want[i] = fmax(want[i], wave(j * 6 + i));
	}
	near(got, want, 6);
}
END_TEST

START_TEST(softmax_three_kernels)
{
	tg_lazy *x = input(3, 8, wave);
	tg_lazy *m = expand2(keep(tg_lazy_reduce(TG_MAX, x, 2)), 3, 8);
	tg_lazy *d = alu(TG_ADD, x, keep(tg_lazy_alu(TG_NEG, m, NULL, NULL)));
	tg_lazy *e = keep(tg_lazy_alu(TG_EXP2, d, NULL, NULL));
	tg_lazy *s = expand2(keep(tg_lazy_reduce(TG_ADD, e, 2)), 3, 8);
	tg_lazy *o = alu(TG_MUL, e, keep(tg_lazy_alu(TG_RECIP, s, NULL, NULL)));
	float got[24];
	double want[24];
	int r, c;

	fetch(o, got, 24);
	for (r = 0; r < 3; r++) {
		double mx = -INFINITY, sum = 0;

		for (c = 0; c < 8; c++)
			mx = fmax(mx, wave(r * 8 + c));
		for (c = 0; c < 8; c++)
			sum += exp2(wave(r * 8 + c) - mx);
		for (c = 0; c < 8; c++)
			want[r * 8 + c] = exp2(wave(r * 8 + c) - mx) / sum;
	}
	near(got, want, 24);
}
END_TEST

START_TEST(padded_input_reads_zeros)
{
	tg_lazy *x = input(2, 3, ramp);
	int64_t p[4] = { 1, 0, 0, 2 };
	tg_lazy *pd = keep(tg_lazy_pad(x, 2, p)); /* (3,5) */
	float got[15];
	double want[15] = { 0 };
	int r, c;

	fetch(alu(TG_ADD, pd, kf(1, 3, 5)), got, 15);
	for (r = 0; r < 3; r++)
		for (c = 0; c < 5; c++)
			want[r * 5 + c] = 1 + (r >= 1 && c < 3 ?
			                       ramp((r - 1) * 3 + c) : 0);
	near(got, want, 15);
}
END_TEST

START_TEST(matmul_bias_relu)
{
	int64_t sa[3] = { 5, 1, 7 }, sb[3] = { 1, 3, 7 }, full[3] = { 5, 3, 7 };
	int64_t s2[2] = { 5, 3 };
	uint32_t t[2] = { 1, 0 };
	tg_lazy *a = input(5, 7, wave), *b = input(7, 3, ramp);
	tg_lazy *bias = input(1, 3, wave);
	tg_lazy *ar = keep(tg_lazy_expand(keep(tg_lazy_reshape(a, 3, sa)), 3,
	                                  full));
	tg_lazy *br = keep(tg_lazy_expand(keep(tg_lazy_reshape(
		keep(tg_lazy_permute(b, 2, t)), 3, sb)), 3, full));
	tg_lazy *mm = keep(tg_lazy_reshape(keep(tg_lazy_reduce(TG_ADD,
		alu(TG_MUL, ar, br), 4)), 2, s2));
	tg_lazy *y = alu(TG_MAX, alu(TG_ADD, mm, expand2(bias, 5, 3)),
	                 kf(0, 5, 3));
	float got[15];
	double want[15];
	int i, j, k;

	fetch(y, got, 15);
	for (i = 0; i < 5; i++)
		for (j = 0; j < 3; j++) {
			double acc = wave(j);

			for (k = 0; k < 7; k++)
				acc += (double)wave(i * 7 + k) * ramp(k * 3 + j);
			want[i * 3 + j] = fmax(acc, 0);
		}
	near(got, want, 15);
}
END_TEST

START_TEST(large_sum_in_two_kernels)
{
	tg_lazy *x = input(1, 1 << 16, ramp);
	int64_t flat[1] = { 1 << 16 };
	tg_lazy *f = keep(tg_lazy_reshape(x, 1, flat));
	float got[1];
	double want = 0;
	int i;

	fetch(keep(tg_lazy_reduce(TG_ADD, f, 1)), got, 1);
	for (i = 0; i < (1 << 16); i++)
		want += ramp(i);
	near(got, &want, 1);
}
END_TEST

START_TEST(same_ast_over_other_buffers)
{
	tg_lazy *a = input(3, 5, ramp), *b = input(3, 5, wave);
	float g1[15], g2[15];

	fetch(alu(TG_ADD, a, b), g1, 15);
	/* the same AST over other buffers hits the method cache */
	fetch(alu(TG_ADD, b, a), g2, 15);
	ck_assert_float_eq(g1[3], g2[3]);
}
END_TEST

/* a(16,16) @ b(16,16) of fresh inputs, realized, into got. */
static void matmul16(float *got)
{
	int64_t sa[3] = { 16, 1, 16 }, sb[3] = { 1, 16, 16 };
	int64_t full[3] = { 16, 16, 16 }, s2[2] = { 16, 16 };
	uint32_t t[2] = { 1, 0 };
	tg_lazy *a = input(16, 16, wave), *b = input(16, 16, ramp);
	tg_lazy *ar = keep(tg_lazy_expand(keep(tg_lazy_reshape(a, 3, sa)), 3,
	                                  full));
	tg_lazy *br = keep(tg_lazy_expand(keep(tg_lazy_reshape(
		keep(tg_lazy_permute(b, 2, t)), 3, sb)), 3, full));

	fetch(keep(tg_lazy_reshape(keep(tg_lazy_reduce(TG_ADD,
		alu(TG_MUL, ar, br), 4)), 2, s2)), got, 256);
}

/* NOOPT is part of the method cache's key: the same AST realized with
 * and without it runs two kernels (named by their opts in DEBUG=2
 * lines), with the same results. */
START_TEST(noopt_keys_the_method_cache)
{
	const char *path = tl_write_file("noopt.log", "");
	float g1[256], g2[256];
	char line[256];
	int saved = dup(2), seen_noopt = 0, seen_opt = 0;
	FILE *f;

	ck_assert(freopen(path, "w", stderr) != NULL);
	tg_debug_set(2);
	setenv("NOOPT", "1", 1);
	matmul16(g1);
	unsetenv("NOOPT");
	matmul16(g2);
	tg_debug_set(0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ck_assert_int_eq(memcmp(g1, g2, sizeof g1), 0);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	/* the optimized kernel's name carries its opts' amounts, whichever
	 * the CPU's vector width made them */
	while (fgets(line, sizeof line, f)) {
		seen_noopt |= strstr(line, " r_16_16_16 ") != NULL;
		seen_opt |= strstr(line, " r_") && !strstr(line, " r_16_16_16 ");
	}
	fclose(f);
	ck_assert(seen_noopt && seen_opt);
}
END_TEST

/* matmul16's product in double precision, and for each entry the sum of
 * |a*b| over k, which bounds the rounding error of any summation order. */
static void matmul16_ref(double *want, double *mag)
{
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++) {
			want[i * 16 + j] = mag[i * 16 + j] = 0;
			for (int k = 0; k < 16; k++) {
				double p = (double)wave(i * 16 + k) * ramp(k * 16 + j);

				want[i * 16 + j] += p;
				mag[i * 16 + j] += fabs(p);
			}
		}
}

/* RANDOM_OPTS keys the method cache too: each seed compiles its own
 * kernel, and a seed seen before compiles nothing.  Results are not
 * NOOPT's bit for bit: a seed that upcasts the reduce axis sums it in
 * vector lanes (lane j adds k = j, j+8, ..., and the lanes are added at
 * the end) and contracts the multiply-add into an FMA, a different but
 * equally valid order.  Which seeds do that depends on the vector width
 * (with AVX-512, seeds 1, 5 and 6 of this matmul), so every seed is
 * held to the error bound of a float sum of 16 products instead:
 * 16 ulp of the sum of magnitudes, against double precision. */
START_TEST(random_opts_key_the_method_cache)
{
	float got[256];
	double want[256], mag[256];
	size_t before;

	matmul16_ref(want, mag);
	for (int seed = 1; seed <= 6; seed++) {
		char v[8];

		snprintf(v, sizeof v, "%d", seed);
		setenv("TG_RANDOM_OPTS", v, 1);
		before = tg_method_cache_count();
		matmul16(got);
		ck_assert_uint_eq(tg_method_cache_count(), before + 1);
		for (int i = 0; i < 256; i++)
			ck_assert_msg(fabs(got[i] - want[i]) <=
			              16 * FLT_EPSILON * mag[i],
			              "seed %d: [%d] %.9g, want %.9g", seed, i,
			              (double)got[i], want[i]);
		matmul16(got);
		ck_assert_uint_eq(tg_method_cache_count(), before + 1);
	}
	unsetenv("TG_RANDOM_OPTS");
}
END_TEST

static Suite *realize_suite(void)
{
	Suite *s = suite_create("realize");
	TCase *t = tcase_create("realize");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, elementwise_add_mul);
	tcase_add_test(t, sum_rows);
	tcase_add_test(t, max_columns_of_a_transpose);
	tcase_add_test(t, softmax_three_kernels);
	tcase_add_test(t, padded_input_reads_zeros);
	tcase_add_test(t, matmul_bias_relu);
	tcase_add_test(t, large_sum_in_two_kernels);
	tcase_add_test(t, same_ast_over_other_buffers);
	tcase_add_test(t, noopt_keys_the_method_cache);
	tcase_add_test(t, random_opts_key_the_method_cache);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(realize_suite());
}

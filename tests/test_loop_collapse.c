/*
 * test_loop_collapse.c - loop collapse (codegen/lower.c): a reduce that
 * adds a loop-invariant value under a condition linear in the loop
 * becomes value * count, with no loop left.  Checked on values (arange,
 * cumsum, one_hot, gather, sums of padded constants) with and without
 * NOOPT, and on the kernel sources printed at DEBUG=4: a kernel that
 * reads no input (a masked constant reduced) has no loop.
 */
#include "config.h"

#include <math.h>

#include "testlib.h"

static tg_dev *dev;

static void setup(void)
{
	dev = tg_dev_get("CPU");
	ck_assert_ptr_nonnull(dev);
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	tg_shutdown();
}

static void set_noopt(int on)
{
	if (on)
		setenv("NOOPT", "1", 1);
	else
		unsetenv("NOOPT");
}

/* ---- kernel sources from DEBUG=4 ---- */

static int saved_fd = -1;
static const char *log_path;

static void capture_begin(void)
{
	log_path = tl_write_file("collapse.log", "");
	fflush(stderr);
	saved_fd = dup(2);
	ck_assert(freopen(log_path, "w", stderr) != NULL);
	tg_debug_set(4);
}

/* What the captured kernels look like. */
typedef struct ksum {
	int kernels;        /* kernel functions printed */
	int loops;          /* reduce loops in all of them */
	int const_kernels;  /* kernels that read no input buffer */
	int const_loops;    /* reduce loops in those */
} ksum;

static ksum capture_end(void)
{
	ksum s = { 0, 0, 0, 0 };
	char line[4096];
	int in = 0, input = 0, loops = 0;
	FILE *f;

	tg_debug_set(0);
	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	ck_assert_ptr_nonnull(f = fopen(log_path, "r"));
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "void ", 5)) {
			in = 1;
			input = loops = 0;
			s.kernels++;
			continue;
		}
		if (!in)
			continue;
		if (strstr(line, "bufs[1]"))
			input = 1;
		if (strstr(line, "for (long ridx"))
			loops++;
		if (!strcmp(line, "}\n")) {
			in = 0;
			s.loops += loops;
			if (!input) {
				s.const_kernels++;
				s.const_loops += loops;
			}
		}
	}
	fclose(f);
	return s;
}

/* ---- values ---- */

static void get_f64(tg_tensor *t, double *out, size_t n)
{
	tg_tensor *c;

	ck_assert_msg(t != NULL, "%s", tg_last_error());
	ck_assert_ptr_nonnull(c = tg_cast(t, TG_FLOAT64));
	ck_assert_msg(tg_tensor_data(c, out, n * sizeof *out) == 0, "%s",
	              tg_last_error());
}

static double *want_buf(size_t n)
{
	double *w = malloc((n ? n : 1) * sizeof *w);

	ck_assert_ptr_nonnull(w);
	return w;
}

static void expect_exact(const char *what, tg_tensor *t, const double *w,
                         size_t n)
{
	double *got = want_buf(n);

	ck_assert_msg(t != NULL, "%s: %s", what, tg_last_error());
	ck_assert_uint_eq(tg_tensor_numel(t), n);
	get_f64(t, got, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == w[i], "%s: [%zu] = %.17g, want %.17g",
		              what, i, got[i], w[i]);
	free(got);
}

static const int64_t sizes[] = { 1, 7, 256, 1000, 5000 };

/* arange(start, start + n*step, step) for int32 and float32 steps whose
 * multiples are exact: values equal to start + i*step exactly. */
static void arange_case(tg_dtype dt, int64_t n, double start, double step)
{
	double *w = want_buf((size_t)n);
	char what[128];
	tg_tensor *t;

	for (int64_t i = 0; i < n; i++)
		w[i] = start + (double)i * step;
	snprintf(what, sizeof what, "arange(%s, %g, n=%lld, step %g)%s",
	         tg_dtype_name(dt), start, (long long)n, step,
	         getenv("NOOPT") ? " NOOPT" : "");
	t = tg_arange(dev, dt, start, start + (double)n * step, step);
	expect_exact(what, t, w, (size_t)n);
	free(w);
}

START_TEST(arange_values)
{
	for (int noopt = 1; noopt >= 0; noopt--) {
		set_noopt(noopt);
		for (size_t i = 0; i < TG_ARRAY_LEN(sizes); i++) {
			int64_t n = sizes[i];
			arange_case(TG_INT32, n, 0, 1);
			arange_case(TG_INT32, n, (double)n - 1, -1);
			arange_case(TG_INT32, n, 5, 3);
			arange_case(TG_INT32, n, 2, -7);
			arange_case(TG_FLOAT32, n, 0, 0.5);
			arange_case(TG_FLOAT32, n, 1, -0.5);
			arange_case(TG_FLOAT32, n, 0, 1);
		}
	}
}
END_TEST

/* Every kernel of an arange that reads no input (the masked constant's
 * cumsum) has no loop left; up to 256 elements arange is one kernel. */
START_TEST(arange_kernels_have_no_loop)
{
	for (int noopt = 1; noopt >= 0; noopt--) {
		set_noopt(noopt);
		for (size_t i = 0; i < TG_ARRAY_LEN(sizes); i++) {
			int64_t n = sizes[i];
			tg_dtype dts[2] = { TG_INT32, TG_FLOAT32 };
			for (int d = 0; d < 2; d++) {
				tg_tensor *t;
				ksum s;

				capture_begin();
				t = tg_arange(dev, dts[d], 0, (double)n, 1);
				ck_assert_ptr_nonnull(t);
				ck_assert_int_eq(tg_realize(t), 0);
				s = capture_end();
				if (n == 1)  /* folded: no kernel at all */
					continue;
				ck_assert_msg(s.const_kernels >= 1 &&
				              s.const_loops == 0,
				              "arange %lld %s%s: %d of %d kernels read "
				              "no input, with %d loops", (long long)n,
				              tg_dtype_name(dts[d]),
				              noopt ? " NOOPT" : "", s.const_kernels,
				              s.kernels, s.const_loops);
				if (n <= 256)
					ck_assert_int_eq(s.loops, 0);
			}
		}
	}
}
END_TEST

/* cumsum of ones collapses; cumsum of data keeps its loop. */
START_TEST(cumsum_ones_and_data)
{
	enum { N = 200 };
	int64_t n = N;
	float h[N];
	double w[N], acc = 0;

	for (int noopt = 1; noopt >= 0; noopt--) {
		tg_tensor *t;
		ksum s;

		set_noopt(noopt);
		for (int i = 0; i < N; i++)
			w[i] = i + 1;
		capture_begin();
		t = tg_cumsum(tg_ones(dev, TG_FLOAT32, 1, &n), 0);
		ck_assert_ptr_nonnull(t);
		ck_assert_int_eq(tg_realize(t), 0);
		s = capture_end();
		ck_assert_int_eq(s.kernels, 1);
		ck_assert_int_eq(s.loops, 0);
		expect_exact("cumsum(ones)", t, w, N);

		acc = 0;
		for (int i = 0; i < N; i++) {
			h[i] = (float)((i * 37 % 101) - 50) * 0.25f;
			w[i] = acc += h[i];
		}
		t = tg_tensor_new(dev, TG_FLOAT32, 1, &n, h);
		ck_assert_ptr_nonnull(t);
		ck_assert_int_eq(tg_realize(t), 0);
		capture_begin();
		t = tg_cumsum(t, 0);
		ck_assert_ptr_nonnull(t);
		ck_assert_int_eq(tg_realize(t), 0);
		s = capture_end();
		if (noopt)
			ck_assert_int_ge(s.loops, 1);
		/* quarters summed in any order are exact */
		expect_exact("cumsum(data)", t, w, N);
	}
}
END_TEST

/* Sums (one axis, several axes) of a padded constant: the count is a
 * product of per-loop counts; MAX of it is left alone. */
START_TEST(padded_const_sums)
{
	int64_t sh[2] = { 5, 6 }, pad[4] = { 1, 2, 3, 0 };
	int ax0 = 0, ax1 = 1;
	double w0[9], w1[8], wall = 5 * 6 * 2.5, wmax = 2.5;

	for (int j = 0; j < 9; j++)
		w0[j] = j >= 3 ? 5 * 2.5 : 0;
	for (int i = 0; i < 8; i++)
		w1[i] = i >= 1 && i < 6 ? 6 * 2.5 : 0;
	for (int noopt = 1; noopt >= 0; noopt--) {
		tg_tensor *x;
		ksum s;

		set_noopt(noopt);
		x = tg_pad(tg_full(dev, TG_FLOAT32, 2, sh, 2.5), 2, pad, 0);
		ck_assert_ptr_nonnull(x);
		capture_begin();
		expect_exact("sum axis 0", tg_sum(x, &ax0, 1, 0), w0, 9);
		expect_exact("sum axis 1", tg_sum(x, &ax1, 1, 0), w1, 8);
		expect_exact("sum all", tg_sum(x, NULL, 0, 0), &wall, 1);
		s = capture_end();
		ck_assert_int_ge(s.kernels, 3);
		ck_assert_int_eq(s.const_loops, 0);
		expect_exact("max all", tg_max(x, NULL, 0, 0), &wmax, 1);
	}
}
END_TEST

/* inf times a count of 0 is not NaN: where the loop adds nothing, the
 * sum is 0. */
START_TEST(padded_inf_sums)
{
	int64_t sh[2] = { 3, 2 }, pad[4] = { 0, 0, 2, 1 };
	int ax0 = 0;
	double w[5] = { 0, 0, INFINITY, INFINITY, 0 };

	for (int noopt = 1; noopt >= 0; noopt--) {
		tg_tensor *x;

		set_noopt(noopt);
		x = tg_pad(tg_full(dev, TG_FLOAT32, 2, sh, INFINITY), 2, pad, 0);
		expect_exact("sum of padded inf", tg_sum(x, &ax0, 1, 0), w, 5);
	}
}
END_TEST

START_TEST(one_hot_values)
{
	int32_t cls[6] = { 3, 0, 9, 5, 9, 1 };
	int64_t n = 6;
	double w[60];

	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 10; j++)
			w[i * 10 + j] = cls[i] == j;
	for (int noopt = 1; noopt >= 0; noopt--) {
		tg_tensor *t;

		set_noopt(noopt);
		t = tg_tensor_new(dev, TG_INT32, 1, &n, cls);
		ck_assert_ptr_nonnull(t);
		expect_exact("one_hot", tg_one_hot(t, 10), w, 60);
	}
}
END_TEST

START_TEST(gather_values)
{
	enum { R = 5, C = 7, IR = 4 };
	int64_t ts[2] = { R, C }, is0[2] = { IR, C }, is1[2] = { R, 3 };
	float h[R * C];
	int32_t i0[IR * C], i1[R * 3];
	double w0[IR * C], w1[R * 3];

	for (int i = 0; i < R * C; i++)
		h[i] = (float)(i * 13 % 17) - 8.0f;
	for (int i = 0; i < IR; i++)
		for (int j = 0; j < C; j++) {
			i0[i * C + j] = (i * 3 + j * 2) % R;
			w0[i * C + j] = h[i0[i * C + j] * C + j];
		}
	for (int i = 0; i < R; i++)
		for (int j = 0; j < 3; j++) {
			i1[i * 3 + j] = (i + j * 5) % C;
			w1[i * 3 + j] = h[i * C + i1[i * 3 + j]];
		}
	for (int noopt = 1; noopt >= 0; noopt--) {
		tg_tensor *t, *x0, *x1;

		set_noopt(noopt);
		t = tg_tensor_new(dev, TG_FLOAT32, 2, ts, h);
		x0 = tg_tensor_new(dev, TG_INT32, 2, is0, i0);
		x1 = tg_tensor_new(dev, TG_INT32, 2, is1, i1);
		ck_assert(t && x0 && x1);
		expect_exact("gather axis 0", tg_gather(t, 0, x0), w0, IR * C);
		expect_exact("gather axis 1", tg_gather(t, 1, x1), w1, R * 3);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("loop_collapse");
	TCase *t = tcase_create("loop_collapse");

	tcase_set_timeout(t, 240);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, arange_values);
	tcase_add_test(t, arange_kernels_have_no_loop);
	tcase_add_test(t, cumsum_ones_and_data);
	tcase_add_test(t, padded_const_sums);
	tcase_add_test(t, padded_inf_sums);
	tcase_add_test(t, one_hot_values);
	tcase_add_test(t, gather_values);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

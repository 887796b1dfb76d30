/*
 * testlib.h - helpers shared by the Check suites.
 *
 * Suites run each test in a forked child (Check's default), so library
 * state never leaks between tests.  The environment comes from
 * AM_TESTS_ENVIRONMENT (tests/Makefile.inc): TG_TEST_PLUGINS is the
 * directory of the test-double plugins, TG_TEST_TMP a scratch directory.
 */
#ifndef TG_TESTLIB_H
#define TG_TESTLIB_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../libtgcore/core.h"

/* Asserts that the last error contains `needle`. */
#define ck_assert_error(needle)                                             \
	ck_assert_msg(strstr(tg_last_error(), (needle)) != NULL,            \
	              "error message \"%s\" lacks \"%s\"", tg_last_error(), \
	              (needle))

/* out(m,n) against a(m,kk) @ b(kk,n) by C loops in double precision,
 * within 1e-4. */
static inline void tl_check_matmul(const float *out, const float *a,
                                   const float *b, int m, int n, int kk)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double acc = 0;
			for (int l = 0; l < kk; l++)
				acc += (double)a[i * kk + l] * b[l * n + j];
			ck_assert_double_eq_tol(out[i * n + j], acc, 1e-4);
		}
}

/* Directory of the test-double plugins. */
/* |got - want| in units in the last place of want, in float64 or (f64
 * 0) float32: 0 when both are the same infinity or both NaN, 1e30 when
 * only one is. */
static inline double tl_ulps(double got, double want, int f64)
{
	double u;

	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got) ? 0 : 1e30;
	if (isinf(want) || isinf(got))
		return got == want ? 0 : 1e30;
	u = f64 ? nextafter(fabs(want), INFINITY) - fabs(want)
	        : (double)(nextafterf((float)fabs(want), INFINITY) -
	                   (float)fabs(want));
	return fabs(got - want) / u;
}

static inline const char *tl_plugdir(void)
{
	const char *d = getenv("TG_TEST_PLUGINS");

	return d ? d : "tests/plugins";
}

/* Path of a test plugin module ("mock" -> ".../tests/plugins/mock.la"),
 * in a static buffer (one per call site is enough for tests). */
static inline const char *tl_plugin(const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s.la", tl_plugdir(), name);
	return buf;
}

/* Makes the next tg_* call search only `path` (a TG_PLUGIN_PATH). */
static inline void tl_use_plugins(const char *path)
{
	tg_shutdown();
	setenv("TG_PLUGIN_PATH", path, 1);
	setenv("TG_PLUGIN_DEFAULT_PATH", "0", 1);
}

/* TG_TEST_TMP/<pid>-name (/tmp outside make check), in one of four
 * rotating static buffers, so that a few paths can be held at once. */
static inline const char *tl_tmp_path(const char *name)
{
	static char buf[4][512];
	static int k;
	const char *tmp = getenv("TG_TEST_TMP");
	char *p = buf[k++ % 4];

	snprintf(p, 512, "%s/%d-%s", tmp ? tmp : "/tmp", (int)getpid(), name);
	return p;
}

/* Writes `text` into a new file under TG_TEST_TMP; returns its path in
 * a static buffer. */
static inline const char *tl_write_file(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s", tl_tmp_path(name));
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* The whole file as a string (malloc'd), or NULL when it is absent. */
static inline char *tl_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

/* How many times `needle` occurs in s (overlapping ones too). */
static inline size_t tl_count(const char *s, const char *needle)
{
	size_t n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

/* The exit status of a suite whose device `dev` cannot be opened (for
 * `why`): automake's skip (77), with the reason printed, unless it is
 * named in TG_TEST_REQUIRE_DEVICES (CI, where PoCL and lavapipe are
 * installed): then a failure. */
static inline int tl_no_device(const char *suite, const char *dev,
                               const char *why)
{
	const char *req = getenv("TG_TEST_REQUIRE_DEVICES");
	size_t n = strlen(dev);

	for (const char *p = req; p && *p;) {
		p += strspn(p, " ,");
		if (!strncmp(p, dev, n) && (p[n] == 0 || p[n] == ' ' ||
		                            p[n] == ','))  {
			printf("%s: FAIL: %s is required here but: %s\n", suite,
			       dev, why);
			return EXIT_FAILURE;
		}
		p += strcspn(p, " ,");
	}
	printf("%s: skipped: %s\n", suite, why);
	return 77;
}

/* Runs saxpy program p, y = 2.5*x + y over n floats (buffers y, x in
 * that order; args gives the values, which encode 2.5 as the backend's
 * test kernel expects, and the geometry), on dev and checks y against C
 * in double precision.  `timed`: the launch is timed and the time must
 * be plausible.  Frees p. */
static inline void tl_check_saxpy(tg_dev *dev, tg_program *p, size_t n,
                                  tg_launch_args args, int timed)
{
	tg_buffer *y = tg_buffer_new(dev, n, TG_FLOAT32);
	tg_buffer *x = tg_buffer_new(dev, n, TG_FLOAT32);
	float *hx = malloc(n * 4), *hy = malloc(n * 4), *out = malloc(n * 4);
	tg_buffer *bufs[2] = { y, x };
	double t = -1;

	ck_assert(p && x && y && hx && hy && out);
	for (size_t i = 0; i < n; i++) {
		hx[i] = (float)i * 0.25f - 3.0f;
		hy[i] = (float)(i % 17);
	}
	args.bufs = bufs;
	args.nbufs = 2;
	ck_assert_int_eq(tg_buffer_copyin(x, hx, n * 4), 0);
	ck_assert_int_eq(tg_buffer_copyin(y, hy, n * 4), 0);
	ck_assert_msg(tg_program_launch(p, &args, timed ? &t : NULL) == 0,
	              "%s", tg_last_error());
	if (timed)
		ck_assert_msg(t > 0.0 && t < 60.0, "elapsed %g", t);
	ck_assert_int_eq(tg_buffer_copyout(y, out, n * 4), 0);
	for (size_t i = 0; i < n; i++) {
		double want = 2.5 * (double)hx[i] + (double)hy[i];

		ck_assert_msg(fabs(out[i] - want) <= 1e-6 * fabs(want) + 1e-6,
		              "item %zu: %g vs %g", i, out[i], want);
	}
	free(hx), free(hy), free(out);
	tg_buffer_unref(x), tg_buffer_unref(y);
	tg_program_free(p);
}

/* Copies the n floats v from device `from` to `to` (a tensor and
 * tg_to), reads them back and checks they arrived; *k: the counters of
 * that copy alone.  Call inside a scope. */
static inline void tl_copy_floats(tg_dev *from, tg_dev *to, const float *v,
                                  int64_t n, tg_counters *k)
{
	tg_tensor *b = tg_to(tg_tensor_new(from, TG_FLOAT32, 1, &n, v), to);
	float *out = calloc((size_t)n, sizeof *out);

	ck_assert_msg(b != NULL && out != NULL, "%s", tg_last_error());
	tg_counters_reset();
	ck_assert_msg(tg_tensor_data(b, out, (size_t)n * sizeof *out) == 0,
	              "%s", tg_last_error());
	tg_counters_get(k);
	ck_assert_mem_eq(out, v, (size_t)n * sizeof *out);
	free(out);
}

/* Runs a suite and returns the process exit status. */
static inline int tl_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif

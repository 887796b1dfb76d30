/*
 * threadtest.h - what the multi-threaded suites (test_threads,
 * test_threads_shared) share: running a case on NT threads that start
 * together, inputs whose values C computes too, and the fused reduce
 * both suites compute.
 *
 * Worker threads never call Check's assertions (they are not
 * thread-safe): each records its first failure in its job, and the
 * main thread asserts after the join.
 */
#ifndef TG_THREADTEST_H
#define TG_THREADTEST_H

#include <stdarg.h>

#include "testlib.h"

enum { NT = 4 };  /* threads per case */

typedef struct job {
	int id;
	tg_tensor *shared;        /* the case's shared tensor, if any */
	const double *want;       /* its expected values */
	pthread_barrier_t *start; /* all threads begin together */
	char err[512];            /* the first failure */
} job;

static inline void failf(job *j, const char *fmt, ...) TG_PRINTF(2, 3);
static inline void failf(job *j, const char *fmt, ...)
{
	va_list ap;

	if (j->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(j->err, sizeof j->err, fmt, ap);
	va_end(ap);
}

/* Runs fn on NT threads that start together; asserts none failed. */
static inline void run_threads(void *(*fn)(void *), tg_tensor *shared,
                               const double *want)
{
	pthread_barrier_t start;
	pthread_t t[NT];
	job jobs[NT];

	ck_assert_int_eq(pthread_barrier_init(&start, NULL, NT), 0);
	for (int i = 0; i < NT; i++) {
		jobs[i] = (job){ .id = i, .shared = shared, .want = want,
		                 .start = &start };
		ck_assert_int_eq(pthread_create(&t[i], NULL, fn, &jobs[i]),
		                 0);
	}
	for (int i = 0; i < NT; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < NT; i++)
		ck_assert_msg(!jobs[i].err[0], "thread %d: %s", i, jobs[i].err);
}

static inline void tt_setup(void)
{
	ck_assert_msg(tg_dev_get("CPU") != NULL, "%s", tg_last_error());
}

static inline void tt_teardown(void)
{
	tg_shutdown();
}

/* Input value i of a tensor with seed s: multiples of 1/8 in [-2, 2),
 * so float32 holds them exactly. */
static inline double val(int64_t i, int s)
{
	return (double)((i * 7 + s * 13) % 32) / 8.0 - 2.0;
}

/* A float32 (rows, cols) tensor of val(., seed); NULL on failure. */
static inline tg_tensor *input(int64_t rows, int64_t cols, int seed)
{
	int64_t shape[2] = { rows, cols };
	float *v = malloc((size_t)(rows * cols) * sizeof *v);
	tg_tensor *t = NULL;

	if (v) {
		for (int64_t i = 0; i < rows * cols; i++)
			v[i] = (float)val(i, seed);
		t = tg_tensor_new(tg_dev_get("CPU"), TG_FLOAT32, 2, shape, v);
	}
	free(v);
	return t;
}

/* Reads n float32 values of t and compares them with want; 0 or -1
 * (with the failure in j). */
static inline int check(job *j, tg_tensor *t, const double *want, size_t n,
                        const char *what)
{
	float *got = malloc(n * sizeof *got);
	int rc = -1;

	if (!t || !got)
		failf(j, "%s: %s", what, got ? tg_last_error() : "no memory");
	else if (tg_tensor_data(t, got, n * sizeof *got))
		failf(j, "%s: data: %s", what, tg_last_error());
	else
		rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (fabs(got[i] - want[i]) > 1e-5 * (1 + fabs(want[i]))) {
			failf(j, "%s: [%zu] = %.9g, want %.9g", what, i,
			      (double)got[i], want[i]);
			rc = -1;
		}
	free(got);
	return rc;
}

/* ------------------------------------------------ the computed graphs */

/* sum over axis 1 of (a*b + c) for a, b, c of seeds s, s+1, s+2:
 * one fused reduce kernel.  Call it in a scope: the temporaries are
 * returned references too. */
static inline tg_tensor *fma_rows(int64_t rows, int64_t cols, int s)
{
	static const int ax[1] = { 1 };
	tg_tensor *a = input(rows, cols, s), *b = input(rows, cols, s + 1);
	tg_tensor *c = input(rows, cols, s + 2);

	return tg_sum(tg_add(tg_mul(a, b), c), ax, 1, 0);
}

static inline void fma_rows_ref(int64_t rows, int64_t cols, int s, double *out)
{
	for (int64_t r = 0; r < rows; r++) {
		double acc = 0;

		for (int64_t c = 0; c < cols; c++) {
			int64_t i = r * cols + c;

			acc += val(i, s) * val(i, s + 1) + val(i, s + 2);
		}
		out[r] = acc;
	}
}

/* Builds fma_rows in a scope and checks it against C; 0 or -1. */
static inline int fma_rows_check(job *j, int64_t rows, int64_t cols, int s,
                                 const char *what)
{
	double *want = malloc((size_t)rows * sizeof *want);
	int rc = -1;

	if (!want) {
		failf(j, "%s: no memory", what);
		return -1;
	}
	fma_rows_ref(rows, cols, s, want);
	tg_scope_begin();
	rc = check(j, fma_rows(rows, cols, s), want, (size_t)rows, what);
	tg_scope_end();
	free(want);
	return rc;
}

#endif

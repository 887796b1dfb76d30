/*
 * kasttest.h - helpers shared by the suites that build kernel ASTs by
 * hand and run them on the CPU plugin (test_codegen, test_opts): shape
 * trackers, CPU buffers with deterministic contents, and launching a
 * compiled kernel.
 */
#ifndef TG_KASTTEST_H
#define TG_KASTTEST_H

#include <stdarg.h>

#include "testlib.h"
#include "../libtgcore/ir/ir.h"
#include "../libtgcore/codegen/codegen.h"

/* A contiguous st of the given dims (n ints). */
static inline tg_st *kt_st(size_t n, ...)
{
	tg_sint sh[8];
	va_list ap;
	tg_st *s;

	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		sh[i] = tg_si(va_arg(ap, int));
	va_end(ap);
	s = tg_st_from_shape(NULL, n, sh);
	ck_assert_msg(s != NULL, "%s", tg_last_error());
	return s;
}

/* The CPU device's renderer caps. */
static inline const struct tg_renderer_caps *kt_cpu_caps(void)
{
	tg_dev *dev = tg_dev_get("CPU");

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return tg_dev_caps(dev);
}

/* A CPU buffer of n dt elements holding host (allocated, uninitialized,
 * when host is NULL). */
static inline tg_buffer *kt_buf_with(tg_dtype dt, size_t n,
                                     const void *host)
{
	tg_buffer *b = tg_buffer_new(tg_dev_get("CPU"), n, dt);

	ck_assert_msg(b != NULL, "%s", tg_last_error());
	if (host)
		ck_assert_int_eq(tg_buffer_copyin(b, host,
		                                  n * tg_dtype_size(dt)),
		                 TG_OK);
	else
		ck_assert_int_eq(tg_buffer_allocate(b), TG_OK);
	return b;
}

/* Fills x with a repeating pattern of 11 small values, scaled by mul and
 * shifted by add (exact in float32). */
static inline void kt_fill(float *x, size_t n, float mul, float add)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((int)(i * 7 % 11) - 5) * mul + add;
}

static inline void kt_unref(tg_buffer **b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tg_buffer_unref(b[i]);
}

/* Builds the program of ks on the CPU device and runs it once over bufs
 * with ks's global size (local size 1). */
static inline void kt_launch(const tg_ksrc *ks, tg_buffer **bufs,
                             size_t nbufs)
{
	tg_program *p;
	tg_launch_args args = { .bufs = bufs, .nbufs = nbufs,
		.local = { 1, 1, 1 } };

	for (int i = 0; i < 3; i++)
		args.global[i] = ks->global[i];
	p = tg_program_new(tg_dev_get("CPU"), ks->name, ks->src);
	ck_assert_msg(p != NULL, "%s\n%s", tg_last_error(), ks->src);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == TG_OK, "%s",
	              tg_last_error());
	tg_program_free(p);
}

#endif

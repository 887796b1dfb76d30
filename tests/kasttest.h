/*
 * kasttest.h - helpers shared by the suites that build kernel ASTs by
 * hand and run them (test_codegen, test_opts, test_locals): shape
 * trackers, buffers with deterministic contents, and launching a
 * compiled kernel, on the device under test: the default device (CPU
 * unless DEVICE names another).
 */
#ifndef TG_KASTTEST_H
#define TG_KASTTEST_H

#include <stdarg.h>

#include "testlib.h"
#include "../libtgcore/ir/ir.h"
#include "../libtgcore/codegen/codegen.h"
#include "../libtgcore/device/device.h"

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

/* Replaces s by the result of a movement op (NULL fails the test). */
static inline tg_st *kt_moved(tg_st *s, tg_st *r)
{
	ck_assert_msg(r != NULL, "%s", tg_last_error());
	tg_st_free(s);
	return r;
}

static inline tg_st *kt_reshape3(tg_st *s, int a, int b, int c)
{
	tg_sint sh[3] = { tg_si(a), tg_si(b), tg_si(c) };

	return kt_moved(s, tg_st_reshape(NULL, s, 3, sh));
}

static inline tg_st *kt_expand3(tg_st *s, int a, int b, int c)
{
	tg_sint sh[3] = { tg_si(a), tg_si(b), tg_si(c) };

	return kt_moved(s, tg_st_expand(NULL, s, 3, sh));
}

/* The AST of out(m,n) = a(m,kk) @ b(kk,n) in k: buffers 0 (out,
 * float32), 1, 2 (dt, each load cast to float32 unless dt is), the
 * reduce on axis 2 of (m, n, kk). */
static inline tg_uop *kt_matmul_dt(tg_ir *k, int m, int n, int kk,
                                   tg_dtype dt)
{
	static const uint32_t tr[2] = { 1, 0 };
	tg_st *sa = kt_expand3(kt_reshape3(kt_st(2, m, kk), m, 1, kk), m, n,
	                       kk);
	tg_st *sb = kt_st(2, kk, n);
	tg_uop *x, *y, *r, *s;

	sb = kt_moved(sb, tg_st_permute(NULL, sb, 2, tr));
	sb = kt_expand3(kt_reshape3(sb, 1, n, kk), m, n, kk);
	x = tg_ast_load(k, 1, dt, sa);
	y = tg_ast_load(k, 2, dt, sb);
	if (dt != TG_FLOAT32) {
		x = tg_ast_cast(k, x, TG_FLOAT32);
		y = tg_ast_cast(k, y, TG_FLOAT32);
	}
	r = tg_ast_reduce(k, TG_ADD, tg_ast_alu(k, TG_MUL, x, y, NULL), 4u);
	s = tg_ast_store(k, 0, r, kt_st(3, m, n, 1));
	ck_assert_msg(s != NULL, "%s", tg_last_error());
	return tg_ast_sink(k, &s, 1);
}

static inline tg_uop *kt_matmul(tg_ir *k, int m, int n, int kk)
{
	return kt_matmul_dt(k, m, n, kk, TG_FLOAT32);
}

/* The settings of the configuration as it is now (VERIFY=1 under make
 * check), read on each call: what an operation would pass to codegen.
 * Borrowed; valid until the next call. */
static inline const tg_settings *kt_set(void)
{
	static tg_settings s;

	ck_assert_int_eq(tg_settings_read(&s), TG_OK);
	return &s;
}

/* The device under test. */
static inline tg_dev *kt_dev(void)
{
	tg_dev *dev = tg_dev_get(NULL);

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return dev;
}

/* The device under test's renderer caps. */
static inline const struct tg_renderer_caps *kt_cpu_caps(void)
{
	/* the C dialect with AVX-512's 16 float lanes whatever this CPU
	 * has, so the hand-coded opts the tests name do not depend on the
	 * machine (GCC splits wider vectors than the CPU has) */
	static struct tg_renderer_caps c;
	static struct tg_tensor_core tc;
	const struct tg_renderer_caps *d = tg_dev_caps(kt_dev());

	if (!d || d->dialect != TG_DIALECT_C)
		return d;
	c = *d;
	c.max_upcast = 16;
	if (c.tensor_cores == 1) {  /* the CPU's register tile, at 16 */
		tc = c.tc[0];
		tc.dims[0] = 32;
		tc.splits[0].amt = 16;
		c.tc = &tc;
	}
	return &c;
}

/* A buffer of n dt elements on the device under test holding host
 * (allocated, uninitialized, when host is NULL). */
static inline tg_buffer *kt_buf_with(tg_dtype dt, size_t n,
                                     const void *host)
{
	tg_buffer *b = tg_buffer_new(kt_dev(), n, dt);

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

/* Builds the program of ks on the device under test and runs it once
 * over bufs with ks's launch geometry. */
static inline void kt_launch(const tg_ksrc *ks, tg_buffer **bufs,
                             size_t nbufs)
{
	tg_program *p;
	tg_launch_args args = { .bufs = bufs, .nbufs = nbufs };

	for (int i = 0; i < 3; i++) {
		args.global[i] = ks->global[i];
		args.local[i] = ks->local[i];
	}
	p = tg_program_new(kt_dev(), ks->name, ks->src);
	ck_assert_msg(p != NULL, "%s\n%s", tg_last_error(), ks->src);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == TG_OK, "%s",
	              tg_last_error());
	tg_program_free(p);
}

#endif

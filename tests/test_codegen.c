/*
 * test_codegen.c - the kernel compiler end to end: kernel ASTs built by
 * hand, compiled by tg_codegen for the CPU device (NOOPT lowering:
 * names, launch sizes and accumulators as without opts; test_opts.c
 * runs optimized kernels), run on the CPU plugin and checked against C
 * loops.
 */
#include "config.h"

#include <math.h>

#include "kasttest.h"

static tg_ir *k;

static void setup(void)
{
	k = tg_ir_new();
	ck_assert_ptr_nonnull(k);
}

static void teardown(void)
{
	tg_ir_free(k);
}

static tg_st *expand2(tg_st *s, int a, int b)
{
	tg_sint sh[2] = { tg_si(a), tg_si(b) };
	tg_st *r = tg_st_expand(NULL, s, 2, sh);

	ck_assert_msg(r != NULL, "%s", tg_last_error());
	tg_st_free(s);
	return r;
}

static tg_st *pad2(tg_st *s, int b0, int a0, int b1, int a1)
{
	tg_sint arg[4] = { tg_si(b0), tg_si(a0), tg_si(b1), tg_si(a1) };
	tg_st *r = tg_st_pad(NULL, s, 2, arg);

	ck_assert_msg(r != NULL, "%s", tg_last_error());
	tg_st_free(s);
	return r;
}

static tg_st *permute(tg_st *s, size_t n, const uint32_t *axis)
{
	tg_st *r = tg_st_permute(NULL, s, n, axis);

	ck_assert_msg(r != NULL, "%s", tg_last_error());
	tg_st_free(s);
	return r;
}

static tg_uop *sink1(tg_uop *store)
{
	ck_assert_msg(store != NULL, "%s", tg_last_error());
	return tg_ast_sink(k, &store, 1);
}

static tg_scalar fval(double f)
{
	tg_scalar v;

	v.f = f;
	return v;
}

/* Compiles sink, checks its name, runs it over bufs. */
static void run(tg_uop *sink, const char *name, tg_buffer **bufs,
                size_t nbufs)
{
	tg_ksrc ks;

	ck_assert_ptr_nonnull(sink);
	ck_assert_msg(tg_codegen(sink, kt_cpu_caps(), kt_set(), &ks) == TG_OK, "%s",
	              tg_last_error());
	if (getenv("TG_TEST_SHOW_SOURCE"))  /* for debugging */
		fprintf(stderr, "%s%s%s", ks.ast_text, ks.linear_text, ks.src);
	ck_assert_str_eq(ks.name, name);
	ck_assert_uint_eq(ks.nbufs, nbufs);
	ck_assert_uint_eq(ks.outs & 1u, 1u);
	ck_assert_str_eq(ks.opts, "");
	ck_assert_ptr_nonnull(ks.ast_text);
	ck_assert_ptr_nonnull(ks.linear_text);
	ck_assert_uint_eq(ks.nvars, 0);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(ks.local[i], 1);
	kt_launch(&ks, bufs, nbufs);
	tg_ksrc_free(&ks);
	tg_ksrc_free(&ks); /* idempotent */
}

START_TEST(elementwise_add)
{
	float a[15], b[15], out[15];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 3, 5));
	tg_uop *y = tg_ast_load(k, 2, TG_FLOAT32, kt_st(2, 3, 5));
	tg_uop *s = sink1(tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, y, NULL),
	                               kt_st(2, 3, 5)));
	tg_buffer *bufs[3];
	tg_ksrc ks;

	kt_fill(a, 15, 0.5f, 0.25f);
	kt_fill(b, 15, -1.5f, 3.0f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 15, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 15, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, 15, b);
	run(s, "E_15", bufs, 3);  /* contiguous (3,5) is one axis of 15 */
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 15; i++)
		ck_assert_float_eq(out[i], a[i] + b[i]);
	kt_unref(bufs, 3);
	/* geometry and estimates */
	ck_assert_int_eq(tg_codegen(s, kt_cpu_caps(), kt_set(), &ks), TG_OK);
	ck_assert_uint_eq(ks.global[0], 15);
	ck_assert_uint_eq(ks.global[1], 1);
	ck_assert_uint_eq(ks.global[2], 1);
	ck_assert_uint_eq(ks.outs, 1);
	ck_assert(ks.flops == 15.0);
	ck_assert(ks.mem_bytes == 3 * 15 * 4.0);
	tg_ksrc_free(&ks);
	/* a matmul's multiply-add counts 2: 2*M*N*K */
	ck_assert_int_eq(tg_codegen(kt_matmul(k, 4, 6, 8), kt_cpu_caps(),
	                            kt_set(), &ks), TG_OK);
	ck_assert(ks.flops == 2.0 * 4 * 6 * 8);
	ck_assert_ptr_nonnull(strstr(ks.linear_text, "SPECIAL"));
	ck_assert_ptr_nonnull(strstr(ks.src, "gidx0"));
	tg_ksrc_free(&ks);
}
END_TEST

/* out = a + b with b of shape (1,5) expanded to (3,5). */
START_TEST(broadcast_add)
{
	float a[15], b[5], out[15];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 3, 5));
	tg_uop *y = tg_ast_load(k, 2, TG_FLOAT32, expand2(kt_st(2, 1, 5), 3, 5));
	tg_uop *s = sink1(tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, y, NULL),
	                               kt_st(2, 3, 5)));
	tg_buffer *bufs[3];

	kt_fill(a, 15, 0.5f, 0.25f);
	kt_fill(b, 5, 2.0f, -1.0f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 15, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 15, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, 5, b);
	run(s, "E_3_5", bufs, 3);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 5; j++)
			ck_assert_float_eq(out[i * 5 + j], a[i * 5 + j] + b[j]);
	kt_unref(bufs, 3);
}
END_TEST

/* out(3,5) = a(5,3).T * 2, the constant broadcast from (1,1). */
START_TEST(transposed_input)
{
	static const uint32_t perm[2] = { 1, 0 };
	float a[15], out[15];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, permute(kt_st(2, 5, 3), 2,
	                                                  perm));
	tg_uop *c = tg_ast_const(k, TG_FLOAT32, fval(2.0), kt_st(2, 1, 1));
	tg_uop *s = sink1(tg_ast_store(k, 0, tg_ast_alu(k, TG_MUL, x, c, NULL),
	                               kt_st(2, 3, 5)));
	tg_buffer *bufs[2];

	kt_fill(a, 15, 0.75f, 0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 15, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 15, a);
	run(s, "E_3_5", bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 5; j++)
			ck_assert_float_eq(out[i * 5 + j], a[j * 3 + i] * 2.0f);
	kt_unref(bufs, 2);
}
END_TEST

/* out(3,5) = pad(a(3,3), ((0,0),(1,1))) + 1: zeros outside. */
START_TEST(padded_input)
{
	float a[9], out[15];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32,
	                        pad2(kt_st(2, 3, 3), 0, 0, 1, 1));
	tg_uop *c = tg_ast_const(k, TG_FLOAT32, fval(1.0), kt_st(2, 1, 1));
	tg_uop *s = sink1(tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, c, NULL),
	                               kt_st(2, 3, 5)));
	tg_buffer *bufs[2];

	kt_fill(a, 9, 1.25f, 0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 15, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 9, a);
	run(s, "E_3_5", bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 5; j++) {
			float v = (j >= 1 && j < 4) ? a[i * 3 + j - 1] : 0.0f;
			ck_assert_float_eq(out[i * 5 + j], v + 1.0f);
		}
	kt_unref(bufs, 2);
}
END_TEST

/* out(3,5) = a + pad(const 3 of (3,3), ((0,0),(2,0))). */
START_TEST(masked_const)
{
	float a[15], out[15];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 3, 5));
	tg_uop *c = tg_ast_const(k, TG_FLOAT32, fval(3.0),
	                         pad2(kt_st(2, 3, 3), 0, 0, 2, 0));
	tg_uop *s = sink1(tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, c, NULL),
	                               kt_st(2, 3, 5)));
	tg_buffer *bufs[2];

	kt_fill(a, 15, 0.5f, 0.0f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 15, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 15, a);
	run(s, "E_3_5", bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 5; j++)
			ck_assert_float_eq(out[i * 5 + j],
			                   a[i * 5 + j] + (j >= 2 ? 3.0f : 0.0f));
	kt_unref(bufs, 2);
}
END_TEST

/* out(4,1) = a(4,5).sum(1). */
START_TEST(sum_rows)
{
	float a[20], out[4];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 4, 5));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, x, 1u << 1);
	tg_uop *s = sink1(tg_ast_store(k, 0, r, kt_st(2, 4, 1)));
	tg_buffer *bufs[2];

	kt_fill(a, 20, 0.5f, 0.125f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 4, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 20, a);
	run(s, "r_4_5", bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 4; i++) {
		float acc = 0.0f;
		for (int j = 0; j < 5; j++)
			acc += a[i * 5 + j];
		ck_assert_float_eq(out[i], acc);
	}
	kt_unref(bufs, 2);
}
END_TEST

/* out(1,5) = a(4,5).max(0) on int32 (the accumulator starts at
 * INT32_MIN). */
START_TEST(max_columns_int32)
{
	int32_t a[20], out[5];
	tg_uop *x = tg_ast_load(k, 1, TG_INT32, kt_st(2, 4, 5));
	tg_uop *r = tg_ast_reduce(k, TG_MAX, x, 1u << 0);
	tg_uop *s = sink1(tg_ast_store(k, 0, r, kt_st(2, 1, 5)));
	tg_buffer *bufs[2];

	for (int i = 0; i < 20; i++)
		a[i] = (i * 37 % 23) - 100;
	bufs[0] = kt_buf_with(TG_INT32, 5, NULL);
	bufs[1] = kt_buf_with(TG_INT32, 20, a);
	run(s, "r_5_4", bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int j = 0; j < 5; j++) {
		int32_t m = a[j];
		for (int i = 1; i < 4; i++)
			m = a[i * 5 + j] > m ? a[i * 5 + j] : m;
		ck_assert_int_eq(out[j], m);
	}
	kt_unref(bufs, 2);
}
END_TEST

/* out(1,1) = a(3,5).sum(): no global axes. */
START_TEST(sum_to_scalar)
{
	float a[15], out[1], acc = 0.0f;
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 3, 5));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, x, 3u);
	tg_uop *s = sink1(tg_ast_store(k, 0, r, kt_st(2, 1, 1)));
	tg_buffer *bufs[2];
	tg_ksrc ks;

	kt_fill(a, 15, 0.5f, 0.25f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 1, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 15, a);
	run(s, "r_15", bufs, 2);  /* the two reduce axes are one */
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 5; j++)
			acc += a[i * 5 + j];
	ck_assert_float_eq(out[0], acc);
	kt_unref(bufs, 2);
	ck_assert_int_eq(tg_codegen(s, kt_cpu_caps(), kt_set(), &ks), TG_OK);
	ck_assert_uint_eq(ks.global[0] * ks.global[1] * ks.global[2], 1);
	ck_assert_ptr_nonnull(strstr(ks.linear_text, "DEFINE_ACC"));
	ck_assert_ptr_nonnull(strstr(ks.linear_text, "ENDRANGE"));
	tg_ksrc_free(&ks);
}
END_TEST

/* out(4,1) = a(4,5).sum(1) * 2 + bias(4,1). */
START_TEST(reduce_then_elementwise)
{
	float a[20], bias[4], out[4];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 4, 5));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, x, 1u << 1);
	tg_uop *two = tg_ast_const(k, TG_FLOAT32, fval(2.0), kt_st(2, 1, 1));
	tg_uop *b = tg_ast_load(k, 2, TG_FLOAT32, kt_st(2, 4, 1));
	tg_uop *v = tg_ast_alu(k, TG_ADD, tg_ast_alu(k, TG_MUL, r, two, NULL),
	                       b, NULL);
	tg_uop *s = sink1(tg_ast_store(k, 0, v, kt_st(2, 4, 1)));
	tg_buffer *bufs[3];

	kt_fill(a, 20, 0.5f, 0.125f);
	kt_fill(bias, 4, 3.0f, 0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 4, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 20, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, 4, bias);
	run(s, "r_4_5", bufs, 3);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 4; i++) {
		float acc = 0.0f;
		for (int j = 0; j < 5; j++)
			acc += a[i * 5 + j];
		ck_assert_float_eq(out[i], acc * 2.0f + bias[i]);
	}
	kt_unref(bufs, 3);
}
END_TEST

/* Two outputs share one reduce: out0 = sum, out1 = sum * 2. */
START_TEST(two_stores_share_a_reduce)
{
	float a[20], o0[4], o1[4];
	tg_uop *x = tg_ast_load(k, 2, TG_FLOAT32, kt_st(2, 4, 5));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, x, 1u << 1);
	tg_uop *two = tg_ast_const(k, TG_FLOAT32, fval(2.0), kt_st(2, 1, 1));
	tg_uop *st2[2] = {
		tg_ast_store(k, 0, r, kt_st(2, 4, 1)),
		tg_ast_store(k, 1, tg_ast_alu(k, TG_MUL, r, two, NULL),
		             kt_st(2, 4, 1))
	};
	tg_uop *s = tg_ast_sink(k, st2, 2);
	tg_buffer *bufs[3];
	tg_ksrc ks;

	kt_fill(a, 20, 0.5f, 0.125f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 4, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 4, NULL);
	bufs[2] = kt_buf_with(TG_FLOAT32, 20, a);
	run(s, "r_4_5", bufs, 3);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], o0, sizeof o0), TG_OK);
	ck_assert_int_eq(tg_buffer_copyout(bufs[1], o1, sizeof o1), TG_OK);
	for (int i = 0; i < 4; i++) {
		float acc = 0.0f;
		for (int j = 0; j < 5; j++)
			acc += a[i * 5 + j];
		ck_assert_float_eq(o0[i], acc);
		ck_assert_float_eq(o1[i], acc * 2.0f);
	}
	kt_unref(bufs, 3);
	ck_assert_int_eq(tg_codegen(s, kt_cpu_caps(), kt_set(), &ks), TG_OK);
	ck_assert_uint_eq(ks.outs, 3);
	{ /* one accumulator */
		const char *p = strstr(ks.linear_text, "DEFINE_ACC");
		ck_assert_ptr_nonnull(p);
		ck_assert_ptr_null(strstr(p + 1, "DEFINE_ACC"));
	}
	tg_ksrc_free(&ks);
}
END_TEST

/* 4-D: out(2,3,4,5) = a + b where b is (5,4,3,2) reversed-permuted:
 * more than three global axes share gidx2. */
START_TEST(four_dims)
{
	static const uint32_t perm[4] = { 3, 2, 1, 0 };
	float a[120], b[120], out[120];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(4, 2, 3, 4, 5));
	tg_uop *y = tg_ast_load(k, 2, TG_FLOAT32,
	                        permute(kt_st(4, 5, 4, 3, 2), 4, perm));
	tg_uop *s = sink1(tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, y, NULL),
	                               kt_st(4, 2, 3, 4, 5)));
	tg_buffer *bufs[3];
	tg_ksrc ks;

	kt_fill(a, 120, 0.5f, 0.25f);
	for (int i = 0; i < 120; i++)
		b[i] = (float)i;
	bufs[0] = kt_buf_with(TG_FLOAT32, 120, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 120, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, 120, b);
	run(s, "E_2_3_4_5", bufs, 3);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int l = 0; l < 4; l++)
				for (int m = 0; m < 5; m++) {
					int o = ((i * 3 + j) * 4 + l) * 5 + m;
					int t = ((m * 4 + l) * 3 + j) * 2 + i;
					ck_assert_float_eq(out[o], a[o] + b[t]);
				}
	kt_unref(bufs, 3);
	ck_assert_int_eq(tg_codegen(s, kt_cpu_caps(), kt_set(), &ks), TG_OK);
	ck_assert_uint_eq(ks.global[0], 5);
	ck_assert_uint_eq(ks.global[1], 4);
	ck_assert_uint_eq(ks.global[2], 6);
	tg_ksrc_free(&ks);
}
END_TEST

START_TEST(unsupported_dtype_is_an_error)
{
	struct tg_renderer_caps caps = *kt_cpu_caps();
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT64, kt_st(2, 3, 5));
	tg_uop *s = sink1(tg_ast_store(k, 0, tg_ast_alu(k, TG_NEG, x, NULL,
	                                                NULL), kt_st(2, 3, 5)));
	tg_ksrc ks;

	caps.dtype_mask &= ~(1u << TG_FLOAT64);
	ck_assert_int_eq(tg_codegen(s, &caps, kt_set(), &ks), TG_EUNSUPPORTED);
	ck_assert_error("codegen: float64 is not supported by this device");
	ck_assert_error("E_15");
	ck_assert_ptr_null(ks.src);
	tg_ksrc_free(&ks);
	caps = *kt_cpu_caps();
	caps.dialect = 9;  /* no such dialect */
	ck_assert_int_eq(tg_codegen(s, &caps, kt_set(), &ks), TG_EUNSUPPORTED);
	ck_assert_error("codegen: kernel E_15: no renderer for dialect 9");
	tg_ksrc_free(NULL);
}
END_TEST

/* TG_DIALECT_CUSTOM: codegen leaves the linear kernel in the public
 * form (ks.view) for the plugin's renderer instead of source: the
 * kernel's facts, each op with its ABI code, types, sources as earlier
 * positions and its argument; a struct sized smaller gets what fits;
 * an index past the end and a NULL out are refused with a message. */
START_TEST(custom_dialect_gives_a_kernel_view)
{
	struct tg_renderer_caps caps = *kt_cpu_caps();
	tg_uop *s = kt_matmul(k, 3, 5, 4);
	struct tg_kernel_info info = { .struct_size = sizeof info };
	struct tg_kernel_op op = { .struct_size = sizeof op }, small;
	int globals = 0, ranges = 0, ends = 0, stores = 0, phis = 0;
	tg_ksrc ks;

	caps.dialect = TG_DIALECT_CUSTOM;
	caps.max_upcast = 1;
	setenv("NOOPT", "1", 1);
	ck_assert_msg(tg_codegen(s, &caps, kt_set(), &ks) == TG_OK, "%s",
	              tg_last_error());
	unsetenv("NOOPT");
	ck_assert_ptr_null(ks.src);
	ck_assert_ptr_nonnull(ks.view);
	ck_assert_int_eq(tg_kview_info(ks.view, &info), TG_OK);
	ck_assert_str_eq(info.name, "r_3_5_4");
	ck_assert_uint_eq(info.nbufs, 3);
	ck_assert_uint_eq(info.outs, 1);
	ck_assert_uint_eq(info.nvars, 0);
	ck_assert_uint_eq(info.global[0] * info.global[1] * info.global[2], 15);
	for (size_t i = 0; i < info.nops; i++) {
		ck_assert_int_eq(tg_kview_op(ks.view, i, &op), TG_OK);
		for (size_t j = 0; j < op.nsrc; j++)
			if (op.op != TG_KOP_DEFINE_ACC || j == 0)
				ck_assert_uint_lt(op.src[j], i);
		switch (op.op) {
		case TG_KOP_DEFINE_GLOBAL:
			ck_assert_int_eq(op.space, TG_KSPACE_GLOBAL);
			ck_assert_int_eq(op.dtype, TG_FLOAT32);
			ck_assert_int_eq(op.a, op.i == 0);  /* written */
			globals++;
			break;
		case TG_KOP_RANGE:
			ck_assert_int_eq(op.dtype, TG_KTYPE_INDEX);
			ck_assert_int_eq(op.a, 1);  /* the reduce loop */
			ranges++;
			break;
		case TG_KOP_ENDRANGE: ends++; break;
		case TG_KOP_STORE:
			ck_assert_int_eq(op.dtype, TG_KTYPE_VOID);
			stores++;
			break;
		case TG_KOP_PHI: phis++; break;
		case TG_KOP_SPECIAL:
			ck_assert_ptr_nonnull(op.name);
			ck_assert(!strncmp(op.name, "gidx", 4));
			ck_assert_int_gt(op.a, 0);
			ck_assert_int_eq(op.vmin, 0);
			ck_assert_int_eq(op.vmax, op.a - 1);
			break;
		default:
			ck_assert_int_ge(op.op, TG_KOP_DEFINE_GLOBAL);
			ck_assert_int_le(op.op, TG_KOP_MULACC);
			ck_assert_int_eq(op.lanes, 1);  /* max_upcast 1 */
		}
	}
	ck_assert_int_eq(globals, 3);
	ck_assert_int_eq(ranges, 1);
	ck_assert_int_eq(ends, 1);
	ck_assert_int_eq(stores, 1);
	ck_assert_int_eq(phis, 1);
	/* an older plugin's smaller struct: only what fits */
	memset(&small, 0x5a, sizeof small);
	small.struct_size = offsetof(struct tg_kernel_op, nsrc);
	ck_assert_int_eq(tg_kview_op(ks.view, 0, &small), TG_OK);
	ck_assert_int_ne(small.op, 0x5a5a5a5a);
	ck_assert_uint_eq(small.nsrc, 0x5a5a5a5a5a5a5a5aull);
	ck_assert_int_eq(tg_kview_op(ks.view, info.nops, &op), TG_EINVAL);
	ck_assert_error("kernel_op: op ");
	ck_assert_error(" of a kernel of ");
	ck_assert_int_eq(tg_kview_op(ks.view, 0, NULL), TG_EINVAL);
	ck_assert_error("kernel_op: out is NULL");
	ck_assert_int_eq(tg_kview_info(NULL, &info), TG_EINVAL);
	ck_assert_error("kernel_info: the kernel is NULL");
	tg_ksrc_free(&ks);
}
END_TEST

/* The inputs of the transcendental checks: the special values, then a
 * sweep over each function's interesting range. */
#define TX_N 2048
static void tx_inputs(double *x, int op)
{
	static const double special[] = { NAN, INFINITY, -INFINITY, 0, -0.0,
	                                  1, -1, 0.5, 2, 1e-40, 1e-310,
	                                  1030, -1080, 150, -160, 1e5 };
	int i, ns = (int)(sizeof special / sizeof special[0]);

	for (i = 0; i < TX_N; i++) {
		double u = (i + 0.5) / TX_N;

		x[i] = i < ns ? special[i]
		       : op == TG_LOG2 ? exp2((u - 0.5) * 300) * (1 + u)
		       : op == TG_EXP2 ? (u - 0.5) * 260 : (u - 0.5) * 2e3;
	}
}

/* exp2, log2 and sin from the rewrite rules (a device that sets
 * needs_transcendental_fallback; here the C dialect, so the program
 * runs on the CPU) against libm: within 2 units in the last place in
 * float64 and float32 (float32 against libm's double rounded to
 * float), special values exact.  The source calls no libm function. */
START_TEST(transcendental_fallback_within_two_ulps)
{
	static const unsigned ops[3] = { TG_EXP2, TG_LOG2, TG_SIN };
	static double x[TX_N], gd[TX_N];
	static float xf[TX_N], gf[TX_N];
	struct tg_renderer_caps caps = *kt_cpu_caps();
	int o, f64, i;

	caps.needs_transcendental_fallback = 1;
	for (o = 0; o < 3; o++)
		for (f64 = 0; f64 < 2; f64++) {
			tg_dtype dt = f64 ? TG_FLOAT64 : TG_FLOAT32;
			tg_uop *in = tg_ast_load(k, 1, dt, kt_st(1, TX_N));
			tg_uop *s = sink1(tg_ast_store(k, 0, tg_ast_alu(k, ops[o], in,
			                                                NULL, NULL),
			                               kt_st(1, TX_N)));
			tg_buffer *bufs[2];
			double worst = 0;
			tg_ksrc ks;

			tx_inputs(x, (int)ops[o]);
			for (i = 0; i < TX_N; i++)
				xf[i] = (float)x[i];
			ck_assert_msg(tg_codegen(s, &caps, kt_set(), &ks) == TG_OK,
			              "%s", tg_last_error());
			ck_assert_ptr_null(strstr(ks.src, "__builtin_exp2"));
			ck_assert_ptr_null(strstr(ks.src, "__builtin_log2"));
			ck_assert_ptr_null(strstr(ks.src, "__builtin_sin"));
			bufs[0] = kt_buf_with(dt, TX_N, NULL);
			bufs[1] = kt_buf_with(dt, TX_N, f64 ? (void *)x : (void *)xf);
			kt_launch(&ks, bufs, 2);
			ck_assert_int_eq(tg_buffer_copyout(bufs[0], f64 ? (void *)gd
			                                   : (void *)gf, TX_N *
			                                   tg_dtype_size(dt)), 0);
			for (i = 0; i < TX_N; i++) {
				double in_v = f64 ? x[i] : xf[i];
				double w = ops[o] == TG_EXP2 ? exp2(in_v)
				           : ops[o] == TG_LOG2 ? log2(in_v) : sin(in_v);
				double g = f64 ? gd[i] : gf[i];
				double e;

				if (!f64)
					w = (float)w;
				if (ops[o] == TG_SIN && fabs(in_v) > 1e9)
					continue;  /* documented: beyond the reduction */
				e = tl_ulps(g, w, f64);
				ck_assert_msg(e <= 2, "%s %s(%.17g) = %.17g, libm "
				              "%.17g: %.1f ulp", tg_dtype_name(dt),
				              tg_op_name(ops[o]), in_v, g, w, e);
				worst = e > worst ? e : worst;
			}
			fprintf(stderr, "%s %s: worst %.2f ulp\n", tg_dtype_name(dt),
			        tg_op_name(ops[o]), worst);
			kt_unref(bufs, 2);
			tg_ksrc_free(&ks);
		}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("codegen");
	TCase *t = tcase_create("codegen");

	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, elementwise_add);
	tcase_add_test(t, transcendental_fallback_within_two_ulps);
	tcase_add_test(t, broadcast_add);
	tcase_add_test(t, transposed_input);
	tcase_add_test(t, padded_input);
	tcase_add_test(t, masked_const);
	tcase_add_test(t, sum_rows);
	tcase_add_test(t, max_columns_int32);
	tcase_add_test(t, sum_to_scalar);
	tcase_add_test(t, reduce_then_elementwise);
	tcase_add_test(t, two_stores_share_a_reduce);
	tcase_add_test(t, four_dims);
	tcase_add_test(t, unsupported_dtype_is_an_error);
	tcase_add_test(t, custom_dialect_gives_a_kernel_view);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	setenv("NOOPT", "1", 1);  /* forked tests inherit it */
	return tl_run(suite());
}

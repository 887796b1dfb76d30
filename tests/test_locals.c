/*
 * test_locals.c - work groups: LOCAL, GROUP and GROUPTOP opts and the
 * two-stage shared-memory reduce, on the device under test (the default
 * device; `make check` runs this suite on OPENCL and VULKAN through
 * tests/ondevice.sh).  Each kernel runs with explicit opts and under
 * NOOPT on the same device: LOCAL keeps the reduce's order, so it
 * agrees bit for bit; a grouped reduce adds in another order and is
 * checked against C loops in double precision (ints exactly).  On a
 * device without work groups the suite checks that the opts are refused
 * with a clear message.
 */
#include "config.h"

#include <math.h>

#include "kasttest.h"

static tg_ir *k;

static void setup(void)
{
	unsetenv("NOOPT");
	k = tg_ir_new();
	ck_assert_ptr_nonnull(k);
}

static void teardown(void)
{
	tg_ir_free(k);
	tg_shutdown();
}

static int has_groups(void)
{
	const struct tg_renderer_caps *c = kt_cpu_caps();
	static int said;

	if (!said++)
		fprintf(stderr, "test_locals on %s: %s\n", tg_dev_name(kt_dev()),
		        c->has_local ? "work groups"
		                     : "no work groups: refusals only");
	return c->has_local && c->has_shared;
}

/* Compiles sink with opts (text form checked), runs it over bufs and
 * copies buffer 0 into out. */
static void run(tg_uop *sink, const tg_opt *opts, size_t nopts,
                const char *want_opts, tg_buffer **bufs, size_t nbufs,
                void *out, size_t nbytes)
{
	tg_ksrc ks;

	ck_assert_msg(tg_codegen_opts(sink, kt_cpu_caps(), kt_set(), opts, nopts, &ks) ==
	              TG_OK, "%s", tg_last_error());
	if (getenv("TG_TEST_SHOW_SOURCE"))  /* for debugging */
		fprintf(stderr, "%s\n%s", ks.opts, ks.src);
	ck_assert_str_eq(ks.opts, want_opts);
	kt_launch(&ks, bufs, nbufs);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, nbytes), TG_OK);
}

/* A matmul with opts against the same kernel under NOOPT (bit for bit:
 * locals and upcasts keep the reduce's order) and against C loops. */
static void check_matmul(int m, int n, int kk, const tg_opt *opts,
                         size_t nopts, const char *text)
{
	size_t no = (size_t)(m * n);
	float *a = malloc(sizeof *a * (size_t)(m * kk));
	float *b = malloc(sizeof *b * (size_t)(kk * n));
	float *out = malloc(sizeof *out * no), *ref = malloc(sizeof *ref * no);
	tg_buffer *bufs[3];

	ck_assert(a && b && out && ref);
	kt_fill(a, (size_t)(m * kk), 0.5f, 0.125f);
	kt_fill(b, (size_t)(kk * n), 0.25f, -0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, no, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, (size_t)(m * kk), a);
	bufs[2] = kt_buf_with(TG_FLOAT32, (size_t)(kk * n), b);
	run(kt_matmul(k, m, n, kk), NULL, 0, "", bufs, 3, ref, sizeof *ref * no);
	tg_ir_free(k);
	k = tg_ir_new();
	run(kt_matmul(k, m, n, kk), opts, nopts, text, bufs, 3, out,
	    sizeof *out * no);
	ck_assert_mem_eq(out, ref, sizeof *out * no);
	tl_check_matmul(out, a, b, m, n, kk);
	kt_unref(bufs, 3);
	free(a);
	free(b);
	free(out);
	free(ref);
}

START_TEST(matmul_locals)
{
	static const tg_opt o[] = { { TG_OPT_LOCAL, 0, 8 },
	                            { TG_OPT_LOCAL, 1, 8 } };

	if (!has_groups())
		return;
	check_matmul(32, 64, 16, o, 2, "LOCAL(0,8) LOCAL(1,8)");
}
END_TEST

/* Locals after register blocking and unrolling: each thread computes a
 * 4x4 block, a group 4x4 threads. */
START_TEST(matmul_locals_upcast)
{
	static const tg_opt o[] = {
		{ TG_OPT_UPCAST, 1, 4 }, { TG_OPT_UPCAST, 0, 4 },
		{ TG_OPT_UNROLL, 2, 4 }, { TG_OPT_LOCAL, 0, 4 },
		{ TG_OPT_LOCAL, 1, 2 },
	};

	if (!has_groups())
		return;
	check_matmul(32, 24, 20, o, 5, "UPCAST(1,4) UPCAST(0,4) UNROLL(2,4) "
	             "LOCAL(0,4) LOCAL(1,2)");
}
END_TEST

/* out(rows) = reduce of a(rows, cols) along axis 1 (rows == 1: a full
 * reduction over a 1-D input). */
static tg_uop *row_reduce(unsigned op, tg_dtype dt, int rows, int cols)
{
	tg_uop *x, *s;

	if (rows == 1) {
		x = tg_ast_load(k, 1, dt, kt_st(1, cols));
		s = tg_ast_store(k, 0, tg_ast_reduce(k, op, x, 1u), kt_st(1, 1));
	} else {
		x = tg_ast_load(k, 1, dt, kt_st(2, rows, cols));
		s = tg_ast_store(k, 0, tg_ast_reduce(k, op, x, 2u),
		                 kt_st(2, rows, 1));
	}
	ck_assert_msg(s != NULL, "%s", tg_last_error());
	return tg_ast_sink(k, &s, 1);
}

/* A float32 row reduce (ADD or MAX) with opts against C loops. */
static void check_rows_f32(unsigned op, int rows, int cols,
                           const tg_opt *opts, size_t nopts,
                           const char *text)
{
	size_t n = (size_t)(rows * cols);
	float *a = malloc(sizeof *a * n), *out = malloc(sizeof *out * rows);
	tg_buffer *bufs[2];

	ck_assert(a && out);
	for (size_t i = 0; i < n; i++)  /* negative everywhere for MAX */
		a[i] = (float)((int)(i * 37 % 101) - 150) * 0.0625f;
	bufs[0] = kt_buf_with(TG_FLOAT32, (size_t)rows, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, n, a);
	run(row_reduce(op, TG_FLOAT32, rows, cols), opts, nopts, text, bufs, 2,
	    out, sizeof *out * rows);
	for (int r = 0; r < rows; r++) {
		double want = op == TG_ADD ? 0 : -INFINITY;
		for (int c = 0; c < cols; c++) {
			double v = a[r * cols + c];
			want = op == TG_ADD ? want + v : fmax(want, v);
		}
		ck_assert_msg(fabs(out[r] - want) <= 1e-5 * (fabs(want) + 1),
		              "%s row %d: got %.9g want %.9g", text, r, out[r],
		              want);
	}
	kt_unref(bufs, 2);
	free(a);
	free(out);
}

START_TEST(sum_grouptop_256)
{
	static const tg_opt o[] = { { TG_OPT_GROUPTOP, 0, 256 } };

	if (has_groups())
		check_rows_f32(TG_ADD, 1, 4096, o, 1, "GROUPTOP(0,256)");
}
END_TEST

START_TEST(sum_group_unroll)
{
	static const tg_opt o[] = { { TG_OPT_GROUP, 0, 16 },
	                            { TG_OPT_UNROLL, 0, 4 } };

	if (has_groups())
		check_rows_f32(TG_ADD, 1, 64000, o, 2,
		               "GROUP(0,16) UNROLL(0,4)");
}
END_TEST

/* The whole reduce axis in the group: no loop in the first stage. */
START_TEST(max_whole_axis_grouped)
{
	static const tg_opt o[] = { { TG_OPT_GROUPTOP, 1, 64 } };

	if (has_groups())
		check_rows_f32(TG_MAX, 6, 64, o, 1, "GROUPTOP(1,64)");
}
END_TEST

/* Locals on the rows and a group on the columns: the shared array is
 * indexed by both. */
START_TEST(rows_local_and_group)
{
	static const tg_opt o[] = { { TG_OPT_LOCAL, 0, 4 },
	                            { TG_OPT_GROUP, 1, 16 } };

	if (has_groups())
		check_rows_f32(TG_ADD, 32, 96, o, 2, "LOCAL(0,4) GROUP(1,16)");
}
END_TEST

/* Upcast rows with a grouped reduce: four partial sums per thread, one
 * slot each in shared memory. */
START_TEST(rows_upcast_grouptop)
{
	static const tg_opt o[] = { { TG_OPT_UPCAST, 0, 4 },
	                            { TG_OPT_GROUPTOP, 1, 16 },
	                            { TG_OPT_UNROLL, 1, 2 } };

	if (has_groups())
		check_rows_f32(TG_ADD, 8, 256, o, 3,
		               "UPCAST(0,4) GROUPTOP(1,16) UNROLL(1,2)");
}
END_TEST

/* Batch norm's mean: (64,8,20,20) summed over axes 0, 2 and 3 (the
 * last two one axis of 400 in the kernel), the first grouped, the last
 * unrolled: the second stage's loop must not open inside the first
 * stage's nest (a linearizer bug once). */
START_TEST(grouped_outer_of_three_reduce_axes)
{
	static const tg_opt o[] = { { TG_OPT_GROUPTOP, 0, 16 },
	                            { TG_OPT_UNROLL, 2, 4 } };
	enum { N = 64 * 8 * 20 * 20 };
	float *a = malloc(sizeof *a * N), out[8];
	tg_sint sh[4] = { tg_si(64), tg_si(8), tg_si(20), tg_si(20) };
	tg_sint so[4] = { tg_si(1), tg_si(8), tg_si(1), tg_si(1) };
	tg_uop *x, *s;
	tg_buffer *bufs[2];

	if (!has_groups()) {
		free(a);
		return;
	}
	ck_assert_ptr_nonnull(a);
	for (int i = 0; i < N; i++)
		a[i] = (float)((i * 37) % 101 - 50) * 0.125f;
	x = tg_ast_load(k, 1, TG_FLOAT32, tg_st_from_shape(NULL, 4, sh));
	s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, x, 13u),
	                 tg_st_from_shape(NULL, 4, so));
	bufs[0] = kt_buf_with(TG_FLOAT32, 8, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, N, a);
	run(tg_ast_sink(k, &s, 1), o, 2, "GROUPTOP(0,16) UNROLL(2,4)", bufs, 2,
	    out, sizeof out);
	for (int c = 0; c < 8; c++) {
		double want = 0;
		for (int b = 0; b < 64; b++)
			for (int p = 0; p < 400; p++)
				want += a[(b * 8 + c) * 400 + p];
		ck_assert_double_eq_tol(out[c], want, 1e-5 * (fabs(want) + 1));
	}
	kt_unref(bufs, 2);
	free(a);
}
END_TEST

/* int32 sums are exact in any order. */
START_TEST(int_sum_grouped_exact)
{
	static const tg_opt o[] = { { TG_OPT_GROUPTOP, 0, 32 } };
	int32_t a[2048], out[1];
	int64_t want = 0;
	tg_buffer *bufs[2];

	if (!has_groups())
		return;
	for (int i = 0; i < 2048; i++) {
		a[i] = (i * 7919) % 100003 - 50000;
		want += a[i];
	}
	bufs[0] = kt_buf_with(TG_INT32, 1, NULL);
	bufs[1] = kt_buf_with(TG_INT32, 2048, a);
	run(row_reduce(TG_ADD, TG_INT32, 1, 2048), o, 1, "GROUPTOP(0,32)",
	    bufs, 2, out, sizeof out);
	ck_assert_int_eq(out[0], (int32_t)want);
	kt_unref(bufs, 2);
}
END_TEST

/* The hand-coded opts on a device with work groups: a full reduction
 * is grouped (tinygrad's GROUPTOP by 256), an elementwise kernel gets
 * locals; both still compute the right values. */
START_TEST(hand_coded_use_groups)
{
	tg_ksrc ks;
	const struct tg_renderer_caps *c = kt_cpu_caps();

	if (!has_groups())
		return;
	ck_assert_int_eq(tg_codegen(row_reduce(TG_ADD, TG_FLOAT32, 1, 4096), c, kt_set(),
	                            &ks), TG_OK);
	ck_assert_msg(strstr(ks.opts, "GROUPTOP(0,256)") != NULL, "%s",
	              ks.opts);
	ck_assert_uint_eq(ks.local[0], 256);
	tg_ksrc_free(&ks);

	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 64, 48));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, x, NULL),
	                         kt_st(2, 64, 48));
	ck_assert_int_eq(tg_codegen(tg_ast_sink(k, &s, 1), c, kt_set(), &ks), TG_OK);
	ck_assert_msg(strstr(ks.opts, "LOCAL(") != NULL, "%s", ks.opts);
	ck_assert_uint_gt(ks.local[0] * ks.local[1] * ks.local[2], 1);
	tg_ksrc_free(&ks);
}
END_TEST

/* out = a(m,kk) @ b(kk,n) with the hand-coded opts, which must be
 * `want`, against C loops (grouped: within rounding). */
static void check_hand_matmul(int m, int n, int kk, const char *want)
{
	size_t no = (size_t)(m * n);
	float *a = malloc(sizeof *a * (size_t)(m * kk));
	float *b = malloc(sizeof *b * (size_t)(kk * n));
	float *out = malloc(sizeof *out * no);
	tg_buffer *bufs[3];
	tg_ksrc ks;

	ck_assert(a && b && out);
	kt_fill(a, (size_t)(m * kk), 0.5f, 0.125f);
	kt_fill(b, (size_t)(kk * n), 0.25f, -0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, no, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, (size_t)(m * kk), a);
	bufs[2] = kt_buf_with(TG_FLOAT32, (size_t)(kk * n), b);
	ck_assert_msg(tg_codegen(kt_matmul(k, m, n, kk), kt_cpu_caps(),
	                         kt_set(), &ks) == TG_OK, "%s",
	              tg_last_error());
	ck_assert_str_eq(ks.opts, want);
	kt_launch(&ks, bufs, 3);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof *out * no),
	                 TG_OK);
	tl_check_matmul(out, a, b, m, n, kk);
	kt_unref(bufs, 3);
	free(a);
	free(b);
	free(out);
}

/* tinygrad's matvec heuristic: a matrix times a vector (either side)
 * reduces each row across 8 items of a group, 4 rows a group, 4 rows
 * an item; a matmul, whose operands are both broadcast, does not take
 * it. */
START_TEST(hand_coded_matvec)
{
	tg_ksrc ks;

	if (!has_groups())
		return;
	/* the axis of 1 merges away: (64, 48), the reduce axis 1 */
	check_hand_matmul(64, 1, 48, "GROUP(1,8) LOCAL(0,4) UPCAST(0,4)");
	check_hand_matmul(1, 64, 48, "GROUP(1,8) LOCAL(0,4) UPCAST(0,4)");
	/* rows not a multiple of 16: not a matvec for the heuristic */
	ck_assert_int_eq(tg_codegen(kt_matmul(k, 24, 1, 48), kt_cpu_caps(),
	                            kt_set(), &ks), TG_OK);
	ck_assert_msg(!strstr(ks.opts, "GROUP("), "%s", ks.opts);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_codegen(kt_matmul(k, 32, 32, 48), kt_cpu_caps(),
	                            kt_set(), &ks), TG_OK);
	ck_assert_msg(!strstr(ks.opts, "GROUP("), "%s", ks.opts);
	tg_ksrc_free(&ks);
}
END_TEST

/* A tensor core of work-group shape, described by the test (PoCL and
 * lavapipe have none): an 8x8 tile per group of 4x2 items, 2x4 values
 * an item, K unrolled by 2.  TC(0,0) maps a 32x32x16 matmul onto it
 * through LOCAL and UPCAST splits; the values equal NOOPT's (locals
 * and upcasts keep the reduce's order) and C's. */
START_TEST(tc_work_group)
{
	static const struct tg_tensor_core tc = {
		.struct_size = TG_STRUCT_SIZE(struct tg_tensor_core, splits),
		.dims = { 8, 8, 2 },
		.dtype_in = TG_FLOAT32,
		.dtype_out = TG_FLOAT32,
		.nsplits = 4,
		.splits = { { TG_TC_LOCAL, 0, 4 }, { TG_TC_UPCAST, 0, 2 },
		            { TG_TC_LOCAL, 1, 2 }, { TG_TC_UPCAST, 1, 4 } },
	};
	static const tg_opt o[] = { { TG_OPT_TC, 0, 0 } };
	struct tg_renderer_caps caps;
	float a[32 * 16], b[16 * 32], out[32 * 32], ref[32 * 32];
	tg_buffer *bufs[3];
	tg_ksrc ks;

	if (!has_groups())
		return;
	caps = *kt_cpu_caps();
	caps.tensor_cores = 1;
	caps.tc = &tc;
	kt_fill(a, 32 * 16, 0.5f, 0.125f);
	kt_fill(b, 16 * 32, 0.25f, -0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 32 * 32, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 32 * 16, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, 16 * 32, b);
	run(kt_matmul(k, 32, 32, 16), NULL, 0, "", bufs, 3, ref, sizeof ref);
	ck_assert_msg(tg_codegen_opts(kt_matmul(k, 32, 32, 16), &caps, kt_set(),
	                              o, 1, &ks) == TG_OK, "%s",
	              tg_last_error());
	ck_assert_str_eq(ks.opts, "TC(0,0)");
	ck_assert_uint_eq(ks.local[0] * ks.local[1] * ks.local[2], 8);
	kt_launch(&ks, bufs, 3);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	ck_assert_mem_eq(out, ref, sizeof out);
	tl_check_matmul(out, a, b, 32, 32, 16);
	kt_unref(bufs, 3);
}
END_TEST

/* The caps of a CUDA device of compute capability 8.0 (what the CUDA
 * plugin reports), for rendering without one. */
static const struct tg_renderer_caps *cuda_caps(void)
{
	static const struct tg_tensor_core mma = {
		.struct_size = TG_STRUCT_SIZE(struct tg_tensor_core, splits),
		.dims = { 8, 16, 16 },
		.dtype_in = TG_FLOAT16,
		.dtype_out = TG_FLOAT32,
		.nsplits = 4,
		.splits = { { TG_TC_UPCAST, 0, 2 }, { TG_TC_LOCAL, 0, 4 },
		            { TG_TC_UPCAST, 1, 2 }, { TG_TC_LOCAL, 1, 8 } },
	};
	static const struct tg_renderer_caps c = {
		.struct_size = sizeof c, .dialect = TG_DIALECT_CUDA,
		.has_local = 1, .has_shared = 1, .max_upcast = 4,
		.global_max = { SIZE_MAX / 2, SIZE_MAX / 2, SIZE_MAX / 2 },
		.local_max = { 1024, 1024, 64 }, .local_max_total = 1024,
		.shared_max = 48 * 1024, .dtype_mask = TG_DTYPE_ALL,
		.tensor_cores = 1, .tc = &mma, .buffer_align = 256,
	};

	return &c;
}

/* A half matmul on a CUDA device of compute capability 8.0 or later
 * goes through mma.sync: the hand-coded opts start with TC and add
 * upcasts, a warp is the work group, the fragments are vectors and
 * the sum stays in the instruction's C operand (no float4 add). */
START_TEST(tc_cuda_mma_source)
{
	tg_ksrc ks;

	ck_assert_msg(tg_codegen(kt_matmul_dt(k, 64, 64, 64, TG_FLOAT16),
	                         cuda_caps(), kt_set(), &ks) == TG_OK, "%s",
	              tg_last_error());
	if (getenv("TG_TEST_SHOW_SOURCE"))
		fprintf(stderr, "%s\n%s", ks.opts, ks.src);
	ck_assert_str_eq(ks.opts, "TC(0,0) UPCAST(0,4) UPCAST(1,4)");
	ck_assert_uint_eq(ks.local[0], 4);
	ck_assert_uint_eq(ks.local[1], 8);
	ck_assert_uint_eq(ks.local[2], 1);
	ck_assert_ptr_nonnull(strstr(ks.src, "mma.sync.aligned.m16n8k16.row."
	                             "col.f32.f16.f16.f32"));
	ck_assert_ptr_nonnull(strstr(ks.src, "struct __align__(16) tg_half8 "
	                             "{ half v[8]; };"));
	ck_assert_ptr_nonnull(strstr(ks.src, "struct __align__(8) tg_half4 "
	                             "{ half v[4]; };"));
	ck_assert_ptr_nonnull(strstr(ks.src, "tg_float4 acc0 = (tg_float4{{"
	                             "(0x0p+0f),(0x0p+0f),(0x0p+0f),"
	                             "(0x0p+0f)}});"));
	ck_assert_ptr_nonnull(strstr(ks.src, "acc0 = v"));
	ck_assert_ptr_nonnull(strstr(ks.src, ", acc0);"));
	ck_assert_ptr_nonnull(strstr(ks.src, ".v[3]"));
	tg_ksrc_free(&ks);
}
END_TEST

/* After TC, an opt that would move the instruction's lanes is refused
 * with the opt and the instruction named; one that keeps them is not. */
START_TEST(tc_cuda_refusals)
{
	tg_uop *mm = kt_matmul_dt(k, 64, 64, 64, TG_FLOAT16);
	static const tg_opt ok[] = { { TG_OPT_TC, 0, 0 },
	                             { TG_OPT_UNROLL, 2, 2 } };
	static const tg_opt bad[][2] = {
		{ { TG_OPT_TC, 0, 0 }, { TG_OPT_LOCAL, 1, 2 } },
		{ { TG_OPT_TC, 0, 0 }, { TG_OPT_LOCAL, 0, 2 } },
		{ { TG_OPT_TC, 0, 0 }, { TG_OPT_GROUP, 2, 2 } },
		{ { TG_OPT_TC, 0, 0 }, { TG_OPT_PADTO, 1, 32 } },
	};
	static const char *const msg[] = {
		"opt: LOCAL(1,2) after TC would move the lanes of "
		"tg_mma_m16n8k16_f16_f32",
		"opt: LOCAL(0,2) after TC would move",
		"opt: GROUP(2,2) after TC would move",
		"opt: PADTO(1,32) after TC would move",
	};
	tg_ksrc ks;

	ck_assert_msg(tg_codegen_opts(mm, cuda_caps(), kt_set(), ok, 2, &ks) ==
	              TG_OK, "%s", tg_last_error());
	ck_assert_ptr_nonnull(strstr(ks.src, "tg_mma_m16n8k16_f16_f32("));
	tg_ksrc_free(&ks);
	for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++) {
		ck_assert_int_ne(tg_codegen_opts(mm, cuda_caps(), kt_set(),
		                                 bad[i], 2, &ks), TG_OK);
		ck_assert_error(msg[i]);
	}
	/* N before M among the axes: lidx0 would be M's */
	ck_assert_int_ne(tg_codegen_opts(mm, cuda_caps(), kt_set(),
	                 (tg_opt[]){ { TG_OPT_TC, 1, 0 } }, 1, &ks), TG_OK);
	ck_assert_error("axis 0 (N) comes before axis 1 (M)");
}
END_TEST

/* float to IEEE half bits, for the values the half tests use: 0 and
 * normal numbers whose mantissa fits 10 bits (exactly representable). */
static uint16_t half_bits(float f)
{
	uint32_t x;
	int e;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) == 0)
		return (uint16_t)(x >> 16);
	e = (int)((x >> 23) & 0xff) - 127 + 15;
	ck_assert(e > 0 && e < 31 && (x & 0x1fffu) == 0);
	return (uint16_t)((x >> 16 & 0x8000u) | (uint32_t)e << 10 |
	                  (x >> 13 & 0x3ffu));
}

/* Whether the device under test has a tensor core for half products
 * summed in float. */
static int half_tc(void)
{
	const struct tg_renderer_caps *c = kt_cpu_caps();

	for (int i = 0; c->tc && i < c->tensor_cores; i++)
		if (c->tc[i].dtype_in == TG_FLOAT16 &&
		    c->tc[i].dtype_out == TG_FLOAT32)
			return 1;
	return 0;
}

/* out(m,n) = a @ b of halves summed in float, with opts (NULL: the
 * hand-coded ones), on the device under test, against double loops;
 * where the device has a half tensor core the opts must use it. */
static void check_half_matmul(int m, int n, int kk, const tg_opt *opts,
                              size_t nopts)
{
	size_t na = (size_t)(m * kk), nb = (size_t)(kk * n), no = (size_t)(m * n);
	float *a = malloc(na * 4), *b = malloc(nb * 4), *out = malloc(no * 4);
	uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2);
	tg_buffer *bufs[3];
	tg_ksrc ks;
	int rc;

	ck_assert(a && b && out && ha && hb);
	kt_fill(a, na, 0.25f, 0.125f);
	kt_fill(b, nb, 0.125f, -0.25f);
	for (size_t i = 0; i < na; i++)
		ha[i] = half_bits(a[i]);
	for (size_t i = 0; i < nb; i++)
		hb[i] = half_bits(b[i]);
	bufs[0] = kt_buf_with(TG_FLOAT32, no, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT16, na, ha);
	bufs[2] = kt_buf_with(TG_FLOAT16, nb, hb);
	rc = opts ? tg_codegen_opts(kt_matmul_dt(k, m, n, kk, TG_FLOAT16),
	                            kt_cpu_caps(), kt_set(), opts, nopts, &ks)
	          : tg_codegen(kt_matmul_dt(k, m, n, kk, TG_FLOAT16),
	                       kt_cpu_caps(), kt_set(), &ks);
	ck_assert_msg(rc == TG_OK, "%s", tg_last_error());
	if (getenv("TG_TEST_SHOW_SOURCE"))
		fprintf(stderr, "%s\n%s", ks.opts, ks.src);
	if (half_tc())
		ck_assert_msg(!strncmp(ks.opts, "TC(", 3), "%s", ks.opts);
	kt_launch(&ks, bufs, 3);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, no * 4), TG_OK);
	tl_check_matmul(out, a, b, m, n, kk);
	kt_unref(bufs, 3);
	free(a), free(b), free(out), free(ha), free(hb);
}

/* Half matmuls summed in float, on every device: through the tensor
 * core where the device has one (CUDA: mma.sync), hand-coded (TC and
 * upcasts), TC alone, TC with K unrolled, and TC padding shapes the
 * instruction does not divide (amount 2). */
START_TEST(tc_half_matmul)
{
	static const tg_opt tc[] = { { TG_OPT_TC, 0, 0 } };
	static const tg_opt tcu[] = { { TG_OPT_TC, 0, 0 },
	                              { TG_OPT_UNROLL, 2, 2 },
	                              { TG_OPT_UPCAST, 1, 2 } };
	static const tg_opt pad[] = { { TG_OPT_TC, 0, 2 } };
	tg_ksrc ks;

	if (!(kt_cpu_caps()->dtype_mask & (1u << TG_FLOAT16))) {
		/* PoCL: no cl_khr_fp16; the kernel is refused by name */
		ck_assert_int_ne(tg_codegen(kt_matmul_dt(k, 64, 64, 64,
		                                         TG_FLOAT16),
		                            kt_cpu_caps(), kt_set(), &ks), TG_OK);
		ck_assert_error("float16");
		return;
	}
	check_half_matmul(64, 64, 64, NULL, 0);
	check_half_matmul(32, 128, 256, NULL, 0);
	if (!half_tc())
		return;  /* the opts below name the tensor core */
	check_half_matmul(16, 8, 16, tc, 1);
	check_half_matmul(32, 16, 64, tcu, 3);
	check_half_matmul(40, 24, 40, pad, 1);
}
END_TEST

/* Opts the plan refuses, with their messages. */
static void refused(tg_uop *sink, tg_opt o, const char *msg)
{
	tg_ksrc ks;

	ck_assert_int_ne(tg_codegen_opts(sink, kt_cpu_caps(), kt_set(), &o, 1, &ks),
	                 TG_OK);
	ck_assert_msg(strstr(tg_last_error(), msg) != NULL,
	              "error \"%s\" lacks \"%s\"", tg_last_error(), msg);
}

START_TEST(refusals)
{
	tg_uop *mm = kt_matmul(k, 16, 16, 8192);

	if (!has_groups()) {
		refused(mm, (tg_opt){ TG_OPT_LOCAL, 0, 4 },
		        "opt: LOCAL needs work groups");
		refused(mm, (tg_opt){ TG_OPT_GROUPTOP, 2, 4 },
		        "opt: GROUPTOP needs work groups");
		return;
	}
	refused(mm, (tg_opt){ TG_OPT_LOCAL, 2, 4 },
	        "opt: LOCAL on reduce axis 2");
	refused(mm, (tg_opt){ TG_OPT_GROUP, 0, 4 },
	        "opt: GROUP on global axis 0");
	refused(mm, (tg_opt){ TG_OPT_LOCAL, 0, 3 },
	        "opt: LOCAL(0,3) does not split 16");
	refused(mm, (tg_opt){ TG_OPT_GROUPTOP, 2, 8192 }, "exceeds the "
	        "device's");
}
END_TEST

/* NOLOCALS: the kernel runs without work groups (equal to NOOPT bit for
 * bit), and no LOCAL or GROUP comes after it, nor it after them. */
START_TEST(nolocals)
{
	static const tg_opt nl[2] = { { TG_OPT_NOLOCALS, 0, 0 },
	                              { TG_OPT_UPCAST, 1, 4 } };
	tg_uop *mm;
	tg_ksrc ks;

	if (!has_groups()) {
		refused(kt_matmul(k, 16, 16, 32), nl[0],
		        "opt: NOLOCALS needs work groups");
		return;
	}
	check_matmul(16, 16, 32, nl, 2, "NOLOCALS(0,0) UPCAST(1,4)");
	mm = kt_matmul(k, 16, 16, 32);  /* check_matmul made k anew */
	ck_assert_int_eq(tg_codegen_opts(mm, kt_cpu_caps(), kt_set(), nl, 1,
	                                 &ks), TG_OK);
	ck_assert_uint_eq(ks.local[0] * ks.local[1] * ks.local[2], 1);
	tg_ksrc_free(&ks);
	{
		tg_opt o[2] = { nl[0], { TG_OPT_LOCAL, 0, 4 } };
		ck_assert_int_ne(tg_codegen_opts(mm, kt_cpu_caps(), kt_set(), o,
		                                 2, &ks), TG_OK);
		ck_assert_error("opt: LOCAL(0,4) after NOLOCALS");
		o[0] = (tg_opt){ TG_OPT_GROUPTOP, 2, 4 };
		o[1] = nl[0];
		ck_assert_int_ne(tg_codegen_opts(mm, kt_cpu_caps(), kt_set(), o,
		                                 2, &ks), TG_OK);
		ck_assert_error("opt: NOLOCALS after LOCAL, GROUP or GROUPTOP");
	}
}
END_TEST

START_TEST(four_local_axes_refused)
{
	static const tg_opt o[] = {
		{ TG_OPT_LOCAL, 0, 2 }, { TG_OPT_LOCAL, 1, 2 },
		{ TG_OPT_LOCAL, 2, 2 }, { TG_OPT_LOCAL, 3, 2 },
	};
	static const uint32_t rev[4] = { 3, 2, 1, 0 };
	tg_sint sh[4] = { tg_si(4), tg_si(4), tg_si(4), tg_si(4) };
	tg_st *st = tg_st_from_shape(NULL, 4, sh);
	/* a transposing copy: four axes that do not merge into one */
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32,
	                        kt_moved(st, tg_st_permute(NULL, st, 4, rev)));
	tg_uop *s = tg_ast_store(k, 0, x, tg_st_from_shape(NULL, 4, sh));
	tg_ksrc ks;

	if (!has_groups())
		return;
	ck_assert_int_ne(tg_codegen_opts(tg_ast_sink(k, &s, 1), kt_cpu_caps(), kt_set(),
	                                 o, 4, &ks), TG_OK);
	ck_assert_msg(strstr(tg_last_error(), "more than 3 local axes"), "%s",
	              tg_last_error());
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("locals");
	TCase *t = tcase_create("locals");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 300);
	tcase_add_test(t, matmul_locals);
	tcase_add_test(t, matmul_locals_upcast);
	tcase_add_test(t, sum_grouptop_256);
	tcase_add_test(t, sum_group_unroll);
	tcase_add_test(t, max_whole_axis_grouped);
	tcase_add_test(t, rows_local_and_group);
	tcase_add_test(t, rows_upcast_grouptop);
	tcase_add_test(t, int_sum_grouped_exact);
	tcase_add_test(t, grouped_outer_of_three_reduce_axes);
	tcase_add_test(t, hand_coded_use_groups);
	tcase_add_test(t, hand_coded_matvec);
	tcase_add_test(t, tc_work_group);
	tcase_add_test(t, tc_cuda_mma_source);
	tcase_add_test(t, tc_cuda_refusals);
	tcase_add_test(t, tc_half_matmul);
	tcase_add_test(t, refusals);
	tcase_add_test(t, nolocals);
	tcase_add_test(t, four_local_axes_refused);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	/* no device is opened here: Check forks per test, and a runtime's
	 * threads (PoCL, Mesa) do not survive a fork */
	return tl_run(suite());
}

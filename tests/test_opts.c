/*
 * test_opts.c - the hand-coded optimizations (UPCAST, UNROLL): the opts
 * chosen for matmul, reduce and elementwise ASTs, and every optimized
 * kernel run on the CPU plugin against the same kernel under NOOPT
 * (bit for bit: unrolled reduces keep the loop's order) and against
 * C loops in double precision.
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
}

/* Compiles sink (NOOPT when noopt), checks its opts, runs it over bufs
 * and copies buffer 0 (nbytes) into out0, buffer 1 into out1 if set. */
static void run1(tg_uop *sink, int noopt, const char *opts, tg_buffer **bufs,
                 size_t nbufs, void *out0, void *out1, size_t nbytes)
{
	tg_ksrc ks;

	if (noopt)
		setenv("NOOPT", "1", 1);
	ck_assert_msg(tg_codegen(sink, kt_cpu_caps(), kt_set(), &ks) == TG_OK, "%s",
	              tg_last_error());
	unsetenv("NOOPT");
	if (getenv("TG_TEST_SHOW_SOURCE"))  /* for debugging */
		fprintf(stderr, "%s\n%s", ks.opts, ks.src);
	ck_assert_str_eq(ks.opts, noopt ? "" : opts);
	kt_launch(&ks, bufs, nbufs);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out0, nbytes), TG_OK);
	if (out1)
		ck_assert_int_eq(tg_buffer_copyout(bufs[1], out1, nbytes),
		                 TG_OK);
}

/* Runs sink with opts `opts` and under NOOPT: the outputs (buffer 0,
 * and 1 when two) agree bit for bit; the optimized ones land in out. */
static void run_both(tg_uop *sink, const char *opts, tg_buffer **bufs,
                     size_t nbufs, int nout, void *out, size_t nbytes)
{
	char *ref = malloc(2 * nbytes), *got1 = malloc(nbytes);

	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_nonnull(got1);
	ck_assert_ptr_nonnull(sink);
	run1(sink, 1, opts, bufs, nbufs, ref, nout > 1 ? ref + nbytes : NULL,
	     nbytes);
	run1(sink, 0, opts, bufs, nbufs, out, nout > 1 ? got1 : NULL, nbytes);
	ck_assert_msg(!memcmp(ref, out, nbytes), "output 0 differs");
	if (nout > 1)
		ck_assert_msg(!memcmp(ref + nbytes, got1, nbytes),
		              "output 1 differs");
	free(ref);
	free(got1);
}

/* out(M,N) = a(M,K) @ b(K,N) over the full shape (M,N,K). */
static void check_matmul(int m, int n, int kk, const char *opts)
{
	float *a = malloc(sizeof *a * (size_t)(m * kk));
	float *b = malloc(sizeof *b * (size_t)(kk * n));
	float *out = malloc(sizeof *out * (size_t)(m * n));
	tg_buffer *bufs[3];

	ck_assert(a && b && out);
	kt_fill(a, (size_t)(m * kk), 0.5f, 0.125f);
	kt_fill(b, (size_t)(kk * n), 0.25f, -0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, (size_t)(m * n), NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, (size_t)(m * kk), a);
	bufs[2] = kt_buf_with(TG_FLOAT32, (size_t)(kk * n), b);
	run_both(kt_matmul(k, m, n, kk), opts, bufs, 3, 1, out,
	         sizeof *out * (size_t)(m * n));
	tl_check_matmul(out, a, b, m, n, kk);
	kt_unref(bufs, 3);
	free(a);
	free(b);
	free(out);
}

/* The CPU register tile (the caps' 16 float lanes): the columns, along
 * which the output and b are contiguous, in one vector; 8 rows, along
 * which b is broadcast.  128 outputs a thread leave no room to unroll
 * the reduce. */
START_TEST(matmul_16)
{
	check_matmul(16, 16, 16, "UPCAST(1,16) UPCAST(0,8)");
}
END_TEST

/* Nothing divides by 4; the 3-long reduce is unrolled whole (no loop
 * left). */
START_TEST(matmul_odd)
{
	check_matmul(5, 7, 3, "UNROLL(2,0)");
}
END_TEST

/* 8 columns make one vector of 8, the 6 rows block whole. */
START_TEST(matmul_mixed)
{
	check_matmul(6, 8, 20, "UPCAST(1,8) UPCAST(0,6)");
}
END_TEST

START_TEST(matmul_name)
{
	tg_ksrc ks;

	ck_assert_int_eq(tg_codegen(kt_matmul(k, 16, 16, 16), kt_cpu_caps(), kt_set(), &ks),
	                 TG_OK);
	ck_assert_str_eq(ks.name, "r_2_16_8_16");
	ck_assert_uint_eq(ks.global[0], 2);
	ck_assert_uint_eq(ks.global[1], 1);
	ck_assert_uint_eq(ks.global[2], 1);
	{ /* 8 vector accumulators */
		const char *p = ks.linear_text;
		int nacc = 0;
		while ((p = strstr(p, "DEFINE_ACC")) != NULL) {
			nacc++;
			p++;
		}
		ck_assert_int_eq(nacc, 8);
	}
	tg_ksrc_free(&ks);
}
END_TEST

/* NOOPT (environment or config key) turns every opt off, and the
 * kernel is named as before. */
START_TEST(noopt_env)
{
	tg_ksrc ks;

	setenv("NOOPT", "1", 1);
	ck_assert_int_eq(kt_set()->noopt, 1);
	ck_assert_int_eq(tg_codegen(kt_matmul(k, 16, 16, 16), kt_cpu_caps(),
	                            kt_set(), &ks), TG_OK);
	ck_assert_str_eq(ks.opts, "");
	ck_assert_str_eq(ks.name, "r_16_16_16");
	ck_assert_uint_eq(ks.global[0], 16);
	tg_ksrc_free(&ks);
	setenv("NOOPT", "0", 1);
	ck_assert_int_eq(kt_set()->noopt, 0);
	unsetenv("NOOPT");
	/* the config key does the same; a bad value is refused */
	ck_assert_int_eq(tg_config_set("NOOPT", "1"), TG_OK);
	ck_assert_int_eq(kt_set()->noopt, 1);
	ck_assert_int_eq(tg_config_set("NOOPT", "maybe"), TG_ECONFIG);
	ck_assert_int_eq(tg_config_set("NOOPT", NULL), TG_OK);
	ck_assert_int_eq(kt_set()->noopt, 0);
}
END_TEST

/* out = (a * b + c) chain on (3,8): the last axis upcast by 8, one
 * vector; (3,5) gets no opt. */
static void check_elementwise(int rows, int cols, const char *opts)
{
	size_t n = (size_t)(rows * cols);
	float a[64], b[64], c[64], out[64];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, rows, cols));
	tg_uop *y = tg_ast_load(k, 2, TG_FLOAT32, kt_st(2, rows, cols));
	tg_uop *z = tg_ast_load(k, 3, TG_FLOAT32, kt_st(2, rows, cols));
	tg_uop *v = tg_ast_alu(k, TG_ADD, tg_ast_alu(k, TG_MUL, x, y, NULL),
	                       z, NULL);
	tg_uop *s = tg_ast_store(k, 0, tg_ast_alu(k, TG_MAX, v, x, NULL),
	                         kt_st(2, rows, cols));
	tg_buffer *bufs[4];

	ck_assert(n <= 64);
	kt_fill(a, n, 0.5f, 0.25f);
	kt_fill(b, n, -1.5f, 0.5f);
	kt_fill(c, n, 2.0f, -1.0f);
	bufs[0] = kt_buf_with(TG_FLOAT32, n, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, n, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, n, b);
	bufs[3] = kt_buf_with(TG_FLOAT32, n, c);
	run_both(tg_ast_sink(k, &s, 1), opts, bufs, 4, 1, out, n * sizeof *out);
	for (size_t i = 0; i < n; i++) {
		float e = a[i] * b[i] + c[i];
		ck_assert_float_eq(out[i], e > a[i] ? e : a[i]);
	}
	kt_unref(bufs, 4);
}

/* (3,8) contiguous everywhere is one axis of 24 (ast.c merges). */
START_TEST(elementwise_upcast)
{
	check_elementwise(3, 8, "UPCAST(0,8)");
}
END_TEST

START_TEST(elementwise_none)
{
	check_elementwise(3, 5, "");
}
END_TEST

/* A padded input: masked loads in every copy.  out(4,8) = pad(a(4,6),
 * columns 1 left 1 right) + 1. */
START_TEST(padded_upcast)
{
	tg_sint arg[4] = { tg_si(0), tg_si(0), tg_si(1), tg_si(1) };
	float a[24], out[32];
	tg_st *sa = kt_st(2, 4, 6);
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32,
	                        kt_moved(sa, tg_st_pad(NULL, sa, 2, arg)));
	tg_scalar one = { .f = 1.0 };
	tg_uop *c = tg_ast_const(k, TG_FLOAT32, one, kt_st(2, 1, 1));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, c, NULL),
	                         kt_st(2, 4, 8));
	tg_buffer *bufs[2];

	kt_fill(a, 24, 0.5f, 0.25f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 32, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 24, a);
	run_both(tg_ast_sink(k, &s, 1), "UPCAST(1,8)", bufs, 2, 1, out,
	         sizeof out);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 8; j++) {
			float e = j == 0 || j == 7 ? 0.0f : a[i * 6 + j - 1];
			ck_assert_float_eq(out[i * 8 + j], e + 1.0f);
		}
	kt_unref(bufs, 2);
}
END_TEST

/* out(1) = a(64).sum(): on the CPU its contiguous reduce sums in 16
 * lanes (GROUP without work groups: one vector accumulator, added in
 * order after the loop); multiples of 1/8, so every order is exact and
 * equal to NOOPT. */
START_TEST(sum_lanes)
{
	float a[64], out[1];
	double acc = 0;
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(1, 64));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, x, 1u),
	                         kt_st(1, 1));
	tg_buffer *bufs[2];

	kt_fill(a, 64, 0.375f, 0.125f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 1, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 64, a);
	run_both(tg_ast_sink(k, &s, 1), "GROUP(0,16)", bufs, 2, 1, out,
	         sizeof out);
	for (int i = 0; i < 64; i++)
		acc += a[i];
	ck_assert_double_eq_tol(out[0], acc, 1e-4);
	kt_unref(bufs, 2);
}
END_TEST

/* A view of a contiguous buffer of n elements with the given shape
 * and strides (nd axes). */
static tg_st *strided(int n, size_t nd, const int64_t *shape,
                      const int64_t *strides)
{
	tg_st *flat = kt_st(1, n);

	return kt_moved(flat, tg_st_as_strided(NULL, flat, nd, shape, strides,
	                                       0));
}

/* out(nb,16)[b, i] = sum_r x(nb,64)[b, r] * (s * q)[i, r] over a block
 * format's bytes: blocks of 32 values in 18 bytes, each a scale byte
 * s, a byte left out, and 16 bytes of q (a value's byte at its place in
 * the half block).  Integers times multiples of 1/8: exact in any
 * order, against C. */
static void check_blocks(int nb, const char *opts)
{
	enum { R = 16, C = 64, NB = R * C / 32 };
	uint8_t w[NB * 18];
	float *x = malloc(sizeof *x * (size_t)(nb * C)), out[4 * R];
	tg_sint rc[3] = { tg_si(nb), tg_si(R), tg_si(C) };
	tg_st *ss = strided(NB * 18, 3, (const int64_t[]){ 1, NB, 32 },
	                    (const int64_t[]){ 0, 18, 0 });
	tg_st *sq = kt_st(1, NB * 18);
	tg_uop *xs, *s, *q, *st;
	tg_buffer *bufs[3];

	ck_assert(x && nb <= 4);
	sq = kt_moved(sq, tg_st_as_strided(NULL, sq, 4,
	                                   (const int64_t[]){ 1, NB, 2, 16 },
	                                   (const int64_t[]){ 0, 18, 0, 1 },
	                                   2));
	ss = kt_moved(ss, tg_st_reshape(NULL, ss, 3, (const tg_sint[]){
	              tg_si(1), tg_si(R), tg_si(C) }));
	sq = kt_moved(sq, tg_st_reshape(NULL, sq, 3, (const tg_sint[]){
	              tg_si(1), tg_si(R), tg_si(C) }));
	ss = kt_moved(ss, tg_st_expand(NULL, ss, 3, rc));
	sq = kt_moved(sq, tg_st_expand(NULL, sq, 3, rc));
	for (int i = 0; i < NB * 18; i++)
		w[i] = (uint8_t)((i * 7 + 3) % 16);
	kt_fill(x, (size_t)(nb * C), 0.375f, 0.125f);
	xs = tg_ast_load(k, 1, TG_FLOAT32,
	                 strided(nb * C, 3, (const int64_t[]){ nb, R, C },
	                         (const int64_t[]){ C, 0, 1 }));
	s = tg_ast_cast(k, tg_ast_load(k, 2, TG_UINT8, ss), TG_FLOAT32);
	q = tg_ast_cast(k, tg_ast_load(k, 2, TG_UINT8, sq), TG_FLOAT32);
	st = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, tg_ast_alu(k, TG_MUL,
	                  xs, tg_ast_alu(k, TG_MUL, s, q, NULL), NULL), 4u),
	                  kt_st(3, nb, R, 1));
	bufs[0] = kt_buf_with(TG_FLOAT32, (size_t)(nb * R), NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, (size_t)(nb * C), x);
	bufs[2] = kt_buf_with(TG_UINT8, NB * 18, w);
	run_both(tg_ast_sink(k, &st, 1), opts, bufs, 3, 1, out,
	         sizeof *out * (size_t)(nb * R));
	for (int b = 0; b < nb * R; b++) {
		double acc = 0;
		for (int r = 0; r < C; r++) {
			int i = b % R, blk = (i * C + r) / 32;
			acc += x[b / R * C + r] * (double)w[blk * 18] *
			       w[blk * 18 + 2 + (i * C + r) % 16];
		}
		ck_assert_double_eq(out[b], acc);
	}
	kt_unref(bufs, 3);
	free(x);
}

/* The reduce axis of a block format's matvec is read in periods of 32
 * (the block index, the place in the half block), so the CPU unrolls
 * it by 32: one iteration per block, whose scale each row loads once,
 * each copy's byte at a constant place (UNROLL(1,32)); the rows are
 * then blocked as without a period. */
START_TEST(block_period_unroll)
{
	check_blocks(1, "UNROLL(1,32) UPCAST(0,4)");
}
END_TEST

/* A batch of 4 (prefill's matmul): the rows, innermost, are blocked
 * with the unroll; tinygrad's blocking of the batch by 4 more would pass
 * the 256 copies UPCAST allows, and is left out. */
START_TEST(block_period_batch)
{
	check_blocks(4, "UNROLL(2,32) UPCAST(1,4) SWAP(0,1)");
}
END_TEST

/* out(C,P,Q)[c,p,q] = sum_k g(K,P)[k,p] * w(K,C,Q)[k,c,q], the shape of
 * a convolution's input-gradient product (P the image, Q the window),
 * over the axes (C, Q, P, K): the vector axis P has loads that are
 * vectors but stores Q apart, so Q, along which the stores are
 * contiguous, goes innermost in launch order (SWAP(1,2)), not the rows
 * C, and consecutive work-items fill the same cache lines.  Sums of
 * multiples of 1/16 (exact in any order) against C. */
START_TEST(strided_stores_stream)
{
	enum { C = 16, P = 32, Q = 10, K = 3 };
	static const int64_t shape[4] = { C, Q, P, K };
	float g[K * P], w[K * C * Q], out[C * P * Q];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32,
	                        strided(K * P, 4, shape,
	                                (const int64_t[]){ 0, 0, 1, P }));
	tg_uop *y = tg_ast_load(k, 2, TG_FLOAT32,
	                        strided(K * C * Q, 4, shape,
	                                (const int64_t[]){ Q, 1, 0, C * Q }));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, tg_ast_alu(k, TG_MUL, x, y, NULL),
	                          8u);
	tg_uop *s = tg_ast_store(k, 0, r,
	                         strided(C * P * Q, 4,
	                                 (const int64_t[]){ C, Q, P, 1 },
	                                 (const int64_t[]){ P * Q, 1, Q, 0 }));
	tg_buffer *bufs[3];

	kt_fill(g, K * P, 0.25f, -1.0f);
	kt_fill(w, K * C * Q, 0.25f, -2.0f);
	bufs[0] = kt_buf_with(TG_FLOAT32, C * P * Q, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, K * P, g);
	bufs[2] = kt_buf_with(TG_FLOAT32, K * C * Q, w);
	/* Q stays innermost: no SWAP of the rows C after it */
	run_both(tg_ast_sink(k, &s, 1), "UPCAST(2,16) UPCAST(2,2) UPCAST(0,8)",
	         bufs, 3, 1, out, sizeof out);
	for (int c = 0; c < C; c++)
		for (int p = 0; p < P; p++)
			for (int q = 0; q < Q; q++) {
				double acc = 0;
				for (int i = 0; i < K; i++)
					acc += (double)g[i * P + p] *
					       w[(i * C + c) * Q + q];
				ck_assert_double_eq_tol(out[(c * P + p) * Q + q],
				                        acc, 1e-6);
			}
	kt_unref(bufs, 3);
}
END_TEST

/* out(C,D,Q)[c,d,q] = sum_{b,j} g(B,C,J)[b,c,j] * x(B,D,J+Q-1)[b,d,j+q],
 * a convolution's weight gradient along one axis, over the axes
 * (C, Q, D, B, J): no output axis takes a vector, so the reduce sums in
 * lanes, and Q, along which the loads move least (g broadcast, x by
 * one), goes innermost in launch order (SWAP(1,2)): consecutive
 * work-items read what the last one left in L1.  Sums of multiples of
 * 1/32 (exact in any order) against C. */
START_TEST(weight_grad_stream)
{
	enum { B = 3, C = 4, D = 6, Q = 3, J = 16, XW = J + Q - 1 };
	static const int64_t shape[5] = { C, Q, D, B, J };
	float g[B * C * J], xs[B * D * XW], out[C * D * Q];
	tg_uop *a = tg_ast_load(k, 1, TG_FLOAT32,
	                        strided(B * C * J, 5, shape,
	                                (const int64_t[]){ J, 0, 0, C * J,
	                                                   1 }));
	tg_uop *b = tg_ast_load(k, 2, TG_FLOAT32,
	                        strided(B * D * XW, 5, shape,
	                                (const int64_t[]){ 0, 1, XW, D * XW,
	                                                   1 }));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, tg_ast_alu(k, TG_MUL, a, b, NULL),
	                          24u);
	tg_uop *s = tg_ast_store(k, 0, r,
	                         strided(C * D * Q, 5,
	                                 (const int64_t[]){ C, Q, D, 1, 1 },
	                                 (const int64_t[]){ D * Q, 1, Q, 0,
	                                                    0 }));
	tg_buffer *bufs[3];

	kt_fill(g, B * C * J, 0.25f, -1.0f);
	kt_fill(xs, B * D * XW, 0.125f, -1.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, C * D * Q, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, B * C * J, g);
	bufs[2] = kt_buf_with(TG_FLOAT32, B * D * XW, xs);
	run_both(tg_ast_sink(k, &s, 1), "GROUP(4,16) UPCAST(0,4) SWAP(1,2)",
	         bufs, 3, 1, out, sizeof out);
	for (int c = 0; c < C; c++)
		for (int d = 0; d < D; d++)
			for (int q = 0; q < Q; q++) {
				double acc = 0;
				for (int i = 0; i < B; i++)
					for (int j = 0; j < J; j++)
						acc += (double)g[(i * C + c) * J + j] *
						       xs[(i * D + d) * XW + j + q];
				ck_assert_double_eq_tol(out[(c * D + d) * Q + q],
				                        acc, 1e-6);
			}
	kt_unref(bufs, 3);
}
END_TEST

/* out(1,1) = a(8,3).T.sum(): two loops (the transpose keeps the axes
 * apart), the inner one unrolled by 4. */
START_TEST(sum_two_axes)
{
	static const uint32_t tr[2] = { 1, 0 };
	float a[24], out[1];
	double acc = 0;
	tg_st *sa = kt_st(2, 8, 3);
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32,
	                        kt_moved(sa, tg_st_permute(NULL, sa, 2, tr)));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, x, 3u),
	                         kt_st(2, 1, 1));
	tg_buffer *bufs[2];

	kt_fill(a, 24, 0.375f, 0.125f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 1, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 24, a);
	run_both(tg_ast_sink(k, &s, 1), "UNROLL(1,4)", bufs, 2, 1, out,
	         sizeof out);
	for (int i = 0; i < 24; i++)
		acc += a[i];
	ck_assert_double_eq_tol(out[0], acc, 1e-4);
	kt_unref(bufs, 2);
}
END_TEST

/* 4-D: out(2,3,5,8) = a + b with b reversed-permuted; the last axis
 * upcast by 4 while the first two share gidx2. */
START_TEST(four_dims)
{
	static const uint32_t perm[4] = { 3, 2, 1, 0 };
	float a[240], b[240], out[240];
	tg_st *sb = kt_st(4, 8, 5, 3, 2);
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(4, 2, 3, 5, 8));
	tg_uop *y = tg_ast_load(k, 2, TG_FLOAT32,
	                        kt_moved(sb, tg_st_permute(NULL, sb, 4, perm)));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, y, NULL),
	                         kt_st(4, 2, 3, 5, 8));
	tg_buffer *bufs[3];

	kt_fill(a, 240, 0.5f, 0.25f);
	for (int i = 0; i < 240; i++)
		b[i] = (float)i;
	bufs[0] = kt_buf_with(TG_FLOAT32, 240, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 240, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, 240, b);
	run_both(tg_ast_sink(k, &s, 1), "UPCAST(3,4)", bufs, 3, 1, out,
	         sizeof out);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int l = 0; l < 5; l++)
				for (int m = 0; m < 8; m++) {
					int o = ((i * 3 + j) * 5 + l) * 8 + m;
					int t = ((m * 5 + l) * 3 + j) * 2 + i;
					ck_assert_float_eq(out[o], a[o] + b[t]);
				}
	kt_unref(bufs, 3);
}
END_TEST

/* Two stores share a reduce over rows of a(8,12): o0 = sum, o1 =
 * sum * 2; the rows sum in 4 lanes. */
START_TEST(two_outputs)
{
	float a[96], o0[8], o1[8];
	tg_uop *x = tg_ast_load(k, 2, TG_FLOAT32, kt_st(2, 8, 12));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, x, 1u << 1);
	tg_scalar two = { .f = 2.0 };
	tg_uop *c = tg_ast_const(k, TG_FLOAT32, two, kt_st(2, 1, 1));
	tg_uop *sts[2] = {
		tg_ast_store(k, 0, r, kt_st(2, 8, 1)),
		tg_ast_store(k, 1, tg_ast_alu(k, TG_MUL, r, c, NULL),
		             kt_st(2, 8, 1))
	};
	tg_buffer *bufs[3];

	kt_fill(a, 96, 0.5f, 0.125f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 8, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 8, NULL);
	bufs[2] = kt_buf_with(TG_FLOAT32, 96, a);
	run_both(tg_ast_sink(k, sts, 2), "GROUP(1,4)", bufs, 3, 2, o0,
	         sizeof o0);
	ck_assert_int_eq(tg_buffer_copyout(bufs[1], o1, sizeof o1), TG_OK);
	for (int i = 0; i < 8; i++) {
		double acc = 0;
		for (int j = 0; j < 12; j++)
			acc += a[i * 12 + j];
		ck_assert_double_eq_tol(o0[i], acc, 1e-4);
		ck_assert_float_eq(o1[i], o0[i] * 2.0f);
	}
	kt_unref(bufs, 3);
}
END_TEST

/* out(1,8) = a(4,8).max(0) on int32: the 8 outputs are one vector, the
 * 4-long reduce unrolls whole;
 * out(8,1) = a(8,5).max(1): 5 neither short nor divisible, so the
 * rows upcast instead (4 accumulators per thread). */
START_TEST(max_int32)
{
	int32_t a[40], out[8];
	tg_uop *x = tg_ast_load(k, 1, TG_INT32, kt_st(2, 4, 8));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_MAX, x, 1u),
	                         kt_st(2, 1, 8));
	tg_buffer *bufs[2];

	for (int i = 0; i < 40; i++)
		a[i] = (i * 37 % 23) - 100;
	bufs[0] = kt_buf_with(TG_INT32, 8, NULL);
	bufs[1] = kt_buf_with(TG_INT32, 32, a);
	run_both(tg_ast_sink(k, &s, 1), "UPCAST(1,8) UNROLL(0,0)", bufs, 2,
	         1, out,
	         sizeof out);
	for (int j = 0; j < 8; j++) {
		int32_t m = a[j];
		for (int i = 1; i < 4; i++)
			m = a[i * 8 + j] > m ? a[i * 8 + j] : m;
		ck_assert_int_eq(out[j], m);
	}
	kt_unref(bufs, 2);
	x = tg_ast_load(k, 1, TG_INT32, kt_st(2, 8, 5));
	s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_MAX, x, 2u), kt_st(2, 8, 1));
	bufs[0] = kt_buf_with(TG_INT32, 8, NULL);
	bufs[1] = kt_buf_with(TG_INT32, 40, a);
	run_both(tg_ast_sink(k, &s, 1), "UPCAST(0,4)", bufs, 2, 1, out,
	         sizeof out);
	for (int i = 0; i < 8; i++) {
		int32_t m = a[i * 5];
		for (int j = 1; j < 5; j++)
			m = a[i * 5 + j] > m ? a[i * 5 + j] : m;
		ck_assert_int_eq(out[i], m);
	}
	kt_unref(bufs, 2);
}
END_TEST

static int apply(tg_kplan *p, int op, int axis, int64_t amt)
{
	return tg_kplan_apply_opt(p, (tg_opt){ op, axis, amt });
}

/* The plan of a (16,12,6) matmul without opts. */
static void matmul_plan(tg_kplan *p)
{
	tg_kernel kern;
	tg_ir *ir = tg_ir_new();

	ck_assert_int_eq(tg_kernel_open(&kern, ir, kt_matmul(k, 16, 12, 6)),
	                 TG_OK);
	ck_assert_int_eq(tg_lower_plan(&kern, p), TG_OK);
	tg_kernel_close(&kern);
	tg_ir_free(ir);
}

/* tg_kplan_apply_opt refuses what it cannot do, leaving the plan. */
START_TEST(apply_opt_errors)
{
	tg_kplan p;

	matmul_plan(&p);
	ck_assert_int_eq(apply(&p, TG_OPT_UPCAST, 2, 2), TG_EINVAL);
	ck_assert_error("UPCAST on reduce axis 2");
	ck_assert_int_eq(apply(&p, TG_OPT_UNROLL, 0, 2), TG_EINVAL);
	ck_assert_int_eq(apply(&p, TG_OPT_UNROLL, 2, 4), TG_EINVAL);
	ck_assert_error("does not split 6");
	ck_assert_int_eq(apply(&p, TG_OPT_LOCAL, 0, 4), TG_EUNSUPPORTED);
	ck_assert_int_eq(apply(&p, TG_OPT_UPCAST, 5, 4), TG_EINVAL);
	ck_assert_int_eq(p.nopts, 0);
	ck_assert_str_eq(p.name, "r_16_12_6");
	/* whole axes, then the copy budget */
	ck_assert_int_eq(apply(&p, TG_OPT_UPCAST, 0, 0), TG_OK);
	ck_assert_int_eq(apply(&p, TG_OPT_UNROLL, 2, 0), TG_OK);
	ck_assert_int_eq(apply(&p, TG_OPT_UPCAST, 1, 4), TG_EINVAL);
	ck_assert_error("copies");
	ck_assert_int_eq(apply(&p, TG_OPT_UPCAST, 1, 2), TG_OK);
	ck_assert_str_eq(p.name, "r_6_6_16_2");
	ck_assert_uint_eq(p.global[0], 6);
	ck_assert_uint_eq(p.global[1], 1);
	ck_assert_uint_eq(p.nred, 0);
	ck_assert_uint_eq(p.nglobal, 1);
}
END_TEST

/* GROUP on a device without work groups splits a reduce axis into
 * lanes; it is refused on an unrolled axis, and UNROLL on a grouped
 * one; a dot product summed in 8 lanes agrees with C. */
START_TEST(lanes_refused)
{
	static const tg_opt o[] = { { TG_OPT_UPCAST, 0, 4 },
	                            { TG_OPT_GROUP, 2, 8 } };
	float a[16 * 40], b[40 * 12], out[16 * 12];
	tg_buffer *bufs[3];
	tg_kplan p;
	tg_ksrc ks;

	matmul_plan(&p);
	p.caps = kt_cpu_caps();
	ck_assert_int_eq(apply(&p, TG_OPT_UNROLL, 2, 2), TG_OK);
	ck_assert_int_eq(apply(&p, TG_OPT_GROUP, 2, 3), TG_EINVAL);
	ck_assert_error("GROUP(2,3): axis 2 is unrolled already");
	matmul_plan(&p);
	p.caps = kt_cpu_caps();
	ck_assert_int_eq(apply(&p, TG_OPT_GROUP, 2, 2), TG_OK);
	ck_assert_uint_eq(p.lanes, 1u << 2);
	ck_assert_int_eq(apply(&p, TG_OPT_UNROLL, 2, 3), TG_EINVAL);
	ck_assert_error("UNROLL(2,3): axis 2 is grouped into lanes already");
	ck_assert_int_eq(apply(&p, TG_OPT_GROUPTOP, 2, 3), TG_EUNSUPPORTED);
	ck_assert_error("GROUPTOP needs work groups");
	/* values: (16,40) @ (40,12), K in 8 lanes */
	kt_fill(a, 16 * 40, 0.3f, 0.0173f);
	kt_fill(b, 40 * 12, -0.7f, 0.0311f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 16 * 12, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 16 * 40, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, 40 * 12, b);
	ck_assert_msg(tg_codegen_opts(kt_matmul(k, 16, 12, 40), kt_cpu_caps(),
	                              kt_set(), o, 2, &ks) == TG_OK, "%s",
	              tg_last_error());
	ck_assert_ptr_nonnull(strstr(ks.src, "tg_float8"));
	kt_launch(&ks, bufs, 3);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	tl_check_matmul(out, a, b, 16, 12, 40);
	kt_unref(bufs, 3);
}
END_TEST

/* SWAP exchanges two global axes in launch order (gidx0 is the last):
 * the kernel's launch and name follow, the values do not change; it is
 * refused with a message on a reduce axis, on one axis twice, or out of
 * range. */
START_TEST(swap)
{
	tg_kplan p;

	matmul_plan(&p);
	ck_assert_int_eq(apply(&p, TG_OPT_SWAP, 0, 2), TG_EINVAL);
	ck_assert_error("SWAP(0,2) needs two distinct integer global axes");
	ck_assert_int_eq(apply(&p, TG_OPT_SWAP, 1, 1), TG_EINVAL);
	ck_assert_int_eq(apply(&p, TG_OPT_SWAP, 0, 7), TG_EINVAL);
	ck_assert_int_eq(apply(&p, TG_OPT_SWAP, 0, -1), TG_EINVAL);
	ck_assert_int_eq(p.nopts, 0);
	ck_assert_uint_eq(p.global[0], 12);
	ck_assert_int_eq(apply(&p, TG_OPT_SWAP, 0, 1), TG_OK);
	ck_assert_uint_eq(p.global[0], 16);
	ck_assert_uint_eq(p.global[1], 12);
	ck_assert_str_eq(p.name, "r_12_16_6");
	/* the hand-coded tile swaps too: rows innermost in launch order */
	check_matmul(16, 12, 6, "UPCAST(1,4) UPCAST(0,8) SWAP(0,1)");
}
END_TEST

/* Compiles sink with the opts o[0..n) (they must all apply), runs it
 * over bufs and copies buffer 0's nbytes into out; the same under NOOPT
 * into ref. */
static void run_opts(tg_uop *sink, const tg_opt *o, size_t n,
                     tg_buffer **bufs, size_t nbufs, void *out, void *ref,
                     size_t nbytes)
{
	tg_ksrc ks;

	run1(sink, 1, "", bufs, nbufs, ref, NULL, nbytes);
	ck_assert_msg(tg_codegen_opts(sink, kt_cpu_caps(), kt_set(), o, n,
	                              &ks) == TG_OK, "%s", tg_last_error());
	if (getenv("TG_TEST_SHOW_SOURCE"))
		fprintf(stderr, "%s\n%s", ks.opts, ks.src);
	kt_launch(&ks, bufs, nbufs);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, nbytes), TG_OK);
}

/* A 20x20x20 matmul with the opts o[0..n): equal to NOOPT's bit for
 * bit (padded terms add +0) and to C's. */
static void check_matmul20(const tg_opt *o, size_t n)
{
	enum { N = 20 };
	float a[N * N], b[N * N], out[N * N], ref[N * N];
	tg_buffer *bufs[3];

	kt_fill(a, N * N, 0.5f, 0.125f);
	kt_fill(b, N * N, 0.25f, -0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, N * N, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, N * N, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, N * N, b);
	run_opts(kt_matmul(k, N, N, N), o, n, bufs, 3, out, ref, sizeof out);
	ck_assert(!memcmp(out, ref, sizeof out));
	tl_check_matmul(out, a, b, N, N, N);
	kt_unref(bufs, 3);
}

/* PADTO on all three axes of a 20x20x20 matmul rounds each up to 32,
 * so the CPU tile of 16 columns by 4 rows and an unroll by 4 fit: the
 * padding reads 0 and is not stored, the result equals NOOPT's (the
 * padded terms add +0) and C's. */
START_TEST(padto_matmul)
{
	static const tg_opt o[] = {
		{ TG_OPT_PADTO, 0, 32 }, { TG_OPT_PADTO, 1, 32 },
		{ TG_OPT_PADTO, 2, 32 }, { TG_OPT_UPCAST, 1, 16 },
		{ TG_OPT_UPCAST, 0, 4 }, { TG_OPT_UNROLL, 2, 4 },
	};

	check_matmul20(o, 6);
}
END_TEST

/* out(3) = (a(3,20) + 1).sum(1) padded to 32 on the reduce axis: the
 * constant, broadcast from a (1,1) tracker, is 0 on the padding too,
 * so each row adds 20 ones, not 32. */
START_TEST(padto_sum_const)
{
	static const tg_opt o[] = { { TG_OPT_PADTO, 1, 32 },
	                            { TG_OPT_UNROLL, 1, 16 } };
	tg_scalar one = { .f = 1.0 };
	float a[60], out[3], ref[3];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 3, 20));
	tg_uop *c = tg_ast_const(k, TG_FLOAT32, one, kt_st(2, 1, 1));
	tg_uop *s = tg_ast_store(k, 0,
	                         tg_ast_reduce(k, TG_ADD,
	                                       tg_ast_alu(k, TG_ADD, x, c,
	                                                  NULL), 2u),
	                         kt_st(2, 3, 1));
	tg_buffer *bufs[2];

	kt_fill(a, 60, 0.375f, 0.125f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 3, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 60, a);
	run_opts(tg_ast_sink(k, &s, 1), o, 2, bufs, 2, out, ref, sizeof out);
	for (int i = 0; i < 3; i++) {
		double acc = 0;
		for (int j = 0; j < 20; j++)
			acc += a[i * 20 + j] + 1.0;
		ck_assert_double_eq_tol(out[i], acc, 1e-4);
		ck_assert_double_eq_tol(ref[i], acc, 1e-4);
	}
	kt_unref(bufs, 2);
}
END_TEST

/* The plan of sink without opts. */
static void plan_of(tg_kplan *p, tg_uop *sink)
{
	tg_kernel kern;
	tg_ir *ir = tg_ir_new();

	ck_assert_int_eq(tg_kernel_open(&kern, ir, sink), TG_OK);
	ck_assert_int_eq(tg_lower_plan(&kern, p), TG_OK);
	tg_kernel_close(&kern);
	tg_ir_free(ir);
}

/* The reduce of op over a (4,5) int32 load through `alu` (when not
 * TG_NOOP: alu(x, 3)) along axis 1, as a plan. */
static void reduce_plan(tg_kplan *p, unsigned op, unsigned alu)
{
	tg_scalar three = { .i = 3 };
	tg_uop *x = tg_ast_load(k, 1, TG_INT32, kt_st(2, 4, 5)), *s;

	if (alu != TG_NOOP)
		x = tg_ast_alu(k, alu, x,
		               tg_ast_const(k, TG_INT32, three, kt_st(2, 4, 5)),
		               NULL);
	s = tg_ast_store(k, 0, tg_ast_reduce(k, op, x, 2u), kt_st(2, 4, 1));
	plan_of(p, tg_ast_sink(k, &s, 1));
}

/* PADTO is refused with a message where it would pad nothing, more
 * than quadruple the work, follow a split, or change a result: a MAX
 * reduce, an op with f(0) != 0 under a SUM, integer division anywhere
 * (the padding would divide by 0); the plan is left as it was. */
START_TEST(padto_refused)
{
	tg_kplan p;

	matmul_plan(&p);
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 0, 16), TG_EINVAL);
	ck_assert_error("PADTO(0,16): nothing to pad on 16");
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 2, 32), TG_EINVAL);
	ck_assert_error("PADTO(2,32): pads to more than 4x the work of 6");
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 1, 1), TG_EINVAL);
	ck_assert_error("PADTO(1,1) needs an amount of at least 2");
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 9, 16), TG_EINVAL);
	ck_assert_error("PADTO axis 9 of 3");
	ck_assert_int_eq(p.nopts, 0);
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 1, 16), TG_OK);
	ck_assert_str_eq(p.name, "r_16_16_6");
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 1, 32), TG_EINVAL);
	ck_assert_error("PADTO(1,32): axis 1 is split or padded already");
	ck_assert_int_eq(apply(&p, TG_OPT_UPCAST, 1, 16), TG_OK);
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 2, 8), TG_OK);
	ck_assert_str_eq(p.name, "r_16_8_16");
	matmul_plan(&p);
	ck_assert_int_eq(apply(&p, TG_OPT_UPCAST, 0, 4), TG_OK);
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 0, 32), TG_EINVAL);
	ck_assert_error("axis 0 is split or padded already");

	reduce_plan(&p, TG_MAX, TG_NOOP);
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 1, 8), TG_EINVAL);
	ck_assert_error("PADTO(1,8): the reduce over the axis is not a SUM "
	                "of ops that keep 0 at 0");
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 0, 8), TG_OK);
	reduce_plan(&p, TG_ADD, TG_CMPNE);
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 1, 8), TG_OK);
	reduce_plan(&p, TG_ADD, TG_MOD);
	ck_assert_int_eq(apply(&p, TG_OPT_PADTO, 0, 8), TG_EINVAL);
	ck_assert_error("PADTO(0,8): the kernel divides integers (padded "
	                "lanes would divide by 0)");
}
END_TEST

/* PADTO on an axis whose exp2 runs under a SUM: refused through
 * tg_codegen_opts as well, with the message. */
START_TEST(padto_unsafe_op)
{
	tg_ksrc ks;
	tg_opt o[1] = { { TG_OPT_PADTO, 1, 8 } };
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 4, 5));
	tg_uop *s = tg_ast_store(k, 0,
	                         tg_ast_reduce(k, TG_ADD,
	                                       tg_ast_alu(k, TG_EXP2, x, NULL,
	                                                  NULL), 2u),
	                         kt_st(2, 4, 1));

	ck_assert_int_ne(tg_codegen_opts(tg_ast_sink(k, &s, 1), kt_cpu_caps(),
	                                 kt_set(), o, 1, &ks), TG_OK);
	ck_assert_error("PADTO(1,8): the reduce over the axis is not a SUM");
}
END_TEST

/* The CPU's tensor core (its register tile, 32 columns by 8 rows at
 * the tests' 16 lanes) takes a matmul it divides: the hand-coded opts
 * are the one TC opt, then the rows stream (SWAP). */
START_TEST(tc_cpu_matmul)
{
	check_matmul(16, 64, 16, "TC(0,0) SWAP(0,1)");
	/* 12 columns: the core does not divide them, the tile adapts */
	check_matmul(16, 12, 6, "UPCAST(1,4) UPCAST(0,8) SWAP(0,1)");
}
END_TEST

/* TC(0,2) pads what the core does not divide: a 20x20x20 matmul runs
 * as 32 columns by 24 rows, the padding read as 0 and not stored. */
START_TEST(tc_padded)
{
	static const tg_opt o[] = { { TG_OPT_TC, 0, 2 } };

	check_matmul20(o, 1);
}
END_TEST

/* The opts of sink under the settings as they are now, as text. */
static void hand_opts_text(tg_uop *sink, char *buf, size_t len)
{
	tg_opt o[TG_MAX_OPTS];
	size_t n;

	ck_assert_msg(tg_codegen_hand_opts(sink, kt_cpu_caps(), kt_set(), o,
	                                   &n) == TG_OK, "%s", tg_last_error());
	tg_opts_format(o, n, buf, len);
}

/* Whether the moves of sink under the settings as they are now include
 * a TC opt. */
static int moves_have_tc(tg_uop *sink)
{
	tg_opt m[512];
	size_t n;

	ck_assert_msg(tg_codegen_actions(sink, kt_cpu_caps(), kt_set(), NULL,
	                                 0, m, 512, &n) == TG_OK, "%s",
	              tg_last_error());
	for (size_t i = 0; i < n; i++)
		if (m[i].op == TG_OPT_TC)
			return 1;
	return 0;
}

/* tinygrad's TC and TC_OPT settings: TC=0 keeps the tensor core out of
 * the hand-coded opts (the CPU's tile makes the same kernel without
 * it) and out of BEAM's moves; TC_OPT=2 lets the hand-coded TC opt pad
 * a matmul the core does not divide; out-of-range values are refused
 * with the key's name. */
START_TEST(tc_settings)
{
	tg_uop *mm = kt_matmul(k, 16, 64, 16), *mm20 = kt_matmul(k, 20, 20, 20);
	char text[256];

	hand_opts_text(mm, text, sizeof text);
	ck_assert_str_eq(text, "TC(0,0) SWAP(0,1)");
	ck_assert(moves_have_tc(mm));
	hand_opts_text(mm20, text, sizeof text);
	ck_assert_str_eq(text, "UPCAST(1,4) UPCAST(0,5) SWAP(0,1)");

	setenv("TC", "0", 1);
	hand_opts_text(mm, text, sizeof text);
	ck_assert_str_eq(text, "UPCAST(1,16) UPCAST(1,2) UPCAST(0,8) SWAP(0,1)");
	ck_assert(!moves_have_tc(mm));
	check_matmul(16, 64, 16, "UPCAST(1,16) UPCAST(1,2) UPCAST(0,8) "
	             "SWAP(0,1)");
	unsetenv("TC");

	setenv("TC_OPT", "2", 1);
	hand_opts_text(mm20, text, sizeof text);
	ck_assert_str_eq(text, "TC(0,2)");  /* N padded to one tile */
	unsetenv("TC_OPT");

	ck_assert_int_eq(tg_config_set("TC_OPT", "3"), TG_ECONFIG);
	ck_assert_error("TC_OPT");
	ck_assert_int_eq(tg_config_set("TC", "-1"), TG_ECONFIG);
	ck_assert_error("TC");
}
END_TEST

/* tg_codegen_random_opts: one seed draws one sequence, 1 to
 * TG_RANDOM_OPTS_MAX long, each opt a move of the plan after the ones
 * before it; seeds draw different sequences; RANDOM_OPTS is read from
 * the environment and the key, and a seed out of range is refused. */
START_TEST(random_opts)
{
	tg_uop *mm = kt_matmul(k, 24, 40, 32);
	tg_opt a[TG_RANDOM_OPTS_MAX], b[TG_RANDOM_OPTS_MAX];
	tg_opt moves[TG_MAX_ACTIONS];
	char first[256], text[256];
	size_t na, nb, nm;
	int differ = 0;

	for (uint64_t seed = 1; seed <= 24; seed++) {
		ck_assert_int_eq(tg_codegen_random_opts(mm, kt_cpu_caps(),
		                 kt_set(), seed, a, &na), TG_OK);
		ck_assert_int_eq(tg_codegen_random_opts(mm, kt_cpu_caps(),
		                 kt_set(), seed, b, &nb), TG_OK);
		ck_assert_uint_eq(na, nb);
		ck_assert(!memcmp(a, b, na * sizeof *a));
		ck_assert(na >= 1 && na <= TG_RANDOM_OPTS_MAX);
		for (size_t i = 0; i < na; i++) {
			size_t m = 0;
			ck_assert_int_eq(tg_codegen_actions(mm, kt_cpu_caps(),
			                 kt_set(), a, i, moves, TG_MAX_ACTIONS,
			                 &nm), TG_OK);
			while (m < nm && memcmp(&moves[m], &a[i], sizeof *a))
				m++;
			ck_assert_msg(m < nm, "seed %llu: opt %zu is no move",
			              (unsigned long long)seed, i);
		}
		tg_opts_format(a, na, text, sizeof text);
		if (seed == 1)
			memcpy(first, text, sizeof text);
		differ |= strcmp(first, text) != 0;
	}
	ck_assert(differ);

	setenv("TG_RANDOM_OPTS", "77", 1);
	ck_assert_int_eq(kt_set()->random_opts, 77);
	unsetenv("TG_RANDOM_OPTS");
	ck_assert_int_eq(kt_set()->random_opts, 0);
	ck_assert_int_eq(tg_config_set("RANDOM_OPTS", "-1"), TG_ECONFIG);
	ck_assert_error("RANDOM_OPTS");
	ck_assert_int_eq(tg_config_set("RANDOM_OPTS", "2147483648"),
	                 TG_ECONFIG);
	ck_assert_error("RANDOM_OPTS");
}
END_TEST

/* The TC refusals, each with its message, the plan unchanged. */
START_TEST(tc_refused)
{
	struct tg_renderer_caps none = *kt_cpu_caps();
	tg_kplan p;

	none.tensor_cores = 0;
	plan_of(&p, kt_matmul(k, 20, 20, 20));
	p.caps = kt_cpu_caps();
	ck_assert_uint_eq(p.ntc, 2);  /* (a, b) and (b, a) */
	ck_assert_int_eq(apply(&p, TG_OPT_TC, 0, 0), TG_EINVAL);
	ck_assert_error("opt: TC(0,0): axis 1 of 20 is not a multiple of 32 "
	                "(amount 2 pads it)");
	ck_assert_int_eq(apply(&p, TG_OPT_TC, 2, 0), TG_EINVAL);
	ck_assert_error("opt: TC(2,0): the kernel has 2 axis choices");
	ck_assert_int_eq(apply(&p, TG_OPT_TC, 0, 3), TG_EINVAL);
	ck_assert_int_eq(p.nopts, 0);
	ck_assert_str_eq(p.name, "r_20_20_20");
	ck_assert_int_eq(apply(&p, TG_OPT_TC, 0, 2), TG_OK);
	ck_assert_str_eq(p.name, "r_3_20_8_32");
	ck_assert_int_eq(p.nopts, 1);
	ck_assert_int_eq(apply(&p, TG_OPT_TC, 1, 2), TG_EINVAL);
	ck_assert_error("opt: TC(1,2) must be the first opt");

	plan_of(&p, kt_matmul(k, 64, 32, 16));
	p.caps = &none;
	ck_assert_int_eq(apply(&p, TG_OPT_TC, 0, 0), TG_EUNSUPPORTED);
	ck_assert_error("opt: TC(0,0): no tensor core of the device takes "
	                "its dtypes");
	reduce_plan(&p, TG_ADD, TG_NOOP);
	p.caps = kt_cpu_caps();
	ck_assert_int_eq(apply(&p, TG_OPT_TC, 0, 0), TG_EUNSUPPORTED);
	ck_assert_error("opt: TC(0,0): the kernel is not a matmul-shaped SUM");
}
END_TEST

/* Whether sink's optimized kernel takes the opts `opts`, runs gidx0 in
 * launch blocks of b (b 0: in none), and its reduce in `passes` passes
 * (0: in one). */
static void check_block(tg_uop *sink, const char *opts, size_t b,
                        int passes)
{
	char want[64];
	tg_ksrc ks;

	ck_assert_msg(tg_codegen(sink, kt_cpu_caps(), kt_set(), &ks) == TG_OK,
	              "%s", tg_last_error());
	ck_assert_str_eq(ks.opts, opts);
	snprintf(want, sizeof want, "tg_bn = %zu * global[1]", b);
	if (b)
		ck_assert_ptr_nonnull(strstr(ks.src, want));
	else
		ck_assert_ptr_null(strstr(ks.src, "tg_r"));
	snprintf(want, sizeof want, "kidx0 < %d; kidx0++", passes);
	if (passes)
		ck_assert_ptr_nonnull(strstr(ks.src, want));
	else
		ck_assert_ptr_null(strstr(ks.src, "kidx0"));
	tg_ksrc_free(&ks);
}

/* The CPU tile of a square matmul (8 rows of 32 columns).  Where B's
 * panel over all column tiles leaves the L2 (PASS_PANEL, 1 MiB) over
 * the whole sum (N=1024: 4 MB, 4 KB a row of K), the sum runs in
 * passes whose panel fits (256 rows of B, 1 MB: 4 passes) and the
 * column tiles stay innermost in launch order (no SWAP): consecutive
 * tiles share their rows of A, and the next row tile finds the pass's
 * panel of B in the L2.  N=2048 passes 128 rows (16 passes) and, its
 * inputs (16 + 16 MB) leaving the last-level cache, runs its column
 * tiles in launch blocks of 8 (B's 2 MB), each through every row tile.
 * N=512 (1 MB of B) and K = 64 stream their rows (SWAP): consecutive
 * tiles share B's column tile, which N=512 reads in passes of 128 rows
 * (16 KB, the L1's share: 4 passes) and K = 64 whole.  Only rendered here:
 * the blocked decomposition runs in test_render_c, the passes' results
 * in fuzz_opts. */
START_TEST(launch_block_matmul)
{
	check_block(kt_matmul(k, 2048, 2048, 2048), "TC(0,0)", 8, 16);
	check_block(kt_matmul(k, 1024, 1024, 1024), "TC(0,0)", 0, 4);
	check_block(kt_matmul(k, 512, 512, 512), "TC(0,0) SWAP(0,1)", 0, 4);
	check_block(kt_matmul(k, 1024, 1024, 64), "TC(0,0) SWAP(0,1)", 0, 0);
}
END_TEST

/* PASS(axis, amt) runs the outer reduce loop of a C kernel in passes
 * of amt iterations instead of the length the heuristic picks: the
 * result equals NOOPT's bit for bit (each pass resumes from the partial
 * stored); it is refused with a message where it does not cut that
 * loop into 2 passes or more, on another axis, twice, on a device
 * without the C dialect, in a kernel whose store does not allow passes,
 * and an opt after it that changes its loop is refused, the plan
 * unchanged. */
START_TEST(pass_opt)
{
	static const tg_opt o[] = { { TG_OPT_UPCAST, 1, 4 },
	                            { TG_OPT_UNROLL, 2, 2 },
	                            { TG_OPT_PASS, 2, 5 } };
	struct tg_renderer_caps ocl = *kt_cpu_caps();
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 3, 20));
	tg_uop *self = tg_ast_load(k, 0, TG_FLOAT32, kt_st(2, 3, 1));
	tg_uop *red = tg_ast_reduce(k, TG_ADD, x, 2u), *st;
	tg_kplan p;

	matmul_plan(&p);  /* (16,12,6), axis 2 reduced */
	p.caps = kt_cpu_caps();
	ck_assert_int_eq(apply(&p, TG_OPT_PASS, 2, 4), TG_EINVAL);
	ck_assert_error("opt: PASS(2,4) does not cut a loop of 6 into 2 "
	                "passes or more");
	ck_assert_int_eq(apply(&p, TG_OPT_PASS, 2, 6), TG_EINVAL);
	ck_assert_int_eq(apply(&p, TG_OPT_PASS, 0, 2), TG_EINVAL);
	ck_assert_error("opt: PASS(0,2): axis 0 is not the outer reduce loop "
	                "(axis 2)");
	ck_assert_int_eq(apply(&p, TG_OPT_PASS, 2, 3), TG_OK);
	ck_assert_int_eq(p.pass, 3);
	ck_assert_int_eq(apply(&p, TG_OPT_PASS, 2, 2), TG_EINVAL);
	ck_assert_error("opt: PASS(2,2): the kernel has PASS(2,3) already");
	ck_assert_int_eq(apply(&p, TG_OPT_UNROLL, 2, 2), TG_EINVAL);
	ck_assert_error("opt: UNROLL(2,2) after PASS(2,3) changes the loop "
	                "that PASS cuts");
	ck_assert_int_eq(p.nopts, 1);
	ck_assert_int_eq(p.upcast[2], 1);
	ck_assert_int_eq(apply(&p, TG_OPT_UPCAST, 0, 4), TG_OK);

	ocl.dialect = TG_DIALECT_OPENCL;
	matmul_plan(&p);
	p.caps = &ocl;
	ck_assert_int_eq(apply(&p, TG_OPT_PASS, 2, 3), TG_EUNSUPPORTED);
	ck_assert_error("opt: PASS(2,3): the kernel cannot run its reduce in "
	                "passes");
	/* out = a.sum(1) + out: a pass would read a partial as out */
	st = tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, red, self, NULL),
	                  kt_st(2, 3, 1));
	plan_of(&p, tg_ast_sink(k, &st, 1));
	p.caps = kt_cpu_caps();
	ck_assert_int_eq(apply(&p, TG_OPT_PASS, 1, 10), TG_EUNSUPPORTED);
	st = tg_ast_store(k, 0, x, kt_st(2, 3, 20));  /* one axis of 60 */
	plan_of(&p, tg_ast_sink(k, &st, 1));
	p.caps = kt_cpu_caps();
	ck_assert_int_eq(apply(&p, TG_OPT_PASS, 0, 10), TG_EUNSUPPORTED);

	check_matmul20(o, 3);
}
END_TEST

/* BEAM's moves on a C matmul include the pass lengths that cut its
 * outer reduce loop (64: 16 and 32 iterations, not 64 itself). */
START_TEST(pass_actions)
{
	tg_opt moves[256];
	size_t n, npass = 0;

	ck_assert_msg(tg_codegen_actions(kt_matmul(k, 64, 64, 64),
	                                 kt_cpu_caps(), kt_set(), NULL, 0,
	                                 moves, 256, &n) == TG_OK, "%s",
	              tg_last_error());
	for (size_t i = 0; i < n; i++)
		if (moves[i].op == TG_OPT_PASS) {
			ck_assert_int_eq(moves[i].axis, 2);
			ck_assert(moves[i].amt == 16 << npass);
			npass++;
		}
	ck_assert_uint_eq(npass, 2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("opts");
	TCase *t = tcase_create("opts");

	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, matmul_16);
	tcase_add_test(t, matmul_odd);
	tcase_add_test(t, matmul_mixed);
	tcase_add_test(t, matmul_name);
	tcase_add_test(t, noopt_env);
	tcase_add_test(t, elementwise_upcast);
	tcase_add_test(t, elementwise_none);
	tcase_add_test(t, padded_upcast);
	tcase_add_test(t, sum_lanes);
	tcase_add_test(t, block_period_unroll);
	tcase_add_test(t, block_period_batch);
	tcase_add_test(t, lanes_refused);
	tcase_add_test(t, sum_two_axes);
	tcase_add_test(t, strided_stores_stream);
	tcase_add_test(t, weight_grad_stream);
	tcase_add_test(t, four_dims);
	tcase_add_test(t, two_outputs);
	tcase_add_test(t, max_int32);
	tcase_add_test(t, apply_opt_errors);
	tcase_add_test(t, swap);
	tcase_add_test(t, padto_matmul);
	tcase_add_test(t, padto_sum_const);
	tcase_add_test(t, padto_refused);
	tcase_add_test(t, padto_unsafe_op);
	tcase_add_test(t, tc_cpu_matmul);
	tcase_add_test(t, tc_padded);
	tcase_add_test(t, tc_refused);
	tcase_add_test(t, launch_block_matmul);
	tcase_add_test(t, pass_opt);
	tcase_add_test(t, pass_actions);
	tcase_add_test(t, tc_settings);
	tcase_add_test(t, random_opts);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

/*
 * test_vectorize.c - vector load/store folding (codegen/vectorize.c):
 * the rules on IR built by hand (pointers compared, one near miss
 * each), then kernels compiled from ASTs and run on the CPU plugin:
 * the vector types in the source, and the values equal to the NOOPT
 * kernel bit for bit and to C loops.
 */
#include "config.h"

#include <math.h>

#include "kasttest.h"

static tg_ir *k;
static tg_ir *ir;

static void setup(void)
{
	unsetenv("NOOPT");
	k = tg_ir_new();
	ir = tg_ir_new();
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(ir);
}

static void teardown(void)
{
	tg_ir_free(k);
	tg_ir_free(ir);
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s++;
	}
	return n;
}

/* ------------------------------------------------ the rules, by hand */

static tg_uop *glob(int i, tg_dtype dt, int out)
{
	tg_arg a = { .v.i = i, .a = out };

	return tg_uop0(ir, TG_DEFINE_GLOBAL, tg_type_ptr(dt, TG_AS_GLOBAL),
	               &a);
}

/* gidx0 * 4 + c */
static tg_uop *at(int64_t c)
{
	tg_arg a = { .name = "gidx0", .a = 8 };
	tg_uop *g = tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a);

	return tg_sym_addi(ir, tg_sym_muli(ir, g, 4), c);
}

static tg_uop *ld(tg_uop *buf, tg_uop *i)
{
	tg_uop *src[2] = { buf, i };

	return tg_uop_new(ir, TG_LOAD, tg_type_deref(buf->dtype), src, 2,
	                  NULL);
}

static tg_uop *st(tg_uop *buf, tg_uop *i, tg_uop *v)
{
	tg_uop *src[3] = { buf, i, v };

	return tg_uop_new(ir, TG_STORE, TG_VOID, src, 3, NULL);
}

/* SINK(store(out, at(off[j]), load(in, at(off[j])) * 2)) for j < n. */
static tg_uop *scaled(tg_uop *out, tg_uop *in, const int64_t *off, int n)
{
	tg_uop *s[8];

	for (int j = 0; j < n; j++)
		s[j] = st(out, at(off[j]),
		          tg_uop_alu(ir, TG_MUL, ld(in, at(off[j])),
		                     tg_uop_const_float(ir, TG_FLOAT32, 2.0),
		                     NULL));
	return tg_uop_new(ir, TG_SINK, TG_VOID, s, (size_t)n, NULL);
}

/* The load (or what replaced it) under lane j of sink's first store,
 * whose value is a vector ALU op (the lanes' ops folded) on a
 * VECTORIZE of lanes. */
static tg_uop *loaded(tg_uop *sink, unsigned lane)
{
	tg_uop *v = sink->src[0]->src[2];

	ck_assert_int_ne(v->op, TG_VECTORIZE);
	ck_assert_uint_gt(tg_type_count(v->dtype), 1);
	ck_assert_int_eq(v->src[0]->op, TG_VECTORIZE);
	return v->src[0]->src[lane];
}

/* Four loads at gidx0*4+0..3 become one float4 LOAD; the four stores
 * one STORE at gidx0*4 of the four products, which become one float4
 * MUL of the load and a float4 constant. */
START_TEST(rule_fold4)
{
	static const int64_t off[4] = { 0, 1, 2, 3 };
	tg_uop *out = glob(0, TG_FLOAT32, 1), *in = glob(1, TG_FLOAT32, 0);
	tg_uop *r = tg_vectorize_mem(ir, scaled(out, in, off, 4), 4, 0, 0);
	tg_uop *vec, *mul;

	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nsrc, 1);
	ck_assert_ptr_eq(r->src[0]->src[1], at(0));
	mul = r->src[0]->src[2];
	ck_assert_int_eq(mul->op, TG_MUL);
	ck_assert_uint_eq(mul->dtype, tg_type_vec(TG_FLOAT32, 4));
	ck_assert_int_eq(mul->src[1]->op, TG_CONST);
	ck_assert_uint_eq(mul->src[1]->dtype, tg_type_vec(TG_FLOAT32, 4));
	ck_assert_double_eq(mul->src[1]->arg.v.f, 2.0);
	vec = mul->src[0];
	ck_assert_int_eq(vec->op, TG_LOAD);
	ck_assert_uint_eq(vec->dtype, tg_type_vec(TG_FLOAT32, 4));
	ck_assert_ptr_eq(vec->src[1], at(0));
	/* the fixed point: nothing more to do */
	ck_assert_ptr_eq(tg_vectorize_mem(ir, r, 4, 0, 0), r);
}
END_TEST

/* A gap at 2: lanes 0,1 make a float2, 3 stays scalar; maxw 1 folds
 * nothing. */
START_TEST(rule_gap)
{
	static const int64_t off[3] = { 0, 1, 3 };
	tg_uop *out = glob(0, TG_FLOAT32, 1), *in = glob(1, TG_FLOAT32, 0);
	tg_uop *s = scaled(out, in, off, 3);
	tg_uop *r = tg_vectorize_mem(ir, s, 4, 0, 0);
	tg_uop *v;

	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nsrc, 2);
	v = r->src[0]->src[2];
	ck_assert_uint_eq(v->dtype, tg_type_vec(TG_FLOAT32, 2));
	ck_assert_int_eq(v->op, TG_MUL);
	ck_assert_int_eq(v->src[0]->op, TG_LOAD);
	ck_assert_uint_eq(v->src[0]->dtype, tg_type_vec(TG_FLOAT32, 2));
	ck_assert_ptr_eq(r->src[1], s->src[2]);  /* lane 3 untouched */
	ck_assert_ptr_eq(tg_vectorize_mem(ir, s, 1, 0, 0), s);
}
END_TEST

/* Near misses: loads of a buffer the kernel writes stay scalar (the
 * stores still fold); loads of two buffers fold per buffer only. */
START_TEST(rule_written_or_mixed)
{
	tg_uop *out = glob(0, TG_FLOAT32, 1), *in = glob(1, TG_FLOAT32, 0);
	tg_uop *in2 = glob(2, TG_FLOAT32, 0), *s[4], *r;

	for (int j = 0; j < 4; j++)
		s[j] = st(out, at(j), tg_uop_alu(ir, TG_NEG, ld(out, at(j)),
		                                 NULL, NULL));
	r = tg_vectorize_mem(ir, tg_uop_new(ir, TG_SINK, TG_VOID, s, 4, NULL),
	                     4, 0, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nsrc, 1);
	for (unsigned j = 0; j < 4; j++)
		ck_assert_ptr_eq(loaded(r, j), ld(out, at(j)));
	for (int j = 0; j < 4; j++)
		s[j] = st(out, at(j), tg_uop_alu(ir, TG_NEG,
		                                 ld(j < 2 ? in : in2, at(j)),
		                                 NULL, NULL));
	r = tg_vectorize_mem(ir, tg_uop_new(ir, TG_SINK, TG_VOID, s, 4, NULL),
	                     4, 0, 0);
	ck_assert_ptr_nonnull(r);
	for (unsigned j = 0; j < 4; j++) {
		tg_uop *g = loaded(r, j);
		ck_assert_int_eq(g->op, TG_GEP);
		ck_assert_int_eq(g->arg.v.i, j % 2);
		ck_assert_uint_eq(g->src[0]->dtype, tg_type_vec(TG_FLOAT32, 2));
		ck_assert_ptr_eq(g->src[0]->src[0], j < 2 ? in : in2);
	}
}
END_TEST

/* Lanes of one constant fold to a vector constant; lanes of different
 * constants stay a VECTORIZE of them (a near miss that once became a
 * vector of the first). */
START_TEST(rule_const_lanes)
{
	tg_uop *out = glob(0, TG_FLOAT32, 1), *in = glob(1, TG_FLOAT32, 0);
	tg_uop *s[4], *r, *c;

	for (int j = 0; j < 4; j++)
		s[j] = st(out, at(j),
		          tg_uop_alu(ir, TG_MUL, ld(in, at(j)),
		                     tg_uop_const_float(ir, TG_FLOAT32, j * 0.5),
		                     NULL));
	r = tg_vectorize_mem(ir, tg_uop_new(ir, TG_SINK, TG_VOID, s, 4, NULL),
	                     4, 0, 0);
	ck_assert_ptr_nonnull(r);
	c = r->src[0]->src[2]->src[1];
	ck_assert_int_eq(c->op, TG_VECTORIZE);
	for (int j = 0; j < 4; j++) {
		ck_assert_int_eq(c->src[j]->op, TG_CONST);
		ck_assert_double_eq(c->src[j]->arg.v.f, j * 0.5);
	}
}
END_TEST

/* A copy stores the vector it loaded: VECTORIZE(GEP(x,0..3)) -> x. */
START_TEST(rule_copy)
{
	tg_uop *out = glob(0, TG_INT32, 1), *in = glob(1, TG_INT32, 0);
	tg_uop *s[4], *r;

	for (int j = 0; j < 4; j++)
		s[j] = st(out, at(j), ld(in, at(j)));
	r = tg_vectorize_mem(ir, tg_uop_new(ir, TG_SINK, TG_VOID, s, 4, NULL),
	                     4, 0, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->src[0]->src[2]->op, TG_LOAD);
	ck_assert_uint_eq(r->src[0]->src[2]->dtype, tg_type_vec(TG_INT32, 4));
}
END_TEST

/* SINK(store(out, gidx0*100 + 25j, v_j)) for j < 4: a step of 25. */
static tg_uop *stepped(tg_uop *out, tg_uop *const *v)
{
	tg_arg a = { .name = "gidx0", .a = 8 };
	tg_uop *g = tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a), *s[4];

	for (int j = 0; j < 4; j++)
		s[j] = st(out, tg_sym_addi(ir, tg_sym_muli(ir, g, 100), 25 * j),
		          v[j]);
	return tg_uop_new(ir, TG_SINK, TG_VOID, s, 4, NULL);
}

/* Stores at a step of 25 of products of contiguous loads stay four
 * scalar stores, each of a lane (GEP) of one float4 MUL of a float4
 * load; where vectors must be aligned (CUDA), and for values that are
 * loads (a transposing copy: nothing to compute), nothing changes. */
START_TEST(rule_strided_stores)
{
	tg_uop *out = glob(0, TG_FLOAT32, 1), *in = glob(1, TG_FLOAT32, 0);
	tg_uop *v[4], *l[4], *s, *r, *mul;

	for (int j = 0; j < 4; j++) {
		l[j] = ld(in, at(j));
		v[j] = tg_uop_alu(ir, TG_MUL, l[j],
		                  tg_uop_const_float(ir, TG_FLOAT32, 2.0), NULL);
	}
	s = stepped(out, v);
	r = tg_vectorize_mem(ir, s, 4, 0, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nsrc, 4);
	mul = r->src[0]->src[2]->src[0];
	for (int j = 0; j < 4; j++) {
		ck_assert_ptr_eq(r->src[j]->src[1], s->src[j]->src[1]);
		ck_assert_int_eq(r->src[j]->src[2]->op, TG_GEP);
		ck_assert_int_eq(r->src[j]->src[2]->arg.v.i, j);
		ck_assert_ptr_eq(r->src[j]->src[2]->src[0], mul);
	}
	ck_assert_int_eq(mul->op, TG_MUL);
	ck_assert_uint_eq(mul->dtype, tg_type_vec(TG_FLOAT32, 4));
	ck_assert_int_eq(mul->src[0]->op, TG_LOAD);
	ck_assert_uint_eq(mul->src[0]->dtype, tg_type_vec(TG_FLOAT32, 4));
	r = tg_vectorize_mem(ir, s, 4, 1, 0);
	for (int j = 0; j < 4; j++)
		ck_assert_int_eq(r->src[j]->src[2]->op, TG_MUL);
	for (int j = 0; j < 4; j++)  /* loads at a step of 7: no vector */
		l[j] = ld(in, at(7 * j));
	s = stepped(out, l);
	ck_assert_ptr_eq(tg_vectorize_mem(ir, s, 4, 0, 0), s);
}
END_TEST

/* With alignment required, offsets 1..4 of gidx0*4 give a float2 at 2
 * only (1 and 4 are odd or break the run); without, a float4 at 1. */
START_TEST(rule_aligned)
{
	static const int64_t off[4] = { 1, 2, 3, 4 };
	tg_uop *out = glob(0, TG_FLOAT32, 1), *in = glob(1, TG_FLOAT32, 0);
	tg_uop *s = scaled(out, in, off, 4), *r;

	r = tg_vectorize_mem(ir, s, 4, 1, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nsrc, 3);
	ck_assert_ptr_eq(r->src[0], s->src[0]);
	ck_assert_ptr_eq(r->src[1]->src[1], at(2));
	ck_assert_uint_eq(r->src[1]->src[2]->dtype,
	                  tg_type_vec(TG_FLOAT32, 2));
	ck_assert_ptr_eq(r->src[2], s->src[3]);
	r = tg_vectorize_mem(ir, s, 4, 0, 0);
	ck_assert_uint_eq(r->nsrc, 1);
	ck_assert_ptr_eq(r->src[0]->src[1], at(1));
}
END_TEST

/* The float4 LOAD that (gidx0*4 + 0..3) folds into (see rule_fold4),
 * with the buffers aligned to `align` bytes; its arg.a is the
 * alignment proven. */
static int64_t fold4_align(const int64_t *off, size_t align)
{
	tg_uop *out = glob(0, TG_FLOAT32, 1), *in = glob(1, TG_FLOAT32, 0);
	tg_uop *r = tg_vectorize_mem(ir, scaled(out, in, off, 4), 4, 0, align);

	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nsrc, 1);
	ck_assert_int_eq(r->src[0]->src[2]->src[0]->op, TG_LOAD);
	return r->src[0]->src[2]->src[0]->arg.a;
}

/* A float4 load at gidx0*4 is proven aligned to its 16 bytes where
 * every buffer starts at a multiple of 16 or more; not where the
 * buffers' alignment is unknown (0) or smaller (8), nor at gidx0*4+1. */
START_TEST(rule_proven_aligned)
{
	static const int64_t at0[4] = { 0, 1, 2, 3 }, at1[4] = { 1, 2, 3, 4 };

	ck_assert_int_eq(fold4_align(at0, 64), 16);
	ck_assert_int_eq(fold4_align(at0, 16), 16);
	ck_assert_int_eq(fold4_align(at0, 8), 0);
	ck_assert_int_eq(fold4_align(at0, 0), 0);
	ck_assert_int_eq(fold4_align(at1, 64), 0);
}
END_TEST

/* ------------------------------------------------ kernels, run */

/* Elements as doubles in and out of a buffer of dt. */
static void put(tg_dtype dt, void *p, size_t i, double v)
{
	switch (dt) {
	case TG_FLOAT32: ((float *)p)[i] = (float)v; break;
	case TG_FLOAT16: ((uint16_t *)p)[i] = tg_f16_bits(v); break;
	case TG_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case TG_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case TG_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
	case TG_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	default: ck_abort_msg("dtype %d", dt);
	}
}

static double get(tg_dtype dt, const void *p, size_t i)
{
	switch (dt) {
	case TG_FLOAT32: return ((const float *)p)[i];
	case TG_FLOAT16: return tg_f16_value(((const uint16_t *)p)[i]);
	case TG_INT8: return ((const int8_t *)p)[i];
	case TG_INT32: return ((const int32_t *)p)[i];
	case TG_INT64: return (double)((const int64_t *)p)[i];
	case TG_BOOL: return ((const uint8_t *)p)[i];
	default: ck_abort_msg("dtype %d", dt);
	}
	return 0;
}

/* Small values, exact in every dtype used here. */
static void fill(tg_dtype dt, void *p, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++) {
		double v = (double)((int)((i * 7 + (size_t)seed) % 11) - 5);
		put(dt, p, i, tg_scalar_is_float(dt) ? v * 0.5 + 0.25 : v);
	}
}

static void compile(tg_uop *sink, const struct tg_renderer_caps *caps,
                    int noopt, tg_ksrc *ks)
{
	if (noopt)
		setenv("NOOPT", "1", 1);
	ck_assert_msg(tg_codegen(sink, caps, kt_set(), ks) == TG_OK, "%s",
	              tg_last_error());
	unsetenv("NOOPT");
	if (getenv("TG_TEST_SHOW_SOURCE"))  /* for debugging */
		fprintf(stderr, "%s\n%s", ks->opts, ks->src);
}

/* Runs sink under NOOPT (which must have no vector type) and then
 * optimized with caps into *ks (the caller frees it): buffer 0 (nbytes)
 * agrees bit for bit and lands in out. */
static void run_both(tg_uop *sink, const struct tg_renderer_caps *caps,
                     tg_buffer **bufs, size_t nbufs, void *out,
                     size_t nbytes, tg_ksrc *ks)
{
	char *ref = malloc(nbytes);
	tg_ksrc plain;

	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_nonnull(sink);
	compile(sink, caps, 1, &plain);
	ck_assert_ptr_null(strstr(plain.src, "vector_size"));
	kt_launch(&plain, bufs, nbufs);
	tg_ksrc_free(&plain);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], ref, nbytes), TG_OK);
	compile(sink, caps, 0, ks);
	kt_launch(ks, bufs, nbufs);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, nbytes), TG_OK);
	ck_assert_msg(!memcmp(ref, out, nbytes), "output differs from NOOPT");
	free(ref);
}

/* out = a * b + c on (rows, cols) of dt, run against NOOPT and C; the
 * optimized kernel in *ks. */
static void check_fma(tg_dtype dt, int rows, int cols,
                      const struct tg_renderer_caps *caps, tg_ksrc *ks)
{
	size_t n = (size_t)(rows * cols), sz = tg_dtype_size(dt);
	unsigned char *h[4];
	tg_uop *x[3], *s;
	tg_buffer *bufs[4];

	for (int i = 0; i < 4; i++) {
		ck_assert_ptr_nonnull(h[i] = malloc(n * sz));
		if (i)
			fill(dt, h[i], n, i * 3);
	}
	for (int i = 0; i < 3; i++)
		x[i] = tg_ast_load(k, i + 1, dt, kt_st(2, rows, cols));
	s = tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD,
	                                  tg_ast_alu(k, TG_MUL, x[0], x[1],
	                                             NULL), x[2], NULL),
	                 kt_st(2, rows, cols));
	bufs[0] = kt_buf_with(dt, n, NULL);
	for (int i = 1; i < 4; i++)
		bufs[i] = kt_buf_with(dt, n, h[i]);
	run_both(tg_ast_sink(k, &s, 1), caps, bufs, 4, h[0], n * sz, ks);
	for (size_t i = 0; i < n; i++) {
		double a = get(dt, h[1], i), b = get(dt, h[2], i);
		double c = get(dt, h[3], i), e = a * b + c;
		if (tg_scalar_is_float(dt))  /* rounded at each step */
			e = tg_float_round(tg_float_round(a * b, dt) + c, dt);
		ck_assert_double_eq(get(dt, h[0], i), e);
	}
	kt_unref(bufs, 4);
	for (int i = 0; i < 4; i++)
		free(h[i]);
}

/* (1,16) upcast by 16 (the caps' 16 lanes): per thread
 * each input is one vector load of `vt` (a memcpy, also where it is
 * proven aligned: see c_vector_load), the product and the sum one
 * vector op each, the output one vector store; no scalar access and no
 * VECTORIZE of lanes is left. */
static void check_fma_vec(tg_dtype dt, const char *vt)
{
	char want[64];
	tg_ksrc ks;

	check_fma(dt, 1, 16, kt_cpu_caps(), &ks);
	ck_assert_str_eq(ks.opts, "UPCAST(0,16)");
	snprintf(want, sizeof want, "%s v", vt);
	ck_assert_msg(count(ks.src, want) == 5, "%s", ks.src);
	for (int b = 1; b <= 3; b++) {
		snprintf(want, sizeof want, ", data%d+", b);
		ck_assert_msg(count(ks.src, want) == 1, "%s", ks.src);
		snprintf(want, sizeof want, " = data%d[", b);
		ck_assert_int_eq(count(ks.src, want), 0);
	}
	ck_assert_msg(count(ks.src, "__builtin_memcpy(data0+") == 1, "%s",
	              ks.src);
	ck_assert_int_eq(count(ks.linear_text, " VECTORIZE "), 0);
	tg_ksrc_free(&ks);
}

START_TEST(fma_float32)
{
	check_fma_vec(TG_FLOAT32, "tg_float16");
}
END_TEST

START_TEST(fma_int32)
{
	check_fma_vec(TG_INT32, "tg_int16");
}
END_TEST

START_TEST(fma_float16)
{
	check_fma_vec(TG_FLOAT16, "tg_half16");
}
END_TEST

START_TEST(fma_int64)
{
	check_fma_vec(TG_INT64, "tg_long16");
}
END_TEST

/* 1-byte elements have no vector here: upcast, but scalar. */
START_TEST(fma_int8_scalar)
{
	tg_ksrc ks;

	check_fma(TG_INT8, 1, 16, kt_cpu_caps(), &ks);
	ck_assert_str_eq(ks.opts, "UPCAST(0,16)");
	ck_assert_ptr_null(strstr(ks.src, "vector_size"));
	tg_ksrc_free(&ks);
}
END_TEST

/* 5 columns: no upcast, so nothing folds; values still right. */
START_TEST(not_divisible)
{
	tg_ksrc ks;

	check_fma(TG_FLOAT32, 3, 5, kt_cpu_caps(), &ks);
	ck_assert_str_eq(ks.opts, "");
	ck_assert_ptr_null(strstr(ks.src, "vector_size"));
	tg_ksrc_free(&ks);
}
END_TEST

/* The device's widest vector bounds the folding: 2 gives float2 runs
 * (the elementwise kernel, its (4,16) one axis of 64, takes 4 of them
 * a thread), 1 none. */
START_TEST(caps_width)
{
	struct tg_renderer_caps caps = *kt_cpu_caps();
	tg_ksrc ks;

	caps.max_upcast = 2;
	check_fma(TG_FLOAT32, 4, 16, &caps, &ks);
	ck_assert_str_eq(ks.opts, "UPCAST(0,2) UPCAST(0,4)");
	ck_assert_int_eq(count(ks.src, ", data1+"), 4);
	ck_assert_ptr_null(strstr(ks.src, "tg_float4"));
	tg_ksrc_free(&ks);
	caps.max_upcast = 1;
	check_fma(TG_FLOAT32, 4, 16, &caps, &ks);
	ck_assert_ptr_null(strstr(ks.src, "vector_size"));
	tg_ksrc_free(&ks);
}
END_TEST

/* NOOPT=1: no opts, no vectors (run_both checks this for every
 * kernel; here on its own). */
START_TEST(noopt_scalar)
{
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 4, 16));
	tg_uop *s = tg_ast_store(k, 0, x, kt_st(2, 4, 16));
	tg_ksrc ks;

	compile(tg_ast_sink(k, &s, 1), kt_cpu_caps(), 1, &ks);
	ck_assert_str_eq(ks.opts, "");
	ck_assert_ptr_null(strstr(ks.src, "vector_size"));
	ck_assert_ptr_null(strstr(ks.linear_text, "VECTORIZE"));
	tg_ksrc_free(&ks);
	compile(tg_ast_sink(k, &s, 1), kt_cpu_caps(), 0, &ks);
	ck_assert_ptr_nonnull(strstr(ks.src, "tg_float16"));
	tg_ksrc_free(&ks);
}
END_TEST

/* A comparison stores bools: the float loads fold, the bool stores
 * cannot (no _Bool vectors). */
START_TEST(bool_store_scalar)
{
	enum { R = 1, C = 8, N = R * C };
	float a[N], b[N];
	unsigned char out[N];
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, R, C));
	tg_uop *y = tg_ast_load(k, 2, TG_FLOAT32, kt_st(2, R, C));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_alu(k, TG_CMPLT, x, y, NULL),
	                         kt_st(2, R, C));
	tg_buffer *bufs[3];
	tg_ksrc ks;

	kt_fill(a, N, 0.5f, 0.25f);
	kt_fill(b, N, -0.5f, 0.5f);
	bufs[0] = kt_buf_with(TG_BOOL, N, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, N, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, N, b);
	run_both(tg_ast_sink(k, &s, 1), kt_cpu_caps(), bufs, 3, out, N, &ks);
	ck_assert_str_eq(ks.opts, "UPCAST(0,8)");
	ck_assert_int_eq(count(ks.src, "tg_float8 v"), 2);
	ck_assert_int_eq(count(ks.src, "__builtin_memcpy(data0"), 0);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(out[i], a[i] < b[i]);
	tg_ksrc_free(&ks);
	kt_unref(bufs, 3);
}
END_TEST

/* out(M,N) = a(M,K) @ b(K,N): the CPU register tile, 16 columns (one
 * vector of b per step of K) by 8 rows (8 elements of a, each
 * broadcast), 8 vector accumulators and FMAs, the outputs stored as
 * vectors; bit for bit equal to NOOPT (which fuses the same way). */
START_TEST(matmul)
{
	enum { M = 16, N = 16, K = 16 };
	static const uint32_t tr[2] = { 1, 0 };
	tg_sint sh[3] = { tg_si(M), tg_si(1), tg_si(K) };
	tg_sint full[3] = { tg_si(M), tg_si(N), tg_si(K) };
	tg_sint shb[3] = { tg_si(1), tg_si(N), tg_si(K) };
	float a[M * K], b[K * N], out[M * N];
	tg_st *sa = kt_st(2, M, K), *sb = kt_st(2, K, N), *t;
	tg_uop *x, *y, *s;
	tg_buffer *bufs[3];
	tg_ksrc ks;

	t = tg_st_reshape(NULL, sa, 3, sh);
	tg_st_free(sa);
	sa = tg_st_expand(NULL, t, 3, full);
	tg_st_free(t);
	t = tg_st_permute(NULL, sb, 2, tr);
	tg_st_free(sb);
	sb = tg_st_reshape(NULL, t, 3, shb);
	tg_st_free(t);
	t = sb;
	sb = tg_st_expand(NULL, t, 3, full);
	tg_st_free(t);
	ck_assert(sa && sb);
	x = tg_ast_load(k, 1, TG_FLOAT32, sa);
	y = tg_ast_load(k, 2, TG_FLOAT32, sb);
	s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD,
	                                     tg_ast_alu(k, TG_MUL, x, y, NULL),
	                                     4u), kt_st(3, M, N, 1));
	kt_fill(a, M * K, 0.5f, 0.125f);
	kt_fill(b, K * N, 0.25f, -0.5f);
	bufs[0] = kt_buf_with(TG_FLOAT32, M * N, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, M * K, a);
	bufs[2] = kt_buf_with(TG_FLOAT32, K * N, b);
	run_both(tg_ast_sink(k, &s, 1), kt_cpu_caps(), bufs, 3, out,
	         sizeof out, &ks);
	ck_assert_str_eq(ks.opts, "UPCAST(1,16) UPCAST(0,8)");
	ck_assert_int_eq(count(ks.src, ", data2+"), 1);
	ck_assert_int_eq(count(ks.src, " = data1["), 8);
	ck_assert_int_eq(count(ks.src, "= tg_fma_tg_float16("), 8);
	ck_assert_int_eq(count(ks.src, "tg_float16 acc"), 8);
	ck_assert_int_eq(count(ks.src, "__builtin_memcpy(data0+"), 8);
	tl_check_matmul(out, a, b, M, N, K);
	tg_ksrc_free(&ks);
	kt_unref(bufs, 3);
}
END_TEST

/* out(R,8) = pad(a) + 1, the padding on `axis` (1 left, 1 right) of a
 * (R,8) or (R,6) input; the columns upcast by 4.  The result checks
 * against C; the kernel comes back in *ks. */
static void check_padded(int axis, tg_ksrc *ks)
{
	tg_sint arg[4] = { tg_si(0), tg_si(0), tg_si(0), tg_si(0) };
	int rin = axis == 0 ? 4 : 6, cin = axis == 0 ? 8 : 6;
	int rows = axis == 0 ? 6 : 6, cols = 8;
	float a[48], out[48];
	tg_st *sa = kt_st(2, rin, cin), *p;
	tg_scalar one = { .f = 1.0 };
	tg_uop *x, *c, *s;
	tg_buffer *bufs[2];

	arg[2 * axis] = arg[2 * axis + 1] = tg_si(1);
	p = tg_st_pad(NULL, sa, 2, arg);
	tg_st_free(sa);
	ck_assert_ptr_nonnull(p);
	x = tg_ast_load(k, 1, TG_FLOAT32, p);
	c = tg_ast_const(k, TG_FLOAT32, one, kt_st(2, 1, 1));
	s = tg_ast_store(k, 0, tg_ast_alu(k, TG_ADD, x, c, NULL),
	                 kt_st(2, rows, cols));
	kt_fill(a, (size_t)(rin * cin), 0.5f, 0.25f);
	bufs[0] = kt_buf_with(TG_FLOAT32, (size_t)(rows * cols), NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, (size_t)(rin * cin), a);
	run_both(tg_ast_sink(k, &s, 1), kt_cpu_caps(), bufs, 2, out,
	         sizeof(float) * (size_t)(rows * cols), ks);
	ck_assert_str_eq(ks->opts, "UPCAST(1,8)");
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < cols; j++) {
			int si = axis == 0 ? i - 1 : i, sj = axis == 0 ? j : j - 1;
			float e = si < 0 || si >= rin || sj < 0 || sj >= cin
			          ? 0.0f : a[si * cin + sj];
			ck_assert_float_eq(out[i * cols + j], e + 1.0f);
		}
	kt_unref(bufs, 2);
}

/* Padding along the upcast columns (all 8 of a row in one thread):
 * each lane's gate is decided, the edge lanes are the padding's 0 and
 * the middle six load as a float4 and a float2; no gated load is
 * left, and the stores fold. */
START_TEST(padded_lanes)
{
	tg_ksrc ks;

	check_padded(1, &ks);
	ck_assert_msg(count(ks.src, " ? data1[") == 0, "%s", ks.src);
	ck_assert_ptr_null(strstr(ks.src, ") __builtin_memcpy(&v"));
	ck_assert_int_eq(count(ks.src, "tg_float4 v"), 1);
	ck_assert_int_eq(count(ks.src, "tg_float2 v"), 1);
	ck_assert_int_eq(count(ks.src, "__builtin_memcpy(data0+"), 1);
	tg_ksrc_free(&ks);
}
END_TEST

/* Padding along the rows: the eight lanes share one gate, and fold into
 * one gated vector load. */
START_TEST(padded_rows)
{
	tg_ksrc ks;

	check_padded(0, &ks);
	ck_assert_msg(count(ks.src, ") __builtin_memcpy(&v") == 1, "%s",
	              ks.src);
	ck_assert_int_eq(count(ks.src, " ? data1["), 0);
	tg_ksrc_free(&ks);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vectorize");
	TCase *r = tcase_create("rules"), *t = tcase_create("kernels");

	tcase_add_checked_fixture(r, setup, teardown);
	tcase_add_test(r, rule_fold4);
	tcase_add_test(r, rule_gap);
	tcase_add_test(r, rule_written_or_mixed);
	tcase_add_test(r, rule_copy);
	tcase_add_test(r, rule_const_lanes);
	tcase_add_test(r, rule_aligned);
	tcase_add_test(r, rule_proven_aligned);
	tcase_add_test(r, rule_strided_stores);
	suite_add_tcase(s, r);
	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, fma_float32);
	tcase_add_test(t, fma_int32);
	tcase_add_test(t, fma_float16);
	tcase_add_test(t, fma_int64);
	tcase_add_test(t, fma_int8_scalar);
	tcase_add_test(t, not_divisible);
	tcase_add_test(t, caps_width);
	tcase_add_test(t, noopt_scalar);
	tcase_add_test(t, bool_store_scalar);
	tcase_add_test(t, matmul);
	tcase_add_test(t, padded_lanes);
	tcase_add_test(t, padded_rows);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

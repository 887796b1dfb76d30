/*
 * test_render_c.c - the back end of the kernel compiler: lowered IR
 * built by hand, linearized (loop placement checked), rendered to C,
 * compiled and run on the CPU plugin, and checked against C loops.
 */
#include "config.h"

#include <dlfcn.h>
#include <math.h>

#include "testlib.h"
#include "../libtgcore/ir/ir.h"
#include "../libtgcore/codegen/codegen.h"
#include "../libtgcore/render/render.h"

static tg_ir *ir;

static void setup(void)
{
	ir = tg_ir_new();
	ck_assert_ptr_nonnull(ir);
}

static void teardown(void)
{
	tg_ir_free(ir);
}

static tg_uop *glob(int i, tg_dtype dt, int out)
{
	tg_arg a = { .v.i = i, .a = out };

	return tg_uop0(ir, TG_DEFINE_GLOBAL, tg_type_ptr(dt, TG_AS_GLOBAL),
	               &a);
}

static tg_uop *gidx0(int64_t n)
{
	tg_arg a = { .name = "gidx0", .a = n };

	return tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a);
}

static tg_uop *idx(int64_t c)
{
	return tg_uop_const_int(ir, TG_INDEX, c);
}

static tg_uop *load(tg_uop *buf, tg_uop *i)
{
	tg_uop *src[2] = { buf, i };

	return tg_uop_new(ir, TG_LOAD, tg_type_deref(buf->dtype), src, 2,
	                  NULL);
}

static tg_uop *store(tg_uop *buf, tg_uop *i, tg_uop *v)
{
	tg_uop *src[3] = { buf, i, v };

	return tg_uop_new(ir, TG_STORE, TG_VOID, src, 3, NULL);
}

static tg_uop *sink(tg_uop *a, tg_uop *b)
{
	tg_uop *src[2] = { a, b };

	return tg_uop_new(ir, TG_SINK, TG_VOID, src, b ? 2 : 1, NULL);
}

static char *render(tg_uop *s, const char *name)
{
	tg_uop **lin;
	size_t n;
	char *src;

	ck_assert_ptr_nonnull(s);
	ck_assert_msg(tg_linearize(ir, s, &lin, &n) == TG_OK, "%s",
	              tg_last_error());
	src = tg_render_c(name, lin, n);
	ck_assert_msg(src != NULL, "%s", tg_last_error());
	free(lin);
	return src;
}

/* Renders, compiles and runs `s` over global {n,1,1}. */
static void run(tg_uop *s, const char *name, size_t n, tg_buffer **bufs,
                size_t nbufs)
{
	char *src = render(s, name);
	tg_dev *dev = tg_dev_get("CPU");
	tg_program *p;
	tg_launch_args args = { .bufs = bufs, .nbufs = nbufs,
		.global = { n, 1, 1 }, .local = { 1, 1, 1 } };

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	if (getenv("TG_TEST_SHOW_SOURCE"))  /* for debugging */
		fputs(src, stderr);
	p = tg_program_new(dev, name, src);
	ck_assert_msg(p != NULL, "%s\n%s", tg_last_error(), src);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == TG_OK, "%s",
	              tg_last_error());
	tg_program_free(p);
	free(src);
}

static tg_buffer *buf_with(tg_dtype dt, size_t n, const void *host)
{
	tg_buffer *b = tg_buffer_new(tg_dev_get("CPU"), n, dt);

	ck_assert_msg(b != NULL, "%s", tg_last_error());
	if (host)
		ck_assert_int_eq(tg_buffer_copyin(b, host, n * tg_dtype_size(dt)),
		                 TG_OK);
	else
		ck_assert_int_eq(tg_buffer_allocate(b), TG_OK);
	return b;
}

/* Runs p on the single buffer of args, holding `host` before; the
 * buffer's contents come back into host. */
static void run_on(tg_program *p, tg_launch_args *args, void *host,
                   size_t nbytes)
{
	tg_buffer *buf = args->bufs[0];

	ck_assert_int_eq(tg_buffer_copyin(buf, host, nbytes), TG_OK);
	ck_assert_int_eq(tg_program_launch(p, args, NULL), TG_OK);
	ck_assert_int_eq(tg_buffer_copyout(buf, host, nbytes), TG_OK);
}

static size_t pos(tg_uop **lin, size_t n, const tg_uop *u)
{
	for (size_t i = 0; i < n; i++)
		if (lin[i] == u)
			return i;
	ck_abort_msg("node %s not in the linear program", tg_op_name(u->op));
	return n;
}

START_TEST(elementwise_add_float32_odd_size)
{
	enum { N = 37 };
	float a[N], b[N], out[N];
	tg_uop *g = gidx0(N), *d0 = glob(0, TG_FLOAT32, 1),
	       *d1 = glob(1, TG_FLOAT32, 0), *d2 = glob(2, TG_FLOAT32, 0);
	tg_uop *s = sink(store(d0, g, tg_uop_alu(ir, TG_ADD, load(d1, g),
	                                         load(d2, g), NULL)), NULL);
	tg_buffer *bufs[3];

	for (int i = 0; i < N; i++) {
		a[i] = (float)i * 0.37f - 3.1f;
		b[i] = 1.0f / (float)(i + 1);
	}
	bufs[0] = buf_with(TG_FLOAT32, N, NULL);
	bufs[1] = buf_with(TG_FLOAT32, N, a);
	bufs[2] = buf_with(TG_FLOAT32, N, b);
	run(s, "E_37", N, bufs, 3);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < N; i++)
		ck_assert_msg(out[i] == a[i] + b[i], "%d: %a != %a", i,
		              (double)out[i], (double)(a[i] + b[i]));
	for (int i = 0; i < 3; i++)
		tg_buffer_unref(bufs[i]);
}
END_TEST

/* out[g] = 0.5 * sum_r in[g*5 + r] over a 4x5 matrix. */
static tg_uop *reduce_kernel(tg_uop **rng, tg_uop **acc, tg_uop **phi,
                             tg_uop **hoist, tg_uop **ld, tg_uop **st)
{
	tg_uop *g = gidx0(4), *d0 = glob(0, TG_FLOAT32, 1),
	       *d1 = glob(1, TG_FLOAT32, 0);
	tg_arg ra = { .v.i = 0, .a = 1 }, aa = { .v.i = 0 };
	tg_uop *rsrc[2] = { idx(0), idx(5) };
	tg_uop *r = tg_uop_new(ir, TG_RANGE, TG_INDEX, rsrc, 2, &ra);
	tg_uop *asrc[2] = { tg_uop_const_float(ir, TG_FLOAT32, 0.0), r };
	tg_uop *a = tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32, asrc, 2, &aa);
	tg_uop *base = tg_uop_alu(ir, TG_MUL, g, idx(5), NULL);
	tg_uop *l = load(d1, tg_uop_alu(ir, TG_ADD, base, r, NULL));
	tg_uop *p = tg_uop2(ir, TG_PHI, TG_FLOAT32, a,
	                    tg_uop_alu(ir, TG_ADD, a, l, NULL));
	tg_uop *sv = store(d0, g, tg_uop_alu(ir, TG_MUL, p,
	                   tg_uop_const_float(ir, TG_FLOAT32, 0.5), NULL));

	*rng = r; *acc = a; *phi = p; *hoist = base; *ld = l; *st = sv;
	return sink(sv, NULL);
}

START_TEST(linearize_places_nodes_in_their_loops)
{
	tg_uop *r, *a, *p, *base, *l, *sv, **lin;
	tg_uop *s = reduce_kernel(&r, &a, &p, &base, &l, &sv);
	size_t n, end = 0, nend = 0;

	ck_assert_int_eq(tg_linearize(ir, s, &lin, &n), TG_OK);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_ne(lin[i]->op, TG_SINK);
		if (lin[i]->op == TG_ENDRANGE) {
			ck_assert_ptr_eq(lin[i]->src[0], r);
			end = i;
			nend++;
		}
	}
	ck_assert_uint_eq(nend, 1);
	ck_assert_uint_lt(pos(lin, n, a), pos(lin, n, r));
	ck_assert_uint_lt(pos(lin, n, base), pos(lin, n, r)); /* hoisted */
	ck_assert_uint_lt(pos(lin, n, r), pos(lin, n, l));
	ck_assert_uint_lt(pos(lin, n, l), pos(lin, n, p));
	ck_assert_uint_lt(pos(lin, n, p), end);
	ck_assert_uint_lt(end, pos(lin, n, sv));
	ck_assert_uint_lt(pos(lin, n, sv->src[2]), pos(lin, n, sv));
	ck_assert_uint_lt(end, pos(lin, n, sv->src[2])); /* after the loop */
	free(lin);
}
END_TEST

START_TEST(reduce_sums_rows)
{
	tg_uop *r, *a, *p, *base, *l, *sv;
	tg_uop *s = reduce_kernel(&r, &a, &p, &base, &l, &sv);
	float in[20], out[4];
	tg_buffer *bufs[2];

	for (int i = 0; i < 20; i++)
		in[i] = (float)(i * i) * 0.25f - 7.0f;
	bufs[0] = buf_with(TG_FLOAT32, 4, NULL);
	bufs[1] = buf_with(TG_FLOAT32, 20, in);
	run(s, "r_4_5", 4, bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int g = 0; g < 4; g++) {
		float acc = 0.0f;
		for (int k = 0; k < 5; k++)
			acc = acc + in[g * 5 + k];
		ck_assert_msg(out[g] == acc * 0.5f, "%d: %g != %g", g,
		              (double)out[g], (double)(acc * 0.5f));
	}
	tg_buffer_unref(bufs[0]);
	tg_buffer_unref(bufs[1]);
}
END_TEST

START_TEST(gated_load_pads)
{
	enum { N = 10, M = 6 };
	float in[M], out[N];
	tg_uop *g = gidx0(N), *d0 = glob(0, TG_FLOAT32, 1),
	       *d1 = glob(1, TG_FLOAT32, 0);
	tg_uop *valid = tg_uop_alu(ir, TG_CMPLT, g, idx(M), NULL);
	tg_uop *lsrc[4] = { d1, g, valid,
	                    tg_uop_const_float(ir, TG_FLOAT32, -2.5) };
	tg_uop *l = tg_uop_new(ir, TG_LOAD, TG_FLOAT32, lsrc, 4, NULL);
	tg_uop *s = sink(store(d0, g, tg_uop_alu(ir, TG_ADD, l,
	                 tg_uop_const_float(ir, TG_FLOAT32, 1.0), NULL)),
	                 NULL);
	tg_buffer *bufs[2];

	for (int i = 0; i < M; i++)
		in[i] = (float)i * 3.0f;
	bufs[0] = buf_with(TG_FLOAT32, N, NULL);
	bufs[1] = buf_with(TG_FLOAT32, M, in);
	run(s, "E_pad", N, bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(out[i], (i < M ? in[i] : -2.5f) + 1.0f);
	tg_buffer_unref(bufs[0]);
	tg_buffer_unref(bufs[1]);
}
END_TEST

START_TEST(where_and_cmplt)
{
	enum { N = 9 };
	float a[N], b[N], out[N];
	tg_uop *g = gidx0(N), *d0 = glob(0, TG_FLOAT32, 1),
	       *d1 = glob(1, TG_FLOAT32, 0), *d2 = glob(2, TG_FLOAT32, 0);
	tg_uop *la = load(d1, g), *lb = load(d2, g);
	tg_uop *two = tg_uop_const_float(ir, TG_FLOAT32, 2.0);
	tg_uop *w = tg_uop_alu(ir, TG_WHERE,
	                       tg_uop_alu(ir, TG_CMPLT, la, lb, NULL), la,
	                       tg_uop_alu(ir, TG_MUL, lb, two, NULL));
	tg_uop *s = sink(store(d0, g, w), NULL);
	tg_buffer *bufs[3];

	for (int i = 0; i < N; i++) {
		a[i] = (float)(i % 4) - 1.5f;
		b[i] = (float)(i % 3) - 0.5f;
	}
	bufs[0] = buf_with(TG_FLOAT32, N, NULL);
	bufs[1] = buf_with(TG_FLOAT32, N, a);
	bufs[2] = buf_with(TG_FLOAT32, N, b);
	run(s, "E_where", N, bufs, 3);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(out[i], a[i] < b[i] ? a[i] : b[i] * 2.0f);
	for (int i = 0; i < 3; i++)
		tg_buffer_unref(bufs[i]);
}
END_TEST

START_TEST(int32_idiv_mod)
{
	enum { N = 12 };
	int32_t a[N], b[N], q[N], m[N];
	tg_uop *g = gidx0(N), *d0 = glob(0, TG_INT32, 1),
	       *d1 = glob(1, TG_INT32, 1), *d2 = glob(2, TG_INT32, 0),
	       *d3 = glob(3, TG_INT32, 0);
	tg_uop *la = load(d2, g), *lb = load(d3, g);
	tg_uop *s = sink(store(d0, g, tg_uop_alu(ir, TG_IDIV, la, lb, NULL)),
	                 store(d1, g, tg_uop_alu(ir, TG_MOD, la, lb, NULL)));
	tg_buffer *bufs[4];

	for (int i = 0; i < N; i++) {
		a[i] = (i - 6) * 7 + 1;
		b[i] = (i % 2) ? 3 : -4;
	}
	bufs[0] = buf_with(TG_INT32, N, NULL);
	bufs[1] = buf_with(TG_INT32, N, NULL);
	bufs[2] = buf_with(TG_INT32, N, a);
	bufs[3] = buf_with(TG_INT32, N, b);
	run(s, "E_divmod", N, bufs, 4);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], q, sizeof q), TG_OK);
	ck_assert_int_eq(tg_buffer_copyout(bufs[1], m, sizeof m), TG_OK);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(q[i], a[i] / b[i]);
		ck_assert_int_eq(m[i], a[i] % b[i]);
	}
	for (int i = 0; i < 4; i++)
		tg_buffer_unref(bufs[i]);
}
END_TEST

START_TEST(cast_float_to_int8)
{
	enum { N = 11 };
	float a[N];
	int8_t out[N];
	tg_uop *g = gidx0(N), *d0 = glob(0, TG_INT8, 1),
	       *d1 = glob(1, TG_FLOAT32, 0);
	tg_uop *s = sink(store(d0, g, tg_uop1(ir, TG_CAST, TG_INT8,
	                                      load(d1, g))), NULL);
	tg_buffer *bufs[2];

	for (int i = 0; i < N; i++)
		a[i] = (float)(i - 5) * 23.7f;
	bufs[0] = buf_with(TG_INT8, N, NULL);
	bufs[1] = buf_with(TG_FLOAT32, N, a);
	run(s, "E_cast", N, bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(out[i], (int8_t)a[i]);
	tg_buffer_unref(bufs[0]);
	tg_buffer_unref(bufs[1]);
}
END_TEST

START_TEST(float16_add_rounds_each_step)
{
	enum { N = 16 };
	uint16_t a[N], b[N], out[N];
	tg_uop *g = gidx0(N), *d0 = glob(0, TG_FLOAT16, 1),
	       *d1 = glob(1, TG_FLOAT16, 0), *d2 = glob(2, TG_FLOAT16, 0);
	tg_uop *s = sink(store(d0, g, tg_uop_alu(ir, TG_ADD, load(d1, g),
	                                         load(d2, g), NULL)), NULL);
	tg_buffer *bufs[3];

	for (int i = 0; i < N; i++) {
		a[i] = tg_f16_bits(1000.0 + i * 0.3);
		b[i] = tg_f16_bits(0.123 * (i + 1) - 0.9);
	}
	bufs[0] = buf_with(TG_FLOAT16, N, NULL);
	bufs[1] = buf_with(TG_FLOAT16, N, a);
	bufs[2] = buf_with(TG_FLOAT16, N, b);
	run(s, "E_half", N, bufs, 3);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < N; i++) {
		double want = tg_float_round(tg_f16_value(a[i]) +
		                             tg_f16_value(b[i]), TG_FLOAT16);
		ck_assert_uint_eq(out[i], tg_f16_bits(want));
	}
	for (int i = 0; i < 3; i++)
		tg_buffer_unref(bufs[i]);
}
END_TEST

START_TEST(bfloat16_mul_rounds_to_nearest_even)
{
	enum { N = 8 };
	uint16_t a[N], out[N];
	tg_uop *g = gidx0(N), *d0 = glob(0, TG_BFLOAT16, 1),
	       *d1 = glob(1, TG_BFLOAT16, 0);
	tg_uop *la = load(d1, g);
	tg_uop *s = sink(store(d0, g, tg_uop_alu(ir, TG_MUL, la, la, NULL)),
	                 NULL);
	tg_buffer *bufs[2];

	for (int i = 0; i < N; i++)
		a[i] = tg_bf16_bits(1.0 + i * 0.37);
	bufs[0] = buf_with(TG_BFLOAT16, N, NULL);
	bufs[1] = buf_with(TG_BFLOAT16, N, a);
	run(s, "E_bf16", N, bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < N; i++) {
		double x = tg_bf16_value(a[i]);
		ck_assert_uint_eq(out[i], tg_bf16_bits(x * x));
	}
	tg_buffer_unref(bufs[0]);
	tg_buffer_unref(bufs[1]);
}
END_TEST

START_TEST(constants_print_exactly)
{
	tg_uop *g = gidx0(4), *d0 = glob(0, TG_FLOAT32, 1);
	tg_uop *c = tg_uop_const_float(ir, TG_FLOAT32, 0.1);
	tg_uop *inf = tg_uop_const_float(ir, TG_FLOAT32, -INFINITY);
	tg_uop *s = sink(store(d0, g, tg_uop_alu(ir, TG_MAX, c, inf, NULL)),
	                 NULL);
	char *src = render(s, "E_c");
	char want[64];

	snprintf(want, sizeof want, "%af", (double)0.1f);
	ck_assert_msg(strstr(src, want) != NULL, "%s lacks %s", src, want);
	ck_assert_ptr_nonnull(strstr(src, "(-__builtin_inff())"));
	ck_assert_ptr_null(strstr(src, "const float *restrict"));
	ck_assert_ptr_nonnull(strstr(src, "float *restrict data0"));
	free(src);
}
END_TEST

START_TEST(unsupported_op_is_an_error)
{
	/* THREEFRY is defined on uint64 only */
	tg_uop *g = gidx0(4), *d0 = glob(0, TG_UINT32, 1);
	tg_uop *t = tg_uop2(ir, TG_THREEFRY, TG_UINT32,
	                    tg_uop1(ir, TG_CAST, TG_UINT32, g),
	                    tg_uop_const_int(ir, TG_UINT32, 7));
	tg_uop *s = sink(store(d0, g, t), NULL);
	tg_uop **lin;
	size_t n;

	ck_assert_int_eq(tg_linearize(ir, s, &lin, &n), TG_OK);
	ck_assert_ptr_null(tg_render_c("E_t", lin, n));
	ck_assert_int_eq(tg_last_status(), TG_EUNSUPPORTED);
	ck_assert_error("render: C cannot render ALU op THREEFRY on uint32");
	free(lin);
}
END_TEST

/* out[i] = sum_j in[i*4 + j] with both loops in the kernel (global 1):
 * the accumulator is reset inside the outer loop. */
START_TEST(reduce_inside_an_outer_loop)
{
	float in[12], out[3];
	tg_uop *d0 = glob(0, TG_FLOAT32, 1), *d1 = glob(1, TG_FLOAT32, 0);
	tg_arg oa = { .v.i = 0 }, ia = { .v.i = 1, .a = 1 }, aa = { .v.i = 0 };
	tg_uop *osrc[2] = { idx(0), idx(3) }, *isrc[2] = { idx(0), idx(4) };
	tg_uop *ro = tg_uop_new(ir, TG_RANGE, TG_INDEX, osrc, 2, &oa);
	tg_uop *ri = tg_uop_new(ir, TG_RANGE, TG_INDEX, isrc, 2, &ia);
	tg_uop *asrc[2] = { tg_uop_const_float(ir, TG_FLOAT32, 1.0), ri };
	tg_uop *a = tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32, asrc, 2, &aa);
	tg_uop *l = load(d1, tg_uop_alu(ir, TG_ADD,
	                 tg_uop_alu(ir, TG_MUL, ro, idx(4), NULL), ri, NULL));
	tg_uop *p = tg_uop2(ir, TG_PHI, TG_FLOAT32, a,
	                    tg_uop_alu(ir, TG_ADD, a, l, NULL));
	tg_uop *sv = store(d0, ro, p);
	tg_uop *s = sink(sv, NULL), **lin;
	tg_buffer *bufs[2];
	size_t n;

	ck_assert_int_eq(tg_linearize(ir, s, &lin, &n), TG_OK);
	ck_assert_uint_lt(pos(lin, n, ro), pos(lin, n, a));
	ck_assert_uint_lt(pos(lin, n, a), pos(lin, n, ri));
	ck_assert_uint_lt(pos(lin, n, p), pos(lin, n, sv));
	ck_assert_int_eq(lin[n - 1]->op, TG_ENDRANGE);
	ck_assert_ptr_eq(lin[n - 1]->src[0], ro);
	ck_assert_int_eq(lin[n - 2]->op, TG_STORE);
	free(lin);
	for (int i = 0; i < 12; i++)
		in[i] = (float)i * 0.5f;
	bufs[0] = buf_with(TG_FLOAT32, 3, NULL);
	bufs[1] = buf_with(TG_FLOAT32, 12, in);
	run(s, "r_3_4", 1, bufs, 2);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	for (int i = 0; i < 3; i++) {
		float acc = 1.0f;
		for (int j = 0; j < 4; j++)
			acc = acc + in[i * 4 + j];
		ck_assert_float_eq(out[i], acc);
	}
	tg_buffer_unref(bufs[0]);
	tg_buffer_unref(bufs[1]);
}
END_TEST

/* float4 loads, a lane-wise MUL by a vector constant, a GEP and a
 * float4 store. */
START_TEST(float4_vectors)
{
	enum { N = 16 };
	float in[N], out[N], first[N / 4];
	tg_type f4 = tg_type_vec(TG_FLOAT32, 4);
	tg_uop *g = gidx0(N / 4), *d0 = glob(0, TG_FLOAT32, 1),
	       *d1 = glob(1, TG_FLOAT32, 0), *d2 = glob(2, TG_FLOAT32, 1);
	tg_uop *i4 = tg_uop_alu(ir, TG_MUL, g, idx(4), NULL);
	tg_uop *lsrc[2] = { d1, i4 };
	tg_uop *l = tg_uop_new(ir, TG_LOAD, f4, lsrc, 2, NULL);
	tg_uop *m = tg_uop_alu(ir, TG_MUL, l,
	                       tg_uop_const_float(ir, f4, 3.0), NULL);
	tg_arg lane = { .v.i = 2 };
	tg_uop *gsrc[1] = { m };
	tg_uop *gep = tg_uop_new(ir, TG_GEP, TG_FLOAT32, gsrc, 1, &lane);
	tg_uop *s = sink(store(d0, i4, m), store(d2, g, gep));
	tg_buffer *bufs[3];

	for (int i = 0; i < N; i++)
		in[i] = (float)i - 4.25f;
	bufs[0] = buf_with(TG_FLOAT32, N, NULL);
	bufs[1] = buf_with(TG_FLOAT32, N, in);
	bufs[2] = buf_with(TG_FLOAT32, N / 4, NULL);
	run(s, "E_4_4", N / 4, bufs, 3);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof out), TG_OK);
	ck_assert_int_eq(tg_buffer_copyout(bufs[2], first, sizeof first),
	                 TG_OK);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(out[i], in[i] * 3.0f);
	for (int i = 0; i < N / 4; i++)
		ck_assert_float_eq(first[i], in[i * 4 + 2] * 3.0f);
	for (int i = 0; i < 3; i++)
		tg_buffer_unref(bufs[i]);
}
END_TEST

/* Variables come from vals[] in name order; a 4-source STORE is gated. */
START_TEST(variables_and_gated_store)
{
	enum { N = 8 };
	int32_t out[N];
	int64_t vals[2] = { 5, 100 }; /* a = 5, b = 100 */
	tg_uop *g = gidx0(N), *d0 = glob(0, TG_INT32, 1);
	tg_arg va = { .name = "a", .a = 0, .b = 10 },
	       vb = { .name = "b", .a = 0, .b = 1000 };
	tg_uop *b = tg_uop0(ir, TG_DEFINE_VAR, TG_INDEX, &vb);
	tg_uop *a = tg_uop0(ir, TG_DEFINE_VAR, TG_INDEX, &va);
	tg_uop *val = tg_uop1(ir, TG_CAST, TG_INT32,
	                      tg_uop_alu(ir, TG_ADD, b, g, NULL));
	tg_uop *ssrc[4] = { d0, g, val,
	                    tg_uop_alu(ir, TG_CMPLT, g, a, NULL) };
	tg_uop *s = sink(tg_uop_new(ir, TG_STORE, TG_VOID, ssrc, 4, NULL),
	                 NULL);
	char *src = render(s, "E_var");
	tg_dev *dev = tg_dev_get("CPU");
	tg_program *p = tg_program_new(dev, "E_var", src);
	tg_buffer *buf = buf_with(TG_INT32, N, NULL);
	tg_launch_args args = { .bufs = &buf, .nbufs = 1, .vals = vals,
		.nvals = 2, .global = { N, 1, 1 }, .local = { 1, 1, 1 } };

	ck_assert_msg(p != NULL, "%s\n%s", tg_last_error(), src);
	ck_assert_ptr_nonnull(strstr(src, "const long a = vals[0];"));
	ck_assert_ptr_nonnull(strstr(src, "const long b = vals[1];"));
	for (int i = 0; i < N; i++)
		out[i] = -1;
	run_on(p, &args, out, sizeof out);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(out[i], i < 5 ? 100 + i : -1);
	tg_program_free(p);
	tg_buffer_unref(buf);
	free(src);
}
END_TEST

/* The source of s in a GPU dialect, for a launch of n work-items. */
static char *render_in(tg_uop *s, int dialect, size_t n)
{
	struct tg_renderer_caps caps = { .struct_size = sizeof caps,
	                                 .dialect = dialect };
	size_t g[3] = { n, 1, 1 };
	tg_uop **lin;
	size_t nl;
	char *src;

	ck_assert_int_eq(tg_linearize(ir, s, &lin, &nl), TG_OK);
	src = tg_render(&caps, "E_t", g, lin, nl);
	ck_assert_msg(src != NULL, "%s", tg_last_error());
	free(lin);
	return src;
}

static void has(const char *src, const char *want)
{
	ck_assert_msg(strstr(src, want) != NULL, "%s\n--- lacks: %s", src,
	              want);
}

/* x + g0*(y + g1*z): item (x, y, z)'s place in a g0 x g1 x .. grid. */
static tg_uop *flat3(tg_uop *x, tg_uop *y, tg_uop *z, int64_t g0,
                     int64_t g1)
{
	return tg_uop_alu(ir, TG_ADD, x, tg_uop_alu(ir, TG_MUL, idx(g0),
	       tg_uop_alu(ir, TG_ADD, y, tg_uop_alu(ir, TG_MUL, idx(g1), z,
	                                            NULL), NULL), NULL),
	       NULL);
}

static tg_uop *special(const char *name, int64_t n)
{
	tg_arg a = { .name = name, .a = n };

	return tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a);
}

/* A C kernel whose gidx0 runs in launch blocks (tg_kplan.lblock) still
 * visits every (gidx0, gidx1, gidx2) once: each item stores its ids at
 * its own place.  The prologue takes 4 of gidx0 through every gidx1
 * and gidx2 before the next 4. */
START_TEST(launch_blocks_visit_every_item_once)
{
	enum { G0 = 12, G1 = 5, G2 = 3, N = G0 * G1 * G2 };
	struct tg_renderer_caps caps = { .struct_size = sizeof caps,
	                                 .dialect = TG_DIALECT_C };
	size_t g[3] = { G0, G1, G2 };
	tg_uop *x = special("gidx0", G0), *y = special("gidx1", G1),
	       *z = special("gidx2", G2), *d0 = glob(0, TG_INT32, 1);
	tg_uop *at = flat3(x, y, z, G0, G1);
	tg_uop *v = tg_uop_alu(ir, TG_ADD, tg_uop_alu(ir, TG_MUL, x,
	            idx(10000), NULL), tg_uop_alu(ir, TG_ADD, tg_uop_alu(ir,
	            TG_MUL, y, idx(100), NULL), z, NULL), NULL);
	tg_uop *s = sink(store(d0, at, tg_uop1(ir, TG_CAST, TG_INT32, v)),
	                 NULL);
	tg_uop **lin;
	size_t nl;
	char *src;
	int32_t out[N];
	tg_program *p;
	tg_buffer *buf = buf_with(TG_INT32, N, NULL);
	tg_launch_args args = { .bufs = &buf, .nbufs = 1,
		.global = { G0, G1, G2 }, .local = { 1, 1, 1 } };

	ck_assert_int_eq(tg_linearize(ir, s, &lin, &nl), TG_OK);
	src = tg_render_blocked(&caps, "E_blk", g, 4, lin, nl);
	ck_assert_msg(src != NULL, "%s", tg_last_error());
	has(src, "const size_t tg_r = tg_i / 4;");
	has(src, "gidx0 = (long)(tg_r / (global[1] * global[2]) * 4 + "
	    "tg_i % 4);");
	ck_assert_msg((p = tg_program_new(tg_dev_get("CPU"), "E_blk", src)),
	              "%s\n%s", tg_last_error(), src);
	for (int i = 0; i < N; i++)
		out[i] = -1;
	run_on(p, &args, out, sizeof out);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(out[i], i % G0 * 10000 + i / G0 % G1 * 100 +
		                 i / (G0 * G1));
	tg_program_free(p);
	tg_buffer_unref(buf);
	free(src);
	free(lin);
	/* a block that does not divide gidx0, or a GPU dialect: none */
	ck_assert_int_eq(tg_linearize(ir, s, &lin, &nl), TG_OK);
	src = tg_render_blocked(&caps, "E_blk", g, 5, lin, nl);
	ck_assert_ptr_null(strstr(src, "tg_r"));
	free(src);
	caps.dialect = TG_DIALECT_OPENCL;
	src = tg_render_blocked(&caps, "E_blk", g, 4, lin, nl);
	ck_assert_ptr_null(strstr(src, "tg_r"));
	free(src);
	free(lin);
}
END_TEST

/* Reduce passes (kidx0): each launch block runs once per pass before
 * the next block, every item once per pass, also where the pool's
 * chunks split a block (12 x 5 x 3 items in blocks of 4 x 5 x 3 = 60;
 * two threads take chunks of 90).  Each pass adds kidx0 + 1 to the item's value:
 * 1 + 2 + 3 = 6 after three.  Without a launch block the passes wrap
 * the whole chunk.  A GPU dialect refuses the pass index. */
START_TEST(reduce_passes_visit_every_item_once_a_pass)
{
	enum { G0 = 12, G1 = 5, G2 = 3, N = G0 * G1 * G2, P = 3 };
	struct tg_renderer_caps caps = { .struct_size = sizeof caps,
	                                 .dialect = TG_DIALECT_C };
	size_t g[3] = { G0, G1, G2 };
	tg_uop *x = special("gidx0", G0), *y = special("gidx1", G1),
	       *z = special("gidx2", G2), *kp = special("kidx0", P),
	       *d0 = glob(0, TG_INT32, 1);
	tg_uop *at = flat3(x, y, z, G0, G1);
	tg_uop *add = tg_uop1(ir, TG_CAST, TG_INT32,
	                      tg_uop_alu(ir, TG_ADD, kp, idx(1), NULL));
	tg_uop *s = sink(store(d0, at, tg_uop_alu(ir, TG_ADD, load(d0, at),
	                                          add, NULL)), NULL);
	tg_uop **lin;
	size_t nl;
	int32_t out[N];
	tg_buffer *buf = buf_with(TG_INT32, N, NULL);
	tg_launch_args args = { .bufs = &buf, .nbufs = 1,
		.global = { G0, G1, G2 }, .local = { 1, 1, 1 } };

	ck_assert_int_eq(tg_linearize(ir, s, &lin, &nl), TG_OK);
	for (size_t block = 0; block <= 4; block += 4) {
		char *src = tg_render_blocked(&caps, "E_pass", g, block, lin,
		                              nl);
		tg_program *p;
		ck_assert_msg(src != NULL, "%s", tg_last_error());
		has(src, "for (long kidx0 = 0; kidx0 < 3; kidx0++)");
		has(src, block ? "const size_t tg_bn = 4 * global[1] * "
		             "global[2];" : "const size_t tg_bn = hi;");
		ck_assert_msg((p = tg_program_new(tg_dev_get("CPU"), "E_pass",
		                                  src)), "%s\n%s",
		              tg_last_error(), src);
		for (int i = 0; i < N; i++)
			out[i] = 10 * i;
		run_on(p, &args, out, sizeof out);
		for (int i = 0; i < N; i++)
			ck_assert_int_eq(out[i], 10 * i + P * (P + 1) / 2);
		tg_program_free(p);
		free(src);
	}
	caps.dialect = TG_DIALECT_OPENCL;
	ck_assert_ptr_null(tg_render_blocked(&caps, "E_pass", g, 0, lin, nl));
	ck_assert_error("render: reduce passes (kidx0) outside a C kernel");
	tg_buffer_unref(buf);
	free(lin);
}
END_TEST

/* A float4 load of gidx0*4, as vectorize.c folds it: where it proved
 * 16 bytes (arg.a), OpenCL loads through a pointer of the vector type,
 * else with vload4, which takes any alignment.  C loads through memcpy
 * either way (GCC 12 miscompiles shuffles of aligned vector loads; see
 * c_vector_load).  A gated one keeps its alternative. */
START_TEST(aligned_vector_loads)
{
	struct tg_renderer_caps caps = { .struct_size = sizeof caps,
	                                 .dialect = TG_DIALECT_C };
	static const size_t g[3] = { 4, 1, 1 };
	tg_type f4 = tg_type_vec(TG_FLOAT32, 4);
	tg_uop *d0 = glob(0, TG_FLOAT32, 1), *d1 = glob(1, TG_FLOAT32, 0);
	tg_uop *at = tg_uop_alu(ir, TG_MUL, gidx0(4), idx(4), NULL);
	tg_uop *gate = tg_uop_alu(ir, TG_CMPLT, gidx0(4), idx(3), NULL);
	tg_uop *zero = tg_uop_const_float(ir, f4, 0.0);

	for (int aligned = 0; aligned < 2; aligned++) {
		tg_arg a = { .a = aligned ? 16 : 0 };
		tg_uop *src[4] = { d1, at, gate, zero }, *l, *lg, *s;
		tg_uop **lin;
		size_t nl;
		char *c, *cl;
		l = tg_uop_new(ir, TG_LOAD, f4, src, 2, &a);
		lg = tg_uop_new(ir, TG_LOAD, f4, src, 4, &a);
		s = sink(store(d0, at, tg_uop_alu(ir, TG_ADD, l, lg, NULL)),
		         NULL);
		ck_assert_int_eq(tg_linearize(ir, s, &lin, &nl), TG_OK);
		caps.dialect = TG_DIALECT_C;
		c = tg_render_blocked(&caps, "E_al", g, 0, lin, nl);
		caps.dialect = TG_DIALECT_OPENCL;
		cl = tg_render_blocked(&caps, "E_al", g, 0, lin, nl);
		ck_assert_msg(c && cl, "%s", tg_last_error());
		has(c, "tg_float4 v1; __builtin_memcpy(&v1, data1+");
		has(c, ") __builtin_memcpy(&v3, data1+");
		ck_assert_ptr_null(strstr(c, "*(const tg_float4 *)"));
		if (aligned) {
			ck_assert_uint_eq(tl_count(cl, "*((__global const float4 *)"
			                  "(data1+"), 2);
			ck_assert_ptr_null(strstr(cl, "vload4"));
		} else {
			ck_assert_uint_eq(tl_count(cl, "vload4(0, data1+"), 2);
		}
		free(c);
		free(cl);
		free(lin);
	}
}
END_TEST

/* The GPU dialects' pieces that the devices here cannot run: half
 * arithmetic in OpenCL needs cl_khr_fp16 (PoCL lacks it), so its
 * rendering is pinned here; bools live in buffers as bytes. */
START_TEST(gpu_dialects_spell_types_and_indices)
{
	tg_uop *g = gidx0(8), *d0 = glob(0, TG_FLOAT16, 1),
	       *d1 = glob(1, TG_FLOAT16, 0), *b0 = glob(0, TG_BOOL, 1);
	tg_uop *h = tg_uop_alu(ir, TG_ADD, load(d1, g), load(d1, g), NULL);
	tg_uop *e = tg_uop1(ir, TG_EXP2, TG_FLOAT16, h);
	char *src = render_in(sink(store(d0, g, e), NULL), TG_DIALECT_OPENCL,
	                      8);

	has(src, "#pragma OPENCL EXTENSION cl_khr_fp16 : enable");
	has(src, "#pragma OPENCL FP_CONTRACT OFF");
	has(src, "__kernel void E_t(__global half *restrict data0, "
	    "__global const half *restrict data1)");
	has(src, "const int gidx0 = (int)get_global_id(0);");
	has(src, "((half)(exp2(((float)(v");
	free(src);
	src = render_in(sink(store(d0, g, e), NULL), TG_DIALECT_GLSL, 8);
	has(src, "#extension GL_EXT_shader_explicit_arithmetic_types : "
	    "require");
	has(src, "#extension GL_EXT_shader_16bit_storage : require");
	has(src, "layout(std430, set = 0, binding = 1) readonly buffer "
	    "tg_buf_1 { float16_t data1[]; };");
	has(src, "if (tg_i >= 8u) return;");
	has(src, "precise float16_t v");
	has(src, "float16_t(exp2(float(");
	free(src);
	/* bool buffers are bytes: loads compare with 0, stores pick 1/0 */
	tg_uop *cmp = tg_uop_alu(ir, TG_CMPLT, load(d1, g), load(d1, g),
	                         NULL);
	src = render_in(sink(store(b0, g, cmp), NULL), TG_DIALECT_OPENCL, 8);
	has(src, "__global uchar *restrict data0");
	has(src, "data0[gidx0] = (uchar)(");
	free(src);
	src = render_in(sink(store(b0, g, cmp), NULL), TG_DIALECT_GLSL, 8);
	has(src, "{ uint8_t data0[]; }");
	has(src, " ? uint8_t(1) : uint8_t(0));");
	free(src);
}
END_TEST

/* bfloat16 lives as its bits (a 16-bit unsigned int) in GLSL and CUDA
 * C, so a bitcast from or to a 16-bit int is a plain conversion of the
 * bits (the GGUF reader's BF16 weights are such a bitcast). */
START_TEST(gpu_dialects_bitcast_bfloat16_as_bits)
{
	static const int ds[] = { TG_DIALECT_GLSL, TG_DIALECT_CUDA };
	tg_uop *g = gidx0(8), *bf0 = glob(0, TG_BFLOAT16, 1),
	       *u1 = glob(1, TG_UINT16, 0), *i0 = glob(0, TG_INT16, 1),
	       *bf1 = glob(1, TG_BFLOAT16, 0);
	tg_uop *to = tg_uop1(ir, TG_BITCAST, TG_BFLOAT16, load(u1, g));
	tg_uop *from = tg_uop1(ir, TG_BITCAST, TG_INT16, load(bf1, g));

	static const char *want[2][2] = {
		{ "precise uint16_t v1 = uint16_t(v0);",
		  "precise int16_t v1 = int16_t(v0);" },
		{ "const unsigned short v1 = ((unsigned short)(v0));",
		  "const short v1 = ((short)(v0));" },
	};

	for (size_t i = 0; i < TG_ARRAY_LEN(ds); i++) {
		char *src = render_in(sink(store(bf0, g, to), NULL), ds[i], 8);

		has(src, want[i][0]);
		free(src);
		src = render_in(sink(store(i0, g, from), NULL), ds[i], 8);
		has(src, want[i][1]);
		free(src);
	}
}
END_TEST

/* NVRTC's entry points, for compiling CUDA C where the toolkit is
 * installed (no GPU needed); NULL fields when it is not. */
typedef struct nvrtc_api {
	void *lib;
	int (*create)(void **, const char *, const char *, int,
	              const char *const *, const char *const *);
	int (*compile)(void *, int, const char *const *);
	int (*log_size)(void *, size_t *);
	int (*log)(void *, char *);
	int (*destroy)(void **);
} nvrtc_api;

static int nvrtc_open(nvrtc_api *r)
{
	static const char *const names[] = {
		"libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so", NULL
	};

	memset(r, 0, sizeof *r);
	for (int i = 0; names[i] && !r->lib; i++)
		r->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!r->lib)
		return -1;
	*(void **)&r->create = dlsym(r->lib, "nvrtcCreateProgram");
	*(void **)&r->compile = dlsym(r->lib, "nvrtcCompileProgram");
	*(void **)&r->log_size = dlsym(r->lib, "nvrtcGetProgramLogSize");
	*(void **)&r->log = dlsym(r->lib, "nvrtcGetProgramLog");
	*(void **)&r->destroy = dlsym(r->lib, "nvrtcDestroyProgram");
	ck_assert(r->create && r->compile && r->log_size && r->log &&
	          r->destroy);
	return 0;
}

/* Compiles CUDA C to PTX; fails the test with NVRTC's log. */
static void nvrtc_check(nvrtc_api *r, const char *src)
{
	static const char *const opts[] = { "--gpu-architecture=compute_75" };
	void *prog = NULL;
	size_t n = 0;
	char *log;
	int rc;

	ck_assert_int_eq(r->create(&prog, src, "t.cu", 0, NULL, NULL), 0);
	rc = r->compile(prog, 1, opts);
	r->log_size(prog, &n);
	log = malloc(n + 1);
	ck_assert_ptr_nonnull(log);
	log[0] = '\0';
	r->log(prog, log);
	ck_assert_msg(rc == 0, "NVRTC: %s\n--- source:\n%s", log, src);
	free(log);
	r->destroy(&prog);
}

/* An integer division or remainder whose divisor is a loaded value:
 * after tg_guard_intdiv every one divides by (b != 0 [&& b != -1]) ? b
 * : 1, never by b itself, and a constant 0 or -1 divisor leaves no
 * division at all.  The source renders in every dialect, and CUDA's
 * compiles with NVRTC where the toolkit is installed (the devices here
 * run the C, OpenCL and GLSL kernels: tg-conformance's ops/int-division
 * checks their values). */
START_TEST(int_division_is_guarded_in_every_dialect)
{
	static const tg_dtype dts[] = { TG_INT8, TG_INT32, TG_INT64,
	                                TG_UINT32, TG_UINT64 };
	static const int dialects[] = { TG_DIALECT_C, TG_DIALECT_OPENCL,
	                                TG_DIALECT_CUDA, TG_DIALECT_GLSL };
	nvrtc_api rtc;
	int have_nvrtc = nvrtc_open(&rtc) == 0, compiled = 0;

	for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
		tg_dtype dt = dts[k];
		tg_uop *g = gidx0(8), *q0 = glob(0, dt, 1), *r0 = glob(1, dt, 1);
		tg_uop *a = load(glob(2, dt, 0), g), *b = load(glob(3, dt, 0), g);
		tg_uop *s = sink(store(q0, g, tg_uop_alu(ir, TG_IDIV, a, b, NULL)),
		                 store(r0, g, tg_uop_alu(ir, TG_MOD, a, b, NULL)));
		tg_uop *gs = tg_guard_intdiv(ir, s), **lin;
		size_t nl, ndiv = 0;

		ck_assert_ptr_nonnull(gs);
		ck_assert_int_eq(tg_linearize(ir, gs, &lin, &nl), TG_OK);
		for (size_t i = 0; i < nl; i++) {
			const tg_uop *u = lin[i], *d;

			if (u->op != TG_IDIV && u->op != TG_MOD)
				continue;
			d = u->src[1];
			ndiv++;
			ck_assert_int_eq(d->op, TG_WHERE);
			ck_assert_ptr_eq(d->src[1], b);
			ck_assert(d->src[2]->op == TG_CONST && d->src[2]->vmin == 1);
		}
		free(lin);
		ck_assert_uint_eq(ndiv, 2);
		for (size_t j = 0; j < sizeof dialects / sizeof *dialects; j++) {
			char *src;

			if (dialects[j] == TG_DIALECT_GLSL &&
			    tg_dtype_size(dt) != 4)
				continue;  /* GLSL here: 32-bit ints only */
			src = render_in(gs, dialects[j], 8);
			if (dialects[j] == TG_DIALECT_CUDA && have_nvrtc) {
				nvrtc_check(&rtc, src);
				compiled++;
			}
			free(src);
		}
	}
	/* constant divisors: no division left */
	{
		tg_uop *g = gidx0(8), *q0 = glob(0, TG_INT32, 1);
		tg_uop *a = load(glob(1, TG_INT32, 0), g), **lin;
		tg_uop *e = tg_uop_alu(ir, TG_ADD,
		            tg_uop_alu(ir, TG_IDIV, a,
		                       tg_uop_const_int(ir, TG_INT32, 0), NULL),
		            tg_uop_alu(ir, TG_MOD, a,
		                       tg_uop_const_int(ir, TG_INT32, -1), NULL),
		            NULL);
		size_t nl;

		ck_assert_int_eq(tg_linearize(ir, tg_guard_intdiv(ir,
		                 sink(store(q0, g, e), NULL)), &lin, &nl), TG_OK);
		for (size_t i = 0; i < nl; i++)
			ck_assert(lin[i]->op != TG_IDIV && lin[i]->op != TG_MOD);
		free(lin);
	}
	/* NVRTC stays loaded: unloading it loses what its C++ runtime
	 * allocated at load time, which LeakSanitizer reports */
	printf("int division: CUDA C compiled by NVRTC for %d dtypes%s\n",
	       compiled, have_nvrtc ? "" : " (no NVRTC on this machine)");
}
END_TEST

/* CUDA C, which no device here runs: pinned spellings.  Half comes from
 * cuda_fp16.h, the kernel is extern "C" __global__ with __restrict__
 * buffers; without work-groups its ids come from a flat id bounded by
 * the total, with them from blockIdx/threadIdx; shared memory is
 * __shared__ and a barrier __syncthreads(); bitcasts are the driver's
 * intrinsics; infinities are their bits. */
START_TEST(cuda_dialect_spellings)
{
	tg_uop *g = gidx0(8), *d0 = glob(0, TG_FLOAT16, 1),
	       *d1 = glob(1, TG_FLOAT16, 0), *f0 = glob(0, TG_INT32, 1),
	       *f1 = glob(1, TG_FLOAT32, 0), *b0 = glob(0, TG_BOOL, 1);
	tg_uop *h = tg_uop_alu(ir, TG_ADD, load(d1, g), load(d1, g), NULL);
	tg_uop *e = tg_uop1(ir, TG_EXP2, TG_FLOAT16, h);
	tg_uop *l = special("lidx0", 4), *gg = special("gidx0", 2);
	tg_arg la = { .a = 4, .name = "temp0" };
	tg_uop *tmp = tg_uop0(ir, TG_DEFINE_LOCAL,
	                      tg_type_ptr(TG_FLOAT32, TG_AS_LOCAL), &la);
	tg_uop *inf = tg_uop_const_float(ir, TG_FLOAT32, INFINITY);
	tg_uop *x = tg_uop_alu(ir, TG_MAX, load(f1, g), inf, NULL);
	tg_uop *bc = tg_uop1(ir, TG_BITCAST, TG_INT32, x);
	tg_uop *st, *bar, *cmp;
	char *src = render_in(sink(store(d0, g, e), NULL), TG_DIALECT_CUDA,
	                      8);
	struct tg_renderer_caps caps = { .struct_size = sizeof caps,
	                                 .dialect = TG_DIALECT_CUDA };
	size_t gl[3] = { 8, 1, 1 }, nl;
	tg_uop **lin;

	has(src, "#include <cuda_fp16.h>");
	has(src, "extern \"C\" __global__ void E_t(half *__restrict__ data0, "
	    "const half *__restrict__ data1)");
	has(src, "const unsigned int tg_i = (blockIdx.y * gridDim.x + "
	    "blockIdx.x) * blockDim.x + threadIdx.x;");
	has(src, "if (tg_i >= 8u) return;");
	has(src, "const int gidx0 = (int)(tg_i % 8u);");
	has(src, "((half)(exp2(((float)(v");
	free(src);
	src = render_in(sink(store(f0, g, bc), NULL), TG_DIALECT_CUDA, 8);
	ck_assert_ptr_null(strstr(src, "cuda_fp16.h"));
	has(src, "__int_as_float((int)0x7f800000)");
	has(src, "__float_as_int(");
	free(src);
	cmp = tg_uop_alu(ir, TG_CMPLT, load(d1, g), load(d1, g), NULL);
	src = render_in(sink(store(b0, g, cmp), NULL), TG_DIALECT_CUDA, 8);
	has(src, "bool *__restrict__ data0");
	free(src);
	/* work-groups, shared memory and a barrier */
	st = store(tmp, l, load(f1, tg_uop_alu(ir, TG_ADD, l, tg_uop_alu(ir,
	           TG_MUL, gg, idx(4), NULL), NULL)));
	bar = tg_uop_new(ir, TG_BARRIER, TG_VOID, &st, 1, NULL);
	{
		tg_uop *ls[3] = { tmp, idx(3), bar };
		tg_uop *v = tg_uop_new(ir, TG_LOAD, TG_FLOAT32, ls, 3, NULL);
		tg_uop *out = store(f0, tg_uop_alu(ir, TG_ADD, l, tg_uop_alu(ir,
		                    TG_MUL, gg, idx(4), NULL), NULL),
		                    tg_uop1(ir, TG_CAST, TG_INT32, v));
		ck_assert_int_eq(tg_linearize(ir, sink(out, NULL), &lin, &nl),
		                 TG_OK);
	}
	src = tg_render(&caps, "r_t", gl, lin, nl);
	ck_assert_msg(src != NULL, "%s", tg_last_error());
	has(src, "__shared__ float temp0[4];");
	has(src, "const int gidx0 = (int)blockIdx.x;");
	has(src, "const int lidx0 = (int)threadIdx.x;");
	has(src, "__syncthreads();");
	ck_assert_ptr_null(strstr(src, "tg_i"));
	free(src);
	free(lin);
}
END_TEST

/* What a dialect cannot express is an error naming it. */
START_TEST(gpu_dialects_refuse_what_they_lack)
{
	tg_uop *g = gidx0(4), *d0 = glob(0, TG_FLOAT64, 1),
	       *d1 = glob(1, TG_FLOAT64, 0);
	tg_uop *e = tg_uop1(ir, TG_SIN, TG_FLOAT64, load(d1, g));
	struct tg_renderer_caps caps = { .struct_size = sizeof caps,
	                                 .dialect = TG_DIALECT_GLSL };
	size_t gl[3] = { 4, 1, 1 };
	tg_uop **lin;
	size_t n;

	ck_assert_int_eq(tg_linearize(ir, sink(store(d0, g, e), NULL), &lin,
	                              &n), TG_OK);
	ck_assert_ptr_null(tg_render(&caps, "E_t", gl, lin, n));
	ck_assert_error("render: GLSL has no float64 SIN");
	caps.dialect = TG_DIALECT_CUSTOM;
	ck_assert_ptr_null(tg_render(&caps, "E_t", gl, lin, n));
	ck_assert_error("render: kernel E_t: no renderer for dialect 4");
	free(lin);
}
END_TEST

/* CUDA's vectors are lane-array structs: an aligned vector load or
 * store is one access through the struct's pointer (vectorize.c starts
 * every CUDA run at a multiple of its width), an unproven load builds
 * the struct from its lanes, and the tensor-core instruction is its
 * helper over half fragments and a float sum (render/wmma.c). */
START_TEST(cuda_vectors_and_mma)
{
	tg_uop *g = gidx0(8), *f0 = glob(0, TG_FLOAT32, 1),
	       *f1 = glob(1, TG_FLOAT32, 0), *h2 = glob(2, TG_FLOAT16, 0);
	tg_uop *i4 = tg_uop_alu(ir, TG_MUL, g, idx(4), NULL), *hs[8];
	tg_uop *ls[2] = { f1, i4 }, *ab[3], *w, *u;
	tg_arg al = { .a = 16 };
	tg_arg wa = { .v.i = 0, .name = "tg_mma_m16n8k16_f16_f32" };
	const tg_wmma *mma = tg_wmma_get(0);
	char *src;

	ck_assert_ptr_nonnull(mma);
	ck_assert_str_eq(mma->fn, wa.name);
	for (int i = 0; i < 8; i++)
		hs[i] = load(h2, tg_uop_alu(ir, TG_ADD, i4, idx(i), NULL));
	ab[0] = tg_uop_new(ir, TG_VECTORIZE, tg_type_vec(TG_FLOAT16, 8), hs,
	                   8, NULL);
	ab[1] = tg_uop_new(ir, TG_VECTORIZE, tg_type_vec(TG_FLOAT16, 4), hs,
	                   4, NULL);
	ab[2] = tg_uop_new(ir, TG_LOAD, tg_type_vec(TG_FLOAT32, 4), ls, 2,
	                   &al);
	w = tg_uop_new(ir, TG_WMMA, tg_type_vec(TG_FLOAT32, 4), ab, 3, &wa);
	src = render_in(sink(store(f0, i4, w), NULL), TG_DIALECT_CUDA, 8);
	has(src, "struct __align__(16) tg_float4 { float v[4]; };");
	has(src, "struct __align__(16) tg_half8 { half v[8]; };");
	has(src, "struct __align__(8) tg_half4 { half v[4]; };");
	has(src, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
	has(src, " = *((const tg_float4 *)(data1+v0));");
	has(src, "const tg_half8 v");
	has(src, " = tg_half8{{v");
	has(src, " = tg_mma_m16n8k16_f16_f32(v");
	has(src, "*((tg_float4 *)(data0+v0)) = v");
	free(src);
	/* a vector load not proven aligned: lane by lane */
	u = tg_uop_new(ir, TG_LOAD, tg_type_vec(TG_FLOAT32, 2), ls, 2, NULL);
	src = render_in(sink(store(f0, i4, tg_uop_new(ir, TG_GEP, TG_FLOAT32,
	                &u, 1, &(tg_arg){ .v.i = 1 })), NULL),
	                TG_DIALECT_CUDA, 8);
	has(src, "tg_float2{{data1[v0+0], data1[v0+1]}}");
	has(src, ".v[1];");
	free(src);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("render_c");
	TCase *t = tcase_create("linearize");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, linearize_places_nodes_in_their_loops);
	suite_add_tcase(s, t);
	t = tcase_create("render");
	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, elementwise_add_float32_odd_size);
	tcase_add_test(t, reduce_sums_rows);
	tcase_add_test(t, gated_load_pads);
	tcase_add_test(t, where_and_cmplt);
	tcase_add_test(t, int32_idiv_mod);
	tcase_add_test(t, cast_float_to_int8);
	tcase_add_test(t, float16_add_rounds_each_step);
	tcase_add_test(t, bfloat16_mul_rounds_to_nearest_even);
	tcase_add_test(t, constants_print_exactly);
	tcase_add_test(t, unsupported_op_is_an_error);
	tcase_add_test(t, reduce_inside_an_outer_loop);
	tcase_add_test(t, float4_vectors);
	tcase_add_test(t, variables_and_gated_store);
	tcase_add_test(t, gpu_dialects_spell_types_and_indices);
	tcase_add_test(t, gpu_dialects_bitcast_bfloat16_as_bits);
	tcase_add_test(t, gpu_dialects_refuse_what_they_lack);
	tcase_add_test(t, cuda_dialect_spellings);
	tcase_add_test(t, int_division_is_guarded_in_every_dialect);
	tcase_add_test(t, cuda_vectors_and_mma);
	tcase_add_test(t, launch_blocks_visit_every_item_once);
	tcase_add_test(t, reduce_passes_visit_every_item_once_a_pass);
	tcase_add_test(t, aligned_vector_loads);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

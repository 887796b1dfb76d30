/*
 * test_expand.c - the expander (codegen/expand.c) and the accumulators
 * (codegen/reduce.c): each rule on IR built by hand, pointers compared
 * (nodes are interned), with a near miss; the grouped reduce's shared
 * array and barrier on a kernel lowered for a device with work groups;
 * an unrolled float sum whose order matters, run on the CPU plugin
 * against NOOPT and a C loop bit for bit; and a value broadcast along
 * an upcast axis, whose lanes share one accumulator.
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

/* ------------------------------------------------ IR built by hand */

/* A plan of two axes with upcasts u0 and u1; axis 1 reduced when
 * red. */
static tg_kplan plan2(int64_t u0, int64_t u1, int red)
{
	tg_kplan p;

	memset(&p, 0, sizeof p);
	p.ndim = 2;
	p.full[0] = 4 * u0;
	p.full[1] = 4 * u1;
	p.upcast[0] = u0;
	p.upcast[1] = u1;
	p.local[0] = p.local[1] = p.group[0] = p.group[1] = 1;
	p.reduce_axes = red ? 2u : 0u;
	return p;
}

/* The digit of axis ax with upcast u. */
static tg_uop *digit(uint32_t ax, int64_t u)
{
	tg_arg a = { .v.i = ax, .a = u };

	return tg_uop0(ir, TG_EXPAND, TG_INDEX, &a);
}

static tg_uop *glob(int i, int out)
{
	tg_arg a = { .v.i = i, .a = out };

	return tg_uop0(ir, TG_DEFINE_GLOBAL,
	               tg_type_ptr(TG_FLOAT32, TG_AS_GLOBAL), &a);
}

static tg_uop *load(int buf, tg_uop *idx)
{
	return tg_uop2(ir, TG_LOAD, TG_FLOAT32, glob(buf, 0), idx);
}

static tg_uop *fconst(double f)
{
	return tg_uop_const_float(ir, TG_FLOAT32, f);
}

static tg_uop *expand(tg_uop *u, const tg_kplan *p)
{
	tg_uop *r = tg_expand_upcasts(ir, u, p);

	ck_assert_msg(r != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_uop_verify(r, "test"), TG_OK);
	return r;
}

static tg_uop *reduce(tg_uop *const *src, size_t n, int64_t unrolled,
                      int64_t nval)
{
	tg_arg a = { .v.i = TG_ADD, .a = unrolled, .b = nval };

	return tg_uop_new(ir, TG_REDUCE, TG_FLOAT32, src, n, &a);
}

static tg_uop *loop(int64_t n, int64_t num)
{
	tg_arg a = { .v.i = num, .a = 1 };
	tg_uop *b[2] = { tg_sym_int(ir, 0), tg_sym_int(ir, n) };

	return tg_uop_new(ir, TG_RANGE, TG_INDEX, b, 2, &a);
}

/* ADD(LOAD(X0), LOAD(X1)) varies over both axes: lane 3*d0 + d1 adds
 * the loads' lanes d0 and d1; a STORE at 3*X0 + X1 gives six. */
START_TEST(alu_over_two_axis_sets)
{
	tg_kplan p = plan2(2, 3, 0);
	tg_uop *x0 = digit(0, 2), *x1 = digit(1, 3);
	tg_uop *v = tg_uop_alu(ir, TG_ADD, load(1, x0), load(2, x1), NULL);
	tg_uop *idx = tg_sym_add(ir, tg_sym_muli(ir, x0, 3), x1);
	tg_uop *st = tg_uop3(ir, TG_STORE, TG_VOID, glob(0, 1), idx, v);
	tg_uop *r = expand(v, &p), *s;

	ck_assert_int_eq(r->op, TG_EXPAND);
	ck_assert_int_eq(r->arg.a, 3);
	ck_assert_uint_eq(r->nsrc, 6);
	for (int d0 = 0; d0 < 2; d0++)
		for (int d1 = 0; d1 < 3; d1++) {
			tg_uop *a = load(1, tg_sym_int(ir, d0));
			tg_uop *b = load(2, tg_sym_int(ir, d1));
			ck_assert_ptr_eq(r->src[3 * d0 + d1],
			                 tg_uop_alu(ir, TG_ADD, a, b, NULL));
		}
	/* one axis: its own lanes */
	r = expand(load(1, x0), &p);
	ck_assert_int_eq(r->arg.a, 1);
	ck_assert_ptr_eq(r->src[1], load(1, tg_sym_int(ir, 1)));
	/* the stores, in lane order, into the sink */
	s = expand(tg_uop1(ir, TG_SINK, TG_VOID, st), &p);
	ck_assert_uint_eq(s->nsrc, 6);
	ck_assert_ptr_eq(s->src[4],
	                 tg_uop3(ir, TG_STORE, TG_VOID, glob(0, 1),
	                         tg_sym_int(ir, 4),
	                         tg_uop_alu(ir, TG_ADD, r->src[1],
	                                    load(2, tg_sym_int(ir, 1)), NULL)));
	/* near miss: no digits, nothing to do */
	v = tg_uop_alu(ir, TG_ADD, load(1, tg_sym_int(ir, 0)),
	               load(2, tg_sym_int(ir, 1)), NULL);
	ck_assert_ptr_eq(expand(v, &p), v);
}
END_TEST

/* A gate that is constant in a lane decides the lane, as lowering
 * decided a copy; a value condition is never folded. */
START_TEST(masks_per_lane)
{
	tg_kplan p = plan2(2, 3, 0);
	tg_uop *x0 = digit(0, 2), *x1 = digit(1, 3), *z = fconst(0);
	tg_uop *src[4] = { glob(1, 0), x0, tg_sym_lti(ir, x0, 1), z };
	tg_uop *l = tg_uop_new(ir, TG_LOAD, TG_FLOAT32, src, 4, NULL), *r;
	tg_uop *w = tg_uop3(ir, TG_WHERE, TG_FLOAT32, tg_sym_lti(ir, x1, 2),
	                    fconst(1), z);

	r = expand(l, &p);
	ck_assert_ptr_eq(r->src[0], load(1, tg_sym_int(ir, 0)));
	ck_assert_ptr_eq(r->src[1], z);
	r = expand(w, &p);
	ck_assert_int_eq(r->arg.a, 2);
	ck_assert_ptr_eq(r->src[0], fconst(1));
	ck_assert_ptr_eq(r->src[1], fconst(1));
	ck_assert_ptr_eq(r->src[2], z);
	/* near miss: a gate without digits stays */
	src[2] = tg_sym_lti(ir, tg_uop0(ir, TG_SPECIAL, TG_INDEX,
	                                &(tg_arg){ .name = "gidx0", .a = 4 }),
	                    1);
	l = tg_uop_new(ir, TG_LOAD, TG_FLOAT32, src, 4, NULL);
	r = expand(l, &p);
	ck_assert_uint_eq(r->src[0]->nsrc, 4);
	/* near miss: WHERE(true, lanes, 0) is a value: built, not folded */
	w = tg_uop3(ir, TG_WHERE, TG_FLOAT32,
	            tg_uop_const_int(ir, TG_BOOL, 1), load(1, x0), z);
	r = expand(w, &p);
	ck_assert_int_eq(r->src[1]->op, TG_WHERE);
}
END_TEST

/* REDUCE over an unrolled axis: per lane of the other axes, one
 * REDUCE of the unrolled lanes in loop order. */
START_TEST(contraction_order)
{
	tg_kplan p = plan2(2, 4, 1);
	tg_uop *x0 = digit(0, 2), *x1 = digit(1, 4), *r = loop(4, 0);
	tg_uop *idx = tg_sym_add(ir, tg_sym_add(ir, tg_sym_muli(ir, x0, 16),
	                                        tg_sym_muli(ir, r, 4)), x1);
	tg_uop *src[5] = { load(1, idx), r }, *res, *w;

	res = expand(reduce(src, 2, 2, 0), &p);
	ck_assert_int_eq(res->op, TG_EXPAND);
	ck_assert_int_eq(res->arg.a, 1);
	for (int d0 = 0; d0 < 2; d0++) {
		for (int j = 0; j < 4; j++)
			src[j] = load(1, tg_sym_addi(ir, tg_sym_muli(ir, r, 4),
			                             16 * d0 + j));
		src[4] = r;
		ck_assert_ptr_eq(res->src[d0], reduce(src, 5, 0, 4));
	}
	/* every digit, also of an axis the value does not depend on */
	w = load(1, r);
	src[0] = w;
	src[1] = r;
	res = expand(reduce(src, 2, 2, 0), &p);
	for (int j = 0; j < 4; j++)
		src[j] = w;
	src[4] = r;
	ck_assert_ptr_eq(res, reduce(src, 5, 0, 4));
	/* near miss: no unrolled axis, one value per lane */
	src[0] = load(1, tg_sym_add(ir, x0, r));
	src[1] = r;
	res = expand(reduce(src, 2, 0, 0), &p);
	src[0] = load(1, tg_sym_addi(ir, r, 1));
	ck_assert_ptr_eq(res->src[1], reduce(src, 2, 0, 1));
	/* contracted already: left alone */
	ck_assert_ptr_eq(expand(res->src[1], &p), res->src[1]);
}
END_TEST

/* The accumulator folds acc first, then the values in order; two
 * reduces of one type over one loop get two accumulators. */
START_TEST(accumulators)
{
	tg_uop *r = loop(8, 0), *v[4], *src[5], *s, *phi, *u;

	for (int j = 0; j < 4; j++)
		src[j] = v[j] = load(1, tg_sym_addi(ir, tg_sym_muli(ir, r, 4),
		                                    j));
	src[4] = r;
	phi = tg_lower_reduces(ir, reduce(src, 5, 0, 4), NULL);
	ck_assert_int_eq(phi->op, TG_PHI);
	u = phi->src[1];
	for (int j = 3; j >= 0; j--) {
		ck_assert_int_eq(u->op, TG_ADD);
		ck_assert_ptr_eq(u->src[1], v[j]);
		u = u->src[0];
	}
	ck_assert_ptr_eq(u, phi->src[0]);
	ck_assert_int_eq(u->op, TG_DEFINE_ACC);
	ck_assert(tg_uop_is_const_int(u->src[0], 0));
	ck_assert_ptr_eq(u->src[1], r);
	/* two reduces over r: acc0 and acc1 */
	src[0] = load(1, r);
	src[1] = r;
	src[2] = load(2, r);
	src[3] = r;
	s = tg_uop2(ir, TG_SINK, TG_VOID,
	            tg_uop3(ir, TG_STORE, TG_VOID, glob(0, 1),
	                    tg_sym_int(ir, 0), reduce(src, 2, 0, 1)),
	            tg_uop3(ir, TG_STORE, TG_VOID, glob(0, 1),
	                    tg_sym_int(ir, 1), reduce(src + 2, 2, 0, 1)));
	s = tg_lower_reduces(ir, s, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->src[0]->src[2]->src[0]->arg.v.i, 0);
	ck_assert_int_eq(s->src[1]->src[2]->src[0]->arg.v.i, 1);
	ck_assert_ptr_ne(s->src[0]->src[2]->src[0], s->src[1]->src[2]->src[0]);
	/* no loop, no accumulator: a float sum from 0, as NOOPT's loop
	 * adds, 0 + v0 + v1 + v2 + v3 */
	u = tg_lower_reduces(ir, reduce(v, 4, 0, 4), NULL);
	ck_assert_ptr_eq(u, tg_uop_alu(ir, TG_ADD, tg_uop_alu(ir, TG_ADD,
	                 tg_uop_alu(ir, TG_ADD, tg_uop_alu(ir, TG_ADD,
	                 fconst(0), v[0], NULL), v[1], NULL), v[2], NULL),
	                 v[3], NULL));
	/* ... and its products fuse at once, as fuse_phi fuses the loop's:
	 * mulacc(v1, v1, mulacc(v0, v0, 0)), the same roundings */
	for (int j = 0; j < 2; j++)
		src[j] = tg_uop_alu(ir, TG_MUL, v[j], v[j], NULL);
	u = tg_lower_reduces(ir, reduce(src, 2, 0, 2), NULL);
	ck_assert_ptr_eq(u, tg_uop_alu(ir, TG_MULACC, v[1], v[1],
	                 tg_uop_alu(ir, TG_MULACC, v[0], v[0], fconst(0))));
}
END_TEST

/* The SINK takes each distinct lane once: a gate true in both lanes
 * makes one STORE. */
START_TEST(sink_dedups_lanes)
{
	tg_kplan p = plan2(2, 1, 0);
	tg_uop *x0 = digit(0, 2), *src[4], *s;

	src[0] = glob(0, 1);
	src[1] = tg_sym_int(ir, 0);
	src[2] = fconst(1);
	src[3] = tg_sym_lti(ir, x0, 2);
	ck_assert_ptr_eq(src[3], tg_uop_const_int(ir, TG_BOOL, 1));
	src[3] = tg_uop_alu(ir, TG_CMPLT, x0, tg_sym_int(ir, 2), NULL);
	s = tg_uop_new(ir, TG_STORE, TG_VOID, src, 4, NULL);
	s = expand(tg_uop1(ir, TG_SINK, TG_VOID, s), &p);
	ck_assert_uint_eq(s->nsrc, 1);
	ck_assert_ptr_eq(s->src[0]->src[3], tg_uop_const_int(ir, TG_BOOL, 1));
}
END_TEST

/* ------------------------------------------------ the grouped reduce */

static struct tg_renderer_caps group_caps(size_t shared)
{
	struct tg_renderer_caps c = *kt_cpu_caps();

	c.has_local = c.has_shared = 1;
	for (int i = 0; i < 3; i++) {
		c.local_max[i] = 1024;
		c.global_max[i] = SIZE_MAX;
	}
	c.local_max_total = 1024;
	c.shared_max = shared;
	return c;
}

/* out(4) = a(4,64).sum(1) lowered and expanded under opts. */
static tg_uop *lowered(const struct tg_renderer_caps *caps,
                       const tg_opt *opts, size_t nopts)
{
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(2, 4, 64));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, x, 2u),
	                         kt_st(2, 4, 1)), *out;
	tg_kernel kern;
	tg_kplan p;

	ck_assert_int_eq(tg_kernel_open(&kern, ir, tg_ast_sink(k, &s, 1)),
	                 TG_OK);
	ck_assert_int_eq(tg_lower_plan(&kern, &p), TG_OK);
	p.caps = caps;
	for (size_t i = 0; i < nopts; i++)
		ck_assert_msg(tg_kplan_apply_opt(&p, opts[i]) == TG_OK, "%s",
		              tg_last_error());
	ck_assert_int_eq(tg_lower(&kern, &p, &out), TG_OK);
	out = tg_expand_upcasts(ir, out, &p);
	tg_kernel_close(&kern);
	return out;
}

static size_t count_op(const tg_uop *root, unsigned op, tg_uop **last)
{
	size_t n, c = 0;
	tg_uop **t = tg_uop_toposort(root, &n);

	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < n; i++)
		if (t[i]->op == op) {
			c++;
			*last = t[i];
		}
	free(t);
	return c;
}

/* Two rows per thread, each grouped by 16: one shared array of 2*16
 * floats, one barrier over both rows' stores, a second-stage loop. */
START_TEST(grouped_one_temp_one_barrier)
{
	static const tg_opt o[] = {
		{ TG_OPT_UPCAST, 0, 2 }, { TG_OPT_GROUPTOP, 1, 16 },
	};
	struct tg_renderer_caps c = group_caps(65536);
	tg_uop *s = lowered(&c, o, 2), *temp, *bar, *acc;

	ck_assert_msg(s != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_uop_verify(s, "test"), TG_OK);
	ck_assert_uint_eq(count_op(s, TG_DEFINE_LOCAL, &temp), 1);
	ck_assert_str_eq(temp->arg.name, "temp0");
	ck_assert_int_eq(temp->arg.a, 2 * 16);
	ck_assert_uint_eq(count_op(s, TG_BARRIER, &bar), 1);
	ck_assert_uint_eq(bar->nsrc, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(bar->src[i]->op, TG_STORE);
		ck_assert_ptr_eq(bar->src[i]->src[0], temp);
		ck_assert_int_eq(bar->src[i]->src[2]->op, TG_REDUCE);
	}
	ck_assert_uint_eq(s->nsrc, 2);  /* the gated stores of both rows */
	ck_assert_uint_eq(s->src[0]->nsrc, 4);
	/* accumulators: the two parts, then the two second stages */
	s = tg_lower_reduces(ir, s, NULL);
	ck_assert_uint_eq(count_op(s, TG_DEFINE_ACC, &acc), 4);
	ck_assert_int_eq(s->src[1]->src[2]->src[0]->arg.v.i, 3);
}
END_TEST

/* Near misses: no group part, no shared array; too little shared
 * memory, the error names it. */
START_TEST(grouped_near_misses)
{
	static const tg_opt o[] = { { TG_OPT_GROUPTOP, 1, 16 } };
	struct tg_renderer_caps c = group_caps(65536);
	tg_uop *s = lowered(&c, NULL, 0), *x;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(count_op(s, TG_DEFINE_LOCAL, &x), 0);
	ck_assert_uint_eq(count_op(s, TG_BARRIER, &x), 0);
	c = group_caps(32);
	ck_assert_ptr_null(lowered(&c, o, 1));
	ck_assert_msg(strstr(tg_last_error(), "a grouped reduce needs 64 "
	                     "bytes of shared memory, the device has 32"),
	              "%s", tg_last_error());
}
END_TEST

/* ------------------------------------------------ run on the device */

static void sum_run(tg_uop *sink, const tg_opt *o, size_t no,
                    tg_buffer **bufs, float *out)
{
	tg_ksrc ks;

	ck_assert_msg(tg_codegen_opts(sink, kt_cpu_caps(), kt_set(), o, no,
	                              &ks) == TG_OK, "%s", tg_last_error());
	kt_launch(&ks, bufs, 2);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], out, sizeof *out), TG_OK);
}

/* A sum whose float result depends on the order of the adds: unrolled
 * by 4 it folds in the loop's order, equal bit for bit to NOOPT and to
 * a C loop. */
START_TEST(unrolled_sum_keeps_order)
{
	static const tg_opt o[] = { { TG_OPT_UNROLL, 0, 4 } };
	float a[16], got, ref, c = 0, rev = 0;
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, kt_st(1, 16));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, x, 1u),
	                         kt_st(1, 1));
	tg_buffer *bufs[2];

	for (int i = 0; i < 16; i++)
		a[i] = i % 4 == 0 ? 1e8f * (i % 8 ? -1.0f : 1.0f) : 3.0f + i;
	for (int i = 0; i < 16; i++) {
		c += a[i];
		rev += a[15 - i];
	}
	ck_assert_msg(memcmp(&c, &rev, sizeof c), "the order must matter");
	s = tg_ast_sink(k, &s, 1);
	bufs[0] = kt_buf_with(TG_FLOAT32, 1, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 16, a);
	sum_run(s, NULL, 0, bufs, &ref);
	sum_run(s, o, 1, bufs, &got);
	ck_assert_msg(!memcmp(&got, &ref, sizeof got), "%.9g vs NOOPT %.9g",
	              got, ref);
	ck_assert_msg(!memcmp(&got, &c, sizeof got), "%.9g vs C %.9g", got, c);
	kt_unref(bufs, 2);
}
END_TEST

/* out(4,4) = x(4,1,8) expanded to (4,4,8), summed over axis 2, with
 * axis 1 upcast by 4: the value does not depend on that axis's digit,
 * so its four lanes share one accumulator (one sum, stored four
 * times), and the outputs equal NOOPT's. */
START_TEST(broadcast_lanes_share_an_accumulator)
{
	static const tg_opt o[] = { { TG_OPT_UPCAST, 1, 4 } };
	tg_st *sx = kt_expand3(kt_st(3, 4, 1, 8), 4, 4, 8);
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32, sx);
	tg_uop *s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, x, 4u),
	                         kt_st(3, 4, 4, 1));
	float a[32], got[16], ref[16];
	tg_buffer *bufs[2];
	tg_ksrc ks;

	s = tg_ast_sink(k, &s, 1);
	ck_assert_int_eq(tg_codegen_opts(s, kt_cpu_caps(), kt_set(), o, 1,
	                                 &ks), TG_OK);
	ck_assert_ptr_nonnull(strstr(ks.linear_text, "DEFINE_ACC"));
	ck_assert_ptr_null(strstr(strstr(ks.linear_text, "DEFINE_ACC") + 1,
	                          "DEFINE_ACC"));
	kt_fill(a, 32, 0.375f, 0.125f);
	bufs[0] = kt_buf_with(TG_FLOAT32, 16, NULL);
	bufs[1] = kt_buf_with(TG_FLOAT32, 32, a);
	kt_launch(&ks, bufs, 2);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], got, sizeof got), TG_OK);
	ck_assert_int_eq(tg_codegen_opts(s, kt_cpu_caps(), kt_set(), NULL, 0,
	                                 &ks), TG_OK);
	kt_launch(&ks, bufs, 2);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_buffer_copyout(bufs[0], ref, sizeof ref), TG_OK);
	ck_assert(!memcmp(got, ref, sizeof got));
	kt_unref(bufs, 2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("expand");
	TCase *t = tcase_create("expand");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, alu_over_two_axis_sets);
	tcase_add_test(t, masks_per_lane);
	tcase_add_test(t, contraction_order);
	tcase_add_test(t, accumulators);
	tcase_add_test(t, sink_dedups_lanes);
	tcase_add_test(t, grouped_one_temp_one_barrier);
	tcase_add_test(t, grouped_near_misses);
	tcase_add_test(t, unrolled_sum_keeps_order);
	tcase_add_test(t, broadcast_lanes_share_an_accumulator);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

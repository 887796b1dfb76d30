/*
 * test_verify.c - the invariant checks codegen runs between passes
 * (ir/verify.c): each check with a node that breaks it (the message
 * names the pass, the node and what is wrong) and a well-formed graph
 * that passes; the linear-program checks with hand-made programs; a
 * real kernel's AST, lowered graph and linear program pass; the
 * expander's digits, lane sets and REDUCEs.
 */
#include "config.h"

#include "irtest.h"
#include "kasttest.h"

static tg_uop *buf(int n, tg_type t)
{
	tg_arg a = { .v.i = n };

	return tg_uop0(ir, TG_DEFINE_GLOBAL, tg_type_ptr(t, TG_AS_GLOBAL), &a);
}

static tg_uop *range(int n, int64_t end)
{
	tg_arg a = { .v.i = n, .a = 1 };
	tg_uop *src[2] = { ci(0), ci(end) };

	return tg_uop_new(ir, TG_RANGE, TG_INDEX, src, 2, &a);
}

/* u fails verification with a message containing want. */
static void assert_bad(const tg_uop *u, const char *want)
{
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(tg_uop_verify(u, "test"), TG_EINTERNAL);
	ck_assert_error(want);
	ck_assert_error("verify after test: %");
}

START_TEST(alu_types)
{
	tg_uop *i = ci(3), *f = cf(1.5), *b;

	ck_assert_int_eq(tg_uop_verify(tg_uop_alu(ir, TG_ADD, f, f, NULL),
	                               "test"), TG_OK);
	assert_bad(tg_uop2(ir, TG_ADD, TG_FLOAT32, f, i),
	           "ADD float: operand types differ");
	assert_bad(tg_uop2(ir, TG_ADD, TG_INDEX, f, f),
	           "result type is not the operands'");
	assert_bad(tg_uop2(ir, TG_CMPLT, TG_FLOAT32, f, f),
	           "comparison is not bool");
	b = tg_uop_alu(ir, TG_CMPLT, f, f, NULL);
	ck_assert_int_eq(tg_uop_verify(tg_uop_alu(ir, TG_WHERE, b, f, f),
	                               "test"), TG_OK);
	assert_bad(tg_uop3(ir, TG_WHERE, TG_FLOAT32, f, f, f),
	           "condition is not bool");
	assert_bad(tg_uop1(ir, TG_ADD, TG_FLOAT32, f),
	           "wrong number of sources");
}
END_TEST

START_TEST(loads_and_stores)
{
	tg_uop *g = buf(0, TG_FLOAT32), *f = cf(2), *i = ci(1);
	tg_uop *t = tg_uop_alu(ir, TG_CMPLT, i, ci(2), NULL);
	tg_uop *ok[4] = { g, i, t, f };

	ck_assert_int_eq(tg_uop_verify(tg_uop_new(ir, TG_LOAD, TG_FLOAT32,
	                                          ok, 4, NULL), "t"), TG_OK);
	assert_bad(tg_uop2(ir, TG_LOAD, TG_FLOAT32, f, i),
	           "source 0 is not a buffer");
	assert_bad(tg_uop2(ir, TG_LOAD, TG_FLOAT32, g, f),
	           "index is not an integer");
	assert_bad(tg_uop2(ir, TG_LOAD, TG_INT32, g, i),
	           "value type is not the buffer's");
	ok[2] = i;
	assert_bad(tg_uop_new(ir, TG_LOAD, TG_FLOAT32, ok, 4, NULL),
	           "gate is not bool");
	ok[2] = f;
	ok[3] = i;
	assert_bad(tg_uop_new(ir, TG_STORE, TG_VOID, ok, 4, NULL),
	           "gate is not bool");
	assert_bad(tg_uop3(ir, TG_STORE, TG_FLOAT32, g, i, f), "has a value");
	assert_bad(tg_uop1(ir, TG_STORE, TG_VOID, g),
	           "wrong number of sources");
}
END_TEST

START_TEST(accumulators_ranges_vectors)
{
	tg_uop *r = range(0, 4), *acc, *src[2], *v;

	src[0] = cf(0);
	src[1] = r;
	acc = tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32, src, 2, NULL);
	ck_assert_int_eq(tg_uop_verify(tg_uop2(ir, TG_PHI, TG_FLOAT32, acc,
	                                       cf(1)), "t"), TG_OK);
	src[0] = ci(0);
	assert_bad(tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32, src, 2, NULL),
	           "initial value is not a CONST or a load of its type");
	src[0] = tg_uop_alu(ir, TG_ADD, cf(0), cf(1), NULL);
	assert_bad(tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32, src, 2, NULL),
	           "initial value is not a CONST or a load of its type");
	src[0] = cf(0);
	src[1] = ci(3);
	assert_bad(tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32, src, 2, NULL),
	           "accumulates over a non-RANGE");
	assert_bad(tg_uop2(ir, TG_PHI, TG_FLOAT32, cf(0), cf(1)),
	           "not (DEFINE_ACC, value)");
	src[0] = ci(0);
	src[1] = cf(4);
	assert_bad(tg_uop_new(ir, TG_RANGE, TG_INDEX, src, 2, NULL),
	           "bounds are not two integers");
	src[0] = src[1] = cf(1);
	v = tg_uop_new(ir, TG_VECTORIZE, tg_type_vec(TG_FLOAT32, 2), src, 2,
	               NULL);
	ck_assert_int_eq(tg_uop_verify(v, "t"), TG_OK);
	assert_bad(tg_uop0(ir, TG_SPECIAL, TG_FLOAT32, NULL),
	           "not a source-less integer");
}
END_TEST

START_TEST(gep_lane)
{
	tg_uop *src[2] = { cf(1), cf(2) }, *v, *g;
	tg_arg a1 = { .v.i = 1 }, a2 = { .v.i = 2 };

	v = tg_uop_new(ir, TG_VECTORIZE, tg_type_vec(TG_FLOAT32, 2), src, 2,
	               NULL);
	g = tg_uop_new(ir, TG_GEP, TG_FLOAT32, &v, 1, &a1);
	ck_assert_int_eq(tg_uop_verify(g, "t"), TG_OK);
	assert_bad(tg_uop_new(ir, TG_GEP, TG_FLOAT32, &v, 1, &a2),
	           "lane outside the vector");
	assert_bad(tg_uop_new(ir, TG_VECTORIZE, tg_type_vec(TG_FLOAT32, 3),
	                      src, 2, NULL), "lanes and sources differ");
}
END_TEST

/* ---------------------------------------------------------- programs */

static void assert_linear_bad(tg_uop *const *lin, size_t n,
                              const char *want)
{
	ck_assert_int_eq(tg_linear_verify(lin, n, "test"), TG_EINTERNAL);
	ck_assert_error(want);
}

START_TEST(linear_programs)
{
	tg_uop *r0 = range(0, 4), *r1 = range(1, 3);
	tg_uop *e0 = tg_uop1(ir, TG_ENDRANGE, TG_VOID, r0);
	tg_uop *e1 = tg_uop1(ir, TG_ENDRANGE, TG_VOID, r1);
	tg_uop *x = tg_uop_alu(ir, TG_ADD, r0, r1, NULL);
	tg_uop *c0 = r0->src[0], *c4 = r0->src[1], *c3 = r1->src[1];
	tg_uop *good[] = { c0, c4, c3, r0, r1, x, e1, e0 };
	tg_uop *crossed[] = { c0, c4, c3, r0, r1, x, e0, e1 };
	tg_uop *outside[] = { c0, c4, c3, r0, e0, r1, x, e1 };
	tg_uop *early[] = { c0, c4, c3, r0, r1, e1, e0, x };
	tg_uop *twice[] = { c0, c4, c3, c0, r0, e0 };
	tg_uop *open[] = { c0, c4, r0 };

	ck_assert_int_eq(tg_linear_verify(good, 8, "t"), TG_OK);
	assert_linear_bad(crossed, 8, "not the innermost open one");
	assert_linear_bad(outside, 8, "uses a loop that is not open");
	assert_linear_bad(early, 8, "uses a loop that is not open");
	assert_linear_bad(twice, 6, "defined twice");
	assert_linear_bad(open, 3, "never closed");
	assert_linear_bad(good + 3, 5, "a source is placed later");
}
END_TEST

/* A matmul's kernel AST, its lowered graph and its linear program, with
 * and without opts, pass every check (codegen runs them under
 * VERIFY=1; this calls them directly). */
START_TEST(real_kernel_passes)
{
	tg_uop *sink = kt_matmul(ir, 8, 8, 16);
	tg_ksrc ks;

	ck_assert_int_eq(tg_uop_verify(sink, "schedule"), TG_OK);
	ck_assert_int_eq(tg_codegen_opts(sink, kt_cpu_caps(), kt_set(), NULL, 0, &ks),
	                 TG_OK);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_codegen(sink, kt_cpu_caps(), kt_set(), &ks), TG_OK);
	tg_ksrc_free(&ks);
}
END_TEST

START_TEST(ast_trackers)
{
	tg_uop *sink = kt_matmul(ir, 4, 4, 4), *st;
	tg_uop *bad;

	/* the first LOAD's tracker, with a view missing a source */
	st = sink->src[0]->src[2]->src[0]->src[0]->src[1];
	ck_assert_int_eq(st->op, TG_SHAPETRACKER);
	bad = tg_uop_new(ir, TG_VIEW, TG_VOID, st->src[0]->src,
	                 st->src[0]->nsrc - 1, &st->src[0]->arg);
	assert_bad(bad, "sources do not fit the ndim");
	assert_bad(tg_uop_new(ir, TG_SHAPETRACKER, TG_VOID, &st, 1, NULL),
	           "a source is not a VIEW");
}
END_TEST

/* The expander's forms: digits, lane sets, REDUCE before and after
 * contraction. */
START_TEST(expander_forms)
{
	tg_arg dg = { .v.i = 1, .a = 4 }, lanes = { .a = 2 };
	tg_arg red = { .v.i = TG_ADD, .a = 2 };
	tg_arg done = { .v.i = TG_ADD, .b = 2 };
	tg_uop *x = tg_uop0(ir, TG_EXPAND, TG_INDEX, &dg), *r = range(0, 4);
	tg_uop *l[4] = { cf(0), cf(1), cf(2), cf(3) }, *v[3];

	ck_assert_int_eq(tg_uop_verify(tg_uop_alu(ir, TG_ADD, x, r, NULL),
	                               "test"), TG_OK);
	dg.a = 1;
	assert_bad(tg_uop0(ir, TG_EXPAND, TG_INDEX, &dg),
	           "not a digit of an axis");
	ck_assert_int_eq(tg_uop_verify(tg_uop_new(ir, TG_EXPAND, TG_FLOAT32,
	                                          l, 4, &lanes), "test"),
	                 TG_OK);
	l[2] = ci(2);
	assert_bad(tg_uop_new(ir, TG_EXPAND, TG_FLOAT32, l, 4, &lanes),
	           "a lane is an EXPAND or not of the set's type");
	lanes.a = 0;
	assert_bad(tg_uop_new(ir, TG_EXPAND, TG_FLOAT32, l, 4, &lanes),
	           "a lane set without axes or lanes");
	v[0] = cf(1);
	v[1] = r;
	ck_assert_int_eq(tg_uop_verify(tg_uop_new(ir, TG_REDUCE, TG_FLOAT32,
	                                          v, 2, &red), "test"), TG_OK);
	v[1] = ci(4);
	assert_bad(tg_uop_new(ir, TG_REDUCE, TG_FLOAT32, v, 2, &red),
	           "reduces over a non-RANGE");
	v[1] = cf(2);
	v[2] = r;
	ck_assert_int_eq(tg_uop_verify(tg_uop_new(ir, TG_REDUCE, TG_FLOAT32,
	                                          v, 3, &done), "test"),
	                 TG_OK);
	done.a = 2;  /* unrolled axes left after contraction */
	assert_bad(tg_uop_new(ir, TG_REDUCE, TG_FLOAT32, v, 3, &done),
	           "not an ADD or MAX of values over loops");
	done.a = 0;
	v[1] = ci(2);
	assert_bad(tg_uop_new(ir, TG_REDUCE, TG_FLOAT32, v, 3, &done),
	           "a value is not of the reduce's type");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verify");
	TCase *t = tcase_create("checks");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, alu_types);
	tcase_add_test(t, loads_and_stores);
	tcase_add_test(t, accumulators_ranges_vectors);
	tcase_add_test(t, gep_lane);
	tcase_add_test(t, linear_programs);
	tcase_add_test(t, real_kernel_passes);
	tcase_add_test(t, ast_trackers);
	tcase_add_test(t, expander_forms);
	suite_add_tcase(s, t);
	return tl_run(s);
}

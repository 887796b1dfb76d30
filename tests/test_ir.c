/*
 * test_ir.c - the IR core: interning, bounds, walks, the pattern matcher
 * and the graph rewrite.  Rewrites are checked by pointer (nodes are
 * hash-consed), each rule with a case where it fires and a near miss.
 */
#include "config.h"

#include "testlib.h"
#include "failalloc.h"
#include "../libtgcore/ir/ir.h"

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

static tg_uop *var(const char *name, int64_t lo, int64_t hi)
{
	tg_arg arg = { .name = name, .a = lo, .b = hi };

	return tg_uop0(ir, TG_DEFINE_VAR, TG_INDEX, &arg);
}

static tg_uop *ci(int64_t v)
{
	return tg_uop_const_int(ir, TG_INDEX, v);
}

static tg_uop *add(tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(ir, TG_ADD, a, b, NULL);
}

static tg_uop *mul(tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(ir, TG_MUL, a, b, NULL);
}

/* ------------------------------------------------------------ interning */

START_TEST(equal_nodes_are_one_pointer)
{
	tg_uop *a = var("a", 0, 9), *b = var("b", 0, 9);

	ck_assert_ptr_eq(a, var("a", 0, 9));
	ck_assert_ptr_ne(a, var("a", 0, 8));   /* bounds are part of arg */
	ck_assert_ptr_ne(a, b);
	ck_assert_ptr_eq(add(a, b), add(a, b));
	ck_assert_ptr_ne(add(a, b), add(b, a)); /* order is structure */
	ck_assert_ptr_eq(ci(3), ci(3));
	ck_assert_uint_eq(tg_ir_count(ir), 6);  /* a a' b a+b b+a 3 */
}
END_TEST

START_TEST(float_constants_compare_bitwise)
{
	tg_uop *z = tg_uop_const_float(ir, TG_FLOAT32, 0.0);
	tg_uop *nz = tg_uop_const_float(ir, TG_FLOAT32, -0.0);

	ck_assert_ptr_ne(z, nz);
	ck_assert_ptr_eq(nz, tg_uop_const_float(ir, TG_FLOAT32, -0.0));
	/* values are normalized to the kind before interning */
	ck_assert_ptr_eq(tg_uop_const_float(ir, TG_FLOAT32, 0.1),
	                 tg_uop_const_float(ir, TG_FLOAT32, (float)0.1));
	ck_assert_ptr_eq(tg_uop_const_int(ir, TG_INT8, 300),
	                 tg_uop_const_int(ir, TG_INT8, 44));
	ck_assert_ptr_ne(tg_uop_const_int(ir, TG_INT8, 1),
	                 tg_uop_const_int(ir, TG_INT16, 1));
}
END_TEST

START_TEST(ids_are_dense_and_survive_rehash)
{
	tg_uop *first = ci(0), *u;
	int i;

	for (i = 1; i < 5000; i++) {
		u = ci(i);
		ck_assert_uint_eq(u->id, (unsigned)i);
	}
	ck_assert_ptr_eq(ci(0), first);
	ck_assert_ptr_eq(ci(4321)->id == 4321 ? ci(4321) : NULL, ci(4321));
	ck_assert_uint_eq(tg_ir_count(ir), 5000);
}
END_TEST

START_TEST(null_source_propagates_and_sticks)
{
	tg_uop *a = var("a", 0, 3);

	ck_assert_int_eq(tg_ir_status(ir), TG_OK);
	ck_assert_ptr_null(add(a, NULL));
	ck_assert_int_eq(tg_ir_status(ir), TG_EINVAL);
	ck_assert_error("uop_new: source 1 of ADD is NULL");
	/* later failures keep the first message */
	ck_assert_ptr_null(tg_uop_alu(ir, TG_SINK, a, NULL, NULL));
	ck_assert_error("source 1 of ADD");
}
END_TEST

START_TEST(alu_infers_result_types)
{
	tg_uop *f = tg_uop_const_float(ir, TG_FLOAT32, 1.5);
	tg_uop *b = tg_uop_const_int(ir, TG_BOOL, 1);

	ck_assert_uint_eq(tg_uop_alu(ir, TG_CMPLT, f, f, NULL)->dtype, TG_BOOL);
	ck_assert_uint_eq(tg_uop_alu(ir, TG_WHERE, b, f, f)->dtype,
	                  TG_FLOAT32);
	ck_assert_uint_eq(tg_uop_alu(ir, TG_SQRT, f, NULL, NULL)->dtype,
	                  TG_FLOAT32);
	ck_assert_ptr_null(tg_uop_alu(ir, TG_LOAD, f, f, NULL));
	ck_assert_error("LOAD is not an ALU op");
}
END_TEST

/* --------------------------------------------------------------- bounds */

START_TEST(bounds_follow_the_ops)
{
	tg_uop *a = var("a", 0, 9), *b = var("b", -3, 5);
	tg_uop *c4 = ci(4);
	tg_arg rng = { .v.i = 0 };
	tg_uop *r;

	ck_assert_int_eq(add(a, b)->vmin, -3);
	ck_assert_int_eq(add(a, b)->vmax, 14);
	ck_assert_int_eq(mul(a, b)->vmin, -27);
	ck_assert_int_eq(mul(a, b)->vmax, 45);
	r = tg_uop_alu(ir, TG_IDIV, a, c4, NULL);
	ck_assert_int_eq(r->vmin, 0);
	ck_assert_int_eq(r->vmax, 2);
	r = tg_uop_alu(ir, TG_IDIV, b, c4, NULL);  /* truncation: -3/4 == 0 */
	ck_assert_int_eq(r->vmin, 0);
	ck_assert_int_eq(r->vmax, 1);
	r = tg_uop_alu(ir, TG_MOD, b, c4, NULL);   /* sign of the dividend */
	ck_assert_int_eq(r->vmin, -3);
	ck_assert_int_eq(r->vmax, 3);
	r = tg_uop_alu(ir, TG_MOD, a, ci(20), NULL);
	ck_assert_int_eq(r->vmin, 0);
	ck_assert_int_eq(r->vmax, 9);
	r = tg_uop_alu(ir, TG_CMPLT, a, ci(10), NULL);
	ck_assert_int_eq(r->vmin, 1);
	r = tg_uop_alu(ir, TG_MAX, b, ci(0), NULL);
	ck_assert_int_eq(r->vmin, 0);
	ck_assert_int_eq(r->vmax, 5);
	r = tg_uop_new(ir, TG_RANGE, TG_INDEX,
	               (tg_uop *[]){ ci(2), ci(7) }, 2, &rng);
	ck_assert_int_eq(r->vmin, 2);
	ck_assert_int_eq(r->vmax, 6);
}
END_TEST

START_TEST(bounds_widen_where_math_wraps)
{
	tg_uop *x = tg_uop_const_int(ir, TG_INT8, 100);
	tg_uop *s = tg_uop_alu(ir, TG_ADD, x, x, NULL);
	tg_uop *f = tg_uop_const_float(ir, TG_FLOAT32, 2.0);

	ck_assert_int_eq(s->vmin, -128);   /* 200 wraps in int8 */
	ck_assert_int_eq(s->vmax, 127);
	ck_assert_int_eq(f->vmin, INT64_MIN);
	ck_assert_int_eq(f->vmax, INT64_MAX);
	s = tg_uop_alu(ir, TG_IDIV, var("a", 0, 9), var("d", -1, 1), NULL);
	ck_assert_int_eq(s->vmin, INT64_MIN);  /* divisor can be 0 */
}
END_TEST

/* ---------------------------------------------------------------- walks */

START_TEST(toposort_puts_sources_first_once)
{
	tg_uop *a = var("a", 0, 9), *b = var("b", 0, 9);
	tg_uop *s = add(add(a, b), mul(a, b));
	tg_uop **order;
	size_t n, i, j;

	order = tg_uop_toposort(s, &n);
	ck_assert_ptr_nonnull(order);
	ck_assert_uint_eq(n, 5);
	ck_assert_ptr_eq(order[n - 1], s);
	ck_assert_ptr_null(order[n]);
	for (i = 0; i < n; i++)
		for (j = 0; j < order[i]->nsrc; j++)
			ck_assert_uint_lt(order[i]->src[j]->id, order[i]->id);
	free(order);
}
END_TEST

START_TEST(import_reinterns_in_another_context)
{
	tg_ir *other = tg_ir_new();
	tg_uop *a = var("a", 0, 9), *e = add(mul(a, ci(4)), ci(1)), *x, *y;

	x = tg_uop_import(other, e);
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_ne(x, e);
	ck_assert_uint_eq(tg_ir_count(other), 5);
	y = tg_uop_import(other, e);
	ck_assert_ptr_eq(x, y);
	ck_assert_ptr_eq(tg_uop_import(ir, x), e);  /* and back */
	ck_assert_str_eq(x->src[0]->src[0]->arg.name, "a");
	ck_assert_ptr_ne(x->src[0]->src[0]->arg.name, a->arg.name);
	tg_ir_free(other);
}
END_TEST

START_TEST(dump_lists_every_node)
{
	tg_uop *a = var("a", 0, 9);
	char *d = tg_uop_dump(add(a, ci(2)));

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(strstr(d, "DEFINE_VAR"));
	ck_assert_ptr_nonnull(strstr(d, "a[0,9]"));
	ck_assert_ptr_nonnull(strstr(d, "ADD"));
	ck_assert_ptr_nonnull(strstr(d, "(0,1)"));
	free(d);
}
END_TEST

/* -------------------------------------------------------------- matcher */

enum { X, Y, C, NCAP };

START_TEST(match_fixed_sources_and_captures)
{
	tg_uop *a = var("a", 0, 9), *cap[TG_MAX_CAPTURES];
	const tg_pat *p = P_ALU(P_NOCAP, TG_ADD, P_ANY(X), P_CONST(C));

	ck_assert(tg_pat_match(p, add(a, ci(3)), cap));
	ck_assert_ptr_eq(cap[X], a);
	ck_assert_ptr_eq(cap[C], ci(3));
	ck_assert(!tg_pat_match(p, add(ci(3), a), cap));  /* order fixed */
	ck_assert(!tg_pat_match(p, mul(a, ci(3)), cap));  /* other op */
}
END_TEST

START_TEST(match_commutative_tries_both_orders)
{
	tg_uop *a = var("a", 0, 9), *cap[TG_MAX_CAPTURES];
	const tg_pat *p = P_ALU_C(P_NOCAP, TG_ADD, P_ANY(X), P_CONST(C));

	ck_assert(tg_pat_match(p, add(ci(3), a), cap));
	ck_assert_ptr_eq(cap[X], a);
	ck_assert_ptr_eq(cap[C], ci(3));
	ck_assert(!tg_pat_match(p, add(a, a), cap));
}
END_TEST

START_TEST(match_nested_commutes_backtrack)
{
	/* x*c + x: the inner order found first must be undone when the
	 * outer one fails */
	tg_uop *a = var("a", 0, 9), *b = var("b", 0, 9);
	tg_uop *cap[TG_MAX_CAPTURES];
	const tg_pat *p = P_ALU_C(P_NOCAP, TG_ADD,
	                          P_ALU_C(P_NOCAP, TG_MUL, P_ANY(X), P_ANY(Y)),
	                          P_ANY(X));

	ck_assert(tg_pat_match(p, add(a, mul(b, a)), cap));
	ck_assert_ptr_eq(cap[X], a);
	ck_assert_ptr_eq(cap[Y], b);
	ck_assert(tg_pat_match(p, add(mul(a, b), b), cap));
	ck_assert_ptr_eq(cap[X], b);
	ck_assert(!tg_pat_match(p, add(mul(a, b), ci(1)), cap));
}
END_TEST

START_TEST(match_capture_twice_binds_one_node)
{
	tg_uop *a = var("a", 0, 9), *b = var("b", 0, 9);
	tg_uop *cap[TG_MAX_CAPTURES];
	const tg_pat *p = P_ALU(P_NOCAP, TG_ADD, P_ANY(X), P_ANY(X));

	ck_assert(tg_pat_match(p, add(a, a), cap));
	ck_assert(!tg_pat_match(p, add(a, b), cap));
}
END_TEST

START_TEST(match_dtype_mask_value_repeat_any)
{
	tg_uop *a = var("a", 0, 9), *cap[TG_MAX_CAPTURES];
	tg_uop *f = tg_uop_const_float(ir, TG_FLOAT32, 1.0);
	tg_uop *sink = tg_uop_new(ir, TG_SINK, TG_VOID,
	                          (tg_uop *[]){ ci(1), ci(2), ci(3) }, 3, NULL);

	ck_assert(tg_pat_match(P_ANYT(X, TG_DTM_FLOATS), f, cap));
	ck_assert(!tg_pat_match(P_ANYT(X, TG_DTM_FLOATS), a, cap));
	ck_assert(tg_pat_match(P_CONSTV(X, 1), f, cap));  /* 1.0 == 1 */
	ck_assert(tg_pat_match(P_CONSTV(X, 1), ci(1), cap));
	ck_assert(!tg_pat_match(P_CONSTV(X, 1), ci(2), cap));
	ck_assert(tg_pat_match(P_REPEAT(P_NOCAP, TG_SINK, P_CONST(P_NOCAP)),
	                       sink, cap));
	ck_assert(!tg_pat_match(P_REPEAT(P_NOCAP, TG_SINK, P_CONST(P_NOCAP)),
	                        tg_uop_new(ir, TG_SINK, TG_VOID,
	                                   (tg_uop *[]){ ci(1), a }, 2, NULL),
	                        cap));
	ck_assert(tg_pat_match(P_OP(X, TG_SINK), sink, cap));  /* any srcs */
	ck_assert_ptr_eq(cap[X], sink);
}
END_TEST

/* -------------------------------------------------------------- rewrite */

static tg_uop *keep_x(tg_rw *rw, tg_uop **cap)
{
	(void)rw;
	return cap[X];
}

/* x*2 -> x+x only for index values, so the rule set below also shows a
 * rule producing a node that other rules then rewrite. */
static tg_uop *double_to_add(tg_rw *rw, tg_uop **cap)
{
	return tg_uop_alu(rw->ir, TG_ADD, cap[X], cap[X], NULL);
}

static tg_uop *count_calls(tg_rw *rw, tg_uop **cap)
{
	(*(int *)rw->ctx)++;
	(void)cap;
	return NULL;
}

static const tg_rule test_rules[] = {
	{ "count", P_OP(P_NOCAP, TG_MAX), count_calls },
	{ "x+0 -> x", P_ALU_C(P_NOCAP, TG_ADD, P_ANY(X), P_CONSTV(C, 0)),
	  keep_x },
	{ "x*1 -> x", P_ALU_C(P_NOCAP, TG_MUL, P_ANY(X), P_CONSTV(C, 1)),
	  keep_x },
	{ "x*2 -> x+x", P_ALU_C(P_NOCAP, TG_MUL, P_ANY(X), P_CONSTV(C, 2)),
	  double_to_add },
};
static tg_ruleset test_set = TG_RULESET("test", test_rules, NULL);

START_TEST(rewrite_reaches_a_fixed_point_bottom_up)
{
	tg_uop *a = var("a", 0, 9), *b = var("b", 0, 9);
	tg_uop *e = mul(add(add(a, ci(0)), ci(0)), ci(1));

	ck_assert_ptr_eq(tg_rewrite(ir, e, &test_set, NULL), a);
	e = add(mul(b, ci(2)), mul(ci(1), add(a, ci(0))));
	ck_assert_ptr_eq(tg_rewrite(ir, e, &test_set, NULL),
	                 add(add(b, b), a));
	/* near misses stay */
	e = add(mul(a, ci(3)), ci(5));
	ck_assert_ptr_eq(tg_rewrite(ir, e, &test_set, NULL), e);
}
END_TEST

START_TEST(rewrite_visits_each_node_once)
{
	tg_uop *a = var("a", 0, 9), *m = tg_uop_alu(ir, TG_MAX, a, a, NULL);
	tg_uop *e = add(add(m, m), mul(m, m));
	int calls = 0;

	ck_assert_ptr_eq(tg_rewrite(ir, e, &test_set, &calls), e);
	ck_assert_int_eq(calls, 1);   /* shared node, memoized */
}
END_TEST

START_TEST(rewrite_deep_chain_without_recursion)
{
	tg_uop *e = var("a", 0, 9);
	int i;

	for (i = 0; i < 200000; i++)   /* far deeper than a C stack allows */
		e = add(mul(e, ci(1)), ci(0));
	ck_assert_ptr_eq(tg_rewrite(ir, e, &test_set, NULL), var("a", 0, 9));
}
END_TEST

static tg_uop *swap_add(tg_rw *rw, tg_uop **cap)
{
	return tg_uop_alu(rw->ir, TG_ADD, cap[Y], cap[X], NULL);
}

static const tg_rule cycle_rules[] = {
	{ "x+y -> y+x (never ends)", P_ALU(P_NOCAP, TG_ADD, P_ANY(X), P_ANY(Y)),
	  swap_add },
};
static tg_ruleset cycle_set = TG_RULESET("cycle", cycle_rules, NULL);

START_TEST(rewrite_reports_a_rule_cycle)
{
	tg_uop *a = var("a", 0, 9), *b = var("b", 0, 9);

	ck_assert_ptr_null(tg_rewrite(ir, add(a, b), &cycle_set, NULL));
	ck_assert_int_eq(tg_ir_status(ir), TG_EINTERNAL);
	ck_assert_error("rewrite (cycle): rules cycle");
}
END_TEST

static const tg_rule chained_rules[] = {
	{ "x*3 -> x", P_ALU(P_NOCAP, TG_MUL, P_ANY(X), P_CONSTV(C, 3)),
	  keep_x },
};
static tg_ruleset chained_set = TG_RULESET("chained", chained_rules,
                                           &test_set);

START_TEST(rulesets_compose_through_next)
{
	tg_uop *a = var("a", 0, 9);

	ck_assert_ptr_eq(tg_rewrite(ir, add(mul(a, ci(3)), ci(0)), &chained_set,
	                            NULL), a);
	ck_assert_ptr_eq(tg_rewrite(ir, mul(a, ci(3)), &test_set, NULL),
	                 mul(a, ci(3)));
}
END_TEST

#ifdef TL_INTERPOSED
/* Builds, simplifies, imports, walks, renders and evaluates symbolic
 * expressions: every step that allocates.  The status of the first
 * failure, or 0. */
static int oom_run(void)
{
	tg_ir *cx = tg_ir_new(), *other = tg_ir_new();
	tg_uop *a, *e = NULL, *x = NULL, *from[1], *to[1];
	tg_uop_vec vars = { 0 };
	tg_i64_vec vals = { 0 };
	int64_t five = 5, v;
	char *s = NULL;
	int rc = cx && other ? 0 : tg_last_status();

	if (!rc) {
		a = tg_sym_var(cx, "a", 0, 9);
		e = tg_sym_add(cx, tg_sym_idivi(cx, tg_sym_add(cx,
		    tg_sym_muli(cx, a, 4), tg_sym_bind(cx, tg_sym_var(cx, "b",
		    1, 3), 2)), 4), tg_sym_modi(cx, tg_sym_addi(cx, a, 6), 3));
		from[0] = a;
		to[0] = tg_sym_muli(cx, tg_sym_var(cx, "c", 0, 2), 2);
		x = tg_sym_substitute(cx, e, from, to, 1);
		rc = tg_ir_status(cx);
	}
	if (!rc && !tg_uop_import(other, x))
		rc = tg_ir_status(other);
	if (!rc && !(s = tg_sym_render(e)))
		rc = tg_last_status();
	free(s);
	s = NULL;
	if (!rc && !(s = tg_uop_dump(e)))
		rc = tg_last_status();
	free(s);
	if (!rc)
		rc = tg_sym_vars(e, &vars);
	if (!rc && !tg_sym_unbind(cx, e, NULL, &vals))
		rc = tg_ir_status(cx);
	if (!rc)
		rc = tg_sym_eval(e, (const tg_uop *const *)&from[0], &five, 1,
		                 &v);
	TG_VEC_FREE(&vars);
	TG_VEC_FREE(&vals);
	tg_ir_free(other);
	tg_ir_free(cx);
	return rc;
}

START_TEST(every_allocation_can_fail)
{
	tl_fail_each(oom_run, 10);
}
END_TEST
#endif

static Suite *ir_suite(void)
{
	Suite *s = suite_create("ir");
	TCase *t = tcase_create("uop");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, equal_nodes_are_one_pointer);
	tcase_add_test(t, float_constants_compare_bitwise);
	tcase_add_test(t, ids_are_dense_and_survive_rehash);
	tcase_add_test(t, null_source_propagates_and_sticks);
	tcase_add_test(t, alu_infers_result_types);
	tcase_add_test(t, bounds_follow_the_ops);
	tcase_add_test(t, bounds_widen_where_math_wraps);
	tcase_add_test(t, toposort_puts_sources_first_once);
	tcase_add_test(t, import_reinterns_in_another_context);
	tcase_add_test(t, dump_lists_every_node);
	suite_add_tcase(s, t);
	t = tcase_create("pattern");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, match_fixed_sources_and_captures);
	tcase_add_test(t, match_commutative_tries_both_orders);
	tcase_add_test(t, match_nested_commutes_backtrack);
	tcase_add_test(t, match_capture_twice_binds_one_node);
	tcase_add_test(t, match_dtype_mask_value_repeat_any);
	tcase_add_test(t, rewrite_reaches_a_fixed_point_bottom_up);
	tcase_add_test(t, rewrite_visits_each_node_once);
	tcase_add_test(t, rewrite_deep_chain_without_recursion);
	tcase_add_test(t, rewrite_reports_a_rule_cycle);
	tcase_add_test(t, rulesets_compose_through_next);
#ifdef TL_INTERPOSED
	tcase_add_test(t, every_allocation_can_fail);
#else
	fprintf(stderr, "test_ir: every_allocation_can_fail not run "
	        "under ThreadSanitizer (tests/failalloc.h)\n");
#endif
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(ir_suite());
}

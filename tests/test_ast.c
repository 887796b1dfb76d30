/*
 * test_ast.c - the kernel AST (uops): builders and their type checks,
 * the full shape, the readable text (exact, and independent of creation
 * order), the topological walk, and one node per distinct kernel.
 */
#include "config.h"

#include "testlib.h"
#include "failalloc.h"
#include "../libtgcore/codegen/codegen.h"

#define ST45 "ShapeTracker(views=(View(shape=(4,5), strides=(5,1), " \
	"offset=0, mask=None, contiguous=1),))"
#define ST41 "ShapeTracker(views=(View(shape=(4,1), strides=(1,0), " \
	"offset=0, mask=None, contiguous=1),))"

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

/* A contiguous 2-d tracker (NULL only on OOM). */
static tg_st *st2(int64_t a, int64_t b)
{
	tg_sint sh[2] = { tg_si(a), tg_si(b) };

	return tg_st_from_shape(NULL, 2, sh);
}

static tg_uop *load(int buf, tg_dtype dt)
{
	return tg_ast_load(k, buf, dt, st2(4, 5));
}

static tg_uop *cnst(tg_dtype dt, tg_scalar v)
{
	return tg_ast_const(k, dt, v, st2(4, 5));
}

static tg_uop *store1(tg_uop *value, int64_t a, int64_t b)
{
	tg_uop *st = tg_ast_store(k, 0, value, st2(a, b));

	return tg_ast_sink(k, &st, 1);
}

/* The number of AST nodes under sink (trackers and buffers aside). */
static size_t ast_count(const tg_uop *sink)
{
	size_t n;
	tg_uop **order = tg_ast_toposort(sink, &n);

	ck_assert_ptr_nonnull(order);
	free(order);
	return n;
}

/* The position of u in order[0..n), n when absent. */
static size_t index_in(tg_uop *const *order, size_t n, const tg_uop *u)
{
	size_t i = 0;

	while (i < n && order[i] != u)
		i++;
	return i;
}

/* Formats and compares with the expected text. */
static void assert_text(const tg_uop *sink, const char *want)
{
	char *s = tg_ast_format(sink);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, want);
	free(s);
}

/* ------------------------------------------------------------ building */

START_TEST(elementwise_add_text)
{
	tg_uop *a = load(1, TG_FLOAT32), *b = load(2, TG_FLOAT32);
	tg_uop *sink = store1(tg_ast_alu(k, TG_ADD, a, b, NULL), 4, 5);

	ck_assert_ptr_nonnull(sink);
	ck_assert_int_eq(tg_ir_status(k), TG_OK);
	ck_assert_uint_eq(ast_count(sink), 5);
	/* one IR: the same kernel built again is the same node */
	ck_assert_ptr_eq(store1(tg_ast_alu(k, TG_ADD, load(1, TG_FLOAT32),
	                                   load(2, TG_FLOAT32), NULL), 4, 5),
	                 sink);
	ck_assert_ptr_ne(store1(tg_ast_alu(k, TG_ADD, load(2, TG_FLOAT32),
	                                   load(1, TG_FLOAT32), NULL), 4, 5),
	                 sink);
	assert_text(sink,
	            "%0 LOAD float32 buf1 " ST45 "\n"
	            "%1 LOAD float32 buf2 " ST45 "\n"
	            "%2 ALU ADD float32 %0 %1\n"
	            "%3 STORE float32 buf0 " ST45 " %2\n"
	            "%4 SINK %3\n");
}
END_TEST

START_TEST(reduce_kernel_text)
{
	tg_scalar two = { .f = 2.0 };
	tg_uop *x = tg_ast_alu(k, TG_MUL, load(1, TG_FLOAT32),
	                       cnst(TG_FLOAT32, two), NULL);
	tg_uop *r = tg_ast_reduce(k, TG_ADD, x, 1u << 1);
	tg_uop *sink = store1(r, 4, 1);

	ck_assert_ptr_nonnull(sink);
	ck_assert_int_eq(r->op, TG_REDUCE_AXIS);
	ck_assert_int_eq(tg_ast_reduce_op(r), TG_ADD);
	ck_assert_uint_eq(tg_ast_reduce_axes(r), 2);
	assert_text(sink,
	            "%0 LOAD float32 buf1 " ST45 "\n"
	            "%1 CONST float32 2.0f " ST45 "\n"
	            "%2 ALU MUL float32 %0 %1\n"
	            "%3 REDUCE ADD float32 axes(1) %2\n"
	            "%4 STORE float32 buf0 " ST41 " %3\n"
	            "%5 SINK %4\n");
}
END_TEST

START_TEST(reduce_axes_list)
{
	tg_sint sh[3] = { tg_si(2), tg_si(3), tg_si(4) };
	tg_uop *l = tg_ast_load(k, 1, TG_INT32, tg_st_from_shape(NULL, 3, sh));
	tg_uop *r = tg_ast_reduce(k, TG_MAX, l, 6);
	char *s;

	ck_assert_ptr_nonnull(r);
	s = tg_ast_format(r);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(s,
	                             "\n%1 REDUCE MAX int32 axes(1,2) %0\n"));
	free(s);
}
END_TEST

START_TEST(cmp_gives_bool_where_gives_value)
{
	tg_uop *a = load(1, TG_INT32), *b = load(2, TG_INT32);
	tg_uop *c = tg_ast_alu(k, TG_CMPLT, a, b, NULL);
	tg_uop *w = tg_ast_alu(k, TG_WHERE, c, a, b);
	tg_uop *n = tg_ast_alu(k, TG_NEG, w, NULL, NULL);
	tg_uop *f = tg_ast_cast(k, n, TG_FLOAT32);
	tg_uop *i = tg_ast_bitcast(k, f, TG_UINT32);

	ck_assert_int_eq(c->dtype, TG_BOOL);
	ck_assert_int_eq(w->dtype, TG_INT32);
	ck_assert_int_eq(n->dtype, TG_INT32);
	ck_assert_int_eq(f->dtype, TG_FLOAT32);
	ck_assert_ptr_nonnull(i);
	ck_assert_int_eq(i->dtype, TG_UINT32);
	ck_assert_int_eq(tg_ir_status(k), TG_OK);
}
END_TEST

START_TEST(const_is_normalized)
{
	tg_scalar big = { .i = 300 }, five = { .i = 5 }, tenth = { .f = 0.1 };
	tg_uop *a = cnst(TG_INT8, big), *b = cnst(TG_BOOL, five);
	tg_uop *c = cnst(TG_FLOAT32, tenth), *d = cnst(TG_FLOAT16, tenth);

	ck_assert_int_eq(a->arg.v.i, 44);
	ck_assert_int_eq(b->arg.v.i, 1);
	ck_assert(c->arg.v.f == (double)(float)0.1);
	ck_assert(d->arg.v.f == tg_float_round(0.1, TG_FLOAT16));
	ck_assert(d->arg.v.f != c->arg.v.f);
	/* equal after normalizing: one node */
	ck_assert_ptr_eq(cnst(TG_INT8, (tg_scalar){ .i = 44 }), a);
}
END_TEST

START_TEST(full_shape_of_reduce)
{
	tg_uop *r = tg_ast_reduce(k, TG_ADD, load(1, TG_FLOAT32), 2);
	tg_uop *sink = store1(r, 4, 1);
	tg_sint shape[TG_MAX_DIMS];
	size_t nd = 0;

	ck_assert_int_eq(tg_ast_full_shape(sink, &nd, shape), 0);
	ck_assert_uint_eq(nd, 2);
	ck_assert(tg_sint_is(shape[0], 4));
	ck_assert(tg_sint_is(shape[1], 5));
}
END_TEST

START_TEST(full_shape_takes_broadcast_const)
{
	tg_scalar one = { .f = 1 };
	tg_uop *c = tg_ast_const(k, TG_FLOAT32, one, st2(1, 1));
	tg_uop *x = tg_ast_alu(k, TG_ADD, c, load(1, TG_FLOAT32), NULL);
	tg_sint shape[TG_MAX_DIMS];
	size_t nd = 0;

	ck_assert_int_eq(tg_ast_full_shape(store1(x, 4, 5), &nd, shape), 0);
	ck_assert_uint_eq(nd, 2);
	ck_assert(tg_sint_is(shape[0], 4) && tg_sint_is(shape[1], 5));
	ck_assert_int_eq(tg_ast_full_shape(NULL, &nd, shape), TG_EINVAL);
}
END_TEST

/* ------------------------------------------------------------ walks */

START_TEST(toposort_shared_node_once)
{
	tg_uop *x = load(1, TG_FLOAT32);
	tg_uop *y = tg_ast_alu(k, TG_ADD, x, x, NULL);
	tg_uop *z = tg_ast_alu(k, TG_MUL, y, x, NULL);
	tg_uop *sink = store1(z, 4, 5), **order;
	size_t n, i, j;

	order = tg_ast_toposort(sink, &n);
	ck_assert_ptr_nonnull(order);
	ck_assert_uint_eq(n, 5);
	ck_assert_ptr_eq(order[0], x);
	ck_assert_ptr_eq(order[1], y);
	ck_assert_ptr_eq(order[2], z);
	ck_assert_ptr_eq(order[n - 1], sink);
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			ck_assert_ptr_ne(order[i], order[j]);
		for (j = 0; j < order[i]->nsrc; j++)
			if (index_in(order, n, order[i]->src[j]) < n)
				ck_assert_uint_lt(index_in(order, n,
				                           order[i]->src[j]), i);
	}
	free(order);
	assert_text(sink,
	            "%0 LOAD float32 buf1 " ST45 "\n"
	            "%1 ALU ADD float32 %0 %0\n"
	            "%2 ALU MUL float32 %1 %0\n"
	            "%3 STORE float32 buf0 " ST45 " %2\n"
	            "%4 SINK %3\n");
}
END_TEST

START_TEST(toposort_single_node)
{
	tg_uop *x = load(1, TG_FLOAT32), **order;
	size_t n = 9;

	order = tg_ast_toposort(x, &n);
	ck_assert_ptr_nonnull(order);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(order[0], x);
	free(order);
}
END_TEST

/* (buf1 * buf2) + buf3 stored to buf0, with the leaves made in `perm`
 * order: the text must not see ids. */
static char *kernel_text(const int *perm, int swap)
{
	tg_uop *l[3] = { NULL }, *m, *sink;
	char *s;
	int i;

	k = tg_ir_new();
	ck_assert_ptr_nonnull(k);
	for (i = 0; i < 3; i++)
		l[perm[i]] = load(perm[i] + 1, TG_FLOAT32);
	m = tg_ast_alu(k, TG_MUL, l[swap], l[1 - swap], NULL);
	sink = store1(tg_ast_alu(k, TG_ADD, m, l[2], NULL), 4, 5);
	s = tg_ast_format(sink);
	ck_assert_ptr_nonnull(s);
	tg_ir_free(k);
	k = NULL;
	return s;
}

START_TEST(format_ignores_creation_order)
{
	static const int p0[3] = { 0, 1, 2 }, p1[3] = { 2, 1, 0 };
	static const int p2[3] = { 1, 2, 0 };
	char *a, *b, *c, *d;

	tg_ir_free(k);
	a = kernel_text(p0, 0);
	b = kernel_text(p1, 0);
	c = kernel_text(p2, 0);
	d = kernel_text(p0, 1);
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(a, c);
	ck_assert_str_ne(a, d);  /* operand order is structure */
	free(a);
	free(b);
	free(c);
	free(d);
}
END_TEST

/* ------------------------------------------------------------ errors */

START_TEST(error_alu_operands_differ)
{
	tg_uop *a = load(1, TG_FLOAT32), *b = load(2, TG_INT32);

	ck_assert_ptr_null(tg_ast_alu(k, TG_ADD, a, b, NULL));
	ck_assert_error("ast_alu: ADD operands float32 and int32 differ");
	ck_assert_int_eq(tg_ir_status(k), TG_EINVAL);
	ck_assert_int_eq(tg_last_status(), TG_EINVAL);
}
END_TEST

START_TEST(error_where_condition)
{
	tg_uop *a = load(1, TG_FLOAT32), *b = load(2, TG_FLOAT32);
	tg_uop *i = load(3, TG_INT32);
	tg_uop *c = tg_ast_alu(k, TG_CMPNE, a, b, NULL);

	ck_assert_ptr_null(tg_ast_alu(k, TG_WHERE, a, a, b));
	ck_assert_error("ast_alu: WHERE condition is float32, not bool");
	ck_assert_ptr_null(tg_ast_alu(k, TG_WHERE, c, a, i));
	ck_assert_error("ast_alu: WHERE operands float32 and int32 differ");
	ck_assert_ptr_nonnull(tg_ast_alu(k, TG_WHERE, c, a, b));
}
END_TEST

START_TEST(error_alu_op_and_arity)
{
	tg_uop *a = load(1, TG_FLOAT32), *b = load(2, TG_FLOAT32);

	ck_assert_ptr_null(tg_ast_alu(k, TG_LOAD, a, b, NULL));
	ck_assert_error("ast_alu: LOAD is not an ALU op");
	ck_assert_ptr_null(tg_ast_alu(k, TG_NEG, a, b, NULL));
	ck_assert_error("ast_alu: NEG takes 1 operand");
	ck_assert_ptr_null(tg_ast_alu(k, TG_ADD, a, b, a));
	ck_assert_error("ast_alu: ADD takes 2 operands");
	ck_assert_ptr_null(tg_ast_alu(k, TG_MOD, a, b, NULL));
	ck_assert_error("ast_alu: MOD needs int operands, not float32");
}
END_TEST

START_TEST(error_bitcast_size)
{
	tg_uop *a = load(1, TG_FLOAT32);

	ck_assert_ptr_null(tg_ast_bitcast(k, a, TG_FLOAT16));
	ck_assert_error("ast_bitcast: float32 and float16 differ in size");
	ck_assert_ptr_null(tg_ast_cast(k, a, (tg_dtype)TG_NDTYPES));
	ck_assert_error("ast_cast: bad dtype");
}
END_TEST

START_TEST(error_reduce)
{
	tg_uop *a = load(1, TG_FLOAT32);

	ck_assert_ptr_null(tg_ast_reduce(k, TG_MUL, a, 1));
	ck_assert_error("ast_reduce: MUL is not ADD or MAX");
	ck_assert_ptr_null(tg_ast_reduce(k, TG_ADD, a, 1u << 2));
	ck_assert_error("ast_reduce: axes 0x4 outside the 2 dims");
	ck_assert_ptr_null(tg_ast_reduce(k, TG_ADD, a, 0));
	ck_assert_error("ast_reduce: axes 0x0");
	ck_assert_ptr_nonnull(tg_ast_reduce(k, TG_MAX, a, 3));
}
END_TEST

START_TEST(error_store_and_sink)
{
	tg_sint sh[3] = { tg_si(4), tg_si(5), tg_si(1) };
	tg_uop *a = load(1, TG_FLOAT32), *s[2];

	ck_assert_ptr_null(tg_ast_store(k, 0, a,
	                                tg_st_from_shape(NULL, 3, sh)));
	ck_assert_error("ast_store: st has 3 dims, the value 2");
	ck_assert_ptr_null(tg_ast_store(k, -1, a, st2(4, 5)));
	ck_assert_error("ast_store: bad buffer index -1");
	ck_assert_ptr_null(tg_ast_load(k, -2, TG_FLOAT32, st2(4, 5)));
	ck_assert_error("ast_load: bad buffer index -2");
	s[0] = a;
	ck_assert_ptr_null(tg_ast_sink(k, s, 1));
	ck_assert_error("ast_sink: source 0 is not a STORE to buf0");
	s[0] = tg_ast_store(k, 1, a, st2(4, 5));
	ck_assert_ptr_null(tg_ast_sink(k, s, 1));
	ck_assert_error("ast_sink: source 0 is not a STORE to buf0");
	ck_assert_ptr_null(tg_ast_sink(k, s, 0));
	ck_assert_error("ast_sink: 0 stores");
	s[1] = s[0];
	s[0] = tg_ast_store(k, 0, a, st2(4, 5));
	ck_assert_ptr_null(tg_ast_alu(k, TG_NEG, s[0], NULL, NULL));
	ck_assert_error("ast_alu: operand is a STORE, not a value");
	a = tg_ast_sink(k, s, 2);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(tg_ast_reduce(k, TG_ADD, a, 1));
	ck_assert_error("ast_reduce: operand is a SINK, not a value");
	ck_assert_int_eq(a->op, TG_SINK);
}
END_TEST

START_TEST(first_error_sticks)
{
	tg_uop *a = load(1, TG_FLOAT32), *b = load(2, TG_INT32);

	ck_assert_ptr_null(tg_ast_alu(k, TG_ADD, a, b, NULL));
	tg_ir_clear_status(k);
	tg_ir_fail(k, TG_ENOMEM, "pretend an earlier OOM");
	ck_assert_ptr_null(tg_ast_reduce(k, TG_MUL, a, 1));
	ck_assert_int_eq(tg_ir_status(k), TG_ENOMEM);
	/* the new refusal is still reported */
	ck_assert_error("ast_reduce: MUL is not ADD or MAX");
}
END_TEST

START_TEST(null_source_propagates)
{
	tg_uop *a = load(1, TG_FLOAT32), *b = load(2, TG_INT32), *x;

	x = tg_ast_alu(k, TG_ADD, a, b, NULL);
	ck_assert_ptr_null(x);
	ck_assert_error("ADD operands");
	/* every builder passes the NULL on without a new message */
	x = tg_ast_alu(k, TG_NEG, x, NULL, NULL);
	x = tg_ast_alu(k, TG_MUL, a, x, NULL);
	x = tg_ast_alu(k, TG_WHERE, NULL, a, a);
	x = tg_ast_cast(k, x, TG_INT32);
	x = tg_ast_bitcast(k, x, TG_INT32);
	x = tg_ast_reduce(k, TG_ADD, x, 1);
	ck_assert_ptr_null(x);
	ck_assert_ptr_null(tg_ast_store(k, 0, x, st2(4, 5)));  /* st freed */
	ck_assert_ptr_null(tg_ast_sink(k, &x, 1));
	ck_assert_error("ast_alu: ADD operands float32 and int32 differ");
	ck_assert_int_eq(tg_ir_status(k), TG_EINVAL);
}
END_TEST

START_TEST(null_st_fails_the_kast)
{
	tg_clear_error();
	ck_assert_ptr_null(tg_ast_load(k, 1, TG_FLOAT32, NULL));
	ck_assert_int_eq(tg_ir_status(k), TG_EINVAL);
	ck_assert_ptr_null(tg_ast_store(k, 0, load(1, TG_FLOAT32), NULL));
}
END_TEST

START_TEST(kast_free_null)
{
	tg_ir_free(NULL);
}
END_TEST

#ifdef TL_INTERPOSED
/* Builds, walks and formats a reduce kernel; the kast's status or the
 * first failing call's. */
static int oom_run(void)
{
	tg_ir *kk = tg_ir_new();
	tg_sint shape[TG_MAX_DIMS];
	tg_uop **order, *sink;
	size_t n;
	char *s;
	int rc;

	if (!(k = kk))
		return TG_ENOMEM;
	sink = store1(tg_ast_reduce(k, TG_ADD, tg_ast_alu(k, TG_ADD,
	              load(1, TG_FLOAT32), load(2, TG_FLOAT32), NULL), 2),
	              4, 1);
	rc = tg_ir_status(k);
	if (!rc && !(order = tg_ast_toposort(sink, &n)))
		rc = TG_ENOMEM;
	else if (!rc)
		free(order);
	if (!rc && !(s = tg_ast_format(sink)))
		rc = TG_ENOMEM;
	else if (!rc)
		free(s);
	if (!rc)
		rc = tg_ast_full_shape(sink, &n, shape);
	tg_ir_free(kk);
	k = NULL;
	return rc;
}

START_TEST(every_allocation_can_fail)
{
	tg_ir_free(k);
	tl_fail_each(oom_run, 10);
}
END_TEST
#endif /* TL_INTERPOSED */

int main(void)
{
	Suite *s = suite_create("ast");
	TCase *tb = tcase_create("build");
	TCase *tw = tcase_create("walk");
	TCase *te = tcase_create("errors");

	tcase_add_checked_fixture(tb, setup, teardown);
	tcase_add_test(tb, elementwise_add_text);
	tcase_add_test(tb, reduce_kernel_text);
	tcase_add_test(tb, reduce_axes_list);
	tcase_add_test(tb, cmp_gives_bool_where_gives_value);
	tcase_add_test(tb, const_is_normalized);
	tcase_add_test(tb, full_shape_of_reduce);
	tcase_add_test(tb, full_shape_takes_broadcast_const);
	suite_add_tcase(s, tb);

	tcase_add_checked_fixture(tw, setup, teardown);
	tcase_add_test(tw, toposort_shared_node_once);
	tcase_add_test(tw, toposort_single_node);
	tcase_add_test(tw, format_ignores_creation_order);
	suite_add_tcase(s, tw);

	tcase_add_checked_fixture(te, setup, teardown);
	tcase_add_test(te, error_alu_operands_differ);
	tcase_add_test(te, error_where_condition);
	tcase_add_test(te, error_alu_op_and_arity);
	tcase_add_test(te, error_bitcast_size);
	tcase_add_test(te, error_reduce);
	tcase_add_test(te, error_store_and_sink);
	tcase_add_test(te, first_error_sticks);
	tcase_add_test(te, null_source_propagates);
	tcase_add_test(te, null_st_fails_the_kast);
	tcase_add_test(te, kast_free_null);
#ifdef TL_INTERPOSED
	tcase_add_test(te, every_allocation_can_fail);
#else
	fprintf(stderr, "test_ast: every_allocation_can_fail not run "
	        "under ThreadSanitizer (tests/failalloc.h)\n");
#endif
	suite_add_tcase(s, te);
	return tl_run(s);
}

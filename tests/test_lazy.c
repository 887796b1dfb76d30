/*
 * test_lazy.c - the lazy graph: tinygrad's construction-time folding,
 * views, the lazy cache, reduce splitting, contiguous children, copies,
 * and the error messages of bad graphs.  Results are checked by pointer
 * (the cache makes equal buffers one) and by constant value.
 */
#include "config.h"

#include "testlib.h"
#include "../libtgcore/lazy/lazy.h"

static tg_dev *dev;

static void setup(void)
{
	dev = tg_dev_get("CPU");
	ck_assert_ptr_nonnull(dev);
}

static void teardown(void)
{
	tg_shutdown();
}

static tg_lazy *buf2(tg_dtype dt, int64_t a, int64_t b)
{
	int64_t s[2] = { a, b };

	return tg_lazy_empty(dev, dt, 2, s);
}

static tg_lazy *cf(double v, int64_t a, int64_t b)
{
	int64_t s[2] = { a, b };
	tg_scalar x;

	x.f = v;
	return tg_lazy_const(dev, TG_FLOAT32, x, 2, s);
}

static double const_value(const tg_lazy *lb)
{
	tg_scalar v;

	ck_assert(tg_lazy_is_unmasked_const(lb, &v));
	return tg_scalar_to_double(v, lb->dtype);
}

START_TEST(consts_fold)
{
	tg_lazy *a = cf(2, 3, 4), *b = cf(3, 3, 4);
	tg_lazy *s = tg_lazy_alu(TG_ADD, a, b, NULL);
	tg_lazy *m = tg_lazy_alu(TG_MUL, s, b, NULL);
	tg_lazy *c = tg_lazy_alu(TG_CMPLT, a, b, NULL);

	ck_assert_double_eq(const_value(s), 5);
	ck_assert_double_eq(const_value(m), 15);
	ck_assert_int_eq(c->dtype, TG_BOOL);
	ck_assert_double_eq(const_value(c), 1);
	ck_assert_int_eq(tg_lazy_ndim(m), 2);
	ck_assert_int_eq(tg_lazy_shape(m)[1].c, 4);
	tg_lazy_unref(a), tg_lazy_unref(b), tg_lazy_unref(s);
	tg_lazy_unref(m), tg_lazy_unref(c);
}
END_TEST

/* Integer division by zero has tg.h's values, folded like any other;
 * what C leaves undefined without a documented value (a shift by the
 * width) stays a kernel's op. */
START_TEST(undefined_const_math_is_not_folded)
{
	int64_t s[1] = { 4 };
	tg_scalar one = { .i = 1 }, zero = { .i = 0 }, wide = { .i = 40 };
	tg_lazy *a = tg_lazy_const(dev, TG_INT32, one, 1, s);
	tg_lazy *z = tg_lazy_const(dev, TG_INT32, zero, 1, s);
	tg_lazy *w = tg_lazy_const(dev, TG_INT32, wide, 1, s);
	tg_lazy *d = tg_lazy_alu(TG_IDIV, a, z, NULL);
	tg_lazy *m = tg_lazy_alu(TG_MOD, a, z, NULL);
	tg_lazy *sh = tg_lazy_alu(TG_SHL, a, w, NULL);

	ck_assert_ptr_nonnull(d);
	ck_assert_double_eq(const_value(d), 0);
	ck_assert_double_eq(const_value(m), 1);
	ck_assert_ptr_nonnull(sh);
	ck_assert_int_eq(sh->kind, TG_LZ_ALU);
	tg_lazy_unref(a), tg_lazy_unref(z), tg_lazy_unref(w);
	tg_lazy_unref(d), tg_lazy_unref(m), tg_lazy_unref(sh);
}
END_TEST

START_TEST(identities_fold)
{
	tg_lazy *x = buf2(TG_FLOAT32, 3, 4), *zero = cf(0, 3, 4);
	tg_lazy *one = cf(1, 3, 4), *r;

	r = tg_lazy_alu(TG_ADD, x, zero, NULL);
	ck_assert_ptr_eq(r, x);
	tg_lazy_unref(r);
	r = tg_lazy_alu(TG_ADD, zero, x, NULL);
	ck_assert_ptr_eq(r, x);
	tg_lazy_unref(r);
	r = tg_lazy_alu(TG_MUL, one, x, NULL);
	ck_assert_ptr_eq(r, x);
	tg_lazy_unref(r);
	r = tg_lazy_alu(TG_MUL, x, zero, NULL);
	ck_assert_double_eq(const_value(r), 0);
	tg_lazy_unref(r);
	tg_lazy_unref(x), tg_lazy_unref(zero), tg_lazy_unref(one);
}
END_TEST

START_TEST(idiv_by_one_and_double_negation_fold)
{
	tg_lazy *x = buf2(TG_INT32, 2, 2), *n1, *n2, *d;
	int64_t s[2] = { 2, 2 };
	tg_scalar one = { .i = 1 };
	tg_lazy *c1 = tg_lazy_const(dev, TG_INT32, one, 2, s);

	d = tg_lazy_alu(TG_IDIV, x, c1, NULL);
	ck_assert_ptr_eq(d, x);
	n1 = tg_lazy_alu(TG_NEG, x, NULL, NULL);
	ck_assert_int_eq(n1->kind, TG_LZ_ALU);
	n2 = tg_lazy_alu(TG_NEG, n1, NULL, NULL);
	ck_assert_ptr_eq(n2, x);
	tg_lazy_unref(x), tg_lazy_unref(c1), tg_lazy_unref(d);
	tg_lazy_unref(n1), tg_lazy_unref(n2);
}
END_TEST

START_TEST(lazy_cache_shares_equal_buffers)
{
	tg_lazy *x = buf2(TG_FLOAT32, 3, 4), *y = buf2(TG_FLOAT32, 3, 4);
	tg_lazy *a = tg_lazy_alu(TG_ADD, x, y, NULL);
	tg_lazy *b = tg_lazy_alu(TG_ADD, x, y, NULL);
	tg_lazy *c = tg_lazy_alu(TG_ADD, y, x, NULL);
	uint32_t p[2] = { 1, 0 };
	tg_lazy *t1 = tg_lazy_permute(x, 2, p), *t2 = tg_lazy_permute(x, 2, p);

	ck_assert_ptr_eq(a, b);
	ck_assert_ptr_ne(a, c); /* operand order is kept */
	ck_assert_ptr_ne(x, y); /* memory is never shared */
	ck_assert_ptr_eq(t1, t2);
	ck_assert_ptr_eq(t1->base, x);
	tg_lazy_unref(x), tg_lazy_unref(y), tg_lazy_unref(a);
	tg_lazy_unref(b), tg_lazy_unref(c), tg_lazy_unref(t1);
	tg_lazy_unref(t2);
}
END_TEST

START_TEST(views_collapse_to_the_base)
{
	tg_lazy *x = buf2(TG_FLOAT32, 3, 4), *r, *back;
	int64_t flat[1] = { 12 }, s[2] = { 3, 4 };

	r = tg_lazy_reshape(x, 1, flat);
	ck_assert_int_eq(r->kind, TG_LZ_VIEW);
	ck_assert_ptr_eq(tg_lazy_base(r), x);
	back = tg_lazy_reshape(r, 2, s);
	ck_assert_ptr_eq(back, x);
	tg_lazy_unref(x), tg_lazy_unref(r), tg_lazy_unref(back);
}
END_TEST

START_TEST(empty_views_become_zero)
{
	tg_lazy *x = buf2(TG_FLOAT32, 3, 4), *sh, *z;
	int64_t pairs[4] = { 1, 1, 0, 4 }, s0[2] = { 0, 4 };

	sh = tg_lazy_shrink(x, 2, pairs);
	ck_assert_double_eq(const_value(sh), 0);
	ck_assert_int_eq(tg_lazy_shape(sh)[0].c, 0);
	z = tg_lazy_empty(dev, TG_FLOAT32, 2, s0);
	ck_assert_int_eq(tg_lazy_base(z)->kind, TG_LZ_CONST);
	tg_lazy_unref(x), tg_lazy_unref(sh), tg_lazy_unref(z);
}
END_TEST

START_TEST(reduce_folds_consts_and_trivial_axes)
{
	tg_lazy *ones = cf(1, 4, 5), *s, *m, *x, *r;
	tg_lazy *x1;

	s = tg_lazy_reduce(TG_ADD, ones, 2);
	ck_assert_double_eq(const_value(s), 5);
	ck_assert_int_eq(tg_lazy_shape(s)[0].c, 4);
	ck_assert_int_eq(tg_lazy_shape(s)[1].c, 1);
	m = tg_lazy_reduce(TG_MAX, ones, 3);
	ck_assert_double_eq(const_value(m), 1);
	x1 = buf2(TG_FLOAT32, 4, 1);
	r = tg_lazy_reduce(TG_ADD, x1, 2); /* a size-1 axis: nothing to do */
	ck_assert_ptr_eq(r, x1);
	tg_lazy_unref(r);
	x = buf2(TG_FLOAT32, 4, 0);
	r = tg_lazy_reduce(TG_MAX, x, 2); /* empty: the identity */
	ck_assert(isinf(const_value(r)) && const_value(r) < 0);
	tg_lazy_unref(ones), tg_lazy_unref(s), tg_lazy_unref(m);
	tg_lazy_unref(x), tg_lazy_unref(r), tg_lazy_unref(x1);
}
END_TEST

START_TEST(small_reduce_is_one_node)
{
	tg_lazy *x = buf2(TG_FLOAT32, 4, 5), *r = tg_lazy_reduce(TG_ADD, x, 2);

	ck_assert_int_eq(r->kind, TG_LZ_REDUCE);
	ck_assert_uint_eq(r->axes, 2);
	ck_assert_ptr_eq(r->src[0], x);
	tg_lazy_unref(x), tg_lazy_unref(r);
}
END_TEST

START_TEST(large_reduce_splits_in_two)
{
	int64_t n[1] = { 1 << 16 };
	tg_lazy *x = tg_lazy_empty(dev, TG_FLOAT32, 1, n);
	tg_lazy *r = tg_lazy_reduce(TG_ADD, x, 1), *b, *first;

	ck_assert_int_eq(tg_lazy_ndim(r), 1);
	ck_assert_int_eq(tg_lazy_shape(r)[0].c, 1);
	b = tg_lazy_base(r);
	ck_assert_int_eq(b->kind, TG_LZ_REDUCE);
	first = tg_lazy_base(b->src[0]);
	ck_assert_int_eq(first->kind, TG_LZ_REDUCE);
	/* the first stage keeps 256 partial sums */
	ck_assert_int_eq(tg_lazy_numel(first), 256);
	tg_lazy_unref(x), tg_lazy_unref(r);
}
END_TEST

/* The split threshold the tensor layer passes (from SPLIT_REDUCEOP and
 * REDUCEOP_SPLIT_THRESHOLD): 0 and a threshold above the reduce keep it
 * one node; a threshold under it splits a reduce the default leaves
 * whole. */
START_TEST(split_threshold_chooses_the_split)
{
	int64_t n[1] = { 1 << 16 }, m[1] = { 4096 };
	tg_lazy *x = tg_lazy_empty(dev, TG_FLOAT32, 1, n);
	tg_lazy *y = tg_lazy_empty(dev, TG_FLOAT32, 1, m), *r;

	r = tg_lazy_reduce_split(TG_ADD, x, 1, 0, 1);
	ck_assert_ptr_eq(tg_lazy_base(r)->src[0], x);
	tg_lazy_unref(r);
	r = tg_lazy_reduce_split(TG_ADD, x, 1, 65537, 1);
	ck_assert_ptr_eq(tg_lazy_base(r)->src[0], x);
	tg_lazy_unref(r);
	r = tg_lazy_reduce(TG_ADD, y, 1);  /* 4096 < 32768: whole */
	ck_assert_ptr_eq(tg_lazy_base(r)->src[0], y);
	tg_lazy_unref(r);
	r = tg_lazy_reduce_split(TG_ADD, y, 1, 1024, 1);
	ck_assert_int_eq(tg_lazy_base(tg_lazy_base(r)->src[0])->kind,
	                 TG_LZ_REDUCE);
	tg_lazy_unref(r);
	tg_lazy_unref(x), tg_lazy_unref(y);
}
END_TEST

START_TEST(casts_fold_and_narrow_before_views)
{
	tg_lazy *c = cf(2.75, 2, 2), *i, *x, *t, *n, *same;
	uint32_t p[2] = { 1, 0 };

	i = tg_lazy_cast(c, TG_INT32, 0);
	ck_assert_int_eq(i->dtype, TG_INT32);
	ck_assert_double_eq(const_value(i), 2);
	x = buf2(TG_FLOAT32, 2, 3);
	same = tg_lazy_cast(x, TG_FLOAT32, 0);
	ck_assert_ptr_eq(same, x);
	t = tg_lazy_permute(x, 2, p);
	n = tg_lazy_cast(t, TG_FLOAT16, 0);
	ck_assert_int_eq(n->kind, TG_LZ_VIEW);
	ck_assert_int_eq(tg_lazy_base(n)->kind, TG_LZ_CAST);
	tg_lazy_unref(c), tg_lazy_unref(i), tg_lazy_unref(x);
	tg_lazy_unref(same), tg_lazy_unref(t), tg_lazy_unref(n);
}
END_TEST

START_TEST(contiguous_marks_or_makes_and_children_are_reused)
{
	tg_lazy *x = buf2(TG_FLOAT32, 2, 3), *y = buf2(TG_FLOAT32, 2, 3);
	tg_lazy *a = tg_lazy_alu(TG_ADD, x, y, NULL), *t, *c, *same, *u;
	uint32_t p[2] = { 1, 0 };

	same = tg_lazy_contiguous(a);
	ck_assert_ptr_eq(same, a);
	ck_assert(a->forced_realize);
	t = tg_lazy_permute(a, 2, p);
	c = tg_lazy_contiguous(t);
	ck_assert_int_eq(c->kind, TG_LZ_CONTIGUOUS);
	ck_assert_ptr_eq(a->cchild, c);
	/* later uses of a read the contiguous copy through a view */
	u = tg_lazy_alu(TG_MUL, a, a, NULL);
	ck_assert_ptr_eq(tg_lazy_base(u->src[0]), c);
	tg_lazy_unref(u);
	tg_lazy_unref(c);
	ck_assert_ptr_null(a->cchild); /* the weak link went with c */
	tg_lazy_unref(x), tg_lazy_unref(y), tg_lazy_unref(a);
	tg_lazy_unref(t), tg_lazy_unref(same);
}
END_TEST

START_TEST(copies_fold)
{
	tg_lazy *x = buf2(TG_FLOAT32, 2, 3), *c = tg_lazy_copy(x, dev);
	tg_lazy *k = cf(4, 2, 3), *kc = tg_lazy_copy(k, dev);

	ck_assert_ptr_eq(c, x);
	ck_assert_ptr_eq(kc, k);
	tg_lazy_unref(x), tg_lazy_unref(c), tg_lazy_unref(k);
	tg_lazy_unref(kc);
}
END_TEST

START_TEST(bad_graphs_are_refused_with_messages)
{
	tg_lazy *a = buf2(TG_FLOAT32, 2, 3), *b = buf2(TG_FLOAT32, 3, 2);
	tg_lazy *i = buf2(TG_INT32, 2, 3), *bo = buf2(TG_BOOL, 2, 3);
	int64_t bad[1] = { 7 };

	ck_assert_ptr_null(tg_lazy_alu(TG_ADD, a, b, NULL));
	ck_assert_error("ADD: shapes (2,3) and (3,2) differ");
	ck_assert_ptr_null(tg_lazy_alu(TG_MUL, a, i, NULL));
	ck_assert_error("MUL: dtypes float32 and int32 differ");
	ck_assert_ptr_null(tg_lazy_alu(TG_WHERE, a, a, a));
	ck_assert_error("WHERE: condition is float32, not bool");
	ck_assert_ptr_null(tg_lazy_alu(TG_NEG, bo, NULL, NULL));
	ck_assert_error("NEG: not defined on bool");
	ck_assert_ptr_null(tg_lazy_alu(TG_XOR, a, a, NULL));
	ck_assert_error("XOR: not defined on float32");
	ck_assert_ptr_null(tg_lazy_alu(TG_LOAD, a, NULL, NULL));
	ck_assert_error("LOAD is not an ALU op");
	ck_assert_ptr_null(tg_lazy_cast(a, TG_FLOAT16, 1));
	ck_assert_error("bitcast: float32 (4 bytes) to float16 (2 bytes)");
	ck_assert_ptr_null(tg_lazy_reduce(TG_MUL, a, 1));
	ck_assert_error("reduce: op MUL");
	ck_assert_ptr_null(tg_lazy_reduce(TG_ADD, a, 4));
	ck_assert_error("reduce: axis mask 0x4 on 2 dims");
	ck_assert_ptr_null(tg_lazy_reshape(a, 1, bad));
	ck_assert_error("reshape");
	ck_assert_ptr_null(tg_lazy_alu(TG_ADD, NULL, a, NULL));
	tg_lazy_unref(a), tg_lazy_unref(b), tg_lazy_unref(i);
	tg_lazy_unref(bo);
}
END_TEST

START_TEST(deep_chain_frees_without_recursion)
{
	int64_t s[1] = { 4 };
	tg_lazy *x = tg_lazy_empty(dev, TG_FLOAT32, 1, s), *cur;
	tg_lazy *one = cf(2, 1, 1), *o;
	int i;

	o = tg_lazy_reshape(one, 1, (int64_t[]){ 1 });
	tg_lazy_unref(one);
	one = tg_lazy_expand(o, 1, s);
	tg_lazy_unref(o);
	cur = tg_lazy_ref(x);
	for (i = 0; i < 200000; i++) {
		tg_lazy *n = tg_lazy_alu(TG_MUL, cur, one, NULL);

		ck_assert_ptr_nonnull(n);
		tg_lazy_unref(cur);
		cur = n;
	}
	tg_lazy_unref(cur);
	tg_lazy_unref(one);
	tg_lazy_unref(x);
}
END_TEST

static Suite *lazy_suite(void)
{
	Suite *s = suite_create("lazy");
	TCase *t = tcase_create("lazy");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, consts_fold);
	tcase_add_test(t, undefined_const_math_is_not_folded);
	tcase_add_test(t, identities_fold);
	tcase_add_test(t, idiv_by_one_and_double_negation_fold);
	tcase_add_test(t, lazy_cache_shares_equal_buffers);
	tcase_add_test(t, views_collapse_to_the_base);
	tcase_add_test(t, empty_views_become_zero);
	tcase_add_test(t, reduce_folds_consts_and_trivial_axes);
	tcase_add_test(t, small_reduce_is_one_node);
	tcase_add_test(t, large_reduce_splits_in_two);
	tcase_add_test(t, split_threshold_chooses_the_split);
	tcase_add_test(t, casts_fold_and_narrow_before_views);
	tcase_add_test(t, contiguous_marks_or_makes_and_children_are_reused);
	tcase_add_test(t, copies_fold);
	tcase_add_test(t, bad_graphs_are_refused_with_messages);
	tcase_add_test(t, deep_chain_frees_without_recursion);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(lazy_suite());
}

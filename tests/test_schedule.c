/*
 * test_schedule.c - the scheduler's fusion and realization rules,
 * pinned by kernel counts the way tinygrad's test_schedule pins them
 * (the expected counts are what tinygrad's mid-2024 scheduler gives for
 * the same lazy graphs), plus the shape of the ASTs it hands over.
 */
#include "config.h"

#include "testlib.h"
#include "../libtgcore/engine/engine.h"

static tg_dev *dev;
/* every lazy buffer a test makes, dropped in teardown */
static tg_lazy *made[256];
static size_t nmade;

static tg_lazy *keep(tg_lazy *lb)
{
	ck_assert_ptr_nonnull(lb);
	ck_assert_uint_lt(nmade, TG_ARRAY_LEN(made));
	return made[nmade++] = lb;
}

static void setup(void)
{
	dev = tg_dev_get("CPU");
	ck_assert_ptr_nonnull(dev);
	nmade = 0;
}

static void teardown(void)
{
	while (nmade)
		tg_lazy_unref(made[--nmade]);
	tg_shutdown();
}

static tg_lazy *in2(int64_t a, int64_t b)
{
	int64_t s[2] = { a, b };

	return keep(tg_lazy_empty(dev, TG_FLOAT32, 2, s));
}

static tg_lazy *k2(double v, int64_t a, int64_t b)
{
	int64_t s[2] = { a, b };
	tg_scalar x = { .f = v };

	return keep(tg_lazy_const(dev, TG_FLOAT32, x, 2, s));
}

static tg_lazy *alu(unsigned op, tg_lazy *a, tg_lazy *b)
{
	return keep(tg_lazy_alu(op, a, b, NULL));
}

static tg_lazy *un(unsigned op, tg_lazy *a)
{
	return keep(tg_lazy_alu(op, a, NULL, NULL));
}

static tg_lazy *red(unsigned op, tg_lazy *a, uint32_t axes)
{
	return keep(tg_lazy_reduce(op, a, axes));
}

static tg_lazy *expand2(tg_lazy *a, int64_t x, int64_t y)
{
	int64_t s[2] = { x, y };

	return keep(tg_lazy_expand(a, 2, s));
}

/* Schedules outs and returns the number of kernels (copies included). */
static size_t nkernels(tg_lazy *const *outs, size_t n, tg_schedule *keep_s)
{
	tg_schedule s;
	tg_settings set;
	size_t k;

	ck_assert_int_eq(tg_settings_read(&set), 0);
	ck_assert_msg(tg_schedule_create(outs, n, &set, &s) == 0, "%s",
	              tg_last_error());
	k = s.items.n;
	if (keep_s)
		*keep_s = s;
	else
		tg_schedule_free(&s);
	return k;
}

static size_t count1(tg_lazy *out)
{
	return nkernels(&out, 1, NULL);
}

START_TEST(elementwise_chain_is_one_kernel)
{
	tg_lazy *a = in2(4, 4), *b = in2(4, 4), *c = in2(4, 4);
	tg_lazy *x = un(TG_EXP2, alu(TG_MUL, alu(TG_ADD, a, b), c));

	ck_assert_uint_eq(count1(un(TG_SQRT, x)), 1);
}
END_TEST

START_TEST(sum_of_product_is_one_kernel)
{
	tg_lazy *a = in2(16, 16), *b = in2(16, 16);

	ck_assert_uint_eq(count1(red(TG_ADD, alu(TG_MUL, a, b), 3)), 1);
}
END_TEST

START_TEST(reduce_then_elementwise_fuses)
{
	tg_lazy *a = in2(8, 8), *bias = in2(8, 1);
	tg_lazy *s = red(TG_ADD, a, 2);
	tg_lazy *o = un(TG_SQRT, alu(TG_ADD, alu(TG_MUL, s, k2(2, 8, 1)),
	                               bias));

	ck_assert_uint_eq(count1(o), 1);
}
END_TEST

START_TEST(expanded_reduce_is_realized)
{
	/* x - x.max(1): the max is read through an expand: 2 kernels */
	tg_lazy *x = in2(8, 8);
	tg_lazy *m = expand2(red(TG_MAX, x, 2), 8, 8);

	ck_assert_uint_eq(count1(alu(TG_ADD, x, un(TG_NEG, m))), 2);
}
END_TEST

START_TEST(softmax_is_three_kernels)
{
	tg_lazy *x = in2(8, 16);
	tg_lazy *m = expand2(red(TG_MAX, x, 2), 8, 16);
	tg_lazy *e = un(TG_EXP2, alu(TG_ADD, x, un(TG_NEG, m)));
	tg_lazy *s = expand2(red(TG_ADD, e, 2), 8, 16);

	ck_assert_uint_eq(count1(alu(TG_MUL, e, un(TG_RECIP, s))), 3);
}
END_TEST

START_TEST(safe_pad_fuses_unsafe_pad_realizes)
{
	tg_lazy *x = in2(4, 4);
	int64_t p[4] = { 1, 1, 1, 1 };
	tg_lazy *safe = keep(tg_lazy_pad(alu(TG_ADD, x, k2(1, 4, 4)), 2, p));
	tg_lazy *unsafe = keep(tg_lazy_pad(un(TG_EXP2, x), 2, p));

	ck_assert_uint_eq(count1(un(TG_SQRT, safe)), 1);
	ck_assert_uint_eq(count1(un(TG_SQRT, unsafe)), 2);
}
END_TEST

START_TEST(outputs_sharing_a_reduce_are_one_kernel)
{
	tg_lazy *x = in2(8, 8);
	tg_lazy *s = red(TG_ADD, x, 2);
	tg_lazy *outs[2] = { un(TG_SQRT, s), alu(TG_MUL, s, k2(2, 8, 1)) };
	tg_schedule sch;

	ck_assert_uint_eq(nkernels(outs, 2, &sch), 1);
	ck_assert_uint_eq(sch.items.v[0].nouts, 2);
	ck_assert_uint_eq(sch.items.v[0].nbufs, 3);
	tg_schedule_free(&sch);
}
END_TEST

START_TEST(permuted_contiguous_is_one_kernel)
{
	tg_lazy *x = in2(4, 6);
	uint32_t p[2] = { 1, 0 };
	tg_lazy *t = keep(tg_lazy_permute(x, 2, p));

	ck_assert_uint_eq(count1(keep(tg_lazy_contiguous(t))), 1);
}
END_TEST

START_TEST(large_reduce_is_two_kernels)
{
	int64_t n[1] = { 1 << 16 };
	tg_lazy *x = keep(tg_lazy_empty(dev, TG_FLOAT32, 1, n));

	ck_assert_uint_eq(count1(red(TG_ADD, x, 1)), 2);
}
END_TEST

START_TEST(matmul_bias_relu_is_one_kernel)
{
	/* (a.reshape(8,1,4) * b.T.reshape(1,5,4)).sum(2) + bias, relu */
	int64_t sa[3] = { 8, 1, 4 }, sb[3] = { 1, 5, 4 }, full[3] = { 8, 5, 4 };
	uint32_t t[2] = { 1, 0 };
	tg_lazy *a = in2(8, 4), *b = in2(4, 5), *bias = in2(1, 5);
	tg_lazy *ar = keep(tg_lazy_expand(keep(tg_lazy_reshape(a, 3, sa)), 3,
	                                  full));
	tg_lazy *bt = keep(tg_lazy_permute(b, 2, t));
	tg_lazy *br = keep(tg_lazy_expand(keep(tg_lazy_reshape(bt, 3, sb)), 3,
	                                  full));
	int64_t s2[2] = { 8, 5 };
	tg_lazy *mm = keep(tg_lazy_reshape(red(TG_ADD, alu(TG_MUL, ar, br), 4),
	                                   2, s2));
	tg_lazy *y = alu(TG_ADD, mm, expand2(bias, 8, 5));
	tg_lazy *relu = alu(TG_MAX, y, k2(0, 8, 5));

	ck_assert_uint_eq(count1(relu), 1);
}
END_TEST

START_TEST(two_reduces_in_a_row_are_two_kernels)
{
	/* (x - x.mean(1)).square().sum(1): layernorm's variance */
	tg_lazy *x = in2(8, 8);
	tg_lazy *mean = alu(TG_MUL, red(TG_ADD, x, 2), k2(0.125, 8, 1));
	tg_lazy *d = alu(TG_ADD, x, un(TG_NEG, expand2(mean, 8, 8)));

	ck_assert_uint_eq(count1(red(TG_ADD, alu(TG_MUL, d, d), 2)), 2);
}
END_TEST

START_TEST(realized_inputs_are_loads_and_consts_are_inline)
{
	tg_lazy *a = in2(3, 5);
	tg_lazy *o = alu(TG_ADD, a, k2(1.5, 3, 5));
	tg_schedule sch;
	char *text;

	ck_assert_uint_eq(nkernels(&o, 1, &sch), 1);
	text = tg_ast_format(sch.items.v[0].ast);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "LOAD float32 buf1") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "CONST float32") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "STORE float32 buf0") != NULL, "%s", text);
	free(text);
	ck_assert_ptr_eq(sch.items.v[0].bufs[1], a->buf);
	tg_schedule_free(&sch);
}
END_TEST

START_TEST(kernels_run_after_their_inputs)
{
	tg_lazy *x = in2(8, 8);
	tg_lazy *m = expand2(red(TG_MAX, x, 2), 8, 8);
	tg_lazy *o = alu(TG_ADD, x, un(TG_NEG, m));
	tg_schedule sch;

	ck_assert_uint_eq(nkernels(&o, 1, &sch), 2);
	/* the max kernel writes what the second reads */
	ck_assert_ptr_eq(sch.items.v[0].bufs[0], sch.items.v[1].bufs[2]);
	tg_schedule_free(&sch);
}
END_TEST

START_TEST(nothing_to_do_for_realized_or_const_outputs)
{
	tg_lazy *outs[2] = { in2(2, 2), k2(3, 2, 2) };

	ck_assert_uint_eq(nkernels(outs, 2, NULL), 0);
}
END_TEST

static Suite *schedule_suite(void)
{
	Suite *s = suite_create("schedule");
	TCase *t = tcase_create("schedule");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, elementwise_chain_is_one_kernel);
	tcase_add_test(t, sum_of_product_is_one_kernel);
	tcase_add_test(t, reduce_then_elementwise_fuses);
	tcase_add_test(t, expanded_reduce_is_realized);
	tcase_add_test(t, softmax_is_three_kernels);
	tcase_add_test(t, safe_pad_fuses_unsafe_pad_realizes);
	tcase_add_test(t, outputs_sharing_a_reduce_are_one_kernel);
	tcase_add_test(t, permuted_contiguous_is_one_kernel);
	tcase_add_test(t, large_reduce_is_two_kernels);
	tcase_add_test(t, matmul_bias_relu_is_one_kernel);
	tcase_add_test(t, two_reduces_in_a_row_are_two_kernels);
	tcase_add_test(t, realized_inputs_are_loads_and_consts_are_inline);
	tcase_add_test(t, kernels_run_after_their_inputs);
	tcase_add_test(t, nothing_to_do_for_realized_or_const_outputs);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(schedule_suite());
}

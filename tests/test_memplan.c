/*
 * test_memplan.c - the memory planner (engine/memplan.c): intermediates
 * only the schedule reads share buffers once their last reader has run,
 * while anything a caller can still reach (a held tensor, an unrealized
 * expression that will read an intermediate later, an output) keeps its
 * own.  Counts are of distinct buffers in the schedule's items; values
 * are checked against plain C.
 */
#include "config.h"

#include <math.h>

#include "testlib.h"
#include "../libtgcore/tensor/tensor.h"
#include "../libtgcore/engine/engine.h"

#define N 64

static float xs[N];

static void setup(void)
{
	int i;

	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	for (i = 0; i < N; i++)
		xs[i] = (float)(i % 9) - 4;
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	tg_shutdown();
}

static tg_tensor *input(void)
{
	int64_t n = N;
	tg_tensor *x = tg_tensor_new(NULL, TG_FLOAT32, 1, &n, xs);

	ck_assert_int_eq(tg_realize(x), 0);
	return x;
}

/* y1 = 2x, y2 = y1 + 1, y3 = 3 y2, y4 = y3 - 1, each its own kernel. */
static void chain(tg_tensor *x, tg_tensor **y)
{
	y[0] = tg_contiguous(tg_mul_s(x, 2));
	y[1] = tg_contiguous(tg_add_s(y[0], 1));
	y[2] = tg_contiguous(tg_mul_s(y[1], 3));
	y[3] = tg_contiguous(tg_sub_s(y[2], 1));
}

/* Distinct buffers the schedule for outs uses; runs it. */
static size_t buffers_used(tg_tensor **outs, size_t n, size_t nitems)
{
	tg_lazy *l[8];
	tg_buffer *seen[64];
	tg_schedule s;
	tg_settings set;
	size_t i, j, k, nseen = 0;

	for (i = 0; i < n; i++)
		l[i] = outs[i]->lazy;
	ck_assert_int_eq(tg_settings_read(&set), 0);
	ck_assert_int_eq(tg_schedule_create(l, n, &set, &s), 0);
	ck_assert_uint_eq(s.items.n, nitems);
	for (i = 0; i < s.items.n; i++)
		for (j = 0; j < s.items.v[i].nbufs; j++) {
			tg_buffer *b = s.items.v[i].bufs[j];

			for (k = 0; k < nseen && seen[k] != b; k++)
				;
			if (k == nseen)
				seen[nseen++] = b;
		}
	ck_assert_int_eq(tg_schedule_run(&s, &set), 0);
	tg_schedule_free(&s);
	return nseen;
}

static void expect(tg_tensor *t, double (*f)(double))
{
	float got[N];
	int i;

	ck_assert_int_eq(tg_tensor_data(t, got, sizeof got), 0);
	for (i = 0; i < N; i++)
		ck_assert_float_eq(got[i], (float)f(xs[i]));
}

static double f1(double x) { return 2 * x; }
static double f2(double x) { return 2 * x + 1; }
static double f3(double x) { return 3 * (2 * x + 1); }
static double f4(double x) { return 3 * (2 * x + 1) - 1; }
static double f5(double x) { return 2 * x + 2; }

START_TEST(intermediates_share_buffers)
{
	tg_tensor *x = input(), *y[4], *out;

	tg_scope_begin();
	chain(x, y);
	out = tg_keep(y[3]);
	tg_scope_end();   /* y1..y3 are now reachable only through y4 */
	/* x, y1, y2, then y3 in y1's buffer, y4 in its own: 4, not 5 */
	ck_assert_uint_eq(buffers_used(&out, 1, 4), 4);
	expect(out, f4);
}
END_TEST

/* Another thread may build the same expression as an intermediate
 * after the plan gave that intermediate shared memory and before the
 * schedule ran (here: between create and run, on one thread).  It must
 * get a node of its own, not the planned one whose buffer y3
 * overwrites. */
START_TEST(planned_intermediates_cannot_be_found_again)
{
	tg_tensor *x = input(), *y[4], *out, *again;
	tg_schedule s;
	tg_settings set;
	tg_lazy *l;

	tg_scope_begin();
	chain(x, y);
	out = tg_keep(y[3]);
	tg_scope_end();
	l = out->lazy;
	ck_assert_int_eq(tg_settings_read(&set), 0);
	ck_assert_int_eq(tg_schedule_create(&l, 1, &set, &s), 0);
	again = tg_contiguous(tg_mul_s(x, 2));   /* y1's expression */
	ck_assert_ptr_nonnull(again);
	ck_assert_ptr_ne(tg_lazy_base(again->lazy), s.items.v[0].outs[0]);
	ck_assert_int_eq(tg_schedule_run(&s, &set), 0);
	tg_schedule_free(&s);
	expect(out, f4);
	expect(again, f1);
}
END_TEST

START_TEST(held_intermediates_keep_their_buffers)
{
	tg_tensor *x = input(), *y[4];

	chain(x, y);      /* the scope holds every y */
	ck_assert_uint_eq(buffers_used(&y[3], 1, 4), 5);
	expect(y[3], f4);
	expect(y[0], f1);
	expect(y[1], f2);
	expect(y[2], f3);
}
END_TEST

/* z = y2 + 1 is held but not realized: it will read y2 later, so y2's
 * buffer must survive the schedule of y4. */
START_TEST(later_readers_keep_their_inputs)
{
	tg_tensor *x = input(), *y[4], *out, *z;

	tg_scope_begin();
	chain(x, y);
	out = tg_keep(y[3]);
	z = tg_keep(tg_add_s(y[1], 1));
	tg_scope_end();
	/* y3 still takes y1's buffer; y2's stays for z */
	ck_assert_uint_eq(buffers_used(&out, 1, 4), 4);
	expect(out, f4);
	expect(z, f5);
}
END_TEST

START_TEST(outputs_never_share)
{
	tg_tensor *x = input(), *y[4], *outs[2];

	tg_scope_begin();
	chain(x, y);
	outs[0] = tg_keep(y[2]);
	outs[1] = tg_keep(y[3]);
	tg_scope_end();
	/* y1 is free after y2, but only y3 and y4 follow: both outputs */
	ck_assert_uint_eq(buffers_used(outs, 2, 4), 5);
	expect(outs[0], f3);
	expect(outs[1], f4);
}
END_TEST

/* Only a buffer of the same device, dtype and size is reused. */
START_TEST(sizes_and_dtypes_must_match)
{
	tg_tensor *x = input(), *a, *b, *c, *d;

	tg_scope_begin();
	a = tg_contiguous(tg_mul_s(x, 2));
	b = tg_contiguous(tg_cast(tg_add_s(a, 1), TG_INT32));
	c = tg_contiguous(tg_mul_s(b, 3));   /* int32: a's buffer is float */
	d = tg_keep(tg_contiguous(tg_sub_s(c, 1)));
	tg_scope_end();
	/* x, a, b, c (not a's float buffer), d (b's int32 buffer is free
	 * after c, but d is the output) */
	ck_assert_uint_eq(buffers_used(&d, 1, 4), 5);
	{
		int32_t got[N];
		int i;

		ck_assert_int_eq(tg_tensor_data(d, got, sizeof got), 0);
		for (i = 0; i < N; i++)
			ck_assert_int_eq(got[i], ((int)(2 * xs[i] + 1)) * 3 - 1);
	}
}
END_TEST

/* A longer chain settles on two alternating buffers. */
START_TEST(long_chain_alternates_two_buffers)
{
	tg_tensor *x = input(), *t, *out;
	double want[N];
	float got[N];
	int i, k;

	tg_scope_begin();
	t = x;
	for (k = 0; k < 10; k++)
		t = tg_contiguous(tg_add_s(tg_mul_s(t, 0.5), k));
	out = tg_keep(t);
	tg_scope_end();
	/* x, two alternating intermediates, the output */
	ck_assert_uint_eq(buffers_used(&out, 1, 10), 4);
	ck_assert_int_eq(tg_tensor_data(out, got, sizeof got), 0);
	for (i = 0; i < N; i++) {
		want[i] = xs[i];
		for (k = 0; k < 10; k++)
			want[i] = want[i] * 0.5 + k;
		ck_assert_float_eq_tol(got[i], want[i], 1e-5);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memplan");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, intermediates_share_buffers);
	tcase_add_test(tc, planned_intermediates_cannot_be_found_again);
	tcase_add_test(tc, held_intermediates_keep_their_buffers);
	tcase_add_test(tc, later_readers_keep_their_inputs);
	tcase_add_test(tc, outputs_never_share);
	tcase_add_test(tc, sizes_and_dtypes_must_match);
	tcase_add_test(tc, long_chain_alternates_two_buffers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * test_dist.c - tg/dist.h across processes: run by tests/dist.sh under
 * `mpirun -np 2` (and alone, as a job of one).  Every rank runs every
 * test in the same order, in this process (Check's fork mode is off:
 * MPI does not survive fork), and each result is checked against C
 * loops in double precision over what every rank contributed.
 *
 *   test_dist            the suite
 *   test_dist --stuck    rank 1 does not join; rank 0 must time out
 *   test_dist --die      rank 1 is killed before an all-reduce
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>

#include <tg/dist.h>

#include "testlib.h"

static int R, S;  /* rank and size */

/* Rank r's value i of a test tensor. */
static double val(int r, size_t i)
{
	return (double)((int)(i % 7) - 3) * 0.25 + r * 1.5 + (double)i / 64;
}

static tg_tensor *tensor_of(tg_dtype dt, int64_t n, int r)
{
	double *d = malloc((size_t)n * sizeof *d);
	tg_tensor *t, *k, *c;

	for (int64_t i = 0; i < n; i++)
		d[i] = val(r, (size_t)i);
	t = tg_tensor_new(NULL, TG_FLOAT64, 1, &n, d);
	k = tg_cast(t, dt);
	c = tg_contiguous(k);
	free(d);
	tg_tensor_unref(t);
	tg_tensor_unref(k);
	ck_assert_int_eq(tg_realize(c), 0);
	return c;
}

static void values(tg_tensor *t, double *out, int64_t n)
{
	tg_tensor *d = tg_cast(t, TG_FLOAT64);

	ck_assert_int_eq(tg_tensor_data(d, out, (size_t)n * sizeof *out), 0);
	tg_tensor_unref(d);
}

/* What op over every rank gives for value i (in dtype dt). */
static double want(tg_dist_op op, tg_dtype dt, size_t i)
{
	double acc = op == TG_DIST_MIN ? INFINITY :
	             op == TG_DIST_MAX ? -INFINITY : 0;

	for (int r = 0; r < S; r++) {
		double v = val(r, i);

		if (dt == TG_INT32)
			v = (double)(int32_t)v;  /* the cast truncates */
		acc = op == TG_DIST_MIN ? fmin(acc, v) :
		      op == TG_DIST_MAX ? fmax(acc, v) : acc + v;
	}
	return op == TG_DIST_MEAN ? acc / S : acc;
}

static void check_reduce(tg_dtype dt, tg_dist_op op, int64_t n)
{
	tg_tensor *t = tensor_of(dt, n, R);
	double *got = malloc((size_t)n * sizeof *got);

	ck_assert_msg(tg_dist_all_reduce(&t, 1, op) == 0, "%s",
	              tg_last_error());
	values(t, got, n);
	for (int64_t i = 0; i < n; i++)
		ck_assert_msg(fabs(got[i] - want(op, dt, (size_t)i)) <= 1e-5 *
		              (1 + fabs(want(op, dt, (size_t)i))),
		              "%s op %d item %lld: %g vs %g", tg_dtype_name(dt),
		              (int)op, (long long)i, got[i],
		              want(op, dt, (size_t)i));
	free(got);
	tg_tensor_unref(t);
}

START_TEST(rank_and_size)
{
	ck_assert_int_eq(tg_dist_size(), S);
	ck_assert_int_ge(R, 0);
	ck_assert_int_lt(R, S);
	/* one machine: the local rank is the rank */
	ck_assert_int_eq(tg_dist_local_rank(), R);
	ck_assert_int_eq(tg_dist_barrier(), 0);
}
END_TEST

START_TEST(all_reduce_ops_and_dtypes)
{
	check_reduce(TG_FLOAT32, TG_DIST_SUM, 1000);
	check_reduce(TG_FLOAT32, TG_DIST_MEAN, 33);
	check_reduce(TG_FLOAT64, TG_DIST_MEAN, 17);
	check_reduce(TG_FLOAT32, TG_DIST_MIN, 9);
	check_reduce(TG_INT32, TG_DIST_MAX, 12);
	check_reduce(TG_INT32, TG_DIST_SUM, 12);
	check_reduce(TG_FLOAT32, TG_DIST_SUM, 1);
}
END_TEST

/* Many tensors of mixed dtypes in 1 MiB chunks: a 1.2 MB tensor spans
 * two, small ones share one, a dtype change starts a new one. */
START_TEST(all_reduce_buckets)
{
	int64_t n[5] = { 3, 300000, 5, 7, 4 };
	tg_dtype dt[5] = { TG_FLOAT32, TG_FLOAT32, TG_FLOAT32, TG_INT32,
	                   TG_FLOAT32 };
	tg_tensor *t[5];
	uint64_t bytes = tg_dist_comm_bytes();
	double sec = tg_dist_comm_seconds();

	tg_config_set("dist.bucket_mb", "1");
	for (int k = 0; k < 5; k++)
		t[k] = tensor_of(dt[k], n[k], R);
	ck_assert_msg(tg_dist_all_reduce(t, 5, TG_DIST_SUM) == 0, "%s",
	              tg_last_error());
	for (int k = 0; k < 5; k++) {
		double *got = malloc((size_t)n[k] * sizeof *got);

		values(t[k], got, n[k]);
		for (int64_t i = 0; i < n[k]; i++)
			ck_assert_double_eq_tol(got[i], want(TG_DIST_SUM, dt[k],
			                        (size_t)i), 1e-3);
		free(got);
		tg_tensor_unref(t[k]);
	}
	ck_assert_uint_eq(tg_dist_comm_bytes() - bytes,
	                  (3 + 300000 + 5 + 7 + 4) * 4);
	ck_assert(tg_dist_comm_seconds() > sec);
	tg_config_set("dist.bucket_mb", NULL);
}
END_TEST

/* Rank root's values everywhere, of any dtype (bytes), root not 0. */
START_TEST(broadcast_from_a_root)
{
	int root = S - 1;
	tg_tensor *t[2] = { tensor_of(TG_FLOAT32, 50, R),
	                    tensor_of(TG_FLOAT16, 6, R) };
	double got[50];

	ck_assert_msg(tg_dist_broadcast(t, 2, root) == 0, "%s",
	              tg_last_error());
	values(t[0], got, 50);
	for (int i = 0; i < 50; i++)
		ck_assert_double_eq_tol(got[i], val(root, (size_t)i), 1e-5);
	values(t[1], got, 6);
	for (int i = 0; i < 6; i++)
		ck_assert_double_eq_tol(got[i], val(root, (size_t)i), 1e-2);
	tg_tensor_unref(t[0]);
	tg_tensor_unref(t[1]);
}
END_TEST

/* A device other than the default: tensors on CPU:1 go through it. */
START_TEST(tensors_on_another_device)
{
	tg_dev *d = tg_dev_get("CPU:1");
	float h[4] = { 1, 2, 3, (float)R };
	int64_t n = 4;
	tg_tensor *t;
	float got[4];

	ck_assert_msg(d != NULL, "%s", tg_last_error());
	t = tg_tensor_new(d, TG_FLOAT32, 1, &n, h);
	ck_assert_int_eq(tg_dist_all_reduce(&t, 1, TG_DIST_MAX), 0);
	ck_assert_int_eq(tg_tensor_data(t, got, sizeof got), 0);
	ck_assert_float_eq(got[0], 1);
	ck_assert_float_eq(got[3], (float)(S - 1));
	ck_assert_ptr_eq(tg_tensor_dev(t), d);
	tg_tensor_unref(t);
}
END_TEST

/* Tensors that are not memory of their own take the result as an
 * assign would: a constant becomes memory, a slice writes through to
 * the tensor it slices (the rest of which stays). */
START_TEST(constants_and_views)
{
	tg_tensor *c = tg_full(NULL, TG_FLOAT32, 1, (int64_t[]){ 3 }, R + 1.0);
	tg_tensor *base = tensor_of(TG_FLOAT32, 6, R);
	tg_tensor *view = tg_shrink(base, 1, (int64_t[]){ 2, 5 });
	tg_tensor *ts[2] = { c, view };
	double got[6], sum = S * (S + 1) / 2.0;

	ck_assert_msg(tg_dist_all_reduce(ts, 2, TG_DIST_SUM) == 0, "%s",
	              tg_last_error());
	values(c, got, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_double_eq_tol(got[i], sum, 1e-6);
	values(base, got, 6);
	for (int i = 0; i < 6; i++)
		ck_assert_double_eq_tol(got[i], i >= 2 && i < 5 ?
		                        want(TG_DIST_SUM, TG_FLOAT32, (size_t)i) :
		                        val(R, (size_t)i), 1e-5);
	tg_tensor_unref(c), tg_tensor_unref(view), tg_tensor_unref(base);
}
END_TEST

/* Bad arguments fail on every rank with the reason, and the job goes
 * on (the next call works). */
START_TEST(bad_arguments)
{
	tg_tensor *f = tensor_of(TG_FLOAT32, 4, R);
	tg_tensor *i32 = tensor_of(TG_INT32, 4, R);
	tg_tensor *h = tensor_of(TG_FLOAT16, 4, R);
	tg_tensor *k = tg_cast(f, TG_BOOL), *b = tg_contiguous(k);
	tg_tensor *none = NULL;

	ck_assert_int_eq(tg_dist_all_reduce(NULL, 2, TG_DIST_SUM), TG_EINVAL);
	ck_assert_error("dist all-reduce: NULL tensor list with n = 2");
	ck_assert_int_eq(tg_dist_all_reduce(&none, 1, TG_DIST_SUM), TG_EINVAL);
	ck_assert_error("dist all-reduce: tensor 0 is NULL");
	ck_assert_int_eq(tg_dist_all_reduce(&f, 1, (tg_dist_op)9), TG_EINVAL);
	ck_assert_error("bad op 9");
	ck_assert_int_eq(tg_dist_all_reduce(&i32, 1, TG_DIST_MEAN), TG_EINVAL);
	ck_assert_error("mean of tensor 0 (int32): mean is for float "
	                "tensors; use TG_DIST_SUM");
	ck_assert_int_eq(tg_dist_all_reduce(&h, 1, TG_DIST_SUM),
	                 TG_EUNSUPPORTED);
	ck_assert_error("tensor 0 is float16, which MPI cannot combine: "
	                "tg_cast it to float32 first");
	ck_assert_int_eq(tg_dist_all_reduce(&b, 1, TG_DIST_SUM), TG_EINVAL);
	ck_assert_error("sum of tensor 0 (bool)");
	ck_assert_int_eq(tg_dist_broadcast(&f, 1, S), TG_EINVAL);
	ck_assert_error("dist broadcast: root");
	ck_assert_error("is not a rank (the job has");
	ck_assert_int_eq(tg_dist_broadcast(&f, 1, -1), TG_EINVAL);
	ck_assert_error("dist broadcast: root -1 is not a rank");
	ck_assert_int_eq(tg_dist_all_reduce(&f, 1, TG_DIST_SUM), 0);
	tg_tensor_unref(f), tg_tensor_unref(i32), tg_tensor_unref(h);
	tg_tensor_unref(b), tg_tensor_unref(k);
}
END_TEST

/* Settings that decide how the job behaves are checked, not guessed. */
START_TEST(bad_settings)
{
	tg_tensor *f = tensor_of(TG_FLOAT32, 4, R);

	tg_config_set("dist.timeout", "soon");
	ck_assert_int_eq(tg_dist_barrier(), TG_ECONFIG);
	ck_assert_error("dist barrier: config: tg_config_set(): [dist] "
	                "timeout: expected seconds, more than 0, got 'soon'");
	tg_config_set("dist.timeout", NULL);
	tg_config_set("dist.bucket_mb", "0");
	ck_assert_int_eq(tg_dist_all_reduce(&f, 1, TG_DIST_SUM), TG_ECONFIG);
	ck_assert_error("config: tg_config_set(): [dist] bucket_mb: expected "
	                "megabytes from 1 to 1024, got '0'");
	/* once read as tg_config_int's default */
	tg_config_set("dist.bucket_mb", "lots");
	ck_assert_int_eq(tg_dist_all_reduce(&f, 1, TG_DIST_SUM), TG_ECONFIG);
	ck_assert_error("got 'lots'");
	tg_config_set("dist.bucket_mb", NULL);
	ck_assert_int_eq(tg_dist_barrier(), 0);
	tg_tensor_unref(f);
}
END_TEST

/* Ranks that pass different tensors all fail with a message, at once;
 * a rank with a bad argument makes the others fail too, instead of
 * their waiting for it. */
START_TEST(ranks_that_disagree)
{
	tg_tensor *t, *v;

	if (S < 2)
		return;
	t = tensor_of(TG_FLOAT32, R == 0 ? 4 : 5, R);
	ck_assert_int_eq(tg_dist_all_reduce(&t, 1, TG_DIST_SUM), TG_EINVAL);
	ck_assert_error("dist all-reduce: the ranks' calls differ");
	ck_assert_error(R == 0 ? "passed 1 tensor, the first float32 (4,)"
	                       : "passed 1 tensor, the first float32 (5,)");
	v = R == 1 ? NULL : tensor_of(TG_FLOAT32, 3, R);
	ck_assert_int_ne(tg_dist_all_reduce(&v, 1, TG_DIST_SUM), 0);
	ck_assert_error(R == 1 ? "dist all-reduce: tensor 0 is NULL"
	                       : "another rank could not get its tensors "
	                         "ready");
	ck_assert_int_eq(tg_dist_barrier(), 0);
	tg_tensor_unref(t), tg_tensor_unref(v);
}
END_TEST

/* Outside the suite (no ck_assert there): 8 floats. */
static tg_tensor *eight(void)
{
	static const float h[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	int64_t n = 8;

	return tg_tensor_new(NULL, TG_FLOAT32, 1, &n, h);
}

/* rank 1 never joins: rank 0 gives up after TG_DIST_TIMEOUT. */
static int stuck(void)
{
	tg_tensor *t = eight();
	int rc;

	if (R == 1) {
		sleep(60);
		return 0;
	}
	rc = tg_dist_all_reduce(&t, 1, TG_DIST_SUM);
	printf("rank 0: all-reduce: %s: %s\n", tg_status_name(rc),
	       tg_last_error());
	rc = tg_dist_barrier();
	printf("rank 0: barrier: %s: %s\n", tg_status_name(rc),
	       tg_last_error());
	rc = tg_dist_finalize();
	printf("rank 0: finalize: %s: %s\n", tg_status_name(rc),
	       tg_last_error());
	fflush(stdout);
	tg_tensor_unref(t);
	return 3;
}

/* rank 1 dies; rank 0 waits in an all-reduce until mpirun stops it. */
static int die(void)
{
	tg_tensor *t = eight();

	if (R == 1)
		raise(SIGKILL);
	tg_dist_all_reduce(&t, 1, TG_DIST_SUM);
	printf("rank 0: all-reduce returned: %s\n", tg_last_error());
	return 3;
}

int main(int argc, char **argv)
{
	Suite *s = suite_create("dist");
	TCase *tc = tcase_create("dist");
	SRunner *sr;
	int failed;

	/* before init: a job of one, and collectives say what is missing */
	if (tg_dist_rank() != 0 || tg_dist_size() != 1 ||
	    tg_dist_barrier() != TG_EINVAL ||
	    !strstr(tg_last_error(), "dist barrier: call tg_dist_init first")) {
		fprintf(stderr, "before init: %s\n", tg_last_error());
		return 1;
	}
	if (tg_dist_init(&argc, &argv)) {
		fprintf(stderr, "init: %s\n", tg_last_error());
		return 1;
	}
	R = tg_dist_rank(), S = tg_dist_size();
	if (argc > 1 && !strcmp(argv[1], "--stuck"))
		return stuck();
	if (argc > 1 && !strcmp(argv[1], "--die"))
		return die();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rank_and_size);
	tcase_add_test(tc, all_reduce_ops_and_dtypes);
	tcase_add_test(tc, all_reduce_buckets);
	tcase_add_test(tc, broadcast_from_a_root);
	tcase_add_test(tc, tensors_on_another_device);
	tcase_add_test(tc, constants_and_views);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, bad_settings);
	tcase_add_test(tc, ranks_that_disagree);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tg_shutdown();
	if (tg_dist_finalize()) {
		fprintf(stderr, "finalize: %s\n", tg_last_error());
		return 1;
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * test_threads_shared.c - threads that share lazy nodes: one lazy
 * graph, built by the main thread and not yet computed, realized from
 * every thread at once; and graphs of each thread's own that share
 * their constants through the lazy cache.  Values are checked against
 * C loops.
 *
 * It found the lazy layer's races before realizes were serialized
 * (engine/realize.c's realize_lock) and the fields the scheduler and
 * planner read unlocked became atomic: ThreadSanitizer reported them,
 * and the plain build sometimes read a buffer another thread's schedule
 * had made but not filled.
 */
#include "config.h"

#include "threadtest.h"

/* max(x - 1, 0) * x for x of seed s: one elementwise kernel. */
static int relu_check(job *j, int64_t n, int s)
{
	double want[256];
	tg_tensor *x;

	if (n > 256)
		return -1;
	for (int64_t i = 0; i < n; i++)
		want[i] = fmax(val(i, s) - 1, 0) * val(i, s);
	tg_scope_begin();
	x = input(1, n, s);
	x = tg_mul(tg_relu(tg_sub_s(x, 1)), x);
	x = tg_reshape(x, 1, (int64_t[1]){ n });
	check(j, x, want, (size_t)n, "relu");
	tg_scope_end();
	return j->err[0] ? -1 : 0;
}

/* One lazy tensor, built by the main thread and not yet computed, read
 * by every thread at once; then each derives its own tensors from it,
 * and all derive relu(shared), which the lazy cache makes one node. */
static void *shared_graph(void *arg)
{
	job *j = arg;
	double want[6], relu[6];

	pthread_barrier_wait(j->start);
	check(j, j->shared, j->want, 6, "shared");
	for (int i = 0; i < 6; i++) {
		want[i] = j->want[i] * (j->id + 1);
		relu[i] = fmax(j->want[i], 0);
	}
	tg_scope_begin();
	check(j, tg_mul_s(j->shared, j->id + 1), want, 6, "derived");
	check(j, tg_relu(j->shared), relu, 6, "same derived");
	tg_scope_end();
	return NULL;
}

START_TEST(one_shared_graph_realized_from_every_thread)
{
	double want[6];
	tg_tensor *y;

	tg_scope_begin();  /* the temporaries go, y stays */
	y = tg_keep(fma_rows(6, 33, 5));
	tg_scope_end();
	ck_assert_msg(y != NULL, "%s", tg_last_error());
	fma_rows_ref(6, 33, 5, want);
	run_threads(shared_graph, y, want);
	tg_tensor_unref(y);
}
END_TEST

/* Each thread its own input, and relu(x - 1) * x on it: the constants
 * (1 and relu's 0) of equal shape are one node for all threads. */
static void *shared_consts(void *arg)
{
	job *j = arg;

	pthread_barrier_wait(j->start);
	for (int r = 0; r < 4 && !j->err[0]; r++)
		relu_check(j, 40, j->id * 10 + r);
	return NULL;
}

START_TEST(own_graphs_sharing_constants)
{
	run_threads(shared_consts, NULL, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("threads_shared");
	TCase *tc = tcase_create("threads_shared");

	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, tt_setup, tt_teardown);
	tcase_add_test(tc, one_shared_graph_realized_from_every_thread);
	tcase_add_test(tc, own_graphs_sharing_constants);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

/*
 * dp.c - data-parallel training for fashion_mnist --dist.
 *
 * A step is two captured halves (tg_jit): the gradients of this rank's
 * share of the batch, then the optimizer's update from them.  Between
 * the two the gradients (and the loss) are averaged over the ranks in
 * place with one tg_dist_all_reduce, which is what makes every rank's
 * update, and so every rank's weights, the same.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dp.h"

#ifdef TG_HAVE_DIST
#include <tg/dist.h>

struct dp {
	trainer *t;
	tg_tensor *const *st;
	size_t nst;
	tg_jit *grad, *update;
	tg_tensor **out;    /* a step's outputs: loss, then the gradients */
	double step_comm;   /* seconds in the steps' all-reduces */
	size_t steps;
};

int dp_init(int *argc, char ***argv, int *rank, int *size)
{
	if (tg_dist_init(argc, argv))
		return -1;
	*rank = tg_dist_rank();
	*size = tg_dist_size();
	return 0;
}

/* The parameters that get gradients: the optimizer turned
 * requires_grad on for them (the statistics stay off). */
static int find_params(trainer *t, tg_tensor *const *st, size_t n)
{
	size_t i;

	if (!(t->params = malloc((n ? n : 1) * sizeof *t->params)))
		return tg_set_error(TG_ENOMEM, "dp: out of memory");
	for (i = 0, t->nparams = 0; i < n; i++)
		if (tg_requires_grad(st[i]) == 1)
			t->params[t->nparams++] = st[i];
	return 0;
}

dp *dp_new(trainer *t, tg_tensor *const *st, size_t n)
{
	dp *d = calloc(1, sizeof *d);

	if (!d) {
		tg_set_error(TG_ENOMEM, "dp: out of memory");
		return NULL;
	}
	d->t = t, d->st = st, d->nst = n;
	if (tg_dist_broadcast(st, n, 0) || find_params(t, st, n) ||
	    (!(d->out = calloc(1 + t->nparams, sizeof *d->out)) &&
	     tg_set_error(TG_ENOMEM, "dp: out of memory")) ||
	    !(d->grad = tg_jit_new(model_grad_step, t)) ||
	    !(d->update = tg_jit_new(model_update_step, t))) {
		dp_free(d);
		return NULL;
	}
	return d;
}

int dp_step(dp *d, tg_tensor *x, tg_tensor *y, double *loss)
{
	size_t n = 1 + d->t->nparams;
	tg_tensor *in[2] = { x, y };
	double c0;
	int rc;

	/* the outputs land in the caller's scope */
	if (tg_jit_call(d->grad, in, 2, d->out, n))
		return -1;
	c0 = tg_dist_comm_seconds();
	rc = tg_dist_all_reduce(d->out, n, TG_DIST_MEAN);
	d->step_comm += tg_dist_comm_seconds() - c0;
	d->steps++;
	if (rc || tg_jit_call(d->update, d->out + 1, n - 1, NULL, 0) ||
	    tg_tensor_item(d->out[0], loss))
		return -1;
	return 0;
}

int dp_sync_stats(dp *d)
{
	tg_tensor **s = malloc((d->nst ? d->nst : 1) * sizeof *s);
	size_t i, k = 0;
	int rc;

	if (!s)
		return tg_set_error(TG_ENOMEM, "dp: out of memory");
	for (i = 0; i < d->nst; i++)
		if (tg_requires_grad(d->st[i]) != 1 &&
		    tg_dtype_is_float(tg_tensor_dtype(d->st[i])))
			s[k++] = d->st[i];
	rc = tg_dist_all_reduce(s, k, TG_DIST_MEAN);
	free(s);
	return rc ? -1 : 0;
}

int dp_report(dp *d, double train_time, size_t images)
{
	int rank = tg_dist_rank(), size = tg_dist_size(), r;
	float *share = calloc((size_t)size, sizeof *share);
	int64_t n = size;
	tg_tensor *t;
	int rc = -1;

	if (!share)
		return tg_set_error(TG_ENOMEM, "dp: out of memory");
	share[rank] = (float)(d->step_comm / train_time);
	/* every rank's share to everyone: a sum of one-hot vectors */
	if ((t = tg_tensor_new(NULL, TG_FLOAT32, 1, &n, share)) &&
	    !tg_dist_all_reduce(&t, 1, TG_DIST_SUM) &&
	    !tg_tensor_data(t, share, (size_t)size * sizeof *share)) {
		printf("job: %d ranks, %.0f images/s; time communicating:",
		       size, (double)images / train_time);
		for (r = 0; r < size; r++)
			printf(" rank %d %.1f%%", r, 100 * share[r]);
		printf("; all-reduce %.2f ms per step on rank 0\n",
		       1e3 * d->step_comm / (double)(d->steps ? d->steps : 1));
		rc = 0;
	}
	tg_tensor_unref(t);
	free(share);
	return rc;
}

void dp_free(dp *d)
{
	if (!d)
		return;
	tg_jit_free(d->grad);
	tg_jit_free(d->update);
	free(d->out);
	free(d->t->params);
	d->t->params = NULL;
	free(d);
}

int dp_finish(void)
{
	return tg_dist_finalize() ? -1 : 0;
}

#else /* no MPI */

static int no_mpi(void)
{
	return tg_set_error(TG_EUNSUPPORTED, "--dist: this build has no MPI "
	                    "(install libopenmpi-dev and configure "
	                    "--with-mpi)");
}

int dp_init(int *argc, char ***argv, int *rank, int *size)
{
	(void)argc, (void)argv;
	*rank = 0, *size = 1;
	return no_mpi();
}

dp *dp_new(trainer *t, tg_tensor *const *st, size_t n)
{
	(void)t, (void)st, (void)n;
	no_mpi();
	return NULL;
}

int dp_step(dp *d, tg_tensor *x, tg_tensor *y, double *loss)
{
	(void)d, (void)x, (void)y, (void)loss;
	return no_mpi();
}

int dp_sync_stats(dp *d)
{
	(void)d;
	return no_mpi();
}

int dp_report(dp *d, double train_time, size_t images)
{
	(void)d, (void)train_time, (void)images;
	return no_mpi();
}

void dp_free(dp *d)
{
	(void)d;
}

int dp_finish(void)
{
	return 0;
}

#endif

/*
 * tests/bench/bench_jit.c - bench_tensor's JIT rows: the cost of a
 * replay per kernel against running the same step eagerly, for one
 * tiny kernel, a chain of 32 tiny kernels, and one training step of the
 * Fashion-MNIST model of examples/fashion_mnist at batch 128.  Every
 * replayed result is checked against the eager one.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "../../examples/fashion_mnist/model.h"

#define TINY 16
#define CHAIN 32
#define BATCH 128

static tg_dev *dev;

static int fail(const char *what)
{
	fflush(stdout);
	fprintf(stderr, "bench_tensor: jit: %s: %s\n", what, tg_last_error());
	return -1;
}

static tg_tensor *tiny_input(float base)
{
	float v[TINY];
	int64_t n = TINY;
	tg_tensor *t;

	for (int i = 0; i < TINY; i++)
		v[i] = base + (float)i;
	t = tg_tensor_new(dev, TG_FLOAT32, 1, &n, v);
	return t && !tg_realize(t) ? t : NULL;
}

/* x + 1, one kernel. */
static int one_step(void *ctx, tg_tensor *const *in, size_t nin,
                    tg_tensor **out, size_t nout)
{
	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_add_s(in[0], 1);
	return 0;
}

/* CHAIN dependent kernels: y = contiguous(y * 1.0001 + 1), 32 times. */
static int chain_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	tg_tensor *y = in[0];

	(void)ctx, (void)nin, (void)nout;
	for (int k = 0; k < CHAIN; k++)
		y = tg_contiguous(tg_add_s(tg_mul_s(y, 1.0001), 1));
	out[0] = y;
	return y ? 0 : tg_last_status();
}

/* Seconds per call of fn through jit (or eagerly when jit is NULL),
 * after warm-up calls; the last output's values go to last[]. */
static double time_calls(tg_jit *jit, tg_jit_fn fn, int iters, float *last)
{
	tg_tensor *x = tiny_input(0.5f), *out = NULL;
	double t0 = 0;
	int i, rc = 0;

	if (!x)
		return fail("input");
	for (i = -3; i < iters && !rc; i++) {
		if (i == 0)
			t0 = bench_now();
		tg_scope_begin();
		if (jit)
			rc = tg_jit_call(jit, &x, 1, &out, 1);
		else if (!(rc = fn(NULL, &x, 1, &out, 1)))
			rc = tg_realize(out);
		if (!rc)
			rc = tg_dev_synchronize(dev);
		if (!rc && i == iters - 1)
			rc = tg_tensor_data(out, last, TINY * sizeof *last);
		tg_scope_end();
	}
	tg_tensor_unref(x);
	return rc ? fail("step") : (bench_now() - t0) / iters;
}

static int same(const float *a, const float *b, const char *what)
{
	if (!memcmp(a, b, TINY * sizeof *a))
		return 0;
	fprintf(stderr, "bench_tensor: jit: %s: the replay's values differ "
	        "from the eager run's\n", what);
	return -1;
}

static int bench_tiny(int iters, struct jit_figures *f)
{
	float want[TINY], got[TINY];
	tg_jit *j1 = tg_jit_new(one_step, NULL);
	tg_jit *j32 = tg_jit_new(chain_step, NULL);
	double e, r1, r32;
	int rc = -1;

	if (!j1 || !j32)
		goto out;
	if ((e = time_calls(NULL, chain_step, iters / 8, want)) < 0 ||
	    (r32 = time_calls(j32, chain_step, iters, got)) < 0 ||
	    same(want, got, "32 kernels") ||
	    (r1 = time_calls(j1, one_step, iters, got)) < 0 ||
	    (time_calls(NULL, one_step, 3, want) < 0) ||
	    same(want, got, "1 kernel"))
		goto out;
	f->eager_chain = e / CHAIN * 1e6;
	f->replay_chain = r32 / CHAIN * 1e6;
	f->replay_one = r1 * 1e6;
	rc = 0;
out:
	tg_jit_free(j1);
	tg_jit_free(j32);
	return rc;
}

/* ---------------------------------------------- a Fashion-MNIST step */

/* The example's model and its trainer (whose m points at model). */
typedef struct bench_model {
	model model;
	trainer t;
	tg_state *st;
	tg_tensor **params;
} bench_model;

static void bench_model_free(bench_model *t)
{
	tg_optim_free(t->t.opt);
	free(t->params);
	tg_state_free(t->st);
	model_free(&t->model);
}

/* The example's model and optimizer, from seed 1 (so two are equal). */
static int bench_model_init(bench_model *t)
{
	size_t i, n;

	memset(t, 0, sizeof *t);
	t->t.m = &t->model;
	tg_manual_seed(1);
	if (model_init(&t->model, dev, 1) || !(t->st = model_state(&t->model)))
		return fail("model");
	n = tg_state_count(t->st);
	if (!(t->params = malloc(n * sizeof *t->params)))
		return fail("model");
	for (i = 0; i < n; i++)
		t->params[i] = tg_state_tensor(t->st, i);
	if (!(t->t.opt = tg_optim_adam(t->params, n, 1e-3, 0.9, 0.999, 1e-8)))
		return fail("adam");
	return 0;
}

/* A batch of BATCH images and labels made from step number s. */
static int batch(int s, tg_tensor **in)
{
	static float x[BATCH * 28 * 28];
	static int32_t y[BATCH];
	int64_t sx[4] = { BATCH, 1, 28, 28 }, sy = BATCH;

	for (size_t i = 0; i < BATCH * 28 * 28; i++)
		x[i] = (float)((i * 2654435761u + (size_t)s * 97) % 255) / 127.5f
		       - 1.0f;
	for (int i = 0; i < BATCH; i++)
		y[i] = (i * 7 + s) % CLASSES;
	in[0] = tg_tensor_new(dev, TG_FLOAT32, 4, sx, x);
	in[1] = tg_tensor_new(dev, TG_INT32, 1, &sy, y);
	return in[0] && in[1] ? 0 : fail("batch");
}

/* Runs `steps` training steps (through jit when not NULL), timing those
 * after the first `warm`; losses go to loss[]. */
static double train(bench_model *t, tg_jit *jit, int warm, int steps,
                    float *loss)
{
	double t0 = 0;
	int s, rc = 0;

	tg_set_training(1);
	for (s = 0; s < steps && !rc; s++) {
		tg_tensor *in[2], *out;
		double v;

		if (s == warm)
			t0 = bench_now();
		tg_scope_begin();
		if (!(rc = batch(s, in))) {
			rc = jit ? tg_jit_call(jit, in, 2, &out, 1)
			         : model_train_step(&t->t, in, 2, &out, 1);
			if (!rc)
				rc = tg_tensor_item(out, &v);
			loss[s] = (float)v;
		}
		tg_scope_end();
	}
	tg_set_training(0);
	return rc ? fail("training step") : (bench_now() - t0) / (steps - warm);
}

static int bench_step(int quick, struct jit_figures *f)
{
	int steps = quick ? 4 : 8;
	float le[8], lj[8];
	bench_model a = { 0 }, b = { 0 };
	tg_jit *jit = NULL;
	double te = -1, tj = -1;

	if (!bench_model_init(&a) && (te = train(&a, NULL, 2, steps, le)) >= 0 &&
	    !bench_model_init(&b) && (jit = tg_jit_new(model_train_step, &b.t)))
		tj = train(&b, jit, 2, steps, lj);
	tg_jit_free(jit);
	bench_model_free(&a);
	bench_model_free(&b);
	if (te < 0 || tj < 0)
		return -1;
	if (memcmp(le, lj, (size_t)steps * sizeof *le)) {
		fprintf(stderr, "bench_tensor: jit: the replayed training "
		        "losses differ from the eager ones\n");
		return -1;
	}
	f->step_eager = te * 1e3;
	f->step_jit = tj * 1e3;
	return 0;
}

int bench_jit(tg_dev *d, int quick, struct jit_figures *f)
{
	dev = d;
	*f = (struct jit_figures){ -1, -1, -1, -1, -1 };
	if (bench_tiny(quick ? 400 : 4000, f) || bench_step(quick, f))
		return -1;
	return 0;
}

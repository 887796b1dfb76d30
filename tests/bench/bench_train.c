/*
 * bench_train.c - training speed: tinygrad's beautiful_mnist (the
 * model of examples/fashion_mnist at --width, 8*width and 16*width
 * channels) with Adam, one JIT-compiled step per batch, on the default
 * device (or each --device, or with --all every device the plugins
 * offer: OpenCL and Vulkan too), in images per second and as a share
 * of the host's FMA peak, which the benchmark measures itself in the
 * same run (a loop of independent vector FMAs on every core, in C; on
 * a GPU the share is of the host's peak, for scale only).
 *
 * The model's work is counted from its layers: per image, the
 * convolutions' and the linear layer's multiply-adds (2 flops each),
 * times 3 for the forward pass, the input gradients and the weight
 * gradients (batchnorm, pooling and Adam are small next to them and
 * left out).  At width 4 that is about 79 MFLOP per image.
 *
 *   bench_train [--quick] [--width N] [--batch N] [--steps N]
 *               [--device NAME]... [--all]
 *
 * Defaults: width 4 (32/64 channels), batch 512, 10 timed steps after
 * 3 warm-up steps (the first compiles; its time is printed apart).
 * --quick: batch 128 and 5 timed steps.  The inputs are synthetic (the
 * speed does not depend on the data); the loss is checked to be finite.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tg/tg.h>

#include "bench.h"
#include "../../examples/fashion_mnist/model.h"

static tg_dev *dev;

static int fail(const char *what)
{
	fprintf(stderr, "bench_train: %s: %s\n", what, tg_last_error());
	return -1;
}

/* ------------------------------------------------------------ FMA peak */

#define PEAK_ITERS 20000000L

typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));

/* 12 independent accumulators of 16 lanes: enough in flight to fill
 * two FMA pipes of 4-cycle latency.  Returns the flops done. */
static volatile float peak_one = 1.0f, peak_tiny = 1e-7f;

/* x, y read from volatiles: a constant 1 would fold the multiply.  The
 * accumulators are spelled out so that they live in registers. */
#define PEAK_STEP(a) a = a * x + y
#define PEAK_BODY(V, LANES)                                             \
	V x = (V){ 0 } + peak_one, y = (V){ 0 } + peak_tiny;              \
	V a0 = x, a1 = x + y, a2 = x + 2 * y, a3 = x + 3 * y;             \
	V a4 = a0 + 4 * y, a5 = a1 + 4 * y, a6 = a2 + 4 * y;              \
	V a7 = a3 + 4 * y, a8 = a0 + 8 * y, a9 = a1 + 8 * y;              \
	V a10 = a2 + 8 * y, a11 = a3 + 8 * y;                             \
	for (long it = 0; it < n; it++) {                                 \
		PEAK_STEP(a0); PEAK_STEP(a1); PEAK_STEP(a2);              \
		PEAK_STEP(a3); PEAK_STEP(a4); PEAK_STEP(a5);              \
		PEAK_STEP(a6); PEAK_STEP(a7); PEAK_STEP(a8);              \
		PEAK_STEP(a9); PEAK_STEP(a10); PEAK_STEP(a11);            \
	}                                                                 \
	a0 += a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;     \
	*sink = a0[0];                                                    \
	return 2.0 * 12 * (LANES) * (double)n;

__attribute__((target("avx512f,fma"), optimize("fp-contract=fast")))
static double fma512(long n, float *sink)
{
	PEAK_BODY(v16, 16)
}

__attribute__((target("avx2,fma"), optimize("fp-contract=fast")))
static double fma256(long n, float *sink)
{
	PEAK_BODY(v8, 8)
}

struct peak_job {
	double flops;
	float sink;
};

static void *peak_thread(void *arg)
{
	struct peak_job *j = arg;

#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx512f"))
		j->flops = fma512(PEAK_ITERS, &j->sink);
	else if (__builtin_cpu_supports("avx2") &&
	         __builtin_cpu_supports("fma"))
		j->flops = fma256(PEAK_ITERS, &j->sink);
	else
#endif
		j->flops = fma256(PEAK_ITERS / 4, &j->sink);
	return NULL;
}

/* GFLOP/s of FMAs on every online core at once: the best of 3. */
static double fma_peak(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = n > 0 && n <= 256 ? (size_t)n : 1;
	pthread_t *tid = calloc(nt, sizeof *tid);
	struct peak_job *jobs = calloc(nt, sizeof *jobs);
	double best = 0;

	if (!tid || !jobs)
		goto out;
	for (int r = 0; r < 3; r++) {
		double t0 = bench_now(), flops = 0;
		size_t started = 0;
		for (size_t i = 0; i < nt; i++)
			if (!pthread_create(&tid[i], NULL, peak_thread, &jobs[i]))
				started = i + 1;
			else
				break;
		for (size_t i = 0; i < started; i++) {
			pthread_join(tid[i], NULL);
			flops += jobs[i].flops;
		}
		double g = flops / (bench_now() - t0) / 1e9;
		if (g > best)
			best = g;
	}
out:
	free(tid);
	free(jobs);
	return best;
}

/* --------------------------------------------------------------- model */

/* Flops per image of the training step: 3x the forward pass's
 * convolutions and linear layer at this width. */
static double model_flops(int width)
{
	double a = 8.0 * width, b = 16.0 * width, f = 0;

	f += 2 * a * 1 * 25 * 24 * 24;   /* conv 5x5, 1 -> a, 24x24 out */
	f += 2 * a * a * 25 * 20 * 20;   /* conv 5x5, a -> a, 20x20 */
	f += 2 * b * a * 9 * 8 * 8;      /* conv 3x3, a -> b, 8x8 (pooled) */
	f += 2 * b * b * 9 * 6 * 6;      /* conv 3x3, b -> b, 6x6 */
	f += 2 * b * 9 * CLASSES;        /* linear */
	return 3 * f;
}

static int make_batch(int s, int bs, float *x, int32_t *y, tg_tensor **in)
{
	int64_t sx[4] = { bs, 1, 28, 28 }, sy = bs;

	for (size_t i = 0; i < (size_t)bs * 28 * 28; i++)
		x[i] = (float)((i * 2654435761u + (size_t)s * 97) % 255) / 127.5f
		       - 1.0f;
	for (int i = 0; i < bs; i++)
		y[i] = (i * 7 + s) % CLASSES;
	in[0] = tg_tensor_new(dev, TG_FLOAT32, 4, sx, x);
	in[1] = tg_tensor_new(dev, TG_INT32, 1, &sy, y);
	return in[0] && in[1] ? 0 : fail("batch");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_train [--quick] [--width N] [--batch N] "
	        "[--steps N] [--device NAME]... [--all]\n"
	        "Trains beautiful_mnist (8*N and 16*N channels, Adam) with "
	        "a JIT step and\nprints images/s and the share of the "
	        "machine's FMA peak.  --all: on every device\nthe plugins "
	        "offer.\n");
}

struct run {
	int width, bs, steps, warm;
	double first, per, loss;  /* s, s per step, last loss */
};

/* Trains r->warm + r->steps steps on the device named `name`; the
 * figures into r.  0, or -1 with the error printed. */
static int train_on(const char *name, struct run *r)
{
	model m;
	trainer t = { .m = &m };
	tg_state *st = NULL;
	tg_tensor **params = NULL;
	tg_jit *jit = NULL;
	float *x = NULL;
	int32_t *y = NULL;
	double t0 = 0;
	int rc = -1;

	memset(&m, 0, sizeof m);
	if (!(dev = tg_dev_get(name)))
		return fail("device");
	tg_manual_seed(1);
	if (model_init(&m, dev, r->width) || !(st = model_state(&m)))
		goto out_fail;
	size_t np = tg_state_count(st);
	if (!(params = malloc(np * sizeof *params)))
		goto out_fail;
	for (size_t i = 0; i < np; i++)
		params[i] = tg_state_tensor(st, i);
	if (!(t.opt = tg_optim_adam(params, np, 1e-3, 0.9, 0.999, 1e-8)) ||
	    !(jit = tg_jit_new(model_train_step, &t)))
		goto out_fail;
	x = malloc((size_t)r->bs * 28 * 28 * sizeof *x);
	y = malloc((size_t)r->bs * sizeof *y);
	if (!x || !y)
		goto out_fail;
	printf("device %s: %s\n", tg_dev_name(dev), tg_dev_description(dev));
	printf("beautiful_mnist width %d (%d/%d channels), batch %d, Adam\n",
	       r->width, 8 * r->width, 16 * r->width, r->bs);
	fflush(stdout);
	tg_set_training(1);
	for (int s = 0; s < r->warm + r->steps; s++) {
		tg_tensor *in[2], *out;
		double ts = bench_now();
		if (s == r->warm)
			t0 = ts;
		tg_scope_begin();
		int bad = make_batch(s, r->bs, x, y, in) ||
		          tg_jit_call(jit, in, 2, &out, 1) ||
		          tg_tensor_item(out, &r->loss);
		tg_scope_end();
		if (bad)
			goto out_fail;
		if (s == 0)
			r->first = bench_now() - ts;
	}
	r->per = (bench_now() - t0) / r->steps;
	rc = 0;
	if (!isfinite(r->loss)) {
		fprintf(stderr, "bench_train: the loss is %g on %s\n", r->loss,
		        name ? name : "the default device");
		rc = -1;
	}
	goto out;
out_fail:
	fail("training");
out:
	tg_set_training(0);
	tg_jit_free(jit);
	tg_optim_free(t.opt);
	free(params);
	tg_state_free(st);
	model_free(&m);
	free(x);
	free(y);
	return rc;
}

static void report(const struct run *r, double peak)
{
	double ips = r->bs / r->per;
	double gflops = ips * model_flops(r->width) / 1e9;

	printf("first step (compiles): %.2f s\n", r->first);
	printf("step: %.1f ms, %.0f images/s, loss %.4f\n", r->per * 1e3, ips,
	       r->loss);
	printf("model: %.1f MFLOP/image, %.1f GFLOP/s\n",
	       model_flops(r->width) / 1e6, gflops);
	printf("FMA peak of the host (measured, %ld threads): %.0f GFLOP/s; "
	       "share %.1f%%\n\n", sysconf(_SC_NPROCESSORS_ONLN), peak,
	       peak > 0 ? 100 * gflops / peak : 0);
	fflush(stdout);
}

#define MAX_DEVS 16

int main(int argc, char **argv)
{
	struct run r = { .width = 4, .bs = 512, .steps = 10, .warm = 3 };
	char names[MAX_DEVS][32];
	size_t nd = 0;
	int quick = 0, all = 0, rc = 1;
	double peak;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--all"))
			all = 1;
		else if (!strcmp(argv[i], "--width") && i + 1 < argc)
			r.width = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			r.bs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			r.steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--device") && i + 1 < argc &&
		         nd < MAX_DEVS)
			snprintf(names[nd++], sizeof names[0], "%s", argv[++i]);
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (quick) {
		r.bs = 128;
		r.steps = 5;
	}
	if (r.width < 1 || r.bs < 1 || r.steps < 1) {
		usage(stderr);
		return 2;
	}
	if (tg_init()) {
		fail("init");
		goto out;
	}
	if (all)
		nd = bench_all_devices(names, MAX_DEVS);
	peak = fma_peak();
	rc = 0;
	for (size_t d = 0; d < (nd ? nd : 1); d++) {
		/* a device that fails (a buffer over its limits) is reported
		 * and the others still run; the exit status says so */
		if (train_on(nd ? names[d] : NULL, &r)) {
			rc = 1;
			printf("\n");
			continue;
		}
		report(&r, peak);
	}
out:
	tg_shutdown();
	return rc;
}

/*
 * fashion_mnist - trains tinygrad's beautiful_mnist CNN (conv-conv-
 * batchnorm-pool, conv-conv-batchnorm-pool, linear) on Fashion-MNIST
 * with tgcore, prints test accuracy per epoch, saves a safetensors
 * checkpoint and an SVG of the training curve next to it.
 *
 *   fashion_mnist [--quick | --full] [--data DIR] [--out DIR] [--device NAME]
 *                 [--epochs N] [--batch N] [--lr X] [--seed N]
 *                 [--eval CHECKPOINT] [--smoke] [--dist]
 *
 * --quick (the default) trains a narrow net (8 and 16 channels) for two
 * epochs: about 87% test accuracy in about two minutes on 2 cores.
 * --full trains twice the width for 8 epochs: about 91%.  The learning
 * rate follows a cosine from --lr down to 0 over the run.  --eval loads
 * a checkpoint and only evaluates it.  The device is the default one;
 * --device NAME or DEVICE=NAME (or CPU=1, ...) picks another, as for
 * every tgcore program.
 *
 * --dist trains data-parallel across the processes of an MPI job
 * (tg/dist.h; `mpirun -np 2 fashion_mnist --dist`): rank 0's initial
 * weights go to every rank, each rank runs its share of every global
 * batch (--batch is the global batch), the gradients are averaged
 * over the ranks every step, and only rank 0 evaluates, prints and
 * saves.  At the end it prints the job's images/s and each rank's
 * share of time spent communicating.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tg/tg.h>
#ifdef TG_HAVE_DIST
#include <tg/dist.h>
#endif

#include "dp.h"
#include "idx.h"
#include "model.h"
#include "report.h"

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"
#define SIDE 28

typedef struct options {
	const char *data, *out, *eval;
	int epochs, batch, width, smoke, dist;
	int width_given;  /* --quick or --full on the command line */
	double lr;
	unsigned long seed;
} options;

typedef struct dataset {
	idx_array x, y;
	size_t n;
} dataset;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what)
{
	fprintf(stderr, "fashion_mnist: %s: %s\n", what, tg_last_error());
	return 1;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: fashion_mnist [--quick | --full] [--data DIR] [--out DIR]\n"
	        "                     [--device NAME]\n"
	        "                     [--epochs N] [--batch N] [--lr X] [--seed N]\n"
	        "                     [--eval CHECKPOINT] [--smoke]\n"
	        "  --quick       narrow net, 2 epochs (default)\n"
	        "  --full        a net twice as wide, 8 epochs\n"
	        "  --data DIR    the data set (default: $FASHION_MNIST_DIR or\n"
	        "                " DEFAULT_DATA ")\n"
	        "  --out DIR     where the checkpoint and the curve go (.)\n"
	        "  --device NAME the device (as DEVICE=NAME): CPU, OPENCL, ...\n"
	        "  --eval FILE   evaluate a checkpoint instead of training\n"
	        "  --smoke       a few steps on a slice of the data (tests)\n"
	        "  --dist        data-parallel over an MPI job (under mpirun)\n"
	        "The device is the default one; DEVICE=NAME picks another.\n");
}

static int parse(int argc, char **argv, options *o)
{
	int i;

	memset(o, 0, sizeof *o);
	o->data = getenv("FASHION_MNIST_DIR");
	o->out = ".";
	o->epochs = 2;
	o->batch = 128;
	o->width = 1;
	o->lr = 0.003;
	o->seed = 42;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--quick")) {
			o->width = 1, o->epochs = 2, o->width_given = 1;
		} else if (!strcmp(a, "--full")) {
			o->width = 2, o->epochs = 8, o->width_given = 1;
		} else if (!strcmp(a, "--smoke")) {
			o->smoke = 1;
		} else if (!strcmp(a, "--dist")) {
			o->dist = 1;
		} else if (v && !strcmp(a, "--data")) {
			o->data = v, i++;
		} else if (v && !strcmp(a, "--device")) {
			/* what DEVICE=NAME in the environment does */
			setenv("DEVICE", v, 1), i++;
		} else if (v && !strcmp(a, "--out")) {
			o->out = v, i++;
		} else if (v && !strcmp(a, "--eval")) {
			o->eval = v, i++;
		} else if (v && !strcmp(a, "--epochs")) {
			o->epochs = atoi(v), i++;
		} else if (v && !strcmp(a, "--batch")) {
			o->batch = atoi(v), i++;
		} else if (v && !strcmp(a, "--lr")) {
			o->lr = atof(v), i++;
		} else if (v && !strcmp(a, "--seed")) {
			o->seed = strtoul(v, NULL, 10), i++;
		} else {
			fprintf(stderr, "fashion_mnist: unknown or incomplete "
			        "option '%s'\n", a);
			usage(stderr);
			return -1;
		}
	}
	if (!o->data)
		o->data = DEFAULT_DATA;
	if (o->epochs < 1 || o->batch < 1 || !(o->lr > 0)) {
		fprintf(stderr, "fashion_mnist: epochs, batch and lr must be "
		        "positive\n");
		return -1;
	}
	return 0;
}

/* --------------------------------------------------------------- data */

static int load_split(const options *o, const char *prefix, dataset *d)
{
	char px[1024], py[1024], err[1200];

	snprintf(px, sizeof px, "%s/%s-images-idx3-ubyte.gz", o->data, prefix);
	snprintf(py, sizeof py, "%s/%s-labels-idx1-ubyte.gz", o->data, prefix);
	if (access(px, R_OK) || access(py, R_OK)) {
		fprintf(stderr, "fashion_mnist: the Fashion-MNIST data set is "
		        "not in %s (%s missing).\nInstall it with `sudo apt "
		        "install dataset-fashion-mnist`, or give its directory "
		        "with --data DIR or FASHION_MNIST_DIR.\n", o->data,
		        access(px, R_OK) ? px : py);
		return -1;
	}
	if (idx_read(px, &d->x, err, sizeof err) ||
	    idx_read(py, &d->y, err, sizeof err)) {
		fprintf(stderr, "fashion_mnist: %s\n", err);
		idx_free(&d->x);
		return -1;
	}
	if (d->x.ndim != 3 || d->x.shape[1] != SIDE || d->x.shape[2] != SIDE ||
	    d->y.ndim != 1 || d->y.shape[0] != d->x.shape[0]) {
		fprintf(stderr, "fashion_mnist: %s: unexpected shapes\n", px);
		idx_free(&d->x);
		idx_free(&d->y);
		return -1;
	}
	d->n = d->x.shape[0];
	return 0;
}

/* How pixels become the model's input: byte * scale + offset, [-1, 1]
 * as trained here, or what --eval's checkpoint says. */
static float in_scale = 1 / 127.5f, in_offset = -1;

/* The images idx[0..n) as a (n,1,28,28) float tensor scaled as above
 * and their labels as int32. */
static int batch(const dataset *d, const size_t *idx, size_t n,
                 tg_tensor **x, tg_tensor **y)
{
	float *fx = malloc(n * SIDE * SIDE * sizeof *fx);
	int32_t *iy = malloc(n * sizeof *iy);
	int64_t sx[4] = { (int64_t)n, 1, SIDE, SIDE }, sy[1] = { (int64_t)n };
	size_t i, k;

	if (!fx || !iy) {
		free(fx), free(iy);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const unsigned char *img = d->x.data + idx[i] * SIDE * SIDE;

		for (k = 0; k < SIDE * SIDE; k++)
			fx[i * SIDE * SIDE + k] = img[k] * in_scale + in_offset;
		iy[i] = d->y.data[idx[i]];
	}
	*x = tg_tensor_new(NULL, TG_FLOAT32, 4, sx, fx);
	*y = tg_tensor_new(NULL, TG_INT32, 1, sy, iy);
	free(fx), free(iy);
	return *x && *y ? 0 : -1;
}

/* ----------------------------------------------------------- progress */

/* A progress line (a bar redrawn in place on a terminal): the rate and
 * the time left come from the meter, which leaves out the first step's
 * compilation; until a steady step is done, they say it is compiling. */
static void progress(int tty, int epoch, int epochs, size_t step,
                     const meter *mt, double loss, double now)
{
	int width = 30, fill = (int)(width * step / (mt->steps ? mt->steps
	                                                      : 1)), i;
	double ips, eta;
	char rate[64];

	if (!meter_rate(mt, now, step, &ips, &eta))
		snprintf(rate, sizeof rate, "%s", step ? "measuring..."
		         : "compiling the training step's kernels...");
	else if (tty)
		snprintf(rate, sizeof rate, "%6.0f img/s ETA %d:%02d", ips,
		         (int)eta / 60, (int)eta % 60);
	else
		snprintf(rate, sizeof rate, "%.0f img/s eta %.0fs", ips, eta);
	if (!tty && !step) {
		printf("epoch %d/%d: %s\n", epoch, epochs, rate);
		fflush(stdout);
		return;
	}
	if (!tty) {
		printf("epoch %d/%d step %zu/%zu loss %.4f %s\n", epoch, epochs,
		       step, mt->steps, loss, rate);
		fflush(stdout);
		return;
	}
	printf("\repoch %d/%d [", epoch, epochs);
	for (i = 0; i < width; i++)
		putchar(i < fill ? '#' : '.');
	printf("] %zu/%zu loss %.4f %s\033[K", step, mt->steps, loss, rate);
	fflush(stdout);
}

/* ------------------------------------------------------------ training */

static void shuffle(size_t *p, size_t n, unsigned long *seed)
{
	size_t i;

	for (i = n; i > 1; i--) {
		size_t j;

		*seed = *seed * 6364136223846793005ul + 1442695040888963407ul;
		j = (size_t)(*seed >> 33) % i;
		size_t t = p[i - 1];
		p[i - 1] = p[j];
		p[j] = t;
	}
}

/* ------------------------------------------------------------ steps */

/* The steps run through tg_jit: the first call runs, the second is
 * captured, and every later one replays the captured kernels with the
 * new batch (no graph building, scheduling or lookups). */

/* in = { images }, out = { predicted classes } (eval mode, no grad). */
static int eval_step(void *ctx, tg_tensor *const *in, size_t nin,
                     tg_tensor **out, size_t nout)
{
	(void)nin, (void)nout;
	out[0] = tg_argmax(model_forward(ctx, in[0]), 1, 0);
	return out[0] ? 0 : tg_last_status();
}

#define EVAL_BATCH 1000

/* Test accuracy in [0, 1], or a negative value on error.  Full batches
 * go through jit; a last partial one (another shape) runs directly.
 * With `right` and `total` (CLASSES entries each, zeroed by the
 * caller), also the correct and all predictions per true class. */
static double evaluate(model *m, tg_jit *jit, const dataset *test,
                       size_t limit, size_t *right, size_t *total)
{
	size_t n = test->n < limit ? test->n : limit, i, b, correct = 0;
	size_t *idx = malloc(n * sizeof *idx);
	int was_train = tg_set_training(0), was_grad = tg_set_grad_enabled(0);
	double acc = -1;

	if (!idx)
		goto out;
	for (i = 0; i < n; i++)
		idx[i] = i;
	for (b = 0; b < n; b += EVAL_BATCH) {
		size_t k = n - b < EVAL_BATCH ? n - b : EVAL_BATCH;
		int32_t pred[EVAL_BATCH];
		tg_tensor *x, *y, *p;

		tg_scope_begin();
		if (batch(test, idx + b, k, &x, &y) ||
		    (k == EVAL_BATCH ? tg_jit_call(jit, &x, 1, &p, 1)
		                     : eval_step(m, &x, 1, &p, 1)) ||
		    tg_tensor_data(p, pred, k * sizeof *pred)) {
			tg_scope_end();
			goto out;
		}
		for (i = 0; i < k; i++) {
			unsigned c = test->y.data[idx[b + i]];
			int ok = pred[i] == (int32_t)c;

			correct += ok;
			if (right && total && c < CLASSES) {
				right[c] += ok;
				total[c]++;
			}
		}
		tg_scope_end();
	}
	acc = (double)correct / (double)n;
out:
	free(idx);
	tg_set_training(was_train);
	tg_set_grad_enabled(was_grad);
	return acc;
}

/* The trainable tensors and statistics, for the optimizer. */
static int all_tensors(tg_state *s, tg_tensor ***out, size_t *n)
{
	size_t i;

	*n = tg_state_count(s);
	if (!(*out = malloc(*n * sizeof **out)))
		return -1;
	for (i = 0; i < *n; i++)
		(*out)[i] = tg_state_tensor(s, i);
	return 0;
}

/* Points on the training curve per epoch: each evaluates the first
 * EVAL_BATCH test images (one replay of the evaluation's jit). */
#define CURVE_POINTS 10

/* Saves the parameters and statistics with the description --eval
 * reads, and the curve beside them. */
static int save(tg_state *st, const options *o, const curve_point *pts,
                size_t npts)
{
	char path[1100];
	ckpt_desc desc;

	if (mkdir(o->out, 0777) && errno != EEXIST) {
		fprintf(stderr, "fashion_mnist: %s: %s\n", o->out,
		        strerror(errno));
		return 1;
	}
	ckpt_desc_default(&desc, o->width);
	snprintf(path, sizeof path, "%s/fashion_mnist.safetensors", o->out);
	if (ckpt_desc_put(st, &desc) || tg_safetensors_save(st, path))
		return die("saving the checkpoint");
	printf("checkpoint: %s\n", path);
	snprintf(path, sizeof path, "%s/fashion_mnist_curve.svg", o->out);
	if (curve_write_svg(path, pts, npts, o->width > 1
	                    ? "Fashion-MNIST, full net"
	                    : "Fashion-MNIST, quick net"))
		fprintf(stderr, "fashion_mnist: curve: %s\n", tg_last_error());
	else
		printf("training curve: %s\n", path);
	return 0;
}

/* rank and size: this process's place in a --dist job (0 and 1
 * otherwise); every rank trains on its rows of each global batch. */
static int train(model *m, tg_state *st, const dataset *tr,
                 const dataset *te, const options *o, int rank, int size)
{
	size_t n = o->smoke ? 512 : tr->n, steps = n / (size_t)o->batch, s;
	size_t *perm = malloc(n * sizeof *perm), nt, seen = 0, i, npts = 0;
	size_t every = (steps + CURVE_POINTS - 1) / CURVE_POINTS;
	double t0 = now(), first = -1, train_time = 0;
	curve_point *pts = calloc((size_t)o->epochs *
	                          (steps / (every ? every : 1) + 1),
	                          sizeof *pts);
	unsigned long seed = o->seed;
	int tty = isatty(1), e, rc = 1;
	tg_tensor **ts = NULL;
	tg_optim *opt = NULL;
	trainer tr_ctx = { m, NULL, NULL, 0 };
	size_t lb = (size_t)o->batch / (size_t)size;  /* this rank's rows */
	dp *d = NULL;
	tg_jit *step_jit = tg_jit_new(model_train_step, &tr_ctx);
	tg_jit *eval_jit = tg_jit_new(eval_step, m);

	if (!perm || !pts || !step_jit || !eval_jit ||
	    all_tensors(st, &ts, &nt))
		goto out;
	if (!(opt = tg_optim_adam(ts, nt, o->lr, 0.9, 0.999, 1e-8))) {
		rc = die("adam");
		goto out;
	}
	tr_ctx.opt = opt;
	if (o->batch % size) {
		fprintf(stderr, "fashion_mnist: --batch %d does not split over "
		        "%d ranks\n", o->batch, size);
		goto out;
	}
	if (o->dist && !(d = dp_new(&tr_ctx, ts, nt))) {
		rc = die("--dist");
		goto out;
	}
	for (i = 0; i < n; i++)
		perm[i] = i;
	tg_set_training(1);
	for (e = 0; e < o->epochs; e++) {
		double te0 = now(), sum = 0, since = 0, acc, paused = 0;
		meter mt;

		/* the first step compiles: the rate leaves it out */
		meter_start(&mt, te0, steps, (size_t)o->batch, e == 0);
		shuffle(perm, n, &seed);
		if (e == 0)
			progress(tty, 1, o->epochs, 0, &mt, 0, te0);
		for (s = 0; s < steps; s++) {
			tg_tensor *x, *y, *in[2], *loss;
			double lv, t;

			/* cosine decay over the whole run; the rate is a
			 * tensor, so this recompiles nothing */
			if (tg_optim_set_lr(opt, o->lr * 0.5 * (1 + cos(
			        3.14159265358979 * (double)(e * steps + s) /
			        (double)(o->epochs * steps))))) {
				rc = die("learning rate");
				goto out;
			}
			tg_scope_begin();
			if (batch(tr, perm + s * (size_t)o->batch +
			          (size_t)rank * lb, lb, &x, &y) ||
			    (d ? dp_step(d, x, y, &lv) :
			     ((in[0] = x, in[1] = y,
			       tg_jit_call(step_jit, in, 2, &loss, 1)) ||
			      tg_tensor_item(loss, &lv)))) {
				tg_scope_end();
				rc = die("training step");
				goto out;
			}
			tg_scope_end();
			t = now();
			if (first < 0) {
				first = t - t0;
				if (!tty)
					printf("epoch 1/%d: the first step took "
					       "%.2f s, compiling included\n",
					       o->epochs, first);
			}
			meter_step(&mt, t, s + 1);
			seen += (size_t)o->batch;
			sum += lv;
			since += lv;
			if (tty || s % 50 == 49 || s + 1 == steps)
				progress(tty, e + 1, o->epochs, s + 1, &mt, lv, t);
			if ((s + 1) % every == 0 || s + 1 == steps) {
				/* a point of the curve; its evaluation is not
				 * training time */
				size_t k = (s + 1) % every ? (s + 1) % every : every;
				double spent;

				acc = rank ? 0 : evaluate(m, eval_jit, te,
				                          EVAL_BATCH, NULL, NULL);
				if (acc < 0) {
					rc = die("evaluation");
					goto out;
				}
				pts[npts++] = (curve_point){
					e + (double)(s + 1) / (double)steps,
					since / (double)k, acc };
				since = 0;
				spent = now() - t;
				mt.t0 += spent;
				paused += spent;
			}
		}
		train_time += now() - te0 - paused;
		if (tty)
			putchar('\n');
		if (d && dp_sync_stats(d)) {
			rc = die("averaging the statistics");
			goto out;
		}
		/* in a --dist job rank 0 evaluates, prints and saves */
		acc = rank ? 0 : evaluate(m, eval_jit, te,
		                          o->smoke ? 1000 : te->n, NULL, NULL);
		if (acc < 0) {
			rc = die("evaluation");
			goto out;
		}
		printf("epoch %d: train loss %.4f, test accuracy %.2f%%\n", e + 1,
		       sum / (double)(steps ? steps : 1), acc * 100);
		fflush(stdout);
	}
	tg_set_training(0);
	if (d && dp_report(d, train_time, seen)) {
		rc = die("--dist report");
		goto out;
	}
	if (rank) {  /* rank 0 saves */
		rc = 0;
		goto out;
	}
	if ((rc = save(st, o, pts, npts)))
		goto out;
	printf("training: %.0f images/s; first step done after %.2f s "
	       "(compilation included)\n", (double)seen / train_time, first);
	rc = 0;
out:
	dp_free(d);
	tg_jit_free(step_jit);
	tg_jit_free(eval_jit);
	tg_optim_free(opt);
	free(ts);
	free(perm);
	free(pts);
	return rc;
}

static int eval_checkpoint(model *m, tg_state *st, const dataset *te,
                           const char *path, const tg_state *loaded,
                           const ckpt_desc *desc)
{
	size_t right[CLASSES] = { 0 }, total[CLASSES] = { 0 };
	double acc;
	int rc = tg_state_load(st, loaded, 1);

	if (rc)
		return die("loading the checkpoint");
	tg_jit *jit = tg_jit_new(eval_step, m);

	acc = jit ? evaluate(m, jit, te, te->n, right, total) : -1;
	tg_jit_free(jit);
	if (acc < 0)
		return die("evaluation");
	printf("%s: test accuracy %.2f%%\n", path, acc * 100);
	for (int c = 0; c < CLASSES; c++)  /* by the checkpoint's names */
		printf("  %-12s %6.2f%%\n", desc->classes[c], total[c] ?
		       100.0 * (double)right[c] / (double)total[c] : 0);
	return 0;
}

/* --eval: the checkpoint, and how its model was made (its metadata),
 * which overrides --quick and --full; a checkpoint without it is taken
 * as the options say. */
static tg_state *open_checkpoint(options *o, ckpt_desc *desc)
{
	tg_state *loaded = tg_safetensors_load(o->eval, NULL);
	char why[256];
	int rc;

	if (!loaded) {
		die("loading the checkpoint");
		return NULL;
	}
	rc = ckpt_desc_get(loaded, desc, why, sizeof why);
	if (rc < 0) {
		fprintf(stderr, "fashion_mnist: %s: %s\n", o->eval, why);
		tg_state_free(loaded);
		return NULL;
	}
	if (rc > 0) {
		ckpt_desc_default(desc, o->width);
		printf("fashion_mnist: %s has no description; taking it as a "
		       "%s net as the options say\n", o->eval,
		       o->width > 1 ? "full" : "quick");
		return loaded;
	}
	if (o->width_given && o->width != desc->width)
		printf("fashion_mnist: %s holds a %s net; %s is ignored\n",
		       o->eval, desc->width > 1 ? "full" : "quick",
		       o->width > 1 ? "--full" : "--quick");
	o->width = desc->width;
	in_scale = (float)desc->scale;
	in_offset = (float)desc->offset;
	return loaded;
}

int main(int argc, char **argv)
{
	options o;
	dataset tr, te;
	model m;
	tg_state *st = NULL, *loaded = NULL;
	ckpt_desc desc;
	int rc = 1, rank = 0, size = 1;

	memset(&tr, 0, sizeof tr);
	memset(&te, 0, sizeof te);
	if (parse(argc, argv, &o))
		return 2;
	if (o.dist) {
		if (o.eval) {
			fprintf(stderr, "fashion_mnist: --dist trains; --eval "
			        "runs alone\n");
			return 2;
		}
		if (dp_init(&argc, &argv, &rank, &size))
			return die("--dist");
		/* only rank 0 prints; errors still go to stderr */
		if (rank && !freopen("/dev/null", "w", stdout))
			return die("--dist");
	}
	if ((!o.eval && load_split(&o, "train", &tr)) ||
	    load_split(&o, "t10k", &te))
		goto out;
	tg_manual_seed(o.seed);
	if (o.eval && !(loaded = open_checkpoint(&o, &desc)))
		goto out;
	if (model_init(&m, NULL, o.width)) {
		rc = die("model");
		goto out;
	}
	if (!(st = model_state(&m))) {
		rc = die("model state");
		goto free_model;
	}
	printf("fashion_mnist: %s, %s net, device %s", o.eval ?
	       "evaluating" : "training", o.width > 1 ? "full" : "quick",
	       tg_dev_name(tg_dev_get(NULL)));
	if (o.dist)
		printf(", %d ranks of %d images each per step", size,
		       o.batch / size);
	printf("\n");
	rc = o.eval ? eval_checkpoint(&m, st, &te, o.eval, loaded, &desc)
	            : train(&m, st, &tr, &te, &o, rank, size);
	tg_state_free(st);
free_model:
	model_free(&m);
out:
	tg_state_free(loaded);
	idx_free(&tr.x), idx_free(&tr.y), idx_free(&te.x), idx_free(&te.y);
	tg_shutdown();
	if (o.dist && dp_finish() && !rc)
		rc = die("--dist");
	return rc;
}

/*
 * bench_linearize.c - how fast the linearizer orders big kernels.
 *
 * Builds lowered-IR kernels of about 1,000, 10,000 and 100,000 uops: a
 * launch index and six nests of two reduce loops; in each nest many
 * accumulators, each summing a product of two loads plus a constant;
 * their final values added up in a tree outside the loops and stored.
 * Times tg_linearize on each (the best of a few runs), and as the
 * anchor, in the same run, old_linearize: the pre-change linearizer
 * (tests/linearize_old.h, a rescan of every node at every step; one
 * run at 10,000 uops and more: at 100,000 it takes about 15 s).  The
 * two orders must agree node for node.
 * Usage: bench_linearize [largest size [largest size for the old one]]
 * (defaults 100000 and 100000; sizes go up by 10 from 1000).  Prints
 * one line per size and linearizer: uops, ms, ns per uop.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../libtgcore/codegen/codegen.h"
#include "../linearize_old.h"

enum { NESTS = 6 };

static size_t old_max = 100000; /* the old one runs up to this size */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static tg_uop *ci(tg_ir *ir, int64_t v)
{
	return tg_uop_const_int(ir, TG_INDEX, v);
}

static tg_uop *alu(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(ir, op, a, b, NULL);
}

static tg_uop *glob(tg_ir *ir, int i)
{
	tg_arg a = { .v.i = i, .a = i == 0 };

	return tg_uop0(ir, TG_DEFINE_GLOBAL,
	               tg_type_ptr(TG_FLOAT32, TG_AS_GLOBAL), &a);
}

static tg_uop *load(tg_ir *ir, tg_uop *buf, tg_uop *i)
{
	return tg_uop2(ir, TG_LOAD, TG_FLOAT32, buf, i);
}

/* acc += a[g*4096 + o*64 + i + c] * b[i*3 + c] + c over loops (o, i):
 * b's index skips loop o (find_inner places it). */
static tg_uop *chain(tg_ir *ir, tg_uop *row, tg_uop *ri, tg_uop *const *in,
                     int64_t c, tg_uop *const *loops)
{
	tg_arg aa = { .v.i = c };
	tg_uop *x = load(ir, in[0], alu(ir, TG_ADD, row, ci(ir, c)));
	tg_uop *y = load(ir, in[1], alu(ir, TG_ADD, alu(ir, TG_MUL, ri,
	                 ci(ir, 3)), ci(ir, c)));
	tg_uop *v = alu(ir, TG_ADD, alu(ir, TG_MUL, x, y),
	                tg_uop_const_float(ir, TG_FLOAT32, (double)c));
	tg_uop *asrc[3] = { tg_uop_const_float(ir, TG_FLOAT32, 0.0),
	                    loops[0], loops[1] };
	tg_uop *acc = tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32, asrc, 3, &aa);

	return tg_uop2(ir, TG_PHI, TG_FLOAT32, acc, alu(ir, TG_ADD, acc, v));
}

/* Adds vals[0..n) pairwise (a tree of ALUs outside the loops). */
static tg_uop *sum_tree(tg_ir *ir, tg_uop **vals, size_t n)
{
	for (; n > 1; n = (n + 1) / 2) {
		for (size_t i = 0; 2 * i + 1 < n; i++)
			vals[i] = alu(ir, TG_ADD, vals[2 * i], vals[2 * i + 1]);
		if (n % 2)  /* the odd one goes up a level */
			vals[n / 2] = vals[n - 1];
	}
	return vals[0];
}

/* A kernel of about `target` uops (12 per accumulator), NULL on
 * error. */
static tg_uop *kernel(tg_ir *ir, size_t target)
{
	tg_arg ga = { .name = "gidx0", .a = 1024 };
	tg_uop *g = tg_uop0(ir, TG_SPECIAL, TG_INDEX, &ga);
	tg_uop *in[2] = { glob(ir, 1), glob(ir, 2) }, *loops[NESTS][2];
	tg_uop *row[NESTS], *base = alu(ir, TG_MUL, g, ci(ir, 4096)), *s;
	size_t nch = target / 12 + 1;
	tg_uop **vals = malloc(nch * sizeof *vals);

	if (!vals)
		return NULL;
	for (int k = 0; k < NESTS; k++) {
		for (int j = 0; j < 2; j++) {
			tg_arg ra = { .v.i = 2 * k + j, .a = 1 };
			tg_uop *src[2] = { ci(ir, 0), ci(ir, 4 + k + 4 * j) };
			loops[k][j] = tg_uop_new(ir, TG_RANGE, TG_INDEX, src, 2,
			                         &ra);
		}
		row[k] = alu(ir, TG_ADD, alu(ir, TG_ADD, base,
		             alu(ir, TG_MUL, loops[k][0], ci(ir, 64))),
		             loops[k][1]);
	}
	for (size_t c = 0; c < nch; c++)
		vals[c] = chain(ir, row[c % NESTS], loops[c % NESTS][1], in,
		                (int64_t)c, loops[c % NESTS]);
	s = sum_tree(ir, vals, nch);
	free(vals);
	s = tg_uop_new(ir, TG_STORE, TG_VOID,
	               (tg_uop *[]){ glob(ir, 0), g, s }, 3, NULL);
	return tg_uop1(ir, TG_SINK, TG_VOID, s);
}

typedef int (*lin_fn)(tg_ir *, tg_uop *, tg_uop ***, size_t *);

/* Best time of `reps` runs of f in ms; the last order in *lin, *n. */
static double time_lin(lin_fn f, tg_ir *ir, tg_uop *s, int reps,
                       tg_uop ***lin, size_t *n)
{
	double best = 0;

	for (int r = 0; r < reps; r++) {
		double t0 = now();
		if (f(ir, s, lin, n)) {
			fprintf(stderr, "bench_linearize: %s\n",
			        tg_last_error());
			exit(1);
		}
		t0 = now() - t0;
		if (r == 0 || t0 < best)
			best = t0;
		if (r + 1 < reps)
			free(*lin);
	}
	return best * 1e3;
}

static void report(const char *who, size_t n, double ms)
{
	printf("%-30s %7zu uops %10.3f ms %8.1f ns/uop\n", who, n, ms,
	       ms * 1e6 / (double)n);
}

/* Times both linearizers on a kernel of about `target` uops (the old
 * one only up to old_max); 0 when their orders agree. */
static int bench(size_t target)
{
	tg_ir *ir = tg_ir_new();
	tg_uop *s = ir ? kernel(ir, target) : NULL, **lin, **ref;
	size_t n, nref;
	double ms;
	int bad = 0;

	if (!s) {
		fprintf(stderr, "bench_linearize: %s\n", tg_last_error());
		exit(1);
	}
	ms = time_lin(tg_linearize, ir, s, 5, &lin, &n);
	report("tg_linearize", n, ms);
	if (target <= old_max) {
		ms = time_lin(old_linearize, ir, s, target < 10000 ? 5 : 1,
		              &ref, &nref);
		report("old_linearize (pre-change)", nref, ms);
		bad = nref != n || memcmp(ref, lin, n * sizeof *lin);
		if (bad)
			fprintf(stderr, "bench_linearize: the orders differ "
			        "at %zu uops\n", target);
		free(ref);
	}
	free(lin);
	tg_ir_free(ir);
	return bad;
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int bad = 0;

	if (argc > 2)
		old_max = strtoul(argv[2], NULL, 10);
	for (size_t t = 1000; t <= max; t *= 10)
		bad |= bench(t);
	return bad;
}

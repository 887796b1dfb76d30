/*
 * bench_graph.c - what a graph saves per kernel: a chain of 32 tiny
 * kernels (16 items each, each reading the one before; --items changes
 * that) replayed through tg_graph_run with the plugin's graph entries,
 * against the same 32 kernels launched one tg_program_launch at a time.
 *
 * Each way runs the chain over and over for at least `target` seconds
 * (and at least 100 times), synchronizing once at the end, and prints
 * microseconds per kernel.  The chain's last buffer is checked against
 * a C loop after each way, so a figure is only printed for work done
 * right.
 *
 * Usage: bench_graph [--quick] [--items N] [--device NAME]... [--all]
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../libtgcore/device/device.h"
#include "bench.h"
#include "../graphkernels.h"

#define NK 32     /* kernels in the graph */
#define MAX_DEVS 8
#define MIN_RUNS 100
#define MAX_ITEMS (1 << 24)

static size_t items = 16; /* work-items of each kernel */

/* The chain on one device: launch j reads bufs[j], writes bufs[j+1]. */
struct chain {
	tg_dev *dev;
	tg_program *p;
	tg_buffer *b[NK + 1];
	tg_buffer *arg[NK][2];
	int64_t val[NK][2];
	tg_launch_args a[NK];
	tg_program *progs[NK];
};

/* Microseconds per kernel each way. */
struct figures {
	double graph, launch;
};

/* Prints the library's error for `what` on `dev` and returns -1. */
static int fail(const char *dev, const char *what)
{
	fflush(stdout);
	fprintf(stderr, "bench_graph: %s: %s: %s\n", dev, what,
	        tg_last_error());
	return -1;
}

static const char *source(tg_dev *dev)
{
	tg_dev_info info;

	if (tg_dev_get_info(dev, &info))
		return NULL;
	if (!strcmp(info.dialect, "c"))
		return c_step_u;
	if (!strcmp(info.dialect, "opencl"))
		return cl_step_u;
	if (!strcmp(info.dialect, "cuda"))
		return cu_step_u;
	return !strcmp(info.dialect, "glsl") ? gl_step_u : NULL;
}

/* ------------------------------------------------------------ chain */

static void chain_free(struct chain *c)
{
	for (int j = 0; j <= NK; j++)
		tg_buffer_unref(c->b[j]);
	tg_program_free(c->p);
}

/* The buffers, the input filled in. */
static int buffers_new(const char *name, struct chain *c)
{
	uint32_t *h = malloc(items * 4);
	int rc = 0;

	if (!h)
		return fprintf(stderr, "bench_graph: out of memory\n"), -1;
	for (size_t i = 0; i < items; i++)
		h[i] = (uint32_t)(i * 7 + 1);
	for (int j = 0; j <= NK && !rc; j++)
		if (!(c->b[j] = tg_buffer_new(c->dev, items, TG_UINT32)) ||
		    tg_buffer_copyin(c->b[j], h, items * 4))
			rc = fail(name, "buffer");
	free(h);
	return rc;
}

static int chain_new(const char *name, struct chain *c)
{
	const char *src;

	memset(c, 0, sizeof *c);
	if (!(c->dev = tg_dev_get(name)))
		return fail(name, "open");
	if (!(src = source(c->dev)))
		return fprintf(stderr, "bench_graph: %s: no kernel for its "
		               "dialect\n", name), -1;
	if (!(c->p = tg_program_new(c->dev, "step_u", src)))
		return fail(name, "program_new");
	if (buffers_new(name, c))
		return -1;
	for (int j = 0; j < NK; j++) {
		c->arg[j][0] = c->b[j + 1], c->arg[j][1] = c->b[j];
		c->val[j][0] = j + 1, c->val[j][1] = (int64_t)items;
		c->a[j] = (tg_launch_args){ .bufs = c->arg[j], .nbufs = 2,
			.vals = c->val[j], .nvals = 2,
			.global = { items, 1, 1 }, .local = { 1, 1, 1 } };
		c->progs[j] = c->p;
	}
	return 0;
}

/* x = the chain's C loop over x (t: scratch). */
static void chain_ref(uint32_t *x, uint32_t *t)
{
	for (int j = 0; j < NK; j++) {
		for (size_t i = 0; i < items; i++)
			t[i] = x[items - 1 - i] * 3u + (uint32_t)(j + 1) +
			       (uint32_t)i;
		memcpy(x, t, items * 4);
	}
}

/* The last buffer equals the C loop's from the first. */
static int chain_check(struct chain *c, const char *name, const char *how)
{
	uint32_t *x = malloc(items * 4), *y = malloc(items * 4);
	uint32_t *t = malloc(items * 4);
	int rc = -1;

	if (!x || !y || !t)
		fprintf(stderr, "bench_graph: out of memory\n");
	else if (tg_buffer_copyout(c->b[0], x, items * 4) ||
	         tg_buffer_copyout(c->b[NK], y, items * 4))
		fail(name, "copyout");
	else {
		chain_ref(x, t);
		rc = memcmp(x, y, items * 4) ? -1 : 0;
		if (rc)
			fprintf(stderr, "bench_graph: %s: %s computed the "
			        "wrong values\n", name, how);
	}
	free(x), free(y), free(t);
	return rc;
}

/* ------------------------------------------------------------ timing */

/* One pass over the chain, launch by launch. */
static int launch_all(struct chain *c)
{
	for (int j = 0; j < NK; j++)
		if (tg_program_launch(c->p, &c->a[j], NULL))
			return -1;
	return 0;
}

/* Runs the chain (as graph g, else launch by launch) for `target`
 * seconds and MIN_RUNS runs at least, synchronizes, and returns
 * microseconds per kernel, or -1. */
static double time_runs(struct chain *c, tg_graph *g, double target)
{
	double t0 = bench_now(), t;
	long runs = 0;

	do {
		for (int k = 0; k < 10; k++, runs++)
			if (g ? tg_graph_run(g) : launch_all(c))
				return -1;
		t = bench_now() - t0;
	} while (runs < MIN_RUNS || t < target);
	if (tg_dev_synchronize(c->dev))
		return -1;
	return (bench_now() - t0) * 1e6 / ((double)runs * NK);
}

/* Both figures for one device, each after a warm-up pass. */
static int bench_device(const char *name, double target, struct figures *f)
{
	struct chain c;
	tg_graph *g = NULL;
	int rc = -1;

	if (chain_new(name, &c))
		goto out;
	printf("device %s: %s\n", tg_dev_name(c.dev),
	       tg_dev_description(c.dev));
	fflush(stdout);
	if (!(g = tg_graph_new(c.progs, c.a, NK, 1)))
		goto fail;
	if (!tg_graph_native(g))
		printf("  (%s has no graph entries: the graph runs launch by "
		       "launch)\n", name);
	if (tg_graph_run(g) || (f->graph = time_runs(&c, g, target)) < 0 ||
	    chain_check(&c, name, "the graph"))
		goto fail;
	if (launch_all(&c) || (f->launch = time_runs(&c, NULL, target)) < 0 ||
	    chain_check(&c, name, "the launches"))
		goto fail;
	rc = 0;
	goto out;
fail:
	fail(name, "run");
out:
	tg_graph_free(g);
	chain_free(&c);
	return rc;
}

/* ------------------------------------------------------------ output */

static void table(char names[][32], const struct figures *f, size_t nd)
{
	printf("32 kernels of %zu items, us/kernel\n%-28s", items, "");
	for (size_t d = 0; d < nd; d++)
		printf(" %10s", names[d]);
	printf("\n%-28s", "  tg_graph_run");
	for (size_t d = 0; d < nd; d++)
		printf(" %10.3f", f[d].graph);
	printf("\n%-28s", "  tg_program_launch each");
	for (size_t d = 0; d < nd; d++)
		printf(" %10.3f", f[d].launch);
	putchar('\n');
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: bench_graph [--quick] [--items N] [--device NAME]... "
	        "[--all] [-h]\n"
	        "Microseconds per kernel of a 32-kernel chain of tiny "
	        "kernels, replayed as a\n"
	        "graph and launched one by one, on each device.\n"
	        "  --quick        shorter runs (a smoke test)\n"
	        "  --items N      work-items per kernel (default 16)\n"
	        "  --device NAME  measure this device (repeatable; default: "
	        "the default device)\n"
	        "  --all          measure every device the plugins offer\n"
	        "  -h, --help     this text\n");
}

/* Fills names from the options; -1 after a usage error, 1 for -h. */
static int options(int argc, char **argv, char names[][32], size_t *nd,
                   int *all, double *target)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			*target = 0.05;
		} else if (!strcmp(argv[i], "--all")) {
			*all = 1;
		} else if (!strcmp(argv[i], "--items") && i + 1 < argc &&
		           atol(argv[i + 1]) > 0 &&
		           atol(argv[i + 1]) <= MAX_ITEMS) {
			items = (size_t)atol(argv[++i]);
		} else if (!strcmp(argv[i], "--device") && i + 1 < argc &&
		           *nd < MAX_DEVS) {
			snprintf(names[(*nd)++], 32, "%s", argv[++i]);
		} else if (!strcmp(argv[i], "-h") ||
		           !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 1;
		} else {
			fprintf(stderr, "bench_graph: bad option '%s'\n",
			        argv[i]);
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct figures f[MAX_DEVS];
	char names[MAX_DEVS][32];
	double target = 0.5;
	size_t nd = 0;
	int all = 0, rc;

	if ((rc = options(argc, argv, names, &nd, &all, &target)) != 0)
		return rc < 0 ? 2 : 0;
	rc = 1;
	if (tg_init()) {
		fail("tgcore", "init");
		goto out;
	}
	if (all)
		nd = bench_all_devices(names, MAX_DEVS);
	if (nd == 0) {
		const char *def = tg_dev_default_name(NULL);

		if (!def) {
			fail("tgcore", "default device");
			goto out;
		}
		snprintf(names[nd++], sizeof names[0], "%s", def);
	}
	for (size_t d = 0; d < nd; d++)
		if (bench_device(names[d], target, &f[d]))
			goto out;
	table(names, f, nd);
	rc = 0;
out:
	tg_shutdown();
	return rc;
}

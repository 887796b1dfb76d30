/*
 * device/graph.c - launches on one device recorded once and run many
 * times (tinygrad's GraphRunner).  The plugin's graph entries (ABI 0.2)
 * run them when it has them: a CPU pool that wakes once per graph, one
 * command buffer, one flush.  Without them the core calls launch per
 * kernel, still with no lookup, allocation or check on the way: those
 * happened once, in tg_graph_new.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "device/device.h"

struct tg_graph {
	struct tg_dev *dev;
	size_t n;
	tg_program **progs;         /* borrowed */
	void **impls;               /* the plugin's programs */
	struct tg_launch *launches;
	struct tg_launch **lp;      /* &launches[i], for the plugin */
	void **handles;             /* every launch's buffers, in order */
	int64_t *vals;              /* every launch's values, in order */
	void *impl;                 /* the plugin's graph, or NULL */
};

void tg_graph_free(tg_graph *g)
{
	if (!g)
		return;
	if (g->impl)
		g->dev->rt.graph_free(g->dev->impl, g->impl);
	free(g->progs);
	free(g->impls);
	free(g->launches);
	free(g->lp);
	free(g->handles);
	free(g->vals);
	free(g);
}

static int alloc_arrays(tg_graph *g, const tg_launch_args *args, size_t n)
{
	size_t i, nh = 0, nv = 0;

	for (i = 0; i < n; i++) {
		nh += args[i].nbufs;
		nv += args[i].nvals;
	}
	g->progs = calloc(n ? n : 1, sizeof *g->progs);
	g->impls = calloc(n ? n : 1, sizeof *g->impls);
	g->launches = calloc(n ? n : 1, sizeof *g->launches);
	g->lp = calloc(n ? n : 1, sizeof *g->lp);
	g->handles = calloc(nh ? nh : 1, sizeof *g->handles);
	g->vals = calloc(nv ? nv : 1, sizeof *g->vals);
	if (!g->progs || !g->impls || !g->launches || !g->lp ||
	    !g->handles || !g->vals)
		return tg_error_oom("graph");
	return 0;
}

/* Fills launch i; its handles and values go to the shared arrays at
 * *h and *v, which move on. */
static int record(tg_graph *g, size_t i, tg_program *p,
                  const tg_launch_args *a, size_t *h, size_t *v)
{
	int rc;

	if (tg_program_dev(p) != g->dev)
		return tg_error(TG_EINVAL, "graph: launch %zu ('%s') is on %s, "
		                "launch 0 on %s", i, tg_program_name(p),
		                tg_program_dev(p)->name, g->dev->name);
	if ((rc = tg_program_prepare(p, a, g->handles + *h, &g->launches[i])))
		return tg_error_prefix("graph: launch %zu", i);
	if (a->nvals)
		memcpy(g->vals + *v, a->vals, a->nvals * sizeof *g->vals);
	g->launches[i].vals = g->vals + *v;
	g->progs[i] = p;
	g->impls[i] = tg_program_impl(p);
	g->lp[i] = &g->launches[i];
	*h += a->nbufs;
	*v += a->nvals;
	return 0;
}

tg_graph *tg_graph_new(tg_program *const *progs, const tg_launch_args *args,
                       size_t n, int native)
{
	tg_graph *g;
	size_t i, h = 0, v = 0;
	int rc;

	if (!n || !progs || !args || !progs[0])
		return tg_error(TG_EINVAL, "graph: %zu launches (%s)", n,
		                n ? "no program" : "need one or more"), NULL;
	if (!(g = calloc(1, sizeof *g)))
		return tg_error_oom("graph"), NULL;
	g->dev = tg_program_dev(progs[0]);
	g->n = n;
	rc = alloc_arrays(g, args, n);
	for (i = 0; i < n && !rc; i++)
		rc = progs[i] ? record(g, i, progs[i], &args[i], &h, &v)
		              : tg_error(TG_EINVAL, "graph: launch %zu has "
		                         "no program", i);
	if (!rc && native && g->dev->rt.graph_new &&
	    (rc = g->dev->rt.graph_new(g->dev->impl, g->impls, g->lp, n,
	                               &g->impl)) < 0) {
		g->impl = NULL;
		if (rc == TG_EUNSUPPORTED) {  /* declined: launch by launch */
			tg_debug_log(1, "graph: %s", tg_last_error());
			tg_clear_error();
			rc = 0;
		} else {
			rc = tg_error_prefix("graph: %zu launches on %s", n,
			                     g->dev->name);
		}
	}
	if (rc) {
		tg_graph_free(g);
		return NULL;
	}
	return g;
}

int tg_graph_set_buffer(tg_graph *g, size_t i, size_t k, tg_buffer *b)
{
	if (i >= g->n || k >= g->launches[i].nbufs || !b)
		return tg_error(TG_EINVAL, "graph: buffer %zu of launch %zu: "
		                "%s", k, i, i >= g->n ? "no such launch" :
		                !b ? "the buffer is NULL" : "no such buffer");
	if (tg_buffer_dev(b) != g->dev)
		return tg_error(TG_EINVAL, "graph: buffer %zu of launch %zu "
		                "('%s') is on %s, the graph on %s", k, i,
		                tg_program_name(g->progs[i]),
		                tg_buffer_dev(b)->name, g->dev->name);
	return tg_buffer_handle(b, (void **)&g->launches[i].bufs[k]);
}

void tg_graph_set_val(tg_graph *g, size_t i, size_t k, int64_t v)
{
	if (TG_NEVER(i >= g->n || k >= g->launches[i].nvals))
		return; /* no status to return: a caller's bug */
	((int64_t *)g->launches[i].vals)[k] = v;
}

int tg_graph_run(tg_graph *g)
{
	struct tg_dev *d = g->dev;
	size_t i;

	if (g->impl) {
		if (d->rt.graph_run(d->impl, g->impl, g->lp, g->n) < 0)
			return tg_error_prefix("graph: run of %zu launches on %s",
			                       g->n, d->name);
		for (i = 0; i < g->n; i++)
			tg_counters_kernel(g->progs[i]);
		return 0;
	}
	for (i = 0; i < g->n; i++) {
		if (d->rt.launch(d->impl, g->impls[i], g->lp[i]) < 0)
			return tg_error_prefix("graph: launch %zu ('%s') on %s",
			                       i, tg_program_name(g->progs[i]),
			                       d->name);
		tg_counters_kernel(g->progs[i]);
	}
	return 0;
}

int tg_graph_native(const tg_graph *g)
{
	return g->impl != NULL;
}

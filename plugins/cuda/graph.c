/*
 * plugins/cuda/graph.c - the JIT's replays as CUDA graphs (tinygrad's
 * CUDAGraph): the recorded launches become kernel nodes of one graph,
 * each depending on the one before (a replay sees the writes in
 * order, as launches on one stream would), instantiated once; a run
 * updates the nodes whose buffers or values changed and launches the
 * whole graph with one call.
 *
 * The graph entries are optional in the driver (CU_GRAPH_API): without
 * them graph_new declines with TG_EUNSUPPORTED and a core of ABI 0.6 or
 * later launches kernel by kernel.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"

struct cu_gnode {
	CUgraphNode node;
	void *prog;          /* the loaded program, for messages */
	CU_KERNEL_NODE kn;   /* func and geometry as recorded */
	size_t nbufs, nvals;
	CUdeviceptr *ptrs;   /* the arguments last set, to skip updates */
	int *vals;
};

struct cu_graph {
	CUgraph graph;
	CUgraphExec exec;
	size_t n;
	struct cu_gnode *nodes;
};

void cu_graph_free(struct tg_device *dev, void *graph)
{
	struct cu_ctx *ctx = dev->ctx;
	struct cu_graph *g = graph;

	if (g == NULL)
		return;
	if (g->exec != NULL)
		ctx->drv.cuGraphExecDestroy(g->exec);
	if (g->graph != NULL)
		ctx->drv.cuGraphDestroy(g->graph);
	for (size_t i = 0; g->nodes != NULL && i < g->n; i++) {
		free(g->nodes[i].ptrs);
		free(g->nodes[i].vals);
	}
	free(g->nodes);
	free(g);
}

/* Whether ptrs and vals differ from the arguments node nd holds,
 * which they then become. */
static int node_args(struct cu_gnode *nd, const CUdeviceptr *ptrs,
                     const int *vals)
{
	if (!memcmp(nd->ptrs, ptrs, nd->nbufs * sizeof(*ptrs)) &&
	    !memcmp(nd->vals, vals, nd->nvals * sizeof(*vals)))
		return 0;
	memcpy(nd->ptrs, ptrs, nd->nbufs * sizeof(*ptrs));
	memcpy(nd->vals, vals, nd->nvals * sizeof(*vals));
	return 1;
}

/* The parameters of launch i of prog in *args; errors name the entry
 * (`op`), the launch and the kernel. */
static int args_of(struct cu_ctx *ctx, const char *op, size_t i,
                   const void *prog, const struct tg_launch *a,
                   struct cu_args *args)
{
	char what[160];

	snprintf(what, sizeof(what), "cuda %s: launch %zu (%s)", op, i,
	         cu_program_name(prog));
	return cu_launch_params(ctx, what, a, args);
}

/* Records launch i as a node after node i-1. */
static int add_node(struct cu_ctx *ctx, struct cu_graph *g, size_t i,
                    void *prog, const struct tg_launch *a)
{
	struct cu_gnode *nd = &g->nodes[i];
	struct cu_geometry geo;
	struct cu_args args;
	CUresult r;
	int ret;

	if ((ret = cu_launch_geometry(ctx, prog, a, &geo)) != 0 ||
	    (ret = args_of(ctx, "graph_new", i, prog, a, &args)) != 0)
		return ret;
	nd->nbufs = a->nbufs;
	nd->nvals = a->nvals;
	nd->ptrs = calloc(a->nbufs + 1, sizeof(*nd->ptrs));
	nd->vals = calloc(a->nvals + 1, sizeof(*nd->vals));
	if (nd->ptrs == NULL || nd->vals == NULL)
		return ctx->host->set_error(ctx->host, TG_ENOMEM, "cuda "
		       "graph_new: out of host memory at launch %zu", i);
	node_args(nd, args.ptrs, args.vals);
	nd->prog = prog;
	nd->kn = (CU_KERNEL_NODE){ .func = cu_program_func(prog) };
	memcpy(nd->kn.grid, geo.grid, sizeof(geo.grid));
	memcpy(nd->kn.block, geo.block, sizeof(geo.block));
	nd->kn.params = args.kargs;  /* copied by the driver */
	r = ctx->drv.cuGraphAddKernelNode(&nd->node, g->graph,
	                                  i ? &g->nodes[i - 1].node : NULL,
	                                  i ? 1 : 0, &nd->kn);
	nd->kn.params = NULL;
	return r == CUDA_SUCCESS ? 0
	       : cu_fail(ctx, r, "cuGraphAddKernelNode (launch %zu of %zu)", i,
	                 g->n);
}

int cu_graph_new(struct tg_device *dev, void *const *progs,
                 struct tg_launch *const *launches, size_t n, void **graph)
{
	struct cu_ctx *ctx = dev->ctx;
	struct cu_graph *g;
	CUresult r;
	int ret;

	if (ctx->drv.no_graphs != NULL)  /* cores before 0.6: an error */
		return ctx->host->set_error(ctx->host,
		       ctx->host->abi_minor >= 6 ? TG_EUNSUPPORTED : TG_ERUNTIME,
		       "cuda graph_new: %s has no %s", ctx->drv.path,
		       ctx->drv.no_graphs);
	if ((ret = cu_enter(ctx, "graph_new")) != 0)
		return ret;
	if ((g = calloc(1, sizeof(*g))) == NULL ||
	    (g->nodes = calloc(n + 1, sizeof(*g->nodes))) == NULL) {
		free(g);
		return ctx->host->set_error(ctx->host, TG_ENOMEM, "cuda "
		       "graph_new: out of host memory for %zu launches", n);
	}
	g->n = n;
	if ((r = ctx->drv.cuGraphCreate(&g->graph, 0)) != CUDA_SUCCESS)
		ret = cu_fail(ctx, r, "cuGraphCreate");
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = add_node(ctx, g, i, progs[i], launches[i]);
	if (ret == 0 &&
	    (r = ctx->drv.cuGraphInstantiateWithFlags(&g->exec, g->graph, 0))
	    != CUDA_SUCCESS)
		ret = cu_fail(ctx, r, "cuGraphInstantiateWithFlags (%zu "
		              "kernels)", n);
	if (ret != 0) {
		cu_graph_free(dev, g);
		return ret;
	}
	*graph = g;
	return 0;
}

/* Sets node i's parameters where launch a changed them. */
static int update_node(struct cu_ctx *ctx, struct cu_graph *g, size_t i,
                       const struct tg_launch *a)
{
	struct cu_gnode *nd = &g->nodes[i];
	struct cu_args args;
	CUresult r;
	int ret;

	if (a->nbufs != nd->nbufs || a->nvals != nd->nvals)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "cuda "
		       "graph_run: launch %zu has %zu buffers and %zu values, "
		       "recorded with %zu and %zu", i, a->nbufs, a->nvals,
		       nd->nbufs, nd->nvals);
	if ((ret = args_of(ctx, "graph_run", i, nd->prog, a, &args)) != 0 ||
	    !node_args(nd, args.ptrs, args.vals))
		return ret;
	nd->kn.params = args.kargs;
	r = ctx->drv.cuGraphExecKernelNodeSetParams(g->exec, nd->node, &nd->kn);
	nd->kn.params = NULL;
	return r == CUDA_SUCCESS ? 0
	       : cu_fail(ctx, r, "cuGraphExecKernelNodeSetParams (launch %zu)",
	                 i);
}

int cu_graph_run(struct tg_device *dev, void *graph,
                 struct tg_launch *const *launches, size_t n)
{
	struct cu_ctx *ctx = dev->ctx;
	struct cu_graph *g = graph;
	CUresult r;
	int ret;

	if (n != g->n)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "cuda "
		       "graph_run: %zu launches, the graph recorded %zu", n,
		       g->n);
	if ((ret = cu_enter(ctx, "graph_run")) != 0)
		return ret;
	for (size_t i = 0; i < n; i++)
		if ((ret = update_node(ctx, g, i, launches[i])) != 0)
			return ret;
	r = ctx->drv.cuGraphLaunch(g->exec, NULL);
	return r == CUDA_SUCCESS ? 0
	       : cu_fail(ctx, r, "cuGraphLaunch (%zu kernels)", n);
}

#include "config.h"
/*
 * graph.c - graphs: a graph's launches recorded once into a command
 * buffer of its own (pipelines per work-group size, one descriptor set
 * per launch from the graph's pool, push constants for the values, and
 * the barriers that launch batching records), then submitted again by
 * every run with a fence of its own.
 *
 * A run first submits the batch of launches queued before it, so that
 * they run first, then waits for the graph's previous submission if it
 * is still in flight: only then may its descriptor sets change.  A set
 * is rewritten when a buffer changed (compared by VkBuffer, offset and
 * size) and every set is rewritten after any VkBuffer was destroyed (a
 * new buffer may reuse a destroyed one's handle).  Rewriting a set that
 * is bound in a recorded command buffer invalidates it, and the values
 * are recorded into it as push constants, so any change records the
 * command buffer again (n dispatches: cheap next to a submit).  Flushes
 * (synchronize, copies, frees) wait for every graph in flight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan.h"

/* One launch as recorded. */
struct node {
	struct vk_program *prog;      /* borrowed */
	VkPipeline pipe;              /* borrowed from prog */
	VkDescriptorSet set;          /* from the graph's pool (nbind > 0) */
	VkDescriptorBufferInfo *info; /* prog->nbind of the graph's infos */
	struct vk_geometry geo;
	uint32_t nvals;
	int32_t vals[VK_PUSH_BYTES / 4];
};

struct vk_graph {
	size_t n;
	struct node *nodes;            /* owned, n of them */
	VkDescriptorBufferInfo *infos; /* owned: every node's bindings */
	VkDescriptorPool pool;         /* VK_NULL_HANDLE: nothing binds */
	VkCommandBuffer cb;            /* from ctx->q.cmd_pool */
	VkFence fence;
	int pending;                   /* submitted, fence not waited for */
	int stale;                     /* cb must be recorded again */
	uint64_t frees;                /* ctx->q.frees when sets were written */
	struct vk_graph *next;         /* in ctx->q.inflight */
};

/* ------------------------------------------------------------------ */
/* Descriptor sets and the command buffer                              */
/* ------------------------------------------------------------------ */

static void fill_info(struct node *nd, const struct tg_launch *a)
{
	for (uint32_t k = 0; k < nd->prog->nbind; k++) {
		const struct vk_mem *m = a->bufs[k];

		nd->info[k] = (VkDescriptorBufferInfo){ m->buf, m->offset,
		                                        m->size };
	}
}

static int info_changed(const struct node *nd, const struct tg_launch *a)
{
	for (uint32_t k = 0; k < nd->prog->nbind; k++) {
		const struct vk_mem *m = a->bufs[k];

		if (nd->info[k].buffer != m->buf ||
		    nd->info[k].offset != m->offset ||
		    nd->info[k].range != m->size)
			return 1;
	}
	return 0;
}

/* Points the node's set at its infos.  The set must not be in use. */
static void write_set(struct vk_ctx *ctx, const struct node *nd)
{
	VkWriteDescriptorSet w[64];
	uint32_t nbind = nd->prog->nbind;

	for (uint32_t k = 0; k < nbind; k++)
		w[k] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstSet = nd->set,
			.dstBinding = k,
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &nd->info[k],
		};
	if (nbind > 0)
		vkUpdateDescriptorSets(ctx->device, nbind, w, 0, NULL);
}

/* Writes to the buffers before the graph (earlier batches and graphs:
 * dispatches and copies) are seen by its first dispatch. */
static void entry_barrier(VkCommandBuffer cb)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT |
		                 VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
		                 VK_ACCESS_SHADER_WRITE_BIT,
	};

	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
	                     VK_PIPELINE_STAGE_TRANSFER_BIT,
	                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
	                     0, NULL, 0, NULL);
}

static void record_node(VkCommandBuffer cb, const struct node *nd,
                        VkPipeline *bound)
{
	const struct vk_program *p = nd->prog;

	if (nd->pipe != *bound)
		vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, nd->pipe);
	*bound = nd->pipe;
	if (p->nbind > 0)
		vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE,
		                        p->layout, 0, 1, &nd->set, 0, NULL);
	if (nd->nvals > 0)
		vkCmdPushConstants(cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT,
		                   0, 4 * nd->nvals, nd->vals);
	vkCmdDispatch(cb, nd->geo.groups[0], nd->geo.groups[1],
	              nd->geo.groups[2]);
	vk_dispatch_barrier(cb);
}

/* Records every launch.  The command buffer must not be pending. */
static int record(struct vk_ctx *ctx, struct vk_graph *g)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
	};
	VkPipeline bound = VK_NULL_HANDLE;
	VkResult r = vkBeginCommandBuffer(g->cb, &bi); /* resets it */

	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "graph of %zu launches: "
		               "vkBeginCommandBuffer", g->n);
	entry_barrier(g->cb);
	for (size_t i = 0; i < g->n; i++)
		record_node(g->cb, &g->nodes[i], &bound);
	vk_host_barrier(g->cb);
	r = vkEndCommandBuffer(g->cb);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "graph of %zu launches: "
		               "vkEndCommandBuffer", g->n);
	g->stale = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Recording a graph                                                   */
/* ------------------------------------------------------------------ */

/* Checks launch i and fills its node (pipeline included: lock held). */
static int node_new(struct vk_ctx *ctx, struct node *nd, size_t i,
                    struct vk_program *p, const struct tg_launch *a)
{
	char what[64];
	int ret;

	snprintf(what, sizeof what, "vulkan graph_new: launch %zu", i);
	if (!TG_HAS(a, struct tg_launch, elapsed_s))
		return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: struct "
		       "tg_launch of %zu bytes, need %zu", what, a->struct_size,
		       TG_STRUCT_SIZE(struct tg_launch, elapsed_s));
	nd->prog = p;
	nd->nvals = (uint32_t)a->nvals;
	if ((ret = vk_geometry(ctx, what, a, &nd->geo)) != 0 ||
	    (ret = vk_check_args(ctx, what, p, a, nd->vals)) != 0 ||
	    (ret = vk_pipeline_get(ctx, p, nd->geo.wg, &nd->pipe)) != 0)
		return ret;
	fill_info(nd, a);
	return 0;
}

/* The descriptor pool, one set per node that binds buffers, written. */
static int sets_new(struct vk_ctx *ctx, struct vk_graph *g, uint32_t nsets,
                    uint32_t ndescs)
{
	VkDescriptorPoolSize size = {
		.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		.descriptorCount = ndescs,
	};
	VkDescriptorPoolCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = nsets,
		.poolSizeCount = 1,
		.pPoolSizes = &size,
	};
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorSetCount = 1,
	};
	VkResult r = nsets == 0 ? VK_SUCCESS :
		vkCreateDescriptorPool(ctx->device, &pci, NULL, &g->pool);

	ai.descriptorPool = g->pool;
	for (size_t i = 0; i < g->n && r == VK_SUCCESS; i++) {
		struct node *nd = &g->nodes[i];

		if (nd->prog->nbind == 0)
			continue;
		ai.pSetLayouts = &nd->prog->set_layout;
		r = vkAllocateDescriptorSets(ctx->device, &ai, &nd->set);
		if (r == VK_SUCCESS)
			write_set(ctx, nd);
	}
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "graph_new: %u descriptor sets of %u "
		               "buffers", nsets, ndescs);
	g->frees = ctx->q.frees;
	return 0;
}

/* The fence and the command buffer, recorded. */
static int cb_new(struct vk_ctx *ctx, struct vk_graph *g)
{
	VkCommandBufferAllocateInfo cai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = ctx->q.cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkFenceCreateInfo fci = {
		.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkResult r = vkCreateFence(ctx->device, &fci, NULL, &g->fence);

	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "graph_new: vkCreateFence");
	r = vkAllocateCommandBuffers(ctx->device, &cai, &g->cb);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "graph_new: vkAllocateCommandBuffers");
	return record(ctx, g);
}

/* Nodes, sets and the command buffer of g, under the lock. */
static int build(struct vk_ctx *ctx, struct vk_graph *g, void *const *progs,
                 struct tg_launch *const *launches)
{
	uint32_t nsets = 0, ndescs = 0;
	int ret;

	for (size_t i = 0; i < g->n; i++) {
		g->nodes[i].info = g->infos + ndescs;
		ret = node_new(ctx, &g->nodes[i], i, progs[i], launches[i]);
		if (ret != 0)
			return ret;
		nsets += g->nodes[i].prog->nbind > 0;
		ndescs += g->nodes[i].prog->nbind;
	}
	if ((ret = sets_new(ctx, g, nsets, ndescs)) != 0)
		return ret;
	return cb_new(ctx, g);
}

/* Every program's bindings, for the infos array. */
static size_t count_binds(void *const *progs, size_t n)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += ((const struct vk_program *)progs[i])->nbind;
	return total;
}

int vk_graph_new(struct tg_device *dev, void *const *progs,
                 struct tg_launch *const *launches, size_t n, void **graph)
{
	struct vk_ctx *ctx = dev->ctx;
	size_t nbinds = count_binds(progs, n);
	struct vk_graph *g = calloc(1, sizeof *g);
	int ret;

	if (g == NULL ||
	    (g->nodes = calloc(n ? n : 1, sizeof *g->nodes)) == NULL ||
	    (g->infos = calloc(nbinds ? nbinds : 1, sizeof *g->infos)) == NULL)
		ret = ctx->host->set_error(ctx->host, TG_ENOMEM, "vulkan "
		       "graph_new: out of host memory for %zu launches", n);
	else {
		g->n = n;
		pthread_mutex_lock(&ctx->lock);
		ret = build(ctx, g, progs, launches);
		pthread_mutex_unlock(&ctx->lock);
	}
	if (ret != 0) {
		vk_graph_free(dev, g);
		return ret;
	}
	*graph = g;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Running                                                             */
/* ------------------------------------------------------------------ */

/* Waits for g's submission, if any, and takes it off the in-flight
 * list.  Lock held. */
static int graph_wait(struct vk_ctx *ctx, struct vk_graph *g)
{
	struct vk_graph **pp;
	VkResult r;

	if (!g->pending)
		return 0;
	r = vkWaitForFences(ctx->device, 1, &g->fence, VK_TRUE, UINT64_MAX);
	vkResetFences(ctx->device, 1, &g->fence);
	g->pending = 0;
	for (pp = &ctx->q.inflight; *pp != g; pp = &(*pp)->next)
		;
	*pp = g->next;
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "graph of %zu launches: "
		               "vkWaitForFences", g->n);
	return 0;
}

int vk_graphs_wait(struct vk_ctx *ctx)
{
	int ret = 0, r;

	while (ctx->q.inflight != NULL)
		if ((r = graph_wait(ctx, ctx->q.inflight)) != 0 && ret == 0)
			ret = r;
	return ret;
}

/* This run's values for node i, checked; an error names the launch. */
static int run_vals(struct vk_ctx *ctx, const struct node *nd, size_t i,
                    const struct tg_launch *a, int32_t *vals)
{
	char what[64];

	if (vk_check_args(ctx, "vulkan graph_run", nd->prog, a, vals) == 0)
		return 0;
	snprintf(what, sizeof what, "vulkan graph_run: launch %zu", i);
	return vk_check_args(ctx, what, nd->prog, a, vals);
}

/* Brings the graph to this run's buffers and values.  Its last
 * submission has finished.  Lock held. */
static int update(struct vk_ctx *ctx, struct vk_graph *g,
                  struct tg_launch *const *launches)
{
	int all = g->frees != ctx->q.frees, ret;
	int32_t vals[VK_PUSH_BYTES / 4];

	for (size_t i = 0; i < g->n; i++) {
		struct node *nd = &g->nodes[i];

		if ((ret = run_vals(ctx, nd, i, launches[i], vals)) != 0)
			return ret;
		if (memcmp(vals, nd->vals, 4 * nd->nvals) != 0) {
			memcpy(nd->vals, vals, 4 * nd->nvals);
			g->stale = 1;
		}
		if (all || info_changed(nd, launches[i])) {
			fill_info(nd, launches[i]);
			write_set(ctx, nd);
			g->stale |= nd->prog->nbind > 0;
		}
	}
	g->frees = ctx->q.frees;
	return g->stale ? record(ctx, g) : 0;
}

static int submit(struct vk_ctx *ctx, struct vk_graph *g)
{
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &g->cb,
	};
	VkResult r = vkQueueSubmit(ctx->vq, 1, &si, g->fence);

	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "graph of %zu launches: vkQueueSubmit",
		               g->n);
	g->pending = 1;
	g->next = ctx->q.inflight;
	ctx->q.inflight = g;
	return 0;
}

/* Returns once submitted; flushes and frees wait for it. */
int vk_graph_run(struct tg_device *dev, void *graph,
                 struct tg_launch *const *launches, size_t n)
{
	struct vk_ctx *ctx = dev->ctx;
	struct vk_graph *g = graph;
	int ret;

	if (n != g->n)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "vulkan "
		       "graph_run: %zu launches, the graph recorded %zu", n,
		       g->n);
	pthread_mutex_lock(&ctx->lock);
	if ((ret = vk_queue_submit(ctx)) == 0 &&
	    (ret = graph_wait(ctx, g)) == 0 &&
	    (ret = update(ctx, g, launches)) == 0)
		ret = submit(ctx, g);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* Waits for the graph's submission first: the core frees graphs
 * without synchronizing. */
void vk_graph_free(struct tg_device *dev, void *graph)
{
	struct vk_ctx *ctx = dev->ctx;
	struct vk_graph *g = graph;

	if (g == NULL)
		return;
	pthread_mutex_lock(&ctx->lock);
	graph_wait(ctx, g);
	if (g->cb != VK_NULL_HANDLE)
		vkFreeCommandBuffers(ctx->device, ctx->q.cmd_pool, 1, &g->cb);
	pthread_mutex_unlock(&ctx->lock);
	vkDestroyFence(ctx->device, g->fence, NULL);
	vkDestroyDescriptorPool(ctx->device, g->pool, NULL);
	free(g->nodes);
	free(g->infos);
	free(g);
}

#include "config.h"
/*
 * queue.c - launches.  A launch without wait is recorded into the open
 * command buffer (pipeline, descriptor set, push constants, dispatch and
 * a compute -> compute|transfer barrier) and nothing is submitted until
 * synchronize, a copy, a launch with wait, a freed buffer or program, or
 * VK_BATCH_MAX dispatches.  Descriptor sets come from one pool per batch
 * that is reset when the batch's fence signals; a batch that would
 * exhaust it is submitted first.  A launch with wait submits what was
 * recorded before it, then runs alone between two timestamps.  Graphs
 * (graph.c) submit on their own; flushing waits for them too, since
 * every caller of a flush (synchronize, copies, frees) needs all queued
 * work done.
 *
 * Known limit: a submit always waits for its fence, so the host and the
 * device never overlap across batches.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vulkan.h"

/* ------------------------------------------------------------------ */
/* The batch                                                           */
/* ------------------------------------------------------------------ */

static int pools_new(struct vk_ctx *ctx)
{
	VkDescriptorPoolSize size = {
		.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		.descriptorCount = VK_POOL_DESCS,
	};
	VkDescriptorPoolCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = VK_BATCH_MAX,
		.poolSizeCount = 1,
		.pPoolSizes = &size,
	};
	VkQueryPoolCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
		.queryType = VK_QUERY_TYPE_TIMESTAMP,
		.queryCount = 2,
	};
	VkResult r;

	r = vkCreateDescriptorPool(ctx->device, &dci, NULL, &ctx->q.desc_pool);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "open: vkCreateDescriptorPool");
	if (ctx->timestamp_bits == 0)
		return 0;
	r = vkCreateQueryPool(ctx->device, &qci, NULL, &ctx->q.query_pool);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "open: vkCreateQueryPool");
	return 0;
}

int vk_queue_init(struct vk_ctx *ctx)
{
	VkCommandPoolCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = ctx->qfamily,
	};
	VkCommandBufferAllocateInfo cai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkFenceCreateInfo fci = {
		.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkResult r;

	r = vkCreateCommandPool(ctx->device, &pci, NULL, &ctx->q.cmd_pool);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "open: vkCreateCommandPool");
	cai.commandPool = ctx->q.cmd_pool;
	if ((r = vkAllocateCommandBuffers(ctx->device, &cai, &ctx->q.cb)))
		return vk_fail(ctx, r, "open: vkAllocateCommandBuffers");
	if ((r = vkCreateFence(ctx->device, &fci, NULL, &ctx->q.fence)))
		return vk_fail(ctx, r, "open: vkCreateFence");
	return pools_new(ctx);
}

/* NULL handles are allowed: close also undoes a half-done open. */
void vk_queue_destroy(struct vk_ctx *ctx)
{
	vkDestroyQueryPool(ctx->device, ctx->q.query_pool, NULL);
	vkDestroyDescriptorPool(ctx->device, ctx->q.desc_pool, NULL);
	vkDestroyFence(ctx->device, ctx->q.fence, NULL);
	vkDestroyCommandPool(ctx->device, ctx->q.cmd_pool, NULL);
	memset(&ctx->q, 0, sizeof ctx->q);
}

int vk_queue_begin(struct vk_ctx *ctx)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VkResult r;

	if (ctx->q.recording)
		return 0;
	if ((r = vkBeginCommandBuffer(ctx->q.cb, &bi)) != VK_SUCCESS)
		return vk_fail(ctx, r, "vkBeginCommandBuffer");
	ctx->q.recording = 1;
	return 0;
}

/* Empties the batch, whether or not it ran. */
static void batch_reset(struct vk_ctx *ctx)
{
	vkResetCommandBuffer(ctx->q.cb, 0);
	vkResetDescriptorPool(ctx->device, ctx->q.desc_pool, 0);
	ctx->q.recording = 0;
	ctx->q.ndispatch = ctx->q.nsets = ctx->q.ndescs = 0;
}

/* Device writes become visible to the host once the fence signals. */
void vk_host_barrier(VkCommandBuffer cb)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT |
		                 VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_HOST_READ_BIT |
		                 VK_ACCESS_HOST_WRITE_BIT,
	};

	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
	                     VK_PIPELINE_STAGE_TRANSFER_BIT,
	                     VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL,
	                     0, NULL);
}

static VkResult submit_wait(struct vk_ctx *ctx)
{
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &ctx->q.cb,
	};
	VkResult r = vkQueueSubmit(ctx->vq, 1, &si, ctx->q.fence);

	if (r != VK_SUCCESS)
		return r;
	r = vkWaitForFences(ctx->device, 1, &ctx->q.fence, VK_TRUE,
	                    UINT64_MAX);
	vkResetFences(ctx->device, 1, &ctx->q.fence);
	return r;
}

int vk_queue_submit(struct vk_ctx *ctx)
{
	uint32_t n = ctx->q.ndispatch;
	VkResult r;

	if (!ctx->q.recording)
		return 0;
	vk_host_barrier(ctx->q.cb);
	r = vkEndCommandBuffer(ctx->q.cb);
	if (r == VK_SUCCESS)
		r = submit_wait(ctx);
	batch_reset(ctx);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "submit of %u dispatches", n);
	return 0;
}

int vk_queue_flush(struct vk_ctx *ctx)
{
	int ret = vk_queue_submit(ctx), gret = vk_graphs_wait(ctx);

	return ret != 0 ? ret : gret;
}

int vk_synchronize(struct tg_device *dev)
{
	struct vk_ctx *ctx = dev->ctx;
	int ret;

	pthread_mutex_lock(&ctx->lock);
	ret = vk_queue_flush(ctx);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Geometry                                                            */
/* ------------------------------------------------------------------ */

/* local {1,1,1}: groups of VK_FLAT_GROUP over the flattened range,
 * spread over x and then y when x runs out. */
static int flat(struct vk_ctx *ctx, const char *what,
                const struct tg_launch *a, struct vk_geometry *g)
{
	const uint32_t *max = ctx->props.limits.maxComputeWorkGroupCount;
	uint64_t total = a->global[0], groups, x, y;

	for (int i = 1; i < 3; i++)
		total = a->global[i] && total > UINT32_MAX / a->global[i]
		        ? (uint64_t)UINT32_MAX + 1 : total * a->global[i];
	if (total > UINT32_MAX)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: global "
		       "%zu x %zu x %zu exceeds 2^32 - 1 invocations", what,
		       a->global[0], a->global[1], a->global[2]);
	groups = (total + VK_FLAT_GROUP - 1) / VK_FLAT_GROUP;
	x = groups < max[0] ? groups : max[0];
	y = (groups + x - 1) / x;
	if (y > max[1])
		return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: %llu "
		       "invocations need %llu x %llu groups of %d, the limit "
		       "is %u x %u", what, (unsigned long long)total,
		       (unsigned long long)x, (unsigned long long)y,
		       VK_FLAT_GROUP, max[0], max[1]);
	*g = (struct vk_geometry){ .wg = { VK_FLAT_GROUP, 1, 1 },
	                           .groups = { (uint32_t)x, (uint32_t)y, 1 } };
	return 0;
}

static int bad_local(struct vk_ctx *ctx, const char *what,
                     const struct tg_launch *a, const char *why)
{
	return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: global "
	       "(%zu,%zu,%zu) local (%zu,%zu,%zu): %s", what, a->global[0],
	       a->global[1], a->global[2], a->local[0], a->local[1],
	       a->local[2], why);
}

/* Explicit work-groups: global[i] / local[i] groups per axis. */
static int grouped(struct vk_ctx *ctx, const char *what,
                   const struct tg_launch *a, struct vk_geometry *g)
{
	const VkPhysicalDeviceLimits *l = &ctx->props.limits;
	char why[160];

	for (int i = 0; i < 3; i++) {
		size_t groups = a->local[i] ? a->global[i] / a->local[i] : 0;

		if (a->local[i] == 0 || a->global[i] % a->local[i] != 0)
			return bad_local(ctx, what, a, "global is not a "
			                 "multiple of local");
		if (a->local[i] > l->maxComputeWorkGroupSize[i]) {
			snprintf(why, sizeof why, "local exceeds "
			         "maxComputeWorkGroupSize (%u,%u,%u)",
			         l->maxComputeWorkGroupSize[0],
			         l->maxComputeWorkGroupSize[1],
			         l->maxComputeWorkGroupSize[2]);
			return bad_local(ctx, what, a, why);
		}
		if (groups > l->maxComputeWorkGroupCount[i]) {
			snprintf(why, sizeof why, "%zu groups on axis %d exceed"
			         " maxComputeWorkGroupCount %u", groups, i,
			         l->maxComputeWorkGroupCount[i]);
			return bad_local(ctx, what, a, why);
		}
		g->wg[i] = (uint32_t)a->local[i];
		g->groups[i] = (uint32_t)groups;
	}
	if ((uint64_t)g->wg[0] * g->wg[1] * g->wg[2] >
	    l->maxComputeWorkGroupInvocations) {
		snprintf(why, sizeof why, "work-group exceeds "
		         "maxComputeWorkGroupInvocations %u",
		         l->maxComputeWorkGroupInvocations);
		return bad_local(ctx, what, a, why);
	}
	return 0;
}

int vk_geometry(struct vk_ctx *ctx, const char *what,
                const struct tg_launch *a, struct vk_geometry *g)
{
	if (a->local[0] == 1 && a->local[1] == 1 && a->local[2] == 1)
		return flat(ctx, what, a, g);
	return grouped(ctx, what, a, g);
}

/* ------------------------------------------------------------------ */
/* Arguments                                                           */
/* ------------------------------------------------------------------ */

int vk_check_args(struct vk_ctx *ctx, const char *what,
                  const struct vk_program *p, const struct tg_launch *a,
                  int32_t vals[])
{
	const struct tg_host *host = ctx->host;
	uint32_t range = ctx->props.limits.maxStorageBufferRange;

	if (a->nbufs < p->nbind)
		return host->set_error(host, TG_EINVAL, "%s '%s': %zu buffers,"
		       " the shader binds %u", what, p->name, a->nbufs,
		       p->nbind);
	for (uint32_t k = 0; k < p->nbind; k++)
		if (((const struct vk_mem *)a->bufs[k])->size > range)
			return host->set_error(host, TG_EUNSUPPORTED, "%s '%s':"
			       " buffer %u of %llu bytes exceeds "
			       "maxStorageBufferRange %u", what, p->name, k,
			       (unsigned long long)((const struct vk_mem *)
			       a->bufs[k])->size, range);
	if (a->nvals > VK_PUSH_BYTES / 4)
		return host->set_error(host, TG_EUNSUPPORTED, "%s '%s': %zu "
		       "values, at most %d fit the push constants", what,
		       p->name, a->nvals, VK_PUSH_BYTES / 4);
	for (size_t i = 0; i < a->nvals; i++) {
		if (a->vals[i] < INT32_MIN || a->vals[i] > INT32_MAX)
			return host->set_error(host, TG_EINVAL, "%s '%s': value"
			       " %zu = %lld does not fit int32", what, p->name,
			       i, (long long)a->vals[i]);
		vals[i] = (int32_t)a->vals[i];
	}
	return 0;
}

/* Makes room in the batch for one dispatch binding `nbind` buffers. */
static int reserve(struct vk_ctx *ctx, uint32_t nbind)
{
	if (ctx->q.ndispatch >= VK_BATCH_MAX ||
	    ctx->q.nsets >= VK_BATCH_MAX ||
	    ctx->q.ndescs + nbind > VK_POOL_DESCS)
		return vk_queue_submit(ctx);
	return 0;
}

/* A descriptor set for the buffers; a pool that runs dry anyway
 * (fragmentation) is flushed once and tried again. */
static int bind_buffers(struct vk_ctx *ctx, const struct vk_program *p,
                        const struct tg_launch *a, VkDescriptorSet *set)
{
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = ctx->q.desc_pool,
		.descriptorSetCount = 1,
		.pSetLayouts = &p->set_layout,
	};
	VkDescriptorBufferInfo info[64];
	VkWriteDescriptorSet w[64];
	VkResult r = vkAllocateDescriptorSets(ctx->device, &ai, set);
	int ret;

	if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL) {
		if ((ret = vk_queue_submit(ctx)) || (ret = vk_queue_begin(ctx)))
			return ret;
		r = vkAllocateDescriptorSets(ctx->device, &ai, set);
	}
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "launch '%s': vkAllocateDescriptorSets",
		               p->name);
	for (uint32_t k = 0; k < p->nbind; k++) {
		const struct vk_mem *m = a->bufs[k];

		info[k] = (VkDescriptorBufferInfo){ m->buf, m->offset,
		                                    m->size };
		w[k] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstSet = *set,
			.dstBinding = k,
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &info[k],
		};
	}
	vkUpdateDescriptorSets(ctx->device, p->nbind, w, 0, NULL);
	ctx->q.nsets++;
	ctx->q.ndescs += p->nbind;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Recording                                                           */
/* ------------------------------------------------------------------ */

/* Later dispatches and copies see this dispatch's writes. */
void vk_dispatch_barrier(VkCommandBuffer cb)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
		                 VK_ACCESS_SHADER_WRITE_BIT |
		                 VK_ACCESS_TRANSFER_READ_BIT |
		                 VK_ACCESS_TRANSFER_WRITE_BIT,
	};

	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
	                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
	                     VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
	                     NULL, 0, NULL);
}

/* Records one dispatch (between two timestamps when `timed`). */
static int record(struct vk_ctx *ctx, const struct vk_program *p,
                  const struct tg_launch *a, const struct vk_geometry *g,
                  VkPipeline pipe, const int32_t *vals, int timed)
{
	VkCommandBuffer cb;
	VkDescriptorSet set = VK_NULL_HANDLE;
	int ret;

	if ((ret = reserve(ctx, p->nbind)) || (ret = vk_queue_begin(ctx)))
		return ret;
	if (p->nbind > 0 && (ret = bind_buffers(ctx, p, a, &set)))
		return ret;
	cb = ctx->q.cb;
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
	if (p->nbind > 0)
		vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE,
		                        p->layout, 0, 1, &set, 0, NULL);
	if (a->nvals > 0)
		vkCmdPushConstants(cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT,
		                   0, (uint32_t)(4 * a->nvals), vals);
	if (timed) {
		vkCmdResetQueryPool(cb, ctx->q.query_pool, 0, 2);
		vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
		                    ctx->q.query_pool, 0);
	}
	vkCmdDispatch(cb, g->groups[0], g->groups[1], g->groups[2]);
	if (timed)
		vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
		                    ctx->q.query_pool, 1);
	vk_dispatch_barrier(cb);
	ctx->q.ndispatch++;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Device time between the two timestamps, in seconds. */
static int read_timestamps(struct vk_ctx *ctx, const char *name,
                           double *out)
{
	uint64_t t[2], mask = ctx->timestamp_bits >= 64 ? UINT64_MAX
	                      : ((uint64_t)1 << ctx->timestamp_bits) - 1;
	VkResult r = vkGetQueryPoolResults(ctx->device, ctx->q.query_pool, 0,
	                                   2, sizeof t, t, sizeof t[0],
	                                   VK_QUERY_RESULT_64_BIT |
	                                   VK_QUERY_RESULT_WAIT_BIT);

	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "launch '%s': vkGetQueryPoolResults",
		               name);
	*out = (double)((t[1] - t[0]) & mask) *
	       (double)ctx->props.limits.timestampPeriod * 1e-9;
	return 0;
}

/* Submits earlier work, runs this dispatch alone and times it. */
static int run_timed(struct vk_ctx *ctx, const struct vk_program *p,
                     struct tg_launch *a, const struct vk_geometry *g,
                     VkPipeline pipe, const int32_t *vals)
{
	int timed = ctx->q.query_pool != VK_NULL_HANDLE;
	double start;
	int ret;

	if ((ret = vk_queue_flush(ctx)) != 0 ||
	    (ret = record(ctx, p, a, g, pipe, vals, timed)) != 0)
		return ret;
	start = now_s();
	if ((ret = vk_queue_flush(ctx)) != 0)
		return ret;
	a->elapsed_s = now_s() - start;
	return timed ? read_timestamps(ctx, p->name, &a->elapsed_s) : 0;
}

int vk_launch(struct tg_device *dev, void *prog, struct tg_launch *args)
{
	struct vk_ctx *ctx = dev->ctx;
	struct vk_program *p = prog;
	int32_t vals[VK_PUSH_BYTES / 4];
	struct vk_geometry g;
	VkPipeline pipe;
	int ret;

	if (!TG_HAS(args, struct tg_launch, elapsed_s))
		return ctx->host->set_error(ctx->host, TG_EINVAL, "vulkan "
		       "launch: struct tg_launch of %zu bytes, need %zu",
		       args->struct_size,
		       TG_STRUCT_SIZE(struct tg_launch, elapsed_s));
	if ((ret = vk_geometry(ctx, "vulkan launch", args, &g)) != 0 ||
	    (ret = vk_check_args(ctx, "vulkan launch", p, args, vals)) != 0)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	ret = vk_pipeline_get(ctx, p, g.wg, &pipe);
	if (ret == 0 && args->wait)
		ret = run_timed(ctx, p, args, &g, pipe, vals);
	else if (ret == 0)
		ret = record(ctx, p, args, &g, pipe, vals, 0);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

#include "config.h"
/*
 * memory.c - the allocator: one VkBuffer and VkDeviceMemory per
 * allocation, usable as a storage buffer and as a copy source and
 * target.
 *
 * Memory that is DEVICE_LOCAL, HOST_VISIBLE and HOST_COHERENT (lavapipe,
 * integrated GPUs, resizable BAR) stays mapped and copies are memcpy.
 * Otherwise copies go through a host-visible staging buffer and
 * vkCmdCopyBuffer, in chunks of at most VK_STAGING_MAX bytes.  Either
 * way a copy first submits and waits for all recorded work, which is
 * the simple rule that keeps copies ordered with launches.
 */
#include <stdlib.h>
#include <string.h>

#include "vulkan.h"

#define HOST_BITS (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | \
                   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)

/* Lowest memory type in `bits` having all of `want`, or UINT32_MAX. */
static uint32_t find_type(const struct vk_ctx *ctx, uint32_t bits,
                          VkMemoryPropertyFlags want)
{
	const VkPhysicalDeviceMemoryProperties *m = &ctx->memprops;

	for (uint32_t i = 0; i < m->memoryTypeCount; i++)
		if ((bits >> i & 1) &&
		    (m->memoryTypes[i].propertyFlags & want) == want)
			return i;
	return UINT32_MAX;
}

/* Device memory type: mappable device-local first (unless staging is
 * forced), then device-local, then anything. */
static uint32_t device_type(const struct vk_ctx *ctx, uint32_t bits)
{
	uint32_t t = UINT32_MAX;

	if (!ctx->force_staging)
		t = find_type(ctx, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
		                         HOST_BITS);
	if (t == UINT32_MAX)
		t = find_type(ctx, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
	if (t == UINT32_MAX)
		t = find_type(ctx, bits, 0);
	return t;
}

/* A buffer with its own memory.  host: host-visible memory, mapped. */
static int buffer_new(struct vk_ctx *ctx, VkDeviceSize size, int host,
                      struct vk_mem *m)
{
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
		         VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
		         VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkMemoryAllocateInfo mai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO };
	VkMemoryRequirements req;
	VkResult r;
	uint32_t t;

	*m = (struct vk_mem){ .size = size, .owner = 1 };
	if ((r = vkCreateBuffer(ctx->device, &bci, NULL, &m->buf)) != 0)
		return vk_fail(ctx, r, "alloc: vkCreateBuffer of %llu bytes",
		               (unsigned long long)size);
	vkGetBufferMemoryRequirements(ctx->device, m->buf, &req);
	t = host ? find_type(ctx, req.memoryTypeBits, HOST_BITS)
	         : device_type(ctx, req.memoryTypeBits);
	if (t == UINT32_MAX) {
		r = VK_ERROR_FEATURE_NOT_PRESENT;
		goto out_buffer;
	}
	mai.allocationSize = req.size;
	mai.memoryTypeIndex = t;
	if ((r = vkAllocateMemory(ctx->device, &mai, NULL, &m->mem)) != 0)
		goto out_buffer;
	if ((r = vkBindBufferMemory(ctx->device, m->buf, m->mem, 0)) != 0)
		goto out_memory;
	if ((ctx->memprops.memoryTypes[t].propertyFlags & HOST_BITS) ==
	    HOST_BITS && (host || !ctx->force_staging)) {
		r = vkMapMemory(ctx->device, m->mem, 0, VK_WHOLE_SIZE, 0,
		                (void **)&m->map);
		if (r != VK_SUCCESS)
			goto out_memory;
	}
	return 0;
out_memory:
	vkFreeMemory(ctx->device, m->mem, NULL);
out_buffer:
	vkDestroyBuffer(ctx->device, m->buf, NULL);
	return vk_fail(ctx, r, "alloc: %llu bytes in memory type %d",
	               (unsigned long long)size, (int)t);
}

static void buffer_free(struct vk_ctx *ctx, struct vk_mem *m)
{
	vkDestroyBuffer(ctx->device, m->buf, NULL);
	vkFreeMemory(ctx->device, m->mem, NULL); /* unmaps */
}

int vk_mem_alloc(struct tg_device *dev, size_t size, void **out)
{
	struct vk_ctx *ctx = dev->ctx;
	const struct tg_host *host = ctx->host;
	struct vk_mem *m;
	int ret;

	if (ctx->max_alloc && size > ctx->max_alloc)
		return host->set_error(host, TG_ENOMEM, "vulkan alloc: %zu "
		       "bytes exceed maxMemoryAllocationSize %llu of %s", size,
		       (unsigned long long)ctx->max_alloc,
		       ctx->props.deviceName);
	if ((m = malloc(sizeof *m)) == NULL)
		return host->set_error(host, TG_ENOMEM, "vulkan alloc: out of "
		                       "host memory");
	if ((ret = buffer_new(ctx, size, 0, m)) != 0) {
		free(m);
		return ret;
	}
	*out = m;
	return 0;
}

/* Waits for recorded work and graphs first: they may still use the
 * buffer.  Counted, so that graphs rewrite their descriptor sets: a new
 * buffer may get this one's handle. */
void vk_mem_free(struct tg_device *dev, void *mem, size_t size)
{
	struct vk_ctx *ctx = dev->ctx;

	(void)size;
	pthread_mutex_lock(&ctx->lock);
	vk_queue_flush(ctx); /* a failure leaves nothing in flight */
	buffer_free(ctx, mem);
	ctx->q.frees++;
	pthread_mutex_unlock(&ctx->lock);
	free(mem);
}

/* ------------------------------------------------------------------ */
/* Staging                                                             */
/* ------------------------------------------------------------------ */

int vk_memory_init(struct vk_ctx *ctx)
{
	(void)ctx;
	return 0; /* the staging buffer is made on first use */
}

void vk_memory_destroy(struct vk_ctx *ctx)
{
	if (ctx->staging.buf != VK_NULL_HANDLE)
		buffer_free(ctx, &(struct vk_mem){ .buf = ctx->staging.buf,
		                                   .mem = ctx->staging.mem });
	ctx->staging = (struct vk_staging){ 0 };
}

/* Makes the staging buffer at least `n` bytes.  Lock held, nothing
 * recorded. */
static int staging_reserve(struct vk_ctx *ctx, VkDeviceSize n)
{
	struct vk_mem m;
	int ret;

	if (ctx->staging.size >= n)
		return 0;
	vk_memory_destroy(ctx);
	if ((ret = buffer_new(ctx, n, 1, &m)) != 0)
		return ret;
	ctx->staging = (struct vk_staging){ .buf = m.buf, .mem = m.mem,
	                                    .map = m.map, .size = n };
	return 0;
}

/* Copies n bytes between staging (offset 0) and `m` at byte `off`,
 * submits and waits.  to_dev: staging -> m. */
static int staging_copy(struct vk_ctx *ctx, const struct vk_mem *m,
                        VkDeviceSize off, VkDeviceSize n, int to_dev)
{
	VkBufferCopy region = {
		.srcOffset = to_dev ? 0 : m->offset + off,
		.dstOffset = to_dev ? m->offset + off : 0,
		.size = n,
	};
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
		                 VK_ACCESS_SHADER_WRITE_BIT,
	};
	int ret = vk_queue_begin(ctx);

	if (ret != 0)
		return ret;
	if (to_dev)
		vkCmdCopyBuffer(ctx->q.cb, ctx->staging.buf, m->buf, 1,
		                &region);
	else
		vkCmdCopyBuffer(ctx->q.cb, m->buf, ctx->staging.buf, 1,
		                &region);
	vkCmdPipelineBarrier(ctx->q.cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
	                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
	                     0, NULL, 0, NULL);
	return vk_queue_flush(ctx);
}

/* Host <-> device through staging, chunk by chunk.  Lock held. */
static int staged(struct vk_ctx *ctx, const struct vk_mem *m, size_t off,
                  void *host_ptr, size_t n, int to_dev)
{
	unsigned char *h = host_ptr;
	VkDeviceSize chunk = n < VK_STAGING_MAX ? n : VK_STAGING_MAX;
	int ret = staging_reserve(ctx, chunk ? chunk : 1);

	for (size_t done = 0; ret == 0 && done < n; done += chunk) {
		chunk = n - done < VK_STAGING_MAX ? n - done : VK_STAGING_MAX;
		if (to_dev)
			memcpy(ctx->staging.map, h + done, chunk);
		ret = staging_copy(ctx, m, off + done, chunk, to_dev);
		if (ret == 0 && !to_dev)
			memcpy(h + done, ctx->staging.map, chunk);
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Copies and views                                                    */
/* ------------------------------------------------------------------ */

static int check_range(const struct vk_ctx *ctx, const char *op,
                       const struct vk_mem *m, size_t offset, size_t n)
{
	if (offset <= m->size && n <= m->size - offset)
		return 0;
	return ctx->host->set_error(ctx->host, TG_EINVAL, "vulkan %s: bytes "
	                            "[%zu, %zu + %zu) outside a buffer of "
	                            "%llu", op, offset, offset, n,
	                            (unsigned long long)m->size);
}

int vk_copy_in(struct tg_device *dev, void *dst, size_t offset,
               const void *src, size_t n)
{
	struct vk_ctx *ctx = dev->ctx;
	struct vk_mem *m = dst;
	int ret = check_range(ctx, "copy_in", m, offset, n);

	if (ret != 0 || n == 0)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	ret = vk_queue_flush(ctx); /* queued kernels may read or write it */
	if (ret == 0 && m->map != NULL)
		memcpy(m->map + offset, src, n);
	else if (ret == 0)
		ret = staged(ctx, m, offset, (void *)src, n, 1);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

int vk_copy_out(struct tg_device *dev, void *dst, const void *src,
                size_t offset, size_t n)
{
	struct vk_ctx *ctx = dev->ctx;
	const struct vk_mem *m = src;
	int ret = check_range(ctx, "copy_out", m, offset, n);

	if (ret != 0 || n == 0)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	ret = vk_queue_flush(ctx);
	if (ret == 0 && m->map != NULL)
		memcpy(dst, m->map + offset, n);
	else if (ret == 0)
		ret = staged(ctx, m, offset, dst, n, 0);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* Storage-buffer descriptors need offsets aligned to
 * minStorageBufferOffsetAlignment, so views must be too. */
int vk_view(struct tg_device *dev, void *mem, size_t offset, size_t size,
            void **out)
{
	struct vk_ctx *ctx = dev->ctx;
	const struct tg_host *host = ctx->host;
	const struct vk_mem *base = mem;
	VkDeviceSize align = ctx->props.limits.minStorageBufferOffsetAlignment;
	struct vk_mem *v;
	int ret = check_range(ctx, "view", base, offset, size);

	if (ret != 0)
		return ret;
	if (align > 1 && (base->offset + offset) % align != 0)
		return host->set_error(host, TG_EUNSUPPORTED, "vulkan view: "
		       "offset %zu is not a multiple of "
		       "minStorageBufferOffsetAlignment %llu", offset,
		       (unsigned long long)align);
	if ((v = malloc(sizeof *v)) == NULL)
		return host->set_error(host, TG_ENOMEM, "vulkan view: out of "
		                       "host memory");
	*v = (struct vk_mem){
		.buf = base->buf,
		.size = size,
		.offset = base->offset + offset,
		.map = base->map ? base->map + offset : NULL,
		.owner = 0,
	};
	*out = v;
	return 0;
}

void vk_view_free(struct tg_device *dev, void *view)
{
	(void)dev;
	free(view);
}

/* With VK_EXT_memory_budget: budget minus usage of DEVICE_LOCAL heaps;
 * without it free memory is unknown (0). */
int vk_mem_info(struct tg_device *dev, uint64_t *free_bytes,
                uint64_t *total_bytes)
{
	struct vk_ctx *ctx = dev->ctx;
	VkPhysicalDeviceMemoryBudgetPropertiesEXT b = { .sType =
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT
	};
	VkPhysicalDeviceMemoryProperties2 p = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
		.pNext = ctx->feat.budget ? &b : NULL,
	};

	vkGetPhysicalDeviceMemoryProperties2(ctx->phys, &p);
	*free_bytes = 0;
	*total_bytes = 0;
	for (uint32_t i = 0; i < p.memoryProperties.memoryHeapCount; i++) {
		const VkMemoryHeap *h = &p.memoryProperties.memoryHeaps[i];

		if (!(h->flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT))
			continue;
		*total_bytes += h->size;
		if (ctx->feat.budget && b.heapBudget[i] > b.heapUsage[i])
			*free_bytes += b.heapBudget[i] - b.heapUsage[i];
	}
	return 0;
}

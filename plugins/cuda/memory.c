#include "config.h"
/*
 * memory.c - device memory: cuMemAlloc'd device pointers as handles,
 * copies on the legacy default stream (so a copy out waits for the
 * kernels queued before it) through pinned memory (staging.c) or, where
 * the driver has none to give, directly; views as pointer arithmetic.
 */
#include "cuda.h"

static CUdeviceptr dptr(const void *h)
{
	return (CUdeviceptr)(uintptr_t)h;
}

int cu_alloc(struct tg_device *dev, size_t size, void **out)
{
	struct cu_ctx *ctx = dev->ctx;
	CUdeviceptr p = 0;
	CUresult r;
	int ret;

	if ((ret = cu_enter(ctx, "alloc")) != 0)
		return ret;
	if ((r = ctx->drv.cuMemAlloc(&p, size)) != CUDA_SUCCESS)
		return cu_fail(ctx, r, "cuMemAlloc of %zu bytes", size);
	*out = (void *)(uintptr_t)p;
	return 0;
}

void cu_free(struct tg_device *dev, void *mem, size_t size)
{
	struct cu_ctx *ctx = dev->ctx;
	CUresult r;

	(void)size;
	if (cu_enter(ctx, "free") != 0)
		return;
	/* a fault of an earlier kernel surfaces here too; the memory is
	 * gone either way, so only log it */
	if ((r = ctx->drv.cuMemFree(dptr(mem))) != CUDA_SUCCESS)
		ctx->host->log(ctx->host, TG_LOG_ERROR, "cuda: cuMemFree on "
		               "%s: %s", ctx->name, cu_err_name(&ctx->drv, r));
}

int cu_copy_in(struct tg_device *dev, void *dst, size_t offset,
               const void *src, size_t n)
{
	struct cu_ctx *ctx = dev->ctx;
	CUresult r;
	int ret;

	if (n == 0)
		return 0;
	if ((ret = cu_enter(ctx, "copy in")) != 0 ||
	    (ret = cu_stage_in(ctx, dptr(dst) + offset, src, n)) != 0)
		return ret < 0 ? ret : 0;
	r = ctx->drv.cuMemcpyHtoD(dptr(dst) + offset, src, n);
	return r == CUDA_SUCCESS ? 0 : cu_fail(ctx, r, "cuMemcpyHtoD of %zu "
	                                       "bytes at offset %zu", n, offset);
}

int cu_copy_out(struct tg_device *dev, void *dst, const void *src,
                size_t offset, size_t n)
{
	struct cu_ctx *ctx = dev->ctx;
	CUresult r;
	int ret;

	if (n == 0)
		return 0;
	if ((ret = cu_enter(ctx, "copy out")) != 0 ||
	    (ret = cu_stage_out(ctx, dst, dptr(src) + offset, n)) != 0)
		return ret < 0 ? ret : 0;
	r = ctx->drv.cuMemcpyDtoH(dst, dptr(src) + offset, n);
	return r == CUDA_SUCCESS ? 0 : cu_fail(ctx, r, "cuMemcpyDtoH of %zu "
	                                       "bytes at offset %zu", n, offset);
}

int cu_view(struct tg_device *dev, void *mem, size_t offset, size_t size,
            void **out)
{
	(void)dev;
	(void)size;
	*out = (void *)(uintptr_t)(dptr(mem) + offset);
	return 0;
}

void cu_view_free(struct tg_device *dev, void *view)
{
	(void)dev;
	(void)view; /* nothing was allocated */
}

/* cuMemcpyPeer goes device to device (over NVLink or PCIe, through the
 * host only where the two cannot reach each other, which the driver
 * decides) and is ordered after all work queued in both contexts and
 * before any queued later: what allocator->transfer asks, with no
 * stream or event of ours.  It needs no cuCtxEnablePeerAccess. */
int cu_transfer(struct tg_device *dev, void *dst, struct tg_device *src_dev,
                const void *src, size_t n)
{
	struct cu_ctx *ctx = dev->ctx, *from = src_dev->ctx;
	CUresult r;
	int ret;

	if ((ret = cu_enter(ctx, "transfer")) != 0)
		return ret;
	r = ctx->drv.cuMemcpyPeer(dptr(dst), ctx->context, dptr(src),
	                          from->context, n);
	return r == CUDA_SUCCESS ? 0 : cu_fail(ctx, r, "cuMemcpyPeer of %zu "
	                                       "bytes from %s", n, from->name);
}

int cu_mem_info(struct tg_device *dev, uint64_t *free_bytes,
                uint64_t *total_bytes)
{
	struct cu_ctx *ctx = dev->ctx;
	size_t f = 0, t = 0;
	CUresult r;
	int ret;

	if ((ret = cu_enter(ctx, "mem_info")) != 0)
		return ret;
	if ((r = ctx->drv.cuMemGetInfo(&f, &t)) != CUDA_SUCCESS)
		return cu_fail(ctx, r, "cuMemGetInfo");
	*free_bytes = f;
	*total_bytes = t;
	return 0;
}

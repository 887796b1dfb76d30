#include "config.h"
/*
 * memory.c - device memory as cl_mem buffers.  Handles are cl_mem (the
 * core passes them back as kernel arguments); views are sub-buffers.
 *
 * Copies block on the in-order queue, so a copy out follows every
 * kernel queued before it and a copy in returns once `src` may be
 * reused.  Known limit: drivers create buffers lazily, so running out of
 * device memory may surface only at the first copy or launch that
 * touches a buffer; those report TG_ENOMEM too.
 */
#include <stdint.h>

#include "opencl.h"

int ocl_alloc(struct tg_device *dev, size_t size, void **out)
{
	struct ocl_ctx *ctx = dev->ctx;
	const struct tg_host *host = ctx->host;
	cl_int err = CL_INVALID_BUFFER_SIZE;
	cl_mem mem = NULL;

	if (size <= ctx->max_alloc)
		mem = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, size,
		                     NULL, &err);
	if (mem != NULL) {
		*out = mem;
		return 0;
	}
	if (err == CL_INVALID_BUFFER_SIZE) /* beyond the largest buffer */
		return host->set_error(host, TG_ENOMEM, "opencl: "
			"clCreateBuffer of %zu bytes on %s: %s (the largest "
			"buffer is %llu bytes)", size, ctx->name,
			ocl_err_name(err), (unsigned long long)ctx->max_alloc);
	return host->set_error(host, ocl_status(err), "opencl: "
		"clCreateBuffer of %zu bytes on %s: %s", size, ctx->name,
		ocl_err_name(err));
}

/* Memory still used by queued kernels is freed when they are done. */
void ocl_free(struct tg_device *dev, void *mem, size_t size)
{
	(void)dev;
	(void)size;
	clReleaseMemObject(mem);
}

int ocl_copy_in(struct tg_device *dev, void *dst, size_t offset,
                const void *src, size_t n)
{
	struct ocl_ctx *ctx = dev->ctx;
	cl_int err;

	if (n == 0) /* OpenCL calls a 0-byte copy CL_INVALID_VALUE */
		return 0;
	err = clEnqueueWriteBuffer(ctx->queue, dst, CL_TRUE, offset, n, src,
	                           0, NULL, NULL);
	if (err == CL_SUCCESS)
		return 0;
	return ctx->host->set_error(ctx->host, ocl_status(err), "opencl: "
		"clEnqueueWriteBuffer of %zu bytes at offset %zu on %s: %s",
		n, offset, ctx->name, ocl_err_name(err));
}

int ocl_copy_out(struct tg_device *dev, void *dst, const void *src,
                 size_t offset, size_t n)
{
	struct ocl_ctx *ctx = dev->ctx;
	cl_int err;

	if (n == 0)
		return 0;
	/* OpenCL takes a non-const cl_mem even for reads */
	err = clEnqueueReadBuffer(ctx->queue, (cl_mem)(uintptr_t)src, CL_TRUE,
	                          offset, n, dst, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		return 0;
	return ctx->host->set_error(ctx->host, ocl_status(err), "opencl: "
		"clEnqueueReadBuffer of %zu bytes at offset %zu on %s: %s",
		n, offset, ctx->name, ocl_err_name(err));
}

/* A sub-buffer of bytes [offset, offset+size).  OpenCL requires the
 * offset to be a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN; the core's
 * views at other offsets are unsupported here. */
int ocl_view(struct tg_device *dev, void *mem, size_t offset, size_t size,
             void **out)
{
	struct ocl_ctx *ctx = dev->ctx;
	const struct tg_host *host = ctx->host;
	cl_buffer_region region = { .origin = offset,
	                            .size = size > 0 ? size : 1 };
	cl_int err;
	cl_mem view;

	if (offset % ctx->base_align != 0)
		return host->set_error(host, TG_EUNSUPPORTED, "opencl: view "
			"at offset %zu bytes on %s: sub-buffer offsets must be "
			"a multiple of the device's base address alignment "
			"(%zu bytes)", offset, ctx->name, ctx->base_align);
	view = clCreateSubBuffer(mem, 0, CL_BUFFER_CREATE_TYPE_REGION,
	                         &region, &err);
	if (view != NULL) {
		*out = view;
		return 0;
	}
	return host->set_error(host, ocl_status(err), "opencl: "
		"clCreateSubBuffer of %zu bytes at offset %zu on %s: %s",
		size, offset, ctx->name, ocl_err_name(err));
}

void ocl_view_free(struct tg_device *dev, void *view)
{
	(void)dev;
	clReleaseMemObject(view);
}

/* On dev's queue, after everything queued on src_dev so far (a marker's
 * event), and before anything queued on src_dev later (a barrier on the
 * copy's event), so a kernel there cannot overwrite src before it is
 * read.  Neither queue waits on the host. */
int ocl_transfer(struct tg_device *dev, void *dst,
                 struct tg_device *src_dev, const void *src, size_t n)
{
	struct ocl_ctx *ctx = dev->ctx, *from = src_dev->ctx;
	cl_event ready = NULL, done = NULL;
	const char *what = "clEnqueueMarkerWithWaitList";
	cl_int err;

	if (from->context != ctx->context)
		return ctx->host->set_error(ctx->host, TG_EUNSUPPORTED,
			"opencl: %s and %s are in separate contexts (%s)",
			from->name, ctx->name, from->platform != ctx->platform ?
			"two platforms" : "opened with different device lists, "
			"or the driver refused to share one");
	err = clEnqueueMarkerWithWaitList(from->queue, 0, NULL, &ready);
	if (err == CL_SUCCESS && (err = clFlush(from->queue)) != CL_SUCCESS)
		what = "clFlush of the source's queue";
	if (err == CL_SUCCESS &&
	    (err = clEnqueueCopyBuffer(ctx->queue, (cl_mem)(uintptr_t)src,
	                               dst, 0, 0, n, 1, &ready, &done)) !=
	    CL_SUCCESS)
		what = "clEnqueueCopyBuffer";
	if (err == CL_SUCCESS && (err = clFlush(ctx->queue)) != CL_SUCCESS)
		what = "clFlush of the destination's queue";
	if (err == CL_SUCCESS &&
	    (err = clEnqueueBarrierWithWaitList(from->queue, 1, &done,
	                                        NULL)) != CL_SUCCESS)
		what = "clEnqueueBarrierWithWaitList";
	if (ready != NULL)
		clReleaseEvent(ready);
	if (done != NULL)
		clReleaseEvent(done);
	if (err == CL_SUCCESS)
		return 0;
	return ctx->host->set_error(ctx->host, ocl_status(err), "opencl: "
		"copy of %zu bytes from %s to %s: %s: %s", n, from->name,
		ctx->name, what, ocl_err_name(err));
}

/* OpenCL 1.2 has no portable query for free memory. */
int ocl_mem_info(struct tg_device *dev, uint64_t *free_bytes,
                 uint64_t *total_bytes)
{
	struct ocl_ctx *ctx = dev->ctx;

	*free_bytes = 0;
	*total_bytes = ctx->info.total_memory;
	return 0;
}

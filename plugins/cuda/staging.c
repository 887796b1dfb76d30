#include "config.h"
/*
 * staging.c - copies between host and device through pinned memory.
 *
 * The driver copies from pageable memory through a pinned buffer of its
 * own and waits for each piece; from page-locked memory the copy engine
 * reads directly, at about twice the bandwidth, and asynchronously.  So
 * each device keeps two pinned chunks (cuMemHostAlloc, made at the first
 * copy) and moves data through them in turns:
 *  - in: copy a piece of the caller's memory into a chunk, queue its
 *    cuMemcpyHtoDAsync and an event; a chunk is refilled once its event
 *    has passed.  The call returns when the caller's memory has been
 *    read, before the last pieces have landed: later work on the legacy
 *    default stream (kernels, copies out) comes after them.
 *  - out: queue the first two pieces into the chunks, then wait for each
 *    in order, copy it to the caller and queue the piece after next.
 * Everything is on the legacy default stream, so it is ordered with the
 * kernels queued before and after, as the plain copies were.  Where the
 * driver refuses pinned memory (a locked-memory limit) the device copies
 * with the plain calls from then on.  The chunks are shared by the
 * threads that copy to one device, so a mutex guards them.
 */
#include <string.h>

#include "cuda.h"

#define CU_EVENT_DISABLE_TIMING 0x2

static void release(struct cu_ctx *ctx)
{
	struct cu_stage *s = &ctx->stage;

	for (int k = 0; k < 2; k++) {
		if (s->done[k] != NULL)
			ctx->drv.cuEventDestroy(s->done[k]);
		if (s->host[k] != NULL)
			ctx->drv.cuMemFreeHost(s->host[k]);
		s->done[k] = NULL;
		s->host[k] = NULL;
		s->queued[k] = 0;
	}
}

/* Whether the chunks are there, making them at the first call. */
static int ready(struct cu_ctx *ctx)
{
	struct cu_stage *s = &ctx->stage;
	CUresult r = CUDA_SUCCESS;
	const char *what = "cuMemHostAlloc";

	if (s->host[0] != NULL || s->off)
		return !s->off;
	for (int k = 0; k < 2 && r == CUDA_SUCCESS; k++) {
		r = ctx->drv.cuMemHostAlloc(&s->host[k], CU_STAGE_CHUNK, 0);
		if (r == CUDA_SUCCESS) {
			what = "cuEventCreate";
			r = ctx->drv.cuEventCreate(&s->done[k],
			                           CU_EVENT_DISABLE_TIMING);
		}
	}
	if (r == CUDA_SUCCESS)
		return 1;
	ctx->host->log(ctx->host, TG_LOG_DEBUG, "cuda: %s of %d bytes on %s "
	               "failed (%s); copies go from pageable memory", what,
	               CU_STAGE_CHUNK, ctx->name, cu_err_name(&ctx->drv, r));
	release(ctx);
	s->off = 1;
	return 0;
}

/* Waits until chunk k is no longer read or written by a queued copy. */
static CUresult drain(struct cu_ctx *ctx, int k)
{
	struct cu_stage *s = &ctx->stage;
	CUresult r = CUDA_SUCCESS;

	if (s->queued[k])
		r = ctx->drv.cuEventSynchronize(s->done[k]);
	s->queued[k] = 0;
	return r;
}

/* Marks chunk k busy until the work queued so far has run. */
static CUresult mark(struct cu_ctx *ctx, int k)
{
	CUresult r = ctx->drv.cuEventRecord(ctx->stage.done[k], NULL);

	ctx->stage.queued[k] = r == CUDA_SUCCESS;
	return r;
}

static size_t pieces(size_t n)
{
	return (n + CU_STAGE_CHUNK - 1) / CU_STAGE_CHUNK;
}

static size_t piece(size_t n, size_t p)
{
	size_t at = p * CU_STAGE_CHUNK;

	return n - at < CU_STAGE_CHUNK ? n - at : CU_STAGE_CHUNK;
}

/* Holds the chunks for one copy: 1 when they are there (locked), 0
 * when the device copies without them (not locked). */
static int take(struct cu_ctx *ctx)
{
	pthread_mutex_lock(&ctx->stage.lock);
	if (ready(ctx))
		return 1;
	pthread_mutex_unlock(&ctx->stage.lock);
	return 0;
}

/* Lets the chunks go after a copy `way` ("in", "out") of n bytes whose
 * call `what` returned r: 1, or the error. */
static int give(struct cu_ctx *ctx, CUresult r, const char *what,
                const char *way, size_t n)
{
	pthread_mutex_unlock(&ctx->stage.lock);
	return r == CUDA_SUCCESS ? 1 : cu_fail(ctx, r, "%s of %zu bytes %s "
	                                       "through pinned memory", what,
	                                       n, way);
}

/* Queues piece p of the copy of src to dst through chunk p % 2; *what
 * names the call that failed. */
static CUresult put(struct cu_ctx *ctx, CUdeviceptr dst, const void *src,
                    size_t n, size_t p, const char **what)
{
	int k = (int)(p % 2);
	size_t at = p * CU_STAGE_CHUNK;
	CUresult r;

	*what = "cuEventSynchronize";
	if ((r = drain(ctx, k)) != CUDA_SUCCESS)
		return r;
	memcpy(ctx->stage.host[k], (const char *)src + at, piece(n, p));
	*what = "cuMemcpyHtoDAsync";
	r = ctx->drv.cuMemcpyHtoDAsync(dst + at, ctx->stage.host[k],
	                               piece(n, p), NULL);
	if (r != CUDA_SUCCESS)
		return r;
	*what = "cuEventRecord";
	return mark(ctx, k);
}

int cu_stage_in(struct cu_ctx *ctx, CUdeviceptr dst, const void *src,
                size_t n)
{
	CUresult r = CUDA_SUCCESS;
	const char *what = "";

	if (!take(ctx))
		return 0;
	for (size_t p = 0; p < pieces(n) && r == CUDA_SUCCESS; p++)
		r = put(ctx, dst, src, n, p, &what);
	return give(ctx, r, what, "in", n);
}

/* Queues piece p of the copy out of src into chunk p % 2; *what names
 * the call that failed. */
static CUresult fetch(struct cu_ctx *ctx, CUdeviceptr src, size_t n,
                      size_t p, const char **what)
{
	int k = (int)(p % 2);
	CUresult r;

	*what = "cuEventSynchronize";
	if ((r = drain(ctx, k)) != CUDA_SUCCESS)
		return r;
	*what = "cuMemcpyDtoHAsync";
	r = ctx->drv.cuMemcpyDtoHAsync(ctx->stage.host[k],
	                               src + p * CU_STAGE_CHUNK, piece(n, p),
	                               NULL);
	if (r != CUDA_SUCCESS)
		return r;
	*what = "cuEventRecord";
	return mark(ctx, k);
}

int cu_stage_out(struct cu_ctx *ctx, void *dst, CUdeviceptr src, size_t n)
{
	CUresult r = CUDA_SUCCESS;
	const char *what = "";
	size_t np = pieces(n);

	if (!take(ctx))
		return 0;
	for (size_t p = 0; p < np && p < 2 && r == CUDA_SUCCESS; p++)
		r = fetch(ctx, src, n, p, &what);
	for (size_t p = 0; p < np && r == CUDA_SUCCESS; p++) {
		int k = (int)(p % 2);

		what = "cuEventSynchronize";
		if ((r = drain(ctx, k)) != CUDA_SUCCESS)
			break;
		memcpy((char *)dst + p * CU_STAGE_CHUNK, ctx->stage.host[k],
		       piece(n, p));
		if (p + 2 < np)
			r = fetch(ctx, src, n, p + 2, &what);
	}
	return give(ctx, r, what, "out", n);
}

int cu_stage_init(struct cu_ctx *ctx)
{
	int e = pthread_mutex_init(&ctx->stage.lock, NULL);

	return e == 0 ? 0 : ctx->host->set_error(ctx->host, TG_ERUNTIME,
		"cuda open: pthread_mutex_init: %s", strerror(e));
}

void cu_stage_free(struct cu_ctx *ctx)
{
	for (int k = 0; k < 2; k++)
		(void)drain(ctx, k);
	release(ctx);
	pthread_mutex_destroy(&ctx->stage.lock);
}

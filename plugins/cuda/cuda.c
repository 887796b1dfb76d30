#include "config.h"
/*
 * cuda.c - NVIDIA GPUs through the CUDA driver API: how many there are,
 * opening one (its primary context, what it can do), and the descriptor
 * the core sees.  The TG_PLUGIN_DEFINE block at the bottom is the table
 * of contents; memory.c and program.c hold the other tables' entries,
 * api.c the loading of the driver and NVRTC.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"

/* Defined at the bottom, with the descriptor. */
static const struct tg_allocator_iface cu_allocator;
static const struct tg_compiler_iface cu_compiler;
static const struct tg_runtime_iface cu_runtime;

int cu_fail(struct cu_ctx *ctx, CUresult r, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ctx->host->set_error(ctx->host, cu_status(r), "cuda: %s on "
	                            "%s: %s", what, ctx->name,
	                            cu_err_name(&ctx->drv, r));
}

int cu_enter(struct cu_ctx *ctx, const char *what)
{
	CUresult r = ctx->drv.cuCtxSetCurrent(ctx->context);

	return r == CUDA_SUCCESS ? 0 : cu_fail(ctx, r, "%s", what);
}

/* ------------------------------------------------------------------ */
/* Probe                                                               */
/* ------------------------------------------------------------------ */

/* The driver and NVRTC both load and at least one device is there;
 * else the reason.  Creates no context. */
static int cu_probe(const struct tg_host *host, struct tg_probe *out)
{
	struct cu_driver drv;
	struct cu_nvrtc rtc;
	int count = 0;
	CUresult r;

	out->ndevices = 0;
	out->type = TG_DEVICE_GPU;
	if (cu_driver_load(host, &drv, out->reason, sizeof(out->reason)))
		return 0;
	if ((r = drv.cuDeviceGetCount(&count)) != CUDA_SUCCESS || count < 1) {
		snprintf(out->reason, sizeof(out->reason), "no CUDA devices "
		         "(driver %d.%d%s%s)", drv.version / 1000,
		         drv.version % 1000 / 10, r ? ": " : "",
		         r ? cu_err_name(&drv, r) : "");
	} else if (cu_nvrtc_load(host, &rtc, out->reason,
	                         sizeof(out->reason)) == 0) {
		cu_nvrtc_unload(&rtc);
		out->ndevices = count;
		for (int i = 0; TG_HAS(out, struct tg_probe, types) &&
		                i < count && i < TG_PROBE_MAX_TYPES; i++) {
			out->types[i] = TG_DEVICE_GPU;
			out->ntypes = i + 1;
		}
	}
	cu_driver_unload(&drv);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Open                                                                */
/* ------------------------------------------------------------------ */

/* Attribute `attr` of the device into *v. */
static int attr(struct cu_ctx *ctx, int a, int *v, const char *what)
{
	CUresult r = ctx->drv.cuDeviceGetAttribute(v, a, ctx->device);

	return r == CUDA_SUCCESS ? 0 : cu_fail(ctx, r, "open: "
	                                       "cuDeviceGetAttribute(%s)", what);
}

/* The tensor core of compute capability 8.0 and later that the core
 * lowers to mma.sync.m16n8k16 with half inputs and a float sum: an
 * 8x16 tile of C per warp, N over the digit and 4 lanes, M over the
 * digit and 8 lanes (the layout is render/wmma.c's). */
static const struct tg_tensor_core mma_f16 = {
	.struct_size = TG_STRUCT_SIZE(struct tg_tensor_core, splits),
	.dims = { 8, 16, 16 },
	.dtype_in = TG_FLOAT16,
	.dtype_out = TG_FLOAT32,
	.nsplits = 4,
	.splits = { { TG_TC_UPCAST, 0, 2 }, { TG_TC_LOCAL, 0, 4 },
	            { TG_TC_UPCAST, 1, 2 }, { TG_TC_LOCAL, 1, 8 } },
};

/* Work-group and grid limits, shared memory, the architecture. */
static int query_limits(struct cu_ctx *ctx)
{
	int block[3], grid[3], total, shared, ret = 0;
	static const int ba[3] = { CU_ATTR_MAX_BLOCK_DIM_X,
	                           CU_ATTR_MAX_BLOCK_DIM_Y,
	                           CU_ATTR_MAX_BLOCK_DIM_Z };
	static const int ga[3] = { CU_ATTR_MAX_GRID_DIM_X,
	                           CU_ATTR_MAX_GRID_DIM_Y,
	                           CU_ATTR_MAX_GRID_DIM_Z };

	for (int i = 0; i < 3 && ret == 0; i++)
		if ((ret = attr(ctx, ba[i], &block[i], "block dim")) == 0)
			ret = attr(ctx, ga[i], &grid[i], "grid dim");
	if (ret || (ret = attr(ctx, CU_ATTR_MAX_THREADS_PER_BLOCK, &total,
	                       "threads per block")) ||
	    (ret = attr(ctx, CU_ATTR_MAX_SHARED_PER_BLOCK, &shared,
	                "shared memory")) ||
	    (ret = attr(ctx, CU_ATTR_SM_COUNT, &ctx->sm_count, "SM count")) ||
	    (ret = attr(ctx, CU_ATTR_CC_MAJOR, &ctx->cc_major, "cc major")) ||
	    (ret = attr(ctx, CU_ATTR_CC_MINOR, &ctx->cc_minor, "cc minor")))
		return ret;
	for (int i = 0; i < 3; i++) {
		ctx->caps.local_max[i] = block[i] > 0 ? (size_t)block[i] : 1;
		ctx->grid_max[i] = grid[i] > 0 ? (uint32_t)grid[i] : 1;
		/* a kernel with work-groups launches global / local blocks */
		ctx->caps.global_max[i] = (size_t)ctx->grid_max[i] *
		                          ctx->caps.local_max[i];
	}
	ctx->caps.local_max_total = total > 0 ? (size_t)total : 1;
	ctx->caps.shared_max = shared > 0 ? (size_t)shared : 0;
	snprintf(ctx->arch, sizeof(ctx->arch), "sm_%d%d", ctx->cc_major,
	         ctx->cc_minor);
	if (ctx->cc_major >= 8) {  /* mma.sync m16n8k16 f16: sm_80 on */
		ctx->caps.tensor_cores = 1;
		ctx->caps.tc = &mma_f16;
	}
	return 0;
}

/* Caps that are the same on every device. */
static void init_caps(struct cu_ctx *ctx)
{
	ctx->caps = (struct tg_renderer_caps){
		.struct_size = TG_STRUCT_SIZE(struct tg_renderer_caps,
		                              buffer_align),
		.dialect = TG_DIALECT_CUDA,
		.has_local = 1,
		.has_shared = 1,
		.max_upcast = 4, /* float4: 16-byte loads and stores */
		.dtype_mask = TG_DTYPE_ALL,
		.needs_transcendental_fallback = 0, /* exp2/log2/sin built in */
		.tensor_cores = 0, /* set by the compute capability */
		.buffer_align = 256, /* cuMemAlloc's alignment */
	};
}

/* Name, memory, description; the device_info block. */
static int describe(struct cu_ctx *ctx)
{
	size_t mem = 0;
	CUresult r = ctx->drv.cuDeviceGetName(ctx->dev_name,
	                                      (int)sizeof(ctx->dev_name),
	                                      ctx->device);

	if (r == CUDA_SUCCESS)
		r = ctx->drv.cuDeviceTotalMem(&mem, ctx->device);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, r, "open: cuDeviceGetName");
	snprintf(ctx->description, sizeof(ctx->description),
	         "%s | compute %d.%d, %d SMs | driver %d.%d | NVRTC %d.%d",
	         ctx->dev_name, ctx->cc_major, ctx->cc_minor, ctx->sm_count,
	         ctx->drv.version / 1000, ctx->drv.version % 1000 / 10,
	         ctx->rtc.major, ctx->rtc.minor);
	ctx->info = (struct tg_device_info){
		.struct_size = TG_STRUCT_SIZE(struct tg_device_info,
		                              total_memory),
		.name = ctx->name,
		.description = ctx->description,
		.type = TG_DEVICE_GPU,
		.total_memory = mem,
	};
	return 0;
}

/* Loads both libraries and finds device `index`. */
static int find_device(struct cu_ctx *ctx, int index)
{
	const struct tg_host *host = ctx->host;
	char why[256] = "";
	int count = 0, ret;
	CUresult r;

	if ((ret = cu_driver_load(host, &ctx->drv, why, sizeof(why))) != 0)
		return host->set_error(host, ret, "cuda open: %s", why);
	if ((ret = cu_nvrtc_load(host, &ctx->rtc, why, sizeof(why))) != 0) {
		ret = host->set_error(host, ret, "cuda open: %s", why);
		goto out_driver;
	}
	if ((r = ctx->drv.cuDeviceGetCount(&count)) != CUDA_SUCCESS) {
		ret = cu_fail(ctx, r, "open: cuDeviceGetCount");
		goto out_nvrtc;
	}
	if (index < 0 || index >= count) {
		ret = host->set_error(host, TG_ENODEV, "cuda open: no device "
		                      "%d (%d device%s)", index, count,
		                      count == 1 ? "" : "s");
		goto out_nvrtc;
	}
	if ((r = ctx->drv.cuDeviceGet(&ctx->device, index)) == CUDA_SUCCESS)
		return 0;
	ret = cu_fail(ctx, r, "open: cuDeviceGet");
out_nvrtc:
	cu_nvrtc_unload(&ctx->rtc);
out_driver:
	cu_driver_unload(&ctx->drv);
	return ret;
}

/* The primary context (shared with other libraries in the process, as
 * the runtime API does), made current on this thread. */
static int retain_context(struct cu_ctx *ctx)
{
	CUresult r = ctx->drv.cuDevicePrimaryCtxRetain(&ctx->context,
	                                               ctx->device);

	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, r, "open: cuDevicePrimaryCtxRetain");
	if (cu_enter(ctx, "open: cuCtxSetCurrent") == 0)
		return 0;
	ctx->drv.cuDevicePrimaryCtxRelease(ctx->device);
	return TG_ERUNTIME;
}

static void cu_close(struct tg_device *dev);

static void fill_device(struct cu_ctx *ctx)
{
	ctx->dev = (struct tg_device){
		.struct_size = TG_STRUCT_SIZE(struct tg_device, close),
		.ctx = ctx,
		.info = &ctx->info,
		.allocator = &cu_allocator,
		.compiler = &cu_compiler,
		.renderer = &ctx->caps,
		.runtime = &cu_runtime,
		.close = cu_close,
	};
}

static int cu_open(const struct tg_host *host, int index,
                   struct tg_device **out)
{
	struct cu_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret;

	if (ctx == NULL)
		return host->set_error(host, TG_ENOMEM,
		                       "cuda open: out of host memory");
	ctx->host = host;
	snprintf(ctx->name, sizeof(ctx->name), index > 0 ? "CUDA:%d" : "CUDA",
	         index);
	if ((ret = find_device(ctx, index)) != 0) {
		free(ctx);
		return ret;
	}
	init_caps(ctx);
	if ((ret = query_limits(ctx)) != 0 || (ret = describe(ctx)) != 0 ||
	    (ret = cu_stage_init(ctx)) != 0)
		goto out_unload;
	if ((ret = retain_context(ctx)) != 0)
		goto out_stage;
	cu_identity_init(ctx);
	fill_device(ctx);
	host->log(host, TG_LOG_DEBUG, "cuda: opened %s: %s; identity: %s",
	          ctx->name, ctx->description, ctx->identity);
	*out = &ctx->dev;
	return 0;
out_stage:
	cu_stage_free(ctx);
out_unload:
	cu_nvrtc_unload(&ctx->rtc);
	cu_driver_unload(&ctx->drv);
	free(ctx);
	return ret;
}

/* The core has freed every program and buffer: finish the queued work,
 * release the context, unload.  No threads to join. */
static void cu_close(struct tg_device *dev)
{
	struct cu_ctx *ctx = dev->ctx;

	if (cu_enter(ctx, "close") == 0)
		ctx->drv.cuCtxSynchronize();
	cu_stage_free(ctx);
	ctx->drv.cuDevicePrimaryCtxRelease(ctx->device);
	cu_nvrtc_unload(&ctx->rtc);
	cu_driver_unload(&ctx->drv);
	free(ctx); /* dev lives inside ctx */
}

/* ------------------------------------------------------------------ */
/* Tables and the descriptor: the plugin's table of contents          */
/* ------------------------------------------------------------------ */

static const struct tg_allocator_iface cu_allocator = {
	.struct_size = TG_STRUCT_SIZE(struct tg_allocator_iface, transfer),
	.alloc = cu_alloc,
	.free = cu_free,
	.copy_in = cu_copy_in,
	.copy_out = cu_copy_out,
	.view = cu_view,
	.view_free = cu_view_free,
	.mem_info = cu_mem_info,
	.transfer = cu_transfer,
};

static const struct tg_compiler_iface cu_compiler = {
	.struct_size = TG_STRUCT_SIZE(struct tg_compiler_iface, compile),
	.identity = cu_identity,
	.compile = cu_compile,
};

/* The renderer caps are per device: cu_ctx.caps, from open. */

static const struct tg_runtime_iface cu_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, graph_free),
	.load = cu_load,
	.launch = cu_launch,
	.synchronize = cu_synchronize,
	.program_free = cu_program_free,
	.graph_new = cu_graph_new,
	.graph_run = cu_graph_run,
	.graph_free = cu_graph_free,
};

/* tinygrad's NV=1 is its own driver for the same GPUs. */
static const char *const cu_aliases[] = { "NV", NULL };

static const struct tg_plugin cu_plugin = {
	.struct_size = TG_STRUCT_SIZE(struct tg_plugin, unload),
	.abi_major = TG_PLUGIN_ABI_MAJOR,
	.abi_minor = TG_PLUGIN_ABI_MINOR,
	.name = "CUDA",
	.aliases = cu_aliases,
	.version = "0.1.0",
	.vendor = "tgcore",
	.description = "NVIDIA GPUs through the CUDA driver API and NVRTC "
	               "(both loaded at run time)",
	.priority = 1, /* ahead of OpenCL and Vulkan on the same GPU */
	.probe = cu_probe,
	.open = cu_open,
	.query_extension = NULL,
	.unload = NULL,
};

TG_PLUGIN_DEFINE(cu_plugin)

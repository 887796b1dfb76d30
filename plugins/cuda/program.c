#include "config.h"
/*
 * program.c - CUDA C to CUBINs (the compiler table) and CUBINs to
 * running kernels (the runtime table).
 *
 * compile runs NVRTC for the device's exact architecture and hands the
 * core the CUBIN, which the core caches on disk under the identity
 * (device, architecture, driver and NVRTC versions, options): a cache
 * hit loads machine code directly, with no PTX JIT in the driver.  The
 * NVRTC log is the error.
 *
 * A launch checks its geometry against the device's and the kernel's
 * limits (a kernel using many registers runs fewer threads per block
 * than the device's maximum), then queues on the legacy default stream.
 * With `wait` it brackets the kernel with two events and reports their
 * elapsed time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda.h"
#include "text.h"

#define ERROR_LINES 6   /* NVRTC log lines quoted by set_error */
#define ERROR_BYTES 1200

/* Headers (cuda_fp16.h) for NVRTC: the configured installation, else
 * the usual place. */
static const char *const include_dirs[] = {
	"/usr/local/cuda/include", "/usr/include", NULL
};

/* A loaded kernel. */
struct cu_program {
	CUmodule module;     /* owned */
	CUfunction func;
	int max_threads;     /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
	char name[128];
};

/* ------------------------------------------------------------------ */
/* Compiler                                                            */
/* ------------------------------------------------------------------ */

/* "-I<dir>" for the first include directory holding cuda_fp16.h. */
static void include_option(const struct tg_host *host, char *buf, size_t n)
{
	const char *home = cu_config(host, "path");
	char probe[CU_STR_MAX + 32];

	buf[0] = '\0';
	if (home != NULL) {
		snprintf(buf, n, "-I%s/include", home);
		return;
	}
	for (size_t i = 0; include_dirs[i] != NULL; i++) {
		snprintf(probe, sizeof(probe), "%s/cuda_fp16.h",
		         include_dirs[i]);
		if (access(probe, R_OK) == 0) {
			snprintf(buf, n, "-I%s", include_dirs[i]);
			return;
		}
	}
}

void cu_identity_init(struct cu_ctx *ctx)
{
	snprintf(ctx->identity, sizeof(ctx->identity),
	         "cuda | %s | %s | driver %d | nvrtc %d.%d | %s",
	         ctx->dev_name, ctx->arch, ctx->drv.version, ctx->rtc.major,
	         ctx->rtc.minor, ctx->rtc.path);
}

const char *cu_identity(struct tg_device *dev)
{
	struct cu_ctx *ctx = dev->ctx;

	return ctx->identity;
}

/* NVRTC's log into *log (host memory), or NULL when it has none. */
static char *program_log(struct cu_ctx *ctx, nvrtcProgram prog)
{
	size_t n = 0;
	char *log;

	if (ctx->rtc.nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS ||
	    n < 2 || (log = ctx->host->alloc(ctx->host, n + 1)) == NULL)
		return NULL;
	if (ctx->rtc.nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
		ctx->host->free(ctx->host, log);
		return NULL;
	}
	log[n] = '\0';
	return log;
}

static int nvrtc_fail(struct cu_ctx *ctx, nvrtcResult r, const char *what)
{
	return ctx->host->set_error(ctx->host, TG_ECOMPILE, "cuda compile: %s "
	                            "for %s: %s", what, ctx->arch,
	                            ctx->rtc.nvrtcGetErrorString(r));
}

/* The CUBIN of a compiled program into host memory. */
static int get_cubin(struct cu_ctx *ctx, nvrtcProgram prog, void **blob,
                     size_t *blob_len)
{
	size_t n = 0;
	nvrtcResult r = ctx->rtc.nvrtcGetCUBINSize(prog, &n);

	if (r != NVRTC_SUCCESS)
		return nvrtc_fail(ctx, r, "nvrtcGetCUBINSize");
	if (n == 0)
		return ctx->host->set_error(ctx->host, TG_ECOMPILE, "cuda "
		                            "compile: NVRTC made no CUBIN for %s",
		                            ctx->arch);
	if ((*blob = ctx->host->alloc(ctx->host, n)) == NULL)
		return ctx->host->set_error(ctx->host, TG_ENOMEM, "cuda compile:"
		                            " %zu bytes for the CUBIN", n);
	if ((r = ctx->rtc.nvrtcGetCUBIN(prog, *blob)) != NVRTC_SUCCESS) {
		ctx->host->free(ctx->host, *blob);
		*blob = NULL;
		return nvrtc_fail(ctx, r, "nvrtcGetCUBIN");
	}
	*blob_len = n;
	return 0;
}

int cu_compile(struct tg_device *dev, const char *src, void **blob,
               size_t *blob_len, char **log)
{
	struct cu_ctx *ctx = dev->ctx;
	char arch[64], inc[CU_STR_MAX + 8];
	const char *opts[2] = { arch, inc };
	nvrtcProgram prog = NULL;
	nvrtcResult r;
	int ret;

	snprintf(arch, sizeof(arch), "--gpu-architecture=%s", ctx->arch);
	include_option(ctx->host, inc, sizeof(inc));
	r = ctx->rtc.nvrtcCreateProgram(&prog, src, "tgcore.cu", 0, NULL,
	                                NULL);
	if (r != NVRTC_SUCCESS)
		return nvrtc_fail(ctx, r, "nvrtcCreateProgram");
	r = ctx->rtc.nvrtcCompileProgram(prog, inc[0] ? 2 : 1, opts);
	*log = program_log(ctx, prog);
	if (r != NVRTC_SUCCESS)
		ret = ctx->host->set_error(ctx->host, TG_ECOMPILE, "cuda "
		        "compile for %s: %s%s%.*s", ctx->arch,
		        ctx->rtc.nvrtcGetErrorString(r), *log ? ":\n" : "",
		        *log ? text_head_len(*log, ERROR_LINES, ERROR_BYTES)
		             : 0, *log ? *log : "");
	else
		ret = get_cubin(ctx, prog, blob, blob_len);
	ctx->rtc.nvrtcDestroyProgram(&prog);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

int cu_load(struct tg_device *dev, const char *name, const void *blob,
            size_t blob_len, void **prog)
{
	struct cu_ctx *ctx = dev->ctx;
	struct cu_program *p;
	CUresult r;
	int ret;

	(void)blob_len; /* a CUBIN is an ELF image that knows its size */
	if ((ret = cu_enter(ctx, "load")) != 0)
		return ret;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return ctx->host->set_error(ctx->host, TG_ENOMEM, "cuda load: "
		                            "out of host memory");
	snprintf(p->name, sizeof(p->name), "%s", name);
	if ((r = ctx->drv.cuModuleLoadData(&p->module, blob)) != CUDA_SUCCESS) {
		free(p);
		return cu_fail(ctx, r, "cuModuleLoadData of %s", name);
	}
	r = ctx->drv.cuModuleGetFunction(&p->func, p->module, name);
	if (r == CUDA_SUCCESS)
		r = ctx->drv.cuFuncGetAttribute(&p->max_threads,
		        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, p->func);
	if (r != CUDA_SUCCESS) {
		ctx->drv.cuModuleUnload(p->module);
		free(p);
		return cu_fail(ctx, r, "cuModuleGetFunction(%s)", name);
	}
	*prog = p;
	return 0;
}

void cu_program_free(struct tg_device *dev, void *prog)
{
	struct cu_ctx *ctx = dev->ctx;
	struct cu_program *p = prog;

	if (cu_enter(ctx, "program_free") == 0)
		ctx->drv.cuModuleUnload(p->module);
	free(p);
}

/* ------------------------------------------------------------------ */
/* Launching                                                           */
/* ------------------------------------------------------------------ */


static int bad_geometry(struct cu_ctx *ctx, const struct cu_program *p,
                        const struct tg_launch *a, const char *why)
{
	return ctx->host->set_error(ctx->host, TG_EINVAL, "cuda launch of %s:"
	       " global %zu x %zu x %zu local %zu x %zu x %zu on %s: %s",
	       p->name, a->global[0], a->global[1], a->global[2],
	       a->local[0], a->local[1], a->local[2], ctx->name, why);
}

/* A kernel without work-groups: flat blocks along x, then y. */
static int flat(struct cu_ctx *ctx, const struct cu_program *p,
                const struct tg_launch *a, struct cu_geometry *g)
{
	uint64_t total = 1, blocks, x, y;
	unsigned int block = CU_FLAT_BLOCK;
	char why[128];

	for (int i = 0; i < 3; i++)
		total = a->global[i] > 0 && total <= UINT32_MAX
		        ? total * a->global[i] : (uint64_t)UINT32_MAX + 1;
	if (total > UINT32_MAX)
		return bad_geometry(ctx, p, a, "more than 2^32 - 1 threads");
	if (p->max_threads > 0 && (unsigned int)p->max_threads < block)
		block = (unsigned int)p->max_threads;
	blocks = (total + block - 1) / block;
	x = blocks < ctx->grid_max[0] ? blocks : ctx->grid_max[0];
	y = (blocks + x - 1) / x;
	if (y > ctx->grid_max[1]) {
		snprintf(why, sizeof(why), "%" PRIu64 " blocks exceed the grid "
		         "%u x %u", blocks, ctx->grid_max[0], ctx->grid_max[1]);
		return bad_geometry(ctx, p, a, why);
	}
	*g = (struct cu_geometry){ .grid = { (unsigned int)x,
	                                     (unsigned int)y, 1 },
	                           .block = { block, 1, 1 } };
	return 0;
}

/* Explicit work-groups: global[i] / local[i] blocks of local threads. */
static int grouped(struct cu_ctx *ctx, const struct cu_program *p,
                   const struct tg_launch *a, struct cu_geometry *g)
{
	size_t threads = 1, most = ctx->caps.local_max_total;
	char why[128];

	for (int i = 0; i < 3; i++) {
		if (a->local[i] == 0 || a->global[i] % a->local[i] != 0)
			return bad_geometry(ctx, p, a, "global is not a multiple "
			                    "of local");
		if (a->local[i] > ctx->caps.local_max[i] ||
		    a->global[i] / a->local[i] > ctx->grid_max[i]) {
			snprintf(why, sizeof(why), "axis %d exceeds the block "
			         "limit %zu or the grid limit %u", i,
			         ctx->caps.local_max[i], ctx->grid_max[i]);
			return bad_geometry(ctx, p, a, why);
		}
		g->grid[i] = (unsigned int)(a->global[i] / a->local[i]);
		g->block[i] = (unsigned int)a->local[i];
		threads *= a->local[i];
	}
	if (p->max_threads > 0 && (size_t)p->max_threads < most)
		most = (size_t)p->max_threads;
	if (threads <= most)
		return 0;
	snprintf(why, sizeof(why), "%zu threads per block, this kernel runs "
	         "at most %zu", threads, most);
	return bad_geometry(ctx, p, a, why);
}

int cu_launch_geometry(struct cu_ctx *ctx, const void *prog,
                       const struct tg_launch *a, struct cu_geometry *g)
{
	const struct cu_program *p = prog;

	if (a->local[0] == 1 && a->local[1] == 1 && a->local[2] == 1)
		return flat(ctx, p, a, g);
	return grouped(ctx, p, a, g);
}

/* The kernel's parameters: a pointer to each device pointer, then to
 * each value as an int; errors begin with `what`. */
int cu_launch_params(struct cu_ctx *ctx, const char *what,
                     const struct tg_launch *a, struct cu_args *out)
{
	if (a->nbufs + a->nvals > CU_MAX_ARGS)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: %zu "
		       "buffers and %zu values, at most %d in all", what,
		       a->nbufs, a->nvals, CU_MAX_ARGS);
	for (size_t i = 0; i < a->nbufs; i++) {
		out->ptrs[i] = (CUdeviceptr)(uintptr_t)a->bufs[i];
		out->kargs[i] = &out->ptrs[i];
	}
	for (size_t i = 0; i < a->nvals; i++) {
		if (a->vals[i] < INT32_MIN || a->vals[i] > INT32_MAX)
			return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: "
			       "value %zu is %" PRId64 ", outside the kernel's "
			       "int range", what, i, a->vals[i]);
		out->vals[i] = (int)a->vals[i];
		out->kargs[a->nbufs + i] = &out->vals[i];
	}
	return 0;
}

static int enqueue(struct cu_ctx *ctx, const struct cu_program *p,
                   const struct cu_geometry *g, void **args)
{
	CUresult r = ctx->drv.cuLaunchKernel(p->func, g->grid[0], g->grid[1],
	                                     g->grid[2], g->block[0],
	                                     g->block[1], g->block[2], 0, NULL,
	                                     args, NULL);

	if (r == CUDA_SUCCESS)
		return 0;
	return cu_fail(ctx, r, "cuLaunchKernel(%s, grid %u x %u x %u, block "
	               "%u x %u x %u)", p->name, g->grid[0], g->grid[1],
	               g->grid[2], g->block[0], g->block[1], g->block[2]);
}

/* Queues the kernel between two events and waits for the second. */
static int launch_timed(struct cu_ctx *ctx, const struct cu_program *p,
                        const struct cu_geometry *g, void **args,
                        double *elapsed_s)
{
	CUevent ev[2] = { NULL, NULL };
	float ms = 0;
	CUresult r = ctx->drv.cuEventCreate(&ev[0], CU_EVENT_DEFAULT);
	int ret = 0;

	if (r == CUDA_SUCCESS)
		r = ctx->drv.cuEventCreate(&ev[1], CU_EVENT_DEFAULT);
	if (r == CUDA_SUCCESS)
		r = ctx->drv.cuEventRecord(ev[0], NULL);
	if (r != CUDA_SUCCESS) {
		ret = cu_fail(ctx, r, "cuEventCreate/cuEventRecord");
		goto out;
	}
	if ((ret = enqueue(ctx, p, g, args)) != 0)
		goto out;
	if ((r = ctx->drv.cuEventRecord(ev[1], NULL)) == CUDA_SUCCESS &&
	    (r = ctx->drv.cuEventSynchronize(ev[1])) == CUDA_SUCCESS)
		r = ctx->drv.cuEventElapsedTime(&ms, ev[0], ev[1]);
	if (r != CUDA_SUCCESS)
		ret = cu_fail(ctx, r, "%s", p->name); /* the kernel's own */
	*elapsed_s = ms > 0 ? (double)ms * 1e-3 : 0.0;
out:
	for (int i = 0; i < 2; i++)
		if (ev[i] != NULL)
			ctx->drv.cuEventDestroy(ev[i]);
	return ret;
}

int cu_launch(struct tg_device *dev, void *prog, struct tg_launch *args)
{
	struct cu_ctx *ctx = dev->ctx;
	const struct cu_program *p = prog;
	struct cu_args kargs;
	struct cu_geometry g;
	char what[160];
	int ret;

	if (!TG_HAS(args, struct tg_launch, elapsed_s))
		return ctx->host->set_error(ctx->host, TG_EINVAL, "cuda launch: "
		       "struct tg_launch of %zu bytes, need %zu",
		       args->struct_size,
		       TG_STRUCT_SIZE(struct tg_launch, elapsed_s));
	snprintf(what, sizeof(what), "cuda launch of %s", p->name);
	if ((ret = cu_launch_geometry(ctx, p, args, &g)) != 0 ||
	    (ret = cu_launch_params(ctx, what, args, &kargs)) != 0 ||
	    (ret = cu_enter(ctx, "launch")) != 0)
		return ret;
	if (args->wait)
		return launch_timed(ctx, p, &g, kargs.kargs, &args->elapsed_s);
	return enqueue(ctx, p, &g, kargs.kargs);
}

CUfunction cu_program_func(const void *prog)
{
	return ((const struct cu_program *)prog)->func;
}

const char *cu_program_name(const void *prog)
{
	return ((const struct cu_program *)prog)->name;
}

int cu_synchronize(struct tg_device *dev)
{
	struct cu_ctx *ctx = dev->ctx;
	CUresult r;
	int ret;

	if ((ret = cu_enter(ctx, "synchronize")) != 0)
		return ret;
	r = ctx->drv.cuCtxSynchronize();
	return r == CUDA_SUCCESS ? 0 : cu_fail(ctx, r, "cuCtxSynchronize");
}

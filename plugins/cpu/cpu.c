#include "config.h"
/*
 * cpu.c - the CPU device: host memory, caps for the C renderer, and the
 * runtime that loads kernels (compile.c) and runs them on the thread pool
 * (pool.c), one launch at a time or a recorded graph of them at once.
 * The TG_PLUGIN_DEFINE block at the bottom is the table of contents.
 *
 * Config keys, section [cpu] (TG_CPU_* in the environment):
 *   cc      compiler command, split on blanks      default "cc"
 *   cflags  flags, split on blanks                 default "-O2
 *           -march=native -shared -fPIC", on x86 with
 *           -mprefer-vector-width=512 (compile.c says why)
 *   threads threads per launch, 0 = one per core   default 0
 *   vector_width  float lanes the kernels are      default 0
 *           written for: 0 = the CPU's widest register (16 with
 *           AVX-512, 8 with AVX, else 4), or 4, 8 or 16; GCC splits a
 *           vector wider than the CPU's, so any width runs anywhere,
 *           and CI runs the CPU suites at the width the host lacks
 *   devices how many CPU devices (CPU, CPU:1, ...)  default 1
 *           all of host memory, each with its own thread pool: tinygrad's
 *           CLANG:n, for multi-device work on one machine; copies between
 *           them are a memcpy (allocator->transfer)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "child.h"
#include "cpu.h"
#include "text.h"
#include "tool.h"

#define CPU_ALIGN 64 /* a cache line, and the widest AVX-512 load */
#define HUGE_ALIGN ((size_t)2 << 20) /* an x86-64 / arm64 huge page */
#define HUGE_MIN ((size_t)4 << 20)   /* buffers this big ask for them */

struct cpu_ctx {
	struct tg_device dev;       /* handed to the core; dev.ctx = this */
	struct tg_device_info info; /* dev.info points here */
	const struct tg_host *host; /* borrowed, outlives the device */
	struct cpu_cc *cc;          /* owned */
	struct cpu_pool *pool;      /* owned */
	size_t nthreads;
	uint64_t alloc_max;         /* RAM + swap: larger requests fail */
	struct tg_renderer_caps caps; /* cpu_renderer with this CPU's
	                                vector width */
	struct tg_tensor_core tc;   /* caps.tc: the register tile */
	char name[16];              /* "CPU", "CPU:1" */
	char description[256];
};

/* Defined at the bottom, with the descriptor. */
static const struct tg_allocator_iface cpu_allocator;
static const struct tg_compiler_iface cpu_compiler;
static const struct tg_renderer_caps cpu_renderer;
static const struct tg_runtime_iface cpu_runtime;

/* ------------------------------------------------------------------ */
/* Allocator: 64-byte aligned host memory, huge pages for big buffers */
/* ------------------------------------------------------------------ */

static uint64_t sysconf_bytes(int pages_name)
{
	long pages = sysconf(pages_name), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* RAM + swap, the most one allocation could ever be backed by. */
static uint64_t backing_bytes(void)
{
	struct sysinfo si;

	if (sysinfo(&si) != 0)
		return UINT64_MAX;
	return ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
}

/* Asks the kernel to back a big buffer with transparent huge pages
 * where the administrator lets programs ask (THP "madvise", Debian's
 * default), as numpy does: a matmul's column walk touches a new 4 KiB
 * page every row, and with 2 MiB pages its TLB misses go (N=2048: +20-
 * 35%).  Advice only: refused (no THP, an old kernel), nothing changes. */
static void ask_huge_pages(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
	(void)madvise(p, size, MADV_HUGEPAGE);
#else
	(void)p;
	(void)size;
#endif
}

/* Requests beyond RAM + swap fail before malloc sees them: overcommit
 * could otherwise hand out memory that can never exist, and ASan aborts
 * on such sizes instead of returning NULL. */
static int cpu_alloc(struct tg_device *dev, size_t size, void **out)
{
	struct cpu_ctx *ctx = dev->ctx;
	const struct tg_host *host = ctx->host;

	if (size <= ctx->alloc_max &&
	    posix_memalign(out, size >= HUGE_MIN ? HUGE_ALIGN : CPU_ALIGN,
	                   size > 0 ? size : 1) == 0) {
		if (size >= HUGE_MIN)
			ask_huge_pages(*out, size);
		return 0;
	}
	return host->set_error(host, TG_ENOMEM, "cpu alloc: out of host "
		"memory for %zu bytes (RAM + swap is %llu bytes)", size,
		(unsigned long long)ctx->alloc_max);
}

/* Host memory and native handles are both host pointers here; the
 * kernels' aligned vector loads need CPU_ALIGN. */
static int cpu_wrap(struct tg_device *dev, int kind, void *ptr, size_t size,
                    void **out)
{
	struct cpu_ctx *ctx = dev->ctx;

	(void)size;
	if (kind != TG_WRAP_HOST && kind != TG_WRAP_NATIVE)
		return ctx->host->set_error(ctx->host, TG_EUNSUPPORTED, "cpu "
		                            "wrap: unknown kind %d", kind);
	if ((uintptr_t)ptr % CPU_ALIGN)
		return ctx->host->set_error(ctx->host, TG_EUNSUPPORTED, "cpu "
		                            "wrap: memory at %p is not aligned "
		                            "to %d bytes (the kernels' aligned "
		                            "vector loads need it)", ptr,
		                            CPU_ALIGN);
	*out = ptr;
	return 0;
}

static void cpu_free(struct tg_device *dev, void *mem, size_t size)
{
	(void)dev;
	(void)size;
	free(mem);
}

static int cpu_copy_in(struct tg_device *dev, void *dst, size_t offset,
                       const void *src, size_t n)
{
	(void)dev;
	memcpy((char *)dst + offset, src, n);
	return 0;
}

static int cpu_copy_out(struct tg_device *dev, void *dst, const void *src,
                        size_t offset, size_t n)
{
	(void)dev;
	memcpy(dst, (const char *)src + offset, n);
	return 0;
}

/* A view is just a pointer into the allocation: nothing to free. */
static int cpu_view(struct tg_device *dev, void *mem, size_t offset,
                    size_t size, void **out)
{
	(void)dev;
	(void)size;
	*out = (char *)mem + offset;
	return 0;
}

static void cpu_view_free(struct tg_device *dev, void *view)
{
	(void)dev;
	(void)view;
}

/* Every CPU device's memory is host memory, so a copy between two of
 * them is a memcpy; launches have finished when they return. */
static int cpu_transfer(struct tg_device *dev, void *dst,
                        struct tg_device *src_dev, const void *src, size_t n)
{
	(void)dev;
	(void)src_dev;
	memcpy(dst, src, n);
	return 0;
}

static int cpu_mem_info(struct tg_device *dev, uint64_t *free_bytes,
                        uint64_t *total_bytes)
{
	(void)dev;
	*free_bytes = sysconf_bytes(_SC_AVPHYS_PAGES);
	*total_bytes = sysconf_bytes(_SC_PHYS_PAGES);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Compiler: see compile.c                                             */
/* ------------------------------------------------------------------ */

static const char *cpu_identity(struct tg_device *dev)
{
	struct cpu_ctx *ctx = dev->ctx;

	return cpu_cc_identity(ctx->cc);
}

static int cpu_compile(struct tg_device *dev, const char *src, void **blob,
                       size_t *blob_len, char **log)
{
	struct cpu_ctx *ctx = dev->ctx;

	return cpu_cc_compile(ctx->cc, src, blob, blob_len, log);
}

/* ------------------------------------------------------------------ */
/* Runtime                                                             */
/* ------------------------------------------------------------------ */

static int cpu_load(struct tg_device *dev, const char *name,
                    const void *blob, size_t blob_len, void **prog)
{
	struct cpu_ctx *ctx = dev->ctx;
	struct cpu_program *p;
	int ret = cpu_program_load(ctx->cc, name, blob, blob_len, &p);

	if (ret == 0)
		*prog = p;
	return ret;
}

/* global[0] * global[1] * global[2]; -1 when it overflows size_t. */
static int total_items(const size_t global[3], size_t *total)
{
	size_t t = global[0];

	for (int i = 1; i < 3; i++) {
		if (global[i] != 0 && t > SIZE_MAX / global[i])
			return -1;
		t *= global[i];
	}
	*total = t;
	return 0;
}

/* The work-items of a launch (`what` names it in errors). */
static int launch_total(const struct tg_host *host, const char *what,
                        const struct tg_launch *args, size_t *total)
{
	if (!TG_HAS(args, struct tg_launch, elapsed_s))
		return host->set_error(host, TG_EINVAL, "%s: struct "
			"tg_launch of %zu bytes, need %zu", what,
			args->struct_size,
			TG_STRUCT_SIZE(struct tg_launch, elapsed_s));
	if (total_items(args->global, total) != 0)
		return host->set_error(host, TG_EINVAL, "%s: global size "
			"%zu x %zu x %zu overflows size_t", what,
			args->global[0], args->global[1], args->global[2]);
	return 0;
}

/* The pool's job for a launch of prog. */
static int job_of(const struct cpu_ctx *ctx, const char *what,
                  const struct cpu_program *p, const struct tg_launch *args,
                  struct cpu_job *job)
{
	size_t total;
	int ret;

	if ((ret = launch_total(ctx->host, what, args, &total)))
		return ret;
	*job = (struct cpu_job){ .fn = p->fn, .bufs = args->bufs,
	                         .vals = args->vals, .global = args->global,
	                         .total = total };
	return 0;
}

/* Synchronous: returns when every chunk has run. */
static int cpu_launch(struct tg_device *dev, void *prog,
                      struct tg_launch *args)
{
	struct cpu_ctx *ctx = dev->ctx;
	struct cpu_job job;
	double start;
	int ret;

	if ((ret = job_of(ctx, "cpu launch", prog, args, &job)))
		return ret;
	start = args->wait ? tg_now_s() : 0.0;
	cpu_pool_run(ctx->pool, &job);
	if (args->wait)
		args->elapsed_s = tg_now_s() - start;
	return 0;
}

/* In a child process (trial.c); elapsed_s includes the fork. */
static int cpu_trial_run(struct tg_device *dev, void *prog,
                         struct tg_launch *args, double timeout_s)
{
	struct cpu_ctx *ctx = dev->ctx;
	struct cpu_job job;
	double start = tg_now_s();
	int ret;

	if ((ret = job_of(ctx, "cpu trial", prog, args, &job)) ||
	    (ret = cpu_trial(ctx->host, &job, timeout_s)))
		return ret;
	args->elapsed_s = tg_now_s() - start;
	return 0;
}

/* Launches are synchronous, so there is never anything to wait for. */
static int cpu_synchronize(struct tg_device *dev)
{
	(void)dev;
	return 0;
}

static void cpu_program_release(struct tg_device *dev, void *prog)
{
	(void)dev;
	cpu_program_free(prog);
}

/* ------------------------------------------------------------------ */
/* Graphs: the launches as one list for the pool                       */
/* ------------------------------------------------------------------ */

/* One job per launch.  The geometry is recorded; the buffers and values
 * are taken from the launches of each run. */
struct cpu_graph {
	size_t n;
	struct cpu_job *jobs; /* owned, n of them */
	size_t (*global)[3];  /* owned, n of them: jobs[i].global */
};

static void cpu_graph_free(struct tg_device *dev, void *graph)
{
	struct cpu_graph *g = graph;

	(void)dev;
	if (g == NULL)
		return;
	free(g->jobs);
	free(g->global);
	free(g);
}

/* Job i of g from launch i. */
static int graph_job(const struct tg_host *host, struct cpu_graph *g,
                     size_t i, const struct cpu_program *p,
                     const struct tg_launch *a)
{
	char what[64];

	snprintf(what, sizeof what, "cpu graph_new: launch %zu", i);
	memcpy(g->global[i], a->global, sizeof g->global[i]);
	g->jobs[i] = (struct cpu_job){ .fn = p->fn, .global = g->global[i] };
	return launch_total(host, what, a, &g->jobs[i].total);
}

static int cpu_graph_new(struct tg_device *dev, void *const *progs,
                         struct tg_launch *const *launches, size_t n,
                         void **graph)
{
	struct cpu_ctx *ctx = dev->ctx;
	struct cpu_graph *g = calloc(1, sizeof(*g));
	int ret = 0;

	if (g != NULL) {
		g->jobs = calloc(n > 0 ? n : 1, sizeof(*g->jobs));
		g->global = calloc(n > 0 ? n : 1, sizeof(*g->global));
	}
	if (g == NULL || g->jobs == NULL || g->global == NULL)
		ret = ctx->host->set_error(ctx->host, TG_ENOMEM, "cpu "
			"graph_new: out of host memory for %zu launches", n);
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = graph_job(ctx->host, g, i, progs[i], launches[i]);
	if (ret != 0) {
		cpu_graph_free(dev, g);
		return ret;
	}
	g->n = n;
	*graph = g;
	return 0;
}

/* Synchronous, like launch: returns when every kernel has run. */
static int cpu_graph_run(struct tg_device *dev, void *graph,
                         struct tg_launch *const *launches, size_t n)
{
	struct cpu_ctx *ctx = dev->ctx;
	struct cpu_graph *g = graph;

	if (n != g->n)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "cpu "
			"graph_run: %zu launches, the graph recorded %zu", n,
			g->n);
	for (size_t i = 0; i < n; i++) {
		g->jobs[i].bufs = launches[i]->bufs;
		g->jobs[i].vals = launches[i]->vals;
	}
	cpu_pool_run_graph(ctx->pool, g->jobs, n);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Probe, open, close                                                  */
/* ------------------------------------------------------------------ */

#define CPU_MAX_DEVICES 64

/* The devices setting: 1 unless [cpu] devices says otherwise; a bad
 * value is TG_ECONFIG with the error set. */
static int cpu_devices(const struct tg_host *host, int *n)
{
	const char *s = host->config_get(host, "devices");
	long v;

	*n = 1;
	if (s == NULL || *s == '\0')
		return 0;
	if (text_long(s, 1, CPU_MAX_DEVICES, &v) != 0)
		return text_bad_config(host, "cpu", "devices", "expected an "
		                       "integer from 1 to %d",
		                       CPU_MAX_DEVICES);
	*n = (int)v;
	return 0;
}

static int cpu_vector_width(const struct tg_host *host, int *lanes);

/* The CPU devices are all there, and finding them costs nothing.  A
 * bad devices, threads or vector_width setting is a configuration
 * error, found here so that auto selection stops with it whichever
 * device would have won (open checks them again). */
static int cpu_probe(const struct tg_host *host, struct tg_probe *out)
{
	size_t threads;
	int n, i, rc, lanes;

	out->ndevices = 0;
	if ((rc = cpu_devices(host, &n)) != 0 ||
	    (rc = cpu_pool_threads(host, &threads)) != 0 ||
	    (rc = cpu_vector_width(host, &lanes)) != 0)
		return rc;
	out->ndevices = n;
	if (TG_HAS(out, struct tg_probe, type))
		out->type = TG_DEVICE_CPU;
	if (TG_HAS(out, struct tg_probe, types)) {
		out->ntypes = n < TG_PROBE_MAX_TYPES ? n : TG_PROBE_MAX_TYPES;
		for (i = 0; i < out->ntypes; i++)
			out->types[i] = TG_DEVICE_CPU;
	}
	if (TG_HAS(out, struct tg_probe, reason))
		out->reason[0] = '\0';
	return 0;
}

/* "x86_64, 2 threads, cc (Debian 12.2.0-14) 12.2.0" */
static void describe(struct cpu_ctx *ctx)
{
	struct utsname u;

	if (uname(&u) != 0)
		snprintf(u.machine, sizeof(u.machine), "unknown");
	snprintf(ctx->description, sizeof(ctx->description),
	         "%s, %zu thread%s, %s", u.machine, ctx->nthreads,
	         ctx->nthreads == 1 ? "" : "s", cpu_cc_version(ctx->cc));
	ctx->info = (struct tg_device_info){
		.struct_size = TG_STRUCT_SIZE(struct tg_device_info,
		                              total_memory),
		.name = ctx->name,
		.description = ctx->description,
		.type = TG_DEVICE_CPU,
		.total_memory = sysconf_bytes(_SC_PHYS_PAGES),
	};
}

static void cpu_close(struct tg_device *dev);

/* The CPU's "tensor core": the register tile of an outer product of
 * float32s, two vectors of the machine's width along N (the output's
 * contiguous axis) by 8 rows along M, K 1: 16 vector accumulators, each
 * one FMA per step of the reduce, out of AVX-512's 32 registers (AVX2's
 * 16 hold the 8-lane tile's with its operands).  Upcasts only: the C
 * renderer's vectors make it the microkernel. */
static void register_tile(struct cpu_ctx *ctx)
{
	uint32_t lanes = (uint32_t)ctx->caps.max_upcast;

	ctx->tc = (struct tg_tensor_core){
		.struct_size = TG_STRUCT_SIZE(struct tg_tensor_core, splits),
		.dims = { 2 * lanes, 8, 1 },
		.dtype_in = TG_FLOAT32,
		.dtype_out = TG_FLOAT32,
		.nsplits = 3,
		.splits = { { TG_TC_UPCAST, 0, lanes }, { TG_TC_UPCAST, 0, 2 },
		            { TG_TC_UPCAST, 1, 8 } },
	};
	ctx->caps.tensor_cores = 1;
	ctx->caps.tc = &ctx->tc;
}

/* float lanes of the widest vector register (the kernels are built
 * with -march=native): 16 with AVX-512, 8 with AVX, else 4 (SSE, NEON,
 * or what the compiler splits). */
static int vector_lanes(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (__builtin_cpu_supports("avx512f"))
		return 16;
	if (__builtin_cpu_supports("avx"))
		return 8;
#endif
	return 4;
}

/* The vector_width setting: the CPU's lanes unless it names 4, 8 or
 * 16. */
static int cpu_vector_width(const struct tg_host *host, int *lanes)
{
	const char *s = host->config_get(host, "vector_width");
	long v;

	*lanes = vector_lanes();
	if (s == NULL || *s == '\0')
		return 0;
	if (text_long(s, 0, 16, &v) != 0 ||
	    (v != 0 && v != 4 && v != 8 && v != 16))
		return text_bad_config(host, "cpu", "vector_width", "expected "
		                       "0 (the CPU's, %d), 4, 8 or 16",
		                       *lanes);
	if (v)
		*lanes = (int)v;
	return 0;
}

static void fill_device(struct cpu_ctx *ctx)
{
	ctx->dev = (struct tg_device){
		.struct_size = TG_STRUCT_SIZE(struct tg_device, close),
		.ctx = ctx,
		.info = &ctx->info,
		.allocator = &cpu_allocator,
		.compiler = &cpu_compiler,
		.renderer = &ctx->caps,
		.runtime = &cpu_runtime,
		.close = cpu_close,
	};
}

static int cpu_open(const struct tg_host *host, int index,
                    struct tg_device **out)
{
	struct cpu_ctx *ctx;
	int ret, n, lanes;

	if ((ret = cpu_devices(host, &n)) != 0)
		return ret;
	if (index < 0 || index >= n)
		return host->set_error(host, TG_ENODEV, "cpu open: no device "
		                       "%d (there %s %d: [cpu] devices sets "
		                       "how many)", index, n == 1 ? "is" : "are",
		                       n);
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return host->set_error(host, TG_ENOMEM,
		                       "cpu open: out of host memory");
	ctx->host = host;
	if (index == 0)
		snprintf(ctx->name, sizeof(ctx->name), "CPU");
	else
		snprintf(ctx->name, sizeof(ctx->name), "CPU:%d", index);
	ret = cpu_pool_threads(host, &ctx->nthreads);
	if (ret == 0)
		ret = cpu_vector_width(host, &lanes);
	if (ret != 0)
		goto out_free_ctx;
	ret = cpu_cc_new(host, &ctx->cc);
	if (ret != 0)
		goto out_free_ctx;
	ret = cpu_pool_new(host, ctx->nthreads, &ctx->pool);
	if (ret != 0)
		goto out_free_cc;
	ctx->alloc_max = backing_bytes();
	ctx->caps = cpu_renderer;
	ctx->caps.max_upcast = lanes;
	register_tile(ctx);
	describe(ctx);
	fill_device(ctx);
	host->log(host, TG_LOG_DEBUG, "cpu: opened %s; compiler identity: "
	          "%s", ctx->description, cpu_cc_identity(ctx->cc));
	*out = &ctx->dev;
	return 0;
out_free_cc:
	cpu_cc_free(ctx->cc);
out_free_ctx:
	free(ctx);
	return ret;
}

/* Joins the workers; the core has freed every program and buffer. */
static void cpu_close(struct tg_device *dev)
{
	struct cpu_ctx *ctx = dev->ctx;

	cpu_pool_free(ctx->pool);
	cpu_cc_free(ctx->cc);
	free(ctx); /* dev lives inside ctx */
}

/* ------------------------------------------------------------------ */
/* Tables and the descriptor: the plugin's table of contents          */
/* ------------------------------------------------------------------ */

static const struct tg_allocator_iface cpu_allocator = {
	.struct_size = TG_STRUCT_SIZE(struct tg_allocator_iface, transfer),
	.alloc = cpu_alloc,
	.free = cpu_free,
	.copy_in = cpu_copy_in,
	.copy_out = cpu_copy_out,
	.view = cpu_view,
	.view_free = cpu_view_free,
	.mem_info = cpu_mem_info,
	.wrap = cpu_wrap,
	.transfer = cpu_transfer,
};

static const struct tg_compiler_iface cpu_compiler = {
	.struct_size = TG_STRUCT_SIZE(struct tg_compiler_iface, compile),
	.identity = cpu_identity,
	.compile = cpu_compile,
};

static const struct tg_renderer_caps cpu_renderer = {
	.struct_size = TG_STRUCT_SIZE(struct tg_renderer_caps, buffer_align),
	.dialect = TG_DIALECT_C,
	.has_local = 0,
	.has_shared = 0,
	.max_upcast = 4, /* cpu_open sets the CPU's (vector_lanes) */
	.global_max = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, /* launch checks */
	.local_max = { 1, 1, 1 },
	.local_max_total = 1,
	.shared_max = 0,
	.dtype_mask = TG_DTYPE_ALL,
	.needs_transcendental_fallback = 0, /* libm is linked in */
	.tensor_cores = 0, /* cpu_open describes the register tile */
	.buffer_align = CPU_ALIGN, /* cpu_alloc's least alignment */
};

static const struct tg_runtime_iface cpu_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, trial),
	.load = cpu_load,
	.launch = cpu_launch,
	.synchronize = cpu_synchronize,
	.program_free = cpu_program_release,
	.graph_new = cpu_graph_new,
	.graph_run = cpu_graph_run,
	.graph_free = cpu_graph_free,
	.trial = cpu_trial_run,
};

static const char *const cpu_aliases[] = { "CLANG", NULL };

static const struct tg_plugin cpu_plugin = {
	.struct_size = TG_STRUCT_SIZE(struct tg_plugin, unload),
	.abi_major = TG_PLUGIN_ABI_MAJOR,
	.abi_minor = TG_PLUGIN_ABI_MINOR,
	.name = "CPU",
	.aliases = cpu_aliases,
	.version = "0.1.0",
	.vendor = "tgcore",
	.description = "kernels built by the system C compiler, run on a "
	               "thread pool",
	.priority = 0,
	.probe = cpu_probe,
	.open = cpu_open,
	.query_extension = NULL,
	.unload = NULL,
};

TG_PLUGIN_DEFINE(cpu_plugin)

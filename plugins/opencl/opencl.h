/*
 * opencl.h - the OpenCL plugin's internal header, one section per .c
 * file.
 *
 * The plugin talks to the OpenCL ICD loader only (libOpenCL), using the
 * OpenCL 1.2 API, so any installed driver (PoCL, a GPU vendor's ICD)
 * works without being linked.  Kernels are OpenCL C rendered by the
 * core (TG_DIALECT_OPENCL); the compiler builds them from source into
 * the driver's binary, which the core caches on disk, and the runtime
 * rebuilds programs from those binaries.
 *
 * Kernel ABI: the buffers in argument order as `__global T *` (cl_mem),
 * then every symbolic value as `const int` (cl_int); the launch's
 * global size counts work-items per axis, and a local size of {1,1,1}
 * lets the driver choose the work-group (such kernels use
 * get_global_id only).
 */
#ifndef TG_PLUGIN_OPENCL_H
#define TG_PLUGIN_OPENCL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>
#include <tg/plugin.h>

#define OCL_BUILD_OPTIONS "-cl-std=CL1.2" /* nothing that changes numerics */
#define OCL_STR_MAX 256 /* longest name or version kept from the driver */

/* One opened device.  Everything but `lock` is read-only after open, so
 * the allocator and compiler run on any thread; the queue is in-order
 * and OpenCL calls on it are thread-safe. */
struct ocl_ctx {
	struct tg_device dev;        /* handed to the core; dev.ctx = this */
	struct tg_device_info info;  /* dev.info points here */
	struct tg_renderer_caps caps; /* dev.renderer points here */
	const struct tg_host *host;  /* borrowed, outlives the device */
	cl_platform_id platform;
	cl_device_id device;
	struct ocl_shared *shared;   /* the platform's context (context.c) */
	cl_context context;          /* shared->context */
	cl_command_queue queue;      /* owned; in order, with profiling */
	pthread_mutex_t lock;        /* clSetKernelArg + enqueue of a launch */
	size_t base_align;           /* bytes a sub-buffer offset must divide */
	cl_ulong max_alloc;          /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
	char name[32];               /* "OPENCL" or "OPENCL:n" */
	char dev_name[OCL_STR_MAX];
	char plat_name[OCL_STR_MAX];
	char plat_version[OCL_STR_MAX];
	char driver[OCL_STR_MAX];
	char dev_version[OCL_STR_MAX];
	char description[4 * OCL_STR_MAX + 16];
	char identity[6 * OCL_STR_MAX + 64];
};

/* ------------------------------------------------------------------ */
/* opencl.c: devices, probe, open, close                               */
/* ------------------------------------------------------------------ */

/* "CL_INVALID_KERNEL_NAME"; "CL error -9999" for a code it doesn't know
 * (in a thread-local buffer, valid until the next call). */
const char *ocl_err_name(cl_int err);
/* TG_ENOMEM for the driver's out-of-memory codes, else TG_ERUNTIME. */
int ocl_status(cl_int err);

/* ------------------------------------------------------------------ */
/* context.c: one context for the opened devices of a platform         */
/* ------------------------------------------------------------------ */

/* Sets ctx->shared and ctx->context: the context holding ctx->device,
 * made of peers[0..n) (the listed devices of ctx->platform, ctx->device
 * among them) when there is none yet. */
int ocl_context_get(struct ocl_ctx *ctx, const cl_device_id *peers,
                    cl_uint n);
/* Drops ctx's use of its context, released with its last device. */
void ocl_context_put(struct ocl_ctx *ctx);

/* ------------------------------------------------------------------ */
/* memory.c: the allocator (handles are cl_mem)                        */
/* ------------------------------------------------------------------ */

int ocl_alloc(struct tg_device *dev, size_t size, void **out);
void ocl_free(struct tg_device *dev, void *mem, size_t size);
int ocl_copy_in(struct tg_device *dev, void *dst, size_t offset,
                const void *src, size_t n);
int ocl_copy_out(struct tg_device *dev, void *dst, const void *src,
                 size_t offset, size_t n);
/* A sub-buffer: offset must be a multiple of ctx->base_align. */
int ocl_view(struct tg_device *dev, void *mem, size_t offset, size_t size,
             void **out);
void ocl_view_free(struct tg_device *dev, void *view);
/* A peer copy between two devices of one context; TG_EUNSUPPORTED for
 * devices of two contexts. */
int ocl_transfer(struct tg_device *dev, void *dst,
                 struct tg_device *src_dev, const void *src, size_t n);
int ocl_mem_info(struct tg_device *dev, uint64_t *free_bytes,
                 uint64_t *total_bytes);

/* ------------------------------------------------------------------ */
/* program.c: compiler and runtime                                     */
/* ------------------------------------------------------------------ */

/* Fills ctx->identity from the names and versions open collected. */
void ocl_identity_init(struct ocl_ctx *ctx);
/* Borrowed from the device. */
const char *ocl_identity(struct tg_device *dev);
int ocl_compile(struct tg_device *dev, const char *src, void **blob,
                size_t *blob_len, char **log);
int ocl_load(struct tg_device *dev, const char *name, const void *blob,
             size_t blob_len, void **prog);
int ocl_launch(struct tg_device *dev, void *prog, struct tg_launch *args);
int ocl_synchronize(struct tg_device *dev);
void ocl_program_free(struct tg_device *dev, void *prog);
/* Graphs: the launches checked once; a run queues them all under the
 * lock and flushes once. */
int ocl_graph_new(struct tg_device *dev, void *const *progs,
                  struct tg_launch *const *launches, size_t n,
                  void **graph);
int ocl_graph_run(struct tg_device *dev, void *graph,
                  struct tg_launch *const *launches, size_t n);
void ocl_graph_free(struct tg_device *dev, void *graph);

#endif /* TG_PLUGIN_OPENCL_H */

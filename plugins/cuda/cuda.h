/*
 * cuda.h - the CUDA plugin's internal header, one section per .c file.
 *
 * The plugin links nothing from CUDA.  It loads the driver
 * (libcuda.so.1) and NVRTC with dlopen when it probes or opens a device,
 * through its own declarations of the few entries it calls (api.c), so
 * it builds on a machine with no CUDA SDK and no GPU, and a missing
 * driver is a probe reason, never a load failure.  Config keys, section
 * [cuda] (TG_CUDA_* in the environment):
 *   libcuda   the driver library to load (default "libcuda.so.1"); the
 *             tests point it at a double
 *   nvrtc     the NVRTC library (default: by soname, newest first, then
 *             under `path`)
 *   path      a CUDA installation (as CUDA_PATH): <path>/lib64 and
 *             <path>/lib are searched for NVRTC
 *
 * Kernels are CUDA C rendered by the core (TG_DIALECT_CUDA), compiled by
 * NVRTC to a CUBIN for the device's exact architecture (no PTX: the
 * driver's JIT costs about 100 ms on first load), which the core caches
 * on disk under the identity (architecture, driver and NVRTC versions).
 *
 * Kernel ABI: the buffers in argument order as device pointers, then
 * every symbolic value as an int.  A launch with local {1,1,1} runs a
 * kernel without work-group indices: the plugin picks the block (flat
 * ids, CU_FLAT_BLOCK threads, blocks along x then y); otherwise global /
 * local blocks of local threads per axis.
 *
 * Memory handles are device pointers (CUdeviceptr) cast to void *; a
 * view is the pointer plus its offset.  Every call makes the device's
 * primary context current on the calling thread first, since the core
 * calls in from any thread.  Work runs on the legacy default stream, so
 * copies are ordered after the kernels queued before them.
 */
#ifndef TG_PLUGIN_CUDA_H
#define TG_PLUGIN_CUDA_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <tg/plugin.h>

#define CU_FLAT_BLOCK 128       /* threads per block of a flat launch */
#define CU_MIN_DRIVER 11010     /* CUDA 11.1: NVRTC's CUBIN output */
#define CU_STR_MAX 256
#define CU_STAGE_CHUNK (8 << 20) /* bytes of each pinned staging chunk */

/* ------------------------------------------------------------------ */
/* api.c: the driver and NVRTC, loaded at run time                     */
/* ------------------------------------------------------------------ */

/* The few types of cuda.h and nvrtc.h the plugin needs, with their
 * ABI (these are stable: opaque handles, ints, 64-bit pointers). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef int nvrtcResult;

/* A kernel node (CUDA_KERNEL_NODE_PARAMS_v2; the entries of drivers
 * before 12.0 read the fields up to `extra`, which are the same). */
typedef struct CU_KERNEL_NODE {
	CUfunction func;
	unsigned int grid[3], block[3];
	unsigned int shared_bytes;
	void **params;
	void **extra;
	void *kern;    /* CUkernel: NULL, func is used */
	CUcontext ctx; /* NULL: the current context */
} CU_KERNEL_NODE;
typedef struct _nvrtcProgram *nvrtcProgram;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NO_DEVICE 100
#define NVRTC_SUCCESS 0

/* cuDeviceGetAttribute's attributes the plugin reads. */
enum {
	CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
	CU_ATTR_MAX_BLOCK_DIM_X = 2,
	CU_ATTR_MAX_BLOCK_DIM_Y = 3,
	CU_ATTR_MAX_BLOCK_DIM_Z = 4,
	CU_ATTR_MAX_GRID_DIM_X = 5,
	CU_ATTR_MAX_GRID_DIM_Y = 6,
	CU_ATTR_MAX_GRID_DIM_Z = 7,
	CU_ATTR_MAX_SHARED_PER_BLOCK = 8,
	CU_ATTR_SM_COUNT = 16,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76
};
#define CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CU_EVENT_DEFAULT 0

/* X(name, symbol, return, params): every driver entry, with the
 * versioned symbol cuda.h maps its name to. */
#define CU_DRIVER_API(X)                                                    \
	X(cuInit, "cuInit", CUresult, (unsigned int))                       \
	X(cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int *))      \
	X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult,            \
	  const char **))                                                   \
	X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult,        \
	  const char **))                                                   \
	X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *))          \
	X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))          \
	X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char *, int,       \
	  CUdevice))                                                        \
	X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *,   \
	  int, CUdevice))                                                   \
	X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t *,     \
	  CUdevice))                                                        \
	X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult,   \
	  (CUcontext *, CUdevice))                                          \
	X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",        \
	  CUresult, (CUdevice))                                             \
	X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))        \
	X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, (void))           \
	X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))   \
	X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))               \
	X(cuMemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t *, size_t *))  \
	X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr,          \
	  const void *, size_t))                                            \
	X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *, CUdeviceptr,  \
	  size_t))                                                          \
	X(cuMemcpyPeer, "cuMemcpyPeer", CUresult, (CUdeviceptr, CUcontext,  \
	  CUdeviceptr, CUcontext, size_t))                                  \
	X(cuMemHostAlloc, "cuMemHostAlloc", CUresult, (void **, size_t,     \
	  unsigned int))                                                    \
	X(cuMemFreeHost, "cuMemFreeHost", CUresult, (void *))               \
	X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult,              \
	  (CUdeviceptr, const void *, size_t, CUstream))                    \
	X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult, (void *,     \
	  CUdeviceptr, size_t, CUstream))                                   \
	X(cuModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *,      \
	  const void *))                                                    \
	X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))           \
	X(cuModuleGetFunction, "cuModuleGetFunction", CUresult,             \
	  (CUfunction *, CUmodule, const char *))                           \
	X(cuFuncGetAttribute, "cuFuncGetAttribute", CUresult, (int *, int,  \
	  CUfunction))                                                      \
	X(cuLaunchKernel, "cuLaunchKernel", CUresult, (CUfunction,          \
	  unsigned int, unsigned int, unsigned int, unsigned int,           \
	  unsigned int, unsigned int, unsigned int, CUstream, void **,      \
	  void **))                                                         \
	X(cuEventCreate, "cuEventCreate", CUresult, (CUevent *,             \
	  unsigned int))                                                    \
	X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))    \
	X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))    \
	X(cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float *,     \
	  CUevent, CUevent))                                                \
	X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))

/* X(name, symbol, symbol before 12.0, return, params): the entries of
 * graphs (the JIT's replays), resolved when the driver has them (11.4
 * on for cuGraphInstantiateWithFlags): without them the plugin declines
 * graphs and the core launches kernel by kernel. */
#define CU_GRAPH_API(X)                                                     \
	X(cuGraphCreate, "cuGraphCreate", "cuGraphCreate", CUresult,        \
	  (CUgraph *, unsigned int))                                        \
	X(cuGraphAddKernelNode, "cuGraphAddKernelNode_v2",                  \
	  "cuGraphAddKernelNode", CUresult, (CUgraphNode *, CUgraph,        \
	  const CUgraphNode *, size_t, const CU_KERNEL_NODE *))             \
	X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",       \
	  "cuGraphInstantiateWithFlags", CUresult, (CUgraphExec *, CUgraph, \
	  unsigned long long))                                              \
	X(cuGraphExecKernelNodeSetParams,                                   \
	  "cuGraphExecKernelNodeSetParams_v2",                              \
	  "cuGraphExecKernelNodeSetParams", CUresult, (CUgraphExec,         \
	  CUgraphNode, const CU_KERNEL_NODE *))                             \
	X(cuGraphLaunch, "cuGraphLaunch", "cuGraphLaunch", CUresult,        \
	  (CUgraphExec, CUstream))                                          \
	X(cuGraphExecDestroy, "cuGraphExecDestroy", "cuGraphExecDestroy",   \
	  CUresult, (CUgraphExec))                                          \
	X(cuGraphDestroy, "cuGraphDestroy", "cuGraphDestroy", CUresult,     \
	  (CUgraph))

#define NVRTC_API(X)                                                        \
	X(nvrtcVersion, "nvrtcVersion", nvrtcResult, (int *, int *))        \
	X(nvrtcGetErrorString, "nvrtcGetErrorString", const char *,         \
	  (nvrtcResult))                                                    \
	X(nvrtcCreateProgram, "nvrtcCreateProgram", nvrtcResult,            \
	  (nvrtcProgram *, const char *, const char *, int,                 \
	   const char *const *, const char *const *))                       \
	X(nvrtcCompileProgram, "nvrtcCompileProgram", nvrtcResult,          \
	  (nvrtcProgram, int, const char *const *))                         \
	X(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", nvrtcResult,    \
	  (nvrtcProgram, size_t *))                                         \
	X(nvrtcGetProgramLog, "nvrtcGetProgramLog", nvrtcResult,            \
	  (nvrtcProgram, char *))                                           \
	X(nvrtcGetCUBINSize, "nvrtcGetCUBINSize", nvrtcResult,              \
	  (nvrtcProgram, size_t *))                                         \
	X(nvrtcGetCUBIN, "nvrtcGetCUBIN", nvrtcResult, (nvrtcProgram,       \
	  char *))                                                          \
	X(nvrtcDestroyProgram, "nvrtcDestroyProgram", nvrtcResult,          \
	  (nvrtcProgram *))

#define CU_API_FIELD(name, sym, ret, params) ret (*name) params;
#define CU_GRAPH_FIELD(name, sym, old, ret, params) ret (*name) params;

/* The driver: a dlopen handle and its entries. */
struct cu_driver {
	void *lib;
	char path[CU_STR_MAX + 64];
	int version;              /* cuDriverGetVersion: 13000 is 13.0 */
	CU_DRIVER_API(CU_API_FIELD)
	CU_GRAPH_API(CU_GRAPH_FIELD)
	const char *no_graphs;    /* the graph entry the driver lacks, or
	                             NULL: it has them all */
};

/* NVRTC: a dlopen handle and its entries. */
struct cu_nvrtc {
	void *lib;
	char path[CU_STR_MAX + 64];
	int major, minor;
	NVRTC_API(CU_API_FIELD)
};

/* Loads the driver (the [cuda] libcuda key, else libcuda.so.1),
 * resolves every entry, runs cuInit and checks the version.  On failure
 * returns TG_ENODEV with a one-line reason in why (for the probe) and
 * leaves nothing loaded. */
int cu_driver_load(const struct tg_host *host, struct cu_driver *drv,
                   char *why, size_t n);
void cu_driver_unload(struct cu_driver *drv);
/* Loads NVRTC ([cuda] nvrtc, else by soname newest first, else under
 * [cuda] path); TG_ENODEV with the reason in why. */
int cu_nvrtc_load(const struct tg_host *host, struct cu_nvrtc *rtc,
                  char *why, size_t n);
void cu_nvrtc_unload(struct cu_nvrtc *rtc);
/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", from the driver; a
 * thread-local buffer, valid until the next call. */
const char *cu_err_name(const struct cu_driver *drv, CUresult r);
/* TG_ENOMEM for the driver's out-of-memory result, else TG_ERUNTIME. */
int cu_status(CUresult r);

/* ------------------------------------------------------------------ */
/* cuda.c: devices, probe, open, close                                 */
/* ------------------------------------------------------------------ */

/* Two pinned chunks that copies between host and device go through
 * (staging.c); made at the first copy. */
struct cu_stage {
	pthread_mutex_t lock;        /* the chunks are the device's */
	void *host[2];               /* CU_STAGE_CHUNK bytes each, or NULL */
	CUevent done[2];             /* recorded after chunk k's last copy */
	int queued[2];               /* done[k] recorded and not waited on */
	int off;                     /* the driver refused: plain copies */
};

/* One opened device.  Read-only after open but for what the driver
 * guards itself and `stage` (its own lock), so every entry runs on any
 * thread. */
struct cu_ctx {
	struct tg_device dev;        /* handed to the core; dev.ctx = this */
	struct tg_device_info info;  /* dev.info points here */
	struct tg_renderer_caps caps; /* dev.renderer points here */
	const struct tg_host *host;  /* borrowed, outlives the device */
	struct cu_driver drv;        /* owned: loaded at open */
	struct cu_nvrtc rtc;         /* owned */
	CUdevice device;
	CUcontext context;           /* the primary context, retained */
	int cc_major, cc_minor;      /* compute capability */
	int sm_count;
	uint32_t grid_max[3];
	char name[32];               /* "CUDA" or "CUDA:n" */
	char dev_name[CU_STR_MAX];
	char arch[32];               /* "sm_90": NVRTC's target */
	char description[2 * CU_STR_MAX];
	char identity[4 * CU_STR_MAX];
	struct cu_stage stage;
};

/* Makes the device's context current on this thread; 0 or an error
 * naming `what`. */
int cu_enter(struct cu_ctx *ctx, const char *what);
/* set_error for a failed driver call: "cuda: <what> on CUDA:n: <name>",
 * what formatted from fmt; returns the status (cu_status). */
int cu_fail(struct cu_ctx *ctx, CUresult r, const char *fmt, ...)
	TG_PRINTF(3, 4);
/* Value of `key` in [cuda]; NULL when unset or empty. */
const char *cu_config(const struct tg_host *host, const char *key);

/* ------------------------------------------------------------------ */
/* staging.c: copies through pinned memory                             */
/* ------------------------------------------------------------------ */

/* n bytes (n > 0) from host memory to device memory, or back, through
 * the pinned chunks (the context current): 1 when done, 0 when the
 * device has no pinned memory (the caller copies directly), or a
 * negative status. */
int cu_stage_in(struct cu_ctx *ctx, CUdeviceptr dst, const void *src,
                size_t n);
int cu_stage_out(struct cu_ctx *ctx, void *dst, CUdeviceptr src, size_t n);
int cu_stage_init(struct cu_ctx *ctx);
/* Waits for the chunks' copies and frees them (the context current). */
void cu_stage_free(struct cu_ctx *ctx);

/* ------------------------------------------------------------------ */
/* memory.c: the allocator (handles are device pointers)               */
/* ------------------------------------------------------------------ */

int cu_alloc(struct tg_device *dev, size_t size, void **out);
void cu_free(struct tg_device *dev, void *mem, size_t size);
int cu_copy_in(struct tg_device *dev, void *dst, size_t offset,
               const void *src, size_t n);
int cu_copy_out(struct tg_device *dev, void *dst, const void *src,
                size_t offset, size_t n);
int cu_view(struct tg_device *dev, void *mem, size_t offset, size_t size,
            void **out);
void cu_view_free(struct tg_device *dev, void *view);
/* A copy between the memory of two CUDA devices (cuMemcpyPeer). */
int cu_transfer(struct tg_device *dev, void *dst, struct tg_device *src_dev,
                const void *src, size_t n);
int cu_mem_info(struct tg_device *dev, uint64_t *free_bytes,
                uint64_t *total_bytes);

/* ------------------------------------------------------------------ */
/* program.c: compiler and runtime                                     */
/* ------------------------------------------------------------------ */

/* Fills ctx->identity from what open collected. */
void cu_identity_init(struct cu_ctx *ctx);
const char *cu_identity(struct tg_device *dev);
int cu_compile(struct tg_device *dev, const char *src, void **blob,
               size_t *blob_len, char **log);
int cu_load(struct tg_device *dev, const char *name, const void *blob,
            size_t blob_len, void **prog);
int cu_launch(struct tg_device *dev, void *prog, struct tg_launch *args);
int cu_synchronize(struct tg_device *dev);
void cu_program_free(struct tg_device *dev, void *prog);

/* program.c's launch pieces, for graphs: the grid and block of a
 * launch (checked against the device and the kernel), its kernel
 * parameters (kargs pointing at ptrs and vals; errors begin with
 * what), the kernel's function and name. */
#define CU_MAX_ARGS 256    /* buffers plus values of one launch */
struct cu_geometry {
	unsigned int grid[3], block[3];
};
struct cu_args {
	CUdeviceptr ptrs[CU_MAX_ARGS];
	int vals[CU_MAX_ARGS];
	void *kargs[CU_MAX_ARGS];
};
int cu_launch_geometry(struct cu_ctx *ctx, const void *prog,
                       const struct tg_launch *a, struct cu_geometry *g);
int cu_launch_params(struct cu_ctx *ctx, const char *what,
                     const struct tg_launch *a, struct cu_args *out);
const char *cu_program_name(const void *prog);
CUfunction cu_program_func(const void *prog);

/* graph.c: the runtime's graph entries (tg_runtime_iface). */
int cu_graph_new(struct tg_device *dev, void *const *progs,
                 struct tg_launch *const *launches, size_t n, void **graph);
int cu_graph_run(struct tg_device *dev, void *graph,
                 struct tg_launch *const *launches, size_t n);
void cu_graph_free(struct tg_device *dev, void *graph);

#endif /* TG_PLUGIN_CUDA_H */

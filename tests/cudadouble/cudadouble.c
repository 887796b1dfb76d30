/*
 * cudadouble.c - a test double for the CUDA driver (libcuda.so.1) and
 * NVRTC in one library, for the CUDA plugin's tests on machines without
 * a GPU (tests/test_cuda.c).  The plugin loads it through its [cuda]
 * libcuda and nvrtc settings.
 *
 * One device, "Double GPU", compute capability 8.6, driver 12.4, NVRTC
 * 12.4.  Device memory is host memory.  "Compiling" copies the source
 * into the CUBIN; launches run nothing.  Every call is recorded in a log
 * the test reads with tgdouble_log().  TG_CUDA_DOUBLE, a comma list,
 * makes it fail on request:
 *   nodev          cuInit fails with CUDA_ERROR_NO_DEVICE
 *   zero           cuDeviceGetCount reports 0 devices
 *   old            cuDriverGetVersion reports 10.2
 *   compile_error  nvrtcCompileProgram fails with a log
 *   oom=N          at most N bytes allocated at once
 *   launch_fail    cuLaunchKernel fails (out of resources)
 *   sync_fault     cuCtxSynchronize reports an illegal address
 *   graph_fail     cuGraphInstantiateWithFlags fails (out of memory)
 *   two            two devices, each with its own context
 *   peer_fail      cuMemcpyPeer fails (an illegal address)
 *   pinned_fail    cuMemHostAlloc fails (out of memory)
 *   async_fail     async copies fail (an illegal address)
 * Async copies (cuMemcpyHtoDAsync, cuMemcpyDtoHAsync) run late, as a
 * copy engine does: when an event recorded after them is waited on, or
 * a synchronous call comes, so reading or refilling a staging buffer
 * too early gives wrong data.
 * Built with -DDOUBLE_MISSING it lacks cuModuleGetFunction.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static char call_log[65536];
static size_t in_use;

EXPORT const char *tgdouble_log(void);
EXPORT void tgdouble_clear(void);

const char *tgdouble_log(void)
{
	return call_log;
}

void tgdouble_clear(void)
{
	call_log[0] = '\0';
}

static void record(const char *fmt, ...)
{
	size_t n = strlen(call_log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(call_log + n, sizeof(call_log) - n, fmt, ap);
	va_end(ap);
	n = strlen(call_log);
	if (n + 1 < sizeof(call_log))
		strcat(call_log, "\n");
}

/* Whether TG_CUDA_DOUBLE asks for `what` (its value after '=' into v). */
static int wants(const char *what, long *v)
{
	const char *s = getenv("TG_CUDA_DOUBLE");
	size_t n = strlen(what);

	for (const char *p = s; p && *p; p += strcspn(p, ",")) {
		p += *p == ',';
		if (!strncmp(p, what, n) && (p[n] == ',' || p[n] == '\0' ||
		                             p[n] == '=')) {
			if (v)
				*v = p[n] == '=' ? strtol(p + n + 1, NULL, 10) : 0;
			return 1;
		}
	}
	return 0;
}

/* The async copies queued and not yet run, in order: copy i has
 * sequence number ran + i. */
struct pending { void *to; const void *from; size_t n; };
static struct pending queued[256];
static size_t nqueued;
static unsigned long long ran;

/* Runs the queued copies numbered below `upto`. */
static void run_until(unsigned long long upto)
{
	size_t k = 0;

	while (k < nqueued && ran < upto) {
		memcpy(queued[k].to, queued[k].from, queued[k].n);
		k++;
		ran++;
	}
	memmove(queued, queued + k, (nqueued - k) * sizeof *queued);
	nqueued -= k;
}

static void run_all(void)
{
	run_until(~0ull);
}

static CUresult enqueue(void *to, const void *from, size_t n)
{
	if (nqueued == sizeof queued / sizeof *queued)
		run_until(ran + 1);
	queued[nqueued++] = (struct pending){ to, from, n };
	return 0;
}

/* ------------------------------------------------------------ driver */

static const struct { int code; const char *name, *text; } errs[] = {
	{ 0, "CUDA_SUCCESS", "no error" },
	{ 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ 100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was "
	  "encountered" },
	{ 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources "
	  "requested for launch" },
};

/* Index of r in errs, or -1 (the driver's CUDA_ERROR_INVALID_VALUE). */
static int err_index(CUresult r)
{
	for (size_t i = 0; i < sizeof errs / sizeof *errs; i++)
		if (errs[i].code == r)
			return (int)i;
	return -1;
}

EXPORT CUresult cuGetErrorName(CUresult r, const char **s);
CUresult cuGetErrorName(CUresult r, const char **s)
{
	int i = err_index(r);

	return i < 0 ? 1 : (*s = errs[i].name, 0);
}

EXPORT CUresult cuGetErrorString(CUresult r, const char **s);
CUresult cuGetErrorString(CUresult r, const char **s)
{
	int i = err_index(r);

	return i < 0 ? 1 : (*s = errs[i].text, 0);
}

EXPORT CUresult cuInit(unsigned int flags);
CUresult cuInit(unsigned int flags)
{
	record("cuInit(%u)", flags);
	return wants("nodev", NULL) ? 100 : 0;
}

EXPORT CUresult cuDriverGetVersion(int *v);
CUresult cuDriverGetVersion(int *v)
{
	*v = wants("old", NULL) ? 10020 : 12040;
	return 0;
}

EXPORT CUresult cuDeviceGetCount(int *n);
CUresult cuDeviceGetCount(int *n)
{
	*n = wants("zero", NULL) ? 0 : wants("two", NULL) ? 2 : 1;
	return 0;
}

EXPORT CUresult cuDeviceGet(int *d, int i);
CUresult cuDeviceGet(int *d, int i)
{
	*d = i;
	return 0;
}

EXPORT CUresult cuDeviceGetName(char *s, int n, int d);
CUresult cuDeviceGetName(char *s, int n, int d)
{
	(void)d;
	snprintf(s, (size_t)n, "Double GPU");
	return 0;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int a, int d);
CUresult cuDeviceGetAttribute(int *v, int a, int d)
{
	(void)d;
	switch (a) {
	case 1: *v = 1024; break;                   /* threads per block */
	case 2: case 3: *v = 1024; break;           /* block x, y */
	case 4: *v = 64; break;                     /* block z */
	case 5: *v = 2147483647; break;             /* grid x */
	case 6: case 7: *v = 65535; break;          /* grid y, z */
	case 8: *v = 49152; break;                  /* shared */
	case 16: *v = 84; break;                    /* SMs */
	case 75: *v = 8; break;
	case 76: *v = 6; break;
	default: *v = 0;
	}
	return 0;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *b, int d);
CUresult cuDeviceTotalMem_v2(size_t *b, int d)
{
	(void)d;
	*b = (size_t)8 << 30;
	return 0;
}

/* A context is a pointer into this array: its index is the device's. */
static int contexts[2];

EXPORT CUresult cuDevicePrimaryCtxRetain(void **c, int d);
CUresult cuDevicePrimaryCtxRetain(void **c, int d)
{
	record("cuDevicePrimaryCtxRetain(%d)", d);
	*c = &contexts[d];
	return 0;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int d);
CUresult cuDevicePrimaryCtxRelease_v2(int d)
{
	record("cuDevicePrimaryCtxRelease(%d)", d);
	return 0;
}

EXPORT CUresult cuCtxSetCurrent(void *c);
CUresult cuCtxSetCurrent(void *c)
{
	(void)c;
	return 0;
}

EXPORT CUresult cuCtxSynchronize(void);
CUresult cuCtxSynchronize(void)
{
	run_all();
	record("cuCtxSynchronize");
	return wants("sync_fault", NULL) ? 700 : 0;
}

/* Allocations carry their size in front, for the oom=N budget. */
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	long cap;
	size_t *m;

	if (wants("oom", &cap) && in_use + n > (size_t)cap) {
		record("cuMemAlloc(%zu) = CUDA_ERROR_OUT_OF_MEMORY", n);
		return 2;
	}
	if ((m = malloc(n + 16)) == NULL)
		return 2;
	m[0] = n;
	in_use += n;
	*p = (CUdeviceptr)(uintptr_t)(m + 2);
	record("cuMemAlloc(%zu)", n);
	return 0;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuMemFree_v2(CUdeviceptr p)
{
	size_t *m = (size_t *)(uintptr_t)p - 2;

	run_all();
	record("cuMemFree(%zu)", m[0]);
	in_use -= m[0];
	free(m);
	return 0;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *f, size_t *t);
CUresult cuMemGetInfo_v2(size_t *f, size_t *t)
{
	*t = (size_t)8 << 30;
	*f = *t - in_use;
	return 0;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	run_all();
	record("cuMemcpyHtoD(%zu)", n);
	memcpy((void *)(uintptr_t)d, s, n);
	return 0;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n);
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	run_all();
	record("cuMemcpyDtoH(%zu)", n);
	memcpy(d, (const void *)(uintptr_t)s, n);
	return 0;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n,
                                     void *stream);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n,
                              void *stream)
{
	(void)stream;
	record("cuMemcpyHtoDAsync(%zu)", n);
	if (wants("async_fail", NULL))
		return 700;
	return enqueue((void *)(uintptr_t)d, s, n);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n,
                                     void *stream);
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n,
                              void *stream)
{
	(void)stream;
	record("cuMemcpyDtoHAsync(%zu)", n);
	if (wants("async_fail", NULL))
		return 700;
	return enqueue(d, (const void *)(uintptr_t)s, n);
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags);
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
	record("cuMemHostAlloc(%zu, %u)", n, flags);
	if (wants("pinned_fail", NULL))
		return 2;
	*p = malloc(n);
	return *p ? 0 : 2;
}

EXPORT CUresult cuMemFreeHost(void *p);
CUresult cuMemFreeHost(void *p)
{
	run_all();
	record("cuMemFreeHost");
	free(p);
	return 0;
}

EXPORT CUresult cuMemcpyPeer(CUdeviceptr d, int *dctx, CUdeviceptr s,
                             int *sctx, size_t n);
CUresult cuMemcpyPeer(CUdeviceptr d, int *dctx, CUdeviceptr s, int *sctx,
                      size_t n)
{
	run_all();
	record("cuMemcpyPeer(%zu bytes, context %d <- context %d)", n,
	       (int)(dctx - contexts), (int)(sctx - contexts));
	if (wants("peer_fail", NULL))
		return 700;
	memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
	return 0;
}

struct module { char name[128]; };

EXPORT CUresult cuModuleLoadData(struct module **m, const void *img);
CUresult cuModuleLoadData(struct module **m, const void *img)
{
	record("cuModuleLoadData(%.40s)", (const char *)img);
	*m = calloc(1, sizeof(**m));
	return *m ? 0 : 2;
}

EXPORT CUresult cuModuleUnload(struct module *m);
CUresult cuModuleUnload(struct module *m)
{
	record("cuModuleUnload");
	free(m);
	return 0;
}

#ifndef DOUBLE_MISSING
EXPORT CUresult cuModuleGetFunction(void **f, struct module *m,
                                    const char *name);
CUresult cuModuleGetFunction(void **f, struct module *m, const char *name)
{
	snprintf(m->name, sizeof m->name, "%s", name);
	record("cuModuleGetFunction(%s)", name);
	*f = m;
	return 0;
}
#endif

EXPORT CUresult cuFuncGetAttribute(int *v, int a, void *f);
CUresult cuFuncGetAttribute(int *v, int a, void *f)
{
	(void)f;
	*v = a == 0 ? 256 : 0; /* this "kernel" runs 256 threads a block */
	return 0;
}

EXPORT CUresult cuLaunchKernel(struct module *f, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, void *stream,
                               void **args, void **extra);
CUresult cuLaunchKernel(struct module *f, unsigned gx, unsigned gy,
                        unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **args,
                        void **extra)
{
	(void)shared, (void)stream, (void)extra, (void)args;
	record("cuLaunchKernel(%s, grid %u %u %u, block %u %u %u)", f->name,
	       gx, gy, gz, bx, by, bz);
	return wants("launch_fail", NULL) ? 701 : 0;
}

/* Graphs: nodes are numbered; a kernel node's parameters as the
 * plugin declares them (CUDA_KERNEL_NODE_PARAMS_v2). */
struct knode {
	struct module *func;
	unsigned grid[3], block[3], shared;
	void **params, **extra;
	void *kern, *ctx;
};
static size_t nodes;

EXPORT CUresult cuGraphCreate(void **g, unsigned flags);
CUresult cuGraphCreate(void **g, unsigned flags)
{
	(void)flags;
	record("cuGraphCreate");
	nodes = 0;
	*g = malloc(1);
	return *g ? 0 : 2;
}

EXPORT CUresult cuGraphAddKernelNode_v2(void **node, void *g,
                                        void *const *deps, size_t ndeps,
                                        const struct knode *p);
CUresult cuGraphAddKernelNode_v2(void **node, void *g, void *const *deps,
                                 size_t ndeps, const struct knode *p)
{
	(void)g;
	record("cuGraphAddKernelNode(%s, grid %u %u %u, block %u %u %u, "
	       "after %ld, buffer %llx)", p->func->name, p->grid[0],
	       p->grid[1], p->grid[2], p->block[0], p->block[1], p->block[2],
	       ndeps ? (long)(uintptr_t)deps[0] - 1 : -1L,
	       *(unsigned long long *)p->params[0]);
	*node = (void *)(uintptr_t)++nodes;
	return 0;
}

EXPORT CUresult cuGraphInstantiateWithFlags(void **e, void *g,
                                            unsigned long long flags);
CUresult cuGraphInstantiateWithFlags(void **e, void *g,
                                     unsigned long long flags)
{
	(void)g, (void)flags;
	record("cuGraphInstantiateWithFlags");
	if (wants("graph_fail", NULL))
		return 2;
	*e = malloc(1);
	return *e ? 0 : 2;
}

EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(void *e, void *node,
                                                  const struct knode *p);
CUresult cuGraphExecKernelNodeSetParams_v2(void *e, void *node,
                                           const struct knode *p)
{
	(void)e;
	record("cuGraphExecKernelNodeSetParams(node %ld, buffer %llx)",
	       (long)(uintptr_t)node - 1, *(unsigned long long *)p->params[0]);
	return 0;
}

EXPORT CUresult cuGraphLaunch(void *e, void *stream);
CUresult cuGraphLaunch(void *e, void *stream)
{
	(void)e, (void)stream;
	record("cuGraphLaunch");
	return 0;
}

EXPORT CUresult cuGraphExecDestroy(void *e);
CUresult cuGraphExecDestroy(void *e)
{
	record("cuGraphExecDestroy");
	free(e);
	return 0;
}

EXPORT CUresult cuGraphDestroy(void *g);
CUresult cuGraphDestroy(void *g)
{
	record("cuGraphDestroy");
	free(g);
	return 0;
}

/* An event holds the sequence number of the first copy queued after
 * it was recorded. */
EXPORT CUresult cuEventCreate(unsigned long long **e, unsigned flags);
CUresult cuEventCreate(unsigned long long **e, unsigned flags)
{
	(void)flags;
	*e = calloc(1, sizeof **e);
	return *e ? 0 : 2;
}

EXPORT CUresult cuEventRecord(unsigned long long *e, void *s);
CUresult cuEventRecord(unsigned long long *e, void *s)
{
	(void)s;
	*e = ran + nqueued;
	return 0;
}

EXPORT CUresult cuEventSynchronize(unsigned long long *e);
CUresult cuEventSynchronize(unsigned long long *e)
{
	run_until(*e);
	return 0;
}

EXPORT CUresult cuEventElapsedTime(float *ms, void *a, void *b);
CUresult cuEventElapsedTime(float *ms, void *a, void *b)
{
	(void)a, (void)b;
	*ms = 0.5f;
	return 0;
}

EXPORT CUresult cuEventDestroy_v2(void *e);
CUresult cuEventDestroy_v2(void *e)
{
	free(e);
	return 0;
}

/* ------------------------------------------------------------- NVRTC */

struct prog { char *src; int failed; };

EXPORT int nvrtcVersion(int *major, int *minor);
int nvrtcVersion(int *major, int *minor)
{
	*major = 12;
	*minor = 4;
	return 0;
}

EXPORT const char *nvrtcGetErrorString(int r);
const char *nvrtcGetErrorString(int r)
{
	return r == 6 ? "NVRTC_ERROR_COMPILATION" : r ? "NVRTC_ERROR" :
	       "NVRTC_SUCCESS";
}

EXPORT int nvrtcCreateProgram(struct prog **p, const char *src,
                              const char *name, int n,
                              const char *const *h, const char *const *i);
int nvrtcCreateProgram(struct prog **p, const char *src, const char *name,
                       int n, const char *const *h, const char *const *i)
{
	(void)name, (void)n, (void)h, (void)i;
	if ((*p = calloc(1, sizeof(**p))) == NULL ||
	    ((*p)->src = strdup(src)) == NULL)
		return 1;
	return 0;
}

EXPORT int nvrtcCompileProgram(struct prog *p, int n,
                               const char *const *opts);
int nvrtcCompileProgram(struct prog *p, int n, const char *const *opts)
{
	char line[512] = "nvrtcCompileProgram";

	for (int i = 0; i < n; i++) {
		strncat(line, " ", sizeof line - strlen(line) - 1);
		strncat(line, opts[i], sizeof line - strlen(line) - 1);
	}
	record("%s", line);
	p->failed = wants("compile_error", NULL);
	return p->failed ? 6 : 0;
}

static const char compile_log[] =
	"tgcore.cu(3): error: identifier \"tg_nothing\" is undefined\n"
	"1 error detected in the compilation of \"tgcore.cu\".\n";

EXPORT int nvrtcGetProgramLogSize(struct prog *p, size_t *n);
int nvrtcGetProgramLogSize(struct prog *p, size_t *n)
{
	*n = p->failed ? sizeof compile_log : 1;
	return 0;
}

EXPORT int nvrtcGetProgramLog(struct prog *p, char *log);
int nvrtcGetProgramLog(struct prog *p, char *log)
{
	strcpy(log, p->failed ? compile_log : "");
	return 0;
}

EXPORT int nvrtcGetCUBINSize(struct prog *p, size_t *n);
int nvrtcGetCUBINSize(struct prog *p, size_t *n)
{
	*n = strlen(p->src) + 1;
	return 0;
}

EXPORT int nvrtcGetCUBIN(struct prog *p, char *out);
int nvrtcGetCUBIN(struct prog *p, char *out)
{
	strcpy(out, p->src);
	return 0;
}

EXPORT int nvrtcDestroyProgram(struct prog **p);
int nvrtcDestroyProgram(struct prog **p)
{
	free((*p)->src);
	free(*p);
	*p = NULL;
	return 0;
}

#include "config.h"
/*
 * program.c - OpenCL C to device binaries (the compiler table) and
 * binaries to running kernels (the runtime table).
 *
 * compile builds the source with the driver's compiler and hands the
 * core the device binary, which the core caches on disk under the
 * identity (platform, device, driver and build options).  load rebuilds
 * a program from such a binary, so a cache hit skips the OpenCL C
 * compiler.  Known limit: a driver that changes its binary format
 * without changing its version string makes cached binaries fail to
 * load (CL_INVALID_BINARY); clearing the cache (CACHELEVEL=0 or a new
 * CACHEDB) recovers.
 *
 * Launch ABI: arguments are the buffers (cl_mem) in order, then each
 * value as a cl_int; the global size counts work-items; a local size of
 * {1,1,1} leaves the work-group to the driver.  Kernel objects are not
 * thread-safe between clSetKernelArg and the enqueue, so a device-wide
 * mutex covers both.
 *
 * A graph is checked once when recorded; a run checks only the values
 * (the one thing that may stop fitting), queues every launch under one
 * hold of the mutex, setting each one's arguments right before its
 * enqueue (two launches of one program share its kernel object), and
 * flushes once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"
#include "text.h"

#define ERROR_LINES 4   /* build log lines quoted by set_error */
#define ERROR_BYTES 600

/* A loaded kernel. */
struct ocl_program {
	cl_program program; /* owned */
	cl_kernel kernel;   /* owned */
	cl_uint nargs;      /* CL_KERNEL_NUM_ARGS */
	size_t group_max;   /* CL_KERNEL_WORK_GROUP_SIZE on this device */
};

/* ------------------------------------------------------------------ */
/* Compiler                                                            */
/* ------------------------------------------------------------------ */

void ocl_identity_init(struct ocl_ctx *ctx)
{
	snprintf(ctx->identity, sizeof(ctx->identity),
	         "opencl | %s %s | %s | driver %s | %s | " OCL_BUILD_OPTIONS,
	         ctx->plat_name, ctx->plat_version, ctx->dev_name,
	         ctx->driver, ctx->dev_version);
}

const char *ocl_identity(struct tg_device *dev)
{
	struct ocl_ctx *ctx = dev->ctx;

	return ctx->identity;
}

/* The build log (host->alloc'd), or NULL when empty or unavailable:
 * the log only explains, so failing to get it fails nothing. */
static char *build_log(struct ocl_ctx *ctx, cl_program prog)
{
	const struct tg_host *host = ctx->host;
	size_t size = 0, n;
	char *log;

	if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0,
	                          NULL, &size) != CL_SUCCESS || size <= 1 ||
	    (log = host->alloc(host, size + 1)) == NULL)
		return NULL;
	if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG,
	                          size, log, NULL) != CL_SUCCESS)
		log[0] = '\0';
	log[size] = '\0';
	n = strlen(log);
	while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' '))
		log[--n] = '\0';
	if (n > 0)
		return log;
	host->free(host, log);
	return NULL;
}

/* TG_ECOMPILE (TG_ENOMEM when the driver ran out) quoting the log. */
static int build_failed(struct ocl_ctx *ctx, cl_int err, const char *log)
{
	const char *text = log != NULL ? log : "(no build log)";
	int status = ocl_status(err) == TG_ENOMEM ? TG_ENOMEM : TG_ECOMPILE;

	return ctx->host->set_error(ctx->host, status, "opencl: build failed "
		"on %s (%s): %.*s", ctx->name, ocl_err_name(err),
		text_head_len(text, ERROR_LINES, ERROR_BYTES), text);
}

/* Where ctx's device is among prog's devices (a program made from
 * source belongs to every device of the context, which the platform's
 * devices share: context.c), into *at, and how many there are. */
static cl_int device_slot(struct ocl_ctx *ctx, cl_program prog, cl_uint *at,
                          cl_uint *n)
{
	cl_device_id *ids;
	cl_int err = clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES,
	                              sizeof(*n), n, NULL);

	if (err != CL_SUCCESS)
		return err;
	if (*n == 0 || (ids = calloc(*n, sizeof(*ids))) == NULL)
		return *n == 0 ? CL_INVALID_PROGRAM : CL_OUT_OF_HOST_MEMORY;
	err = clGetProgramInfo(prog, CL_PROGRAM_DEVICES, *n * sizeof(*ids),
	                       ids, NULL);
	for (*at = 0; err == CL_SUCCESS && *at < *n &&
	              ids[*at] != ctx->device; (*at)++)
		;
	if (err == CL_SUCCESS && *at == *n)
		err = CL_INVALID_DEVICE;
	free(ids);
	return err;
}

/* Which entry of prog's per-device arrays is ctx's device: its index,
 * or 0 when the driver answered with a single entry (PoCL keeps one
 * binary for a program's identical devices and reports only that). */
static cl_uint binary_slot(cl_uint at, size_t answered)
{
	return at < answered ? at : answered == 1 ? 0 : at;
}

/* The device binary of a built program, copied into host memory: the
 * entry of ctx's device (the others are left NULL, which OpenCL
 * skips). */
static int get_binary(struct ocl_ctx *ctx, cl_program prog, void **blob,
                      size_t *blob_len)
{
	const struct tg_host *host = ctx->host;
	cl_uint at = 0, n = 0;
	size_t *sizes = NULL, ret_size = 0;
	unsigned char **bins = NULL;
	const char *what = "CL_PROGRAM_DEVICES";
	cl_int err = device_slot(ctx, prog, &at, &n);
	int ret = 0;

	if (err == CL_SUCCESS &&
	    ((sizes = calloc(n, sizeof(*sizes))) == NULL ||
	     (bins = calloc(n, sizeof(*bins))) == NULL))
		err = CL_OUT_OF_HOST_MEMORY;
	if (err == CL_SUCCESS) {
		what = "CL_PROGRAM_BINARY_SIZES";
		err = clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES,
		                       n * sizeof(*sizes), sizes, &ret_size);
		at = binary_slot(at, ret_size / sizeof(*sizes));
	}
	if (err == CL_SUCCESS && sizes[at] == 0)
		ret = host->set_error(host, TG_ECOMPILE, "opencl: the driver "
			"of %s returned an empty program binary", ctx->name);
	else if (err == CL_SUCCESS &&
	         (bins[at] = host->alloc(host, sizes[at])) == NULL)
		ret = host->set_error(host, TG_ENOMEM, "opencl: out of host "
			"memory for a program binary of %zu bytes", sizes[at]);
	else if (err == CL_SUCCESS) {
		what = "CL_PROGRAM_BINARIES";
		err = clGetProgramInfo(prog, CL_PROGRAM_BINARIES,
		                       n * sizeof(*bins), bins, NULL);
	}
	if (ret == 0 && err != CL_SUCCESS)
		ret = host->set_error(host, ocl_status(err), "opencl: "
			"clGetProgramInfo(%s) on %s: %s", what, ctx->name,
			ocl_err_name(err));
	if (ret == 0) {
		*blob = bins[at];
		*blob_len = sizes[at];
	} else if (bins != NULL) {
		host->free(host, bins[at]);
	}
	free(sizes);
	free(bins);
	return ret;
}

/* Builds `src` and returns the device binary.  The build log goes to
 * *log: the errors on failure, warnings on success. */
int ocl_compile(struct tg_device *dev, const char *src, void **blob,
                size_t *blob_len, char **log)
{
	struct ocl_ctx *ctx = dev->ctx;
	cl_program prog;
	cl_int err;
	char *text;
	int ret;

	prog = clCreateProgramWithSource(ctx->context, 1, &src, NULL, &err);
	if (prog == NULL)
		return ctx->host->set_error(ctx->host, ocl_status(err),
			"opencl: clCreateProgramWithSource on %s: %s",
			ctx->name, ocl_err_name(err));
	err = clBuildProgram(prog, 1, &ctx->device, OCL_BUILD_OPTIONS, NULL,
	                     NULL);
	text = build_log(ctx, prog);
	if (err != CL_SUCCESS)
		ret = build_failed(ctx, err, text);
	else
		ret = get_binary(ctx, prog, blob, blob_len);
	*log = text;
	clReleaseProgram(prog);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

/* A built program from a binary of ocl_compile. */
static int program_from_binary(struct ocl_ctx *ctx, const char *name,
                               const void *blob, size_t len,
                               cl_program *out)
{
	const struct tg_host *host = ctx->host;
	const unsigned char *bin = blob;
	cl_int err, status = CL_SUCCESS;
	char *log;
	int ret;

	*out = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &len,
	                                 &bin, &status, &err);
	if (*out == NULL)
		return host->set_error(host, ocl_status(err), "opencl: "
			"clCreateProgramWithBinary '%s' (%zu bytes) on %s: %s "
			"(binary status %s)", name, len, ctx->name,
			ocl_err_name(err), ocl_err_name(status));
	err = clBuildProgram(*out, 1, &ctx->device, OCL_BUILD_OPTIONS, NULL,
	                     NULL);
	if (err == CL_SUCCESS)
		return 0;
	log = build_log(ctx, *out);
	ret = host->set_error(host, ocl_status(err), "opencl: building '%s' "
		"from its binary on %s: %s: %.*s", name, ctx->name,
		ocl_err_name(err),
		log ? text_head_len(log, ERROR_LINES, ERROR_BYTES) : 0,
		log ? log : "");
	host->free(host, log);
	clReleaseProgram(*out);
	return ret;
}

/* Kernel `name` of p->program and what launches check against. */
static int create_kernel(struct ocl_ctx *ctx, const char *name,
                         struct ocl_program *p)
{
	const struct tg_host *host = ctx->host;
	cl_int err;

	p->kernel = clCreateKernel(p->program, name, &err);
	if (p->kernel == NULL)
		return host->set_error(host, ocl_status(err), "opencl: "
			"clCreateKernel '%s' on %s: %s", name, ctx->name,
			ocl_err_name(err));
	err = clGetKernelInfo(p->kernel, CL_KERNEL_NUM_ARGS,
	                      sizeof(p->nargs), &p->nargs, NULL);
	if (err == CL_SUCCESS)
		err = clGetKernelWorkGroupInfo(p->kernel, ctx->device,
			CL_KERNEL_WORK_GROUP_SIZE, sizeof(p->group_max),
			&p->group_max, NULL);
	if (err == CL_SUCCESS)
		return 0;
	clReleaseKernel(p->kernel);
	return host->set_error(host, ocl_status(err), "opencl: querying "
		"kernel '%s' on %s: %s", name, ctx->name, ocl_err_name(err));
}

int ocl_load(struct tg_device *dev, const char *name, const void *blob,
             size_t blob_len, void **prog)
{
	struct ocl_ctx *ctx = dev->ctx;
	struct ocl_program *p = calloc(1, sizeof(*p));
	int ret;

	if (p == NULL)
		return ctx->host->set_error(ctx->host, TG_ENOMEM,
		                            "opencl: out of host memory");
	ret = program_from_binary(ctx, name, blob, blob_len, &p->program);
	if (ret != 0)
		goto out_free_program;
	ret = create_kernel(ctx, name, p);
	if (ret != 0)
		goto out_release_program;
	*prog = p;
	return 0;
out_release_program:
	clReleaseProgram(p->program);
out_free_program:
	free(p);
	return ret;
}

void ocl_program_free(struct tg_device *dev, void *prog)
{
	struct ocl_program *p = prog;

	(void)dev;
	if (p == NULL)
		return;
	clReleaseKernel(p->kernel);
	clReleaseProgram(p->program);
	free(p);
}

/* ------------------------------------------------------------------ */
/* Launching                                                           */
/* ------------------------------------------------------------------ */

/* The first value that is not an int, or a->nvals. */
static size_t bad_val(const struct tg_launch *a)
{
	size_t i;

	for (i = 0; i < a->nvals; i++)
		if (a->vals[i] < INT32_MIN || a->vals[i] > INT32_MAX)
			break;
	return i;
}

/* Every value is an int (`what` names the launch in the error). */
static int check_vals(struct ocl_ctx *ctx, const char *what,
                      const struct tg_launch *a)
{
	size_t i = bad_val(a);

	if (i == a->nvals)
		return 0;
	return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: value %zu is "
		"%" PRId64 ", outside the kernel's int range", what, i,
		a->vals[i]);
}

/* The argument count matches the kernel's and every value is an int. */
static int check_args(struct ocl_ctx *ctx, const char *what,
                      const struct ocl_program *p, const struct tg_launch *a)
{
	const struct tg_host *host = ctx->host;

	if (a->nbufs + a->nvals != p->nargs)
		return host->set_error(host, TG_EINVAL, "%s: the kernel "
			"takes %u arguments, the launch gives %zu buffers and "
			"%zu values", what, (unsigned)p->nargs, a->nbufs,
			a->nvals);
	return check_vals(ctx, what, a);
}

/* Each axis holds whole work-groups within the device's limits. */
static int check_axes(struct ocl_ctx *ctx, const char *what,
                      const size_t g[3], const size_t l[3])
{
	const struct tg_host *host = ctx->host;
	const struct tg_renderer_caps *c = &ctx->caps;

	for (int i = 0; i < 3; i++) {
		if (g[i] == 0 || l[i] == 0 || g[i] % l[i] != 0)
			return host->set_error(host, TG_EINVAL, "%s: global "
				"size %zu x %zu x %zu is not a positive "
				"multiple of local size %zu x %zu x %zu (axis "
				"%d)", what, g[0], g[1], g[2], l[0], l[1], l[2],
				i);
		if (l[i] > c->local_max[i] || g[i] > c->global_max[i])
			return host->set_error(host, TG_EINVAL, "%s: axis %d: "
				"global %zu / local %zu exceed %s's limits %zu "
				"/ %zu", what, i, g[i], l[i], ctx->name,
				c->global_max[i], c->local_max[i]);
	}
	return 0;
}

/* The work-group fits the device and this kernel (whose registers or
 * local memory may allow fewer items than the device's maximum). */
static int check_group(struct ocl_ctx *ctx, const char *what,
                       const struct ocl_program *p, const size_t l[3])
{
	size_t group = l[0] * l[1] * l[2], most = ctx->caps.local_max_total;

	if (p->group_max > 0 && p->group_max < most)
		most = p->group_max;
	if (group <= most)
		return 0;
	return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: local size "
		"%zu x %zu x %zu is %zu work-items; this kernel runs at most "
		"%zu per group on %s", what, l[0], l[1], l[2], group, most,
		ctx->name);
}

/* Everything a launch is checked for before it is queued. */
static int check_launch(struct ocl_ctx *ctx, const char *what,
                        const struct ocl_program *p,
                        const struct tg_launch *a)
{
	int ret;

	if (!TG_HAS(a, struct tg_launch, elapsed_s))
		return ctx->host->set_error(ctx->host, TG_EINVAL, "%s: "
			"struct tg_launch of %zu bytes, need %zu", what,
			a->struct_size,
			TG_STRUCT_SIZE(struct tg_launch, elapsed_s));
	if ((ret = check_args(ctx, what, p, a)) != 0 ||
	    (ret = check_axes(ctx, what, a->global, a->local)) != 0)
		return ret;
	return check_group(ctx, what, p, a->local);
}

static int set_args(struct ocl_ctx *ctx, const struct ocl_program *p,
                    const struct tg_launch *a)
{
	cl_int err = CL_SUCCESS;
	size_t i;

	for (i = 0; i < a->nbufs && err == CL_SUCCESS; i++) {
		cl_mem mem = a->bufs[i];

		err = clSetKernelArg(p->kernel, (cl_uint)i, sizeof(mem), &mem);
	}
	for (; i < a->nbufs + a->nvals && err == CL_SUCCESS; i++) {
		cl_int v = (cl_int)a->vals[i - a->nbufs];

		err = clSetKernelArg(p->kernel, (cl_uint)i, sizeof(v), &v);
	}
	if (err == CL_SUCCESS)
		return 0;
	return ctx->host->set_error(ctx->host, ocl_status(err), "opencl: "
		"clSetKernelArg %zu of %zu on %s: %s", i - 1,
		a->nbufs + a->nvals, ctx->name, ocl_err_name(err));
}

/* Sets the arguments and queues the kernel.  The caller holds the
 * device lock: the arguments live on the kernel object until the
 * enqueue captures them. */
static int enqueue_locked(struct ocl_ctx *ctx, const struct ocl_program *p,
                          const struct tg_launch *a, cl_event *ev)
{
	int whole = a->local[0] == 1 && a->local[1] == 1 && a->local[2] == 1;
	cl_int err;
	int ret = set_args(ctx, p, a);

	if (ret != 0)
		return ret;
	err = clEnqueueNDRangeKernel(ctx->queue, p->kernel, 3, NULL,
		a->global, whole ? NULL : a->local, 0, NULL, ev);
	if (err == CL_SUCCESS)
		return 0;
	return ctx->host->set_error(ctx->host, ocl_status(err), "opencl: "
		"clEnqueueNDRangeKernel global %zu x %zu x %zu local %zu x "
		"%zu x %zu on %s: %s", a->global[0], a->global[1],
		a->global[2], a->local[0], a->local[1], a->local[2],
		ctx->name, ocl_err_name(err));
}

static int enqueue(struct ocl_ctx *ctx, const struct ocl_program *p,
                   const struct tg_launch *a, cl_event *ev)
{
	int ret;

	pthread_mutex_lock(&ctx->lock);
	ret = enqueue_locked(ctx, p, a, ev);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* Waits for the kernel and reads its device time. */
static int wait_timed(struct ocl_ctx *ctx, cl_event ev, double *elapsed_s)
{
	cl_ulong start = 0, end = 0;
	cl_int status = CL_COMPLETE;
	cl_int err = clWaitForEvents(1, &ev);

	if (err == CL_SUCCESS ||
	    err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
		clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
		               sizeof(status), &status, NULL);
	if (err == CL_SUCCESS && status < 0)
		err = status; /* the kernel itself failed */
	if (err == CL_SUCCESS)
		err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START,
		                              sizeof(start), &start, NULL);
	if (err == CL_SUCCESS)
		err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END,
		                              sizeof(end), &end, NULL);
	if (err != CL_SUCCESS)
		return ctx->host->set_error(ctx->host, ocl_status(err),
			"opencl: waiting for the kernel on %s: %s", ctx->name,
			ocl_err_name(status < 0 ? status : err));
	*elapsed_s = end > start ? (double)(end - start) * 1e-9 : 0.0;
	return 0;
}

int ocl_launch(struct tg_device *dev, void *prog, struct tg_launch *args)
{
	struct ocl_ctx *ctx = dev->ctx;
	const struct ocl_program *p = prog;
	cl_event ev = NULL;
	int ret;

	if ((ret = check_launch(ctx, "opencl launch", p, args)) != 0)
		return ret;
	ret = enqueue(ctx, p, args, args->wait ? &ev : NULL);
	if (ret == 0 && args->wait)
		ret = wait_timed(ctx, ev, &args->elapsed_s);
	if (ev != NULL)
		clReleaseEvent(ev);
	return ret;
}

int ocl_synchronize(struct tg_device *dev)
{
	struct ocl_ctx *ctx = dev->ctx;
	cl_int err = clFinish(ctx->queue);

	if (err == CL_SUCCESS)
		return 0;
	return ctx->host->set_error(ctx->host, ocl_status(err), "opencl: "
		"clFinish on %s: %s", ctx->name, ocl_err_name(err));
}

/* ------------------------------------------------------------------ */
/* Graphs                                                              */
/* ------------------------------------------------------------------ */

/* The recorded launches' programs: checked once, then queued back to
 * back under one lock and flushed once per run. */
struct ocl_graph {
	size_t n;
	const struct ocl_program **progs; /* owned array, n of them */
};

void ocl_graph_free(struct tg_device *dev, void *graph)
{
	struct ocl_graph *g = graph;

	(void)dev;
	if (g == NULL)
		return;
	free(g->progs);
	free(g);
}

int ocl_graph_new(struct tg_device *dev, void *const *progs,
                  struct tg_launch *const *launches, size_t n,
                  void **graph)
{
	struct ocl_ctx *ctx = dev->ctx;
	struct ocl_graph *g = calloc(1, sizeof(*g));
	char what[64];
	int ret = 0;

	if (g == NULL || (g->progs = calloc(n ? n : 1, sizeof(*g->progs))) ==
	    NULL)
		ret = ctx->host->set_error(ctx->host, TG_ENOMEM, "opencl "
			"graph_new: out of host memory for %zu launches", n);
	for (size_t i = 0; i < n && ret == 0; i++) {
		snprintf(what, sizeof(what), "opencl graph_new: launch %zu",
		         i);
		g->progs[i] = progs[i];
		ret = check_launch(ctx, what, progs[i], launches[i]);
	}
	if (ret != 0) {
		ocl_graph_free(dev, g);
		return ret;
	}
	g->n = n;
	*graph = g;
	return 0;
}

/* The values of a run still fit the kernels' ints (the rest was checked
 * by graph_new and cannot change). */
static int check_run(struct ocl_ctx *ctx, const struct ocl_graph *g,
                     struct tg_launch *const *launches, size_t n)
{
	char what[64];

	if (n != g->n)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "opencl "
			"graph_run: %zu launches, the graph recorded %zu", n,
			g->n);
	for (size_t i = 0; i < n; i++) {
		if (bad_val(launches[i]) == launches[i]->nvals)
			continue;
		snprintf(what, sizeof(what), "opencl graph_run: launch %zu",
		         i);
		return check_vals(ctx, what, launches[i]);
	}
	return 0;
}

/* Queues every launch, then one clFlush so the device starts on all of
 * them (launch leaves flushing to the driver). */
int ocl_graph_run(struct tg_device *dev, void *graph,
                  struct tg_launch *const *launches, size_t n)
{
	struct ocl_ctx *ctx = dev->ctx;
	const struct ocl_graph *g = graph;
	int ret = check_run(ctx, g, launches, n);
	cl_int err;

	if (ret != 0)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = enqueue_locked(ctx, g->progs[i], launches[i], NULL);
	pthread_mutex_unlock(&ctx->lock);
	err = clFlush(ctx->queue);
	if (ret == 0 && err != CL_SUCCESS)
		ret = ctx->host->set_error(ctx->host, ocl_status(err), "opencl "
			"graph_run: clFlush of %zu launches on %s: %s", n,
			ctx->name, ocl_err_name(err));
	return ret;
}

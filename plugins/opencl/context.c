#include "config.h"
/*
 * context.c - one cl_context for the opened devices of a platform.
 *
 * A buffer belongs to a context, not to a device: every device of the
 * context may read it in a kernel or copy from it with
 * clEnqueueCopyBuffer.  So OPENCL:0 and OPENCL:1 of one platform share
 * a context, made with every listed device of that platform when the
 * first of them opens, and a copy between them is one command on the
 * destination's queue (ocl_transfer) instead of a read to the host and
 * a write back.  Devices of different platforms cannot share one, and
 * their copies go through the host.  A driver that refuses a context of
 * several devices gets one per device (logged), as before.
 *
 * The list is global to the plugin (devices of every tg host of the
 * process share it) and guarded by its own mutex; open and close are
 * rare.
 */
#include <stdlib.h>

#include "opencl.h"

struct ocl_shared {
	cl_context context;            /* owned */
	cl_platform_id platform;
	cl_device_id *devices;         /* owned: those the context holds */
	cl_uint ndevices;
	int refs;                      /* opened devices using it */
	struct ocl_shared *next;
};

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ocl_shared *shared_list;

static int holds(const struct ocl_shared *s, cl_device_id d)
{
	for (cl_uint i = 0; i < s->ndevices; i++)
		if (s->devices[i] == d)
			return 1;
	return 0;
}

/* A new context of devs[0..n) (ctx's device among them), NULL with
 * *err set on a failure. */
static struct ocl_shared *shared_new(struct ocl_ctx *ctx,
                                     const cl_device_id *devs, cl_uint n,
                                     cl_int *err)
{
	cl_context_properties props[] = {
		CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0
	};
	struct ocl_shared *s = calloc(1, sizeof(*s));

	*err = CL_OUT_OF_HOST_MEMORY;
	if (s == NULL || (s->devices = calloc(n, sizeof(*devs))) == NULL) {
		free(s);
		return NULL;
	}
	s->context = clCreateContext(props, n, devs, NULL, NULL, err);
	if (s->context == NULL) {
		free(s->devices);
		free(s);
		return NULL;
	}
	for (cl_uint i = 0; i < n; i++)
		s->devices[i] = devs[i];
	s->ndevices = n;
	s->platform = ctx->platform;
	return s;
}

/* The context for ctx: an existing one holding its device, else a new
 * one of peers[0..n) (the listed devices of its platform, its own
 * among them), else one of its device alone. */
static struct ocl_shared *find_or_make(struct ocl_ctx *ctx,
                                       const cl_device_id *peers,
                                       cl_uint n, cl_int *err)
{
	struct ocl_shared *s;

	for (s = shared_list; s != NULL; s = s->next)
		if (s->platform == ctx->platform && holds(s, ctx->device))
			return s;
	if (n > 1) {
		if ((s = shared_new(ctx, peers, n, err)) != NULL)
			return s;
		ctx->host->log(ctx->host, TG_LOG_DEBUG, "opencl: a context of "
		               "%u devices on '%s' failed (%s); %s gets one of "
		               "its own, and copies to it go through the host",
		               (unsigned)n, ctx->plat_name, ocl_err_name(*err),
		               ctx->name);
	}
	return shared_new(ctx, &ctx->device, 1, err);
}

int ocl_context_get(struct ocl_ctx *ctx, const cl_device_id *peers,
                    cl_uint n)
{
	struct ocl_shared *s;
	cl_int err = CL_SUCCESS;

	pthread_mutex_lock(&shared_lock);
	s = find_or_make(ctx, peers, n, &err);
	if (s != NULL && s->refs++ == 0) {
		s->next = shared_list;
		shared_list = s;
	}
	pthread_mutex_unlock(&shared_lock);
	if (s == NULL)
		return ctx->host->set_error(ctx->host, ocl_status(err),
			"opencl open: clCreateContext on %s (%s): %s",
			ctx->name, ctx->dev_name, ocl_err_name(err));
	ctx->shared = s;
	ctx->context = s->context;
	return 0;
}

void ocl_context_put(struct ocl_ctx *ctx)
{
	struct ocl_shared *s = ctx->shared, **p;

	if (s == NULL)
		return;
	pthread_mutex_lock(&shared_lock);
	if (--s->refs == 0) {
		for (p = &shared_list; *p != s; p = &(*p)->next)
			;
		*p = s->next;
		clReleaseContext(s->context);
		free(s->devices);
		free(s);
	}
	pthread_mutex_unlock(&shared_lock);
	ctx->shared = NULL;
	ctx->context = NULL;
}

#include "config.h"
/*
 * opencl.c - OpenCL devices through the ICD loader: which devices there
 * are, opening one (context, queue, what it can do), and the descriptor
 * the core sees.  The TG_PLUGIN_DEFINE block at the bottom is the table
 * of contents; memory.c and program.c hold the other tables' entries.
 *
 * The device list is every device of every platform, in the loader's
 * platform order.  Config keys, section [opencl] (TG_OPENCL_* in the
 * environment), narrow it before OPENCL:n indexes it:
 *   platform  an index, or a case-insensitive part of the platform's
 *             name ("pocl", "nvidia"): only that platform's devices
 *             (the first platform whose name matches)
 *   device    an index into what is left: only that device
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"
#include "text.h"

#define PLATFORM_NOT_FOUND_KHR (-1001) /* cl_khr_icd: no ICD installed */

/* Defined at the bottom, with the descriptor. */
static const struct tg_allocator_iface ocl_allocator;
static const struct tg_compiler_iface ocl_compiler;
static const struct tg_runtime_iface ocl_runtime;

/* ------------------------------------------------------------------ */
/* Error codes                                                         */
/* ------------------------------------------------------------------ */

#define CL_ERRORS(X)                                                        \
	X(CL_SUCCESS) X(CL_DEVICE_NOT_FOUND) X(CL_DEVICE_NOT_AVAILABLE)     \
	X(CL_COMPILER_NOT_AVAILABLE) X(CL_MEM_OBJECT_ALLOCATION_FAILURE)    \
	X(CL_OUT_OF_RESOURCES) X(CL_OUT_OF_HOST_MEMORY)                     \
	X(CL_PROFILING_INFO_NOT_AVAILABLE) X(CL_MEM_COPY_OVERLAP)           \
	X(CL_IMAGE_FORMAT_MISMATCH) X(CL_IMAGE_FORMAT_NOT_SUPPORTED)        \
	X(CL_BUILD_PROGRAM_FAILURE) X(CL_MAP_FAILURE)                       \
	X(CL_MISALIGNED_SUB_BUFFER_OFFSET)                                  \
	X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)                     \
	X(CL_COMPILE_PROGRAM_FAILURE) X(CL_LINKER_NOT_AVAILABLE)            \
	X(CL_LINK_PROGRAM_FAILURE) X(CL_DEVICE_PARTITION_FAILED)            \
	X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) X(CL_INVALID_VALUE)             \
	X(CL_INVALID_DEVICE_TYPE) X(CL_INVALID_PLATFORM)                    \
	X(CL_INVALID_DEVICE) X(CL_INVALID_CONTEXT)                          \
	X(CL_INVALID_QUEUE_PROPERTIES) X(CL_INVALID_COMMAND_QUEUE)          \
	X(CL_INVALID_HOST_PTR) X(CL_INVALID_MEM_OBJECT)                     \
	X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) X(CL_INVALID_IMAGE_SIZE)      \
	X(CL_INVALID_SAMPLER) X(CL_INVALID_BINARY)                          \
	X(CL_INVALID_BUILD_OPTIONS) X(CL_INVALID_PROGRAM)                   \
	X(CL_INVALID_PROGRAM_EXECUTABLE) X(CL_INVALID_KERNEL_NAME)          \
	X(CL_INVALID_KERNEL_DEFINITION) X(CL_INVALID_KERNEL)                \
	X(CL_INVALID_ARG_INDEX) X(CL_INVALID_ARG_VALUE)                     \
	X(CL_INVALID_ARG_SIZE) X(CL_INVALID_KERNEL_ARGS)                    \
	X(CL_INVALID_WORK_DIMENSION) X(CL_INVALID_WORK_GROUP_SIZE)          \
	X(CL_INVALID_WORK_ITEM_SIZE) X(CL_INVALID_GLOBAL_OFFSET)            \
	X(CL_INVALID_EVENT_WAIT_LIST) X(CL_INVALID_EVENT)                   \
	X(CL_INVALID_OPERATION) X(CL_INVALID_GL_OBJECT)                     \
	X(CL_INVALID_BUFFER_SIZE) X(CL_INVALID_MIP_LEVEL)                   \
	X(CL_INVALID_GLOBAL_WORK_SIZE) X(CL_INVALID_PROPERTY)               \
	X(CL_INVALID_IMAGE_DESCRIPTOR) X(CL_INVALID_COMPILER_OPTIONS)       \
	X(CL_INVALID_LINKER_OPTIONS) X(CL_INVALID_DEVICE_PARTITION_COUNT)

#define CL_ERROR_ENTRY(code) { code, #code },

static const struct {
	cl_int code;
	const char *name;
} cl_errors[] = {
	CL_ERRORS(CL_ERROR_ENTRY)
	{ PLATFORM_NOT_FOUND_KHR, "CL_PLATFORM_NOT_FOUND_KHR" },
};

const char *ocl_err_name(cl_int err)
{
	static _Thread_local char unknown[32];

	for (size_t i = 0; i < sizeof(cl_errors) / sizeof(cl_errors[0]); i++)
		if (cl_errors[i].code == err)
			return cl_errors[i].name;
	snprintf(unknown, sizeof(unknown), "CL error %d", (int)err);
	return unknown;
}

int ocl_status(cl_int err)
{
	switch (err) {
	case CL_MEM_OBJECT_ALLOCATION_FAILURE:
	case CL_OUT_OF_RESOURCES:
	case CL_OUT_OF_HOST_MEMORY:
		return TG_ENOMEM;
	default:
		return TG_ERUNTIME;
	}
}

/* ------------------------------------------------------------------ */
/* Driver strings                                                      */
/* ------------------------------------------------------------------ */

/* Copies src into dst[n] without leading or trailing blanks (drivers
 * pad names and end versions with spaces). */
static void copy_trimmed(char *dst, size_t n, const char *src)
{
	size_t len;

	src += strspn(src, " \t\r\n");
	len = strlen(src);
	while (len > 0 && isspace((unsigned char)src[len - 1]))
		len--;
	snprintf(dst, n, "%.*s", (int)(len < INT_MAX ? len : INT_MAX), src);
}

/* clGetDeviceInfo and clGetPlatformInfo behind one signature. */
typedef cl_int (*info_fn)(const void *obj, cl_uint param, size_t size,
                          void *value, size_t *size_ret);

static cl_int device_info(const void *obj, cl_uint param, size_t size,
                          void *value, size_t *size_ret)
{
	return clGetDeviceInfo(*(const cl_device_id *)obj, param, size, value,
	                       size_ret);
}

static cl_int platform_info(const void *obj, cl_uint param, size_t size,
                            void *value, size_t *size_ret)
{
	return clGetPlatformInfo(*(const cl_platform_id *)obj, param, size,
	                         value, size_ret);
}

/* A string property, malloc'd and NUL-terminated; NULL with *err set
 * (CL_OUT_OF_HOST_MEMORY when malloc failed). */
static char *info_string(info_fn get, const void *obj, cl_uint param,
                         cl_int *err)
{
	size_t size = 0;
	char *s;

	*err = get(obj, param, 0, NULL, &size);
	if (*err != CL_SUCCESS)
		return NULL;
	if ((s = malloc(size + 1)) == NULL) {
		*err = CL_OUT_OF_HOST_MEMORY;
		return NULL;
	}
	*err = get(obj, param, size, s, NULL);
	if (*err != CL_SUCCESS) {
		free(s);
		return NULL;
	}
	s[size] = '\0';
	return s;
}

static char *device_string(cl_device_id d, cl_device_info p, cl_int *err)
{
	return info_string(device_info, &d, p, err);
}

static char *platform_string(cl_platform_id pl, cl_platform_info p,
                             cl_int *err)
{
	return info_string(platform_info, &pl, p, err);
}

/* The platform's name into buf[n], "?" when the driver won't say. */
static void platform_name(cl_platform_id pl, char *buf, size_t n)
{
	cl_int err;
	char *s = platform_string(pl, CL_PLATFORM_NAME, &err);

	copy_trimmed(buf, n, s != NULL ? s : "?");
	free(s);
}

/* Whether the space-separated list `exts` holds the word `ext`. */
static int has_word(const char *exts, const char *ext)
{
	size_t n = strlen(ext);

	for (const char *p = exts; (p = strstr(p, ext)) != NULL; p += n)
		if ((p == exts || isspace((unsigned char)p[-1])) &&
		    (p[n] == '\0' || isspace((unsigned char)p[n])))
			return 1;
	return 0;
}

static int contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay != '\0'; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return n == 0;
}

/* ------------------------------------------------------------------ */
/* The device list                                                     */
/* ------------------------------------------------------------------ */

struct entry {
	cl_platform_id platform;
	cl_device_id device;
};

/* Devices in the order OPENCL:n counts them. */
struct devlist {
	struct entry *v; /* owned */
	size_t n;
};

/* A non-negative decimal index no larger than INT_MAX; -1 otherwise. */
static long parse_index(const char *s)
{
	long v;

	return text_long(s, 0, INT_MAX, &v) == 0 ? v : -1;
}

/* The config value of `key`, NULL when unset or empty. */
static const char *config(const struct tg_host *host, const char *key)
{
	const char *v = host->config_get(host, key);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* Every platform the loader knows, malloc'd into *out.  0 platforms is
 * not an error (the caller explains it). */
static int get_platforms(cl_platform_id **out, cl_uint *n, char *why,
                         size_t len)
{
	cl_int err = clGetPlatformIDs(0, NULL, n);

	*out = NULL;
	if (err == PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && *n == 0)) {
		*n = 0;
		return 0;
	}
	if (err == CL_SUCCESS && (*out = calloc(*n, sizeof(**out))) == NULL)
		err = CL_OUT_OF_HOST_MEMORY;
	if (err == CL_SUCCESS)
		err = clGetPlatformIDs(*n, *out, NULL);
	if (err == CL_SUCCESS)
		return 0;
	free(*out);
	*out = NULL;
	snprintf(why, len, "clGetPlatformIDs: %s", ocl_err_name(err));
	return ocl_status(err);
}

/* "have 2: 0 'NVIDIA CUDA', 1 'Portable Computing Language'" */
static void list_platforms(const cl_platform_id *p, cl_uint np, char *buf,
                           size_t len)
{
	char name[OCL_STR_MAX];
	size_t off = (size_t)snprintf(buf, len, "have %u", (unsigned)np);

	for (cl_uint i = 0; i < np && off < len; i++) {
		platform_name(p[i], name, sizeof(name));
		off += (size_t)snprintf(buf + off, len - off, "%s%u '%s'",
		                        i ? ", " : ": ", (unsigned)i, name);
	}
}

/* The platforms config `platform` keeps: [*first, *last). */
static int pick_platforms(const struct tg_host *host,
                          const cl_platform_id *p, cl_uint np,
                          cl_uint *first, cl_uint *last)
{
	const char *want = config(host, "platform");
	char name[OCL_STR_MAX], have[160];
	long idx;

	*first = 0;
	*last = np;
	if (want == NULL)
		return 0;
	idx = parse_index(want);
	for (cl_uint i = 0; i < np && idx < 0; i++) {
		platform_name(p[i], name, sizeof(name));
		if (contains_nocase(name, want))
			idx = (long)i;
	}
	if (idx >= 0 && idx < (long)np) {
		*first = (cl_uint)idx;
		*last = *first + 1;
		return 0;
	}
	list_platforms(p, np, have, sizeof(have));
	return text_bad_config(host, "opencl", "platform", "matches no "
	                       "OpenCL platform (%s)", have);
}

/* Appends platform pl's devices to l. */
static int add_devices(cl_platform_id pl, struct devlist *l, char *why,
                       size_t len)
{
	cl_uint n = 0;
	cl_device_id *ids;
	struct entry *v;
	cl_int err = clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 0, NULL, &n);

	if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n == 0))
		return 0;
	if (err != CL_SUCCESS) {
		snprintf(why, len, "clGetDeviceIDs: %s", ocl_err_name(err));
		return ocl_status(err);
	}
	ids = calloc(n, sizeof(*ids));
	v = realloc(l->v, (l->n + n) * sizeof(*v));
	if (v != NULL)
		l->v = v;
	if (ids == NULL || v == NULL) {
		free(ids);
		snprintf(why, len, "out of host memory");
		return TG_ENOMEM;
	}
	err = clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, n, ids, NULL);
	for (cl_uint i = 0; i < n && err == CL_SUCCESS; i++)
		l->v[l->n++] = (struct entry){ .platform = pl,
		                               .device = ids[i] };
	free(ids);
	if (err == CL_SUCCESS)
		return 0;
	snprintf(why, len, "clGetDeviceIDs: %s", ocl_err_name(err));
	return ocl_status(err);
}

/* Keeps only the device config `device` names. */
static int pick_device(const struct tg_host *host, struct devlist *l)
{
	const char *want = config(host, "device");
	long idx;

	if (want == NULL)
		return 0;
	idx = parse_index(want);
	if (idx < 0 || (size_t)idx >= l->n)
		return text_bad_config(host, "opencl", "device", "expected a "
		                       "device index (there %s %zu device%s)",
		                       l->n == 1 ? "is" : "are", l->n,
		                       l->n == 1 ? "" : "s");
	l->v[0] = l->v[idx];
	l->n = 1;
	return 0;
}

/* Fills *l with the devices OPENCL:n counts.  0 (possibly with no
 * devices: then `why` says why), TG_ECONFIG with the error set when
 * [opencl] platform or device names none, or another negative status
 * with `why`. */
static int list_devices(const struct tg_host *host, struct devlist *l,
                        char *why, size_t len)
{
	cl_platform_id *p;
	cl_uint np, first, last;
	int ret;

	*l = (struct devlist){ 0 };
	ret = get_platforms(&p, &np, why, len);
	if (ret != 0)
		return ret;
	if (np == 0)
		snprintf(why, len, "the OpenCL ICD loader found no platform "
		         "(no driver in /etc/OpenCL/vendors?)");
	ret = pick_platforms(host, p, np, &first, &last);
	for (cl_uint i = first; i < last && ret == 0; i++)
		ret = add_devices(p[i], l, why, len);
	if (ret == 0 && np > 0 && l->n == 0)
		snprintf(why, len, "no OpenCL device on %u of %u platforms",
		         (unsigned)(last - first), (unsigned)np);
	if (ret == 0)
		ret = pick_device(host, l);
	free(p);
	if (ret != 0) {
		free(l->v);
		*l = (struct devlist){ 0 };
	}
	return ret;
}

/* enum tg_device_type of d; GPUs sharing host memory are IGPUs. */
static int device_type(cl_device_id d)
{
	cl_device_type t = 0;
	cl_bool unified = CL_FALSE;

	if (clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(t), &t, NULL) != 0)
		return TG_DEVICE_ACCEL;
	if (t & CL_DEVICE_TYPE_GPU) {
		if (clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY,
		                    sizeof(unified), &unified, NULL) != 0)
			unified = CL_FALSE;
		return unified ? TG_DEVICE_IGPU : TG_DEVICE_GPU;
	}
	return t & CL_DEVICE_TYPE_CPU ? TG_DEVICE_CPU : TG_DEVICE_ACCEL;
}

/* ------------------------------------------------------------------ */
/* Probe                                                               */
/* ------------------------------------------------------------------ */

/* Lists devices without creating a context.  A broken driver is
 * "present, no devices" with the reason; a config error (platform or
 * device naming none) is returned, and stops device selection. */
static int ocl_probe(const struct tg_host *host, struct tg_probe *out)
{
	struct devlist l;
	char why[sizeof(out->reason)] = "";
	int ret = list_devices(host, &l, why, sizeof(why));

	if (ret == TG_ECONFIG) {
		out->ndevices = 0;
		return ret;
	}
	out->ndevices = ret == 0 && l.n <= INT_MAX ? (int)l.n : 0;
	if (TG_HAS(out, struct tg_probe, type))
		out->type = l.n > 0 ? device_type(l.v[0].device) : 0;
	for (int i = 0; TG_HAS(out, struct tg_probe, types) &&
	                i < out->ndevices && i < TG_PROBE_MAX_TYPES; i++) {
		out->types[i] = device_type(l.v[i].device);
		out->ntypes = i + 1;
	}
	if (TG_HAS(out, struct tg_probe, reason))
		snprintf(out->reason, sizeof(out->reason), "%s",
		         out->ndevices > 0 ? "" : why);
	free(l.v);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Open: what the device is and can do                                 */
/* ------------------------------------------------------------------ */

/* clGetDeviceInfo of a fixed-size property; `what` names it. */
static int dev_info(struct ocl_ctx *ctx, cl_device_info p, const char *what,
                    void *val, size_t size)
{
	cl_int err = clGetDeviceInfo(ctx->device, p, size, val, NULL);

	if (err == CL_SUCCESS)
		return 0;
	return ctx->host->set_error(ctx->host, ocl_status(err), "opencl "
		"open: clGetDeviceInfo(%s) on %s: %s", what, ctx->name,
		ocl_err_name(err));
}

#define DEV_INFO(ctx, p, var) dev_info((ctx), (p), #p, &(var), sizeof(var))

static int dev_string(struct ocl_ctx *ctx, cl_device_info p,
                      const char *what, char *buf, size_t n)
{
	cl_int err;
	char *s = device_string(ctx->device, p, &err);

	if (s == NULL)
		return ctx->host->set_error(ctx->host, ocl_status(err),
			"opencl open: clGetDeviceInfo(%s) on %s: %s", what,
			ctx->name, ocl_err_name(err));
	copy_trimmed(buf, n, s);
	free(s);
	return 0;
}

static int plat_string(struct ocl_ctx *ctx, cl_platform_info p,
                       const char *what, char *buf, size_t n)
{
	cl_int err;
	char *s = platform_string(ctx->platform, p, &err);

	if (s == NULL)
		return ctx->host->set_error(ctx->host, ocl_status(err),
			"opencl open: clGetPlatformInfo(%s) on %s: %s", what,
			ctx->name, ocl_err_name(err));
	copy_trimmed(buf, n, s);
	free(s);
	return 0;
}

/* Names and versions for the description and the compiler identity. */
static int query_strings(struct ocl_ctx *ctx)
{
	int ret = dev_string(ctx, CL_DEVICE_NAME, "CL_DEVICE_NAME",
	                     ctx->dev_name, sizeof(ctx->dev_name));

	if (ret == 0)
		ret = dev_string(ctx, CL_DRIVER_VERSION, "CL_DRIVER_VERSION",
		                 ctx->driver, sizeof(ctx->driver));
	if (ret == 0)
		ret = dev_string(ctx, CL_DEVICE_VERSION, "CL_DEVICE_VERSION",
		                 ctx->dev_version, sizeof(ctx->dev_version));
	if (ret == 0)
		ret = plat_string(ctx, CL_PLATFORM_NAME, "CL_PLATFORM_NAME",
		                  ctx->plat_name, sizeof(ctx->plat_name));
	if (ret == 0)
		ret = plat_string(ctx, CL_PLATFORM_VERSION,
		                  "CL_PLATFORM_VERSION", ctx->plat_version,
		                  sizeof(ctx->plat_version));
	return ret;
}

/* dtype_mask: everything, less the halves and doubles the device lacks
 * (bfloat16 is stored as ushort and computed in float, so it stays). */
static int query_dtypes(struct ocl_ctx *ctx)
{
	cl_int err;
	char *exts = device_string(ctx->device, CL_DEVICE_EXTENSIONS, &err);
	uint32_t mask = TG_DTYPE_ALL;

	if (exts == NULL)
		return ctx->host->set_error(ctx->host, ocl_status(err),
			"opencl open: clGetDeviceInfo(CL_DEVICE_EXTENSIONS) "
			"on %s: %s", ctx->name, ocl_err_name(err));
	if (!has_word(exts, "cl_khr_fp16"))
		mask &= ~TG_DTYPE_BIT(TG_FLOAT16);
	if (!has_word(exts, "cl_khr_fp64"))
		mask &= ~TG_DTYPE_BIT(TG_FLOAT64);
	ctx->caps.dtype_mask = mask;
	free(exts);
	return 0;
}

/* Work-item sizes per axis; axes past the device's dimensions get 1. */
static int query_item_sizes(struct ocl_ctx *ctx)
{
	cl_uint dims = 0;
	size_t *sizes;
	int ret = DEV_INFO(ctx, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, dims);

	if (ret != 0)
		return ret;
	if ((sizes = calloc(dims > 3 ? dims : 3, sizeof(*sizes))) == NULL)
		return ctx->host->set_error(ctx->host, TG_ENOMEM,
		                            "opencl open: out of host memory");
	ret = dev_info(ctx, CL_DEVICE_MAX_WORK_ITEM_SIZES,
	               "CL_DEVICE_MAX_WORK_ITEM_SIZES", sizes,
	               dims * sizeof(*sizes));
	for (int i = 0; i < 3 && ret == 0; i++)
		ctx->caps.local_max[i] = (cl_uint)i < dims && sizes[i] > 0 ?
		                         sizes[i] : 1;
	free(sizes);
	return ret;
}

/* The renderer's caps and the limits the allocator checks. */
static int query_limits(struct ocl_ctx *ctx)
{
	size_t wg = 0;
	cl_ulong local_mem = 0, global_mem = 0;
	cl_uint align_bits = 0;
	int ret;

	if ((ret = DEV_INFO(ctx, CL_DEVICE_MAX_WORK_GROUP_SIZE, wg)) != 0 ||
	    (ret = DEV_INFO(ctx, CL_DEVICE_LOCAL_MEM_SIZE, local_mem)) != 0 ||
	    (ret = DEV_INFO(ctx, CL_DEVICE_GLOBAL_MEM_SIZE, global_mem)) != 0 ||
	    (ret = DEV_INFO(ctx, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
	                    ctx->max_alloc)) != 0 ||
	    (ret = DEV_INFO(ctx, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
	                    align_bits)) != 0 ||
	    (ret = query_item_sizes(ctx)) != 0)
		return ret;
	ctx->caps.local_max_total = wg > 0 ? wg : 1;
	ctx->caps.shared_max = local_mem < SIZE_MAX ? (size_t)local_mem
	                                            : SIZE_MAX;
	ctx->base_align = align_bits >= 8 ? align_bits / 8 : 1;
	/* buffers (and the sub-buffers the core never passes to kernels)
	 * start at a multiple of it */
	ctx->caps.buffer_align = (ctx->base_align & (ctx->base_align - 1))
	                         ? 0 : ctx->base_align;
	ctx->info.total_memory = global_mem;
	return 0;
}

/* "pthread-skylake-avx512 | Portable Computing Language 3.1 | OpenCL
 * 3.0 PoCL ..." and the device_info block. */
static void describe(struct ocl_ctx *ctx)
{
	snprintf(ctx->description, sizeof(ctx->description),
	         "%s | %s %s | %s", ctx->dev_name, ctx->plat_name,
	         ctx->driver, ctx->dev_version);
	ctx->info.struct_size = TG_STRUCT_SIZE(struct tg_device_info,
	                                       total_memory);
	ctx->info.name = ctx->name;
	ctx->info.description = ctx->description;
	ctx->info.type = device_type(ctx->device);
}

/* Caps that are the same on every device. */
static void init_caps(struct ocl_ctx *ctx)
{
	ctx->caps = (struct tg_renderer_caps){
		.struct_size = TG_STRUCT_SIZE(struct tg_renderer_caps,
		                              buffer_align),
		.dialect = TG_DIALECT_OPENCL,
		.has_local = 1,
		.has_shared = 1,
		.max_upcast = 4, /* float4: a safe width on every device */
		/* global ids are size_t, but launches past 2^32 items per
		 * axis are rare and badly supported: keep kernels in 32 bits */
		.global_max = { UINT32_MAX, UINT32_MAX, UINT32_MAX },
		.needs_transcendental_fallback = 0, /* exp2/log2/sin built in */
		.tensor_cores = 0,
	};
}

static int query_device(struct ocl_ctx *ctx)
{
	int ret;

	init_caps(ctx);
	if ((ret = query_strings(ctx)) != 0 ||
	    (ret = query_limits(ctx)) != 0 ||
	    (ret = query_dtypes(ctx)) != 0)
		return ret;
	describe(ctx);
	ocl_identity_init(ctx);
	return 0;
}

/* The platform's context (context.c) and the device's in-order
 * profiling queue in it. */
static int create_queue(struct ocl_ctx *ctx, const cl_device_id *peers,
                        cl_uint npeers)
{
	cl_int err;
	int ret = ocl_context_get(ctx, peers, npeers);

	if (ret != 0)
		return ret;
	ctx->queue = clCreateCommandQueue(ctx->context, ctx->device,
	                                  CL_QUEUE_PROFILING_ENABLE, &err);
	if (ctx->queue != NULL)
		return 0;
	ocl_context_put(ctx);
	return ctx->host->set_error(ctx->host, ocl_status(err),
		"opencl open: clCreateCommandQueue on %s (%s): %s", ctx->name,
		ctx->dev_name, ocl_err_name(err));
}

static void ocl_close(struct tg_device *dev);

static void fill_device(struct ocl_ctx *ctx)
{
	ctx->dev = (struct tg_device){
		.struct_size = TG_STRUCT_SIZE(struct tg_device, close),
		.ctx = ctx,
		.info = &ctx->info,
		.allocator = &ocl_allocator,
		.compiler = &ocl_compiler,
		.renderer = &ctx->caps,
		.runtime = &ocl_runtime,
		.close = ocl_close,
	};
}

/* Finds device `index` of the (configured) list into ctx, and the
 * listed devices of its platform (its own among them) into peers[]
 * (malloc'd, *npeers long). */
static int find_device(struct ocl_ctx *ctx, int index, cl_device_id **peers,
                       cl_uint *npeers)
{
	const struct tg_host *host = ctx->host;
	struct devlist l;
	char why[512] = "";
	int ret = list_devices(host, &l, why, sizeof(why));

	if (ret == TG_ECONFIG)
		return ret;  /* the error names the setting */
	if (ret != 0)
		return host->set_error(host, ret, "opencl open: %s", why);
	if (index < 0 || (size_t)index >= l.n) {
		ret = host->set_error(host, TG_ENODEV, "opencl open: no "
			"device %d (%zu device%s%s%s)", index, l.n,
			l.n == 1 ? "" : "s", l.n == 0 ? ": " : "", why);
	} else if ((*peers = calloc(l.n, sizeof(**peers))) == NULL) {
		ret = host->set_error(host, TG_ENOMEM, "opencl open: out of "
		                      "host memory");
	} else {
		ctx->platform = l.v[index].platform;
		ctx->device = l.v[index].device;
		*npeers = 0;
		for (size_t i = 0; i < l.n; i++)
			if (l.v[i].platform == ctx->platform)
				(*peers)[(*npeers)++] = l.v[i].device;
	}
	free(l.v);
	return ret;
}

static int ocl_open(const struct tg_host *host, int index,
                    struct tg_device **out)
{
	struct ocl_ctx *ctx = calloc(1, sizeof(*ctx));
	cl_device_id *peers = NULL;
	cl_uint npeers = 0;
	int ret;

	if (ctx == NULL)
		return host->set_error(host, TG_ENOMEM,
		                       "opencl open: out of host memory");
	ctx->host = host;
	snprintf(ctx->name, sizeof(ctx->name), index > 0 ? "OPENCL:%d" :
	         "OPENCL", index);
	ret = find_device(ctx, index, &peers, &npeers);
	if (ret == 0 && (ret = query_device(ctx)) == 0)
		ret = create_queue(ctx, peers, npeers);
	free(peers);
	if (ret != 0)
		goto out_free_ctx;
	if ((ret = pthread_mutex_init(&ctx->lock, NULL)) != 0) {
		ret = host->set_error(host, TG_ERUNTIME, "opencl open: "
		                      "pthread_mutex_init: %s", strerror(ret));
		goto out_release_queue;
	}
	fill_device(ctx);
	host->log(host, TG_LOG_DEBUG, "opencl: opened %s: %s; identity: %s",
	          ctx->name, ctx->description, ctx->identity);
	*out = &ctx->dev;
	return 0;
out_release_queue:
	clReleaseCommandQueue(ctx->queue);
	ocl_context_put(ctx);
out_free_ctx:
	free(ctx);
	return ret;
}

/* The core has freed every program and buffer; finish what is queued
 * so the driver releases nothing still running.  No threads to join. */
static void ocl_close(struct tg_device *dev)
{
	struct ocl_ctx *ctx = dev->ctx;

	clFinish(ctx->queue);
	clReleaseCommandQueue(ctx->queue);
	ocl_context_put(ctx);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx); /* dev lives inside ctx */
}

/* ------------------------------------------------------------------ */
/* Tables and the descriptor: the plugin's table of contents          */
/* ------------------------------------------------------------------ */

static const struct tg_allocator_iface ocl_allocator = {
	.struct_size = TG_STRUCT_SIZE(struct tg_allocator_iface, transfer),
	.alloc = ocl_alloc,
	.free = ocl_free,
	.copy_in = ocl_copy_in,
	.copy_out = ocl_copy_out,
	.view = ocl_view,
	.view_free = ocl_view_free,
	.mem_info = ocl_mem_info,
	.transfer = ocl_transfer,
};

static const struct tg_compiler_iface ocl_compiler = {
	.struct_size = TG_STRUCT_SIZE(struct tg_compiler_iface, compile),
	.identity = ocl_identity,
	.compile = ocl_compile,
};

/* The renderer caps are per device: ocl_ctx.caps, from query_device. */

static const struct tg_runtime_iface ocl_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, graph_free),
	.load = ocl_load,
	.launch = ocl_launch,
	.synchronize = ocl_synchronize,
	.program_free = ocl_program_free,
	.graph_new = ocl_graph_new,
	.graph_run = ocl_graph_run,
	.graph_free = ocl_graph_free,
};

/* tinygrad's GPU=1 meant OpenCL. */
static const char *const ocl_aliases[] = { "GPU", "CL", NULL };

static const struct tg_plugin ocl_plugin = {
	.struct_size = TG_STRUCT_SIZE(struct tg_plugin, unload),
	.abi_major = TG_PLUGIN_ABI_MAJOR,
	.abi_minor = TG_PLUGIN_ABI_MINOR,
	.name = "OPENCL",
	.aliases = ocl_aliases,
	.version = "0.1.0",
	.vendor = "tgcore",
	.description = "OpenCL 1.2 devices through the ICD loader",
	.priority = -1, /* the native CPU plugin wins among CPU devices */
	.probe = ocl_probe,
	.open = ocl_open,
	.query_extension = NULL,
	.unload = NULL,
};

TG_PLUGIN_DEFINE(ocl_plugin)

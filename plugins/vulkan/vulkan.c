#include "config.h"
/*
 * vulkan.c - the Vulkan device: probe, instance and physical device
 * selection, optional features, info and renderer caps.  Memory is in
 * memory.c, the compiler and programs in program.c, launches in queue.c,
 * graphs in graph.c.
 * The TG_PLUGIN_DEFINE block at the bottom is the table of contents.
 *
 * Devices are the physical devices that have a compute queue, numbered
 * in vkEnumeratePhysicalDevices order: VULKAN:n opens the n-th.
 *
 * Config keys, section [vulkan] (TG_VULKAN_* in the environment):
 *   device   physical device that plain "VULKAN" opens     default 0
 *   staging  1: copy through a staging buffer even when device memory
 *            can be mapped (tests the discrete-GPU path)    default 0
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text.h"
#include "vulkan.h"

/* Defined at the bottom, with the descriptor. */
static const struct tg_allocator_iface vk_allocator;
static const struct tg_compiler_iface vk_compiler;
static const struct tg_runtime_iface vk_runtime;

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

#define R(name) { name, #name }
static const struct {
	VkResult r;
	const char *name;
} results[] = {
	R(VK_SUCCESS), R(VK_NOT_READY), R(VK_TIMEOUT), R(VK_INCOMPLETE),
	R(VK_ERROR_OUT_OF_HOST_MEMORY), R(VK_ERROR_OUT_OF_DEVICE_MEMORY),
	R(VK_ERROR_INITIALIZATION_FAILED), R(VK_ERROR_DEVICE_LOST),
	R(VK_ERROR_MEMORY_MAP_FAILED), R(VK_ERROR_LAYER_NOT_PRESENT),
	R(VK_ERROR_EXTENSION_NOT_PRESENT), R(VK_ERROR_FEATURE_NOT_PRESENT),
	R(VK_ERROR_INCOMPATIBLE_DRIVER), R(VK_ERROR_TOO_MANY_OBJECTS),
	R(VK_ERROR_FORMAT_NOT_SUPPORTED), R(VK_ERROR_FRAGMENTED_POOL),
	R(VK_ERROR_UNKNOWN), R(VK_ERROR_OUT_OF_POOL_MEMORY),
	R(VK_ERROR_INVALID_EXTERNAL_HANDLE), R(VK_ERROR_FRAGMENTATION),
	R(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS),
	R(VK_PIPELINE_COMPILE_REQUIRED), R(VK_ERROR_INVALID_SHADER_NV),
};
#undef R

const char *vk_result_name(VkResult r)
{
	for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
		if (results[i].r == r)
			return results[i].name;
	return "VkResult (unknown)";
}

static int status_of(VkResult r)
{
	switch (r) {
	case VK_ERROR_OUT_OF_HOST_MEMORY:
	case VK_ERROR_OUT_OF_DEVICE_MEMORY:
	case VK_ERROR_OUT_OF_POOL_MEMORY:
	case VK_ERROR_FRAGMENTED_POOL:
		return TG_ENOMEM;
	case VK_ERROR_FEATURE_NOT_PRESENT:
	case VK_ERROR_EXTENSION_NOT_PRESENT:
	case VK_ERROR_INCOMPATIBLE_DRIVER:
		return TG_EUNSUPPORTED;
	default:
		return TG_ERUNTIME;
	}
}

int vk_fail(const struct vk_ctx *ctx, VkResult r, const char *fmt, ...)
{
	char op[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(op, sizeof op, fmt, ap);
	va_end(ap);
	return ctx->host->set_error(ctx->host, status_of(r), "vulkan %s: %s "
	                            "(%d)", op, vk_result_name(r), (int)r);
}

/* ------------------------------------------------------------------ */
/* Instance and physical devices                                       */
/* ------------------------------------------------------------------ */

/* The instance version we ask for: the loader's, capped at 1.3, at
 * least 1.1 (0 when the loader is older). */
static uint32_t instance_version(void)
{
	uint32_t v = VK_API_VERSION_1_0;

	if (vkEnumerateInstanceVersion(&v) != VK_SUCCESS ||
	    v < VK_API_VERSION_1_1)
		return 0;
	return v > VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : v;
}

static VkResult instance_new(uint32_t version, VkInstance *out)
{
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "tgcore",
		.pEngineName = "tgcore",
		.apiVersion = version,
	};
	VkInstanceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};

	return vkCreateInstance(&ci, NULL, out);
}

/* First queue family with compute, or UINT32_MAX. */
static uint32_t compute_family(VkPhysicalDevice pd, uint32_t *ts_bits)
{
	VkQueueFamilyProperties fam[32];
	uint32_t n = 32;

	vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fam);
	for (uint32_t i = 0; i < n; i++)
		if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
			if (ts_bits)
				*ts_bits = fam[i].timestampValidBits;
			return i;
		}
	return UINT32_MAX;
}

/* The physical devices with a compute queue, in enumeration order;
 * *n in: capacity, out: count. */
static VkResult compute_devices(VkInstance inst, VkPhysicalDevice *out,
                                uint32_t *n)
{
	VkPhysicalDevice all[64];
	uint32_t nall = 64, k = 0;
	VkResult r = vkEnumeratePhysicalDevices(inst, &nall, all);

	if (r != VK_SUCCESS && r != VK_INCOMPLETE)
		return r;
	for (uint32_t i = 0; i < nall && k < *n; i++)
		if (compute_family(all[i], NULL) != UINT32_MAX)
			out[k++] = all[i];
	*n = k;
	return VK_SUCCESS;
}

static int device_type(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
		return TG_DEVICE_IGPU;
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
		return TG_DEVICE_GPU;
	case VK_PHYSICAL_DEVICE_TYPE_CPU:
		return TG_DEVICE_CPU;
	default:
		return TG_DEVICE_ACCEL;
	}
}

/* Config key `device`: *index unchanged when unset; TG_ECONFIG with
 * the error set when the value is not an index (0 to 63). */
static int config_index(const struct tg_host *host, int *index)
{
	const char *s = host->config_get(host, "device");
	long v;

	if (s == NULL || s[0] == '\0')
		return 0;
	if (text_long(s, 0, 63, &v) != 0)
		return text_bad_config(host, "vulkan", "device", "expected a "
		                       "device index from 0 to 63");
	*index = (int)v;
	return 0;
}

/* Config key `staging` (copies through a staging buffer even where
 * device memory is host-visible): yes or no, 0 when unset; TG_ECONFIG
 * with the error set for anything else. */
static int config_staging(const struct tg_host *host, int *on)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	const char *s = host->config_get(host, "staging");

	*on = 0;
	if (s == NULL || s[0] == '\0')
		return 0;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		*on = strcasecmp(s, yes[i]) == 0;
		if (*on || strcasecmp(s, no[i]) == 0)
			return 0;
	}
	return text_bad_config(host, "vulkan", "staging", "expected yes or "
	                       "no (1/0, true/false, on/off)");
}

/* Counts compute devices with a short-lived instance.  No device is
 * created. */
static int vk_probe(const struct tg_host *host, struct tg_probe *out)
{
	VkPhysicalDevice pds[64];
	VkPhysicalDeviceProperties p;
	uint32_t n = 64, version = instance_version();
	VkInstance inst;
	VkResult r;
	int first = 0, staging;

	out->ndevices = 0;
	/* a bad setting stops device selection */
	if (config_index(host, &first) != 0 ||
	    config_staging(host, &staging) != 0)
		return TG_ECONFIG;
	if (version == 0) {
		snprintf(out->reason, sizeof out->reason, "the Vulkan loader "
		         "is older than 1.1 or has no driver");
		return 0;
	}
	if ((r = instance_new(version, &inst)) != VK_SUCCESS) {
		snprintf(out->reason, sizeof out->reason, "vkCreateInstance "
		         "failed: %s", vk_result_name(r));
		return 0;
	}
	r = compute_devices(inst, pds, &n);
	if (r != VK_SUCCESS || n == 0) {
		snprintf(out->reason, sizeof out->reason, "no Vulkan device "
		         "with a compute queue (%s)", vk_result_name(r));
	} else if (first >= (int)n) {
		vkDestroyInstance(inst, NULL);
		return text_bad_config(host, "vulkan", "device", "expected a "
		                       "device index below %u (the devices "
		                       "with a compute queue)", (unsigned)n);
	} else {
		out->ndevices = (int)n;
		/* index 0 opens the configured device, index i device i */
		for (int i = 0; i < (int)n && i < TG_PROBE_MAX_TYPES; i++) {
			vkGetPhysicalDeviceProperties(pds[i ? i : first], &p);
			if (i == 0)
				out->type = device_type(p.deviceType);
			if (TG_HAS(out, struct tg_probe, types)) {
				out->types[i] = device_type(p.deviceType);
				out->ntypes = i + 1;
			}
		}
		out->reason[0] = '\0';
	}
	vkDestroyInstance(inst, NULL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Features                                                            */
/* ------------------------------------------------------------------ */

static int has_extension(VkPhysicalDevice pd, const char *name)
{
	VkExtensionProperties *e;
	uint32_t n = 0;
	int found = 0;

	if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != 0 ||
	    (e = calloc(n ? n : 1, sizeof *e)) == NULL)
		return 0;
	if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e) == 0)
		for (uint32_t i = 0; i < n && !found; i++)
			found = strcmp(e[i].extensionName, name) == 0;
	free(e);
	return found;
}

/* The feature chain we query and then enable (after clearing what we
 * do not want); 1.2 structs only where the device knows them. */
struct feature_chain {
	VkPhysicalDeviceFeatures2 f2;
	VkPhysicalDevice16BitStorageFeatures s16;
	VkPhysicalDevice8BitStorageFeatures s8;
	VkPhysicalDeviceShaderFloat16Int8Features f16i8;
	const char *exts[4];
	uint32_t nexts;
};

static void chain_build(struct vk_ctx *ctx, struct feature_chain *c)
{
	int v12 = ctx->api_version >= VK_API_VERSION_1_2;
	void **next;

	memset(c, 0, sizeof *c);
	c->f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
	c->s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
	c->s8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
	c->f16i8.sType =
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
	c->f2.pNext = &c->s16;
	next = &c->s16.pNext;
	if (v12 || has_extension(ctx->phys, "VK_KHR_8bit_storage")) {
		*next = &c->s8;
		next = &c->s8.pNext;
		if (!v12)
			c->exts[c->nexts++] = "VK_KHR_8bit_storage";
	}
	if (v12 || has_extension(ctx->phys, "VK_KHR_shader_float16_int8")) {
		*next = &c->f16i8;
		if (!v12)
			c->exts[c->nexts++] = "VK_KHR_shader_float16_int8";
	}
	if (has_extension(ctx->phys, "VK_EXT_memory_budget")) {
		c->exts[c->nexts++] = "VK_EXT_memory_budget";
		ctx->feat.budget = 1;
	}
}

/* Keeps only the features tgcore uses, and records them in ctx->feat. */
static void chain_select(struct vk_ctx *ctx, struct feature_chain *c)
{
	VkPhysicalDeviceFeatures all = c->f2.features;
	struct vk_features *f = &ctx->feat;

	memset(&c->f2.features, 0, sizeof c->f2.features);
	c->f2.features.shaderInt64 = all.shaderInt64;
	c->f2.features.shaderFloat64 = all.shaderFloat64;
	c->f2.features.shaderInt16 = all.shaderInt16;
	c->s16 = (VkPhysicalDevice16BitStorageFeatures){
		.sType = c->s16.sType, .pNext = c->s16.pNext,
		.storageBuffer16BitAccess = c->s16.storageBuffer16BitAccess };
	c->s8 = (VkPhysicalDevice8BitStorageFeatures){
		.sType = c->s8.sType, .pNext = c->s8.pNext,
		.storageBuffer8BitAccess = c->s8.storageBuffer8BitAccess };
	f->int64 = all.shaderInt64 != 0;
	f->float64 = all.shaderFloat64 != 0;
	f->int16 = all.shaderInt16 != 0;
	f->storage16 = c->s16.storageBuffer16BitAccess != 0;
	f->storage8 = c->s8.storageBuffer8BitAccess != 0;
	f->float16 = c->f16i8.shaderFloat16 != 0;
	f->int8 = c->f16i8.shaderInt8 != 0;
}

static uint32_t dtype_mask(const struct vk_features *f)
{
	uint32_t m = TG_DTYPE_BIT(TG_FLOAT32) | TG_DTYPE_BIT(TG_INT32) |
	             TG_DTYPE_BIT(TG_UINT32);

	if (f->int8 && f->storage8)
		m |= TG_DTYPE_BIT(TG_BOOL) | TG_DTYPE_BIT(TG_INT8) |
		     TG_DTYPE_BIT(TG_UINT8);
	if (f->int16 && f->storage16)
		m |= TG_DTYPE_BIT(TG_INT16) | TG_DTYPE_BIT(TG_UINT16) |
		     TG_DTYPE_BIT(TG_BFLOAT16);
	if (f->float16 && f->storage16)
		m |= TG_DTYPE_BIT(TG_FLOAT16);
	if (f->int64)
		m |= TG_DTYPE_BIT(TG_INT64) | TG_DTYPE_BIT(TG_UINT64);
	if (f->float64)
		m |= TG_DTYPE_BIT(TG_FLOAT64);
	return m;
}

/* ------------------------------------------------------------------ */
/* Properties, info and caps                                           */
/* ------------------------------------------------------------------ */

static void read_properties(struct vk_ctx *ctx)
{
	VkPhysicalDeviceDriverProperties drv = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES };
	VkPhysicalDeviceMaintenance3Properties m3 = { .sType =
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES };
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &m3 };
	int has_drv = ctx->api_version >= VK_API_VERSION_1_2 ||
	              has_extension(ctx->phys, "VK_KHR_driver_properties");

	if (has_drv)
		m3.pNext = &drv;
	vkGetPhysicalDeviceProperties2(ctx->phys, &p2);
	ctx->props = p2.properties;
	ctx->max_alloc = m3.maxMemoryAllocationSize;
	vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->memprops);
	if (has_drv)
		snprintf(ctx->driver, sizeof ctx->driver, "%s %s",
		         drv.driverName, drv.driverInfo);
	else
		snprintf(ctx->driver, sizeof ctx->driver, "driver 0x%x",
		         ctx->props.driverVersion);
}

/* Bytes of DEVICE_LOCAL heaps. */
static uint64_t local_heap_bytes(const VkPhysicalDeviceMemoryProperties *m)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < m->memoryHeapCount; i++)
		if (m->memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
			sum += m->memoryHeaps[i].size;
	return sum;
}

static void describe(struct vk_ctx *ctx, int index)
{
	uint32_t v = ctx->props.apiVersion;

	if (index == 0)
		snprintf(ctx->name, sizeof ctx->name, "VULKAN");
	else
		snprintf(ctx->name, sizeof ctx->name, "VULKAN:%d", index);
	snprintf(ctx->description, sizeof ctx->description,
	         "%s | %s | Vulkan %u.%u.%u", ctx->props.deviceName,
	         ctx->driver, VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
	         VK_API_VERSION_PATCH(v));
	ctx->info = (struct tg_device_info){
		.struct_size = TG_STRUCT_SIZE(struct tg_device_info,
		                              total_memory),
		.name = ctx->name,
		.description = ctx->description,
		.type = device_type(ctx->props.deviceType),
		.total_memory = local_heap_bytes(&ctx->memprops),
	};
}

static void fill_caps(struct vk_ctx *ctx)
{
	const VkPhysicalDeviceLimits *l = &ctx->props.limits;

	ctx->caps = (struct tg_renderer_caps){
		.struct_size = TG_STRUCT_SIZE(struct tg_renderer_caps,
		                              tensor_cores),
		.dialect = TG_DIALECT_GLSL,
		.has_local = 1,
		.has_shared = 1,
		.max_upcast = 1,
		.local_max_total = l->maxComputeWorkGroupInvocations,
		.shared_max = l->maxComputeSharedMemorySize,
		.dtype_mask = dtype_mask(&ctx->feat),
		.needs_transcendental_fallback = 0,
		.tensor_cores = 0,
	};
	for (int i = 0; i < 3; i++) {
		ctx->caps.global_max[i] =
			(size_t)l->maxComputeWorkGroupCount[i] *
			(size_t)l->maxComputeWorkGroupSize[i];
		ctx->caps.local_max[i] = l->maxComputeWorkGroupSize[i];
	}
}

/* ------------------------------------------------------------------ */
/* Open and close                                                      */
/* ------------------------------------------------------------------ */

/* Picks physical device `index`, its queue family and API version. */
static int pick_device(struct vk_ctx *ctx, int index, uint32_t inst_ver)
{
	VkPhysicalDevice pds[64];
	VkPhysicalDeviceProperties p;
	uint32_t n = 64;
	VkResult r = compute_devices(ctx->instance, pds, &n);

	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "open: vkEnumeratePhysicalDevices");
	if (index >= (int)n)
		return ctx->host->set_error(ctx->host, TG_ENODEV, "vulkan open:"
		       " no device %d (%u with a compute queue)", index, n);
	ctx->phys = pds[index];
	ctx->qfamily = compute_family(ctx->phys, &ctx->timestamp_bits);
	vkGetPhysicalDeviceProperties(ctx->phys, &p);
	if (p.apiVersion < VK_API_VERSION_1_1)
		return ctx->host->set_error(ctx->host, TG_EUNSUPPORTED,
		       "vulkan open: %s supports Vulkan %u.%u, need 1.1",
		       p.deviceName, VK_API_VERSION_MAJOR(p.apiVersion),
		       VK_API_VERSION_MINOR(p.apiVersion));
	ctx->api_version = p.apiVersion < inst_ver ? p.apiVersion : inst_ver;
	return 0;
}

static int device_new(struct vk_ctx *ctx)
{
	struct feature_chain c;
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = ctx->qfamily,
		.queueCount = 1,
		.pQueuePriorities = &prio,
	};
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
	};
	VkResult r;

	chain_build(ctx, &c);
	vkGetPhysicalDeviceFeatures2(ctx->phys, &c.f2);
	chain_select(ctx, &c);
	dci.pNext = &c.f2;
	dci.enabledExtensionCount = c.nexts;
	dci.ppEnabledExtensionNames = c.exts;
	r = vkCreateDevice(ctx->phys, &dci, NULL, &ctx->device);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "open: vkCreateDevice on %s",
		               ctx->props.deviceName);
	vkGetDeviceQueue(ctx->device, ctx->qfamily, 0, &ctx->vq);
	return 0;
}

static int read_config(struct vk_ctx *ctx, int *index)
{
	int staging;

	if (config_staging(ctx->host, &staging) != 0)
		return TG_ECONFIG;
	ctx->force_staging = staging;
	if (*index == 0)
		return config_index(ctx->host, index);
	return 0;
}

static void vk_close(struct tg_device *dev);

static void fill_device(struct vk_ctx *ctx)
{
	ctx->dev = (struct tg_device){
		.struct_size = TG_STRUCT_SIZE(struct tg_device, close),
		.ctx = ctx,
		.info = &ctx->info,
		.allocator = &vk_allocator,
		.compiler = &vk_compiler,
		.renderer = &ctx->caps,
		.runtime = &vk_runtime,
		.close = vk_close,
	};
}

/* Everything after the VkDevice exists; undone by vk_close. */
static int open_rest(struct vk_ctx *ctx, int index)
{
	int ret;

	read_properties(ctx);
	describe(ctx, index);
	fill_caps(ctx);
	if ((ret = vk_queue_init(ctx)) != 0)
		return ret;
	if ((ret = vk_memory_init(ctx)) != 0)
		return ret;
	return vk_compiler_init(ctx);
}

static int vk_open(const struct tg_host *host, int index,
                   struct tg_device **out)
{
	struct vk_ctx *ctx = calloc(1, sizeof(*ctx));
	uint32_t version = instance_version();
	int phys_index = index, ret;
	VkResult r;

	if (ctx == NULL)
		return host->set_error(host, TG_ENOMEM,
		                       "vulkan open: out of host memory");
	ctx->host = host;
	pthread_mutex_init(&ctx->lock, NULL);
	fill_device(ctx);
	if ((ret = read_config(ctx, &phys_index)) != 0)
		goto out_free_ctx;
	if (version == 0) {
		ret = host->set_error(host, TG_ENODEV, "vulkan open: the "
		                      "Vulkan loader is older than 1.1");
		goto out_free_ctx;
	}
	if ((r = instance_new(version, &ctx->instance)) != VK_SUCCESS) {
		ret = vk_fail(ctx, r, "open: vkCreateInstance");
		goto out_free_ctx;
	}
	if ((ret = pick_device(ctx, phys_index, version)) != 0 ||
	    (ret = device_new(ctx)) != 0)
		goto out_instance;
	if ((ret = open_rest(ctx, index)) != 0) {
		vk_close(&ctx->dev);
		return ret;
	}
	host->log(host, TG_LOG_DEBUG, "vulkan: opened %s (%s); compiler "
	          "identity: %s", ctx->name, ctx->description, ctx->identity);
	*out = &ctx->dev;
	return 0;
out_instance:
	vkDestroyInstance(ctx->instance, NULL);
out_free_ctx:
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return ret;
}

/* The core has freed every program and buffer; waits for the queue and
 * destroys what is left.  Safe on a half-opened device. */
static void vk_close(struct tg_device *dev)
{
	struct vk_ctx *ctx = dev->ctx;

	vkDeviceWaitIdle(ctx->device);
	vk_compiler_free(ctx);
	vk_memory_destroy(ctx);
	vk_queue_destroy(ctx);
	vkDestroyDevice(ctx->device, NULL);
	vkDestroyInstance(ctx->instance, NULL);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx); /* dev lives inside ctx */
}

/* ------------------------------------------------------------------ */
/* Tables and the descriptor: the plugin's table of contents          */
/* ------------------------------------------------------------------ */

static const struct tg_allocator_iface vk_allocator = {
	.struct_size = TG_STRUCT_SIZE(struct tg_allocator_iface, mem_info),
	.alloc = vk_mem_alloc,
	.free = vk_mem_free,
	.copy_in = vk_copy_in,
	.copy_out = vk_copy_out,
	.view = vk_view,
	.view_free = vk_view_free,
	.mem_info = vk_mem_info,
};

static const struct tg_compiler_iface vk_compiler = {
	.struct_size = TG_STRUCT_SIZE(struct tg_compiler_iface, compile),
	.identity = vk_identity,
	.compile = vk_compile,
};

/* The renderer caps are per device: ctx->caps, filled by fill_caps. */

static const struct tg_runtime_iface vk_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, graph_free),
	.load = vk_load,
	.launch = vk_launch,
	.synchronize = vk_synchronize,
	.program_free = vk_program_free,
	.graph_new = vk_graph_new,
	.graph_run = vk_graph_run,
	.graph_free = vk_graph_free,
};

static const struct tg_plugin vk_plugin = {
	.struct_size = TG_STRUCT_SIZE(struct tg_plugin, unload),
	.abi_major = TG_PLUGIN_ABI_MAJOR,
	.abi_minor = TG_PLUGIN_ABI_MINOR,
	.name = "VULKAN",
	.aliases = NULL,
	.version = "0.1.0",
	.vendor = "tgcore",
	.description = "GLSL compute shaders compiled to SPIR-V by shaderc, "
	               "run through the Vulkan loader",
	.priority = -1,
	.probe = vk_probe,
	.open = vk_open,
	.query_extension = NULL,
	.unload = NULL,
};

TG_PLUGIN_DEFINE(vk_plugin)

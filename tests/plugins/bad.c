/*
 * bad.c - misbehaving plugins for the loader's fault tests.
 *
 * One source, one module per fault: tests/plugins/Makefile.inc compiles
 * this file once per module with exactly one -DBAD_<KIND>.  Each module
 * breaks one rule of tg/plugin.h and is well formed otherwise, so a test
 * that sees the core refuse it knows which check fired.  The descriptor
 * is built from the BAD_* knobs below; a kind sets only the knobs it
 * breaks and the rest keep a well-behaved plugin's values.
 */
#include "config.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <tg/plugin.h>

#if defined(BAD_NOENTRY)
#define BAD_NAME "NOENTRY"
#define BAD_WHAT "exports tg_plugin_entry_typo, not tg_plugin_entry"
#elif defined(BAD_NULLENTRY)
#define BAD_NAME "NULLENTRY"
#define BAD_WHAT "entry point refuses (returns NULL)"
#elif defined(BAD_NEWMAJOR)
#define BAD_NAME "NEWMAJOR"
#define BAD_WHAT "built for the next ABI major"
#define BAD_ABI_MAJOR (TG_PLUGIN_ABI_MAJOR + 1)
#elif defined(BAD_SHORTSIZE)
#define BAD_NAME "SHORT"
#define BAD_WHAT "descriptor struct_size too small"
#define BAD_STRUCT_SIZE offsetof(struct tg_plugin, name)
#elif defined(BAD_NULLPROBE)
#define BAD_NAME "NULLPROBE"
#define BAD_WHAT "required probe entry is NULL"
#define BAD_PROBE NULL
#elif defined(BAD_NULLLAUNCH)
#define BAD_NAME "NULLLAUNCH"
#define BAD_WHAT "opened device has no runtime->launch"
#elif defined(BAD_PARTIALGRAPH)
#define BAD_NAME "PARTIALGRAPH"
#define BAD_WHAT "opened device gives graph_new but not graph_run and " \
	"graph_free"
#elif defined(BAD_BADTC)
#define BAD_NAME "BADTC"
#define BAD_WHAT "a tensor core whose splits do not multiply to its N"
#elif defined(BAD_BADALIGN)
#define BAD_NAME "BADALIGN"
#define BAD_WHAT "a buffer alignment that is not a power of 2"
#elif defined(BAD_PROBE0)
#define BAD_NAME "NODEV"
#define BAD_WHAT "driver present, no devices"
#define BAD_NDEVICES 0
#define BAD_REASON "nodev-driver.so.1 not found"
#elif defined(BAD_FAKECUDA)
#define BAD_NAME "CUDA"
#define BAD_WHAT "CUDA stand-in for machines without CUDA"
#define BAD_TYPE TG_DEVICE_GPU
#define BAD_NDEVICES 0
#define BAD_REASON "libcuda.so.1 not found (test double)"
#elif defined(BAD_OPENFAIL)
#define BAD_NAME "OPENFAIL"
#define BAD_WHAT "open always fails"
#elif defined(BAD_CRASHENTRY)
#define BAD_NAME "CRASHENTRY"
#define BAD_WHAT "the entry point crashes the process"
#elif defined(BAD_CRASHPROBE)
#define BAD_NAME "CRASHPROBE"
#define BAD_WHAT "the probe dies of SIGSEGV"
#define BAD_PROBE_FAULT raise(SIGSEGV)
#elif defined(BAD_EXITPROBE)
#define BAD_NAME "EXITPROBE"
#define BAD_WHAT "the probe calls exit(3)"
#define BAD_PROBE_FAULT exit(3)
#elif defined(BAD_HANGPROBE)
#define BAD_NAME "HANGPROBE"
#define BAD_WHAT "the probe never returns"
#define BAD_PROBE_FAULT for (;;) pause()
#elif defined(BAD_CRASHOPEN)
#define BAD_NAME "CRASHOPEN"
#define BAD_WHAT "device 0 opens and closes, opening device 1 dies of SIGBUS"
#define BAD_NDEVICES 2
#else
#error "build bad.c with one -DBAD_<KIND> (see tests/plugins/Makefile.inc)"
#endif

/* Well-behaved defaults for the knobs a kind leaves alone. */
#ifndef BAD_ABI_MAJOR
#define BAD_ABI_MAJOR TG_PLUGIN_ABI_MAJOR
#endif
#ifndef BAD_STRUCT_SIZE
#define BAD_STRUCT_SIZE TG_STRUCT_SIZE(struct tg_plugin, unload)
#endif
#ifndef BAD_NDEVICES
#define BAD_NDEVICES 1
#endif
/* ACCEL ranks above CPU in auto selection, so a device that fails to
 * open is tried before the real CPU device and the fallback runs. */
#ifndef BAD_TYPE
#define BAD_TYPE TG_DEVICE_ACCEL
#endif
#ifndef BAD_REASON
#define BAD_REASON ""
#endif
#ifndef BAD_PROBE
#define BAD_PROBE bad_probe
#endif
/* The kinds that die: raise(), not a wild write, so that the signal is
 * the same with and without the sanitizers (UBSan would exit instead). */
#ifndef BAD_PROBE_FAULT
#define BAD_PROBE_FAULT (void)0
#endif

/* the kinds whose renderer caps carry the fault */
#if defined(BAD_BADTC) || defined(BAD_BADALIGN)
#define BAD_RENDERER
#endif

/* ------------------------------------------------------------------ */
/* NULLLAUNCH, PARTIALGRAPH: a complete device but for its runtime      */
/* table (launch NULL; graph_new without graph_run and graph_free)     */
/* ------------------------------------------------------------------ */

#if defined(BAD_NULLLAUNCH) || defined(BAD_PARTIALGRAPH) || \
	defined(BAD_RENDERER) || defined(BAD_CRASHOPEN)
#define BAD_DEVICE
/* The core must refuse this device inside tg's open path, so none of the
 * entries below may ever run; each one reports that it did. */
static const struct tg_host *nl_host;

static int nl_called(const char *op)
{
	return nl_host->set_error(nl_host, TG_EINTERNAL,
		"%s: %s called on a device the core should have refused (%s)",
		BAD_NAME, op, BAD_WHAT);
}

static int nl_alloc(struct tg_device *dev, size_t size, void **out)
{
	(void)dev, (void)size, (void)out;
	return nl_called("alloc");
}

static void nl_free(struct tg_device *dev, void *mem, size_t size)
{
	(void)dev, (void)mem, (void)size;
	nl_called("free");
}

static int nl_copy_in(struct tg_device *dev, void *dst, size_t offset,
                      const void *src, size_t n)
{
	(void)dev, (void)dst, (void)offset, (void)src, (void)n;
	return nl_called("copy_in");
}

static int nl_copy_out(struct tg_device *dev, void *dst, const void *src,
                       size_t offset, size_t n)
{
	(void)dev, (void)dst, (void)src, (void)offset, (void)n;
	return nl_called("copy_out");
}

static const char *nl_identity(struct tg_device *dev)
{
	(void)dev;
	return "nulllaunch-cc 0";
}

static int nl_compile(struct tg_device *dev, const char *src, void **blob,
                      size_t *blob_len, char **log)
{
	(void)dev, (void)src, (void)blob, (void)blob_len, (void)log;
	return nl_called("compile");
}

static int nl_load(struct tg_device *dev, const char *name, const void *blob,
                   size_t blob_len, void **prog)
{
	(void)dev, (void)name, (void)blob, (void)blob_len, (void)prog;
	return nl_called("load");
}

static int nl_synchronize(struct tg_device *dev)
{
	(void)dev;
	return 0; /* nothing is ever queued */
}

static void nl_program_free(struct tg_device *dev, void *prog)
{
	(void)dev, (void)prog;
	nl_called("program_free");
}

#if defined(BAD_PARTIALGRAPH) || defined(BAD_RENDERER) || \
	defined(BAD_CRASHOPEN)
static int nl_launch(struct tg_device *dev, void *prog,
                     struct tg_launch *args)
{
	(void)dev, (void)prog, (void)args;
	return nl_called("launch");
}

#endif

#ifdef BAD_PARTIALGRAPH
static int nl_graph_new(struct tg_device *dev, void *const *progs,
                        struct tg_launch *const *launches, size_t n,
                        void **graph)
{
	(void)dev, (void)progs, (void)launches, (void)n, (void)graph;
	return nl_called("graph_new");
}
#endif

/* The device is static, so there is nothing to free. */
static void nl_close(struct tg_device *dev)
{
	(void)dev;
}

static const struct tg_device_info nl_info = {
	.struct_size = TG_STRUCT_SIZE(struct tg_device_info, total_memory),
	.name = BAD_NAME,
	.description = "test double: " BAD_WHAT,
	.type = TG_DEVICE_ACCEL,
	.total_memory = 0,
};

static const struct tg_allocator_iface nl_allocator = {
	.struct_size = TG_STRUCT_SIZE(struct tg_allocator_iface, mem_info),
	.alloc = nl_alloc,
	.free = nl_free,
	.copy_in = nl_copy_in,
	.copy_out = nl_copy_out,
	.view = NULL,
	.view_free = NULL,
	.mem_info = NULL,
};

static const struct tg_compiler_iface nl_compiler = {
	.struct_size = TG_STRUCT_SIZE(struct tg_compiler_iface, compile),
	.identity = nl_identity,
	.compile = nl_compile,
};

#ifdef BAD_BADTC
/* the fault: N = 16 but its splits make 8 */
static const struct tg_tensor_core nl_tc = {
	.struct_size = TG_STRUCT_SIZE(struct tg_tensor_core, splits),
	.dims = { 16, 8, 1 },
	.dtype_in = TG_FLOAT32,
	.dtype_out = TG_FLOAT32,
	.nsplits = 2,
	.splits = { { TG_TC_UPCAST, 0, 8 }, { TG_TC_UPCAST, 1, 8 } },
};
#define NL_TC_COUNT 1
#define NL_TC &nl_tc
#else
#define NL_TC_COUNT 0
#define NL_TC NULL
#endif

static const struct tg_renderer_caps nl_renderer = {
	.struct_size = TG_STRUCT_SIZE(struct tg_renderer_caps, buffer_align),
	.dialect = TG_DIALECT_C,
	.has_local = 0,
	.has_shared = 0,
	.max_upcast = 1,
	.global_max = { 1u << 30, 1u << 30, 1u << 30 },
	.local_max = { 1, 1, 1 },
	.local_max_total = 1,
	.shared_max = 0,
	.dtype_mask = TG_DTYPE_BIT(TG_FLOAT32),
	.needs_transcendental_fallback = 1,
	.tensor_cores = NL_TC_COUNT,
	.tc = NL_TC,
#ifdef BAD_BADALIGN
	.buffer_align = 48, /* the fault */
#endif
};

#if defined(BAD_RENDERER) || defined(BAD_CRASHOPEN)
static const struct tg_runtime_iface nl_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, program_free),
	.load = nl_load,
	.launch = nl_launch,
	.synchronize = nl_synchronize,
	.program_free = nl_program_free,
};
#elif defined(BAD_NULLLAUNCH)
static const struct tg_runtime_iface nl_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, program_free),
	.load = nl_load,
	.launch = NULL, /* the fault */
	.synchronize = nl_synchronize,
	.program_free = nl_program_free,
};
#else
static const struct tg_runtime_iface nl_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, graph_free),
	.load = nl_load,
	.launch = nl_launch,
	.synchronize = nl_synchronize,
	.program_free = nl_program_free,
	.graph_new = nl_graph_new, /* the fault: without its two partners */
	.graph_run = NULL,
	.graph_free = NULL,
};
#endif

static struct tg_device nl_device = {
	.struct_size = TG_STRUCT_SIZE(struct tg_device, close),
	.ctx = NULL,
	.info = &nl_info,
	.allocator = &nl_allocator,
	.compiler = &nl_compiler,
	.renderer = &nl_renderer,
	.runtime = &nl_runtime,
	.close = nl_close,
};
#endif /* BAD_NULLLAUNCH || BAD_PARTIALGRAPH || BAD_RENDERER || BAD_CRASHOPEN */

/* ------------------------------------------------------------------ */
/* Descriptor entries                                                  */
/* ------------------------------------------------------------------ */

#ifndef BAD_NULLPROBE
static int bad_probe(const struct tg_host *host, struct tg_probe *out)
{
	(void)host;
	BAD_PROBE_FAULT;
	out->ndevices = BAD_NDEVICES;
	out->type = BAD_TYPE;
	snprintf(out->reason, sizeof(out->reason), "%s", BAD_REASON);
	return 0;
}
#endif

/* Only NULLLAUNCH, PARTIALGRAPH, BADTC, BADALIGN, CRASHOPEN and OPENFAIL are
 * opened;
 * every other kind is refused earlier (or reports 0 devices), so an open
 * of one of them means the core skipped a check and is reported as
 * such. */
static int bad_open(const struct tg_host *host, int index,
                    struct tg_device **out)
{
#if defined(BAD_DEVICE)
#if defined(BAD_CRASHOPEN)
	if (index == 1)
		raise(SIGBUS);
#endif
	(void)index;
	nl_host = host;
	*out = &nl_device;
	return 0;
#elif defined(BAD_OPENFAIL)
	(void)out;
	return host->set_error(host, TG_ERUNTIME,
		"openfail: device %d: driver refused to open", index);
#else
	(void)out;
	return host->set_error(host, TG_EINTERNAL,
		"%s: open(%d) called, but the core should have refused "
		"this plugin (%s)", BAD_NAME, index, BAD_WHAT);
#endif
}

static const struct tg_plugin bad_plugin = {
	.struct_size = BAD_STRUCT_SIZE,
	.abi_major = BAD_ABI_MAJOR,
	.abi_minor = TG_PLUGIN_ABI_MINOR,
	.name = BAD_NAME,
	.aliases = NULL,
	.version = "0.0.1",
	.vendor = "tgcore tests",
	.description = "test double: " BAD_WHAT,
	.priority = 0,
	.probe = BAD_PROBE,
	.open = bad_open,
	.query_extension = NULL,
	.unload = NULL,
};

#if defined(BAD_NOENTRY)
/* The fault: a plausible export under the wrong name. */
TG_PLUGIN_EXPORT const struct tg_plugin *tg_plugin_entry_typo(
	const struct tg_host *host);
TG_PLUGIN_EXPORT const struct tg_plugin *tg_plugin_entry_typo(
	const struct tg_host *host)
{
	(void)host;
	return &bad_plugin;
}
#elif defined(BAD_NULLENTRY)
/* The fault: the entry refuses, saying why as plugin.h asks. */
TG_PLUGIN_EXPORT const struct tg_plugin *tg_plugin_entry(
	const struct tg_host *host);
TG_PLUGIN_EXPORT const struct tg_plugin *tg_plugin_entry(
	const struct tg_host *host)
{
	host->log(host, TG_LOG_ERROR, "%s: refusing to load: this test "
	          "double's entry always returns NULL", bad_plugin.name);
	return NULL;
}
#elif defined(BAD_CRASHENTRY)
/* The fault: a driver that takes the process down as it loads; only
 * never loading it (TG_PLUGINS_DISABLE) keeps the process alive. */
TG_PLUGIN_EXPORT const struct tg_plugin *tg_plugin_entry(
	const struct tg_host *host);
TG_PLUGIN_EXPORT const struct tg_plugin *tg_plugin_entry(
	const struct tg_host *host)
{
	(void)host;
	if (bad_plugin.name)  /* always */
		abort();
	return &bad_plugin;
}
#else
TG_PLUGIN_DEFINE(bad_plugin)
#endif

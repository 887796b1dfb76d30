/*
 * mock.c - the MOCK backend: a small working device on host memory.
 *
 * It lets the core's buffer, memory-cache (LRU) and program paths be
 * tested without a C compiler or a GPU (ocl-icd's dummy ICD idea).
 *  - Two devices, "MOCK" and "MOCK:1", each with its own byte budget from
 *    the config key memory_limit ([mock] memory_limit, TG_MOCK_MEMORY_LIMIT
 *    or "mock.memory_limit"); unset means unlimited.  Going over the
 *    budget fails with TG_ENOMEM, which drives the core's cache-flush and
 *    retry path.
 *  - "Compiling" copies the source into the blob; a source containing
 *    "#error" fails with that line, in the error and in the log.
 *  - Copies between the two devices: MOCK to MOCK:1 by the plugin
 *    (allocator->transfer, a memcpy); MOCK:1 to MOCK it refuses with
 *    TG_EUNSUPPORTED, so the core's fallback through the host runs.
 *  - The runtime knows two kernels whatever the source says:
 *      fill: bufs[0][i] = (float)vals[0]
 *      add:  bufs[0][i] = bufs[1][i] + bufs[2][i]
 *    over float32 items i in [0, global[0]).
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tg/plugin.h>

#define MOCK_NDEVICES 2

/* One opened device; `dev` first so the core's pointer is ours too. */
struct mock_dev {
	struct tg_device dev;
	struct tg_device_info info;
	const struct tg_host *host;
	size_t limit;       /* byte budget; SIZE_MAX when unlimited */
	atomic_size_t live; /* bytes allocated and not yet freed */
	char name[16];
	char description[96];
};

/* A loaded program points into this table (never written), so
 * program_free has nothing to do. */
enum mock_kernel { MOCK_FILL, MOCK_ADD };
static enum mock_kernel mock_kernels[] = { MOCK_FILL, MOCK_ADD };

static struct mock_dev *mock_of(struct tg_device *dev)
{
	return dev->ctx;
}

/* ------------------------------------------------------------------ */
/* Allocator                                                           */
/* ------------------------------------------------------------------ */

/* Takes `size` bytes of the budget, atomically so that concurrent
 * allocations cannot both squeeze under it.  Invariant: live <= limit. */
static int mock_reserve(struct mock_dev *m, size_t size)
{
	size_t live = atomic_load(&m->live);

	do {
		if (size > m->limit - live)
			return -1;
	} while (!atomic_compare_exchange_weak(&m->live, &live, live + size));
	return 0;
}

static int mock_alloc(struct tg_device *dev, size_t size, void **out)
{
	struct mock_dev *m = mock_of(dev);

	if (mock_reserve(m, size) < 0)
		return m->host->set_error(m->host, TG_ENOMEM,
			"mock alloc: %zu bytes with %zu of %zu bytes in use "
			"on %s (memory_limit)", size, atomic_load(&m->live),
			m->limit, m->name);
	*out = m->host->alloc(m->host, size);
	if (*out == NULL) {
		atomic_fetch_sub(&m->live, size);
		return m->host->set_error(m->host, TG_ENOMEM,
			"mock alloc: host memory for %zu bytes", size);
	}
	return 0;
}

static void mock_free(struct tg_device *dev, void *mem, size_t size)
{
	struct mock_dev *m = mock_of(dev);

	m->host->free(m->host, mem);
	atomic_fetch_sub(&m->live, size);
}

static int mock_copy_in(struct tg_device *dev, void *dst, size_t offset,
                        const void *src, size_t n)
{
	(void)dev;
	memcpy((char *)dst + offset, src, n);
	return 0;
}

static int mock_copy_out(struct tg_device *dev, void *dst, const void *src,
                         size_t offset, size_t n)
{
	(void)dev;
	memcpy(dst, (const char *)src + offset, n);
	return 0;
}

/* Host memory, so a view is just an inner pointer and owns nothing. */
static int mock_view(struct tg_device *dev, void *mem, size_t offset,
                     size_t size, void **out)
{
	(void)dev, (void)size;
	*out = (char *)mem + offset;
	return 0;
}

static void mock_view_free(struct tg_device *dev, void *view)
{
	(void)dev, (void)view;
}

/* Reports the budget; without one, 0 and 0 ("unknown", as in
 * tg_device_info.total_memory). */
static int mock_mem_info(struct tg_device *dev, uint64_t *free_bytes,
                         uint64_t *total_bytes)
{
	struct mock_dev *m = mock_of(dev);
	int budgeted = m->limit != SIZE_MAX;

	*total_bytes = budgeted ? m->limit : 0;
	*free_bytes = budgeted ? m->limit - atomic_load(&m->live) : 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Compiler                                                            */
/* ------------------------------------------------------------------ */

static const char *mock_identity(struct tg_device *dev)
{
	(void)dev;
	return "mock-cc 1.0";
}

/* A host->alloc'd, NUL-terminated copy of n bytes of `s`, or NULL. */
static char *mock_strndup(const struct tg_host *host, const char *s,
                          size_t n)
{
	char *copy = host->alloc(host, n + 1);

	if (copy != NULL) {
		memcpy(copy, s, n);
		copy[n] = '\0';
	}
	return copy;
}

/* Fails like a real compiler would on `#error`: the offending line goes
 * into the error and, as the "full output", into *log. */
static int mock_compile_error(struct mock_dev *m, const char *src,
                              const char *hit, char **log)
{
	const char *start = hit, *end = strchr(hit, '\n');
	size_t len;

	while (start > src && start[-1] != '\n')
		start--;
	len = end != NULL ? (size_t)(end - start) : strlen(start);
	*log = mock_strndup(m->host, start, len);
	return m->host->set_error(m->host, TG_ECOMPILE, "mock compile: %.*s",
	                          (int)len, start);
}

static int mock_compile(struct tg_device *dev, const char *src, void **blob,
                        size_t *blob_len, char **log)
{
	struct mock_dev *m = mock_of(dev);
	const char *hit = strstr(src, "#error");
	size_t len = strlen(src);

	if (hit != NULL)
		return mock_compile_error(m, src, hit, log);
	*blob = mock_strndup(m->host, src, len);
	if (*blob == NULL)
		return m->host->set_error(m->host, TG_ENOMEM,
			"mock compile: %zu bytes for the blob", len + 1);
	*blob_len = len;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Runtime                                                             */
/* ------------------------------------------------------------------ */

static int mock_load(struct tg_device *dev, const char *name,
                     const void *blob, size_t blob_len, void **prog)
{
	struct mock_dev *m = mock_of(dev);

	(void)blob, (void)blob_len;
	if (strcmp(name, "fill") == 0)
		*prog = &mock_kernels[MOCK_FILL];
	else if (strcmp(name, "add") == 0)
		*prog = &mock_kernels[MOCK_ADD];
	else
		return m->host->set_error(m->host, TG_ERUNTIME,
			"mock load: no function '%s' (the mock runs only "
			"'fill' and 'add')", name);
	return 0;
}

static void mock_fill(struct tg_launch *args)
{
	float *out = args->bufs[0];
	float value = (float)args->vals[0];

	for (size_t i = 0; i < args->global[0]; i++)
		out[i] = value;
}

static void mock_add(struct tg_launch *args)
{
	float *out = args->bufs[0];
	const float *a = args->bufs[1], *b = args->bufs[2];

	for (size_t i = 0; i < args->global[0]; i++)
		out[i] = a[i] + b[i];
}

static int mock_launch(struct tg_device *dev, void *prog,
                       struct tg_launch *args)
{
	struct mock_dev *m = mock_of(dev);
	enum mock_kernel k = *(const enum mock_kernel *)prog;
	size_t need_bufs = k == MOCK_FILL ? 1 : 3;
	size_t need_vals = k == MOCK_FILL ? 1 : 0;

	if (args->nbufs < need_bufs || args->nvals < need_vals)
		return m->host->set_error(m->host, TG_EINVAL,
			"mock launch: %s needs %zu buffers and %zu values, "
			"got %zu and %zu", k == MOCK_FILL ? "fill" : "add",
			need_bufs, need_vals, args->nbufs, args->nvals);
	if (k == MOCK_FILL)
		mock_fill(args);
	else
		mock_add(args);
	if (args->wait)
		args->elapsed_s = 0.0;
	return 0;
}

/* Launches run to completion, so there is never anything to wait for. */
static int mock_synchronize(struct tg_device *dev)
{
	(void)dev;
	return 0;
}

static void mock_program_free(struct tg_device *dev, void *prog)
{
	(void)dev, (void)prog;
}

/* ------------------------------------------------------------------ */
/* Tables, probe and open                                              */
/* ------------------------------------------------------------------ */

/* One way only, so that tests see both paths of the core. */
static int mock_transfer(struct tg_device *dev, void *dst,
                         struct tg_device *src_dev, const void *src, size_t n)
{
	struct mock_dev *d = (struct mock_dev *)dev;
	struct mock_dev *s = (struct mock_dev *)src_dev;

	if (strcmp(s->name, "MOCK") || strcmp(d->name, "MOCK:1"))
		return d->host->set_error(d->host, TG_EUNSUPPORTED, "mock "
		                          "transfer: no link from %s to %s",
		                          s->name, d->name);
	memcpy(dst, src, n);
	return 0;
}

static const struct tg_allocator_iface mock_allocator = {
	.struct_size = TG_STRUCT_SIZE(struct tg_allocator_iface, transfer),
	.alloc = mock_alloc,
	.free = mock_free,
	.copy_in = mock_copy_in,
	.copy_out = mock_copy_out,
	.view = mock_view,
	.view_free = mock_view_free,
	.mem_info = mock_mem_info,
	.transfer = mock_transfer,
};

static const struct tg_compiler_iface mock_compiler = {
	.struct_size = TG_STRUCT_SIZE(struct tg_compiler_iface, compile),
	.identity = mock_identity,
	.compile = mock_compile,
};

static const struct tg_renderer_caps mock_renderer = {
	.struct_size = TG_STRUCT_SIZE(struct tg_renderer_caps, tensor_cores),
	.dialect = TG_DIALECT_C,
	.has_local = 1,
	.has_shared = 1,
	.max_upcast = 4,
	.global_max = { (size_t)1 << 31, 65535, 65535 },
	.local_max = { 256, 256, 64 },
	.local_max_total = 256,
	.shared_max = 48 * 1024,
	/* Without float64, like many GPUs, so dtype fallbacks get tested. */
	.dtype_mask = TG_DTYPE_ALL & ~TG_DTYPE_BIT(TG_FLOAT64),
	.needs_transcendental_fallback = 0,
	.tensor_cores = 0,
};

static const struct tg_runtime_iface mock_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, program_free),
	.load = mock_load,
	.launch = mock_launch,
	.synchronize = mock_synchronize,
	.program_free = mock_program_free,
};

/* Config `types`: the probe's per-device types as a list of digits
 * (enum tg_device_type: "01" is a CPU then a GPU), for the selection
 * tests; "x01" gives the same as a probe before ABI 0.7 would, device
 * 0's `type` alone.  Unset, every device is an ACCEL. */
static int mock_probe(const struct tg_host *host, struct tg_probe *out)
{
	const char *types = host->config_get(host, "types");

	out->ndevices = MOCK_NDEVICES;
	out->type = TG_DEVICE_ACCEL;
	out->reason[0] = '\0';
	if (types && types[0] == 'x') {
		out->type = types[1] - '0';
		return 0;
	}
	for (int i = 0; TG_HAS(out, struct tg_probe, types) &&
	                i < MOCK_NDEVICES; i++) {
		out->types[i] = types && types[i] >= '0' && types[i] <= '3'
		                ? types[i] - '0' : TG_DEVICE_ACCEL;
		out->ntypes = i + 1;
	}
	if (out->ntypes > 0)
		out->type = out->types[0];
	return 0;
}

/* Parses memory_limit (bytes, decimal) into *limit; unset: SIZE_MAX. */
static int mock_read_limit(const struct tg_host *host, size_t *limit)
{
	const char *s = host->config_get(host, "memory_limit");
	unsigned long long v;
	char *end;

	*limit = SIZE_MAX;
	if (s == NULL)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
	    v >= SIZE_MAX)
		return host->set_error(host, TG_ECONFIG,
			"mock: memory_limit '%s' is not a byte count", s);
	*limit = (size_t)v;
	return 0;
}

static void mock_close(struct tg_device *dev)
{
	free(mock_of(dev));
}

static void mock_init_info(struct mock_dev *m, int index)
{
	if (index == 0)
		snprintf(m->name, sizeof(m->name), "MOCK");
	else
		snprintf(m->name, sizeof(m->name), "MOCK:%d", index);
	if (m->limit == SIZE_MAX)
		snprintf(m->description, sizeof(m->description),
		         "mock device %d on host memory, no budget", index);
	else
		snprintf(m->description, sizeof(m->description),
		         "mock device %d on host memory, %zu byte budget",
		         index, m->limit);
	m->info = (struct tg_device_info){
		.struct_size = TG_STRUCT_SIZE(struct tg_device_info,
		                              total_memory),
		.name = m->name,
		.description = m->description,
		.type = TG_DEVICE_ACCEL,
		.total_memory = m->limit == SIZE_MAX ? 0 : m->limit,
	};
}

static int mock_open(const struct tg_host *host, int index,
                     struct tg_device **out)
{
	struct mock_dev *m;
	size_t limit;
	int rc = mock_read_limit(host, &limit);

	if (rc < 0)
		return rc;
	if (index < 0 || index >= MOCK_NDEVICES)
		return host->set_error(host, TG_ENODEV,
			"mock open: no device %d (%d devices)", index,
			MOCK_NDEVICES);
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return host->set_error(host, TG_ENOMEM,
			"mock open: %zu bytes", sizeof(*m));
	m->host = host;
	m->limit = limit;
	atomic_init(&m->live, 0);
	mock_init_info(m, index);
	m->dev = (struct tg_device){
		.struct_size = TG_STRUCT_SIZE(struct tg_device, close),
		.ctx = m,
		.info = &m->info,
		.allocator = &mock_allocator,
		.compiler = &mock_compiler,
		.renderer = &mock_renderer,
		.runtime = &mock_runtime,
		.close = mock_close,
	};
	*out = &m->dev;
	return 0;
}

static const struct tg_plugin mock_plugin = {
	.struct_size = TG_STRUCT_SIZE(struct tg_plugin, unload),
	.abi_major = TG_PLUGIN_ABI_MAJOR,
	.abi_minor = TG_PLUGIN_ABI_MINOR,
	.name = "MOCK",
	.aliases = NULL,
	.version = "1.0.0",
	.vendor = "tgcore tests",
	.description = "host-memory mock device for the core's tests",
	.priority = 0,
	.probe = mock_probe,
	.open = mock_open,
	.query_extension = NULL,
	.unload = NULL,
};

TG_PLUGIN_DEFINE(mock_plugin)

/*
 * device.c - opened devices: checking the tables a plugin hands back,
 * keeping one tg_dev per plugin device, and the public tg_dev_* calls.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"

pthread_mutex_t tg_lock = PTHREAD_MUTEX_INITIALIZER;

static TG_VEC(struct tg_dev *) devs;

/* Each required entry of a device, as (offset of the table pointer,
 * minimum table size, offset of the entry, name). */
#define REQ(tab, type, field) \
	{ offsetof(struct tg_device, tab), \
	  TG_STRUCT_SIZE(type, field), offsetof(type, field), \
	  #tab "." #field }
static const struct required {
	size_t table, min_size, entry;
	const char *name;
} required[] = {
	REQ(allocator, struct tg_allocator_iface, alloc),
	REQ(allocator, struct tg_allocator_iface, free),
	REQ(allocator, struct tg_allocator_iface, copy_in),
	REQ(allocator, struct tg_allocator_iface, copy_out),
	REQ(compiler, struct tg_compiler_iface, identity),
	REQ(compiler, struct tg_compiler_iface, compile),
	REQ(runtime, struct tg_runtime_iface, load),
	REQ(runtime, struct tg_runtime_iface, launch),
	REQ(runtime, struct tg_runtime_iface, synchronize),
	REQ(runtime, struct tg_runtime_iface, program_free),
};

/* check_tables' answer for a device with part of the graph entries. */
#define PARTIAL_GRAPH "graph"

/* The optional graph entries come as a group. */
static int graph_group_ok(const struct tg_runtime_iface *rt)
{
	int n = 0;

	if (TG_HAS(rt, struct tg_runtime_iface, graph_new) && rt->graph_new)
		n++;
	if (TG_HAS(rt, struct tg_runtime_iface, graph_run) && rt->graph_run)
		n++;
	if (TG_HAS(rt, struct tg_runtime_iface, graph_free) &&
	    rt->graph_free)
		n++;
	return n == 0 || n == 3;
}

/* Whether tensor core t is one the TC opt can apply: K and each of
 * N and M the product of its splits, every split at least 2. */
static int tc_valid(const struct tg_tensor_core *t)
{
	uint64_t prod[2] = { 1, 1 };

	if (!t || t->struct_size < TG_STRUCT_SIZE(struct tg_tensor_core,
	                                          splits) ||
	    t->nsplits > TG_TC_MAX_SPLITS || !t->dims[2])
		return 0;
	for (size_t i = 0; i < t->nsplits; i++) {
		const struct tg_tc_split *s = &t->splits[i];
		if ((s->kind != TG_TC_LOCAL && s->kind != TG_TC_UPCAST) ||
		    (s->dim != 0 && s->dim != 1) || s->amt < 2 ||
		    prod[s->dim] * s->amt > UINT32_MAX)
			return 0;
		prod[s->dim] *= s->amt;
	}
	return prod[0] == t->dims[0] && prod[1] == t->dims[1];
}

/* Whether the renderer's tensor cores (since 0.3) are all valid. */
static int tcs_valid(const struct tg_renderer_caps *c)
{
	if (!TG_HAS(c, struct tg_renderer_caps, tc) || c->tensor_cores == 0)
		return 1;
	if (c->tensor_cores < 0 || c->tensor_cores > 64 || !c->tc)
		return 0;
	for (int i = 0; i < c->tensor_cores; i++)
		if (!tc_valid(&c->tc[i]))
			return 0;
	return 1;
}

/* NULL when `d` is usable, else the name of what is missing. */
static const char *check_tables(const struct tg_device *d)
{
	size_t i;

	if (!tg_device_closable(d))
		return "close";
	if (!d->info || !d->info->name)
		return "info";
	if (!d->renderer || d->renderer->struct_size <
	    TG_STRUCT_SIZE(struct tg_renderer_caps, dtype_mask))
		return "renderer";
	if (!tcs_valid(d->renderer))
		return "renderer.tc (tensor core description)";
	if (TG_HAS(d->renderer, struct tg_renderer_caps, buffer_align) &&
	    (d->renderer->buffer_align & (d->renderer->buffer_align - 1)))
		return "renderer.buffer_align (not 0 or a power of 2)";
	if (d->renderer->dialect == TG_DIALECT_CUSTOM &&
	    !(TG_HAS(d->renderer, struct tg_renderer_caps, render) &&
	      d->renderer->render))
		return "renderer.render (its dialect is TG_DIALECT_CUSTOM)";
	if (d->renderer->dialect < TG_DIALECT_C ||
	    d->renderer->dialect > TG_DIALECT_CUSTOM)
		return "renderer.dialect (not an enum tg_dialect)";
	for (i = 0; i < TG_ARRAY_LEN(required); i++) {
		const struct required *r = &required[i];
		const char *tab = *(const char *const *)((const char *)d +
		                                         r->table);

		if (!tab || *(const size_t *)tab < r->min_size ||
		    !*(void *const *)(tab + r->entry))
			return r->name;
	}
	if (!graph_group_ok(d->runtime))
		return PARTIAL_GRAPH;
	return NULL;
}

/* Copies a plugin table (which starts with its struct_size) over
 * `dst`, which holds the core's defaults, so that fields an older plugin
 * lacks keep their defaults: optional entries NULL, limits neutral. */
static void copy_table(void *dst, size_t dst_size, const void *src)
{
	size_t n = *(const size_t *)src;

	memcpy(dst, src, n < dst_size ? n : dst_size);
	*(size_t *)dst = dst_size;
}

/* The one place where defaults for absent fields are applied. */
static void copy_tables(struct tg_dev *dev)
{
	const struct tg_device *d = dev->impl;

	dev->caps = (struct tg_renderer_caps){
		.max_upcast = 1,
		.global_max = { SIZE_MAX, SIZE_MAX, SIZE_MAX },
		.local_max = { 1, 1, 1 },
		.local_max_total = 1,
	};
	copy_table(&dev->caps, sizeof dev->caps, d->renderer);
	/* before 0.3 a count could not come with a description */
	if (!TG_HAS(d->renderer, struct tg_renderer_caps, tc))
		dev->caps.tensor_cores = 0;
	copy_table(&dev->alloc, sizeof dev->alloc, d->allocator);
	copy_table(&dev->comp, sizeof dev->comp, d->compiler);
	copy_table(&dev->rt, sizeof dev->rt, d->runtime);
}

static struct tg_dev *dev_new(tg_plugin_rec *rec, int index,
                              struct tg_device *impl, const char *name)
{
	struct tg_dev *dev = calloc(1, sizeof *dev);

	if (!dev || !(dev->name = strdup(name)) || TG_VEC_PUSH(&devs, dev)) {
		if (dev)
			free(dev->name);
		free(dev);
		return NULL;
	}
	dev->index = index;
	dev->plugin = rec;
	dev->impl = impl;
	copy_tables(dev);
	/* the cache keeps freed memory for reuse; a DISK buffer is a
	 * mapping of the file, which must go when the buffer does */
	tg_lru_init(&dev->lru, tg_disk_is(dev) ? 0 :
	            (int)tg_setting_int(TG_KEY_LRU));
	return dev;
}

struct tg_dev *tg_devices_find(const char *name)
{
	for (size_t i = 0; i < devs.n; i++)
		if (!strcmp(devs.v[i]->name, name))
			return devs.v[i];
	return NULL;
}

int tg_devices_adopt(tg_plugin_rec *rec, int index, struct tg_device *impl,
                     const char *name, struct tg_dev **out)
{
	const char *bad = check_tables(impl);

	if (bad) {
		if (!strcmp(bad, PARTIAL_GRAPH))
			return tg_error(TG_EPLUGIN, "the device gives some of "
			                "runtime.graph_new, graph_run and "
			                "graph_free but not all three; refusing "
			                "it");
		return tg_error(TG_EPLUGIN, "the device has no valid %s "
		                "entry; refusing it", bad);
	}
	if (!(*out = dev_new(rec, index, impl, name)))
		return tg_error_oom("device open");
	tg_debug_log(1, "opened %s: %s", (*out)->name,
	             impl->info->description ? impl->info->description : "");
	return 0;
}

int tg_devices_open(tg_plugin_rec *rec, int index, struct tg_dev **out)
{
	struct tg_device *impl = NULL;
	tg_devname dn = { rec, index };
	char name[96];
	size_t i;
	int rc;

	for (i = 0; i < devs.n; i++)
		if (devs.v[i]->plugin == rec && devs.v[i]->index == index)
			return *out = devs.v[i], 0;
	tg_clear_error();
	rc = rec->desc->open(&rec->host, index, &impl);
	if ((rc < 0 || !impl) && !tg_last_error()[0])
		return tg_error(TG_EPLUGIN, "open failed without a reason");
	if (rc < 0 || !impl)
		return rc < 0 ? rc : TG_EPLUGIN;
	tg_devname_format(&dn, name, sizeof name);
	if ((rc = tg_devices_adopt(rec, index, impl, name, out)) &&
	    tg_device_closable(impl))
		impl->close(impl);
	return rc;
}

void tg_devices_close_all(void)
{
	size_t i;

	for (i = devs.n; i-- > 0;) {
		struct tg_dev *dev = devs.v[i];

		tg_lru_destroy(dev);
		dev->impl->close(dev->impl);
		free(dev->name);
		free(dev);
	}
	TG_VEC_FREE(&devs);
	tg_groups_free();
}

const struct tg_renderer_caps *tg_dev_caps(const struct tg_dev *dev)
{
	return &dev->caps;
}

tg_dev *tg_dev_get(const char *name)
{
	struct tg_dev *dev = NULL;
	tg_devname dn;
	char what[160];

	if (tg_ensure_init())
		return NULL;
	pthread_mutex_lock(&tg_lock);
	if (!name || !name[0]) {
		tg_select_default(&dev, NULL);
	} else if (tg_disk_path(name)) {
		if (tg_disk_open(tg_disk_path(name), &dev))
			dev = NULL;
	} else if (!tg_registry_scan()) {
		snprintf(what, sizeof what, "device '%s'", name);
		if (!tg_devname_parse(name, what, &dn) &&
		    tg_select_open(&dn, what, NULL, &dev))
			dev = NULL;
	}
	pthread_mutex_unlock(&tg_lock);
	return dev;
}

const char *tg_dev_default_name(const char **why)
{
	struct tg_dev *dev = NULL;

	if (tg_ensure_init())
		return NULL;
	pthread_mutex_lock(&tg_lock);
	tg_select_default(&dev, why);
	pthread_mutex_unlock(&tg_lock);
	return dev ? dev->name : NULL;
}

const char *tg_dev_name(const tg_dev *dev)
{
	return dev ? dev->name : "(null)";
}

const char *tg_dev_description(const tg_dev *dev)
{
	const char *d = dev && !dev->ngroup ? dev->impl->info->description
	                                    : NULL;

	return d ? d : "";
}

int tg_dev_synchronize(tg_dev *dev)
{
	int rc;

	if (!dev)
		return tg_error(TG_EINVAL, "dev_synchronize: device is NULL");
	for (size_t i = 0; i < dev->ngroup; i++)
		if ((rc = tg_dev_synchronize(dev->group[i])))
			return rc;
	if (dev->ngroup)
		return 0;
	rc = dev->rt.synchronize(dev->impl);
	return rc < 0 ? tg_error_prefix("synchronize %s", dev->name) : 0;
}

static const char *type_name(int t)
{
	static const char *const names[] = { "CPU", "GPU", "IGPU", "ACCEL" };

	return t >= 0 && t < 4 ? names[t] : "?";
}

static const char *dialect_name(int d)
{
	static const char *const names[] = { "c", "opencl", "cuda", "glsl",
	                                     "custom" };

	return d >= 0 && d < 5 ? names[d] : "?";
}

int tg_dev_get_info(tg_dev *dev, tg_dev_info *info)
{
	uint64_t free_b = 0, total_b;

	if (!dev || !info)
		return tg_error(TG_EINVAL, "dev_get_info: %s is NULL",
		                dev ? "info" : "device");
	if (tg_dev_refuse_group(dev, "dev_get_info"))
		return tg_last_status();
	total_b = dev->impl->info->total_memory;
	if (dev->alloc.mem_info &&
	    dev->alloc.mem_info(dev->impl, &free_b, &total_b) < 0)
		free_b = 0, total_b = dev->impl->info->total_memory;
	*info = (tg_dev_info){
		.name = dev->name,
		.description = tg_dev_description(dev),
		.type = type_name(dev->impl->info->type),
		.dialect = dialect_name(dev->caps.dialect),
		.total_memory = total_b,
		.free_memory = free_b,
		.has_local = dev->caps.has_local,
		.has_shared = dev->caps.has_shared,
		.local_max_total = dev->caps.local_max_total,
		.shared_max = dev->caps.shared_max,
		.dtype_mask = dev->caps.dtype_mask,
	};
	return 0;
}

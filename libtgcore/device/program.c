/*
 * program.c - compiled kernels: compile through the on-disk cache, load,
 * launch over buffers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "cache/cache.h"
#include "render/render.h"

struct tg_program {
	struct tg_dev *dev;
	void *impl;
	char *name;
	double ops, mem_bytes; /* per launch, for the counters */
};

int tg_dev_render(tg_dev *dev, tg_ksrc *ks)
{
	char *src = NULL;
	int rc;

	if (!dev || !ks)
		return tg_error(TG_EINVAL, "render: %s is NULL",
		                dev ? "kernel" : "device");
	if (ks->src)
		return TG_OK;
	if (!ks->view || !dev->caps.render)
		return tg_error(TG_EINVAL, "render: kernel %s on %s: nothing "
		                "to render", ks->name ? ks->name : "?",
		                dev->name);
	tg_clear_error();
	rc = dev->caps.render(dev->impl,
	                      (const struct tg_kernel_view *)ks->view, &src);
	if (rc >= 0 && !src)
		rc = tg_error(TG_EPLUGIN, "the renderer returned no text");
	if (rc < 0) {
		free(src);
		if (!tg_last_error()[0])
			tg_error(rc, "failed without a reason");
		return tg_error_prefix("render: kernel %s on %s (the plugin's "
		                       "renderer)", ks->name, dev->name);
	}
	ks->src = src;  /* host->alloc is malloc */
	tg_kview_free(ks->view);
	ks->view = NULL;
	return TG_OK;
}

void tg_program_set_cost(tg_program *p, double ops, double mem_bytes)
{
	p->ops = ops;
	p->mem_bytes = mem_bytes;
}

void tg_program_cost(const tg_program *p, double *ops, double *mem_bytes)
{
	*ops = p->ops;
	*mem_bytes = p->mem_bytes;
}

char *tg_dev_compile_key(struct tg_dev *dev)
{
	const char *id = dev->comp.identity(dev->impl);
	tg_strbuf sb;

	tg_strbuf_init(&sb);
	tg_strbuf_addf(&sb, "%s\n%s\n", dev->plugin->desc->name,
	               id ? id : "");
	return tg_strbuf_finish(&sb);
}

/* The compile cache key: plugin, compiler identity and source, so a new
 * compiler or new flags never reuse an old binary. */
static char *cache_key(struct tg_dev *dev, const char *src)
{
	char *prefix = tg_dev_compile_key(dev);
	tg_strbuf sb;

	if (!prefix)
		return NULL;
	tg_strbuf_init(&sb);
	tg_strbuf_add(&sb, prefix);
	tg_strbuf_add(&sb, src);
	free(prefix);
	return tg_strbuf_finish(&sb);
}

/* Compiles `src` with the device's compiler; *blob is malloc'd (the
 * plugin's host->alloc is malloc, so cached and fresh blobs are freed
 * alike).  The binary goes into the compile cache under `key`. */
static int compile(struct tg_dev *dev, const char *name, const char *src,
                   const char *key, const tg_settings *set, void **blob,
                   size_t *len)
{
	char *log = NULL;
	int rc;

	tg_clear_error();
	rc = dev->comp.compile(dev->impl, src, blob, len, &log);
	if (rc < 0 || !*blob) {
		if (!tg_last_error()[0])
			tg_error(TG_ECOMPILE, "%s", log ? log : "no message");
		rc = tg_error_prefix("program_new '%s' on %s", name, dev->name);
	} else {
		tg_diskcache_put(set, "compile", key, *blob, *len);
	}
	if (log && log[0] && tg_debug_level() >= 4)
		tg_debug_log(4, "compiler output for '%s':\n%s", name, log);
	free(log);
	return rc < 0 ? rc : 0;
}

/* Loads a binary into p; the blob is freed. */
static int load(tg_program *p, const char *name, void *blob, size_t len)
{
	int rc = p->dev->rt.load(p->dev->impl, name, blob, len, &p->impl);

	free(blob);
	return rc < 0 ? tg_error_prefix("program_new '%s' on %s", name,
	                                p->dev->name) : 0;
}

/* The cached binary when there is one and it loads, else a fresh
 * compile, which replaces the cached one (a binary the cache kept
 * whole can still be one this driver or loader refuses). */
static int build(tg_program *p, const char *name, const char *src,
                 const tg_settings *set)
{
	char *key = cache_key(p->dev, src);
	void *blob = NULL;
	size_t len = 0;
	int rc;

	if (!key)
		return tg_error_oom("program_new");
	if (tg_diskcache_get(set, "compile", key, &blob, &len) == 1) {
		if (!(rc = load(p, name, blob, len)))
			goto out;
		tg_debug_log(1, "%s; compiling it again", tg_last_error());
	}
	if (!(rc = compile(p->dev, name, src, key, set, &blob, &len)))
		rc = load(p, name, blob, len);
out:
	free(key);
	return rc;
}

/* A public build starts an operation: its settings are read here. */
tg_program *tg_program_new(tg_dev *dev, const char *name, const char *src)
{
	tg_settings set;

	tg_settings_read(&set);
	return tg_program_build(dev, name, src, &set);
}

tg_program *tg_program_build(tg_dev *dev, const char *name, const char *src,
                             const tg_settings *set)
{
	tg_program *p;

	if (!dev || !name || !src)
		return tg_error(TG_EINVAL, "program_new: %s is NULL", !dev ?
		                "device" : !name ? "name" : "source"), NULL;
	if (tg_dev_refuse_group(dev, "program_new"))
		return NULL;
	p = calloc(1, sizeof *p);
	if (!p || !(p->name = strdup(name))) {
		free(p);
		return tg_error_oom("program_new"), NULL;
	}
	p->dev = dev;
	if (build(p, name, src, set)) {
		free(p->name);
		free(p);
		return NULL;
	}
	return p;
}

void tg_program_free(tg_program *p)
{
	if (!p)
		return;
	p->dev->rt.program_free(p->dev->impl, p->impl);
	free(p->name);
	free(p);
}

/* Collects the device handles of the arguments into `h`. */
static int gather(tg_program *p, const tg_launch_args *a, void **h)
{
	size_t i;
	int rc;

	for (i = 0; i < a->nbufs; i++) {
		tg_buffer *b = a->bufs[i];

		if (!b)
			return tg_error(TG_EINVAL, "program_launch '%s': buffer "
			                "%zu is NULL", p->name, i);
		if (tg_buffer_dev(b) != p->dev)
			return tg_error(TG_EINVAL, "program_launch '%s': buffer "
			                "%zu is on %s, the program on %s",
			                p->name, i, tg_buffer_dev(b)->name,
			                p->dev->name);
		if ((rc = tg_buffer_handle(b, &h[i])))
			return rc;
	}
	return 0;
}

static int check_geometry(tg_program *p, const tg_launch_args *a)
{
	const struct tg_renderer_caps *c = &p->dev->caps;
	int i;

	for (i = 0; i < 3; i++) {
		if (!a->global[i] || !a->local[i])
			return tg_error(TG_EINVAL, "program_launch '%s': global "
			                "(%zu,%zu,%zu) and local (%zu,%zu,%zu) "
			                "must be positive", p->name,
			                a->global[0], a->global[1], a->global[2],
			                a->local[0], a->local[1], a->local[2]);
		if (a->local[i] > c->local_max[i] ||
		    a->global[i] > c->global_max[i])
			return tg_error(TG_EINVAL, "program_launch '%s': axis %d "
			                "global %zu / local %zu exceed %s's "
			                "limits %zu / %zu", p->name, i,
			                a->global[i], a->local[i], p->dev->name,
			                c->global_max[i], c->local_max[i]);
	}
	return 0;
}

int tg_program_prepare(tg_program *p, const tg_launch_args *a,
                       void **handles, struct tg_launch *out)
{
	int rc;

	if (!p || !a)
		return tg_error(TG_EINVAL, "program_launch: %s is NULL",
		                p ? "args" : "program");
	if ((a->nbufs && !a->bufs) || (a->nvals && !a->vals))
		return tg_error(TG_EINVAL, "program_launch '%s': %zu buffers/"
		                "%zu values but no array", p->name, a->nbufs,
		                a->nvals);
	if ((rc = check_geometry(p, a)) || (rc = gather(p, a, handles)))
		return rc;
	*out = (struct tg_launch){
		.struct_size = TG_STRUCT_SIZE(struct tg_launch, elapsed_s),
		.bufs = handles, .nbufs = a->nbufs,
		.vals = a->vals, .nvals = a->nvals,
		.global = { a->global[0], a->global[1], a->global[2] },
		.local = { a->local[0], a->local[1], a->local[2] },
	};
	return 0;
}

void *tg_program_impl(const tg_program *p)
{
	return p->impl;
}

const char *tg_program_name(const tg_program *p)
{
	return p->name;
}

struct tg_dev *tg_program_dev(const tg_program *p)
{
	return p->dev;
}

/* Prepares a launch of p and hands it to the plugin: its launch entry,
 * or its trial entry when timeout_s > 0. */
static int launch_or_trial(tg_program *p, const tg_launch_args *a,
                           double timeout_s, double *elapsed_s)
{
	struct tg_launch l;
	void **h;
	int rc;

	if (!(h = calloc(a && a->nbufs ? a->nbufs : 1, sizeof *h)))
		return tg_error_oom("program_launch");
	if (!(rc = tg_program_prepare(p, a, h, &l))) {
		const struct tg_runtime_iface *rt = &p->dev->rt;
		l.wait = elapsed_s != NULL || timeout_s > 0;
		rc = timeout_s > 0 ?
		     rt->trial(p->dev->impl, p->impl, &l, timeout_s) :
		     rt->launch(p->dev->impl, p->impl, &l);
		if (rc < 0)
			tg_error_prefix("program_%s '%s' on %s", timeout_s > 0 ?
			                "trial" : "launch", p->name,
			                p->dev->name);
		else if (elapsed_s)
			*elapsed_s = l.elapsed_s;
	}
	free(h);
	return rc < 0 ? rc : 0;
}

int tg_program_launch(tg_program *p, const tg_launch_args *a,
                      double *elapsed_s)
{
	return launch_or_trial(p, a, 0.0, elapsed_s);
}

int tg_program_has_trial(const tg_program *p)
{
	return p && p->dev->rt.trial != NULL;
}

int tg_program_trial(tg_program *p, const tg_launch_args *a,
                     double timeout_s)
{
	if (!p)
		return tg_error(TG_EINVAL, "program_trial: program is NULL");
	if (!tg_program_has_trial(p))
		return tg_error(TG_EUNSUPPORTED, "program_trial '%s' on %s: "
		                "the plugin has no trial entry", p->name,
		                p->dev->name);
	if (!(timeout_s > 0))
		return tg_error(TG_EINVAL, "program_trial '%s' on %s: "
		                "timeout %g s, want > 0", p->name,
		                p->dev->name, timeout_s);
	return launch_or_trial(p, a, timeout_s, NULL);
}

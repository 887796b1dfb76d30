/*
 * lib.c - library start-up and shutdown, and plugin introspection.
 *
 * Start-up is the configuration's (util/config.c, tg_ensure_init);
 * plugins are scanned later, on first need (a device, or tg-info).
 * Shutdown tears down every stage, highest first.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "device/device.h"
#include "engine/engine.h"
#include "plugin/registry.h"
#include "shape/shape.h"
#include "tensor/tensor.h"

int tg_init(void)
{
	return tg_ensure_init();
}

void tg_shutdown(void)
{
	tg_profile_flush();  /* PROFILE=1, GRAPH=1: what this run did */
	tg_graphviz_flush();
	tg_random_reset();  /* tensors: before the devices go */
	pthread_mutex_lock(&tg_lock);
	tg_method_cache_clear();
	tg_schedule_context_free();
	tg_symctx_free();   /* after the kernels that import from it */
	tg_select_reset();
	tg_devices_close_all();
	tg_registry_unload();
	tg_diskcache_close();
	tg_host_reset();
	pthread_mutex_unlock(&tg_lock);
	tg_config_unload();  /* last: the next call starts afresh */
}

/* ------------------------------------------------------- introspection */

size_t tg_plugin_count(void)
{
	size_t n = 0;

	if (tg_ensure_init())
		return 0;
	pthread_mutex_lock(&tg_lock);
	if (tg_registry_scan() == 0)
		n = tg_registry_count();
	pthread_mutex_unlock(&tg_lock);
	return n;
}

int tg_plugin_get(size_t i, tg_plugin_info *info)
{
	tg_plugin_rec *r;
	const struct tg_plugin *d;
	int rc;

	if (!info)
		return tg_error(TG_EINVAL, "plugin_get: info is NULL");
	if ((rc = tg_ensure_init()))
		return rc;
	pthread_mutex_lock(&tg_lock);
	r = tg_registry_scan() == 0 ? tg_registry_at(i) : NULL;
	if (r && (d = r->desc) != NULL)
		tg_registry_probe(r);
	pthread_mutex_unlock(&tg_lock);
	if (!r)
		return tg_error(TG_EINVAL, "plugin_get: index %zu out of range"
		                " (%zu plugins)", i, tg_registry_count());
	d = r->desc;
	*info = (tg_plugin_info){
		.file = r->file, .state = r->state,
		.message = r->message ? r->message : "",
		.name = d ? d->name : NULL, .version = d ? d->version : NULL,
		.vendor = d ? d->vendor : NULL,
		.description = d ? d->description : NULL,
		.abi_major = d ? d->abi_major : -1,
		.abi_minor = d ? d->abi_minor : -1,
		.ndevices = d ? r->probe.ndevices : -1,
		.probe_reason = r->probe.reason,
	};
	return 0;
}

size_t tg_plugin_path_count(void)
{
	size_t n;

	if (tg_ensure_init())
		return 0;
	pthread_mutex_lock(&tg_lock);
	n = tg_registry_scan() == 0 ? tg_registry_path_count() : 0;
	pthread_mutex_unlock(&tg_lock);
	return n;
}

const char *tg_plugin_path_get(size_t i, const char **origin)
{
	const char *o, *p = tg_registry_path(i, &o);

	if (origin)
		*origin = o;
	return p;
}

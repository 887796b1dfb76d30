/*
 * host.c - the services table handed to each plugin (ONNX Runtime's
 * OrtApiBase idea): logging, errors, memory and configuration, so that
 * plugins never link libtgcore.  Each plugin gets its own table, whose
 * core_private points back at the plugin's record.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/registry.h"
#include "core.h"
#include "render/render.h"

/* Plugins log and ask for the cache directory from any thread (the CPU
 * plugin's compiles run on the threads that realize); host_lock guards
 * what those calls share.  It is a leaf lock. */
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static char *cache_dir;
static int cache_tried;

static tg_plugin_rec *rec_of(const struct tg_host *host)
{
	return host->core_private;
}

static void host_log(const struct tg_host *host, int level,
                     const char *fmt, ...)
{
	tg_plugin_rec *rec = rec_of(host);
	char msg[TG_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (level <= TG_LOG_ERROR) {  /* kept to explain a refusal */
		pthread_mutex_lock(&host_lock);
		free(rec->last_log);
		rec->last_log = strdup(msg);
		pthread_mutex_unlock(&host_lock);
	}
	tg_debug_log(level, "%s: %s", rec->desc ? rec->desc->name : rec->file, msg);
}

static int host_set_error(const struct tg_host *host, int status,
                          const char *fmt, ...)
{
	va_list ap;

	(void)host;
	if (status >= 0 || status < TG_STATUS_MIN)
		status = TG_EPLUGIN;  /* a plugin may not report success */
	va_start(ap, fmt);
	tg_verror(status, fmt, ap);
	va_end(ap);
	return status;
}

static void *host_alloc(const struct tg_host *host, size_t size)
{
	(void)host;
	return malloc(size ? size : 1);
}

static void host_free(const struct tg_host *host, void *ptr)
{
	(void)host;
	free(ptr);
}

static const char *host_config_get(const struct tg_host *host,
                                   const char *key)
{
	tg_plugin_rec *rec = rec_of(host);

	return rec->section && key ? tg_cfg_get(rec->section, key) : NULL;
}

static int host_config_error(const struct tg_host *host, const char *key,
                             const char *fmt, ...)
{
	tg_plugin_rec *rec = rec_of(host);
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = tg_cfg_verror(rec->section ? rec->section : "?",
	                   key ? key : "?", fmt, ap);
	va_end(ap);
	return rc;
}

/* The per-user cache directory, created 0700; NULL when there is none
 * (no home, setuid) or it is not private (owned by another user, or
 * writable by others: cached CPU kernels are loaded as code), said once
 * at DEBUG=0.  Never a shared /tmp path.  Made on first use and kept
 * until tg_shutdown, so the string may be handed out after the lock is
 * dropped. */
static char *private_cache_dir(void)
{
	char *base, *dir = NULL, why[TG_ERROR_MAX];

	if (tg_user_dir("XDG_CACHE_HOME", ".cache", &base) || !base) {
		tg_debug_log(1, "no cache directory (no home directory, or "
		             "setuid): the compile cache is off");
		return NULL;
	}
	dir = tg_path_join(base, "tgcore");
	free(base);
	if (!dir)
		return NULL;
	if (tg_mkdir_p(dir)) {
		tg_debug_log(0, "cache directory: %s; the compile cache is off",
		             tg_last_error());
	} else if (tg_private_path(dir, 1, why, sizeof why)) {
		tg_debug_log(0, "cache directory refused: %s; the compile cache "
		             "is off", why);
	} else {
		return dir;
	}
	free(dir);
	return NULL;
}

const char *tg_cache_dir(void)
{
	const char *dir;

	pthread_mutex_lock(&host_lock);
	if (!cache_tried) {
		cache_dir = private_cache_dir();
		cache_tried = 1;
	}
	dir = cache_dir;
	pthread_mutex_unlock(&host_lock);
	return dir;
}

void tg_host_reset(void)
{
	pthread_mutex_lock(&host_lock);
	free(cache_dir);
	cache_dir = NULL;
	cache_tried = 0;
	pthread_mutex_unlock(&host_lock);
}

/* The kernel a TG_DIALECT_CUSTOM renderer reads (render/kview.c). */
static int host_kernel_info(const struct tg_host *host,
                            const struct tg_kernel_view *k,
                            struct tg_kernel_info *out)
{
	(void)host;
	return tg_kview_info((const struct tg_kview *)k, out);
}

static int host_kernel_op(const struct tg_host *host,
                          const struct tg_kernel_view *k, size_t i,
                          struct tg_kernel_op *out)
{
	(void)host;
	return tg_kview_op((const struct tg_kview *)k, i, out);
}

void tg_host_init(struct tg_host *host, tg_plugin_rec *rec)
{
	*host = (struct tg_host){
		.struct_size = TG_STRUCT_SIZE(struct tg_host, config_error),
		.abi_major = TG_PLUGIN_ABI_MAJOR,
		.abi_minor = TG_PLUGIN_ABI_MINOR,
		.log = host_log,
		.set_error = host_set_error,
		.alloc = host_alloc,
		.free = host_free,
		.config_get = host_config_get,
		.cache_dir = tg_cache_dir(),
		.debug = tg_debug_level(),
		.core_private = rec,
		.kernel_info = host_kernel_info,
		.kernel_op = host_kernel_op,
		.config_error = host_config_error,
	};
}

/*
 * plugin/registry.h - the plugin registry: the search path, loading
 * (through libltdl, dl.c), probing, and the host table a plugin's entry
 * receives (host.c).  Internal; never installed.
 *
 * Lifetime scheme:
 *  - A tg_plugin_rec lives from the scan (tg_registry_scan) until
 *    tg_registry_unload (tg_shutdown), after the devices are closed.
 *  - The registry is guarded by tg_lock (device/device.h), which its
 *    callers hold.
 */
#ifndef TG_PLUGIN_REGISTRY_H
#define TG_PLUGIN_REGISTRY_H

#include <stddef.h>

#include <tg/plugin.h>

/* ------------------------------------------------------------ plugin/dl.c */

/* The libltdl shim: the only file that talks to libltdl. */
typedef struct tg_dl tg_dl;
/* Opens a module; `exact` 0 tries the .la/.so extensions (lt_dlopenext).
 * NULL with the loader's message copied into *err (free()), or with
 * *err NULL when host memory ran out. */
tg_dl *tg_dl_open(const char *path, int exact, char **err);
void *tg_dl_sym(tg_dl *dl, const char *name);
void tg_dl_close(tg_dl *dl);

/* ---------------------------------------------------------- plugin/host.c */

struct tg_plugin_rec;
/* Fills the host table a plugin's entry receives. */
void tg_host_init(struct tg_host *host, struct tg_plugin_rec *rec);
/* The private per-user cache directory for plugins and the compile
 * cache (created 0700), or NULL when there is none: the cache is off. */
const char *tg_cache_dir(void);
/* Forgets the cache directory (tg_shutdown). */
void tg_host_reset(void);

/* ------------------------------------------------------ plugin/registry.c */

/* One plugin file found by the search, loaded or not. */
typedef struct tg_plugin_rec {
	char *file;                 /* path as found (dir/stem.la or .so) */
	char *origin;               /* which search entry found it */
	tg_plugin_state state;
	char *message;              /* why refused/shadowed/disabled */
	char *last_log;             /* the plugin's last error-level log */
	tg_dl *dl;
	const struct tg_plugin *desc; /* NULL unless loaded */
	struct tg_host host;
	char *section;              /* lower-case name, the config section */
	int probed;
	struct tg_probe probe;
	char *bad_config;           /* the probe's TG_ECONFIG message: a
	                               setting of the plugin's is bad, and
	                               device selection stops on it */
} tg_plugin_rec;

/* Scans the search path and loads every plugin once (idempotent).
 * Callers hold tg_lock. */
int tg_registry_scan(void);
size_t tg_registry_count(void);
tg_plugin_rec *tg_registry_at(size_t i);
/* Loaded plugin whose name or alias equals `name` (case-insensitive). */
tg_plugin_rec *tg_registry_find(const char *name);
/* Runs the plugin's probe once; returns the device count (>= 0).  A
 * probe that fails with TG_ECONFIG (a bad setting) leaves its message
 * in rec->bad_config, and 0 devices. */
int tg_registry_probe(tg_plugin_rec *rec);
/* enum tg_device_type of device `index` of a probed plugin, from the
 * probe's types[] (ABI 0.7) or, when it gave none, its `type` for
 * device 0; -1 when the probe does not say. */
int tg_registry_device_type(const tg_plugin_rec *rec, int index);
/* Unloads everything (after the devices are closed). */
void tg_registry_unload(void);
/* Whether an opened device gives its close entry: what a refused
 * device (device.c) or a trial's (registry.c) can still be closed by. */
static inline int tg_device_closable(const struct tg_device *d)
{
	return d && d->struct_size >= TG_STRUCT_SIZE(struct tg_device, close)
	       && d->close;
}
/* Search path entries, in order. */
size_t tg_registry_path_count(void);
const char *tg_registry_path(size_t i, const char **origin);
/* "dir1, dir2 (missing)" for messages; new string or NULL. */
char *tg_registry_path_summary(void);

#endif /* TG_PLUGIN_REGISTRY_H */

/*
 * cache/cache.h - the on-disk cache of compiled and tuned kernels.
 * Internal; never installed.
 */
#ifndef TG_CACHE_H
#define TG_CACHE_H

#include "core.h"

/* ----------------------------------------------------- cache/diskcache.c */

/* The on-disk cache (tinygrad's diskcache): table/key -> blob, in sqlite.
 * Off for an operation whose settings have CACHELEVEL 0.  Failures are
 * logged and behave as misses: a broken cache never breaks a
 * computation. */
/* 1 and *val (malloc'd) on a hit, 0 on a miss. */
int tg_diskcache_get(const tg_settings *set, const char *table,
                     const char *key, void **val, size_t *len);
void tg_diskcache_put(const tg_settings *set, const char *table,
                      const char *key, const void *val, size_t len);
void tg_diskcache_close(void);
#endif /* TG_CACHE_H */

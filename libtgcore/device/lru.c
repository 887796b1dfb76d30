/*
 * lru.c - the memory cache in front of every device allocator
 * (tinygrad's LRUAllocator).  Freed blocks are kept by exact size and
 * handed out again, which makes the allocation pattern of a training
 * loop free after the first step.  When the plugin runs out of memory the
 * cache is emptied and the allocation retried once before the error
 * reaches the caller.
 */
#include "config.h"

#include <stdlib.h>

#include "device/device.h"

void tg_lru_init(tg_lru *lru, int enabled)
{
	*lru = (tg_lru){ .enabled = enabled };
	pthread_mutex_init(&lru->lock, NULL);
}

/* Takes a cached block of exactly `size` bytes; NULL when none. */
static void *take(tg_lru *lru, size_t size)
{
	size_t i;
	void *mem;

	for (i = lru->free_list.n; i-- > 0;) {
		if (lru->free_list.v[i].size != size)
			continue;
		mem = lru->free_list.v[i].mem;
		lru->free_list.v[i] = lru->free_list.v[--lru->free_list.n];
		lru->cached_bytes -= size;
		lru->n_reused++;
		return mem;
	}
	return NULL;
}

static int plugin_alloc(struct tg_dev *dev, size_t size, void **out)
{
	tg_lru *lru = &dev->lru;
	int rc;

	lru->n_plugin_alloc++;
	*out = NULL;
	rc = dev->alloc.alloc(dev->impl, size, out);
	if (rc == 0 && !*out)
		rc = tg_error(TG_EPLUGIN, "plugin %s returned no memory for "
		              "%zu bytes", dev->plugin->desc->name, size);
	return rc;
}

/* Frees every cached block; the caller holds the lock. */
static void flush_locked(struct tg_dev *dev)
{
	tg_lru *lru = &dev->lru;
	size_t i;

	for (i = 0; i < lru->free_list.n; i++)
		dev->alloc.free(dev->impl, lru->free_list.v[i].mem,
		                           lru->free_list.v[i].size);
	lru->free_list.n = 0;
	lru->cached_bytes = 0;
	lru->n_flush++;
}

int tg_lru_alloc(struct tg_dev *dev, size_t size, void **out)
{
	tg_lru *lru = &dev->lru;
	size_t had;
	int rc = 0;

	pthread_mutex_lock(&lru->lock);
	lru->n_alloc++;
	if ((*out = take(lru, size)))
		goto out_unlock;
	rc = plugin_alloc(dev, size, out);
	if (rc == TG_ENOMEM && lru->free_list.n) {
		had = lru->cached_bytes;
		flush_locked(dev);
		tg_debug_log(2, "%s: out of memory for %zu bytes; emptied the "
		       "cache (%zu bytes) and retrying", dev->name, size, had);
		rc = plugin_alloc(dev, size, out);
	}
out_unlock:
	pthread_mutex_unlock(&lru->lock);
	return rc;
}

void tg_lru_free(struct tg_dev *dev, void *mem, size_t size)
{
	tg_lru *lru = &dev->lru;
	tg_lru_entry e = { size, mem };

	pthread_mutex_lock(&lru->lock);
	if (!lru->enabled || TG_VEC_PUSH(&lru->free_list, e))
		dev->alloc.free(dev->impl, mem, size);
	else
		lru->cached_bytes += size;
	pthread_mutex_unlock(&lru->lock);
}

void tg_lru_flush(struct tg_dev *dev)
{
	pthread_mutex_lock(&dev->lru.lock);
	flush_locked(dev);
	pthread_mutex_unlock(&dev->lru.lock);
}

void tg_lru_destroy(struct tg_dev *dev)
{
	tg_lru_flush(dev);
	TG_VEC_FREE(&dev->lru.free_list);
	pthread_mutex_destroy(&dev->lru.lock);
}

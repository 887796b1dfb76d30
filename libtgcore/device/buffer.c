/*
 * buffer.c - device buffers: reference counted, allocated lazily on
 * first use, optionally views into a base buffer (sub-buffers) where the
 * device's allocator supports them.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "device/device.h"

struct tg_buffer {
	atomic_int refs;
	struct tg_dev *dev;
	size_t count, nbytes;
	tg_dtype dtype;
	void *mem;            /* device handle, NULL until allocated */
	tg_buffer *base;      /* for views: the buffer viewed */
	size_t offset;        /* for views: bytes into base */
	pthread_mutex_t lock; /* serializes the lazy allocation */
	/* memory the caller owns (allocator->wrap): unwrapped, never
	 * freed, and release(release_ctx) called after the last reference */
	int wrapped;
	void (*release)(void *ctx);
	void *release_ctx;
};

static tg_buffer *buffer_new(struct tg_dev *dev, size_t count,
                             tg_dtype dt, const char *op)
{
	size_t isz = tg_dtype_size(dt);
	tg_buffer *b;

	if (!dev)
		return tg_error(TG_EINVAL, "%s: device is NULL", op), NULL;
	if (tg_dev_refuse_group(dev, op))
		return NULL;
	if (!isz)
		return tg_error(TG_EINVAL, "%s: invalid dtype %d", op,
		                (int)dt), NULL;
	if (count > SIZE_MAX / isz)
		return tg_error(TG_EINVAL, "%s: %zu elements of %s overflow "
		                "the address space", op, count,
		                tg_dtype_name(dt)), NULL;
	if (!(dev->caps.dtype_mask & TG_DTYPE_BIT(dt)))
		return tg_error(TG_EUNSUPPORTED, "%s: device %s does not "
		                "support %s", op, dev->name,
		                tg_dtype_name(dt)), NULL;
	if (!(b = calloc(1, sizeof *b)))
		return tg_error_oom(op), NULL;
	atomic_init(&b->refs, 1);
	b->dev = dev;
	b->count = count;
	b->dtype = dt;
	b->nbytes = count * isz;
	pthread_mutex_init(&b->lock, NULL);
	return b;
}

tg_buffer *tg_buffer_new(tg_dev *dev, size_t count, tg_dtype dt)
{
	return buffer_new(dev, count, dt, "buffer_new");
}

/* A buffer over memory the caller owns (kind: TG_WRAP_HOST or
 * TG_WRAP_NATIVE).  On failure nothing is released: the caller keeps
 * the memory. */
static tg_buffer *buffer_wrap(tg_dev *dev, tg_dtype dt, size_t count,
                              int kind, void *ptr, void (*release)(void *),
                              void *ctx, const char *op)
{
	tg_buffer *b;
	int rc;

	if (dev && !dev->alloc.wrap)
		return tg_error(TG_EUNSUPPORTED, "%s: device %s cannot use "
		                "memory it did not allocate (its plugin has no "
		                "allocator->wrap)", op, dev->name), NULL;
	if (!ptr || !count)
		return tg_error(TG_EINVAL, "%s: %s memory with %zu elements",
		                op, ptr ? "the" : "NULL", count), NULL;
	if (!(b = buffer_new(dev, count, dt, op)))
		return NULL;
	rc = dev->alloc.wrap(dev->impl, kind, ptr, b->nbytes, &b->mem);
	if (rc < 0 || !b->mem) {
		b->mem = NULL;
		tg_buffer_unref(b);
		if (rc >= 0)
			tg_error(TG_EINTERNAL, "%s: the plugin wrapped nothing",
			         op);
		return tg_error_prefix("%s: %zu bytes at %p on %s", op,
		                       count * tg_dtype_size(dt), ptr,
		                       dev->name), NULL;
	}
	b->wrapped = 1;
	b->release = release;
	b->release_ctx = ctx;
	return b;
}

tg_buffer *tg_buffer_from_host(tg_dev *dev, tg_dtype dt, size_t count,
                               void *data, void (*release)(void *ctx),
                               void *ctx)
{
	return buffer_wrap(dev, dt, count, TG_WRAP_HOST, data, release, ctx,
	                   "buffer_from_host");
}

tg_buffer *tg_buffer_from_native(tg_dev *dev, tg_dtype dt, size_t count,
                                 void *handle, void (*release)(void *ctx),
                                 void *ctx)
{
	return buffer_wrap(dev, dt, count, TG_WRAP_NATIVE, handle, release,
	                   ctx, "buffer_from_native");
}

int tg_buffer_native(tg_buffer *buf, void **handle)
{
	if (handle)
		*handle = NULL;
	if (!buf || !handle)
		return tg_error(TG_EINVAL, "buffer_native: NULL %s",
		                buf ? "handle" : "buffer");
	return tg_buffer_handle(buf, handle);
}

int tg_buffer_is_view(const tg_buffer *buf)
{
	return buf && buf->base;
}

tg_buffer *tg_buffer_view(tg_buffer *base, size_t byte_offset,
                          size_t count, tg_dtype dt)
{
	tg_buffer *b;

	if (!base)
		return tg_error(TG_EINVAL, "buffer_view: base is NULL"), NULL;
	if (!base->dev->alloc.view)
		return tg_error(TG_EUNSUPPORTED, "buffer_view: device %s does "
		                "not support sub-buffer views",
		                base->dev->name), NULL;
	if (!(b = buffer_new(base->dev, count, dt, "buffer_view")))
		return NULL;
	if (byte_offset > base->nbytes || b->nbytes > base->nbytes -
	    byte_offset) {
		tg_error(TG_EINVAL, "buffer_view: %zu bytes at offset %zu "
		         "exceed the base buffer's %zu bytes", b->nbytes,
		         byte_offset, base->nbytes);
		tg_buffer_unref(b);
		return NULL;
	}
	/* views of views point at the root, so one view call suffices */
	b->offset = byte_offset + base->offset;
	b->base = tg_buffer_ref(base->base ? base->base : base);
	return b;
}

tg_buffer *tg_buffer_ref(tg_buffer *buf)
{
	if (buf)
		atomic_fetch_add(&buf->refs, 1);
	return buf;
}

void tg_buffer_unref(tg_buffer *buf)
{
	if (!buf || atomic_fetch_sub(&buf->refs, 1) != 1)
		return;
	if (buf->wrapped) {
		if (buf->mem && buf->dev->alloc.unwrap)
			buf->dev->alloc.unwrap(buf->dev->impl, buf->mem);
		if (buf->release)
			buf->release(buf->release_ctx);
	} else if (buf->mem && buf->base) {
		if (buf->dev->alloc.view_free)
			buf->dev->alloc.view_free(buf->dev->impl, buf->mem);
	} else if (buf->mem)
		tg_lru_free(buf->dev, buf->mem, buf->nbytes);
	tg_buffer_unref(buf->base);
	pthread_mutex_destroy(&buf->lock);
	free(buf);
}

int tg_buffer_refcount(const tg_buffer *buf)
{
	return atomic_load(&((tg_buffer *)buf)->refs);
}

/* A peer copy by the plugin of both devices: 1 when it was done, 0
 * when it cannot join them (TG_EUNSUPPORTED, or no entry), else an
 * error. */
static int transfer_peer(tg_buffer *dst, tg_buffer *src)
{
	struct tg_dev *dd = dst->dev, *sd = src->dev;
	void *dm, *sm;
	int rc;

	if (dd == sd || dd->plugin != sd->plugin || !dd->alloc.transfer ||
	    !src->nbytes)
		return 0;
	if ((rc = tg_buffer_handle(src, &sm)) || (rc = tg_buffer_handle(dst, &dm)))
		return rc;
	tg_clear_error();
	rc = dd->alloc.transfer(dd->impl, dm, sd->impl, sm, src->nbytes);
	if (rc == TG_EUNSUPPORTED) {
		tg_debug_log(2, "copy %s -> %s through the host: %s", sd->name,
		             dd->name, tg_last_error());
		tg_clear_error();
		return 0;
	}
	return rc < 0 ? tg_error_prefix("buffer_transfer: %zu bytes %s -> %s",
	                                src->nbytes, sd->name, dd->name) : 1;
}

int tg_buffer_transfer(tg_buffer *dst, tg_buffer *src, int *peer)
{
	size_t n = src->nbytes;
	void *tmp;
	int rc;

	if (peer)
		*peer = 0;
	if (dst->nbytes != n)
		return tg_error(TG_EINVAL, "buffer_transfer: %zu bytes into a "
		                "buffer of %zu", n, dst->nbytes);
	if ((rc = transfer_peer(dst, src)) < 0)
		return rc;
	if (rc == 1) {
		if (peer)
			*peer = 1;
		return 0;
	}
	if (!(tmp = malloc(n ? n : 1)))
		return tg_error_oom("buffer_transfer");
	rc = tg_buffer_copyout(src, tmp, n);
	if (!rc)
		rc = tg_buffer_copyin(dst, tmp, n);
	free(tmp);
	return rc;
}

size_t tg_buffer_nbytes(const tg_buffer *buf)
{
	return buf ? buf->nbytes : 0;
}

size_t tg_buffer_count(const tg_buffer *buf)
{
	return buf ? buf->count : 0;
}

tg_dtype tg_buffer_dtype(const tg_buffer *buf)
{
	return buf ? buf->dtype : TG_NDTYPES;
}

tg_dev *tg_buffer_dev(const tg_buffer *buf)
{
	return buf ? buf->dev : NULL;
}

int tg_buffer_is_allocated(const tg_buffer *buf)
{
	return buf && buf->mem != NULL;
}

/* Allocates `b` (the lock is held): a view asks for a view of its
 * allocated base; a zero-size buffer gets one byte so it has a handle. */
static int allocate_locked(tg_buffer *b)
{
	struct tg_dev *dev = b->dev;
	void *base_mem;
	int rc;

	if (!b->base) {
		rc = tg_lru_alloc(dev, b->nbytes ? b->nbytes : 1, &b->mem);
		return rc ? tg_error_prefix("buffer_allocate: %zu bytes on %s",
		                            b->nbytes, dev->name) : 0;
	}
	if ((rc = tg_buffer_handle(b->base, &base_mem)))
		return rc;
	rc = dev->alloc.view(dev->impl, base_mem, b->offset,
	                                b->nbytes, &b->mem);
	if (rc < 0 || !b->mem)
		return tg_error_prefix("buffer_view: %zu bytes at offset %zu "
		                       "on %s", b->nbytes, b->offset, dev->name);
	return 0;
}

int tg_buffer_handle(tg_buffer *buf, void **out)
{
	int rc = 0;

	pthread_mutex_lock(&buf->lock);
	if (!buf->mem)
		rc = allocate_locked(buf);
	*out = buf->mem;
	pthread_mutex_unlock(&buf->lock);
	return rc;
}

int tg_buffer_allocate(tg_buffer *buf)
{
	void *mem;

	if (!buf)
		return tg_error(TG_EINVAL, "buffer_allocate: buffer is NULL");
	return tg_buffer_handle(buf, &mem);
}

/* Common checks of copyin/copyout. */
static int check_copy(tg_buffer *buf, const void *host, size_t n,
                      const char *op, void **mem)
{
	if (!buf || !host)
		return tg_error(TG_EINVAL, "%s: %s is NULL", op,
		                buf ? "host pointer" : "buffer");
	if (n > buf->nbytes)
		return tg_error(TG_EINVAL, "%s: %zu bytes do not fit a buffer "
		                "of %zu bytes (%zu x %s) on %s", op, n,
		                buf->nbytes, buf->count,
		                tg_dtype_name(buf->dtype), buf->dev->name);
	return tg_buffer_handle(buf, mem);
}

int tg_buffer_copyin(tg_buffer *buf, const void *src, size_t nbytes)
{
	void *mem;
	int rc = check_copy(buf, src, nbytes, "buffer_copyin", &mem);

	if (rc || !nbytes)
		return rc;
	rc = buf->dev->alloc.copy_in(buf->dev->impl, mem, 0, src,
	                                        nbytes);
	return rc < 0 ? tg_error_prefix("buffer_copyin: %zu bytes to %s",
	                                nbytes, buf->dev->name) : 0;
}

int tg_buffer_copyout(tg_buffer *buf, void *dst, size_t nbytes)
{
	void *mem;
	int rc = check_copy(buf, dst, nbytes, "buffer_copyout", &mem);

	if (rc || !nbytes)
		return rc;
	rc = buf->dev->alloc.copy_out(buf->dev->impl, dst, mem, 0,
	                                         nbytes);
	return rc < 0 ? tg_error_prefix("buffer_copyout: %zu bytes from %s",
	                                nbytes, buf->dev->name) : 0;
}

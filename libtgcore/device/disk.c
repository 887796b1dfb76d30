/*
 * disk.c - the DISK device (tinygrad's DiskDevice): a file, memory-
 * mapped, as a device that holds data and runs no kernels.
 *
 * "DISK:path" names it.  A buffer of n bytes is the file's first n
 * bytes (the file grows to n bytes when it is shorter; a file that
 * cannot be written is mapped read-only and never grows); a view is a
 * range of them.  So, as in tinygrad, every buffer of one DISK device
 * is the same file: tg_empty(disk, ...) followed by tg_to reads the
 * file, and tg_to(x, disk) writes it.  lazy_ops.c turns a slice of a
 * contiguous range and a bitcast into buffer views on it; anything
 * that would need a kernel is refused with the reason
 * (schedule_items.c's tg_sched_build_items, before anything runs).
 *
 * It is built from the same tables as a plugin's device, so the rest
 * of the core treats it like any other, but it lives in the core: it
 * needs no driver and is never a default device (DESIGN.md section 3).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/device.h"

#define DISK_PREFIX "DISK:"

/* A buffer (the mapping) or a view into one. */
typedef struct disk_mem {
	unsigned char *p;
	size_t size;
	int writable;
} disk_mem;

typedef struct disk_ctx {
	char *path;
	char *name;            /* "DISK:path" */
	char *description;
	struct tg_device dev;
	struct tg_device_info info;
} disk_ctx;

static disk_ctx *ctx_of(struct tg_device *d)
{
	return d->ctx;
}

static int disk_err(struct tg_device *d, int status, const char *what,
                    int err)
{
	return tg_error(status, "%s: %s: %s", ctx_of(d)->name, what,
	                strerror(err));
}

/* Opens the file for a buffer of size bytes: read-write (created, and
 * grown to size when shorter) or, when it cannot be written, read-only
 * if it already holds size bytes. */
static int open_for(struct tg_device *d, size_t size, int *writable)
{
	const char *path = ctx_of(d)->path, *why;
	struct stat st;
	int fd = tg_open_regular(path, O_RDWR | O_CREAT, 0666, &why);

	*writable = fd >= 0;
	if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
		fd = tg_open_regular(path, O_RDONLY, 0, &why);
	if (fd < 0)
		return tg_error(TG_EIO, "%s: cannot open the file: %s",
		                ctx_of(d)->name, why);
	if (fstat(fd, &st)) {
		close(fd);
		return disk_err(d, TG_EIO, "cannot stat the file", errno);
	}
	if ((uint64_t)st.st_size >= size)
		return fd;
	if (*writable && ftruncate(fd, (off_t)size) == 0)
		return fd;
	close(fd);
	if (*writable)
		return disk_err(d, TG_EIO, "cannot grow the file", errno);
	return tg_error(TG_EIO, "%s: the file has %lld bytes, a buffer needs "
	                "%zu, and it cannot be written", ctx_of(d)->name,
	                (long long)st.st_size, size);
}

static int disk_alloc(struct tg_device *d, size_t size, void **out)
{
	disk_mem *m = calloc(1, sizeof *m);
	int writable = 0, fd;
	void *p;

	if (!m)
		return tg_error_oom("DISK allocate");
	if ((fd = open_for(d, size, &writable)) < 0) {
		free(m);
		return fd;
	}
	p = mmap(NULL, size, PROT_READ | (writable ? PROT_WRITE : 0),
	         MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		free(m);
		return disk_err(d, TG_EIO, "cannot map the file", errno);
	}
	*m = (disk_mem){ p, size, writable };
	*out = m;
	return 0;
}

static void disk_free(struct tg_device *d, void *mem, size_t size)
{
	disk_mem *m = mem;

	(void)d;
	(void)size;
	munmap(m->p, m->size);
	free(m);
}

static int disk_copy_in(struct tg_device *d, void *dst, size_t offset,
                        const void *src, size_t n)
{
	disk_mem *m = dst;

	if (!m->writable)
		return tg_error(TG_EIO, "%s: the file is read-only",
		                ctx_of(d)->name);
	memcpy(m->p + offset, src, n);
	return 0;
}

static int disk_copy_out(struct tg_device *d, void *dst, const void *src,
                         size_t offset, size_t n)
{
	const disk_mem *m = src;

	(void)d;
	memcpy(dst, m->p + offset, n);
	return 0;
}

static int disk_view(struct tg_device *d, void *mem, size_t offset,
                     size_t size, void **out)
{
	const disk_mem *m = mem;
	disk_mem *v = malloc(sizeof *v);

	(void)d;
	if (!v)
		return tg_error_oom("DISK view");
	*v = (disk_mem){ m->p + offset, size, m->writable };
	*out = v;
	return 0;
}

static void disk_view_free(struct tg_device *d, void *view)
{
	(void)d;
	free(view);
}

static const struct tg_allocator_iface disk_allocator = {
	.struct_size = sizeof disk_allocator,
	.alloc = disk_alloc,
	.free = disk_free,
	.copy_in = disk_copy_in,
	.copy_out = disk_copy_out,
	.view = disk_view,
	.view_free = disk_view_free,
};

/* The compiler and runtime entries a device must have.  The scheduler
 * refuses kernels on DISK before they get here; these answer anyone
 * who asks anyway. */
static int no_kernels(struct tg_device *d)
{
	return tg_error(TG_EUNSUPPORTED, "%s runs no kernels",
	                ctx_of(d)->name);
}

static const char *disk_identity(struct tg_device *d)
{
	(void)d;
	return "disk";
}

static int disk_compile(struct tg_device *d, const char *src, void **blob,
                        size_t *blob_len, char **log)
{
	(void)src, (void)blob, (void)blob_len, (void)log;
	return no_kernels(d);
}

static const struct tg_compiler_iface disk_compiler = {
	.struct_size = sizeof disk_compiler,
	.identity = disk_identity,
	.compile = disk_compile,
};

static int disk_load(struct tg_device *d, const char *name, const void *blob,
                     size_t len, void **prog)
{
	(void)name, (void)blob, (void)len, (void)prog;
	return no_kernels(d);
}

static int disk_launch(struct tg_device *d, void *prog,
                       struct tg_launch *args)
{
	(void)prog, (void)args;
	return no_kernels(d);
}

/* Copies are memcpy into the mapping: done when they return. */
static int disk_synchronize(struct tg_device *d)
{
	(void)d;
	return 0;
}

static void disk_program_free(struct tg_device *d, void *prog)
{
	(void)d, (void)prog;
}

static const struct tg_runtime_iface disk_runtime = {
	.struct_size = sizeof disk_runtime,
	.load = disk_load,
	.launch = disk_launch,
	.synchronize = disk_synchronize,
	.program_free = disk_program_free,
};

static const struct tg_renderer_caps disk_caps = {
	.struct_size = sizeof disk_caps,
	.dialect = TG_DIALECT_C,
	.max_upcast = 1,
	.global_max = { 1, 1, 1 },
	.local_max = { 1, 1, 1 },
	.local_max_total = 1,
	.dtype_mask = (uint32_t)((1ull << TG_NDTYPES) - 1),
};

static void disk_close(struct tg_device *d)
{
	disk_ctx *c = ctx_of(d);

	free(c->path);
	free(c->name);
	free(c->description);
	free(c);
}

static const struct tg_plugin disk_desc = {
	.struct_size = sizeof disk_desc,
	.abi_major = TG_PLUGIN_ABI_MAJOR,
	.abi_minor = TG_PLUGIN_ABI_MINOR,
	.name = "DISK",
	.version = PACKAGE_VERSION,
	.vendor = "tgcore",
	.description = "memory-mapped files (built into the core)",
};

/* The DISK devices' record: not in the registry, so no probe, no
 * selection and no config section ever see it. */
static tg_plugin_rec disk_rec = {
	.file = "(built into libtgcore)",
	.state = TG_PLUGIN_LOADED,
	.desc = &disk_desc,
};

static disk_ctx *ctx_new(const char *path)
{
	disk_ctx *c = calloc(1, sizeof *c);
	tg_strbuf sb;

	if (!c)
		return NULL;
	tg_strbuf_init(&sb);
	tg_strbuf_addf(&sb, DISK_PREFIX "%s", path);
	c->name = tg_strbuf_finish(&sb);
	tg_strbuf_addf(&sb, "memory-mapped file %s", path);
	c->description = tg_strbuf_finish(&sb);
	c->path = strdup(path);
	if (!c->path || !c->name || !c->description) {
		free(c->path);
		free(c->name);
		free(c->description);
		free(c);
		return NULL;
	}
	c->info = (struct tg_device_info){
		.struct_size = sizeof c->info, .name = c->name,
		.description = c->description, .type = TG_DEVICE_CPU,
	};
	c->dev = (struct tg_device){
		.struct_size = sizeof c->dev, .ctx = c, .info = &c->info,
		.allocator = &disk_allocator, .compiler = &disk_compiler,
		.renderer = &disk_caps, .runtime = &disk_runtime,
		.close = disk_close,
	};
	return c;
}

const char *tg_disk_path(const char *name)
{
	if (!name || strncasecmp(name, DISK_PREFIX, sizeof DISK_PREFIX - 1))
		return NULL;
	return name + sizeof DISK_PREFIX - 1;
}

int tg_disk_is(const struct tg_dev *dev)
{
	return dev && dev->plugin == &disk_rec;
}

int tg_disk_open(const char *path, struct tg_dev **out)
{
	disk_ctx *c;
	int rc;

	if (!path[0])
		return tg_error(TG_EINVAL, "device 'DISK:': no file named "
		                "(expected DISK:path)");
	if (!(c = ctx_new(path)))
		return tg_error_oom("DISK open");
	if ((*out = tg_devices_find(c->name))) {
		disk_close(&c->dev);
		return 0;
	}
	rc = tg_devices_adopt(&disk_rec, 0, &c->dev, c->name, out);
	if (rc)
		disk_close(&c->dev);
	return rc;
}

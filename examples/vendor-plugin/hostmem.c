/*
 * hostmem.c - HOSTMEM, an example tgcore backend written out of tree.
 *
 * This is what a vendor writes: one file built against the installed SDK
 * (`pkg-config --cflags tgcore-plugin`) and nothing else from tgcore.  It
 * does not link libtgcore; every service (errors, logging, memory for
 * blobs, configuration, a scratch directory) comes through the
 * struct tg_host handed to the entry point.
 *
 * The device is the host itself:
 *  - memory is malloc'd, so copies are memcpy and views are pointers;
 *  - the compiler runs `cc -O1 -shared -fPIC -x c - -o OUT` on the C
 *    kernel the core renders (TG_DIALECT_C in tg/plugin.h) and hands the
 *    resulting shared object back as the blob;
 *  - the runtime writes the blob to a file, dlopens it, unlinks the file
 *    and calls the kernel once over all work-items [0, total).
 * With `[hostmem] renderer = vm` (TG_HOSTMEM_RENDERER=vm) it renders
 * kernels itself instead (TG_DIALECT_CUSTOM, hmvm.c): the core hands it
 * the linearized kernel, it writes its own assembly, assembles that into
 * its own binary and interprets it, as a vendor with its own instruction
 * set would.
 * It is deliberately single-threaded and simple; a real backend would
 * queue work and overlap it with the caller.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tg/plugin.h>

#include "hmvm.h"

extern char **environ; /* for posix_spawnp; POSIX declares no header */

/* tgcore's own tests build this file with HM_FAULT set to show that
 * tg-conformance and the core catch a broken backend: 1 skips the last
 * work-item of every launch (a wrong result), 2 dies of SIGSEGV in
 * launch; with the VM always on, 3 fails every render with a message, 4
 * returns no text, 5 leaves renderer->render NULL, and 6 gives a dialect
 * that is not one.  A vendor's build leaves it 0. */
#ifndef HM_FAULT
#define HM_FAULT 0
#endif

/* Kernel buffers are at least this aligned, for vector loads. */
#define HM_ALIGN 64

/* The calling convention of TG_DIALECT_C. */
typedef void (*hm_kernel_fn)(void *const *bufs, const int64_t *vals,
                             const size_t *global, size_t lo, size_t hi);

/* The opened device; `dev` first so the core's pointer is ours too. */
struct hm_device {
	struct tg_device dev;
	const struct tg_host *host;
	const char *cc;       /* compiler command ([hostmem] cc=, default cc) */
	int vm;               /* [hostmem] renderer = vm: hmvm.c's machine */
	char identity[256];   /* compile cache key part, see hm_identity */
};

/* A loaded kernel: a shared object's function, or a VM program. */
struct hm_program {
	void *handle; /* from dlopen */
	hm_kernel_fn fn;
	void *vm;     /* from hmvm_load */
};

/* A scratch directory holding one compile's files. */
struct hm_scratch {
	char dir[4096];
	char src[4096 + 8], out[4096 + 8], log[4096 + 8];
};

static struct hm_device *hm_of(struct tg_device *dev)
{
	return dev->ctx;
}

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

static int hm_alloc(struct tg_device *dev, size_t size, void **out)
{
	const struct tg_host *host = hm_of(dev)->host;
	size_t rounded = (size + HM_ALIGN - 1) / HM_ALIGN * HM_ALIGN;

	if (rounded < size) /* wrapped around */
		return host->set_error(host, TG_ENOMEM,
			"hostmem alloc: %zu bytes is too large", size);
	*out = aligned_alloc(HM_ALIGN, rounded);
	if (*out == NULL)
		return host->set_error(host, TG_ENOMEM,
			"hostmem alloc: %zu bytes: out of host memory", size);
	return 0;
}

static void hm_free(struct tg_device *dev, void *mem, size_t size)
{
	(void)dev;
	(void)size;
	free(mem);
}

static int hm_copy_in(struct tg_device *dev, void *dst, size_t offset,
                      const void *src, size_t n)
{
	(void)dev;
	memcpy((char *)dst + offset, src, n);
	return 0;
}

static int hm_copy_out(struct tg_device *dev, void *dst, const void *src,
                       size_t offset, size_t n)
{
	(void)dev;
	memcpy(dst, (const char *)src + offset, n);
	return 0;
}

/* A view is an inner pointer; it owns nothing, so view_free is empty. */
static int hm_view(struct tg_device *dev, void *mem, size_t offset,
                   size_t size, void **out)
{
	(void)dev;
	(void)size;
	*out = (char *)mem + offset;
	return 0;
}

static void hm_view_free(struct tg_device *dev, void *view)
{
	(void)dev;
	(void)view;
}

/* ------------------------------------------------------------------ */
/* Compiler                                                            */
/* ------------------------------------------------------------------ */

/* Known limit: the compiler's version is not part of the identity, so
 * after a compiler upgrade the compile cache keeps serving blobs built
 * by the old one (still correct code, only not re-optimized). */
static const char *hm_identity(struct tg_device *dev)
{
	return hm_of(dev)->identity;
}

/* Reads all of `path` into host->alloc'd memory with a NUL after it. */
static int hm_slurp(const struct tg_host *host, const char *path,
                    char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long size;
	int rc = TG_EIO;

	if (f == NULL)
		return host->set_error(host, TG_EIO, "hostmem: open %s: %s",
		                       path, strerror(errno));
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		rc = host->set_error(host, TG_EIO, "hostmem: seek %s", path);
		goto out_close;
	}
	*out = host->alloc(host, (size_t)size + 1);
	if (*out == NULL) {
		rc = host->set_error(host, TG_ENOMEM,
			"hostmem: %ld bytes to read %s", size, path);
		goto out_close;
	}
	*len = fread(*out, 1, (size_t)size, f);
	(*out)[*len] = '\0';
	rc = 0;
out_close:
	fclose(f);
	return rc;
}

static int hm_write_file(const struct tg_host *host, int fd,
                         const char *path, const void *data, size_t n)
{
	const char *p = data;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return host->set_error(host, TG_EIO,
				"hostmem: write %s: %s", path, strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Makes a private directory for one compile under host->cache_dir. */
static int hm_scratch_make(const struct tg_host *host, struct hm_scratch *s)
{
	snprintf(s->dir, sizeof(s->dir), "%s/hostmem-XXXXXX",
	         host->cache_dir);
	if (mkdtemp(s->dir) == NULL)
		return host->set_error(host, TG_EIO,
			"hostmem compile: mkdtemp in %s: %s", host->cache_dir,
			strerror(errno));
	snprintf(s->src, sizeof(s->src), "%s/k.c", s->dir);
	snprintf(s->out, sizeof(s->out), "%s/k.so", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/k.log", s->dir);
	return 0;
}

static void hm_scratch_remove(const struct hm_scratch *s)
{
	unlink(s->src);
	unlink(s->out);
	unlink(s->log);
	rmdir(s->dir);
}

/* Runs the compiler with the source file as stdin and its output in the
 * log file.  Files rather than pipes: a compiler that dies early cannot
 * raise SIGPIPE in the host process, and plugins must not touch signal
 * handlers.  Returns the exit status, or a negative tg_status. */
static int hm_run_cc(struct hm_device *hm, const struct hm_scratch *s)
{
	const struct tg_host *host = hm->host;
	char *argv[] = { (char *)hm->cc, "-O1", "-shared", "-fPIC", "-x", "c",
	                 "-", "-o", (char *)s->out, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int err, status;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, s->src, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, s->log,
	                                 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	err = posix_spawnp(&pid, hm->cc, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err != 0)
		return host->set_error(host, TG_ECOMPILE,
			"hostmem compile: cannot run '%s': %s (set [hostmem] "
			"cc= or TG_HOSTMEM_CC)", hm->cc, strerror(err));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return host->set_error(host, TG_ECOMPILE,
				"hostmem compile: waitpid: %s",
				strerror(errno));
	/* A signal reads like the shell's $?: 128 + its number. */
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status);
}

/* Turns a failed compiler run into TG_ECOMPILE with its output. */
static int hm_compile_failed(struct hm_device *hm, const struct hm_scratch *s,
                             int status, char **log)
{
	const struct tg_host *host = hm->host;
	size_t len, line;

	if (hm_slurp(host, s->log, log, &len) < 0)
		*log = NULL;
	line = *log != NULL ? strcspn(*log, "\n") : 0;
	return host->set_error(host, TG_ECOMPILE,
		"hostmem compile: %s exited with status %d: %.*s", hm->cc,
		status, (int)line, *log != NULL ? *log : "");
}

static int hm_compile_in(struct hm_device *hm, const struct hm_scratch *s,
                         const char *src, void **blob, size_t *blob_len,
                         char **log)
{
	int fd = open(s->src, O_WRONLY | O_CREAT | O_EXCL, 0600);
	int rc;
	char *so;

	if (fd < 0)
		return hm->host->set_error(hm->host, TG_EIO,
			"hostmem compile: create %s: %s", s->src,
			strerror(errno));
	rc = hm_write_file(hm->host, fd, s->src, src, strlen(src));
	close(fd);
	if (rc < 0)
		return rc;
	rc = hm_run_cc(hm, s);
	if (rc < 0)
		return rc;
	if (rc != 0)
		return hm_compile_failed(hm, s, rc, log);
	rc = hm_slurp(hm->host, s->out, &so, blob_len);
	if (rc == 0)
		*blob = so;
	return rc;
}

static int hm_compile(struct tg_device *dev, const char *src, void **blob,
                      size_t *blob_len, char **log)
{
	struct hm_device *hm = hm_of(dev);
	struct hm_scratch s;
	int rc;

	if (hm->vm)
		return hmvm_compile(hm->host, src, blob, blob_len);
	if ((rc = hm_scratch_make(hm->host, &s)) < 0)
		return rc;
	rc = hm_compile_in(hm, &s, src, blob, blob_len, log);
	hm_scratch_remove(&s);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Runtime                                                             */
/* ------------------------------------------------------------------ */

/* dlopen needs a file, so the blob goes to a private temporary one that
 * is unlinked as soon as it is mapped. */
static void *hm_dlopen_blob(const struct tg_host *host, const void *blob,
                            size_t blob_len)
{
	char path[4096];
	void *handle = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/hostmem-XXXXXX", host->cache_dir);
	fd = mkstemp(path);
	if (fd < 0) {
		host->set_error(host, TG_EIO, "hostmem load: mkstemp in %s: %s",
		                host->cache_dir, strerror(errno));
		return NULL;
	}
	if (hm_write_file(host, fd, path, blob, blob_len) == 0) {
		handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (handle == NULL)
			host->set_error(host, TG_ERUNTIME,
				"hostmem load: dlopen: %s", dlerror());
	}
	close(fd);
	unlink(path);
	return handle;
}

static int hm_load(struct tg_device *dev, const char *name, const void *blob,
                   size_t blob_len, void **prog)
{
	const struct tg_host *host = hm_of(dev)->host;
	struct hm_program *p = calloc(1, sizeof(*p));
	void *sym;
	int rc;

	if (p == NULL)
		return host->set_error(host, TG_ENOMEM, "hostmem load: %zu "
		                       "bytes", sizeof(*p));
	if (hm_of(dev)->vm) {
		if ((rc = hmvm_load(host, blob, blob_len, &p->vm)) < 0) {
			free(p);
			return rc;
		}
		*prog = p;
		return 0;
	}
	p->handle = hm_dlopen_blob(host, blob, blob_len);
	if (p->handle == NULL)
		goto out_free;
	sym = dlsym(p->handle, name);
	if (sym == NULL) {
		host->set_error(host, TG_ERUNTIME, "hostmem load: no function "
		                "'%s' in the %zu-byte blob", name, blob_len);
		goto out_close;
	}
	/* POSIX guarantees this round trip; memcpy keeps ISO C quiet. */
	memcpy(&p->fn, &sym, sizeof(p->fn));
	*prog = p;
	return 0;
out_close:
	dlclose(p->handle);
out_free:
	free(p);
	return TG_ERUNTIME;
}

static double hm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}


/* Runs every work-item in one call, on the calling thread, so the work
 * is finished on return and `wait` only adds the timing. */
static int hm_launch(struct tg_device *dev, void *prog,
                     struct tg_launch *args)
{
	struct hm_program *p = prog;
	size_t total = args->global[0] * args->global[1] * args->global[2];
	double start = hm_now();
	int rc;

	if (p->vm) {
		rc = hmvm_run(hm_of(dev)->host, p->vm, args);
		if (args->wait)
			args->elapsed_s = hm_now() - start;
		return rc;
	}
	if (HM_FAULT == 1 && total > 0)
		total--;
	if (HM_FAULT == 2)
		raise(SIGSEGV);
	p->fn(args->bufs, args->vals, args->global, 0, total);
	if (args->wait)
		args->elapsed_s = hm_now() - start;
	return 0;
}

static int hm_synchronize(struct tg_device *dev)
{
	(void)dev;
	return 0; /* launches are synchronous */
}

static void hm_program_free(struct tg_device *dev, void *prog)
{
	struct hm_program *p = prog;

	if (p->vm)
		hmvm_free(hm_of(dev)->host, p->vm);
	else
		dlclose(p->handle);
	free(p);
}

/* ------------------------------------------------------------------ */
/* Tables, probe and open                                              */
/* ------------------------------------------------------------------ */

static const struct tg_device_info hm_info = {
	.struct_size = TG_STRUCT_SIZE(struct tg_device_info, total_memory),
	.name = "HOSTMEM",
	.description = "host memory, kernels built with the system cc",
	.type = TG_DEVICE_CPU,
	.total_memory = 0, /* unknown */
};

static const struct tg_allocator_iface hm_allocator = {
	.struct_size = TG_STRUCT_SIZE(struct tg_allocator_iface, mem_info),
	.alloc = hm_alloc,
	.free = hm_free,
	.copy_in = hm_copy_in,
	.copy_out = hm_copy_out,
	.view = hm_view,
	.view_free = hm_view_free,
	.mem_info = NULL, /* optional: the core treats memory as unknown */
};

static const struct tg_compiler_iface hm_compiler = {
	.struct_size = TG_STRUCT_SIZE(struct tg_compiler_iface, compile),
	.identity = hm_identity,
	.compile = hm_compile,
};

static const struct tg_renderer_caps hm_renderer = {
	.struct_size = TG_STRUCT_SIZE(struct tg_renderer_caps, tensor_cores),
	.dialect = TG_DIALECT_C,
	.has_local = 0,
	.has_shared = 0,
	.max_upcast = 1,
	.global_max = { SIZE_MAX, SIZE_MAX, SIZE_MAX },
	.local_max = { 1, 1, 1 },
	.local_max_total = 1,
	.shared_max = 0,
	/* Portable C has no half-precision types. */
	.dtype_mask = TG_DTYPE_ALL & ~(TG_DTYPE_BIT(TG_FLOAT16) |
	                               TG_DTYPE_BIT(TG_BFLOAT16)),
	.needs_transcendental_fallback = 0,
	.tensor_cores = 0,
};

/* The machine's renderer (TG_DIALECT_CUSTOM, ABI 0.8). */
static int hm_render(struct tg_device *dev, const struct tg_kernel_view *k,
                     char **src)
{
	const struct tg_host *host = hm_of(dev)->host;

	if (HM_FAULT == 3)
		return host->set_error(host, TG_EUNSUPPORTED, "hostmem vm: "
		                       "this build renders nothing "
		                       "(HM_FAULT=3)");
	if (HM_FAULT == 4)
		return 0;  /* and no text */
	return hmvm_render(host, k, src);
}

static const struct tg_renderer_caps hm_renderer_vm = {
	.struct_size = TG_STRUCT_SIZE(struct tg_renderer_caps, render),
	.dialect = HM_FAULT == 6 ? 9 : TG_DIALECT_CUSTOM,
	.max_upcast = 1,  /* scalar registers: no vectors in the kernel */
	.global_max = { SIZE_MAX, SIZE_MAX, SIZE_MAX },
	.local_max = { 1, 1, 1 },
	.local_max_total = 1,
	.dtype_mask = HMVM_DTYPES,
	.render = HM_FAULT == 5 ? NULL : hm_render,
};

static const struct tg_runtime_iface hm_runtime = {
	.struct_size = TG_STRUCT_SIZE(struct tg_runtime_iface, program_free),
	.load = hm_load,
	.launch = hm_launch,
	.synchronize = hm_synchronize,
	.program_free = hm_program_free,
};

/* Cheap and side-effect free: a host is always there.  Whether cc works
 * shows up at the first compile, with the compiler's own message. */
static int hm_probe(const struct tg_host *host, struct tg_probe *out)
{
	(void)host;
	out->ndevices = 1;
	out->type = TG_DEVICE_CPU;
	out->reason[0] = '\0';
	/* each device's type, for auto selection (ABI 0.7; a core older
	 * than that passes a shorter struct, so ask first) */
	if (TG_HAS(out, struct tg_probe, types)) {
		out->ntypes = 1;
		out->types[0] = TG_DEVICE_CPU;
	}
	return 0;
}

static void hm_close(struct tg_device *dev)
{
	free(hm_of(dev));
}

static int hm_open(const struct tg_host *host, int index,
                   struct tg_device **out)
{
	struct hm_device *hm;
	const char *cc = host->config_get(host, "cc");
	const char *renderer = host->config_get(host, "renderer");
	int vm = HM_FAULT >= 3 || (renderer != NULL && !strcmp(renderer, "vm"));

	if (index != 0)
		return host->set_error(host, TG_ENODEV,
			"hostmem open: no device %d (1 device)", index);
	/* a value it cannot use: config_error (0.11) names where it came
	 * from, and stops device selection instead of skipping us */
	if (renderer != NULL && !vm && strcmp(renderer, "c") != 0 &&
	    TG_HAS(host, struct tg_host, config_error))
		return host->config_error(host, "renderer", "want c (the core "
			"renders C for cc) or vm (the plugin renders for its "
			"machine)");
	if (renderer != NULL && !vm && strcmp(renderer, "c") != 0)
		return host->set_error(host, TG_ECONFIG, "hostmem open: "
			"renderer = %s: want c (the core renders C for cc) or "
			"vm (the plugin renders for its machine)", renderer);
	/* a core before 0.8 cannot hand the plugin its kernels */
	if (vm && (host->abi_minor < 8 ||
	           !TG_HAS(host, struct tg_host, kernel_op)))
		return host->set_error(host, TG_EUNSUPPORTED, "hostmem open: "
			"renderer = vm needs tgcore's plugin ABI 0.8 (this "
			"core has 0.%d)", host->abi_minor);
	hm = calloc(1, sizeof(*hm));
	if (hm == NULL)
		return host->set_error(host, TG_ENOMEM, "hostmem open: %zu "
		                       "bytes", sizeof(*hm));
	hm->host = host;
	hm->cc = cc != NULL && cc[0] != '\0' ? cc : "cc";
	hm->vm = vm;
	if (vm)
		snprintf(hm->identity, sizeof(hm->identity),
		         "hostmem 1.0: vm 1");
	else
		snprintf(hm->identity, sizeof(hm->identity),
		         "hostmem 1.0: %s -O1 -shared -fPIC", hm->cc);
	hm->dev = (struct tg_device){
		.struct_size = TG_STRUCT_SIZE(struct tg_device, close),
		.ctx = hm,
		.info = &hm_info,
		.allocator = &hm_allocator,
		.compiler = &hm_compiler,
		.renderer = vm ? &hm_renderer_vm : &hm_renderer,
		.runtime = &hm_runtime,
		.close = hm_close,
	};
	*out = &hm->dev;
	return 0;
}

static const struct tg_plugin hm_plugin = {
	.struct_size = TG_STRUCT_SIZE(struct tg_plugin, unload),
	.abi_major = TG_PLUGIN_ABI_MAJOR,
	.abi_minor = TG_PLUGIN_ABI_MINOR,
	.name = "HOSTMEM",
	.aliases = NULL,
	.version = "1.0.0",
	.vendor = "Example Corp",
	.description = "example out-of-tree backend: host memory, system cc",
	.priority = 0,
	.probe = hm_probe,
	.open = hm_open,
	.query_extension = NULL,
	.unload = NULL,
};

TG_PLUGIN_DEFINE(hm_plugin)

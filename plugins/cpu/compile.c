#include "config.h"
/*
 * compile.c - kernels as shared objects: the system C compiler builds
 * them (run by ../common/tool.c: config keys `cc` and `cflags`, source
 * on stdin, a timeout, secure mode), dlopen loads them from memory.
 *
 * Loading writes the blob to a memfd and dlopens it through /proc, so
 * no file is left behind even when the process dies.
 *
 * A compiler that runs longer than `compile_timeout` seconds (default
 * 300) is killed with its process group and the compile fails: a BEAM
 * candidate that hangs the compiler costs the budget, not the process.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "child.h"
#include "cpu.h"
#include "tool.h"

/* x86: the renderer's vectors are as wide as the CPU's widest register
 * (vector_lanes, cpu.c: 16 floats with AVX-512), but GCC's tuning for
 * several AVX-512 CPUs (-march=rocketlake, icelake-server) prefers
 * 256-bit registers and splits each 16-float op into two halves,
 * spilling the matmul tile: 13 GFLOP/s instead of 200.  The flag only
 * lifts the preference; without AVX-512 it changes nothing. */
#if defined(__x86_64__) || defined(__i386__)
#define VECTOR_CFLAGS " -mprefer-vector-width=512"
#else
#define VECTOR_CFLAGS ""
#endif
#define DEFAULT_CFLAGS "-O2 -march=native" VECTOR_CFLAGS " -shared -fPIC"
/* After the flags and the output: the source from stdin, then libm for
 * the kernels' exp2/log2/sin (caps say they are native), linked after
 * the input so that --as-needed keeps it. */
#define INPUT_ARGS "-x", "c", "-", "-lm"
#define INPUT_TEXT "-x c - -lm"

static const struct tool_spec cc_spec = {
	.who = "cpu",
	.cmd_key = "cc",
	.cmd_default = "cc",
	.flags_key = "cflags",
	.flags_default = DEFAULT_CFLAGS,
	.version_lines = 1,
};

struct cpu_cc {
	const struct tg_host *host; /* borrowed, outlives cc */
	struct tool *tool;  /* owned: the compiler command */
	char *identity;     /* owned */
	atomic_uint_fast64_t serial; /* loads so far: see proc_path */
};

static int no_memory(const struct tg_host *host, const char *op)
{
	return host->set_error(host, TG_ENOMEM, "cpu %s: out of host memory",
	                       op);
}

/* The CPU's model name, "" when /proc/cpuinfo has none.  Written into
 * the identity because -march=native code depends on the exact CPU, and
 * a cache directory may be shared between machines. */
static void cpu_model(char *buf, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[256];
	const char *v;

	buf[0] = '\0';
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "model name", 10) != 0 ||
		    (v = strchr(line, ':')) == NULL)
			continue;
		v += 1 + strspn(v + 1, " \t");
		snprintf(buf, n, "%.*s", (int)strcspn(v, "\n"), v);
		break;
	}
	fclose(f);
}

static int make_identity(struct cpu_cc *cc)
{
	struct utsname u;
	char model[128];

	if (uname(&u) != 0)
		snprintf(u.machine, sizeof(u.machine), "unknown");
	cpu_model(model, sizeof(model));
	cc->identity = tool_printf("%s " INPUT_TEXT " | %s | %s %s",
	                           tool_command(cc->tool),
	                           tool_version(cc->tool), u.machine, model);
	return cc->identity != NULL ? 0 : no_memory(cc->host, "open");
}

int cpu_cc_new(const struct tg_host *host, struct cpu_cc **out)
{
	struct cpu_cc *cc = calloc(1, sizeof(*cc));
	int ret;

	if (cc == NULL)
		return no_memory(host, "open");
	cc->host = host;
	atomic_init(&cc->serial, 0);
	ret = tool_new(host, &cc_spec, &cc->tool);
	if (ret == 0)
		ret = make_identity(cc);
	if (ret != 0) {
		cpu_cc_free(cc);
		return ret;
	}
	*out = cc;
	return 0;
}

void cpu_cc_free(struct cpu_cc *cc)
{
	if (cc == NULL)
		return;
	free(cc->identity);
	tool_free(cc->tool);
	free(cc);
}

const char *cpu_cc_identity(const struct cpu_cc *cc)
{
	return cc->identity;
}

const char *cpu_cc_version(const struct cpu_cc *cc)
{
	return tool_version(cc->tool);
}

int cpu_cc_compile(struct cpu_cc *cc, const char *src, void **blob,
                   size_t *blob_len, char **log)
{
	static const char *const tail[] = {
		"-o", "%o", INPUT_ARGS, NULL
	};

	return tool_compile(cc->tool, tail, "kernel.so", src, blob, blob_len,
	                    log);
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

static void *try_dlopen(const char *path, char *why, size_t n)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	const char *msg;

	if (dl == NULL) {
		msg = dlerror();
		snprintf(why, n, "%s", msg != NULL ? msg : "dlopen failed");
	}
	return dl;
}

/* "/proc/PID/fd/N", spelt differently for every load of this device:
 * dlopen hands back an already loaded object whose name matches, and N
 * is reused once the descriptor is closed, so the second kernel would
 * silently run the first one's code.  The serial is written in binary,
 * "/." for a 1 and "/" for a 0, which the kernel's path lookup skips:
 * load 5 opens "/proc/PID/fd/.//./N".  The name is the one debuggers
 * read from the loader's list, in their own process: PID, not "self"
 * (whose fd N, in gdb, was its terminal, and gdb hung reading it); the
 * descriptor is closed after loading, so they find no file and go on
 * without the kernel's symbols. */
static void proc_path(struct cpu_cc *cc, int fd, char *path, size_t n)
{
	uint_fast64_t serial = atomic_fetch_add(&cc->serial, 1);
	size_t len = (size_t)snprintf(path, n, "/proc/%ld/fd",
	                              (long)getpid());

	for (; serial > 0 && len < n; serial >>= 1)
		len += (size_t)snprintf(path + len, n - len, "%s",
		                        serial & 1 ? "/." : "/");
	if (len < n)
		snprintf(path + len, n - len, "/%d", fd);
}

/* Whether an object of this name is already loaded (after a close and
 * reopen of the device restarted the serial, say). */
static int name_taken(const char *path)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_NOLOAD);

	if (dl != NULL)
		dlclose(dl);
	return dl != NULL;
}

static void *load_memfd(struct cpu_cc *cc, const void *blob, size_t len,
                        char *why, size_t n)
{
	char path[224]; /* 6 + 20 + 3 + 2 * 64 + 12 */
	void *dl = NULL;
	int fd = memfd_create("tg-cpu-kernel", MFD_CLOEXEC), err;

	if (fd < 0) {
		snprintf(why, n, "memfd_create: %s", strerror(errno));
		return NULL;
	}
	proc_path(cc, fd, path, sizeof(path));
	if ((err = tg_write_all(fd, blob, len)) != 0)
		snprintf(why, n, "writing the memfd: %s", strerror(err));
	else if (name_taken(path))
		snprintf(why, n, "%s is taken", path);
	else
		dl = try_dlopen(path, why, n);
	close(fd); /* the mapping keeps the contents */
	return dl;
}

/* The fallback: a file in scratch directory i, unlinked right after
 * dlopen.  Its random name cannot match a loaded object. */
static void *load_file(const struct tg_host *host, int i, const void *blob,
                       size_t len, char *why, size_t n)
{
	char path[PATH_MAX];
	void *dl = NULL;
	int fd, err;

	if (tool_scratch_template(host, "cpu", i, path, sizeof(path)) != 0)
		return NULL;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, n, "cannot create %s: %s", path,
		         strerror(errno));
		return NULL;
	}
	if ((err = tg_write_all(fd, blob, len)) != 0)
		snprintf(why, n, "writing %s: %s", path, strerror(err));
	else
		dl = try_dlopen(path, why, n);
	close(fd);
	unlink(path);
	return dl;
}

/* dlopens the blob: from memory, else from the first scratch directory
 * that works (any of them may be mounted noexec). */
static int open_blob(struct cpu_cc *cc, const void *blob, size_t len,
                     void **dl)
{
	const struct tg_host *host = cc->host;
	char why[PATH_MAX + 512];

	*dl = load_memfd(cc, blob, len, why, sizeof(why));
	if (*dl != NULL)
		return 0;
	host->log(host, TG_LOG_DEBUG, "cpu load: not from memory (%s); "
	          "trying a temporary file", why);
	for (int i = 0; i < TOOL_SCRATCH_DIRS && *dl == NULL; i++)
		*dl = load_file(host, i, blob, len, why, sizeof(why));
	if (*dl != NULL)
		return 0;
	return host->set_error(host, TG_ERUNTIME, "cpu load: cannot load "
		"the kernel's shared object (%zu bytes): %s", len, why);
}

/* Looks `name` up in the kernel's own object: dlsym also searches its
 * dependencies, and a kernel called "sin" must not become libm's. */
static int find_kernel(const struct tg_host *host, struct cpu_program *p,
                       const char *name)
{
	void *sym = dlsym(p->dl, name), *own = NULL, *found = NULL;
	Dl_info info;

	if (sym != NULL && dlinfo(p->dl, RTLD_DI_LINKMAP, &own) == 0 &&
	    dladdr1(sym, &info, &found, RTLD_DL_LINKMAP) != 0 && own == found) {
		p->fn = (cpu_kernel_fn)sym; /* POSIX: dlsym casts this way */
		return 0;
	}
	if (sym == NULL)
		(void)dlerror(); /* clear it: the message below says more */
	return host->set_error(host, TG_ERUNTIME, "cpu load: no function "
		"'%s' in the kernel's shared object", name);
}

int cpu_program_load(struct cpu_cc *cc, const char *name, const void *blob,
                     size_t blob_len, struct cpu_program **out)
{
	struct cpu_program *p = calloc(1, sizeof(*p));
	int ret;

	if (p == NULL)
		return no_memory(cc->host, "load");
	ret = open_blob(cc, blob, blob_len, &p->dl);
	if (ret != 0)
		goto out_free_program;
	ret = find_kernel(cc->host, p, name);
	if (ret != 0)
		goto out_dlclose;
	*out = p;
	return 0;
out_dlclose:
	dlclose(p->dl);
out_free_program:
	free(p);
	return ret;
}

void cpu_program_free(struct cpu_program *prog)
{
	if (prog == NULL)
		return;
	dlclose(prog->dl);
	free(prog);
}

#include "config.h"
/*
 * compile.c - kernels as shared objects: the system C compiler builds
 * them, dlopen loads them from memory.
 *
 * The compiler runs through posix_spawnp, never a shell: config keys `cc`
 * and `cflags` are split on blanks, without quoting.  The source goes to
 * its stdin while its stdout and stderr are read back, both through one
 * poll loop so that neither side can block on a full pipe.  The shared
 * object is written into a private scratch directory, read into a blob
 * and deleted; loading writes the blob to a memfd and dlopens it through
 * /proc, so no file is left behind even when the process dies.
 *
 * A compiler that runs longer than `compile_timeout` seconds (default
 * 300) is killed with its process group (the child leads its own, so
 * cc1 and as go too) and the compile fails: a BEAM candidate that hangs
 * the compiler costs the budget, not the process.
 *
 * Known limit: an application that reaps every child itself (SIGCHLD
 * set to SIG_IGN, or waitpid(-1) in a handler) makes compiles fail with
 * "cannot wait for the compiler".
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"

#define DEFAULT_CC "cc"
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
/* After the flags: the source from stdin, then libm for the kernels'
 * exp2/log2/sin (caps say they are native), linked after the input so
 * that --as-needed keeps it. */
#define INPUT_ARGS "-x", "c", "-", "-lm"
#define INPUT_TEXT "-x c - -lm"
#define BLANKS " \t\r\n"
#define OUTPUT_MAX (1u << 20) /* compiler output kept; the rest dropped */
#define ERROR_LINES 4         /* compiler lines quoted by set_error */
#define ERROR_BYTES 600
#define SCRATCH_DIRS 3

struct cpu_cc {
	const struct tg_host *host; /* borrowed, outlives cc */
	double timeout_s; /* a compile's limit ([cpu] compile_timeout) */
	char *words;    /* owned: "<cc> <cflags>", split in place */
	char **argv;    /* owned: argc pointers into words, NULL-ended */
	size_t argc;
	size_t ncc;     /* argv[0 .. ncc) came from `cc` ("ccache gcc") */
	char *command;  /* owned: argv joined by spaces, for messages */
	char *version;  /* owned: first line of `<cc> --version` */
	char *identity; /* owned */
	atomic_uint_fast64_t serial; /* loads so far: see proc_path */
};

/* What a child process wrote, up to OUTPUT_MAX bytes. */
struct output {
	char *buf; /* owned; NUL-terminated when len > 0 */
	size_t len, cap;
};

/* A running compiler and our ends of its stdin and stdout+stderr. */
struct child {
	pid_t pid;       /* also its process group */
	double deadline; /* monotonic seconds; 0: none */
	int in;  /* a socket, for MSG_NOSIGNAL; -1 once closed */
	int out; /* -1 once closed */
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static char *str_printf(const char *fmt, ...) TG_PRINTF(1, 2);

/* A malloc'd formatted string, or NULL when out of memory. */
static char *str_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static int no_memory(const struct tg_host *host, const char *op)
{
	return host->set_error(host, TG_ENOMEM, "cpu %s: out of host memory",
	                       op);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* 0, or an errno value (EIO for a short write). */
static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t k;

	while (n > 0) {
		k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* 0, or an errno value (EIO when the file is shorter than n). */
static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	ssize_t k;

	while (n > 0) {
		k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Appends up to OUTPUT_MAX bytes in all.  Output is diagnostics only, so
 * a failed grow drops it rather than failing the compile. */
static void output_add(struct output *o, const char *s, size_t n)
{
	size_t cap = o->cap ? o->cap : 4096;
	char *buf;

	if (n > OUTPUT_MAX - o->len)
		n = OUTPUT_MAX - o->len;
	if (n == 0)
		return;
	while (cap < o->len + n + 1)
		cap *= 2;
	if (cap != o->cap) {
		buf = realloc(o->buf, cap);
		if (buf == NULL)
			return;
		o->buf = buf;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* Bytes of the first `lines` lines of s, trailing newline excluded. */
static int head_len(const char *s, int lines)
{
	size_t n;

	for (n = 0; s[n] != '\0'; n++)
		if (s[n] == '\n' && --lines == 0)
			break;
	while (n > 0 && s[n - 1] == '\n')
		n--;
	return n > ERROR_BYTES ? ERROR_BYTES : (int)n;
}

/* ------------------------------------------------------------------ */
/* Running a child process                                             */
/* ------------------------------------------------------------------ */

/* A setuid or setgid program (AT_SECURE) must not run a compiler its
 * caller chose: the core then ignores the environment and the user's
 * config, and a bare command name is looked up on this fixed path only
 * (never the caller's PATH), with this environment alone (no
 * LD_PRELOAD, GCC_EXEC_PREFIX or COMPILER_PATH of the caller's). */
#define SECURE_PATH "/usr/bin:/bin"

static int secure_mode(void)
{
	return getauxval(AT_SECURE) != 0;
}

static int spawn_secure(pid_t *pid, char *const argv[],
                        const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr)
{
	static char *const env[] = { "PATH=" SECURE_PATH, "LC_ALL=C", NULL };
	char path[PATH_MAX];
	size_t n;

	if (strchr(argv[0], '/'))  /* from the system config */
		return posix_spawn(pid, argv[0], fa, attr, argv, env);
	for (const char *d = SECURE_PATH; *d; d += n + (d[n] == ':')) {
		n = strcspn(d, ":");
		snprintf(path, sizeof path, "%.*s/%s", (int)n, d, argv[0]);
		if (access(path, X_OK) == 0)
			return posix_spawn(pid, path, fa, attr, argv, env);
	}
	return ENOENT;
}

/* Starts argv with `in` as stdin and `out` as stdout and stderr, its
 * signals unblocked and at their defaults whatever the application set.
 * 0 or an errno value (ENOENT for a compiler that does not exist). */
static int spawn_with(char *const argv[], int in, int out, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int err;

	sigemptyset(&none);
	sigfillset(&all);
	err = posix_spawn_file_actions_init(&fa);
	if (err != 0)
		return err;
	err = posix_spawnattr_init(&attr);
	if (err != 0)
		goto out_destroy_actions;
	if ((err = posix_spawn_file_actions_adddup2(&fa, in, 0)) != 0 ||
	    (err = posix_spawn_file_actions_adddup2(&fa, out, 1)) != 0 ||
	    (err = posix_spawn_file_actions_adddup2(&fa, out, 2)) != 0 ||
	    (err = posix_spawnattr_setsigmask(&attr, &none)) != 0 ||
	    (err = posix_spawnattr_setsigdefault(&attr, &all)) != 0 ||
	    (err = posix_spawnattr_setpgroup(&attr, 0)) != 0 ||
	    (err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
	                                    POSIX_SPAWN_SETSIGDEF |
	                                    POSIX_SPAWN_SETPGROUP)) != 0)
		goto out_destroy_attr;
	err = secure_mode() ? spawn_secure(pid, argv, &fa, &attr)
	                    : posix_spawnp(pid, argv[0], &fa, &attr, argv,
	                                   environ);
out_destroy_attr:
	posix_spawnattr_destroy(&attr);
out_destroy_actions:
	posix_spawn_file_actions_destroy(&fa);
	return err;
}

/* Starts argv connected to a fresh socket (stdin) and pipe (output).
 * All descriptors are close-on-exec, so compilers started by other
 * threads at the same time do not inherit them. */
static int spawn_child(char *const argv[], struct child *c)
{
	int in[2], out[2], err;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
		return errno;
	if (pipe2(out, O_CLOEXEC) != 0) {
		err = errno;
		close(in[0]);
		close(in[1]);
		return err;
	}
	err = spawn_with(argv, in[0], out[1], &c->pid);
	close(in[0]); /* the child's ends */
	close(out[1]);
	c->in = in[1];
	c->out = out[0];
	if (err != 0) {
		close_fd(&c->in);
		close_fd(&c->out);
	}
	return err;
}

/* Sends what the socket takes.  send, not write: MSG_NOSIGNAL turns a
 * compiler that stopped reading into EPIPE instead of a process-wide
 * SIGPIPE. */
static void feed(struct child *c, const char *src, size_t len, size_t *off)
{
	ssize_t n = send(c->in, src + *off, len - *off,
	                 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n > 0)
		*off += (size_t)n;
	if (*off == len || (n < 0 && errno != EAGAIN && errno != EINTR))
		close_fd(&c->in); /* done, or the compiler is gone */
}

static void drain(struct child *c, struct output *o)
{
	char buf[4096];
	ssize_t n = read(c->out, buf, sizeof(buf));

	if (n > 0)
		output_add(o, buf, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		close_fd(&c->out);
}

double cpu_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cpu_reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return 0;
}

/* Milliseconds left before the child's deadline (-1: none), 0 once it
 * passed. */
static int wait_ms(const struct child *c)
{
	double left;

	if (c->deadline <= 0)
		return -1;
	left = c->deadline - cpu_now_s();
	return left <= 0 ? 0 : left > 1e6 ? 1000000000 : (int)(left * 1e3) + 1;
}

/* Feeds `src` to the child while collecting its output, until both are
 * finished; closes both descriptors.  0, ETIMEDOUT when the deadline
 * passed (the child's group is killed), or an errno value. */
static int pump(struct child *c, const char *src, struct output *o)
{
	size_t off = 0, len = strlen(src);
	struct pollfd p[2];

	if (len == 0)
		close_fd(&c->in);
	while (c->in >= 0 || c->out >= 0) {
		int ms = wait_ms(c), err = 0;
		/* poll skips a negative fd, so a closed side just drops out */
		p[0] = (struct pollfd){ .fd = c->out, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = c->in, .events = POLLOUT };
		if (ms == 0)
			err = ETIMEDOUT;
		else if (poll(p, 2, ms) < 0 && errno != EINTR)
			err = errno;
		if (err) {
			if (err == ETIMEDOUT)
				kill(-c->pid, SIGKILL);
			close_fd(&c->in);
			close_fd(&c->out);
			return err;
		}
		if (c->in >= 0 && p[1].revents != 0)
			feed(c, src, len, &off);
		if (c->out >= 0 && p[0].revents != 0)
			drain(c, o);
	}
	return 0;
}

/* Runs argv with `input` on its stdin, collecting its output into *o.
 * 0 and its wait status, or an errno value when it could not run. */
static int run(char *const argv[], const char *input, double timeout_s,
               struct output *o, int *status)
{
	struct child c;
	int err = spawn_child(argv, &c), werr;

	if (err != 0)
		return err;
	c.deadline = timeout_s > 0 ? cpu_now_s() + timeout_s : 0;
	err = pump(&c, input, o);
	if (err == ETIMEDOUT)  /* a grandchild may outlive the leader */
		kill(-c.pid, SIGKILL);
	werr = cpu_reap(c.pid, status);
	return err != 0 ? err : werr;
}

/* ------------------------------------------------------------------ */
/* The compiler command                                                */
/* ------------------------------------------------------------------ */

static const char *config_or(const struct tg_host *host, const char *key,
                             const char *def)
{
	const char *v = host->config_get(host, key);

	return v != NULL ? v : def;
}

static size_t count_words(const char *s)
{
	size_t n = 0;

	for (s += strspn(s, BLANKS); *s != '\0'; s += strspn(s, BLANKS)) {
		n++;
		s += strcspn(s, BLANKS);
	}
	return n;
}

/* Splits s in place on blanks; NULL-terminated array of its words. */
static char **split(char *s, size_t *argc)
{
	size_t n = count_words(s), i = 0;
	char **argv, *save = NULL, *w;

	argv = calloc(n + 1, sizeof(*argv));
	if (argv == NULL)
		return NULL;
	for (w = strtok_r(s, BLANKS, &save); w != NULL;
	     w = strtok_r(NULL, BLANKS, &save))
		argv[i++] = w;
	*argc = n;
	return argv;
}

static char *join(char *const argv[])
{
	size_t len = 1, off = 0;
	char *s;

	for (size_t i = 0; argv[i] != NULL; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (s == NULL)
		return NULL;
	for (size_t i = 0; argv[i] != NULL; i++)
		off += (size_t)sprintf(s + off, i ? " %s" : "%s", argv[i]);
	s[off] = '\0';
	return s;
}

/* [cpu] compile_timeout: seconds, 0 for none, default 300. */
static int parse_timeout(struct cpu_cc *cc)
{
	const char *s = cc->host->config_get(cc->host, "compile_timeout");
	char *end;
	double v;

	cc->timeout_s = 300;
	if (s == NULL || *s == '\0')
		return 0;
	errno = 0;
	v = strtod(s, &end);
	while (*end == ' ' || *end == '\t')
		end++;
	if (errno != 0 || end == s || *end != '\0' || !(v >= 0) || v > 1e6)
		return cc->host->set_error(cc->host, TG_ECONFIG,
			"cpu open: bad compile_timeout value '%s' ([cpu] "
			"compile_timeout or TG_CPU_COMPILE_TIMEOUT): expected "
			"seconds from 0 (no limit) to 1000000", s);
	cc->timeout_s = v;
	return 0;
}

/* argv from "<cc> <cflags>" (config, or the defaults). */
static int parse_command(struct cpu_cc *cc)
{
	const struct tg_host *host = cc->host;
	const char *cmd = config_or(host, "cc", DEFAULT_CC);
	const char *flags = config_or(host, "cflags", DEFAULT_CFLAGS);

	cc->ncc = count_words(cmd);
	if (cc->ncc == 0)
		return host->set_error(host, TG_ECONFIG,
			"cpu open: cc = '%s' names no compiler ([cpu] cc or "
			"TG_CPU_CC)", cmd);
	cc->words = str_printf("%s %s", cmd, flags);
	if (cc->words != NULL)
		cc->argv = split(cc->words, &cc->argc);
	if (cc->argv != NULL)
		cc->command = join(cc->argv);
	return cc->command != NULL ? 0 : no_memory(host, "open");
}

/* First line of `<cc> --version`, all words of `cc` included so that
 * "ccache gcc" reports gcc's version.  A compiler that does not run is
 * reported by every compile, so here it only makes a note. */
static int query_version(struct cpu_cc *cc)
{
	char **argv = calloc(cc->ncc + 2, sizeof(*argv));
	struct output o = { 0 };
	int status = 0, err;

	if (argv == NULL)
		return no_memory(cc->host, "open");
	memcpy(argv, cc->argv, cc->ncc * sizeof(*argv));
	argv[cc->ncc] = "--version";
	err = run(argv, "", cc->timeout_s, &o, &status);
	free(argv);
	if (err == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    o.len > 0) {
		cc->version = str_printf("%.*s", (int)strcspn(o.buf, "\n"),
		                         o.buf);
	} else {
		cc->host->log(cc->host, TG_LOG_INFO,
			"cpu: '%s --version' did not run: %s", cc->argv[0],
			err != 0 ? strerror(err) : "it failed");
		cc->version = str_printf("%s version unknown", cc->argv[0]);
	}
	free(o.buf);
	return cc->version != NULL ? 0 : no_memory(cc->host, "open");
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
	cc->identity = str_printf("%s " INPUT_TEXT " | %s | %s %s",
	                          cc->command, cc->version, u.machine, model);
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
	ret = parse_timeout(cc);
	if (ret == 0)
		ret = parse_command(cc);
	if (ret == 0)
		ret = query_version(cc);
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
	free(cc->version);
	free(cc->command);
	free(cc->argv);
	free(cc->words);
	free(cc);
}

const char *cpu_cc_identity(const struct cpu_cc *cc)
{
	return cc->identity;
}

const char *cpu_cc_version(const struct cpu_cc *cc)
{
	return cc->version;
}

/* ------------------------------------------------------------------ */
/* Scratch files                                                       */
/* ------------------------------------------------------------------ */

/* "<dir>/tg-cpu-XXXXXX" for scratch directory i: the cache directory,
 * then $TMPDIR (not in setuid programs), then /tmp.  -1 when unusable. */
static int scratch_template(const struct tg_host *host, int i, char *path,
                            size_t n)
{
	const char *dirs[SCRATCH_DIRS] = {
		host->cache_dir, secure_getenv("TMPDIR"), "/tmp"
	};
	int len;

	if (dirs[i] == NULL || dirs[i][0] == '\0')
		return -1;
	len = snprintf(path, n, "%s/tg-cpu-XXXXXX", dirs[i]);
	return len > 0 && (size_t)len < n ? 0 : -1;
}

/* A private directory, so the linker (which deletes and recreates its
 * output) never writes to a guessable name in a shared /tmp.  0 or an
 * errno value. */
static int make_scratch_dir(const struct tg_host *host, char *path,
                            size_t n)
{
	int err = ENOENT;

	for (int i = 0; i < SCRATCH_DIRS; i++) {
		if (scratch_template(host, i, path, n) != 0)
			continue;
		if (mkdtemp(path) != NULL)
			return 0;
		err = errno;
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Compiling                                                           */
/* ------------------------------------------------------------------ */

/* "<cc> <cflags> -o <so> -x c - -lm"; the strings are borrowed. */
static char **compile_argv(const struct cpu_cc *cc, char *so)
{
	char *tail[] = { "-o", so, INPUT_ARGS, NULL };
	size_t ntail = sizeof(tail) / sizeof(tail[0]);
	char **argv = malloc((cc->argc + ntail) * sizeof(*argv));

	if (argv == NULL)
		return NULL;
	memcpy(argv, cc->argv, cc->argc * sizeof(*argv));
	memcpy(argv + cc->argc, tail, sizeof(tail));
	return argv;
}

/* TG_ECOMPILE naming how the compiler ended and its first lines. */
static int compile_failed(const struct cpu_cc *cc, int status,
                          const struct output *o)
{
	const struct tg_host *host = cc->host;
	const char *text = o->len > 0 ? o->buf : "(no output)";
	int n = head_len(text, ERROR_LINES);

	if (WIFEXITED(status))
		return host->set_error(host, TG_ECOMPILE,
			"cpu compile: %s failed (exit %d): %.*s", cc->argv[0],
			WEXITSTATUS(status), n, text);
	return host->set_error(host, TG_ECOMPILE,
		"cpu compile: %s killed by signal %d: %.*s", cc->argv[0],
		WIFSIGNALED(status) ? WTERMSIG(status) : 0, n, text);
}

/* Hands the compiler's output to the core (warnings, or the errors in
 * full); left NULL when there is none or no memory for it. */
static void hand_log(const struct tg_host *host, const struct output *o,
                     char **log)
{
	if (log == NULL || o->len == 0)
		return;
	*log = host->alloc(host, o->len + 1);
	if (*log != NULL)
		memcpy(*log, o->buf, o->len + 1);
}

/* Runs the compiler on src, writing the shared object `so`. */
static int build(struct cpu_cc *cc, const char *src, char *so, char **log)
{
	const struct tg_host *host = cc->host;
	char **argv = compile_argv(cc, so);
	struct output o = { 0 };
	int status = 0, err, ret = 0;

	if (argv == NULL)
		return no_memory(host, "compile");
	if (host->debug >= TG_LOG_DEBUG)
		host->log(host, TG_LOG_DEBUG, "cpu compile: %s -o %s "
		          INPUT_TEXT, cc->command, so);
	err = run(argv, src, cc->timeout_s, &o, &status);
	if (err == ETIMEDOUT)
		ret = host->set_error(host, TG_ECOMPILE,
			"cpu compile: %s did not finish within %g s "
			"([cpu] compile_timeout); killed", cc->argv[0],
			cc->timeout_s);
	else if (err == ENOENT || err == EACCES)
		ret = host->set_error(host, TG_ECOMPILE,
			"cpu compile: cannot run %s: %s%s", cc->argv[0],
			strerror(err), secure_mode() ? " (setuid or setgid: "
			"looked for on " SECURE_PATH " only)" : "");
	else if (err != 0)
		ret = host->set_error(host, TG_ECOMPILE,
			"cpu compile: cannot run or wait for the compiler %s: "
			"%s", cc->argv[0], strerror(err));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		ret = compile_failed(cc, status, &o);
	hand_log(host, &o, log);
	free(o.buf);
	free(argv);
	return ret;
}

/* Reads the whole file into a host->alloc'd blob. */
static int read_blob(const struct tg_host *host, const char *path,
                     void **blob, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	struct stat st;

	if (fd < 0 && errno == ENOENT) /* "compiled", yet no output */
		return host->set_error(host, TG_ECOMPILE, "cpu compile: the "
		                       "compiler succeeded but wrote no %s",
		                       path);
	if (fd < 0)
		return host->set_error(host, TG_EIO, "cpu compile: cannot "
		                       "open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0)
		err = errno;
	else if ((*blob = host->alloc(host, (size_t)st.st_size)) == NULL)
		err = ENOMEM;
	else if ((err = read_all(fd, *blob, (size_t)st.st_size)) != 0) {
		host->free(host, *blob);
		*blob = NULL;
	}
	close(fd);
	if (err == ENOMEM)
		return no_memory(host, "compile");
	if (err != 0)
		return host->set_error(host, TG_EIO, "cpu compile: cannot "
		                       "read %s: %s", path, strerror(err));
	*len = (size_t)st.st_size;
	return 0;
}

int cpu_cc_compile(struct cpu_cc *cc, const char *src, void **blob,
                   size_t *blob_len, char **log)
{
	char dir[PATH_MAX], so[PATH_MAX + 16];
	int ret;

	*blob = NULL;
	*blob_len = 0;
	if (log != NULL)
		*log = NULL;
	ret = make_scratch_dir(cc->host, dir, sizeof(dir));
	if (ret != 0)
		return cc->host->set_error(cc->host, TG_EIO, "cpu compile: "
			"cannot create a scratch directory in the cache "
			"directory, $TMPDIR or /tmp: %s", strerror(ret));
	snprintf(so, sizeof(so), "%s/kernel.so", dir);
	ret = build(cc, src, so, log);
	if (ret == 0)
		ret = read_blob(cc->host, so, blob, blob_len);
	unlink(so); /* absent after most failures */
	rmdir(dir);
	return ret;
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

/* "/proc/self/fd/N", spelt differently for every load of this device:
 * dlopen hands back an already loaded object whose name matches, and N
 * is reused once the descriptor is closed, so the second kernel would
 * silently run the first one's code.  The serial is written in binary,
 * "/." for a 1 and "/" for a 0, which the kernel's path lookup skips:
 * load 5 opens "/proc/self/fd/.//./N". */
static void proc_path(struct cpu_cc *cc, int fd, char *path, size_t n)
{
	uint_fast64_t serial = atomic_fetch_add(&cc->serial, 1);
	size_t len = (size_t)snprintf(path, n, "/proc/self/fd");

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
	char path[192]; /* 13 + 2 * 64 + 12 */
	void *dl = NULL;
	int fd = memfd_create("tg-cpu-kernel", MFD_CLOEXEC), err;

	if (fd < 0) {
		snprintf(why, n, "memfd_create: %s", strerror(errno));
		return NULL;
	}
	proc_path(cc, fd, path, sizeof(path));
	if ((err = write_all(fd, blob, len)) != 0)
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

	if (scratch_template(host, i, path, sizeof(path)) != 0)
		return NULL;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, n, "cannot create %s: %s", path,
		         strerror(errno));
		return NULL;
	}
	if ((err = write_all(fd, blob, len)) != 0)
		snprintf(why, n, "writing %s: %s", path, strerror(err));
	else
		dl = try_dlopen(path, why, n);
	close(fd);
	unlink(path);
	return dl;
}

/* dlopens the blob: from memory, else from the first scratch directory
 * that works (the cache directory may be mounted noexec). */
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
	for (int i = 0; i < SCRATCH_DIRS && *dl == NULL; i++)
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

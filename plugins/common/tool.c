#include "config.h"
/*
 * tool.c - a compiler run as a child process (tool.h says what for).
 *
 * The source goes to the child's stdin while its stdout and stderr are
 * read back, both through one poll loop so that neither side can block
 * on a full pipe.  The child leads its own process group, so a timeout
 * kills what it started too (cc1, as).  Its output file is written into
 * a private scratch directory, read into a blob and deleted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "text.h"
#include "tool.h"

#define BLANKS " \t\r\n"
#define OUTPUT_MAX (1u << 20) /* output kept; the rest dropped */
#define ERROR_LINES 4         /* output lines a failure quotes */
#define ERROR_BYTES 600
#define DEFAULT_TIMEOUT_S 300

struct tool {
	const struct tg_host *host;   /* borrowed */
	const struct tool_spec *spec; /* borrowed */
	double timeout_s; /* a compile's limit ([who] compile_timeout) */
	char *words;    /* owned: "<cmd> <flags>", split in place */
	char **argv;    /* owned: argc pointers into words, NULL-ended */
	size_t argc;
	size_t ncmd;    /* argv[0 .. ncmd) came from cmd_key ("ccache gcc") */
	char *command;  /* owned: argv joined by spaces, for messages */
	char *version;  /* owned */
};

/* What a child process wrote, up to OUTPUT_MAX bytes. */
struct output {
	char *buf; /* owned; NUL-terminated when len > 0 */
	size_t len, cap;
};

/* A running child and our ends of its stdin and stdout+stderr. */
struct child {
	pid_t pid;       /* also its process group */
	double deadline; /* monotonic seconds; 0: none */
	int in;  /* a socket, for MSG_NOSIGNAL; -1 once closed */
	int out; /* -1 once closed */
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

char *tool_printf(const char *fmt, ...)
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

static int no_memory(const struct tool *t, const char *op)
{
	return t->host->set_error(t->host, TG_ENOMEM, "%s %s: out of host "
	                          "memory", t->spec->who, op);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
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

/* ------------------------------------------------------------------ */
/* Running a child process                                             */
/* ------------------------------------------------------------------ */

/* A setuid or setgid program (AT_SECURE) must not run a compiler its
 * caller chose: the core then ignores the environment and the user's
 * config, and a bare command name is looked up on TOOL_SECURE_PATH only
 * (never the caller's PATH), with this environment alone (no LD_PRELOAD,
 * GCC_EXEC_PREFIX or COMPILER_PATH of the caller's). */
static int secure_mode(void)
{
	return getauxval(AT_SECURE) != 0;
}

static int spawn_secure(pid_t *pid, char *const argv[],
                        const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr)
{
	static char *const env[] = {
		"PATH=" TOOL_SECURE_PATH, "LC_ALL=C", NULL
	};
	char path[PATH_MAX];
	size_t n;

	if (strchr(argv[0], '/'))  /* from the system config */
		return posix_spawn(pid, argv[0], fa, attr, argv, env);
	for (const char *d = TOOL_SECURE_PATH; *d; d += n + (d[n] == ':')) {
		n = strcspn(d, ":");
		snprintf(path, sizeof path, "%.*s/%s", (int)n, d, argv[0]);
		if (access(path, X_OK) == 0)
			return posix_spawn(pid, path, fa, attr, argv, env);
	}
	return ENOENT;
}

/* Starts argv with `in` as stdin and `out` as stdout and stderr, its
 * signals unblocked and at their defaults whatever the application set.
 * 0 or an errno value (ENOENT for a command that does not exist). */
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
 * All descriptors are close-on-exec, so children started by other
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
 * child that stopped reading into EPIPE instead of a process-wide
 * SIGPIPE. */
static void feed(struct child *c, const char *src, size_t len, size_t *off)
{
	ssize_t n = send(c->in, src + *off, len - *off,
	                 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n > 0)
		*off += (size_t)n;
	if (*off == len || (n < 0 && errno != EAGAIN && errno != EINTR))
		close_fd(&c->in); /* done, or the child is gone */
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



/* Milliseconds left before the child's deadline (-1: none), 0 once it
 * passed. */
static int wait_ms(const struct child *c)
{
	double left;

	if (c->deadline <= 0)
		return -1;
	left = c->deadline - tg_now_s();
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
	c.deadline = timeout_s > 0 ? tg_now_s() + timeout_s : 0;
	err = pump(&c, input, o);
	if (err == ETIMEDOUT)  /* a grandchild may outlive the leader */
		kill(-c.pid, SIGKILL);
	werr = tg_reap(c.pid, status);
	return err != 0 ? err : werr;
}

/* ------------------------------------------------------------------ */
/* The command                                                         */
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

/* [who] compile_timeout: seconds, 0 for none, default 300. */
static int parse_timeout(struct tool *t)
{
	const char *s = t->host->config_get(t->host, "compile_timeout");
	char *end;
	double v;

	t->timeout_s = DEFAULT_TIMEOUT_S;
	if (s == NULL || *s == '\0')
		return 0;
	errno = 0;
	v = strtod(s, &end);
	while (*end == ' ' || *end == '\t')
		end++;
	if (errno == 0 && end != s && *end == '\0' && v >= 0 && v <= 1e6) {
		t->timeout_s = v;
		return 0;
	}
	return text_bad_config(t->host, t->spec->who, "compile_timeout",
	                       "expected seconds from 0 (no limit) to "
	                       "1000000");
}

/* argv from "<cmd> <flags>" (config, or the defaults). */
static int parse_command(struct tool *t)
{
	const struct tool_spec *spec = t->spec;
	const char *cmd = config_or(t->host, spec->cmd_key, spec->cmd_default);
	const char *flags = config_or(t->host, spec->flags_key,
	                              spec->flags_default);

	t->ncmd = count_words(cmd);
	if (t->ncmd == 0)
		return text_bad_config(t->host, spec->who, spec->cmd_key,
		                       "names no compiler");
	t->words = tool_printf("%s %s", cmd, flags);
	if (t->words != NULL)
		t->argv = split(t->words, &t->argc);
	if (t->argv != NULL)
		t->command = join(t->argv);
	return t->command != NULL ? 0 : no_memory(t, "open");
}

/* The first `lines` non-empty lines of s joined by " | ". */
static char *first_lines(const char *s, int lines)
{
	char *v = malloc(strlen(s) + 1 + 3 * (size_t)lines), *p = v;

	if (v == NULL)
		return NULL;
	while (*s != '\0' && lines > 0) {
		size_t n = strcspn(s, "\n");

		if (n > 0) {
			if (p != v)
				p += sprintf(p, " | ");
			memcpy(p, s, n);
			p += n;
			lines--;
		}
		s += n + (s[n] == '\n');
	}
	*p = '\0';
	return v;
}

/* `<cmd> --version`, all words of the command included so that "ccache
 * gcc" reports gcc's version.  A command that does not run is reported
 * by every compile, so here it only makes a note. */
static int query_version(struct tool *t)
{
	char **argv = calloc(t->ncmd + 2, sizeof(*argv));
	struct output o = { 0 };
	int status = 0, err;

	if (argv == NULL)
		return no_memory(t, "open");
	memcpy(argv, t->argv, t->ncmd * sizeof(*argv));
	argv[t->ncmd] = "--version";
	err = run(argv, "", t->timeout_s, &o, &status);
	free(argv);
	if (err == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    o.len > 0) {
		t->version = first_lines(o.buf, t->spec->version_lines);
	} else {
		t->host->log(t->host, TG_LOG_INFO,
			"%s: '%s --version' did not run: %s", t->spec->who,
			t->argv[0], err != 0 ? strerror(err) : "it failed");
		t->version = tool_printf("%s version unknown", t->argv[0]);
	}
	free(o.buf);
	return t->version != NULL ? 0 : no_memory(t, "open");
}

int tool_new(const struct tg_host *host, const struct tool_spec *spec,
             struct tool **out)
{
	struct tool *t = calloc(1, sizeof(*t));
	int ret;

	if (t == NULL)
		return host->set_error(host, TG_ENOMEM, "%s open: out of host "
		                       "memory", spec->who);
	t->host = host;
	t->spec = spec;
	ret = parse_timeout(t);
	if (ret == 0)
		ret = parse_command(t);
	if (ret == 0)
		ret = query_version(t);
	if (ret != 0) {
		tool_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void tool_free(struct tool *t)
{
	if (t == NULL)
		return;
	free(t->version);
	free(t->command);
	free(t->argv);
	free(t->words);
	free(t);
}

const char *tool_command(const struct tool *t)
{
	return t->command;
}

const char *tool_version(const struct tool *t)
{
	return t->version;
}

/* ------------------------------------------------------------------ */
/* Scratch files                                                       */
/* ------------------------------------------------------------------ */

int tool_scratch_template(const struct tg_host *host, const char *who,
                          int i, char *path, size_t n)
{
	const char *dirs[TOOL_SCRATCH_DIRS] = {
		secure_getenv("TMPDIR"), "/tmp", host->cache_dir
	};
	int len;

	if (i < 0 || i >= TOOL_SCRATCH_DIRS || dirs[i] == NULL ||
	    dirs[i][0] == '\0')
		return -1;
	len = snprintf(path, n, "%s/tg-%s-XXXXXX", dirs[i], who);
	return len > 0 && (size_t)len < n ? 0 : -1;
}

/* A private directory, so the tool (a linker deletes and recreates its
 * output) never writes to a guessable name in a shared /tmp.  0 or an
 * errno value. */
static int make_scratch_dir(const struct tool *t, char *path, size_t n)
{
	int err = ENOENT;

	for (int i = 0; i < TOOL_SCRATCH_DIRS; i++) {
		if (tool_scratch_template(t->host, t->spec->who, i, path, n))
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

/* "<cmd> <flags> <tail>" with "%o" replaced by `out`; the strings are
 * borrowed. */
static char **compile_argv(const struct tool *t, const char *const tail[],
                           char *out)
{
	size_t ntail = 0;
	char **argv;

	while (tail[ntail] != NULL)
		ntail++;
	argv = malloc((t->argc + ntail + 1) * sizeof(*argv));
	if (argv == NULL)
		return NULL;
	memcpy(argv, t->argv, t->argc * sizeof(*argv));
	for (size_t i = 0; i <= ntail; i++)
		argv[t->argc + i] = tail[i] && strcmp(tail[i], "%o") == 0
		                    ? out : (char *)tail[i];
	return argv;
}

/* TG_ECOMPILE naming how the tool ended and its first lines. */
static int compile_failed(const struct tool *t, int status,
                          const struct output *o)
{
	const struct tg_host *host = t->host;
	const char *text = o->len > 0 ? o->buf : "(no output)";
	int n = text_head_len(text, ERROR_LINES, ERROR_BYTES);

	if (WIFEXITED(status))
		return host->set_error(host, TG_ECOMPILE,
			"%s compile: %s failed (exit %d): %.*s", t->spec->who,
			t->argv[0], WEXITSTATUS(status), n, text);
	return host->set_error(host, TG_ECOMPILE,
		"%s compile: %s killed by signal %d: %.*s", t->spec->who,
		t->argv[0], WIFSIGNALED(status) ? WTERMSIG(status) : 0, n,
		text);
}

/* TG_ECOMPILE for a tool that could not run or be waited for. */
static int run_failed(const struct tool *t, int err)
{
	const struct tg_host *host = t->host;
	const char *who = t->spec->who, *name = t->argv[0];

	if (err == ETIMEDOUT)
		return host->set_error(host, TG_ECOMPILE,
			"%s compile: %s did not finish within %g s ([%s] "
			"compile_timeout); killed", who, name, t->timeout_s,
			who);
	if (err == ENOENT || err == EACCES)
		return host->set_error(host, TG_ECOMPILE,
			"%s compile: cannot run %s: %s%s", who, name,
			strerror(err), secure_mode() ? " (setuid or "
			"setgid: looked for on " TOOL_SECURE_PATH " only)" : "");
	return host->set_error(host, TG_ECOMPILE, "%s compile: cannot run or "
		"wait for the compiler %s: %s", who, name, strerror(err));
}

/* Hands the tool's output to the core (warnings, or the errors in
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

/* Runs the tool on src, which writes the file `out`. */
static int build(struct tool *t, const char *const tail[], char *out,
                 const char *src, char **log)
{
	const struct tg_host *host = t->host;
	char **argv = compile_argv(t, tail, out);
	struct output o = { 0 };
	int status = 0, err, ret = 0;

	if (argv == NULL)
		return no_memory(t, "compile");
	if (host->debug >= TG_LOG_DEBUG) {
		char *cmd = join(argv);

		host->log(host, TG_LOG_DEBUG, "%s compile: %s", t->spec->who,
		          cmd != NULL ? cmd : t->command);
		free(cmd);
	}
	err = run(argv, src, t->timeout_s, &o, &status);
	if (err != 0)
		ret = run_failed(t, err);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		ret = compile_failed(t, status, &o);
	hand_log(host, &o, log);
	free(o.buf);
	free(argv);
	return ret;
}

/* Reads the whole file into a host->alloc'd blob. */
static int read_blob(const struct tool *t, const char *path, void **blob,
                     size_t *len)
{
	const struct tg_host *host = t->host;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	struct stat st;

	if (fd < 0 && errno == ENOENT) /* "compiled", yet no output */
		return host->set_error(host, TG_ECOMPILE, "%s compile: %s "
		                       "succeeded but wrote no %s",
		                       t->spec->who, t->argv[0], path);
	if (fd < 0)
		return host->set_error(host, TG_EIO, "%s compile: cannot open "
		                       "%s: %s", t->spec->who, path,
		                       strerror(errno));
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
		return no_memory(t, "compile");
	if (err != 0)
		return host->set_error(host, TG_EIO, "%s compile: cannot read "
		                       "%s: %s", t->spec->who, path,
		                       strerror(err));
	*len = (size_t)st.st_size;
	return 0;
}

int tool_compile(struct tool *t, const char *const tail[],
                 const char *out_name, const char *src, void **blob,
                 size_t *len, char **log)
{
	char dir[PATH_MAX], out[PATH_MAX + 64];
	int ret;

	*blob = NULL;
	*len = 0;
	if (log != NULL)
		*log = NULL;
	ret = make_scratch_dir(t, dir, sizeof(dir));
	if (ret != 0)
		return t->host->set_error(t->host, TG_EIO, "%s compile: cannot "
			"create a scratch directory in $TMPDIR, /tmp or the "
			"cache directory: %s", t->spec->who, strerror(ret));
	snprintf(out, sizeof(out), "%s/%s", dir, out_name);
	ret = build(t, tail, out, src, log);
	if (ret == 0)
		ret = read_blob(t, out, blob, len);
	unlink(out); /* absent after most failures */
	rmdir(dir);
	return ret;
}

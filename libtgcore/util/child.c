/*
 * child.c - a function run in a forked child, watched by the parent.
 *
 * The pipe from child to parent carries lines: "S<stage>" as the child
 * enters a stage and "R<value>" when the function returned.  The "R"
 * line, not the exit status, is the verdict that it returned, so a
 * SIGCHLD set to SIG_IGN by the application (which makes waitpid fail)
 * still leaves a return a return.  Without it, end-of-file means the
 * child died, and waitpid says of what.  Only the child holds the write
 * end (O_CLOEXEC keeps it from programs the child runs).
 */
#include "config.h"

#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The signals a fault raises. */
static const int fault_signals[] = {
	SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS,
};

const char *tg_signal_name(int sig, char *buf, size_t n)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" },
		{ SIGFPE, "SIGFPE" }, { SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
		{ SIGSYS, "SIGSYS" }, { SIGKILL, "SIGKILL" },
		{ SIGTERM, "SIGTERM" }, { SIGXCPU, "SIGXCPU" },
	};

	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (names[i].sig == sig)
			return names[i].name;
	snprintf(buf, n, "signal %d", sig);
	return buf;
}

int tg_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void tg_child_stage(int stage_fd, const char *stage)
{
	char line[96];
	size_t n = strlen(stage);

	if (n > sizeof line - 3)
		n = sizeof line - 3;
	line[0] = 'S';
	memcpy(line + 1, stage, n);
	line[n + 1] = '\n';
	(void)tg_write_all(stage_fd, line, n + 2);
}

static void child(int fd, tg_child_fn fn, void *arg)
{
	struct sigaction dfl;
	struct rlimit none = { 0, 0 };
	sigset_t faults;
	char line[8];
	int v;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&faults);
	for (size_t i = 0; i < sizeof fault_signals / sizeof *fault_signals;
	     i++) {
		sigaction(fault_signals[i], &dfl, NULL);
		sigaddset(&faults, fault_signals[i]);
	}
	sigprocmask(SIG_UNBLOCK, &faults, NULL);
	setrlimit(RLIMIT_CORE, &none);
	v = fn(arg, fd) & 0xff;
	line[0] = 'R';
	line[1] = (char)('0' + v / 100);
	line[2] = (char)('0' + v / 10 % 10);
	line[3] = (char)('0' + v % 10);
	line[4] = '\n';
	(void)tg_write_all(fd, line, 5);
	_exit(0);
}

double tg_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The parent's reading of the pipe. */
struct reader {
	char line[128];
	size_t len;
	int returned, value;
};

/* Takes one complete line; returns 1 once the "R" line came. */
static int take_line(struct reader *rd, struct tg_child_result *res)
{
	rd->line[rd->len] = '\0';
	if (rd->line[0] == 'S')
		snprintf(res->stage, sizeof res->stage, "%s", rd->line + 1);
	else if (rd->line[0] == 'R') {
		rd->returned = 1;
		rd->value = atoi(rd->line + 1);
	}
	rd->len = 0;
	return rd->returned;
}

/* Reads until the "R" line (1), end-of-file (0), the deadline (-2) or
 * an error (-1, errno set). */
static int read_child(int fd, double deadline, struct reader *rd,
                      struct tg_child_result *res)
{
	char buf[256];

	for (;;) {
		double left = deadline - tg_now_s();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (left <= 0)
			return -2;
		r = poll(&p, 1, left > 1e6 ? 1000000000 : (int)(left * 1e3) + 1);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r <= 0)
			continue;
		if ((n = read(fd, buf, sizeof buf)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return 0;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (rd->len < sizeof rd->line - 1)
					rd->line[rd->len++] = buf[i];
			} else if (take_line(rd, res))
				return 1;
		}
	}
}

int tg_reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return 0;
}

static int failed(struct tg_child_result *res, enum tg_child_end end,
                  const char *what, int err)
{
	res->end = end;
	snprintf(res->detail, sizeof res->detail, "%s: %s", what,
	         strerror(err));
	return -1;
}

/* The verdict on a child that closed the pipe without returning. */
static int died(pid_t pid, struct tg_child_result *res)
{
	int st = 0, err = tg_reap(pid, &st);

	if (err)
		return failed(res, TG_CHILD_LOST, "waitpid", err);
	if (WIFSIGNALED(st)) {
		res->end = TG_CHILD_CRASHED;
		res->value = WTERMSIG(st);
	} else {
		res->end = TG_CHILD_EXITED;
		res->value = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	}
	return -1;
}

static int watch(pid_t pid, int fd, double timeout_s,
                 struct tg_child_result *res)
{
	struct reader rd = { .len = 0 };
	int r = read_child(fd, tg_now_s() + timeout_s, &rd, res), err = errno;

	if (r == 1) {
		tg_reap(pid, NULL);
		res->end = TG_CHILD_RETURNED;
		res->value = rd.value;
		return 0;
	}
	if (r == 0)
		return died(pid, res);
	kill(pid, SIGKILL);
	tg_reap(pid, NULL);
	if (r == -2) {
		res->end = TG_CHILD_TIMEOUT;
		return -1;
	}
	return failed(res, TG_CHILD_LOST, "reading from the child", err);
}

int tg_child_run(tg_child_fn fn, void *arg, double timeout_s,
                 struct tg_child_result *res)
{
	int fds[2], rc;
	pid_t pid;

	memset(res, 0, sizeof *res);
	if (pipe2(fds, O_CLOEXEC) != 0)
		return failed(res, TG_CHILD_FAILED, "pipe", errno);
	if ((pid = fork()) < 0) {
		int err = errno;

		close(fds[0]);
		close(fds[1]);
		return failed(res, TG_CHILD_FAILED, "fork", err);
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], fn, arg);
	}
	close(fds[1]);
	rc = watch(pid, fds[0], timeout_s, res);
	close(fds[0]);
	return rc;
}

void tg_child_describe(const struct tg_child_result *res, double timeout_s,
                       char *buf, size_t n)
{
	const char *in = res->stage[0] ? " in " : "";
	char sig[32];

	switch (res->end) {
	case TG_CHILD_RETURNED:
		snprintf(buf, n, "returned %d", res->value);
		break;
	case TG_CHILD_CRASHED:
		snprintf(buf, n, "crashed%s%s (%s)", in, res->stage,
		         tg_signal_name(res->value, sig, sizeof sig));
		break;
	case TG_CHILD_EXITED:
		snprintf(buf, n, "exited with status %d%s%s", res->value, in,
		         res->stage);
		break;
	case TG_CHILD_TIMEOUT:
		snprintf(buf, n, "hung%s%s: killed after %g s", in, res->stage,
		         timeout_s);
		break;
	case TG_CHILD_LOST:
		snprintf(buf, n, "ended%s%s, and nothing says how (%s)", in,
		         res->stage, res->detail);
		break;
	default:
		snprintf(buf, n, "could not be run in a child process (%s)",
		         res->detail);
	}
}

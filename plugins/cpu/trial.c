/*
 * trial.c - trial runs (runtime.trial): one launch run in a child
 * process, so that a kernel that faults or never finishes costs the
 * child, not the application.  A BEAM search gives every candidate one
 * before it runs the candidate on the pool.
 *
 * The child is a fork() of the caller, which may have other threads
 * (the pool's, the application's) that the child does not get: a lock
 * one of them held stays held there.  So the child does only what is
 * safe in that state: it puts the fault signals back to their default
 * action (an application's or a sanitizer's handler would not stop the
 * child the way the parent can read), turns off core files, calls the
 * kernel once over the whole grid on its only thread (no pool, no lock,
 * no allocation), writes one byte and calls _exit.  Its writes go to
 * its own copy of the buffers and are lost.
 *
 * The parent reads the pipe whose only write end the child holds: the
 * byte means the kernel returned; end-of-file without it means the
 * child died, and waitpid says of what.  The byte, not the exit status,
 * is the verdict, so a SIGCHLD set to SIG_IGN by the application (which
 * makes waitpid fail) still leaves a success a success.  Past the
 * timeout the child is killed.  When no child can be made (fork fails
 * for memory, say) the answer is TG_EUNSUPPORTED: no verdict on the
 * kernel.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu.h"
#include "tool.h"

/* The signals a faulting kernel raises. */
static const int fault_signals[] = {
	SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS,
};

#define DONE 'k'

/* "SIGSEGV" for the signals a kernel's death is likely to show, else
 * "signal N".  strsignal is not thread-safe, and its text differs by
 * locale. */
static const char *signal_name(int sig, char *buf, size_t n)
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

/* The child: async-signal-safe calls and the kernel only. */
static void child(int out, const struct cpu_job *job)
{
	struct sigaction dfl;
	struct rlimit none = { 0, 0 };
	sigset_t faults;
	char done = DONE;

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
	if (job->total > 0)
		job->fn(job->bufs, job->vals, job->global, 0, job->total);
	while (write(out, &done, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* Waits until fd has a byte or end-of-file, or the deadline passes:
 * 1 for the byte, 0 for end-of-file, -2 for the deadline, -1 with
 * errno for a failed poll or read. */
static int wait_child(int fd, double deadline)
{
	for (;;) {
		double left = deadline - tool_now_s();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;
		ssize_t n;
		int r;

		if (left <= 0)
			return -2;
		r = poll(&p, 1, left > 1e6 ? 1000000000 : (int)(left * 1e3) + 1);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r <= 0)
			continue;
		n = read(fd, &c, 1);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n >= 0)
			return n == 1 && c == DONE;
	}
}

/* The verdict on a child that did not finish: what killed it. */
static int died(const struct tg_host *host, pid_t pid)
{
	char sig[32];
	int st = 0, err = tool_reap(pid, &st);

	if (!err && WIFSIGNALED(st))
		return host->set_error(host, TG_ERUNTIME, "cpu trial: "
			"the kernel crashed (%s)", signal_name(WTERMSIG(st), sig,
			sizeof sig));
	if (!err && WIFEXITED(st))
		return host->set_error(host, TG_ERUNTIME, "cpu trial: "
			"the child exited with status %d before the kernel "
			"returned", WEXITSTATUS(st));
	return host->set_error(host, TG_ERUNTIME, "cpu trial: the "
		"child process ended before the kernel returned, and "
		"waitpid cannot say why (%s)",
		err ? strerror(err) : "unknown status");
}

/* The parent's side, after the fork. */
static int watch(const struct tg_host *host, pid_t pid,
                 int in, double timeout_s)
{
	int r = wait_child(in, tool_now_s() + timeout_s), err = errno;

	if (r == 1) {
		tool_reap(pid, NULL);
		return 0;
	}
	if (r == 0)
		return died(host, pid);
	kill(pid, SIGKILL);
	tool_reap(pid, NULL);
	if (r == -2)
		return host->set_error(host, TG_ETIMEOUT, "cpu trial: "
			"the kernel ran past its limit of %g s and was "
			"stopped", timeout_s);
	return host->set_error(host, TG_ERUNTIME, "cpu trial: "
		"waiting for the child process: %s", strerror(err));
}

int cpu_trial(const struct tg_host *host, const struct cpu_job *job,
              double timeout_s)
{
	int fds[2], rc;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return host->set_error(host, TG_EUNSUPPORTED, "cpu trial: "
			"pipe: %s", strerror(errno));
	if ((pid = fork()) < 0) {
		int err = errno;
		close(fds[0]);
		close(fds[1]);
		return host->set_error(host, TG_EUNSUPPORTED, "cpu trial: "
			"fork: %s", strerror(err));
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], job);
	}
	close(fds[1]);
	rc = watch(host, pid, fds[0], timeout_s);
	close(fds[0]);
	return rc;
}

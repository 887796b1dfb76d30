/*
 * child.h - running a function in a forked child process, to learn
 * whether it returns, crashes, exits or hangs without risking the
 * caller.  Self-contained (POSIX only, no core headers).
 */
#ifndef TG_UTIL_CHILD_H
#define TG_UTIL_CHILD_H

#include <stddef.h>
#include <sys/types.h>

/* How the child ended. */
enum tg_child_end {
	TG_CHILD_RETURNED, /* the function returned; value: its result */
	TG_CHILD_CRASHED,  /* killed by a signal; value: the signal */
	TG_CHILD_EXITED,   /* called exit() inside; value: the status */
	TG_CHILD_TIMEOUT,  /* ran past the limit and was killed */
	TG_CHILD_FAILED,   /* no child could be made (detail) */
	TG_CHILD_LOST,     /* it ended, and nothing says how (detail) */
};

struct tg_child_result {
	enum tg_child_end end;
	int value;
	char stage[96];   /* the last stage the child entered, or "" */
	char detail[128]; /* FAILED, LOST: why there is no verdict */
};

/* Runs in the child.  Writes each stage it enters with
 * tg_child_stage(stage_fd, ...), so that a crash is placed; returns a
 * value 0..255 for the parent. */
typedef int (*tg_child_fn)(void *arg, int stage_fd);

/* Says that the child enters `stage` (one line, "probe").  Only a
 * write(2): safe in a child forked from a threaded process. */
void tg_child_stage(int stage_fd, const char *stage);

/* Forks; the child puts the fault signals back to their default action
 * (a sanitizer's or an application's handler would not let it die the
 * way the parent can read), turns off core files, runs fn and _exits.
 * The parent waits at most timeout_s seconds (> 0) and fills *res.
 * Returns 0 when fn returned, else -1. */
int tg_child_run(tg_child_fn fn, void *arg, double timeout_s,
                 struct tg_child_result *res);

/* "crashed in probe (SIGSEGV)", "hung in probe: killed after 30 s",
 * "exited with status 3 in open CPU:1", "returned 0". */
void tg_child_describe(const struct tg_child_result *res, double timeout_s,
                       char *buf, size_t n);

/* "SIGSEGV" for the signals a crash is likely to show, else
 * "signal N" (in buf).  Not strsignal: that is not thread-safe, and its
 * text follows the locale. */
const char *tg_signal_name(int sig, char *buf, size_t n);

/* The small pieces every user of a child process needs (the CPU and
 * Vulkan plugins' compilers through plugins/common/tool.c too). */
/* Monotonic seconds. */
double tg_now_s(void);
/* Waits for child pid to end (waitpid, again after EINTR), its wait
 * status into *status (may be NULL).  0, or the errno of the failure. */
int tg_reap(pid_t pid, int *status);
/* Writes all n bytes (again after EINTR and short writes).  0, or an
 * errno value (EIO when the descriptor takes nothing). */
int tg_write_all(int fd, const void *buf, size_t n);

#endif

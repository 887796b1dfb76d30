/*
 * trial.c - trial runs (runtime.trial): one launch run in a child
 * process, so that a kernel that faults or never finishes costs the
 * child, not the application.  A BEAM search gives every candidate one
 * before it runs the candidate on the pool.
 *
 * The child (libtgcore/util/child.c, also the core's plugin trials) is
 * a fork() of the caller, which may have other threads (the pool's, the
 * application's) that the child does not get: a lock one of them held
 * stays held there.  So the child does only what is safe in that
 * state: it calls the kernel once over the whole grid on its only
 * thread (no pool, no lock, no allocation).  Its writes go to its own
 * copy of the buffers and are lost.  When no child can be made (fork
 * fails for memory, say) the answer is TG_EUNSUPPORTED: no verdict on
 * the kernel.
 */
#include "config.h"

#include "child.h"
#include "cpu.h"

static int run_kernel(void *arg, int stage_fd)
{
	const struct cpu_job *job = arg;

	(void)stage_fd;
	if (job->total > 0)
		job->fn(job->bufs, job->vals, job->global, 0, job->total);
	return 0;
}

int cpu_trial(const struct tg_host *host, const struct cpu_job *job,
              double timeout_s)
{
	struct tg_child_result res;
	char sig[32];

	if (tg_child_run(run_kernel, (void *)job, timeout_s, &res) == 0)
		return 0;
	switch (res.end) {
	case TG_CHILD_CRASHED:
		return host->set_error(host, TG_ERUNTIME, "cpu trial: "
			"the kernel crashed (%s)", tg_signal_name(res.value,
			sig, sizeof sig));
	case TG_CHILD_EXITED:
		return host->set_error(host, TG_ERUNTIME, "cpu trial: "
			"the child exited with status %d before the kernel "
			"returned", res.value);
	case TG_CHILD_TIMEOUT:
		return host->set_error(host, TG_ETIMEOUT, "cpu trial: "
			"the kernel ran past its limit of %g s and was "
			"stopped", timeout_s);
	case TG_CHILD_FAILED:
		return host->set_error(host, TG_EUNSUPPORTED, "cpu trial: "
			"%s", res.detail);
	default:
		return host->set_error(host, TG_ERUNTIME, "cpu trial: the "
			"child process ended before the kernel returned, and "
			"waitpid cannot say why (%s)", res.detail);
	}
}

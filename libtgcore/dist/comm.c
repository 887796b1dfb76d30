/*
 * comm.c - the MPI job: initialization, errors and waiting.
 *
 * Every collective is nonblocking (MPI_I...) and waited for here by
 * polling with a deadline, so that a rank that died or hangs makes the
 * others fail with a message instead of waiting forever: MPI's own
 * blocking calls have no timeout.  Errors come back (MPI_ERRORS_RETURN
 * on the communicator) instead of aborting the job.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dist.h"

#define DEFAULT_TIMEOUT 300.0

dist_job dist_the_job = { .size = 1 };

double dist_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int dist_mpi_error(const char *op, const char *call, int code)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof msg, "MPI error %d", code);
	return tg_set_error(TG_ECOMM, "%s: %s failed on rank %d of %d: %s",
	                    op, call, dist_the_job.rank, dist_the_job.size,
	                    msg);
}

/* [dist] timeout (TG_DIST_TIMEOUT) in seconds; a bad value is an
 * error rather than a silent default, since it decides when to give
 * up on the other ranks. */
static int timeout_seconds(const char *op, double *out)
{
	const char *s = tg_config_get("dist.timeout");
	char *end;

	*out = DEFAULT_TIMEOUT;
	if (!s || !*s)
		return 0;
	*out = strtod(s, &end);
	if (end != s && !*end && *out > 0 && isfinite(*out))
		return 0;
	tg_config_error("dist.timeout", "expected seconds, more than 0");
	return tg_set_error(TG_ECONFIG, "%s: %s", op, tg_last_error());
}

int dist_usable(const char *op)
{
	if (!dist_the_job.ready)
		return tg_set_error(TG_EINVAL, "%s: call tg_dist_init first",
		                    op);
	if (dist_the_job.failed[0])
		return tg_set_error(TG_ECOMM, "%s: the job broke earlier (%s)",
		                    op, dist_the_job.failed);
	return timeout_seconds(op, &dist_the_job.timeout);
}

/* Marks the job broken with the current error message. */
static int broken(int rc)
{
	snprintf(dist_the_job.failed, sizeof dist_the_job.failed, "%s",
	         tg_last_error());
	return rc;
}

int dist_wait(const char *op, MPI_Request *reqs, int n)
{
	struct timespec nap = { 0, 20000 };
	double limit = dist_the_job.timeout, start = dist_now();
	long spins = 0;
	int done = 0, rc;

	for (;;) {
		if ((rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE)))
			return broken(dist_mpi_error(op, "MPI_Testall", rc));
		if (done)
			return 0;
		if (dist_now() - start > limit)
			return broken(tg_set_error(TG_ETIMEOUT, "%s: not every "
			        "rank took part within %g s (rank %d of %d "
			        "waited): another rank died, hangs, or is in "
			        "a different call ([dist] timeout or "
			        "TG_DIST_TIMEOUT sets the limit)", op, limit,
			        dist_the_job.rank, dist_the_job.size));
		/* spin first (a collective on one machine takes
		 * microseconds), then poll gently */
		if (++spins > 2000)
			nanosleep(&nap, NULL);
	}
}

/* The rank among this machine's processes (shared memory domain). */
static int find_local_rank(int *out)
{
	MPI_Comm node;
	int rc;

	if ((rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED,
	                              dist_the_job.rank, MPI_INFO_NULL,
	                              &node)))
		return dist_mpi_error("dist init", "MPI_Comm_split_type", rc);
	rc = MPI_Comm_rank(node, out);
	MPI_Comm_free(&node);
	return rc ? dist_mpi_error("dist init", "MPI_Comm_rank", rc) : 0;
}

int tg_dist_init(int *argc, char ***argv)
{
	int inited = 0, provided, rc;

	if (dist_the_job.ready)
		return 0;
	if (dist_the_job.failed[0])
		return tg_set_error(TG_ECOMM, "dist init: the job broke earlier "
		                    "(%s)", dist_the_job.failed);
	MPI_Finalized(&inited);
	if (inited)
		return tg_set_error(TG_ECOMM, "dist init: MPI was finalized in "
		                    "this process, and MPI cannot start again");
	MPI_Initialized(&inited);
	if (!inited) {
		if ((rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED,
		                          &provided)))
			return dist_mpi_error("dist init", "MPI_Init_thread",
			                      rc);
		dist_the_job.owns_mpi = 1;
	}
	if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)))
		return dist_mpi_error("dist init", "MPI_Comm_set_errhandler", rc);
	if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, &dist_the_job.rank)) ||
	    (rc = MPI_Comm_size(MPI_COMM_WORLD, &dist_the_job.size)))
		return dist_mpi_error("dist init", "MPI_Comm_rank", rc);
	if ((rc = find_local_rank(&dist_the_job.local_rank)))
		return rc;
	dist_the_job.comm_seconds = 0;
	dist_the_job.comm_bytes = 0;
	dist_the_job.ready = 1;
	return 0;
}

int tg_dist_finalize(void)
{
	int rc;

	if (!dist_the_job.ready)
		return 0;
	dist_the_job.ready = 0;
	if (dist_the_job.failed[0])
		return tg_set_error(TG_ECOMM, "dist finalize: MPI_Finalize "
		                    "skipped, since it would wait for the ranks "
		                    "an earlier collective lost (%s); exit with "
		                    "a failure status and mpirun stops the "
		                    "others", dist_the_job.failed);
	if (!dist_the_job.owns_mpi)
		return 0;
	dist_the_job.owns_mpi = 0;
	if ((rc = MPI_Finalize()))
		return dist_mpi_error("dist finalize", "MPI_Finalize", rc);
	return 0;
}

int tg_dist_rank(void)
{
	return dist_the_job.ready ? dist_the_job.rank : 0;
}

int tg_dist_size(void)
{
	return dist_the_job.ready ? dist_the_job.size : 1;
}

int tg_dist_local_rank(void)
{
	return dist_the_job.ready ? dist_the_job.local_rank : 0;
}

int tg_dist_barrier(void)
{
	MPI_Request req;
	double t0 = dist_now();
	int rc;

	if ((rc = dist_usable("dist barrier")))
		return rc;
	if ((rc = MPI_Ibarrier(MPI_COMM_WORLD, &req)))
		return dist_mpi_error("dist barrier", "MPI_Ibarrier", rc);
	rc = dist_wait("dist barrier", &req, 1);
	dist_the_job.comm_seconds += dist_now() - t0;
	return rc;
}

double tg_dist_comm_seconds(void)
{
	return dist_the_job.comm_seconds;
}

uint64_t tg_dist_comm_bytes(void)
{
	return dist_the_job.comm_bytes;
}

/*
 * dist.h - libtgcore-dist's internals: the MPI job (comm.c) and the
 * collectives over tensors (collective.c).  The library uses tgcore
 * through its public API only, as any program would.
 */
#ifndef TG_DIST_INTERNAL_H
#define TG_DIST_INTERNAL_H

#include <mpi.h>

#include <tg/dist.h>

/* The job: MPI_COMM_WORLD's rank and size, set by tg_dist_init. */
typedef struct dist_job {
	int ready;        /* tg_dist_init succeeded */
	int owns_mpi;     /* tg_dist_init called MPI_Init */
	int rank, size, local_rank;
	char failed[512]; /* why the job broke ("" while it is whole) */
	double timeout;   /* seconds: [dist] timeout, read by dist_usable */
	double comm_seconds;
	uint64_t comm_bytes;
} dist_job;

extern dist_job dist_the_job;

/* TG_EINVAL naming `op` unless tg_dist_init has run; TG_ECOMM when an
 * earlier collective broke the job; TG_ECONFIG for a bad timeout
 * setting (read here, before anything starts); else 0. */
int dist_usable(const char *op);
/* TG_ECOMM with MPI's message for error code `code` from `call`. */
int dist_mpi_error(const char *op, const char *call, int code);
/* Waits for the n requests, up to the timeout; on a timeout or an
 * error the job is broken (the requests stay pending: MPI may still
 * write their buffers, which therefore must not be freed). */
int dist_wait(const char *op, MPI_Request *reqs, int n);
/* Seconds on a monotonic clock. */
double dist_now(void);

#endif

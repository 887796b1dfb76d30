/*
 * tg/dist.h - data-parallel work across processes and machines, on MPI.
 *
 * libtgcore-dist (pkg-config: tgcore-dist), built when tgcore is
 * configured with MPI (--with-mpi; Open MPI's libopenmpi-dev on
 * Debian).  A job is started by mpirun, one process (a "rank") per
 * device or per share of the machine:
 *
 *     mpirun -np 2 ./train            # or --hostfile hosts -np 16
 *
 *     tg_dist_init(&argc, &argv);     // rank and size from mpirun
 *     ... build the model; rank 0's initial weights to every rank:
 *     tg_dist_broadcast(params, n, 0);
 *     for (each step) {
 *         ... each rank runs its share of the global batch, backward;
 *         tg_dist_all_reduce(grads, n, TG_DIST_MEAN);
 *         ... the optimizer's update, the same on every rank
 *     }
 *     tg_dist_finalize();
 *
 * The collectives work in place on realized tensors of any device:
 * each tensor is realized, its memory copied to a host staging area
 * packed in buckets (tensors of one dtype, up to [dist] bucket_mb, 25
 * by default), one nonblocking MPI collective per bucket is started as
 * soon as that bucket is packed, and the results are copied back (a
 * tensor that is not memory of its own, such as a constant or a view,
 * takes them as tg_assign would: a view writes through).
 * Every rank must pass the same number of tensors with the same shapes
 * and dtypes, in the same order; that is checked on every call (one
 * small extra collective) and a mismatch fails on every rank with a
 * message.
 *
 * Errors: MPI's errors come back as TG_ECOMM with MPI's message.  No
 * call waits forever: a collective that not every rank joins within
 * [dist] timeout seconds (TG_DIST_TIMEOUT; 300 by default) fails with
 * TG_ETIMEOUT, naming the operation.  After such a failure every later
 * collective fails at once, and tg_dist_finalize skips MPI_Finalize
 * (which would wait for the missing ranks): exit the process with a
 * non-zero status, and mpirun stops the others.  A rank that dies is
 * noticed by mpirun, which stops the job and says which rank.
 *
 * Calls come from one thread (MPI is initialized with
 * MPI_THREAD_FUNNELED); tgcore's own threads never call MPI.
 */
#ifndef TG_DIST_H
#define TG_DIST_H

#include <stdint.h>

#include <tg/tg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tg_dist_op {
	TG_DIST_SUM,
	TG_DIST_MEAN,  /* the sum divided by the size; float dtypes only */
	TG_DIST_MIN,
	TG_DIST_MAX
} tg_dist_op;

/* Initializes MPI (MPI_Init_thread) from mpirun's environment; run
 * without mpirun, the process is a job of one.  argc and argv may be
 * NULL.  When the program initialized MPI itself, tgcore uses it and
 * leaves finalizing to the program.  A second call does nothing. */
TG_API int tg_dist_init(int *argc, char ***argv);
/* Finalizes MPI when tg_dist_init initialized it.  After a failed
 * collective it does not (see above) and returns TG_ECOMM. */
TG_API int tg_dist_finalize(void);
/* This process's rank in the job, 0 to size - 1 (0 before init). */
TG_API int tg_dist_rank(void);
/* The number of processes in the job (1 before init). */
TG_API int tg_dist_size(void);
/* This process's rank among the job's processes on its machine: which
 * local device to use, e.g. CUDA:N for local rank N. */
TG_API int tg_dist_local_rank(void);

/* Every tensor takes, in place, op over every rank's values of it. */
TG_API int tg_dist_all_reduce(tg_tensor *const *ts, size_t n,
                              tg_dist_op op);
/* Every tensor takes, in place, rank root's values of it. */
TG_API int tg_dist_broadcast(tg_tensor *const *ts, size_t n, int root);
/* Returns when every rank has called it. */
TG_API int tg_dist_barrier(void);

/* Wall-clock seconds this process spent in the collectives above
 * (copies to and from the devices included), and the bytes it passed
 * to MPI, since tg_dist_init. */
TG_API double tg_dist_comm_seconds(void);
TG_API uint64_t tg_dist_comm_bytes(void);

#ifdef __cplusplus
}
#endif

#endif

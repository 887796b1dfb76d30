/*
 * dp.h - data-parallel training over an MPI job (tg/dist.h), for
 * fashion_mnist --dist.  In a build without MPI every call fails with
 * a message saying so.
 */
#ifndef FASHION_DP_H
#define FASHION_DP_H

#include "model.h"

typedef struct dp dp;

/* Joins the job (tg_dist_init); *rank and *size.  0 or -1 with
 * tg_last_error set. */
int dp_init(int *argc, char ***argv, int *rank, int *size);
/* Sends rank 0's state (parameters and statistics, `st`, n tensors) to
 * every rank and prepares the two halves of a step for t's optimizer:
 * gradients, their mean over the ranks, the update. */
dp *dp_new(trainer *t, tg_tensor *const *st, size_t n);
/* One step on this rank's images and labels; *loss is the mean loss
 * over every rank's share. */
int dp_step(dp *d, tg_tensor *x, tg_tensor *y, double *loss);
/* The batch-norm statistics averaged over the ranks (before an
 * evaluation or a checkpoint: each rank ran different batches). */
int dp_sync_stats(dp *d);
/* Rank 0 prints the job's images/s and each rank's share of
 * train_time spent communicating (every rank must call it). */
int dp_report(dp *d, double train_time, size_t images);
void dp_free(dp *d);
/* Leaves the job (tg_dist_finalize). */
int dp_finish(void);

#endif

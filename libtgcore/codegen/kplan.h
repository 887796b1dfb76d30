/*
 * codegen/kplan.h - what the files of a kernel's plan and its opts
 * share, and nothing else in codegen reads: plan.c (the plan), opt.c
 * (applying an opt, the search's moves), heuristic.c (tinygrad's
 * hand-coded opts), cpu_tile.c (a CPU's register tiles and lanes) and
 * cpu_block.c (a CPU's launch blocks and reduce passes).  The plan's
 * interface to the rest of codegen is in codegen.h; these names are
 * prefixed tg_kp_ so that a reader sees they stay among those files.
 * Internal; never installed.
 */
#ifndef TG_KPLAN_H
#define TG_KPLAN_H

#include "codegen/codegen.h"

#define TG_KP_PASS_MIN 16  /* iterations a pass takes at least: fewer
                              would cost more in partial stores than
                              they save */

/* ---------------------------------------------------- codegen/plan.c */

/* k's first REDUCE_AXIS when it is a SUM of the product of two loads
 * (the matmul shape TC and the matvec heuristic look for); else NULL.
 * Borrowed from k. */
const tg_uop *tg_kp_sum_of_product(const tg_kernel *k, int cast,
                                   const tg_uop **a, const tg_uop **b,
                                   int *only);

/* ----------------------------------------------------- codegen/opt.c */

/* The copies of the body the plan's upcasts make: of reduce axes
 * (reduce 1), global axes (0) or all (-1). */
int64_t tg_kp_copies(const tg_kplan *p, int reduce);

/* ----------------------------------------------- codegen/heuristic.c */

/* The stride of st's last view on axis ax, or -1 when symbolic. */
int64_t tg_kp_stride(const tg_st *st, size_t ax);
/* Heuristic 2., the unroll of the innermost reduce loop. */
int tg_kp_opt_unroll(tg_kplan *p);
/* tinygrad's hand-coded opts after the tensor core and the matvec. */
int tg_kp_opt_generic(tg_kplan *p, const tg_kernel *k);

/* ------------------------------------------------ codegen/cpu_tile.c */

/* The strides of st on every axis as the kernel reads memory, -1
 * where one is not a number; into out[tg_st_ndim(st)]. */
void tg_kp_real_strides(const tg_kernel *k, const tg_st *st, int64_t *out);
/* UPCAST(ax, amt) when amt > 1. */
int tg_kp_upcast(tg_kplan *p, uint32_t ax, int64_t amt);
/* The CPU's heuristics: 1 when done, 0 when the device has no vectors,
 * or an error. */
int tg_kp_opt_cpu(tg_kplan *p, const tg_kernel *k);

/* ----------------------------------------------- codegen/cpu_block.c */

/* k's one STORE where its reduce can run in passes, else NULL.
 * Borrowed from k. */
const tg_uop *tg_kp_pass_store(const tg_kernel *k);
/* Whether the plan can cut its outer reduce loop into passes. */
int tg_kp_passes_allowed(const tg_kplan *p);
/* The heuristic's pass length, 0 for one pass; *by_panel: whether the
 * panel of the inputs a sweep of gidx0 reads left the L2. */
int64_t tg_kp_pass_length(const tg_kplan *p, const tg_kernel *k,
                          int *by_panel);

#endif

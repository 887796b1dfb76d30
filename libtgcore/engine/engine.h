/*
 * engine/engine.h - from a lazy graph to work done (tinygrad's engine/):
 * the scheduler, the memory planner and realize with its method cache.
 * Internal; never installed.
 *
 * Lifetime scheme:
 *  - A schedule owns references to the buffers and bases it uses; its
 *    kernel ASTs live in the scheduler's kernel context until
 *    tg_schedule_context_free() (tg_shutdown), so the method cache can
 *    key on them by identity.
 *  - Scheduling holds the kernel context's lock only while it builds
 *    ASTs; running a schedule takes the realize lock (see realize.c).
 */
#ifndef TG_ENGINE_H
#define TG_ENGINE_H

#include "lazy/lazy.h"

/* ----------------------------------------------- engine/schedule.c */

/* One step of a schedule: a kernel over buffers, or a copy. */
typedef struct tg_sched_item {
	tg_uop *ast;       /* the kernel's SINK, owned by the kernel context
	                      until tg_schedule_context_free; NULL for a
	                      copy */
	size_t nbufs;
	tg_buffer **bufs;  /* owned references; outputs first (a copy:
	                      bufs[0] <- bufs[1]) */
	size_t nouts;
	tg_lazy **outs;    /* owned references: the bases it computes */
} tg_sched_item;

typedef struct tg_schedule {
	TG_VEC(tg_sched_item) items;
} tg_schedule;

/* The kernels and copies that compute `outs` (tinygrad's
 * create_schedule), in an order that respects their dependencies.
 * Every base that gets memory is given a buffer now; it becomes a
 * BUFFER when its item has run (tg_lazy_mark_realized).  *out is owned
 * by the caller: tg_schedule_free. */
int tg_schedule_create(tg_lazy *const *outs, size_t n, tg_schedule *out);
void tg_schedule_free(tg_schedule *s);
/* Frees the kernel context every schedule's ASTs live in (tg_shutdown,
 * after the method cache that keys on them). */
void tg_schedule_context_free(void);

/* ------------------------------------------------ engine/memplan.c */

/* The memory planner, run by tg_schedule_create: bases computed only
 * for the schedule's own kernels share buffers once their last reader
 * has run. */
int tg_memory_plan(tg_schedule *s, tg_lazy *const *outs, size_t n);

/* ------------------------------------------------ engine/realize.c */

/* Runs a schedule in order under the operation's settings: each kernel
 * through the method cache (rendered and compiled on a miss), each copy
 * through the host; then the computed bases become BUFFERs.  debug >= 2
 * prints a line per item. */
int tg_schedule_run(tg_schedule *s, const tg_settings *set);
/* Schedules and runs what `outs` need. */
int tg_lazy_realize(tg_lazy *const *outs, size_t n);
/* Frees the in-memory method cache (tg_shutdown, before devices close). */
void tg_method_cache_clear(void);

#endif /* TG_ENGINE_H */

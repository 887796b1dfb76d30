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

#include "codegen/codegen.h"
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
	/* symbolic variables: the AST reads vars[i] (DEFINE_VARs of the
	 * kernel context, sorted by name), bound to vals[i] for this run */
	size_t nvars;
	const tg_uop **vars;
	int64_t *vals;
	/* 1: no kernel and no copy: bufs[0] is a view of bufs[1]'s memory
	 * (a BUFVIEW), made when the schedule was; running it does
	 * nothing, but readers of bufs[0] still wait for bufs[1]'s
	 * writer */
	int view;
	/* GRAPH=1: its cluster in the graph (tg_graphviz_kernel), else 0 */
	size_t graph;
} tg_sched_item;

typedef struct tg_schedule {
	TG_VEC(tg_sched_item) items;
} tg_schedule;

/* The kernels and copies that compute `outs` (tinygrad's
 * create_schedule), in an order that respects their dependencies,
 * under the operation's settings (set->graph: GRAPH=1's drawing).
 * Every base that gets memory is given a buffer now; it becomes a
 * BUFFER when its item has run (tg_lazy_mark_realized).  *out is owned
 * by the caller: tg_schedule_free. */
int tg_schedule_create(tg_lazy *const *outs, size_t n,
                       const tg_settings *set, tg_schedule *out);
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
/* Compiled kernels in the method cache (tests: a value of a variable
 * must not compile anything new). */
size_t tg_method_cache_count(void);
/* Frees the in-memory method cache (tg_shutdown, before devices close). */
void tg_method_cache_clear(void);
/* The lock realize runs under: whatever runs kernels or marks bases
 * realized holds it (a JIT replay too). */
void tg_engine_lock(void);
void tg_engine_unlock(void);

/* ------------------------------------------------- engine/search.c */

/* BEAM=set->beam search over the opts of kernel `ast` on dev (see
 * search.c): the opts into opts (at most TG_MAX_OPTS; none when nothing
 * beats the unoptimized kernel), their count into *nopts.  bufs are the
 * kernel's buffers in argument order: only their sizes and dtypes are
 * read (the search runs on scratch copies).  The result is cached on
 * disk.  Errors: OOM, the device refusing scratch buffers, the
 * unoptimized kernel failing. */
int tg_beam_opts(tg_dev *dev, const tg_uop *ast, tg_buffer *const *bufs,
                 size_t nbufs, const tg_settings *set, tg_opt *opts,
                 size_t *nopts);

/* ------------------------------------------------ engine/capture.c */

/* Capture (the JIT's second call): while a capture is open on a thread,
 * every kernel and copy that thread's realizes run is also recorded,
 * with references to its buffers.  A plan made from the record replays
 * it with other input buffers and no scheduling, lowering or lookup. */
typedef struct tg_capture tg_capture;

/* Opens a capture on the calling thread; TG_EINVAL when one is open. */
int tg_capture_begin(void);
/* Closes it and returns the record (NULL with the error set when
 * recording ran out of memory). */
tg_capture *tg_capture_end(void);
void tg_capture_free(tg_capture *c);
/* Whether a capture is open on the calling thread. */
int tg_capturing(void);
/* Called by realize after each kernel and copy it ran.  vars names
 * the variable of each of args->vals (borrowed for the call). */
void tg_capture_kernel(tg_program *prog, const tg_launch_args *args,
                       size_t nouts, char *const *vars);
void tg_capture_copy(tg_buffer *dst, tg_buffer *src);
/* Kernels and copies recorded so far. */
size_t tg_capture_count(const tg_capture *c);

typedef struct tg_plan tg_plan;

typedef struct tg_plan_info {
	size_t kernels, copies;   /* launches and transfers per replay */
	size_t graphs;            /* runs of kernels on one device */
	size_t native_graphs;     /* ... that the plugin's graph runs */
	size_t buffers;           /* buffers the plan holds */
	size_t bytes;             /* ... and their size */
} tg_plan_info;

/* Makes a plan of a capture (consumed, also on failure).  ins: the
 * buffers the step read as inputs, substituted at each replay; outs:
 * the buffers of its outputs, the caller holding one reference per
 * entry.  native 0 replays launch by launch even where the plugin has
 * graph entries (JIT=2). */
tg_plan *tg_plan_new(tg_capture *c, tg_buffer *const *ins, size_t nin,
                     tg_buffer *const *outs, size_t nout, int native);
void tg_plan_free(tg_plan *p);
/* Replays with these input buffers (same devices, dtypes and sizes as
 * captured, checked by the caller) and stores each output's buffer in
 * outs[] (borrowed from the plan or an input).  An output buffer the
 * plan writes and that is still referenced from outside (the previous
 * call's outputs are alive) is replaced by a new one first, so a
 * replay never overwrites what a caller holds. */
int tg_plan_run(tg_plan *p, tg_buffer *const *ins, tg_buffer **outs);
void tg_plan_get_info(const tg_plan *p, tg_plan_info *out);

/* ------------------------------------------------------ engine/graphviz.c */

/* GRAPH=1: kernel k of a schedule computes `outs` from the bases in
 * `fused` and loads `inputs`; drawn as a cluster of lazy nodes with
 * their source edges.  Returns the cluster's number + 1, for
 * tg_graphviz_ran.  Thread-safe; OOM drops the graph. */
size_t tg_graphviz_kernel(const char *dev, tg_lazy *const *outs,
                          size_t nouts, tg_lazy *const *fused,
                          size_t nfused, tg_lazy *const *inputs,
                          size_t ninputs);
/* The kernel of cluster `graph` (tg_graphviz_kernel's number; 0: none)
 * ran as run `run` of `name` on `dev`: its label becomes what DEBUG=2
 * printed for that run ("CPU 3 r_16_16_16"). */
void tg_graphviz_ran(size_t graph, const char *dev, size_t run,
                     const char *name);
/* Writes GRAPHPATH.dot (GRAPHPATH: the temporary directory's net by
 * default) and, when Graphviz's `dot` is on the PATH, GRAPHPATH.svg;
 * then forgets the graph.  tg_shutdown and process exit call it. */
int tg_graphviz_flush(void);

#endif /* TG_ENGINE_H */

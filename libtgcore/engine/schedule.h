/*
 * engine/schedule.h - the scheduler's working state, shared by its
 * three files and read by nothing else: schedule.c (which bases get
 * memory and what fuses into them; the entry, tg_schedule_create),
 * schedule_ast.c (the kernel context and the lowering of one group to
 * a kernel AST) and schedule_items.c (the items of a schedule and the
 * order they run in).  What the rest of the engine calls is in
 * engine.h; the functions here are prefixed tg_sched_.  Internal;
 * never installed.
 */
#ifndef TG_SCHEDULE_H
#define TG_SCHEDULE_H

#include "engine/engine.h"

typedef TG_VEC(tg_lazy *) lz_vec;

/* Sets and maps of lazy buffers by pointer (util/ptrmap.c).  Every
 * insertion goes through put(), which records a failure in the
 * scheduler's status: a lost insertion would be a wrong schedule. */
typedef tg_ptrmap lz_map;
#define map_has tg_ptrmap_has
#define map_get tg_ptrmap_get
#define map_free tg_ptrmap_free

/* The scheduler's working state. */
typedef struct sched {
	lz_vec order;      /* every unrealized base, sources first */
	lz_map all;        /* the same as a set */
	lz_map realizes;   /* bases that get memory (value: insertion no.) */
	lz_vec realize_order;
	lz_map simple_pads;
	lz_map children;   /* base -> lz_vec * of consumer bases */
	lz_map reduce_for; /* base -> the reduce whose kernel it is in */
	tg_ir *sym;        /* the shape context, held while scheduling */
	int status;
	int graph;         /* GRAPH=1: draw each kernel (graphviz.c) */
} sched;

/* The context a tracker op on a and b needs: the shape context when
 * one has a symbolic entry, else none (integer math). */
static inline tg_ir *ir_for(const sched *s, const tg_st *a, const tg_st *b)
{
	return (a && tg_st_is_sym(a)) || (b && tg_st_is_sym(b)) ? s->sym
	                                                        : NULL;
}

static inline int is_realized(const tg_lazy *b)
{
	return b->kind == TG_LZ_BUFFER;
}

/* tg_ptrmap_put (1: new key, 0: present); on OOM the status sticks and
 * the result is -1, which no caller takes for "new". */
static inline int put(sched *s, lz_map *m, const void *k, void *v)
{
	int r = tg_ptrmap_put(m, k, v);

	if (r < 0 && !s->status)
		s->status = r;
	return r;
}


/* ------------------------------------------- engine/schedule_ast.c */

/* The kernel computing the bases in `outs` (all in one group) into
 * *it; the bases it loads go to *reads (owned by the caller). */
int tg_sched_make_kernel(sched *s, tg_lazy *key, const lz_vec *outs,
                         tg_sched_item *it, lz_vec *reads);

/* ----------------------------------------- engine/schedule_items.c */

/* What each item loads, in item order (for order_items). */
typedef TG_VEC(lz_vec) reads_vec;

/* The item's buffers and outputs (new references), outputs first,
 * each base given its memory first. */
int tg_sched_fill_item(tg_sched_item *it, const lz_vec *outs,
                       const lz_vec *ins);
void tg_sched_reads_free(reads_vec *r);
/* One item per output group (a kernel, a copy or a view) into out,
 * what each loads into *reads. */
int tg_sched_build_items(sched *s, tg_schedule *out, reads_vec *reads);
/* Sorts out's items so that producers run first (ties in creation
 * order); an error on a cycle. */
int tg_sched_order_items(tg_schedule *out, const reads_vec *reads);

#endif

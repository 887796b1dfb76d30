/*
 * engine/schedule.c - from lazy buffers to kernels (tinygrad's
 * engine/schedule.py, mid-2024): which bases get memory and how the
 * rest fuses into them; then, through tg_schedule_create, the kernel
 * ASTs (schedule_ast.c) and the items in the order they run in
 * (schedule_items.c).
 *
 * The rules, in tinygrad's words:
 *  - outputs, forced realizes, copies (and what they copy) and
 *    contiguous bases are realized;
 *  - a base read through an expanding view is realized (else its work
 *    would repeat per copy), unless the view is a pad of the same size;
 *  - a padded base is realized when its graph has an op for which
 *    f(0) != 0 (the padding would read garbage), else it fuses;
 *  - an assign to a realized tensor (tinygrad's ASSIGN) is a kernel
 *    that stores into the target's memory, reading the target only
 *    element by element (as its own output); kernels that read the
 *    target's old value run before it;
 *  - a reduce fuses with its elementwise inputs and with the elementwise
 *    chain to the buffers it feeds when every path there is a contiguous
 *    view of its size and no other reduce is on it; outputs sharing a
 *    reduce become one kernel with several stores; otherwise the reduce
 *    (or its contiguous single-child chain) is realized on its own.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "device/device.h"
#include "ir/ir.h"
#include "shape/shape.h"
#include "engine/schedule.h"

static void realize(sched *s, tg_lazy *b)
{
	int r;

	if (is_realized(b) || b->kind == TG_LZ_CONST)
		return;
	if ((r = put(s, &s->realizes, b, NULL)) == 1 &&
	    TG_VEC_PUSH(&s->realize_order, b))
		s->status = tg_error_oom("schedule");
}

static void add_child(sched *s, tg_lazy *parent, tg_lazy *child)
{
	lz_vec *v = map_get(&s->children, parent);
	size_t i;

	if (!v) {
		if (!(v = calloc(1, sizeof *v))) {
			s->status = tg_error_oom("schedule");
			return;
		}
		if (put(s, &s->children, parent, v) < 0) {
			free(v);
			return;
		}
	}
	for (i = 0; i < v->n; i++)
		if (v->v[i] == child)
			return;
	if (TG_VEC_PUSH(v, child))
		s->status = tg_error_oom("schedule");
}

static lz_vec *children_of(const sched *s, const tg_lazy *b)
{
	return map_get(&s->children, b);
}

/* The view rules of _recurse_lb: pads of the base's size may fuse (if
 * safe), other expanding views realize the base. */
static void view_rules(sched *s, const tg_lazy *v)
{
	tg_lazy *b = v->base;
	const tg_view *last = v->st->views[v->st->nviews - 1];
	size_t i;
	int masked = 0;

	if (v->st->nviews == 1 && last->mask) {
		int64_t inside = 1;

		for (i = 0; i < last->ndim; i++)
			inside *= tg_sint_vmax(tg_sint_sub(
				ir_for(s, v->st, NULL), last->mask[2 * i + 1],
				last->mask[2 * i]));
		if (tg_lazy_numel(b) >= inside) {
			put(s, &s->simple_pads, b, NULL);
			return;
		}
	}
	if (tg_lazy_numel(b) < tg_lazy_numel(v)) {
		realize(s, b);
		return;
	}
	for (i = 0; i < v->st->nviews; i++)
		masked |= v->st->views[i]->mask != NULL;
	if (masked)
		put(s, &s->simple_pads, b, NULL);
}

/* Walks the graph from the outputs (iteratively, sources first). */
static int walk(sched *s, tg_lazy *const *outs, size_t n)
{
	lz_vec stack = { 0 };
	lz_map entered = { 0 };
	size_t i;

	for (i = 0; i < n && !s->status; i++)
		if (TG_VEC_PUSH(&stack, outs[i]))
			s->status = tg_error_oom("schedule");
	while (stack.n && !s->status) {
		tg_lazy *x = stack.v[stack.n - 1], *b;
		uint32_t k;

		if (x->base) {
			stack.n--;
			view_rules(s, x);
			if (TG_VEC_PUSH(&stack, x->base))
				s->status = tg_error_oom("schedule");
			continue;
		}
		if (is_realized(x) || map_has(&s->all, x)) {
			stack.n--;
			continue;
		}
		if (put(s, &entered, x, NULL) == 1) {
			/* first visit: sources go first */
			for (k = 0; k < x->nsrc; k++)
				if (TG_VEC_PUSH(&stack, x->src[k]))
					s->status = tg_error_oom("schedule");
			continue;
		}
		stack.n--;
		put(s, &s->all, x, NULL);
		if (TG_VEC_PUSH(&s->order, x))
			s->status = tg_error_oom("schedule");
		if (atomic_load_explicit(&x->forced_realize, memory_order_relaxed) ||
		    x->kind == TG_LZ_COPY || x->kind == TG_LZ_ASSIGN ||
		    x->kind == TG_LZ_CONTIGUOUS || x->kind == TG_LZ_BUFVIEW)
			realize(s, x);
		if (x->kind == TG_LZ_COPY || x->kind == TG_LZ_BUFVIEW)
			realize(s, tg_lazy_base(x->src[0]));
		for (k = 0; k < x->nsrc; k++) {
			b = tg_lazy_base(x->src[k]);
			if (!is_realized(b))
				add_child(s, b, x);
		}
	}
	TG_VEC_FREE(&stack);
	map_free(&entered);
	return s->status;
}

/* _is_padding_okay: no op with f(0) != 0 between b and memory.
 * Iterative: elementwise chains can be long. */
static int padding_ok(sched *s, tg_lazy *b)
{
	lz_vec stack = { 0 };
	lz_map seen = { 0 };
	int ok = 1;

	if (TG_VEC_PUSH(&stack, b))
		s->status = tg_error_oom("schedule");
	while (stack.n && ok && !s->status) {
		tg_lazy *x = stack.v[--stack.n];
		uint32_t k;

		if (is_realized(x) || map_has(&s->realizes, x) ||
		    put(s, &seen, x, NULL) != 1)
			continue;
		if (x->kind == TG_LZ_ALU &&
		    (tg_op_flags(x->op) & TG_OPF_UNSAFE_PAD))
			ok = 0;
		for (k = 0; k < x->nsrc && ok; k++)
			if (TG_VEC_PUSH(&stack, tg_lazy_base(x->src[k])))
				s->status = tg_error_oom("schedule");
	}
	TG_VEC_FREE(&stack);
	map_free(&seen);
	return ok;
}

/* The view through which `child` reads base b, when it reads it once
 * (several different views: NULL and *many set). */
static tg_lazy *read_view(tg_lazy *child, const tg_lazy *b, int *many)
{
	tg_lazy *found = NULL;
	uint32_t k;

	*many = 0;
	for (k = 0; k < child->nsrc; k++)
		if (tg_lazy_base(child->src[k]) == b) {
			if (found && found != child->src[k])
				*many = 1;
			found = child->src[k];
		}
	return found;
}

typedef struct group_walk {
	sched *s;
	tg_lazy *r;
	lz_map *group;
	TG_VEC(struct { tg_lazy *tr; tg_st *st; }) seen;
} group_walk;

/* _recursive_group: the buffers tr's chain from reduce r can fuse into;
 * adds r itself to the group when something cannot fuse. */
static void group_from(group_walk *g, tg_lazy *tr, const tg_st *st)
{
	sched *s = g->s;
	lz_vec *kids;
	size_t i;

	for (i = 0; i < g->seen.n; i++)
		if (g->seen.v[i].tr == tr && tg_st_eq(g->seen.v[i].st, st))
			return;
	if (TG_VEC_RESERVE(&g->seen, g->seen.n + 1) ||
	    !(g->seen.v[g->seen.n].st = tg_st_copy(st))) {
		s->status = tg_error_oom("schedule");
		return;
	}
	g->seen.v[g->seen.n++].tr = tr;
	if (map_has(&s->realizes, tr) && tr != g->r) {
		if (!tg_st_contiguous(st) || tg_st_size(st) !=
		    tg_lazy_numel(g->r) || map_has(&s->reduce_for, tr))
			put(s, g->group, g->r, NULL);
		put(s, g->group, tr, NULL);
		return;
	}
	kids = children_of(s, tr);
	for (i = 0; kids && i < kids->n && !s->status; i++) {
		tg_lazy *next = kids->v[i], *v;
		tg_st *cat;
		int many;

		if (next->kind == TG_LZ_REDUCE) {
			put(s, g->group, g->r, NULL);
			return;
		}
		v = read_view(next, tr, &many);
		if (many) {
			put(s, g->group, g->r, NULL);
			return;
		}
		if (!(cat = tg_st_concat(ir_for(s, st, v->st), st, v->st))) {
			s->status = tg_last_status();
			return;
		}
		group_from(g, next, cat);
		tg_st_free(cat);
	}
}

/* The single consumer chain below a forced reduce that can be stored
 * instead (tinygrad's "chase down to contiguous children"). */
static tg_lazy *chase(sched *s, tg_lazy *r)
{
	tg_lazy *tr = r;
	tg_st *st = tg_st_copy(r->st), *cat;
	lz_vec *kids;

	while (st && (kids = children_of(s, tr)) && kids->n == 1) {
		tg_lazy *next = kids->v[0], *v;
		int many;

		v = read_view(next, tr, &many);
		if (many || tg_st_size(st) != tg_lazy_numel(v))
			break;
		cat = tg_st_concat(ir_for(s, st, v->st), st, v->st);
		tg_st_free(st);
		st = cat;
		if (!st || !tg_st_contiguous(st) || next->kind == TG_LZ_REDUCE)
			break;
		tr = next;
	}
	tg_st_free(st);
	/* never store a widened cast: store its source */
	if (tr != r && tr->kind == TG_LZ_CAST &&
	    tg_dtype_size(tr->dtype) > tg_dtype_size(tr->src[0]->dtype))
		tr = tg_lazy_base(tr->src[0]);
	return tr;
}

static int group_reaches_other_reduce(sched *s, lz_map *group, tg_lazy *r);

/* Decides, for each reduce, the kernel it fuses into. */
static void group_reduces(sched *s)
{
	size_t i, j;

	for (i = 0; i < s->order.n && !s->status; i++) {
		tg_lazy *r = s->order.v[i], *tr;
		lz_map group = { 0 };
		group_walk g = { s, r, &group, { 0 } };
		int forced, can_chase = 1;

		if (r->kind != TG_LZ_REDUCE || map_has(&s->realizes, r))
			continue;
		group_from(&g, r, r->st);
		for (j = 0; j < group.cap; j++)
			if (group.key[j] && map_has(&s->reduce_for, group.key[j]))
				can_chase = 0;
		forced = map_has(&group, r);
		if (!forced && group.n > 1 &&
		    group_reaches_other_reduce(s, &group, r))
			forced = 1;
		if (forced) {
			tr = can_chase ? chase(s, r) : r;
			if (can_chase)
				put(s, &s->reduce_for, tr, r);
			realize(s, tr);
		} else {
			for (j = 0; j < group.cap; j++)
				if (group.key[j])
					put(s, &s->reduce_for, group.key[j], r);
		}
		for (j = 0; j < g.seen.n; j++)
			tg_st_free(g.seen.v[j].st);
		TG_VEC_FREE(&g.seen);
		map_free(&group);
	}
}

/* tinygrad's parent check: a multi-output group may not pull in a
 * second reduce through its members' sources. */
static int group_reaches_other_reduce(sched *s, lz_map *group, tg_lazy *r)
{
	lz_vec stack = { 0 };
	lz_map seen = { 0 };
	size_t j;
	int found = 0;

	for (j = 0; j < group->cap; j++)
		if (group->key[j] &&
		    TG_VEC_PUSH(&stack, (tg_lazy *)group->key[j]))
			s->status = tg_error_oom("schedule");
	while (stack.n && !found && !s->status) {
		tg_lazy *p = stack.v[--stack.n];
		uint32_t k;

		if (put(s, &seen, p, NULL) != 1)
			continue;
		if (p->kind == TG_LZ_REDUCE && p != r) {
			found = 1;
			break;
		}
		for (k = 0; k < p->nsrc; k++) {
			tg_lazy *b = tg_lazy_base(p->src[k]);

			if (!is_realized(b) && b != r && TG_VEC_PUSH(&stack, b))
				s->status = tg_error_oom("schedule");
		}
	}
	TG_VEC_FREE(&stack);
	map_free(&seen);
	return found;
}

static void sched_free(sched *s)
{
	size_t i;

	for (i = 0; i < s->children.cap; i++)
		if (s->children.key[i]) {
			lz_vec *v = s->children.val[i];

			TG_VEC_FREE(v);
			free(v);
		}
	map_free(&s->children);
	map_free(&s->all);
	map_free(&s->realizes);
	map_free(&s->simple_pads);
	map_free(&s->reduce_for);
	TG_VEC_FREE(&s->order);
	TG_VEC_FREE(&s->realize_order);
}

static int schedule_flat(tg_lazy *const *outs, size_t n,
                         const tg_settings *set, tg_schedule *out);

/* A multi-device tensor is realized as its shards (a NULL output passes
 * through to schedule_flat, which reports it). */
int tg_schedule_create(tg_lazy *const *outs, size_t n,
                       const tg_settings *set, tg_schedule *out)
{
	tg_lazy **flat;
	size_t nflat, i;
	int rc;

	for (i = 0; i < n && !tg_lazy_is_multi(outs[i]); i++)
		;
	if (i == n)
		return schedule_flat(outs, n, set, out);
	memset(out, 0, sizeof *out);
	if ((rc = tg_multi_flatten(outs, n, &flat, &nflat)))
		return rc;
	rc = schedule_flat(flat, nflat, set, out);
	free(flat);
	return rc;
}

static int schedule_flat(tg_lazy *const *outs, size_t n,
                         const tg_settings *set, tg_schedule *out)
{
	sched s = { 0 };
	reads_vec reads = { 0 };
	size_t i;
	int rc;

	memset(out, 0, sizeof *out);
	for (i = 0; i < n; i++)
		if (!outs[i])
			return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (!(s.sym = tg_symctx_enter()))
		return tg_last_status();
	s.graph = set->graph;
	for (i = 0; i < n; i++)
		realize(&s, tg_lazy_base(outs[i]));
	rc = s.status ? s.status : walk(&s, outs, n);
	for (i = 0; !rc && i < s.order.n; i++)
		if (map_has(&s.simple_pads, s.order.v[i]) &&
		    !padding_ok(&s, s.order.v[i]))
			realize(&s, s.order.v[i]);
	if (!rc && !(rc = s.status))
		group_reduces(&s);
	if (!rc && !(rc = s.status))
		rc = tg_sched_build_items(&s, out, &reads);
	if (!rc)
		rc = tg_sched_order_items(out, &reads);
	tg_sched_reads_free(&reads);
	sched_free(&s);
	tg_symctx_leave();
	if (!rc)
		rc = tg_memory_plan(out, outs, n);
	if (rc)
		tg_schedule_free(out);
	if (!rc && tg_debug_level() >= 1 && out->items.n > 1)
		tg_debug_log(1, "scheduled %zu kernels", out->items.n);
	return rc;
}

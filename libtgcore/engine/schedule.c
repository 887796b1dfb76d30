/*
 * engine/schedule.c - from lazy buffers to kernels (tinygrad's
 * engine/schedule.py, mid-2024): which bases get memory, how the rest
 * fuses into them, the kernel ASTs, and the order they run in.
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

/* ------------------------------------------------- the kernel context */

/* Every kernel AST is built in one context that lives until
 * tg_shutdown, so a kernel built again is the same SINK and the method
 * cache finds it by pointer.  It grows by the distinct kernels only, as
 * the method cache does.  One builder at a time: kctx_lock. */
static pthread_mutex_t kctx_lock = PTHREAD_MUTEX_INITIALIZER;
static tg_ir *kctx;

/* The kernel context, locked; NULL on OOM (nothing locked). */
static tg_ir *kctx_enter(void)
{
	pthread_mutex_lock(&kctx_lock);
	if (!kctx && !(kctx = tg_ir_new())) {
		pthread_mutex_unlock(&kctx_lock);
		return NULL;
	}
	return kctx;
}

/* Unlocks; a failed build's error leaves the context (its nodes stay
 * valid) so the next kernel builds. */
static void kctx_leave(tg_ir *ir)
{
	tg_ir_clear_status(ir);
	pthread_mutex_unlock(&kctx_lock);
}

void tg_schedule_context_free(void)
{
	pthread_mutex_lock(&kctx_lock);
	tg_ir_free(kctx);
	kctx = NULL;
	pthread_mutex_unlock(&kctx_lock);
}

/* ------------------------------------------------------------ lowering */

typedef struct lower {
	sched *s;
	tg_ir *k;               /* the kernel context (kctx) */
	tg_lazy *r;             /* the kernel's reduce, or NULL */
	lz_vec outs;            /* stored bases, buffer i = outs[i] */
	lz_vec inputs;          /* loaded bases, buffer nouts + i */
	TG_VEC(struct { tg_lazy *b; tg_st *st; tg_uop *a; }) memo;
	int symbolic;           /* some tracker has a variable */
} lower;

static tg_uop *lower_buf(lower *L, tg_lazy *buf, tg_st *st);

static int index_of(const lz_vec *v, const tg_lazy *b)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (v->v[i] == b)
			return (int)i;
	return -1;
}

/* The tracker output o is stored through: the kernel's full shape
 * (the reduce's when there is one), row-major; for an assign through a
 * view, that view of the target buffer (its value is a realized
 * buffer, so there is no reduce).  NULL on OOM. */
static tg_st *store_st(const lower *L, size_t o)
{
	const tg_lazy *shape_of = L->r ? L->r : L->outs.v[o];

	if (L->outs.v[o]->assign_st) {
		if (TG_NEVER(L->r)) {
			tg_error(TG_EINTERNAL, "schedule: a reduce in an assign "
			         "through a view");
			return NULL;
		}
		return tg_st_copy(L->outs.v[o]->assign_st);
	}
	return tg_st_from_shape(ir_for(L->s, shape_of->st, NULL),
	                        tg_lazy_ndim(shape_of), tg_lazy_shape(shape_of));
}

/* The output an assign in this kernel stores into b's memory, or -1. */
static int assigned_output(const lower *L, const tg_lazy *b)
{
	size_t i;

	for (i = 0; i < L->outs.n; i++)
		if (L->outs.v[i]->kind == TG_LZ_ASSIGN &&
		    L->outs.v[i]->src[1] == b)
			return (int)i;
	return -1;
}

/* A read of the target of an assign in this kernel reads the output
 * itself, at the element being written: anything else would race with
 * the stores. */
static tg_uop *load_assigned(lower *L, int o, tg_lazy *b, tg_st *st)
{
	tg_st *own = store_st(L, (size_t)o);
	int same = own && tg_st_eq(own, st);
	char buf[160];

	tg_st_free(own);
	if (!own) {  /* its error (out of memory), not a mismatch */
		tg_st_free(st);
		return NULL;
	}
	if (!same) {
		tg_st_free(st);
		tg_error(TG_EUNSUPPORTED, "assign: the new value of a %s tensor "
		         "reads that tensor other than element by element (through "
		         "a view or a reduce); realize the value before assigning "
		         "it", tg_sints_format(tg_lazy_shape(b), tg_lazy_ndim(b),
		                               buf, sizeof buf));
		return NULL;
	}
	return tg_ast_load(L->k, o, b->dtype, st);
}

static tg_uop *lower_load(lower *L, tg_lazy *b, tg_st *st)
{
	int i = index_of(&L->inputs, b), o;

	if (is_realized(b) && (o = assigned_output(L, b)) >= 0)
		return load_assigned(L, o, b, st);
	if (i < 0) {
		if (TG_VEC_PUSH(&L->inputs, b)) {
			tg_st_free(st);
			tg_error_oom("schedule");
			return NULL;
		}
		i = (int)L->inputs.n - 1;
	}
	return tg_ast_load(L->k, (int)L->outs.n + i, b->dtype, st);
}

static tg_uop *lower_reduce(lower *L, tg_lazy *b, tg_st *st)
{
	tg_lazy *src = b->src[0];
	tg_st *in;

	tg_st_free(st);
	if (TG_NEVER(b != L->r)) {  /* group_reduces keeps one a kernel */
		tg_error(TG_EINTERNAL, "schedule: a second reduce in one kernel");
		return NULL;
	}
	in = tg_st_from_shape(ir_for(L->s, src->st, NULL), tg_lazy_ndim(src),
	                      tg_lazy_shape(src));
	return tg_ast_reduce(L->k, b->op, lower_buf(L, src, in), b->axes);
}

/* The AST of base b read through st (taken). */
static tg_uop *lower_base(lower *L, tg_lazy *b, tg_st *st)
{
	tg_uop *a[3] = { 0 };
	uint32_t k;

	if (b->kind == TG_LZ_CONST)
		return tg_ast_const(L->k, b->dtype, b->value, st);
	if (is_realized(b) ||
	    (map_has(&L->s->realizes, b) && index_of(&L->outs, b) < 0))
		return lower_load(L, b, st);
	if (b->kind == TG_LZ_REDUCE)
		return lower_reduce(L, b, st);
	if (b->kind == TG_LZ_ASSIGN && b->assign_st) {
		/* stored through the view; the value is read in order */
		tg_lazy *v = b->src[0];

		tg_st_free(st);
		st = tg_st_from_shape(ir_for(L->s, v->st, NULL), tg_lazy_ndim(v),
		                      tg_lazy_shape(v));
		return st ? lower_buf(L, v, st) : NULL;
	}
	if (b->kind == TG_LZ_ASSIGN)  /* its value, stored in place */
		return lower_buf(L, b->src[0], st);
	for (k = 0; k < b->nsrc; k++) {
		tg_st *c = tg_st_copy(st);

		a[k] = c ? lower_buf(L, b->src[k], c) : NULL;
	}
	tg_st_free(st);
	switch (b->kind) {
	case TG_LZ_ALU:
		return tg_ast_alu(L->k, b->op, a[0], a[1], a[2]);
	case TG_LZ_CAST:
		return tg_ast_cast(L->k, a[0], b->dtype);
	case TG_LZ_BITCAST:
		return tg_ast_bitcast(L->k, a[0], b->dtype);
	case TG_LZ_CONTIGUOUS:
		return a[0];
	default:
		tg_error(TG_EINTERNAL, "schedule: cannot fuse lazy kind %d",
		         b->kind);
		return NULL;
	}
}

/* _recursive_lazyop: views compose their tracker in front of st. */
static tg_uop *lower_buf(lower *L, tg_lazy *buf, tg_st *st)
{
	tg_uop *a;
	tg_st *simple;
	size_t i;

	if (!st)
		return NULL;
	if (buf->base) {
		tg_st *cat = tg_st_concat(ir_for(L->s, buf->st, st), buf->st,
		                          st);

		tg_st_free(st);
		return cat ? lower_buf(L, buf->base, cat) : NULL;
	}
	simple = tg_st_simplify(ir_for(L->s, st, NULL), st);
	tg_st_free(st);
	if (!simple)
		return NULL;
	L->symbolic |= tg_st_is_sym(simple);
	for (i = 0; i < L->memo.n; i++)
		if (L->memo.v[i].b == buf && tg_st_eq(L->memo.v[i].st, simple)) {
			tg_st_free(simple);
			return L->memo.v[i].a;
		}
	if (TG_VEC_RESERVE(&L->memo, L->memo.n + 1) ||
	    !(L->memo.v[L->memo.n].st = tg_st_copy(simple))) {
		tg_st_free(simple);
		tg_error_oom("schedule");
		return NULL;
	}
	L->memo.v[L->memo.n].b = buf;
	L->memo.v[L->memo.n].a = NULL;
	i = L->memo.n++; /* before recursing: nested calls append */
	a = lower_base(L, buf, simple);
	L->memo.v[i].a = a;
	return a;
}

/* ------------------------------------------------------- schedule items */

static void item_free(tg_sched_item *it)
{
	size_t i;

	for (i = 0; i < it->nbufs; i++)
		tg_buffer_unref(it->bufs[i]);
	for (i = 0; i < it->nouts; i++)
		tg_lazy_unref(it->outs[i]);
	free(it->bufs);
	free(it->outs);
	free(it->vars);
	free(it->vals);
	memset(it, 0, sizeof *it);
}

void tg_schedule_free(tg_schedule *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->items.n; i++)
		item_free(&s->items.v[i]);
	TG_VEC_FREE(&s->items);
}

/* Gives a realized-to-be base its memory: a BUFVIEW the bytes of its
 * source's range (lazy_ops.c checked that it is one). */
static int give_buffer(tg_lazy *b)
{
	const tg_lazy *v = b->src[0];
	tg_lazy *sb;
	size_t off;

	if (b->buf)
		return 0;
	if (b->kind != TG_LZ_BUFVIEW) {
		b->buf = tg_buffer_new(b->dev, (size_t)tg_lazy_numel(b),
		                       b->dtype);
		return b->buf ? 0 : tg_last_status();
	}
	sb = tg_lazy_base((tg_lazy *)v);
	if (give_buffer(sb))
		return tg_last_status();
	off = v->base ? (size_t)v->st->views[0]->offset.c : 0;
	b->buf = tg_buffer_view(sb->buf, off * tg_dtype_size(v->dtype),
	                        (size_t)tg_lazy_numel(b), b->dtype);
	return b->buf ? 0 : tg_last_status();
}

int tg_sched_fill_item(tg_sched_item *it, const lz_vec *outs,
                       const lz_vec *ins)
{
	size_t i, n = outs->n + ins->n;

	it->bufs = calloc(n ? n : 1, sizeof *it->bufs);
	it->outs = calloc(outs->n ? outs->n : 1, sizeof *it->outs);
	if (!it->bufs || !it->outs)
		return tg_error_oom("schedule");
	for (i = 0; i < outs->n; i++) {
		it->outs[it->nouts++] = tg_lazy_ref(outs->v[i]);
		if (give_buffer(outs->v[i]))
			return tg_last_status();
		it->bufs[it->nbufs++] = tg_buffer_ref(outs->v[i]->buf);
	}
	for (i = 0; i < ins->n; i++) {
		if (give_buffer(ins->v[i]))
			return tg_last_status();
		it->bufs[it->nbufs++] = tg_buffer_ref(ins->v[i]->buf);
	}
	return 0;
}

/* The value bound to var in the pairs binds/vals; an error when it is
 * bound to two values, or to none. */
static int value_of(const tg_uop *var, const tg_uop_vec *binds,
                    const tg_i64_vec *vals, int64_t *out)
{
	int found = 0;

	for (size_t j = 0; j < binds->n; j++) {
		if (binds->v[j] != var)
			continue;
		if (found && *out != vals->v[j])
			return tg_error(TG_EINVAL, "schedule: one kernel reads %s "
			                "bound to %lld and to %lld", var->arg.name,
			                (long long)*out, (long long)vals->v[j]);
		*out = vals->v[j];
		found = 1;
	}
	return found ? TG_OK : tg_error(TG_EINTERNAL, "schedule: a kernel "
	                                "reads %s, which no size binds",
	                                var->arg.name);
}

/* Takes the bound values off the item's AST (tinygrad's unbind): the
 * kernel is compiled for the variables and gets the values at launch,
 * so one compiled kernel serves every value.  The item's variables are
 * the unbound AST's, sorted by name (tg_sym_vars). */
static int unbind(tg_ir *k, tg_sched_item *it)
{
	tg_uop_vec binds = { 0 }, vars = { 0 };
	tg_i64_vec vals = { 0 };
	tg_uop *ast = tg_sym_unbind(k, it->ast, &binds, &vals);
	int rc = ast ? TG_OK : tg_ir_status(k) ? tg_ir_status(k) : TG_ENOMEM;

	if (!rc)
		rc = tg_sym_vars(ast, &vars);
	if (!rc && vars.n && (!(it->vars = calloc(vars.n, sizeof *it->vars)) ||
	                      !(it->vals = calloc(vars.n, sizeof *it->vals))))
		rc = tg_error_oom("schedule");
	for (size_t i = 0; !rc && i < vars.n; i++) {
		it->vars[i] = vars.v[i];
		rc = value_of(vars.v[i], &binds, &vals, &it->vals[i]);
	}
	if (!rc) {
		it->nvars = vars.n;
		it->ast = ast;
	}
	TG_VEC_FREE(&binds);
	TG_VEC_FREE(&vars);
	TG_VEC_FREE(&vals);
	return rc;
}

/* GRAPH=1: the kernel's outputs, the bases fused into it and the ones
 * it loads. */
static size_t draw_kernel(const lower *L)
{
	tg_lazy **fused = malloc((L->memo.n + 1) * sizeof *fused);
	size_t i, graph;

	if (!fused)
		return 0;
	for (i = 0; i < L->memo.n; i++)
		fused[i] = L->memo.v[i].b;
	graph = tg_graphviz_kernel(tg_dev_name(L->outs.v[0]->dev), L->outs.v,
	                           L->outs.n, fused, L->memo.n, L->inputs.v,
	                           L->inputs.n);
	free(fused);
	return graph;
}

/* The kernel computing the bases in `outs` (all in one group); the
 * bases it loads go to *reads. */
int tg_sched_make_kernel(sched *s, tg_lazy *key, const lz_vec *outs,
                         tg_sched_item *it, lz_vec *reads)
{
	lower L = { .s = s };
	tg_uop *stores[64];
	size_t i, graph = 0;
	int rc = 0;

	if (outs->n > TG_ARRAY_LEN(stores))
		return tg_error(TG_EINTERNAL, "schedule: %zu outputs in one "
		                "kernel", outs->n);
	L.r = key->kind == TG_LZ_REDUCE ? key : NULL;
	if (!(L.k = kctx_enter()))
		return tg_last_status();
	for (i = 0; i < outs->n && !rc; i++)
		if (TG_VEC_PUSH(&L.outs, outs->v[i]))
			rc = tg_error_oom("schedule");
	for (i = 0; i < outs->n && !rc; i++) {
		tg_st *st = store_st(&L, i);
		tg_st *sst = st ? tg_st_copy(st) : NULL;
		tg_uop *v = lower_buf(&L, outs->v[i], st);

		stores[i] = tg_ast_store(L.k, (int)i, v, sst);
		if (!stores[i])
			rc = tg_last_status() ? tg_last_status() : TG_EINTERNAL;
	}
	if (!rc && !(it->ast = tg_ast_sink(L.k, stores, outs->n)))
		rc = tg_last_status();
	if (!rc && L.symbolic)
		rc = unbind(L.k, it);
	if (!rc && s->graph)
		graph = draw_kernel(&L);
	kctx_leave(L.k);
	if (!rc)
		rc = tg_sched_fill_item(it, &L.outs, &L.inputs);
	it->graph = graph;
	for (i = 0; i < L.memo.n; i++)
		tg_st_free(L.memo.v[i].st);
	TG_VEC_FREE(&L.memo);
	TG_VEC_FREE(&L.outs);
	*reads = L.inputs;
	return rc;
}

/* A copy, or (a BUFVIEW) a view item: b from its source's memory. */
static int make_copy(tg_lazy *b, tg_sched_item *it, lz_vec *reads)
{
	lz_vec outs = { 0 };
	int rc;

	it->view = b->kind == TG_LZ_BUFVIEW;

	if (TG_VEC_PUSH(&outs, b) ||
	    TG_VEC_PUSH(reads, tg_lazy_base(b->src[0])))
		rc = tg_error_oom("schedule");
	else
		rc = tg_sched_fill_item(it, &outs, reads);
	TG_VEC_FREE(&outs);
	return rc;
}

void tg_sched_reads_free(reads_vec *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		TG_VEC_FREE(&r->v[i]);
	TG_VEC_FREE(r);
}

/* Output groups: bases sharing a reduce form one kernel (tinygrad's
 * MULTIOUTPUT), the rest one each, in the order they were realized. */
int tg_sched_build_items(sched *s, tg_schedule *out, reads_vec *reads)
{
	lz_map done = { 0 };
	size_t i, j;
	int rc = 0;

	for (i = 0; i < s->realize_order.n && !rc; i++) {
		tg_lazy *b = s->realize_order.v[i], *key;
		lz_vec grp = { 0 }, rd = { 0 };
		tg_sched_item it = { 0 };

		if (map_has(&done, b))
			continue;
		key = map_has(&s->reduce_for, b) ? (tg_lazy *)map_get(&s->reduce_for, b) : b;
		for (j = i; j < s->realize_order.n; j++) {
			tg_lazy *o = s->realize_order.v[j];
			tg_lazy *ok = map_has(&s->reduce_for, o) ?
			              (tg_lazy *)map_get(&s->reduce_for, o) : o;

			if (ok == key && !map_has(&done, o) &&
			    o->kind != TG_LZ_COPY && o->kind != TG_LZ_BUFVIEW) {
				if (put(s, &done, o, NULL) < 0)
					rc = s->status;
				else if (TG_VEC_PUSH(&grp, o))
					rc = tg_error_oom("schedule");
			}
		}
		if (b->kind == TG_LZ_COPY || b->kind == TG_LZ_BUFVIEW) {
			if (put(s, &done, b, NULL) < 0)
				rc = s->status;
			rc = rc ? rc : make_copy(b, &it, &rd);
		} else if (!rc && tg_disk_is(key->dev)) {
			rc = tg_error(TG_EUNSUPPORTED, "schedule: %s runs no "
			              "kernels, and this needs one there (math, "
			              "a reduce, a pad or a cast of a tensor on "
			              "it, or an assign into it): tg_to another "
			              "device first", tg_dev_name(key->dev));
		} else if (!rc) {
			rc = tg_sched_make_kernel(s, key, &grp, &it, &rd);
		}
		if (TG_VEC_PUSH(&out->items, it)) {
			item_free(&it);
			rc = tg_error_oom("schedule");
		}
		if (TG_VEC_PUSH(reads, rd)) {
			TG_VEC_FREE(&rd);
			rc = rc ? rc : tg_error_oom("schedule");
		}
		TG_VEC_FREE(&grp);
	}
	map_free(&done);
	return rc;
}

/* Whether item a must run before item b: b reads a base a computes,
 * or a reads the old value of a tensor that b assigns in place. */
static int before(const tg_sched_item *a, const lz_vec *ra,
                  const tg_sched_item *b, const lz_vec *rb)
{
	size_t i, j;

	for (i = 0; i < a->nouts; i++)
		for (j = 0; j < rb->n; j++)
			if (a->outs[i] == rb->v[j])
				return 1;
	for (i = 0; i < b->nouts; i++)
		if (b->outs[i]->kind == TG_LZ_ASSIGN)
			for (j = 0; j < ra->n; j++)
				if (is_realized(ra->v[j]) &&
				    ra->v[j]->buf == b->outs[i]->buf)
					return 1;
	return 0;
}

/* Kahn's algorithm, ties in creation order: producers run first. */
int tg_sched_order_items(tg_schedule *out, const reads_vec *reads)
{
	size_t n = out->items.n, i, j, head = 0, tail = 0;
	size_t *indeg = calloc(n + 1, sizeof *indeg);
	size_t *queue = calloc(n + 1, sizeof *queue);
	tg_sched_item *sorted = calloc(n + 1, sizeof *sorted);

	if (n == 0) {
		free(indeg), free(queue), free(sorted);
		return 0;
	}
	if (!indeg || !queue || !sorted) {
		free(indeg), free(queue), free(sorted);
		return tg_error_oom("schedule");
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j && before(&out->items.v[j], &reads->v[j],
			                     &out->items.v[i], &reads->v[i]))
				indeg[i]++;
	for (i = 0; i < n; i++)
		if (!indeg[i])
			queue[tail++] = i;
	while (head < tail) {
		size_t k = queue[head++];

		sorted[head - 1] = out->items.v[k];
		for (j = 0; j < n; j++)
			if (j != k && before(&out->items.v[k], &reads->v[k],
			                     &out->items.v[j], &reads->v[j]) &&
			    --indeg[j] == 0)
				queue[tail++] = j;
	}
	free(indeg), free(queue);
	if (tail != n) {
		free(sorted);
		return tg_error(TG_EUNSUPPORTED, "schedule: the kernels depend "
		                "on each other in a cycle (a kernel reads a "
		                "tensor's value from before and after an assign "
		                "to it)");
	}
	memcpy(out->items.v, sorted, n * sizeof *sorted);
	free(sorted);
	return 0;
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

static int schedule_flat(tg_lazy *const *outs, size_t n, tg_schedule *out);

/* A multi-device tensor is realized as its shards (a NULL output passes
 * through to schedule_flat, which reports it). */
int tg_schedule_create(tg_lazy *const *outs, size_t n, tg_schedule *out)
{
	tg_lazy **flat;
	size_t nflat, i;
	int rc;

	for (i = 0; i < n && !tg_lazy_is_multi(outs[i]); i++)
		;
	if (i == n)
		return schedule_flat(outs, n, out);
	memset(out, 0, sizeof *out);
	if ((rc = tg_multi_flatten(outs, n, &flat, &nflat)))
		return rc;
	rc = schedule_flat(flat, nflat, out);
	free(flat);
	return rc;
}

static int schedule_flat(tg_lazy *const *outs, size_t n, tg_schedule *out)
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
	s.graph = tg_setting_int(TG_KEY_GRAPH) != 0;
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

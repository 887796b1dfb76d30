/*
 * engine/memplan.c - the memory planner (tinygrad's memory_planner in
 * engine/realize.py): bases a schedule computes only for its own later
 * kernels share buffers, so that a long chain of intermediates needs a
 * few buffers, not one each.
 *
 * A computed base is internal when nothing outside the graph behind the
 * schedule's outputs can reach it: every reference it holds comes from
 * a node of that graph or from a schedule item, and no node that
 * outlives the schedule (one referenced from outside and left
 * unrealized, which will read it later) depends on it.  The outputs
 * themselves are never internal.  Walking the items in order, an
 * internal base takes a buffer of its device, dtype and size that an
 * earlier internal base has finished with (its last reader has run),
 * and gives its own back after its last reader.  A buffer is never
 * written by the kernel that reads it last: outputs are placed before
 * the item's inputs are released.
 *
 * Other threads build tensors meanwhile.  The counts are read under
 * the lazy lock, and what is not kept is hidden in the same step (out
 * of the lazy cache, no contiguous child), so no thread can take a
 * reference to an internal node after it was judged internal.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "device/device.h"

typedef TG_VEC(tg_lazy *) node_vec;
typedef TG_VEC(tg_buffer *) buf_vec;

typedef struct plan {
	node_vec nodes;    /* the graph: every unrealized lazy, views too */
	tg_ptrmap seen;
	tg_ptrmap inrefs;  /* lazy -> references held inside (as count) */
	tg_ptrmap computed;/* base -> 1 when an item computes it */
	tg_ptrmap keep;    /* lazy -> 1 when needed beyond the schedule */
	tg_ptrmap last;    /* buffer -> 1 + index of its last reader */
	int status;
} plan;

static uintptr_t count_of(const tg_ptrmap *m, const void *k)
{
	return (uintptr_t)tg_ptrmap_get(m, k);
}

static void bump(plan *p, tg_ptrmap *m, const void *k, uintptr_t by)
{
	if (tg_ptrmap_put(m, k, (void *)(count_of(m, k) + by)) < 0)
		p->status = TG_ENOMEM;
}

static void push(plan *p, node_vec *v, tg_lazy *x)
{
	if (TG_VEC_PUSH(v, x))
		p->status = tg_error_oom("memory plan");
}

/* The sources of x as the graph walks see them: its srcs and, for a
 * view, its base. */
static size_t edges(const tg_lazy *x, tg_lazy **out)
{
	size_t n = 0;
	uint32_t k;

	if (x->base)
		out[n++] = x->base;
	for (k = 0; k < x->nsrc; k++)
		out[n++] = x->src[k];
	return n;
}

/* Every unrealized lazy reachable from outs, with the references the
 * graph holds on each. */
static void collect(plan *p, tg_lazy *const *outs, size_t n)
{
	node_vec stack = { 0 };
	tg_lazy *e[4];
	size_t i, ne;

	for (i = 0; i < n; i++)
		push(p, &stack, outs[i]);
	while (stack.n && !p->status) {
		tg_lazy *x = stack.v[--stack.n];

		if (x->kind == TG_LZ_BUFFER && !x->base)
			continue;
		int r = tg_ptrmap_put(&p->seen, x, x);

		if (r < 0)  /* OOM: the message is set; stop the walk */
			p->status = r;
		if (r != 1)
			continue;
		push(p, &p->nodes, x);
		ne = edges(x, e);
		for (i = 0; i < ne; i++) {
			bump(p, &p->inrefs, e[i], 1);
			push(p, &stack, e[i]);
		}
	}
	TG_VEC_FREE(&stack);
}

/* Marks what must outlive the schedule: nodes referenced from outside
 * and everything they will read later.  A computed base is kept but
 * not walked through: it drops its sources when it runs. */
static void mark_kept(plan *p, tg_lazy *const *outs, size_t n)
{
	node_vec stack = { 0 };
	tg_lazy *e[4];
	size_t i, ne;

	for (i = 0; i < n; i++)
		push(p, &stack, tg_lazy_base(outs[i]));
	for (i = 0; i < p->nodes.n; i++) {
		tg_lazy *x = p->nodes.v[i];

		if (atomic_load_explicit(&x->refs, memory_order_relaxed) >
		    count_of(&p->inrefs, x))
			push(p, &stack, x);
	}
	while (stack.n && !p->status) {
		tg_lazy *x = stack.v[--stack.n];

		if (tg_ptrmap_has(&p->keep, x) ||
		    (x->kind == TG_LZ_BUFFER && !x->base))
			continue;
		if (tg_ptrmap_put(&p->keep, x, x) < 0)
			p->status = TG_ENOMEM;
		if (tg_ptrmap_has(&p->computed, x))
			continue;
		ne = edges(x, e);
		for (i = 0; i < ne; i++)
			push(p, &stack, e[i]);
	}
	TG_VEC_FREE(&stack);
}

typedef struct kept_ctx {
	plan *p;
	tg_lazy *const *outs;
	size_t n;
} kept_ctx;

/* Under the lazy lock, so no count changes between the reading and
 * the hiding: marks what is kept, then hides the rest, which only this
 * graph can reach from now on. */
static int mark_and_hide(void *ctx)
{
	kept_ctx *c = ctx;
	size_t i;

	mark_kept(c->p, c->outs, c->n);
	if (c->p->status)
		return c->p->status;
	for (i = 0; i < c->p->nodes.n; i++)
		if (!tg_ptrmap_has(&c->p->keep, c->p->nodes.v[i]))
			tg_lazy_hide_locked(c->p->nodes.v[i]);
	return 0;
}

static int plannable(const plan *p, const tg_lazy *b)
{
	/* an assign writes its target's memory, never another's; a DISK
	 * buffer is its file (and buffer views alias it) */
	return tg_ptrmap_has(&p->computed, b) && !tg_ptrmap_has(&p->keep, b) &&
	       b->kind != TG_LZ_ASSIGN && !tg_disk_is(b->dev);
}

/* Replaces buffer `old` by `nb` in items from `from` on and in b. */
static void swap_buffer(tg_schedule *s, size_t from, tg_lazy *b,
                        tg_buffer *old, tg_buffer *nb)
{
	size_t i, k;

	for (i = from; i < s->items.n; i++) {
		tg_sched_item *it = &s->items.v[i];

		for (k = 0; k < it->nbufs; k++)
			if (it->bufs[k] == old) {
				it->bufs[k] = tg_buffer_ref(nb);
				tg_buffer_unref(old);
			}
	}
	b->buf = tg_buffer_ref(nb);
	tg_buffer_unref(old);
}

/* A free buffer like b's, taken out of the pool; NULL when none. */
static tg_buffer *take(buf_vec *pool, const tg_buffer *like)
{
	size_t i;

	for (i = 0; i < pool->n; i++) {
		tg_buffer *c = pool->v[i];

		if (tg_buffer_dev(c) == tg_buffer_dev(like) &&
		    tg_buffer_dtype(c) == tg_buffer_dtype(like) &&
		    tg_buffer_count(c) == tg_buffer_count(like)) {
			pool->v[i] = pool->v[--pool->n];
			return c;
		}
	}
	return NULL;
}

static void assign(plan *p, tg_schedule *s)
{
	buf_vec pool = { 0 };
	tg_ptrmap internal = { 0 }; /* buffers of plannable bases */
	size_t i, k;

	for (i = 0; i < s->items.n; i++) {
		tg_sched_item *it = &s->items.v[i];

		for (k = 0; k < it->nbufs; k++)
			if (tg_ptrmap_put(&p->last, it->bufs[k],
			                  (void *)(i + 1)) < 0)
				p->status = TG_ENOMEM;
		for (k = 0; k < it->nouts; k++)
			if (plannable(p, it->outs[k]) &&
			    tg_ptrmap_put(&internal, it->outs[k]->buf,
			                  it->outs[k]) < 0)
				p->status = TG_ENOMEM;
	}
	for (i = 0; i < s->items.n && !p->status; i++) {
		tg_sched_item *it = &s->items.v[i];

		for (k = 0; k < it->nouts; k++) {
			tg_lazy *b = it->outs[k];
			tg_buffer *old = b->buf, *nb;

			if (!plannable(p, b) || !(nb = take(&pool, old)))
				continue;
			/* nb now lives until b's last reader */
			if (tg_ptrmap_put(&p->last, nb,
			                  tg_ptrmap_get(&p->last, old)) < 0)
				p->status = TG_ENOMEM;
			swap_buffer(s, i, b, old, nb);
		}
		for (k = it->nouts; k < it->nbufs; k++) {
			tg_buffer *bf = it->bufs[k];

			if (count_of(&p->last, bf) != i + 1 ||
			    !tg_ptrmap_has(&internal, bf))
				continue;
			/* released once, even when read twice here */
			if (tg_ptrmap_put(&p->last, bf, NULL) < 0 ||
			    TG_VEC_PUSH(&pool, bf))
				p->status = TG_ENOMEM;
		}
	}
	TG_VEC_FREE(&pool);
	tg_ptrmap_free(&internal);
}

int tg_memory_plan(tg_schedule *s, tg_lazy *const *outs, size_t n)
{
	plan p;
	size_t i, k;

	memset(&p, 0, sizeof p);
	for (i = 0; i < s->items.n; i++)
		for (k = 0; k < s->items.v[i].nouts; k++) {
			tg_lazy *b = s->items.v[i].outs[k];

			if (tg_ptrmap_put(&p.computed, b, b) < 0)
				p.status = TG_ENOMEM;
			/* the item's own reference */
			bump(&p, &p.inrefs, b, 1);
		}
	collect(&p, outs, n);
	if (!p.status) {
		kept_ctx c = { &p, outs, n };

		tg_lazy_locked(mark_and_hide, &c);
	}
	if (!p.status)
		assign(&p, s);
	TG_VEC_FREE(&p.nodes);
	tg_ptrmap_free(&p.seen);
	tg_ptrmap_free(&p.inrefs);
	tg_ptrmap_free(&p.computed);
	tg_ptrmap_free(&p.keep);
	tg_ptrmap_free(&p.last);
	return p.status == TG_ENOMEM ? tg_error_oom("memory plan") : p.status;
}

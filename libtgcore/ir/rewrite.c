/*
 * rewrite.c - graph_rewrite: rewrites a graph bottom-up to a fixed point
 * with an explicit stack, so that a deep chain (a long sum of index
 * terms) cannot overflow the C stack.  Results are memoized per node id.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct frame {
	tg_uop *x;        /* the node being rewritten */
	tg_uop *pending;  /* its replacement, being rewritten in turn */
	int stage;
} frame;

typedef struct rw {
	tg_ir *ir;
	const tg_ruleset *rs;
	void *ctx;
	tg_uop **done;          /* by id: the final form, once known */
	unsigned char *busy;    /* by id: being rewritten now */
	size_t cap;
	TG_VEC(frame) stack;
} rw;

/* Grows the per-id arrays to cover every node interned so far. */
static int cover(rw *w)
{
	size_t n = tg_ir_count(w->ir), cap = w->cap ? w->cap : 256;
	tg_uop **d;
	unsigned char *b;

	if (n <= w->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	if (!(d = realloc(w->done, cap * sizeof *d)))
		return -1;
	w->done = d;
	if (!(b = realloc(w->busy, cap)))
		return -1;
	w->busy = b;
	memset(d + w->cap, 0, (cap - w->cap) * sizeof *d);
	memset(b + w->cap, 0, cap - w->cap);
	w->cap = cap;
	return 0;
}

static int push(rw *w, tg_uop *x)
{
	return TG_VEC_PUSH(&w->stack, ((frame){ x, NULL, 0 }));
}

static void finish(rw *w, tg_uop *x, tg_uop *result)
{
	w->done[x->id] = result;
	w->busy[x->id] = 0;
	w->stack.n--;
}

/* Stage 0: queue the sources that are not rewritten yet. */
static int visit_sources(rw *w, frame *f)
{
	tg_uop *x = f->x;
	uint32_t i;

	f->stage = 1;
	w->busy[x->id] = 1;   /* in progress; merely queued nodes are not */
	for (i = x->nsrc; i-- > 0;) {
		if (!w->done[x->src[i]->id] && push(w, x->src[i]))
			return -1;
	}
	return 0;
}

/* Stage 1: rebuild x over its rewritten sources, then apply the rules;
 * a replacement is rewritten before it becomes x's result. */
static int apply(rw *w, size_t top)
{
	tg_uop *x = w->stack.v[top].x, *src[64], **s = src, *found, *r;
	uint32_t i;

	if (x->nsrc > 64 && !(s = malloc(x->nsrc * sizeof *s)))
		return -1;
	for (i = 0; i < x->nsrc; i++)
		s[i] = w->done[x->src[i]->id];
	found = tg_uop_replace_src(w->ir, x, s, x->nsrc);
	if (s != src)
		free(s);
	if (!found || cover(w))
		return -1;
	if (found != x && w->done[found->id]) {
		finish(w, x, w->done[found->id]);
		return 0;
	}
	r = tg_rules_apply(w->rs, w->ir, found, w->ctx);
	if (!r || cover(w)) {
		if (tg_ir_status(w->ir))
			return -1;
		w->done[found->id] = found;
		finish(w, x, found);
		return 0;
	}
	if (w->done[r->id]) {
		finish(w, x, w->done[r->id]);
		return 0;
	}
	if (w->busy[r->id]) {
		tg_ir_fail(w->ir, TG_EINTERNAL, "rewrite (%s): rules cycle "
		           "through node %%%u", w->rs->name, (unsigned)r->id);
		return -1;
	}
	w->stack.v[top].stage = 2;
	w->stack.v[top].pending = r;
	return push(w, r);
}

static int step(rw *w)
{
	size_t top = w->stack.n - 1;
	frame *f = &w->stack.v[top];

	if (f->stage == 2) {
		finish(w, f->x, w->done[f->pending->id]);
		return 0;
	}
	if (w->done[f->x->id]) {   /* queued twice; done the first time */
		w->stack.n--;
		return 0;
	}
	if (f->stage == 0)
		return visit_sources(w, f);
	return apply(w, top);
}

tg_uop *tg_rewrite(tg_ir *ir, tg_uop *root, const tg_ruleset *rs,
                   void *ctx)
{
	rw w = { .ir = ir, .rs = rs, .ctx = ctx };
	tg_uop *out = NULL;
	int err;

	if (!root)
		return NULL;
	err = cover(&w) || push(&w, root);
	while (!err && w.stack.n)
		err = step(&w);
	if (!err)
		out = w.done[root->id];
	else if (!tg_ir_status(ir))
		tg_ir_fail(ir, TG_ENOMEM, "rewrite (%s): out of host memory",
		           rs->name);
	free(w.done);
	free(w.busy);
	TG_VEC_FREE(&w.stack);
	return tg_ir_status(ir) ? NULL : out;
}

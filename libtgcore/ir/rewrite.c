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

/* What a rewrite knows of one node. */
typedef struct memo {
	tg_uop *done;     /* the final form, once known */
	unsigned char busy; /* being rewritten now (not merely queued) */
} memo;

/* The memo is paged by id: rule callbacks start small nested rewrites
 * (a builder simplifying its result) inside large contexts, and an
 * array over every id would make each of them cost the whole context. */
enum { PAGE_BITS = 9, PAGE = 1 << PAGE_BITS };

typedef struct rw {
	tg_ir *ir;
	const tg_ruleset *rs;
	void *ctx;
	memo **pages;
	size_t npages;
	TG_VEC(frame) stack;
} rw;

/* The entry of u, or NULL when its page was never touched. */
static memo *peek(const rw *w, const tg_uop *u)
{
	size_t p = u->id >> PAGE_BITS;

	if (p >= w->npages || !w->pages[p])
		return NULL;
	return &w->pages[p][u->id & (PAGE - 1)];
}

static tg_uop *done(const rw *w, const tg_uop *u)
{
	memo *m = peek(w, u);

	return m ? m->done : NULL;
}

/* The entry of u, allocating its page; NULL on OOM. */
static memo *touch(rw *w, const tg_uop *u)
{
	size_t p = u->id >> PAGE_BITS, n = w->npages ? w->npages : 8;
	memo **pages;

	if (p >= w->npages) {
		while (n <= p)
			n *= 2;
		if (!(pages = realloc(w->pages, n * sizeof *pages)))
			return NULL;
		memset(pages + w->npages, 0,
		       (n - w->npages) * sizeof *pages);
		w->pages = pages;
		w->npages = n;
	}
	if (!w->pages[p] && !(w->pages[p] = calloc(PAGE, sizeof(memo))))
		return NULL;
	return &w->pages[p][u->id & (PAGE - 1)];
}

static int push(rw *w, tg_uop *x)
{
	return TG_VEC_PUSH(&w->stack, ((frame){ x, NULL, 0 }));
}

static int finish(rw *w, tg_uop *x, tg_uop *result)
{
	memo *m = touch(w, x);

	if (!m)
		return -1;
	m->done = result;
	m->busy = 0;
	w->stack.n--;
	return 0;
}

/* Stage 0: queue the sources that are not rewritten yet. */
static int visit_sources(rw *w, frame *f)
{
	tg_uop *x = f->x;
	memo *m = touch(w, x);
	uint32_t i;

	if (!m)
		return -1;
	f->stage = 1;
	m->busy = 1;
	for (i = x->nsrc; i-- > 0;) {
		if (!done(w, x->src[i]) && push(w, x->src[i]))
			return -1;
	}
	return 0;
}

/* x over its rewritten sources (x itself when none changed). */
static tg_uop *rebuild(rw *w, tg_uop *x)
{
	tg_uop *src[64], **s = src, *found;
	uint32_t i;

	if (x->nsrc > 64 && !(s = malloc(x->nsrc * sizeof *s)))
		return NULL;
	for (i = 0; i < x->nsrc; i++)
		s[i] = done(w, x->src[i]);
	found = tg_uop_replace_src(w->ir, x, s, x->nsrc);
	if (s != src)
		free(s);
	return found;
}

/* Stage 1: rebuild x over its rewritten sources, then apply the rules;
 * a replacement is rewritten before it becomes x's result. */
static int apply(rw *w, size_t top)
{
	tg_uop *x = w->stack.v[top].x, *found = rebuild(w, x), *r;
	memo *m;

	if (!found)
		return -1;
	if (found != x && done(w, found))
		return finish(w, x, done(w, found));
	r = tg_rules_apply(w->rs, w->ir, found, w->ctx);
	if (!r) {
		if (tg_ir_status(w->ir) || !(m = touch(w, found)))
			return -1;
		m->done = found;
		return finish(w, x, found);
	}
	if (done(w, r))
		return finish(w, x, done(w, r));
	if ((m = peek(w, r)) && m->busy) {
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

	if (f->stage == 2)
		return finish(w, f->x, done(w, f->pending));
	if (done(w, f->x)) {   /* queued twice; done the first time */
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
	size_t i;
	int err;

	if (!root)
		return NULL;
	err = push(&w, root);
	while (!err && w.stack.n)
		err = step(&w);
	if (!err)
		out = done(&w, root);
	else if (!tg_ir_status(ir))
		tg_ir_fail(ir, TG_ENOMEM, "rewrite (%s): out of host memory",
		           rs->name);
	for (i = 0; i < w.npages; i++)
		free(w.pages[i]);
	free(w.pages);
	TG_VEC_FREE(&w.stack);
	return tg_ir_status(ir) ? NULL : out;
}

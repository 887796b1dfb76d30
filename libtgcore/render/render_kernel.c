/*
 * render/render_kernel.c - one kernel rendered (tinygrad's
 * CStyleLanguage.render): its parameters (buffers by number, variables
 * sorted by name), the walk over its linearized nodes (tg_rc_node,
 * render_c.c), then the dialect's wrapper around the body
 * (tg_cdialect_wrap, dialect.c).  It owns the render's state from
 * start to end.  Separate from the walker, which renders one node at a
 * time and never sees the kernel whole.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"

static int cmp_param(const void *a, const void *b)
{
	const tg_cparam *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Buffers by number ("data0", ...) and variables sorted by name, for
 * the signature. */
static int collect_params(rc_state *st, tg_uop *const *lin, size_t n,
                          tg_cparam *bufs, char (*bnames)[16],
                          tg_cparam *vars)
{
	for (size_t i = 0; i < n; i++) {
		tg_uop *u = lin[i];
		if (u->op == TG_DEFINE_GLOBAL) {
			int64_t b = u->arg.v.i;
			if (b < 0 || (size_t)b >= n || b >= 64)
				return tg_rc_fail(st, "render: buffer number "
				                  "out of %s", "range");
			if ((size_t)b + 1 > st->k.nbufs)
				st->k.nbufs = (size_t)b + 1;
			snprintf(bnames[b], 16, "data%" PRId64, b);
			bufs[b].name = bnames[b];
			bufs[b].kind = tg_type_scalar(tg_type_deref(u->dtype));
			bufs[b].written = u->arg.a != 0;
			if (!tg_rstate_type(st, bufs[b].kind))
				return st->err;
			st->k.stored_used |= 1u << bufs[b].kind;
			tg_rc_set_name(st, u, bnames[b]);
		} else if (u->op == TG_DEFINE_VAR) {
			vars[st->k.nvars].name = u->arg.name ? u->arg.name : "";
			vars[st->k.nvars].kind = TG_INDEX;
			st->k.nvars++;
			tg_rc_set_name(st, u, u->arg.name ? u->arg.name : "");
		}
	}
	for (size_t b = 0; b < st->k.nbufs; b++)
		if (!bufs[b].name)
			return tg_rc_fail(st, "render: buffer numbers have "
			                  "a %s", "gap");
	qsort(vars, st->k.nvars, sizeof *vars, cmp_param);
	st->k.bufs = bufs;
	st->k.vars = vars;
	return st->err;
}

/* The body: every node in order, at the dialect's depth; the loops
 * and gates must close.  The render's status. */
static int walk(rc_state *st, tg_uop *const *lin, size_t n)
{
	st->depth = st->d->body_depth;
	for (size_t i = 0; i < n && !st->err; i++)
		tg_rc_node(st, lin[i]);
	if (!st->err && st->depth != st->d->body_depth)
		tg_rc_fail(st, "render: %s", "unbalanced RANGE/ENDRANGE");
	return st->err;
}

/* What the render's state owns: the body, the names, the scratch of
 * expressions, the locals. */
static void state_release(rc_state *st)
{
	tg_strbuf_release(&st->body);
	if (st->names)
		for (uint32_t i = 0; i <= st->maxid; i++)
			free(st->names[i]);
	free(st->names);
	free(st->x);
	TG_VEC_FREE(&st->locals);
}

char *tg_render(const struct tg_renderer_caps *caps, const char *name,
                const size_t global[3], tg_uop *const *lin, size_t n)
{
	return tg_render_blocked(caps, name, global, 0, lin, n);
}

char *tg_render_blocked(const struct tg_renderer_caps *caps,
                        const char *name, const size_t global[3],
                        size_t block, tg_uop *const *lin, size_t n)
{
	rc_state st;
	tg_cparam *bufs = NULL, *vars = NULL;
	char (*bnames)[16] = NULL;
	char *body = NULL, *res = NULL;

	memset(&st, 0, sizeof st);
	if (!(st.d = tg_cdialect_get(caps->dialect))) {
		tg_error(TG_EUNSUPPORTED, "render: kernel %s: no renderer for "
		         "dialect %d", name, caps->dialect);
		return NULL;
	}
	tg_strbuf_init(&st.body);
	for (size_t i = 0; i < n; i++)
		if (lin[i]->id > st.maxid)
			st.maxid = lin[i]->id;
	st.names = calloc((size_t)st.maxid + 1, sizeof *st.names);
	st.x = malloc(sizeof *st.x);
	bufs = calloc(n + 1, sizeof *bufs);
	vars = calloc(n + 1, sizeof *vars);
	bnames = calloc(n + 1, sizeof *bnames);
	if (!st.names || !st.x || !bufs || !vars || !bnames) {
		tg_error_oom("render");
		goto done;
	}
	st.k.name = name;
	memcpy(st.k.global, global, sizeof st.k.global);
	st.k.lblock = caps->dialect == TG_DIALECT_C && block > 1 &&
	              block < global[0] && global[0] % block == 0 ? block : 0;
	if (collect_params(&st, lin, n, bufs, bnames, vars))
		goto done;
	if (walk(&st, lin, n))
		goto done;
	if (!(body = tg_strbuf_finish(&st.body))) {
		tg_error_oom("render");
		goto done;
	}
	st.k.locals = st.locals.v;
	st.k.nlocals = st.locals.n;
	res = tg_cdialect_wrap(st.d, &st.k, body);
done:
	free(body);
	state_release(&st);
	free(bufs);
	free(vars);
	free(bnames);
	return res;
}

char *tg_render_c(const char *name, tg_uop *const *lin, size_t n)
{
	static const struct tg_renderer_caps c = {
		.struct_size = sizeof c, .dialect = TG_DIALECT_C,
	};
	static const size_t g[3] = { 1, 1, 1 };

	return tg_render(&c, name, g, lin, n);
}

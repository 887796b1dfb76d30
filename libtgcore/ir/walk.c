/*
 * walk.c - whole-graph walks: topological order, import into another
 * context, and the text dump used by DEBUG and the tests.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct frame {
	const tg_uop *u;
	uint32_t next;  /* next source to visit */
} frame;

/* Sources are interned before their users, so every node under root has
 * an id no larger than root's: one bitmap of root->id + 1 bits covers
 * the walk. */
tg_uop **tg_uop_toposort(const tg_uop *root, size_t *n)
{
	size_t nbits = (size_t)root->id + 1;
	unsigned char *seen = calloc((nbits + 7) / 8, 1);
	TG_VEC(frame) stack = { 0 };
	TG_VEC(tg_uop *) out = { 0 };
	int err = !seen || TG_VEC_PUSH(&stack, ((frame){ root, 0 }));

	if (seen)
		seen[root->id / 8] |= (unsigned char)(1u << (root->id % 8));
	while (!err && stack.n) {
		frame *f = &stack.v[stack.n - 1];
		const tg_uop *s;

		if (f->next == f->u->nsrc) {
			err = TG_VEC_PUSH(&out, (tg_uop *)f->u);
			stack.n--;
			continue;
		}
		s = f->u->src[f->next++];
		if (seen[s->id / 8] & (1u << (s->id % 8)))
			continue;
		seen[s->id / 8] |= (unsigned char)(1u << (s->id % 8));
		err = TG_VEC_PUSH(&stack, ((frame){ s, 0 }));
	}
	free(seen);
	TG_VEC_FREE(&stack);
	if (err || TG_VEC_PUSH(&out, NULL)) {
		TG_VEC_FREE(&out);
		tg_error_oom("uop_toposort");
		return NULL;
	}
	*n = out.n - 1;
	return out.v;
}

tg_uop *tg_uop_import(tg_ir *ir, const tg_uop *u)
{
	tg_uop **order, **map, *src[64], **srcs, *r = NULL;
	size_t n, i, j;

	if (!u || !(order = tg_uop_toposort(u, &n)))
		return tg_ir_fail(ir, u ? TG_ENOMEM : TG_EINVAL,
		                  "uop_import: %s", u ? "out of host memory"
		                                      : "NULL node");
	map = calloc((size_t)u->id + 1, sizeof *map);
	for (i = 0; map && i < n; i++) {
		const tg_uop *x = order[i];

		srcs = x->nsrc <= 64 ? src : malloc(x->nsrc * sizeof *srcs);
		if (!srcs)
			break;
		for (j = 0; j < x->nsrc; j++)
			srcs[j] = map[x->src[j]->id];
		r = map[x->id] = tg_uop_new(ir, x->op, x->dtype, srcs,
		                            x->nsrc, &x->arg);
		if (srcs != src)
			free(srcs);
		if (!r)
			break;
	}
	if (i < n && tg_ir_status(ir) == TG_OK)
		tg_ir_fail(ir, TG_ENOMEM, "uop_import: out of host memory");
	free(map);
	free(order);
	return i < n ? NULL : r;
}

/* The argument as text, only the fields the op uses. */
static void format_arg(tg_strbuf *sb, const tg_uop *u)
{
	char buf[64];

	switch (u->op) {
	case TG_CONST:
		tg_strbuf_add(sb, tg_scalar_format(u->arg.v,
		              tg_type_scalar(u->dtype), buf, sizeof buf));
		return;
	case TG_DEFINE_VAR:
		tg_strbuf_addf(sb, "%s[%lld,%lld]", u->arg.name,
		               (long long)u->arg.a, (long long)u->arg.b);
		return;
	default:
		break;
	}
	if (u->arg.name)
		tg_strbuf_addf(sb, "%s ", u->arg.name);
	if (u->arg.v.i || u->arg.a || u->arg.b)
		tg_strbuf_addf(sb, "(%lld,%lld,%lld)", (long long)u->arg.v.i,
		               (long long)u->arg.a, (long long)u->arg.b);
}

char *tg_uop_dump(const tg_uop *root)
{
	tg_uop **order;
	tg_strbuf sb;
	size_t n, i, j;
	char tb[48], *d;

	if (!(order = tg_uop_toposort(root, &n)))
		return NULL;
	tg_strbuf_init(&sb);
	for (i = 0; i < n; i++) {
		const tg_uop *u = order[i];

		tg_strbuf_addf(&sb, "%4u %-13s %-10s ", (unsigned)u->id,
		               tg_op_name(u->op),
		               tg_type_format(u->dtype, tb, sizeof tb));
		format_arg(&sb, u);
		tg_strbuf_add(&sb, " (");
		for (j = 0; j < u->nsrc; j++)
			tg_strbuf_addf(&sb, "%s%u", j ? "," : "",
			               (unsigned)u->src[j]->id);
		tg_strbuf_add(&sb, ")\n");
	}
	free(order);
	if (!(d = tg_strbuf_finish(&sb)))
		tg_error_oom("uop_dump");
	return d;
}

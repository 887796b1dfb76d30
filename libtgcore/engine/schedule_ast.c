/*
 * engine/schedule_ast.c - one group of fused bases to a kernel AST
 * (tinygrad's _lower_lazybuffer and _recursive_lazyop, mid-2024):
 * each output is a STORE of its value through the kernel's full shape;
 * views compose their trackers into the reads, realized bases become
 * LOADs of kernel buffers (outputs first, then inputs in the order
 * they are first read), a reduce its REDUCE_AXIS.  ASTs are built in
 * the kernel context, which lives until tg_shutdown so that the method
 * cache keys on them by pointer; bound symbolic values are taken off
 * (unbind) so that one compiled kernel serves every value.  Separate
 * from the fusion rules (schedule.c), which only decide the groups,
 * and from the items (schedule_items.c), which hold the result.
 */
#include <stdlib.h>

#include "engine/engine.h"
#include "device/device.h"
#include "ir/ir.h"
#include "shape/shape.h"
#include "engine/schedule.h"

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

/* ------------------------------------------------------------ the kernel */

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

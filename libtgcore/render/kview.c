/*
 * render/kview.c - the linearized kernel as a plugin's own renderer
 * reads it (TG_DIALECT_CUSTOM; tg/plugin.h, struct tg_kernel_op).
 *
 * Codegen hands the linear list here instead of to render_c.c.  The
 * view copies each uop into the public form at once (op codes of the
 * ABI, not the core's enum; sources as positions in the list; the
 * argument decoded per op), so it owns everything it shows and outlives
 * the compile context the uops lived in.  The host table's kernel_info
 * and kernel_op (plugin/host.c) read it for the plugin.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "render/render.h"

struct tg_kview {
	struct tg_kernel_info info;  /* its strings point into the view */
	char *name;
	char **vars;
	struct tg_kernel_op *ops;
	char **names;  /* per op: its copy of the arg's name, or NULL */
};

/* The ABI's code of each op that may reach a renderer; 0: none. */
static const int kop_code[TG_NOPS] = {
	[TG_DEFINE_GLOBAL] = TG_KOP_DEFINE_GLOBAL,
	[TG_DEFINE_VAR] = TG_KOP_DEFINE_VAR,
	[TG_DEFINE_LOCAL] = TG_KOP_DEFINE_LOCAL,
	[TG_DEFINE_ACC] = TG_KOP_DEFINE_ACC,
	[TG_CONST] = TG_KOP_CONST, [TG_SPECIAL] = TG_KOP_SPECIAL,
	[TG_RANGE] = TG_KOP_RANGE, [TG_ENDRANGE] = TG_KOP_ENDRANGE,
	[TG_PHI] = TG_KOP_PHI, [TG_LOAD] = TG_KOP_LOAD,
	[TG_STORE] = TG_KOP_STORE, [TG_CAST] = TG_KOP_CAST,
	[TG_BITCAST] = TG_KOP_BITCAST, [TG_VECTORIZE] = TG_KOP_VECTORIZE,
	[TG_GEP] = TG_KOP_GEP, [TG_BARRIER] = TG_KOP_BARRIER,
	[TG_WMMA] = TG_KOP_WMMA,
	[TG_EXP2] = TG_KOP_EXP2, [TG_LOG2] = TG_KOP_LOG2,
	[TG_SIN] = TG_KOP_SIN, [TG_SQRT] = TG_KOP_SQRT,
	[TG_NEG] = TG_KOP_NEG, [TG_RECIP] = TG_KOP_RECIP,
	[TG_ADD] = TG_KOP_ADD, [TG_MUL] = TG_KOP_MUL,
	[TG_IDIV] = TG_KOP_IDIV, [TG_MAX] = TG_KOP_MAX,
	[TG_MOD] = TG_KOP_MOD, [TG_CMPLT] = TG_KOP_CMPLT,
	[TG_CMPNE] = TG_KOP_CMPNE, [TG_XOR] = TG_KOP_XOR,
	[TG_SHL] = TG_KOP_SHL, [TG_SHR] = TG_KOP_SHR,
	[TG_OR] = TG_KOP_OR, [TG_AND] = TG_KOP_AND,
	[TG_THREEFRY] = TG_KOP_THREEFRY, [TG_WHERE] = TG_KOP_WHERE,
	[TG_MULACC] = TG_KOP_MULACC,
};

void tg_kview_free(struct tg_kview *v)
{
	if (!v)
		return;
	for (size_t i = 0; v->names && i < v->info.nops; i++)
		free(v->names[i]);
	for (size_t i = 0; v->vars && i < v->info.nvars; i++)
		free(v->vars[i]);
	free(v->names);
	free(v->vars);
	free(v->ops);
	free(v->name);
	free(v);
}

/* The argument, as tg/plugin.h documents it per op. */
static void kop_arg(const tg_uop *u, struct tg_kernel_op *o)
{
	unsigned s = tg_type_scalar(u->dtype);

	o->a = u->arg.a;
	o->b = u->arg.b;
	if (u->op != TG_CONST) {
		o->i = u->arg.v.i;
		return;
	}
	if (s == TG_FLOAT16 || s == TG_BFLOAT16 || s == TG_FLOAT32 ||
	    s == TG_FLOAT64)
		o->f = u->arg.v.f;
	else if (s == TG_UINT64)
		o->u = u->arg.v.u;
	else
		o->u = (uint64_t)(o->i = u->arg.v.i);
}

static int kop_type(tg_type t)
{
	unsigned s = tg_type_scalar(t);

	return s == TG_INDEX ? TG_KTYPE_INDEX : s == TG_VOID ? TG_KTYPE_VOID
	                                                     : (int)s;
}

/* Op i of the view from uop u; positions of its sources from `pos`. */
static int kop_fill(struct tg_kview *v, size_t i, const tg_uop *u,
                    const tg_ptrmap *pos)
{
	struct tg_kernel_op *o = &v->ops[i];
	tg_type t = tg_type_is_ptr(u->dtype) ? tg_type_deref(u->dtype)
	                                     : u->dtype;

	if (u->op >= TG_NOPS || !kop_code[u->op])
		return tg_error(TG_EUNSUPPORTED, "kernel view: op %s has no "
		                "public code", tg_op_name(u->op));
	if (u->nsrc > TG_KOP_MAX_SRC)
		return tg_error(TG_EUNSUPPORTED, "kernel view: %s with %zu "
		                "sources (at most %d)", tg_op_name(u->op),
		                (size_t)u->nsrc, TG_KOP_MAX_SRC);
	*o = (struct tg_kernel_op){
		.struct_size = sizeof *o, .op = kop_code[u->op],
		.dtype = kop_type(t), .lanes = (int)tg_type_count(t),
		.space = (int)tg_type_space(u->dtype), .nsrc = u->nsrc,
		.vmin = u->vmin, .vmax = u->vmax,
	};
	kop_arg(u, o);
	for (size_t s = 0; s < u->nsrc; s++) {
		uintptr_t p = (uintptr_t)tg_ptrmap_get(pos, u->src[s]);
		if (!p)
			return tg_error(TG_EINVAL, "kernel view: %s reads a "
			                "node outside the list",
			                tg_op_name(u->op));
		o->src[s] = (uint32_t)(p - 1);
	}
	if (u->arg.name &&
	    !(o->name = v->names[i] = tg_strdup(u->arg.name, "kernel view")))
		return TG_ENOMEM;
	return TG_OK;
}

/* The kernel's facts from what codegen filled in ks. */
static int kview_info(struct tg_kview *v, const tg_ksrc *ks, size_t n)
{
	v->name = tg_strdup(ks->name, "kernel view");
	v->vars = calloc(ks->nvars + 1, sizeof *v->vars);
	if (!v->name || !v->vars)
		return tg_error_oom("kernel view");
	for (size_t i = 0; i < ks->nvars; i++)
		if (!(v->vars[i] = tg_strdup(ks->vars[i], "kernel view")))
			return TG_ENOMEM;
	v->info = (struct tg_kernel_info){
		.struct_size = sizeof v->info, .name = v->name, .nops = n,
		.nbufs = ks->nbufs, .outs = ks->outs, .nvars = ks->nvars,
		.vars = (const char *const *)v->vars,
	};
	memcpy(v->info.global, ks->global, sizeof v->info.global);
	memcpy(v->info.local, ks->local, sizeof v->info.local);
	return TG_OK;
}

struct tg_kview *tg_kview_new(tg_uop *const *lin, size_t n,
                              const tg_ksrc *ks)
{
	struct tg_kview *v = calloc(1, sizeof *v);
	tg_ptrmap pos = { 0 };
	int rc = v ? TG_OK : tg_error_oom("kernel view");

	if (!rc && (!(v->ops = calloc(n + 1, sizeof *v->ops)) ||
	            !(v->names = calloc(n + 1, sizeof *v->names))))
		rc = tg_error_oom("kernel view");
	if (!rc)
		rc = kview_info(v, ks, n);
	/* positions first: a DEFINE_ACC names loops that open after it */
	for (size_t i = 0; !rc && i < n; i++)
		if (tg_ptrmap_put(&pos, lin[i], (void *)(uintptr_t)(i + 1)) < 0)
			rc = tg_error_oom("kernel view");
	for (size_t i = 0; !rc && i < n; i++)
		rc = kop_fill(v, i, lin[i], &pos);
	tg_ptrmap_free(&pos);
	if (rc) {
		tg_kview_free(v);
		return NULL;
	}
	return v;
}

/* Copies what fits of `src` (a public struct of `size` bytes whose
 * first field is struct_size) into `dst`, sized by its struct_size. */
static int copy_sized(void *dst, const void *src, size_t size,
                      const char *what)
{
	size_t want;

	if (!dst)
		return tg_error(TG_EINVAL, "%s: out is NULL", what);
	memcpy(&want, dst, sizeof want);
	if (want < sizeof want)
		return tg_error(TG_EINVAL, "%s: out->struct_size %zu is too "
		                "small", what, want);
	memcpy((char *)dst + sizeof want, (const char *)src + sizeof want,
	       (want < size ? want : size) - sizeof want);
	return TG_OK;
}

int tg_kview_info(const struct tg_kview *v, struct tg_kernel_info *out)
{
	if (!v)
		return tg_error(TG_EINVAL, "kernel_info: the kernel is NULL");
	return copy_sized(out, &v->info, sizeof v->info, "kernel_info");
}

int tg_kview_op(const struct tg_kview *v, size_t i, struct tg_kernel_op *out)
{
	if (!v)
		return tg_error(TG_EINVAL, "kernel_op: the kernel is NULL");
	if (i >= v->info.nops)
		return tg_error(TG_EINVAL, "kernel_op: op %zu of a kernel of "
		                "%zu ops", i, v->info.nops);
	return copy_sized(out, &v->ops[i], sizeof v->ops[i], "kernel_op");
}

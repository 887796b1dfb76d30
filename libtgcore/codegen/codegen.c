/*
 * codegen/codegen.c - the kernel compiler's entry point: plan the
 * kernel's axes, apply the hand-coded opts, lower, expand the upcasts,
 * make accumulators, collapse loops, fold vector loads and stores,
 * linearize, render.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"
#include "render/render.h"

void tg_ksrc_free(tg_ksrc *ks)
{
	if (!ks)
		return;
	free(ks->name);
	free(ks->src);
	if (ks->vars)
		for (size_t i = 0; i < ks->nvars; i++)
			free(ks->vars[i]);
	free(ks->vars);
	free(ks->opts);
	free(ks->ast_text);
	free(ks->linear_text);
	tg_kview_free(ks->view);
	memset(ks, 0, sizeof *ks);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the program's variables, sorted: the order the renderer
 * declares them in and launches pass their values in. */
static int collect_vars(tg_uop *const *lin, size_t n, tg_ksrc *out)
{
	size_t nv = 0;

	for (size_t i = 0; i < n; i++)
		nv += lin[i]->op == TG_DEFINE_VAR;
	out->nvars = 0;
	out->vars = NULL;
	if (!nv)
		return TG_OK;
	if (!(out->vars = calloc(nv, sizeof *out->vars)))
		return tg_error_oom("codegen");
	for (size_t i = 0; i < n; i++)
		if (lin[i]->op == TG_DEFINE_VAR &&
		    !(out->vars[out->nvars++] =
		              tg_strdup(lin[i]->arg.name, "codegen")))
			return TG_ENOMEM;
	qsort(out->vars, nv, sizeof *out->vars, cmp_name);
	return TG_OK;
}

/* One line per linearized uop: "%12 LOAD float32 %3 %11". */
static char *linear_text(tg_uop *const *lin, size_t n)
{
	tg_strbuf sb;
	char tb[64], vb[64];

	tg_strbuf_init(&sb);
	for (size_t i = 0; i < n; i++) {
		const tg_uop *u = lin[i];
		tg_strbuf_addf(&sb, "%%%u %s %s", u->id, tg_op_name(u->op),
		               tg_type_format(u->dtype, tb, sizeof tb));
		if (u->op == TG_CONST)
			tg_strbuf_addf(&sb, " %s",
			               tg_scalar_format(u->arg.v,
			                                tg_type_scalar(u->dtype), vb,
			                                sizeof vb));
		else if (u->arg.name)
			tg_strbuf_addf(&sb, " %s", u->arg.name);
		else if (u->op == TG_DEFINE_GLOBAL || u->op == TG_RANGE ||
		         u->op == TG_DEFINE_ACC)
			tg_strbuf_addf(&sb, " %lld", (long long)u->arg.v.i);
		for (uint32_t k = 0; k < u->nsrc; k++)
			tg_strbuf_addf(&sb, " %%%u", u->src[k]->id);
		tg_strbuf_add(&sb, "\n");
	}
	return tg_strbuf_finish(&sb);
}

static int check_dtypes(const tg_kernel *k,
                        const struct tg_renderer_caps *caps,
                        const char *name)
{
	for (size_t i = 0; i < k->n; i++) {
		const tg_uop *a = k->order[i];
		unsigned dt = tg_type_scalar(a->dtype);
		if (a->op == TG_SINK || a->op == TG_STORE)
			continue;
		if (dt >= TG_NDTYPES || !(caps->dtype_mask & (1u << dt)))
			return tg_error(TG_EUNSUPPORTED,
			                "codegen: %s is not supported by this device "
			                "(kernel %s)", tg_dtype_name(dt), name);
	}
	return TG_OK;
}

/* Vector loads and stores where the device has vector types (caps'
 * max_upcast, the widest; 1 for none) and opts are on.  C gathers a
 * vector load lane by lane and OpenCL's vloadN needs only the element's
 * alignment, so runs need not be aligned; CUDA's vector loads would. */
static int vectorize(tg_ir *ir, tg_uop **sink,
                     const struct tg_renderer_caps *caps, int noopt)
{
	if (noopt || caps->max_upcast < 2)
		return TG_OK;
	*sink = tg_vectorize_mem(ir, *sink, (unsigned)caps->max_upcast,
	                         caps->dialect == TG_DIALECT_CUDA,
	                         caps->buffer_align);
	if (!*sink)
		return tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
	return TG_OK;
}

/* What every pass ends with: the graph dumped under DEBUG>=6 and, with
 * VERIFY, checked, so a broken invariant names the pass that broke
 * it. */
static int after_pass(const tg_settings *s, const tg_uop *sink,
                      const char *pass, const char *kname)
{
	char *d;

	if (s->debug >= 6 && (d = tg_uop_dump(sink))) {
		fprintf(stderr, "--- %s: after %s\n%s", kname, pass, d);
		free(d);
	}
	return s->verify ? tg_uop_verify(sink, pass) : TG_OK;
}

/* A rewrite pass's result into *sink, or its error. */
static int took(tg_ir *ir, tg_uop **sink, tg_uop *r)
{
	if (!r)
		return tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
	*sink = r;
	return TG_OK;
}

/* Every buffer of the kernel stays a parameter of the program, even
 * one whose loads all folded away (a view masked to nothing): the
 * launch passes the kernel's buffers by number, and a device that
 * checks the count (OpenCL) refuses a program with fewer.  The missing
 * DEFINE_GLOBALs go first, typed as the AST's access. */
static int keep_every_buffer(tg_ir *ir, const tg_kernel *k, size_t nbufs,
                             tg_uop ***lin, size_t *nlin)
{
	uint64_t have = 0;
	size_t nmiss = 0, j = 0;
	tg_uop **out;

	for (size_t i = 0; i < *nlin; i++)
		if ((*lin)[i]->op == TG_DEFINE_GLOBAL)
			have |= 1ull << ((*lin)[i]->arg.v.i & 63);
	for (size_t b = 0; b < nbufs; b++)
		nmiss += !(have >> b & 1);
	if (!nmiss)
		return TG_OK;
	if (!(out = malloc((*nlin + nmiss) * sizeof *out)))
		return tg_error_oom("codegen");
	for (size_t i = 0; i < k->n && j < nmiss; i++) {
		const tg_uop *a = k->order[i];
		int b = a->op == TG_LOAD || a->op == TG_STORE ? tg_ast_buf(a)
		                                              : -1;
		tg_arg arg;

		if (b < 0 || (size_t)b >= nbufs || have >> b & 1)
			continue;
		memset(&arg, 0, sizeof arg);
		arg.v.i = b;
		arg.a = a->op == TG_STORE;
		out[j] = tg_uop0(ir, TG_DEFINE_GLOBAL, tg_type_ptr(
			tg_type_scalar(a->op == TG_STORE ? a->src[2]->dtype
			                                 : a->dtype),
			TG_AS_GLOBAL), &arg);
		if (!out[j++]) {
			free(out);
			return tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
		}
		have |= 1ull << b;
	}
	memcpy(out + j, *lin, *nlin * sizeof *out);
	free(*lin);
	*lin = out;
	*nlin += j;
	return TG_OK;
}

/* Lowering, expansion, accumulators, loop collapse, vector folding and
 * linearization, each followed by its checks. */
static int passes(const tg_settings *s, const tg_kernel *k,
                  const tg_kplan *plan, int noopt, tg_uop ***lin,
                  size_t *nlin)
{
	const struct tg_renderer_caps *caps = plan->caps;
	const char *kn = plan->name;
	tg_ir *ir = k->ir;
	tg_uop *ls;
	int rc;

	if ((rc = tg_lower(k, plan, &ls)) ||
	    (rc = after_pass(s, ls, "lower", kn)) ||
	    (rc = took(ir, &ls, tg_guard_intdiv(ir, ls))) ||
	    (rc = after_pass(s, ls, "intdiv", kn)) ||
	    (rc = took(ir, &ls, tg_transcendental(
	               ir, ls, caps->needs_transcendental_fallback,
	               caps->dialect == TG_DIALECT_GLSL))) ||
	    (rc = after_pass(s, ls, "transcendental", kn)) ||
	    (rc = took(ir, &ls, tg_expand_upcasts(ir, ls, plan))) ||
	    (rc = after_pass(s, ls, "expand", kn)) ||
	    (rc = took(ir, &ls, tg_lower_reduces(ir, ls, plan))) ||
	    (rc = after_pass(s, ls, "reduce", kn)) ||
	    (rc = took(ir, &ls, tg_collapse_loops(ir, ls))) ||
	    (rc = after_pass(s, ls, "collapse", kn)) ||
	    (rc = took(ir, &ls, tg_fuse_mulacc(ir, ls))) ||
	    (rc = after_pass(s, ls, "mulacc", kn)) ||
	    (rc = vectorize(ir, &ls, caps, noopt)) ||
	    (rc = after_pass(s, ls, "vectorize", kn)) ||
	    (rc = tg_linearize(ir, ls, lin, nlin)) ||
	    (rc = keep_every_buffer(ir, k, plan->nbufs, lin, nlin)))
		return rc;
	return s->verify ? tg_linear_verify(*lin, *nlin, "linearize") : TG_OK;
}

/* Applies `opts` in order, or the hand-coded ones when opts is NULL. */
static int apply_opts(tg_kplan *plan, const tg_kernel *k,
                      const tg_opt *opts, size_t nopts)
{
	int rc;

	if (!opts)
		return tg_kplan_hand_opt(plan, k);
	for (size_t i = 0; i < nopts; i++)
		if ((rc = tg_kplan_apply_opt(plan, opts[i])))
			return tg_error_prefix("codegen: kernel %s", plan->name);
	return TG_OK;
}

static int codegen(const tg_uop *sink, const struct tg_renderer_caps *caps,
                   const tg_settings *set, const tg_opt *opts,
                   size_t nopts, tg_ksrc *out);

/* NULL settings: the defaults (opts on, no checks, no dumps). */
static const tg_settings *or_defaults(const tg_settings *set)
{
	static const tg_settings defaults = { .tc = 1 };

	return set ? set : &defaults;
}

/* What a plan takes from the device and the settings before its opts. */
static void plan_setup(tg_kplan *plan, const struct tg_renderer_caps *caps,
                       const tg_settings *set)
{
	plan->caps = caps;
	plan->tc_use = set->tc != 0;
	plan->tc_opt = set->tc_opt;
}

int tg_codegen(const tg_uop *sink, const struct tg_renderer_caps *caps,
               const tg_settings *set, tg_ksrc *out)
{
	static const tg_opt none[1];

	set = or_defaults(set);
	return codegen(sink, caps, set, set->noopt ? none : NULL, 0, out);
}

int tg_codegen_opts(const tg_uop *sink, const struct tg_renderer_caps *caps,
                    const tg_settings *set, const tg_opt *opts,
                    size_t nopts, tg_ksrc *out)
{
	static const tg_opt none[1];

	return codegen(sink, caps, or_defaults(set), opts ? opts : none,
	               opts ? nopts : 0, out);
}

/* Estimated work and memory traffic (for DEBUG=2 lines), and the
 * launch geometry. */
static void estimates(const tg_kernel *k, const tg_kplan *plan,
                      tg_ksrc *out)
{
	double work = 1.0, bytes[64];
	size_t nalu = 0;

	for (size_t i = 0; i < plan->ndim; i++)
		work *= (double)plan->full[i];
	memset(bytes, 0, sizeof bytes);
	for (size_t i = 0; i < k->n; i++) {
		const tg_uop *a = k->order[i];
		int buf = a->op == TG_LOAD || a->op == TG_STORE ? tg_ast_buf(a)
		                                                : -1;
		/* a reduce adds (or maxes) once per element: a matmul's
		 * multiply-add is 2 flops, as tinygrad counts */
		if (tg_op_arity(a->op) || a->op == TG_REDUCE_AXIS)
			nalu++;
		if (buf < 0 || buf >= 64)
			continue;
		const tg_st *st = tg_kernel_st(k, a);
		int64_t sz = 0;
		if (tg_st_real_size(k->ir, st, &sz))
			sz = tg_st_size(st);
		double b = (double)sz * (double)tg_dtype_size(
			tg_type_scalar(a->op == TG_STORE ? a->src[2]->dtype
			                                 : a->dtype));
		if (b > bytes[buf])
			bytes[buf] = b;
	}
	out->flops = (double)nalu * work;
	for (size_t i = 0; i < plan->nbufs; i++)
		out->mem_bytes += bytes[i];
	for (int g = 0; g < 3; g++) {
		out->global[g] = plan->global[g] * plan->local_size[g];
		out->local[g] = plan->local_size[g];
	}
	out->nbufs = plan->nbufs;
	out->outs = plan->outs;
}

/* Opens sink's kernel in ir and plans its axes; refuses what caps
 * cannot take: a dialect without a renderer, over 64 buffers, a dtype. */
static int open_plan(tg_kernel *k, tg_ir *ir, const tg_uop *sink,
                     const struct tg_renderer_caps *caps,
                     const tg_settings *set, tg_kplan *plan)
{
	int rc;

	if ((rc = tg_kernel_open(k, ir, sink)) ||
	    (rc = after_pass(set, k->sink, "schedule", "kernel")))
		return rc;
	if ((rc = tg_lower_plan(k, plan))) {
		tg_error_prefix("codegen");
		return rc;
	}
	if (caps->dialect != TG_DIALECT_CUSTOM &&
	    !tg_cdialect_get(caps->dialect))
		return tg_error(TG_EUNSUPPORTED, "codegen: kernel %s: no "
		                "renderer for dialect %d", plan->name,
		                caps->dialect);
	if (plan->nbufs > 64)
		return tg_error(TG_EUNSUPPORTED, "codegen: kernel %s: %zu "
		                "buffers", plan->name, plan->nbufs);
	return check_dtypes(k, caps, plan->name);
}

/* The opts (`opts`, or the hand-coded ones when NULL), then the launch
 * and reduce blocks; the opts as text in opttext. */
static int optimize(tg_kplan *plan, const tg_kernel *k,
                    const struct tg_renderer_caps *caps,
                    const tg_settings *set, const tg_opt *opts,
                    size_t nopts, char *opttext, size_t n)
{
	int rc;

	plan_setup(plan, caps, set);
	if ((rc = apply_opts(plan, k, opts, nopts)))
		return rc;
	if (plan->nopts)
		tg_kplan_launch_block(plan, k);
	if (plan->nopts || set->reduce_passes)
		tg_kplan_reduce_block(plan, k, set->reduce_passes);
	tg_kplan_format_opts(plan, opttext, n);
	return TG_OK;
}

/* Fills `out` from the linearized kernel: estimates, variables, texts,
 * and the source, rendered here or left to the plugin as a kernel view
 * (TG_DIALECT_CUSTOM: tg_dev_render). */
static int emit(const tg_kernel *k, const tg_kplan *plan,
                const char *opttext, tg_uop **lin, size_t nlin,
                tg_ksrc *out)
{
	int rc;

	estimates(k, plan, out);
	if ((rc = collect_vars(lin, nlin, out)))
		return rc;
	out->name = tg_strdup(plan->name, "codegen");
	out->opts = tg_strdup(opttext, "codegen");
	out->ast_text = tg_ast_format(k->sink);
	out->linear_text = linear_text(lin, nlin);
	if (!out->name || !out->opts || !out->ast_text || !out->linear_text)
		return tg_error_oom("codegen");
	if (plan->caps->dialect == TG_DIALECT_CUSTOM) {
		if (!(out->view = tg_kview_new(lin, nlin, out)))
			return tg_error_prefix("codegen: kernel %s", plan->name);
		return TG_OK;
	}
	if (!(out->src = tg_render_blocked(plan->caps, plan->name,
	                                    out->global, plan->lblock, lin,
	                                    nlin))) {
		rc = tg_error_prefix("codegen: kernel %s", plan->name);
		return rc ? rc : TG_ENOMEM;
	}
	return TG_OK;
}

static int codegen(const tg_uop *sink, const struct tg_renderer_caps *caps,
                   const tg_settings *set, const tg_opt *opts,
                   size_t nopts, tg_ksrc *out)
{
	tg_kplan plan;
	tg_kernel k;
	tg_ir *ir;
	tg_uop **lin = NULL;
	size_t nlin = 0;
	char opttext[TG_MAX_OPTS * 24];
	int rc, noopt = opts && nopts == 0;

	memset(out, 0, sizeof *out);
	memset(&k, 0, sizeof k);
	if (!sink || !caps)
		return tg_error(TG_EINVAL, "codegen: NULL argument");
	if (!(ir = tg_ir_new()))
		return TG_ENOMEM;
	if (!(rc = open_plan(&k, ir, sink, caps, set, &plan)) &&
	    !(rc = optimize(&plan, &k, caps, set, opts, nopts, opttext,
	                    sizeof opttext))) {
		if ((rc = passes(set, &k, &plan, noopt, &lin, &nlin)))
			tg_error_prefix("codegen: kernel %s", plan.name);
		else
			rc = emit(&k, &plan, opttext, lin, nlin, out);
	}
	if (rc)
		tg_ksrc_free(out);
	free(lin);
	tg_kernel_close(&k);
	tg_ir_free(ir);
	return rc;
}

/* The plan of sink for caps (its kernel opened in a context of its
 * own, closed again); opts applied as tg_codegen does (NULL: the
 * hand-coded ones). */
static int plan_of(const tg_uop *sink, const struct tg_renderer_caps *caps,
                   const tg_settings *set, const tg_opt *opts,
                   size_t nopts, tg_kplan *plan)
{
	tg_kernel k;
	tg_ir *ir;
	int rc;

	if (!sink || !caps)
		return tg_error(TG_EINVAL, "codegen: NULL argument");
	if (!(ir = tg_ir_new()))
		return TG_ENOMEM;
	memset(&k, 0, sizeof k);
	if (!(rc = tg_kernel_open(&k, ir, sink)) &&
	    !(rc = tg_lower_plan(&k, plan))) {
		plan_setup(plan, caps, or_defaults(set));
		rc = apply_opts(plan, &k, opts, nopts);
	}
	tg_kernel_close(&k);
	tg_ir_free(ir);
	return rc;
}

int tg_codegen_hand_opts(const tg_uop *sink,
                         const struct tg_renderer_caps *caps,
                         const tg_settings *set, tg_opt *opts, size_t *n)
{
	tg_kplan plan;
	int rc = plan_of(sink, caps, set, NULL, 0, &plan);

	*n = rc ? 0 : plan.nopts;
	if (!rc)
		memcpy(opts, plan.opts, plan.nopts * sizeof *opts);
	return rc;
}

/* splitmix64: a small generator whose streams from nearby seeds are
 * unrelated, so seed 1 and seed 2 draw different sequences. */
static uint64_t draw(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

int tg_codegen_random_opts(const tg_uop *sink,
                           const struct tg_renderer_caps *caps,
                           const tg_settings *set, uint64_t seed,
                           tg_opt *opts, size_t *n)
{
	tg_opt moves[TG_MAX_ACTIONS];
	size_t len, nm;
	int rc;

	*n = 0;
	len = 1 + (size_t)(draw(&seed) % TG_RANDOM_OPTS_MAX);
	while (*n < len) {
		if ((rc = tg_codegen_actions(sink, caps, set, opts, *n, moves,
		                             TG_MAX_ACTIONS, &nm)))
			return rc;
		if (!nm)
			break;
		opts[(*n)++] = moves[draw(&seed) % nm];
	}
	return TG_OK;
}

int tg_codegen_actions(const tg_uop *sink,
                       const struct tg_renderer_caps *caps,
                       const tg_settings *set, const tg_opt *opts,
                       size_t nopts, tg_opt *out, size_t max, size_t *n)
{
	tg_kplan plan;
	int rc = plan_of(sink, caps, set,
	                 opts ? opts : (const tg_opt[1]){ 0 }, nopts, &plan);

	*n = rc ? 0 : tg_kplan_actions(&plan, out, max);
	return rc;
}

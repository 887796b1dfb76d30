/*
 * render/render_c.c - the C-family renderer's walker (tinygrad's
 * renderer/cstyle.py): one node of a linearized kernel at a time
 * (tg_rc_node), for every C-like language: C, OpenCL C, CUDA C and
 * GLSL differ only in their dialect (render/dialect.c: types, qualifiers,
 * ids, helpers, the wrapper).  render_kernel.c renders the kernel around
 * it (parameters, the walk, the wrapper) and render_alu.c the ALU, cast
 * and bitcast expressions.
 *
 * Values: every LOAD, ALU, CAST, BITCAST, VECTORIZE, GEP and WMMA result
 * gets its own variable vN (const where the language allows), so
 * float16 results round at every step and expressions never repeat;
 * CONSTs are inlined; DEFINE_ACC and its PHIs share the variable accN.
 * Signed integer ADD/MUL/NEG/SHL go through the unsigned type of the
 * same width (wrap, no undefined behavior) except in GLSL, whose ints
 * wrap.  MAX on floats gives NaN when either operand is NaN, as
 * tg_exec_alu.  bfloat16 values are their bits in a 16-bit unsigned
 * int; arithmetic converts to float and rounds back to nearest even.
 * MULACC is one fused multiply-add (one rounding, as the IR's), and no
 * other a*b+c is contracted.
 *
 * Vectors (C: GCC vector extensions; OpenCL: its built-in types; CUDA:
 * structs of an array): in C and OpenCL, +, *, unary - and fma on float
 * vectors are written whole (native_vector; C's fma through tg_fma_*
 * helpers that compile to one vector FMA), every other op lane by lane;
 * a C vector load or store is one memcpy of its lanes.  Loops are RANGE/ENDRANGE, gates IF/ENDIF,
 * locals and barriers the dialect's; a WMMA is a call of its matrix
 * instruction's helper (render/wmma.c).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"


/* Identifier-friendly name of a scalar for C's vector typedefs. */
static const char *vname(unsigned s)
{
	switch (s) {
	case TG_INT8: return "char";
	case TG_UINT8: return "uchar";
	case TG_INT16: return "short";
	case TG_UINT16: return "ushort";
	case TG_INT32: return "int";
	case TG_UINT32: return "uint";
	case TG_INT64: case TG_INDEX: return "long";
	case TG_UINT64: return "ulong";
	case TG_FLOAT16: return "half";
	case TG_FLOAT32: return "float";
	case TG_FLOAT64: return "double";
	default: return NULL;
	}
}

int tg_rc_fail(rc_state *st, const char *fmt, const char *what)
{
	if (!st->err)
		st->err = tg_error(TG_EUNSUPPORTED, fmt, what);
	return st->err;
}

/* The scalar type of kind s in the dialect (NULL, with an error, when it
 * has none). */
const char *tg_rstate_type(rc_state *st, unsigned s)
{
	const char *r = s < TG_NSCALARS ? st->d->type[s] : NULL;

	if (!r) {
		if (!st->err)
			st->err = tg_error(TG_EUNSUPPORTED, "render: %s has no type "
			                   "for %s", st->d->name,
			                   s < TG_NSCALARS ? tg_dtype_name(s) : "?");
		return NULL;
	}
	st->k.kinds_used |= 1u << s;
	if (s == TG_BFLOAT16)
		st->k.use_bf16 = 1;
	return r;
}

/* The type of t into buf ("float", "tg_float4", "float4"); NULL (with
 * an error) if the dialect has none. */
static const char *tyname(rc_state *st, tg_type t, char *buf, size_t n)
{
	unsigned s = tg_type_scalar(t), c = tg_type_count(t);
	const char *base = tg_rstate_type(st, s);

	if (c == 1 || !base)
		return base;
	if (st->d->vec == TG_CVEC_NONE || !vname(s) || (c & (c - 1)) ||
	    c > (st->d->vec == TG_CVEC_GCC ? 64u : 16u)) {
		tg_rc_fail(st, "render: cannot render vector type %s",
		           tg_type_format(t, buf, n));
		return NULL;
	}
	if (st->d->vec == TG_CVEC_OPENCL) {
		snprintf(buf, n, "%s%u", base, c);
		return buf;
	}
	for (unsigned k = 0; k < 7; k++)
		if (c == 1u << k)
			st->k.vec_used[s] |= 1u << k;
	snprintf(buf, n, "tg_%s%u", vname(s), c);
	return buf;
}

static void ind(rc_state *st)
{
	for (int i = 0; i < st->depth; i++)
		tg_strbuf_add(&st->body, "\t");
}

/* "((T)(" or "T(" before an expression converted to T; close_cast
 * after it. */
void tg_rstate_open_cast(rc_state *st, tg_strbuf *sb, const char *t)
{
	tg_strbuf_addf(sb, st->d->ctor_cast ? "%s(" : "((%s)(", t);
}

void tg_rstate_close_cast(rc_state *st, tg_strbuf *sb)
{
	tg_strbuf_add(sb, st->d->ctor_cast ? ")" : "))");
}

/* A vector of type t from lane expressions: open, lanes separated by
 * ", ", close. */
static void open_vec(rc_state *st, tg_strbuf *sb, const char *t)
{
	tg_strbuf_addf(sb, st->d->vec == TG_CVEC_OPENCL ? "(%s)("
	               : st->d->vec == TG_CVEC_CUDA ? "%s{{" : "(%s){", t);
}

static void close_vec(rc_state *st, tg_strbuf *sb)
{
	tg_strbuf_add(sb, st->d->vec == TG_CVEC_OPENCL ? ")"
	              : st->d->vec == TG_CVEC_CUDA ? "}}" : "}");
}

void tg_rstate_const(rc_state *st, tg_strbuf *sb, tg_scalar v, unsigned s)
{
	if (!tg_rstate_type(st, s))
		return;
	tg_cdialect_const(st->d, sb, v, s);
}

/* Expression for u (its name, or the inlined constant). */
static char *expr_of(rc_state *st, const tg_uop *u, char *buf, size_t n)
{
	if (u->op == TG_CONST) {
		tg_strbuf sb;
		unsigned s = tg_type_scalar(u->dtype), c = tg_type_count(u->dtype);
		char *r;
		tg_strbuf_init(&sb);
		if (c > 1) {
			char tb[64];
			const char *t = tyname(st, u->dtype, tb, sizeof tb);
			tg_strbuf_add(&sb, "(");
			open_vec(st, &sb, t ? t : "?");
			for (unsigned i = 0; i < c; i++) {
				if (i)
					tg_strbuf_add(&sb, ",");
				tg_rstate_const(st, &sb, u->arg.v, s);
			}
			close_vec(st, &sb);
			tg_strbuf_add(&sb, ")");
		} else {
			tg_rstate_const(st, &sb, u->arg.v, s);
		}
		r = tg_strbuf_finish(&sb);
		if (!r) {
			if (!st->err)
				st->err = tg_error_oom("render");
			snprintf(buf, n, "?");
			return buf;
		}
		snprintf(buf, n, "%s", r);
		free(r);
		return buf;
	}
	if (u->id > st->maxid || !st->names[u->id]) {
		tg_rc_fail(st, "render: %s used before it is defined",
		           tg_op_name(u->op));
		snprintf(buf, n, "?");
		return buf;
	}
	snprintf(buf, n, "%s", st->names[u->id]);
	return buf;
}

/* Lane i of u as a scalar expression. */
static char *lane_of(rc_state *st, const tg_uop *u, unsigned i, char *buf,
                     size_t n)
{
	if (tg_type_count(u->dtype) == 1)
		return expr_of(st, u, buf, n);
	if (u->op == TG_CONST) {
		tg_uop tmp = *u;
		tmp.dtype = tg_type_base(u->dtype);
		return expr_of(st, &tmp, buf, n);
	}
	expr_of(st, u, buf, n);
	size_t l = strlen(buf);
	snprintf(buf + l, n - l, st->d->vec == TG_CVEC_OPENCL ? ".s%x"
	         : st->d->vec == TG_CVEC_CUDA ? ".v[%u]" : "[%u]", i);
	return buf;
}

void tg_rc_set_name(rc_state *st, const tg_uop *u, const char *name)
{
	if (u->id > st->maxid)
		return;
	free(st->names[u->id]);
	st->names[u->id] = strdup(name);
	if (!st->names[u->id] && !st->err)
		st->err = tg_error_oom("render");
}

/* `const T vN = <expr>;` where the expression is built lane by lane for
 * vectors (scalar builder given lane index). */
typedef void (*lane_fn)(rc_state *st, tg_strbuf *sb, const tg_uop *u,
                        unsigned lane);

static void lane_alu(rc_state *st, tg_strbuf *sb, const tg_uop *u,
                     unsigned lane)
{
	char *ea = st->x->lane[0], *eb = st->x->lane[1], *ec = st->x->lane[2];
	size_t n = sizeof st->x->lane[0];
	unsigned sin = tg_type_scalar(u->src[u->op == TG_WHERE ? 1 : 0]->dtype);

	if (sin == TG_BFLOAT16 || tg_type_scalar(u->dtype) == TG_BFLOAT16)
		st->k.use_bf16 = 1;
	lane_of(st, u->src[0], lane, ea, n);
	if (u->nsrc > 1)
		lane_of(st, u->src[1], lane, eb, n);
	if (u->nsrc > 2)
		lane_of(st, u->src[2], lane, ec, n);
	tg_render_alu(st, sb, u->op, tg_type_scalar(u->dtype), sin, ea,
	         u->nsrc > 1 ? eb : NULL, u->nsrc > 2 ? ec : NULL);
}

static void lane_cast(rc_state *st, tg_strbuf *sb, const tg_uop *u,
                      unsigned lane)
{
	char *ea = st->x->lane[0];

	lane_of(st, u->src[0], lane, ea, sizeof st->x->lane[0]);
	tg_render_cast(st, sb, tg_type_scalar(u->src[0]->dtype),
	          tg_type_scalar(u->dtype), ea);
}

static void lane_vec(rc_state *st, tg_strbuf *sb, const tg_uop *u,
                     unsigned lane)
{
	tg_strbuf_add(sb, expr_of(st, u->src[lane], st->x->lane[0],
	                          sizeof st->x->lane[0]));
}

/* Declares the next value variable of type t: "const float v3 = ". */
static void begin_value(rc_state *st, const char *t, char *name, size_t n)
{
	snprintf(name, n, "v%u", st->nv++);
	ind(st);
	tg_strbuf_addf(&st->body, "%s%s %s = ", st->d->qual, t, name);
}

static void emit_value(rc_state *st, const tg_uop *u, lane_fn fn)
{
	char tb[64], name[32];
	const char *t = tyname(st, u->dtype, tb, sizeof tb);
	unsigned c = tg_type_count(u->dtype);

	if (!t)
		return;
	begin_value(st, t, name, sizeof name);
	if (c == 1) {
		fn(st, &st->body, u, 0);
	} else {
		open_vec(st, &st->body, t);
		for (unsigned i = 0; i < c; i++) {
			if (i)
				tg_strbuf_add(&st->body, ", ");
			fn(st, &st->body, u, i);
		}
		close_vec(st, &st->body);
	}
	tg_strbuf_add(&st->body, ";\n");
	tg_rc_set_name(st, u, name);
}

/* A vector op the language computes whole (GCC's vector extensions,
 * OpenCL's vector types): +, *, unary - and fused multiply-add on
 * float vectors, whose lanes round as the scalar ops do.  The others
 * (integer ops that must wrap, MAX with its NaN rule) go lane by lane.
 * 1 when rendered. */
static int native_vector(rc_state *st, const tg_uop *u)
{
	char tb[64], name[32], e[3][TG_EXPR_MAX];
	unsigned s = tg_type_scalar(u->dtype), c = tg_type_count(u->dtype);
	const char *t;

	if (c == 1 || st->d->vec == TG_CVEC_NONE ||
	    st->d->vec == TG_CVEC_CUDA ||
	    (s != TG_FLOAT32 && s != TG_FLOAT64) ||
	    (u->op != TG_ADD && u->op != TG_MUL && u->op != TG_NEG &&
	     u->op != TG_MULACC))
		return 0;
	for (uint32_t i = 0; i < u->nsrc; i++)
		if (u->src[i]->dtype != u->dtype)
			return 0;
	if (!(t = tyname(st, u->dtype, tb, sizeof tb)))
		return 1;
	for (uint32_t i = 0; i < u->nsrc; i++)
		expr_of(st, u->src[i], e[i], sizeof e[i]);
	begin_value(st, t, name, sizeof name);
	if (u->op == TG_NEG)
		tg_strbuf_addf(&st->body, "-%s;\n", e[0]);
	else if (u->op != TG_MULACC)
		tg_strbuf_addf(&st->body, "%s%s%s;\n", e[0],
		               u->op == TG_ADD ? "+" : "*", e[1]);
	else if (st->d->vec == TG_CVEC_OPENCL)
		tg_strbuf_addf(&st->body, "fma(%s,%s,%s);\n", e[0], e[1], e[2]);
	else {
		for (unsigned k = 0; k < 7; k++)
			if (c == 1u << k)
				st->k.fma_used[s] |= 1u << k;
		tg_strbuf_addf(&st->body, "tg_fma_%s(%s,%s,%s);\n", t, e[0],
		               e[1], e[2]);
	}
	tg_rc_set_name(st, u, name);
	return 1;
}

static void render_bitcast(rc_state *st, const tg_uop *u)
{
	char tb[64], ts[64], e0[TG_EXPR_MAX], name[32];
	const char *t = tyname(st, u->dtype, tb, sizeof tb);
	const char *f = tyname(st, u->src[0]->dtype, ts, sizeof ts);
	unsigned from = tg_type_scalar(u->src[0]->dtype);
	unsigned to = tg_type_scalar(u->dtype);
	const char *fn;

	if (!t || !f)
		return;
	expr_of(st, u->src[0], e0, sizeof e0);
	switch (st->d->id) {
	case TG_DIALECT_C:
		snprintf(name, sizeof name, "v%u", st->nv++);
		ind(st);
		tg_strbuf_addf(&st->body,
		               "%s %s; { const %s tg_b = %s; "
		               "__builtin_memcpy(&%s, &tg_b, sizeof %s); }\n",
		               t, name, f, e0, name, name);
		break;
	case TG_DIALECT_OPENCL:
		if (from == TG_BOOL || to == TG_BOOL)
			goto bad;
		begin_value(st, t, name, sizeof name);
		tg_strbuf_addf(&st->body, "as_%s(%s);\n", t, e0);
		break;
	default:  /* GLSL and CUDA: the dialect's own functions */
		begin_value(st, t, name, sizeof name);
		if (st->d->id == TG_DIALECT_CUDA && from == TG_UINT64 &&
		    to == TG_FLOAT64)
			tg_strbuf_addf(&st->body, "__longlong_as_double((long long)"
			               "(%s));\n", e0);
		else if (st->d->id == TG_DIALECT_CUDA && from == TG_FLOAT64 &&
		         to == TG_UINT64)
			tg_strbuf_addf(&st->body, "((unsigned long long)"
			               "__double_as_longlong(%s));\n", e0);
		else if (!(fn = tg_bitcast_fn(st->d->id, from, to)))
			goto bad;
		else if (*fn)
			tg_strbuf_addf(&st->body, "%s(%s);\n", fn, e0);
		else {
			tg_rstate_open_cast(st, &st->body, t);
			tg_strbuf_add(&st->body, e0);
			tg_rstate_close_cast(st, &st->body);
			tg_strbuf_add(&st->body, ";\n");
		}
		break;
	}
	tg_rc_set_name(st, u, name);
	return;
bad:
	if (!st->err)
		st->err = tg_error(TG_EUNSUPPORTED, "render: %s cannot bitcast "
		                   "%s to %s", st->d->name, tg_dtype_name(from),
		                   tg_dtype_name(to));
}

/* The element of buffer `buf` at `idx` as a value (bools stored as bytes
 * compare against 0). */
static void load_elem(rc_state *st, unsigned s, const char *buf,
                      const char *idx)
{
	if (st->d->stored[s])
		tg_strbuf_addf(&st->body, "(%s[%s]!=%s(0))", buf, idx,
		               st->d->ctor_cast ? st->d->stored[s] : "");
	else
		tg_strbuf_addf(&st->body, "%s[%s]", buf, idx);
}

/* A C vector load: one memcpy of the lanes, which the compiler makes
 * one unaligned vector load (a compound literal of lanes it may not).
 * Gated: the alternative unless the gate holds. */
/* A GCC vector load, always through memcpy, also where vectorize.c
 * proved it aligned (arg.a): GCC 12 miscompiles AVX-512 shuffles of
 * lanes taken from aligned vector loads (a (3,4)@(4,2) * w kernel of
 * test_autograd came out wrong at -O1 and up with -march=native), and
 * aligned loads measured no faster on the CPU. */
static void c_vector_load(rc_state *st, const tg_uop *u, const char *t,
                          const char *buf, const char *idx)
{
	char name[32], e[TG_EXPR_MAX];

	snprintf(name, sizeof name, "v%u", st->nv++);
	ind(st);
	if (u->nsrc >= 4) {
		tg_strbuf_addf(&st->body, "%s %s = %s; ", t, name,
		               expr_of(st, u->src[3], e, sizeof e));
		tg_strbuf_addf(&st->body, "if (%s) ",
		               expr_of(st, u->src[2], e, sizeof e));
	} else {
		tg_strbuf_addf(&st->body, "%s %s; ", t, name);
	}
	tg_strbuf_addf(&st->body, "__builtin_memcpy(&%s, %s+%s, sizeof %s);\n",
	               name, buf, idx, name);
	tg_rc_set_name(st, u, name);
}

static void render_load(rc_state *st, const tg_uop *u)
{
	char e0[TG_EXPR_MAX], e1[TG_EXPR_MAX], e2[TG_EXPR_MAX], tb[64], name[32];
	unsigned s = tg_type_scalar(u->dtype), c = tg_type_count(u->dtype);
	const char *t = tyname(st, u->dtype, tb, sizeof tb);

	if (!t)
		return;
	expr_of(st, u->src[0], e0, sizeof e0);
	expr_of(st, u->src[1], e1, sizeof e1);
	if (c > 1 && st->d->vec == TG_CVEC_GCC) {
		c_vector_load(st, u, t, e0, e1);
		return;
	}
	begin_value(st, t, name, sizeof name);
	if (u->nsrc >= 4) {
		expr_of(st, u->src[2], e2, sizeof e2);
		tg_strbuf_addf(&st->body, "(%s ? ", e2);
	}
	if (c == 1) {
		load_elem(st, s, e0, e1);
	} else if (st->d->vec != TG_CVEC_GCC && u->arg.a > 0) {
		/* proven aligned (vectorize.c; on CUDA every run is) */
		tg_strbuf_addf(&st->body, "*((%sconst %s *)(%s+%s))",
		               st->d->vec == TG_CVEC_OPENCL ? "__global " : "", t,
		               e0, e1);
	} else if (st->d->vec == TG_CVEC_OPENCL) {
		tg_strbuf_addf(&st->body, "vload%u(0, %s+%s)", c, e0, e1);
	} else {
		open_vec(st, &st->body, t);
		for (unsigned i = 0; i < c; i++)
			tg_strbuf_addf(&st->body, "%s%s[%s+%u]", i ? ", " : "", e0,
			               e1, i);
		close_vec(st, &st->body);
	}
	if (u->nsrc >= 4) {
		expr_of(st, u->src[3], e2, sizeof e2);
		tg_strbuf_addf(&st->body, " : %s)", e2);
	}
	tg_strbuf_add(&st->body, ";\n");
	tg_rc_set_name(st, u, name);
}

static void render_store(rc_state *st, const tg_uop *u)
{
	char e0[TG_EXPR_MAX], e1[TG_EXPR_MAX], e2[TG_EXPR_MAX];
	unsigned vc = tg_type_count(u->src[2]->dtype);
	unsigned s = tg_type_scalar(u->src[2]->dtype);

	expr_of(st, u->src[0], e0, sizeof e0);
	expr_of(st, u->src[1], e1, sizeof e1);
	ind(st);
	if (u->nsrc >= 4) {
		expr_of(st, u->src[3], e2, sizeof e2);
		tg_strbuf_addf(&st->body, "if (%s) ", e2);
	}
	if (vc == 1) {
		const char *bt = st->d->stored[s];
		expr_of(st, u->src[2], e2, sizeof e2);
		if (bt && st->d->ctor_cast)
			tg_strbuf_addf(&st->body, "%s[%s] = (%s ? %s(1) : %s(0));\n",
			               e0, e1, e2, bt, bt);
		else if (bt)
			tg_strbuf_addf(&st->body, "%s[%s] = (%s)(%s);\n", e0, e1, bt,
			               e2);
		else
			tg_strbuf_addf(&st->body, "%s[%s] = %s;\n", e0, e1, e2);
	} else if (st->d->vec == TG_CVEC_OPENCL) {
		expr_of(st, u->src[2], e2, sizeof e2);
		tg_strbuf_addf(&st->body, "vstore%u(%s, 0, %s+%s);\n", vc, e2, e0,
		               e1);
	} else if (st->d->vec == TG_CVEC_CUDA) {
		/* vectorize.c starts every CUDA run at a multiple of its
		 * width, and buffers at 256 bytes: the struct's alignment */
		char tb[64];
		const char *t = tyname(st, u->src[2]->dtype, tb, sizeof tb);
		expr_of(st, u->src[2], e2, sizeof e2);
		tg_strbuf_addf(&st->body, "*((%s *)(%s+%s)) = %s;\n",
		               t ? t : "?", e0, e1, e2);
	} else {
		char tb[64];
		const char *t = tyname(st, u->src[2]->dtype, tb, sizeof tb);
		expr_of(st, u->src[2], e2, sizeof e2);
		tg_strbuf_addf(&st->body, "{ const %s tg_s = %s; "
		               "__builtin_memcpy(%s+%s, &tg_s, sizeof tg_s); }\n",
		               t ? t : "?", e2, e0, e1);
	}
}

static void render_acc(rc_state *st, const tg_uop *u)
{
	char e0[TG_EXPR_MAX], tb[64], name[32];
	unsigned c = tg_type_count(u->dtype);
	const char *t = tyname(st, u->dtype, tb, sizeof tb);

	if (!t)
		return;
	snprintf(name, sizeof name, "acc%" PRId64, u->arg.v.i);
	expr_of(st, u->src[0], e0, sizeof e0);
	ind(st);
	tg_strbuf_addf(&st->body, "%s%s %s = ", st->d->acc_qual, t, name);
	if (c > 1 && tg_type_count(u->src[0]->dtype) == 1) {
		/* broadcast a scalar init */
		open_vec(st, &st->body, t);
		for (unsigned i = 0; i < c; i++)
			tg_strbuf_addf(&st->body, i ? ",%s" : "%s", e0);
		close_vec(st, &st->body);
	} else {
		tg_strbuf_add(&st->body, e0);
	}
	tg_strbuf_add(&st->body, ";\n");
	tg_rc_set_name(st, u, name);
}

/* The reduce pass index: the C wrapper loops over it. */
static void render_pass_idx(rc_state *st, const tg_uop *u)
{
	if (st->d->id != TG_DIALECT_C || u->arg.a < 1) {
		tg_rc_fail(st, "render: reduce passes (%s) outside a C kernel",
		           u->arg.name);
		return;
	}
	st->k.npass = u->arg.a;
	tg_rc_set_name(st, u, u->arg.name);
}

/* Launch indices name themselves; the wrapper defines them. */
static void render_special(rc_state *st, const tg_uop *u)
{
	const char *nm = u->arg.name ? u->arg.name : "";
	int local = !strncmp(nm, "lidx", 4);

	if ((strncmp(nm, "gidx", 4) && !local) || nm[4] < '0' ||
	    nm[4] > '2' || nm[5]) {
		tg_rc_fail(st, "render: unknown launch index %s", nm);
		return;
	}
	if (local && st->d->id == TG_DIALECT_C) {
		tg_rc_fail(st, "render: launch index %s in a C kernel (no work "
		           "groups)", nm);
		return;
	}
	if (local)
		st->k.lidx_used[nm[4] - '0'] = st->k.has_local = 1;
	else
		st->k.gidx_used[nm[4] - '0'] = 1;
	tg_rc_set_name(st, u, nm);
}

/* A matrix instruction: its helper (render/wmma.c) of the fragments
 * and the sum, `const tg_float4 v3 = tg_mma_..(a, b, c);`. */
static void render_wmma(rc_state *st, const tg_uop *u)
{
	char e[3][TG_EXPR_MAX], tb[64], name[32];
	const tg_wmma *w = tg_wmma_get(u->arg.v.i);
	const char *t = tyname(st, u->dtype, tb, sizeof tb);

	if (!t)
		return;
	if (!w || w->dialect != st->d->id || u->nsrc != 3) {
		tg_rc_fail(st, "render: WMMA %s is not an instruction of this "
		           "dialect", u->arg.name ? u->arg.name : "?");
		return;
	}
	for (int i = 0; i < 3; i++)
		expr_of(st, u->src[i], e[i], sizeof e[i]);
	st->k.wmma_used |= 1u << u->arg.v.i;
	begin_value(st, t, name, sizeof name);
	tg_strbuf_addf(&st->body, "%s(%s, %s, %s);\n", w->fn, e[0], e[1],
	               e[2]);
	tg_rc_set_name(st, u, name);
}

/* Shared memory: declared by the wrapper, referred to by name. */
static void render_local(rc_state *st, const tg_uop *u)
{
	tg_cparam p;

	if (st->d->id == TG_DIALECT_C || !u->arg.name) {
		tg_rc_fail(st, "render: shared memory %s in a C kernel",
		           u->arg.name ? u->arg.name : "");
		return;
	}
	memset(&p, 0, sizeof p);
	p.name = u->arg.name;
	p.kind = tg_type_scalar(tg_type_deref(u->dtype));
	p.count = u->arg.a;
	if (!tg_rstate_type(st, p.kind))
		return;
	if (TG_VEC_PUSH(&st->locals, p)) {
		st->err = tg_error_oom("render");
		return;
	}
	tg_rc_set_name(st, u, u->arg.name);
}

/* A work-group barrier in the dialect's words; C kernels have none. */
static void render_barrier(rc_state *st)
{
	if (st->d->id == TG_DIALECT_C) {
		tg_rc_fail(st, "render: %s in a C kernel", "BARRIER");
		return;
	}
	ind(st);
	tg_strbuf_add(&st->body, st->d->id == TG_DIALECT_OPENCL
	              ? "barrier(CLK_LOCAL_MEM_FENCE);\n"
	              : st->d->id == TG_DIALECT_CUDA ? "__syncthreads();\n"
	              : "memoryBarrierShared(); barrier();\n");
}

/* IF opens a block, RANGE a loop over ridxN; ENDIF and ENDRANGE close
 * them. */
static void render_if(rc_state *st, const tg_uop *u)
{
	char e0[TG_EXPR_MAX];

	expr_of(st, u->src[0], e0, sizeof e0);
	ind(st);
	tg_strbuf_addf(&st->body, "if (%s) {\n", e0);
	st->depth++;
}

static void render_range(rc_state *st, const tg_uop *u)
{
	char e0[TG_EXPR_MAX], e1[TG_EXPR_MAX], name[48];
	const char *it = tg_rstate_type(st, TG_INDEX);

	snprintf(name, sizeof name, "ridx%" PRId64, u->arg.v.i);
	expr_of(st, u->src[0], e0, sizeof e0);
	expr_of(st, u->src[1], e1, sizeof e1);
	ind(st);
	tg_strbuf_addf(&st->body, "for (%s %s = %s; %s < %s; %s++) {\n",
	               it ? it : "?", name, e0, name, e1, name);
	st->depth++;
	tg_rc_set_name(st, u, name);
}

static void render_end(rc_state *st)
{
	st->depth--;
	ind(st);
	tg_strbuf_add(&st->body, "}\n");
}

/* A PHI assigns the accumulator its next value. */
static void render_phi(rc_state *st, const tg_uop *u)
{
	char e0[TG_EXPR_MAX], e1[TG_EXPR_MAX];

	expr_of(st, u->src[0], e0, sizeof e0);
	expr_of(st, u->src[1], e1, sizeof e1);
	ind(st);
	tg_strbuf_addf(&st->body, "%s = %s;\n", e0, e1);
	tg_rc_set_name(st, u, e0);
}

/* A GEP is one lane of a vector, as a value of its own. */
static void render_gep(rc_state *st, const tg_uop *u)
{
	char e0[TG_EXPR_MAX], tb[64], name[48];
	const char *t = tyname(st, u->dtype, tb, sizeof tb);

	if (!t)
		return;
	lane_of(st, u->src[0], (unsigned)u->arg.v.i, e0, sizeof e0);
	begin_value(st, t, name, sizeof name);
	tg_strbuf_addf(&st->body, "%s;\n", e0);
	tg_rc_set_name(st, u, name);
}

static void render_vectorize(rc_state *st, const tg_uop *u)
{
	if (u->nsrc != tg_type_count(u->dtype)) {
		tg_rc_fail(st, "render: %s with a wrong source count",
		           "VECTORIZE");
		return;
	}
	emit_value(st, u, lane_vec);
}

void tg_rc_node(rc_state *st, const tg_uop *u)
{
	switch (u->op) {
	case TG_DEFINE_GLOBAL: case TG_DEFINE_VAR: case TG_CONST:
		return; /* prologue / inline */
	case TG_SPECIAL:
		if (u->arg.name && !strcmp(u->arg.name, "kidx0"))
			render_pass_idx(st, u);
		else
			render_special(st, u);
		return;
	case TG_DEFINE_LOCAL: render_local(st, u); return;
	case TG_BARRIER: render_barrier(st); return;
	case TG_IF: render_if(st, u); return;
	case TG_ENDIF: case TG_ENDRANGE: render_end(st); return;
	case TG_RANGE: render_range(st, u); return;
	case TG_DEFINE_ACC: render_acc(st, u); return;
	case TG_PHI: render_phi(st, u); return;
	case TG_LOAD: render_load(st, u); return;
	case TG_STORE: render_store(st, u); return;
	case TG_CAST: emit_value(st, u, lane_cast); return;
	case TG_VECTORIZE: render_vectorize(st, u); return;
	case TG_GEP: render_gep(st, u); return;
	case TG_BITCAST: render_bitcast(st, u); return;
	case TG_WMMA: render_wmma(st, u); return;
	default:
		if (tg_op_arity(u->op)) {
			if (!native_vector(st, u))
				emit_value(st, u, lane_alu);
			return;
		}
		tg_rc_fail(st, "render: cannot render op %s",
		           tg_op_name(u->op));
	}
}

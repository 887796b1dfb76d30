/*
 * codegen/render_c.c - C source for a linearized kernel (TG_DIALECT_C),
 * in the spirit of tinygrad's ClangRenderer.
 *
 * Values: every LOAD, ALU, CAST, BITCAST, VECTORIZE and GEP result gets
 * its own `const T vN` (so float16 results round at every step and
 * expressions never repeat); CONSTs are inlined; DEFINE_ACC and its PHIs
 * share the variable accN.  Signed integer ADD/MUL/NEG/SHL go through
 * the unsigned type of the same width (wrap, no undefined behavior).
 * MAX is `(a!=a||a>b)?a:b` on floats: NaN in either operand gives NaN,
 * as tg_exec_alu.  bfloat16 values are their bits in an unsigned short;
 * arithmetic converts to float and rounds back to nearest even.  Vector
 * types are GCC vector extensions (power-of-two widths), ALU ops on them
 * are rendered lane by lane.  The function disables FMA contraction so
 * results match the IR's rounding.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

typedef struct rc_state {
	tg_strbuf body;
	char **names;      /* by uop id; NULL until defined */
	uint32_t maxid;
	int depth;
	unsigned nv;
	int use_bf16;
	int use_threefry;
	uint32_t vec_used[TG_NSCALARS]; /* bit k: width 1 << k */
	int err;
} rc_state;

static const char *cty(unsigned s)
{
	switch (s) {
	case TG_BOOL: return "_Bool";
	case TG_INT8: return "signed char";
	case TG_UINT8: return "unsigned char";
	case TG_INT16: return "short";
	case TG_UINT16: return "unsigned short";
	case TG_INT32: return "int";
	case TG_UINT32: return "unsigned int";
	case TG_INT64: return "long";
	case TG_UINT64: return "unsigned long";
	case TG_FLOAT16: return "_Float16";
	case TG_BFLOAT16: return "unsigned short";
	case TG_FLOAT32: return "float";
	case TG_FLOAT64: return "double";
	case TG_INDEX: return "long";
	default: return NULL;
	}
}

/* Identifier-friendly name of a scalar for vector typedefs. */
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

static int fail(rc_state *st, const char *fmt, const char *what)
{
	if (!st->err)
		st->err = tg_error(TG_EUNSUPPORTED, fmt, what);
	return st->err;
}

/* The C type of t into buf ("float", "tg_float4"); NULL if none. */
static const char *tyname(rc_state *st, tg_type t, char *buf, size_t n)
{
	unsigned s = tg_type_scalar(t), c = tg_type_count(t);

	if (c == 1) {
		const char *r = cty(s);
		if (!r)
			fail(st, "render_c: no C type for %s", "a scalar kind");
		return r;
	}
	if (!vname(s) || (c & (c - 1)) || c > 64) {
		fail(st, "render_c: cannot render vector type %s",
		     tg_type_format(t, buf, n));
		return NULL;
	}
	for (unsigned k = 0; k < 7; k++)
		if (c == 1u << k)
			st->vec_used[s] |= 1u << k;
	snprintf(buf, n, "tg_%s%u", vname(s), c);
	return buf;
}

static void ind(rc_state *st)
{
	for (int i = 0; i < st->depth; i++)
		tg_strbuf_add(&st->body, "\t");
}

/* A scalar constant as a C expression of kind s. */
static void const_expr(rc_state *st, tg_strbuf *sb, tg_scalar v, unsigned s)
{
	switch (s) {
	case TG_BOOL:
		tg_strbuf_add(sb, v.i ? "((_Bool)1)" : "((_Bool)0)");
		return;
	case TG_UINT64:
		tg_strbuf_addf(sb, "((unsigned long)%" PRIu64 "UL)", v.u);
		return;
	case TG_INDEX:
	case TG_INT64:
	case TG_INT32: case TG_UINT32: case TG_INT16: case TG_UINT16:
	case TG_INT8: case TG_UINT8:
		if (v.i == INT64_MIN)
			tg_strbuf_add(sb, "(-9223372036854775807L-1L)");
		else if (s == TG_INDEX)
			tg_strbuf_addf(sb, v.i < 0 ? "(%" PRId64 "L)"
			                           : "%" PRId64, v.i);
		else
			tg_strbuf_addf(sb, "((%s)%" PRId64 "L)", cty(s), v.i);
		return;
	case TG_BFLOAT16:
		st->use_bf16 = 1;
		tg_strbuf_addf(sb, "((unsigned short)0x%04x)",
		               (unsigned)tg_bf16_bits(v.f));
		return;
	case TG_FLOAT16:
	case TG_FLOAT32:
	case TG_FLOAT64: {
		const char *suf = s == TG_FLOAT64 ? "" : "f";
		const char *pre = s == TG_FLOAT16 ? "((_Float16)" : "(";
		if (isnan(v.f))
			tg_strbuf_addf(sb, "%s__builtin_nan%s(\"\"))", pre, suf);
		else if (isinf(v.f))
			tg_strbuf_addf(sb, "%s%s__builtin_inf%s())", pre,
			               v.f < 0 ? "-" : "", suf);
		else
			tg_strbuf_addf(sb, "%s%a%s)", pre, v.f, suf);
		return;
	}
	default:
		fail(st, "render_c: cannot render a constant of %s", "this kind");
	}
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
			tg_strbuf_addf(&sb, "((%s){", t ? t : "?");
			for (unsigned i = 0; i < c; i++) {
				if (i)
					tg_strbuf_add(&sb, ",");
				const_expr(st, &sb, u->arg.v, s);
			}
			tg_strbuf_add(&sb, "})");
		} else {
			const_expr(st, &sb, u->arg.v, s);
		}
		r = tg_strbuf_finish(&sb);
		if (!r) {
			if (!st->err)
				st->err = tg_error_oom("render_c");
			snprintf(buf, n, "?");
			return buf;
		}
		snprintf(buf, n, "%s", r);
		free(r);
		return buf;
	}
	if (u->id > st->maxid || !st->names[u->id]) {
		fail(st, "render_c: %s used before it is defined",
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
	snprintf(buf + l, n - l, "[%u]", i);
	return buf;
}

#define EXPR_MAX 4096

/* A bf16 operand as float. */
static void operand(unsigned s, const char *e, char *out, size_t n)
{
	if (s == TG_BFLOAT16)
		snprintf(out, n, "tg_bf2f(%s)", e);
	else
		snprintf(out, n, "%s", e);
}

/* Scalar ALU op: sout the result kind, sin the operand kind (WHERE: of
 * b and c). */
/* Threefry2x32 with 5 rounds of 4 as the kernel's C (the same function
 * as the constant folder's in ir/alu.c): counter x and key as two
 * 32-bit words each, low word first; the result's words likewise. */
static const char threefry_c[] =
	"static inline uint64_t tg_threefry(uint64_t x, uint64_t key)\n"
	"{ static const unsigned char r[2][4] = {{13,15,26,6},{17,29,16,24}};\n"
	"  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);\n"
	"  uint32_t ks[3] = { k1, k0 ^ k1 ^ 0x1BD11BDAu, k0 };\n"
	"  uint32_t a = (uint32_t)x + ks[2], b = (uint32_t)(x >> 32) + ks[0];\n"
	"  for (unsigned i = 0; i < 5; i++) {\n"
	"    for (unsigned j = 0; j < 4; j++) {\n"
	"      a += b; b = ((b << r[i % 2][j]) | (b >> (32 - r[i % 2][j]))) ^ a;\n"
	"    }\n"
	"    a += ks[i % 3]; b += ks[(i + 1) % 3] + i + 1;\n"
	"  }\n"
	"  return (uint64_t)b << 32 | a; }\n";

static void alu_expr(rc_state *st, tg_strbuf *sb, unsigned op, unsigned sout,
                     unsigned sin, const char *ea, const char *eb,
                     const char *ec)
{
	static char a[EXPR_MAX + 16], b[EXPR_MAX + 16], c[EXPR_MAX + 16];
	unsigned cs = sin == TG_BFLOAT16 ? TG_FLOAT32 : sin; /* compute */
	const char *T = cty(cs), *R = cty(sout);
	int isf = tg_scalar_is_float(cs);
	int wrapint = tg_scalar_is_int(cs) && cs != TG_INDEX &&
	              !tg_scalar_is_unsigned(cs);
	const char *U = tg_scalar_bits(cs) > 32 ? "unsigned long"
	                                        : "unsigned int";
	const char *fsuf = cs == TG_FLOAT64 ? "" : "f";
	int tobf = sout == TG_BFLOAT16;

	if (op == TG_WHERE) {
		snprintf(a, sizeof a, "%s", ea);
		snprintf(b, sizeof b, "%s", eb);
		snprintf(c, sizeof c, "%s", ec);
		tg_strbuf_addf(sb, "(%s?%s:%s)", a, b, c);
		return;
	}
	operand(sin, ea, a, sizeof a);
	if (eb)
		operand(sin, eb, b, sizeof b);
	if (tobf)
		tg_strbuf_add(sb, "tg_f2bf(");
	/* for small unsigned kinds promotion to int could overflow MUL */
	if (tg_scalar_is_unsigned(cs) && tg_scalar_bits(cs) < 32)
		wrapint = 1;
	switch (op) {
	case TG_EXP2: case TG_LOG2: case TG_SIN: case TG_SQRT: {
		const char *fn = op == TG_EXP2 ? "exp2" : op == TG_LOG2 ? "log2"
		                 : op == TG_SIN ? "sin" : "sqrt";
		if (!isf)
			goto bad;
		if (cs == TG_FLOAT16)
			tg_strbuf_addf(sb, "((_Float16)__builtin_%sf((float)%s))",
			               fn, a);
		else
			tg_strbuf_addf(sb, "__builtin_%s%s(%s)", fn, fsuf, a);
		break;
	}
	case TG_THREEFRY:
		if (cs != TG_UINT64)
			goto bad;
		st->use_threefry = 1;
		tg_strbuf_addf(sb, "tg_threefry(%s,%s)", a, b);
		break;
	case TG_RECIP:
		if (!isf)
			goto bad;
		tg_strbuf_addf(sb, "((%s)(1/%s))", T, a);
		break;
	case TG_NEG:
		if (cs == TG_BOOL)
			tg_strbuf_addf(sb, "(!%s)", a);
		else if (wrapint)
			tg_strbuf_addf(sb, "((%s)(-(%s)%s))", T, U, a);
		else
			tg_strbuf_addf(sb, "((%s)(-%s))", T, a);
		break;
	case TG_ADD: case TG_MUL: {
		const char *o = op == TG_ADD ? "+" : "*";
		if (cs == TG_BOOL)
			tg_strbuf_addf(sb, "((_Bool)(%s%s%s))", a,
			               op == TG_ADD ? "|" : "&", b);
		else if (wrapint)
			tg_strbuf_addf(sb, "((%s)((%s)%s%s(%s)%s))", T, U, a, o, U,
			               b);
		else
			tg_strbuf_addf(sb, "((%s)(%s%s%s))", T, a, o, b);
		break;
	}
	case TG_IDIV: case TG_MOD:
		if (isf || cs == TG_BOOL)
			goto bad;
		tg_strbuf_addf(sb, "((%s)(%s%s%s))", T, a,
		               op == TG_IDIV ? "/" : "%", b);
		break;
	case TG_MAX:
		if (isf)
			tg_strbuf_addf(sb, "((%s!=%s||%s>%s)?%s:%s)", a, a, a, b, a,
			               b);
		else
			tg_strbuf_addf(sb, "(%s>%s?%s:%s)", a, b, a, b);
		break;
	case TG_CMPLT:
		tg_strbuf_addf(sb, "(%s<%s)", a, b);
		break;
	case TG_CMPNE:
		tg_strbuf_addf(sb, "(%s!=%s)", a, b);
		break;
	case TG_XOR: case TG_OR: case TG_AND: case TG_SHR:
		if (isf)
			goto bad;
		tg_strbuf_addf(sb, "((%s)(%s%s%s))", T, a,
		               op == TG_XOR ? "^" : op == TG_OR ? "|"
		               : op == TG_AND ? "&" : ">>", b);
		break;
	case TG_SHL:
		if (isf || cs == TG_BOOL)
			goto bad;
		tg_strbuf_addf(sb, "((%s)((%s)%s<<%s))", T, U, a, b);
		break;
	case TG_MULACC:
		operand(sin, ec, c, sizeof c);
		tg_strbuf_addf(sb, "((%s)((%s)(%s*%s)+%s))", T, T, a, b, c);
		break;
	default:
	bad:
		fail(st, "render_c: cannot render ALU op %s", tg_op_name(op));
		break;
	}
	(void)R;
	if (tobf)
		tg_strbuf_add(sb, ")");
}

/* CAST of a scalar expression from kind a to kind b. */
static void cast_expr(tg_strbuf *sb, unsigned from, unsigned to,
                      const char *e, rc_state *st)
{
	if (from == to)
		tg_strbuf_add(sb, e);
	else if (to == TG_BFLOAT16) {
		st->use_bf16 = 1;
		if (from == TG_BOOL || tg_scalar_is_int(from) ||
		    from == TG_FLOAT64 || from == TG_FLOAT16)
			tg_strbuf_addf(sb, "tg_f2bf((float)(%s))", e);
		else
			tg_strbuf_addf(sb, "tg_f2bf(%s)", e);
	} else if (from == TG_BFLOAT16) {
		st->use_bf16 = 1;
		tg_strbuf_addf(sb, "((%s)tg_bf2f(%s))", cty(to), e);
	} else
		tg_strbuf_addf(sb, "((%s)(%s))", cty(to), e);
}

static void set_name(rc_state *st, const tg_uop *u, const char *name)
{
	if (u->id > st->maxid)
		return;
	free(st->names[u->id]);
	st->names[u->id] = strdup(name);
	if (!st->names[u->id] && !st->err)
		st->err = tg_error_oom("render_c");
}

/* `const T vN = <expr>;` where the expression is built lane by lane for
 * vectors (scalar builder given lane index). */
typedef void (*lane_fn)(rc_state *st, tg_strbuf *sb, const tg_uop *u,
                        unsigned lane);

static void lane_alu(rc_state *st, tg_strbuf *sb, const tg_uop *u,
                     unsigned lane)
{
	static char ea[EXPR_MAX], eb[EXPR_MAX], ec[EXPR_MAX];
	unsigned sin = tg_type_scalar(u->src[u->op == TG_WHERE ? 1 : 0]->dtype);

	if (sin == TG_BFLOAT16 || tg_type_scalar(u->dtype) == TG_BFLOAT16)
		st->use_bf16 = 1;
	lane_of(st, u->src[0], lane, ea, sizeof ea);
	if (u->nsrc > 1)
		lane_of(st, u->src[1], lane, eb, sizeof eb);
	if (u->nsrc > 2)
		lane_of(st, u->src[2], lane, ec, sizeof ec);
	alu_expr(st, sb, u->op, tg_type_scalar(u->dtype), sin, ea,
	         u->nsrc > 1 ? eb : NULL, u->nsrc > 2 ? ec : NULL);
}

static void lane_cast(rc_state *st, tg_strbuf *sb, const tg_uop *u,
                      unsigned lane)
{
	static char ea[EXPR_MAX];

	lane_of(st, u->src[0], lane, ea, sizeof ea);
	cast_expr(sb, tg_type_scalar(u->src[0]->dtype),
	          tg_type_scalar(u->dtype), ea, st);
}

static void lane_vec(rc_state *st, tg_strbuf *sb, const tg_uop *u,
                     unsigned lane)
{
	static char ea[EXPR_MAX];

	tg_strbuf_add(sb, expr_of(st, u->src[lane], ea, sizeof ea));
}

static void emit_value(rc_state *st, const tg_uop *u, lane_fn fn)
{
	char tb[64], name[32];
	const char *t = tyname(st, u->dtype, tb, sizeof tb);
	unsigned c = tg_type_count(u->dtype);

	if (!t)
		return;
	snprintf(name, sizeof name, "v%u", st->nv++);
	ind(st);
	tg_strbuf_addf(&st->body, "const %s %s = ", t, name);
	if (c == 1) {
		fn(st, &st->body, u, 0);
	} else {
		tg_strbuf_addf(&st->body, "(%s){", t);
		for (unsigned i = 0; i < c; i++) {
			if (i)
				tg_strbuf_add(&st->body, ", ");
			fn(st, &st->body, u, i);
		}
		tg_strbuf_add(&st->body, "}");
	}
	tg_strbuf_add(&st->body, ";\n");
	set_name(st, u, name);
}

static int cmp_var(const void *a, const void *b)
{
	const tg_uop *x = *(tg_uop *const *)a, *y = *(tg_uop *const *)b;

	return strcmp(x->arg.name ? x->arg.name : "",
	              y->arg.name ? y->arg.name : "");
}

static void render_node(rc_state *st, const tg_uop *u)
{
	char e0[EXPR_MAX], e1[EXPR_MAX], e2[EXPR_MAX], tb[64], name[48];
	unsigned s = tg_type_scalar(u->dtype), c = tg_type_count(u->dtype);

	switch (u->op) {
	case TG_DEFINE_GLOBAL: case TG_DEFINE_VAR: case TG_SPECIAL:
	case TG_CONST:
		return; /* prologue / inline */
	case TG_RANGE:
		snprintf(name, sizeof name, "ridx%" PRId64, u->arg.v.i);
		expr_of(st, u->src[0], e0, sizeof e0);
		expr_of(st, u->src[1], e1, sizeof e1);
		ind(st);
		tg_strbuf_addf(&st->body, "for (long %s = %s; %s < %s; %s++) {\n",
		               name, e0, name, e1, name);
		st->depth++;
		set_name(st, u, name);
		return;
	case TG_ENDRANGE:
		st->depth--;
		ind(st);
		tg_strbuf_add(&st->body, "}\n");
		return;
	case TG_DEFINE_ACC: {
		const char *t = tyname(st, u->dtype, tb, sizeof tb);
		if (!t)
			return;
		snprintf(name, sizeof name, "acc%" PRId64, u->arg.v.i);
		expr_of(st, u->src[0], e0, sizeof e0);
		if (c > 1 && tg_type_count(u->src[0]->dtype) == 1) {
			/* broadcast a scalar init */
			tg_strbuf sb;
			char *r;
			tg_strbuf_init(&sb);
			tg_strbuf_addf(&sb, "(%s){", t);
			for (unsigned i = 0; i < c; i++)
				tg_strbuf_addf(&sb, i ? ",%s" : "%s", e0);
			tg_strbuf_add(&sb, "}");
			r = tg_strbuf_finish(&sb);
			snprintf(e0, sizeof e0, "%s", r ? r : "?");
			free(r);
		}
		ind(st);
		tg_strbuf_addf(&st->body, "%s %s = %s;\n", t, name, e0);
		set_name(st, u, name);
		return;
	}
	case TG_PHI:
		expr_of(st, u->src[0], e0, sizeof e0);
		expr_of(st, u->src[1], e1, sizeof e1);
		ind(st);
		tg_strbuf_addf(&st->body, "%s = %s;\n", e0, e1);
		set_name(st, u, e0);
		return;
	case TG_LOAD: {
		const char *t = tyname(st, u->dtype, tb, sizeof tb);
		if (!t)
			return;
		if (s == TG_BFLOAT16)
			st->use_bf16 = 1;
		expr_of(st, u->src[0], e0, sizeof e0);
		expr_of(st, u->src[1], e1, sizeof e1);
		snprintf(name, sizeof name, "v%u", st->nv++);
		ind(st);
		tg_strbuf_addf(&st->body, "const %s %s = ", t, name);
		if (u->nsrc >= 4) {
			expr_of(st, u->src[2], e2, sizeof e2);
			tg_strbuf_addf(&st->body, "(%s ? ", e2);
		}
		if (c == 1) {
			tg_strbuf_addf(&st->body, "%s[%s]", e0, e1);
		} else {
			tg_strbuf_addf(&st->body, "(%s){", t);
			for (unsigned i = 0; i < c; i++)
				tg_strbuf_addf(&st->body, "%s%s[%s+%u]", i ? ", " : "",
				               e0, e1, i);
			tg_strbuf_add(&st->body, "}");
		}
		if (u->nsrc >= 4) {
			expr_of(st, u->src[3], e2, sizeof e2);
			tg_strbuf_addf(&st->body, " : %s)", e2);
		}
		tg_strbuf_add(&st->body, ";\n");
		set_name(st, u, name);
		return;
	}
	case TG_STORE: {
		unsigned vc = tg_type_count(u->src[2]->dtype);
		expr_of(st, u->src[0], e0, sizeof e0);
		expr_of(st, u->src[1], e1, sizeof e1);
		ind(st);
		if (u->nsrc >= 4) {
			expr_of(st, u->src[3], e2, sizeof e2);
			tg_strbuf_addf(&st->body, "if (%s) ", e2);
		}
		if (vc == 1) {
			expr_of(st, u->src[2], e2, sizeof e2);
			tg_strbuf_addf(&st->body, "%s[%s] = %s;\n", e0, e1, e2);
		} else {
			tg_strbuf_add(&st->body, "{");
			for (unsigned i = 0; i < vc; i++) {
				lane_of(st, u->src[2], i, e2, sizeof e2);
				tg_strbuf_addf(&st->body, " %s[%s+%u] = %s;", e0, e1,
				               i, e2);
			}
			tg_strbuf_add(&st->body, " }\n");
		}
		return;
	}
	case TG_CAST:
		emit_value(st, u, lane_cast);
		return;
	case TG_VECTORIZE:
		if (u->nsrc != c) {
			fail(st, "render_c: %s with a wrong source count",
			     "VECTORIZE");
			return;
		}
		emit_value(st, u, lane_vec);
		return;
	case TG_GEP: {
		const char *t = tyname(st, u->dtype, tb, sizeof tb);
		if (!t)
			return;
		lane_of(st, u->src[0], (unsigned)u->arg.v.i, e0, sizeof e0);
		snprintf(name, sizeof name, "v%u", st->nv++);
		ind(st);
		tg_strbuf_addf(&st->body, "const %s %s = %s;\n", t, name, e0);
		set_name(st, u, name);
		return;
	}
	case TG_BITCAST: {
		char ts[64];
		const char *t = tyname(st, u->dtype, tb, sizeof tb);
		const char *f = tyname(st, u->src[0]->dtype, ts, sizeof ts);
		if (!t || !f)
			return;
		expr_of(st, u->src[0], e0, sizeof e0);
		snprintf(name, sizeof name, "v%u", st->nv++);
		ind(st);
		tg_strbuf_addf(&st->body,
		               "%s %s; { const %s tg_b = %s; "
		               "__builtin_memcpy(&%s, &tg_b, sizeof %s); }\n",
		               t, name, f, e0, name, name);
		set_name(st, u, name);
		return;
	}
	default:
		if (tg_op_arity(u->op)) {
			emit_value(st, u, lane_alu);
			return;
		}
		fail(st, "render_c: cannot render op %s", tg_op_name(u->op));
	}
}

static int cmp_buf(const void *a, const void *b)
{
	const tg_uop *x = *(tg_uop *const *)a, *y = *(tg_uop *const *)b;

	return (x->arg.v.i > y->arg.v.i) - (x->arg.v.i < y->arg.v.i);
}

char *tg_render_c(const char *name, tg_uop *const *lin, size_t n)
{
	rc_state st;
	tg_strbuf out;
	tg_uop **vars = NULL;
	size_t nvars = 0;
	int gidx_used[3] = { 0, 0, 0 };
	char *body = NULL, *res = NULL;
	char tb[64];

	memset(&st, 0, sizeof st);
	tg_strbuf_init(&st.body);
	tg_strbuf_init(&out);
	for (size_t i = 0; i < n; i++)
		if (lin[i]->id > st.maxid)
			st.maxid = lin[i]->id;
	st.names = calloc((size_t)st.maxid + 1, sizeof *st.names);
	vars = calloc(n + 1, sizeof *vars);
	if (!st.names || !vars) {
		tg_error_oom("render_c");
		goto done;
	}
	/* prologue: buffers (by number), variables (by name), launch
	 * indices */
	st.depth = 1;
	for (size_t i = 0; i < n; i++)
		if (lin[i]->op == TG_DEFINE_GLOBAL)
			vars[nvars++] = lin[i];
	qsort(vars, nvars, sizeof *vars, cmp_buf);
	for (size_t i = 0; i < nvars; i++) {
		tg_uop *u = vars[i];
		{
			tg_type et = tg_type_base(tg_type_deref(u->dtype));
			const char *t = tyname(&st, et, tb, sizeof tb);
			const char *cq = u->arg.a ? "" : "const ";
			char nm[32];
			if (!t)
				break;
			if (tg_type_scalar(et) == TG_BFLOAT16)
				st.use_bf16 = 1;
			snprintf(nm, sizeof nm, "data%" PRId64, u->arg.v.i);
			tg_strbuf_addf(&st.body,
			               "\t%s%s *restrict %s = (%s%s *)bufs[%" PRId64
			               "];\n", cq, t, nm, cq, t, u->arg.v.i);
			set_name(&st, u, nm);
		}
	}
	nvars = 0;
	for (size_t i = 0; i < n && !st.err; i++) {
		tg_uop *u = lin[i];
		if (u->op == TG_DEFINE_VAR) {
			vars[nvars++] = u;
		} else if (u->op == TG_SPECIAL) {
			const char *nm = u->arg.name ? u->arg.name : "";
			if (strncmp(nm, "gidx", 4) || nm[4] < '0' || nm[4] > '2' ||
			    nm[5]) {
				fail(&st, "render_c: launch index %s in a C kernel",
				     nm);
				break;
			}
			gidx_used[nm[4] - '0'] = 1;
			set_name(&st, u, nm);
		}
	}
	qsort(vars, nvars, sizeof *vars, cmp_var);
	for (size_t i = 0; i < nvars; i++) {
		const char *nm = vars[i]->arg.name ? vars[i]->arg.name : "";
		tg_strbuf_addf(&st.body, "\tconst long %s = vals[%zu];\n", nm, i);
		set_name(&st, vars[i], nm);
	}
	tg_strbuf_add(&st.body, "\t(void)vals; (void)global;\n"
	              "\tfor (size_t tg_i = lo; tg_i < hi; tg_i++) {\n");
	st.depth = 2;
	if (gidx_used[0])
		tg_strbuf_add(&st.body,
		              "\t\tconst long gidx0 = (long)(tg_i % global[0]);\n");
	if (gidx_used[1])
		tg_strbuf_add(&st.body, "\t\tconst long gidx1 = "
		              "(long)(tg_i / global[0] % global[1]);\n");
	if (gidx_used[2])
		tg_strbuf_add(&st.body, "\t\tconst long gidx2 = "
		              "(long)(tg_i / (global[0] * global[1]));\n");
	for (size_t i = 0; i < n && !st.err; i++)
		render_node(&st, lin[i]);
	if (!st.err && st.depth != 2)
		fail(&st, "render_c: %s", "unbalanced RANGE/ENDRANGE");
	tg_strbuf_add(&st.body, "\t}\n}\n");
	if (st.err)
		goto done;
	body = tg_strbuf_finish(&st.body);
	if (!body) {
		tg_error_oom("render_c");
		goto done;
	}
	tg_strbuf_add(&out, "#include <stddef.h>\n#include <stdint.h>\n");
	for (unsigned s = 0; s < TG_NSCALARS; s++)
		for (unsigned k = 1; k < 7; k++)
			if (st.vec_used[s] & (1u << k))
				tg_strbuf_addf(&out, "typedef %s tg_%s%u "
				               "__attribute__((vector_size(%zu)));\n",
				               cty(s), vname(s), 1u << k,
				               (size_t)(1u << k) *
				               (tg_scalar_bits(s) / 8));
	if (st.use_bf16)
		tg_strbuf_add(&out,
		    "static inline float tg_bf2f(unsigned short x)\n"
		    "{ unsigned int u = (unsigned int)x << 16; float f;\n"
		    "  __builtin_memcpy(&f, &u, 4); return f; }\n"
		    "static inline unsigned short tg_f2bf(float f)\n"
		    "{ unsigned int u; __builtin_memcpy(&u, &f, 4);\n"
		    "  if ((u & 0x7fffffffu) > 0x7f800000u)\n"
		    "    return (unsigned short)((u >> 16) | 0x40u);\n"
		    "  u += 0x7fffu + ((u >> 16) & 1u);\n"
		    "  return (unsigned short)(u >> 16); }\n");
	if (st.use_threefry)
		tg_strbuf_add(&out, threefry_c);
	tg_strbuf_addf(&out,
	               "__attribute__((optimize(\"fp-contract=off\")))\n"
	               "void %s(void *const *bufs, const int64_t *vals, "
	               "const size_t *global, size_t lo, size_t hi)\n{\n%s",
	               name, body);
	res = tg_strbuf_finish(&out);
	if (!res)
		tg_error_oom("render_c");
done:
	tg_strbuf_release(&st.body);
	tg_strbuf_release(&out);
	free(body);
	if (st.names)
		for (uint32_t i = 0; i <= st.maxid; i++)
			free(st.names[i]);
	free(st.names);
	free(vars);
	return res;
}

/*
 * render/render_alu.c - the expressions of the C-family renderer: ALU
 * ops, casts and bitcasts in each dialect (render_c.c writes the
 * statements around them).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "render/render.h"

/* A bf16 operand as float. */
static void operand(unsigned s, const char *e, char *out, size_t n)
{
	if (s == TG_BFLOAT16)
		snprintf(out, n, "tg_bf2f(%s)", e);
	else
		snprintf(out, n, "%s", e);
}

/* Boolean ALU ops in GLSL, whose bools take no arithmetic: 1 when
 * rendered. */
static int glsl_bool_alu(tg_strbuf *sb, unsigned op, const char *a,
                         const char *b)
{
	switch (op) {
	case TG_ADD: case TG_OR: case TG_MAX:
		tg_strbuf_addf(sb, "(%s||%s)", a, b);
		return 1;
	case TG_MUL: case TG_AND:
		tg_strbuf_addf(sb, "(%s&&%s)", a, b);
		return 1;
	case TG_XOR:
		tg_strbuf_addf(sb, "(%s^^%s)", a, b);
		return 1;
	case TG_CMPLT:
		tg_strbuf_addf(sb, "(!%s&&%s)", a, b);
		return 1;
	case TG_NEG:
		tg_strbuf_addf(sb, "(!%s)", a);
		return 1;
	default:
		return 0;
	}
}

/* EXP2, LOG2, SIN, SQRT: float16 through float (as C's __builtin). */
static int transcendental(rc_state *st, tg_strbuf *sb, unsigned op,
                          unsigned cs, const char *a)
{
	const char *fn = op == TG_EXP2 ? "exp2" : op == TG_LOG2 ? "log2"
	                 : op == TG_SIN ? "sin" : "sqrt";
	int c = st->d->id == TG_DIALECT_C;

	if (!tg_scalar_is_float(cs))
		return -1;
	if (cs == TG_FLOAT64 && st->d->id == TG_DIALECT_GLSL &&
	    op != TG_SQRT) {
		if (!st->err)
			st->err = tg_error(TG_EUNSUPPORTED, "render: GLSL has no "
			                   "float64 %s", tg_op_name(op));
		return 0;
	}
	if (cs == TG_FLOAT16) {
		tg_rstate_open_cast(st, sb, tg_rstate_type(st, cs));
		tg_strbuf_addf(sb, "%s%s%s(", c ? "__builtin_" : "", fn,
		               c ? "f" : "");
		tg_rstate_open_cast(st, sb, "float");
		tg_strbuf_add(sb, a);
		tg_rstate_close_cast(st, sb);
		tg_strbuf_add(sb, ")");
		tg_rstate_close_cast(st, sb);
	} else {
		tg_strbuf_addf(sb, "%s%s%s(%s)", c ? "__builtin_" : "", fn,
		               c && cs != TG_FLOAT64 ? "f" : "", a);
	}
	return 0;
}

/* A fused multiply-add on floats (MULACC: tg_exec_alu rounds once): C's
 * fmaf and fma, OpenCL's and GLSL's fma.  float16 goes through float. */
static void fma_expr(rc_state *st, tg_strbuf *sb, unsigned cs,
                     const char *T, const char *a, const char *b,
                     const char *c)
{
	int cd = st->d->id == TG_DIALECT_C;
	const char *fn = !cd ? "fma" : cs == TG_FLOAT64 ? "__builtin_fma"
	                                                : "__builtin_fmaf";

	if (cs != TG_FLOAT16) {
		tg_strbuf_addf(sb, "%s(%s,%s,%s)", fn, a, b, c);
		return;
	}
	tg_rstate_open_cast(st, sb, T);
	tg_strbuf_addf(sb, "%s(", fn);
	for (int i = 0; i < 3; i++) {
		if (i)
			tg_strbuf_add(sb, ",");
		tg_rstate_open_cast(st, sb, "float");
		tg_strbuf_add(sb, i == 0 ? a : i == 1 ? b : c);
		tg_rstate_close_cast(st, sb);
	}
	tg_strbuf_add(sb, ")");
	tg_rstate_close_cast(st, sb);
}

/* What the text of one ALU op needs: the operands as text (bf16 ones
 * already as float), the kind it computes in and that kind's types. */
typedef struct alu_args {
	rc_state *st;
	tg_strbuf *sb;
	unsigned op, cs;  /* the op; its compute kind */
	const char *T, *U; /* cs's type; the unsigned type of cs's width */
	const char *a, *b, *c;
	int glsl, isf, wrapint;
} alu_args;

/* Each op's text; -1 where the op has none on the kind. */
static int alu_recip(const alu_args *x)
{
	tg_scalar one;

	if (!x->isf)
		return -1;
	one.f = 1.0;
	tg_rstate_open_cast(x->st, x->sb, x->T);
	tg_rstate_const(x->st, x->sb, one, x->cs);
	tg_strbuf_addf(x->sb, "/%s", x->a);
	tg_rstate_close_cast(x->st, x->sb);
	return 0;
}

static int alu_neg(const alu_args *x)
{
	if (x->cs == TG_BOOL) {
		tg_strbuf_addf(x->sb, "(!%s)", x->a);
		return 0;
	}
	tg_rstate_open_cast(x->st, x->sb, x->T);
	if (x->wrapint) {
		tg_strbuf_add(x->sb, "-");
		tg_rstate_open_cast(x->st, x->sb, x->U);
		tg_strbuf_add(x->sb, x->a);
		tg_rstate_close_cast(x->st, x->sb);
	} else {
		tg_strbuf_addf(x->sb, "-%s", x->a);
	}
	tg_rstate_close_cast(x->st, x->sb);
	return 0;
}

/* ADD and MUL: bools as | and &, signed ints wrapping through the
 * unsigned type where the dialect does not wrap. */
static int alu_add_mul(const alu_args *x)
{
	const char *o = x->op == TG_ADD ? "+" : "*";

	if (x->cs == TG_BOOL) {
		tg_strbuf_addf(x->sb, "((%s)(%s%s%s))", x->T, x->a,
		               x->op == TG_ADD ? "|" : "&", x->b);
	} else if (x->wrapint) {
		tg_strbuf_addf(x->sb, "((%s)((%s)%s%s(%s)%s))", x->T, x->U,
		               x->a, o, x->U, x->b);
	} else {
		tg_rstate_open_cast(x->st, x->sb, x->T);
		tg_strbuf_addf(x->sb, "%s%s%s", x->a, o, x->b);
		tg_rstate_close_cast(x->st, x->sb);
	}
	return 0;
}

static int alu_div_mod(const alu_args *x)
{
	const char *a = x->a, *b = x->b;

	if (x->isf || x->cs == TG_BOOL)
		return -1;
	tg_rstate_open_cast(x->st, x->sb, x->T);
	/* GLSL leaves % of negative operands undefined */
	if (x->op == TG_MOD && x->glsl && !tg_scalar_is_unsigned(x->cs))
		tg_strbuf_addf(x->sb, "%s-(%s/%s)*%s", a, a, b, b);
	else
		tg_strbuf_addf(x->sb, "%s%s%s", a, x->op == TG_IDIV ? "/" : "%",
		               b);
	tg_rstate_close_cast(x->st, x->sb);
	return 0;
}

/* MAX propagates NaN, as tg_exec_alu does. */
static int alu_max(const alu_args *x)
{
	const char *a = x->a, *b = x->b;

	if (x->isf && x->glsl)
		tg_strbuf_addf(x->sb, "((isnan(%s)||%s>%s)?%s:%s)", a, a, b, a,
		               b);
	else if (x->isf)
		tg_strbuf_addf(x->sb, "((%s!=%s||%s>%s)?%s:%s)", a, a, a, b, a,
		               b);
	else
		tg_strbuf_addf(x->sb, "(%s>%s?%s:%s)", a, b, a, b);
	return 0;
}

static int alu_cmp(const alu_args *x)
{
	if (x->op == TG_CMPLT)
		tg_strbuf_addf(x->sb, "(%s<%s)", x->a, x->b);
	else /* GLSL's != on floats may be ordered: false for NaN */
		tg_strbuf_addf(x->sb, x->isf && x->glsl ? "(!(%s==%s))"
		                                        : "(%s!=%s)", x->a, x->b);
	return 0;
}

/* XOR, OR, AND, SHR: C's operators; SHL shifts the unsigned type where
 * the dialect does not wrap (a signed left shift into the sign bit is
 * undefined in C). */
static int alu_bits(const alu_args *x)
{
	const char *o = x->op == TG_XOR ? "^" : x->op == TG_OR ? "|"
	                : x->op == TG_AND ? "&" : ">>";

	if (x->isf)
		return -1;
	tg_rstate_open_cast(x->st, x->sb, x->T);
	tg_strbuf_addf(x->sb, "%s%s%s", x->a, o, x->b);
	tg_rstate_close_cast(x->st, x->sb);
	return 0;
}

static int alu_shl(const alu_args *x)
{
	if (x->isf || x->cs == TG_BOOL)
		return -1;
	tg_rstate_open_cast(x->st, x->sb, x->T);
	if (x->st->d->native_wrap) {
		tg_strbuf_addf(x->sb, "%s<<%s", x->a, x->b);
	} else {
		tg_rstate_open_cast(x->st, x->sb, x->U);
		tg_strbuf_add(x->sb, x->a);
		tg_rstate_close_cast(x->st, x->sb);
		tg_strbuf_addf(x->sb, "<<%s", x->b);
	}
	tg_rstate_close_cast(x->st, x->sb);
	return 0;
}

/* MULACC: one fused multiply-add on floats, a*b+c wrapping on ints. */
static int alu_mulacc(const alu_args *x)
{
	if (x->isf) {
		fma_expr(x->st, x->sb, x->cs, x->T, x->a, x->b, x->c);
		return 0;
	}
	tg_rstate_open_cast(x->st, x->sb, x->T);
	tg_strbuf_add(x->sb, "(");
	tg_rstate_open_cast(x->st, x->sb, x->T);
	tg_strbuf_addf(x->sb, "%s*%s", x->a, x->b);
	tg_rstate_close_cast(x->st, x->sb);
	tg_strbuf_addf(x->sb, ")+%s", x->c);
	tg_rstate_close_cast(x->st, x->sb);
	return 0;
}

static int alu_threefry(const alu_args *x)
{
	if (x->cs != TG_UINT64)
		return -1;
	x->st->k.use_threefry = 1;
	tg_strbuf_addf(x->sb, "tg_threefry(%s,%s)", x->a, x->b);
	return 0;
}

/* The op's text, or -1 where it has none on the kind. */
static int alu_expr(const alu_args *x)
{
	switch (x->op) {
	case TG_EXP2: case TG_LOG2: case TG_SIN: case TG_SQRT:
		return transcendental(x->st, x->sb, x->op, x->cs, x->a);
	case TG_THREEFRY: return alu_threefry(x);
	case TG_RECIP: return alu_recip(x);
	case TG_NEG: return alu_neg(x);
	case TG_ADD: case TG_MUL: return alu_add_mul(x);
	case TG_IDIV: case TG_MOD: return alu_div_mod(x);
	case TG_MAX: return alu_max(x);
	case TG_CMPLT: case TG_CMPNE: return alu_cmp(x);
	case TG_XOR: case TG_OR: case TG_AND: case TG_SHR: return alu_bits(x);
	case TG_SHL: return alu_shl(x);
	case TG_MULACC: return alu_mulacc(x);
	default: return -1;
	}
}

/* Signed ints wrap through the unsigned type where the dialect does not
 * wrap; so do unsigned ones narrower than int, whose promotion to int
 * could overflow MUL. */
static int wraps(const rc_state *st, unsigned cs)
{
	if (st->d->native_wrap || !tg_scalar_is_int(cs) || cs == TG_INDEX)
		return 0;
	return !tg_scalar_is_unsigned(cs) || tg_scalar_bits(cs) < 32;
}

/* Scalar ALU op: sout the result kind, sin the operand kind (WHERE: of
 * b and c). */
void tg_render_alu(rc_state *st, tg_strbuf *sb, unsigned op, unsigned sout,
                   unsigned sin, const char *ea, const char *eb,
                   const char *ec)
{
	size_t n = sizeof st->x->opnd[0];
	unsigned cs = sin == TG_BFLOAT16 ? TG_FLOAT32 : sin; /* compute */
	alu_args x = { .st = st, .sb = sb, .op = op, .cs = cs,
		.T = tg_rstate_type(st, cs),
		.U = tg_rstate_type(st, tg_scalar_bits(cs) > 32 ? TG_UINT64
		                                                : TG_UINT32),
		.a = st->x->opnd[0], .b = st->x->opnd[1], .c = st->x->opnd[2],
		.glsl = st->d->id == TG_DIALECT_GLSL,
		.isf = tg_scalar_is_float(cs), .wrapint = wraps(st, cs) };
	int tobf = sout == TG_BFLOAT16;

	if (!x.T || !x.U)
		return;
	if (op == TG_WHERE) {
		tg_strbuf_addf(sb, "(%s?%s:%s)", ea, eb, ec);
		return;
	}
	operand(sin, ea, st->x->opnd[0], n);
	if (eb)
		operand(sin, eb, st->x->opnd[1], n);
	if (op == TG_MULACC)
		operand(sin, ec, st->x->opnd[2], n);
	if (tobf)
		tg_strbuf_add(sb, "tg_f2bf(");
	if (!(x.glsl && cs == TG_BOOL && glsl_bool_alu(sb, op, x.a, x.b)) &&
	    alu_expr(&x) && !st->err)
		st->err = tg_error(TG_EUNSUPPORTED, "render: %s cannot render "
		                   "ALU op %s on %s", st->d->name,
		                   tg_op_name(op), tg_dtype_name(cs));
	if (tobf)
		tg_strbuf_add(sb, ")");
}

/* CAST of a scalar expression from kind a to kind b. */
void tg_render_cast(rc_state *st, tg_strbuf *sb, unsigned from, unsigned to,
                    const char *e)
{
	const char *t = tg_rstate_type(st, to == TG_BFLOAT16 ? TG_FLOAT32 : to);

	if (!t || !tg_rstate_type(st, from))
		return;
	if (from == to) {
		tg_strbuf_add(sb, e);
	} else if (to == TG_BFLOAT16) {
		st->k.use_bf16 = 1;
		tg_strbuf_add(sb, "tg_f2bf(");
		if (from == TG_FLOAT32) {
			tg_strbuf_add(sb, e);
		} else {
			tg_rstate_open_cast(st, sb, "float");
			if (from == TG_BFLOAT16)
				tg_strbuf_addf(sb, "tg_bf2f(%s)", e);
			else
				tg_strbuf_add(sb, e);
			tg_rstate_close_cast(st, sb);
		}
		tg_strbuf_add(sb, ")");
	} else if (from == TG_BFLOAT16) {
		st->k.use_bf16 = 1;
		tg_rstate_open_cast(st, sb, t);
		tg_strbuf_addf(sb, "tg_bf2f(%s)", e);
		tg_rstate_close_cast(st, sb);
	} else {
		tg_rstate_open_cast(st, sb, t);
		tg_strbuf_add(sb, e);
		tg_rstate_close_cast(st, sb);
	}
}

/* The function of dialect d (GLSL or CUDA) reinterpreting kind `from`
 * as kind `to` (same size); "" for a conversion (ints, and bf16's bits,
 * of one size), NULL when the dialect has none.  CUDA's float64 <->
 * uint64 goes through int64 (render_c.c). */
const char *tg_bitcast_fn(int d, unsigned from, unsigned to)
{
	static const struct {
		unsigned from, to;
		const char *glsl, *cuda;
	} t[] = {
		{ TG_FLOAT32, TG_INT32, "floatBitsToInt", "__float_as_int" },
		{ TG_FLOAT32, TG_UINT32, "floatBitsToUint", "__float_as_uint" },
		{ TG_INT32, TG_FLOAT32, "intBitsToFloat", "__int_as_float" },
		{ TG_UINT32, TG_FLOAT32, "uintBitsToFloat", "__uint_as_float" },
		{ TG_FLOAT64, TG_INT64, "doubleBitsToInt64",
		  "__double_as_longlong" },
		{ TG_FLOAT64, TG_UINT64, "doubleBitsToUint64", NULL },
		{ TG_INT64, TG_FLOAT64, "int64BitsToDouble",
		  "__longlong_as_double" },
		{ TG_UINT64, TG_FLOAT64, "uint64BitsToDouble", NULL },
		{ TG_FLOAT16, TG_INT16, "float16BitsToInt16", "__half_as_short" },
		{ TG_FLOAT16, TG_UINT16, "float16BitsToUint16",
		  "__half_as_ushort" },
		{ TG_FLOAT16, TG_BFLOAT16, "float16BitsToUint16",
		  "__half_as_ushort" },
		{ TG_INT16, TG_FLOAT16, "int16BitsToFloat16", "__short_as_half" },
		{ TG_UINT16, TG_FLOAT16, "uint16BitsToFloat16",
		  "__ushort_as_half" },
		{ TG_BFLOAT16, TG_FLOAT16, "uint16BitsToFloat16",
		  "__ushort_as_half" },
		/* bfloat16 lives as its bits, a 16-bit unsigned int */
		{ TG_BFLOAT16, TG_INT16, "", "" },
		{ TG_BFLOAT16, TG_UINT16, "", "" },
		{ TG_INT16, TG_BFLOAT16, "", "" },
		{ TG_UINT16, TG_BFLOAT16, "", "" },
	};

	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (t[i].from == from && t[i].to == to)
			return d == TG_DIALECT_CUDA ? t[i].cuda : t[i].glsl;
	if (!tg_scalar_is_float(from) && !tg_scalar_is_float(to) &&
	    from != TG_BOOL && to != TG_BOOL)
		return "";
	return NULL;
}

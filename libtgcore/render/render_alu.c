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

/* Scalar ALU op: sout the result kind, sin the operand kind (WHERE: of
 * b and c). */
void tg_render_alu(rc_state *st, tg_strbuf *sb, unsigned op, unsigned sout,
                   unsigned sin, const char *ea, const char *eb,
                   const char *ec)
{
	char *a = st->x->opnd[0], *b = st->x->opnd[1], *c = st->x->opnd[2];
	size_t n = sizeof st->x->opnd[0];
	unsigned cs = sin == TG_BFLOAT16 ? TG_FLOAT32 : sin; /* compute */
	const char *T = tg_rstate_type(st, cs);
	int glsl = st->d->id == TG_DIALECT_GLSL;
	int isf = tg_scalar_is_float(cs);
	int wrapint = tg_scalar_is_int(cs) && cs != TG_INDEX &&
	              !tg_scalar_is_unsigned(cs) && !st->d->native_wrap;
	const char *U = tg_rstate_type(st, tg_scalar_bits(cs) > 32 ? TG_UINT64
	                                                 : TG_UINT32);
	int tobf = sout == TG_BFLOAT16;

	if (!T || !U)
		return;
	if (op == TG_WHERE) {
		tg_strbuf_addf(sb, "(%s?%s:%s)", ea, eb, ec);
		return;
	}
	operand(sin, ea, a, n);
	if (eb)
		operand(sin, eb, b, n);
	if (tobf)
		tg_strbuf_add(sb, "tg_f2bf(");
	/* for small unsigned kinds promotion to int could overflow MUL */
	if (tg_scalar_is_unsigned(cs) && tg_scalar_bits(cs) < 32 &&
	    !st->d->native_wrap)
		wrapint = 1;
	if (glsl && cs == TG_BOOL && glsl_bool_alu(sb, op, a, b))
		goto done;
	switch (op) {
	case TG_EXP2: case TG_LOG2: case TG_SIN: case TG_SQRT:
		if (transcendental(st, sb, op, cs, a))
			goto bad;
		break;
	case TG_THREEFRY:
		if (cs != TG_UINT64)
			goto bad;
		st->k.use_threefry = 1;
		tg_strbuf_addf(sb, "tg_threefry(%s,%s)", a, b);
		break;
	case TG_RECIP: {
		tg_scalar one;
		if (!isf)
			goto bad;
		one.f = 1.0;
		tg_rstate_open_cast(st, sb, T);
		tg_rstate_const(st, sb, one, cs);
		tg_strbuf_addf(sb, "/%s", a);
		tg_rstate_close_cast(st, sb);
		break;
	}
	case TG_NEG:
		if (cs == TG_BOOL) {
			tg_strbuf_addf(sb, "(!%s)", a);
			break;
		}
		tg_rstate_open_cast(st, sb, T);
		if (wrapint) {
			tg_strbuf_add(sb, "-");
			tg_rstate_open_cast(st, sb, U);
			tg_strbuf_add(sb, a);
			tg_rstate_close_cast(st, sb);
		} else {
			tg_strbuf_addf(sb, "-%s", a);
		}
		tg_rstate_close_cast(st, sb);
		break;
	case TG_ADD: case TG_MUL: {
		const char *o = op == TG_ADD ? "+" : "*";
		if (cs == TG_BOOL)
			tg_strbuf_addf(sb, "((%s)(%s%s%s))", T, a,
			               op == TG_ADD ? "|" : "&", b);
		else if (wrapint)
			tg_strbuf_addf(sb, "((%s)((%s)%s%s(%s)%s))", T, U, a, o, U,
			               b);
		else {
			tg_rstate_open_cast(st, sb, T);
			tg_strbuf_addf(sb, "%s%s%s", a, o, b);
			tg_rstate_close_cast(st, sb);
		}
		break;
	}
	case TG_IDIV: case TG_MOD:
		if (isf || cs == TG_BOOL)
			goto bad;
		tg_rstate_open_cast(st, sb, T);
		/* GLSL leaves % of negative operands undefined */
		if (op == TG_MOD && glsl && !tg_scalar_is_unsigned(cs))
			tg_strbuf_addf(sb, "%s-(%s/%s)*%s", a, a, b, b);
		else
			tg_strbuf_addf(sb, "%s%s%s", a, op == TG_IDIV ? "/" : "%",
			               b);
		tg_rstate_close_cast(st, sb);
		break;
	case TG_MAX:
		if (isf && glsl)
			tg_strbuf_addf(sb, "((isnan(%s)||%s>%s)?%s:%s)", a, a, b, a,
			               b);
		else if (isf)
			tg_strbuf_addf(sb, "((%s!=%s||%s>%s)?%s:%s)", a, a, a, b, a,
			               b);
		else
			tg_strbuf_addf(sb, "(%s>%s?%s:%s)", a, b, a, b);
		break;
	case TG_CMPLT:
		tg_strbuf_addf(sb, "(%s<%s)", a, b);
		break;
	case TG_CMPNE:
		/* GLSL's != on floats may be ordered: false for NaN */
		tg_strbuf_addf(sb, isf && glsl ? "(!(%s==%s))" : "(%s!=%s)", a,
		               b);
		break;
	case TG_XOR: case TG_OR: case TG_AND: case TG_SHR:
		if (isf)
			goto bad;
		tg_rstate_open_cast(st, sb, T);
		tg_strbuf_addf(sb, "%s%s%s", a,
		               op == TG_XOR ? "^" : op == TG_OR ? "|"
		               : op == TG_AND ? "&" : ">>", b);
		tg_rstate_close_cast(st, sb);
		break;
	case TG_SHL:
		if (isf || cs == TG_BOOL)
			goto bad;
		tg_rstate_open_cast(st, sb, T);
		if (st->d->native_wrap) {
			tg_strbuf_addf(sb, "%s<<%s", a, b);
		} else {
			tg_rstate_open_cast(st, sb, U);
			tg_strbuf_add(sb, a);
			tg_rstate_close_cast(st, sb);
			tg_strbuf_addf(sb, "<<%s", b);
		}
		tg_rstate_close_cast(st, sb);
		break;
	case TG_MULACC:
		operand(sin, ec, c, n);
		if (isf) {
			fma_expr(st, sb, cs, T, a, b, c);
			break;
		}
		tg_rstate_open_cast(st, sb, T);
		tg_strbuf_add(sb, "(");
		tg_rstate_open_cast(st, sb, T);
		tg_strbuf_addf(sb, "%s*%s", a, b);
		tg_rstate_close_cast(st, sb);
		tg_strbuf_addf(sb, ")+%s", c);
		tg_rstate_close_cast(st, sb);
		break;
	default:
	bad:
		if (!st->err)
			st->err = tg_error(TG_EUNSUPPORTED, "render: %s cannot render "
			                   "ALU op %s on %s", st->d->name,
			                   tg_op_name(op), tg_dtype_name(cs));
		break;
	}
done:
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
	};

	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (t[i].from == from && t[i].to == to)
			return d == TG_DIALECT_CUDA ? t[i].cuda : t[i].glsl;
	if (!tg_scalar_is_float(from) && !tg_scalar_is_float(to) &&
	    from != TG_BOOL && to != TG_BOOL)
		return "";
	return NULL;
}

/*
 * ir/ir.h - the compiler core's internal header: full types and scalar
 * semantics, the IR node (uop) and its contexts, the pattern matcher and
 * graph rewrite, and symbolic integers.  One section per .c file, in
 * pipeline order.  Never installed.
 *
 * Lifetime scheme (read this before holding a tg_uop pointer):
 *  - Every node lives in exactly one tg_ir context, which owns it until
 *    tg_ir_free(); nodes have no reference counts and are never freed one
 *    by one.  Within a context, structurally equal nodes are one pointer
 *    (hash-consing), so `a == b` is structural equality.
 *  - Nodes are immutable once returned.
 *  - A context is used by one thread at a time; interning takes no lock.
 *  - A node that must outlive its context (a symbolic shape kept by a
 *    view that outlives a compilation) is copied into the longer-lived
 *    context with tg_uop_import(), which re-interns it and its sources.
 *  - Errors inside a context stick: the first failure (out of memory, a
 *    NULL source) is kept in the context and in tg_last_error(); every
 *    builder returns NULL when handed a NULL source, so a chain of
 *    builders is checked once at its end.
 */
#ifndef TG_IR_H
#define TG_IR_H

#include "../core.h"

/* ---------------------------------------------------------------- dtype.c */

/* A full type packed in 32 bits so that it hashes and compares as an
 * integer: bits 0-7 the scalar kind (a tg_dtype, TG_INDEX or TG_VOID),
 * bits 8-23 the vector width minus one, bits 24-25 the address space
 * (pointers only). */
typedef uint32_t tg_type;

/* Scalar kinds beyond the public enum.  TG_INDEX is the type of index
 * and symbolic integer math: exact 64-bit signed arithmetic (tinygrad's
 * bigint before lowering).  TG_VOID types nodes with no value (SINK,
 * STORE). */
enum { TG_INDEX = TG_NDTYPES, TG_VOID, TG_NSCALARS };

enum tg_addrspace { TG_AS_NONE, TG_AS_GLOBAL, TG_AS_LOCAL };

#define TG_TYPE_MAX_COUNT 65536u

static inline unsigned tg_type_scalar(tg_type t) { return t & 0xffu; }
static inline unsigned tg_type_count(tg_type t)
{
	return ((t >> 8) & 0xffffu) + 1;
}
static inline unsigned tg_type_space(tg_type t) { return (t >> 24) & 3u; }
static inline int tg_type_is_ptr(tg_type t) { return tg_type_space(t) != 0; }
/* The vector of `count` elements of t's scalar (count 1: the scalar);
 * the address space is kept.  count must be 1..TG_TYPE_MAX_COUNT. */
static inline tg_type tg_type_vec(tg_type t, unsigned count)
{
	return (t & ~0xffff00u) | ((count - 1) << 8);
}
/* Pointer in `space` to elements of type t. */
static inline tg_type tg_type_ptr(tg_type t, unsigned space)
{
	return (t & 0xffffffu) | (space << 24);
}
/* The element type of a pointer (t itself when not a pointer). */
static inline tg_type tg_type_deref(tg_type t) { return t & 0xffffffu; }
/* The scalar of t: no vector, no pointer. */
static inline tg_type tg_type_base(tg_type t) { return t & 0xffu; }

/* Scalar-kind predicates (take a tg_dtype, TG_INDEX or TG_VOID).  Ints
 * include TG_INDEX and exclude bool. */
int tg_scalar_is_float(unsigned s);
int tg_scalar_is_int(unsigned s);
int tg_scalar_is_unsigned(unsigned s);
/* float16 or bfloat16: the 16-bit floats. */
int tg_scalar_is_half(unsigned s);
/* Bits of a scalar kind's values: 1 for bool, 64 for TG_INDEX. */
unsigned tg_scalar_bits(unsigned s);
/* "float4", "int*", "__local float*", "index", "void": into buf. */
const char *tg_type_format(tg_type t, char *buf, size_t n);

/* Promotion (tinygrad's dtype lattice; see dtype.c). */
/* TG_NDTYPES when an argument is outside the enum; the bound of no
 * dtypes (n == 0) is bool, which promotes to everything. */
tg_dtype tg_dtype_lub(tg_dtype a, tg_dtype b);
tg_dtype tg_dtype_lub_n(const tg_dtype *dts, size_t n);
/* dt if it is a float, else the least float above it and float32. */
tg_dtype tg_dtype_lub_float(tg_dtype dt);
/* The accumulator of a sum: at least int32/uint32 for ints and bool,
 * at least float32 for floats. */
tg_dtype tg_dtype_sum_acc(tg_dtype dt);
/* Parses a dtype name in any case (the names of tg_dtype_name, plus
 * the C-ish names of tg_type_format: half, __bf16, float, double, int,
 * uint, long, ulong, char, uchar, short, ushort); TG_EINVAL when
 * unknown. */
int tg_dtype_parse(const char *name, tg_dtype *out);

/* ------------------------------------------------------------ ir/scalar.c */

/* A constant of a known scalar kind: bool and every int kind but uint64
 * are in `i` (sign- or zero-extended), uint64 in `u`, floats in `f`
 * (always exactly representable in their kind: float16 values are
 * doubles that float16 can hold). */
typedef union tg_scalar {
	int64_t i;
	uint64_t u;
	double f;
} tg_scalar;

/* The signed value of a 64-bit two's complement pattern, without the
 * implementation-defined conversion. */
static inline int64_t tg_sval(uint64_t x)
{
	return x <= INT64_MAX ? (int64_t)x : -(int64_t)~x - 1;
}
/* Rounds a double to float16/bfloat16/float32 (round to nearest even,
 * overflow to inf, subnormals kept); float64 and other kinds unchanged. */
double tg_float_round(double x, unsigned s);
/* IEEE binary16 and bfloat16 encodings. */
uint16_t tg_f16_bits(double x);
double tg_f16_value(uint16_t bits);
uint16_t tg_bf16_bits(double x);
double tg_bf16_value(uint16_t bits);

/* Wraps an integer to kind s (two's complement), or makes it 0/1 for
 * bool; floats are rounded from the integer. */
tg_scalar tg_scalar_from_int(int64_t v, unsigned s);
/* The value as a double (uint64 and int64 may round). */
double tg_scalar_to_double(tg_scalar v, unsigned s);
/* Bit pattern of v in kind s (low tg_scalar_bits(s) bits) and back. */
uint64_t tg_scalar_to_bits(tg_scalar v, unsigned s);
tg_scalar tg_scalar_from_bits(uint64_t bits, unsigned s);
/* Exact equality of two constants of kind s (floats bitwise). */
int tg_scalar_eq(tg_scalar a, tg_scalar b, unsigned s);
/* "1.5f", "-3", "true", "NAN": C-ish text for messages and dumps. */
const char *tg_scalar_format(tg_scalar v, unsigned s, char *buf, size_t n);
/* The least and greatest value of kind s: the range of an int kind
 * (TG_INDEX: int64's), 0 and 1 for bool, -inf and +inf for floats. */
tg_scalar tg_dtype_min(unsigned s);
tg_scalar tg_dtype_max(unsigned s);

/* Cast like C, made total: int->int wraps, float->int truncates toward
 * zero (TG_EINVAL when NaN, inf or out of range: undefined in C), any->
 * bool is `!= 0`, ->float rounds to nearest even. */
int tg_exec_cast(tg_scalar v, unsigned from, unsigned to, tg_scalar *out);
/* Reinterprets the bits; TG_EINVAL when the sizes differ. */
int tg_exec_bitcast(tg_scalar v, unsigned from, unsigned to,
                    tg_scalar *out);

/* ------------------------------------------- the ops (ir/alu.c, ir/uop.c) */

/* Every IR op: name, ALU arity (0 for non-ALU ops), flags.  The order
 * decides nothing semantic; tinygrad's enum order is kept for dumps. */
#define TG_OPF_COMMUTE 1u  /* f(a, b) == f(b, a) */
#define TG_OPF_CMP 2u      /* result is bool */
#define TG_OPF_INT 4u      /* only defined on ints and bool */
#define TG_OPF_UNSAFE_PAD 8u /* f(0) != 0: a padded region cannot fold */
#define TG_OPS(X) TG_OPS_NODE(X) TG_OPS_ALU(X)
/* The ops that are not ALU: graph structure, memory, control flow. */
#define TG_OPS_NODE(X)                                                \
	X(SINK, 0, 0) X(EXPAND, 0, 0) X(CONTRACT, 0, 0)                \
	X(VIEW, 0, 0) X(SHAPETRACKER, 0, 0) X(REDUCE_AXIS, 0, 0)       \
	X(DEFINE_GLOBAL, 0, 0) X(DEFINE_VAR, 0, 0)                     \
	X(DEFINE_LOCAL, 0, 0) X(DEFINE_ACC, 0, 0) X(CONST, 0, 0)       \
	X(SPECIAL, 0, 0) X(BIND, 0, 0) X(NOOP, 0, 0) X(UNMUL, 0, 0)    \
	X(GEP, 0, 0) X(CAST, 0, 0) X(BITCAST, 0, 0) X(VECTORIZE, 0, 0) \
	X(REDUCE, 0, 0) X(WMMA, 0, 0) X(LOAD, 0, 0) X(STORE, 0, 0)     \
	X(PHI, 0, 0) X(BARRIER, 0, 0) X(IF, 0, 0) X(RANGE, 0, 0)       \
	X(ENDRANGE, 0, 0) X(ENDIF, 0, 0)
/* The ALU ops: a value from values, lane by lane.  A new one added here
 * is folded on constants and expanded over vector lanes by the rules
 * that match TG_ALU_OPS (HACKING.md, "Adding an op"). */
#define TG_OPS_ALU(X)                                                 \
	X(EXP2, 1, TG_OPF_UNSAFE_PAD) X(LOG2, 1, TG_OPF_UNSAFE_PAD)    \
	X(SIN, 1, 0) X(SQRT, 1, 0) X(NEG, 1, 0)                        \
	X(RECIP, 1, TG_OPF_UNSAFE_PAD)                                 \
	X(ADD, 2, TG_OPF_COMMUTE) X(MUL, 2, TG_OPF_COMMUTE)            \
	X(IDIV, 2, TG_OPF_INT | TG_OPF_UNSAFE_PAD)                     \
	X(MAX, 2, TG_OPF_COMMUTE) X(MOD, 2, TG_OPF_INT)                \
	X(CMPLT, 2, TG_OPF_CMP) X(CMPNE, 2, TG_OPF_CMP | TG_OPF_COMMUTE) \
	X(XOR, 2, TG_OPF_COMMUTE | TG_OPF_INT)                         \
	X(SHL, 2, TG_OPF_INT) X(SHR, 2, TG_OPF_INT)                    \
	X(OR, 2, TG_OPF_COMMUTE | TG_OPF_INT)                          \
	X(AND, 2, TG_OPF_COMMUTE | TG_OPF_INT)                         \
	X(THREEFRY, 2, TG_OPF_INT | TG_OPF_UNSAFE_PAD) X(WHERE, 3, 0) X(MULACC, 3, 0)
/* Every ALU op as a list for P_OPS (it ends in a comma, which an
 * initializer list allows): P_OPS(TG_ALU_OPS TG_CAST). */
#define TG_ALU_OP_(name, arity, flags) TG_##name,
#define TG_ALU_OPS TG_OPS_ALU(TG_ALU_OP_)

typedef enum tg_op {
#define TG_OP_ENUM(name, arity, flags) TG_##name,
	TG_OPS(TG_OP_ENUM)
#undef TG_OP_ENUM
	TG_NOPS
} tg_op;

/* Static op name ("ADD"); "?" outside the enum. */
const char *tg_op_name(unsigned op);
/* ALU arity: 1, 2 or 3 for ALU ops, 0 otherwise. */
unsigned tg_op_arity(unsigned op);
unsigned tg_op_flags(unsigned op);

/* --------------------------------------------------------------- ir/alu.c */

/* Evaluates ALU op `op` on constants (tinygrad's exec_alu; constant
 * folding and the tests share it).  `s` is the operands' scalar kind;
 * for WHERE src[0] is the bool and s the kind of src[1] and src[2];
 * CMPLT/CMPNE produce a bool.  Semantics are C's on the kind: ints wrap,
 * IDIV truncates toward zero, MOD takes the dividend's sign, shifts are
 * logical for unsigned and arithmetic for signed; float results are
 * rounded to the kind; LOG2(0) = -inf, LOG2(<0) = SQRT(<0) = NaN,
 * SIN(inf) = NaN, RECIP(0) = inf with 0's sign, MAX propagates NaN.
 * Returns TG_EINVAL (and sets no message) where the result is undefined
 * or target-specific and must not be folded: integer division or modulo
 * by zero, INT_MIN / -1, a shift by a negative amount or by at least the
 * width, an op the kind does not have (IDIV on floats, SQRT on ints). */
int tg_exec_alu(unsigned op, unsigned s, const tg_scalar *src,
                tg_scalar *out);

/* --------------------------------------------------------------- ir/uop.c */

/* The op's argument.  Which fields mean something depends on the op:
 *   CONST          v (by the dtype's scalar kind)
 *   VIEW           a the ndim, b = 1 when masked, v.i = 1 when
 *                  contiguous (sources: see shape.h, tg_view_uop)
 *   REDUCE_AXIS    v.i the ALU op (ADD, MAX), a the reduced axes (bits)
 *   DEFINE_VAR     name, [a, b] the inclusive bounds
 *   RANGE          v.i the axis number, a = 1 for a reduce range
 *   SPECIAL        name ("gidx0"), a the size
 *   DEFINE_GLOBAL  v.i the buffer number, a = 1 for an output
 *   DEFINE_LOCAL   name, a the element count
 *   GEP            v.i the lane
 *   REDUCE         v.i the ALU op, a the unrolled axes (bits), b the
 *                  values once contracted (0 before)
 *   EXPAND         no sources: v.i the axis, a the upcast (a digit);
 *                  with sources (lanes): a the axes (bits)
 * Unused fields are zero; the whole struct takes part in hashing. */
typedef struct tg_arg {
	tg_scalar v;
	int64_t a, b;
	const char *name; /* owned by the node's context */
} tg_arg;

typedef struct tg_uop tg_uop;
struct tg_uop {
	uint16_t op;
	tg_type dtype;
	uint32_t id;     /* dense, in creation order within the context */
	uint32_t hash;
	uint32_t nsrc;
	tg_uop *next;    /* intern bucket chain */
	int64_t vmin, vmax; /* value bounds (see tg_uop_vmin) */
	tg_arg arg;
	tg_uop *src[];
};

typedef struct tg_ir tg_ir;

/* A new empty context.  NULL (with tg_last_error set) on OOM.  Owned by
 * the caller: tg_ir_free(). */
tg_ir *tg_ir_new(void);
/* Frees the context and every node in it.  NULL is allowed. */
void tg_ir_free(tg_ir *ir);
/* The first error that happened in the context (sticky), or TG_OK. */
int tg_ir_status(const tg_ir *ir);
/* Forgets the sticky error: for a long-lived context, after a build
 * that failed (the nodes made so far stay valid). */
void tg_ir_clear_status(tg_ir *ir);
/* Records an error in the context (the first one sticks) and sets
 * tg_last_error; returns NULL so a builder can `return tg_ir_fail(...)`. */
tg_uop *tg_ir_fail(tg_ir *ir, int status, const char *fmt, ...)
	TG_PRINTF(3, 4);
/* Number of nodes interned so far: every id is below it. */
uint32_t tg_ir_count(const tg_ir *ir);

/* The node (op, dtype, src, arg), interned.  `arg` may be NULL (all
 * zero).  Returns NULL when a source is NULL or on OOM.  Owned by ir. */
tg_uop *tg_uop_new(tg_ir *ir, unsigned op, tg_type dt, tg_uop *const *src,
                   size_t nsrc, const tg_arg *arg);
/* Shorthands for tg_uop_new with 0-3 sources and no arg. */
tg_uop *tg_uop0(tg_ir *ir, unsigned op, tg_type dt, const tg_arg *arg);
tg_uop *tg_uop1(tg_ir *ir, unsigned op, tg_type dt, tg_uop *a);
tg_uop *tg_uop2(tg_ir *ir, unsigned op, tg_type dt, tg_uop *a, tg_uop *b);
tg_uop *tg_uop3(tg_ir *ir, unsigned op, tg_type dt, tg_uop *a, tg_uop *b,
                tg_uop *c);
/* ALU node with the dtype its operands imply (bool for comparisons, the
 * value type for WHERE).  No simplification.  NULL on a NULL source. */
tg_uop *tg_uop_alu(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b,
                   tg_uop *c);
/* CONST of type dt (scalar or vector of it) with the value normalized to
 * the kind (wrapped, rounded). */
tg_uop *tg_uop_const(tg_ir *ir, tg_type dt, tg_scalar v);
tg_uop *tg_uop_const_int(tg_ir *ir, tg_type dt, int64_t v);
tg_uop *tg_uop_const_float(tg_ir *ir, tg_type dt, double v);
/* A node like `u` with different sources (u itself when equal). */
tg_uop *tg_uop_replace_src(tg_ir *ir, tg_uop *u, tg_uop *const *src,
                           size_t nsrc);

/* Whether u is a CONST; its value in *v when v is not NULL. */
int tg_uop_is_const(const tg_uop *u, tg_scalar *v);
/* Whether u is a CONST whose value equals the integer c (floats too). */
int tg_uop_is_const_int(const tg_uop *u, int64_t c);
/* 1 when u is a constant true (nonzero), 0 when a constant false, -1
 * when u is NULL or not a CONST. */
int tg_uop_const_bool(const tg_uop *u);

/* Bounds of u's value, inclusive, computed when the node is made:
 * exact ranges for bool and int kinds (the kind's whole range when the
 * math could wrap; uint64 clamps at INT64_MAX), INT64_MIN..INT64_MAX
 * (unknown) for floats and non-values. */
static inline int64_t tg_uop_vmin(const tg_uop *u) { return u->vmin; }
static inline int64_t tg_uop_vmax(const tg_uop *u) { return u->vmax; }

/* ------------------------------------------------------------ ir/bounds.c */

/* Sets u->vmin/vmax from its op, arg and sources (tinygrad's _min_max);
 * called once by tg_uop_new. */
void tg_uop_set_bounds(tg_uop *u);

/* -------------------------------------------------------------- ir/walk.c */

/* The graph under `root` in topological order (sources before users),
 * each node once, ties in source order.  Iterative.  Array owned by the
 * caller (free()); NULL (with tg_last_error) on OOM. */
tg_uop **tg_uop_toposort(const tg_uop *root, size_t *n);
/* One line per node, "%id OP dtype arg (srcs)", in topological order,
 * for DEBUG and tests.  New string (free()) or NULL on OOM. */
char *tg_uop_dump(const tg_uop *root);
/* The same node interned in `ir` (with its sources); `u` may belong to
 * any context, including ir itself.  NULL on OOM (sticky in ir). */
tg_uop *tg_uop_import(tg_ir *ir, const tg_uop *u);

/* ------------------------------------------------------------ ir/verify.c */

/* Checks every node under root: source counts and types fit the op
 * (ALU operands agree, comparisons give bool, LOAD/STORE on a buffer
 * with an integer index and bool gates, accumulators start from a CONST
 * of their type and run over RANGEs, vector lanes exist, trackers are
 * well formed, expander digits and lane sets and REDUCEs fit
 * codegen.h's forms).  TG_OK, or TG_EINTERNAL with "verify after <pass>: %id
 * OP type: what"; TG_ENOMEM. */
int tg_uop_verify(const tg_uop *root, const char *pass);
/* Checks a linear program: each node as tg_uop_verify, placed once,
 * after its sources (an accumulator before its loops), inside every
 * loop it reads; ENDRANGE closes the innermost open loop and every loop
 * closes. */
int tg_linear_verify(tg_uop *const *lin, size_t n, const char *pass);

/* ---------------------------------------------------------- ir/pattern.c */

/* Patterns are data (tinygrad's UPat).  A pattern matches a node when
 * the op is in `ops` (any op when nops is 0), the scalar kind is in the
 * `dtypes` mask (any when 0; bit 1u << kind), a CONST's value equals
 * `value` numerically when `has_value`, and the sources match: */
enum tg_pat_src {
	TG_PSRC_ANY,     /* sources are not looked at */
	TG_PSRC_FIXED,   /* exactly nsrc sources, in order */
	TG_PSRC_COMMUTE, /* two sources, tried in both orders */
	TG_PSRC_REPEAT,  /* any number (>= 1), each matching src[0] */
};

typedef struct tg_pat tg_pat;
struct tg_pat {
	const uint16_t *ops;
	uint8_t nops;
	uint8_t srcmode;   /* enum tg_pat_src */
	uint8_t nsrc;
	uint8_t cap;       /* capture slot + 1; 0 for none */
	uint8_t has_value;
	uint32_t dtypes;
	double value;
	const tg_pat *const *src;
};

#define TG_MAX_CAPTURES 16

/* Dtype masks. */
#define TG_DTM(s) (1u << (s))
#define TG_DTM_INTS                                                    \
	(TG_DTM(TG_INT8) | TG_DTM(TG_UINT8) | TG_DTM(TG_INT16) |           \
	 TG_DTM(TG_UINT16) | TG_DTM(TG_INT32) | TG_DTM(TG_UINT32) |        \
	 TG_DTM(TG_INT64) | TG_DTM(TG_UINT64) | TG_DTM(TG_INDEX))
#define TG_DTM_FLOATS                                                  \
	(TG_DTM(TG_FLOAT16) | TG_DTM(TG_BFLOAT16) | TG_DTM(TG_FLOAT32) |   \
	 TG_DTM(TG_FLOAT64))

/* Pattern constructors: static compound literals, usable in static
 * const tables.  `c` is a capture slot (0..TG_MAX_CAPTURES-1) or P_NOCAP. */
#define P_NOCAP (-1)
#define P_OPS(...) (const uint16_t[]){ __VA_ARGS__ }
#define P_NOPS(...) (sizeof(P_OPS(__VA_ARGS__)) / sizeof(uint16_t))
/* Any node. */
#define P_ANY(c) (&(const tg_pat){ .cap = (c) + 1 })
/* Any node of the dtype mask m. */
#define P_ANYT(c, m) (&(const tg_pat){ .cap = (c) + 1, .dtypes = (m) })
/* Any CONST; a CONST of value v. */
#define P_CONST(c) (&(const tg_pat){ .ops = P_OPS(TG_CONST), .nops = 1, \
	.cap = (c) + 1 })
#define P_CONSTV(c, v) (&(const tg_pat){ .ops = P_OPS(TG_CONST), .nops = 1, \
	.cap = (c) + 1, .has_value = 1, .value = (v) })
/* A node of op `o` with any sources. */
#define P_OP(c, o) (&(const tg_pat){ .ops = P_OPS(o), .nops = 1, \
	.cap = (c) + 1 })
/* An op with fixed sources o(a, ...). */
#define P_SRC(c, o, ...) P_SRCS_(c, o, TG_PSRC_FIXED, 0, __VA_ARGS__)
/* Binary ALU op o(a, b); _C also tries (b, a). */
#define P_ALU(c, o, a, b) P_SRCS_(c, o, TG_PSRC_FIXED, 0, a, b)
#define P_ALU_C(c, o, a, b) P_SRCS_(c, o, TG_PSRC_COMMUTE, 0, a, b)
/* Same with a dtype mask m on the result. */
#define P_ALUT(c, o, m, a, b) P_SRCS_(c, o, TG_PSRC_FIXED, m, a, b)
#define P_ALUT_C(c, o, m, a, b) P_SRCS_(c, o, TG_PSRC_COMMUTE, m, a, b)
/* Op o with any number (>= 1) of sources, each matching a. */
#define P_REPEAT(c, o, a) P_SRCS_(c, o, TG_PSRC_REPEAT, 0, a)
#define P_SRCS_(c, o, mode, m, ...) (&(const tg_pat){ .ops = P_OPS(o), \
	.nops = 1, .cap = (c) + 1, .srcmode = (mode), .dtypes = (m),      \
	.src = (const tg_pat *const[]){ __VA_ARGS__ },                    \
	.nsrc = sizeof((const tg_pat *const[]){ __VA_ARGS__ }) /          \
	        sizeof(const tg_pat *) })

/* The state a rule callback sees. */
typedef struct tg_rw {
	tg_ir *ir;
	void *ctx;     /* the caller's, from tg_rewrite */
	tg_uop *root;  /* the node that matched */
} tg_rw;

/* Returns the replacement, or NULL for "no change, try the next rule".
 * cap[i] holds capture slot i (NULL when the pattern did not bind it). */
typedef tg_uop *(*tg_rule_fn)(tg_rw *rw, tg_uop **cap);

typedef struct tg_rule {
	const char *name;  /* its algebra: "x*1 -> x" */
	const tg_pat *pat;
	tg_rule_fn fn;
} tg_rule;

/* A rule table with its per-op index, built once on first use (thread
 * safe).  Define with TG_RULESET(table) at file scope; `next` (may be
 * NULL) is tried after this set's rules, so sets compose. */
typedef struct tg_ruleset {
	const char *name;
	const tg_rule *rules;
	size_t n;
	const struct tg_ruleset *next;
	/* built on first use */
	_Atomic int built;
	uint32_t start[TG_NOPS + 1];  /* rules for op k: order[start[k]..] */
	uint16_t *order;
} tg_ruleset;

#define TG_RULESET(nm, table, nxt) \
	{ .name = (nm), .rules = (table), .n = TG_ARRAY_LEN(table), \
	  .next = (nxt) }

/* Matches `pat` against `u`; on success fills cap[] (TG_MAX_CAPTURES
 * slots, cleared first) and returns 1. */
int tg_pat_match(const tg_pat *pat, tg_uop *u, tg_uop **cap);
/* The first rule of rs (then rs->next...) that matches u and returns a
 * replacement; NULL when none does. */
tg_uop *tg_rules_apply(const tg_ruleset *rs, tg_ir *ir, tg_uop *u,
                       void *ctx);
/* Rewrites the graph under root bottom-up to a fixed point: each node's
 * sources are rewritten first, then rules are applied to the node until
 * none matches, and a replacement is itself rewritten.  Iterative (deep
 * graphs cannot overflow the stack).  NULL on error (sticky in ir). */
tg_uop *tg_rewrite(tg_ir *ir, tg_uop *root, const tg_ruleset *rs,
                   void *ctx);

/* ------------------------------------------------------------ ir/linear.c */

/* An index expression as a linear sum: sum of t[i].k * t[i].base plus k,
 * the bases ordered by id, none repeated, no k zero. */
#define TG_LIN_MAX 64
typedef struct tg_term {
	tg_uop *base;
	int64_t k;
} tg_term;
typedef struct tg_lin {
	tg_term t[TG_LIN_MAX];
	size_t n;
	int64_t k;
} tg_lin;

/* u*mul as a grouped sum (a leaf whose bounds pin one value counts as a
 * constant); -1 when it has too many terms or a coefficient overflows. */
int tg_lin_of(tg_uop *u, int64_t mul, tg_lin *s);
/* The canonical chain ((t0 + t1) + t2) + k, built without simplifying.
 * NULL on OOM (sticky in ir). */
tg_uop *tg_lin_build(tg_ir *ir, const tg_lin *s);
/* The sum's range from its terms' bounds; -1 on overflow. */
int tg_lin_bounds(const tg_lin *s, int64_t *lo, int64_t *hi);

/* ------------------------------------------------------------ ir/symdiv.c */

/* The division, modulo and comparison rules of tg_symbolic_rules: each
 * returns the simplified replacement of x // c, x % c (c > 0) or x < c,
 * or NULL when no rule applies. */
tg_uop *tg_symdiv_idiv(tg_ir *ir, tg_uop *x, int64_t c);
tg_uop *tg_symdiv_mod(tg_ir *ir, tg_uop *x, int64_t c);
tg_uop *tg_symdiv_lt(tg_ir *ir, tg_uop *x, int64_t c);

/* ---------------------------------------------------------- ir/symbolic.c */

/* Symbolic integers are IR nodes of type TG_INDEX built from CONST,
 * DEFINE_VAR, BIND and the ALU ops ADD, MUL, IDIV, MOD, MAX, CMPLT,
 * CMPNE, AND, OR, NEG, WHERE.  The builders below simplify as they
 * build (tinygrad's symbolic: sums flattened and like terms grouped,
 * constants folded and moved right, division and modulo by constants
 * using bounds, common factors taken out, comparisons decided by
 * bounds).  All return NULL on a NULL operand or OOM. */

/* The symbolic simplification rules, for tg_rewrite. */
extern tg_ruleset tg_symbolic_rules;

/* A variable with inclusive bounds; error if lo > hi. */
tg_uop *tg_sym_var(tg_ir *ir, const char *name, int64_t lo, int64_t hi);
/* The variable bound to val; error when val is outside its bounds. */
tg_uop *tg_sym_bind(tg_ir *ir, tg_uop *var, int64_t val);
tg_uop *tg_sym_int(tg_ir *ir, int64_t c);
tg_uop *tg_sym_add(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_sub(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_mul(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_neg(tg_ir *ir, tg_uop *a);
/* C semantics (truncation); the divisor must not be able to be 0. */
tg_uop *tg_sym_idiv(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_mod(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_max(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_min(tg_ir *ir, tg_uop *a, tg_uop *b);
/* Comparisons and logic give bool nodes. */
tg_uop *tg_sym_lt(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_ge(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_ne(tg_ir *ir, tg_uop *a, tg_uop *b);
tg_uop *tg_sym_and(tg_ir *ir, tg_uop *a, tg_uop *b);
/* Shorthands with an integer right operand. */
tg_uop *tg_sym_addi(tg_ir *ir, tg_uop *a, int64_t b);
tg_uop *tg_sym_muli(tg_ir *ir, tg_uop *a, int64_t b);
tg_uop *tg_sym_idivi(tg_ir *ir, tg_uop *a, int64_t b);
tg_uop *tg_sym_modi(tg_ir *ir, tg_uop *a, int64_t b);
tg_uop *tg_sym_lti(tg_ir *ir, tg_uop *a, int64_t b);
/* Applies tg_symbolic_rules to the whole graph under u. */
tg_uop *tg_sym_simplify(tg_ir *ir, tg_uop *u);

/* ------------------------------------------------------------- ir/sym.c */

/* Replaces each from[i] by to[i] under u and simplifies. */
tg_uop *tg_sym_substitute(tg_ir *ir, tg_uop *u, tg_uop *const *from,
                          tg_uop *const *to, size_t n);
/* Evaluates u with vars[i] = vals[i] (BIND nodes use their own value).
 * TG_EINVAL with a message for an unbound variable, a value outside its
 * variable's bounds, a division by zero, or an op that is not
 * symbolic. */
int tg_sym_eval(const tg_uop *u, const tg_uop *const *vars,
                const int64_t *vals, size_t n, int64_t *out);
/* The DEFINE_VAR nodes under u, sorted by name, into *out (a TG_VEC the
 * caller frees).  BINDs contribute their variable. */
typedef TG_VEC(tg_uop *) tg_uop_vec;
typedef TG_VEC(int64_t) tg_i64_vec;
int tg_sym_vars(const tg_uop *u, tg_uop_vec *out);
/* u with every BIND replaced by its variable; the bound values go to
 * vars/vals when they are not NULL (TG_VECs the caller frees). */
tg_uop *tg_sym_unbind(tg_ir *ir, tg_uop *u, tg_uop_vec *vars,
                      tg_i64_vec *vals);
/* u as a C expression: "((a*4)+b)", "(x/2)", "(a<3)", "(a?b:c)";
 * variables by name.  New string (free()) or NULL on OOM. */
char *tg_sym_render(const tg_uop *u);

/* ------------------------------------------------------------ ir/sint.c */

/* A symbolic integer as shapes use it (tinygrad's sint): the integer c
 * when u is NULL, else the TG_INDEX expression u (never a CONST: results
 * that simplify to a constant come back as integers). */
typedef struct tg_sint {
	int64_t c;
	tg_uop *u;
} tg_sint;

static inline tg_sint tg_si(int64_t c)
{
	tg_sint s = { c, NULL };
	return s;
}
static inline int tg_sint_is_int(tg_sint s) { return s.u == NULL; }
/* Equal as integers, or the same expression. */
static inline int tg_sint_eq(tg_sint a, tg_sint b)
{
	return a.u == b.u && (a.u || a.c == b.c);
}
static inline int tg_sint_is(tg_sint a, int64_t c)
{
	return !a.u && a.c == c;
}
/* From a node: an int when it is a CONST. */
tg_sint tg_sint_of(tg_uop *u);
/* The node for s (a CONST for ints); NULL on OOM. */
tg_uop *tg_sint_uop(tg_ir *ir, tg_sint s);
/* Bounds (the value itself for an int). */
int64_t tg_sint_vmin(tg_sint s);
int64_t tg_sint_vmax(tg_sint s);
/* Arithmetic: integer math when both are ints, else simplified nodes in
 * ir (which may be NULL only when both are ints).  On an error (OOM,
 * overflow, a divisor that can be 0) the result is tg_si(0) and the
 * error sticks in ir (tg_last_error says what); check tg_ir_status()
 * after a sequence. */
tg_sint tg_sint_add(tg_ir *ir, tg_sint a, tg_sint b);
tg_sint tg_sint_sub(tg_ir *ir, tg_sint a, tg_sint b);
tg_sint tg_sint_mul(tg_ir *ir, tg_sint a, tg_sint b);
tg_sint tg_sint_idiv(tg_ir *ir, tg_sint a, tg_sint b);
tg_sint tg_sint_mod(tg_ir *ir, tg_sint a, tg_sint b);
tg_sint tg_sint_max(tg_ir *ir, tg_sint a, tg_sint b);
tg_sint tg_sint_min(tg_ir *ir, tg_sint a, tg_sint b);
/* "4" or the rendered expression, into buf (truncated). */
const char *tg_sint_format(tg_sint s, char *buf, size_t n);

#endif /* TG_IR_H */

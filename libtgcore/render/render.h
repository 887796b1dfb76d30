/*
 * render/render.h - what the C-family renderer (render_c.c) and its
 * dialects (dialect.c) share, and the renderer codegen calls, with what
 * both read: the kernel codegen hands over (tg_ksrc) and the matrix
 * instructions a tensor core lowers to (wmma.c).  The renderer reads
 * nothing of codegen: it is the stage below it.  Internal.
 *
 * The walker in render_c.c writes a kernel's body one statement per
 * linearized uop; everything that differs between C, OpenCL C and GLSL
 * is data in a tg_cdialect (type names, how a cast and a vector are
 * spelled) or a function of dialect.c (constants, helper functions, the
 * kernel's signature and prologue).
 */
#ifndef TG_RENDER_H
#define TG_RENDER_H

#include <tg/plugin.h>

#include "ir/ir.h"

/* A kernel ready to compile (tinygrad's ProgramSpec, which its
 * renderer package defines too): codegen (tg_codegen) fills it and
 * frees it (tg_ksrc_free); the renderer and the kernel view read it. */
typedef struct tg_ksrc {
	char *name;        /* the function name, "r_4_5", "E_16_4" */
	char *src;         /* the rendered source */
	size_t global[3];  /* launch geometry (work-items per axis) */
	size_t local[3];   /* {1,1,1} unless the renderer has locals */
	size_t nbufs;      /* kernel buffer arguments */
	uint32_t outs;     /* bit i set when buffer i is written */
	size_t nvars;      /* symbolic variables, values passed in order */
	char **vars;       /* their names, sorted */
	double flops;      /* estimated operations per run, for DEBUG=2 */
	double mem_bytes;  /* estimated bytes moved per run */
	char *opts;        /* the applied opts, "UPCAST(0,4) UNROLL(0,4)" */
	char *ast_text;    /* tg_ast_format of the input */
	char *linear_text; /* one line per linearized uop (DEBUG=5) */
	struct tg_kview *view; /* TG_DIALECT_CUSTOM: the kernel for the
	                          plugin's renderer, src NULL until it ran
	                          (tg_dev_render) */
} tg_ksrc;

/* ------------------------------------------------------- render/wmma.c */

/* A tensor core the renderer calls as one matrix instruction per warp
 * (CUDA's mma.sync), not as the upcasts and locals of its splits
 * alone.  The plugin's struct tg_tensor_core says what the device has;
 * this table says how the core lowers it: which thread and which
 * register of each fragment holds which element.
 *
 * Elements are named in the kernel's own terms, so lowering needs no
 * new index math.  C (the sum) is laid out by the splits, which must
 * be UPCAST(N, nup), LOCAL(N, nloc), UPCAST(M, mup), LOCAL(M, mloc):
 * N's local index is lidx0 and M's lidx1, so a warp's lane is
 * lidx0 + nloc*lidx1, and the upcast digits of N and M pick C's
 * registers (c_n, c_m: the digit of each register).  K is read in
 * tiles of dims[2]: kthreads of them from N's local index (the lanes
 * that hold different K), the rest (dims[2]/kthreads) unrolled, the
 * digits a_k and b_k of each register of A and B.  A's rows are C's
 * (the M digit a_m); B's columns come from M's local index (the
 * lane's groupID), split as C splits its column into local and digit.
 * Any consistent relabelling of M, N or K inside a tile leaves the
 * product the same, which is what lets the kernel's digits stand for
 * the hardware's rows and columns. */
struct tg_tensor_core;

typedef struct tg_wmma {
	int dialect;          /* enum tg_dialect that renders it */
	uint32_t dims[3];     /* N, M, K of one instruction */
	int dtype_in, dtype_out;
	const char *fn;       /* the helper the renderer calls */
	const char *def;      /* its definition, emitted once per kernel */
	uint32_t nup, nloc, mup, mloc, kthreads;
	unsigned na, nb, nc;  /* elements of A, B, C per thread */
	uint8_t a_k[8], a_m[8], b_k[8], c_n[8], c_m[8];
} tg_wmma;

/* The layout that lowers tensor core t on a device of this dialect,
 * or NULL (the core is then its splits: upcasts and locals). */
const tg_wmma *tg_wmma_find(int dialect, const struct tg_tensor_core *t);
/* Entry i of the table (the WMMA uop's arg.v.i), NULL outside it. */
const tg_wmma *tg_wmma_get(int64_t i);
int64_t tg_wmma_index(const tg_wmma *w);

/* ------------------------------------------------------ render/kview.c */

struct tg_kview;
/* The linear program in the public form a plugin's renderer reads
 * (TG_DIALECT_CUSTOM), with the kernel's facts from ks (name, launch
 * geometry, buffers, variables).  It copies what it shows, so it
 * outlives lin's context.  NULL with an error (an op with no public
 * code, too many sources, OOM). */
struct tg_kview *tg_kview_new(tg_uop *const *lin, size_t n,
                              const tg_ksrc *ks);
void tg_kview_free(struct tg_kview *v);
/* The host table's kernel_info and kernel_op: fill what out's
 * struct_size covers.  0, or TG_EINVAL with a message. */
int tg_kview_info(const struct tg_kview *v, struct tg_kernel_info *out);
int tg_kview_op(const struct tg_kview *v, size_t i,
                struct tg_kernel_op *out);

/* ----------------------------------------------- render/render_kernel.c */

/* Source of the linear program as kernel `name` in caps' dialect (C,
 * OpenCL C or GLSL; see render_c.c and dialect.c).  `global` is the
 * launch size the kernel's flat-id prologue needs (GLSL without work
 * groups).  New string (free()) or NULL with an error (TG_EUNSUPPORTED
 * naming the op or type the dialect cannot render). */
char *tg_render(const struct tg_renderer_caps *caps, const char *name,
                const size_t global[3], tg_uop *const *lin, size_t n);
/* tg_render with gidx0 in launch blocks of `block` work-items (C; 0:
 * none; see tg_kplan.lblock). */
char *tg_render_blocked(const struct tg_renderer_caps *caps,
                        const char *name, const size_t global[3],
                        size_t block, tg_uop *const *lin, size_t n);
/* tg_render in the C dialect. */
char *tg_render_c(const char *name, tg_uop *const *lin, size_t n);

/* How a dialect spells vectors. */
enum tg_cvec {
	TG_CVEC_NONE,   /* no vector types (max_upcast must be 1) */
	TG_CVEC_GCC,    /* typedef'd GCC vector extensions, v[i], (T){..} */
	TG_CVEC_OPENCL, /* float4, v.s0, (float4)(..), vload4/vstore4 */
	TG_CVEC_CUDA    /* struct tg_float4 { float v[4]; }, v.v[0],
	                   tg_float4{{..}}, aligned loads and stores through
	                   the struct's pointer; ALU ops lane by lane */
};

typedef struct tg_cdialect {
	int id;                /* enum tg_dialect */
	const char *name;      /* "C", "OpenCL C", "GLSL" for messages */
	/* value types per scalar kind, NULL where the dialect has none;
	 * TG_INDEX included (long in C, int on GPUs) */
	const char *type[TG_NSCALARS];
	/* a buffer element's type where it differs from the value's (bool
	 * in memory is a byte on GPUs), else NULL */
	const char *stored[TG_NSCALARS];
	const char *qual;      /* qualifier of single-assignment values */
	const char *acc_qual;  /* qualifier of accumulators */
	int ctor_cast;         /* casts are T(e) (GLSL), not ((T)(e)) */
	int vec;               /* enum tg_cvec */
	int native_wrap;       /* signed ints wrap (GLSL): no detour
	                          through the unsigned type */
	int body_depth;        /* indentation of the body's statements */
} tg_cdialect;

/* The dialect of caps' enum tg_dialect, NULL for one without a
 * renderer. */
const tg_cdialect *tg_cdialect_get(int dialect);

/* A constant of scalar kind s as an expression. */
void tg_cdialect_const(const tg_cdialect *d, tg_strbuf *sb, tg_scalar v,
                       unsigned s);

/* One kernel argument or shared array, for the signature. */
typedef struct tg_cparam {
	const char *name;   /* "data0", "temp0", a variable's name */
	unsigned kind;      /* scalar kind of the element */
	int written;        /* buffers: the kernel stores into it */
	int64_t count;      /* shared arrays: elements */
} tg_cparam;

/* Everything about a kernel besides its body that the dialect's
 * wrapper needs. */
typedef struct tg_ckernel {
	const char *name;
	const tg_cparam *bufs;  size_t nbufs;
	const tg_cparam *vars;  size_t nvars;   /* sorted by name */
	const tg_cparam *locals; size_t nlocals; /* shared arrays */
	int gidx_used[3], lidx_used[3];
	int has_local;          /* the kernel uses work-group indices */
	size_t global[3];       /* launch indices' extents */
	size_t lblock;          /* C: gidx0's launch block (0: none) */
	int64_t npass;          /* C: reduce passes, each through the
	                           launch block (0: none; kidx0) */
	uint64_t kinds_used;    /* bit s: a value of scalar kind s */
	uint64_t stored_used;   /* bit s: a buffer of scalar kind s */
	uint32_t vec_used[TG_NSCALARS]; /* GCC/CUDA vectors: bit k width 1<<k */
	uint32_t fma_used[TG_NSCALARS]; /* C's vector fma helpers, likewise */
	uint32_t wmma_used; /* bit i: tg_wmma_get(i)'s helper is called */
	int use_bf16, use_threefry;
} tg_ckernel;

/* The whole source: headers, helpers, signature, prologue (launch
 * indices, variables), then `body` (indented one level, the kernel's
 * statements) and the closing brace.  New string or NULL (error set). */
char *tg_cdialect_wrap(const tg_cdialect *d, const tg_ckernel *k,
                       const char *body);

/* ------------------------------------------- the walker (render_c.c) */

#define TG_EXPR_MAX 4096  /* longest expression of one value */

/* Room for the operands of the value being rendered: one set per
 * render (in the heap, as it is large), never shared between renders,
 * so that threads may render at once.  lane: the operands of one lane
 * (render_c.c); opnd: the same as render_alu.c spells them (bf16 ones
 * wrapped in a conversion). */
typedef struct rc_scratch {
	char lane[3][TG_EXPR_MAX];
	char opnd[3][TG_EXPR_MAX + 16];
} rc_scratch;

/* The renderer's state while it walks one kernel (render_c.c). */
typedef struct rc_state {
	const tg_cdialect *d;
	tg_strbuf body;
	char **names;      /* by uop id; NULL until defined */
	uint32_t maxid;
	int depth;
	unsigned nv;
	tg_ckernel k;      /* what the dialect's wrapper needs */
	TG_VEC(tg_cparam) locals;
	rc_scratch *x;     /* this render's own */
	int err;
} rc_state;

/* The dialect's type of scalar kind s, recording its use; NULL (error
 * set in st) when the dialect has none. */
const char *tg_rstate_type(rc_state *st, unsigned s);
/* "((T)(" or "T(" before an expression converted to T; close_cast
 * after it. */
void tg_rstate_open_cast(rc_state *st, tg_strbuf *sb, const char *t);
void tg_rstate_close_cast(rc_state *st, tg_strbuf *sb);
/* A constant of kind s. */
void tg_rstate_const(rc_state *st, tg_strbuf *sb, tg_scalar v, unsigned s);
/* The first error of a render sticks in st->err: TG_EUNSUPPORTED with
 * fmt's one %s as `what`, unless one is set already.  st->err. */
int tg_rc_fail(rc_state *st, const char *fmt, const char *what);
/* u's value is called `name` from here on (copied). */
void tg_rc_set_name(rc_state *st, const tg_uop *u, const char *name);
/* Renders one linearized node into st->body (render_kernel.c walks the
 * kernel). */
void tg_rc_node(rc_state *st, const tg_uop *u);

/* ---------------------------------------- expressions (render_alu.c) */

/* Scalar ALU op `op`: sout the result kind, sin the operands' (WHERE:
 * of b and c); ea..ec the operand expressions. */
void tg_render_alu(rc_state *st, tg_strbuf *sb, unsigned op, unsigned sout,
                   unsigned sin, const char *ea, const char *eb,
                   const char *ec);
/* A scalar expression e of kind `from` converted to kind `to`. */
void tg_render_cast(rc_state *st, tg_strbuf *sb, unsigned from, unsigned to,
                    const char *e);
/* The function of dialect d (GLSL or CUDA) reinterpreting kind `from`
 * as `to` (same size); "" for a conversion (ints of one size); NULL
 * when the dialect has none.  Static strings. */
const char *tg_bitcast_fn(int d, unsigned from, unsigned to);

#endif /* TG_RENDER_H */

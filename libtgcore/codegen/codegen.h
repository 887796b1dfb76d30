/*
 * codegen/codegen.h - from a scheduled kernel's AST to device source:
 * the kernel AST (what the scheduler hands over), the kernel and its
 * optimizations (tinygrad's codegen/kernel.py), lowering to IR
 * (lowerer.py), the rewrite passes (uopgraph.py), linearization and the
 * C-family renderer (renderer/cstyle.py).  Internal; never installed.
 *
 * Lifetime scheme:
 *  - A kernel AST is a uop graph in the tg_ir context it was built in
 *    (the scheduler's long-lived kernel context, or a test's).  Codegen
 *    imports it into a context of its own (tg_kernel_open), so it never
 *    writes to the caller's context and may run on any thread.
 *  - Lowered IR lives in that same compilation context.
 *  - A tg_ksrc owns its strings.
 */
#ifndef TG_CODEGEN_H
#define TG_CODEGEN_H

#include "render/render.h"
#include "shape/shape.h"

/* ------------------------------------------------------ codegen/ast.c */

/* The kernel AST (tinygrad's LazyOp tree) is a uop graph: one IR from
 * the scheduler to the renderer.  Its nodes:
 *   SINK         the STOREs; STORE i writes kernel buffer i (outputs are
 *                buffers 0..nstores-1, inputs follow)
 *   STORE        (DEFINE_GLOBAL, SHAPETRACKER, value)
 *   LOAD         (DEFINE_GLOBAL, SHAPETRACKER), typed as the element
 *   CONST        (SHAPETRACKER), arg.v the value: 0 outside the mask
 *   REDUCE_AXIS  (value), arg.v.i TG_ADD or TG_MAX, arg.a the axes
 *   ALU ops, CAST, BITCAST on scalar types
 *   DEFINE_GLOBAL ptr(global) to the element type, arg.v.i the buffer
 *   SHAPETRACKER/VIEW the tracker (shape.h, tg_st_uop)
 * Interned like any graph, so two equal kernels built in one context
 * are one SINK pointer.
 *
 * Invariants the scheduler guarantees and codegen relies on:
 *  - Every tracker in one kernel has the same ndim.  On each axis the
 *    shapes agree, except that nodes above a REDUCE_AXIS (the STOREs and
 *    what is computed from the reduce's result) have 1 on the reduced
 *    axes, and a CONST may have 1 anywhere (it is broadcast).
 *  - Every REDUCE_AXIS of a kernel reduces the same axes of the same
 *    shape (outputs sharing it share the node).  None is below another.
 *  - A STORE's tracker has no mask and maps every index to a distinct
 *    element (outputs are written once per element). */

/* Builders (tinygrad's LazyOp constructors), with the types checked:
 * ALU operands agree (WHERE: bool, then two of one type), CMPLT/CMPNE
 * give bool, BITCAST keeps the size, a reduce's axes exist.  Each takes
 * ownership of `st` (freed even on failure).  NULL on an error or a NULL
 * source, the first error sticky in ir.  Nodes owned by ir. */
tg_uop *tg_ast_load(tg_ir *ir, int buf, tg_dtype dt, tg_st *st);
tg_uop *tg_ast_const(tg_ir *ir, tg_dtype dt, tg_scalar v, tg_st *st);
tg_uop *tg_ast_alu(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b,
                   tg_uop *c);
tg_uop *tg_ast_cast(tg_ir *ir, tg_uop *a, tg_dtype dt);
tg_uop *tg_ast_bitcast(tg_ir *ir, tg_uop *a, tg_dtype dt);
tg_uop *tg_ast_reduce(tg_ir *ir, unsigned op, tg_uop *a, uint32_t axes);
tg_uop *tg_ast_store(tg_ir *ir, int buf, tg_uop *value, tg_st *st);
tg_uop *tg_ast_sink(tg_ir *ir, tg_uop *const *stores, size_t n);

/* The buffer a LOAD or STORE reads or writes. */
static inline int tg_ast_buf(const tg_uop *u)
{
	return (int)u->src[0]->arg.v.i;
}
/* The SHAPETRACKER node of a LOAD, STORE or CONST of an AST; NULL for
 * other nodes (and for the plain CONSTs inside trackers). */
static inline const tg_uop *tg_ast_st_node(const tg_uop *u)
{
	if (u->op == TG_LOAD || u->op == TG_STORE ||
	    (u->op == TG_CONST && u->nsrc == 1))
		return u->src[1 - (u->op == TG_CONST)];
	return NULL;
}
/* The value a REDUCE_AXIS sums, through one CAST (tinygrad's half
 * matmul multiplies in half and sums in float): the product's node
 * when the kernel is matmul-shaped. */
static inline const tg_uop *tg_ast_reduced(const tg_uop *red)
{
	const tg_uop *v = red->src[0];

	return v->op == TG_CAST ? v->src[0] : v;
}
/* The reduce op of a REDUCE_AXIS (TG_ADD, TG_MAX) and its axes. */
static inline unsigned tg_ast_reduce_op(const tg_uop *u)
{
	return (unsigned)u->arg.v.i;
}
static inline uint32_t tg_ast_reduce_axes(const tg_uop *u)
{
	return (uint32_t)u->arg.a;
}
/* The kernel's full shape: per axis the largest extent among its
 * trackers (ndim into *ndim, at most TG_MAX_DIMS entries into shape;
 * symbolic entries are nodes of sink's context). */
int tg_ast_full_shape(const tg_uop *sink, size_t *ndim, tg_sint *shape);
/* Readable text of the AST for DEBUG>=3 and tests: one line per node
 * in topological order, trackers and buffers folded into their users:
 * "%3 LOAD float32 buf1 ShapeTracker(...)", "%5 ALU ADD float32 %3 %4",
 * "%6 REDUCE ADD float32 axes(1) %5".  New string (free()) or NULL on
 * OOM.  Never on the launch path: the method cache keys on nodes. */
char *tg_ast_format(const tg_uop *sink);
/* The AST's nodes under sink, sources first, each once, without the
 * trackers, their constants and the DEFINE_GLOBALs.  Array owned by the
 * caller (free()); NULL on OOM. */
tg_uop **tg_ast_toposort(const tg_uop *sink, size_t *n);

/* A kernel as codegen reads it: the AST imported into the compilation's
 * own context (dense ids, no sharing with other threads), its nodes in
 * order, and each LOAD/STORE/CONST's tracker decoded, by node id. */
typedef struct tg_kernel {
	tg_ir *ir;          /* borrowed: owns sink and every node */
	tg_uop *sink;
	tg_uop **order;     /* tg_ast_toposort(sink), owned */
	size_t n;
	tg_st **st;         /* by id: the node's tracker or NULL, owned */
	uint32_t nid;
} tg_kernel;

/* Imports ast (a SINK, from any context) into ir and decodes it into
 * *k.  TG_OK, or an error (OOM, not a SINK, a malformed tracker) with
 * nothing to close. */
int tg_kernel_open(tg_kernel *k, tg_ir *ir, const tg_uop *ast);
void tg_kernel_close(tg_kernel *k);
/* The tracker of a LOAD, STORE or CONST of k (borrowed), else NULL. */
static inline const tg_st *tg_kernel_st(const tg_kernel *k,
                                        const tg_uop *u)
{
	return u->id < k->nid ? k->st[u->id] : NULL;
}

/* ------------- the plan and its opts: codegen/plan.c, opt.c, heuristic.c,
 * cpu_tile.c, cpu_block.c (their shared statics: codegen/kplan.h) */

/* Optimization ops (tinygrad's OptOps).  LOCAL, GROUP, GROUPTOP and
 * NOLOCALS need a device with work groups (and shared memory for the
 * groups). */
enum tg_optop {
	TG_OPT_UPCAST,  /* unroll a global axis by amt into the body */
	TG_OPT_UNROLL,  /* unroll a reduce axis by amt */
	TG_OPT_LOCAL,   /* split a global axis into work-group items */
	TG_OPT_GROUP,   /* split a reduce across a work-group (shared) */
	TG_OPT_GROUPTOP,
	TG_OPT_NOLOCALS, /* no work groups for this kernel (axis unused) */
	TG_OPT_PADTO,   /* round an axis up to a multiple of amt: the
	                   padding reads 0 and is not stored */
	TG_OPT_SWAP,    /* exchange the launch order of global axes `axis`
	                   and `amt` (tinygrad's later SWAP): the last in
	                   launch order is gidx0, which varies fastest
	                   between work-items */
	TG_OPT_TC,      /* the first opt only: a matmul-shaped reduce onto
	                   the device's first tensor core of its dtypes
	                   (caps->tc), on the axis choice `axis`; amt 2
	                   pads (PADTO) axes the core does not divide, 0
	                   and 1 refuse them (tinygrad's tc_opt) */
	TG_OPT_PASS     /* C: run the loop of reduce axis `axis` (the
	                   outer one) in passes of amt iterations instead
	                   of the length tg_kplan_reduce_block picks; the
	                   opts after it must leave that loop whole */
};
#define TG_OPT_LAST TG_OPT_PASS

/* An opt on axis `axis` of the full shape (not tinygrad's position in
 * the permuted shape: our axes never move). */
typedef struct tg_opt {
	int op;      /* enum tg_optop */
	int axis;
	int64_t amt; /* 0 means the whole (remaining) axis */
} tg_opt;

#define TG_MAX_OPTS 8
#define TG_MAX_TC_CHOICES 16
/* Most body copies one thread may expand to (tinygrad's register
 * budget of 256 upcasted elements). */
#define TG_MAX_EXPAND 256

struct tg_kplan;
/* plan.c: classifies k's axes into *p (no opts, caps NULL: set it before
 * applying LOCAL or GROUP).  Errors: a malformed AST, OOM. */
int tg_lower_plan(const tg_kernel *k, struct tg_kplan *p);
/* The extent of axis ax left to a launch index or loop once its
 * upcast, local and group parts are split off. */
int64_t tg_kplan_outer(const struct tg_kplan *p, size_t ax);
/* Recomputes gaxes, raxes, laxes, global, local_size and name from
 * full, upcast, local and group (an axis whose extent left is 1 is in
 * neither gaxes nor raxes). */
void tg_kplan_update(struct tg_kplan *p);
/* opt.c: applies one opt to the plan (tinygrad's Kernel.apply_opt):
 * splits the axis's remaining extent s into s/amt (still a launch index
 * or loop) and amt expanded copies of the body.  Errors (plan
 * unchanged): an unknown or unsupported op, an axis of the wrong kind,
 * amt not dividing s, a symbolic axis, more than TG_MAX_OPTS opts or
 * TG_MAX_EXPAND copies. */
int tg_kplan_apply_opt(struct tg_kplan *p, tg_opt opt);
/* tinygrad's hand_coded_optimizations (see heuristic.c) on a plan without
 * opts: register blocking and unrolling everywhere, a grouped reduce
 * and local axes where p->caps has work groups. */
int tg_kplan_hand_opt(struct tg_kplan *p, const tg_kernel *k);
/* The moves of a search from plan p: every opt of the action space
 * (UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, PADTO at tinygrad's amounts and a
 * CPU vector's, SWAP of a global axis with the innermost, and PASS
 * lengths of the outer reduce loop) that p
 * takes, in a fixed order, at most max into out.  The count. */
#define TG_MAX_ACTIONS 512 /* room for every move of one plan */
size_t tg_kplan_actions(const struct tg_kplan *p, tg_opt *out, size_t max);
/* cpu_block.c: the launch block of a C kernel with opts (p->lblock):
 * when the inputs of a reduce kernel are too large to stay in the
 * last-level cache together, gidx0 is cut into blocks whose share of
 * the input that does not move with gidx1 (a matmul's rows of A) fits
 * in the L2, and each block runs through every gidx1 (the columns of
 * B) before the next: that input is read from memory once, not once
 * per gidx1.  Only sets p->lblock. */
void tg_kplan_launch_block(struct tg_kplan *p, const tg_kernel *k);
/* The reduce passes of a C kernel (p->rblock), chosen after its launch
 * block: where an item reads, over its outer reduce loop, more of the
 * inputs the next items read again (a matmul's column tile of B in
 * rows-innermost order) than the L1 holds, or where a sweep of gidx0
 * reads more of the inputs the next gidx1 reads again (B's rows in
 * columns-innermost order) than the L2 holds, the loop is cut into
 * passes whose slice and panel fit, each pass through every item of
 * the launch block (of the thread's range without one).  An item's
 * accumulators start each pass from the partial result the last pass
 * stored, so the sum runs in NOOPT's order, bit for bit.  A PASS opt
 * sets the length; else `force` > 0 (tests) takes that many iterations
 * per pass wherever the kernel allows passes.  Only sets p->rblock. */
void tg_kplan_reduce_block(struct tg_kplan *p, const tg_kernel *k,
                           int64_t force);
/* "UPCAST(1,4) UPCAST(0,4) UNROLL(2,4)" (axis, amt), "" when none. */
void tg_kplan_format_opts(const struct tg_kplan *p, char *buf, size_t len);

/* ---------------------------------------------- codegen/codegen.c (entry) */

/* Optimizes (hand-coded defaults unless set->noopt), lowers,
 * linearizes and renders `sink` for a device with these caps.  `set`
 * holds the settings of the operation (tg_settings_read at its start;
 * NULL: the defaults): noopt, verify (tg_uop_verify after every pass),
 * debug (>= 6: the graph after every pass on stderr).  Codegen reads no
 * configuration itself.  On success *out is filled and owned by the
 * caller (tg_ksrc_free).  Errors (a dialect without a renderer, a dtype
 * the device lacks, OOM) return a negative status with a message naming
 * the kernel. */
int tg_codegen(const tg_uop *sink, const struct tg_renderer_caps *caps,
               const tg_settings *set, tg_ksrc *out);
/* tg_codegen with exactly these opts in order (none when nopts is 0,
 * as NOOPT), for tests and searches: an opt the plan refuses is the
 * error. */
int tg_codegen_opts(const tg_uop *sink, const struct tg_renderer_caps *caps,
                    const tg_settings *set, const tg_opt *opts,
                    size_t nopts, tg_ksrc *out);
void tg_ksrc_free(tg_ksrc *ks);
/* The moves (tg_kplan_actions) of `sink` for a device with these caps
 * after `opts`: at most max into out, the count in *n.  Errors: an opt
 * the plan refuses, a malformed AST, OOM. */
int tg_codegen_actions(const tg_uop *sink,
                       const struct tg_renderer_caps *caps,
                       const tg_settings *set, const tg_opt *opts,
                       size_t nopts, tg_opt *out, size_t max, size_t *n);
/* Sequences of random opts are 1 to this many long. */
#define TG_RANDOM_OPTS_MAX 5
/* A random legal sequence of opts for `sink`, 1 to TG_RANDOM_OPTS_MAX
 * long (shorter where the plan runs out of moves), each drawn
 * uniformly from the moves (tg_kplan_actions) after the ones before it,
 * from a generator seeded with `seed`: the same seed draws the same
 * sequence.  Into opts (at least TG_RANDOM_OPTS_MAX), the count into
 * *n.  A move is legal alone; the whole sequence may still exceed a
 * device's limits, which tg_codegen_opts then refuses. */
int tg_codegen_random_opts(const tg_uop *sink,
                           const struct tg_renderer_caps *caps,
                           const tg_settings *set, uint64_t seed,
                           tg_opt *opts, size_t *n);
/* The hand-coded opts of `sink` for these caps (what tg_codegen
 * applies), at most TG_MAX_OPTS into opts, the count into *n. */
int tg_codegen_hand_opts(const tg_uop *sink,
                         const struct tg_renderer_caps *caps,
                         const tg_settings *set, tg_opt *opts, size_t *n);
/* The opts as text, "UPCAST(1,4) UNROLL(2,4)", into buf ("" none). */
void tg_opts_format(const tg_opt *opts, size_t n, char *buf, size_t len);

/* ---------------------------------------------------- codegen/intdiv.c */

/* Integer divisions and remainders whose divisor may be 0 (or -1 with
 * an overflowing dividend) rewritten to select tg.h's values instead of
 * trapping.  NULL on OOM. */
tg_uop *tg_guard_intdiv(tg_ir *ir, tg_uop *sink);

/* --------------------------------------------- codegen/transcendental.c */

/* exp2, log2 and sin rewritten into adds, multiplies, comparisons and
 * selects: of every float dtype when `all` (the device's
 * needs_transcendental_fallback), else of float64 when `glsl` (GLSL has
 * no double transcendentals).  NULL on OOM. */
tg_uop *tg_transcendental(tg_ir *ir, tg_uop *sink, int all, int glsl);

/* ----------------------------------------------------- codegen/lower.c */

/* The lowered IR (the contract between the passes after tg_lower,
 * tg_expand_upcasts and tg_lower_reduces, and the back end).  A kernel
 * is SINK(stores...) over these nodes:
 *   DEFINE_GLOBAL  dtype ptr(global) to the element type; arg.v.i the
 *                  buffer index, arg.a = 1 when written
 *   DEFINE_VAR     a symbolic variable (TG_INDEX), arg.name, bounds
 *   SPECIAL        a launch index (TG_INDEX): arg.name "gidx0".."gidx2"
 *                  (or "lidx0".."lidx2"), arg.a its extent
 *   RANGE          a loop (TG_INDEX) over [src[0], src[1]); arg.v.i a
 *                  loop number unique in the kernel, arg.a = 1 when it
 *                  iterates a reduce
 *   CONST, ALU ops, CAST, BITCAST as in ir.h; index math is TG_INDEX
 *   LOAD           (buf, idx) or (buf, idx, valid, alt): the element at
 *                  idx, or alt when valid is false; a vector dtype of n
 *                  loads n consecutive elements starting at idx
 *   STORE          (buf, idx, value) or (buf, idx, value, valid)
 *   DEFINE_ACC     an accumulator (src[0] the initial CONST, src[1..]
 *                  the RANGEs it accumulates over); arg.v.i its number
 *   PHI            (acc, value): acc = value inside acc's loops; the
 *                  PHI node then stands for the accumulated value
 *   VECTORIZE      a vector of its sources; GEP lane arg.v.i of a vector
 *   DEFINE_LOCAL   a shared array (grouped reduces), arg.name, arg.a
 *                  its elements; BARRIER(stores...) waits for the
 *                  stores, LOAD(buf, idx, barrier) reads after it
 * Node order comes from the linearizer: a node is placed inside every
 * RANGE it depends on, and loops close after their last user. */

/* The kernel's axes as lowering sees them (NOOPT: tinygrad's Kernel
 * before any opt).  Axes of the full shape keep their numbers; size-1
 * axes are in neither list. */
typedef struct tg_kplan {
	size_t ndim;
	int64_t full[TG_MAX_DIMS];  /* the full shape (a symbolic axis: its
	                               largest value); PADTO rounds an
	                               axis up */
	int64_t real[TG_MAX_DIMS];  /* the extent before PADTO: indices at
	                               or past it are padding, read as 0
	                               and never stored */
	uint32_t padded;            /* bit i: PADTO padded axis i */
	uint32_t pad_unsafe;        /* bit i: padding reduce axis i would
	                               change a result (not a SUM, or an op
	                               with f(0) != 0 under it) */
	int int_div;                /* the kernel divides integers: padded
	                               lanes could divide by zero */
	/* Symbolic axes (a shape with a variable) take no opts, and one
	 * that is not reduced is a loop in every thread, as reduce axes
	 * are, not a launch index: launch sizes never depend on a
	 * variable, so a replay with new values only changes the values
	 * (sym[ax]: the extent, a node of the kernel's context; NULL for
	 * an integer axis) */
	tg_uop *sym[TG_MAX_DIMS];
	size_t nloop;
	uint32_t oaxes[TG_MAX_DIMS]; /* symbolic output axes: loops, in
	                               order, outside the reduce loops */
	uint8_t order[TG_MAX_DIMS]; /* the axes in launch order (SWAP;
	                               identity at first): gaxes follow it */
	int64_t upcast[TG_MAX_DIMS]; /* per axis, the expanded part of a
	                               split (1: none); full/upcast is the
	                               extent left to gidx or the loop */
	uint32_t reduce_axes;       /* bit i: axis i is reduced */
	int has_reduce;
	size_t nglobal, nred;
	uint32_t gaxes[TG_MAX_DIMS]; /* global axes left, in order */
	uint32_t raxes[TG_MAX_DIMS]; /* reduce axes left, in order */
	size_t global[3];  /* gidx0 = the last global axis, gidx1 the one
	                      before, gidx2 the product of the rest (work
	                      groups when there are locals) */
	int64_t local[TG_MAX_DIMS]; /* per global axis, the part split off
	                               to a local index by LOCAL (1: none) */
	int64_t group[TG_MAX_DIMS]; /* per reduce axis, the part reduced
	                               across the work group (GROUP,
	                               GROUPTOP; 1: none) */
	uint32_t grouptop;  /* bit i: axis i's group part is its outer
	                       digit (GROUPTOP), else the inner */
	uint32_t lanes;     /* bit i: reduce axis i's upcast part is lanes
	                       of partial sums (GROUP on a device without
	                       work groups: registers, a vector on a
	                       CPU), added in order after the loops */
	size_t nlocal;
	int nolocals;       /* NOLOCALS applied: no LOCAL or GROUP after */
	uint32_t laxes[3];  /* axes with a local or group part: the last is
	                       lidx0, the one before lidx1, then lidx2 */
	size_t local_size[3]; /* work-group size per launch axis */
	const struct tg_renderer_caps *caps; /* the device's limits for
	                       LOCAL and GROUP (NULL: no work groups) */
	size_t lblock;     /* C: gidx0 runs in blocks of this many work-
	                      items, each block through every gidx1 and
	                      gidx2 before the next (0: no blocks); see
	                      tg_kplan_launch_block */
	int pass_ok;       /* the kernel's stores allow passes (one reduce,
	                      stored in its dtype to a buffer it does not
	                      read) */
	int64_t pass;      /* PASS's amount (0: none; rblock is chosen) */
	uint32_t pass_axis; /* PASS's axis */
	int64_t rblock;    /* C: the outer reduce loop runs in passes of
	                      this many iterations, each pass through every
	                      item of the launch block before the next,
	                      the partial results kept in the output
	                      (0: one pass); see tg_kplan_reduce_block */
	size_t nbufs;
	uint32_t outs;     /* bit i: buffer i is stored */
	char name[128];    /* "E_3_5", "r_4_5"; opts append the amounts
	                      of the unrolled, then the upcasted axes */
	size_t nopts;
	tg_opt opts[TG_MAX_OPTS]; /* applied, in order */
	/* TC: the kernel's matmul shape, when it has one: a SUM of the
	 * product of two loads of dtype tc_dt[0] (maybe cast), summed in
	 * tc_dt[1]; each choice its N, M and K axes */
	size_t ntc;
	uint8_t tc_axes[TG_MAX_TC_CHOICES][3];
	int tc_dt[2];
	int tc;            /* TC applied: 1 + its index in caps->tc */
	int tc_use;        /* the TC setting: 0 no TC in the hand-coded
	                      opts nor in the moves */
	int tc_opt;        /* TC_OPT: the hand-coded TC opt's amount */
	uint8_t tc_asrc[TG_MAX_TC_CHOICES]; /* per choice, the product's
	                      operand (0 or 1) that is A (moves along M) */
	/* TC through a matrix instruction (tg_wmma): the layout, the N, M
	 * and K axes of the applied choice and which operand is A.  K's
	 * extent left to the loop is then also divided by kthreads. */
	const tg_wmma *wmma;
	uint8_t tc_ax[3];
	int wmma_asrc;
} tg_kplan;

/* This thread's flat index among its work group's items on the axes
 * with a group part (grouped) or a local part (!grouped), the first
 * of p->laxes slowest, and the number of those items in *count; the
 * index is 0 and the count 1 when there are none.  Nodes owned by ir. */
tg_uop *tg_kplan_flat_lidx(tg_ir *ir, const tg_kplan *p, int grouped,
                           int64_t *count);
/* The pass index of a plan with reduce passes (p->rblock): SPECIAL
 * "kidx0", arg.a the number of passes, which the C wrapper loops over
 * around each launch block; NULL without passes.  Interned: every call
 * on one ir gives the same node (p NULL: none). */
tg_uop *tg_kplan_pass_idx(tg_ir *ir, const tg_kplan *p);
/* The IR of k under plan p before expansion: SINK(stores) in *out,
 * owned by k->ir.  Every AST node is lowered once; index math is
 * simplified (tg_sym_*).  An axis with upcast[ax] = u > 1 is indexed
 * outer*u + X, X its digit:
 *   EXPAND  no sources, TG_INDEX, arg.v.i the axis, arg.a = u; bounds
 *           [0, u-1], so simplification treats it as a loop variable
 * and a reduce is
 *   REDUCE  (value, RANGE...) over the reduce loops, arg.v.i the op
 *           (ADD, MAX), arg.a the unrolled axes (reduce axes with an
 *           upcast part), arg.b = 0.
 * A local part L makes the outer index gidx*L + lidx.  A group part G
 * of a reduce axis makes its index r*G + lidx (GROUPTOP: lidx*R + r)
 * and STOREs are gated to the group's item 0 (tg_expand_upcasts makes
 * the reduce two-stage).  A mask that depends on digits stays a LOAD's
 * gate or a WHERE; the expander decides it per lane.  Reduce passes
 * (p->rblock = B) index the outer reduce loop kidx0*B + RANGE(0, B);
 * where an op sits between the reduce R and the store, the store takes
 * WHERE(kidx0 < passes-1, R, op(R)): the partial until the last pass.
 * With a matrix instruction (p->wmma) K's index is (r*kthreads + lidx0)
 * * u + X, B is read at the columns its fragment holds, and the reduce
 * is REDUCE(WMMA(a, b), RANGE...): WMMA's two sources are the scalar
 * values of A and B (their digits still open) and the expander makes
 * the fragments. */
int tg_lower(const tg_kernel *k, const tg_kplan *p, tg_uop **out);

/* ---------------------------------------------------- codegen/expand.c */

/* The expander (tinygrad's do_expand and do_reduce): the lowered IR
 * with digits becomes one copy per lane.  A value that depends on the
 * digits of axes m becomes
 *   EXPAND  its lanes as sources, arg.a the axis mask m; lane l holds
 *           the digits of m's axes, the last axis fastest (with upcasts
 *           2 and 3 on axes 0 and 1, lane 4 has digits 1 and 1)
 * with index math given each lane's digits and simplified; values are
 * rebuilt lane by lane and never folded.  A REDUCE contracts its
 * unrolled axes: per lane of the value's other axes,
 *   REDUCE  (v0, .., vk-1, RANGE...), arg.b = k, arg.a = 0: the value's
 *           lanes over the unrolled axes in loop order (every digit)
 * and a grouped reduce (p->group) becomes two stages through one
 * shared array: each thread's part of each lane stored to DEFINE_LOCAL
 * "tempN" at [lane][local item][group item], one BARRIER, then per lane
 * a REDUCE of LOAD(temp, idx, barrier) over a loop of the group.  The
 * SINK gets every lane of every STORE, each distinct STORE once, store
 * by store.  REDUCE(WMMA(a, b), RANGE...) (p->wmma) becomes, per tile
 * of C,
 *   REDUCE  (WMMA(VECTORIZE(a's na lanes), VECTORIZE(b's nb lanes),
 *           CONST 0) per step of the unrolled K, RANGE...), a vector of
 *           nc, arg.b the steps
 * and each lane of the value is a GEP of its tile's REDUCE.
 * The rewritten sink (no EXPAND left), or NULL (error in ir:
 * OOM, a grouped reduce that needs more shared memory than p->caps
 * has). */
tg_uop *tg_expand_upcasts(tg_ir *ir, tg_uop *sink, const tg_kplan *p);

/* ---------------------------------------------------- codegen/reduce.c */

/* Accumulators: REDUCE(v0..vk-1, ranges...) (arg.b = k) becomes
 * PHI(acc, ((acc op v0) op v1) ..) over DEFINE_ACC(init, ranges...),
 * each accumulator numbered apart (arg.v.i), init 0 for ADD and the
 * dtype's least value for MAX; without ranges, v0 op v1 op ...  With
 * reduce passes (p->rblock) the REDUCE a STORE takes (directly, or as
 * the partial branch of the WHERE lowering made) starts from what the
 * last pass stored there: init LOAD(buf, idx, kidx0 != 0 [&& gate],
 * identity).  The rewritten sink, or NULL (error in ir). */
tg_uop *tg_lower_reduces(tg_ir *ir, tg_uop *sink, const tg_kplan *p);

/* The link below v in an accumulator's chain (reduce_acc builds
 * ((acc op v0) op v1) ..; tg_fuse_mulacc turns sum links into MULACC):
 * ADD or MAX (prev, t), or MULACC(a, b, prev).  NULL when v is none. */
static inline tg_uop *tg_acc_link_prev(const tg_uop *v)
{
	if (v->op == TG_MULACC && v->nsrc == 3)
		return v->src[2];
	if ((v->op == TG_ADD || v->op == TG_MAX) && v->nsrc == 2)
		return v->src[0];
	return NULL;
}

/* Float sums of products fuse: PHI(acc, (acc + a*b) + c*d) becomes
 * PHI(acc, MULACC(c, d, MULACC(a, b, acc))) on float32 and float64
 * accumulators (MULACC on floats is one rounding, tg_exec_alu).  Run
 * after loop collapse.  The rewritten sink, or NULL (error in ir). */
tg_uop *tg_fuse_mulacc(tg_ir *ir, tg_uop *sink);

/* --------------------------------------------------- codegen/collapse.c */

/* Loop collapse: reduces that add a loop-invariant value under
 * conditions linear in the loop become closed forms (value * count, no
 * loop).  The rewritten sink, or NULL (error set). */
tg_uop *tg_collapse_loops(tg_ir *ir, tg_uop *sink);

/* -------------------------------------------------- codegen/vectorize.c */

/* Vector load/store folding (tinygrad's fold_expanded): scalar LOADs of
 * one buffer (not written by the kernel) with the same gate,
 * alternative and dtype at base+c .. base+c+w-1 become one LOAD of a
 * w-vector at base+c, each old LOAD a GEP of its lane; the SINK's
 * scalar STOREs likewise become STOREs of a VECTORIZE.  w is 4, else
 * 2, at most maxw (nothing folds below 2); dtypes of 2, 4 or 8 bytes
 * other than bfloat16.  With `aligned`, a run must start at an index
 * provably a multiple of w (a dialect whose vector loads need
 * alignment; C gathers lane by lane and needs none).  Where every
 * buffer starts at a multiple of buffer_align bytes (the renderer
 * caps' buffer_align; 0: unknown) and a vector LOAD's index is
 * provably a multiple of w, its arg.a is its size in bytes: the
 * renderer may load it aligned.  The rewritten sink, or NULL (error in
 * ir). */
tg_uop *tg_vectorize_mem(tg_ir *ir, tg_uop *sink, unsigned maxw,
                         int aligned, size_t buffer_align);
/* Whether a vector of the scalar type t can be formed: GCC has vector
 * types of it and the C renderer can name them (2, 4 or 8 bytes, not
 * bool nor bfloat16). */
int tg_vector_scalar_ok(tg_type t);

/* -------------------------------------------------- codegen/linearize.c */

/* The nodes under sink in execution order: RANGE opens a loop, an
 * ENDRANGE node (created here, src[0] = its RANGE) closes it; each node
 * sits inside the RANGEs it depends on (hoisted out of the others; a
 * value that skips a loop of its nest goes inside that loop),
 * DEFINE_ACC before its loops, loops close after their last user, SINK
 * excluded.  The order depends on the graph only (ties go to the
 * topological order): the rendered source is a cache key.  Time
 * O(n log n + n * m) for n nodes and m distinct loop sets (a few).
 * Array malloc'd, owned by caller.  Errors: more than 64 loops or loops
 * that cannot nest (TG_EUNSUPPORTED), OOM. */
int tg_linearize(tg_ir *ir, tg_uop *sink, tg_uop ***out, size_t *n);

#endif /* TG_CODEGEN_H */

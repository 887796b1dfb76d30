/*
 * shape/shape.h - views and shape trackers (tinygrad's shape/view.py and
 * shape/shapetracker.py).  Internal; never installed.
 *
 * A view maps an index tuple of `shape` to a flat buffer offset:
 * offset + sum(idx[i] * strides[i]), and it is valid (reads give the
 * value, not 0) when every idx[i] lies in mask [begin, end).  A shape
 * tracker is a stack of views: the last one takes the caller's indices,
 * and each earlier one re-reads the flat index of the view after it.
 * Movement ops never copy data; they edit the last view, and a reshape
 * that one view cannot express pushes a new view.
 *
 * Lifetime scheme:
 *  - A view is one malloc'd block (the struct and its arrays), immutable
 *    once made, freed with tg_view_free().  A tracker owns its views.
 *  - Symbolic entries (tg_sint with u != NULL) are nodes owned by the
 *    tg_ir context they were built in; a view or tracker holding them
 *    must not outlive that context (import them into a longer-lived one
 *    with tg_uop_import() first).
 *  - `ir` may be NULL for calls whose inputs are all integers and that
 *    build no expressions; tg_st_expr_idxs() and friends need a context.
 *
 * Errors: functions return a tg_status (0 or negative) or NULL, with
 * tg_last_error() naming the op and the values ("reshape: cannot reshape
 * (3,4) to (5,): 12 elements vs 5").  "Cannot stay one view" is not an
 * error: tg_view_reshape() and tg_view_merge() return 0 with *out NULL,
 * as tinygrad returns None.
 */
#ifndef TG_SHAPE_H
#define TG_SHAPE_H

#include "ir/ir.h"

/* More dimensions than this are refused with TG_EINVAL. */
#define TG_MAX_DIMS 32

/* ------------------------------------------------------- shape/view.c */

/* Whether a[i] and b[i] are equal for all i < n (tg_sint_eq). */
static inline int tg_sints_eq(const tg_sint *a, const tg_sint *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!tg_sint_eq(a[i], b[i]))
			return 0;
	return 1;
}
/* Whether some v[i] is the integer c. */
static inline int tg_sints_has(const tg_sint *v, size_t n, int64_t c)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tg_sint_is(v[i], c))
			return 1;
	return 0;
}
/* Whether every v[i] is an integer. */
static inline int tg_sints_all_int(const tg_sint *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].u)
			return 0;
	return 1;
}

/* "(3,4)", "(5,)" or "()" (Python's tuple text) into buf (truncated). */
const char *tg_sints_format(const tg_sint *v, size_t n, char *buf,
                            size_t len);

typedef struct tg_view {
	uint32_t ndim;
	uint8_t contiguous;  /* offset 0, no mask, row-major strides */
	/* trackers share views (a view in a tracker never changes):
	 * tg_view_share adds a reference, tg_view_free drops one */
	_Atomic uint32_t refs;
	tg_sint offset;
	tg_sint *shape, *strides;
	tg_sint *mask;       /* 2*ndim: [begin, end) per axis, or NULL */
} tg_view;

/* The canonical view (tinygrad's View.create): size-1 axes get stride
 * 0, a mask covering everything is dropped, a 0-size shape becomes
 * contiguous with zero strides, an axis whose mask leaves one index gets
 * stride 0 with the offset moved, an empty mask zeroes every stride.
 * `strides` NULL means row-major; `mask` NULL means none.  The new view
 * in *out is owned by the caller: tg_view_free(). */
int tg_view_new(tg_ir *ir, size_t ndim, const tg_sint *shape,
                const tg_sint *strides, tg_sint offset,
                const tg_sint *mask, tg_view **out);
/* tg_view_new with `op` naming the caller in error messages. */
int tg_view_make(tg_ir *ir, const char *op, size_t ndim,
                 const tg_sint *shape, const tg_sint *strides,
                 tg_sint offset, const tg_sint *mask, tg_view **out);
/* Refuses shapes no view can hold: more than TG_MAX_DIMS dims, negative
 * sizes, element counts past int64; `op` names the caller. */
int tg_shape_check(const char *op, size_t ndim, const tg_sint *shape);
/* Row-major strides of shape into out[ndim], 0 on size-1 axes. */
void tg_strides_for_shape(tg_ir *ir, size_t ndim, const tg_sint *shape,
                          tg_sint *out);
/* The contiguous view of shape; *out owned by the caller. */
int tg_view_from_shape(tg_ir *ir, size_t ndim, const tg_sint *shape,
                       tg_view **out);
/* NULL is allowed. */
void tg_view_free(tg_view *v);
/* A copy of v in *out, owned by the caller. */
int tg_view_copy(const tg_view *v, tg_view **out);
/* v itself with one more reference, for a tracker that holds it as it
 * is (never to be changed). */
tg_view *tg_view_share(const tg_view *v);
/* Whether a and b are the same view (symbolic entries by node). */
int tg_view_eq(const tg_view *a, const tg_view *b);
/* Product of the shape, symbolic axes at their maximum. */
int64_t tg_view_size(const tg_view *v);
/* "View(shape=(2,3), strides=(3,1), offset=0, mask=None,
 * contiguous=1)"; a mask prints as "((0,2),(1,3))".  New string
 * (free()) or NULL on OOM. */
char *tg_view_format(const tg_view *v);

/* Movement ops on one view.  Each puts a new view in *out (owned by the
 * caller: tg_view_free()) or returns an error naming the op and the
 * values. */

/* arg holds n pairs (before, after) of non-negative padding. */
int tg_view_pad(tg_ir *ir, const tg_view *v, size_t n, const tg_sint *arg,
                tg_view **out);
/* arg holds n pairs [begin, end) with 0 <= begin <= end <= shape. */
int tg_view_shrink(tg_ir *ir, const tg_view *v, size_t n,
                   const tg_sint *arg, tg_view **out);
/* Only size-1 (stride-0) axes may change size. */
int tg_view_expand(tg_ir *ir, const tg_view *v, size_t ndim,
                   const tg_sint *shape, tg_view **out);
/* axis is a permutation of 0..ndim-1: new axis i is old axis axis[i]. */
int tg_view_permute(tg_ir *ir, const tg_view *v, size_t n,
                    const uint32_t *axis, tg_view **out);
/* Every mul[i] != 0: takes every mul[i]-th element, from the end when
 * negative (so -1 flips). */
int tg_view_stride(tg_ir *ir, const tg_view *v, size_t n,
                   const int64_t *mul, tg_view **out);
/* The (index, valid) expressions of v at idxs[ndim]: offset +
 * sum(idx*stride), and `valid_in` (may be NULL) and-ed with the mask
 * bounds.  Nodes owned by ir. */
int tg_view_expr(tg_ir *ir, const tg_view *v, tg_uop *const *idxs,
                 tg_uop *valid_in, tg_uop **idx, tg_uop **valid);
/* v as an IR node (one IR: kernel ASTs carry their views as nodes):
 * VIEW with arg.a = ndim, arg.b = 1 when masked, arg.v.i the contiguous
 * flag, and the TG_INDEX sources shape[ndim], strides[ndim], offset,
 * then mask[2*ndim] when masked.  Symbolic entries are imported into ir,
 * so equal views are one node.  NULL on OOM (sticky in ir). */
tg_uop *tg_view_uop(tg_ir *ir, const tg_view *v);
/* The view a VIEW node holds (no canonicalization: the node came from
 * a canonical view); symbolic entries are u's sources, owned by u's
 * context.  *out owned by the caller; TG_EINVAL for a malformed node. */
int tg_view_of_uop(const tg_uop *u, tg_view **out);

/* ---------------------------------------------------- shape/reshape.c */

/* Reshape to ndim/shape (a new view in *out, owned by the caller); 0
 * with *out NULL when one view cannot do it. */
int tg_view_reshape(tg_ir *ir, const tg_view *v, size_t ndim,
                    const tg_sint *shape, tg_view **out);
/* v with mergeable axes merged (the same map, fewest dims); *out is a
 * new view even when nothing merges. */
int tg_view_minify(tg_ir *ir, const tg_view *v, tg_view **out);

/* ------------------------------------------------------ shape/merge.c */

/* One view equal to applying vm2 after vm1 (tinygrad's vm2 + vm1): vm1
 * indexes the flat space of vm2.  *out is owned by the caller; 0 with
 * *out NULL when no single view can. */
int tg_view_merge(tg_ir *ir, const tg_view *vm2, const tg_view *vm1,
                  tg_view **out);
/* The view that undoes v's permutes and flips, for an output of shape
 * out_shape (*out, owned by the caller); 0 with *out NULL when v is not
 * invertible (shrinks, expands, strides other than +-1). */
int tg_view_invert(tg_ir *ir, const tg_view *v, size_t ndim,
                   const tg_sint *out_shape, tg_view **out);

/* ------------------------------------------------ shape/shapetracker.c */

typedef struct tg_st {
	size_t nviews;      /* >= 1 */
	tg_view **views;    /* owned (in the tracker's own allocation); the
	                       last takes the caller's indices */
} tg_st;

/* One contiguous view of shape.  New tracker (tg_st_free()) or NULL. */
tg_st *tg_st_from_shape(tg_ir *ir, size_t ndim, const tg_sint *shape);
/* A tracker of copies of views[0..n-1].  New tracker or NULL. */
tg_st *tg_st_from_views(tg_view *const *views, size_t n);
/* NULL is allowed. */
void tg_st_free(tg_st *st);
/* New tracker or NULL on OOM. */
tg_st *tg_st_copy(const tg_st *st);
int tg_st_eq(const tg_st *a, const tg_st *b);
/* The shape of the last view.  Borrowed from st. */
static inline const tg_sint *tg_st_shape(const tg_st *st)
{
	return st->views[st->nviews - 1]->shape;
}
static inline size_t tg_st_ndim(const tg_st *st)
{
	return st->views[st->nviews - 1]->ndim;
}
/* One contiguous view. */
int tg_st_contiguous(const tg_st *st);
/* One unmasked view with row-major strides (any offset). */
int tg_st_consecutive(const tg_st *st);
/* Elements of the shape, symbolic axes at their maximum. */
int64_t tg_st_size(const tg_st *st);
/* "ShapeTracker(views=(View(...), View(...)))".  New string or NULL. */
char *tg_st_format(const tg_st *st);

/* st as an IR node: SHAPETRACKER whose sources are its VIEW nodes, in
 * order (equal trackers are one node).  NULL on OOM (sticky in ir). */
tg_uop *tg_st_uop(tg_ir *ir, const tg_st *st);
/* The tracker a SHAPETRACKER node holds; its symbolic entries are
 * owned by u's context.  New tracker (tg_st_free()) or NULL with an
 * error for a node that is not one. */
tg_st *tg_st_of_uop(const tg_uop *u);

/* Movement ops: each returns a new tracker (tg_st_free()) or NULL with
 * an error; st is unchanged.  Arguments are as for the tg_view_ ops. */
/* Stays one view when the last view can take it, else pushes one. */
tg_st *tg_st_reshape(tg_ir *ir, const tg_st *st, size_t ndim,
                     const tg_sint *shape);
tg_st *tg_st_pad(tg_ir *ir, const tg_st *st, size_t n, const tg_sint *arg);
tg_st *tg_st_shrink(tg_ir *ir, const tg_st *st, size_t n,
                    const tg_sint *arg);
tg_st *tg_st_expand(tg_ir *ir, const tg_st *st, size_t ndim,
                    const tg_sint *shape);
tg_st *tg_st_permute(tg_ir *ir, const tg_st *st, size_t n,
                     const uint32_t *axis);
tg_st *tg_st_stride(tg_ir *ir, const tg_st *st, size_t n,
                    const int64_t *mul);
/* Reverses every axis i with flip[i] != 0 (stride -1). */
tg_st *tg_st_flip(tg_ir *ir, const tg_st *st, size_t n,
                  const uint8_t *flip);

/* A view of shape/strides/offset (integers, no mask) over st's shape
 * read row-major, pushed and merged into st where it can.  Errors: a
 * symbolic st, a negative size, a view reading outside st. */
tg_st *tg_st_as_strided(tg_ir *ir, const tg_st *st, size_t ndim,
                        const int64_t *shape, const int64_t *strides,
                        int64_t offset);
/* Merges the last two views while they merge.  New tracker or NULL. */
tg_st *tg_st_simplify(tg_ir *ir, const tg_st *st);
/* a followed by b's views, simplified after each (tinygrad's a + b).
 * New tracker or NULL. */
tg_st *tg_st_concat(tg_ir *ir, const tg_st *a, const tg_st *b);
/* The tracker mapping st's output back to its input of shape
 * out_shape; 0 with *out NULL when some view is not invertible.  *out
 * is owned by the caller. */
int tg_st_invert(tg_ir *ir, const tg_st *st, size_t ndim,
                 const tg_sint *out_shape, tg_st **out);

/* -------------------------------------------------------- shape/index.c */

/* The (index, valid) expressions of st at idxs[ndim] (TG_INDEX nodes;
 * NULL idxs means variables "idx0".."idxN" over each axis).  The last
 * view is rendered with its mask as valid; each earlier view re-derives
 * its per-axis indices from the flat index by div/mod.  When valid is
 * always false, idx is -1.  Nodes owned by ir. */
int tg_st_expr_idxs(tg_ir *ir, const tg_st *st, tg_uop *const *idxs,
                    tg_uop **idx, tg_uop **valid);
/* The same at a flat (row-major) index `flat` of st's shape. */
int tg_st_expr_node(tg_ir *ir, const tg_st *st, tg_uop *flat,
                    tg_uop **idx, tg_uop **valid);
/* The variable "idx<axis>" over [0, shape[axis]-1] that the NULL-idxs
 * forms above use.  Owned by ir. */
tg_uop *tg_st_idx_var(tg_ir *ir, const tg_st *st, size_t axis);
/* Per axis, the stride the final index moves by (known[i] = 1), or
 * unknown (known[i] = 0) where the axis feeds a div/mod or, unless
 * ignore_valid, the valid expression.  Arrays of tg_st_ndim(st). */
int tg_st_real_strides(tg_ir *ir, const tg_st *st, int ignore_valid,
                       tg_sint *strides, uint8_t *known);
/* The axes whose known real stride is 1, ascending, into axes[] (room
 * for tg_st_ndim(st)); their count in *n. */
int tg_st_unit_stride_axes(tg_ir *ir, const tg_st *st, int ignore_valid,
                           uint32_t *axes, size_t *n);
/* Whether the valid expression depends on axis. */
int tg_st_axis_is_masked(tg_ir *ir, const tg_st *st, size_t axis,
                         int *out);
/* The period of st's reads along axis: the least q with index(x + q)
 * = index(x) + d (one d for every x) and valid(x + q) = valid(x), the
 * other axes held: 1 for an affine axis, a block's length where the
 * axis is divided or taken modulo (a block format's block index, its
 * nibble plane); 0 when there is none up to 4096 (a mask along the
 * axis, a product of two axes). */
int tg_st_axis_period(tg_ir *ir, const tg_st *st, size_t axis,
                      int64_t *period);
/* One past the largest buffer offset read (0 when nothing is valid or
 * the shape is empty). */
int tg_st_real_size(tg_ir *ir, const tg_st *st, int64_t *out);
/* The variables in every view, unbound, sorted by name, each once,
 * appended to *out (a TG_VEC the caller frees). */
int tg_st_vars(const tg_st *st, tg_uop_vec *out);
/* st with bound variables replaced by their variables, in *out (owned
 * by the caller); the BIND nodes found go to *binds (may be NULL; a
 * TG_VEC the caller frees), one per variable, sorted by name. */
int tg_st_unbind(tg_ir *ir, const tg_st *st, tg_st **out,
                 tg_uop_vec *binds);

/* ------------------------------------------------------ shape/symdims.c */

/* The shape context: the symbolic entries of lazy buffers' and
 * tensors' shapes live there, shared by every thread.  enter locks it
 * (recursively) and returns it (NULL on OOM, nothing held); leave
 * forgets a sticky error (its message stays in tg_last_error) and
 * unlocks.  Freed at tg_shutdown. */
tg_ir *tg_symctx_enter(void);
void tg_symctx_leave(void);
void tg_symctx_free(void);
/* The public int64 code of s (s itself for an integer); TG_DIM_INVALID
 * on OOM.  s's node must be of the shape context. */
int64_t tg_dim_encode(tg_sint s);
/* Codes to shape entries; TG_EINVAL naming a code that is not one. */
int tg_dims_decode(size_t n, const int64_t *in, tg_sint *out);
/* Whether st has a symbolic entry (then its ops need a context). */
int tg_st_is_sym(const tg_st *st);
/* Whether any of d[0..n-1] is a symbolic code. */
int tg_dims_sym(size_t n, const int64_t *d);
/* dim with its variables bound to their live tg_variables' values now
 * (an integer as it is); TG_DIM_INVALID with an error naming a
 * variable that has no live tg_variable. */
int64_t tg_dim_rebind(int64_t dim);
/* Whether a and b are one size up to the values bound in them. */
int tg_dim_same_unbound(int64_t a, int64_t b);
/* The product of dims[0..n-1] (a code when symbolic); TG_DIM_INVALID
 * on an error. */
int64_t tg_dims_product(size_t n, const int64_t *dims);
/* The live variable of that name (a new reference), or NULL. */
struct tg_variable *tg_variable_find(const char *name);
struct tg_variable *tg_variable_ref(struct tg_variable *v);

#endif /* TG_SHAPE_H */

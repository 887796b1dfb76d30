/*
 * shape_oracle.h - a ShapeTracker checked against a brute-force index
 * map, shared by test_shape.c and fuzz_shape.c (tinygrad's
 * CheckingShapeTracker, with numpy replaced by an explicit array).
 *
 * The oracle holds, for every index of the current shape in row-major
 * order, the buffer offset it reads, or -1 where it reads padding.  Each
 * movement op rebuilds the array by gathering from the previous one, so
 * the oracle shares no logic with the views it checks.
 */
#ifndef TG_SHAPE_ORACLE_H
#define TG_SHAPE_ORACLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

typedef struct so_st {
	tg_ir *ir;
	tg_st *st;
	size_t ndim;
	int64_t shape[TG_MAX_DIMS];
	int64_t *map;   /* buffer offset per index, -1 for padding */
	size_t n;
} so_st;

/* Where new index `ni` reads in the old array (old index in oi); 0 for
 * padding. */
typedef int (*so_src_fn)(const so_st *so, const int64_t *ni,
                         const int64_t *arg, int64_t *oi);

static inline size_t so_count(size_t ndim, const int64_t *shape)
{
	size_t n = 1, i;

	for (i = 0; i < ndim; i++)
		n *= (size_t)shape[i];
	return n;
}

static inline void so_sints(size_t n, const int64_t *v, tg_sint *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = tg_si(v[i]);
}

/* Row-major index tuple of flat index f. */
static inline void so_unravel(size_t ndim, const int64_t *shape, size_t f,
                              int64_t *idx)
{
	size_t d;

	for (d = ndim; d-- > 0;) {
		idx[d] = shape[d] ? (int64_t)(f % (size_t)shape[d]) : 0;
		f = shape[d] ? f / (size_t)shape[d] : 0;
	}
}

static inline size_t so_ravel(size_t ndim, const int64_t *shape,
                              const int64_t *idx)
{
	size_t f = 0, d;

	for (d = 0; d < ndim; d++)
		f = f * (size_t)shape[d] + (size_t)idx[d];
	return f;
}

/* A tracker of shape with its identity map.  0 or a tg_status. */
static inline int so_init(so_st *so, size_t ndim, const int64_t *shape)
{
	tg_sint sh[TG_MAX_DIMS];
	size_t i;

	memset(so, 0, sizeof *so);
	if (ndim > TG_MAX_DIMS || !(so->ir = tg_ir_new()))
		return TG_EINVAL;
	so_sints(ndim, shape, sh);
	if (!(so->st = tg_st_from_shape(so->ir, ndim, sh)))
		return tg_last_status();
	so->ndim = ndim;
	memcpy(so->shape, shape, ndim * sizeof *shape);
	so->n = so_count(ndim, shape);
	so->map = malloc((so->n ? so->n : 1) * sizeof *so->map);
	for (i = 0; so->map && i < so->n; i++)
		so->map[i] = (int64_t)i;
	return so->map ? 0 : TG_ENOMEM;
}

static inline void so_free(so_st *so)
{
	tg_st_free(so->st);
	tg_ir_free(so->ir);
	free(so->map);
	memset(so, 0, sizeof *so);
}

/* Takes over the new tracker r (NULL: the op failed) and rebuilds the
 * map for the new shape through src. */
static inline int so_apply(so_st *so, tg_st *r, size_t ndim,
                           const int64_t *shape, so_src_fn src,
                           const int64_t *arg)
{
	int64_t ni[TG_MAX_DIMS], oi[TG_MAX_DIMS], *map;
	size_t n = so_count(ndim, shape), i;

	if (!r)
		return tg_last_status();
	if (!(map = malloc((n ? n : 1) * sizeof *map))) {
		tg_st_free(r);
		return TG_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		so_unravel(ndim, shape, i, ni);
		map[i] = src(so, ni, arg, oi)
		         ? so->map[so_ravel(so->ndim, so->shape, oi)] : -1;
	}
	free(so->map);
	tg_st_free(so->st);
	so->map = map;
	so->st = r;
	so->n = n;
	so->ndim = ndim;
	memcpy(so->shape, shape, ndim * sizeof *shape);
	return 0;
}

static inline int so_src_permute(const so_st *so, const int64_t *ni,
                                 const int64_t *axis, int64_t *oi)
{
	size_t i;

	for (i = 0; i < so->ndim; i++)
		oi[axis[i]] = ni[i];
	return 1;
}

static inline int so_src_expand(const so_st *so, const int64_t *ni,
                                const int64_t *arg, int64_t *oi)
{
	size_t i;

	(void)arg;
	for (i = 0; i < so->ndim; i++)
		oi[i] = so->shape[i] == 1 ? 0 : ni[i];
	return 1;
}

static inline int so_src_pad(const so_st *so, const int64_t *ni,
                             const int64_t *arg, int64_t *oi)
{
	size_t i;

	for (i = 0; i < so->ndim; i++) {
		oi[i] = ni[i] - arg[2 * i];
		if (oi[i] < 0 || oi[i] >= so->shape[i])
			return 0;
	}
	return 1;
}

static inline int so_src_shrink(const so_st *so, const int64_t *ni,
                                const int64_t *arg, int64_t *oi)
{
	size_t i;

	for (i = 0; i < so->ndim; i++)
		oi[i] = ni[i] + arg[2 * i];
	return 1;
}

static inline int so_src_stride(const so_st *so, const int64_t *ni,
                                const int64_t *mul, int64_t *oi)
{
	size_t i;

	for (i = 0; i < so->ndim; i++)
		oi[i] = mul[i] > 0 ? ni[i] * mul[i]
		                   : so->shape[i] - 1 + ni[i] * mul[i];
	return 1;
}

/* arg: ndim, then the strides, then the offset: the old index is the
 * flat offset + sum(ni * stride) read row-major. */
static inline int so_src_as_strided(const so_st *so, const int64_t *ni,
                                    const int64_t *arg, int64_t *oi)
{
	int64_t f = arg[1 + arg[0]];

	for (int64_t i = 0; i < arg[0]; i++)
		f += ni[i] * arg[1 + i];
	so_unravel(so->ndim, so->shape, (size_t)f, oi);
	return 1;
}

static inline int so_as_strided(so_st *so, size_t ndim,
                                const int64_t *shape,
                                const int64_t *strides, int64_t offset)
{
	int64_t arg[2 + TG_MAX_DIMS];

	arg[0] = (int64_t)ndim;
	memcpy(arg + 1, strides, ndim * sizeof *strides);
	arg[1 + ndim] = offset;
	return so_apply(so, tg_st_as_strided(so->ir, so->st, ndim, shape,
	                                     strides, offset),
	                ndim, shape, so_src_as_strided, arg);
}

static inline int so_reshape(so_st *so, size_t ndim, const int64_t *shape)
{
	tg_sint sh[TG_MAX_DIMS];
	tg_st *r;
	int64_t *map;

	so_sints(ndim, shape, sh);
	if (!(r = tg_st_reshape(so->ir, so->st, ndim, sh)))
		return tg_last_status();
	/* the map is already row-major over the same elements */
	if (!(map = malloc((so->n ? so->n : 1) * sizeof *map))) {
		tg_st_free(r);
		return TG_ENOMEM;
	}
	memcpy(map, so->map, so->n * sizeof *map);
	free(so->map);
	so->map = map;
	tg_st_free(so->st);
	so->st = r;
	so->ndim = ndim;
	memcpy(so->shape, shape, ndim * sizeof *shape);
	return 0;
}

static inline int so_permute(so_st *so, const uint32_t *axis)
{
	int64_t shape[TG_MAX_DIMS], ax[TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < so->ndim; i++) {
		shape[i] = so->shape[axis[i]];
		ax[i] = axis[i];
	}
	return so_apply(so, tg_st_permute(so->ir, so->st, so->ndim, axis),
	                so->ndim, shape, so_src_permute, ax);
}

static inline int so_expand(so_st *so, const int64_t *shape)
{
	tg_sint sh[TG_MAX_DIMS];

	so_sints(so->ndim, shape, sh);
	return so_apply(so, tg_st_expand(so->ir, so->st, so->ndim, sh),
	                so->ndim, shape, so_src_expand, NULL);
}

/* arg: ndim pairs (before, after). */
static inline int so_pad(so_st *so, const int64_t *arg)
{
	int64_t shape[TG_MAX_DIMS];
	tg_sint a[2 * TG_MAX_DIMS] = { { 0, NULL } };
	size_t i;

	for (i = 0; i < so->ndim; i++)
		shape[i] = so->shape[i] + arg[2 * i] + arg[2 * i + 1];
	so_sints(2 * so->ndim, arg, a);
	return so_apply(so, tg_st_pad(so->ir, so->st, so->ndim, a), so->ndim,
	                shape, so_src_pad, arg);
}

/* arg: ndim pairs [begin, end). */
static inline int so_shrink(so_st *so, const int64_t *arg)
{
	int64_t shape[TG_MAX_DIMS];
	tg_sint a[2 * TG_MAX_DIMS] = { { 0, NULL } };
	size_t i;

	for (i = 0; i < so->ndim; i++)
		shape[i] = arg[2 * i + 1] - arg[2 * i];
	so_sints(2 * so->ndim, arg, a);
	return so_apply(so, tg_st_shrink(so->ir, so->st, so->ndim, a),
	                so->ndim, shape, so_src_shrink, arg);
}

static inline int so_stride(so_st *so, const int64_t *mul)
{
	int64_t shape[TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < so->ndim; i++) {
		int64_t k = mul[i] < 0 ? -mul[i] : mul[i];

		shape[i] = (so->shape[i] + k - 1) / k;
	}
	return so_apply(so, tg_st_stride(so->ir, so->st, so->ndim, mul),
	                so->ndim, shape, so_src_stride, mul);
}

/* Flips the axes whose bit is set in `axes`. */
static inline int so_flip(so_st *so, unsigned axes)
{
	int64_t mul[TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < so->ndim; i++)
		mul[i] = (axes >> i & 1u) ? -1 : 1;
	return so_stride(so, mul);
}

static inline int so_simplify(so_st *so)
{
	tg_st *r = tg_st_simplify(so->ir, so->st);

	if (!r)
		return tg_last_status();
	tg_st_free(so->st);
	so->st = r;
	return 0;
}

/* Evaluates st's (index, valid) at every index into map (-1 where
 * invalid).  0, or 1 with the reason in msg. */
static inline int so_eval(tg_ir *ir, const tg_st *st, int64_t *map,
                          char *msg, size_t len)
{
	const tg_uop *vars[TG_MAX_DIMS];
	int64_t vals[TG_MAX_DIMS], idx[TG_MAX_DIMS], shape[TG_MAX_DIMS];
	int64_t off = 0, ok;
	size_t axis[TG_MAX_DIMS], nv = 0, ndim = tg_st_ndim(st), n, i, d;
	tg_uop *ie, *ve, *v;

	for (d = 0; d < ndim; d++) {
		shape[d] = tg_st_shape(st)[d].c;
		if ((v = tg_st_idx_var(ir, st, d)) && v->op == TG_DEFINE_VAR) {
			vars[nv] = v;
			axis[nv++] = d;
		}
	}
	if (tg_st_expr_idxs(ir, st, NULL, &ie, &ve)) {
		snprintf(msg, len, "expr_idxs: %s", tg_last_error());
		return 1;
	}
	for (i = 0, n = so_count(ndim, shape); i < n; i++) {
		so_unravel(ndim, shape, i, idx);
		for (d = 0; d < nv; d++)
			vals[d] = idx[axis[d]];
		if (tg_sym_eval(ve, vars, vals, nv, &ok) ||
		    (ok && tg_sym_eval(ie, vars, vals, nv, &off))) {
			snprintf(msg, len, "eval at %zu: %s", i,
			         tg_last_error());
			return 1;
		}
		map[i] = ok ? off : -1;
	}
	return 0;
}

/* Compares every index of st (of shape ndim/shape) with map.  0 when
 * they agree, else 1 with the first difference in msg. */
static inline int so_compare(tg_ir *ir, const tg_st *st, size_t ndim,
                             const int64_t *shape, const int64_t *map,
                             char *msg, size_t len)
{
	size_t n = so_count(ndim, shape), i, d;
	int64_t *got;
	int bad = 0;

	for (d = 0; d < ndim; d++) {
		if (tg_st_ndim(st) != ndim || !tg_sint_is(tg_st_shape(st)[d],
		                                          shape[d])) {
			snprintf(msg, len, "shape differs on axis %zu", d);
			return 1;
		}
	}
	if (!(got = malloc((n ? n : 1) * sizeof *got))) {
		snprintf(msg, len, "out of memory");
		return 1;
	}
	bad = so_eval(ir, st, got, msg, len);
	for (i = 0; !bad && i < n; i++) {
		if (got[i] == map[i])
			continue;
		snprintf(msg, len, "at flat index %zu: tracker reads %lld, "
		         "oracle %lld", i, (long long)got[i],
		         (long long)map[i]);
		bad = 1;
	}
	free(got);
	return bad;
}

/* so_compare on the tracker and on it reshaped flat (tinygrad's
 * assert_same reads through a flattening reshape). */
static inline int so_check(so_st *so, char *msg, size_t len)
{
	int64_t flat = (int64_t)so->n;
	tg_sint f = tg_si(flat);
	tg_st *r;
	int bad;

	if (so_compare(so->ir, so->st, so->ndim, so->shape, so->map, msg,
	               len))
		return 1;
	if (!(r = tg_st_reshape(so->ir, so->st, 1, &f))) {
		snprintf(msg, len, "flatten: %s", tg_last_error());
		return 1;
	}
	bad = so_compare(so->ir, r, 1, &flat, so->map, msg, len);
	tg_st_free(r);
	return bad;
}

#endif

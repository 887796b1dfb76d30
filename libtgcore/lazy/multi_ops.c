/*
 * multi_ops.c - the ops on tensors over a device group (tinygrad's
 * MultiLazyBuffer's alu, r and movement ops), shard by shard on the
 * shards' own devices (see multi.c for what a MULTI lazy holds):
 *  - elementwise ops line their operands up first: a replicated operand
 *    is sliced to the sharded one's rows, one sharded along another
 *    axis is gathered to every member and sliced;
 *  - a reduce over the sharded axis reduces each shard, then all-reduces
 *    (every member adds up the partial results, copied to it, in member
 *    order, so that the replicas agree bit for bit);
 *  - movement ops map the sharded axis through (reshape finds where it
 *    goes, and refuses one that would move rows between shards);
 *  - a shrink to exactly one shard's rows keeps that shard and marks
 *    the others "not real" (zeros); padding it back to the whole axis
 *    makes every shard real again (tinygrad's `real`).
 * Separate from multi.c, which makes MULTI lazies (sharding, copies
 * and the flattening for the scheduler): these only take them apart
 * shard by shard and wrap the results.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lazy/lazy.h"
#include "device/device.h"
#include "ir/ir.h"

/* ----------------------------------------------------------- elementwise */

/* The shards of mlb lined up with (axis, bounds) of the result: its own
 * when they match, a replicated one's rows, or (another split) gathered
 * to each member and sliced.  New references in out[]. */
static int line_up(const tg_lazy *mlb, int axis, const int64_t *b,
                   int keep, tg_lazy **out)
{
	const tg_multi *m = mlb->multi;
	int64_t mb[2 * TG_GROUP_MAX];
	size_t i;

	if (m->axis >= 0)
		tg_multi_bounds_(m, mb);
	if (keep || (m->axis == axis &&
	             (axis < 0 || !memcmp(mb, b, 2 * m->n * sizeof *b)))) {
		for (i = 0; i < m->n; i++)
			out[i] = tg_lazy_ref(m->lbs[i]);
		return 0;
	}
	for (i = 0; i < m->n; i++) {
		tg_lazy *whole = m->axis < 0 ? tg_lazy_ref(m->lbs[i]) :
		                 tg_multi_copy((tg_lazy *)mlb, m->lbs[i]->dev);

		out[i] = whole ? tg_multi_rows_(whole, axis, b[2 * i],
		                                b[2 * i + 1]) : NULL;
		tg_lazy_unref(whole);
		if (!out[i])
			return tg_last_status();
	}
	return 0;
}

tg_lazy *tg_multi_alu(unsigned op, tg_lazy *const *in, size_t n)
{
	tg_lazy *src[3][TG_GROUP_MAX] = { { 0 } };
	int64_t b[2 * TG_GROUP_MAX];
	const tg_lazy *a = in[0];
	int axis = -1, keep = 0, rc = 0;
	size_t i, k, ng;
	tg_multi *m;

	for (k = 0; k < n; k++)
		if (!tg_lazy_is_multi(in[k]) || in[k]->dev != a->dev)
			return tg_error(TG_EINVAL, "alu %s: operands on %s and "
			                "%s (all must be on one device group)",
			                tg_op_name(op), tg_dev_name(a->dev),
			                tg_dev_name(in[k]->dev)), NULL;
	ng = a->multi->n;
	/* they share one split: the last sharded operand's */
	for (k = 0; k < n; k++) {
		if (in[k]->multi->axis >= 0) {
			axis = in[k]->multi->axis;
			tg_multi_bounds_(in[k]->multi, b);
		}
		keep |= memchr(in[k]->multi->real, 0, ng) != NULL;
	}
	if (!(m = tg_multi_alloc_(ng, axis)))
		return NULL;
	for (i = 0; i < ng; i++)
		for (k = 0; k < n; k++)
			m->real[i] &= in[k]->multi->real[i];
	if (!memchr(m->real, 1, ng)) {
		tg_multi_free(m);
		return tg_error(TG_EUNSUPPORTED, "alu %s: the operands keep "
		                "different devices' rows, so no device holds "
		                "a result", tg_op_name(op)), NULL;
	}
	for (k = 0; k < n && !rc; k++)
		rc = line_up(in[k], axis, b, keep, src[k]);
	for (i = 0; i < ng && !rc; i++)
		if (m->real[i] && !(m->lbs[i] = tg_lazy_alu(op, src[0][i],
		                                            src[1][i],
		                                            src[2][i])))
			rc = tg_last_status();
	for (i = 0; i < ng && !rc; i++)
		if (!m->real[i]) {
			size_t r = tg_multi_first_real_(m);
			m->lbs[i] = tg_multi_zeros_like_(src[0][i],
			                                 m->lbs[r]->dtype);
		}
	for (k = 0; k < n; k++)
		for (i = 0; i < ng; i++)
			tg_lazy_unref(src[k][i]);
	if (rc)
		return tg_multi_free(m), (tg_lazy *)NULL;
	return tg_multi_wrap_(a->dev, m);
}

/* The same op on every shard (cast, contiguous): fn(shard, arg). */
static tg_lazy *each(tg_lazy *a, tg_lazy *(*fn)(tg_lazy *, const void *),
                     const void *arg)
{
	const tg_multi *src = a->multi;
	tg_multi *m = tg_multi_alloc_(src->n, src->axis);

	if (!m)
		return NULL;
	memcpy(m->real, src->real, src->n);
	for (size_t i = 0; i < m->n; i++)
		m->lbs[i] = fn(src->lbs[i], arg);
	return tg_multi_wrap_(a->dev, m);
}

typedef struct cast_arg {
	tg_dtype dt;
	int bitcast;
} cast_arg;

static tg_lazy *cast_one(tg_lazy *lb, const void *arg)
{
	const cast_arg *c = arg;

	return tg_lazy_cast(lb, c->dt, c->bitcast);
}

tg_lazy *tg_multi_cast(tg_lazy *a, tg_dtype dt, int bitcast)
{
	return each(a, cast_one, &(cast_arg){ dt, bitcast });
}

static tg_lazy *contiguous_one(tg_lazy *lb, const void *arg)
{
	(void)arg;
	return tg_lazy_contiguous(lb);
}

tg_lazy *tg_multi_contiguous(tg_lazy *a)
{
	return each(a, contiguous_one, NULL);
}

tg_lazy *tg_multi_assign(tg_lazy *target, tg_lazy *value)
{
	const tg_multi *t = target->multi, *v = value->multi;
	int64_t tb[2 * TG_GROUP_MAX], vb[2 * TG_GROUP_MAX];
	tg_multi *m;

	if (!tg_lazy_is_multi(target) || !tg_lazy_is_multi(value) ||
	    target->dev != value->dev)
		return tg_error(TG_EINVAL, "assign: a tensor on %s to one on "
		                "%s", tg_dev_name(value->dev),
		                tg_dev_name(target->dev)), NULL;
	if (t->axis >= 0)
		tg_multi_bounds_(t, tb);
	if (v->axis >= 0)
		tg_multi_bounds_(v, vb);
	if (t->axis != v->axis ||
	    (t->axis >= 0 && memcmp(tb, vb, 2 * t->n * sizeof *tb)))
		return tg_error(TG_EINVAL, "assign: the value is split along "
		                "axis %d, the tensor along %d (-1: copied "
		                "whole), or at other rows", v->axis,
		                t->axis), NULL;
	if (!(m = tg_multi_alloc_(t->n, t->axis)))
		return NULL;
	memcpy(m->real, t->real, t->n);
	for (size_t i = 0; i < t->n; i++)
		m->lbs[i] = tg_lazy_is_plain(t->lbs[i]) ?
		            tg_lazy_assign(t->lbs[i], v->lbs[i]) :
		            tg_lazy_ref(v->lbs[i]);
	return tg_multi_wrap_(target->dev, m);
}

/* ------------------------------------------------------------- reduces */

/* Every member gets the op over all parts, copied to it and combined in
 * member order (so that every replica is the same, bit for bit). */
static tg_multi *all_reduce(unsigned op, tg_lazy *const *parts, size_t n)
{
	tg_multi *m = tg_multi_alloc_(n, -1);

	for (size_t i = 0; m && i < n; i++) {
		tg_lazy *acc = NULL;

		for (size_t j = 0; j < n; j++) {
			tg_lazy *c = tg_lazy_copy(parts[j], parts[i]->dev);
			tg_lazy *s = acc && c ? tg_lazy_alu(op, acc, c, NULL)
			                      : tg_lazy_ref(c);

			tg_lazy_unref(acc);
			tg_lazy_unref(c);
			if (!(acc = s))
				break;
		}
		if (!(m->lbs[i] = acc)) {
			tg_multi_free(m);
			return NULL;
		}
	}
	return m;
}

/* The ring (tinygrad's RING): the parts flattened and cut into n
 * chunks, k of them [b[k], b[k+1]).  n-1 steps of reduce-scatter: in
 * step s member i passes its running chunk (i - s) mod n to member
 * i + 1, which combines it with its own; then member i holds chunk
 * (i + 1) mod n whole.  n-1 steps of all-gather pass the whole chunks
 * on.  Each chunk is combined once and copied, so the replicas agree
 * bit for bit.  acc[i * n + k]: member i's chunk k. */
static int ring_steps(unsigned op, tg_lazy **acc, size_t n)
{
	for (int gather = 0; gather < 2; gather++)
		for (size_t s = 0; s + 1 < n; s++)
			for (size_t i = 0; i < n; i++) {
				size_t k = (i + n - s + (size_t)gather) % n;
				size_t d = (i + 1) % n;
				tg_lazy **dst = &acc[d * n + k];
				tg_lazy *c = tg_lazy_copy(acc[i * n + k],
				                          (*dst)->dev);
				tg_lazy *r = gather || !c ? tg_lazy_ref(c) :
				             tg_lazy_alu(op, *dst, c, NULL);

				tg_lazy_unref(c);
				if (!r)
					return tg_last_status();
				tg_lazy_unref(*dst);
				*dst = r;
			}
	return 0;
}

static tg_multi *ring_reduce(unsigned op, tg_lazy *const *parts, size_t n,
                             int64_t total)
{
	int64_t shape[TG_MAX_DIMS], b[TG_GROUP_MAX + 1], pairs[2];
	size_t nd = tg_lazy_ndim(parts[0]), i, k;
	tg_lazy **acc = calloc(n * n, sizeof *acc);
	tg_multi *m = acc ? tg_multi_alloc_(n, -1) : NULL;
	int rc = m ? 0 : TG_ENOMEM;

	tg_lazy_dims(parts[0], shape);
	for (k = 0; k <= n; k++)
		b[k] = total * (int64_t)k / (int64_t)n;
	for (i = 0; i < n && !rc; i++) {
		tg_lazy *flat = tg_lazy_reshape(parts[i], 1, &total);

		for (k = 0; k < n; k++) {
			pairs[0] = b[k], pairs[1] = b[k + 1];
			acc[i * n + k] = flat ? tg_lazy_shrink(flat, 1, pairs)
			                      : NULL;
			if (!acc[i * n + k])
				rc = tg_last_status();
		}
		tg_lazy_unref(flat);
	}
	rc = rc ? rc : ring_steps(op, acc, n);
	/* member i: its chunks put back together */
	for (i = 0; i < n && !rc; i++) {
		tg_lazy *whole = NULL, *s;

		for (k = 0; k < n && !rc; k++) {
			pairs[0] = b[k], pairs[1] = total - b[k + 1];
			s = tg_lazy_pad(acc[i * n + k], 1, pairs);
			tg_lazy *t = whole && s ? tg_lazy_alu(parts[0]->dtype ==
			             TG_BOOL ? TG_MAX : TG_ADD, whole, s, NULL)
			             : tg_lazy_ref(s);

			tg_lazy_unref(whole);
			tg_lazy_unref(s);
			if (!(whole = t))
				rc = tg_last_status();
		}
		if (!rc && !(m->lbs[i] = tg_lazy_reshape(whole, nd, shape)))
			rc = tg_last_status();
		tg_lazy_unref(whole);
	}
	for (i = 0; acc && i < n * n; i++)
		tg_lazy_unref(acc[i]);
	free(acc);
	if (rc == TG_ENOMEM && !m)
		tg_error_oom("all-reduce");
	if (rc)
		tg_multi_free(m);
	return rc ? NULL : m;
}

/* The ring where it pays (RING: 1 for more than 2 members and big
 * parts, 2 always, 0 never), else the direct all-reduce. */
static tg_multi *all_reduce_any(unsigned op, tg_lazy *const *parts,
                                size_t n, int ring)
{
	int64_t d[TG_MAX_DIMS];
	int64_t total = 1;

	tg_lazy_dims(parts[0], d);
	for (size_t k = 0; k < tg_lazy_ndim(parts[0]); k++)
		total *= d[k];
	if (total >= (int64_t)n &&
	    (ring >= 2 || (ring == 1 && n > 2 && total >= 256000)))
		return ring_reduce(op, parts, n, total);
	return all_reduce(op, parts, n);
}

tg_lazy *tg_multi_reduce(unsigned op, tg_lazy *a, uint32_t axes,
                         int64_t threshold, int ring)
{
	const tg_multi *src = a->multi;
	tg_lazy *parts[TG_GROUP_MAX] = { 0 };
	int across = src->axis >= 0 && (axes >> src->axis & 1);
	int all_real = !memchr(src->real, 0, src->n);
	tg_multi *m;
	size_t i;

	if (!across) {
		if (!(m = tg_multi_alloc_(src->n, src->axis)))
			return NULL;
		memcpy(m->real, src->real, src->n);
		for (i = 0; i < src->n; i++)
			m->lbs[i] = tg_lazy_reduce_split(op, src->lbs[i], axes,
			                                 threshold, ring);
		return tg_multi_wrap_(a->dev, m);
	}
	for (i = 0; i < src->n; i++)
		parts[i] = tg_lazy_reduce_split(op, src->lbs[i], axes,
		                                threshold, ring);
	if (all_real) {
		m = all_reduce_any(op, parts, src->n, ring);
	} else if ((m = tg_multi_alloc_(src->n, -1))) {
		/* one real shard: its result stands; the others stay zeros */
		memcpy(m->real, src->real, src->n);
		for (i = 0; i < src->n; i++)
			m->lbs[i] = tg_lazy_ref(parts[i]);
	}
	for (i = 0; i < src->n; i++)
		tg_lazy_unref(parts[i]);
	return m ? tg_multi_wrap_(a->dev, m) : NULL;
}

/* ------------------------------------------------------------ movement */

static int64_t prod(const int64_t *v, size_t from, size_t to)
{
	int64_t p = 1;

	for (size_t i = from; i < to; i++)
		p *= v[i];
	return p;
}

static tg_lazy *refuse(const tg_lazy *a, const char *op, const char *why)
{
	char sh[96];

	tg_sints_format(tg_lazy_shape(a), tg_lazy_ndim(a), sh, sizeof sh);
	return tg_error(TG_EUNSUPPORTED, "%s: a tensor %s split along axis "
	                "%d over %s: %s", op, sh, a->multi->axis,
	                tg_dev_name(a->dev), why), NULL;
}

/* Where the sharded axis goes in a reshape to shape: the last axis
 * whose leading product is the old one's; every shard must fill whole
 * rows of it.  Shard i's new shape in shapes[i]. */
static int reshape_axis(const tg_lazy *a, size_t nd, const int64_t *shape,
                        int64_t (*shapes)[TG_MAX_DIMS])
{
	const tg_multi *m = a->multi;
	int64_t old[TG_MAX_DIMS], d[TG_MAX_DIMS], pre, tail;
	int k, at = -1;

	tg_lazy_dims(a, old);
	pre = prod(old, 0, (size_t)m->axis);
	for (k = 0; k < (int)nd; k++)
		if (prod(shape, 0, (size_t)k) == pre)
			at = k;
	tail = at >= 0 ? prod(shape, (size_t)at + 1, nd) : 0;
	for (size_t i = 0; at >= 0 && i < m->n; i++) {
		tg_lazy_dims(m->lbs[i], d);
		int64_t rowsz = prod(d, (size_t)m->axis, tg_lazy_ndim(a));

		if (!tail || rowsz % tail)
			return -1;
		memcpy(shapes[i], shape, nd * sizeof *shape);
		shapes[i][at] = rowsz / tail;
	}
	return at;
}

static tg_lazy *move_reshape(tg_lazy *a, size_t nd, const int64_t *shape)
{
	const tg_multi *src = a->multi;
	int64_t shapes[TG_GROUP_MAX][TG_MAX_DIMS];
	int at = src->axis;
	tg_multi *m;

	if (src->axis >= 0 &&
	    (at = reshape_axis(a, nd, shape, shapes)) < 0)
		return refuse(a, "reshape", "the new shape would move elements "
		              "between devices");
	if (!(m = tg_multi_alloc_(src->n, at)))
		return NULL;
	memcpy(m->real, src->real, src->n);
	for (size_t i = 0; i < src->n; i++)
		m->lbs[i] = tg_lazy_reshape(src->lbs[i], nd, at >= 0 ?
		                            shapes[i] : shape);
	return tg_multi_wrap_(a->dev, m);
}

/* A pad of the sharded axis is allowed where it undoes a shrink to one
 * shard (tinygrad's rule): the shards that were not real become zeros
 * that are. */
static tg_lazy *pad_back(tg_lazy *a, size_t n, const int64_t *pairs)
{
	const tg_multi *src = a->multi;
	int64_t b[2 * TG_GROUP_MAX];
	size_t r = tg_multi_first_real_(src);
	tg_multi *m;

	tg_multi_bounds_(src, b);
	for (size_t k = 0; k < n; k++)
		if ((int)k != src->axis && (pairs[2 * k] || pairs[2 * k + 1]))
			return refuse(a, "pad", "the sharded axis and another "
			              "cannot be padded at once");
	if (!memchr(src->real, 0, src->n) ||
	    pairs[2 * src->axis] != b[2 * r] ||
	    pairs[2 * src->axis + 1] != b[2 * src->n - 1] - b[2 * r + 1])
		return refuse(a, "pad", "the sharded axis can only be padded "
		              "back to the whole of a shrink to one shard");
	if (!(m = tg_multi_alloc_(src->n, src->axis)))
		return NULL;
	for (size_t i = 0; i < src->n; i++)
		m->lbs[i] = src->real[i] ? tg_lazy_ref(src->lbs[i]) :
		            tg_multi_zeros_like_(src->lbs[i], a->dtype);
	return tg_multi_wrap_(a->dev, m);
}

/* A shrink of the sharded axis to exactly one shard's rows keeps that
 * shard (the others become zeros that are not real). */
static tg_lazy *shrink_to_shard(tg_lazy *a, size_t n, const int64_t *pairs)
{
	const tg_multi *src = a->multi;
	int64_t b[2 * TG_GROUP_MAX], d[TG_MAX_DIMS];
	size_t idx = src->n;
	tg_multi *m;

	tg_multi_bounds_(src, b);
	tg_lazy_dims(a, d);
	for (size_t i = 0; i < src->n; i++)
		if (pairs[2 * src->axis] == b[2 * i] &&
		    pairs[2 * src->axis + 1] == b[2 * i + 1])
			idx = i;
	if (idx == src->n)
		return refuse(a, "shrink", "the sharded axis can only be "
		              "shrunk to exactly one device's rows");
	for (size_t k = 0; k < n; k++)
		if ((int)k != src->axis &&
		    (pairs[2 * k] || pairs[2 * k + 1] != d[k]))
			return refuse(a, "shrink", "the sharded axis and another "
			              "cannot be shrunk at once");
	if (!(m = tg_multi_alloc_(src->n, src->axis)))
		return NULL;
	for (size_t i = 0; i < src->n; i++) {
		m->real[i] = i == idx;
		m->lbs[i] = i == idx ? tg_lazy_ref(src->lbs[i]) :
		            tg_multi_zeros_like_(src->lbs[i], a->dtype);
	}
	return tg_multi_wrap_(a->dev, m);
}

/* Expand, pad, shrink, stride, permute: the same op on every shard,
 * with the sharded axis's entry made the shard's own. */
static tg_lazy *move_each(int kind, tg_lazy *a, size_t n, const void *arg)
{
	const tg_multi *src = a->multi;
	int64_t v[2 * TG_MAX_DIMS], d[TG_MAX_DIMS];
	const uint32_t *perm = arg;
	int ax = src->axis;
	tg_multi *m;

	if (kind != TG_MM_PERMUTE)
		memcpy(v, arg, (kind == TG_MM_PAD || kind == TG_MM_SHRINK ?
		                2 * n : n) * sizeof *v);
	if (kind == TG_MM_PERMUTE && ax >= 0)
		for (size_t k = 0; k < n; k++)
			if (perm[k] == (uint32_t)src->axis)
				ax = (int)k;
	if (!(m = tg_multi_alloc_(src->n, ax)))
		return NULL;
	memcpy(m->real, src->real, src->n);
	for (size_t i = 0; i < src->n; i++) {
		tg_lazy *lb = src->lbs[i];

		tg_lazy_dims(lb, d);
		if (kind == TG_MM_EXPAND && src->axis >= 0)
			v[src->axis] = d[src->axis];
		if (kind == TG_MM_SHRINK && src->axis >= 0)
			v[2 * src->axis] = 0, v[2 * src->axis + 1] = d[src->axis];
		m->lbs[i] = kind == TG_MM_EXPAND ? tg_lazy_expand(lb, n, v) :
		            kind == TG_MM_PAD ? tg_lazy_pad(lb, n, v) :
		            kind == TG_MM_SHRINK ? tg_lazy_shrink(lb, n, v) :
		            kind == TG_MM_STRIDE ? tg_lazy_stride(lb, n, v) :
		            tg_lazy_permute(lb, n, perm);
	}
	return tg_multi_wrap_(a->dev, m);
}

tg_lazy *tg_multi_move(int kind, tg_lazy *a, size_t n, const void *arg)
{
	const tg_multi *src = a->multi;
	const int64_t *v = arg;
	int64_t d[TG_MAX_DIMS];
	int ax = src->axis;

	if (n != tg_lazy_ndim(a) && kind != TG_MM_RESHAPE &&
	    kind != TG_MM_EXPAND)
		return tg_error(TG_EINVAL, "movement op: %zu axes for a "
		                "%zu-dim tensor", n, tg_lazy_ndim(a)), NULL;
	tg_lazy_dims(a, d);
	if (kind == TG_MM_RESHAPE)
		return move_reshape(a, n, v);
	if (ax < 0 || kind == TG_MM_PERMUTE)
		return move_each(kind, a, n, arg);
	if (kind == TG_MM_EXPAND && (n != tg_lazy_ndim(a) || v[ax] != d[ax]))
		return refuse(a, "expand", "the sharded axis cannot be "
		              "expanded");
	if (kind == TG_MM_STRIDE && v[ax] != 1)
		return refuse(a, "stride", "the sharded axis cannot be "
		              "flipped or strided");
	if (kind == TG_MM_PAD && (v[2 * ax] || v[2 * ax + 1]))
		return pad_back(a, n, v);
	if (kind == TG_MM_SHRINK && (v[2 * ax] || v[2 * ax + 1] != d[ax]))
		return shrink_to_shard(a, n, v);
	return move_each(kind, a, n, arg);
}

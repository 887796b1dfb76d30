/*
 * multi.c - tensors over a device group (tinygrad's MultiLazyBuffer).
 *
 * A MULTI lazy holds one ordinary lazy per member of its group: the
 * shards of an axis (`axis`), or whole copies (axis -1, replicated).
 * Every op runs shard by shard on the shards' own devices:
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
 *    makes every shard real again (tinygrad's `real`);
 *  - a copy to one device gathers: each real shard is copied there,
 *    padded to the whole axis and the pieces are added.
 * Sizes must be integers: symbolic shapes are refused.  This file
 * makes MULTI lazies (and copies and flattens them); the ops are in
 * multi_ops.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lazy/lazy.h"
#include "device/device.h"
#include "ir/ir.h"

void tg_multi_free(tg_multi *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		tg_lazy_unref(m->lbs[i]);
	free(m->lbs);
	free(m->real);
	free(m);
}

tg_multi *tg_multi_alloc_(size_t n, int axis)
{
	tg_multi *m = calloc(1, sizeof *m);

	if (!m || !(m->lbs = calloc(n, sizeof *m->lbs)) ||
	    !(m->real = malloc(n))) {
		if (m)
			free(m->lbs);
		free(m);
		return tg_error_oom("multi-device tensor"), NULL;
	}
	m->n = n;
	m->axis = axis;
	memset(m->real, 1, n);
	return m;
}

size_t tg_multi_first_real_(const tg_multi *m)
{
	size_t i = 0;

	while (i + 1 < m->n && !m->real[i])
		i++;
	return i;
}

/* The MULTI lazy over m (taken; its lbs all set) on group: its shape is
 * the first real shard's, the sharded axis summed over the real ones. */
tg_lazy *tg_multi_wrap_(tg_dev *group, tg_multi *m)
{
	int64_t shape[TG_MAX_DIMS], d[TG_MAX_DIMS];
	size_t r, nd;

	for (size_t i = 0; i < m->n; i++)
		if (!m->lbs[i])
			return tg_multi_free(m), (tg_lazy *)NULL;
	r = tg_multi_first_real_(m);
	nd = tg_lazy_ndim(m->lbs[r]);
	for (size_t i = 0; i < m->n; i++)
		if (tg_lazy_is_sym(m->lbs[i])) {
			tg_multi_free(m);
			return tg_error(TG_EUNSUPPORTED, "multi-device tensor on "
			                "%s: symbolic sizes are not supported",
			                tg_dev_name(group)), NULL;
		}
	tg_lazy_dims(m->lbs[r], shape);
	if (m->axis >= 0) {
		shape[m->axis] = 0;
		for (size_t i = 0; i < m->n; i++)
			if (m->real[i]) {
				tg_lazy_dims(m->lbs[i], d);
				shape[m->axis] += d[m->axis];
			}
	}
	return tg_lazy_new_multi_(group, m->lbs[r]->dtype, nd, shape, m);
}

/* Rows [bounds[2i], bounds[2i+1]) of the sharded axis live on shard i. */
void tg_multi_bounds_(const tg_multi *m, int64_t *b)
{
	int64_t d[TG_MAX_DIMS], at = 0;

	for (size_t i = 0; i < m->n; i++) {
		tg_lazy_dims(m->lbs[i], d);
		b[2 * i] = at;
		at += d[m->axis];
		b[2 * i + 1] = at;
	}
}

/* lb shrunk to rows [lo, hi) of axis. */
tg_lazy *tg_multi_rows_(tg_lazy *lb, int axis, int64_t lo, int64_t hi)
{
	int64_t d[TG_MAX_DIMS], pairs[2 * TG_MAX_DIMS];
	size_t nd = tg_lazy_ndim(lb);

	tg_lazy_dims(lb, d);
	for (size_t k = 0; k < nd; k++) {
		pairs[2 * k] = (int)k == axis ? lo : 0;
		pairs[2 * k + 1] = (int)k == axis ? hi : d[k];
	}
	return tg_lazy_shrink(lb, nd, pairs);
}

/* A zero of lb's shape and dtype on its device (a shard that is not
 * real). */
tg_lazy *tg_multi_zeros_like_(const tg_lazy *lb, tg_dtype dt)
{
	int64_t d[TG_MAX_DIMS];
	tg_scalar z = { 0 };

	tg_lazy_dims(lb, d);
	return tg_lazy_const(lb->dev, dt, z, tg_lazy_ndim(lb), d);
}

/* ------------------------------------------------------------ creation */

/* Even bounds: the first members get ceil(rows / n) each. */
static int even_bounds(const tg_lazy *a, int axis, size_t n, int64_t *b)
{
	int64_t d[TG_MAX_DIMS], sz;
	char sh[96];

	tg_lazy_dims(a, d);
	sz = (d[axis] + (int64_t)n - 1) / (int64_t)n;
	for (size_t i = 0; i < n; i++) {
		b[2 * i] = sz * (int64_t)i < d[axis] ? sz * (int64_t)i : d[axis];
		b[2 * i + 1] = sz * (int64_t)(i + 1) < d[axis] ?
		               sz * (int64_t)(i + 1) : d[axis];
		if (b[2 * i] == b[2 * i + 1]) {
			tg_sints_format(tg_lazy_shape(a), tg_lazy_ndim(a), sh,
			                sizeof sh);
			return tg_error(TG_EINVAL, "shard: axis %d of %s has "
			                "%lld rows, too few for %zu devices (%lld "
			                "each leaves device %zu none)", axis, sh,
			                (long long)d[axis], n, (long long)sz, i);
		}
	}
	return 0;
}

tg_lazy *tg_multi_shard(tg_lazy *a, tg_dev *group, int axis)
{
	int64_t b[2 * TG_GROUP_MAX];
	tg_multi *m;

	if (!a || !group)
		return NULL;
	if (tg_lazy_is_multi(a))
		return tg_error(TG_EINVAL, "shard: the tensor is already on "
		                "the device group %s", tg_dev_name(a->dev)), NULL;
	if (tg_lazy_is_sym(a))
		return tg_error(TG_EUNSUPPORTED, "shard: symbolic sizes are "
		                "not supported"), NULL;
	if (axis >= (int)tg_lazy_ndim(a))
		return tg_error(TG_EINVAL, "shard: axis %d of a %zu-dim tensor",
		                axis, tg_lazy_ndim(a)), NULL;
	if (axis >= 0 && even_bounds(a, axis, group->ngroup, b))
		return NULL;
	if (!(m = tg_multi_alloc_(group->ngroup, axis)))
		return NULL;
	for (size_t i = 0; i < m->n; i++) {
		tg_lazy *s = axis >= 0
		             ? tg_multi_rows_(a, axis, b[2 * i], b[2 * i + 1])
		             : tg_lazy_ref(a);
		tg_lazy *c = s ? tg_lazy_copy(s, group->group[i]) : NULL;
		tg_scalar v;

		/* each shard its own buffer, unless it is a constant */
		m->lbs[i] = !c || tg_lazy_is_unmasked_const(c, &v) ?
		            tg_lazy_ref(c) : tg_lazy_contiguous(c);
		tg_lazy_unref(s);
		tg_lazy_unref(c);
	}
	return tg_multi_wrap_(group, m);
}

tg_lazy *tg_multi_of(tg_dev *group, tg_lazy *const *lbs, int axis,
                     const uint8_t *real)
{
	tg_multi *m;

	if (TG_NEVER(!group->ngroup))
		return tg_error(TG_EINTERNAL, "multi-device tensor: %s is not "
		                "a device group", tg_dev_name(group)), NULL;
	if (!(m = tg_multi_alloc_(group->ngroup, axis)))
		return NULL;
	memcpy(m->real, real, m->n);
	for (size_t i = 0; i < m->n; i++)
		m->lbs[i] = tg_lazy_ref(lbs[i]);
	return tg_multi_wrap_(group, m);
}

tg_lazy *tg_multi_const(tg_dev *group, tg_dtype dt, tg_scalar v,
                        size_t ndim, const int64_t *shape)
{
	tg_multi *m = tg_multi_alloc_(group->ngroup, -1);

	for (size_t i = 0; m && i < m->n; i++)
		m->lbs[i] = tg_lazy_const(group->group[i], dt, v, ndim, shape);
	return m ? tg_multi_wrap_(group, m) : NULL;
}

tg_lazy *tg_multi_empty(tg_dev *group, tg_dtype dt, size_t ndim,
                        const int64_t *shape)
{
	tg_multi *m = tg_multi_alloc_(group->ngroup, -1);

	for (size_t i = 0; m && i < m->n; i++)
		m->lbs[i] = tg_lazy_empty(group->group[i], dt, ndim, shape);
	return m ? tg_multi_wrap_(group, m) : NULL;
}

/* ------------------------------------------------------------- copies */

tg_lazy *tg_multi_copy(tg_lazy *a, tg_dev *dev)
{
	const tg_multi *m = a->multi;
	int64_t pairs[2 * TG_MAX_DIMS], d[TG_MAX_DIMS], sd[TG_MAX_DIMS], at = 0;
	size_t nd = tg_lazy_ndim(a);
	tg_lazy *acc = NULL;
	unsigned op = a->dtype == TG_BOOL ? TG_MAX : TG_ADD;

	if (dev->ngroup)
		return tg_error(TG_EUNSUPPORTED, "to: from the device group "
		                "%s to another, %s (tg_to one device first)",
		                tg_dev_name(a->dev), tg_dev_name(dev)), NULL;
	if (m->axis < 0) {
		for (size_t i = 0; i < m->n; i++)
			if (m->real[i] && m->lbs[i]->dev == dev)
				return tg_lazy_ref(m->lbs[i]);
		return tg_lazy_copy(m->lbs[tg_multi_first_real_(m)], dev);
	}
	/* the real shards, in order, make up the whole axis */
	tg_lazy_dims(a, d);
	memset(pairs, 0, sizeof pairs);
	for (size_t i = 0; i < m->n; i++) {
		tg_lazy *c, *p, *s;

		if (!m->real[i])
			continue;
		tg_lazy_dims(m->lbs[i], sd);
		pairs[2 * m->axis] = at;
		at += sd[m->axis];
		pairs[2 * m->axis + 1] = d[m->axis] - at;
		c = tg_lazy_copy(m->lbs[i], dev);
		p = c ? tg_lazy_pad(c, nd, pairs) : NULL;
		tg_lazy_unref(c);
		s = acc && p ? tg_lazy_alu(op, acc, p, NULL) : tg_lazy_ref(p);
		tg_lazy_unref(acc);
		tg_lazy_unref(p);
		if (!(acc = s))
			return NULL;
	}
	return acc;
}

/* ------------------------------------------------------------ realize */

int tg_multi_flatten(tg_lazy *const *lbs, size_t n, tg_lazy ***out,
                     size_t *nout)
{
	size_t k = 0, i, j;
	tg_lazy **v;

	for (i = 0; i < n; i++)
		k += tg_lazy_is_multi(lbs[i]) ? lbs[i]->multi->n : 1;
	if (!(v = malloc((k ? k : 1) * sizeof *v)))
		return tg_error_oom("realize");
	k = 0;
	for (i = 0; i < n; i++) {
		if (!tg_lazy_is_multi(lbs[i])) {
			v[k++] = lbs[i];
			continue;
		}
		for (j = 0; j < lbs[i]->multi->n; j++)
			v[k++] = lbs[i]->multi->lbs[j];
	}
	*out = v;
	*nout = k;
	return 0;
}

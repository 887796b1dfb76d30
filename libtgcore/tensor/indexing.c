/*
 * tensor/indexing.c - arange and eye, and the ops that index by
 * comparing with an arange: triu, tril, one_hot, gather and indexing by
 * tensors (tinygrad's tensor.py and its __getitem__; the comparisons
 * fuse into the consumer's kernel).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"

/* tinygrad's arange: a cumsum of `step`s plus start - step, so that it
 * is one kernel (and collapses to an index expression in consumers). */
tg_tensor *tg_arange(tg_dev *dev, tg_dtype dt, double start, double stop,
                     double step)
{
	double cnt;
	int64_t n;
	tg_tensor *r;

	if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step))
		return tg_t_fail(TG_EINVAL, "arange", "start %g, stop %g, step %g "
		                 "(step must be nonzero, all finite)", start, stop,
		                 step);
	cnt = ceil((stop - start) / step);
	if (cnt > (double)INT32_MAX)
		return tg_t_fail(TG_EINVAL, "arange", "%g elements", cnt);
	n = cnt > 0 ? (int64_t)cnt : 0;
	tg_scope_begin();
	r = tg_cumsum(tg_full(dev, dt, 1, &n, step), 0);
	r = tg_add_s(r, start - step);
	if (r && tg_tensor_dtype(r) != dt)
		r = tg_cast(r, dt);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* A column of ones padded by n zeros, flattened: every n+1-th element
 * is one, which reshaped to (n, n) is the diagonal; no kernel. */
tg_tensor *tg_eye(tg_dev *dev, tg_dtype dt, int64_t n, int64_t m)
{
	int64_t col[2] = { n, 1 }, sq[2] = { n, n };
	int64_t pad[4] = { 0, 0, 0, n }, cut[2] = { 0, n * n };
	int64_t fix[4] = { 0, 0, 0, m - n };
	tg_tensor *r;

	if (n < 0 || m < 0)
		return tg_t_fail(TG_EINVAL, "eye", "negative size %lld x %lld",
		                 (long long)n, (long long)m);
	tg_scope_begin();
	r = tg_pad(tg_ones(dev, dt, 2, col), 2, pad, 0);
	r = tg_reshape(tg_shrink(tg_flatten(r, 0, 1), 1, cut), 2, sq);
	r = tg_keep(tg_pad(r, 2, fix, 0));
	tg_scope_end();
	return r;
}

/* (r, c) bool: true where column - row >= k, as views of one constant
 * (no kernel of its own, as tinygrad's mid-2024 _tri).  A pattern V of
 * length L = c + r, repeated on every row, flattened and read from
 * offset r with rows of L - 1, shifts by one per row: (i, j) reads
 * V[j - i + r], which lies in [1, L) for every i < r, j < c.  So V is
 * zeros, then ones from k + r on. */
static tg_tensor *tri(const tg_tensor *like, int64_t r, int64_t c, int64_t k)
{
	int64_t L = c + r, s0, n, ones, pad[2], cut[2], rs[2], sh[4];
	int64_t row[2] = { 1, L }, full[2] = { r, L };
	tg_dev *dev = tg_tensor_dev(like);
	tg_tensor *v;

	if (!r || !c)
		return tg_zeros(dev, TG_BOOL, 2, (int64_t[]){ r, c });
	s0 = k + r < 0 ? 0 : k + r > L ? L : k + r;
	ones = L - s0;
	pad[0] = s0;
	pad[1] = 0;
	v = tg_pad(tg_ones(dev, TG_BOOL, 1, &ones), 1, pad, 0);
	n = r * L;
	v = tg_reshape(tg_expand(tg_reshape(v, 2, row), 2, full), 1, &n);
	cut[0] = r;
	cut[1] = r * L;
	rs[0] = r;
	rs[1] = L - 1;
	v = tg_reshape(tg_shrink(v, 1, cut), 2, rs);
	sh[0] = 0, sh[1] = r, sh[2] = 0, sh[3] = c;
	return tg_shrink(v, 2, sh);
}

static tg_tensor *triangle(const char *op, const tg_tensor *t, int64_t k,
                           int upper)
{
	tg_tensor *m, *z, *res;
	char b[160];

	if (!t)
		return NULL;
	if (t->ndim < 2)
		return tg_t_fail(TG_EINVAL, op, "input %s needs at least 2 dims",
		                 TG_T_SHAPE(t, b));
	tg_scope_begin();
	m = tri(t, t->shape[t->ndim - 2], t->shape[t->ndim - 1],
	        upper ? k : k + 1);
	z = tg_zeros_like(t);
	res = tg_keep(upper ? tg_where(m, t, z) : tg_where(m, z, t));
	tg_scope_end();
	return res;
}

tg_tensor *tg_triu(const tg_tensor *t, int64_t k)
{
	return triangle("triu", t, k, 1);
}

tg_tensor *tg_tril(const tg_tensor *t, int64_t k)
{
	return triangle("tril", t, k, 0);
}

tg_tensor *tg_one_hot(const tg_tensor *t, int64_t num_classes)
{
	tg_tensor *r;
	char b[160];

	if (!t)
		return NULL;
	if (!tg_dtype_is_int(tg_tensor_dtype(t)))
		return tg_t_fail(TG_EINVAL, "one_hot", "class indices %s must be "
		                 "an int dtype, not %s", TG_T_SHAPE(t, b),
		                 tg_dtype_name(tg_tensor_dtype(t)));
	if (num_classes < 0 || num_classes > INT32_MAX)
		return tg_t_fail(TG_EINVAL, "one_hot", "%lld classes",
		                 (long long)num_classes);
	tg_scope_begin();
	r = tg_eq(tg_unsqueeze(t, -1),
	          tg_arange(tg_tensor_dev(t), TG_INT32, 0,
	                    (double)num_classes, 1));
	r = tg_keep(tg_cast(r, TG_INT32));
	tg_scope_end();
	return r;
}

static int check_gather(const tg_tensor *t, int a, const tg_tensor *index)
{
	char b1[160], b2[160];
	size_t d;

	if (!tg_dtype_is_int(tg_tensor_dtype(index))) {
		tg_t_fail(TG_EINVAL, "gather", "index %s must be an int dtype, "
		          "not %s", TG_T_SHAPE(index, b1),
		          tg_dtype_name(tg_tensor_dtype(index)));
		return -1;
	}
	if (index->ndim != t->ndim || !t->ndim) {
		tg_t_fail(TG_EINVAL, "gather", "index %s and input %s need the "
		          "same number of dims (at least 1)",
		          TG_T_SHAPE(index, b1), TG_T_SHAPE(t, b2));
		return -1;
	}
	for (d = 0; d < t->ndim; d++)
		if ((int)d != a && index->shape[d] > t->shape[d]) {
			tg_t_fail(TG_EINVAL, "gather", "index %s is larger than "
			          "input %s on axis %zu", TG_T_SHAPE(index, b1),
			          TG_T_SHAPE(t, b2), d);
			return -1;
		}
	return 0;
}

/* tinygrad's gather: the index compared with an arange over the axis
 * picks, by a multiply and a sum, the element of each row.  An index
 * out of range matches nothing and gives 0. */
tg_tensor *tg_gather(const tg_tensor *t, int axis, const tg_tensor *index)
{
	int64_t pairs[2 * TG_MAX_DIMS];
	tg_tensor *x, *hot, *r;
	size_t d;
	int a;

	if (!t || !index)
		return NULL;
	if ((a = tg_t_axis("gather", axis, t->ndim)) < 0 ||
	    check_gather(t, a, index))
		return NULL;
	for (d = 0; d < t->ndim; d++) {
		pairs[2 * d] = 0;
		pairs[2 * d + 1] = (int)d == a ? t->shape[d] : index->shape[d];
	}
	tg_scope_begin();
	x = tg_transpose(tg_unsqueeze(tg_shrink(t, t->ndim, pairs), -1), -1, a);
	if (tg_tensor_dev(index) != tg_tensor_dev(t))
		index = tg_to(index, tg_tensor_dev(t));
	hot = tg_eq(tg_unsqueeze(index, -1),
	            tg_arange(tg_tensor_dev(t), TG_INT32, 0,
	                      (double)t->shape[a], 1));
	r = tg_mul(hot, x);
	r = tg_t_reduce(TG_ADD, r, 1u << (r ? r->ndim - 1 : 0));
	r = tg_keep(tg_squeeze(r, -1));
	tg_scope_end();
	return r;
}

/* ------------------------------------------------------------ getitem */

/* The items with the ellipsis (or the missing tail) replaced by ':'s:
 * one item per axis of t, plus the new axes.  0, or -1 with the
 * message. */
static int expand_items(const tg_tensor *t, size_t n, const tg_index_spec *ix,
                        tg_index_spec *out, size_t *nout)
{
	size_t used = 0, ell = SIZE_MAX, i, k = 0, j;
	char b[160];

	for (i = 0; i < n; i++) {
		if ((unsigned)ix[i].kind > TG_INDEX_TENSOR)
			return tg_t_fail(TG_EINVAL, "index", "item %zu has kind %d",
			                 i, (int)ix[i].kind), -1;
		if (ix[i].kind == TG_INDEX_ELLIPSIS && ell != SIZE_MAX)
			return tg_t_fail(TG_EINVAL, "index", "items %zu and %zu "
			                 "are both an ellipsis", ell, i), -1;
		if (ix[i].kind == TG_INDEX_ELLIPSIS)
			ell = i;
		used += ix[i].kind != TG_INDEX_NEWAXIS &&
		        ix[i].kind != TG_INDEX_ELLIPSIS;
	}
	if (used > t->ndim)
		return tg_t_fail(TG_EINVAL, "index", "%zu indices for %s",
		                 used, TG_T_SHAPE(t, b)), -1;
	if (n + t->ndim - used > TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "index", "more than %d items",
		                 TG_MAX_DIMS), -1;
	for (i = 0; i <= n; i++) {
		if (i == n ? ell == SIZE_MAX : i == ell)
			for (j = 0; j < t->ndim - used; j++)
				out[k++] = TG_IX_ALL;
		if (i < n && i != ell)
			out[k++] = ix[i];
	}
	*nout = k;
	return 0;
}

/* The broadcast (numpy's, right-aligned) of the index tensors' shapes;
 * 0, or -1 with the message. */
static int index_shape(tg_tensor *const *idx, size_t n, int64_t *big,
                       size_t *nbig)
{
	size_t i, j, nd = 0;
	char b1[160], b2[160];

	for (i = 0; i < n; i++)
		nd = idx[i]->ndim > nd ? idx[i]->ndim : nd;
	for (j = 0; j < nd; j++)
		big[j] = 1;
	for (i = 0; i < n; i++)
		for (j = 0; j < idx[i]->ndim; j++) {
			int64_t *d = &big[nd - idx[i]->ndim + j];
			int64_t s = idx[i]->shape[j];

			if (*d != 1 && s != 1 && s != *d)
				return tg_t_fail(TG_EINVAL, "index", "index tensors "
				                 "%s and %s don't broadcast",
				                 TG_T_SHAPE(idx[0], b1),
				                 TG_T_SHAPE(idx[i], b2)), -1;
			*d = s != 1 ? s : *d;
		}
	*nbig = nd;
	return 0;
}

/* Index tensor at axis `dim` of x (size `size`), negatives wrapped once,
 * as a one-hot mask over pre, the shape x[:d0] + big + x[d0:]: true
 * where the axis dim + nbig equals the index. */
static tg_tensor *index_mask(const tg_tensor *x, const tg_tensor *idx,
                             size_t dim, size_t d0, const int64_t *pre,
                             size_t nbig)
{
	int64_t sh[TG_MAX_DIMS], size = x->shape[dim];
	size_t npre = x->ndim + nbig, i, k = 0;
	tg_tensor *w, *ar;

	w = tg_add(idx, tg_where_s(tg_lt_s(idx, 0), (double)size, 0));
	for (i = 0; i < idx->ndim; i++)
		sh[k++] = idx->shape[i];
	for (i = d0; i < x->ndim; i++)
		sh[k++] = 1;
	w = tg_expand(tg_reshape(w, k, sh), npre, pre);
	ar = tg_arange(tg_tensor_dev(x), TG_INT32, 0, (double)size, 1);
	sh[0] = size;
	for (i = 1; i < x->ndim - dim; i++)
		sh[i] = 1;
	return tg_eq(w, tg_cast(tg_reshape(ar, x->ndim - dim, sh),
	                        tg_tensor_dtype(idx)));
}

static int check_index_tensor(const tg_tensor *x, const tg_tensor *idx,
                              size_t item)
{
	char b[160];
	tg_dtype dt;

	if (!idx)
		return -1; /* a failed expression: its error stands */
	dt = tg_tensor_dtype(idx);
	if (!tg_dtype_is_int(dt)) {
		tg_t_fail(TG_EINVAL, "index", "item %zu: index tensor %s is %s, "
		          "not an int dtype%s", item, TG_T_SHAPE(idx, b),
		          tg_dtype_name(dt), dt == TG_BOOL ? " (a bool mask's "
		          "result has a data-dependent shape: use tg_where)" :
		          "");
		return -1;
	}
	return tg_t_same_dev("index", x, idx);
}

/* tinygrad's tensor indexing: every index tensor one-hot against an
 * arange over its axis, the masks multiplied, x kept where the mask
 * holds and summed over the indexed axes (one kernel). */
static tg_tensor *index_by_tensors(const tg_tensor *x, tg_tensor *const *idx,
                                   const size_t *dims, size_t n)
{
	int64_t big[TG_MAX_DIMS], pre[TG_MAX_DIMS], sh[TG_MAX_DIMS];
	int red[TG_MAX_DIMS], perm[TG_MAX_DIMS];
	size_t nbig, d0 = dims[0], i, k = 0;
	tg_tensor *mask = NULL, *r;
	int split = 0;

	if (index_shape(idx, n, big, &nbig))
		return NULL;
	if (x->ndim + nbig > TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "index", "the result needs more than "
		                 "%d dims", TG_MAX_DIMS);
	for (i = 0; i < d0; i++)
		pre[k++] = x->shape[i];
	for (i = 0; i < nbig; i++)
		pre[k++] = big[i];
	for (i = d0; i < x->ndim; i++)
		pre[k++] = x->shape[i];
	for (i = 0; i < n; i++) {
		tg_tensor *m = index_mask(x, idx[i], dims[i], d0, pre, nbig);

		mask = i ? tg_bitwise_and(mask, m) : m;
		red[i] = (int)(dims[i] + nbig);
		split |= i && dims[i] != dims[i - 1] + 1;
	}
	memcpy(sh, pre, k * sizeof *sh);
	for (i = 0; i < nbig; i++)
		sh[d0 + i] = 1;
	r = tg_where(mask, tg_reshape(x, k, sh),
	             tg_tensor_scalar(tg_tensor_dev(x), tg_tensor_dtype(x), 0));
	r = tg_tensor_dtype(x) == TG_BOOL ? tg_max(r, red, n, 0)
	    : tg_sum_acc(r, red, n, 0, tg_tensor_dtype(x));
	/* numpy: indices apart from each other put their axes first */
	if (r && split && d0) {
		k = 0;
		for (i = 0; i < nbig; i++)
			perm[k++] = (int)(d0 + i);
		for (i = 0; i < r->ndim; i++)
			if (i < d0 || i >= d0 + nbig)
				perm[k++] = (int)i;
		r = tg_permute(r, r->ndim, perm);
	}
	return r;
}

tg_tensor *tg_index(const tg_tensor *t, size_t n, const tg_index_spec *ix)
{
	tg_index_spec it[TG_MAX_DIMS];
	tg_slice_spec sl[TG_MAX_DIMS];
	tg_tensor *idx[TG_MAX_DIMS], *x, *r;
	int64_t sh[TG_MAX_DIMS];
	size_t dims[TG_MAX_DIMS], nit, i, ns = 0, k = 0, nt = 0;

	if (!t)
		return NULL;
	if (n && !ix)
		return tg_t_fail(TG_EINVAL, "index", "%zu items, NULL", n);
	if (expand_items(t, n, ix, it, &nit))
		return NULL;
	for (i = 0; i < nit; i++) {
		if (it[i].kind == TG_INDEX_TENSOR &&
		    check_index_tensor(t, it[i].tensor, i))
			return NULL;
		if (it[i].kind == TG_INDEX_NEWAXIS)
			continue;
		sl[ns] = it[i].kind == TG_INDEX_TENSOR ? TG_SLICE_ALL : it[i].s;
		sl[ns].is_index = it[i].kind == TG_INDEX_INT;
		if (sl[ns].is_index)
			sl[ns].has_start = 1;
		ns++;
	}
	tg_scope_begin();
	/* the slices and ints as a view, then the new axes by a reshape */
	x = tg_slice(t, ns, sl);
	for (i = 0, ns = 0; x && i < nit; i++) {
		if (it[i].kind == TG_INDEX_INT)
			continue;
		if (it[i].kind == TG_INDEX_TENSOR) {
			dims[nt] = k;
			idx[nt++] = (tg_tensor *)it[i].tensor;
		}
		sh[k++] = it[i].kind == TG_INDEX_NEWAXIS ? 1 : x->shape[ns++];
	}
	if (x && k != x->ndim)
		x = tg_reshape(x, k, sh);
	if (!x)
		tg_error_prefix("index");
	r = tg_keep(x && nt ? index_by_tensors(x, idx, dims, nt) : x);
	tg_scope_end();
	return r;
}

/* ------------------------------------------------------------ setitem */

/* tinygrad's __setitem__: t realized, the view t[ix] taken, the value
 * (cast, broadcast and made contiguous, so it may read t anywhere)
 * assigned through it and realized at once. */
int tg_setitem(tg_tensor *t, size_t n, const tg_index_spec *ix,
               const tg_tensor *value)
{
	tg_tensor *view, *v;
	char b[160];
	size_t i;
	int rc;

	if (!t || !value)
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	for (i = 0; ix && i < n; i++)
		if (ix[i].kind == TG_INDEX_TENSOR)
			return tg_error(TG_EUNSUPPORTED, "setitem: item %zu is an "
			                "index tensor; setitem takes slices, ints, "
			                "new axes and an ellipsis (as tinygrad's)",
			                i);
	if (t->requires_grad == 1 || value->requires_grad == 1)
		return tg_error(TG_EUNSUPPORTED, "setitem: the target or the "
		                "value requires a gradient (setitem is not "
		                "differentiable, as in tinygrad)");
	if ((rc = tg_realize(t)))
		return tg_error_prefix("setitem");
	if (!tg_lazy_is_plain(t->lazy))
		return tg_error(TG_EINVAL, "setitem: the target %s is a view "
		                "that is not its memory in order (tinygrad needs "
		                "a contiguous target: use tg_contiguous)",
		                TG_T_SHAPE(t, b));
	tg_scope_begin();
	view = tg_index(t, n, ix);
	v = view && tg_tensor_dtype(value) != tg_tensor_dtype(view)
	    ? tg_cast(value, tg_tensor_dtype(view)) : (tg_tensor *)value;
	v = view ? tg_expand(v, view->ndim, view->shape) : NULL;
	if (!view || !v)
		rc = tg_error_prefix("setitem");
	else if (tg_tensor_numel(view) == 0)
		rc = 0;
	else if (!(rc = tg_assign(view, v)))
		rc = tg_realize(view);
	tg_scope_end();
	return rc;
}

int tg_setitem_s(tg_tensor *t, size_t n, const tg_index_spec *ix,
                 double value)
{
	tg_tensor *v;
	int rc;

	if (!t)
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	tg_scope_begin();
	v = tg_tensor_scalar(tg_tensor_dev(t), tg_tensor_dtype(t), value);
	rc = tg_setitem(t, n, ix, v);
	tg_scope_end();
	return rc;
}

/*
 * tensor/movement.c - the movement ops built from reshape, expand,
 * permute, shrink, pad and stride: transpose, flatten, squeeze, slicing,
 * repeat, cat, stack, split and chunk (tinygrad's tensor.py, same
 * rules and the same errors where it raises).
 */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "ir/ir.h"

tg_tensor *tg_transpose(const tg_tensor *t, int d0, int d1)
{
	int order[TG_MAX_DIMS], a, b;
	size_t i;

	if (!t)
		return NULL;
	if ((a = tg_t_axis("transpose", d0, t->ndim)) < 0 ||
	    (b = tg_t_axis("transpose", d1, t->ndim)) < 0)
		return NULL;
	if (!t->ndim)
		return tg_reshape(t, 0, NULL);
	for (i = 0; i < t->ndim; i++)
		order[i] = (int)i;
	order[a] = b;
	order[b] = a;
	return tg_permute(t, t->ndim, order);
}

tg_tensor *tg_flatten(const tg_tensor *t, int start, int end)
{
	int64_t s[TG_MAX_DIMS], m = 1;
	int a, b, i;
	size_t n = 0;

	if (!t)
		return NULL;
	if ((a = tg_t_axis("flatten", start, t->ndim)) < 0 ||
	    (b = tg_t_axis("flatten", end, t->ndim)) < 0)
		return NULL;
	if (!t->ndim)
		return tg_reshape(t, 1, (int64_t[]){ 1 });
	if (a > b)
		return tg_t_fail(TG_EINVAL, "flatten", "start axis %d after end "
		                 "axis %d", start, end);
	for (i = 0; i < (int)t->ndim; i++) {
		if (i < a || i > b)
			s[n++] = t->shape[i];
		else if ((m *= t->shape[i]), i == b)
			s[n++] = m;
	}
	return tg_reshape(t, n, s);
}

tg_tensor *tg_unflatten(const tg_tensor *t, int axis, size_t n,
                        const int64_t *sizes)
{
	tg_tensor *r;
	int64_t s[TG_MAX_DIMS];
	size_t i, k = 0;
	int a;

	if (!t || tg_t_null("unflatten", "sizes", sizes, n))
		return NULL;
	if ((a = tg_t_axis("unflatten", axis, t->ndim)) < 0)
		return NULL;
	if (!t->ndim || t->ndim - 1 + n > TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "unflatten", "%zu sizes for axis %d "
		                 "of %zu dims", n, axis, t->ndim);
	for (i = 0; i < t->ndim; i++) {
		if ((int)i != a) {
			s[k++] = t->shape[i];
			continue;
		}
		memcpy(s + k, sizes, n * sizeof *s);
		k += n;
	}
	if (!(r = tg_reshape(t, k, s)))
		tg_error_prefix("unflatten");
	return r;
}

tg_tensor *tg_squeeze(const tg_tensor *t, int axis)
{
	int64_t s[TG_MAX_DIMS];
	size_t i, n = 0;
	int a;

	if (!t)
		return NULL;
	if (axis == TG_AXIS_NONE) {
		for (i = 0; i < t->ndim; i++)
			if (t->shape[i] != 1)
				s[n++] = t->shape[i];
		return tg_reshape(t, n, s);
	}
	if ((a = tg_t_axis("squeeze", axis, t->ndim)) < 0)
		return NULL;
	for (i = 0; i < t->ndim; i++)
		if ((int)i != a || t->shape[i] != 1)
			s[n++] = t->shape[i];
	return tg_reshape(t, n, s);
}

tg_tensor *tg_unsqueeze(const tg_tensor *t, int axis)
{
	int64_t s[TG_MAX_DIMS];
	size_t i, n = 0;
	int a;

	if (!t)
		return NULL;
	if (t->ndim >= TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "unsqueeze", "%zu dims already (at "
		                 "most %d)", t->ndim, TG_MAX_DIMS);
	if ((a = tg_t_axis("unsqueeze", axis, t->ndim + 1)) < 0)
		return NULL;
	for (i = 0; i <= t->ndim; i++) {
		if ((int)i == a)
			s[n++] = 1;
		if (i < t->ndim)
			s[n++] = t->shape[i];
	}
	return tg_reshape(t, n, s);
}

/* ------------------------------------------------------------ slicing */

/* Python's slice.indices: the first index, the step and the count of
 * s over an axis of size len; -1 (message set) on a bad slice. */
static int slice_range(const tg_slice_spec *s, int64_t len, size_t axis,
                       int64_t *first, int64_t *count)
{
	int64_t step = s->has_step ? s->step : 1, lo, hi, n;

	if (s->is_index) {
		int64_t i = s->start < 0 ? s->start + len : s->start;
		if (i < 0 || i >= len) {
			tg_error(TG_EINVAL, "slice: index %lld out of range for "
			         "axis %zu of size %lld", (long long)s->start, axis,
			         (long long)len);
			return -1;
		}
		*first = i;
		*count = 1;
		return 0;
	}
	if (step == 0) {
		tg_error(TG_EINVAL, "slice: step 0 on axis %zu", axis);
		return -1;
	}
	if (step > 0) {
		lo = !s->has_start ? 0 : s->start < 0 ? s->start + len : s->start;
		hi = !s->has_stop ? len : s->stop < 0 ? s->stop + len : s->stop;
		lo = lo < 0 ? 0 : lo > len ? len : lo;
		hi = hi < 0 ? 0 : hi > len ? len : hi;
		n = hi > lo ? (hi - lo + step - 1) / step : 0;
	} else {
		lo = !s->has_start ? len - 1
		     : s->start < 0 ? s->start + len : s->start;
		hi = !s->has_stop ? -1 : s->stop < 0 ? s->stop + len : s->stop;
		lo = lo < -1 ? -1 : lo > len - 1 ? len - 1 : lo;
		hi = hi < -1 ? -1 : hi > len - 1 ? len - 1 : hi;
		n = lo > hi ? (lo - hi - step - 1) / -step : 0;
	}
	*first = lo;
	*count = n;
	return 0;
}

tg_tensor *tg_slice(const tg_tensor *t, size_t n, const tg_slice_spec *s)
{
	int64_t pairs[2 * TG_MAX_DIMS], mul[TG_MAX_DIMS], out[TG_MAX_DIMS];
	size_t i, nout = 0;
	tg_tensor *r;
	char b[160];

	if (!t || tg_t_null("slice", "specs", s, n))
		return NULL;
	if (n > t->ndim)
		return tg_t_fail(TG_EINVAL, "slice", "%zu indices for %s", n,
		                 TG_T_SHAPE(t, b));
	for (i = 0; i < t->ndim; i++) {
		int64_t first = 0, cnt = t->shape[i], step = 1;

		if (i < n) {
			if (slice_range(&s[i], t->shape[i], i, &first, &cnt))
				return NULL;
			step = s[i].is_index || !s[i].has_step ? 1 : s[i].step;
		}
		/* the elements first, first+step, ... as one [lo, hi) range
		 * taken every |step| (from its end when step < 0) */
		pairs[2 * i] = cnt ? (step > 0 ? first
		                      : first + (cnt - 1) * step) : 0;
		pairs[2 * i + 1] = cnt ? pairs[2 * i] + (cnt - 1) *
		                   (step > 0 ? step : -step) + 1 : 0;
		mul[i] = step;
		if (i >= n || !s[i].is_index)
			out[nout++] = cnt;
	}
	tg_scope_begin();
	r = tg_reshape(tg_t_stride(tg_shrink(t, t->ndim, pairs), t->ndim, mul),
	               nout, out);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* -------------------------------------------------------------- tiling */

/* tinygrad's repeat: reshape (1, s) pairs, expand to (r, s), merge. */
tg_tensor *tg_repeat(const tg_tensor *t, size_t n, const int64_t *reps)
{
	int64_t pairs[2 * TG_MAX_DIMS], big[2 * TG_MAX_DIMS], fin[TG_MAX_DIMS];
	size_t i, lead;
	tg_tensor *r;
	char b[160];

	if (!t || tg_t_null("repeat", "reps", reps, n))
		return NULL;
	if (n < t->ndim || n > TG_MAX_DIMS / 2)
		return tg_t_fail(TG_EINVAL, "repeat", "%zu repeats for %s (at "
		                 "least its %zu dims, at most %d)", n,
		                 TG_T_SHAPE(t, b), t->ndim, TG_MAX_DIMS / 2);
	lead = n - t->ndim;
	for (i = 0; i < n; i++) {
		int64_t s = i < lead ? 1 : t->shape[i - lead];

		if (reps[i] < 0)
			return tg_t_fail(TG_EINVAL, "repeat", "negative repeat %lld "
			                 "for axis %zu", (long long)reps[i], i);
		pairs[2 * i] = 1;
		pairs[2 * i + 1] = s;
		big[2 * i] = reps[i];
		big[2 * i + 1] = s;
		fin[i] = reps[i] * s;
	}
	tg_scope_begin();
	r = tg_reshape(tg_expand(tg_reshape(t, 2 * n, pairs), 2 * n, big), n,
	               fin);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* tinygrad's repeat_interleave: a size-1 axis after `axis`, expanded
 * to `repeats` and merged back into it. */
tg_tensor *tg_repeat_interleave(const tg_tensor *t, int64_t repeats,
                                const int *axis)
{
	int64_t s[TG_MAX_DIMS], big[TG_MAX_DIMS];
	tg_tensor *x, *r;
	size_t n = 0;
	int a = 0;

	if (!t)
		return NULL;
	if (repeats < 0)
		return tg_t_fail(TG_EINVAL, "repeat_interleave", "negative "
		                 "repeats %lld", (long long)repeats);
	if (axis && (a = tg_t_axis("repeat_interleave", *axis, t->ndim)) < 0)
		return NULL;
	if ((!axis && t->ndim != 1) || t->ndim == 0) {  /* flattened */
		tg_scope_begin();
		r = tg_keep(tg_repeat_interleave(tg_flatten(t, 0, -1), repeats,
		                                 &(int){ 0 }));
		tg_scope_end();
		return r;
	}
	if (t->ndim == TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "repeat_interleave", "%d dims "
		                 "already", TG_MAX_DIMS);
	for (int i = 0; i < (int)t->ndim; i++) {
		s[n] = big[n] = t->shape[i];
		n++;
		if (i == a) {
			s[n] = 1;
			big[n++] = repeats;
		}
	}
	tg_scope_begin();
	x = tg_expand(tg_reshape(t, n, s), n, big);
	r = tg_keep(tg_flatten(x, a, a + 1));
	tg_scope_end();
	return r;
}

/* Every tensor of ts has a's rank, device and sizes except on axis;
 * -1 with a message naming op otherwise. */
static int check_cat(const char *op, const tg_tensor *const *ts, size_t n,
                     int axis)
{
	size_t i, d;
	char b1[160], b2[160];

	for (i = 1; i < n; i++) {
		int ok = ts[i]->ndim == ts[0]->ndim &&
		         tg_tensor_dev(ts[i]) == tg_tensor_dev(ts[0]);

		for (d = 0; ok && d < ts[0]->ndim; d++)
			ok = (int)d == axis || ts[i]->shape[d] == ts[0]->shape[d];
		if (!ok) {
			tg_t_fail(TG_EINVAL, op, "tensor %zu %s on %s does not match "
			          "tensor 0 %s on %s except on axis %d", i,
			          TG_T_SHAPE(ts[i], b1),
			          tg_dev_name(tg_tensor_dev(ts[i])),
			          TG_T_SHAPE(ts[0], b2),
			          tg_dev_name(tg_tensor_dev(ts[0])), axis);
			return -1;
		}
	}
	return 0;
}

/* tinygrad's cat: each piece padded to the full axis, then summed. */
tg_tensor *tg_cat(const tg_tensor *const *ts, size_t n, int axis)
{
	int64_t pads[2 * TG_MAX_DIMS], total = 0, at = 0;
	tg_dtype dt;
	tg_tensor *acc = NULL;
	size_t i;
	int a;

	if (!ts || !n)
		return tg_t_fail(TG_EINVAL, "cat", "no tensors");
	for (i = 0; i < n; i++)
		if (!ts[i])
			return NULL;
	if ((a = tg_t_axis("cat", axis, ts[0]->ndim)) < 0)
		return NULL;
	if (!ts[0]->ndim)
		return tg_t_fail(TG_EINVAL, "cat", "0-dim tensors cannot be "
		                 "concatenated");
	if (check_cat("cat", ts, n, a))
		return NULL;
	dt = tg_tensor_dtype(ts[0]);
	for (i = 0; i < n; i++) {
		total += ts[i]->shape[a];
		dt = tg_dtype_lub(dt, tg_tensor_dtype(ts[i]));
	}
	memset(pads, 0, sizeof pads);
	tg_scope_begin();
	for (i = 0; i < n; i++) {
		tg_tensor *p, *c = tg_tensor_dtype(ts[i]) == dt
		                   ? (tg_tensor *)ts[i] : tg_cast(ts[i], dt);

		pads[2 * a] = at;
		pads[2 * a + 1] = total - at - ts[i]->shape[a];
		at += ts[i]->shape[a];
		p = tg_pad(c, ts[i]->ndim, pads, 0);
		acc = acc ? tg_t_alu(TG_ADD, acc, p, NULL) : p;
	}
	acc = tg_keep(acc);
	tg_scope_end();
	return acc;
}

tg_tensor *tg_stack(const tg_tensor *const *ts, size_t n, int axis)
{
	tg_tensor **u, *r = NULL;
	size_t i;
	int a;

	if (!ts || !n)
		return tg_t_fail(TG_EINVAL, "stack", "no tensors");
	for (i = 0; i < n; i++)
		if (!ts[i])
			return NULL;
	if ((a = tg_t_axis("stack", axis, ts[0]->ndim + 1)) < 0 ||
	    check_cat("stack", ts, n, -1))
		return NULL;
	if (!(u = malloc(n * sizeof *u)))
		return tg_t_fail(TG_ENOMEM, "stack", "out of memory");
	tg_scope_begin();
	for (i = 0; i < n; i++)
		u[i] = tg_unsqueeze(ts[i], a);
	r = tg_keep(tg_cat((const tg_tensor *const *)u, n, a));
	tg_scope_end();
	free(u);
	return r;
}

/* ---------------------------------------------------------- splitting */

int tg_split_sizes(const tg_tensor *t, const int64_t *sizes, size_t nsizes,
                   int axis, tg_tensor **out)
{
	int64_t pairs[2 * TG_MAX_DIMS], sum = 0, at = 0;
	size_t i, d;
	int a;

	if (!t)
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (tg_t_null("split", "sizes", sizes, nsizes) ||
	    tg_t_null("split", "out", out, nsizes) ||
	    (a = tg_t_axis("split", axis, t->ndim)) < 0)
		return TG_EINVAL;
	for (i = 0; i < nsizes; i++) {
		if (sizes[i] < 0 || sizes[i] > INT64_MAX - sum)
			return tg_error(TG_EINVAL, "split: %s size %lld",
			                sizes[i] < 0 ? "negative"
			                             : "too large a",
			                (long long)sizes[i]);
		sum += sizes[i];
	}
	if (!t->ndim || sum != t->shape[a])
		return tg_error(TG_EINVAL, "split: sizes sum to %lld, axis %d has "
		                "%lld", (long long)sum, axis,
		                (long long)(t->ndim ? t->shape[a] : 0));
	for (d = 0; d < t->ndim; d++) {
		pairs[2 * d] = 0;
		pairs[2 * d + 1] = t->shape[d];
	}
	/* the pieces leave an inner scope together, into the caller's
	 * scope (or to the caller), as every op's result does */
	tg_scope_begin();
	for (i = 0; i < nsizes; i++) {
		pairs[2 * a] = at;
		pairs[2 * a + 1] = at += sizes[i];
		if (!(out[i] = tg_shrink(t, t->ndim, pairs))) {
			tg_scope_end();
			return tg_last_status();
		}
	}
	if (tg_t_keep_all(out, nsizes)) {
		tg_scope_end();  /* the pieces go with it */
		for (i = 0; i < nsizes; i++)
			out[i] = NULL;
		return TG_ENOMEM;
	}
	tg_scope_end();
	return 0;
}

/* k pieces along axis a: `size` each, the last one holding what is
 * left (nothing left: 0).  out has room for `room`. */
static int split_even(const char *op, const tg_tensor *t, int64_t size,
                      int a, size_t k, tg_tensor **out, size_t room,
                      size_t *n)
{
	int64_t *sizes, left = t->shape[a];
	size_t i;
	int rc;

	if (size < 0 || (size == 0 && left))
		return tg_error(TG_EINVAL, "%s: piece size %lld", op,
		                (long long)size);
	if (k > room)
		return tg_error(TG_EINVAL, "%s: %zu pieces of %lld, room for "
		                "%zu", op, k, (long long)size, room);
	if (!(sizes = calloc(k ? k : 1, sizeof *sizes)))
		return tg_error_oom(op);
	for (i = 0; i < k; i++, left -= size)
		sizes[i] = left < size ? (left > 0 ? left : 0) : size;
	*n = k;
	rc = tg_split_sizes(t, sizes, k, a, out);
	free(sizes);
	return rc;
}

int tg_split(const tg_tensor *t, int64_t size, int axis, tg_tensor **out,
             size_t *n)
{
	int a;

	if (!t)
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (tg_t_null("split", "n", n, 1) || tg_t_null("split", "out", out,
	                                                 *n))
		return TG_EINVAL;
	if (!t->ndim || (a = tg_t_axis("split", axis, t->ndim)) < 0)
		return tg_error(TG_EINVAL, "split: axis %d of %zu dims", axis,
		                t->ndim);
	if (size <= 0)
		return tg_error(TG_EINVAL, "split: piece size %lld",
		                (long long)size);
	return split_even("split", t, size, a,
	                  (size_t)(t->shape[a] / size +
	                           (t->shape[a] % size != 0)), out, *n, n);
}

int tg_chunk(const tg_tensor *t, size_t chunks, int axis, tg_tensor **out,
             size_t *n)
{
	int64_t len, size;
	int a;

	if (!t)
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (tg_t_null("chunk", "n", n, 1) || tg_t_null("chunk", "out", out,
	                                                 chunks))
		return TG_EINVAL;
	if (!t->ndim || (a = tg_t_axis("chunk", axis, t->ndim)) < 0)
		return tg_error(TG_EINVAL, "chunk: axis %d of %zu dims", axis,
		                t->ndim);
	if (!chunks)
		return tg_error(TG_EINVAL, "chunk: 0 chunks");
	len = t->shape[a];
	/* tinygrad: pieces of ceil(len / chunks), so maybe fewer than
	 * chunks; an empty axis gives `chunks` empty pieces */
	size = (len + (int64_t)chunks - 1) / (int64_t)chunks;
	return split_even("chunk", t, size, a,
	                  len ? (size_t)((len + size - 1) / size) : chunks,
	                  out, chunks, n);
}

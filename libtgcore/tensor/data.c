/*
 * tensor/data.c - getting results out: realizing tensors (the engine
 * schedules and runs what they need) and copying their values to the
 * caller.
 */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "device/device.h"
#include "engine/engine.h"
#include "ir/ir.h"
#include "shape/shape.h"

int tg_realize_many(tg_tensor *const *ts, size_t n)
{
	tg_lazy **l;
	size_t i;
	int rc = 0;

	if (tg_t_null("realize", "tensor array", ts, n))
		return TG_EINVAL;
	if (!(l = malloc((n + 1) * sizeof *l)))
		return tg_error_oom("realize");
	for (i = 0; i < n && !rc; i++) {
		if (!ts[i])
			rc = tg_error(TG_EINVAL, "realize: tensor %zu is NULL", i);
		else if (tg_t_dead(ts[i], "realize"))
			rc = TG_EINVAL;
		else
			l[i] = ts[i]->lazy;
	}
	if (!rc)
		rc = tg_lazy_realize(l, n);
	free(l);
	return rc;
}

int tg_realize(tg_tensor *t)
{
	return tg_realize_many(&t, 1);
}

int tg_tensor_data(tg_tensor *t, void *dst, size_t nbytes)
{
	size_t need;
	tg_lazy *c;
	int rc;

	if (!t)
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (tg_t_dead(t, "tensor_data"))
		return TG_EINVAL;
	if (tg_capturing())
		return tg_error(TG_EINVAL, "tensor_data: called while a jit "
		                "captures its step; replays do not run the "
		                "step's code, so the value would be stale "
		                "(return the tensor as an output instead)");
	if (tg_dims_sym(t->ndim, t->shape)) {
		char b[160];
		return tg_error(TG_EINVAL, "tensor_data: the shape %s is "
		                "symbolic; shrink it to an integer shape first",
		                tg_tensor_shape_str(t, b, sizeof b));
	}
	need = (size_t)tg_tensor_numel(t) * tg_dtype_size(t->lazy->dtype);
	if (nbytes < need)
		return tg_error(TG_EINVAL, "tensor_data: %zu bytes of room for "
		                "%zu bytes", nbytes, need);
	if (!need)
		return 0;
	if (tg_lazy_is_multi(t->lazy)) {  /* gathered on the first member */
		tg_lazy *g = tg_lazy_copy(t->lazy, t->lazy->dev->group[0]);

		c = g ? tg_lazy_contiguous(g) : NULL;
		tg_lazy_unref(g);
	} else {
		c = tg_lazy_contiguous(t->lazy);
	}
	if (!c)
		return tg_last_status();
	rc = tg_lazy_realize(&c, 1);
	if (!rc)
		rc = tg_buffer_copyout(tg_lazy_base(c)->buf, dst, need);
	tg_lazy_unref(c);
	return rc;
}

int tg_tensor_item(tg_tensor *t, double *out)
{
	tg_scalar v;
	uint64_t bits = 0;
	tg_dtype dt;
	int rc;

	if (!t)
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (tg_t_dead(t, "tensor_item") || tg_t_null("item", "out", out, 1))
		return TG_EINVAL;
	if (tg_tensor_numel(t) != 1) {
		char b[160];

		return tg_error(TG_EINVAL, "item: %s has %lld elements, not 1",
		                TG_T_SHAPE(t, b),
		                (long long)tg_tensor_numel(t));
	}
	dt = t->lazy->dtype;
	if ((rc = tg_tensor_data(t, &bits, tg_dtype_size(dt))))
		return rc;
	v = tg_scalar_from_bits(bits, dt);
	*out = tg_scalar_to_double(v, dt);
	return 0;
}

/* ------------------------------------------------ the caller's memory */

tg_tensor *tg_tensor_from_buffer(tg_buffer *buf, size_t ndim,
                                 const int64_t *shape)
{
	size_t i;

	if (!buf)
		return tg_t_fail(TG_EINVAL, "tensor_from_buffer", "buffer is "
		                 "NULL");
	if (tg_buffer_is_view(buf))
		return tg_t_fail(TG_EINVAL, "tensor_from_buffer", "the buffer "
		                 "is a view into another (kernels take whole "
		                 "buffers)");
	if (ndim && !shape)
		return tg_t_fail(TG_EINVAL, "tensor_from_buffer", "%zu dims, "
		                 "NULL shape", ndim);
	for (i = 0; i < ndim; i++)
		if (shape[i] < 0 || tg_dim_is_sym(shape[i]))
			return tg_t_fail(TG_EINVAL, "tensor_from_buffer", "size "
			                 "%lld on axis %zu (sizes are integers, "
			                 "at least 0)", (long long)shape[i], i);
	return tg_t_wrap(tg_lazy_from_buffer(buf, ndim, shape));
}

tg_buffer *tg_tensor_buffer(tg_tensor *t)
{
	char b[160];

	if (!t)
		return NULL;
	if (tg_realize(t))
		return tg_error_prefix("tensor_buffer"), (tg_buffer *)NULL;
	if (!tg_lazy_is_plain(t->lazy))
		return tg_error(TG_EINVAL, "tensor_buffer: %s is not memory of "
		                "its own in order (a view, or a constant): take "
		                "tg_contiguous of it first", TG_T_SHAPE(t, b)),
		       (tg_buffer *)NULL;
	return tg_buffer_ref(tg_lazy_base(t->lazy)->buf);
}

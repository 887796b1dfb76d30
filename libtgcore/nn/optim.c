/*
 * nn/optim.c - optimizers (tinygrad's nn/optim.py, mid-2024): LARS with
 * SGD as its special case (no trust ratio), and LAMB with Adam and AdamW
 * as its special cases (trust ratio 1).
 *
 * An optimizer takes references to its tensors.  Those whose
 * requires_grad is undecided (-1) become trainable; those with 0 are
 * buffers (batch-norm statistics, say): not updated, but realized with
 * every step so that their lazy updates run.  A step builds each
 * parameter's update from its gradient with tensor ops (gradient
 * recording off), assigns it (tg_assign), and realizes the parameters,
 * the buffers, the optimizer's own state and the caller's extra tensors
 * in one schedule.  The learning rate is a one-element tensor, so
 * changing it does not change the kernels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"

enum { OPT_LARS, OPT_LAMB, OPT_GROUP };

struct tg_optim {
	int kind;
	/* OPT_GROUP: the members, owned */
	tg_optim **subs;
	size_t nsubs;
	size_t n, nbuf;
	tg_tensor **params;   /* trainable */
	tg_tensor **bufs;     /* realized with each step */
	tg_tensor *lr;        /* (1,) float32 */
	/* LARS: momentum buffers; LAMB: first and second moments */
	tg_tensor **m, **v;
	tg_tensor *b1_t, *b2_t; /* LAMB: b1^t and b2^t */
	double momentum, wd, tcoef, b1, b2, eps;
	int nesterov, classic, adam;
};

void tg_optim_free(tg_optim *o)
{
	size_t i;

	if (!o)
		return;
	for (i = 0; i < o->nsubs; i++)
		tg_optim_free(o->subs[i]);
	free(o->subs);
	for (i = 0; i < o->n; i++) {
		tg_tensor_unref(o->params[i]);
		if (o->m)
			tg_tensor_unref(o->m[i]);
		if (o->v)
			tg_tensor_unref(o->v[i]);
	}
	for (i = 0; i < o->nbuf; i++)
		tg_tensor_unref(o->bufs[i]);
	tg_tensor_unref(o->lr);
	tg_tensor_unref(o->b1_t);
	tg_tensor_unref(o->b2_t);
	free(o->params);
	free(o->bufs);
	free(o->m);
	free(o->v);
	free(o);
}

/* A realized float32 tensor of `value`s like t's shape (or (1,) when t
 * is NULL), owned by the optimizer: a reference of its own, not one
 * kept into the caller's scope. */
static tg_tensor *state(const tg_tensor *t, tg_dev *dev, double value)
{
	int64_t one = 1;
	tg_tensor *r;

	tg_scope_begin();
	r = t ? tg_full(tg_tensor_dev(t), TG_FLOAT32, t->ndim, t->shape, value)
	      : tg_full(dev, TG_FLOAT32, 1, &one, value);
	r = tg_tensor_ref(tg_contiguous(r));
	tg_scope_end();
	if (r) {
		r->requires_grad = 0;
		if (tg_realize(r)) {
			tg_tensor_unref(r);
			return NULL;
		}
	}
	return r;
}

/* Sorts the tensors into parameters and buffers (tinygrad's Optimizer
 * __init__) and makes the learning rate. */
static tg_optim *optim_new(const char *op, tg_tensor *const *ts, size_t n,
                           double lr)
{
	tg_optim *o;
	size_t i;

	/* as tinygrad's Optimizer, which asserts it has a parameter */
	if (!ts || !n)
		return tg_t_fail(TG_EINVAL, op, "no parameters (%s, n = %zu): "
		                 "an optimizer needs at least one",
		                 ts ? "an empty list" : "NULL", n),
		       (tg_optim *)NULL;
	for (i = 0; i < n; i++)
		if (!ts[i])
			return tg_t_fail(TG_EINVAL, op, "tensor %zu is NULL", i),
			       (tg_optim *)NULL;
		else if (tg_t_dead(ts[i], op))
			return NULL;
	for (i = 0; i < n && !ts[i]->requires_grad; i++)
		;
	if (i == n)
		return tg_t_fail(TG_EINVAL, op, "none of the %zu tensors "
		                 "requires a gradient, so there is nothing to "
		                 "optimize", n), (tg_optim *)NULL;
	if (!(o = calloc(1, sizeof *o)) ||
	    !(o->params = calloc(n ? n : 1, sizeof *o->params)) ||
	    !(o->bufs = calloc(n ? n : 1, sizeof *o->bufs))) {
		tg_optim_free(o);
		tg_error_oom(op);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		size_t j;
		int dup = 0;

		if (ts[i]->requires_grad < 0)
			ts[i]->requires_grad = 1;
		for (j = 0; j < i; j++)
			dup |= ts[j] == ts[i];
		if (dup)
			continue;
		if (ts[i]->requires_grad)
			o->params[o->n++] = tg_tensor_ref(ts[i]);
		else
			o->bufs[o->nbuf++] = tg_tensor_ref(ts[i]);
	}
	o->lr = state(NULL, n ? tg_tensor_dev(ts[0]) : NULL, lr);
	if (!o->lr) {
		tg_optim_free(o);
		return NULL;
	}
	return o;
}

/* One state tensor of zeros per parameter. */
static tg_tensor **zeros_per_param(tg_optim *o)
{
	tg_tensor **z = calloc(o->n ? o->n : 1, sizeof *z);
	size_t i;

	if (!z)
		return tg_error_oom("optimizer"), (tg_tensor **)NULL;
	for (i = 0; i < o->n; i++)
		if (!(z[i] = state(o->params[i], NULL, 0))) {
			while (i--)
				tg_tensor_unref(z[i]);
			free(z);
			return NULL;
		}
	return z;
}

tg_optim *tg_optim_lars(tg_tensor *const *params, size_t n, double lr,
                        double momentum, double weight_decay, int nesterov,
                        int classic, double tcoef)
{
	tg_optim *o = optim_new("lars", params, n, lr);

	if (!o)
		return NULL;
	o->kind = OPT_LARS;
	o->momentum = momentum;
	o->wd = weight_decay;
	o->nesterov = nesterov;
	o->classic = classic;
	o->tcoef = tcoef;
	if (momentum != 0 && !(o->m = zeros_per_param(o))) {
		tg_optim_free(o);
		return NULL;
	}
	return o;
}

tg_optim *tg_optim_sgd(tg_tensor *const *params, size_t n, double lr,
                       double momentum, double weight_decay, int nesterov)
{
	return tg_optim_lars(params, n, lr, momentum, weight_decay, nesterov,
	                     0, 0.0);
}

tg_optim *tg_optim_lamb(tg_tensor *const *params, size_t n, double lr,
                        double b1, double b2, double eps,
                        double weight_decay, int adam)
{
	tg_optim *o = optim_new(adam ? "adam" : "lamb", params, n, lr);

	if (!o)
		return NULL;
	o->kind = OPT_LAMB;
	o->b1 = b1;
	o->b2 = b2;
	o->eps = eps;
	o->wd = weight_decay;
	o->adam = adam;
	if (!(o->m = zeros_per_param(o)) || !(o->v = zeros_per_param(o)) ||
	    !(o->b1_t = state(NULL, tg_tensor_dev(o->lr), 1)) ||
	    !(o->b2_t = state(NULL, tg_tensor_dev(o->lr), 1))) {
		tg_optim_free(o);
		return NULL;
	}
	return o;
}

tg_optim *tg_optim_adam(tg_tensor *const *params, size_t n, double lr,
                        double b1, double b2, double eps)
{
	return tg_optim_lamb(params, n, lr, b1, b2, eps, 0.0, 1);
}

tg_optim *tg_optim_adamw(tg_tensor *const *params, size_t n, double lr,
                         double b1, double b2, double eps,
                         double weight_decay)
{
	return tg_optim_lamb(params, n, lr, b1, b2, eps, weight_decay, 1);
}

tg_tensor *tg_optim_lr(tg_optim *o)
{
	if (o && o->kind == OPT_GROUP)
		return tg_t_fail(TG_EINVAL, "optim_lr", "a group of %zu "
		                 "optimizers has no single rate (ask a member)",
		                 o->nsubs);
	return o ? o->lr : NULL;
}

int tg_optim_set_lr(tg_optim *o, double lr)
{
	tg_tensor *v;
	int rc;

	if (!o)
		return TG_EINVAL;
	if (o->kind == OPT_GROUP) {
		for (size_t i = 0; i < o->nsubs; i++)
			if ((rc = tg_optim_set_lr(o->subs[i], lr)))
				return rc;
		return 0;
	}
	float f = (float)lr;
	int64_t one = 1;

	/* a buffer, not a constant: a constant would be baked into the
	 * kernels that read the rate, and each new rate recompile them */
	tg_scope_begin();
	v = tg_tensor_new(tg_tensor_dev(o->lr), TG_FLOAT32, 1, &one, &f);
	rc = v ? tg_assign(o->lr, v) : tg_last_status();
	/* now, in place: a JIT step reads the rate's memory, and must
	 * not capture this copy of the new value */
	if (!rc)
		rc = tg_realize(o->lr);
	tg_scope_end();
	return rc;
}

int tg_optim_zero_grad(tg_optim *o)
{
	size_t i;

	if (!o)
		return TG_EINVAL;
	for (i = 0; i < o->nsubs; i++)
		tg_optim_zero_grad(o->subs[i]);
	for (i = 0; i < o->n; i++)
		tg_set_grad(o->params[i], NULL);
	return 0;
}

/* where(a > 0, where(b > 0, num / den, 1), 1): the trust ratio. */
static tg_tensor *trust(tg_tensor *a, tg_tensor *b, tg_tensor *num,
                        tg_tensor *den)
{
	tg_tensor *one = tg_ones_like(num);

	return tg_where(tg_gt_s(a, 0), tg_where(tg_gt_s(b, 0), tg_div(num, den),
	                                        one), one);
}

static tg_tensor *norm(const tg_tensor *t)
{
	return tg_sqrt(tg_sum(tg_square(t), NULL, 0, 0));
}

/* tinygrad's LARS step for parameter i: the new value. */
static tg_tensor *lars_update(tg_optim *o, size_t i)
{
	tg_tensor *t = tg_detach(o->params[i]);
	tg_tensor *g = tg_contiguous(tg_grad(o->params[i])), *r = NULL;

	if (o->tcoef != 0) {
		tg_tensor *r1 = norm(t), *r2 = norm(g);

		r = trust(r1, r2, tg_mul_s(r1, o->tcoef),
		          tg_add(r2, tg_mul_s(r1, o->wd)));
	}
	g = tg_add(g, tg_mul_s(t, o->wd));
	if (o->classic)
		g = tg_mul(r ? tg_mul(g, r) : g, o->lr);
	if (o->m) {
		if (tg_assign(o->m[i], tg_add(tg_mul_s(o->m[i], o->momentum), g)))
			return NULL;
		g = o->nesterov ? tg_add(g, tg_mul_s(o->m[i], o->momentum))
		                : o->m[i];
	}
	if (!o->classic)
		g = tg_mul(r ? tg_mul(g, r) : g, o->lr);
	return tg_sub(t, g);
}

/* tinygrad's LAMB step for parameter i (b1_t, b2_t already advanced). */
static tg_tensor *lamb_update(tg_optim *o, size_t i)
{
	tg_tensor *t = tg_detach(o->params[i]), *g = tg_grad(o->params[i]);
	tg_tensor *mh, *vh, *up, *r;


	g = tg_cast(g, TG_FLOAT32);
	if (tg_assign(o->m[i], tg_add(tg_mul_s(o->m[i], o->b1),
	                              tg_mul_s(g, 1 - o->b1))) ||
	    tg_assign(o->v[i], tg_add(tg_mul_s(o->v[i], o->b2),
	                              tg_mul_s(tg_mul(g, g), 1 - o->b2))))
		return NULL;
	mh = tg_div(o->m[i], tg_rsub_s(o->b1_t, 1));
	vh = tg_div(o->v[i], tg_rsub_s(o->b2_t, 1));
	up = tg_add(tg_div(mh, tg_add_s(tg_sqrt(vh), o->eps)),
	            tg_mul_s(t, o->wd));
	if (o->adam)
		return tg_sub(t, tg_mul(o->lr, up));
	r = trust(norm(t), norm(up), norm(t), norm(up));
	return tg_sub(t, tg_mul(tg_mul(o->lr, r), up));
}

/* How many tensors a step realizes for o: parameters, their state,
 * buffers, b1^t and b2^t, over every member of a group. */
static size_t step_count(const tg_optim *o)
{
	size_t k = o->n * (1 + !!o->m + !!o->v) + o->nbuf + 2 * !!o->b1_t;

	for (size_t i = 0; i < o->nsubs; i++)
		k += step_count(o->subs[i]);
	return k;
}

/* Writes those tensors to all; returns how many. */
static size_t step_collect(const tg_optim *o, tg_tensor **all)
{
	size_t k = 0, i;

	for (i = 0; i < o->nsubs; i++)
		k += step_collect(o->subs[i], all + k);
	for (i = 0; i < o->n; i++) {
		all[k++] = o->params[i];
		if (o->m)
			all[k++] = o->m[i];
		if (o->v)
			all[k++] = o->v[i];
	}
	for (i = 0; i < o->nbuf; i++)
		all[k++] = o->bufs[i];
	if (o->b1_t) {
		all[k++] = o->b1_t;
		all[k++] = o->b2_t;
	}
	return k;
}

/* Fails unless every parameter (of every member) has a gradient. */
static int check_grads(const tg_optim *o)
{
	size_t i;
	int rc;

	for (i = 0; i < o->nsubs; i++)
		if ((rc = check_grads(o->subs[i])))
			return rc;
	for (i = 0; i < o->n; i++)
		if (!tg_grad(o->params[i])) {
			char b[160];

			return tg_error(TG_EINVAL, "optimizer step: parameter %zu "
			                "%s has no gradient (run tg_backward "
			                "first)", i, tg_tensor_shape_str(
			                    o->params[i], b, sizeof b));
		}
	return 0;
}

/* Assigns every parameter its new value (and the state its update),
 * lazily: nothing runs.  Gradient recording is off. */
static int assign_updates(tg_optim *o)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < o->nsubs && !rc; i++)
		rc = assign_updates(o->subs[i]);
	if (rc || o->kind == OPT_GROUP)
		return rc;
	tg_scope_begin();
	if (o->kind == OPT_LAMB &&
	    (tg_assign(o->b1_t, tg_mul_s(o->b1_t, o->b1)) ||
	     tg_assign(o->b2_t, tg_mul_s(o->b2_t, o->b2))))
		rc = tg_last_status();
	for (i = 0; i < o->n && !rc; i++) {
		tg_tensor *p = o->params[i];
		tg_tensor *nv = o->kind == OPT_LARS ? lars_update(o, i)
		                                    : lamb_update(o, i);

		if (nv)
			nv = tg_cast(nv, tg_tensor_dtype(p));
		rc = nv ? tg_assign(p, nv) : tg_error_prefix("optimizer step");
	}
	tg_scope_end();
	return rc;
}

int tg_optim_schedule_step(tg_optim *o, tg_tensor ***out, size_t *nout)
{
	tg_tensor **all;
	int was, rc;

	if (out)
		*out = NULL;
	if (nout)
		*nout = 0;
	if (!o || !out || !nout)
		return tg_error(TG_EINVAL, "optim_schedule_step: no %s (NULL)",
		                !o ? "optimizer" : "output");
	if ((rc = check_grads(o)))
		return rc;
	if (!(all = malloc((step_count(o) + 1) * sizeof *all)))
		return tg_error_oom("optim_schedule_step");
	was = tg_set_grad_enabled(0);
	rc = assign_updates(o);
	tg_set_grad_enabled(was);
	if (rc) {
		free(all);
		return rc;
	}
	*nout = step_collect(o, all);
	*out = all;
	return 0;
}

int tg_optim_step(tg_optim *o, tg_tensor *const *extra, size_t nextra)
{
	tg_tensor **all, **more;
	size_t n;
	int rc;

	if (!o)
		return TG_EINVAL;
	if ((rc = tg_optim_schedule_step(o, &all, &n)))
		return rc;
	if (nextra && !(more = realloc(all, (n + nextra) * sizeof *all))) {
		free(all);
		return tg_error_oom("optimizer step");
	} else if (nextra) {
		all = more;
		memcpy(all + n, extra, nextra * sizeof *extra);
	}
	rc = tg_realize_many(all, n + nextra);
	free(all);
	return rc;
}

tg_optim *tg_optim_group(tg_optim *const *opts, size_t n)
{
	tg_optim *g;
	size_t i, j;

	if (!opts || !n)
		return tg_t_fail(TG_EINVAL, "optim_group", "no optimizers"),
		       (tg_optim *)NULL;
	for (i = 0; i < n; i++) {
		if (!opts[i])
			return tg_t_fail(TG_EINVAL, "optim_group", "optimizer %zu "
			                 "is NULL", i), (tg_optim *)NULL;
		for (j = 0; j < i; j++)
			if (opts[j] == opts[i])
				return tg_t_fail(TG_EINVAL, "optim_group",
				                 "optimizer %zu is also optimizer "
				                 "%zu", i, j), (tg_optim *)NULL;
	}
	if (!(g = calloc(1, sizeof *g)) ||
	    !(g->subs = malloc(n * sizeof *g->subs))) {
		free(g);
		tg_error_oom("optim_group");
		return NULL;
	}
	g->kind = OPT_GROUP;
	memcpy(g->subs, opts, n * sizeof *opts);
	g->nsubs = n;
	return g;
}

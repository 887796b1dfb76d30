/*
 * tensor/jit.c - tg_jit (tinygrad's TinyJit): the first call runs the
 * step, the second runs it under a capture (engine/capture.c), later
 * ones replay the plan made of the capture with the new inputs' memory.
 * This file deals in tensors: checking inputs against the capture,
 * making them realized and contiguous, and wrapping the outputs' memory
 * in new tensors; the engine deals in buffers.  A tensor on a device
 * group (lazy/multi.c) is one buffer per shard to the engine, and its
 * split is part of what the capture saw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "device/device.h"
#include "engine/engine.h"
#include "shape/shape.h"

/* What the capture saw of one input or output, or of one of its
 * buffers (a shard of a multi-device tensor). */
typedef struct sig {
	size_t ndim;
	int64_t shape[TG_MAX_DIMS];
	tg_dtype dtype;
	tg_dev *dev;            /* a device group for a multi-device tensor */
	size_t first, nparts;   /* its buffers in the side's parts and bufs */
	int axis;               /* multi: the split axis, -1: replicated */
	uint8_t real[TG_GROUP_MAX];  /* multi: as struct tg_multi's */
} sig;

/* The inputs or the outputs of a call: n tensors and their nbufs
 * buffers. */
typedef struct side {
	size_t n, nbufs;
	sig *t;                 /* n */
	sig *parts;             /* nbufs */
	tg_buffer **bufs;       /* nbufs */
} side;

struct tg_jit {
	tg_jit_fn fn;
	void *ctx;
	pthread_mutex_t lock;   /* one call at a time */
	uint64_t calls;
	tg_plan *plan;          /* NULL until captured */
	side in, out;           /* the capture's; bufs are scratch */
};

/* The JITs whose calls are running on this thread, innermost first. */
typedef struct active {
	const tg_jit *j;
	struct active *up;
} active;
static _Thread_local active *running;

tg_jit *tg_jit_new(tg_jit_fn fn, void *ctx)
{
	tg_jit *j;

	if (!fn)
		return tg_error(TG_EINVAL, "jit_new: the step is NULL"), NULL;
	if (!(j = calloc(1, sizeof *j)))
		return tg_error_oom("jit_new"), NULL;
	if (pthread_mutex_init(&j->lock, NULL)) {
		free(j);
		return tg_error(TG_ERUNTIME, "jit_new: cannot make a mutex"),
		       NULL;
	}
	j->fn = fn;
	j->ctx = ctx;
	return j;
}

static void side_free(side *s)
{
	free(s->t);
	free(s->parts);
	free(s->bufs);
	*s = (side){ 0 };
}

static void forget(tg_jit *j)
{
	tg_plan_free(j->plan);
	j->plan = NULL;
	side_free(&j->in);
	side_free(&j->out);
}

void tg_jit_free(tg_jit *j)
{
	if (!j)
		return;
	forget(j);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

void tg_jit_reset(tg_jit *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	forget(j);
	j->calls = 0;
	pthread_mutex_unlock(&j->lock);
}

int tg_jit_get_info(const tg_jit *j, tg_jit_info *out)
{
	tg_plan_info pi = { 0 };

	if (!j || !out)
		return tg_error(TG_EINVAL, "jit_get_info: %s is NULL",
		                j ? "out" : "the jit");
	pthread_mutex_lock((pthread_mutex_t *)&j->lock);
	if (j->plan)
		tg_plan_get_info(j->plan, &pi);
	*out = (tg_jit_info){
		.calls = j->calls, .captured = j->plan != NULL,
		.kernels = pi.kernels, .copies = pi.copies,
		.graphs = pi.graphs, .native_graphs = pi.native_graphs,
		.buffers = pi.buffers, .bytes = pi.bytes,
	};
	pthread_mutex_unlock((pthread_mutex_t *)&j->lock);
	return 0;
}

/* ------------------------------------------------------------ helpers */

/* How many buffers the engine sees of lb (one per shard of a
 * multi-device tensor), and the lazy of the k-th. */
static size_t nparts_of(const tg_lazy *lb)
{
	return tg_lazy_is_multi(lb) ? lb->multi->n : 1;
}

static tg_lazy *part_of(const tg_lazy *lb, size_t k)
{
	return tg_lazy_is_multi(lb) ? lb->multi->lbs[k] : (tg_lazy *)lb;
}

/* s sized for the tensors ts. */
static int side_for(side *s, tg_tensor *const *ts, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += nparts_of(ts[i]->lazy);
	s->n = n;
	s->nbufs = k;
	s->t = calloc(n ? n : 1, sizeof *s->t);
	s->parts = calloc(k ? k : 1, sizeof *s->parts);
	s->bufs = calloc(k ? k : 1, sizeof *s->bufs);
	if (!s->t || !s->parts || !s->bufs) {
		side_free(s);
		return tg_error_oom("jit");
	}
	return 0;
}

/* Records t as tensor i of s, its buffers from `first` on. */
static void sig_of(const tg_tensor *t, side *s, size_t i, size_t first)
{
	sig *g = &s->t[i];
	const tg_lazy *lb = t->lazy;

	g->ndim = t->ndim;
	memcpy(g->shape, t->shape, sizeof g->shape);
	g->dtype = lb->dtype;
	g->dev = lb->dev;
	g->first = first;
	g->nparts = nparts_of(lb);
	g->axis = -1;
	if (!tg_lazy_is_multi(lb)) {
		s->parts[first] = *g;
		return;
	}
	g->axis = lb->multi->axis;
	memcpy(g->real, lb->multi->real, g->nparts);
	for (size_t k = 0; k < g->nparts; k++) {
		const tg_lazy *p = lb->multi->lbs[k];
		sig *q = &s->parts[first + k];

		*q = (sig){ .ndim = tg_lazy_ndim(p), .dtype = p->dtype,
		            .dev = p->dev, .first = first + k, .nparts = 1,
		            .axis = -1 };
		tg_lazy_dims(p, q->shape);
	}
}

/* Symbolic sizes of input i against the capture's: the same up to
 * their values, and the input's values those the variables have now
 * (what the replay passes its kernels). */
static int check_sym_dims(const tg_tensor *t, const sig *s, size_t i)
{
	char a[160];

	for (size_t k = 0; k < t->ndim; k++) {
		int64_t want;

		if (!tg_dim_is_sym(s->shape[k]))
			continue;
		if ((want = tg_dim_rebind(s->shape[k])) == TG_DIM_INVALID)
			return tg_error_prefix("jit_call: input %zu", i);
		if (tg_dim_value(t->shape[k]) != tg_dim_value(want))
			return tg_error(TG_EINVAL, "jit_call: input %zu: axis %zu "
			                "is %s, which was %lld when the input was "
			                "made and is %lld now", i, k,
			                tg_dim_str(t->shape[k], a, sizeof a),
			                (long long)tg_dim_value(t->shape[k]),
			                (long long)tg_dim_value(want));
	}
	return 0;
}

/* A multi-device input's split against the capture's (its group is
 * the capture's): the same axis, and each shard the same rows. */
static int check_split(const tg_jit *j, const tg_tensor *t, size_t i)
{
	const sig *s = &j->in.t[i];
	const tg_multi *m = t->lazy->multi;
	int64_t d[TG_MAX_DIMS];
	char a[160], b[160];

	if (m->axis != s->axis)
		return tg_error(TG_EINVAL, "jit_call: input %zu is split along "
		                "axis %d, the capture's along %d (-1: copied "
		                "whole to each device)", i, m->axis, s->axis);
	for (size_t k = 0; k < m->n; k++) {
		const sig *q = &j->in.parts[s->first + k];

		tg_lazy_dims(m->lbs[k], d);
		if (m->real[k] == s->real[k] &&
		    !memcmp(d, q->shape, q->ndim * sizeof *d))
			continue;
		return tg_error(TG_EINVAL, "jit_call: input %zu: its shard on "
		                "%s has shape %s%s, the capture's %s%s", i,
		                tg_dev_name(q->dev),
		                tg_t_shape_format(q->ndim, d, a, sizeof a),
		                m->real[k] ? "" : " (standing for zeros)",
		                tg_t_shape_format(q->ndim, q->shape, b, sizeof b),
		                s->real[k] ? "" : " (standing for zeros)");
	}
	return 0;
}

/* The input against what the capture saw. */
static int check_input(const tg_jit *j, const tg_tensor *t, size_t i)
{
	const sig *s = &j->in.t[i];
	char a[160], b[160];
	size_t k = 0;

	while (t->ndim == s->ndim && k < t->ndim &&
	       tg_dim_same_unbound(t->shape[k], s->shape[k]))
		k++;
	if (t->ndim != s->ndim || k < t->ndim)
		return tg_error(TG_EINVAL, "jit_call: input %zu has shape %s, "
		                "the capture had %s", i,
		                tg_t_shape_format(t->ndim, t->shape, a, sizeof a),
		                tg_t_shape_format(s->ndim, s->shape, b, sizeof b));
	if (check_sym_dims(t, s, i))
		return tg_last_status();
	if (t->lazy->dtype != s->dtype)
		return tg_error(TG_EINVAL, "jit_call: input %zu is %s, the "
		                "capture had %s", i,
		                tg_dtype_name(t->lazy->dtype),
		                tg_dtype_name(s->dtype));
	if (t->lazy->dev != s->dev)
		return tg_error(TG_EINVAL, "jit_call: input %zu is on %s, the "
		                "capture had %s", i, tg_dev_name(t->lazy->dev),
		                tg_dev_name(s->dev));
	return tg_lazy_is_multi(t->lazy) ? check_split(j, t, i) : 0;
}

/* Whether every buffer of lb is realized and read whole, in order. */
static int plain(const tg_lazy *lb)
{
	for (size_t k = 0; k < nparts_of(lb); k++)
		if (!tg_lazy_is_plain(part_of(lb, k)))
			return 0;
	return 1;
}

/* The input below i that has buffer b, or i when none has. */
static size_t holder(tg_tensor *const *p, size_t i, const tg_buffer *b)
{
	for (size_t m = 0; m < i; m++)
		for (size_t k = 0; k < nparts_of(p[m]->lazy); k++)
			if (tg_lazy_base(part_of(p[m]->lazy, k))->buf == b)
				return m;
	return i;
}

/* Inputs as plain tensors (made in the open scope where needed) and
 * their buffers, borrowed (all NULL on a failure); two inputs may not
 * share memory, since a replay could not tell their uses apart. */
static int prepare(tg_tensor *const *in, size_t nin, tg_tensor **p,
                   tg_buffer **bufs)
{
	size_t i, k, at = 0, m;
	int rc = 0;

	for (i = 0; i < nin && !rc; i++) {
		tg_lazy *c;

		p[i] = in[i];
		if (!plain(in[i]->lazy)) {
			c = tg_lazy_contiguous(in[i]->lazy);
			if (!c || tg_lazy_realize(&c, 1)) {
				tg_lazy_unref(c);
				rc = tg_error_prefix("jit_call: input %zu", i);
				break;
			}
			if (!(p[i] = tg_t_wrap(c))) {
				rc = tg_last_status();
				break;
			}
		}
		for (k = 0; k < nparts_of(p[i]->lazy) && !rc; k++, at++) {
			bufs[at] = tg_lazy_base(part_of(p[i]->lazy, k))->buf;
			if ((m = holder(p, i, bufs[at])) < i)
				rc = tg_error(TG_EINVAL, "jit_call: inputs %zu "
				              "and %zu share memory", m, i);
		}
	}
	if (rc)
		memset(bufs, 0, at * sizeof *bufs);
	return rc;
}

/* Runs the step and checks that it filled every output (out[] holds
 * NULLs on entry). */
static int step(tg_jit *j, tg_tensor *const *in, size_t nin,
                tg_tensor **out, size_t nout)
{
	size_t i;
	int rc;

	if ((rc = j->fn(j->ctx, in, nin, out, nout)) < 0)
		return tg_last_status() ? tg_error_prefix("jit: the step failed")
		                        : tg_error(rc, "jit: the step returned "
		                                   "%s", tg_status_name(rc));
	if (rc > 0)
		return tg_error(TG_EINVAL, "jit: the step returned %d (0 or a "
		                "negative status expected)", rc);
	for (i = 0; i < nout; i++)
		if (!out[i])
			return tg_error(TG_EINVAL, "jit: the step left output %zu "
			                "NULL", i);
	return 0;
}

/* A symbolic output over buf: its shape with the variables' values
 * now, read from the start of the memory (sized for their maxima). */
static tg_lazy *wrap_sym(tg_buffer *buf, const sig *s)
{
	int64_t shape[TG_MAX_DIMS], all = (int64_t)tg_buffer_count(buf), n;
	tg_lazy *flat, *part, *r;

	for (size_t k = 0; k < s->ndim; k++)
		if ((shape[k] = tg_dim_rebind(s->shape[k])) == TG_DIM_INVALID)
			return tg_error_prefix("jit_call: output shape"), NULL;
	if ((n = tg_dims_product(s->ndim, shape)) == TG_DIM_INVALID)
		return NULL;
	flat = tg_lazy_from_buffer(buf, 1, &all);
	part = tg_lazy_shrink(flat, 1, (int64_t[]){ 0, n });
	r = tg_lazy_reshape(part, s->ndim, shape);
	tg_lazy_unref(flat);
	tg_lazy_unref(part);
	return r;
}

/* A new lazy over buf shaped as s (zeros when the shape is empty and
 * so there is no memory). */
static tg_lazy *wrap_part(tg_buffer *buf, const sig *s)
{
	tg_scalar zero = { 0 };

	if (!buf)
		return tg_lazy_const(s->dev, s->dtype, zero, s->ndim, s->shape);
	if (tg_dims_sym(s->ndim, s->shape))
		return wrap_sym(buf, s);
	return tg_lazy_from_buffer(buf, s->ndim, s->shape);
}

/* Tensor i of s over its buffers, in the caller's scope. */
static tg_tensor *wrap(const side *s, size_t i)
{
	const sig *g = &s->t[i];
	tg_lazy *lbs[TG_GROUP_MAX], *r = NULL;
	size_t k;

	if (!tg_dev_group_size(g->dev))
		return tg_t_wrap(wrap_part(s->bufs[g->first],
		                           &s->parts[g->first]));
	for (k = 0; k < g->nparts; k++)
		if (!(lbs[k] = wrap_part(s->bufs[g->first + k],
		                         &s->parts[g->first + k])))
			break;
	if (k == g->nparts)
		r = tg_multi_of(g->dev, lbs, g->axis, g->real);
	while (k--)
		tg_lazy_unref(lbs[k]);
	return tg_t_wrap(r);
}

/* out[i] = wrap(s, i) in the caller's scope: all or none (made in a
 * scope of their own, which drops them on a failure). */
static int wrap_all(const side *s, tg_tensor **out)
{
	size_t i;
	int rc = 0;

	tg_scope_begin();
	for (i = 0; i < s->n && !rc; i++)
		if (!(out[i] = wrap(s, i)))
			rc = tg_last_status();
	if (!rc)
		rc = tg_t_keep_all(out, s->n);
	tg_scope_end();
	if (rc)
		for (i = 0; i < s->n; i++)
			out[i] = NULL;
	return rc;
}

/* -------------------------------------------------------------- calls */

/* The step's outputs realized contiguous and recorded in o (sized
 * here), their buffers referenced (NULL for an empty shape). */
static int finish_outputs(tg_tensor *const *out, size_t nout, side *o)
{
	tg_lazy **c = calloc(nout ? nout : 1, sizeof *c);
	size_t i, k, at = 0;
	int rc = 0;

	if (!c)
		return tg_error_oom("jit");
	for (i = 0; i < nout && !rc; i++)
		if (!(c[i] = tg_lazy_contiguous(out[i]->lazy)))
			rc = tg_last_status();
	if (!rc)
		rc = tg_lazy_realize(c, nout);
	if (!rc)
		rc = side_for(o, out, nout);
	for (i = 0; i < nout; i++) {
		if (!rc) {
			sig_of(out[i], o, i, at);
			for (k = 0; k < nparts_of(c[i]); k++)
				o->bufs[at++] = tg_buffer_ref(
					tg_lazy_base(part_of(c[i], k))->buf);
		}
		tg_lazy_unref(c[i]);
	}
	free(c);
	return rc;
}

static void unref_all(tg_buffer **bufs, size_t n)
{
	size_t i;

	for (i = 0; bufs && i < n; i++) {
		tg_buffer_unref(bufs[i]);
		bufs[i] = NULL;
	}
}

/* The first call, and every call under JIT=0. */
static int run_eager(tg_jit *j, tg_tensor *const *in, size_t nin,
                     tg_tensor **out, size_t nout)
{
	side o = { 0 };
	int rc;

	tg_scope_begin();
	if (!(rc = step(j, in, nin, out, nout)))
		rc = finish_outputs(out, nout, &o);
	tg_scope_end();
	if (!rc)
		rc = wrap_all(&o, out);
	unref_all(o.bufs, o.nbufs);
	side_free(&o);
	return rc;
}

/* Runs the step with a capture open, recording its inputs and outputs
 * in j; their buffers get a reference each, which the caller drops. */
static int run_captured(tg_jit *j, tg_tensor *const *in, size_t nin,
                        size_t nout, tg_capture **cap)
{
	tg_tensor **p = calloc(nin ? nin : 1, sizeof *p);
	tg_tensor **out = calloc(nout ? nout : 1, sizeof *out);
	size_t i, at = 0;
	int rc = p && out ? 0 : tg_error_oom("jit: capture");

	if (!rc)
		rc = side_for(&j->in, in, nin);
	tg_scope_begin();
	if (!rc && !(rc = prepare(in, nin, p, j->in.bufs))) {
		for (i = 0; i < nin; i++) {
			sig_of(in[i], &j->in, i, at);
			at += j->in.t[i].nparts;
		}
		for (i = 0; i < j->in.nbufs; i++)
			tg_buffer_ref(j->in.bufs[i]);
		if (!(rc = tg_capture_begin())) {
			if (!(rc = step(j, p, nin, out, nout)))
				rc = finish_outputs(out, nout, &j->out);
			*cap = tg_capture_end();
			if (!rc && !*cap)
				rc = tg_last_status();
		}
	}
	tg_scope_end();
	free(p);
	free(out);
	return rc;
}

/* The second call: runs the step under a capture and makes the plan. */
static int capture(tg_jit *j, tg_tensor *const *in, size_t nin,
                   tg_tensor **out, size_t nout, int native)
{
	tg_capture *cap = NULL;
	int rc = run_captured(j, in, nin, nout, &cap);

	if (!rc && !(j->plan = tg_plan_new(cap, j->in.bufs, j->in.nbufs,
	                                   j->out.bufs, j->out.nbufs,
	                                   native)))
		rc = tg_error_prefix("jit: capture");
	else if (rc)
		tg_capture_free(cap);
	if (!rc)
		rc = wrap_all(&j->out, out);
	unref_all(j->in.bufs, j->in.nbufs);
	unref_all(j->out.bufs, j->out.nbufs);
	if (rc)
		forget(j);
	return rc;
}

/* Later calls. */
static int replay(tg_jit *j, tg_tensor *const *in, size_t nin,
                  tg_tensor **out, size_t nout)
{
	tg_tensor **p;
	size_t i;
	int rc = 0, held = 0;

	if (nin != j->in.n || nout != j->out.n)
		return tg_error(TG_EINVAL, "jit_call: %zu inputs and %zu "
		                "outputs, the capture had %zu and %zu", nin,
		                nout, j->in.n, j->out.n);
	for (i = 0; i < nin && !rc; i++)
		rc = check_input(j, in[i], i);
	if (rc)
		return rc;
	if (!(p = calloc(nin ? nin : 1, sizeof *p)))
		return tg_error_oom("jit_call");
	tg_scope_begin();
	if (!(rc = prepare(in, nin, p, j->in.bufs)) &&
	    !(rc = tg_plan_run(j->plan, j->in.bufs, j->out.bufs))) {
		/* an output may be an input whose memory the scope frees */
		for (i = 0; i < j->out.nbufs; i++)
			tg_buffer_ref(j->out.bufs[i]);
		held = 1;
	}
	tg_scope_end();
	free(p);
	if (held) {
		rc = wrap_all(&j->out, out);
		unref_all(j->out.bufs, j->out.nbufs);
	}
	return rc;
}

static int check_call(const tg_jit *j, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	const active *a;
	size_t i;

	if (!j)
		return tg_error(TG_EINVAL, "jit_call: the jit is NULL");
	if ((nin && !in) || (nout && !out))
		return tg_error(TG_EINVAL, "jit_call: %zu %s but no array",
		                nin && !in ? nin : nout,
		                nin && !in ? "inputs" : "outputs");
	for (a = running; a; a = a->up)
		if (a->j == j)
			return tg_error(TG_EINVAL, "jit_call: the step called "
			                "its own jit");
	for (i = 0; i < nin; i++)
		if (!in[i])
			return tg_last_status() ? tg_error_prefix("jit_call: "
			                                          "input %zu", i)
			                        : tg_error(TG_EINVAL, "jit_call: "
			                                   "input %zu is NULL", i);
		else if (tg_t_dead(in[i], "jit_call"))
			return TG_EINVAL;
	return 0;
}

int tg_jit_call(tg_jit *j, tg_tensor *const *in, size_t nin,
                tg_tensor **out, size_t nout)
{
	active me = { j, running };
	tg_settings set;
	size_t i;
	int rc;

	tg_settings_read(&set);  /* a call starts an operation: JIT */
	for (i = 0; out && i < nout; i++)
		out[i] = NULL;
	if ((rc = check_call(j, in, nin, out, nout)))
		return rc;
	pthread_mutex_lock(&j->lock);
	running = &me;
	if (set.jit == 0 || j->calls == 0)
		rc = run_eager(j, in, nin, out, nout);
	else if (!j->plan)
		rc = capture(j, in, nin, out, nout, set.jit != 2);
	else
		rc = replay(j, in, nin, out, nout);
	if (!rc)
		j->calls++;
	for (i = 0; rc && i < nout; i++)
		out[i] = NULL;  /* the step's, freed with its scope */
	running = me.up;
	pthread_mutex_unlock(&j->lock);
	return rc;
}

/*
 * tensor/jit.c - tg_jit (tinygrad's TinyJit): the first call runs the
 * step, the second runs it under a capture (engine/capture.c), later
 * ones replay the plan made of the capture with the new inputs' memory.
 * This file deals in tensors: checking inputs against the capture,
 * making them realized and contiguous, and wrapping the outputs' memory
 * in new tensors; the engine deals in buffers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"

/* What the capture saw of one input or output. */
typedef struct sig {
	size_t ndim;
	int64_t shape[TG_MAX_DIMS];
	tg_dtype dtype;
	tg_dev *dev;
} sig;

struct tg_jit {
	tg_jit_fn fn;
	void *ctx;
	pthread_mutex_t lock;   /* one call at a time */
	uint64_t calls;
	tg_plan *plan;          /* NULL until captured */
	size_t nin, nout;       /* the capture's */
	sig *ins, *outs;
	tg_buffer **inbufs, **outbufs;  /* scratch, nin and nout long */
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

static void forget(tg_jit *j)
{
	tg_plan_free(j->plan);
	free(j->ins);
	free(j->outs);
	free(j->inbufs);
	free(j->outbufs);
	j->plan = NULL;
	j->ins = j->outs = NULL;
	j->inbufs = j->outbufs = NULL;
	j->nin = j->nout = 0;
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

static void sig_of(const tg_tensor *t, sig *s)
{
	s->ndim = t->ndim;
	memcpy(s->shape, t->shape, sizeof s->shape);
	s->dtype = t->lazy->dtype;
	s->dev = t->lazy->dev;
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

/* The input against what the capture saw. */
static int check_input(const tg_jit *j, const tg_tensor *t, size_t i)
{
	const sig *s = &j->ins[i];
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
	return 0;
}

/* Inputs as plain tensors (made in the open scope where needed) and
 * their buffers; two inputs may not share memory, since a replay could
 * not tell their uses apart. */
static int prepare(tg_tensor *const *in, size_t nin, tg_tensor **p,
                   tg_buffer **bufs)
{
	size_t i, k;

	for (i = 0; i < nin; i++) {
		tg_lazy *c;

		p[i] = in[i];
		if (!tg_lazy_is_plain(in[i]->lazy)) {
			c = tg_lazy_contiguous(in[i]->lazy);
			if (!c || tg_lazy_realize(&c, 1)) {
				tg_lazy_unref(c);
				return tg_error_prefix("jit_call: input %zu", i);
			}
			if (!(p[i] = tg_t_wrap(c)))
				return tg_last_status();
		}
		bufs[i] = tg_lazy_base(p[i]->lazy)->buf;
		for (k = 0; k < i; k++)
			if (bufs[k] == bufs[i])
				return tg_error(TG_EINVAL, "jit_call: inputs %zu "
				                "and %zu share memory", k, i);
	}
	return 0;
}

/* Captures record buffers of single devices; a tensor on a device
 * group has none of its own. */
static int multi_refused(const char *what, size_t i, const tg_tensor *t)
{
	return tg_error(TG_EUNSUPPORTED, "jit: %s %zu is on the device group "
	                "%s; the JIT does not capture multi-device tensors "
	                "yet (call the step without it)", what, i,
	                tg_dev_name(t->lazy->dev));
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
	for (i = 0; i < nout; i++) {
		if (!out[i])
			return tg_error(TG_EINVAL, "jit: the step left output %zu "
			                "NULL", i);
		if (tg_lazy_is_multi(out[i]->lazy))
			return multi_refused("output", i, out[i]);
	}
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

/* A new tensor over buf shaped as s (zeros when the shape is empty and
 * so there is no memory), in the caller's scope. */
static tg_tensor *wrap(tg_buffer *buf, const sig *s)
{
	tg_scalar zero = { 0 };

	if (!buf)
		return tg_t_wrap(tg_lazy_const(s->dev, s->dtype, zero, s->ndim,
		                               s->shape));
	if (tg_dims_sym(s->ndim, s->shape))
		return tg_t_wrap(wrap_sym(buf, s));
	return tg_t_wrap(tg_lazy_from_buffer(buf, s->ndim, s->shape));
}

/* out[i] = wrap(bufs[i]) in the caller's scope: all or none (made in
 * a scope of their own, which drops them on a failure). */
static int wrap_all(tg_buffer *const *bufs, const sig *sigs,
                    tg_tensor **out, size_t nout)
{
	size_t i;
	int rc = 0;

	tg_scope_begin();
	for (i = 0; i < nout && !rc; i++)
		if (!(out[i] = wrap(bufs[i], &sigs[i])))
			rc = tg_last_status();
	if (!rc)
		rc = tg_t_keep_all(out, nout);
	tg_scope_end();
	if (rc)
		for (i = 0; i < nout; i++)
			out[i] = NULL;
	return rc;
}

/* -------------------------------------------------------------- calls */

/* The step's outputs realized contiguous, their buffers referenced
 * (NULL for an empty shape) and their shapes recorded. */
static int finish_outputs(tg_tensor *const *out, size_t nout,
                          tg_buffer **bufs, sig *sigs)
{
	tg_lazy **c = calloc(nout ? nout : 1, sizeof *c);
	size_t i;
	int rc = 0;

	if (!c)
		return tg_error_oom("jit");
	for (i = 0; i < nout && !rc; i++)
		if (!(c[i] = tg_lazy_contiguous(out[i]->lazy)))
			rc = tg_last_status();
	if (!rc)
		rc = tg_lazy_realize(c, nout);
	for (i = 0; i < nout; i++) {
		bufs[i] = NULL;
		if (!rc) {
			sig_of(out[i], &sigs[i]);
			bufs[i] = tg_buffer_ref(tg_lazy_base(c[i])->buf);
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
	tg_buffer **bufs = calloc(nout ? nout : 1, sizeof *bufs);
	sig *sigs = calloc(nout ? nout : 1, sizeof *sigs);
	int rc = bufs && sigs ? 0 : tg_error_oom("jit");

	if (!rc) {
		tg_scope_begin();
		if (!(rc = step(j, in, nin, out, nout)))
			rc = finish_outputs(out, nout, bufs, sigs);
		tg_scope_end();
	}
	if (!rc)
		rc = wrap_all(bufs, sigs, out, nout);
	unref_all(bufs, nout);
	free(bufs);
	free(sigs);
	return rc;
}

static int alloc_capture(tg_jit *j, size_t nin, size_t nout)
{
	j->nin = nin;
	j->nout = nout;
	j->ins = calloc(nin ? nin : 1, sizeof *j->ins);
	j->outs = calloc(nout ? nout : 1, sizeof *j->outs);
	j->inbufs = calloc(nin ? nin : 1, sizeof *j->inbufs);
	j->outbufs = calloc(nout ? nout : 1, sizeof *j->outbufs);
	if (!j->ins || !j->outs || !j->inbufs || !j->outbufs)
		return tg_error_oom("jit: capture");
	return 0;
}

/* Runs the step with a capture open; the inputs' buffers get a
 * reference each, which the caller drops. */
static int run_captured(tg_jit *j, tg_tensor *const *in, tg_capture **cap)
{
	tg_tensor **p = calloc(j->nin ? j->nin : 1, sizeof *p);
	tg_tensor **out = calloc(j->nout ? j->nout : 1, sizeof *out);
	size_t i;
	int rc = p && out ? 0 : tg_error_oom("jit: capture");

	tg_scope_begin();
	if (!rc && !(rc = prepare(in, j->nin, p, j->inbufs))) {
		for (i = 0; i < j->nin; i++) {
			sig_of(in[i], &j->ins[i]);
			tg_buffer_ref(j->inbufs[i]);
		}
		if (!(rc = tg_capture_begin())) {
			if (!(rc = step(j, p, j->nin, out, j->nout)))
				rc = finish_outputs(out, j->nout, j->outbufs,
				                    j->outs);
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
	int rc;

	if (!(rc = alloc_capture(j, nin, nout)))
		rc = run_captured(j, in, &cap);
	if (!rc && !(j->plan = tg_plan_new(cap, j->inbufs, nin, j->outbufs,
	                                   nout, native)))
		rc = tg_error_prefix("jit: capture");
	else if (rc)
		tg_capture_free(cap);
	if (!rc)
		rc = wrap_all(j->outbufs, j->outs, out, nout);
	unref_all(j->inbufs, nin);
	unref_all(j->outbufs, nout);
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

	if (nin != j->nin || nout != j->nout)
		return tg_error(TG_EINVAL, "jit_call: %zu inputs and %zu "
		                "outputs, the capture had %zu and %zu", nin,
		                nout, j->nin, j->nout);
	for (i = 0; i < nin && !rc; i++)
		rc = check_input(j, in[i], i);
	if (rc)
		return rc;
	if (!(p = calloc(nin ? nin : 1, sizeof *p)))
		return tg_error_oom("jit_call");
	tg_scope_begin();
	if (!(rc = prepare(in, nin, p, j->inbufs)) &&
	    !(rc = tg_plan_run(j->plan, j->inbufs, j->outbufs))) {
		/* an output may be an input whose memory the scope frees */
		for (i = 0; i < nout; i++)
			tg_buffer_ref(j->outbufs[i]);
		held = 1;
	}
	tg_scope_end();
	free(p);
	if (held) {
		rc = wrap_all(j->outbufs, j->outs, out, nout);
		unref_all(j->outbufs, nout);
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
	for (i = 0; i < nin; i++)
		if (tg_lazy_is_multi(in[i]->lazy))
			return multi_refused("input", i, in[i]);
	return 0;
}

int tg_jit_call(tg_jit *j, tg_tensor *const *in, size_t nin,
                tg_tensor **out, size_t nout)
{
	active me = { j, running };
	long mode = tg_setting_int(TG_KEY_JIT);
	size_t i;
	int rc;

	for (i = 0; out && i < nout; i++)
		out[i] = NULL;
	if ((rc = check_call(j, in, nin, out, nout)))
		return rc;
	pthread_mutex_lock(&j->lock);
	running = &me;
	if (mode == 0 || j->calls == 0)
		rc = run_eager(j, in, nin, out, nout);
	else if (!j->plan)
		rc = capture(j, in, nin, out, nout, mode != 2);
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

/*
 * engine/capture.c - recording what a step runs, and replaying it
 * (tinygrad's CapturedJit: the jit_cache of ExecItems, the input
 * replacement table and the graph runners).
 *
 * While a capture is open on a thread, realize records each kernel it
 * launches (program, buffers, geometry) and each copy.  A plan turns
 * the record into replayable steps: runs of kernels on one device
 * become one graph (device/graph.c), copies stay copies.  Every buffer
 * argument is either an input, substituted per replay through the
 * slots that read it, or a buffer the plan holds: weights the step read
 * or updated in place, and everything the step allocated, which the
 * plan reuses from call to call.  A kernel's variable values are read
 * from their tg_variables at every replay (a variable is named by the
 * kernel; the record keeps a reference to the live variable of that
 * name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "device/device.h"
#include "shape/shape.h"

typedef struct cap_item {
	tg_program *prog;   /* NULL for a copy: bufs[0] <- bufs[1] */
	size_t nbufs, nouts;
	tg_buffer **bufs;   /* owned references */
	size_t global[3], local[3];
	size_t nvals;
	int64_t *vals;      /* owned: the values of the capture's launch */
	tg_variable **vars; /* owned references: whose values they are */
} cap_item;

struct tg_capture {
	TG_VEC(cap_item) items;
	int status;
};

static _Thread_local tg_capture *open_capture;

/* ----------------------------------------------------------- recording */

int tg_capture_begin(void)
{
	if (open_capture)
		return tg_error(TG_EINVAL, "jit: a capture is already open on "
		                "this thread (a captured step called another "
		                "captured step)");
	if (!(open_capture = calloc(1, sizeof *open_capture)))
		return tg_error_oom("jit: capture");
	return 0;
}

int tg_capturing(void)
{
	return open_capture != NULL;
}

static void item_free(cap_item *it)
{
	size_t k;

	for (k = 0; k < it->nbufs; k++)
		tg_buffer_unref(it->bufs[k]);
	free(it->bufs);
	for (k = 0; k < it->nvals; k++)
		tg_variable_free(it->vars[k]);
	free(it->vars);
	free(it->vals);
}

void tg_capture_free(tg_capture *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->items.n; i++)
		item_free(&c->items.v[i]);
	TG_VEC_FREE(&c->items);
	free(c);
}

tg_capture *tg_capture_end(void)
{
	tg_capture *c = open_capture;

	open_capture = NULL;
	if (c && c->status) {
		int rc = c->status;

		tg_capture_free(c);
		if (rc == TG_ENOMEM)  /* else the message is the record's */
			tg_error_oom("jit: capture");
		return NULL;
	}
	return c;
}

size_t tg_capture_count(const tg_capture *c)
{
	return c ? c->items.n : 0;
}

static void record(cap_item *it, tg_buffer *const *bufs)
{
	tg_capture *c = open_capture;
	size_t k;

	if (!(it->bufs = malloc((it->nbufs ? it->nbufs : 1) *
	                        sizeof *it->bufs)) ||
	    TG_VEC_PUSH(&c->items, *it)) {
		it->nbufs = 0;
		item_free(it);
		c->status = tg_error_oom("jit: capture");
		return;
	}
	for (k = 0; k < it->nbufs; k++)
		c->items.v[c->items.n - 1].bufs[k] = tg_buffer_ref(bufs[k]);
}

/* The values of a kernel's launch and the live variables they come
 * from, into it. */
static int record_vals(cap_item *it, const tg_launch_args *a,
                       char *const *names)
{
	size_t k;

	if (!a->nvals)
		return 0;
	if (!(it->vals = malloc(a->nvals * sizeof *it->vals)) ||
	    !(it->vars = calloc(a->nvals, sizeof *it->vars)))
		return tg_error_oom("jit: capture");
	memcpy(it->vals, a->vals, a->nvals * sizeof *it->vals);
	for (k = 0; k < a->nvals; k++, it->nvals++)
		if (!(it->vars[k] = tg_variable_find(names[k])))
			return tg_error(TG_EINVAL, "jit: capture: a kernel reads "
			                "the variable '%s', and no live "
			                "tg_variable has that name", names[k]);
	return 0;
}

void tg_capture_kernel(tg_program *prog, const tg_launch_args *a,
                       size_t nouts, char *const *vars)
{
	cap_item it = { .prog = prog, .nbufs = a->nbufs, .nouts = nouts };
	int rc;

	if (!open_capture || open_capture->status)
		return;
	memcpy(it.global, a->global, sizeof it.global);
	memcpy(it.local, a->local, sizeof it.local);
	if ((rc = record_vals(&it, a, vars))) {
		it.nbufs = 0;
		item_free(&it);
		open_capture->status = rc;
		return;
	}
	record(&it, a->bufs);
}

void tg_capture_copy(tg_buffer *dst, tg_buffer *src)
{
	cap_item it = { .nbufs = 2, .nouts = 1 };
	tg_buffer *b[2] = { dst, src };

	if (open_capture && !open_capture->status)
		record(&it, b);
}

/* --------------------------------------------------------------- plans */

/* Where an argument's buffer comes from: plan buffer r when r >= 0,
 * input -r - 1 when r < 0. */
typedef int32_t plan_ref;
#define PLAN_NONE INT32_MIN  /* an output with no memory (empty shape) */

/* Argument `arg` of launch `launch` of the graph of step `step`. */
typedef struct slot {
	uint32_t step, launch, arg;
} slot;
typedef TG_VEC(slot) slot_vec;

/* Value `arg` of launch `launch` of step `step` comes from var. */
typedef struct var_slot {
	slot at;
	tg_variable *var;   /* owned reference */
} var_slot;

typedef struct plan_step {
	tg_graph *graph;    /* a run of kernels on one device; NULL: copy */
	plan_ref dst, src;  /* a copy */
} plan_step;

typedef struct plan_buf {
	tg_buffer *buf;     /* owned reference */
	slot_vec slots;     /* the graph arguments that are this buffer */
	int written_first;  /* its first user writes it without reading */
	int swap;           /* an output nobody else holds: see swap() */
} plan_buf;

struct tg_plan {
	TG_VEC(plan_buf) bufs;
	size_t nin, nout;
	slot_vec *in_slots;     /* per input */
	TG_VEC(plan_step) steps;
	TG_VEC(var_slot) vars;
	plan_ref *outs;
	tg_plan_info info;
};

/* What tg_plan_new needs on the way. */
typedef struct builder {
	tg_plan *p;
	tg_buffer *const *ins;
	tg_ptrmap index;        /* buffer -> 1 + plan index */
	int status;
} builder;

void tg_plan_free(tg_plan *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->steps.n; i++)
		tg_graph_free(p->steps.v[i].graph);
	TG_VEC_FREE(&p->steps);
	for (i = 0; i < p->vars.n; i++)
		tg_variable_free(p->vars.v[i].var);
	TG_VEC_FREE(&p->vars);
	for (i = 0; i < p->bufs.n; i++) {
		tg_buffer_unref(p->bufs.v[i].buf);
		TG_VEC_FREE(&p->bufs.v[i].slots);
	}
	TG_VEC_FREE(&p->bufs);
	for (i = 0; p->in_slots && i < p->nin; i++)
		TG_VEC_FREE(&p->in_slots[i]);
	free(p->in_slots);
	free(p->outs);
	free(p);
}

static void fail_oom(builder *b)
{
	if (!b->status)
		b->status = tg_error_oom("jit: plan");
}

/* The ref of buffer buf, making it a plan buffer when it is new;
 * `writes` says whether this first use writes it without reading. */
static plan_ref ref_of(builder *b, tg_buffer *buf, int writes)
{
	plan_buf pb = { .buf = buf, .written_first = writes };
	uintptr_t idx;
	size_t k;

	for (k = 0; k < b->p->nin; k++)
		if (b->ins[k] == buf)
			return -(plan_ref)k - 1;
	if ((idx = (uintptr_t)tg_ptrmap_get(&b->index, buf)))
		return (plan_ref)(idx - 1);
	if (TG_VEC_PUSH(&b->p->bufs, pb)) {
		fail_oom(b);
		return 0;
	}
	if (tg_ptrmap_put(&b->index, buf,
	                  (void *)(uintptr_t)b->p->bufs.n) < 0) {
		b->p->bufs.n--;  /* holds no reference yet: not the plan's */
		fail_oom(b);
		return 0;
	}
	tg_buffer_ref(buf);
	return (plan_ref)(b->p->bufs.n - 1);
}

/* Whether item `it` writes bufs[k] without reading it first: an
 * output that is not also one of its inputs. */
static int writes_only(const cap_item *it, size_t k)
{
	size_t j;

	if (k >= it->nouts)
		return 0;
	for (j = it->nouts; j < it->nbufs; j++)
		if (it->bufs[j] == it->bufs[k])
			return 0;
	return 1;
}

static void add_slot(builder *b, plan_ref r, slot s)
{
	slot_vec *v;

	if (b->status)  /* r is no ref then (ref_of failed) */
		return;
	v = r < 0 ? &b->p->in_slots[-r - 1] : &b->p->bufs.v[r].slots;
	if (TG_VEC_PUSH(v, s))
		fail_oom(b);
}

static void add_var(builder *b, slot at, tg_variable *v)
{
	var_slot vs = { at, tg_variable_ref(v) };

	if (TG_VEC_PUSH(&b->p->vars, vs)) {
		tg_variable_free(v);
		fail_oom(b);
	}
}

/* Items [first, end) are kernels on one device: one graph step. */
static void add_graph(builder *b, const cap_item *items, size_t first,
                      size_t end, int native)
{
	size_t n = end - first, i, k;
	tg_program **progs = calloc(n, sizeof *progs);
	tg_launch_args *args = calloc(n, sizeof *args);
	plan_step st = { 0 };
	uint32_t step = (uint32_t)b->p->steps.n;

	if (!progs || !args) {
		fail_oom(b);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const cap_item *it = &items[first + i];

		progs[i] = it->prog;
		args[i] = (tg_launch_args){ .bufs = it->bufs,
		                            .nbufs = it->nbufs,
		                            .vals = it->vals,
		                            .nvals = it->nvals };
		for (k = 0; k < it->nvals && !b->status; k++)
			add_var(b, (slot){ step, (uint32_t)i, (uint32_t)k },
			        it->vars[k]);
		memcpy(args[i].global, it->global, sizeof it->global);
		memcpy(args[i].local, it->local, sizeof it->local);
		for (k = 0; k < it->nbufs && !b->status; k++)
			add_slot(b, ref_of(b, it->bufs[k], writes_only(it, k)),
			         (slot){ step, (uint32_t)i, (uint32_t)k });
	}
	if (b->status)
		goto out;
	if (!(st.graph = tg_graph_new(progs, args, n, native)))
		b->status = tg_last_status();
	else if (TG_VEC_PUSH(&b->p->steps, st)) {
		tg_graph_free(st.graph);
		fail_oom(b);
	} else {
		b->p->info.kernels += n;
		b->p->info.graphs++;
		b->p->info.native_graphs += tg_graph_native(st.graph);
	}
out:
	free(progs);
	free(args);
}

static void add_copy(builder *b, const cap_item *it)
{
	plan_step st = { .src = ref_of(b, it->bufs[1], 0) };

	st.dst = ref_of(b, it->bufs[0], it->bufs[0] != it->bufs[1]);
	if (!b->status && TG_VEC_PUSH(&b->p->steps, st))
		fail_oom(b);
	b->p->info.copies++;
}

static void add_steps(builder *b, const tg_capture *c, int native)
{
	size_t i = 0, j;

	while (i < c->items.n && !b->status) {
		const cap_item *it = &c->items.v[i];

		if (!it->prog) {
			add_copy(b, it);
			i++;
			continue;
		}
		for (j = i + 1; j < c->items.n && c->items.v[j].prog &&
		     tg_program_dev(c->items.v[j].prog) ==
		     tg_program_dev(it->prog); j++)
			;
		add_graph(b, c->items.v, i, j, native);
		i = j;
	}
}

/* Marks the outputs a replay may give new memory: written before read
 * (so a new buffer needs no old contents) and held by nobody but the
 * plan and the caller's references to the outputs. */
static void mark_swaps(tg_plan *p, tg_buffer *const *outs)
{
	size_t i, j;

	for (i = 0; i < p->nout; i++) {
		plan_buf *pb;
		int held = 1;

		if (p->outs[i] < 0)
			continue;
		pb = &p->bufs.v[p->outs[i]];
		for (j = 0; j < p->nout; j++)
			held += outs[j] == pb->buf;
		pb->swap = pb->written_first &&
		           tg_buffer_refcount(pb->buf) == held;
	}
}

static void sum_info(tg_plan *p, int debug)
{
	size_t i;

	p->info.buffers = p->bufs.n;
	for (i = 0; i < p->bufs.n; i++)
		p->info.bytes += tg_buffer_nbytes(p->bufs.v[i].buf);
	if (debug >= 1)
		fprintf(stderr, "jit: captured %zu kernels and %zu copies in "
		        "%zu graphs (%zu native), %zu buffers, %.2f MB\n",
		        p->info.kernels, p->info.copies, p->info.graphs,
		        p->info.native_graphs, p->info.buffers,
		        p->info.bytes / 1e6);
}

tg_plan *tg_plan_new(tg_capture *c, tg_buffer *const *ins, size_t nin,
                     tg_buffer *const *outs, size_t nout, int native)
{
	builder b = { .ins = ins };
	size_t i;

	if (!(b.p = calloc(1, sizeof *b.p)) ||
	    !(b.p->in_slots = calloc(nin ? nin : 1, sizeof *b.p->in_slots)) ||
	    !(b.p->outs = calloc(nout ? nout : 1, sizeof *b.p->outs))) {
		fail_oom(&b);
		goto out;
	}
	b.p->nin = nin;
	b.p->nout = nout;
	add_steps(&b, c, native);
	for (i = 0; i < nout && !b.status; i++)
		b.p->outs[i] = outs[i] ? ref_of(&b, outs[i], 0) : PLAN_NONE;
out:
	tg_ptrmap_free(&b.index);
	tg_capture_free(c);
	if (b.status) {
		tg_plan_free(b.p);
		return NULL;
	}
	mark_swaps(b.p, outs);
	sum_info(b.p, tg_debug_level());
	return b.p;
}

/* ------------------------------------------------------------- replays */

static tg_buffer *resolve(const tg_plan *p, tg_buffer *const *ins,
                          plan_ref r)
{
	if (r == PLAN_NONE)
		return NULL;
	return r < 0 ? ins[-r - 1] : p->bufs.v[r].buf;
}

/* Puts b in every graph argument of v. */
static int set_slots(tg_plan *p, const slot_vec *v, tg_buffer *b)
{
	size_t i;
	int rc;

	for (i = 0; i < v->n; i++)
		if ((rc = tg_graph_set_buffer(p->steps.v[v->v[i].step].graph,
		                              v->v[i].launch, v->v[i].arg, b)))
			return rc;
	return 0;
}

/* Gives an output new memory when a caller still holds the old (the
 * previous call's output tensors are alive), so a replay never
 * overwrites a result the caller kept. */
static int swap(tg_plan *p, plan_buf *pb)
{
	tg_buffer *nb;
	int rc;

	if (!pb->swap || tg_buffer_refcount(pb->buf) == 1)
		return 0;
	nb = tg_buffer_new(tg_buffer_dev(pb->buf), tg_buffer_count(pb->buf),
	                   tg_buffer_dtype(pb->buf));
	if (!nb)
		return tg_last_status();
	if ((rc = tg_buffer_allocate(nb))) {
		tg_buffer_unref(nb);
		return rc;
	}
	/* cannot fail: nb is allocated and on the graph's device */
	(void)set_slots(p, &pb->slots, nb);
	tg_buffer_unref(pb->buf);
	pb->buf = nb;
	return 0;
}

/* Gives each kernel its variables' values now. */
static void place_vals(tg_plan *p)
{
	for (size_t i = 0; i < p->vars.n; i++) {
		const var_slot *v = &p->vars.v[i];

		tg_graph_set_val(p->steps.v[v->at.step].graph, v->at.launch,
		                 v->at.arg, tg_variable_value(v->var));
	}
}

/* Puts the inputs in their slots, checking devices (the caller checked
 * shapes and dtypes). */
static int place_inputs(tg_plan *p, tg_buffer *const *ins)
{
	size_t k;

	for (k = 0; k < p->nin; k++)
		if (set_slots(p, &p->in_slots[k], ins[k]))
			return tg_error_prefix("jit: input %zu", k);
	return 0;
}

static int run_steps(tg_plan *p, tg_buffer *const *ins)
{
	size_t i;
	int rc;

	for (i = 0; i < p->steps.n; i++) {
		plan_step *st = &p->steps.v[i];

		if (st->graph)
			rc = tg_graph_run(st->graph);
		else {
			tg_buffer *dst = resolve(p, ins, st->dst);
			int peer;

			if (!(rc = tg_buffer_transfer(dst, resolve(p, ins,
			                                            st->src),
			                              &peer)))
				tg_counters_copy(tg_buffer_nbytes(dst), peer);
		}
		if (rc)
			return tg_error_prefix("jit: replay step %zu of %zu", i,
			                       p->steps.n);
	}
	return 0;
}

int tg_plan_run(tg_plan *p, tg_buffer *const *ins, tg_buffer **outs)
{
	size_t i;
	int rc = 0;

	tg_engine_lock();
	for (i = 0; i < p->nout && !rc; i++)
		if (p->outs[i] >= 0)
			rc = swap(p, &p->bufs.v[p->outs[i]]);
	if (!rc)
		rc = place_inputs(p, ins);
	if (!rc) {
		place_vals(p);
		rc = run_steps(p, ins);
	}
	for (i = 0; i < p->nout && !rc; i++)
		outs[i] = resolve(p, ins, p->outs[i]);
	tg_engine_unlock();
	return rc;
}

void tg_plan_get_info(const tg_plan *p, tg_plan_info *out)
{
	*out = p->info;
}

/*
 * tensor/autograd.c - reverse-mode gradients (tinygrad's function.py and
 * Tensor.backward, mid-2024).
 *
 * Gradients are recorded at the level of the tensor primitives: every
 * ALU op, reduce, movement op, cast, contiguous and copy (the lazy ops
 * of primitives.c) records, when an input needs a gradient, a node
 * (tg_fn) on its output: the op, its inputs (tensor references) and the
 * lazy values its gradient needs.  Every composite op of tg/tg.h is made
 * of these primitives, so each gets its gradient from theirs, as in
 * tinygrad where Tensor methods are built from the 30 Functions.
 *
 * requires_grad is tinygrad's tri-state: -1 (None: not yet decided; an
 * optimizer turns it on for its parameters), 0 or 1.  An op's output
 * needs a gradient (1) when an input does; else it is None when an
 * input is None; else 0.  Only outputs that need one get a node.
 *
 * tg_backward walks the nodes from the output in reverse topological
 * order, computes each input's gradient with tensor ops (gradient
 * recording off meanwhile), adds it to that input's .grad, and drops the
 * node (tinygrad's `del t._ctx`): the graph behind a backward is freed
 * and a second backward through it is an error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "ir/ir.h"
#include "shape/shape.h"

#define LN2 0.69314718055994530942
#define PI_2 1.57079632679489661923

/* Per-thread switches: tinygrad's Tensor.no_grad and Tensor.training. */
static _Thread_local int no_grad_depth;
static _Thread_local int training;

int tg_set_grad_enabled(int on)
{
	int was = no_grad_depth == 0;

	no_grad_depth = on ? 0 : 1;
	return was;
}

int tg_is_grad_enabled(void) { return no_grad_depth == 0; }

int tg_set_training(int on)
{
	int was = training;

	training = on != 0;
	return was;
}

int tg_is_training(void) { return training; }

/* ------------------------------------------------------------ the node */

struct tg_fn {
	int kind;             /* enum tg_fn_kind */
	unsigned op;          /* ALU or reduce op */
	size_t n;             /* inputs */
	tg_tensor *in[3];     /* references */
	tg_lazy *x[3];        /* the inputs' values when the op ran */
	tg_lazy *ret;         /* the output's value (for EXP2, SQRT, ...) */
	size_t narg;
	int64_t arg[2 * TG_MAX_DIMS];
};

static void fn_free(tg_fn *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++) {
		tg_tensor_unref(f->in[i]);
		tg_lazy_unref(f->x[i]);
	}
	tg_lazy_unref(f->ret);
	free(f);
}

void tg_t_grad_release(tg_tensor *t)
{
	fn_free(t->ctx);
	t->ctx = NULL;
	tg_tensor_unref(t->grad);
	t->grad = NULL;
}

/* requires_grad of an op's output from its inputs' (see the top). */
static int8_t combine(const tg_tensor *const *in, size_t n)
{
	int8_t r = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (in[i]->requires_grad == 1)
			return 1;
		if (in[i]->requires_grad < 0)
			r = -1;
	}
	return r;
}

/* Whether a primitive's operands, result or argument (pads, shrink
 * pairs) have symbolic sizes: the gradient rules do integer math on
 * them. */
static int symbolic(const tg_tensor *out, const tg_tensor *const *in,
                    size_t n, const int64_t *arg, size_t narg)
{
	int sym = tg_dims_sym(out->ndim, out->shape) ||
	          (arg && tg_dims_sym(narg, arg));

	for (size_t i = 0; i < n && !sym; i++)
		sym = tg_dims_sym(in[i]->ndim, in[i]->shape);
	return sym;
}

tg_tensor *tg_t_record(tg_tensor *out, int kind, unsigned op,
                       const tg_tensor *const *in, size_t n,
                       const int64_t *arg, size_t narg)
{
	tg_fn *f;
	size_t i;

	if (!out)
		return NULL;
	out->requires_grad = combine(in, n);
	if (out->requires_grad != 1 || no_grad_depth)
		return out;
	if (symbolic(out, in, n, arg, narg)) {
		char b[160];

		tg_tensor_shape_str(out, b, sizeof b);
		tg_t_discard(out);
		return tg_t_fail(TG_EUNSUPPORTED, "autograd", "gradients "
		                 "through symbolic shapes are not supported (a "
		                 "%s result of a tensor that requires grad)", b);
	}
	if (!(f = calloc(1, sizeof *f)) || narg > TG_ARRAY_LEN(f->arg)) {
		free(f);
		tg_t_discard(out);
		return tg_t_fail(TG_ENOMEM, "autograd", "out of memory");
	}
	f->kind = kind;
	f->op = op;
	f->n = n;
	for (i = 0; i < n; i++) {
		f->in[i] = tg_tensor_ref((tg_tensor *)in[i]);
		f->x[i] = tg_lazy_ref(in[i]->lazy);
	}
	f->ret = tg_lazy_ref(out->lazy);
	if (narg)
		memcpy(f->arg, arg, narg * sizeof *arg);
	f->narg = narg;
	out->ctx = f;
	return out;
}

/* ------------------------------------------------------- the gradients */

/* A value saved in the node as a (scope-held) tensor. */
static tg_tensor *val(tg_lazy *l)
{
	return tg_t_wrap(tg_lazy_ref(l));
}

static tg_tensor *alu_grad(const tg_fn *f, size_t i, tg_tensor *g)
{
	tg_tensor *x = val(f->x[0]), *y = f->n > 1 ? val(f->x[1]) : NULL;

	switch (f->op) {
	case TG_NEG: return tg_neg(g);
	case TG_ADD: return g;
	case TG_MUL: return tg_mul(g, i ? x : y);
	case TG_EXP2: return tg_mul(g, tg_mul_s(val(f->ret), LN2));
	case TG_LOG2: return tg_div(g, tg_mul_s(x, LN2));
	case TG_SQRT: return tg_div(g, tg_mul_s(val(f->ret), 2));
	case TG_SIN: return tg_mul(g, tg_sin(tg_rsub_s(x, PI_2)));
	case TG_RECIP: {
		tg_tensor *r = val(f->ret);

		return tg_neg(tg_mul(g, tg_mul(r, r)));
	}
	case TG_MAX: {
		/* the larger input takes the gradient; ties split it */
		tg_tensor *a = i ? y : x, *b = i ? x : y;

		return tg_where(tg_gt(a, b), g,
		                tg_where(tg_eq(a, b), tg_mul_s(g, 0.5),
		                         tg_zeros_like(g)));
	}
	case TG_WHERE: {
		tg_tensor *z = tg_zeros_like(g);

		if (i == 0)
			return NULL;
		return i == 1 ? tg_where(x, g, z) : tg_where(x, z, g);
	}
	default: /* comparisons, bitwise, integer ops: no gradient */
		return NULL;
	}
}

/* tinygrad's Max backward: the gradient splits evenly between the
 * elements equal to the maximum. */
static tg_tensor *reduce_grad(const tg_fn *f, tg_tensor *g)
{
	tg_tensor *x = val(f->x[0]), *ones, *cnt;

	if (!x)  /* out of memory */
		return NULL;
	if (f->op == TG_ADD)
		return tg_expand(g, x->ndim, x->shape);
	ones = tg_cast(tg_eq(x, tg_expand(val(f->ret), x->ndim, x->shape)),
	               tg_tensor_dtype(g));
	cnt = tg_expand(tg_t_reduce(TG_ADD, ones, (uint32_t)f->arg[0]),
	                x->ndim, x->shape);
	return tg_mul(tg_div(ones, cnt), tg_expand(g, x->ndim, x->shape));
}

/* Undoes a stride: flips back, and spreads each element of a k-step
 * take over k slots (zeros between), cut to the input's size. */
static tg_tensor *stride_grad(const tg_fn *f, const tg_tensor *x,
                              tg_tensor *g)
{
	size_t a, d, n = x->ndim;
	int flip[TG_MAX_DIMS], nf = 0;

	for (a = 0; a < n; a++) {
		int64_t k = f->arg[a] < 0 ? -f->arg[a] : f->arg[a];
		int64_t s[TG_MAX_DIMS + 1], p[2 * (TG_MAX_DIMS + 1)] = { 0 };
		int64_t cut[2 * TG_MAX_DIMS];

		if (k == 1)
			continue;
		/* (.., m, ..) -> (.., m, 1, ..) -> pad (0, k-1) -> (.., m*k, ..) */
		for (d = 0; d < n; d++)
			s[d + (d > a)] = g->shape[d];
		s[a + 1] = 1;
		p[2 * (a + 1) + 1] = k - 1;
		g = tg_pad(tg_reshape(g, n + 1, s), n + 1, p, 0);
		if (!g)  /* out of memory: its shape is needed below */
			return NULL;
		for (d = 0; d < n; d++) {
			s[d] = d == a ? g->shape[a] * k : g->shape[d + (d > a)];
			cut[2 * d] = 0;
			cut[2 * d + 1] = d == a ? x->shape[a] : s[d];
		}
		g = tg_reshape(g, n, s);
		/* m*k >= size: the tail past the input is cut off */
		g = tg_shrink(g, n, cut);
	}
	for (a = 0; a < n; a++)
		if (f->arg[a] < 0)
			flip[nf++] = (int)a;
	return nf ? tg_flip(g, flip, (size_t)nf) : g;
}

/* Undoes a window (tg_t_window): input element y of an axis was read
 * by slot j of window y - j*d, so its gradient is the sum over j of
 * g[y - j*d, j].  With g padded by d*(k-1) on both sides of each
 * window axis, that is one view, g_pad[y - j*d + d*(k-1), j], summed
 * over the k axes (a view with no division: shape/index.c). */
static tg_tensor *window_grad(const tg_fn *f, const tg_tensor *x,
                              tg_tensor *g)
{
	size_t nk = f->narg / 2, lead = x->ndim - nk, n = g->ndim, i;
	int64_t pad[2 * TG_MAX_DIMS] = { 0 }, shape[TG_MAX_DIMS],
	        st[TG_MAX_DIMS], t[TG_MAX_DIMS], off = 0;
	uint32_t axes = 0;
	tg_dtype dt = tg_tensor_dtype(g);
	tg_tensor *p;

	for (i = 0; i < nk; i++)
		pad[2 * (lead + i)] = pad[2 * (lead + i) + 1] =
			f->arg[nk + i] * (f->arg[i] - 1);
	if (!(p = tg_pad(g, n, pad, 0)))
		return NULL;
	tg_t_row_major(p, t);
	for (i = 0; i < n; i++) {  /* (lead, in, k) */
		shape[i] = i < x->ndim ? x->shape[i] : p->shape[i];
		st[i] = t[i];
	}
	for (i = 0; i < nk; i++) {
		st[lead + nk + i] -= f->arg[nk + i] * t[lead + i];
		off += pad[2 * (lead + i)] * t[lead + i];
		axes |= 1u << (lead + nk + i);
	}
	p = tg_t_as_strided(p, n, shape, st, off);
	p = tg_t_reduce(TG_ADD, tg_cast(p, tg_dtype_sum_acc(dt)), axes);
	return tg_cast(tg_reshape(p, x->ndim, x->shape), dt);
}

static tg_tensor *move_grad(const tg_fn *f, tg_tensor *g)
{
	tg_tensor *x = val(f->x[0]);
	int64_t p[2 * TG_MAX_DIMS];
	int inv[TG_MAX_DIMS];
	size_t i;

	if (!x)  /* out of memory */
		return NULL;
	switch (f->kind) {
	case TG_FN_RESHAPE:
		return tg_reshape(g, x->ndim, x->shape);
	case TG_FN_EXPAND: {
		uint32_t axes = 0;

		for (i = 0; i < x->ndim; i++)
			if (x->shape[i] != g->shape[i])
				axes |= 1u << i;
		return tg_cast(tg_t_reduce(TG_ADD, tg_cast(g,
		               tg_dtype_sum_acc(tg_tensor_dtype(g))), axes),
		               tg_tensor_dtype(g));
	}
	case TG_FN_PERMUTE:
		for (i = 0; i < x->ndim; i++)
			inv[f->arg[i]] = (int)i;
		return tg_permute(g, x->ndim, inv);
	case TG_FN_PAD:   /* arg: the pads (before, after) per axis */
		for (i = 0; i < x->ndim; i++) {
			p[2 * i] = f->arg[2 * i];
			p[2 * i + 1] = f->arg[2 * i] + x->shape[i];
		}
		return tg_shrink(g, x->ndim, p);
	case TG_FN_SHRINK: /* arg: the kept [begin, end) per axis */
		for (i = 0; i < x->ndim; i++) {
			p[2 * i] = f->arg[2 * i];
			p[2 * i + 1] = x->shape[i] - f->arg[2 * i + 1];
		}
		return tg_pad(g, x->ndim, p, 0);
	case TG_FN_STRIDE:
		return stride_grad(f, x, g);
	case TG_FN_WINDOW:
		return window_grad(f, x, g);
	default:
		return NULL;
	}
}

/* The gradient of input i of f's output, given the output's gradient g
 * (scope-held; NULL when it has none). */
static tg_tensor *input_grad(const tg_fn *f, size_t i, tg_tensor *g)
{
	const tg_tensor *x = f->in[i];

	switch (f->kind) {
	case TG_FN_ALU: return alu_grad(f, i, g);
	case TG_FN_RELU:
		return tg_where(tg_gt(val(f->ret), tg_zeros_like(g)), g,
		                tg_zeros_like(g));
	case TG_FN_REDUCE: return reduce_grad(f, g);
	case TG_FN_CAST: return tg_cast(g, tg_tensor_dtype(x));
	case TG_FN_BITCAST: return NULL;
	case TG_FN_CONTIGUOUS: return g;
	case TG_FN_COPY: return tg_to(g, tg_tensor_dev(x));
	default: return move_grad(f, g);
	}
}

/* ------------------------------------------------------------ backward */

typedef TG_VEC(tg_tensor *) tvec;

/* The tensors with nodes reachable from t, inputs before outputs
 * (tinygrad's _deepwalk), iteratively. */
static int deepwalk(tg_tensor *t, tvec *order)
{
	tvec stack = { 0 };
	tg_ptrmap seen = { 0 }, done = { 0 };
	int rc = 0;

	if (TG_VEC_PUSH(&stack, t))
		rc = TG_ENOMEM;
	while (stack.n && !rc) {
		tg_tensor *x = stack.v[stack.n - 1];
		size_t i;

		if (!x->ctx || tg_ptrmap_has(&done, x)) {
			stack.n--;
			continue;
		}
		switch (tg_ptrmap_put(&seen, x, x)) {
		case 1:  /* first visit: its inputs go first */
			for (i = 0; i < x->ctx->n && !rc; i++)
				if (TG_VEC_PUSH(&stack, x->ctx->in[i]))
					rc = TG_ENOMEM;
			continue;
		case 0:  /* second visit: its inputs are done */
			break;
		default:  /* not recorded: it would never be visited */
			rc = TG_ENOMEM;
			continue;
		}
		stack.n--;
		/* held: dropping a node frees the tensors only it kept */
		if (tg_ptrmap_put(&done, x, x) < 0 || TG_VEC_PUSH(order, x))
			rc = TG_ENOMEM;
		else
			tg_tensor_ref(x);
	}
	TG_VEC_FREE(&stack);
	tg_ptrmap_free(&seen);
	tg_ptrmap_free(&done);
	return rc ? tg_error_oom("backward") : 0;
}

/* x.grad += g.  Called inside a scope: x keeps its own reference. */
static int accumulate(tg_tensor *x, tg_tensor *g)
{
	tg_tensor *sum = x->grad ? tg_add(x->grad, g) : g;

	if (!sum)
		return tg_error_prefix("backward");
	tg_tensor_ref(sum);
	tg_tensor_unref(x->grad);
	x->grad = sum;
	return 0;
}

/* Whether input i of f has a gradient at all (tinygrad's Functions
 * whose backward returns None: comparisons, bitwise and integer ops,
 * the condition of a where, bitcasts). */
static int has_grad(const tg_fn *f, size_t i)
{
	if (f->kind == TG_FN_BITCAST)
		return 0;
	if (f->kind != TG_FN_ALU)
		return 1;
	switch (f->op) {
	case TG_NEG: case TG_ADD: case TG_MUL: case TG_EXP2: case TG_LOG2:
	case TG_SQRT: case TG_SIN: case TG_RECIP: case TG_MAX:
		return 1;
	case TG_WHERE:
		return i > 0;
	default:
		return 0;
	}
}

/* Adds the gradients of t's node to its inputs' .grad. */
static int step(tg_tensor *t)
{
	tg_fn *f = t->ctx;
	size_t i;
	int rc = 0;

	for (i = 0; i < f->n && !rc; i++) {
		tg_tensor *g;

		if (f->in[i]->requires_grad != 1 || !has_grad(f, i))
			continue;
		tg_scope_begin();
		g = input_grad(f, i, t->grad);
		if (g && tg_tensor_dtype(g) != tg_tensor_dtype(f->in[i]))
			g = tg_cast(g, tg_tensor_dtype(f->in[i]));
		rc = g ? accumulate(f->in[i], g)
		       : tg_error_prefix("backward");
		tg_scope_end();
	}
	return rc;
}

int tg_backward(tg_tensor *t, const tg_tensor *gradient)
{
	tvec order = { 0 };
	char b1[160], b2[160];
	int was, rc;
	size_t i;

	if (TG_T_BAD(t, "backward"))
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (!t->ctx)
		return tg_error(TG_EINVAL, "backward: the tensor %s has no "
		                "graph (nothing it was made from requires a "
		                "gradient, or backward already ran through it)",
		                tg_tensor_shape_str(t, b1, sizeof b1));
	if (!gradient && tg_tensor_numel(t) != 1)
		return tg_error(TG_EINVAL, "backward: %s is not a scalar; pass "
		                "the gradient", tg_tensor_shape_str(t, b1,
		                                                     sizeof b1));
	if (gradient && (gradient->ndim != t->ndim ||
	                 memcmp(gradient->shape, t->shape,
	                        t->ndim * sizeof *t->shape)))
		return tg_error(TG_EINVAL, "backward: gradient %s for a tensor "
		                "of %s", tg_tensor_shape_str(gradient, b1,
		                                             sizeof b1),
		                tg_tensor_shape_str(t, b2, sizeof b2));
	if ((rc = deepwalk(t, &order))) {
		for (i = 0; i < order.n; i++)
			tg_tensor_unref(order.v[i]);
		TG_VEC_FREE(&order);
		return rc;
	}
	was = tg_set_grad_enabled(0);
	tg_scope_begin();
	tg_tensor_unref(t->grad);
	t->grad = tg_tensor_ref(gradient ? tg_cast(gradient, tg_tensor_dtype(t))
	                                 : tg_ones_like(t));
	rc = t->grad ? 0 : tg_last_status();
	tg_scope_end();
	for (i = order.n; i-- > 0 && !rc;) {
		tg_tensor *x = order.v[i];

		if (!x->grad)
			continue;  /* no path from t reaches it with a gradient */
		rc = step(x);
		fn_free(x->ctx);
		x->ctx = NULL;
	}
	tg_set_grad_enabled(was);
	for (i = 0; i < order.n; i++)
		tg_tensor_unref(order.v[i]);
	TG_VEC_FREE(&order);
	return rc;
}

/* ------------------------------------------------------ the public API */

int tg_requires_grad(const tg_tensor *t)
{
	return t ? t->requires_grad : 0;
}

int tg_set_requires_grad(tg_tensor *t, int on)
{
	if (TG_T_BAD(t, "set_requires_grad"))
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	t->requires_grad = on < 0 ? -1 : on != 0;
	return 0;
}

tg_tensor *tg_grad(const tg_tensor *t)
{
	return !TG_T_BAD(t, "grad") ? t->grad : NULL;
}

int tg_set_grad(tg_tensor *t, tg_tensor *g)
{
	char b1[160], b2[160];

	if (TG_T_BAD(t, "set_grad"))
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (g && (g->ndim != t->ndim ||
	          memcmp(g->shape, t->shape, t->ndim * sizeof *t->shape)))
		return tg_error(TG_EINVAL, "set_grad: gradient %s for a tensor "
		                "of %s", tg_tensor_shape_str(g, b1, sizeof b1),
		                tg_tensor_shape_str(t, b2, sizeof b2));
	tg_tensor_ref(g);
	tg_tensor_unref(t->grad);
	t->grad = g;
	return 0;
}

tg_tensor *tg_detach(const tg_tensor *t)
{
	tg_tensor *r;

	if (TG_T_BAD(t, "detach"))
		return NULL;
	r = tg_t_wrap(tg_lazy_ref(t->lazy));
	if (r)
		r->requires_grad = 0;
	return r;
}

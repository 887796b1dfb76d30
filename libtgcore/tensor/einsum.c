/*
 * tensor/einsum.c - Einstein summation (tinygrad's Tensor.einsum, with
 * numpy's ellipsis, implicit output and repeated labels).
 *
 * Each operand becomes a view over one shared list of axes, the output's
 * labels first and the summed ones after them: repeated labels inside an
 * operand take the diagonal (a reshape, pad and shrink), the axes are
 * permuted into the shared order, and missing or size-1 ones expanded.
 * The product of the views summed over the trailing axes is one kernel;
 * an einsum that sums nothing ("ij->ji") is a view with no kernel.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"

/* Letters take ids 0..51 in ASCII order (so sorting ids sorts the
 * letters, as numpy's implicit output does); ellipsis axis k, counted
 * from the left of the widest ellipsis, takes ELL + k. */
#define NLETTERS 52
#define ELL NLETTERS
#define NLABELS (NLETTERS + TG_MAX_DIMS)

/* One term of the formula: its labels and whether (and where) it
 * holds "...". */
struct term {
	int lab[TG_MAX_DIMS + 1];
	size_t n;   /* letters */
	int ell;    /* position of "..." among the letters, -1 none */
};

struct einsum {
	const char *formula;
	struct term in[TG_MAX_DIMS], out;
	size_t nin, nell; /* operands, dims of the widest ellipsis */
	int explicit_out;
	int64_t size[NLABELS];
	int order[NLABELS]; /* the shared axes: output labels, then summed */
	size_t nout, nall;
};

/* Sets "einsum: "<formula>": <message>" and returns -1. */
static int bad(const struct einsum *e, const char *fmt, ...) TG_PRINTF(2, 3);
static int bad(const struct einsum *e, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	tg_t_fail(TG_EINVAL, "einsum", "\"%s\": %s", e->formula, msg);
	return -1;
}

static int letter_id(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return 26 + c - 'a';
	return -1;
}

static char id_letter(int id)
{
	return (char)(id < 26 ? 'A' + id : 'a' + id - 26);
}

/* Parses one term from s up to a ',' , "->" or the end; spaces are
 * skipped.  Returns the end, or NULL after setting the error. */
static const char *parse_term(struct einsum *e, const char *s,
                              struct term *t)
{
	t->n = 0;
	t->ell = -1;
	for (; *s && *s != ',' && !(s[0] == '-' && s[1] == '>'); s++) {
		if (*s == ' ')
			continue;
		if (!strncmp(s, "...", 3) && t->ell < 0) {
			t->ell = (int)t->n;
			s += 2;
			continue;
		}
		if (letter_id(*s) < 0) {
			bad(e, "'%c' is not a letter, \"...\", ',' or \"->\"",
			    *s);
			return NULL;
		}
		if (t->n == TG_MAX_DIMS) {
			bad(e, "a term with more than %d labels", TG_MAX_DIMS);
			return NULL;
		}
		t->lab[t->n++] = letter_id(*s);
	}
	return s;
}

static int parse(struct einsum *e, size_t nx)
{
	const char *s = e->formula;

	for (;;) {
		if (e->nin == TG_MAX_DIMS)
			return bad(e, "more than %d operands", TG_MAX_DIMS);
		if (!(s = parse_term(e, s, &e->in[e->nin++])))
			return -1;
		if (*s != ',')
			break;
		s++;
	}
	if (*s == '-') {
		e->explicit_out = 1;
		if (!(s = parse_term(e, s + 2, &e->out)))
			return -1;
		if (*s)
			return bad(e, "a second \"->\" or a ',' in the output");
	}
	if (e->nin != nx)
		return bad(e, "%zu terms for %zu operands", e->nin, nx);
	return 0;
}

/* The labels of operand i's axes, its ellipsis expanded right-aligned
 * to the widest one. */
static void axis_labels(const struct einsum *e, const struct term *t,
                        size_t ndim, int *lab)
{
	size_t ne = t->ell < 0 ? 0 : ndim - t->n, j, k = 0;

	for (j = 0; j < t->n; j++) {
		if ((int)j == t->ell)
			for (; k < ne; k++)
				lab[j + k] = (int)(ELL + e->nell - ne + k);
		lab[j + k] = t->lab[j];
	}
	if (t->ell == (int)t->n)
		for (; k < ne; k++)
			lab[t->n + k] = (int)(ELL + e->nell - ne + k);
}

/* Checks every operand's rank, finds the ellipsis width and each
 * label's size (1 broadcasts against any size). */
static int sizes(struct einsum *e, tg_tensor *const *xs)
{
	int lab[TG_MAX_DIMS];
	size_t i, j;
	char b[160];

	for (i = 0; i < e->nin; i++) {
		const struct term *t = &e->in[i];

		if (!xs[i])
			return -1;
		if (t->ell < 0 ? xs[i]->ndim != t->n : xs[i]->ndim < t->n)
			return bad(e, "operand %zu %s has %zu dims for a term of "
			           "%zu labels%s", i, TG_T_SHAPE(xs[i], b),
			           xs[i]->ndim, t->n,
			           t->ell < 0 ? "" : " and \"...\"");
		if (t->ell >= 0 && xs[i]->ndim - t->n > e->nell)
			e->nell = xs[i]->ndim - t->n;
	}
	for (j = 0; j < NLABELS; j++)
		e->size[j] = -1;
	for (i = 0; i < e->nin; i++) {
		axis_labels(e, &e->in[i], xs[i]->ndim, lab);
		for (j = 0; j < xs[i]->ndim; j++) {
			int64_t have = e->size[lab[j]], n = xs[i]->shape[j];

			if (have < 0 || have == 1)
				e->size[lab[j]] = n;
			else if (n != 1 && n != have && lab[j] < ELL)
				return bad(e, "label '%c' is %lld in operand %zu "
				           "%s and %lld elsewhere",
				           id_letter(lab[j]), (long long)n, i,
				           TG_T_SHAPE(xs[i], b),
				           (long long)have);
			else if (n != 1 && n != have)
				return bad(e, "the \"...\" dims of operand %zu %s "
				           "don't broadcast with the others",
				           i, TG_T_SHAPE(xs[i], b));
		}
	}
	return 0;
}

/* The shared axis order: the output's labels (given, or numpy's: the
 * ellipsis, then the letters used once, sorted), then the summed ones
 * in id order. */
static int plan(struct einsum *e)
{
	int count[NLABELS] = { 0 }, in_out[NLABELS] = { 0 };
	size_t i, j;

	for (i = 0; i < e->nin; i++)
		for (j = 0; j < e->in[i].n; j++)
			count[e->in[i].lab[j]]++;
	if (!e->explicit_out) {
		e->out.ell = 0;
		for (j = 0; j < NLETTERS; j++)
			if (count[j] == 1)
				e->out.lab[e->out.n++] = (int)j;
	}
	for (j = 0; j < e->out.n; j++) {
		int l = e->out.lab[j];

		if (in_out[l])
			return bad(e, "label '%c' twice in the output",
			           id_letter(l));
		if (!count[l])
			return bad(e, "output label '%c' is in no operand",
			           id_letter(l));
		in_out[l] = 1;
	}
	e->nout = 0;
	for (j = 0; j <= e->out.n; j++) {
		size_t k;

		if ((int)j == e->out.ell)
			for (k = 0; k < e->nell; k++) {
				e->order[e->nout++] = (int)(ELL + k);
				in_out[ELL + k] = 1;
			}
		if (j < e->out.n)
			e->order[e->nout++] = e->out.lab[j];
	}
	e->nall = e->nout;
	for (j = 0; j < NLABELS; j++)
		if (e->size[j] >= 0 && !in_out[j])
			e->order[e->nall++] = (int)j;
	if (e->nall > TG_MAX_DIMS)
		return bad(e, "%zu distinct labels (at most %d)", e->nall,
		           TG_MAX_DIMS);
	return 0;
}

/* The diagonal of axes a < b (equal sizes n) of t, as axis a: both
 * moved last and merged, padded by n so that row i of (n, n+1) starts
 * at x[i][i], and column 0 kept.  A view. */
static tg_tensor *diagonal(const tg_tensor *t, size_t a, size_t b)
{
	int perm[TG_MAX_DIMS], back[TG_MAX_DIMS];
	int64_t sh[TG_MAX_DIMS], pairs[2 * TG_MAX_DIMS] = { 0 };
	int64_t n = t->shape[a];
	size_t nd = t->ndim, i, k = 0;
	tg_tensor *r;

	for (i = 0; i < nd; i++)
		if (i != a && i != b)
			perm[k++] = (int)i;
	perm[k++] = (int)a;
	perm[k++] = (int)b;
	r = tg_permute(t, nd, perm);
	r = tg_flatten(r, (int)nd - 2, (int)nd - 1);
	pairs[2 * (nd - 2) + 1] = n;
	r = tg_pad(r, nd - 1, pairs, 0);
	for (i = 0; i < nd - 2; i++)
		sh[i] = t->shape[perm[i]];
	sh[nd - 2] = n;
	sh[nd - 1] = n + 1;
	r = tg_reshape(r, nd, sh);
	for (i = 0; i < nd; i++) {
		pairs[2 * i] = 0;
		pairs[2 * i + 1] = i == nd - 1 ? 1 : sh[i];
	}
	r = tg_reshape(tg_shrink(r, nd, pairs), nd - 1, sh);
	/* the diagonal axis back to a's place */
	for (i = 0; i + 1 < nd; i++)
		back[i] = i < a ? (int)i : i == a ? (int)nd - 2 : (int)(i - 1);
	return tg_permute(r, nd - 1, back);
}

/* Operand x with axis labels lab[] as a view of the shared axes. */
static tg_tensor *align(const struct einsum *e, const tg_tensor *x,
                        int *lab)
{
	int64_t sh[TG_MAX_DIMS], full[TG_MAX_DIMS];
	int perm[TG_MAX_DIMS];
	size_t nd = x->ndim, i, j, k = 0;
	tg_tensor *r = (tg_tensor *)x;
	char b[160];

	for (i = 0; i < nd; i++)
		for (j = i + 1; j < nd; j++) {
			if (lab[i] != lab[j])
				continue;
			if (r->shape[i] != r->shape[j])
				return bad(e, "label '%c' repeats in operand %s "
				           "with sizes %lld and %lld",
				           id_letter(lab[i]), TG_T_SHAPE(x, b),
				           (long long)r->shape[i],
				           (long long)r->shape[j]),
				       (tg_tensor *)NULL;
			r = diagonal(r, i, j);
			memmove(lab + j, lab + j + 1, (nd - j - 1) * sizeof *lab);
			nd--;
			j--;
		}
	for (i = 0; i < e->nall; i++) {
		for (j = 0; j < nd && lab[j] != e->order[i]; j++)
			;
		sh[i] = j < nd ? r->shape[j] : 1;
		full[i] = e->size[e->order[i]];
		if (j < nd)
			perm[k++] = (int)j;
	}
	r = tg_permute(r, nd, perm);
	return tg_expand(tg_reshape(r, e->nall, sh), e->nall, full);
}

tg_tensor *tg_einsum(const char *formula, size_t n, tg_tensor *const *xs)
{
	struct einsum *e;
	int lab[TG_MAX_DIMS], red[TG_MAX_DIMS];
	tg_tensor *r = NULL;
	size_t i;

	if (!formula || (n && !xs) || !n || n > TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "einsum", "formula %s with %zu "
		                 "operands (1 to %d)", formula ? "given" : "NULL",
		                 n, TG_MAX_DIMS);
	for (i = 0; i < n; i++)
		if (!xs[i])
			return NULL;
	if (!(e = calloc(1, sizeof *e)))
		return tg_t_fail(TG_ENOMEM, "einsum", "out of memory");
	e->formula = formula;
	if (parse(e, n) || sizes(e, xs) || plan(e)) {
		free(e);
		return NULL;
	}
	tg_scope_begin();
	for (i = 0; i < n; i++) {
		tg_tensor *v;

		axis_labels(e, &e->in[i], xs[i]->ndim, lab);
		v = align(e, xs[i], lab);
		r = i ? tg_mul(r, v) : v;
		if (!r)
			break;
	}
	for (i = e->nout; r && i < e->nall; i++)
		red[i - e->nout] = (int)i;
	if (r && e->nall > e->nout)
		r = tg_sum(r, red, e->nall - e->nout, 0);
	r = tg_keep(r);
	tg_scope_end();
	free(e);
	return r;
}

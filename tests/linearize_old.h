/*
 * linearize_old.h - the linearizer as it was before the ready lists
 * (libtgcore/codegen/linearize.c at 7b596a5), kept verbatim as the
 * pre-change reference but for its name, old_linearize: test_linearize
 * compares the new one's output with it node for node, and
 * bench_linearize times it as the anchor.  It rescans every node at
 * each step and releases users by scanning all later nodes, which is
 * quadratic.  Do not fix it: it is the oracle.  Its static helpers keep
 * their names (range_bit, idx_of, acc_loops, nwait, find_inner,
 * lin_state, MAX_RANGES); a file that includes it must not define them.
 */
#ifndef TG_LINEARIZE_OLD_H
#define TG_LINEARIZE_OLD_H

#include <stdlib.h>
#include <string.h>

#include "../libtgcore/core.h"
#include "../libtgcore/ir/ir.h"

#define MAX_RANGES 64

typedef struct lin_state {
	tg_uop **topo;
	size_t n;
	uint32_t maxid;
	uint32_t *pos;      /* by id: topo index + 1, 0 when not under sink */
	uint64_t *deps;     /* by topo index: loops the node sits in */
	uint64_t *exports;  /* by topo index: loops users inherit */
	uint64_t *after;    /* by topo index: loops of the accumulators
	                       whose final values the node reads */
	tg_uop *ranges[MAX_RANGES];
	size_t nranges;
} lin_state;

static int range_bit(lin_state *st, const tg_uop *r)
{
	for (size_t i = 0; i < st->nranges; i++)
		if (st->ranges[i] == r)
			return (int)i;
	return -1;
}

static size_t idx_of(const lin_state *st, const tg_uop *u)
{
	return st->pos[u->id] - 1;
}

/* The loops of an accumulator (its RANGE sources). */
static uint64_t acc_loops(lin_state *st, const tg_uop *acc)
{
	uint64_t m = 0;

	for (uint32_t k = 1; k < acc->nsrc; k++) {
		int b = range_bit(st, acc->src[k]);
		if (b >= 0)
			m |= 1ull << b;
	}
	return m;
}

/* Sources that must be placed before u: a DEFINE_ACC waits only for its
 * initial value (its RANGEs open after it). */
static uint32_t nwait(const tg_uop *u)
{
	if (u->op == TG_DEFINE_ACC)
		return u->nsrc ? 1 : 0;
	return u->nsrc;
}

/* A ready pure node whose loops are all open but are not exactly the
 * open ones: it uses an outer and an inner loop of one nest but not the
 * loop between (a conv's index over channel and kernel x, not kernel
 * y).  Placed inside the open loops, it is recomputed per iteration of
 * the loop it skips, which is correct for a value.  st->n when none. */
static size_t find_inner(const lin_state *st, const uint8_t *done,
                         const uint32_t *pending, uint64_t open)
{
	for (size_t i = 0; i < st->n; i++) {
		const tg_uop *u = st->topo[i];

		/* not while a loop is open whose accumulator's final value
		 * it reads: that value exists only after the loop closes */
		if (done[i] || pending[i] || (st->deps[i] & ~open) ||
		    (st->after[i] & open))
			continue;
		if (u->op == TG_SINK || u->op == TG_RANGE ||
		    u->op == TG_STORE || u->op == TG_DEFINE_ACC ||
		    u->op == TG_PHI)
			continue;
		return i;
	}
	return st->n;
}

static int old_linearize(tg_ir *ir, tg_uop *sink, tg_uop ***out, size_t *nout)
{
	lin_state st;
	tg_uop **res = NULL;
	uint32_t *pending = NULL;
	uint32_t rcount[MAX_RANGES];
	uint8_t *done = NULL;
	tg_uop *stack[MAX_RANGES];
	size_t depth = 0, nres = 0, cap;
	int rc = TG_OK;

	memset(&st, 0, sizeof st);
	*out = NULL;
	*nout = 0;
	if (!sink)
		return tg_error(TG_EINVAL, "linearize: no sink");
	st.topo = tg_uop_toposort(sink, &st.n);
	if (!st.topo)
		return tg_error_oom("linearize");
	for (size_t i = 0; i < st.n; i++)
		if (st.topo[i]->id > st.maxid)
			st.maxid = st.topo[i]->id;
	st.pos = calloc((size_t)st.maxid + 1, sizeof *st.pos);
	st.deps = calloc(st.n, sizeof *st.deps);
	st.exports = calloc(st.n, sizeof *st.exports);
	st.after = calloc(st.n, sizeof *st.after);
	pending = calloc(st.n, sizeof *pending);
	done = calloc(st.n, 1);
	cap = st.n * 2 + 1;
	res = malloc(cap * sizeof *res);
	if (!st.pos || !st.deps || !st.exports || !st.after || !pending ||
	    !done || !res) {
		rc = tg_error_oom("linearize");
		goto fail;
	}
	for (size_t i = 0; i < st.n; i++) {
		st.pos[st.topo[i]->id] = (uint32_t)i + 1;
		if (st.topo[i]->op == TG_RANGE) {
			if (st.nranges == MAX_RANGES) {
				rc = tg_error(TG_EUNSUPPORTED,
				              "linearize: more than %d loops",
				              MAX_RANGES);
				goto fail;
			}
			st.ranges[st.nranges++] = st.topo[i];
		}
	}
	/* Dependencies, sources first. */
	for (size_t i = 0; i < st.n; i++) {
		tg_uop *u = st.topo[i];
		uint64_t d = 0;

		if (u->op == TG_DEFINE_ACC) {
			d = u->nsrc ? st.exports[idx_of(&st, u->src[0])] : 0;
		} else {
			for (uint32_t k = 0; k < u->nsrc; k++)
				d |= st.exports[idx_of(&st, u->src[k])];
		}
		for (uint32_t k = 0; k < u->nsrc; k++)
			st.after[i] |= st.after[idx_of(&st, u->src[k])];
		if (u->op == TG_PHI && u->nsrc >= 1 &&
		    u->src[0]->op == TG_DEFINE_ACC) {
			d |= acc_loops(&st, u->src[0]);
			st.after[i] |= acc_loops(&st, u->src[0]);
		}
		st.deps[i] = d;
		st.exports[i] = d;
		if (u->op == TG_RANGE)
			st.exports[i] |= 1ull << range_bit(&st, u);
		if (u->op == TG_PHI && u->nsrc >= 1 &&
		    u->src[0]->op == TG_DEFINE_ACC)
			st.exports[i] &= ~acc_loops(&st, u->src[0]);
	}
	/* An accumulator is reset inside the loops its PHIs sit in, minus
	 * its own. */
	for (size_t i = 0; i < st.n; i++) {
		tg_uop *u = st.topo[i];
		if (u->op == TG_PHI && u->nsrc >= 1 &&
		    u->src[0]->op == TG_DEFINE_ACC) {
			size_t a = idx_of(&st, u->src[0]);
			st.deps[a] |= st.deps[i] & ~acc_loops(&st, u->src[0]);
		}
	}
	memset(rcount, 0, sizeof rcount);
	for (size_t i = 0; i < st.n; i++) {
		tg_uop *u = st.topo[i];
		pending[i] = nwait(u);
		for (size_t b = 0; b < st.nranges; b++)
			if (st.deps[i] & (1ull << b))
				rcount[b]++;
	}
	/* The SINK is never placed. */
	{
		size_t left = 0;
		for (size_t i = 0; i < st.n; i++)
			if (st.topo[i]->op != TG_SINK)
				left++;
		while (left > 0) {
			uint64_t open = 0;
			size_t pick = st.n;

			for (size_t k = 0; k < depth; k++)
				open |= 1ull << range_bit(&st, stack[k]);
			for (size_t i = 0; i < st.n; i++) {
				tg_uop *u = st.topo[i];
				if (done[i] || pending[i] || u->op == TG_SINK ||
				    u->op == TG_RANGE || st.deps[i] != open)
					continue;
				pick = i;
				break;
			}
			if (pick == st.n && depth > 0 &&
			    rcount[range_bit(&st, stack[depth - 1])] == 0) {
				tg_uop *r = stack[--depth];
				tg_uop *end = tg_uop_new(ir, TG_ENDRANGE, TG_VOID,
				                         &r, 1, NULL);
				if (!end) {
					rc = tg_ir_status(ir) ? tg_ir_status(ir)
					                      : TG_ENOMEM;
					goto fail;
				}
				res[nres++] = end;
				continue;
			}
			/* a value that skips a loop of the open nest goes in
			 * before another loop opens: a loop that is ready but
			 * not next in this nest (a grouped reduce's second
			 * stage) must not open inside it */
			if (pick == st.n &&
			    (pick = find_inner(&st, done, pending, open)) < st.n)
				goto place;
			if (pick == st.n) {
				int64_t best = 0;
				for (size_t i = 0; i < st.n; i++) {
					tg_uop *u = st.topo[i];
					if (done[i] || pending[i] ||
					    u->op != TG_RANGE || (st.deps[i] & ~open))
						continue;
					if (pick == st.n || u->arg.v.i < best) {
						pick = i;
						best = u->arg.v.i;
					}
				}
				if (pick == st.n) {
					rc = tg_error(TG_EUNSUPPORTED,
					              "linearize: loops do not nest "
					              "(%zu nodes left)", left);
					goto fail;
				}
				stack[depth++] = st.topo[pick];
			}
place:
			/* place topo[pick] */
			done[pick] = 1;
			left--;
			res[nres++] = st.topo[pick];
			for (size_t b = 0; b < st.nranges; b++)
				if (st.deps[pick] & (1ull << b))
					rcount[b]--;
			/* release users: scan (graphs are small) */
			for (size_t i = pick + 1; i < st.n; i++) {
				tg_uop *u = st.topo[i];
				for (uint32_t k = 0; k < nwait(u); k++)
					if (u->src[k] == st.topo[pick])
						pending[i]--;
			}
		}
		while (depth > 0) {
			tg_uop *r = stack[--depth];
			tg_uop *end = tg_uop_new(ir, TG_ENDRANGE, TG_VOID, &r, 1,
			                         NULL);
			if (!end) {
				rc = tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
				goto fail;
			}
			res[nres++] = end;
		}
	}
	*out = res;
	*nout = nres;
	res = NULL;
fail:
	free(res);
	free(st.topo);
	free(st.pos);
	free(st.deps);
	free(st.exports);
	free(st.after);
	free(pending);
	free(done);
	return rc;
}

#endif

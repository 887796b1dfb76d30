/*
 * codegen/linearize.c - orders the lowered IR under a SINK into a
 * program (tinygrad's linearizer): RANGE opens a loop, ENDRANGE closes
 * it, and every node sits inside the loops it depends on.
 *
 * Dependencies: a node depends on the RANGEs its sources export.  A
 * RANGE exports itself (and what its bounds depend on); a PHI exports
 * its dependencies minus its accumulator's loops (after the loop the PHI
 * stands for the final value); a DEFINE_ACC depends on what its PHIs
 * depend on outside its own loops (it is reset there, before its loops
 * open).  Scheduling is greedy: place any ready node whose loops are
 * exactly the open ones (lowest topological position first), else close
 * the innermost loop when nothing left needs it, else place a value
 * whose loops are all open, deeper than it needs (find_inner), else
 * open the ready RANGE with the lowest loop number whose bounds depend
 * on no loop that is not open (lowering numbers loops outermost
 * first).
 * A graph whose loops cannot nest this way is refused
 * (TG_EUNSUPPORTED).
 *
 * Cost: no choice rescans the graph.  Placing a node releases its users
 * through a users table (CSR: counts, then offsets, by topological
 * index).  The ready nodes wait in buckets, one per distinct deps mask
 * (split by the after mask for the nodes find_inner may take), each a
 * min-heap of topological positions; the ready RANGEs are bits of a
 * mask (64 at most).  A placement looks at the tops of the buckets of
 * the open mask, or of every bucket (find_inner), or at the ready
 * RANGEs: about O(n log n + n * buckets), and the number of distinct
 * masks is small.  The choices and their tie-breaks are those of the
 * plain rescans this replaced (kept in tests/linearize_old.h as the
 * tests' oracle), so the order is the same for every graph: the
 * rendered source is a cache key.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

#define MAX_RANGES 64

/* Ready nodes (neither RANGE nor SINK) that share a deps mask and, for
 * those find_inner may pick, an after mask: a min-heap of their
 * topological positions, the first in program order on top. */
typedef struct bucket {
	uint64_t deps;
	uint64_t after;    /* 0 unless inner */
	int inner;         /* find_inner may pick its nodes */
	uint32_t *heap;    /* room for every node of the bucket */
	size_t len;
} bucket;

typedef struct lin_state {
	tg_ir *ir;
	tg_uop **topo;
	size_t n;
	uint32_t *pos;      /* by id: topo index + 1, 0 when not under sink */
	int8_t *bit;        /* by topo index: a RANGE's loop, else -1 */
	uint64_t *deps;     /* by topo index: loops the node sits in */
	uint64_t *exports;  /* by topo index: loops users inherit */
	uint64_t *after;    /* by topo index: loops of the accumulators
	                       whose final values the node reads */
	uint32_t *pending;  /* by topo index: sources not yet placed */
	size_t *uoff;       /* n + 1: users[uoff[i] .. uoff[i + 1]) wait
	                       for node i, once per source slot */
	uint32_t *users;
	uint32_t *bkt;      /* by topo index: the node's bucket */
	bucket *b;          /* sorted by (deps, inner, after) */
	size_t nb;
	uint32_t *heaps;    /* the buckets' heaps, end to end */
	tg_uop *ranges[MAX_RANGES]; /* by loop bit, in topological order */
	size_t nranges;
	uint32_t rcount[MAX_RANGES]; /* nodes left inside each loop */
	uint64_t ready_ranges;       /* bits of the RANGEs ready to open */
	tg_uop *stack[MAX_RANGES];   /* open loops, outermost first */
	size_t depth;
	uint64_t open;               /* their bits */
	size_t open_lo, open_hi;     /* the buckets whose deps are open */
	tg_uop **res;
	size_t nres, left;
} lin_state;

static size_t idx_of(const lin_state *st, const tg_uop *u)
{
	return st->pos[u->id] - 1;
}

/* Sources that must be placed before u: a DEFINE_ACC waits only for its
 * initial value (its RANGEs open after it). */
static uint32_t nwait(const tg_uop *u)
{
	if (u->op == TG_DEFINE_ACC)
		return u->nsrc ? 1 : 0;
	return u->nsrc;
}

/* A PHI of an accumulator: after the accumulator's loops it stands for
 * the final value. */
static int is_acc_phi(const tg_uop *u)
{
	return u->op == TG_PHI && u->nsrc >= 1 &&
	       u->src[0]->op == TG_DEFINE_ACC;
}

/* The loops of an accumulator (its RANGE sources). */
static uint64_t acc_loops(const lin_state *st, const tg_uop *acc)
{
	uint64_t m = 0;

	for (uint32_t k = 1; k < acc->nsrc; k++) {
		int b = st->bit[idx_of(st, acc->src[k])];
		if (b >= 0)
			m |= 1ull << b;
	}
	return m;
}

/* Values find_inner may recompute inside a loop they skip: not a loop,
 * a store or an accumulator (nor the SINK). */
static int inner_op(const tg_uop *u)
{
	return u->op != TG_SINK && u->op != TG_RANGE && u->op != TG_STORE &&
	       u->op != TG_DEFINE_ACC && u->op != TG_PHI;
}

/* ------------------------------------------------------- the heaps */

static void heap_push(bucket *b, uint32_t v)
{
	size_t k = b->len++;

	while (k > 0 && b->heap[(k - 1) / 2] > v) {
		b->heap[k] = b->heap[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	b->heap[k] = v;
}

static void heap_pop(bucket *b)
{
	uint32_t v = b->heap[--b->len];
	size_t k = 0, c;

	while ((c = 2 * k + 1) < b->len) {
		if (c + 1 < b->len && b->heap[c + 1] < b->heap[c])
			c++;
		if (b->heap[c] >= v)
			break;
		b->heap[k] = b->heap[c];
		k = c;
	}
	b->heap[k] = v; /* heap[0] when it emptied: still its room */
}

/* ------------------------------------------------------- the setup */

/* The topological order, positions by id and the loop bits: RANGEs are
 * numbered in topological order, 64 at most (the masks' width). */
static int collect(lin_state *st, tg_uop *sink)
{
	uint32_t maxid = 0;

	if (!(st->topo = tg_uop_toposort(sink, &st->n)))
		return tg_error_oom("linearize");
	for (size_t i = 0; i < st->n; i++)
		if (st->topo[i]->id > maxid)
			maxid = st->topo[i]->id;
	st->pos = calloc((size_t)maxid + 1, sizeof *st->pos);
	st->bit = malloc(st->n * sizeof *st->bit);
	if (!st->pos || !st->bit)
		return tg_error_oom("linearize");
	for (size_t i = 0; i < st->n; i++) {
		st->pos[st->topo[i]->id] = (uint32_t)i + 1;
		st->bit[i] = -1;
		if (st->topo[i]->op != TG_RANGE)
			continue;
		if (st->nranges == MAX_RANGES)
			return tg_error(TG_EUNSUPPORTED,
			                "linearize: more than %d loops",
			                MAX_RANGES);
		st->bit[i] = (int8_t)st->nranges;
		st->ranges[st->nranges++] = st->topo[i];
	}
	return TG_OK;
}

/* Every per-node array but the users' entries (their count comes
 * later); the result has room for each node and one ENDRANGE per
 * loop. */
static int alloc_state(lin_state *st)
{
	size_t n = st->n;

	st->deps = calloc(n, sizeof *st->deps);
	st->exports = calloc(n, sizeof *st->exports);
	st->after = calloc(n, sizeof *st->after);
	st->pending = calloc(n, sizeof *st->pending);
	st->uoff = calloc(n + 1, sizeof *st->uoff);
	st->bkt = calloc(n, sizeof *st->bkt);
	st->b = calloc(n, sizeof *st->b);
	st->heaps = calloc(n, sizeof *st->heaps);
	st->res = malloc((n + st->nranges) * sizeof *st->res);
	if (!st->deps || !st->exports || !st->after || !st->pending ||
	    !st->uoff || !st->bkt || !st->b || !st->heaps || !st->res)
		return tg_error_oom("linearize");
	return TG_OK;
}

static void free_state(lin_state *st)
{
	free(st->topo);
	free(st->pos);
	free(st->bit);
	free(st->deps);
	free(st->exports);
	free(st->after);
	free(st->pending);
	free(st->uoff);
	free(st->users);
	free(st->bkt);
	free(st->b);
	free(st->heaps);
	free(st->res);
}

/* The masks, sources first.  A node sits in the loops its waited-for
 * sources export; a RANGE exports its own loop as well; an
 * accumulator's PHI sits in the accumulator's loops but exports none of
 * them, and every node that reads it (directly or not) is `after` them:
 * the final value exists only once they close. */
static void compute_masks(lin_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		const tg_uop *u = st->topo[i];
		uint64_t d = 0, a = 0, loops = 0;

		for (uint32_t k = 0; k < u->nsrc; k++) {
			size_t s = idx_of(st, u->src[k]);
			if (k < nwait(u))
				d |= st->exports[s];
			a |= st->after[s];
		}
		if (is_acc_phi(u))
			loops = acc_loops(st, u->src[0]);
		st->deps[i] = d | loops;
		st->after[i] = a | loops;
		st->exports[i] = d & ~loops;
		if (st->bit[i] >= 0)
			st->exports[i] |= 1ull << st->bit[i];
	}
}

/* An accumulator is reset inside the loops its PHIs sit in, minus its
 * own (after its exports were taken: users of a DEFINE_ACC are its
 * PHIs' values, inside its loops anyway). */
static void reset_accs(lin_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		const tg_uop *u = st->topo[i];
		if (is_acc_phi(u))
			st->deps[idx_of(st, u->src[0])] |=
				st->deps[i] & ~acc_loops(st, u->src[0]);
	}
}

/* pending[i]: how many source slots node i waits on; the users table
 * lists node i once per such slot of each user, so placing a node
 * releases exactly what the slots count.  The offsets are built as
 * counts, prefix sums, then fill cursors shifted back. */
static int build_users(lin_state *st)
{
	size_t e = 0;

	for (size_t i = 0; i < st->n; i++) {
		const tg_uop *u = st->topo[i];
		st->pending[i] = nwait(u);
		for (uint32_t k = 0; k < nwait(u); k++)
			st->uoff[idx_of(st, u->src[k]) + 1]++;
		e += nwait(u);
	}
	for (size_t i = 0; i < st->n; i++)
		st->uoff[i + 1] += st->uoff[i];
	if (!(st->users = malloc((e ? e : 1) * sizeof *st->users)))
		return tg_error_oom("linearize");
	for (size_t i = 0; i < st->n; i++) {
		const tg_uop *u = st->topo[i];
		for (uint32_t k = 0; k < nwait(u); k++)
			st->users[st->uoff[idx_of(st, u->src[k])]++] =
				(uint32_t)i;
	}
	memmove(st->uoff + 1, st->uoff, st->n * sizeof *st->uoff);
	st->uoff[0] = 0;
	return TG_OK;
}

typedef struct bkey {
	uint64_t deps, after;
	int inner;
	uint32_t i;
} bkey;

static int cmp_key(const void *pa, const void *pb)
{
	const bkey *a = pa, *b = pb;

	if (a->deps != b->deps)
		return a->deps < b->deps ? -1 : 1;
	if (a->inner != b->inner)
		return a->inner < b->inner ? -1 : 1;
	if (a->after != b->after)
		return a->after < b->after ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

static int same_key(const bkey *a, const bkey *b)
{
	return a->deps == b->deps && a->inner == b->inner &&
	       a->after == b->after;
}

/* One bucket per distinct key of the nodes other than RANGEs and SINKs
 * (the after mask counts only where find_inner looks at it).  The
 * buckets come sorted, so those of one deps mask are adjacent, and a
 * bucket's heap gets the slots of its members in the sorted order. */
static int build_buckets(lin_state *st)
{
	bkey *k = malloc(st->n * sizeof *k);
	size_t m = 0;

	if (!k)
		return tg_error_oom("linearize");
	for (size_t i = 0; i < st->n; i++) {
		const tg_uop *u = st->topo[i];
		int in = inner_op(u);
		if (u->op == TG_SINK || u->op == TG_RANGE)
			continue;
		k[m++] = (bkey){ st->deps[i], in ? st->after[i] : 0, in,
		                 (uint32_t)i };
	}
	qsort(k, m, sizeof *k, cmp_key);
	for (size_t j = 0; j < m; j++) {
		if (j == 0 || !same_key(&k[j - 1], &k[j]))
			st->b[st->nb++] = (bucket){ k[j].deps, k[j].after,
			                            k[j].inner, st->heaps + j,
			                            0 };
		st->bkt[k[j].i] = (uint32_t)(st->nb - 1);
	}
	free(k);
	return TG_OK;
}

/* The buckets whose deps mask is exactly the open loops', found again
 * whenever a loop opens or closes (binary search, then the run). */
static void open_buckets(lin_state *st)
{
	size_t lo = 0, hi = st->nb;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->b[mid].deps < st->open)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < st->nb && st->b[hi].deps == st->open; hi++)
		;
	st->open_lo = lo;
	st->open_hi = hi;
}

/* Node i's sources are all placed: a RANGE may open, a SINK never goes
 * in, anything else waits in its bucket. */
static void make_ready(lin_state *st, size_t i)
{
	const tg_uop *u = st->topo[i];

	if (u->op == TG_SINK)
		return;
	if (u->op == TG_RANGE)
		st->ready_ranges |= 1ull << st->bit[i];
	else
		heap_push(&st->b[st->bkt[i]], (uint32_t)i);
}

/* Per loop, the nodes inside it (the SINKs too: one that sits in a
 * loop keeps it open to the end, as nothing places it); the nodes to
 * place; the nodes ready from the start. */
static void start(lin_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		uint64_t m = st->deps[i];
		for (size_t b = 0; m; b++, m >>= 1)
			st->rcount[b] += (uint32_t)(m & 1);
		if (st->topo[i]->op != TG_SINK)
			st->left++;
		if (!st->pending[i])
			make_ready(st, i);
	}
	open_buckets(st);
}

/* ------------------------------------------------- the placement */

/* Appends node i (the top of its bucket unless a RANGE) and releases
 * its users. */
static void place(lin_state *st, size_t i)
{
	uint64_t m = st->deps[i];

	if (st->topo[i]->op != TG_RANGE)
		heap_pop(&st->b[st->bkt[i]]);
	st->res[st->nres++] = st->topo[i];
	st->left--;
	for (size_t b = 0; m; b++, m >>= 1)
		st->rcount[b] -= (uint32_t)(m & 1);
	for (size_t k = st->uoff[i]; k < st->uoff[i + 1]; k++)
		if (--st->pending[st->users[k]] == 0)
			make_ready(st, st->users[k]);
}

/* The first ready node (topological order) whose loops are exactly the
 * open ones; st->n when none. */
static size_t pick_exact(const lin_state *st)
{
	size_t pick = st->n;

	for (size_t j = st->open_lo; j < st->open_hi; j++)
		if (st->b[j].len && st->b[j].heap[0] < pick)
			pick = st->b[j].heap[0];
	return pick;
}

/* A ready value whose loops are all open but are not exactly the open
 * ones: it uses an outer and an inner loop of one nest but not the loop
 * between (a conv's index over channel and kernel x, not kernel y).
 * Placed inside the open loops, it is recomputed per iteration of the
 * loop it skips, which is correct for a value; but not while a loop is
 * open whose accumulator's final value it reads: that value exists only
 * after the loop closes.  The first in topological order; st->n when
 * none. */
static size_t find_inner(const lin_state *st)
{
	size_t pick = st->n;

	for (size_t j = 0; j < st->nb; j++) {
		const bucket *b = &st->b[j];
		if (b->len && b->inner && !(b->deps & ~st->open) &&
		    !(b->after & st->open) && b->heap[0] < pick)
			pick = b->heap[0];
	}
	return pick;
}

/* Closes the innermost loop with an ENDRANGE. */
static int close_loop(lin_state *st)
{
	tg_uop *r = st->stack[--st->depth];
	tg_uop *end = tg_uop_new(st->ir, TG_ENDRANGE, TG_VOID, &r, 1, NULL);

	if (!end)
		return tg_ir_status(st->ir) ? tg_ir_status(st->ir) : TG_ENOMEM;
	st->res[st->nres++] = end;
	st->open &= ~(1ull << st->bit[idx_of(st, r)]);
	open_buckets(st);
	return TG_OK;
}

/* Opens the ready RANGE with the lowest loop number (ties: the first
 * in topological order, the bits' order) whose bounds need no loop that
 * is not open.  None: the loops cannot nest. */
static int open_next(lin_state *st)
{
	size_t pick = st->n;
	int64_t best = 0;

	for (size_t r = 0; r < st->nranges; r++) {
		size_t i = idx_of(st, st->ranges[r]);
		if (!((st->ready_ranges >> r) & 1) || (st->deps[i] & ~st->open))
			continue;
		if (pick == st->n || st->ranges[r]->arg.v.i < best) {
			pick = i;
			best = st->ranges[r]->arg.v.i;
		}
	}
	if (pick == st->n)
		return tg_error(TG_EUNSUPPORTED, "linearize: loops do not nest "
		                "(%zu nodes left)", st->left);
	st->ready_ranges &= ~(1ull << st->bit[pick]);
	st->open |= 1ull << st->bit[pick];
	st->stack[st->depth++] = st->topo[pick];
	open_buckets(st);
	place(st, pick);
	return TG_OK;
}

/* One placement or one ENDRANGE, the first choice that applies. */
static int step(lin_state *st)
{
	size_t pick = pick_exact(st);

	if (pick == st->n && st->depth > 0 &&
	    st->rcount[st->bit[idx_of(st, st->stack[st->depth - 1])]] == 0)
		return close_loop(st);
	/* a value that skips a loop of the open nest goes in before
	 * another loop opens: a loop that is ready but not next in this
	 * nest (a grouped reduce's second stage) must not open inside it */
	if (pick == st->n)
		pick = find_inner(st);
	if (pick == st->n)
		return open_next(st);
	place(st, pick);
	return TG_OK;
}

int tg_linearize(tg_ir *ir, tg_uop *sink, tg_uop ***out, size_t *nout)
{
	lin_state st = { .ir = ir };
	int rc;

	*out = NULL;
	*nout = 0;
	if (!sink)
		return tg_error(TG_EINVAL, "linearize: no sink");
	if ((rc = collect(&st, sink)) || (rc = alloc_state(&st)))
		goto out_free_state;
	compute_masks(&st);
	reset_accs(&st);
	if ((rc = build_users(&st)) || (rc = build_buckets(&st)))
		goto out_free_state;
	start(&st);
	while (st.left > 0 && !(rc = step(&st)))
		;
	while (!rc && st.depth > 0)  /* still open after the last node */
		rc = close_loop(&st);
	if (rc)
		goto out_free_state;
	*out = st.res;
	*nout = st.nres;
	st.res = NULL;
out_free_state:
	free_state(&st);
	return rc;
}

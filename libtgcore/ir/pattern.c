/*
 * pattern.c - rewrite rules as data (tinygrad's UPat, PatternMatcher and
 * graph_rewrite): the matcher, the per-op rule index, and the bottom-up
 * rewrite to a fixed point.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* ------------------------------------------------------------- matcher */

/* Commutative sources make matching a search: each COMMUTE node met is a
 * decision (0: sources in order, 1: swapped).  One attempt follows the
 * decisions in `dec` and records how many it consumed; the caller then
 * backtracks depth-first over them. */
enum { MAX_DECISIONS = 16 };

typedef struct attempt {
	tg_uop **cap;
	unsigned char dec[MAX_DECISIONS];
	unsigned used;
} attempt;

static int match(const tg_pat *p, tg_uop *u, attempt *at);

static int match_head(const tg_pat *p, const tg_uop *u)
{
	unsigned i, s = tg_type_scalar(u->dtype);

	if (p->nops) {
		for (i = 0; i < p->nops && p->ops[i] != u->op; i++)
			;
		if (i == p->nops)
			return 0;
	}
	if (p->dtypes && (s >= 32 || !(p->dtypes & (1u << s))))
		return 0;
	if (p->has_value && (u->op != TG_CONST ||
	                     tg_scalar_to_double(u->arg.v, s) != p->value))
		return 0;
	return 1;
}

static int match_srcs(const tg_pat *p, tg_uop *u, attempt *at)
{
	unsigned i, swap;

	switch (p->srcmode) {
	case TG_PSRC_FIXED:
		if (u->nsrc != p->nsrc)
			return 0;
		for (i = 0; i < u->nsrc; i++) {
			if (!match(p->src[i], u->src[i], at))
				return 0;
		}
		return 1;
	case TG_PSRC_COMMUTE:
		if (u->nsrc != 2 || at->used == MAX_DECISIONS)
			return 0;
		swap = at->dec[at->used++];
		return match(p->src[0], u->src[swap], at) &&
		       match(p->src[1], u->src[!swap], at);
	case TG_PSRC_REPEAT:
		for (i = 0; i < u->nsrc; i++) {
			if (!match(p->src[0], u->src[i], at))
				return 0;
		}
		return u->nsrc > 0;
	default:
		return 1;
	}
}

static int match(const tg_pat *p, tg_uop *u, attempt *at)
{
	if (!match_head(p, u))
		return 0;
	if (p->cap) {
		tg_uop **slot = &at->cap[p->cap - 1];

		if (*slot && *slot != u)
			return 0;   /* a name used twice binds one node */
		*slot = u;
	}
	return match_srcs(p, u, at);
}

/* The next decision vector, depth first: flip the last 0 consumed and
 * forget the decisions after it.  0 when every vector was tried. */
static int next_decisions(attempt *at)
{
	while (at->used && at->dec[at->used - 1])
		at->used--;
	if (!at->used)
		return 0;
	at->dec[at->used - 1] = 1;
	memset(at->dec + at->used, 0, MAX_DECISIONS - at->used);
	return 1;
}

static int attempt_match(const tg_pat *pat, tg_uop *u, attempt *at)
{
	memset(at->cap, 0, TG_MAX_CAPTURES * sizeof *at->cap);
	at->used = 0;
	return match(pat, u, at);
}

int tg_pat_match(const tg_pat *pat, tg_uop *u, tg_uop **cap)
{
	attempt at = { .cap = cap };

	do {
		if (attempt_match(pat, u, &at))
			return 1;
	} while (next_decisions(&at));
	return 0;
}

/* ----------------------------------------------------------- rule index */

static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;

static int rule_has_op(const tg_rule *r, unsigned op)
{
	unsigned i;

	if (!r->pat->nops)
		return 1;
	for (i = 0; i < r->pat->nops; i++) {
		if (r->pat->ops[i] == op)
			return 1;
	}
	return 0;
}

/* Lists, per op, the rules whose root can match it (counting sort).  On
 * OOM the set stays unindexed and every rule is tried: slower, same
 * result. */
static void build_index(tg_ruleset *rs)
{
	size_t op, i, k = 0, total = 0;

	for (op = 0; op < TG_NOPS; op++)
		for (i = 0; i < rs->n; i++)
			total += rule_has_op(&rs->rules[i], (unsigned)op);
	rs->order = malloc((total ? total : 1) * sizeof *rs->order);
	for (op = 0; rs->order && op < TG_NOPS; op++) {
		rs->start[op] = (uint32_t)k;
		for (i = 0; i < rs->n; i++) {
			if (rule_has_op(&rs->rules[i], (unsigned)op))
				rs->order[k++] = (uint16_t)i;
		}
	}
	rs->start[TG_NOPS] = (uint32_t)k;
}

static void ensure_index(const tg_ruleset *crs)
{
	tg_ruleset *rs = (tg_ruleset *)crs;  /* the index is a cache */

	if (atomic_load_explicit(&rs->built, memory_order_acquire))
		return;
	pthread_mutex_lock(&index_lock);
	if (!atomic_load_explicit(&rs->built, memory_order_relaxed)) {
		build_index(rs);
		atomic_store_explicit(&rs->built, 1, memory_order_release);
	}
	pthread_mutex_unlock(&index_lock);
}

/* Calls the rule on every way its pattern matches (both orders of a
 * commutative op) until the callback returns a replacement, as
 * tinygrad's rewrite tries every match. */
static tg_uop *try_rule(const tg_rule *r, tg_rw *rw)
{
	tg_uop *cap[TG_MAX_CAPTURES], *out = NULL;
	attempt at = { .cap = cap };

	do {
		if (attempt_match(r->pat, rw->root, &at) &&
		    (out = r->fn(rw, cap)) && out != rw->root)
			break;
		out = NULL;
	} while (next_decisions(&at));
	if (out && tg_debug_level() >= 7)
		tg_debug_log(7, "rewrite: %s: %%%u -> %%%u", r->name,
		       (unsigned)rw->root->id, (unsigned)out->id);
	return out;
}

tg_uop *tg_rules_apply(const tg_ruleset *rs, tg_ir *ir, tg_uop *u,
                       void *ctx)
{
	tg_rw rw = { ir, ctx, u };
	tg_uop *out;
	size_t i;

	for (; rs; rs = rs->next) {
		ensure_index(rs);
		if (!rs->order) {
			for (i = 0; i < rs->n; i++)
				if ((out = try_rule(&rs->rules[i], &rw)))
					return out;
			continue;
		}
		for (i = rs->start[u->op]; i < rs->start[u->op + 1]; i++)
			if ((out = try_rule(&rs->rules[rs->order[i]], &rw)))
				return out;
	}
	return NULL;
}

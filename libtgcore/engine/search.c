/*
 * engine/search.c - BEAM search over a kernel's opts (tinygrad's
 * engine/search.py, mid-2024), run by realize when BEAM=N on a method
 * cache miss.
 *
 * The search keeps the N fastest opt lists.  Each round extends every
 * one of them by every move the plan takes (tg_codegen_actions), renders
 * and compiles the new candidates on a few threads at once (the renderer
 * is re-entrant, and plugins' compile entries are too), runs each on
 * scratch buffers of the kernel's sizes filled with random values
 * (search_scratch.c), and times it.  Before a candidate is timed its
 * outputs are compared with the unoptimized (NOOPT) kernel's on the same
 * inputs: a mismatch is a codegen bug, reported on stderr and never a
 * winner.  A candidate that fails to compile is skipped.  The search
 * stops when a round improves nothing, when no move is left, or when its
 * time budget (BEAM_TIMEOUT_SEC) is spent; the best list found so far
 * wins.  The budget is the rounds': NOOPT's reference run and the
 * hand-coded opts' are fixed costs of any search, and at matmul N=2048
 * NOOPT's alone takes 25 s of the CPU's default 60.
 *
 * Candidates are loop nests of constant extents over indices that
 * lowering bounds-checks (tg_uop_verify and the gates of every access),
 * so none should run forever or out of its buffers.  Should a codegen
 * bug make one do so anyway, it is contained where the device can: a
 * plugin with a trial entry (the CPU's runs it in a child process) runs
 * each candidate there first, with a time limit, and only a candidate
 * that finished runs in process (NOOPT's reference runs in any case,
 * unless it faults).  Devices without one (OpenCL, Vulkan) run
 * candidates in process: a GPU driver's watchdog stops a hung kernel,
 * PoCL's and lavapipe's do not.
 * Compiles run in the plugin's compiler (the CPU plugin's is a child
 * process, killed past its compile_timeout).
 *
 * The result goes to the on-disk cache (table beam_search) keyed by the
 * plugin, the compiler's identity, the device, N and the kernel's AST
 * text, so a second run searches nothing (IGNORE_BEAM_CACHE=1 searches
 * again).  DEBUG>=2 prints what was chosen.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "cache/cache.h"
#include "device/device.h"
#include "ir/ir.h"
#include "util/child.h"
#include "engine/search.h"

#define MAX_THREADS 8    /* compile threads */
#define RUNS 3           /* timed runs of a candidate */
#define EARLY_STOP 3     /* a candidate slower than this many times the
                            best is dropped (tinygrad's early stop) */
#define TRIAL_FACTOR 50  /* a trial's limit before any trial finished:
                            times the best run time so far (the trial
                            may run on fewer threads than the launch), */
#define TRIAL_FLOOR_S 0.2 /* and at least this */
#define REF_TRIAL_S 1.0  /* NOOPT's trial: its faults show by then */

/* A candidate (cand) and the search's state (search): search.h. */

/* ------------------------------------------------------------ candidates */

static void cand_free(cand *c)
{
	tg_program_free(c->prog);
	tg_ksrc_free(&c->ks);
	c->prog = NULL;
}

/* Renders and compiles one candidate (on any thread). */
static void build(search *s, cand *c)
{
	c->t = INFINITY;
	c->rc = tg_codegen_opts(s->ast, s->caps, &s->set, c->opts, c->nopts,
	                        &c->ks);
	if (!c->rc)
		c->rc = tg_dev_render(s->dev, &c->ks);
	if (!c->rc && !(c->prog = tg_program_build(s->dev, c->ks.name,
	                                           c->ks.src, &s->set)))
		c->rc = tg_last_status();
	if (c->rc)
		snprintf(c->err, sizeof c->err, "%s", tg_last_error());
}

/* Builds candidates until none is left or the budget is spent (those
 * left then stay unbuilt: TG_ETIMEOUT). */
static void *build_worker(void *arg)
{
	search *s = arg;
	size_t i;

	while ((i = atomic_fetch_add(&s->next, 1)) < s->ncands) {
		cand *c = &s->cands[i];
		if (tg_now_s() >= s->deadline) {
			c->t = INFINITY;
			c->rc = TG_ETIMEOUT;
			snprintf(c->err, sizeof c->err, "not built: the "
			         "search's budget is spent");
			continue;
		}
		build(s, c);
	}
	return NULL;
}

/* Builds s->cands on up to MAX_THREADS threads (the caller is one). */
static void build_all(search *s)
{
	pthread_t tid[MAX_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = cpus > 1 ? (size_t)cpus : 1, started = 0;

	if (n > MAX_THREADS)
		n = MAX_THREADS;
	if (n > s->ncands)
		n = s->ncands;
	atomic_store(&s->next, 0);
	for (size_t i = 1; i < n; i++)
		if (!pthread_create(&tid[started], NULL, build_worker, s))
			started++;
	build_worker(s);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

static tg_launch_args args_of(search *s, const cand *c)
{
	tg_launch_args a = { .bufs = s->bufs, .nbufs = s->nbufs };

	memcpy(a.global, c->ks.global, sizeof a.global);
	memcpy(a.local, c->ks.local, sizeof a.local);
	return a;
}

/* c's opts as text in o (OPTS_TEXT bytes), "(none)" for none. */
#define OPTS_TEXT (TG_MAX_OPTS * 24)
static const char *cand_opts(const cand *c, char *o)
{
	tg_opts_format(c->opts, c->nopts, o, OPTS_TEXT);
	return o[0] ? o : "(none)";
}

static int launch(search *s, const cand *c, double *t)
{
	tg_launch_args a = args_of(s, c);

	return tg_program_launch(c->prog, &a, t);
}

/* Gives c a trial run of at most `limit` seconds where the device has
 * trials (tg_program_trial), so that a kernel that faults or never
 * finishes costs the device's child, not the process.  0 when it
 * finished (its seconds, with the trial's start, into *ran), or when no
 * trial can be run (c then runs in process only, as on a device without
 * trials; *ran INFINITY); else TG_ETIMEOUT, TG_ENOMEM (the candidate
 * is dropped all the same) or TG_ERUNTIME (a fault: a codegen bug,
 * reported as one), logged, with the plugin's message kept. */
static int trial(search *s, const cand *c, double limit, double *ran)
{
	tg_launch_args a = args_of(s, c);
	char o[OPTS_TEXT];
	const char *os;
	double start = tg_now_s();
	int rc;

	*ran = INFINITY;
	if (!tg_program_has_trial(c->prog))
		return 0;
	if (!(rc = tg_program_trial(c->prog, &a, limit))) {
		*ran = tg_now_s() - start;
		return 0;
	}
	os = cand_opts(c, o);
	if (rc == TG_EUNSUPPORTED) {
		tg_debug_log(2, "beam: kernel %s with opts %s runs without a "
		             "trial: %s", c->ks.name, os, tg_last_error());
		tg_clear_error();
		return 0;
	}
	if (rc == TG_ETIMEOUT || rc == TG_ENOMEM)  /* not the kernel's */
		tg_debug_log(2, "beam: kernel %s with opts %s: %s", c->ks.name,
		             os, tg_last_error());
	else
		tg_debug_log(0, "beam: kernel %s with opts %s failed its "
		             "trial run (a codegen bug: please report it; the "
		             "candidate is dropped): %s", c->ks.name, os,
		             tg_last_error());
	return rc;
}

/* Whether candidate c may run in process: it passed a trial of at most
 * EARLY_STOP times the fastest trial so far (the trials run alike, on
 * the device's terms: the CPU's on one thread, with a fork), or before
 * any finished TRIAL_FACTOR times the best run, at least TRIAL_FLOOR_S
 * and within the budget.  It then runs in process on the same inputs,
 * and so finishes there too.  A candidate far slower than the best
 * costs the search no more than the limit (at matmul N=2048, 50 times
 * the best run was 3.2 s each for the first round's dozen slow ones:
 * most of the budget). */
static int trial_ok(search *s, const cand *c, double best, double *ran)
{
	double limit = isfinite(s->best_trial) ? EARLY_STOP * s->best_trial
	                                       : TRIAL_FACTOR * best;
	int rc;

	limit = fmin(fmax(TRIAL_FLOOR_S, limit), s->deadline - tg_now_s());
	if (limit <= 0)
		return 0;
	if ((rc = trial(s, c, limit, ran))) {
		/* candidates only: NOOPT's short trial is no verdict on it */
		if (rc == TG_ETIMEOUT)
			s->slow++;
		else
			s->failed++;
		return 0;
	}
	return 1;
}

/* Whether got and want (n elements of dt) agree: floats within a
 * reordered sum's rounding (a half's when `half`: the kernel reads
 * halves, whose products NOOPT rounds to half and a tensor core keeps
 * whole), integers exactly, NaN where NaN.  The first difference into
 * *at. */
static int agree(tg_dtype dt, int half, const void *got, const void *want,
                 size_t n, size_t *at)
{
	int isf = tg_scalar_is_float(dt);
	double tol = half || tg_scalar_is_half(dt) ? 2e-2 : 1e-3;

	for (size_t i = 0; i < n; i++) {
		double g = tg_beam_elem(dt, got, i),
		       w = tg_beam_elem(dt, want, i);
		if (g == w || (isnan(g) && isnan(w)))
			continue;
		if (isf && fabs(g - w) <= tol * (1.0 + fabs(w)))
			continue;
		*at = i;
		return 0;
	}
	return 1;
}

/* Runs c once and compares its outputs with NOOPT's: 1 when they
 * agree; a mismatch is reported as the bug it is. */
static int check(search *s, const cand *c)
{
	int half = 0;

	for (size_t b = 0; b < s->nbufs; b++)
		half |= tg_scalar_is_half(tg_buffer_dtype(s->bufs[b]));
	for (size_t b = 0; b < s->nbufs; b++) {
		size_t nb = tg_buffer_nbytes(s->bufs[b]), at = 0;
		tg_dtype dt = tg_buffer_dtype(s->bufs[b]);
		void *h;
		int ok;
		if (!s->ref[b])
			continue;
		if (!(h = malloc(nb + 1)) ||
		    tg_buffer_copyout(s->bufs[b], h, nb)) {
			free(h);
			return 0;
		}
		ok = agree(dt, half, h, s->ref[b], tg_buffer_count(s->bufs[b]),
		           &at);
		if (!ok) {
			char o[TG_MAX_OPTS * 24];
			tg_opts_format(c->opts, c->nopts, o, sizeof o);
			tg_debug_log(0, "beam: kernel %s with opts %s differs from "
			             "NOOPT in buffer %zu at %zu: got %.9g, want "
			             "%.9g (a codegen bug: please report it; the "
			             "candidate is dropped)", c->ks.name, o, b, at,
			             tg_beam_elem(dt, h, at),
			             tg_beam_elem(dt, s->ref[b], at));
			s->mismatched++;
		}
		free(h);
		if (!ok)
			return 0;
	}
	return 1;
}

/* Times c: up to RUNS runs counting the first (t0), the fastest,
 * stopping early when it is EARLY_STOP times slower than `best`.
 * INFINITY when it fails. */
static double time_cand(search *s, const cand *c, double t0, double best)
{
	double t, min = t0;

	for (int r = 1; r < RUNS && min <= EARLY_STOP * best; r++) {
		if (launch(s, c, &t)) {
			tg_clear_error();
			return INFINITY;
		}
		if (t < min)
			min = t;
	}
	return min;
}

/* Whether c's source was timed already (another opt list that renders
 * the same kernel); remembers it if not. */
static int seen_before(search *s, const cand *c)
{
	uint64_t h = tg_hash_str(c->ks.src);

	for (size_t i = 0; i < s->nseen; i++)
		if (s->seen[i] == h)
			return 1;
	if (s->nseen == s->capseen) {
		size_t cap = s->capseen ? 2 * s->capseen : 64;
		uint64_t *p = realloc(s->seen, cap * sizeof *p);
		if (!p)
			return 0;
		s->seen = p;
		s->capseen = cap;
	}
	s->seen[s->nseen++] = h;
	return 0;
}

/* DEBUG>=4: a timed candidate's opts, run and trial times. */
static void log_cand(const cand *c, double ran)
{
	char o[OPTS_TEXT];

	if (tg_debug_level() >= 4)
		tg_debug_log(4, "beam: %s: %.2f us (trial %.2f ms)",
		             cand_opts(c, o), c->t * 1e6, ran * 1e3);
}

/* Builds, checks and times s->cands; candidates not timed get
 * INFINITY.  Those left when the budget is spent are neither built
 * nor timed. */
static void evaluate(search *s, double best)
{
	build_all(s);
	for (size_t i = 0; i < s->ncands; i++) {
		cand *c = &s->cands[i];
		if (c->rc) {
			tg_debug_log(4, "beam: a candidate failed to build: %s",
			             c->err);
		} else if (!seen_before(s, c) && tg_now_s() < s->deadline) {
			double t, ran;
			s->tried++;
			if (trial_ok(s, c, best, &ran) &&
			    !tg_beam_reset_outputs(s) && !launch(s, c, &t) &&
			    check(s, c)) {
				c->t = time_cand(s, c, t, best);
				s->best_trial = fmin(s->best_trial, ran);
				log_cand(c, ran);
			} else
				tg_clear_error();
		}
		cand_free(c);
	}
}

/* The NOOPT kernel's outputs on the scratch inputs: the reference
 * every candidate is checked against.  Also its time into *t. */
static int reference(search *s, double *t)
{
	cand c = { .nopts = 0 };
	int rc;

	build(s, &c);
	if (c.rc) {
		cand_free(&c);  /* rendered, then refused by the compiler */
		return c.rc;
	}
	/* NOOPT runs in any case, as it would without BEAM: only a fault
	 * stops it.  Its trial is short (a fault shows early, and a slow
	 * kernel's trial would cost the budget twice over): one that runs
	 * past it is no verdict */
	rc = trial(s, &c, REF_TRIAL_S, &s->best_trial);
	if (rc == TG_ETIMEOUT) {
		tg_clear_error();
		rc = TG_OK;
	}
	if (rc)
		rc = tg_error_prefix("the unoptimized kernel %s failed its "
		                     "trial run", c.ks.name);
	else if (!(rc = tg_beam_reset_outputs(s)))
		rc = launch(s, &c, t);
	for (size_t b = 0; b < s->nbufs && !rc; b++) {
		size_t nb = tg_buffer_nbytes(s->bufs[b]);
		if (!(c.ks.outs & (1u << b)))
			continue;
		if (!(s->ref[b] = malloc(nb + 1)))
			rc = tg_error_oom("beam");
		else
			rc = tg_buffer_copyout(s->bufs[b], s->ref[b], nb);
	}
	cand_free(&c);
	return rc;
}

/* ----------------------------------------------------------- the search */

static int cmp_time(const void *a, const void *b)
{
	double x = ((const cand *)a)->t, y = ((const cand *)b)->t;

	return (x > y) - (x < y);
}

/* The next round's candidates: every beam entry (fastest first, so
 * that a budget spent on the way cuts the slow ones' children) extended
 * by each of its moves. */
static int expand(search *s, cand *beam, size_t nbeam)
{
	static const size_t max = TG_MAX_ACTIONS;
	tg_opt *moves = malloc(max * sizeof *moves);
	size_t cap = nbeam * max;
	int rc = TG_OK;

	free(s->cands);
	s->ncands = 0;
	s->cands = calloc(cap ? cap : 1, sizeof *s->cands);
	if (!moves || !s->cands) {
		free(moves);
		return tg_error_oom("beam");
	}
	qsort(beam, nbeam, sizeof *beam, cmp_time);
	for (size_t b = 0; b < nbeam && !rc; b++) {
		size_t nm = 0;
		if (beam[b].nopts == TG_MAX_OPTS)
			continue;
		rc = tg_codegen_actions(s->ast, s->caps, &s->set, beam[b].opts,
		                        beam[b].nopts, moves, max, &nm);
		for (size_t m = 0; m < nm; m++) {
			cand *c = &s->cands[s->ncands++];
			memcpy(c->opts, beam[b].opts,
			       beam[b].nopts * sizeof *c->opts);
			c->nopts = beam[b].nopts + 1;
			c->opts[beam[b].nopts] = moves[m];
		}
	}
	free(moves);
	return rc;
}

/* The hand-coded opts join the first beam (so the search starts where
 * the heuristics end, and never ends worse), timed like any candidate
 * before the budget starts: they are what runs without BEAM. */
static int seed(search *s, cand *keep, size_t *nkeep, int width)
{
	cand *c;
	int rc;

	if (width < 2)
		return TG_OK;
	free(s->cands);
	if (!(s->cands = calloc(1, sizeof *s->cands)))
		return tg_error_oom("beam");
	c = &s->cands[0];
	s->ncands = 1;
	if ((rc = tg_codegen_hand_opts(s->ast, s->caps, &s->set, c->opts,
	                               &c->nopts)))
		return rc;
	if (c->nopts == 0)
		return TG_OK;
	evaluate(s, keep[0].t);
	if (isfinite(s->cands[0].t))
		keep[(*nkeep)++] = s->cands[0];
	return TG_OK;
}

/* Whether a and b are the same opt list. */
static int same_opts(const cand *a, const cand *b)
{
	for (size_t i = 0; i < a->nopts && a->nopts == b->nopts; i++)
		if (a->opts[i].op != b->opts[i].op ||
		    a->opts[i].axis != b->opts[i].axis ||
		    a->opts[i].amt != b->opts[i].amt)
			return 0;
	return a->nopts == b->nopts;
}

/* The winner against the hand-coded opts, RUNS runs each taken in
 * turn: the rounds time each candidate at its own moment, and on a busy
 * machine a moment's noise can crown a slower list (at matmul N=1024 a
 * PASS(2,16) that runs 30% slower than the seed it beat).  The hand
 * opts win a rematch they win; one that cannot be run leaves best. */
static void rematch(search *s, cand *best, const cand *hand)
{
	cand c[2];
	double t[2] = { INFINITY, INFINITY }, r;

	if (same_opts(best, hand))
		return;
	memset(c, 0, sizeof c);
	for (int i = 0; i < 2; i++) {
		const cand *from = i ? hand : best;
		memcpy(c[i].opts, from->opts, from->nopts * sizeof *c->opts);
		c[i].nopts = from->nopts;
		build(s, &c[i]);
	}
	for (int i = 0; i < 2 * RUNS && !c[0].rc && !c[1].rc; i++) {
		if (launch(s, &c[i % 2], &r))
			break;
		t[i % 2] = fmin(t[i % 2], r);
	}
	tg_clear_error();
	if (isfinite(t[0]) && isfinite(t[1])) {
		char o[OPTS_TEXT];
		tg_debug_log(2, "beam: rematch: %s %.2f us, the hand-coded "
		             "opts %.2f us", cand_opts(best, o), t[0] * 1e6,
		             t[1] * 1e6);
	}
	if (t[1] < t[0]) {
		memcpy(best->opts, hand->opts, hand->nopts * sizeof *hand->opts);
		best->nopts = hand->nopts;
		best->t = t[1];
	}
	cand_free(&c[0]);
	cand_free(&c[1]);
}

/* The search proper: the best opts into best (an empty list when
 * nothing beats the unoptimized kernel). */
static int beam(search *s, int width, cand *best, double budget)
{
	cand *keep = calloc((size_t)width, sizeof *keep), hand;
	size_t nkeep = 1;
	double t0;
	int rc;

	if (!keep)
		return tg_error_oom("beam");
	if ((rc = reference(s, &t0)))
		goto out;
	keep[0].t = t0;
	if ((rc = seed(s, keep, &nkeep, width)))
		goto out;
	hand = nkeep > 1 ? keep[1] : keep[0];
	*best = keep[0];
	for (size_t i = 1; i < nkeep; i++)
		if (keep[i].t < best->t)
			*best = keep[i];
	s->deadline = tg_now_s() + budget;
	while (tg_now_s() < s->deadline) {
		if ((rc = expand(s, keep, nkeep)))
			goto out;  /* rematch's runs would clear its error */
		if (s->ncands == 0)
			break;
		evaluate(s, best->t);
		qsort(s->cands, s->ncands, sizeof *s->cands, cmp_time);
		if (!(s->cands[0].t < best->t))
			break;  /* no progress */
		*best = s->cands[0];
		for (nkeep = 0; nkeep < (size_t)width && nkeep < s->ncands &&
		     isfinite(s->cands[nkeep].t); nkeep++)
			keep[nkeep] = s->cands[nkeep];
		tg_debug_log(2, "beam: %zu candidates, best %.2f us", s->ncands,
		             best->t * 1e6);
	}
	if (hand.nopts)
		rematch(s, best, &hand);
out:
	free(keep);
	return rc;
}

/* What an opt names: raised whenever a plan's axes change meaning (2:
 * the kernel's mergeable axes are merged before any opt), so an older
 * search's opts are never applied to other axes, or the moves grow (3:
 * PASS), so that an older search is not taken for a full one. */
#define PLAN_FORMAT 3

/* The cache key: plan format, plugin, compiler, device, width, the TC
 * settings (the moves and the seed) and the AST's text. */
static char *cache_key(tg_dev *dev, const tg_uop *ast,
                       const tg_settings *set)
{
	char *prefix = tg_dev_compile_key(dev), *text = tg_ast_format(ast);
	tg_strbuf sb;

	tg_strbuf_init(&sb);
	if (prefix && text)
		tg_strbuf_addf(&sb, "plan %d\n%s%s\nBEAM=%d TC=%d TC_OPT=%d\n%s",
		               PLAN_FORMAT, prefix, tg_dev_name(dev), set->beam,
		               set->tc != 0, set->tc_opt, text);
	free(prefix);
	free(text);
	return prefix && text ? tg_strbuf_finish(&sb)
	                      : (tg_strbuf_release(&sb), NULL);
}

/* A cached result: n opts, each op, axis, amt as int64. */
static int from_cache(const tg_settings *set, const char *key,
                      tg_opt *opts, size_t *nopts)
{
	int64_t *v = NULL;
	size_t len = 0, n;

	if (tg_diskcache_get(set, "beam_search", key, (void **)&v, &len) != 1)
		return 0;
	n = len / (3 * sizeof *v);
	if (len % (3 * sizeof *v) || n > TG_MAX_OPTS) {
		free(v);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		opts[i] = (tg_opt){ (int)v[3 * i], (int)v[3 * i + 1],
		                    v[3 * i + 2] };
	*nopts = n;
	free(v);
	return 1;
}

static void to_cache(const tg_settings *set, const char *key,
                     const tg_opt *opts, size_t n)
{
	int64_t v[3 * TG_MAX_OPTS];

	for (size_t i = 0; i < n; i++) {
		v[3 * i] = opts[i].op;
		v[3 * i + 1] = opts[i].axis;
		v[3 * i + 2] = opts[i].amt;
	}
	tg_diskcache_put(set, "beam_search", key, v, n * 3 * sizeof *v);
}

int tg_beam_opts(tg_dev *dev, const tg_uop *ast, tg_buffer *const *bufs,
                 size_t nbufs, const tg_settings *set, tg_opt *opts,
                 size_t *nopts)
{
	search s;
	cand best;
	char *key = cache_key(dev, ast, set), o[TG_MAX_OPTS * 24];
	double start = tg_now_s();
	int rc;

	*nopts = 0;
	if (!key)
		return tg_error_oom("beam");
	if (!set->ignore_beam_cache && from_cache(set, key, opts, nopts)) {
		tg_opts_format(opts, *nopts, o, sizeof o);
		tg_debug_log(2, "beam: cached opts %s", o[0] ? o : "(none)");
		free(key);
		return TG_OK;
	}
	memset(&s, 0, sizeof s);
	s.dev = dev;
	s.ast = ast;
	s.caps = tg_dev_caps(dev);
	s.set = *set;
	s.set.debug = 0;
	s.nbufs = nbufs;
	s.nouts = ast->nsrc;  /* the SINK's stores: buffers 0.. in order */
	s.reads_out = tg_beam_loads_output(ast, s.nouts);
	s.deadline = INFINITY;
	s.best_trial = INFINITY;
	memset(&best, 0, sizeof best);
	if (!(rc = tg_beam_make_scratch(&s, bufs)) &&
	    !(rc = beam(&s, set->beam, &best, set->beam_timeout))) {
		memcpy(opts, best.opts, best.nopts * sizeof *opts);
		*nopts = best.nopts;
		to_cache(set, key, opts, *nopts);
		tg_opts_format(opts, *nopts, o, sizeof o);
		tg_debug_log(2, "beam: chose %s: %.2f us (%zu kernels timed, "
		             "%zu wrong, %zu failed their trial, %zu too slow, "
		             "%.2f s)", o[0] ? o : "(no opts)", best.t * 1e6,
		             s.tried, s.mismatched, s.failed, s.slow,
		             tg_now_s() - start);
	}
	for (size_t i = 0; i < s.ncands; i++)
		cand_free(&s.cands[i]);
	free(s.cands);
	free(s.seen);
	tg_beam_free_scratch(&s);
	free(key);
	return rc;
}

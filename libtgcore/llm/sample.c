/*
 * sample.c - the next token from a step's logits, on the host, in
 * llama.cpp's default order: repetition penalty, top-k, top-p, min-p,
 * temperature, then one draw.  The filters work on (logit, id)
 * candidates in double, sorted by logit, higher first, ties to the
 * lower id, so which tokens survive never depends on a sort's
 * whims.  The draw is xoshiro256** seeded through splitmix64 from the
 * sampler's seed, walked along the kept tokens' weights in id order:
 * the same seed and logits give the same tokens on every machine.
 * Only what top-p and min-p may keep is sorted (see head()), so a step
 * over a large vocabulary costs a few passes, not a sort of it all.  A sampler is all its own state (the history, the
 * generator, a scratch array); nothing is shared between samplers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

typedef struct cand {
	double logit;
	int32_t id;
} cand;

struct tg_llm_sampler {
	tg_llm_sampling p;
	uint64_t rng[4];
	int32_t *hist;  /* the last penalty_last_n tokens, a ring */
	size_t nhist, hnext;
	cand *c;        /* the candidates, scratch of one call */
	size_t cap;
	int32_t *seen;  /* the history sorted, scratch of one call */
};

tg_llm_sampling tg_llm_sampling_default(void)
{
	tg_llm_sampling p = {
		.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f,
		.repeat_penalty = 1.0f, .penalty_last_n = 64, .seed = 0,
	};
	return p;
}

/* ---- the generator ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro(uint64_t s[4])
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

/* A double in [0, 1): the top 53 bits. */
static double uniform(uint64_t s[4])
{
	return (double)(xoshiro(s) >> 11) * 0x1.0p-53;
}

static void seed(tg_llm_sampler *s)
{
	uint64_t x = s->p.seed;

	for (int i = 0; i < 4; i++)
		s->rng[i] = splitmix64(&x);
}

/* ---- making one ---- */

static int check_params(const tg_llm_sampling *p)
{
	static const char op[] = "tg_llm_sampler_new";
	const double t = p->temperature, tp = p->top_p, mp = p->min_p;
	const double rp = p->repeat_penalty;

	if (!(t >= 0) || isinf(t))
		return tg_set_error(TG_EINVAL, "%s: temperature %g is not a "
		                    "finite value >= 0 (0: greedy)", op, t);
	if (p->top_k < 0)
		return tg_set_error(TG_EINVAL, "%s: top_k %ld is negative "
		                    "(0: off)", op, (long)p->top_k);
	if (!(tp > 0 && tp <= 1))
		return tg_set_error(TG_EINVAL, "%s: top_p %g is outside (0, 1] "
		                    "(1: off)", op, tp);
	if (!(mp >= 0 && mp <= 1))
		return tg_set_error(TG_EINVAL, "%s: min_p %g is outside [0, 1] "
		                    "(0: off)", op, mp);
	if (!(rp > 0) || isinf(rp))
		return tg_set_error(TG_EINVAL, "%s: repeat_penalty %g is not a "
		                    "finite value > 0 (1: off)", op, rp);
	if (p->penalty_last_n < 0)
		return tg_set_error(TG_EINVAL, "%s: penalty_last_n %ld is "
		                    "negative (0: no history)", op,
		                    (long)p->penalty_last_n);
	return 0;
}

tg_llm_sampler *tg_llm_sampler_new(const tg_llm_sampling *params)
{
	tg_llm_sampling p = params ? *params : tg_llm_sampling_default();
	size_t n = (size_t)p.penalty_last_n;
	tg_llm_sampler *s;

	if (check_params(&p) < 0)
		return NULL;
	s = calloc(1, sizeof *s);
	if (s) {
		s->hist = malloc((n ? n : 1) * sizeof *s->hist);
		s->seen = malloc((n ? n : 1) * sizeof *s->seen);
	}
	if (!s || !s->hist || !s->seen) {
		tg_llm_sampler_free(s);
		tg_set_error(TG_ENOMEM, "tg_llm_sampler_new: out of memory for a "
		             "history of %zu tokens", n);
		return NULL;
	}
	s->p = p;
	seed(s);
	return s;
}

void tg_llm_sampler_free(tg_llm_sampler *s)
{
	if (!s)
		return;
	free(s->hist);
	free(s->seen);
	free(s->c);
	free(s);
}

void tg_llm_sampler_reset(tg_llm_sampler *s)
{
	if (!s)
		return;
	s->nhist = s->hnext = 0;
	seed(s);
}

int tg_llm_sampler_accept(tg_llm_sampler *s, int32_t token)
{
	size_t n;

	if (!s)
		return tg_set_error(TG_EINVAL, "tg_llm_sampler_accept: NULL "
		                    "sampler");
	if (token < 0)
		return tg_set_error(TG_EINVAL, "tg_llm_sampler_accept: token %ld "
		                    "is negative", (long)token);
	n = (size_t)s->p.penalty_last_n;
	if (!n)
		return 0;
	s->hist[s->hnext] = token;
	s->hnext = (s->hnext + 1) % n;
	if (s->nhist < n)
		s->nhist++;
	return 0;
}

/* ---- the filters ---- */

/* a goes before b: a higher logit, or the same and a lower id. */
static int before(const cand *a, const cand *b)
{
	return a->logit > b->logit || (a->logit == b->logit && a->id < b->id);
}

static int cmp_cand(const void *x, const void *y)
{
	const cand *a = x, *b = y;

	return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

static int cmp_i32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;

	return (a > b) - (a < b);
}

/* CTRL's penalty, as llama.cpp: each distinct token of the history
 * (ids past the vocabulary ignored) once, a positive logit divided by
 * the penalty, any other multiplied by it. */
static void penalize(tg_llm_sampler *s, size_t n)
{
	const double rp = s->p.repeat_penalty;

	if (rp == 1 || !s->nhist)
		return;
	memcpy(s->seen, s->hist, s->nhist * sizeof *s->seen);
	qsort(s->seen, s->nhist, sizeof *s->seen, cmp_i32);
	for (size_t i = 0; i < s->nhist; i++) {
		int32_t id = s->seen[i];
		double *l;

		if ((i && id == s->seen[i - 1]) || (size_t)id >= n)
			continue;
		l = &s->c[id].logit;
		*l = *l > 0 ? *l / rp : *l * rp;
	}
}

/* Sifts c[i] down the heap c[0..n) whose root is the worst candidate. */
static void sift(cand *c, size_t n, size_t i)
{
	for (;;) {
		size_t w = i, l = 2 * i + 1, r = l + 1;
		cand t;

		if (l < n && before(&c[w], &c[l]))
			w = l;
		if (r < n && before(&c[w], &c[r]))
			w = r;
		if (w == i)
			return;
		t = c[i], c[i] = c[w], c[w] = t;
		i = w;
	}
}

/* Keeps the k best of c[0..n) in c[0..k): a heap of the best so far,
 * its worst at the root, O(n log k).  Returns k. */
static size_t top_k(cand *c, size_t n, size_t k)
{
	for (size_t i = k / 2; i-- > 0;)
		sift(c, k, i);
	for (size_t i = k; i < n; i++)
		if (before(&c[i], &c[0])) {
			c[0] = c[i];
			sift(c, k, 0);
		}
	return k;
}

/* The shortest prefix of the sorted c[0..n) whose probability, of
 * total sum (the weights exp(logit - lmax) of all the candidates),
 * reaches p: the token that crosses it stays, as llama.cpp's. */
static size_t top_p(const cand *c, size_t n, double p, double lmax,
                    double sum)
{
	double cum = 0;

	if (p >= 1)
		return n;
	for (size_t i = 0; i < n; i++) {
		cum += exp(c[i].logit - lmax) / sum;
		if (cum >= p)
			return i + 1;
	}
	return n;
}

/* The prefix of the sorted c[0..n) at least m times as likely as the
 * first. */
static size_t min_p(const cand *c, size_t n, double m)
{
	size_t k = 1;

	if (m <= 0)
		return n;
	while (k < n && exp(c[k].logit - c[0].logit) >= m)
		k++;
	return k;
}

/* Moves to the front of c[0..n) the candidates of logit >= t; returns
 * how many. */
static size_t partition(cand *c, size_t n, double t)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (c[i].logit >= t) {
			cand x = c[i];

			c[i] = c[k], c[k++] = x;
		}
	return k;
}

/* The candidates top-p and min-p may keep, moved to the front, without
 * sorting them all: those above a threshold that falls from lmax until
 * their weight reaches `need` (top-p; 0: off) or it passes `floor`
 * (min-p's bound; -inf: off).  Every candidate left behind is below
 * every one kept, so the kept ones sorted are the whole sort's head. */
static size_t head(cand *c, size_t n, double lmax, double need, double floor)
{
	for (double d = 1;; d *= 2) {
		double t = lmax - d, w = 0;

		if (t <= floor || need <= 0) /* d reaches inf: t -inf */
			return partition(c, n, floor);
		for (size_t i = 0; i < n; i++)
			if (c[i].logit >= t)
				w += exp(c[i].logit - lmax);
		if (w >= need)
			return partition(c, n, t);
	}
}

static int cmp_id(const void *x, const void *y)
{
	const cand *a = x, *b = y;

	return (a->id > b->id) - (a->id < b->id);
}

/* Top-k, top-p and min-p over c[0..n); returns how many candidates
 * they keep, at the front of c, in id order. */
static size_t filter(tg_llm_sampler *s, size_t n)
{
	const tg_llm_sampling *p = &s->p;
	cand *c = s->c;
	double lmax = -INFINITY, sum = 0;

	if (p->top_k && (size_t)p->top_k < n)
		n = top_k(c, n, (size_t)p->top_k);
	if (p->top_p < 1 || p->min_p > 0) {
		for (size_t i = 0; i < n; i++)
			lmax = c[i].logit > lmax ? c[i].logit : lmax;
		for (size_t i = 0; i < n; i++)
			sum += exp(c[i].logit - lmax);
		/* a hair below min-p's bound: the head holds all it keeps */
		n = head(c, n, lmax, p->top_p < 1 ? p->top_p * sum : 0,
		         p->min_p > 0 ? lmax + log(p->min_p) - 1e-9 : -INFINITY);
		qsort(c, n, sizeof *c, cmp_cand);
		n = top_p(c, n, p->top_p, lmax, sum);
		n = min_p(c, n, p->min_p);
	}
	qsort(c, n, sizeof *c, cmp_id);
	return n;
}

/* Draws from c[0..n) at temperature t: one uniform number walked along
 * the cumulative weights in id order. */
static int32_t draw(tg_llm_sampler *s, size_t n, double t)
{
	double lmax = -INFINITY, sum = 0, u, cum = 0;

	for (size_t i = 0; i < n; i++)
		lmax = s->c[i].logit > lmax ? s->c[i].logit : lmax;
	for (size_t i = 0; i < n; i++)
		sum += exp((s->c[i].logit - lmax) / t);
	u = uniform(s->rng) * sum;
	for (size_t i = 0; i + 1 < n; i++) {
		cum += exp((s->c[i].logit - lmax) / t);
		if (u < cum)
			return s->c[i].id;
	}
	return s->c[n - 1].id;
}

/* The highest logit's id, the lowest of equals (c is in id order). */
static int32_t argmax(const cand *c, size_t n)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (c[i].logit > c[best].logit)
			best = i;
	return c[best].id;
}

/* ---- one step ---- */

/* Copies the logits into the candidates; 0 or a status naming a bad
 * one. */
static int load(tg_llm_sampler *s, const float *logits, size_t n)
{
	static const char op[] = "tg_llm_sample";

	if (n > (size_t)INT32_MAX)
		return tg_set_error(TG_EINVAL, "%s: n_vocab %zu is over %ld", op,
		                    n, (long)INT32_MAX);
	if (n > s->cap) {
		cand *c = realloc(s->c, n * sizeof *c);

		if (!c)
			return tg_set_error(TG_ENOMEM, "%s: out of memory for %zu "
			                    "candidates", op, n);
		s->c = c, s->cap = n;
	}
	for (size_t i = 0; i < n; i++) {
		if (isnan(logits[i]) || (isinf(logits[i]) && logits[i] > 0))
			return tg_set_error(TG_EINVAL, "%s: logits[%zu] is %g", op, i,
			                    (double)logits[i]);
		s->c[i].logit = logits[i];
		s->c[i].id = (int32_t)i;
	}
	return 0;
}

/* Moves the candidates of finite logit to the front; returns how many. */
static size_t drop_impossible(cand *c, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isinf(c[i].logit))
			c[k++] = c[i];
	return k;
}

int32_t tg_llm_sample(tg_llm_sampler *s, const float *logits, size_t n_vocab)
{
	size_t n;

	if (!s || !logits || !n_vocab)
		return tg_set_error(TG_EINVAL, "tg_llm_sample: %s", !s ?
		                    "NULL sampler" : !logits ? "NULL logits" :
		                    "n_vocab is 0");
	if (load(s, logits, n_vocab) < 0)
		return tg_last_status();
	penalize(s, n_vocab);
	n = drop_impossible(s->c, n_vocab);
	if (!n)
		return tg_set_error(TG_EINVAL, "tg_llm_sample: all %zu logits are "
		                    "-inf", n_vocab);
	if (s->p.temperature == 0)
		return argmax(s->c, n);
	n = filter(s, n);
	return draw(s, n, s->p.temperature);
}

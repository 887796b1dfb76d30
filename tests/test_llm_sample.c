/*
 * test_llm_sample.c - tg/llm.h's sampler against a reference written
 * here with plain loops in double: for each filter and for the chain,
 * the distribution the filters leave is computed exactly, and 100,000
 * draws with a fixed seed must fall only on its tokens, with
 * frequencies that pass a chi-square test.  Then greedy decoding (ties
 * to the lowest id), seeds (the same sequence again, another seed
 * another), the penalty (exactly the history's logits change, once per
 * token, within its window) and every bad parameter and call with its
 * message.
 */
#include "config.h"

#include <stdint.h>

#include "testlib.h"

#include <tg/llm.h>

/* Logits uniform in [-2, 2) from a seeded LCG of the test's own. */
static void fill(float *l, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		l[i] = (float)((seed >> 8) / 16777216.0 * 4 - 2);
	}
}

/* ---- the reference ---- */

typedef struct ref_case {
	double temp, top_p, min_p, penalty;
	int top_k;
	size_t nhist;
	int32_t hist[4];
	int neg_inf; /* some logits -inf */
} ref_case;

static const ref_case cases[] = {
	{ 1.0, 1.0, 0.0, 1.0, 0, 0, { 0 }, 0 },       /* plain softmax */
	{ 1.0, 1.0, 0.0, 1.0, 5, 0, { 0 }, 0 },       /* top-k */
	{ 1.0, 0.7, 0.0, 1.0, 0, 0, { 0 }, 0 },       /* top-p */
	{ 1.0, 1.0, 0.3, 1.0, 0, 0, { 0 }, 0 },       /* min-p */
	{ 0.5, 1.0, 0.0, 1.0, 0, 0, { 0 }, 0 },       /* temperature */
	{ 2.0, 1.0, 0.0, 1.0, 0, 0, { 0 }, 0 },
	{ 1.0, 1.0, 0.0, 1.8, 0, 4, { 3, 7, 3, 11 }, 0 }, /* penalty */
	{ 0.7, 0.9, 0.05, 1.3, 12, 3, { 1, 2, 5 }, 0 },   /* the chain */
	{ 1.5, 0.8, 0.1, 1.0, 8, 0, { 0 }, 1 },       /* with -inf logits */
};

enum { NV = 24 };

static const double *sort_l; /* the logits cmp_desc orders by */

static int cmp_desc(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	if (sort_l[a] != sort_l[b])
		return sort_l[a] > sort_l[b] ? -1 : 1;
	return a - b;
}

/* The probabilities of case c over logits lf[0..n) into p: the whole
 * vocabulary sorted, each filter a loop. */
static void reference(const ref_case *c, const float *lf, int n, double *p)
{
	double *l = malloc(n * sizeof *l), *q = malloc(n * sizeof *q);
	double sum = 0, cum = 0;
	int *idx = malloc(n * sizeof *idx), keep = 0;

	for (int i = 0; i < n; i++) {
		int hit = 0;

		for (size_t h = 0; h < c->nhist; h++)
			hit |= c->hist[h] == i;
		l[i] = lf[i];
		if (hit)
			l[i] = l[i] > 0 ? l[i] / c->penalty : l[i] * c->penalty;
		idx[i] = i;
	}
	sort_l = l;
	qsort(idx, n, sizeof *idx, cmp_desc); /* higher first, then lower id */
	while (keep < n && !isinf(l[idx[keep]]))
		keep++;
	if (c->top_k && c->top_k < keep)
		keep = c->top_k;
	for (int i = 0; i < keep; i++)
		sum += q[i] = exp(l[idx[i]]);
	for (int i = 0; i < keep; i++) {
		cum += q[i] / sum;
		if (cum >= c->top_p) {
			keep = i + 1;
			break;
		}
	}
	sum = 0;
	for (int i = 0; i < keep; i++)
		sum += q[i];
	for (int i = 1; i < keep; i++)
		if (q[i] / sum < c->min_p * q[0] / sum) {
			keep = i;
			break;
		}
	memset(p, 0, n * sizeof *p);
	sum = 0;
	for (int i = 0; i < keep; i++)
		sum += p[idx[i]] = exp(l[idx[i]] / c->temp);
	for (int i = 0; i < keep; i++)
		p[idx[i]] /= sum;
	free(l), free(q), free(idx);
}

static tg_llm_sampler *make(const ref_case *c, uint64_t seed)
{
	tg_llm_sampling p = tg_llm_sampling_default();
	tg_llm_sampler *s;

	p.temperature = (float)c->temp, p.top_k = c->top_k;
	p.top_p = (float)c->top_p, p.min_p = (float)c->min_p;
	p.repeat_penalty = (float)c->penalty, p.seed = seed;
	s = tg_llm_sampler_new(&p);
	ck_assert_msg(s != NULL, "%s", tg_last_error());
	for (size_t h = 0; h < c->nhist; h++)
		ck_assert_int_eq(tg_llm_sampler_accept(s, c->hist[h]), 0);
	return s;
}

START_TEST(draws_follow_the_filtered_distribution)
{
	const ref_case *c = &cases[_i];
	enum { DRAWS = 100000 };
	float l[NV];
	double p[NV], chi2 = 0;
	long count[NV] = { 0 };
	int support = 0;
	tg_llm_sampler *s;

	fill(l, NV, 1234u + (uint32_t)_i);
	if (c->neg_inf)
		l[0] = l[5] = l[17] = -INFINITY;
	/* the case's p values are in float in the sampler: the same here */
	ref_case cf = *c;
	cf.top_p = (float)c->top_p, cf.min_p = (float)c->min_p;
	cf.temp = (float)c->temp, cf.penalty = (float)c->penalty;
	reference(&cf, l, NV, p);
	s = make(c, 42);
	for (int d = 0; d < DRAWS; d++) {
		int32_t t = tg_llm_sample(s, l, NV);

		ck_assert_msg(t >= 0 && t < NV, "%d: %s", t, tg_last_error());
		ck_assert_msg(p[t] > 0, "case %d drew token %d, which the "
		              "filters drop", _i, t);
		count[t]++;
	}
	for (int i = 0; i < NV; i++) {
		if (p[i] <= 0)
			continue;
		support++;
		chi2 += pow(count[i] - DRAWS * p[i], 2) / (DRAWS * p[i]);
	}
	/* df = support - 1; this bound is passed by chance with
	 * probability over 1 - 1e-5 at every df here */
	double df = support - 1;
	ck_assert_msg(chi2 <= df + 7 * sqrt(2 * df) + 10,
	              "case %d: chi2 %g over %d tokens", _i, chi2, support);
	tg_llm_sampler_free(s);
}
END_TEST

/* The filters' supports on their own, without chance: what each case
 * may draw is exactly what the reference keeps (top-k keeps k). */
START_TEST(supports_have_the_expected_size)
{
	float l[NV];
	double p[NV];
	int n = 0;

	fill(l, NV, 1234u + 1);
	reference(&cases[1], l, NV, p);
	for (int i = 0; i < NV; i++)
		n += p[i] > 0;
	ck_assert_int_eq(n, 5);
	fill(l, NV, 1234u + 2);
	reference(&cases[2], l, NV, p);
	n = 0;
	for (int i = 0; i < NV; i++)
		n += p[i] > 0;
	ck_assert(n > 1 && n < NV);
}
END_TEST

START_TEST(greedy_is_argmax_ties_to_lowest)
{
	float l[1000];
	tg_llm_sampling p = tg_llm_sampling_default();
	tg_llm_sampler *s;

	fill(l, 1000, 7);
	l[700] = l[300] = l[512] = 5.0f;
	p.temperature = 0;
	s = tg_llm_sampler_new(&p);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(tg_llm_sample(s, l, 1000), 300);
	l[300] = -INFINITY;
	ck_assert_int_eq(tg_llm_sample(s, l, 1000), 512);
	tg_llm_sampler_free(s);
	/* top_k 1 draws the same token at any temperature */
	p.temperature = 3, p.top_k = 1;
	s = tg_llm_sampler_new(&p);
	for (int k = 0; k < 20; k++)
		ck_assert_int_eq(tg_llm_sample(s, l, 1000), 512);
	tg_llm_sampler_free(s);
}
END_TEST

/* n draws of a fixed case into out. */
static void sequence(uint64_t seed, int32_t *out, int n)
{
	tg_llm_sampling p = tg_llm_sampling_default();
	float l[512];
	tg_llm_sampler *s;

	fill(l, 512, 99);
	p.temperature = 1.0f, p.top_k = 0, p.top_p = 1, p.min_p = 0;
	p.seed = seed;
	s = tg_llm_sampler_new(&p);
	for (int i = 0; i < n; i++)
		out[i] = tg_llm_sample(s, l, 512);
	tg_llm_sampler_reset(s);
	for (int i = 0; i < n; i++) /* reset: the same sequence again */
		ck_assert_int_eq(tg_llm_sample(s, l, 512), out[i]);
	tg_llm_sampler_free(s);
}

START_TEST(seeds_repeat_and_differ)
{
	int32_t a[200], b[200], c[200];
	int same = 0;
	/* the first draws of seed 1234 on this case, as made when the
	 * generator was written: a machine or libm that differs fails */
	static const int32_t golden[8] = { 21, 421, 350, 436, 44, 446, 208,
	                                    89 };

	sequence(1234, a, 200);
	sequence(1234, b, 200);
	sequence(1235, c, 200);
	ck_assert_mem_eq(a, b, sizeof a);
	for (int i = 0; i < 200; i++)
		same += a[i] == c[i];
	ck_assert_int_lt(same, 20);
	ck_assert_mem_eq(a, golden, sizeof golden);
}
END_TEST

/* Greedy over l after accepting hist with penalty rp, window last_n. */
static int32_t greedy(const float *l, size_t n, const int32_t *hist,
                      size_t nh, float rp, int32_t last_n)
{
	tg_llm_sampling p = tg_llm_sampling_default();
	tg_llm_sampler *s;
	int32_t t;

	p.temperature = 0, p.repeat_penalty = rp, p.penalty_last_n = last_n;
	s = tg_llm_sampler_new(&p);
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < nh; i++)
		tg_llm_sampler_accept(s, hist[i]);
	t = tg_llm_sample(s, l, n);
	tg_llm_sampler_free(s);
	return t;
}

START_TEST(penalty_changes_the_history_only)
{
	const float pos[4] = { 2.0f, 1.5f, -1.0f, -1.2f };
	const float neg[3] = { -1.0f, -1.4f, -3.0f };
	const int32_t h0[3] = { 0, 0, 0 }, h2[4] = { 0, 9, 2, 3 };

	ck_assert_int_eq(greedy(pos, 4, NULL, 0, 1.5f, 64), 0);
	/* 2 / 1.5 = 1.33 < 1.5, once however often 0 was seen */
	ck_assert_int_eq(greedy(pos, 4, h0, 3, 1.5f, 64), 1);
	ck_assert_int_eq(greedy(pos, 4, h0, 3, 1.2f, 64), 0); /* 1.67 */
	/* a negative logit is multiplied: -1 * 1.5 < -1.4 */
	ck_assert_int_eq(greedy(neg, 3, h0, 1, 1.5f, 64), 1);
	ck_assert_int_eq(greedy(neg, 3, h0, 1, 1.3f, 64), 0); /* -1.3 */
	/* the window: of 0 9 2 3 with last_n 2, only 2 and 3, and 0 keeps
	 * its 2.0; with last_n 4, 0 too (9 is past the vocabulary,
	 * ignored) */
	ck_assert_int_eq(greedy(pos, 4, h2, 4, 1.5f, 2), 0);
	ck_assert_int_eq(greedy(pos, 4, h2, 4, 1.5f, 4), 1);
	/* penalty 1 or an empty window change nothing */
	ck_assert_int_eq(greedy(pos, 4, h0, 3, 1.0f, 64), 0);
	ck_assert_int_eq(greedy(pos, 4, h0, 3, 1.5f, 0), 0);
}
END_TEST

START_TEST(a_large_vocabulary)
{
	enum { N = 49152 };
	float *l = malloc(N * sizeof *l);
	tg_llm_sampler *s = tg_llm_sampler_new(NULL);

	fill(l, N, 5);
	/* the defaults keep at most the 40 highest logits */
	for (int d = 0; d < 200; d++) {
		int32_t t = tg_llm_sample(s, l, N);
		float lt = l[t];
		int above = 0;

		for (int i = 0; i < N; i++)
			above += l[i] > lt;
		ck_assert_int_lt(above, 40);
	}
	tg_llm_sampler_free(s);
	free(l);
}
END_TEST

/* A vocabulary of SmolLM2's size with peaked logits, where top-p and
 * min-p sort only the head they may keep: the draws fall on the
 * reference's tokens, in bins of about a tenth of the probability,
 * the likeliest tokens first, as often as they should (chi-square). */
START_TEST(a_large_vocabulary_head)
{
	enum { N = 49152, DRAWS = 4000 };
	static const ref_case cs[] = {
		{ 1.0, 0.9, 0.0, 1.0, 0, 0, { 0 }, 0 },
		{ 0.8, 1.0, 0.01, 1.0, 0, 0, { 0 }, 0 },
		{ 1.2, 0.95, 0.05, 1.2, 0, 2, { 7, 9 }, 0 },
	};
	const ref_case *c = &cs[_i];
	float *l = malloc(N * sizeof *l);
	double *p = malloc(N * sizeof *p);
	long *count = calloc(N, sizeof *count);
	tg_llm_sampler *s;
	ref_case cf = *c;

	fill(l, N, 77 + (uint32_t)_i);
	for (int i = 0; i < N; i++) /* mostly near -10, a few up to 4 */
		l[i] = (float)(-10 + 14 * pow((l[i] + 2) / 4, 40));
	cf.top_p = (float)c->top_p, cf.min_p = (float)c->min_p;
	cf.temp = (float)c->temp, cf.penalty = (float)c->penalty;
	reference(&cf, l, N, p);
	s = make(c, 3);
	for (int d = 0; d < DRAWS; d++) {
		int32_t t = tg_llm_sample(s, l, N);

		ck_assert_msg(t >= 0 && t < N && p[t] > 0, "case %d drew %d", _i, t);
		count[t]++;
	}
	/* chi-square over bins of tokens by probability, the likeliest
	 * first, each about a tenth of it (400 expected draws).  The small
	 * vocabularies above pin the probabilities closely; this case is
	 * for the head's tokens, and catches a temperature 10% off only
	 * sometimes */
	double chi2 = 0, bp = 0, bc = 0;
	int bins = 0, *rank = malloc(N * sizeof *rank);

	for (int i = 0; i < N; i++)
		rank[i] = i;
	sort_l = p;
	qsort(rank, N, sizeof *rank, cmp_desc);
	for (int r = 0; r < N; r++) {
		int i = rank[r];

		bp += p[i], bc += (double)count[i];
		if (bp >= 0.1 || (r == N - 1 && DRAWS * bp >= 5)) {
			chi2 += (bc - DRAWS * bp) * (bc - DRAWS * bp) / (DRAWS * bp);
			bins++, bp = 0, bc = 0;
		}
	}
	ck_assert_int_ge(bins, 9);
	ck_assert_msg(chi2 <= bins - 1 + 7 * sqrt(2.0 * (bins - 1)) + 10,
	              "case %d: chi2 %g over %d bins", _i, chi2, bins);
	tg_llm_sampler_free(s);
	free(l), free(p), free(count), free(rank);
}
END_TEST

START_TEST(bad_params)
{
	tg_llm_sampling p;

#define REFUSED(field, value, msg)                            \
	p = tg_llm_sampling_default();                        \
	p.field = value;                                      \
	ck_assert_ptr_null(tg_llm_sampler_new(&p));           \
	ck_assert_int_eq(tg_last_status(), TG_EINVAL);        \
	ck_assert_error(msg)
	REFUSED(temperature, -0.5f, "tg_llm_sampler_new: temperature -0.5 is "
	        "not a finite value >= 0 (0: greedy)");
	REFUSED(temperature, NAN, "temperature nan");
	REFUSED(temperature, INFINITY, "temperature inf");
	REFUSED(top_k, -3, "tg_llm_sampler_new: top_k -3 is negative (0: off)");
	REFUSED(top_p, 0.0f, "tg_llm_sampler_new: top_p 0 is outside (0, 1] "
	        "(1: off)");
	REFUSED(top_p, 1.5f, "top_p 1.5 is outside (0, 1]");
	REFUSED(top_p, NAN, "top_p nan");
	REFUSED(min_p, -0.25f, "tg_llm_sampler_new: min_p -0.25 is outside "
	        "[0, 1] (0: off)");
	REFUSED(min_p, 2.0f, "min_p 2 is outside");
	REFUSED(repeat_penalty, 0.0f, "tg_llm_sampler_new: repeat_penalty 0 "
	        "is not a finite value > 0 (1: off)");
	REFUSED(repeat_penalty, -1.0f, "repeat_penalty -1 is not");
	REFUSED(penalty_last_n, -1, "tg_llm_sampler_new: penalty_last_n -1 "
	        "is negative");
#undef REFUSED
	/* the edges are accepted */
	p = tg_llm_sampling_default();
	p.top_p = 1, p.min_p = 1, p.temperature = 0, p.penalty_last_n = 0;
	tg_llm_sampler *s = tg_llm_sampler_new(&p);
	ck_assert_ptr_nonnull(s);
	tg_llm_sampler_free(s);
	p = tg_llm_sampling_default();
	ck_assert(p.temperature == 0.8f && p.top_k == 40 && p.top_p == 0.95f &&
	          p.min_p == 0.05f && p.repeat_penalty == 1.0f &&
	          p.penalty_last_n == 64 && p.seed == 0);
}
END_TEST

START_TEST(bad_calls)
{
	float l[4] = { 0, 1, 2, 3 };
	tg_llm_sampler *s = tg_llm_sampler_new(NULL);

	ck_assert_int_eq(tg_llm_sample(NULL, l, 4), TG_EINVAL);
	ck_assert_error("tg_llm_sample: NULL sampler");
	ck_assert_int_eq(tg_llm_sample(s, NULL, 4), TG_EINVAL);
	ck_assert_error("tg_llm_sample: NULL logits");
	ck_assert_int_eq(tg_llm_sample(s, l, 0), TG_EINVAL);
	ck_assert_error("tg_llm_sample: n_vocab is 0");
	l[2] = NAN;
	ck_assert_int_eq(tg_llm_sample(s, l, 4), TG_EINVAL);
	ck_assert_error("tg_llm_sample: logits[2] is nan");
	l[2] = INFINITY;
	ck_assert_int_eq(tg_llm_sample(s, l, 4), TG_EINVAL);
	ck_assert_error("tg_llm_sample: logits[2] is inf");
	for (int i = 0; i < 4; i++)
		l[i] = -INFINITY;
	ck_assert_int_eq(tg_llm_sample(s, l, 4), TG_EINVAL);
	ck_assert_error("tg_llm_sample: all 4 logits are -inf");
	l[3] = 0;
	ck_assert_int_eq(tg_llm_sample(s, l, 4), 3);
	ck_assert_int_eq(tg_llm_sampler_accept(NULL, 1), TG_EINVAL);
	ck_assert_error("tg_llm_sampler_accept: NULL sampler");
	ck_assert_int_eq(tg_llm_sampler_accept(s, -2), TG_EINVAL);
	ck_assert_error("tg_llm_sampler_accept: token -2 is negative");
	tg_llm_sampler_reset(NULL);
	tg_llm_sampler_free(s);
	tg_llm_sampler_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("llm_sample");
	TCase *tc = tcase_create("sample");

	tcase_set_timeout(tc, 300); /* under valgrind: ~50 times slower */
	tcase_add_loop_test(tc, draws_follow_the_filtered_distribution, 0,
	                    sizeof cases / sizeof cases[0]);
	tcase_add_test(tc, supports_have_the_expected_size);
	tcase_add_test(tc, greedy_is_argmax_ties_to_lowest);
	tcase_add_test(tc, seeds_repeat_and_differ);
	tcase_add_test(tc, penalty_changes_the_history_only);
	tcase_add_test(tc, a_large_vocabulary);
	tcase_add_loop_test(tc, a_large_vocabulary_head, 0, 3);
	tcase_add_test(tc, bad_params);
	tcase_add_test(tc, bad_calls);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

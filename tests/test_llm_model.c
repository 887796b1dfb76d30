/*
 * test_llm_model.c - libtgcore-llm's models (tg/llm.h): SmolLM2-135M
 * (the real file, llama architecture, Q4_1 weights and a tied Q8_0
 * embedding) run three ways that must agree: the whole prompt in one
 * batch with every position's logits, prefill then decode through the
 * JIT one token at a time, and several sequences of different lengths
 * in one batch, left-padded.  Then a chat's turns (prefill after
 * decode), the JIT compiling nothing after its capture, and every bad
 * call with its message.
 *
 * The model comes from TG_DEPS_DIR (deps.sh); without it the suite
 * skips (77), unless TG_TEST_REQUIRE_DEPS is set, when it fails.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "testlib.h"

#include <tg/llm.h>

#include "engine/engine.h"

static char modelpath[600];

/* The model, its vocabulary size and a tokenizer (fixture of a case). */
static tg_gguf *gf;
static tg_llm_model *model;
static tg_llm_tokenizer *tok;
static int64_t n_vocab;
static double worst;  /* the largest relative difference of a case */

static void load(void)
{
	tg_llm_model_info info;

	ck_assert_int_eq(tg_init(), 0);
	ck_assert_msg((gf = tg_gguf_open(modelpath)) != NULL, "%s",
	              tg_last_error());
	ck_assert_ptr_nonnull(tok = tg_llm_tokenizer_from_gguf(gf));
	ck_assert_msg((model = tg_llm_model_load(gf, NULL)) != NULL, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_llm_model_get_info(model, &info), 0);
	n_vocab = info.n_vocab;
}

static void unload(void)
{
	printf("logits agree to %.2g of the largest\n", worst);
	fflush(stdout);
	worst = 0;
	tg_llm_model_free(model);
	tg_llm_tokenizer_free(tok);
	tg_gguf_close(gf);
	model = NULL;
	tok = NULL;
	gf = NULL;
}

static size_t encode(const char *text, int32_t *ids, size_t max)
{
	long n = tg_llm_tokenize(tok, text, strlen(text), 0, ids, max);

	ck_assert_int_gt(n, 0);
	ck_assert_int_le(n, (long)max);
	return (size_t)n;
}

static int32_t argmax(const float *v, int64_t n)
{
	int32_t best = 0;

	for (int64_t i = 1; i < n; i++)
		if (v[i] > v[best])
			best = (int32_t)i;
	return best;
}

/* max |a - b| over n, and max |a| in *scale. */
static double max_diff(const float *a, const float *b, int64_t n,
                       double *scale)
{
	double d = 0, s = 0;

	for (int64_t i = 0; i < n; i++) {
		ck_assert_msg(isfinite(a[i]) && isfinite(b[i]), "logit %lld: "
		              "%g, %g", (long long)i, a[i], b[i]);
		d = fmax(d, fabs((double)a[i] - b[i]));
		s = fmax(s, fabs((double)a[i]));
	}
	*scale = s;
	return d;
}

/* Logits computed by different kernels (a matmul over the prompt, a
 * matvec per token; float32 sums in other orders) agree to this, with
 * logits of magnitude ~20 (they differ by ~4e-6 of the largest). */
#define TOL 1e-4

static void expect_close(const float *a, const float *b, const char *what,
                         int at)
{
	double scale, d = max_diff(a, b, n_vocab, &scale);

	worst = fmax(worst, d / fmax(scale, 1));
	ck_assert_msg(d <= TOL * fmax(scale, 1), "%s, step %d: logits differ "
	              "by %g (largest %g)", what, at, d, scale);
	ck_assert_int_eq(argmax(a, n_vocab), argmax(b, n_vocab));
}

/* The prompt, then greedy tokens: all of it in one batch gives every
 * position's logits, and prefill + decode gives the same rows. */
START_TEST(decode_matches_the_uncached_forward)
{
	enum { EXTRA = 8 };
	int32_t ids[64];
	size_t n;
	float *all, *one = malloc((size_t)n_vocab * sizeof *one);
	tg_llm_context *a, *b;

	n = encode("The capital of France is", ids, 64);
	ck_assert_ptr_nonnull(b = tg_llm_context_new(model, 64, 1));
	ck_assert_msg(tg_llm_prefill(b, ids, n, one, 0) == 0, "%s",
	              tg_last_error());
	for (int s = 0; s < EXTRA; s++) {
		ids[n + (size_t)s] = argmax(one, n_vocab);
		ck_assert_msg(tg_llm_decode(b, &ids[n + (size_t)s], one) == 0,
		              "%s", tg_last_error());
	}
	ck_assert_int_eq(tg_llm_context_pos(b), (int64_t)n + EXTRA);
	/* the uncached pass over prompt and continuation */
	all = malloc((n + EXTRA) * (size_t)n_vocab * sizeof *all);
	ck_assert_ptr_nonnull(a = tg_llm_context_new(model, 64, 1));
	ck_assert_int_eq(tg_llm_prefill(a, ids, n + EXTRA, all,
	                                TG_LLM_LOGITS_ALL), 0);
	/* replay b from the start and compare every decode step */
	ck_assert_int_eq(tg_llm_context_reset(b), 0);
	ck_assert_int_eq(tg_llm_prefill(b, ids, n, one, 0), 0);
	expect_close(&all[(n - 1) * (size_t)n_vocab], one, "prefill", 0);
	for (int s = 0; s < EXTRA; s++) {
		ck_assert_int_eq(tg_llm_decode(b, &ids[n + (size_t)s], one), 0);
		expect_close(&all[(n + (size_t)s) * (size_t)n_vocab], one,
		             "decode", s + 1);
		if (s + 1 < EXTRA)  /* greedy: each token was the argmax */
			ck_assert_int_eq(argmax(one, n_vocab), ids[n + (size_t)s + 1]);
	}
	tg_llm_context_free(a);
	tg_llm_context_free(b);
	free(all);
	free(one);
}
END_TEST

/* Two prompts of different lengths in one batch, the shorter padded on
 * the left with -1, give each prompt's logits alone; so do three decode
 * steps after them. */
START_TEST(padded_batch_matches_each_alone)
{
	enum { STEPS = 3 };
	const char *text[2] = { "Once upon a time, in a land far away",
	                        "def fib(n):" };
	int32_t ids[2][32], batch[2 * 32], next[2];
	size_t n[2], w, V = (size_t)n_vocab;
	float *lg = malloc(2 * V * sizeof *lg);
	float *alone = malloc(2 * (STEPS + 1) * V * sizeof *alone);
	tg_llm_context *c, *s;

	/* each alone: the prompt's logits, then STEPS greedy steps' */
	for (int q = 0; q < 2; q++) {
		float *a = &alone[(size_t)q * (STEPS + 1) * V];

		n[q] = encode(text[q], ids[q], 32);
		ck_assert_ptr_nonnull(s = tg_llm_context_new(model, 64, 1));
		ck_assert_int_eq(tg_llm_prefill(s, ids[q], n[q], a, 0), 0);
		for (int st = 1; st <= STEPS; st++) {
			int32_t t = argmax(&a[(size_t)(st - 1) * V], n_vocab);

			ck_assert_int_eq(tg_llm_decode(s, &t, &a[(size_t)st * V]), 0);
		}
		tg_llm_context_free(s);
	}
	ck_assert_uint_gt(n[0], n[1]);
	w = n[0];
	for (int q = 0; q < 2; q++)
		for (size_t i = 0; i < w; i++)
			batch[(size_t)q * w + i] = i < w - n[q]
			                           ? -1 : ids[q][i - (w - n[q])];
	ck_assert_ptr_nonnull(c = tg_llm_context_new(model, 64, 2));
	ck_assert_msg(tg_llm_prefill(c, batch, w, lg, 0) == 0, "%s",
	              tg_last_error());
	for (int st = 0; st <= STEPS; st++) {
		if (st > 0)
			ck_assert_msg(tg_llm_decode(c, next, lg) == 0, "%s",
			              tg_last_error());
		for (int q = 0; q < 2; q++) {
			expect_close(&alone[((size_t)q * (STEPS + 1) +
			                     (size_t)st) * V],
			             &lg[(size_t)q * V], q ? "short" : "long", st);
			next[q] = argmax(&lg[(size_t)q * V], n_vocab);
		}
	}
	tg_llm_context_free(c);
	free(lg);
	free(alone);
}
END_TEST

/* A chat's second turn: prefill after decode appends at the position;
 * its logits are those of the whole conversation in one batch. */
START_TEST(prefill_after_decode_appends)
{
	int32_t ids[64];
	size_t n1, n2;
	float *one = malloc((size_t)n_vocab * sizeof *one), *all;
	tg_llm_context *c, *a;

	n1 = encode("Hello! How are you?", ids, 64);
	ck_assert_ptr_nonnull(c = tg_llm_context_new(model, 64, 1));
	ck_assert_int_eq(tg_llm_prefill(c, ids, n1, one, 0), 0);
	for (int s = 0; s < 3; s++) {
		ids[n1 + (size_t)s] = argmax(one, n_vocab);
		ck_assert_int_eq(tg_llm_decode(c, &ids[n1 + (size_t)s], one), 0);
	}
	n2 = encode(" Tell me a joke.", &ids[n1 + 3], 64 - n1 - 3);
	ck_assert_int_eq(tg_llm_prefill(c, &ids[n1 + 3], n2, one, 0), 0);
	ck_assert_int_eq(tg_llm_context_pos(c), (int64_t)(n1 + 3 + n2));
	all = malloc((n1 + 3 + n2) * (size_t)n_vocab * sizeof *all);
	ck_assert_ptr_nonnull(a = tg_llm_context_new(model, 64, 1));
	ck_assert_int_eq(tg_llm_prefill(a, ids, n1 + 3 + n2, all,
	                                TG_LLM_LOGITS_ALL), 0);
	expect_close(&all[(n1 + 2 + n2) * (size_t)n_vocab], one, "turn", 2);
	tg_llm_context_free(a);
	tg_llm_context_free(c);
	free(all);
	free(one);
}
END_TEST

/* After the JIT's capture, decoding compiles nothing: every position
 * replays the same kernels. */
START_TEST(decode_compiles_nothing_after_capture)
{
	enum { STEPS = 40 };
	int32_t ids[8], t;
	float *lg = malloc((size_t)n_vocab * sizeof *lg);
	tg_llm_context *c;
	tg_jit_info info;
	size_t kernels = 0;

	ck_assert_ptr_nonnull(c = tg_llm_context_new(model, 128, 1));
	ck_assert_int_eq(tg_llm_prefill(c, ids, encode("Hi", ids, 8), lg, 0),
	                 0);
	for (int s = 0; s < STEPS; s++) {
		t = argmax(lg, n_vocab);
		ck_assert_int_eq(tg_llm_decode(c, &t, lg), 0);
		if (s == 2)
			kernels = tg_method_cache_count();
		if (s > 2)
			ck_assert_uint_eq(tg_method_cache_count(), kernels);
	}
	ck_assert_int_eq(tg_llm_context_jit_info(c, &info), 0);
	ck_assert_int_eq(info.captured, 1);
	ck_assert_uint_eq(info.calls, STEPS);
	ck_assert_uint_gt(info.kernels, 0);
	tg_llm_context_free(c);
	free(lg);
}
END_TEST

START_TEST(bad_calls)
{
	int32_t ids[4] = { 1, 2, 3, 4 }, bad = (int32_t)n_vocab, pad = -1;
	float *lg = malloc((size_t)n_vocab * sizeof *lg);
	tg_llm_context *c;
	tg_llm_model_info info;

	ck_assert_ptr_null(tg_llm_model_load(NULL, NULL));
	ck_assert_str_eq(tg_last_error(), "llm_model_load: NULL file");
	ck_assert_int_eq(tg_llm_model_get_info(NULL, &info), TG_EINVAL);
	ck_assert_int_eq(tg_llm_model_get_info(model, NULL), TG_EINVAL);
	ck_assert_ptr_null(tg_llm_context_new(NULL, 8, 1));
	ck_assert_str_eq(tg_last_error(), "llm_context_new: NULL model");
	ck_assert_ptr_null(tg_llm_context_new(model, -1, 1));
	ck_assert_str_eq(tg_last_error(), "llm_context_new: -1 positions for "
	                 "1 sequences (1 to 2^24 and 1 to 4096)");
	ck_assert_ptr_null(tg_llm_context_new(model, 8, 5000));
	ck_assert_ptr_nonnull(c = tg_llm_context_new(model, 4, 1));
	ck_assert_int_eq(tg_llm_context_size(c), 4);
	ck_assert_int_eq(tg_llm_prefill(NULL, ids, 1, lg, 0), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "llm_prefill: NULL context");
	ck_assert_int_eq(tg_llm_prefill(c, NULL, 1, lg, 0), TG_EINVAL);
	ck_assert_int_eq(tg_llm_prefill(c, ids, 1, lg, 4), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "llm_prefill: unknown flags 0x4");
	ck_assert_int_eq(tg_llm_prefill(c, ids, 0, lg, 0), TG_EINVAL);
	ck_assert_int_eq(tg_llm_prefill(c, &bad, 1, lg, 0), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "llm_prefill: token 49152 (sequence "
	                 "0, place 0) is not in the vocabulary (49152 tokens)");
	ck_assert_int_eq(tg_llm_prefill(c, &pad, 1, lg, 0), TG_EINVAL);
	ck_assert_int_eq(tg_llm_prefill(c, ids, 5, lg, 0), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "llm_prefill: 5 tokens at position 0 "
	                 "do not fit the context of 4");
	ck_assert_int_eq(tg_llm_context_pos(c), 0);
	ck_assert_int_eq(tg_llm_prefill(c, ids, 3, NULL, 0), 0);
	ck_assert_int_eq(tg_llm_decode(c, ids, NULL), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "llm_decode: NULL logits");
	ck_assert_int_eq(tg_llm_decode(c, ids, lg), 0);
	ck_assert_int_eq(tg_llm_decode(c, ids, lg), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "llm_decode: 1 tokens at position 4 "
	                 "do not fit the context of 4");
	ck_assert_int_eq(tg_llm_context_pos(c), 4);
	ck_assert_int_eq(tg_llm_context_reset(c), 0);
	ck_assert_int_eq(tg_llm_context_pos(c), 0);
	ck_assert_int_eq(tg_llm_context_reset(NULL), TG_EINVAL);
	ck_assert_int_eq(tg_llm_context_pos(NULL), -1);
	tg_llm_context_free(c);
	tg_llm_context_free(NULL);
	tg_llm_model_free(NULL);
	free(lg);
}
END_TEST

static int find_model(void)
{
	const char *deps = getenv("TG_DEPS_DIR");

	snprintf(modelpath, sizeof modelpath,
	         "%s/models/SmolLM2-135M-Instruct.Q4_1.gguf", deps ? deps : "");
	if (deps && !access(modelpath, R_OK))
		return 0;
	fprintf(stderr, "%s: no %s (run deps.sh)\n",
	        getenv("TG_TEST_REQUIRE_DEPS") ? "FAIL" : "SKIP", modelpath);
	return getenv("TG_TEST_REQUIRE_DEPS") ? 1 : 77;
}

static Suite *llm_model_suite(void)
{
	Suite *s = suite_create("llm_model");
	TCase *tc = tcase_create("smollm2");

	tcase_add_checked_fixture(tc, load, unload);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, decode_matches_the_uncached_forward);
	tcase_add_test(tc, padded_batch_matches_each_alone);
	tcase_add_test(tc, prefill_after_decode_appends);
	tcase_add_test(tc, decode_compiles_nothing_after_capture);
	tcase_add_test(tc, bad_calls);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int rc = find_model();

	return rc ? rc : tl_run(llm_model_suite());
}

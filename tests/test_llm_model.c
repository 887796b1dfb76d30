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
 * Every weight type and architecture: tests/llm/make_models.py writes
 * small models with seeded random weights (llama in each of the eleven
 * types, llama3's rope factors, qwen2, qwen3, qwen3moe, olmoe; the
 * SmolLM2 vocabulary), and tests/llm/ref_forward.py, an independent
 * float64 numpy forward pass written from the architectures'
 * definitions, gives every position's logits for a fixed sequence: the
 * batch and the decode steps must both match them.  One of them decodes
 * 300 tokens with no compiling after the capture, each step's logits
 * those of the uncached pass.  tests/llm/bad_models.py writes copies
 * with one thing wrong, each refused with its message.  What the scripts
 * make is cached in TG_DEPS_DIR/cache, under a hash of the scripts.
 *
 * The model and the references' Python come from TG_DEPS_DIR (deps.sh);
 * without them the suite skips (77), unless TG_TEST_REQUIRE_DEPS is
 * set, when it fails.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "testlib.h"

#include <tg/llm.h>

#include "engine/engine.h"

static char modelpath[600], tinydir[600];

/* The small models (tinydir/models.txt) and the bad ones (bad.txt). */
enum { MAX_TINY = 32 };
static char tiny[MAX_TINY][64], badf[MAX_TINY][64], bad_msg[MAX_TINY][256];
static int ntiny, nbad;

/* SmolLM2 against transformers (tests/llm/reference.py): the prompts,
 * text or a one-message chat, and what the reference made of them. */
enum { NHF = 6, HF_STEPS = 32, HF_LOGIT_STEPS = 4 };
static const struct { const char *text; int chat; } hf_prompts[NHF] = {
	{ "The capital of France is", 0 },
	{ "Once upon a time, there was a little robot who", 0 },
	{ "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n", 0 },
	{ "1, 2, 3, 5, 8, 13,", 0 },
	{ "What is the tallest mountain in the world?", 1 },
	{ "Write a haiku about the sea.", 1 },
};
static int32_t hf_prompt[NHF][256], hf_tokens[NHF][HF_STEPS];
static size_t hf_nprompt[NHF];
static char hfdir[700];
/* the sequence ref_forward.py computes (make_models.py's advice: the
 * MoE routers' choices are clear for it) */
static const int32_t seq[12] = { 1, 9906, 314, 2088, 17, 28, 100, 4000,
                                 49151, 0, 55, 2 };

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

/* ---- SmolLM2 against transformers ---- */

/* The prompt's ids as tgcore makes them: the text's tokens, or the
 * chat template's text tokenized with its special tokens. */
static size_t own_prompt(int i, int32_t *ids, size_t max)
{
	tg_llm_chat *chat;
	tg_llm_message msg = { "user", hf_prompts[i].text };
	char text[4096];
	long n;

	if (!hf_prompts[i].chat)
		return encode(hf_prompts[i].text, ids, max);
	ck_assert_ptr_nonnull(chat = tg_llm_chat_from_gguf(gf));
	ck_assert_int_lt(tg_llm_chat_format(chat, &msg, 1, 1, text, sizeof text),
	                 (long)sizeof text);
	tg_llm_chat_free(chat);
	n = tg_llm_tokenize(tok, text, strlen(text), TG_LLM_PARSE_SPECIAL, ids,
	                    max);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* The prompt's ids are transformers' (its tokenizer, its chat
 * template); 32 greedy steps give its tokens, and the first four
 * steps' logits agree to 1e-3 (both float32 on the dequantized
 * weights; logits reach 20 to 37). */
START_TEST(smollm2_matches_transformers)
{
	size_t V = (size_t)n_vocab, n;
	int32_t ids[256], t;
	float *lg = malloc(V * sizeof *lg), *ref = malloc(HF_LOGIT_STEPS * V *
	                                                  sizeof *ref);
	char path[800];
	tg_llm_context *c;
	FILE *f;
	double scale, d;

	n = own_prompt(_i, ids, 256);
	ck_assert_uint_eq(n, hf_nprompt[_i]);
	ck_assert_mem_eq(ids, hf_prompt[_i], n * sizeof *ids);
	snprintf(path, sizeof path, "%s/logits.f32", hfdir);
	ck_assert_ptr_nonnull(f = fopen(path, "rb"));
	ck_assert_int_eq(fseek(f, (long)((size_t)_i * HF_LOGIT_STEPS * V *
	                                 sizeof *ref), SEEK_SET), 0);
	ck_assert_uint_eq(fread(ref, sizeof *ref, HF_LOGIT_STEPS * V, f),
	                  HF_LOGIT_STEPS * V);
	fclose(f);
	ck_assert_ptr_nonnull(c = tg_llm_context_new(model, 512, 1));
	ck_assert_int_eq(tg_llm_prefill(c, ids, n, lg, 0), 0);
	for (int s = 0; s < HF_STEPS; s++) {
		if (s < HF_LOGIT_STEPS) {
			d = max_diff(&ref[(size_t)s * V], lg, n_vocab, &scale);
			worst = fmax(worst, d / scale);
			ck_assert_msg(d <= 1e-3, "prompt %d, step %d: logits differ "
			              "from transformers' by %g (largest %g)", _i, s,
			              d, scale);
		}
		t = argmax(lg, n_vocab);
		ck_assert_msg(t == hf_tokens[_i][s], "prompt %d, step %d: token "
		              "%d, transformers' %d", _i, s, t, hf_tokens[_i][s]);
		ck_assert_int_eq(tg_llm_decode(c, &t, lg), 0);
	}
	tg_llm_context_free(c);
	free(lg);
	free(ref);
}
END_TEST

/* ---- the small models against the numpy reference ---- */

static float *read_ref(const char *name, size_t n)
{
	char path[800];
	float *r = malloc(n * sizeof *r);
	FILE *f;

	snprintf(path, sizeof path, "%s/%s.ref", tinydir, name);
	ck_assert_msg((f = fopen(path, "rb")) != NULL, "no %s", path);
	ck_assert_uint_eq(fread(r, sizeof *r, n, f), n);
	fclose(f);
	return r;
}

static tg_llm_model *load_tiny(const char *name, tg_gguf **g)
{
	char path[800];
	tg_llm_model *m;

	snprintf(path, sizeof path, "%s/%s.gguf", tinydir, name);
	ck_assert_int_eq(tg_init(), 0);
	ck_assert_msg((*g = tg_gguf_open(path)) != NULL, "%s", tg_last_error());
	ck_assert_msg((m = tg_llm_model_load(*g, NULL)) != NULL, "%s: %s",
	              name, tg_last_error());
	return m;
}

/* |a - b| <= 1e-4 of the largest reference logit (they agree to ~2e-6;
 * a wrong rope layout, head mapping or expert rule moves them >= 10%) */
static void expect_ref(const float *got, const float *ref, size_t n,
                       const char *name, const char *what)
{
	double scale, d = max_diff(ref, got, (int64_t)n, &scale);

	ck_assert_msg(d <= 1e-4 * fmax(scale, 1), "%s, %s: logits differ from "
	              "the reference by %g (largest %g)", name, what, d, scale);
}

START_TEST(tiny_matches_the_reference)
{
	const char *name = tiny[_i];
	tg_gguf *g;
	tg_llm_model *m = load_tiny(name, &g);
	tg_llm_model_info info;
	tg_llm_context *c;
	size_t V;
	float *ref, *all, *one;

	ck_assert_int_eq(tg_llm_model_get_info(m, &info), 0);
	V = (size_t)info.n_vocab;
	ck_assert_uint_eq(V, 49152);
	ref = read_ref(name, 12 * V);
	all = malloc(12 * V * sizeof *all);
	ck_assert_ptr_nonnull(c = tg_llm_context_new(m, 16, 1));
	ck_assert_msg(tg_llm_prefill(c, seq, 12, all, TG_LLM_LOGITS_ALL) == 0,
	              "%s: %s", name, tg_last_error());
	expect_ref(all, ref, 12 * V, name, "one batch");
	/* half as a prompt, the rest one token at a time */
	ck_assert_int_eq(tg_llm_context_reset(c), 0);
	one = malloc(V * sizeof *one);
	ck_assert_int_eq(tg_llm_prefill(c, seq, 6, one, 0), 0);
	expect_ref(one, &ref[5 * V], V, name, "prefill");
	for (int t = 6; t < 12; t++) {
		ck_assert_msg(tg_llm_decode(c, &seq[t], one) == 0, "%s: %s", name,
		              tg_last_error());
		expect_ref(one, &ref[(size_t)t * V], V, name, "decode");
	}
	tg_llm_context_free(c);
	tg_llm_model_free(m);
	tg_gguf_close(g);
	free(ref);
	free(all);
	free(one);
}
END_TEST

/* 300 greedy steps through the JIT: nothing compiles after the capture,
 * and every step's logits are the uncached pass's over the sequence. */
START_TEST(decode_300_compiles_nothing)
{
	enum { STEPS = 300 };
	tg_gguf *g;
	tg_llm_model *m = load_tiny("llama-q4_0", &g);
	int32_t ids[STEPS + 1] = { 1 };
	size_t V = 49152, kernels = 0;
	float *steps = malloc((STEPS + 1) * V * sizeof *steps), *all;
	tg_llm_context *c = tg_llm_context_new(m, STEPS + 8, 1);
	tg_jit_info info;

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(tg_llm_prefill(c, ids, 1, steps, 0), 0);
	for (int s = 0; s < STEPS; s++) {
		ids[s + 1] = argmax(&steps[(size_t)s * V], (int64_t)V);
		ck_assert_msg(tg_llm_decode(c, &ids[s + 1],
		                            &steps[(size_t)(s + 1) * V]) == 0,
		              "step %d: %s", s, tg_last_error());
		if (s == 2)
			kernels = tg_method_cache_count();
		if (s > 2)
			ck_assert_uint_eq(tg_method_cache_count(), kernels);
	}
	ck_assert_int_eq(tg_llm_context_jit_info(c, &info), 0);
	ck_assert_int_eq(info.captured, 1);
	ck_assert_uint_eq(info.calls, STEPS);
	all = malloc((STEPS + 1) * V * sizeof *all);
	ck_assert_int_eq(tg_llm_context_reset(c), 0);
	ck_assert_int_eq(tg_llm_prefill(c, ids, STEPS + 1, all,
	                                TG_LLM_LOGITS_ALL), 0);
	for (int s = 0; s <= STEPS; s++)
		expect_ref(&steps[(size_t)s * V], &all[(size_t)s * V], V,
		           "llama-q4_0", "300 steps");
	tg_llm_context_free(c);
	tg_llm_model_free(m);
	tg_gguf_close(g);
	free(steps);
	free(all);
}
END_TEST

/* A model and a context made inside the caller's scope outlive it: the
 * library holds references of its own. */
START_TEST(objects_outlive_the_callers_scope)
{
	tg_gguf *g;
	tg_llm_model *m;
	tg_llm_context *c;
	int32_t ids[2] = { 1, 2 };
	float *lg = malloc(49152 * sizeof *lg);

	tg_scope_begin();
	m = load_tiny("llama-q4_0", &g);
	c = tg_llm_context_new(m, 16, 1);
	tg_scope_end();
	ck_assert_ptr_nonnull(c);
	ck_assert_msg(tg_llm_prefill(c, ids, 2, lg, 0) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_llm_decode(c, ids, lg), 0);
	tg_llm_context_free(c);
	tg_llm_model_free(m);
	tg_gguf_close(g);
	free(lg);
}
END_TEST

START_TEST(bad_files_are_refused)
{
	char path[800], want[1200];
	const char *p;
	tg_gguf *g;

	snprintf(path, sizeof path, "%s/%s.gguf", tinydir, badf[_i]);
	/* the message, with {path} for the file */
	p = strstr(bad_msg[_i], "{path}");
	if (p)
		snprintf(want, sizeof want, "%.*s%s%s", (int)(p - bad_msg[_i]),
		         bad_msg[_i], path, p + 6);
	else
		snprintf(want, sizeof want, "%s", bad_msg[_i]);
	ck_assert_int_eq(tg_init(), 0);
	ck_assert_msg((g = tg_gguf_open(path)) != NULL, "%s", tg_last_error());
	ck_assert_ptr_null(tg_llm_model_load(g, NULL));
	ck_assert_str_eq(tg_last_error(), want);
	tg_gguf_close(g);
}
END_TEST

/* Reads the lines of tinydir/file, "NAME ..." or "NAME<TAB>rest", into
 * names (and rest when not NULL); the count, -1 without the file. */
static int read_list(const char *file, char (*names)[64],
                     char (*rest)[256])
{
	char path[800], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", tinydir, file);
	if (!(f = fopen(path, "r")))
		return -1;
	while (n < MAX_TINY && fgets(line, sizeof line, f)) {
		char *tab = strchr(line, '\t'), *nl = strchr(line, '\n');

		if (nl)
			*nl = 0;
		if (tab)
			*tab = 0;
		line[strcspn(line, " ")] = 0;  /* models.txt: NAME ARCH ... */
		snprintf(names[n], 64, "%.63s", line);
		if (rest)
			snprintf(rest[n], 256, "%.255s", tab ? tab + 1 : "");
		n++;
	}
	fclose(f);
	return n;
}

/* FNV-1a over the scripts that make the small models and their
 * references: the key of their cache. */
static uint64_t scripts_hash(const char *src)
{
	static const char *const names[] = { "make_models.py", "ref_forward.py",
	                                      "bad_models.py", "reference.py" };
	uint64_t h = 14695981039346656037u;
	char path[800];

	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		FILE *f;
		int c;

		snprintf(path, sizeof path, "%s/llm/%s", src, names[i]);
		if (!(f = fopen(path, "rb")))
			return 0;
		while ((c = fgetc(f)) != EOF)
			h = (h ^ (uint64_t)c) * 1099511628211u;
		fclose(f);
	}
	return h;
}

/* Writes the small models, their reference logits and the bad files
 * (a minute or two of Python) into TG_DEPS_DIR/cache/llm-models-HASH,
 * or finds them there from an earlier run of the same scripts; 0 or
 * 1. */
static int make_tiny(const char *py, const char *deps)
{
	const char *src = getenv("TG_TEST_SRCDIR");
	char cmd[3000], ids[128] = "", stamp[800];
	uint64_t h;

	src = src ? src : "tests";
	if (!(h = scripts_hash(src)))
		return fprintf(stderr, "FAIL: no %s/llm/*.py\n", src), 1;
	snprintf(tinydir, sizeof tinydir, "%s/cache/llm-models-%016llx", deps,
	         (unsigned long long)h);
	snprintf(stamp, sizeof stamp, "%s/complete", tinydir);
	if (!access(stamp, R_OK))
		goto read;
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && '%s' '%s/llm/make_models.py' "
	         "'%s' --vocab-from '%s' >/dev/null", tinydir, py, src, tinydir,
	         modelpath);
	if (system(cmd) || (ntiny = read_list("models.txt", tiny, NULL)) < 1)
		return fprintf(stderr, "FAIL: %s\n", cmd), 1;
	for (int i = 0; i < 12; i++)
		snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d",
		         i ? "," : "", (int)seq[i]);
	for (int i = 0; i < ntiny; i++) {
		snprintf(cmd, sizeof cmd, "'%s' '%s/llm/ref_forward.py' "
		         "'%s/%s.gguf' --tokens %s --out '%s/%s.ref' >/dev/null",
		         py, src, tinydir, tiny[i], ids, tinydir, tiny[i]);
		if (system(cmd))
			return fprintf(stderr, "FAIL: %s\n", cmd), 1;
	}
	snprintf(cmd, sizeof cmd, "'%s' '%s/llm/bad_models.py' "
	         "'%s/llama-q4_0.gguf' '%s' && touch '%s'", py, src, tinydir,
	         tinydir, stamp);
	if (system(cmd))
		return fprintf(stderr, "FAIL: %s\n", cmd), 1;
read:
	ntiny = read_list("models.txt", tiny, NULL);
	nbad = read_list("bad.txt", badf, bad_msg);
	return ntiny > 0 && nbad > 0 ? 0 : 1;
}

/* Reads reference.py's "prompt N ids..." and "tokens N ids..." lines,
 * a pair per prompt in order. */
static int read_plain(FILE *f)
{
	char word[16];
	int n, np = 0, nt = 0;

	while (fscanf(f, "%15s %d", word, &n) == 2 && n >= 0) {
		int prompt = !strcmp(word, "prompt");
		int i = prompt ? np++ : nt++;
		int32_t *dst = prompt ? hf_prompt[i] : hf_tokens[i];

		if (i >= NHF || n > (prompt ? 256 : HF_STEPS))
			return -1;
		for (int k = 0; k < n; k++)
			if (fscanf(f, "%d", &dst[k]) != 1)
				return -1;
		if (prompt)
			hf_nprompt[i] = (size_t)n;
		else if (n != HF_STEPS)
			return -1;
	}
	return np == NHF && nt == NHF ? 0 : -1;
}

/* transformers' prompts, greedy tokens and first logits for the six
 * prompts, into TG_DEPS_DIR/cache/hf-HASH (a minute of PyTorch), or
 * from there; 0 or 1. */
static int run_transformers(const char *py, const char *deps,
                            const char *src)
{
	char jobs[800], cmd[8000], out[800];
	uint64_t h = scripts_hash(src) ^ 0x9e3779b97f4a7c15u;
	FILE *f;

	for (int i = 0; i < NHF; i++)
		for (const char *p = hf_prompts[i].text; *p; p++)
			h = (h ^ (uint8_t)*p) * 1099511628211u;
	snprintf(hfdir, sizeof hfdir, "%s/cache/hf-%016llx", deps,
	         (unsigned long long)h);
	snprintf(out, sizeof out, "%s/tokens.txt", hfdir);
	if (access(out, R_OK)) {
		snprintf(cmd, sizeof cmd, "mkdir -p '%s'", hfdir);
		snprintf(jobs, sizeof jobs, "%s/prompts.jsonl", hfdir);
		if (system(cmd) || !(f = fopen(jobs, "w")))
			return 1;
		for (int i = 0; i < NHF; i++) {
			fprintf(f, hf_prompts[i].chat ? "{\"chat\": [{\"role\": "
			        "\"user\", \"content\": \"" : "{\"text\": \"");
			for (const char *p = hf_prompts[i].text; *p; p++)
				fprintf(f, *p == '"' || *p == '\\' ? "\\%c"
				        : *p == '\n' ? "\\n" : "%c", *p);
			fprintf(f, hf_prompts[i].chat ? "\"}]}\n" : "\"}\n");
		}
		fclose(f);
		snprintf(cmd, sizeof cmd, "'%s' '%s/llm/reference.py' '%s' "
		         "--backend transformers --batch '%s' -n %d --logits "
		         "'%s/logits.f32' --logits-steps %d --plain >'%s.new' && "
		         "mv '%s.new' '%s'", py, src, modelpath, jobs, HF_STEPS,
		         hfdir, HF_LOGIT_STEPS, out, out, out);
		if (system(cmd))
			return fprintf(stderr, "FAIL: %s\n", cmd), 1;
	}
	if (!(f = fopen(out, "r")))
		return 1;
	if (read_plain(f))
		return fclose(f), fprintf(stderr, "FAIL: %s: not six prompts "
		                          "of %d tokens\n", out, HF_STEPS), 1;
	fclose(f);
	return 0;
}

/* The model and the references' Python; 0, 77 (skip) or 1. */
static int find_deps(void)
{
	const char *deps = getenv("TG_DEPS_DIR");
	char py[600];

	snprintf(modelpath, sizeof modelpath,
	         "%s/models/SmolLM2-135M-Instruct.Q4_1.gguf", deps ? deps : "");
	snprintf(py, sizeof py, "%s/venv/bin/python", deps ? deps : "");
	if (deps && !access(modelpath, R_OK) && !access(py, X_OK)) {
		const char *src = getenv("TG_TEST_SRCDIR");

		return make_tiny(py, deps) ||
		       run_transformers(py, deps, src ? src : "tests");
	}
	fprintf(stderr, "%s: no %s or %s (run deps.sh)\n",
	        getenv("TG_TEST_REQUIRE_DEPS") ? "FAIL" : "SKIP", modelpath, py);
	return getenv("TG_TEST_REQUIRE_DEPS") ? 1 : 77;
}

/* On another device than the CPU (DEVICE set, tests/dev/ * /
 * test_llm_model.dev) the suite runs one small model of each
 * architecture and each kind of block (the CPU run has them all, and
 * SmolLM2): the kernels are the device's, the host's code the same. */
static void device_subset(void)
{
	static const char *const keep[] = { "llama-f16", "llama-q4_0",
		"llama-q8_0", "llama-q4_k", "llama-q6_k", "llama3-rope", "qwen2",
		"qwen3", "qwen3moe", "olmoe" };
	int n = 0;

	for (int i = 0; i < ntiny; i++)
		for (size_t k = 0; k < sizeof keep / sizeof *keep; k++)
			if (!strcmp(tiny[i], keep[k])) {
				memmove(tiny[n++], tiny[i], sizeof tiny[i]);
				break;
			}
	ntiny = n;
}

static Suite *llm_model_suite(int on_device)
{
	Suite *s = suite_create("llm_model");
	TCase *tc, *t = tcase_create("tiny");

	if (on_device) {
		device_subset();
		tcase_set_timeout(t, 1200);
		tcase_add_loop_test(t, tiny_matches_the_reference, 0, ntiny);
		tcase_add_test(t, decode_300_compiles_nothing);
		suite_add_tcase(s, t);
		return s;
	}
	tc = tcase_create("smollm2");

	tcase_add_checked_fixture(tc, load, unload);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, decode_matches_the_uncached_forward);
	tcase_add_test(tc, padded_batch_matches_each_alone);
	tcase_add_test(tc, prefill_after_decode_appends);
	tcase_add_test(tc, bad_calls);
	tcase_add_loop_test(tc, smollm2_matches_transformers, 0, NHF);
	suite_add_tcase(s, tc);
	tcase_set_timeout(t, 600);
	tcase_add_loop_test(t, tiny_matches_the_reference, 0, ntiny);
	tcase_add_test(t, decode_300_compiles_nothing);
	tcase_add_test(t, objects_outlive_the_callers_scope);
	tcase_add_loop_test(t, bad_files_are_refused, 0, nbad);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	const char *dev = getenv("DEVICE");
	int rc = find_deps();

	return rc ? rc : tl_run(llm_model_suite(dev && *dev &&
	                                        strcasecmp(dev, "CPU")));
}

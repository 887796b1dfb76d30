/*
 * test_llm_tokenizer.c - libtgcore-llm's tokenizers (tg/llm.h) against
 * Hugging Face's `tokenizers`: tests/llm/corpus.py builds the reference
 * tokenizers (SmolLM2's vocabulary and merges, read from the GGUF file,
 * under four pre-tokenizers; a small SentencePiece BPE trained there)
 * and writes over 1,000 strings with their ids.  Every string must give
 * the same ids, with control tokens parsed and as text, and decode back
 * to itself, whole and streamed one id at a time.  Then invalid UTF-8,
 * BOS/EOS, buffers too small, a megabyte of text round-tripped, and
 * every bad input with its message.
 *
 * The references need TG_DEPS_DIR (deps.sh): its venv's Python with
 * `gguf` and `tokenizers`, and models/SmolLM2-135M-Instruct.Q4_1.gguf.
 * Without them the suite skips (exit 77), unless TG_TEST_REQUIRE_DEPS is
 * set, when it fails.  The tokenizers come from corpus.py's dumps through
 * the internal tg_tok_new, and from GGUF files (the model itself, the
 * SentencePiece vocabulary and bad vocabularies that corpus.py writes)
 * through tg_llm_tokenizer_from_gguf.
 */
#include "config.h"

#include <stdint.h>

#include "testlib.h"

#include <tg/llm.h>

#include "llm/llm.h"

static char refdir[600], modelpath[600];

/* ---- loading the dumps and corpora ---- */

/* A tg_tok_spec with the memory it points to. */
typedef struct spec_buf {
	tg_tok_spec s;
	char *model, *pre;
	char **tokens, **merges;
	size_t *token_lens, *merge_lens;
	int32_t *types;
	float *scores;
} spec_buf;

static char *read_bytes(FILE *f, size_t n)
{
	char *b = malloc(n + 1);

	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, n, f), n);
	b[n] = '\0';
	ck_assert_int_eq(fgetc(f), '\n');
	return b;
}

static int64_t read_key(FILE *f, const char *key)
{
	char k[64];
	long long v;

	ck_assert_int_eq(fscanf(f, "%63s %lld\n", k, &v), 2);
	ck_assert_str_eq(k, key);
	return v;
}

static void load_dump(const char *name, spec_buf *b)
{
	char path[700], word[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", refdir, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s", path);
	memset(b, 0, sizeof *b);
	b->model = calloc(1, 64), b->pre = calloc(1, 64);
	ck_assert_int_eq(fscanf(f, "tgtok 1\nmodel %63s\npre %63s\n", b->model,
	                        b->pre), 2);
	b->s.model = b->model;
	b->s.pre = strcmp(b->pre, "-") ? b->pre : NULL;
	b->s.bos = read_key(f, "bos"), b->s.eos = read_key(f, "eos");
	b->s.unk = read_key(f, "unk"), b->s.pad = read_key(f, "pad");
	b->s.add_bos = (int)read_key(f, "add_bos");
	b->s.add_eos = (int)read_key(f, "add_eos");
	b->s.add_space_prefix = (int)read_key(f, "add_space_prefix");
	ck_assert_int_eq(fscanf(f, "%63s %zu\n", word, &n), 2);
	b->tokens = calloc(n, sizeof *b->tokens);
	b->token_lens = calloc(n, sizeof *b->token_lens);
	b->types = calloc(n, sizeof *b->types);
	b->scores = calloc(n, sizeof *b->scores);
	for (size_t i = 0; i < n; i++) {
		int type;

		ck_assert_int_eq(fscanf(f, "%zu %d %f", &b->token_lens[i], &type,
		                        &b->scores[i]), 3);
		ck_assert_int_eq(fgetc(f), '\n');
		b->types[i] = type;
		b->tokens[i] = read_bytes(f, b->token_lens[i]);
	}
	b->s.n_tokens = n;
	b->s.tokens = (const char *const *)b->tokens;
	b->s.token_lens = b->token_lens;
	b->s.types = b->types, b->s.scores = b->scores;
	ck_assert_int_eq(fscanf(f, "%63s %zu\n", word, &n), 2);
	b->merges = calloc(n ? n : 1, sizeof *b->merges);
	b->merge_lens = calloc(n ? n : 1, sizeof *b->merge_lens);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(fscanf(f, "%zu", &b->merge_lens[i]), 1);
		ck_assert_int_eq(fgetc(f), '\n');
		b->merges[i] = read_bytes(f, b->merge_lens[i]);
	}
	b->s.n_merges = n;
	b->s.merges = (const char *const *)b->merges;
	b->s.merge_lens = b->merge_lens;
	fclose(f);
}

static void free_dump(spec_buf *b)
{
	for (size_t i = 0; i < b->s.n_tokens; i++)
		free(b->tokens[i]);
	for (size_t i = 0; i < b->s.n_merges; i++)
		free(b->merges[i]);
	free(b->tokens), free(b->token_lens), free(b->types), free(b->scores);
	free(b->merges), free(b->merge_lens), free(b->model), free(b->pre);
}

/* A tokenizer from dump `name`, with pre-tokenizer pre (NULL: the
 * dump's). */
static tg_llm_tokenizer *load(const char *name, const char *pre)
{
	spec_buf b;
	tg_llm_tokenizer *t;

	load_dump(name, &b);
	if (pre)
		b.s.pre = pre;
	t = tg_tok_new(&b.s);
	ck_assert_msg(t != NULL, "%s", tg_last_error());
	free_dump(&b);
	return t;
}

typedef struct ref_case {
	char *text;
	size_t len;
	int32_t *ids[2]; /* [0]: control tokens parsed, [1]: as text */
	size_t n[2];
} ref_case;

static size_t load_corpus(const char *name, ref_case **out)
{
	char path[700];
	size_t n = 0, cap = 0, len;
	ref_case *v = NULL;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", refdir, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s", path);
	while (fscanf(f, "case %zu", &len) == 1 && fgetc(f) == '\n') {
		ref_case *c;

		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			v = realloc(v, cap * sizeof *v);
		}
		c = &v[n++];
		c->len = len;
		c->text = read_bytes(f, len);
		for (int k = 0; k < 2; k++) {
			ck_assert_int_eq(fscanf(f, "ids %zu", &c->n[k]), 1);
			c->ids[k] = malloc((c->n[k] + 1) * sizeof *c->ids[k]);
			for (size_t i = 0; i < c->n[k]; i++)
				ck_assert_int_eq(fscanf(f, "%d", &c->ids[k][i]), 1);
			ck_assert_int_eq(fscanf(f, " \n"), 0);
		}
	}
	fclose(f);
	*out = v;
	return n;
}

static void free_corpus(ref_case *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text), free(v[i].ids[0]), free(v[i].ids[1]);
	free(v);
}

/* ---- checks ---- */

static int32_t *tokenize(const tg_llm_tokenizer *t, const char *s, size_t n,
                         int flags, size_t *count)
{
	long k = tg_llm_tokenize(t, s, n, flags, NULL, 0);
	int32_t *ids;

	ck_assert_msg(k >= 0, "%s", tg_last_error());
	ids = malloc(((size_t)k + 1) * sizeof *ids);
	ck_assert_int_eq(tg_llm_tokenize(t, s, n, flags, ids, (size_t)k), k);
	*count = (size_t)k;
	return ids;
}

static char *detokenize(const tg_llm_tokenizer *t, const int32_t *ids,
                        size_t n, size_t *len)
{
	long k = tg_llm_detokenize(t, ids, n, NULL, 0);
	char *s;

	ck_assert_msg(k >= 0, "%s", tg_last_error());
	s = malloc((size_t)k + 1);
	ck_assert_int_eq(tg_llm_detokenize(t, ids, n, s, (size_t)k), k);
	*len = (size_t)k;
	return s;
}

/* Whether s[0..n) is valid UTF-8 (whole characters only). */
static int valid_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		tok_char c;

		tok_utf8_next(s + i, n - i, &c);
		if (c.cp == 0xFFFD && c.len == 1)
			return 0;
		i += c.len;
	}
	return 1;
}

/* Streams ids one at a time: no piece may end inside a character when
 * the text is valid UTF-8, and all together must be want. */
static void check_stream(const tg_llm_tokenizer *t, const int32_t *ids,
                         size_t n, const char *want, size_t wlen, int valid)
{
	tg_llm_detok *d = tg_llm_detok_new(t);
	char *all = malloc(wlen + 1);
	const char *p;
	size_t o = 0, len;

	ck_assert_ptr_nonnull(d);
	for (size_t i = 0; i <= n; i++) {
		p = i < n ? tg_llm_detok_feed(d, ids[i], &len)
		          : tg_llm_detok_flush(d, &len);
		ck_assert_msg(p != NULL, "%s", tg_last_error());
		ck_assert_int_eq(p[len], '\0');
		ck_assert_uint_le(o + len, wlen);
		if (valid)
			ck_assert_msg(valid_utf8(p, len), "piece %zu splits a character", i);
		memcpy(all + o, p, len);
		o += len;
	}
	ck_assert_uint_eq(o, wlen);
	ck_assert_msg(memcmp(all, want, wlen) == 0, "streamed text differs");
	free(all);
	tg_llm_detok_free(d);
}

static void print_ids(const char *what, const int32_t *v, size_t n)
{
	fprintf(stderr, "  %s:", what);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %d", v[i]);
	fprintf(stderr, "\n");
}

/* Whether every byte of c's text has a token: SmolLM2's vocabulary has
 * none for a few (0x04, 0xC1, ...), which encoding drops. */
static int spellable(const tg_llm_tokenizer *t, const ref_case *c)
{
	for (size_t i = 0; i < c->len; i++)
		if (t->byte_tok[(unsigned char)c->text[i]] < 0)
			return 0;
	return 1;
}

/* One corpus against tokenizer t: ids both ways, the round trip, the
 * stream.  Returns how many strings were checked. */
static size_t check_tokenizer(const tg_llm_tokenizer *t, const char *corpus)
{
	ref_case *v;
	size_t n = load_corpus(corpus, &v), bad = 0;

	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) {
			int flags = k ? 0 : TG_LLM_PARSE_SPECIAL;
			size_t got_n, len;
			int32_t *got = tokenize(t, v[i].text, v[i].len, flags, &got_n);
			char *back = detokenize(t, got, got_n, &len);

			if (got_n != v[i].n[k] ||
			    memcmp(got, v[i].ids[k], got_n * sizeof *got)) {
				if (bad++ < 5) {
					fprintf(stderr, "%s case %zu (%s) \"%s\":\n", corpus,
					        i, k ? "as text" : "special", v[i].text);
					print_ids("want", v[i].ids[k], v[i].n[k]);
					print_ids("got ", got, got_n);
				}
			}
			ck_assert_msg(!spellable(t, &v[i]) ||
			              (len == v[i].len && !memcmp(back, v[i].text, len)),
			              "%s case %zu: decodes to \"%.*s\", not \"%s\"",
			              corpus, i, (int)len, back, v[i].text);
			if (k == 0)
				check_stream(t, got, got_n, back, len,
				             valid_utf8(back, len));
			free(got);
			free(back);
		}
	}
	ck_assert_msg(bad == 0, "%s: %zu of %zu encodings differ from "
	              "tokenizers' (the first above)", corpus, bad, 2 * n);
	free_corpus(v, n);
	return n;
}

/* The same for the tokenizer of dump with pre-tokenizer pre. */
static size_t check_corpus(const char *dump, const char *pre,
                           const char *corpus)
{
	tg_llm_tokenizer *t = load(dump, pre);
	size_t n = check_tokenizer(t, corpus);

	tg_llm_tokenizer_free(t);
	return n;
}

/* The tokenizer of GGUF file path (refdir's when relative). */
static tg_llm_tokenizer *from_gguf(const char *path)
{
	char full[700];
	tg_gguf *g;
	tg_llm_tokenizer *t;

	snprintf(full, sizeof full, "%s%s%s", path[0] == '/' ? "" : refdir,
	         path[0] == '/' ? "" : "/", path);
	g = tg_gguf_open(full);
	ck_assert_msg(g != NULL, "%s", tg_last_error());
	t = tg_llm_tokenizer_from_gguf(g);
	tg_gguf_close(g);
	return t;
}

/* The model's own file gives the tokenizer its dump gives, token by
 * token, and so tokenizers' ids. */
START_TEST(gguf_smollm_matches)
{
	tg_llm_tokenizer *t = from_gguf(modelpath), *d = load("smollm.dump", NULL);

	ck_assert_msg(t != NULL, "%s", tg_last_error());
	ck_assert_uint_eq(tg_llm_vocab_size(t), tg_llm_vocab_size(d));
	for (int32_t i = 0; i < (int32_t)tg_llm_vocab_size(t); i++) {
		size_t a, b;

		ck_assert_str_eq(tg_llm_token_text(t, i, &a),
		                 tg_llm_token_text(d, i, &b));
		ck_assert_uint_eq(a, b);
		ck_assert_int_eq(tg_llm_token_type(t, i), tg_llm_token_type(d, i));
	}
	ck_assert_int_eq(tg_llm_bos(t), 1);
	ck_assert_int_eq(tg_llm_eos(t), 2);
	ck_assert_uint_ge(check_tokenizer(t, "smollm.corpus"), 1000);
	tg_llm_tokenizer_free(t);
	tg_llm_tokenizer_free(d);
}
END_TEST

/* SentencePiece from a file: scores, types, the BOS rule. */
START_TEST(gguf_spm_matches)
{
	tg_llm_tokenizer *t = from_gguf("spm.gguf");
	int32_t ids[4];

	ck_assert_msg(t != NULL, "%s", tg_last_error());
	ck_assert_uint_ge(check_tokenizer(t, "spm.corpus"), 1000);
	ck_assert_int_eq(tg_llm_tokenize(t, "", 0, TG_LLM_ADD_SPECIAL, ids, 4), 1);
	ck_assert_int_eq(ids[0], 1);
	tg_llm_tokenizer_free(t);
}
END_TEST

static const struct {
	const char *file, *msg;
} bad_files[] = {
	{ "bad-bert.gguf", "tokenizer: model 'bert' (tokenizer.ggml.model) is "
	                   "not supported; known: gpt2, llama" },
	{ "bad-notokens.gguf", "tokenizer: the file has no tokenizer.ggml.tokens" },
	{ "bad-nomodel.gguf", "tokenizer: the file has no tokenizer.ggml.model" },
	{ "bad-merge.gguf", "tokenizer: merge 1 'a zz': 'zz' is not a token" },
	{ "bad-types.gguf", "tokenizer: tokenizer.ggml.token_type has 256 "
	                    "entries for 257 tokens" },
	{ "bad-type9.gguf", "tokenizer: tokenizer.ggml.token_type[200] is 9 "
	                    "(0 to 6)" },
	{ "bad-bos.gguf", "tokenizer.ggml.bos_token_id is 999, not a token" },
};

START_TEST(gguf_bad_files)
{
	ck_assert_ptr_null(from_gguf(bad_files[_i].file));
	ck_assert_error(bad_files[_i].msg);
}
END_TEST

START_TEST(smollm_matches_tokenizers)
{
	ck_assert_uint_ge(check_corpus("smollm.dump", NULL, "smollm.corpus"),
	                  1000);
}
END_TEST

START_TEST(gpt2_pre_matches_tokenizers)
{
	ck_assert_uint_ge(check_corpus("smollm.dump", "gpt2", "gpt2.corpus"),
	                  1000);
}
END_TEST

START_TEST(llama3_pre_matches_tokenizers)
{
	ck_assert_uint_ge(check_corpus("smollm.dump", "llama-bpe",
	                               "llama3.corpus"), 1000);
}
END_TEST

START_TEST(qwen2_pre_matches_tokenizers)
{
	ck_assert_uint_ge(check_corpus("smollm.dump", "qwen2", "qwen2.corpus"),
	                  1000);
}
END_TEST

START_TEST(spm_matches_tokenizers)
{
	ck_assert_uint_ge(check_corpus("spm.dump", NULL, "spm.corpus"), 1000);
}
END_TEST

/* Any bytes come back: byte-level BPE keeps them as they are,
 * SentencePiece through its byte tokens.  (tokenizers takes only valid
 * text, so there is no reference for the ids.) */
START_TEST(invalid_utf8_round_trips)
{
	static const char *dumps[] = { "smollm.dump", "spm.dump" };
	tg_llm_tokenizer *t = load(dumps[_i], NULL);
	unsigned seed = 48;

	for (int r = 0; r < 300; r++) {
		char s[64], *back;
		size_t n = (size_t)(r % 60) + 1, k, len;
		int32_t *ids;

		for (size_t i = 0; i < n; i++) {
			do {
				seed = seed * 1103515245u + 12345u;
				s[i] = (char)(seed >> 16 & 0xff);
			} while (t->byte_tok[(unsigned char)s[i]] < 0);
			if (s[i] == ' ' && _i == 1)
				s[i] = 'x'; /* spaces are U+2581's, tested above */
		}
		ids = tokenize(t, s, n, 0, &k);
		back = detokenize(t, ids, k, &len);
		ck_assert_uint_eq(len, n);
		ck_assert_msg(memcmp(back, s, n) == 0, "round %d", r);
		check_stream(t, ids, k, back, len, 0);
		free(ids);
		free(back);
	}
	if (_i == 0) { /* SmolLM2 has no character for 0xC0 0xC1 0xF5..0xFF */
		int32_t ids[8];

		ck_assert_int_lt(t->byte_tok[0xC1], 0);
		ck_assert_int_eq(tg_llm_tokenize(t, "a\xc1", 2, 0, ids, 8), 1);
		ck_assert_int_eq(ids[0], tok_find(t, "a", 1));
	}
	tg_llm_tokenizer_free(t);
}
END_TEST

/* A stream holds back the bytes of an unfinished character and gives
 * them on a flush, bytes that can never finish one at once. */
START_TEST(stream_holds_partial_characters)
{
	tg_llm_tokenizer *t = load("spm.dump", NULL);
	tg_llm_detok *d = tg_llm_detok_new(t);
	const char *p;
	size_t len;

	/* <0xE2> <0x82> <0xAC>: the euro sign, one byte at a time */
	p = tg_llm_detok_feed(d, 3 + 0xE2, &len);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(p, "");
	p = tg_llm_detok_feed(d, 3 + 0x82, &len);
	ck_assert_uint_eq(len, 0);
	p = tg_llm_detok_feed(d, 3 + 0xAC, &len);
	ck_assert_str_eq(p, "\xe2\x82\xac");
	/* an unfinished character left at the end comes out on the flush */
	p = tg_llm_detok_feed(d, 3 + 0xF0, &len);
	ck_assert_uint_eq(len, 0);
	p = tg_llm_detok_flush(d, &len);
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq((unsigned char)p[0], 0xF0);
	/* 0xE2 then 'A' can never be one character: both at once */
	tg_llm_detok_feed(d, 3 + 0xE2, &len);
	p = tg_llm_detok_feed(d, 3 + 'A', &len);
	ck_assert_uint_eq(len, 2);
	ck_assert_str_eq(p, "\xe2" "A");
	tg_llm_detok_free(d);
	tg_llm_tokenizer_free(t);
}
END_TEST

START_TEST(bos_and_eos_follow_the_file)
{
	tg_llm_tokenizer *smol = load("smollm.dump", NULL), *t;
	spec_buf b;
	int32_t ids[16];

	/* SmolLM2: add_bos_token false */
	ck_assert_int_eq(tg_llm_bos(smol), 1);
	ck_assert_int_eq(tg_llm_eos(smol), 2);
	ck_assert_int_eq(tg_llm_tokenize(smol, "hi", 2, TG_LLM_ADD_SPECIAL, ids, 16),
	                 tg_llm_tokenize(smol, "hi", 2, 0, ids, 16));
	tg_llm_tokenizer_free(smol);
	/* the SentencePiece dump: add_bos true; then add_eos too */
	load_dump("spm.dump", &b);
	b.s.add_eos = 1;
	t = tg_tok_new(&b.s);
	ck_assert_int_eq(tg_llm_tokenize(t, "", 0, TG_LLM_ADD_SPECIAL, ids, 16), 2);
	ck_assert_int_eq(ids[0], 1);
	ck_assert_int_eq(ids[1], 2);
	ck_assert_int_eq(tg_llm_tokenize(t, "", 0, 0, ids, 16), 0);
	long n = tg_llm_tokenize(t, "a", 1, TG_LLM_ADD_SPECIAL, ids, 16);
	ck_assert_int_ge(n, 3);
	ck_assert_int_eq(ids[0], 1);
	ck_assert_int_eq(ids[n - 1], 2);
	tg_llm_tokenizer_free(t);
	/* absent keys: BOS for llama, not for gpt2 */
	b.s.add_bos = b.s.add_eos = -1;
	t = tg_tok_new(&b.s);
	ck_assert_int_eq(tg_llm_tokenize(t, "", 0, TG_LLM_ADD_SPECIAL, ids, 16), 1);
	tg_llm_tokenizer_free(t);
	free_dump(&b);
}
END_TEST

START_TEST(buffers_too_small)
{
	tg_llm_tokenizer *t = load("smollm.dump", NULL);
	const char *text = "Hello, world! 12345";
	int32_t all[64], few[3] = { -1, -1, -1 };
	char buf[4] = "xxx";
	long n = tg_llm_tokenize(t, text, strlen(text), 0, all, 64), k;

	ck_assert_int_gt(n, 3);
	ck_assert_int_eq(tg_llm_tokenize(t, text, strlen(text), 0, few, 2), n);
	ck_assert_int_eq(few[0], all[0]);
	ck_assert_int_eq(few[1], all[1]);
	ck_assert_int_eq(few[2], -1);
	/* "<|im_start|>": 12 bytes into 3 */
	ck_assert_int_eq(tg_llm_token_bytes(t, 1, buf, 3), 12);
	ck_assert_int_eq(memcmp(buf, "<|i", 3), 0);
	k = tg_llm_detokenize(t, all, (size_t)n, buf, 2);
	ck_assert_int_eq(k, (long)strlen(text));
	ck_assert_int_eq(memcmp(buf, "He", 2), 0);
	ck_assert_int_eq(buf[2], 'i'); /* untouched past size */
	tg_llm_tokenizer_free(t);
}
END_TEST

START_TEST(token_queries)
{
	tg_llm_tokenizer *t = load("smollm.dump", NULL);
	size_t len;
	char b[8];

	ck_assert_uint_eq(tg_llm_vocab_size(t), 49152);
	ck_assert_str_eq(tg_llm_token_text(t, 2, &len), "<|im_end|>");
	ck_assert_uint_eq(len, 10);
	ck_assert_int_eq(tg_llm_token_type(t, 2), TG_LLM_TOKEN_CONTROL);
	ck_assert_int_eq(tg_llm_token_type(t, 100), TG_LLM_TOKEN_NORMAL);
	/* "Ġ" is the space's character in GPT-2's map */
	int32_t id = tok_find(t, "\xc4\xa0", 2);
	ck_assert_int_ge(id, 0);
	ck_assert_int_eq(tg_llm_token_bytes(t, id, b, 8), 1);
	ck_assert_int_eq(b[0], ' ');
	tg_llm_tokenizer_free(t);
}
END_TEST

/* s[0..n) decodes back from its ids byte for byte. */
static void round_trip_bytes(const tg_llm_tokenizer *t, const char *s,
                             size_t n)
{
	size_t k, len;
	int32_t *ids = tokenize(t, s, n, 0, &k);
	char *back = detokenize(t, ids, k, &len);

	ck_assert_uint_gt(k, 0);
	ck_assert_uint_eq(len, n);
	ck_assert(memcmp(back, s, n) == 0);
	free(back);
	free(ids);
}

/* A megabyte of prose, and a megabyte of one letter (one piece of a
 * million bytes, the merge loop's worst case), round-trip whole.  How
 * fast they go is a benchmark's business, not this suite's. */
START_TEST(a_megabyte_round_trips)
{
	tg_llm_tokenizer *t = load("smollm.dump", NULL);
	size_t n = 1 << 20;
	char *s = malloc(n);
	const char *src = "The quick brown fox, 123 jumps; über naïve 日本語 😀\n";

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++)
		s[i] = src[i % strlen(src)];
	round_trip_bytes(t, s, n);
	memset(s, 'a', n);
	round_trip_bytes(t, s, n);
	free(s);
	tg_llm_tokenizer_free(t);
}
END_TEST

/* ---- bad inputs ---- */

/* A byte-level spec of the 256 byte characters plus what tests add. */
typedef struct small_spec {
	tg_tok_spec s;
	char text[300][8];
	const char *tokens[300];
	int32_t types[300];
} small_spec;

static void small_gpt2(small_spec *b, const char *const *extra, size_t n)
{
	memset(b, 0, sizeof *b);
	for (int i = 0; i < 256; i++) {
		int k = tok_utf8_put(tok_byte_char(i), b->text[i]);

		b->text[i][k] = '\0';
		b->tokens[i] = b->text[i];
		b->types[i] = TG_LLM_TOKEN_NORMAL;
	}
	for (size_t i = 0; i < n; i++) {
		b->tokens[256 + i] = extra[i];
		b->types[256 + i] = TG_LLM_TOKEN_NORMAL;
	}
	b->s = (tg_tok_spec){ .model = "gpt2", .n_tokens = 256 + n,
	                      .tokens = b->tokens, .types = b->types,
	                      .bos = -1, .eos = -1, .unk = -1, .pad = -1,
	                      .add_bos = -1, .add_eos = -1,
	                      .add_space_prefix = -1 };
}

START_TEST(small_vocab_merges_and_user_tokens)
{
	static const char *extra[] = { "ab", "abc", "<u>", "<c>" };
	static const char *merges[] = { "a b", "ab c" };
	small_spec b;
	tg_llm_tokenizer *t;
	int32_t ids[16];

	small_gpt2(&b, extra, 4);
	b.s.merges = merges, b.s.n_merges = 2;
	b.types[256 + 2] = TG_LLM_TOKEN_USER_DEFINED;
	b.types[256 + 3] = TG_LLM_TOKEN_CONTROL;
	t = tg_tok_new(&b.s);
	ck_assert_msg(t != NULL, "%s", tg_last_error());
	/* merges by rank: "abcab" -> abc, ab */
	ck_assert_int_eq(tg_llm_tokenize(t, "abcab", 5, 0, ids, 16), 2);
	ck_assert_int_eq(ids[0], 257);
	ck_assert_int_eq(ids[1], 256);
	/* user-defined always, control only with TG_LLM_PARSE_SPECIAL */
	ck_assert_int_eq(tg_llm_tokenize(t, "<u><c>", 6, 0, ids, 16), 4);
	ck_assert_int_eq(ids[0], 258);
	ck_assert_int_eq(tg_llm_tokenize(t, "<u><c>", 6, TG_LLM_PARSE_SPECIAL,
	                                 ids, 16), 2);
	ck_assert_int_eq(ids[1], 259);
	tg_llm_tokenizer_free(t);
}
END_TEST

START_TEST(bad_specs)
{
	static const char *extra[] = { "ab" };
	static const char *bad_merge[] = { "a b", "a zz" };
	static const char *no_space[] = { "ab" };
	static const char *no_result[] = { "b a" };
	small_spec b;

	ck_assert_ptr_null(tg_tok_new(NULL));
	ck_assert_error("tokenizer: NULL spec");
	ck_assert_ptr_null(tg_llm_tokenizer_from_gguf(NULL));
	ck_assert_error("tg_llm_tokenizer_from_gguf: NULL file");

	small_gpt2(&b, extra, 1);
	b.s.merges = bad_merge, b.s.n_merges = 2;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("tokenizer: merge 1 'a zz': 'zz' is not a token");
	b.s.merges = no_space, b.s.n_merges = 1;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("merge 0 'ab' has no space");
	b.s.merges = no_result;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("merge 0 'b a': 'ba' is not a token");
	b.s.n_merges = 0;

	b.s.model = "bert";
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_int_eq(tg_last_status(), TG_EUNSUPPORTED);
	ck_assert_error("tokenizer: model 'bert' (tokenizer.ggml.model) is not "
	                "supported; known: gpt2, llama");
	b.s.model = NULL;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("model '(none)'");
	b.s.model = "gpt2";
	b.s.pre = "jais";
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("pre-tokenizer 'jais' (tokenizer.ggml.pre) is not known;"
	                " known: default, gpt2");
	b.s.pre = NULL;

	b.s.bos = 257;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("tokenizer.ggml.bos_token_id is 257, not a token (the "
	                "vocabulary has 257)");
	b.s.bos = -1;
	b.s.unk = -5;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("tokenizer.ggml.unknown_token_id is -5");
	b.s.unk = -1;

	b.types[3] = 9;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("tokenizer: token 3 has type 9");
	b.types[3] = 1;
	b.tokens[5] = NULL;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("tokenizer: token 5 is NULL");
	b.tokens[5] = b.text[5];
	b.s.n_tokens = 0;
	ck_assert_ptr_null(tg_tok_new(&b.s));
	ck_assert_error("tokenizer: 0 tokens");
}
END_TEST

START_TEST(bad_calls)
{
	static const char *extra[] = { "ab" };
	small_spec b;
	tg_llm_tokenizer *t;
	int32_t ids[4] = { 0, 300, 0, 0 };
	char buf[8];
	size_t len;

	small_gpt2(&b, extra, 1);
	t = tg_tok_new(&b.s);
	ck_assert_ptr_nonnull(t);

	ck_assert_int_eq(tg_llm_tokenize(NULL, "a", 1, 0, ids, 4), TG_EINVAL);
	ck_assert_error("tg_llm_tokenize: NULL tokenizer");
	ck_assert_int_eq(tg_llm_tokenize(t, NULL, 1, 0, ids, 4), TG_EINVAL);
	ck_assert_error("tg_llm_tokenize: NULL text");
	ck_assert_int_eq(tg_llm_tokenize(t, NULL, 0, 0, NULL, 0), 0);
	ck_assert_int_eq(tg_llm_tokenize(t, "a", 1, 0, NULL, 4), TG_EINVAL);
	ck_assert_error("tg_llm_tokenize: NULL ids");
	ck_assert_int_eq(tg_llm_tokenize(t, "a", 1, 8, ids, 4), TG_EINVAL);
	ck_assert_error("tg_llm_tokenize: unknown flags 0x8");

	ck_assert_int_eq(tg_llm_token_bytes(t, 257, buf, 8), TG_EINVAL);
	ck_assert_error("tg_llm_token_bytes: token 257 is out of range (the "
	                "vocabulary has 257)");
	ck_assert_int_eq(tg_llm_token_bytes(t, -1, buf, 8), TG_EINVAL);
	ck_assert_int_eq(tg_llm_token_bytes(NULL, 0, buf, 8), TG_EINVAL);
	ck_assert_error("tg_llm_token_bytes: NULL tokenizer");
	ck_assert_ptr_null(tg_llm_token_text(t, 999, &len));
	ck_assert_error("tg_llm_token_text: token 999 is out of range");
	ck_assert_int_eq(tg_llm_token_type(t, -3), TG_EINVAL);
	ck_assert_error("tg_llm_token_type: token -3");

	ck_assert_int_eq(tg_llm_detokenize(t, ids, 4, buf, 8), TG_EINVAL);
	ck_assert_error("tg_llm_detokenize: ids[1] = 300 is out of range");
	ck_assert_int_eq(tg_llm_detokenize(t, NULL, 2, buf, 8), TG_EINVAL);
	ck_assert_error("tg_llm_detokenize: NULL ids");
	ck_assert_int_eq(tg_llm_detokenize(NULL, ids, 1, buf, 8), TG_EINVAL);

	ck_assert_ptr_null(tg_llm_detok_new(NULL));
	ck_assert_error("tg_llm_detok_new: NULL tokenizer");
	tg_llm_detok *d = tg_llm_detok_new(t);
	ck_assert_ptr_null(tg_llm_detok_feed(d, 300, &len));
	ck_assert_error("tg_llm_detok_feed: ids[0] = 300 is out of range");
	ck_assert_ptr_null(tg_llm_detok_feed(NULL, 0, &len));
	ck_assert_error("tg_llm_detok_feed: NULL stream");
	ck_assert_ptr_null(tg_llm_detok_flush(NULL, &len));
	ck_assert_error("tg_llm_detok_flush: NULL stream");
	ck_assert_str_eq(tg_llm_detok_feed(d, 'a' - 0, &len), "a");
	tg_llm_detok_free(d);
	tg_llm_detok_free(NULL);

	ck_assert_uint_eq(tg_llm_vocab_size(NULL), 0);
	ck_assert_int_eq(tg_llm_bos(NULL), -1);
	ck_assert_int_eq(tg_llm_eos(t), -1);
	tg_llm_tokenizer_free(t);
	tg_llm_tokenizer_free(NULL);
}
END_TEST

/* ---- the references ---- */

/* Runs corpus.py into TG_TEST_TMP/llm; 0, or 77 when the dependencies
 * are missing and not required, else 1. */
static int make_references(void)
{
	const char *deps = getenv("TG_DEPS_DIR"), *src = getenv("TG_TEST_SRCDIR");
	const char *tmp = getenv("TG_TEST_TMP");
	char py[600], model[600], cmd[2400];

	snprintf(py, sizeof py, "%s/venv/bin/python", deps ? deps : "");
	snprintf(model, sizeof model, "%s/models/SmolLM2-135M-Instruct.Q4_1.gguf",
	         deps ? deps : "");
	snprintf(modelpath, sizeof modelpath, "%s", model);
	snprintf(refdir, sizeof refdir, "%s/llm", tmp ? tmp : "/tmp");
	if (!deps || access(py, X_OK) || access(model, R_OK)) {
		fprintf(stderr, "%s: no %s or %s (run deps.sh)\n",
		        getenv("TG_TEST_REQUIRE_DEPS") ? "FAIL" : "SKIP", py, model);
		return getenv("TG_TEST_REQUIRE_DEPS") ? 1 : 77;
	}
	snprintf(cmd, sizeof cmd, "'%s' '%s/llm/corpus.py' '%s' '%s'", py,
	         src ? src : "tests", model, refdir);
	if (system(cmd) != 0) {
		fprintf(stderr, "FAIL: %s\n", cmd);
		return 1;
	}
	return 0;
}

/* The suite; with refs, the cases that compare with the references
 * too. */
static Suite *llm_tokenizer_suite(int refs)
{
	Suite *s = suite_create("llm_tokenizer");
	TCase *tc = tcase_create("reference"), *own = tcase_create("own");

	if (refs)
		suite_add_tcase(s, tc);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, smollm_matches_tokenizers);
	tcase_add_test(tc, gpt2_pre_matches_tokenizers);
	tcase_add_test(tc, llama3_pre_matches_tokenizers);
	tcase_add_test(tc, qwen2_pre_matches_tokenizers);
	tcase_add_test(tc, spm_matches_tokenizers);
	tcase_add_loop_test(tc, invalid_utf8_round_trips, 0, 2);
	tcase_add_test(tc, stream_holds_partial_characters);
	tcase_add_test(tc, bos_and_eos_follow_the_file);
	tcase_add_test(tc, buffers_too_small);
	tcase_add_test(tc, token_queries);
	tcase_add_test(tc, a_megabyte_round_trips);
	tcase_add_test(tc, gguf_smollm_matches);
	tcase_add_test(tc, gguf_spm_matches);
	tcase_add_loop_test(tc, gguf_bad_files, 0,
	                    sizeof bad_files / sizeof bad_files[0]);
	tcase_add_test(own, small_vocab_merges_and_user_tokens);
	tcase_add_test(own, bad_specs);
	tcase_add_test(own, bad_calls);
	suite_add_tcase(s, own);
	return s;
}

/* Without the references, the cases that need none still run; then the
 * suite counts as skipped. */
int main(void)
{
	int rc = make_references(), run;

	if (rc == 1)
		return EXIT_FAILURE;
	run = tl_run(llm_tokenizer_suite(rc == 0));
	return run != EXIT_SUCCESS ? run : rc == 77 ? 77 : EXIT_SUCCESS;
}

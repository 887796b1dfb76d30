/*
 * test_llm_chat.c - tg/llm.h's chat templates against the templates
 * themselves: tests/llm/chat_ref.py renders each file's Jinja template
 * with jinja2 as transformers does (SmolLM2's from the model file;
 * Llama 3's, 3.1's and 3.2's, Qwen 2's and other ChatML from small GGUF
 * files it writes)
 * for conversations of 1 to 4 messages, with and without a system
 * message, Unicode and empty contents, odd white space and roles, with
 * and without the generation prompt, and tg_llm_chat_format must give
 * the same bytes; for SmolLM2 the prompt's tokens (special tokens
 * parsed) must be `tokenizers`' too.  A template of no known family, or
 * none, gives the plain lines and a warning on stderr.  Then the
 * snprintf contract and every bad input with its message.
 *
 * Needs TG_DEPS_DIR (deps.sh): its venv's Python with jinja2, gguf and
 * tokenizers, and models/SmolLM2-135M-Instruct.Q4_1.gguf; without them
 * the reference cases skip (exit 77), unless TG_TEST_REQUIRE_DEPS is
 * set, when they fail.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>

#include "testlib.h"

#include <tg/llm.h>

static char refdir[600], modelpath[600];

/* The path of a reference file (static). */
static const char *ref(const char *name)
{
	static char p[700];

	if (!strcmp(name, "smollm"))
		return modelpath;
	snprintf(p, sizeof p, "%s/%s.gguf", refdir, name);
	return p;
}

/* Runs fn(arg) with stderr going to a file; returns what it wrote
 * (malloc'd). */
static char *stderr_of(tg_llm_chat *(*fn)(const tg_gguf *), const tg_gguf *g,
                       tg_llm_chat **c)
{
	const char *path = tl_tmp_path("stderr");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved;

	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	*c = fn(g);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	return tl_slurp(path);
}

/* A chat from reference file name, checking its kind and warning. */
static tg_llm_chat *chat_of(const char *name)
{
	tg_gguf *g = tg_gguf_open(ref(name));
	tg_llm_chat *c;
	char *err;
	int want = TG_LLM_CHAT_CHATML;

	ck_assert_msg(g != NULL, "%s: %s", name, tg_last_error());
	err = stderr_of(tg_llm_chat_from_gguf, g, &c);
	ck_assert_msg(c != NULL, "%s: %s", name, tg_last_error());
	tg_gguf_close(g);
	if (!strncmp(name, "llama3", 6) || !strcmp(name, "nobos"))
		want = TG_LLM_CHAT_LLAMA3;
	if (!strcmp(name, "mistral") || !strcmp(name, "none"))
		want = TG_LLM_CHAT_PLAIN;
	ck_assert_int_eq(tg_llm_chat_template_kind(c), want);
	if (want == TG_LLM_CHAT_PLAIN)
		ck_assert_msg(strstr(err, "tgcore-llm: warning: "
		                     "tg_llm_chat_from_gguf: the file") &&
		              strstr(err, "using the plain template"),
		              "%s: warning \"%s\"", name, err);
	else
		ck_assert_str_eq(err, "");
	free(err);
	return c;
}

/* ---- reading chat.ref ---- */

static char *read_field(FILE *f, const char *name)
{
	char k[32];
	size_t n;
	char *b;

	ck_assert_int_eq(fscanf(f, "%31s %zu", k, &n), 2);
	ck_assert_str_eq(k, name);
	ck_assert_int_eq(fgetc(f), '\n');
	b = malloc(n + 1);
	ck_assert_uint_eq(fread(b, 1, n, f), n);
	b[n] = '\0';
	ck_assert_int_eq(fgetc(f), '\n');
	return b;
}

/* Formats the prompt and checks it: all of it, and cut short. */
static void check_text(const tg_llm_chat *c, const tg_llm_message *m,
                       size_t n, int agp, const char *want, const char *what)
{
	size_t len = strlen(want);
	char *buf = malloc(len + 1), small[8];
	long got = tg_llm_chat_format(c, m, n, agp, buf, len + 1);

	ck_assert_msg(got == (long)len && !memcmp(buf, want, len + 1),
	              "%s: got %ld bytes \"%s\", want %zu \"%s\"", what, got,
	              got >= 0 ? buf : tg_last_error(), len, want);
	ck_assert_int_eq(tg_llm_chat_format(c, m, n, agp, NULL, 0), got);
	ck_assert_int_eq(tg_llm_chat_format(c, m, n, agp, small, sizeof small),
	                 got);
	ck_assert_str_eq(small, (memcpy(buf, want, 7), buf[7] = '\0', buf));
	free(buf);
}

/* The prompt's ids with special tokens parsed against want[0..nw). */
static void check_ids(const tg_llm_tokenizer *t, const char *text,
                      const int32_t *want, long nw, const char *what)
{
	int32_t ids[4096];
	long n = tg_llm_tokenize(t, text, strlen(text), TG_LLM_PARSE_SPECIAL,
	                         ids, 4096);

	ck_assert_msg(n == nw, "%s: %ld ids, want %ld", what, n, nw);
	for (long i = 0; i < n; i++)
		ck_assert_msg(ids[i] == want[i], "%s: ids[%ld] %d, want %d", what,
		              i, ids[i], want[i]);
}

START_TEST(formats_as_the_templates_render)
{
	char path[700], name[64];
	int agp, nmsg, cases = 0, nid = 0;
	FILE *f;
	tg_gguf *g = tg_gguf_open(modelpath);
	tg_llm_tokenizer *t = tg_llm_tokenizer_from_gguf(g);

	ck_assert_msg(t != NULL, "%s", tg_last_error());
	tg_gguf_close(g);
	snprintf(path, sizeof path, "%s/chat.ref", refdir);
	ck_assert_ptr_nonnull(f = fopen(path, "rb"));
	while (fscanf(f, "case %63s %d %d\n", name, &agp, &nmsg) == 3) {
		tg_llm_message m[8];
		char *text, what[128];
		long nw;
		int32_t *want;
		tg_llm_chat *c = chat_of(name);

		for (int i = 0; i < nmsg; i++) {
			m[i].role = read_field(f, "role");
			m[i].content = read_field(f, "content");
		}
		text = read_field(f, "text");
		snprintf(what, sizeof what, "%s case %d (%d messages, agp %d)",
		         name, cases, nmsg, agp);
		check_text(c, m, (size_t)nmsg, agp, text, what);
		ck_assert_int_eq(fscanf(f, "ids %ld", &nw), 1);
		want = malloc((nw > 0 ? (size_t)nw : 1) * sizeof *want);
		for (long i = 0; i < nw; i++)
			ck_assert_int_eq(fscanf(f, "%d", &want[i]), 1);
		ck_assert_int_eq(fgetc(f), '\n');
		if (nw >= 0)
			check_ids(t, text, want, nw, what), nid++;
		for (int i = 0; i < nmsg; i++)
			free((char *)m[i].role), free((char *)m[i].content);
		free(text), free(want);
		tg_llm_chat_free(c);
		cases++;
	}
	ck_assert(feof(f));
	fclose(f);
	ck_assert_int_eq(cases, 220);
	ck_assert_int_eq(nid, 22);
	tg_llm_tokenizer_free(t);
}
END_TEST

/* The default system messages, read from the templates' literals. */
START_TEST(default_system_messages)
{
	static const struct {
		const char *file, *sys;
	} want[] = {
		{ "smollm", "You are a helpful AI assistant named SmolLM, trained "
		            "by Hugging Face" },
		{ "qwen2", "You are a helpful assistant." },
		{ "escaped", "You're \"careful\",\tbrief." },
		{ "chatml", NULL },
		{ "llama3", NULL },
		{ "none", NULL },
	};

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		tg_llm_chat *c = chat_of(want[i].file);
		const char *s = tg_llm_chat_default_system(c);

		if (want[i].sys)
			ck_assert_msg(s && !strcmp(s, want[i].sys), "%s: \"%s\"",
			              want[i].file, s ? s : "(null)");
		else
			ck_assert_ptr_null(s);
		tg_llm_chat_free(c);
	}
}
END_TEST

START_TEST(bad_files)
{
	tg_gguf *g = tg_gguf_open(ref("bad-type"));
	tg_llm_chat *c;

	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_null(tg_llm_chat_from_gguf(g));
	ck_assert_error("tokenizer.chat_template");
	tg_gguf_close(g);
	g = tg_gguf_open(ref("bad-bos"));
	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_null(c = tg_llm_chat_from_gguf(g));
	ck_assert_error("tokenizer.ggml.tokens");
	tg_gguf_close(g);
}
END_TEST

START_TEST(bad_calls)
{
	tg_gguf *g = tg_gguf_open(modelpath);
	tg_llm_chat *c = tg_llm_chat_from_gguf(g);
	tg_llm_message m[2] = { { "user", "hi" }, { NULL, "x" } };
	char buf[256];

	tg_gguf_close(g);
	ck_assert_ptr_null(tg_llm_chat_from_gguf(NULL));
	ck_assert_error("tg_llm_chat_from_gguf: NULL file");
	ck_assert_int_eq(tg_llm_chat_format(NULL, m, 1, 0, buf, 64), TG_EINVAL);
	ck_assert_error("tg_llm_chat_format: NULL chat");
	ck_assert_int_eq(tg_llm_chat_format(c, NULL, 1, 0, buf, 64), TG_EINVAL);
	ck_assert_error("tg_llm_chat_format: NULL messages");
	ck_assert_int_eq(tg_llm_chat_format(c, m, 1, 0, NULL, 64), TG_EINVAL);
	ck_assert_error("tg_llm_chat_format: NULL buf");
	ck_assert_int_eq(tg_llm_chat_format(c, m, 0, 1, buf, 64), TG_EINVAL);
	ck_assert_error("tg_llm_chat_format: no messages");
	ck_assert_int_eq(tg_llm_chat_format(c, m, 2, 0, buf, 64), TG_EINVAL);
	ck_assert_error("tg_llm_chat_format: messages[1] has a NULL role");
	m[1].role = "user", m[1].content = NULL;
	ck_assert_int_eq(tg_llm_chat_format(c, m, 2, 0, buf, 64), TG_EINVAL);
	ck_assert_error("tg_llm_chat_format: messages[1] has a NULL content");
	ck_assert_int_eq(tg_llm_chat_template_kind(NULL), TG_EINVAL);
	ck_assert_error("tg_llm_chat_template_kind: NULL chat");
	ck_assert_ptr_null(tg_llm_chat_default_system(NULL));
	/* any role is written as given */
	m[0].role = "narrator";
	ck_assert_int_lt(tg_llm_chat_format(c, m, 1, 0, buf, 256), 256);
	ck_assert_ptr_nonnull(strstr(buf, "<|im_start|>narrator\nhi"));
	tg_llm_chat_free(c);
	tg_llm_chat_free(NULL);
}
END_TEST

/* Runs chat_ref.py into TG_TEST_TMP/llm-chat; 0, or 77 when the
 * dependencies are missing and not required, else 1. */
static int make_references(void)
{
	const char *deps = getenv("TG_DEPS_DIR"), *src = getenv("TG_TEST_SRCDIR");
	const char *tmp = getenv("TG_TEST_TMP");
	char py[600], cmd[2400];

	snprintf(py, sizeof py, "%s/venv/bin/python", deps ? deps : "");
	snprintf(modelpath, sizeof modelpath,
	         "%s/models/SmolLM2-135M-Instruct.Q4_1.gguf", deps ? deps : "");
	snprintf(refdir, sizeof refdir, "%s/llm-chat", tmp ? tmp : "/tmp");
	snprintf(cmd, sizeof cmd, "'%s' -c 'import jinja2, gguf, tokenizers'",
	         py);
	if (!deps || access(py, X_OK) || access(modelpath, R_OK) ||
	    system(cmd) != 0) {
		fprintf(stderr, "%s: no %s with jinja2, gguf and tokenizers, or "
		        "no %s (run deps.sh)\n", getenv("TG_TEST_REQUIRE_DEPS") ?
		        "FAIL" : "SKIP", py, modelpath);
		return getenv("TG_TEST_REQUIRE_DEPS") ? 1 : 77;
	}
	snprintf(cmd, sizeof cmd, "'%s' '%s/llm/chat_ref.py' '%s' '%s'", py,
	         src ? src : "tests", modelpath, refdir);
	if (system(cmd) != 0) {
		fprintf(stderr, "FAIL: %s\n", cmd);
		return 1;
	}
	return 0;
}

int main(void)
{
	int rc = make_references();
	Suite *s = suite_create("llm_chat");
	TCase *tc = tcase_create("reference");

	if (rc != 0)
		return rc == 77 ? 77 : EXIT_FAILURE;
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, formats_as_the_templates_render);
	tcase_add_test(tc, default_system_messages);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, bad_calls);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

/*
 * chat.c - chat templates: a conversation as the prompt text the model
 * was trained on.  A GGUF file carries its template as Jinja source
 * (tokenizer.chat_template); tgcore runs no Jinja, it recognises the
 * template's family and writes what that family's template renders:
 *  - ChatML (SmolLM2, Qwen): a template naming <|im_start|>; a system
 *    message written inside one of the template's string literals is
 *    its default, put first when the first message is not a system one;
 *  - Llama 3: a template naming <|start_header_id|> and
 *    <|end_header_id|>; the BOS token's text first, each content
 *    stripped of white space at both ends (Jinja's trim);
 *  - anything else, or no template: the plain template, with a warning.
 * tests/llm/chat_ref.py renders the files' own templates with jinja2
 * and test_llm_chat compares the bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

struct tg_llm_chat {
	tg_llm_chat_kind kind;
	char *bos;    /* Llama 3: the text written first, "" when none */
	char *system; /* ChatML: the default system message, NULL: none */
};

/* ---- reading the template ---- */

/* The value of Jinja's escape \c in a string literal (Python's). */
static char unescape(char c)
{
	switch (c) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	default: return c; /* \\ \' \" */
	}
}

/* The string literal at t[0] == q, unescaped into buf (as long as the
 * template at least); returns where it ends (past the closing quote). */
static const char *literal(const char *t, char *buf, size_t *n)
{
	char q = *t++;

	*n = 0;
	for (; *t && *t != q; t++)
		buf[(*n)++] = *t == '\\' && t[1] ? unescape(*++t) : *t;
	buf[*n] = '\0';
	return *t ? t + 1 : t;
}

/* If the literal s holds "<|im_start|>system\n...<|im_end|>", the
 * system message in it (new) into *out; 0 or TG_ENOMEM. */
static int system_in(const char *s, char **out)
{
	static const char head[] = "<|im_start|>system\n";
	const char *p = strstr(s, head), *e;

	if (!p || !(e = strstr(p += sizeof head - 1, "<|im_end|>")))
		return 0;
	if (!(*out = malloc((size_t)(e - p) + 1)))
		return TG_ENOMEM;
	memcpy(*out, p, (size_t)(e - p));
	(*out)[e - p] = '\0';
	return 0;
}

/* The default system message of a ChatML template into *out (new),
 * NULL when it has none: the first string literal of its Jinja code
 * ({{ }} and {% %}, not the text between) holding a whole system
 * message; 0 or TG_ENOMEM. */
static int chatml_default(const char *t, char **out)
{
	char *buf = malloc(strlen(t) + 1);
	int in_code = 0, rc = 0;

	*out = NULL;
	if (!buf)
		return TG_ENOMEM;
	while (*t && !*out && rc == 0) {
		size_t n;

		if (!in_code && t[0] == '{' && t[1] == '#') {
			const char *e = strstr(t + 2, "#}");

			t = e ? e + 2 : t + strlen(t);
		} else if (!in_code && t[0] == '{' && (t[1] == '{' || t[1] == '%')) {
			in_code = 1, t += 2;
		} else if (in_code && (t[0] == '}' || t[0] == '%') && t[1] == '}') {
			in_code = 0, t += 2;
		} else if (in_code && (*t == '\'' || *t == '"')) {
			t = literal(t, buf, &n);
			rc = system_in(buf, out);
		} else {
			t++;
		}
	}
	free(buf);
	return rc;
}

/* The BOS token's text into *out (new): "" when the file names none;
 * 0 or a status (an id past the vocabulary, named by the reader). */
static int bos_text(const tg_gguf *g, char **out)
{
	static const char tk[] = "tokenizer.ggml.tokens";
	static const char bk[] = "tokenizer.ggml.bos_token_id";
	const char *s = "";
	size_t n = 0;
	int64_t id = -1;

	if (tg_gguf_kv_find(g, bk) >= 0 && tg_gguf_get_int(g, bk, &id) < 0)
		return tg_last_status();
	if (id >= 0 && tg_gguf_kv_find(g, tk) >= 0 &&
	    !(s = tg_gguf_array_str(g, tk, (size_t)id, &n)))
		return tg_last_status();
	if (!(*out = malloc(n + 1)))
		return TG_ENOMEM;
	memcpy(*out, s, n);
	(*out)[n] = '\0';
	return 0;
}

/* One line on stderr, as tgcore's own warnings (its log at level 0):
 * one fprintf, which holds the stream's lock for the whole line. */
static void warn(const char *why)
{
	fprintf(stderr, "tgcore-llm: warning: tg_llm_chat_from_gguf: %s; "
	        "using the plain template (\"role: content\" lines)\n", why);
}

/* The template as a NUL-terminated copy (new) into *out, NULL when the
 * file has none; 0 or a status. */
static int read_template(const tg_gguf *g, char **out)
{
	static const char key[] = "tokenizer.chat_template";
	const char *s;
	size_t n;

	*out = NULL;
	if (tg_gguf_kv_find(g, key) < 0)
		return 0;
	if (!(s = tg_gguf_get_str(g, key, &n)))
		return tg_last_status();
	if (memchr(s, '\0', n))
		return tg_set_error(TG_EINVAL, "tg_llm_chat_from_gguf: %s holds "
		                    "a NUL byte", key);
	if (!(*out = malloc(n + 1)))
		return TG_ENOMEM;
	memcpy(*out, s, n);
	(*out)[n] = '\0';
	return 0;
}

/* Recognises template t (NULL: none) into c; 0 or a status. */
static int recognise(tg_llm_chat *c, const tg_gguf *g, const char *t)
{
	if (t && strstr(t, "<|start_header_id|>") &&
	    strstr(t, "<|end_header_id|>")) {
		c->kind = TG_LLM_CHAT_LLAMA3;
		return bos_text(g, &c->bos);
	}
	if (t && strstr(t, "<|im_start|>")) {
		c->kind = TG_LLM_CHAT_CHATML;
		return chatml_default(t, &c->system);
	}
	c->kind = TG_LLM_CHAT_PLAIN;
	warn(t ? "the file's tokenizer.chat_template is neither ChatML nor "
	     "Llama 3" : "the file has no tokenizer.chat_template");
	return 0;
}

tg_llm_chat *tg_llm_chat_from_gguf(const tg_gguf *g)
{
	tg_llm_chat *c;
	char *t;
	int rc;

	if (!g) {
		tg_set_error(TG_EINVAL, "tg_llm_chat_from_gguf: NULL file");
		return NULL;
	}
	if (read_template(g, &t) < 0)
		return NULL;
	c = calloc(1, sizeof *c);
	rc = c ? recognise(c, g, t) : TG_ENOMEM;
	free(t);
	if (rc < 0) {
		tg_llm_chat_free(c);
		if (rc == TG_ENOMEM)
			tg_set_error(rc, "tg_llm_chat_from_gguf: out of memory");
		return NULL;
	}
	return c;
}

void tg_llm_chat_free(tg_llm_chat *c)
{
	if (!c)
		return;
	free(c->bos);
	free(c->system);
	free(c);
}

int tg_llm_chat_template_kind(const tg_llm_chat *c)
{
	if (!c)
		return tg_set_error(TG_EINVAL, "tg_llm_chat_template_kind: NULL "
		                    "chat");
	return (int)c->kind;
}

const char *tg_llm_chat_default_system(const tg_llm_chat *c)
{
	return c ? c->system : NULL;
}

/* ---- writing a conversation ---- */

typedef struct out {
	char *buf;
	size_t size, len;
} out;

static void put(out *o, const char *s, size_t n)
{
	if (o->len < o->size)
		memcpy(o->buf + o->len, s,
		       n < o->size - o->len ? n : o->size - o->len);
	o->len += n;
}

static void puts_(out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* Python's str.isspace for a code point (what Jinja's trim strips):
 * Unicode's White_Space and the separators U+001C..U+001F. */
static int py_space(uint32_t cp)
{
	return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) ||
	       cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
	       (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* s without the white space at both ends: *n bytes from the result. */
static const char *trim(const char *s, size_t *n)
{
	size_t len = strlen(s), end = 0, i = 0;
	const char *start = NULL;
	tok_char ch;

	for (; i < len; i += ch.len) {
		tok_utf8_next(s + i, len - i, &ch);
		if (py_space(ch.cp))
			continue;
		if (!start)
			start = s + i;
		end = i + ch.len;
	}
	*n = start ? (size_t)(s + end - start) : 0;
	return start ? start : s;
}

static void chatml(const tg_llm_chat *c, const tg_llm_message *m, size_t n,
                   int gen, out *o)
{
	if (c->system && strcmp(m[0].role, "system")) {
		puts_(o, "<|im_start|>system\n");
		puts_(o, c->system);
		puts_(o, "<|im_end|>\n");
	}
	for (size_t i = 0; i < n; i++) {
		puts_(o, "<|im_start|>");
		puts_(o, m[i].role);
		puts_(o, "\n");
		puts_(o, m[i].content);
		puts_(o, "<|im_end|>\n");
	}
	if (gen)
		puts_(o, "<|im_start|>assistant\n");
}

static void llama3(const tg_llm_chat *c, const tg_llm_message *m, size_t n,
                   int gen, out *o)
{
	puts_(o, c->bos);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const char *s = trim(m[i].content, &len);

		puts_(o, "<|start_header_id|>");
		puts_(o, m[i].role);
		puts_(o, "<|end_header_id|>\n\n");
		put(o, s, len);
		puts_(o, "<|eot_id|>");
	}
	if (gen)
		puts_(o, "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

static void plain(const tg_llm_message *m, size_t n, int gen, out *o)
{
	for (size_t i = 0; i < n; i++) {
		puts_(o, m[i].role);
		puts_(o, ": ");
		puts_(o, m[i].content);
		puts_(o, "\n");
	}
	if (gen)
		puts_(o, "assistant: ");
}

static int check_messages(const tg_llm_chat *c, const tg_llm_message *m,
                          size_t n, char *buf, size_t size)
{
	static const char op[] = "tg_llm_chat_format";

	if (!c || (!m && n) || (!buf && size))
		return tg_set_error(TG_EINVAL, "%s: NULL %s", op, !c ? "chat" :
		                    !buf && size ? "buf" : "messages");
	if (!n)
		return tg_set_error(TG_EINVAL, "%s: no messages", op);
	for (size_t i = 0; i < n; i++)
		if (!m[i].role || !m[i].content)
			return tg_set_error(TG_EINVAL, "%s: messages[%zu] has a NULL "
			                    "%s", op, i, m[i].role ? "content" : "role");
	return 0;
}

long tg_llm_chat_format(const tg_llm_chat *c, const tg_llm_message *msgs,
                        size_t n, int add_generation_prompt, char *buf,
                        size_t size)
{
	out o = { buf, size ? size - 1 : 0, 0 };

	if (check_messages(c, msgs, n, buf, size) < 0)
		return tg_last_status();
	if (c->kind == TG_LLM_CHAT_CHATML)
		chatml(c, msgs, n, add_generation_prompt, &o);
	else if (c->kind == TG_LLM_CHAT_LLAMA3)
		llama3(c, msgs, n, add_generation_prompt, &o);
	else
		plain(msgs, n, add_generation_prompt, &o);
	if (size)
		buf[o.len < o.size ? o.len : o.size] = '\0';
	return (long)o.len;
}

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
 *    stripped of white space at both ends (Jinja's trim); 3.1's and
 *    later templates' system header with the dates their literals hold;
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
	char *knowledge, *date; /* Llama 3.1's system header, NULL: 3.0 */
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

/* s[0..n) as a NUL-terminated copy (new), NULL on no memory. */
static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* What the walk over a template's literals finds (each new, NULL when
 * absent). */
typedef struct found {
	char *system;    /* ChatML's default system message */
	char *knowledge; /* Llama 3.1's "Cutting Knowledge Date: ..." line */
	char *date;      /* Llama 3.1's default date_string */
} found;

/* The literal at t + at is what `date_string =` sets. */
static int sets_date(const char *t, size_t at)
{
	static const char name[] = "date_string";
	size_t n = sizeof name - 1;

	while (at && (t[at - 1] == ' ' || t[at - 1] == '\t'))
		at--;
	if (!at || t[--at] != '=')
		return 0;
	while (at && (t[at - 1] == ' ' || t[at - 1] == '\t'))
		at--;
	return at >= n && !strncmp(t + at - n, name, n);
}

/* Takes what f still lacks from literal s[0..n) (unescaped), found at
 * t + at; 0 or TG_ENOMEM. */
static int look(found *f, const char *t, size_t at, const char *s, size_t n)
{
	static const char head[] = "<|im_start|>system\n";
	static const char know[] = "Cutting Knowledge Date:";
	const char *p = strstr(s, head), *e = NULL;

	if (!f->system && p && (e = strstr(p += sizeof head - 1, "<|im_end|>")))
		if (!(f->system = dup_n(p, (size_t)(e - p))))
			return TG_ENOMEM;
	if (!f->knowledge && !strncmp(s, know, sizeof know - 1))
		if (!(f->knowledge = dup_n(s, n)))
			return TG_ENOMEM;
	if (!f->date && sets_date(t, at))
		if (!(f->date = dup_n(s, n)))
			return TG_ENOMEM;
	return 0;
}

/* Walks the string literals of template t's Jinja code ({{ }} and
 * {% %}, not the text between them nor {# #} comments) into f; 0 or
 * TG_ENOMEM. */
static int walk(const char *t, found *f)
{
	char *buf = malloc(strlen(t) + 1);
	const char *p = t;
	int in_code = 0, rc = 0;

	if (!buf)
		return TG_ENOMEM;
	while (*p && rc == 0) {
		size_t n;

		if (!in_code && p[0] == '{' && p[1] == '#') {
			const char *e = strstr(p + 2, "#}");

			p = e ? e + 2 : p + strlen(p);
		} else if (!in_code && p[0] == '{' && (p[1] == '{' || p[1] == '%')) {
			in_code = 1, p += 2;
		} else if (in_code && (p[0] == '}' || p[0] == '%') && p[1] == '}') {
			in_code = 0, p += 2;
		} else if (in_code && (*p == '\'' || *p == '"')) {
			size_t at = (size_t)(p - t);

			p = literal(p, buf, &n);
			rc = look(f, t, at, buf, n);
		} else {
			p++;
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
	found f = { 0 };
	int rc = t ? walk(t, &f) : 0;

	if (rc == 0 && t && strstr(t, "<|start_header_id|>") &&
	    strstr(t, "<|end_header_id|>") && !f.knowledge == !f.date) {
		c->kind = TG_LLM_CHAT_LLAMA3;
		c->knowledge = f.knowledge, c->date = f.date;
		free(f.system);
		return bos_text(g, &c->bos);
	}
	free(f.knowledge), free(f.date);
	if (rc == 0 && t && strstr(t, "<|im_start|>")) {
		c->kind = TG_LLM_CHAT_CHATML;
		c->system = f.system;
		return 0;
	}
	free(f.system);
	if (rc < 0)
		return rc;
	c->kind = TG_LLM_CHAT_PLAIN;
	warn(!t ? "the file has no tokenizer.chat_template" :
	     strstr(t, "<|start_header_id|>") ? "the file's Llama 3 template "
	     "writes a knowledge date without a default date_string" :
	     "the file's tokenizer.chat_template is neither ChatML nor Llama 3");
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
	free(c->knowledge);
	free(c->date);
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

/* s as a JSON string, as transformers' tojson filter writes it
 * (Python's json.dumps: non-ASCII as it is). */
static void put_json(out *o, const char *s)
{
	puts_(o, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char e[8];

		if (ch == '"' || ch == '\\')
			e[0] = '\\', e[1] = (char)ch, e[2] = '\0';
		else if (ch < 0x20)
			snprintf(e, sizeof e, ch == '\n' ? "\\n" : ch == '\r' ? "\\r" :
			         ch == '\t' ? "\\t" : ch == '\b' ? "\\b" :
			         ch == '\f' ? "\\f" : "\\u%04x", ch);
		else
			e[0] = (char)ch, e[1] = '\0';
		puts_(o, e);
	}
	puts_(o, "\"");
}

/* Llama 3.1's system header: the knowledge and today's dates, then the
 * first message's content when it is a system one; returns how many
 * messages it took (0 or 1). */
static size_t llama31_system(const tg_llm_chat *c, const tg_llm_message *m,
                             out *o)
{
	size_t len = 0, took = !strcmp(m[0].role, "system");
	const char *s = took ? trim(m[0].content, &len) : "";

	puts_(o, "<|start_header_id|>system<|end_header_id|>\n\n");
	puts_(o, c->knowledge);
	puts_(o, "Today Date: ");
	puts_(o, c->date);
	puts_(o, "\n\n");
	put(o, s, len);
	puts_(o, "<|eot_id|>");
	return took;
}

static void llama3(const tg_llm_chat *c, const tg_llm_message *m, size_t n,
                   int gen, out *o)
{
	size_t i = 0;

	puts_(o, c->bos);
	if (c->knowledge)
		i = llama31_system(c, m, o);
	for (; i < n; i++) {
		size_t len;
		const char *s = trim(m[i].content, &len);

		if (c->knowledge && (!strcmp(m[i].role, "tool") ||
		                     !strcmp(m[i].role, "ipython"))) {
			/* 3.1's tool results: a string is iterable to Jinja */
			puts_(o, "<|start_header_id|>ipython<|end_header_id|>\n\n");
			put_json(o, m[i].content);
			puts_(o, "<|eot_id|>");
			continue;
		}
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

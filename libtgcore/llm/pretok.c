/*
 * pretok.c - the pre-tokenizers of byte-level BPE: the text is split
 * into pieces by the pattern its tokenizer.ggml.pre names, before the
 * merges run within each piece.  The patterns (those of GPT-2, Llama 3
 * and Qwen 2, as tokenizer.json files and llama.cpp write them) are
 * matched by hand rather than by a regex library: each alternative is
 * a function giving the length it matches at a position (0: none), and
 * the first that matches wins, as in a backtracking regex engine.
 */
#include <string.h>

#include "llm.h"

static const struct {
	const char *name;
	tok_pre pre;
} pre_names[] = {
	{ "default", TOK_PRE_GPT2 },     { "gpt2", TOK_PRE_GPT2 },
	{ "gpt-2", TOK_PRE_GPT2 },       { "smollm", TOK_PRE_SMOLLM },
	{ "starcoder", TOK_PRE_SMOLLM }, { "refact", TOK_PRE_SMOLLM },
	{ "codeshell", TOK_PRE_SMOLLM }, { "llama3", TOK_PRE_LLAMA3 },
	{ "llama-v3", TOK_PRE_LLAMA3 },  { "llama-bpe", TOK_PRE_LLAMA3 },
	{ "qwen2", TOK_PRE_QWEN2 },
};

#define N_PRE (sizeof pre_names / sizeof pre_names[0])

int tok_pre_from_name(const char *name)
{
	char known[256] = "";

	if (!name)
		return TOK_PRE_GPT2;
	for (size_t i = 0; i < N_PRE; i++)
		if (strcmp(name, pre_names[i].name) == 0)
			return (int)pre_names[i].pre;
	for (size_t i = 0; i < N_PRE; i++) {
		strcat(known, i ? ", " : "");
		strcat(known, pre_names[i].name);
	}
	tg_set_error(TG_EUNSUPPORTED,
	             "tokenizer: pre-tokenizer '%s' (tokenizer.ggml.pre) is "
	             "not known; known: %s", name, known);
	return -1;
}

/* The characters from i on, in a pattern's terms. */
typedef struct scan {
	const tok_char *c;
	size_t n;
} scan;

static int cls_at(const scan *s, size_t i)
{
	return i < s->n ? s->c[i].cls : -1;
}

static uint32_t cp_at(const scan *s, size_t i)
{
	return i < s->n ? s->c[i].cp : 0;
}

static size_t run_of(const scan *s, size_t i, int cls)
{
	size_t j = i;

	while (j < s->n && s->c[j].cls == cls)
		j++;
	return j - i;
}

/* 's|'t|'re|'ve|'m|'ll|'d, case-sensitive or (fold) ASCII-insensitive */
static size_t contraction(const scan *s, size_t i, int fold)
{
	static const char *const suf[] = { "s", "t", "re", "ve", "m", "ll", "d" };

	if (cp_at(s, i) != '\'')
		return 0;
	for (size_t k = 0; k < 7; k++) {
		size_t m = strlen(suf[k]), j;

		for (j = 0; j < m; j++) {
			uint32_t c = cp_at(s, i + 1 + j);

			if (fold && c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
			if (c != (uint32_t)suf[k][j])
				break;
		}
		if (j == m)
			return m + 1;
	}
	return 0;
}

/* " ?" then a run of class cls (cls OTHER: [^\s\p{L}\p{N}]) */
static size_t space_then_run(const scan *s, size_t i, int cls)
{
	size_t sp = cp_at(s, i) == ' ' && cls_at(s, i + 1) == cls;
	size_t r = run_of(s, i + sp, cls);

	return r ? sp + r : 0;
}

/* \s+(?!\S): the whitespace run, less its last character when a
 * non-space follows it; then \s+: all of it. */
static size_t spaces(const scan *s, size_t i)
{
	size_t r = run_of(s, i, TOK_SPACE);

	if (r == 0)
		return 0;
	if (i + r == s->n || r == 1)
		return r;
	return r - 1;
}

/* GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+
 * |\s+(?!\S)|\s+ */
static size_t match_gpt2(const scan *s, size_t i)
{
	size_t m;

	if ((m = contraction(s, i, 0)) || (m = space_then_run(s, i, TOK_LETTER)) ||
	    (m = space_then_run(s, i, TOK_NUMBER)) ||
	    (m = space_then_run(s, i, TOK_OTHER)))
		return m;
	return spaces(s, i);
}

static int is_crlf(uint32_t cp)
{
	return cp == '\r' || cp == '\n';
}

/* [^\r\n\p{L}\p{N}]?\p{L}+ */
static size_t opt_then_letters(const scan *s, size_t i)
{
	int c = cls_at(s, i);
	size_t pre = c != TOK_LETTER && c != TOK_NUMBER && c >= 0 &&
	             !is_crlf(cp_at(s, i)) && cls_at(s, i + 1) == TOK_LETTER;
	size_t r = run_of(s, i + pre, TOK_LETTER);

	return r ? pre + r : 0;
}

/* " ?[^\s\p{L}\p{N}]+[\r\n]*" */
static size_t punct_newlines(const scan *s, size_t i)
{
	size_t m = space_then_run(s, i, TOK_OTHER);

	while (m && is_crlf(cp_at(s, i + m)))
		m++;
	return m;
}

/* \s*[\r\n]+: the whitespace run up to its last \r or \n */
static size_t spaces_to_newline(const scan *s, size_t i)
{
	size_t r = run_of(s, i, TOK_SPACE);

	while (r > 0 && !is_crlf(cp_at(s, i + r - 1)))
		r--;
	return r;
}

/* Llama 3 (digits at most 3 at a time) and Qwen 2 (maxdig 1):
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
 * | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t match_llama3(const scan *s, size_t i, size_t maxdig)
{
	size_t m;

	if ((m = contraction(s, i, 1)) || (m = opt_then_letters(s, i)))
		return m;
	if ((m = run_of(s, i, TOK_NUMBER)))
		return m < maxdig ? m : maxdig;
	if ((m = punct_newlines(s, i)) || (m = spaces_to_newline(s, i)))
		return m;
	return spaces(s, i);
}

static size_t match(tok_pre pre, const scan *s, size_t i)
{
	switch (pre) {
	case TOK_PRE_LLAMA3: return match_llama3(s, i, 3);
	case TOK_PRE_QWEN2: return match_llama3(s, i, 1);
	default: return match_gpt2(s, i);
	}
}

/* Splits c[0..n) by the pattern; ends as tok_pre_split's. */
static size_t split_pattern(tok_pre pre, const tok_char *c, size_t n,
                            size_t base, size_t *ends)
{
	scan s = { c, n };
	size_t k = 0;

	for (size_t i = 0; i < n;) {
		size_t m = match(pre, &s, i);

		i += m ? m : 1; /* every character matches; never stall */
		ends[k++] = base + i;
	}
	return k;
}

size_t tok_pre_split(tok_pre pre, const tok_char *c, size_t n, size_t *ends)
{
	size_t k = 0, start = 0;

	if (pre != TOK_PRE_SMOLLM)
		return split_pattern(pre, c, n, 0, ends);
	/* each \p{N} a piece of its own, the pattern between them */
	for (size_t i = 0; i <= n; i++) {
		if (i < n && c[i].cls != TOK_NUMBER)
			continue;
		k += split_pattern(TOK_PRE_GPT2, c + start, i - start, start,
		                   ends + k);
		if (i < n)
			ends[k++] = i + 1;
		start = i + 1;
	}
	return k;
}

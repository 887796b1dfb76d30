/*
 * tokenize.c - text to ids: the special tokens are found first (at one
 * place the longest wins), the text between them goes to the model's
 * encoder (bpe.c or spm.c), and BOS and EOS are added where the file
 * asks for them.
 */
#include <stdlib.h>
#include <string.h>

#include "llm.h"

/* The special token at s[0..n) that flags allow, longest first; -1. */
static int32_t special_at(const tg_llm_tokenizer *t, const char *s,
                          size_t n, int flags)
{
	for (size_t k = 0; k < t->n_specials; k++) {
		const tok_entry *e = &t->tok[t->specials[k]];

		if (e->len > n || e->text[0] != s[0] ||
		    memcmp(e->text, s, e->len) != 0)
			continue;
		if (e->type == TG_LLM_TOKEN_USER_DEFINED ||
		    (flags & TG_LLM_PARSE_SPECIAL))
			return t->specials[k];
	}
	return -1;
}

/* A fragment of plain text.  Each comes after the start or after a
 * special token, so SentencePiece's space goes before each (as in
 * llama.cpp, and tokenizers' normalizer, which sees each alone). */
static int encode_text(const tg_llm_tokenizer *t, const char *s, size_t n,
                       tok_ids *out)
{
	if (n == 0)
		return 0;
	if (t->model == TOK_MODEL_GPT2)
		return tok_bpe_text(t, s, n, out);
	return tok_spm_text(t, s, n, t->add_space_prefix, out);
}

static int encode(const tg_llm_tokenizer *t, const char *s, size_t n,
                  int flags, tok_ids *out)
{
	unsigned char first[32] = { 0 }; /* bytes a special token starts with */
	size_t start = 0;
	int rc = 0;

	for (size_t k = 0; k < t->n_specials; k++) {
		unsigned char b = (unsigned char)t->tok[t->specials[k]].text[0];

		first[b / 8] |= (unsigned char)(1u << b % 8);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		unsigned char b = (unsigned char)s[i];
		int32_t id;

		if (!(first[b / 8] & 1u << b % 8) ||
		    (id = special_at(t, s + i, n - i, flags)) < 0)
			continue;
		rc = encode_text(t, s + start, i - start, out);
		if (rc == 0)
			rc = tok_ids_push(out, id);
		start = i + t->tok[id].len;
		i = start - 1;
	}
	return rc ? rc : encode_text(t, s + start, n - start, out);
}

long tg_llm_tokenize(const tg_llm_tokenizer *t, const char *text,
                     size_t len, int flags, int32_t *ids, size_t max)
{
	int add = t && (flags & TG_LLM_ADD_SPECIAL);
	tok_ids out = { 0 };
	int rc = 0;

	if (!t || (!text && len) || (!ids && max))
		return tg_set_error(TG_EINVAL, "tg_llm_tokenize: NULL %s",
		                    !t ? "tokenizer" : !text ? "text" : "ids");
	if (flags & ~(TG_LLM_ADD_SPECIAL | TG_LLM_PARSE_SPECIAL))
		return tg_set_error(TG_EINVAL, "tg_llm_tokenize: unknown flags "
		                    "0x%x", (unsigned)flags);
	if (add && t->add_bos && t->bos >= 0)
		rc = tok_ids_push(&out, t->bos);
	if (rc == 0)
		rc = encode(t, text, len, flags, &out);
	if (rc == 0 && add && t->add_eos && t->eos >= 0)
		rc = tok_ids_push(&out, t->eos);
	if (rc < 0) {
		free(out.v);
		return tg_set_error(TG_ENOMEM, "tg_llm_tokenize: out of memory "
		                    "for %zu bytes of text", len);
	}
	if (max && out.n)
		memcpy(ids, out.v, (out.n < max ? out.n : max) * sizeof *ids);
	free(out.v);
	return (long)out.n;
}

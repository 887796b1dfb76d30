/*
 * detok.c - ids to text: each token's bytes one after another, with
 * SentencePiece's space before a text removed again, and the stream
 * that holds back the bytes of a character until it is whole.
 */
#include <stdlib.h>
#include <string.h>

#include "llm.h"

struct tg_llm_detok {
	const tg_llm_tokenizer *t;
	int at_text_start; /* SentencePiece: the next text starts a fragment */
	char held[4];      /* the start of a character not yet whole */
	size_t nheld;
	char *buf;         /* what the last call returned, NUL-terminated */
	size_t cap;
};

/* The bytes id adds to the text: its bytes, less SentencePiece's
 * prefix space when it starts a fragment (*at_start, which it
 * updates: set again by special tokens, as the encoder's rule). */
static const char *piece(const tg_llm_tokenizer *t, int32_t id,
                         int *at_start, size_t *len)
{
	const tok_entry *e = &t->tok[id];
	const char *s = e->bytes;

	*len = e->nbytes;
	if (t->model != TOK_MODEL_LLAMA || !t->add_space_prefix)
		return s;
	if (e->type == TG_LLM_TOKEN_CONTROL ||
	    e->type == TG_LLM_TOKEN_USER_DEFINED) {
		*at_start = 1;
		return s;
	}
	if (*at_start && *len && s[0] == ' ')
		s++, (*len)--;
	*at_start = 0;
	return s;
}

static int check_ids(const tg_llm_tokenizer *t, const int32_t *ids,
                     size_t n, const char *op)
{
	if (!t || (!ids && n))
		return tg_set_error(TG_EINVAL, "%s: NULL %s", op,
		                    t ? "ids" : "tokenizer");
	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || (size_t)ids[i] >= t->n)
			return tg_set_error(TG_EINVAL, "%s: ids[%zu] = %ld is out of "
			                    "range (the vocabulary has %zu)", op,
			                    i, (long)ids[i], t->n);
	return 0;
}

long tg_llm_detokenize(const tg_llm_tokenizer *t, const int32_t *ids,
                       size_t n, char *buf, size_t size)
{
	int at_start = 1;
	size_t o = 0;

	if (check_ids(t, ids, n, "tg_llm_detokenize") < 0)
		return TG_EINVAL;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const char *s = piece(t, ids[i], &at_start, &len);

		if (buf && o < size)
			memcpy(buf + o, s, len < size - o ? len : size - o);
		o += len;
	}
	return (long)o;
}

tg_llm_detok *tg_llm_detok_new(const tg_llm_tokenizer *t)
{
	tg_llm_detok *d;

	if (!t) {
		tg_set_error(TG_EINVAL, "tg_llm_detok_new: NULL tokenizer");
		return NULL;
	}
	d = calloc(1, sizeof *d);
	if (!d) {
		tg_set_error(TG_ENOMEM, "tg_llm_detok_new: out of memory");
		return NULL;
	}
	d->t = t;
	d->at_text_start = 1;
	return d;
}

/* buf holds at least n + 1 bytes; 0 or TG_ENOMEM. */
static int fit(tg_llm_detok *d, size_t n)
{
	char *b;

	if (n + 1 <= d->cap)
		return 0;
	b = realloc(d->buf, 2 * (n + 1));
	if (!b)
		return tg_set_error(TG_ENOMEM, "tg_llm_detok_feed: out of memory "
		                    "for %zu bytes", n);
	d->buf = b;
	d->cap = 2 * (n + 1);
	return 0;
}

const char *tg_llm_detok_feed(tg_llm_detok *d, int32_t id, size_t *len)
{
	const char *s;
	size_t n, all, done;
	int at;

	if (!d) {
		tg_set_error(TG_EINVAL, "tg_llm_detok_feed: NULL stream");
		return NULL;
	}
	if (check_ids(d->t, &id, 1, "tg_llm_detok_feed") < 0)
		return NULL;
	at = d->at_text_start;
	s = piece(d->t, id, &at, &n);
	all = d->nheld + n;
	if (fit(d, all) < 0)
		return NULL;
	d->at_text_start = at;
	memcpy(d->buf, d->held, d->nheld);
	memcpy(d->buf + d->nheld, s, n);
	done = tok_utf8_complete(d->buf, all);
	d->nheld = all - done; /* at most 3: an unfinished sequence */
	memcpy(d->held, d->buf + done, d->nheld);
	d->buf[done] = '\0';
	if (len)
		*len = done;
	return d->buf;
}

const char *tg_llm_detok_flush(tg_llm_detok *d, size_t *len)
{
	if (!d) {
		tg_set_error(TG_EINVAL, "tg_llm_detok_flush: NULL stream");
		return NULL;
	}
	if (fit(d, d->nheld) < 0)
		return NULL;
	memcpy(d->buf, d->held, d->nheld);
	d->buf[d->nheld] = '\0';
	if (len)
		*len = d->nheld;
	d->nheld = 0;
	d->at_text_start = 1;
	return d->buf;
}

void tg_llm_detok_free(tg_llm_detok *d)
{
	if (!d)
		return;
	free(d->buf);
	free(d);
}

/*
 * strbuf.c - growing strings with a sticky error (SQLite's StrAccum):
 * writers append without checking and look once at the end.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static char empty[1];

void tg_strbuf_init(tg_strbuf *sb)
{
	sb->s = empty;
	sb->len = sb->cap = 0;
	sb->failed = 0;
}

/* Room for `extra` more bytes plus the NUL; 0 on success. */
static int reserve(tg_strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *s;

	if (sb->failed)
		return -1;
	if (extra > SIZE_MAX / 2 - sb->len - 1)
		goto fail;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	s = realloc(sb->cap ? sb->s : NULL, cap);
	if (!s)
		goto fail;
	if (!sb->cap)
		s[0] = '\0';
	sb->s = s;
	sb->cap = cap;
	return 0;
fail:
	sb->failed = 1;
	return -1;
}

void tg_strbuf_addn(tg_strbuf *sb, const char *str, size_t n)
{
	if (reserve(sb, n))
		return;
	memcpy(sb->s + sb->len, str, n);
	sb->len += n;
	sb->s[sb->len] = '\0';
}

void tg_strbuf_add(tg_strbuf *sb, const char *str)
{
	tg_strbuf_addn(sb, str, strlen(str));
}

void tg_strbuf_addf(tg_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

char *tg_strbuf_finish(tg_strbuf *sb)
{
	char *s = NULL;

	if (!sb->failed)
		s = sb->cap ? sb->s : calloc(1, 1);
	else
		tg_strbuf_release(sb);
	tg_strbuf_init(sb);
	return s;
}

void tg_strbuf_release(tg_strbuf *sb)
{
	if (sb->cap)
		free(sb->s);
	tg_strbuf_init(sb);
}

uint64_t tg_hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3u;
	return h;
}

uint64_t tg_hash_str(const char *s)
{
	return tg_hash_bytes(s, strlen(s));
}

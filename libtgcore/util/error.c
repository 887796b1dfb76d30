/*
 * error.c - the per-thread last error (SQLite's sqlite3_errmsg model):
 * a fixed buffer per thread, so reporting an error never allocates and
 * can never fail, and the message is never NULL.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core.h"

static _Thread_local char err_msg[TG_ERROR_MAX];
static _Thread_local int err_status;

/* Formats into a copy first, so that the message may quote the last
 * one (tg_set_error(s, "x: %s", tg_last_error())). */
int tg_verror(int status, const char *fmt, va_list ap)
{
	char msg[TG_ERROR_MAX];

	vsnprintf(msg, sizeof msg, fmt, ap);
	memcpy(err_msg, msg, sizeof msg);
	err_status = status;
	return status;
}

int tg_error(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tg_verror(status, fmt, ap);
	va_end(ap);
	return status;
}

/* Appends s to the message, cutting it at the buffer's end (which
 * snprintf would do too, but GCC at -O1 warns about that). */
static void append(const char *s)
{
	size_t n = strlen(err_msg), k = strlen(s);

	if (k > sizeof err_msg - 1 - n)
		k = sizeof err_msg - 1 - n;
	memcpy(err_msg + n, s, k);
	err_msg[n + k] = '\0';
}

int tg_set_error(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tg_verror(status < 0 ? status : TG_EINVAL, fmt, ap);
	va_end(ap);
	return err_status;
}

int tg_error_prefix(const char *fmt, ...)
{
	char old[TG_ERROR_MAX];
	va_list ap;

	memcpy(old, err_msg, sizeof old);
	va_start(ap, fmt);
	vsnprintf(err_msg, sizeof err_msg, fmt, ap);
	va_end(ap);
	append(": ");
	append(old);
	return err_status;
}

int tg_error_oom(const char *op)
{
	return tg_error(TG_ENOMEM, "%s: out of host memory", op);
}

const char *tg_last_error(void)
{
	return err_msg;
}

int tg_last_status(void)
{
	return err_status;
}

void tg_clear_error(void)
{
	err_msg[0] = '\0';
	err_status = TG_OK;
}

const char *tg_status_name(int status)
{
	static const char *const names[] = {
		"TG_OK", "TG_EINVAL", "TG_ENOMEM", "TG_ENODEV", "TG_ECOMPILE",
		"TG_EPLUGIN", "TG_ECONFIG", "TG_EIO", "TG_EUNSUPPORTED",
		"TG_ERUNTIME", "TG_EINTERNAL", "TG_ETIMEOUT", "TG_ECOMM",
	};
	_Static_assert(TG_ARRAY_LEN(names) == 1 - TG_STATUS_MIN,
	               "one name per status");

	if (status > 0 || status < TG_STATUS_MIN)
		return "TG_E?";
	return names[-status];
}

/* Bytes of the well-formed UTF-8 sequence at s (2 to 4), else 0:
 * no overlong forms, surrogates or code points past U+10FFFF. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xE0 || s[0] == 0xF0)
		lo = s[0] == 0xE0 ? 0xA0 : 0x90;
	if (s[0] == 0xED || s[0] == 0xF4)
		hi = s[0] == 0xED ? 0x9F : 0x8F;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* The text byte c stands for in a message: itself, or an escape. */
static size_t escape_byte(unsigned char c, char out[5])
{
	static const char from[] = "\\'\n\t\r", to[] = "\\'ntr";
	const char *e = c ? strchr(from, c) : NULL;

	if (e) {
		out[0] = '\\';
		out[1] = to[e - from];
		return 2;
	}
	if (c >= 0x20 && c < 0x7F) {
		out[0] = (char)c;
		return 1;
	}
	snprintf(out, 5, "\\x%02X", c);
	return 4;
}

/* The text for the character at p into out; *k: the bytes it takes. */
static size_t escape_piece(const unsigned char *p, char out[5], size_t *k)
{
	if ((*k = *p >= 0x80 ? utf8_len(p) : 0)) {
		memcpy(out, p, *k);
		return *k;
	}
	*k = 1;
	return escape_byte(*p, out);
}

const char *tg_escape(const char *s, char *buf, size_t n)
{
	const unsigned char *p;
	size_t len = 0, total = 0, k, w;
	char piece[5];

	for (p = (const unsigned char *)s; *p; p += k)
		total += escape_piece(p, piece, &k);
	for (p = (const unsigned char *)s; *p; p += k) {
		w = escape_piece(p, piece, &k);
		if (total + 1 > n && len + w + 4 > n) {  /* room for "..." */
			memcpy(buf + len, "...", 4);
			return buf;
		}
		memcpy(buf + len, piece, w);
		len += w;
	}
	buf[len] = '\0';
	return buf;
}

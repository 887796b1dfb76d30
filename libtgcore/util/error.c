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

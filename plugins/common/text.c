#include "config.h"
/*
 * text.c - the head of a compiler's log, integer config values
 * (text.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "text.h"

int text_head_len(const char *s, int lines, int max)
{
	size_t n;

	for (n = 0; s[n] != '\0'; n++)
		if (s[n] == '\n' && --lines == 0)
			break;
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	return n > (size_t)max ? max : (int)n;
}

int text_long(const char *s, long min, long max, long *out)
{
	const char *d = s != NULL && s[0] == '-' ? s + 1 : s;
	char *end;
	long v;

	if (d == NULL || !isdigit((unsigned char)d[0]))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	while (*end == ' ' || *end == '\t')
		end++;
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "TG_CPU_THREADS" for cpu and threads. */
static void env_name(const char *who, const char *key, char *buf, size_t n)
{
	snprintf(buf, n, "TG_%s_%s", who, key);
	for (size_t i = 0; buf[i] != '\0'; i++)
		buf[i] = isalnum((unsigned char)buf[i])
		         ? (char)toupper((unsigned char)buf[i]) : '_';
}

int text_bad_config(const struct tg_host *host, const char *who,
                    const char *key, const char *fmt, ...)
{
	char what[256], env[128];
	const char *v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (TG_HAS(host, struct tg_host, config_error) &&
	    host->config_error != NULL)
		return host->config_error(host, key, "%s", what);
	v = host->config_get(host, key);
	env_name(who, key, env, sizeof env);
	return host->set_error(host, TG_ECONFIG, "config: [%s] %s (or %s): "
	                       "%s, got '%s'", who, key, env, what,
	                       v != NULL ? v : "");
}

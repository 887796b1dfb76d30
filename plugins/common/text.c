#include "config.h"
/*
 * text.c - the head of a compiler's log, integer config values
 * (text.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
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

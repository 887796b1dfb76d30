#include "config.h"
/*
 * text.c - the head of a compiler's log (text.h).
 */
#include <stddef.h>

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

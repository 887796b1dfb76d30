/*
 * unicode.c - what the pre-tokenizers need of Unicode: UTF-8 decoding
 * that never fails (a stray byte is a character of its own), the class
 * of a code point (letter, number, White_Space, other) and the end of
 * the last complete character, for streaming.
 */
#include "llm.h"

/* The length of a sequence that starts with byte b, 0 for a byte that
 * cannot start one (a continuation byte, C0, C1, F5..FF). */
static int seq_len(unsigned char b)
{
	if (b < 0x80)
		return 1;
	if (b >= 0xC2 && b <= 0xDF)
		return 2;
	if (b >= 0xE0 && b <= 0xEF)
		return 3;
	if (b >= 0xF0 && b <= 0xF4)
		return 4;
	return 0;
}

/* Whether the second byte c may follow lead byte b: UTF-8's rules
 * against overlong forms, surrogates and code points past U+10FFFF. */
static int second_ok(unsigned char b, unsigned char c)
{
	if ((c & 0xC0) != 0x80)
		return 0;
	switch (b) {
	case 0xE0: return c >= 0xA0;
	case 0xED: return c <= 0x9F;
	case 0xF0: return c >= 0x90;
	case 0xF4: return c <= 0x8F;
	default: return 1;
	}
}

/* How many bytes of s[0..n) form a valid prefix of one sequence (at
 * most its length k). */
static size_t valid_prefix(const unsigned char *s, size_t n, int k)
{
	size_t i = 1;

	if (n > 1 && k > 1) {
		if (!second_ok(s[0], s[1]))
			return 1;
		i = 2;
		while (i < n && i < (size_t)k && (s[i] & 0xC0) == 0x80)
			i++;
	}
	return i;
}

void tok_utf8_next(const char *str, size_t n, tok_char *c)
{
	const unsigned char *s = (const unsigned char *)str;
	int k = seq_len(s[0]);
	uint32_t cp;

	if (k == 1 || k == 0 || (size_t)k > n ||
	    valid_prefix(s, n, k) < (size_t)k) {
		c->cp = k == 1 ? s[0] : 0xFFFD;
		c->len = 1;
		c->cls = k == 1 ? (uint8_t)tok_uclass(s[0]) : TOK_OTHER;
		return;
	}
	cp = s[0] & (0x7F >> k);
	for (int i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3F);
	c->cp = cp;
	c->len = (uint8_t)k;
	c->cls = (uint8_t)tok_uclass(cp);
}

/* Unicode's White_Space property (PropList.txt), which the patterns'
 * \s means. */
static int is_space(uint32_t cp)
{
	if (cp <= 0x20)
		return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
	return cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
	       (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

int tok_uclass(uint32_t cp)
{
	size_t lo = 0, hi = tok_nuranges;

	if (is_space(cp))
		return TOK_SPACE;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < tok_uranges[mid].lo)
			hi = mid;
		else if (cp > tok_uranges[mid].hi)
			lo = mid + 1;
		else
			return tok_uranges[mid].cls;
	}
	return TOK_OTHER;
}

int tok_utf8_put(uint32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;

	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

size_t tok_utf8_complete(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = n;

	/* the last lead byte, at most 3 bytes back */
	while (i > 0 && n - i < 4 && (s[i - 1] & 0xC0) == 0x80)
		i--;
	if (i == 0 || n - i >= 4)
		return n;
	i--;
	int k = seq_len(s[i]);
	if (k <= 1 || (size_t)k <= n - i)
		return n; /* ASCII, a stray byte, or a whole sequence */
	/* incomplete: hold it back only if it can still become valid */
	return valid_prefix(s + i, n - i, k) == n - i ? i : n;
}

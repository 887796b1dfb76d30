/*
 * arena.c - memory freed all at once (QBE's alloc/freeall): a compilation
 * allocates its IR nodes here and frees them together.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"

struct tg_arena_chunk {
	struct tg_arena_chunk *prev;
	_Alignas(16) unsigned char mem[];
};

enum { CHUNK_MIN = 64 * 1024, ALIGN = 16 };

void tg_arena_init(tg_arena *a)
{
	a->head = NULL;
	a->used = a->size = 0;
	a->total = 0;
}

/* A chunk of at least `n` bytes; big requests get a chunk of their own
 * size so that one huge node does not waste a standard chunk. */
static int grow(tg_arena *a, size_t n)
{
	size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;
	struct tg_arena_chunk *c;

	if (size > SIZE_MAX - sizeof *c)
		return -1;
	c = malloc(sizeof *c + size);
	if (!c)
		return -1;
	c->prev = a->head;
	a->head = c;
	a->used = 0;
	a->size = size;
	return 0;
}

void *tg_arena_alloc(tg_arena *a, size_t n)
{
	void *p;

	if (n > SIZE_MAX - ALIGN)
		return NULL;
	n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (!a->head || a->size - a->used < n) {
		if (grow(a, n))
			return NULL;
	}
	p = a->head->mem + a->used;
	a->used += n;
	a->total += n;
	return p;
}

char *tg_arena_strdup(tg_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = tg_arena_alloc(a, n);

	if (d)
		memcpy(d, s, n);
	return d;
}

void tg_arena_free(tg_arena *a)
{
	struct tg_arena_chunk *c = a->head, *prev;

	for (; c; c = prev) {
		prev = c->prev;
		free(c);
	}
	tg_arena_init(a);
}

/*
 * util/ptrmap.c - a map from pointers to pointers (open addressing,
 * linear probing), for the graph walks of the scheduler and the memory
 * planner, which key nodes by identity.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

static size_t slot(const tg_ptrmap *m, const void *k)
{
	size_t h = (size_t)(((uintptr_t)k >> 4) * 0x9e3779b97f4a7c15ull);

	for (h &= m->cap - 1; m->key[h] && m->key[h] != k;
	     h = (h + 1) & (m->cap - 1))
		;
	return h;
}

static int grow(tg_ptrmap *m)
{
	tg_ptrmap nm = { 0 };
	size_t i;

	/* small first: a schedule of one kernel makes several maps of a
	 * few entries; keys and values share one allocation */
	nm.cap = m->cap ? m->cap * 2 : 8;
	if (!(nm.key = calloc(nm.cap, sizeof *nm.key + sizeof *nm.val)))
		return tg_error_oom("ptrmap");
	nm.val = (void **)(nm.key + nm.cap);
	for (i = 0; i < m->cap; i++)
		if (m->key[i]) {
			size_t s = slot(&nm, m->key[i]);

			nm.key[s] = m->key[i];
			nm.val[s] = m->val[i];
			nm.n++;
		}
	free(m->key);
	*m = nm;
	return 0;
}

int tg_ptrmap_has(const tg_ptrmap *m, const void *k)
{
	return m->cap && m->key[slot(m, k)] == k;
}

void *tg_ptrmap_get(const tg_ptrmap *m, const void *k)
{
	return tg_ptrmap_has(m, k) ? m->val[slot(m, k)] : NULL;
}

int tg_ptrmap_put(tg_ptrmap *m, const void *k, void *v)
{
	size_t s;

	if ((m->n + 1) * 2 > m->cap && grow(m))
		return TG_ENOMEM;
	s = slot(m, k);
	m->val[s] = v;
	if (m->key[s])
		return 0;
	m->key[s] = k;
	m->n++;
	return 1;
}

void tg_ptrmap_free(tg_ptrmap *m)
{
	free(m->key);  /* the values share its allocation */
	memset(m, 0, sizeof *m);
}

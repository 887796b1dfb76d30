/*
 * vec.c - growth for TG_VEC arrays (Lua's luaM_growaux_): double from 8,
 * check for overflow, and change nothing when the allocation fails.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "core.h"

int tg_vec_grow_(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 8;
	void *nv;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return TG_ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return TG_ENOMEM;
	nv = realloc(*v, ncap * elem);
	if (!nv)
		return TG_ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

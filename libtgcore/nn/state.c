/*
 * nn/state.c - named tensors (tinygrad's state dict): an ordered list of
 * (name, tensor) with a hash index on the names, and loading one state
 * into another (load_state_dict).  The safetensors format is in
 * nn/safetensors.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "nn/state.h"

/* ------------------------------------------------------------ tg_state */

/* The slot holding `name`, or the empty slot where it would go. */
static size_t *find_slot(const tg_state *s, const char *name)
{
	size_t mask = s->nslot - 1, i = (size_t)tg_hash_str(name) & mask;

	while (s->slot[i] && strcmp(s->e.v[s->slot[i] - 1].name, name))
		i = (i + 1) & mask;
	return &s->slot[i];
}

/* Doubles the index; on failure the old one stays. */
static int grow_index(tg_state *s)
{
	size_t *old = s->slot, oldn = s->nslot, i;

	if (!(s->slot = calloc(oldn * 2, sizeof *s->slot))) {
		s->slot = old;
		return TG_ENOMEM;
	}
	s->nslot = oldn * 2;
	for (i = 0; i < s->e.n; i++)
		*find_slot(s, s->e.v[i].name) = i + 1;
	free(old);
	return 0;
}

/* Appends (name, t), taking `name` over on success.  0; 1 when the
 * name is taken (nothing added); TG_ENOMEM (error set, `op` named). */
int tg_state_push_(tg_state *s, char *name, tg_tensor *t,
                      const char *op)
{
	entry e = { name, t };
	size_t *slot;

	if ((s->e.n + 1) * 2 > s->nslot && grow_index(s))
		return tg_error_oom(op);
	slot = find_slot(s, name);
	if (*slot)
		return 1;
	if (TG_VEC_PUSH(&s->e, e))
		return tg_error_oom(op);
	*slot = s->e.n;
	return 0;
}

tg_state *tg_state_new(void)
{
	tg_state *s = calloc(1, sizeof *s);

	if (s && !(s->slot = calloc(16, sizeof *s->slot))) {
		free(s);
		s = NULL;
	}
	if (!s)
		tg_error_oom("state_new");
	else
		s->nslot = 16;
	return s;
}

void tg_state_free(tg_state *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->e.n; i++) {
		free(s->e.v[i].name);
		tg_tensor_unref(s->e.v[i].t);
	}
	TG_VEC_FREE(&s->e);
	for (i = 0; i < s->m.n; i++) {
		free(s->m.v[i].key);
		free(s->m.v[i].value);
	}
	TG_VEC_FREE(&s->m);
	free(s->slot);
	free(s);
}

/* Length of the valid UTF-8 sequence at p (n bytes available), or 0:
 * no overlong forms, surrogates or code points past U+10FFFF. */
size_t tg_utf8_len_(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	cp = p[0] & (0x3fu >> (len - 1));
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static int utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k;

	for (; n; p += k, n -= k)
		if (!(k = tg_utf8_len_(p, n)))
			return 0;
	return 1;
}

int tg_state_add(tg_state *s, const char *name, tg_tensor *t)
{
	char *copy;
	int rc;

	if (!t) /* a failed expression: its error stands */
		return tg_last_status() ? tg_last_status() : TG_EINVAL;
	if (!s || !name)
		return tg_error(TG_EINVAL, "state_add: NULL %s",
		                s ? "name" : "state");
	if (!*name)
		return tg_error(TG_EINVAL, "state_add: empty name");
	if (!utf8_valid(name))
		return tg_error(TG_EINVAL, "state_add: name '%s' is not valid "
		                "UTF-8", name);
	if (!(copy = tg_strdup(name, "state_add")))
		return TG_ENOMEM;
	rc = tg_state_push_(s, copy, t, "state_add");
	if (rc) {
		free(copy);
		return rc < 0 ? rc : tg_error(TG_EINVAL, "state_add: duplicate "
		                              "name '%s'", name);
	}
	tg_tensor_ref(t);
	return 0;
}

size_t tg_state_count(const tg_state *s) { return s ? s->e.n : 0; }

/* 0 when i names an entry; else the error "<op>: index i of n". */
static int check_index(const tg_state *s, size_t i, const char *op)
{
	if (s && i < s->e.n)
		return 0;
	return tg_error(TG_EINVAL, "%s: index %zu of a state of %zu", op, i,
	                tg_state_count(s));
}

const char *tg_state_name(const tg_state *s, size_t i)
{
	return check_index(s, i, "state_name") ? NULL : s->e.v[i].name;
}

tg_tensor *tg_state_tensor(const tg_state *s, size_t i)
{
	return check_index(s, i, "state_tensor") ? NULL : s->e.v[i].t;
}

/* The entry named `name`, or NULL. */
entry *tg_state_lookup_(const tg_state *s, const char *name)
{
	size_t k = *find_slot(s, name);

	return k ? &s->e.v[k - 1] : NULL;
}

tg_tensor *tg_state_get(const tg_state *s, const char *name)
{
	entry *e = s && name ? tg_state_lookup_(s, name) : NULL;

	if (!e)
		tg_error(TG_EINVAL, "state: no tensor named '%s'",
		         name ? name : "(null)");
	return e ? e->t : NULL;
}

/* ---------------------------------------------------- loading into a model */

/* 0 when src's tensor can take dst's place: same shape and dtype. */
static int same_kind(const char *name, tg_tensor *dst, tg_tensor *src)
{
	char b1[160], b2[160];
	size_t nd = tg_tensor_ndim(dst);

	if (tg_tensor_dtype(dst) == tg_tensor_dtype(src) &&
	    tg_tensor_ndim(src) == nd &&
	    !memcmp(tg_tensor_shape(dst), tg_tensor_shape(src),
	            nd * sizeof(int64_t)))
		return 0;
	return tg_error(TG_EINVAL, "state_load: '%s' is %s %s in the source "
	                "and %s %s here", name,
	                tg_tensor_shape_str(src, b1, sizeof b1),
	                tg_dtype_name(tg_tensor_dtype(src)),
	                tg_tensor_shape_str(dst, b2, sizeof b2),
	                tg_dtype_name(tg_tensor_dtype(dst)));
}

/* Checks every pairing before anything changes, so a refused load
 * leaves dst as it was. */
static int check_pairs(const tg_state *dst, const tg_state *src, int strict)
{
	const char *name;
	size_t i, found = 0;
	entry *e;

	for (i = 0; i < dst->e.n; i++) {
		name = dst->e.v[i].name;
		if ((e = tg_state_lookup_(src, name)) != NULL) {
			found++;
			if (same_kind(name, dst->e.v[i].t, e->t))
				return TG_EINVAL;
		} else if (strict) {
			return tg_error(TG_EINVAL, "state_load: no tensor '%s' "
			                "in the source (strict)", name);
		}
	}
	for (i = 0; strict && found < src->e.n && i < src->e.n; i++)
		if (!tg_state_lookup_(dst, src->e.v[i].name))
			return tg_error(TG_EINVAL, "state_load: source tensor "
			                "'%s' has no place here (strict)",
			                src->e.v[i].name);
	return 0;
}

int tg_state_load(const tg_state *dst, const tg_state *src, int strict)
{
	tg_tensor **done, *v;
	size_t i, n = 0;
	entry *e;
	int rc;

	if (!dst || !src)
		return tg_error(TG_EINVAL, "state_load: NULL %s",
		                dst ? "source" : "destination");
	if ((rc = check_pairs(dst, src, strict)))
		return rc;
	if (!(done = malloc((dst->e.n ? dst->e.n : 1) * sizeof *done)))
		return tg_error_oom("state_load");
	tg_scope_begin();
	for (i = 0; i < dst->e.n && !rc; i++) {
		if (!(e = tg_state_lookup_(src, dst->e.v[i].name)))
			continue;
		v = e->t;
		if (tg_tensor_dev(v) != tg_tensor_dev(dst->e.v[i].t))
			v = tg_to(v, tg_tensor_dev(dst->e.v[i].t));
		if (!(rc = tg_assign(dst->e.v[i].t, v)))
			done[n++] = dst->e.v[i].t;
	}
	if (!rc && n)
		rc = tg_realize_many(done, n);
	tg_scope_end();
	free(done);
	return rc ? tg_error_prefix("state_load") : 0;
}

/* ------------------------------------------------------------ metadata */

static meta *meta_find(const tg_state *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->m.n; i++)
		if (!strcmp(s->m.v[i].key, key))
			return &s->m.v[i];
	return NULL;
}

int tg_state_meta_set_(tg_state *s, const char *key, const char *value,
                       const char *op)
{
	meta *m = meta_find(s, key), add;
	char *v = NULL;

	if (!*key)
		return tg_error(TG_EINVAL, "%s: empty metadata key", op);
	if (!utf8_valid(key) || (value && !utf8_valid(value)))
		return tg_error(TG_EINVAL, "%s: metadata '%s' is not valid "
		                "UTF-8", op, key);
	if (value && !(v = tg_strdup(value, op)))
		return TG_ENOMEM;
	if (m && v) {
		free(m->value);
		m->value = v;
	} else if (m) { /* removed, the order of the rest kept */
		free(m->key);
		free(m->value);
		memmove(m, m + 1, (size_t)(s->m.v + s->m.n - m - 1) * sizeof *m);
		s->m.n--;
	} else if (v) {
		add.value = v;
		if (!(add.key = tg_strdup(key, op)) || TG_VEC_PUSH(&s->m, add)) {
			free(add.key);
			free(v);
			return tg_error_oom(op);
		}
	}
	return 0;
}

int tg_state_set_metadata(tg_state *s, const char *key, const char *value)
{
	if (!s || !key)
		return tg_error(TG_EINVAL, "state_set_metadata: NULL %s",
		                s ? "key" : "state");
	return tg_state_meta_set_(s, key, value, "state_set_metadata");
}

const char *tg_state_metadata(const tg_state *s, const char *key)
{
	meta *m = s && key ? meta_find(s, key) : NULL;

	if (!m)
		tg_error(TG_EINVAL, "state_metadata: no metadata '%s'",
		         key ? key : "(NULL)");
	return m ? m->value : NULL;
}

size_t tg_state_metadata_count(const tg_state *s)
{
	return s ? s->m.n : 0;
}

const char *tg_state_metadata_key(const tg_state *s, size_t i)
{
	if (s && i < s->m.n)
		return s->m.v[i].key;
	tg_error(TG_EINVAL, "state_metadata_key: index %zu of %zu keys", i,
	         tg_state_metadata_count(s));
	return NULL;
}

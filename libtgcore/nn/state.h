/*
 * nn/state.h - the inside of tg_state, shared by nn/state.c (the object)
 * and nn/safetensors.c (the file format).  Internal.
 */
#ifndef TG_NN_STATE_H
#define TG_NN_STATE_H

#include "core.h"

typedef struct entry {
	char *name;
	tg_tensor *t; /* owned reference; NULL only while a file loads */
} entry;

typedef struct meta {
	char *key, *value;
} meta;

struct tg_state {
	TG_VEC(entry) e;
	TG_VEC(meta) m; /* safetensors "__metadata__", insertion order */
	size_t *slot;  /* open addressing: 1 + index into e, 0 when empty */
	size_t nslot;  /* a power of two, more than twice e.n */
};

/* Appends (name, t), taking `name` over on success.  0; 1 when the
 * name is taken (nothing added); TG_ENOMEM (error set, `op` named). */
int tg_state_push_(tg_state *s, char *name, tg_tensor *t, const char *op);
/* The entry named `name`, or NULL. */
entry *tg_state_lookup_(const tg_state *s, const char *name);
/* Sets key to value (copies; NULL value removes); `op` names the
 * caller in messages. */
int tg_state_meta_set_(tg_state *s, const char *key, const char *value,
                       const char *op);
/* Length of the valid UTF-8 sequence at p (n bytes available), or 0:
 * no overlong forms, surrogates or code points past U+10FFFF. */
size_t tg_utf8_len_(const unsigned char *p, size_t n);

#endif /* TG_NN_STATE_H */

/*
 * nn/gguf.h - what the two files of the GGUF reader share, and nothing
 * else reads: gguf.c (reading and checking a file) and gguf_get.c (the
 * accessors of its metadata and tensors).  Internal; never installed.
 *
 * Lifetimes: a tg_gguf owns everything it returns (keys, strings, the
 * tables below) until tg_gguf_close; its one reference to the file's
 * DISK tensor is dropped there, while tensors made from it keep their
 * own.
 */
#ifndef TG_NN_GGUF_H
#define TG_NN_GGUF_H

#include "core.h"

#define GGUF_OPEN "gguf_open"
#define GGUF_MAX_DIMS 4   /* GGML_MAX_DIMS */

/* A value: a pair's, or an element of an array of strings or arrays.
 * Scalars keep their little-endian bits in `bits`, zero-extended.
 * A string's bytes, NUL-terminated, and an array's elements are in the
 * blob at `off`: an array of numbers or bools as the file's bytes, an
 * array of strings or arrays as n gguf_vals. */
typedef struct gguf_val {
	uint32_t vtype;      /* tg_gguf_vtype */
	uint32_t etype;      /* an array's elements' */
	uint64_t n;          /* a string's bytes, an array's elements */
	uint64_t off;        /* into the blob */
	uint64_t bits;       /* a scalar */
} gguf_val;

typedef struct gguf_kv {
	uint64_t key;        /* blob offset, NUL-terminated */
	gguf_val val;
} gguf_kv;

typedef struct gguf_tensor {
	uint64_t name;       /* blob offset, NUL-terminated */
	uint32_t ndim;
	int type;            /* tg_ggml_type */
	uint64_t ne[GGUF_MAX_DIMS]; /* GGUF's order: ne[0] varies fastest */
	uint64_t off;        /* from the data section's start */
	uint64_t nbytes;
} gguf_tensor;

struct tg_gguf {
	char *path;
	uint32_t version;
	size_t alignment;
	uint64_t data_off;   /* the data section's start in the file */
	size_t nkv, ntensor;
	gguf_kv *kv;
	gguf_tensor *t;
	size_t *kv_sorted, *t_sorted; /* indices by key and by name */
	char *blob;          /* every string and array */
	size_t blob_len, blob_cap;
	tg_tensor *file;     /* the whole file, uint8 on its DISK device */
};

/* Bytes of one element of a fixed-size value type; 0 for a string, an
 * array or a number that names no type. */
size_t tg_gguf_vsize(uint32_t vtype);
/* The string at blob offset off. */
static inline const char *tg_gguf_str(const tg_gguf *g, uint64_t off)
{
	return g->blob + off;
}
/* The index in the sorted table idx (n entries, by the string at
 * name_of) of name, or -1. */
long tg_gguf_lookup(const tg_gguf *g, const size_t *idx, size_t n,
                    int tensors, const char *name);

#endif

/*
 * nn/safetensors.h - what the three files of the safetensors format
 * share, and nothing else reads: safetensors.c (the names, the errors
 * and the header's JSON reader), safetensors_load.c (the layout checks
 * and loading) and safetensors_save.c (saving).  Functions prefixed
 * tg_sft_.  Internal; never installed.
 */
#ifndef TG_NN_SAFETENSORS_H
#define TG_NN_SAFETENSORS_H

#include "core.h"
#include "nn/state.h"
#include "shape/shape.h" /* TG_MAX_DIMS */

#define LOAD "safetensors_load"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BIG_ENDIAN_HOST 1 /* the data would need byte swaps: refused */
#else
#define BIG_ENDIAN_HOST 0
#endif

/* safetensors' dtype names, by tg_dtype. */
extern const char *const tg_sft_dtype[];
/* Sets "safetensors_load: PATH: MSG" (a malformed file); TG_EINVAL. */
TG_PRINTF(2, 3)
int tg_sft_bad(const char *path, const char *fmt, ...);
/* Sets "OP: PATH: MSG: strerror(errno)"; TG_EIO. */
TG_PRINTF(3, 4)
int tg_sft_io_fail(const char *op, const char *path, const char *fmt, ...);

/* ------------------------------------------------ the JSON header reader */

typedef struct reader {
	const char *path;               /* for messages */
	const unsigned char *p, *start, *end; /* the header, p the cursor */
	const char *tensor;             /* the entry being read, or NULL */
} reader;

/* ----------------------------------------------------------- one entry */

/* What the header says of one tensor. */
typedef struct tinfo {
	tg_dtype dt;
	size_t ndim;
	int64_t shape[TG_MAX_DIMS];
	uint64_t begin, end;
} tinfo;

typedef TG_VEC(tinfo) tinfo_vec;

/* The whole header into s's names and metadata and *info, checked
 * against the format (not yet against the data section). */
int tg_sft_read_header(reader *r, tg_state *s, tinfo_vec *info);

#endif

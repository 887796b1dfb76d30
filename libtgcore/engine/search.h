/*
 * engine/search.h - what the BEAM search's files share, and nothing
 * else reads: search.c (the candidates, their timing and the search)
 * and search_scratch.c (the scratch buffers candidates run on).  The
 * search's interface, tg_beam_opts, is in engine.h; functions here are
 * prefixed tg_beam_.  Internal; never installed.
 */
#ifndef TG_SEARCH_H
#define TG_SEARCH_H

#include <stdatomic.h>

#include "engine/engine.h"

typedef struct cand {
	tg_opt opts[TG_MAX_OPTS];
	size_t nopts;
	tg_ksrc ks;
	tg_program *prog;
	int rc;            /* build status */
	char err[256];     /* why the build failed */
	double t;          /* best run in seconds; INFINITY: none */
} cand;

typedef struct search {
	tg_dev *dev;
	const tg_uop *ast;
	const struct tg_renderer_caps *caps;
	tg_settings set;       /* the realize's, for codegen */
	size_t nbufs;
	tg_buffer **bufs;      /* scratch, the kernel's sizes */
	void **ref;            /* NOOPT's outputs, by buffer (NULL: input) */
	void **init;           /* the outputs' first contents, by buffer
	                          (NULL: an input or not read): an assign
	                          reads its output, so every checked run
	                          starts from them */
	size_t nouts;          /* buffers 0..nouts-1 are written */
	int reads_out;         /* the kernel loads one of them */
	double deadline;       /* monotonic seconds; INFINITY until the
	                          rounds start */
	cand *cands;
	size_t ncands;
	atomic_size_t next;    /* the next candidate to build */
	uint64_t *seen;        /* hashes of the sources timed */
	size_t nseen, capseen;
	double best_trial;     /* the fastest trial that finished, in
	                          seconds with its start; INFINITY: none */
	size_t tried, mismatched, failed, slow;
} search;

/* ------------------------------------------ engine/search_scratch.c */

/* Element i of a host array of kind dt as a double. */
double tg_beam_elem(tg_dtype dt, const void *p, size_t i);
/* Whether the AST loads one of its outputs, buffers 0..nouts-1 (an
 * assign); 1 when it cannot tell (out of memory). */
int tg_beam_loads_output(const tg_uop *ast, size_t nouts);
/* Scratch buffers like the item's, filled with random values. */
int tg_beam_make_scratch(search *s, tg_buffer *const *like);
/* The outputs back to their first contents. */
int tg_beam_reset_outputs(search *s);
void tg_beam_free_scratch(search *s);

#endif

/*
 * lazy/realize.c - running a schedule (tinygrad's engine/realize.py):
 * each kernel through the in-memory method cache (a hash table keyed by
 * device, NOOPT and AST text; a miss renders, compiles through the on-disk compile cache
 * and loads), each copy through the host; then the computed bases
 * become buffers.  DEBUG=2 prints a line per item, 3 the AST, 4 the
 * source, 5 the linear IR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazy/lazy.h"

/* A compiled kernel kept for the process (tinygrad's method_cache). */
typedef struct method {
	char *key;          /* device name, NOOPT=n, AST text, by lines */
	uint64_t hash;      /* of key */
	tg_program *prog;
	tg_ksrc ks;
	struct method *next; /* in its bucket */
} method;

/* Chained buckets: a lookup hashes the key once and compares only keys
 * of equal hash (the AST text of a big kernel is long). */
#define MC_BUCKETS 1024

static pthread_mutex_t mc_lock = PTHREAD_MUTEX_INITIALIZER;
static method *mc_buckets[MC_BUCKETS];
static size_t mc_kernels_run; /* for DEBUG lines */

void tg_method_cache_clear(void)
{
	size_t b;

	pthread_mutex_lock(&mc_lock);
	for (b = 0; b < MC_BUCKETS; b++)
		while (mc_buckets[b]) {
			method *m = mc_buckets[b];

			mc_buckets[b] = m->next;
			tg_program_free(m->prog);
			tg_ksrc_free(&m->ks);
			free(m->key);
			free(m);
		}
	mc_kernels_run = 0;
	pthread_mutex_unlock(&mc_lock);
}

/* FNV-1a, 64 bits. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static method *mc_find(const char *key, uint64_t h)
{
	method *m;

	for (m = mc_buckets[h % MC_BUCKETS]; m; m = m->next)
		if (m->hash == h && !strcmp(m->key, key))
			return m;
	return NULL;
}

static char *method_key(tg_dev *dev, const tg_ast *sink)
{
	char *ast = tg_ast_format(sink), *key;
	size_t n;

	if (!ast)
		return NULL;
	n = strlen(tg_dev_name(dev)) + strlen(ast) + 12;
	if ((key = malloc(n)))  /* NOOPT changes the kernel */
		snprintf(key, n, "%s\nNOOPT=%d\n%s", tg_dev_name(dev),
		         tg_codegen_noopt(), ast);
	else
		tg_error_oom("method cache");
	free(ast);
	return key;
}

static void debug_compiled(const tg_ksrc *ks)
{
	if (tg_debug >= 3)
		fprintf(stderr, "%s\n", ks->ast_text ? ks->ast_text : "");
	if (tg_debug >= 5)
		fprintf(stderr, "%s\n", ks->linear_text ? ks->linear_text : "");
	if (tg_debug >= 4)
		fprintf(stderr, "%s\n", ks->src);
}

/* The compiled kernel for sink on dev (borrowed from the cache). */
static method *method_get(tg_dev *dev, const tg_ast *sink)
{
	method *m, *dup;
	char *key = method_key(dev, sink);
	uint64_t h;
	int rc;

	if (!key)
		return NULL;
	h = hash_str(key);
	pthread_mutex_lock(&mc_lock);
	m = mc_find(key, h);
	pthread_mutex_unlock(&mc_lock);
	if (m) {
		free(key);
		return m;
	}
	if (!(m = calloc(1, sizeof *m))) {
		free(key);
		tg_error_oom("method cache");
		return NULL;
	}
	m->key = key;
	m->hash = h;
	rc = tg_codegen(sink, tg_dev_caps(dev), &m->ks);
	if (rc && tg_debug >= 3)  /* what failed: the key holds the AST */
		fprintf(stderr, "%s\n", key);
	if (!rc) {
		debug_compiled(&m->ks);
		if (!(m->prog = tg_program_new(dev, m->ks.name, m->ks.src)))
			rc = tg_last_status();
	}
	if (rc) {
		tg_ksrc_free(&m->ks);
		free(m->key);
		free(m);
		return NULL;
	}
	pthread_mutex_lock(&mc_lock);
	if ((dup = mc_find(key, h))) {
		/* another thread compiled it meanwhile: keep theirs */
		tg_program_free(m->prog);
		tg_ksrc_free(&m->ks);
		free(m->key);
		free(m);
		m = dup;
	} else {
		m->next = mc_buckets[h % MC_BUCKETS];
		mc_buckets[h % MC_BUCKETS] = m;
	}
	pthread_mutex_unlock(&mc_lock);
	return m;
}

static int run_kernel(tg_sched_item *it)
{
	tg_dev *dev = tg_buffer_dev(it->bufs[0]);
	method *m = method_get(dev, it->ast->sink);
	tg_launch_args args = { 0 };
	double t = 0;
	int rc;

	if (!m)
		return tg_error_prefix("realize: kernel for %s",
		                       tg_dev_name(dev));
	args.bufs = it->bufs;
	args.nbufs = it->nbufs;
	memcpy(args.global, m->ks.global, sizeof args.global);
	memcpy(args.local, m->ks.local, sizeof args.local);
	rc = tg_program_launch(m->prog, &args, tg_debug >= 2 ? &t : NULL);
	if (rc)
		return tg_error_prefix("realize: %s", m->ks.name);
	if (tg_debug >= 2)
		fprintf(stderr, "*** %-6s %4zu %-24s arg %2zu mem %8.2f MB "
		        "tm %9.2fus %8.2f GFLOPS %7.2f GB/s\n",
		        tg_dev_name(dev), mc_kernels_run++, m->ks.name,
		        it->nbufs, m->ks.mem_bytes / 1e6, t * 1e6,
		        t > 0 ? m->ks.flops / t / 1e9 : 0,
		        t > 0 ? m->ks.mem_bytes / t / 1e9 : 0);
	return 0;
}

/* Copies go through host memory (no device-to-device path yet). */
static int run_copy(tg_sched_item *it)
{
	size_t n = tg_buffer_nbytes(it->bufs[1]);
	void *tmp = malloc(n ? n : 1);
	int rc;

	if (!tmp)
		return tg_error_oom("copy");
	rc = tg_buffer_copyout(it->bufs[1], tmp, n);
	if (!rc)
		rc = tg_buffer_copyin(it->bufs[0], tmp, n);
	free(tmp);
	if (!rc && tg_debug >= 2)
		fprintf(stderr, "*** copy %zu bytes %s -> %s\n", n,
		        tg_dev_name(tg_buffer_dev(it->bufs[1])),
		        tg_dev_name(tg_buffer_dev(it->bufs[0])));
	return rc;
}

int tg_schedule_run(tg_schedule *s)
{
	size_t i, j;
	int rc;

	for (i = 0; i < s->items.n; i++) {
		tg_sched_item *it = &s->items.v[i];

		rc = it->ast ? run_kernel(it) : run_copy(it);
		if (rc)
			return rc;
		for (j = 0; j < it->nouts; j++)
			tg_lazy_mark_realized(it->outs[j]);
	}
	return 0;
}

int tg_lazy_realize(tg_lazy *const *outs, size_t n)
{
	tg_schedule s;
	int rc = tg_schedule_create(outs, n, &s);

	if (rc)
		return rc;
	rc = tg_schedule_run(&s);
	tg_schedule_free(&s);
	return rc;
}

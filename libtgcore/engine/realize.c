/*
 * engine/realize.c - running a schedule (tinygrad's engine/realize.py):
 * each kernel through the in-memory method cache (a hash table keyed by
 * the interned AST, the device and NOOPT; a miss renders, compiles
 * through the on-disk compile cache and loads), each copy through the
 * host; then the computed bases become buffers.  DEBUG=2 prints a line
 * per item, 3 the AST, 4 the source, 5 the linear IR, 6 the graph after
 * every codegen pass.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "device/device.h"
#include "util/child.h"

/* A compiled kernel kept for the process (tinygrad's method_cache).
 * Kernel ASTs are interned in the scheduler's kernel context, so a
 * kernel is found by its SINK's identity: no text is made or compared
 * on the launch path. */
typedef struct method {
	const tg_uop *ast;  /* the SINK, in the kernel context */
	tg_dev *dev;
	uint64_t opts;      /* the settings that change the kernel
	                       (opts_key) */
	tg_program *prog;
	tg_ksrc ks;
	struct method *next; /* in its bucket */
} method;

#define MC_BUCKETS 1024

static pthread_mutex_t mc_lock = PTHREAD_MUTEX_INITIALIZER;
static method *mc_buckets[MC_BUCKETS];
static atomic_size_t mc_kernels_run; /* for DEBUG lines */

static void method_free(method *m)
{
	tg_program_free(m->prog);
	tg_ksrc_free(&m->ks);
	free(m);
}

void tg_method_cache_clear(void)
{
	size_t b;

	pthread_mutex_lock(&mc_lock);
	for (b = 0; b < MC_BUCKETS; b++)
		while (mc_buckets[b]) {
			method *m = mc_buckets[b];

			mc_buckets[b] = m->next;
			method_free(m);
		}
	atomic_store(&mc_kernels_run, 0);
	pthread_mutex_unlock(&mc_lock);
}

size_t tg_method_cache_count(void)
{
	size_t n = 0;

	pthread_mutex_lock(&mc_lock);
	for (size_t b = 0; b < MC_BUCKETS; b++)
		for (const method *m = mc_buckets[b]; m; m = m->next)
			n++;
	pthread_mutex_unlock(&mc_lock);
	return n;
}

/* NOOPT wins over RANDOM_OPTS, which wins over BEAM. */
static long random_of(const tg_settings *set)
{
	return set->noopt ? 0 : set->random_opts;
}

static int beam_of(const tg_settings *set)
{
	return set->noopt || set->random_opts ? 0 : set->beam;
}

/* The settings that change a kernel's opts, as one number: NOOPT, the
 * BEAM width (0..64), whether TC is on (TC=2 makes what TC=1 does),
 * TC_OPT (0..2) and the RANDOM_OPTS seed (31 bits). */
static uint64_t opts_key(const tg_settings *set)
{
	return (uint64_t)set->noopt | (uint64_t)beam_of(set) << 1 |
	       (uint64_t)(set->tc != 0) << 8 | (uint64_t)set->tc_opt << 10 |
	       (uint64_t)random_of(set) << 32;
}

/* The AST's structural hash (interned: it names one node) mixed with
 * the device and the settings that change the kernel. */
static uint64_t method_hash(const tg_uop *ast, const tg_dev *dev,
                            const tg_settings *set)
{
	uint64_t h = ast->hash;

	h = (h ^ (uint64_t)(uintptr_t)dev) * 0x9e3779b97f4a7c15u;
	h = (h ^ (uint64_t)opts_key(set)) * 0x9e3779b97f4a7c15u;
	return h ^ (h >> 29);
}

/* Called with mc_lock held. */
static method *mc_find(const tg_uop *ast, tg_dev *dev,
                       const tg_settings *set, uint64_t h)
{
	method *m;

	for (m = mc_buckets[h % MC_BUCKETS]; m; m = m->next)
		if (m->ast == ast && m->dev == dev &&
		    m->opts == opts_key(set))
			return m;
	return NULL;
}

static void debug_compiled(const tg_ksrc *ks, int debug)
{
	if (debug >= 3)
		fprintf(stderr, "%s\n", ks->ast_text ? ks->ast_text : "");
	if (debug >= 5)
		fprintf(stderr, "%s\n", ks->linear_text ? ks->linear_text : "");
	if (debug >= 4)
		fprintf(stderr, "%s\n", ks->src);
}

/* RANDOM_OPTS: a random legal sequence drawn from the seed and the
 * kernel's text (so one seed draws the same opts for the same kernel
 * in every run).  Where the whole sequence exceeds the device's
 * limits, it is cut from the end until the device takes it. */
static int render_random(tg_dev *dev, const tg_uop *ast,
                         const tg_settings *set, tg_ksrc *ks)
{
	const struct tg_renderer_caps *caps = tg_dev_caps(dev);
	tg_opt opts[TG_RANDOM_OPTS_MAX];
	char *text = tg_ast_format(ast);
	uint64_t seed;
	size_t n;
	int rc;

	if (!text)
		return tg_error_oom("random opts");
	seed = tg_hash_str(text) ^ (uint64_t)set->random_opts << 20;
	free(text);
	if ((rc = tg_codegen_random_opts(ast, caps, set, seed, opts, &n)))
		return rc;
	while ((rc = tg_codegen_opts(ast, caps, set, opts, n, ks)) &&
	       (rc == TG_EINVAL || rc == TG_EUNSUPPORTED) && n > 0)
		n--;
	return rc;
}

/* The kernel's source: random opts under RANDOM_OPTS, BEAM's opts
 * (searched or cached) when BEAM is on, else the hand-coded ones.
 * Kernels that take variables keep the hand-coded opts under both:
 * the move set is BEAM's, made for kernels of fixed shape. */
static int render(tg_dev *dev, const tg_sched_item *it,
                  const tg_settings *set, tg_ksrc *ks)
{
	tg_opt opts[TG_MAX_OPTS];
	size_t n = 0;
	int rc;

	if (random_of(set) && !it->nvars)
		return render_random(dev, it->ast, set, ks);
	if (!beam_of(set) || it->nvars)
		return tg_codegen(it->ast, tg_dev_caps(dev), set, ks);
	if ((rc = tg_beam_opts(dev, it->ast, it->bufs, it->nbufs, set, opts,
	                       &n))) {
		tg_error_prefix("beam");
		return rc;  /* whatever the search left in the message */
	}
	return tg_codegen_opts(it->ast, tg_dev_caps(dev), set, opts, n, ks);
}

/* Renders, compiles and loads the kernel (a cache miss). */
static method *method_build(tg_dev *dev, const tg_sched_item *it,
                            const tg_settings *set)
{
	const tg_uop *ast = it->ast;
	method *m = calloc(1, sizeof *m);
	int rc;

	if (!m) {
		tg_error_oom("method cache");
		return NULL;
	}
	*m = (method){ .ast = ast, .dev = dev, .opts = opts_key(set) };
	rc = render(dev, it, set, &m->ks);
	if (!rc)  /* a device with a renderer of its own */
		rc = tg_dev_render(dev, &m->ks);
	if (rc && set->debug >= 3) {  /* what failed */
		char *text = tg_ast_format(ast);
		fprintf(stderr, "%s\n", text ? text : "");
		free(text);
	}
	if (!rc) {
		debug_compiled(&m->ks, set->debug);
		if (!(m->prog = tg_program_build(dev, m->ks.name, m->ks.src,
		                                 set)))
			rc = tg_last_status();
		else
			tg_program_set_cost(m->prog, m->ks.flops,
			                    m->ks.mem_bytes);
	}
	if (rc) {
		method_free(m);
		return NULL;
	}
	return m;
}

/* The compiled kernel for ast on dev under these settings (borrowed
 * from the cache). */
static method *method_get(tg_dev *dev, const tg_sched_item *it,
                          const tg_settings *set)
{
	const tg_uop *ast = it->ast;
	uint64_t h = method_hash(ast, dev, set);
	method *m, *dup;

	pthread_mutex_lock(&mc_lock);
	m = mc_find(ast, dev, set, h);
	pthread_mutex_unlock(&mc_lock);
	if (m || !(m = method_build(dev, it, set)))
		return m;
	pthread_mutex_lock(&mc_lock);
	if ((dup = mc_find(ast, dev, set, h))) {
		/* another thread compiled it meanwhile: keep theirs */
		method_free(m);
		m = dup;
	} else {
		m->next = mc_buckets[h % MC_BUCKETS];
		mc_buckets[h % MC_BUCKETS] = m;
	}
	pthread_mutex_unlock(&mc_lock);
	return m;
}

/* The item's variable values in the order the kernel takes them (its
 * sorted names: a variable the compiled kernel simplified away is not
 * passed). */
static int kernel_vals(const tg_sched_item *it, const tg_ksrc *ks,
                       int64_t *vals)
{
	for (size_t j = 0; j < ks->nvars; j++) {
		size_t i = 0;

		while (i < it->nvars && strcmp(it->vars[i]->arg.name,
		                               ks->vars[j]))
			i++;
		if (TG_NEVER(i == it->nvars))
			return tg_error(TG_EINTERNAL, "realize: %s takes %s, "
			                "which its schedule item does not bind",
			                ks->name, ks->vars[j]);
		vals[j] = it->vals[i];
	}
	return 0;
}

static int run_kernel(tg_sched_item *it, const tg_settings *set)
{
	tg_dev *dev = tg_buffer_dev(it->bufs[0]);
	method *m = method_get(dev, it, set);
	tg_launch_args args = { 0 };
	int64_t vals[64];
	double t = 0, start;
	size_t run;
	int rc;

	if (!m)
		return tg_error_prefix("realize: kernel for %s",
		                       tg_dev_name(dev));
	if (m->ks.nvars > TG_ARRAY_LEN(vals))
		return tg_error(TG_EUNSUPPORTED, "realize: %s takes %zu "
		                "variables (at most %zu)", m->ks.name,
		                m->ks.nvars, TG_ARRAY_LEN(vals));
	if ((rc = kernel_vals(it, &m->ks, vals)))
		return rc;
	args.bufs = it->bufs;
	args.nbufs = it->nbufs;
	args.vals = vals;
	args.nvals = m->ks.nvars;
	memcpy(args.global, m->ks.global, sizeof args.global);
	memcpy(args.local, m->ks.local, sizeof args.local);
	start = set->profile ? tg_now_s() : 0;
	rc = tg_program_launch(m->prog, &args,
	                       set->debug >= 2 || set->profile ? &t : NULL);
	if (rc)
		return tg_error_prefix("realize: %s", m->ks.name);
	if (set->profile)
		tg_profile_event(&(tg_profile_ev){
			.dev = tg_dev_name(dev), .name = m->ks.name,
			.cat = "kernel", .start_s = start, .dur_s = t,
			.flops = m->ks.flops, .bytes = m->ks.mem_bytes,
			.global = { m->ks.global[0], m->ks.global[1],
			            m->ks.global[2] },
			.local = { m->ks.local[0], m->ks.local[1],
			           m->ks.local[2] },
			.nbufs = it->nbufs });
	tg_counters_kernel(m->prog);
	tg_capture_kernel(m->prog, &args, it->nouts, m->ks.vars);
	run = atomic_fetch_add(&mc_kernels_run, 1);
	if (it->graph)  /* GRAPH=1 labels the kernel as this line does */
		tg_graphviz_ran(it->graph, tg_dev_name(dev), run, m->ks.name);
	if (set->debug >= 2)
		fprintf(stderr, "*** %-6s %4zu %-24s arg %2zu mem %8.2f MB "
		        "tm %9.2fus %8.2f GFLOPS %7.2f GB/s\n",
		        tg_dev_name(dev), run, m->ks.name,
		        it->nbufs, m->ks.mem_bytes / 1e6, t * 1e6,
		        t > 0 ? m->ks.flops / t / 1e9 : 0,
		        t > 0 ? m->ks.mem_bytes / t / 1e9 : 0);
	return 0;
}

static int run_copy(tg_sched_item *it, const tg_settings *set)
{
	size_t n = tg_buffer_nbytes(it->bufs[1]);
	double start = set->profile ? tg_now_s() : 0;
	int peer, rc = tg_buffer_transfer(it->bufs[0], it->bufs[1], &peer);
	char name[128];

	if (!rc && set->profile) {
		/* the copy waits for the source, so the wall time is its own */
		snprintf(name, sizeof name, "copy %zu B %s -> %s%s", n,
		         tg_dev_name(tg_buffer_dev(it->bufs[1])),
		         tg_dev_name(tg_buffer_dev(it->bufs[0])),
		         peer ? " (peer)" : "");
		tg_profile_event(&(tg_profile_ev){
			.dev = tg_dev_name(tg_buffer_dev(it->bufs[0])),
			.name = name, .cat = "copy", .start_s = start,
			.dur_s = tg_now_s() - start, .bytes = (double)n,
			.nbufs = 2 });
	}
	if (!rc) {
		tg_counters_copy(n, peer);
		tg_capture_copy(it->bufs[0], it->bufs[1]);
	}
	if (!rc && set->debug >= 2)
		fprintf(stderr, "*** copy %zu bytes %s -> %s%s\n", n,
		        tg_dev_name(tg_buffer_dev(it->bufs[1])),
		        tg_dev_name(tg_buffer_dev(it->bufs[0])),
		        peer ? " (peer)" : "");
	return rc;
}

#define PREBUILD_THREADS 8

typedef struct prebuild {
	tg_schedule *s;
	const tg_settings *set;
	atomic_size_t next;
} prebuild;

static void *prebuild_worker(void *arg)
{
	prebuild *p = arg;
	size_t i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->s->items.n) {
		tg_sched_item *it = &p->s->items.v[i];
		if (it->ast &&
		    !method_get(tg_buffer_dev(it->bufs[0]), it, p->set))
			tg_clear_error();  /* the run in order reports it */
	}
	return NULL;
}

/* Compiles the schedule's new kernels on several threads before the
 * first runs: a training step's first call compiles dozens, each in a
 * compiler process.  Not under BEAM (a search's timings must not
 * overlap others) nor DEBUG>=3 (sources are printed in order). */
static void prebuild_all(tg_schedule *s, const tg_settings *set)
{
	pthread_t tid[PREBUILD_THREADS];
	prebuild p = { .s = s, .set = set };
	size_t misses = 0, n, started = 0;
	long cpus;

	if (beam_of(set) || set->debug >= 3)
		return;
	pthread_mutex_lock(&mc_lock);
	for (size_t i = 0; i < s->items.n; i++) {
		tg_sched_item *it = &s->items.v[i];
		tg_dev *dev = it->ast ? tg_buffer_dev(it->bufs[0]) : NULL;
		misses += it->ast &&
		          !mc_find(it->ast, dev, set,
		                   method_hash(it->ast, dev, set));
	}
	pthread_mutex_unlock(&mc_lock);
	if (misses < 2)  /* the common case: no sysconf (it reads /sys) */
		return;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	n = cpus > 1 ? (size_t)cpus : 1;
	n = n < PREBUILD_THREADS ? n : PREBUILD_THREADS;
	n = n < misses ? n : misses;
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		if (!pthread_create(&tid[started], NULL, prebuild_worker, &p))
			started++;
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

int tg_schedule_run(tg_schedule *s, const tg_settings *set)
{
	size_t i, j;
	int rc;

	prebuild_all(s, set);
	for (i = 0; i < s->items.n; i++) {
		tg_sched_item *it = &s->items.v[i];

		rc = it->ast ? run_kernel(it, set) :
		     it->view ? 0 : run_copy(it, set);
		if (rc)
			return rc;
		for (j = 0; j < it->nouts; j++)
			tg_lazy_mark_realized(it->outs[j]);
	}
	return 0;
}

/* Realizes run one at a time: two threads realizing one graph would
 * both schedule its unrealized bases, run the same kernels into the
 * same buffers, and mark them realized while the other reads them.
 * Building tensors and reading realized ones stay concurrent. */
static pthread_mutex_t realize_lock = PTHREAD_MUTEX_INITIALIZER;

void tg_engine_lock(void)
{
	pthread_mutex_lock(&realize_lock);
}

void tg_engine_unlock(void)
{
	pthread_mutex_unlock(&realize_lock);
}

int tg_lazy_realize(tg_lazy *const *outs, size_t n)
{
	tg_settings set;
	tg_schedule s;
	int rc;

	if ((rc = tg_settings_read(&set)))
		return rc;
	tg_engine_lock();
	if ((rc = tg_schedule_create(outs, n, &set, &s)) == TG_OK) {
		rc = tg_schedule_run(&s, &set);
		tg_schedule_free(&s);
	}
	tg_engine_unlock();
	return rc;
}

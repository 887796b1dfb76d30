/*
 * failalloc.h - fails allocations on purpose (STYLE.md section 7.5).
 *
 * A test that includes this header is linked with
 * -Wl,--wrap=malloc,... (FAILALLOC_WRAP in tests/Makefile.inc), so
 * every call to malloc, calloc, realloc, strdup or strndup made by the
 * test or by the static core it links (libtgcore-core.la) reaches the
 * __wrap_ functions below, and __real_ reaches the allocator of the
 * build: glibc's, ASan's, valgrind's.  Nothing is interposed at run
 * time, so the same test runs under ASan as in a plain build.
 *
 * What is not covered: allocations made inside other libraries on the
 * core's behalf (glibc's fopen and scandir, libltdl, SQLite, inih), and
 * plugins, which are dlopen'd shared objects with their own references
 * to malloc.  Only what a plugin allocates through the host table
 * (host->alloc, plugin/host.c) fails here.
 *
 * Two ways to choose what fails:
 *  - by index (tl_fail_each): allocation tl_fail_at, counted from 0,
 *    for 0, 1, 2, ... until a run succeeds.  Quadratic: for small
 *    scenarios.
 *  - by site (tl_fail_sites): a site is the call stack of the
 *    allocation, its TL_SITE_FRAMES innermost callers.  Each run fails
 *    the first allocation at a site that has not failed yet, until a
 *    run reaches no new site.  Linear in the sites: for a training
 *    step, the JIT or BEAM.
 *
 * Include it in one file per test program.  Under ThreadSanitizer the
 * sweeps are not run (TL_INTERPOSED unset): too slow there, and ASan's
 * build covers them.
 */
#ifndef TG_FAILALLOC_H
#define TG_FAILALLOC_H

#include <check.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_COUNT_LEAKS  /* without valgrind's header: no checks */
#define VALGRIND_DO_ADDED_LEAK_CHECK
#define VALGRIND_COUNT_LEAKS(l, d, r, s) ((l) = (d) = (r) = (s) = 0)
#define RUNNING_ON_VALGRIND 0
#endif
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "../libtgcore/core.h"

#if !defined(__SANITIZE_THREAD__)
#define TL_INTERPOSED 1
#endif

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* --------------------------------------------------------- by index */

static long tl_fail_at = -1, tl_n_allocs;

/* ---------------------------------------------------------- by site */

#define TL_SITE_FRAMES 8      /* callers that name a site (at most
                                 TL_SITE_MAX; TL_SITE_FRAMES=n in the
                                 environment sets another) */
#define TL_SITE_MAX 16
#define TL_SITE_CAP (1 << 16) /* failed sites held (a power of two) */

static struct {
	pthread_mutex_t lock;
	atomic_int armed;     /* a tl_fail_sites run is under way */
	atomic_int failed;    /* ... and has failed its allocation */
	atomic_long allocs;   /* allocations seen in this run */
	int frames;           /* callers that name a site */
	uint64_t *tab;        /* failed sites, open addressing, 0 empty */
	size_t n;
	uint64_t last;        /* the site this run failed */
	void *pc[16];         /* ... its call stack */
	int npc;
} tl_site = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The calling allocation's site: a hash of its callers' addresses.
 * Frames 0 and 1 are this function and the __wrap_ one (neither is
 * inlined).  Within one process the addresses stay put as long as the
 * plugins stay mapped (TG_PLUGIN_NO_UNLOAD). */
__attribute__((noinline)) static uint64_t tl_site_key(void)
{
	void *pc[TL_SITE_MAX + 2];
	int n = backtrace(pc, tl_site.frames + 2);
	uint64_t h = tg_hash_bytes(pc + 2, n > 2 ? (size_t)(n - 2) * sizeof *pc
	                                         : 0);

	return h ? h : 1;
}

/* Adds key to the failed sites; 0 if it was there (or the table is
 * full: then nothing new fails). */
static int tl_site_add(uint64_t key)
{
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15u) >> 48;

	if (tl_site.n + 1 >= TL_SITE_CAP / 2)
		return 0;
	for (;; i = (i + 1) & (TL_SITE_CAP - 1)) {
		if (tl_site.tab[i] == key)
			return 0;
		if (!tl_site.tab[i])
			break;
	}
	tl_site.tab[i] = key;
	tl_site.n++;
	return 1;
}

/* Whether this allocation fails: the first of the run at a new site. */
__attribute__((noinline)) static int tl_site_fails(void)
{
	uint64_t key;
	int fail = 0;

	atomic_fetch_add(&tl_site.allocs, 1);
	if (atomic_load(&tl_site.failed))
		return 0;
	key = tl_site_key();
	pthread_mutex_lock(&tl_site.lock);
	if (!atomic_load(&tl_site.failed) && tl_site_add(key)) {
		atomic_store(&tl_site.failed, 1);
		tl_site.last = key;
		tl_site.npc = backtrace(tl_site.pc, 16);
		fail = 1;
	}
	pthread_mutex_unlock(&tl_site.lock);
	return fail;
}

static int tl_fail_now(void)
{
	if (atomic_load(&tl_site.armed))
		return tl_site_fails();
	return tl_fail_at >= 0 && tl_n_allocs++ == tl_fail_at;
}

/* ------------------------------------------------------ the wrappers */

__attribute__((noinline)) void *__wrap_malloc(size_t n)
{
	return tl_fail_now() ? NULL : __real_malloc(n);
}

__attribute__((noinline)) void *__wrap_calloc(size_t n, size_t size)
{
	return tl_fail_now() ? NULL : __real_calloc(n, size);
}

__attribute__((noinline)) void *__wrap_realloc(void *p, size_t n)
{
	return tl_fail_now() ? NULL : __real_realloc(p, n);
}

__attribute__((noinline)) char *__wrap_strdup(const char *s)
{
	return tl_fail_now() ? NULL : __real_strdup(s);
}

__attribute__((noinline)) char *__wrap_strndup(const char *s, size_t n)
{
	return tl_fail_now() ? NULL : __real_strndup(s, n);
}

/* --------------------------------------------------------- the checks */

/* Under valgrind, the bytes definitely lost so far; under ASan, 1 when
 * LeakSanitizer finds a leak now (its report names the allocation); 0
 * elsewhere.  A run that raises it leaked. */
static inline unsigned long tl_leaked(void)
{
	unsigned long leaked, dubious, reachable, suppressed;

#ifdef __SANITIZE_ADDRESS__
	if (__lsan_do_recoverable_leak_check())
		return 1;
#endif
	VALGRIND_DO_ADDED_LEAK_CHECK;
	VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
	(void)dubious, (void)reachable, (void)suppressed;
	return leaked;
}

/* A failing run's outcome: TG_ENOMEM with a message about memory, or
 * success where the failure only costs speed (a table that could not
 * grow): `run` checks its results then. */
#define tl_check_outcome(rc, what, ...)                                 \
	do {                                                            \
		ck_assert_msg((rc) == 0 || (rc) == TG_ENOMEM,           \
		              what ": status %d (%s)", __VA_ARGS__, (rc),  \
		              tg_last_error());                         \
		ck_assert_msg((rc) == 0 || strstr(tg_last_error(),      \
		              "memory"), what ": message \"%s\"",       \
		              __VA_ARGS__, tg_last_error());            \
	} while (0)

/* Runs `run` with allocation 0, 1, 2, ... failing until a run makes
 * fewer allocations than that (nothing failed); see tl_check_outcome.
 * The sequence must have allocated at least `min_allocs` times (else
 * the wrappers are not linked in).  Under valgrind or ASan a run that
 * leaks fails at once, naming the allocation. */
static inline void tl_fail_each(int (*run)(void), long min_allocs)
{
	long n;
	int rc = -1, failed = 1;
	unsigned long leaked = tl_leaked(), now;

	for (n = 0; (rc != 0 || failed) && n < 1000000; n++) {
		tg_clear_error();
		tl_n_allocs = 0;
		tl_fail_at = n;
		rc = run();
		tl_fail_at = -1;
		failed = tl_n_allocs > n;
		now = tl_leaked();
		ck_assert_msg(now == leaked, "allocation %ld: %lu bytes "
		              "leaked (status %d: %s)", n, now - leaked, rc,
		              tg_last_error());
		tl_check_outcome(rc, "allocation %ld", n);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(n, min_allocs);
}

/* Prints the stack of the allocation the last run failed, a line per
 * frame as "file+offset" for addr2line -f -e file offset. */
static void tl_site_print(void)
{
	Dl_info info;

	fprintf(stderr, "site %016llx failed at:\n",
	        (unsigned long long)tl_site.last);
	for (int i = 2; i < tl_site.npc; i++)
		if (dladdr(tl_site.pc[i], &info) && info.dli_fname)
			fprintf(stderr, "  %s+0x%lx\n", info.dli_fname,
			        (unsigned long)((char *)tl_site.pc[i] -
			                        (char *)info.dli_fbase) - 1);
}

#ifndef __SANITIZE_ADDRESS__  /* ASan reports crashes itself */
/* A crash during a sweep names the site that failed before it and
 * where it crashed (file+offset, as tl_site_print), then crashes. */
static void tl_site_crashed(int sig)
{
	void *pc[32];
	Dl_info info;
	int n = backtrace(pc, 32);

	tl_site_print();
	fprintf(stderr, "signal %d at:\n", sig);
	for (int i = 1; i < n; i++)
		if (dladdr(pc[i], &info) && info.dli_fname)
			fprintf(stderr, "  %s+0x%lx\n", info.dli_fname,
			        (unsigned long)((char *)pc[i] -
			                        (char *)info.dli_fbase) - 1);
	signal(sig, SIG_DFL);
	raise(sig);
}
#endif

/* What a site sweep did (tl_fail_sites). */
typedef struct tl_sweep {
	size_t runs, sites;   /* runs made, sites failed */
	long allocs;          /* allocations of the last (clean) run */
	double seconds;
} tl_sweep;

/* A forked child (a BEAM trial run) fails nothing: the parent would
 * not learn the site it failed. */
static void tl_disarm_child(void)
{
	atomic_store(&tl_site.armed, 0);
}

static void tl_once_atfork(void)
{
	pthread_atfork(NULL, NULL, tl_disarm_child);
}

/* Runs `run` once per allocation site, each time failing the first
 * allocation at a site no earlier run failed, until a run reaches no
 * new site; `reset` (not armed) follows every run, so that the next
 * one starts cold.  Each run's outcome as tl_check_outcome; the clean
 * run must succeed and have made at least `min_allocs` allocations
 * (else the wrappers are not linked in).  A run that leaks fails at
 * once under valgrind or ASan.  At most `max_runs` runs (0: no limit)
 * fail a site: a documented subset for make check. */
static inline tl_sweep tl_fail_sites(int (*run)(void), void (*reset)(void),
                                     long min_allocs, size_t max_runs)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	unsigned long leaked;
	tl_sweep sw = { 0 };
	struct timespec t0, t1;
	int rc = -1, failed;
	void *pc[4];

	backtrace(pc, 4);  /* loads libgcc's unwinder before any run */
	tl_site.frames = getenv("TL_SITE_FRAMES") ?
	                 atoi(getenv("TL_SITE_FRAMES")) : TL_SITE_FRAMES;
	if (tl_site.frames < 1 || tl_site.frames > TL_SITE_MAX)
		tl_site.frames = TL_SITE_FRAMES;
#ifndef __SANITIZE_ADDRESS__  /* ASan reports crashes itself */
	signal(SIGSEGV, tl_site_crashed);
	signal(SIGBUS, tl_site_crashed);
	signal(SIGABRT, tl_site_crashed);
#endif
	(void)pthread_once(&once, tl_once_atfork);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!tl_site.tab)
		tl_site.tab = __real_calloc(TL_SITE_CAP, sizeof *tl_site.tab);
	ck_assert_ptr_nonnull(tl_site.tab);
	memset(tl_site.tab, 0, TL_SITE_CAP * sizeof *tl_site.tab);
	tl_site.n = 0;
	leaked = tl_leaked();
	do {
		int limit = max_runs && sw.runs >= max_runs;

		tg_clear_error();
		atomic_store(&tl_site.allocs, 0);
		atomic_store(&tl_site.failed, limit);
		atomic_store(&tl_site.armed, 1);
		rc = run();
		atomic_store(&tl_site.armed, 0);
		failed = atomic_load(&tl_site.failed) && !limit;
		sw.runs++;
		reset();
		if (rc && (rc != TG_ENOMEM || !strstr(tg_last_error(),
		                                      "memory")))
			tl_site_print();
		ck_assert_msg(tl_leaked() == leaked, "run %zu (site %016llx):"
		              " leaked (status %d: %s)", sw.runs,
		              (unsigned long long)tl_site.last, rc,
		              tg_last_error());
		tl_check_outcome(rc, "run %zu (site %016llx)", sw.runs,
		                 (unsigned long long)tl_site.last);
	} while (failed);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_eq(rc, 0);
	sw.sites = tl_site.n;
	sw.allocs = atomic_load(&tl_site.allocs);
	sw.seconds = (double)(t1.tv_sec - t0.tv_sec) +
	             (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	ck_assert_int_ge(sw.allocs, min_allocs);
	return sw;
}

#endif

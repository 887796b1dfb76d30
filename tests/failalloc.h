/*
 * failalloc.h - fails the Nth allocation (STYLE.md section 7.5).  A test
 * that includes this header replaces malloc, calloc and realloc for its
 * whole process: while tl_fail_at >= 0, allocation number tl_fail_at
 * (counted from 0) returns NULL and the others go to glibc.
 *
 * AddressSanitizer and ThreadSanitizer bring their own allocators,
 * which this one would bypass (their free() would get glibc's blocks),
 * so the interposer exists only on glibc without them: TL_INTERPOSED
 * says so.  Under valgrind it needs
 * --soname-synonyms=somalloc=nouserintercepts (tests/valgrind.sh).
 * Include it in one file per test program.
 */
#ifndef TG_FAILALLOC_H
#define TG_FAILALLOC_H

#include <check.h>
#include <string.h>
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_COUNT_LEAKS  /* without valgrind's header: no checks */
#define VALGRIND_DO_ADDED_LEAK_CHECK
#define VALGRIND_COUNT_LEAKS(l, d, r, s) ((l) = (d) = (r) = (s) = 0)
#endif

#include "../libtgcore/core.h"

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define TL_INTERPOSED 1
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
static long tl_fail_at = -1, tl_n_allocs;

static int tl_fail_now(void)
{
	return tl_fail_at >= 0 && tl_n_allocs++ == tl_fail_at;
}

void *malloc(size_t n)
{
	return tl_fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return tl_fail_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return tl_fail_now() ? NULL : __libc_realloc(p, n);
}

/* Under valgrind, the bytes definitely lost so far (0 elsewhere): a
 * run that raises it names the failing allocation that leaked. */
static inline unsigned long tl_leaked(void)
{
	unsigned long leaked, dubious, reachable, suppressed;

	VALGRIND_DO_ADDED_LEAK_CHECK;
	VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
	(void)dubious, (void)reachable, (void)suppressed;
	return leaked;
}

/* Runs `run` with allocation 0, 1, 2, ... failing until a run makes
 * fewer allocations than that (nothing failed).  Every failing run must
 * return TG_ENOMEM with a message about memory, or succeed where the
 * failure only costs speed (a table that could not grow): `run` checks
 * its results then.  The sequence must have allocated at least
 * `min_allocs` times (else the interposer is not in use).  Under
 * valgrind a run that leaks fails at once, naming the allocation. */
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
		ck_assert_msg(rc == 0 || rc == TG_ENOMEM,
		              "allocation %ld: status %d (%s)", n, rc,
		              tg_last_error());
		ck_assert_msg(rc == 0 || strstr(tg_last_error(), "memory"),
		              "allocation %ld: message \"%s\"", n,
		              tg_last_error());
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(n, min_allocs);
}
#endif

#endif

/*
 * test_beam.c - BEAM search: it finds opts, the kernel computes the
 * same values (against C loops in double precision), the result is
 * cached so that a second run searches nothing, IGNORE_BEAM_CACHE
 * searches again, a candidate that fails to compile is skipped, and one
 * that faults or never finishes is contained by the CPU's trial runs.
 * Runs on the device under test (the CPU here; OPENCL and VULKAN
 * through tests/ondevice.sh).  The compile-failure and containment
 * cases need the CPU plugin (its compiler is a command the test can
 * replace).
 */
#include "config.h"

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "../libtgcore/engine/engine.h"
#include "../libtgcore/device/device.h"

static void setup(void)
{
	char db[256];

	/* a cache of this test's own, empty */
	snprintf(db, sizeof db, "%s/beam-%d.db", getenv("TG_TEST_TMP") ?
	         getenv("TG_TEST_TMP") : "/tmp", (int)getpid());
	unlink(db);
	setenv("CACHEDB", db, 1);
	setenv("BEAM", "2", 1);
	setenv("BEAM_TIMEOUT_SEC", "30", 1);
	unsetenv("IGNORE_BEAM_CACHE");
	unsetenv("NOOPT");
	/* the library's start-up sets the DEBUG level: before logged() */
	ck_assert_int_eq(tg_init(), 0);
}

static void teardown(void)
{
	const char *db = getenv("CACHEDB");

	tg_shutdown();
	if (db)
		unlink(db);
}

/* Runs fn with DEBUG=debug, its stderr into *log. */
static void logged(const char *logname, int debug, void (*fn)(void),
                   char **log)
{
	const char *path = tl_write_file(logname, "");
	int saved = dup(2);
	FILE *f;
	long n;

	ck_assert(freopen(path, "w", stderr) != NULL);
	tg_debug_set(debug);
	fn();
	tg_debug_set(0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	ck_assert_ptr_nonnull(*log = calloc(1, (size_t)n + 1));
	ck_assert_uint_eq(fread(*log, 1, (size_t)n, f), (size_t)n);
	fclose(f);
}

/* a(M,K) @ b(K,N), the values checked against C. */
enum { M = 24, K = 40, N = 32 };

static void matmul(void)
{
	static float a[M * K], b[K * N], c[M * N];
	int64_t sa[2] = { M, K }, sb[2] = { K, N };
	tg_tensor *x, *y, *z;

	for (int i = 0; i < M * K; i++)
		a[i] = (float)((i * 7) % 13 - 6) * 0.125f;
	for (int i = 0; i < K * N; i++)
		b[i] = (float)((i * 5) % 11 - 5) * 0.25f;
	x = tg_tensor_new(NULL, TG_FLOAT32, 2, sa, a);
	y = tg_tensor_new(NULL, TG_FLOAT32, 2, sb, b);
	z = tg_matmul(x, y);
	ck_assert_msg(z && tg_tensor_data(z, c, sizeof c) == 0, "%s",
	              tg_last_error());
	tl_check_matmul(c, a, b, M, N, K);
	tg_tensor_unref(x);
	tg_tensor_unref(y);
	tg_tensor_unref(z);
}

static void matmul_logged(const char *logname, int debug, char **log)
{
	logged(logname, debug, matmul, log);
}

/* acc(64) += x(64,256).sum(1), twice: an assign's kernel reads the
 * buffer it writes.  Checked against C. */
static void accumulate(void)
{
	static float a[64], x[64 * 256], got[64];
	int64_t sa[1] = { 64 }, sx[2] = { 64, 256 };
	int ax = 1;
	tg_tensor *acc, *t;

	for (int i = 0; i < 64; i++)
		a[i] = (float)(i % 7) * 0.5f;
	for (int i = 0; i < 64 * 256; i++)
		x[i] = (float)((i * 3) % 17 - 8) * 0.125f;
	acc = tg_tensor_new(NULL, TG_FLOAT32, 1, sa, a);
	t = tg_tensor_new(NULL, TG_FLOAT32, 2, sx, x);
	for (int r = 0; r < 2; r++) {
		tg_tensor *sum = tg_sum(t, &ax, 1, 0), *s = tg_add(acc, sum);
		ck_assert_msg(tg_assign(acc, s) == 0 && tg_realize(acc) == 0,
		              "%s", tg_last_error());
		tg_tensor_unref(s);
		tg_tensor_unref(sum);
	}
	ck_assert_int_eq(tg_tensor_data(acc, got, sizeof got), 0);
	for (int i = 0; i < 64; i++) {
		double want = a[i];
		for (int r = 0; r < 2; r++)
			for (int j = 0; j < 256; j++)
				want += x[i * 256 + j];
		ck_assert_double_eq_tol(got[i], want, 1e-4);
	}
	tg_tensor_unref(acc);
	tg_tensor_unref(t);
}

/* The first run searches ("beam: chose ..."), the second (a new
 * process's method cache: cleared here) reads the cache only. */
START_TEST(finds_and_caches)
{
	char *log;

	matmul_logged("beam1.log", 2, &log);
	ck_assert_msg(strstr(log, "beam: chose ") != NULL, "%s", log);
	ck_assert_ptr_null(strstr(log, "beam: cached opts"));
	free(log);
	tg_method_cache_clear();
	matmul_logged("beam2.log", 2, &log);
	ck_assert_msg(strstr(log, "beam: cached opts") != NULL, "%s", log);
	ck_assert_msg(strstr(log, "beam: chose ") == NULL, "%s", log);
	free(log);
	/* IGNORE_BEAM_CACHE searches again */
	tg_method_cache_clear();
	setenv("IGNORE_BEAM_CACHE", "1", 1);
	matmul_logged("beam3.log", 2, &log);
	ck_assert_msg(strstr(log, "beam: chose ") != NULL, "%s", log);
	free(log);
}
END_TEST

/* A kernel that reads its output (an assign) is checked from the same
 * first contents for NOOPT and every candidate: no candidate is called
 * wrong for the runs before it. */
START_TEST(assign_checked_from_one_start)
{
	char *log;

	logged("assign.log", 2, accumulate, &log);
	ck_assert_msg(strstr(log, "beam: chose ") != NULL, "%s", log);
	ck_assert_msg(strstr(log, "differs from NOOPT") == NULL, "%s", log);
	ck_assert_msg(strstr(log, " 0 wrong") != NULL, "%s", log);
	free(log);
}
END_TEST

/* BEAM's kernels are the method cache's too: NOOPT and BEAM=2 of one
 * kernel are two entries, and the values agree. */
START_TEST(keys_the_method_cache)
{
	char *log;
	size_t before;

	setenv("NOOPT", "1", 1);
	matmul_logged("noopt.log", 2, &log);
	ck_assert_ptr_null(strstr(log, "beam:"));  /* NOOPT wins over BEAM */
	free(log);
	before = tg_method_cache_count();
	unsetenv("NOOPT");
	matmul_logged("beam.log", 2, &log);
	ck_assert_msg(strstr(log, "beam: chose ") != NULL, "%s", log);
	ck_assert_uint_gt(tg_method_cache_count(), before);
	free(log);
}
END_TEST

/* The CPU's widest float vector: the search's tile uses it, so some
 * candidates always have it (16 lanes with AVX-512, 8 under valgrind,
 * which hides AVX-512). */
static int widest(void)
{
	tg_dev *dev = tg_dev_get("CPU");

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return tg_dev_caps(dev)->max_upcast;
}

/* Asserts that log has `want`, printing the log's end if not (Check
 * refuses a message longer than a few kB). */
static void log_has(const char *log, const char *want)
{
	size_t n = strlen(log);

	ck_assert_msg(strstr(log, want) != NULL, "no '%s' in the log, "
	              "which ends: %s", want, n > 2000 ? log + n - 2000 : log);
}

/* A cc that passes the source to the real one, after `edit` (shell on
 * $src) when the source has a `lanes`-lane vector, or after `other`
 * when it has a vector of half that. */
static void wrap_cc(const char *name, int lanes, const char *edit,
                    const char *other)
{
	char text[1024];
	const char *cc;

	snprintf(text, sizeof text,
	         "#!/bin/sh\n"
	         "src=$(cat)\n"
	         "case \"$src\" in\n"
	         "*tg_float%d\\ *) %s;;\n"
	         "*tg_float%d\\ *) %s;;\n"
	         "esac\n"
	         "printf '%%s\\n' \"$src\" | exec cc \"$@\"\n", lanes, edit,
	         lanes / 2, other);
	cc = tl_write_file(name, text);
	ck_assert_int_eq(chmod(cc, 0755), 0);
	setenv("TG_CPU_CC", cc, 1);
	setenv("DEVICE", "CPU", 1);
	tg_shutdown();  /* the CPU device reads its cc when it opens */
	ck_assert_int_eq(tg_init(), 0);
}

/* With a compiler that refuses every kernel with the widest vector (a
 * stand-in for a candidate the compiler cannot build), the search skips
 * those candidates (the hand-coded tile among them), still chooses, and
 * the kernel computes the right values. */
START_TEST(failed_compile_skipped)
{
	char *log;

	wrap_cc("cc-nowide.sh", widest(), "echo 'cc-nowide: no widest "
	        "vectors' >&2; exit 1", "true");
	matmul_logged("nocc.log", 4, &log);
	log_has(log, "beam: chose ");
	log_has(log, "beam: a candidate failed to build: ");
	log_has(log, "cc-nowide: no widest vectors");
	free(log);
}
END_TEST

/* A cc wrapper's edit (shell on $src): a statement before the work-item
 * loop. */
#define BEFORE_LOOP(stmt) "src=$(printf '%s\\n' \"$src\" | sed " \
	"'s/^\\(\t*\\)for (size_t tg_i = lo;/\\1" stmt " &/')"

/* With a compiler that plants a fault in every kernel with the widest
 * vector, and an endless loop in every one with half of it (stand-ins
 * for codegen bugs), the CPU's trial runs contain both: the faulting
 * candidates are reported with their signal, the looping ones stopped
 * at the trial's limit, and the search still chooses a kernel that
 * computes the right values. */
START_TEST(faulting_and_hanging_contained)
{
	char *log;

	setenv("BEAM_TIMEOUT_SEC", "8", 1);
	wrap_cc("cc-bad.sh", widest(), BEFORE_LOOP("*(volatile int *)0 = 1;"),
	        BEFORE_LOOP("for (volatile int h = 1; h;) ;"));
	matmul_logged("badcc.log", 2, &log);
	log_has(log, "beam: chose ");
	log_has(log, "failed its trial run (a codegen bug: please report "
	        "it; the candidate is dropped): program_trial '");
	log_has(log, "cpu trial: the kernel crashed (SIGSEGV)");
	log_has(log, "cpu trial: the kernel ran past its limit of ");
	free(log);
}
END_TEST

/* With a compiler that makes the process's first in-process run of a
 * kernel with the widest vector (the hand-coded tile's, in its round)
 * sleep 20 ms (and its trial, in a child that inherits none of that:
 * still within the trial's limit), the tile loses its round to a
 * moment's noise; the winner then meets it again in the rematch, which
 * decides, and the chosen kernel computes the right values. */
START_TEST(rematch_against_hand_opts)
{
	char *log, *at;

	unsetenv("TG_TEST_SLOWED");
	wrap_cc("cc-once.sh", widest(), BEFORE_LOOP("{ extern char *getenv("
	        "const char *); extern int setenv(const char *, const char *, "
	        "int); extern int usleep(unsigned); if (lo == 0 \\&\\& "
	        "!getenv(\"TG_TEST_SLOWED\")) { setenv(\"TG_TEST_SLOWED\", "
	        "\"1\", 1); usleep(20000); } }"), "true");
	matmul_logged("once.log", 2, &log);
	ck_assert_ptr_nonnull(getenv("TG_TEST_SLOWED"));
	at = strstr(log, "beam: rematch: ");
	ck_assert_msg(at != NULL, "no rematch in: %s", log);
	log_has(at, "beam: chose ");
	free(log);
	unsetenv("TG_TEST_SLOWED");
}
END_TEST

/* When even the unoptimized kernel faults (a compiler that plants a
 * fault in every kernel), the search cannot run, and the realize fails
 * with the trial's report instead of taking the process down. */
START_TEST(faulting_reference_fails_the_realize)
{
	const char *cc = tl_write_file("cc-fault.sh",
		"#!/bin/sh\n"
		"sed 's/^\\(\t*\\)for (size_t tg_i = lo;/"
		"\\1*(volatile int *)0 = 1; &/' | exec cc \"$@\"\n");
	int64_t sh[2] = { 16, 16 };
	float a[256] = { 0 }, out[16];
	int ax = 1;
	tg_tensor *x, *y;

	ck_assert_int_eq(chmod(cc, 0755), 0);
	setenv("TG_CPU_CC", cc, 1);
	setenv("DEVICE", "CPU", 1);
	tg_shutdown();  /* the CPU device reads its cc when it opens */
	ck_assert_int_eq(tg_init(), 0);
	x = tg_tensor_new(NULL, TG_FLOAT32, 2, sh, a);
	y = tg_sum(x, &ax, 1, 0);
	ck_assert_ptr_nonnull(y);
	ck_assert_int_ne(tg_tensor_data(y, out, sizeof out), 0);
	ck_assert_error("the unoptimized kernel ");
	ck_assert_error(" failed its trial run: program_trial '");
	ck_assert_error("cpu trial: the kernel crashed (SIGSEGV)");
	tg_tensor_unref(y);
	tg_tensor_unref(x);
}
END_TEST

/* The budget is the search rounds': an unoptimized kernel that runs
 * past it (a compiler that makes every kernel without vectors sleep
 * 11 s, under a 10 s budget) leaves the hand-coded opts timed and the
 * rounds their whole budget, so more than the seed is timed and the
 * search never ends worse than no search.  (The budget is long because
 * a round's candidates are all compiled before any is timed, which
 * under a loaded `make distcheck` took more than 1 s.)  NOOPT's short
 * trial running out is not counted as a candidate's failed trial. */
START_TEST(budget_leaves_out_reference)
{
	const char *cc = tl_write_file("cc-slow.sh",
		"#!/bin/sh\n"
		"src=$(cat)\n"
		"case \"$src\" in\n"
		"*tg_float[0-9]*) ;;\n"
		"*) src=$(printf '%s\\n' \"$src\" | sed 's/^\\(\t*\\)for "
		"(size_t tg_i = lo;/\\1{ extern unsigned sleep(unsigned); "
		"sleep(11); } &/');;\n"
		"esac\n"
		"printf '%s\\n' \"$src\" | exec cc \"$@\"\n");
	const char *timed;
	char *log;

	ck_assert_int_eq(chmod(cc, 0755), 0);
	setenv("BEAM_TIMEOUT_SEC", "10", 1);
	setenv("TG_CPU_CC", cc, 1);
	setenv("DEVICE", "CPU", 1);
	tg_shutdown();  /* the CPU device reads its cc when it opens */
	ck_assert_int_eq(tg_init(), 0);
	matmul_logged("slow.log", 2, &log);
	log_has(log, "beam: chose ");
	ck_assert_msg(strstr(log, "beam: chose (no opts)") == NULL, "%s", log);
	timed = strstr(log, " kernels timed, ");
	ck_assert_ptr_nonnull(timed);
	while (timed > log && timed[-1] != '(')
		timed--;
	ck_assert_int_gt(atoi(timed), 1);
	/* NOOPT's trial ran out, which is no failure of a candidate */
	log_has(log, " 0 failed their trial");
	free(log);
}
END_TEST

static Suite *beam_suite(void)
{
	Suite *s = suite_create("beam");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 300);
	tcase_add_test(t, finds_and_caches);
	tcase_add_test(t, keys_the_method_cache);
	tcase_add_test(t, assign_checked_from_one_start);
	if (!getenv("DEVICE") || !strcmp(getenv("DEVICE"), "CPU"))
		tcase_add_test(t, failed_compile_skipped);
	if (!getenv("DEVICE") || !strcmp(getenv("DEVICE"), "CPU")) {
		tcase_add_test(t, faulting_and_hanging_contained);
		tcase_add_test(t, faulting_reference_fails_the_realize);
		tcase_add_test(t, budget_leaves_out_reference);
		tcase_add_test(t, rematch_against_hand_opts);
	}
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(beam_suite());
}

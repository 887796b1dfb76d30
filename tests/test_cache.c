/*
 * test_cache.c - the on-disk cache: round trips, CACHELEVEL=0, CACHEDB,
 * an unusable location, and several processes writing at once; values
 * damaged on disk (random bytes, cut short, emptied) dropped by their
 * checksum, compiled kernels damaged so that they no longer load
 * compiled again, and a cache on a full 2 MB tmpfs, each giving the
 * right results.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <sqlite3.h>

#include "testlib.h"
#include "../libtgcore/cache/cache.h"
#include "../libtgcore/plugin/registry.h"

static void use_db(const char *name)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%d-%s", getenv("TG_TEST_TMP"),
	         (int)getpid(), name);
	unlink(path);
	setenv("CACHEDB", path, 1);
	ck_assert_int_eq(tg_init(), 0);
}

/* Each get and put is an operation of its own, under the settings as
 * they are now (CACHELEVEL), as a realize or a program build reads
 * them; a snapshot is filled even when the start-up failed. */
static const tg_settings *now(void)
{
	static tg_settings set;

	tg_settings_read(&set);
	return &set;
}

static void put(const char *key, const void *val, size_t len)
{
	tg_diskcache_put(now(), "test", key, val, len);
}

static int get_str(const char *key, char *out, size_t n)
{
	void *val;
	size_t len;
	int hit = tg_diskcache_get(now(), "test", key, &val, &len);

	if (hit) {
		snprintf(out, n, "%.*s", (int)len, (char *)val);
		free(val);
	}
	return hit;
}

START_TEST(round_trip_and_miss)
{
	char buf[64];

	use_db("a.db");
	ck_assert_int_eq(get_str("k1", buf, sizeof buf), 0);
	put("k1", "value one", 9);
	put("k2", "", 0);
	ck_assert_int_eq(get_str("k1", buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "value one");
	ck_assert_int_eq(get_str("k2", buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "");
	put("k1", "replaced", 8);
	ck_assert_int_eq(get_str("k1", buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "replaced");
}
END_TEST

START_TEST(entries_survive_a_restart)
{
	char buf[64];

	use_db("b.db");
	put("persist", "yes", 3);
	tg_shutdown();
	ck_assert_int_eq(tg_init(), 0);
	ck_assert_int_eq(get_str("persist", buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "yes");
}
END_TEST

START_TEST(cachelevel_zero_disables_it)
{
	char buf[64];

	use_db("c.db");
	put("k", "v", 1);
	setenv("CACHELEVEL", "0", 1);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 0);
	put("k2", "v", 1);
	unsetenv("CACHELEVEL");
	ck_assert_int_eq(get_str("k2", buf, sizeof buf), 0);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 1);
}
END_TEST

START_TEST(unusable_location_behaves_as_a_miss)
{
	char buf[64];

	setenv("CACHEDB", "/nonexistent/dir/cache.db", 1);
	put("k", "v", 1);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 0);
}
END_TEST

START_TEST(keys_may_hold_any_text)
{
	const char *key = "CPU\ncc -O2\nvoid f(void) { \"quoted\" '; }";
	char buf[64];

	use_db("d.db");
	put(key, "blob", 4);
	ck_assert_int_eq(get_str(key, buf, sizeof buf), 1);
	ck_assert_int_eq(get_str("CPU", buf, sizeof buf), 0);
}
END_TEST

/* One writer process: puts and reads back `n` keys of its own. */
static int writer(int id, int n)
{
	char key[64], val[64], got[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof key, "w%d-%d", id, i);
		snprintf(val, sizeof val, "value %d of %d", i, id);
		put(key, val, strlen(val));
		if (!get_str(key, got, sizeof got) || strcmp(got, val)) {
			fprintf(stderr, "writer %d: key %s lost\n", id, key);
			return 1;
		}
	}
	return 0;
}

/* A fresh directory $TG_TEST_TMP/<pid>-name, its path in `out`. */
static const char *fresh_dir(const char *name, char *out, size_t n)
{
	snprintf(out, n, "%s/%d-%s", getenv("TG_TEST_TMP"), (int)getpid(),
	         name);
	ck_assert_int_eq(tg_mkdir_p(out), 0);
	return out;
}

START_TEST(cache_dir_is_made_private)
{
	char base[512], want[600];
	struct stat st;

	unsetenv("CACHEDB");
	setenv("XDG_CACHE_HOME", fresh_dir("xdg", base, sizeof base), 1);
	snprintf(want, sizeof want, "%s/tgcore", base);
	ck_assert_str_eq(tg_cache_dir(), want);
	ck_assert_int_eq(stat(want, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	put("k", "v", 1);
	snprintf(want, sizeof want, "%s/tgcore/cache.db", base);
	ck_assert_int_eq(access(want, F_OK), 0);
}
END_TEST

START_TEST(shared_cache_dir_is_refused)
{
	char base[512], dir[600], why[TG_ERROR_MAX], want[700], buf[8];

	unsetenv("CACHEDB");
	setenv("XDG_CACHE_HOME", fresh_dir("shared", base, sizeof base), 1);
	snprintf(dir, sizeof dir, "%s/tgcore", base);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chmod(dir, 01777), 0);  /* a /tmp-like place */
	ck_assert_ptr_null(tg_cache_dir());
	put("k", "v", 1);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 0);
	ck_assert_int_eq(tg_private_path(dir, 1, why, sizeof why), -1);
	snprintf(want, sizeof want, "%s is writable by others (mode 1777)",
	         dir);
	ck_assert_str_eq(why, want);
	ck_assert_int_eq(chmod(dir, 0770), 0);
	ck_assert_int_eq(tg_private_path(dir, 1, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "is writable by its group (mode "
	                             "0770)"));
}
END_TEST

START_TEST(foreign_cache_dir_is_refused)
{
	char base[512], dir[600], why[TG_ERROR_MAX];

	/* only root can give a directory away; CI runs as root */
	if (geteuid() != 0)
		return;
	setenv("XDG_CACHE_HOME", fresh_dir("foreign", base, sizeof base), 1);
	snprintf(dir, sizeof dir, "%s/tgcore", base);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chown(dir, 65534, 65534), 0);
	ck_assert_ptr_null(tg_cache_dir());
	ck_assert_int_eq(tg_private_path(dir, 1, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "is owned by uid 65534, not by "
	                             "this user (uid 0)"));
}
END_TEST

START_TEST(shared_database_is_refused)
{
	char path[512], buf[8];

	use_db("shared.db");
	put("k", "v", 1);
	tg_shutdown();
	ck_assert_int_eq(chmod(getenv("CACHEDB"), 0666), 0);
	ck_assert_int_eq(tg_init(), 0);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 0);
	snprintf(path, sizeof path, "%s", getenv("CACHEDB"));
	ck_assert_int_eq(chmod(path, 0644), 0);
	tg_shutdown();
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 1);
}
END_TEST

/* CACHEDB in a directory others can write (CACHEDB=/tmp/cache.db) is
 * refused, said at DEBUG=0: another user could put the database, or
 * the -wal file SQLite reads with it, there first. */
START_TEST(database_in_a_shared_directory_is_refused)
{
	char dir[512], db[600], buf[8], *err;
	const char *log = tl_tmp_path("shared-db.log");
	FILE *saved;
	int fd;

	snprintf(dir, sizeof dir, "%s", tl_tmp_path("shared-db"));
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chmod(dir, 01777), 0);
	snprintf(db, sizeof db, "%s/cache.db", dir);
	setenv("CACHEDB", db, 1);
	fflush(stderr);
	saved = fdopen(dup(2), "w");
	ck_assert_int_ge(fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600),
	                 0);
	dup2(fd, 2);
	put("k", "v", 1);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 0);
	fflush(stderr);
	dup2(fileno(saved), 2);
	close(fd);
	fclose(saved);
	ck_assert_int_ne(access(db, F_OK), 0);
	err = tl_slurp(log);
	ck_assert_ptr_nonnull(strstr(err, "compile cache refused: "));
	ck_assert_ptr_nonnull(strstr(err, "shared-db is writable by others "
	                             "(mode 1777); the cache is off"));
	free(err);
	/* the same directory made private: the cache works */
	tg_shutdown();
	ck_assert_int_eq(chmod(dir, 0755), 0);
	put("k", "v", 1);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 1);
}
END_TEST

START_TEST(without_home_never_a_shared_path)
{
	struct passwd *pw = getpwuid(geteuid());
	const char *dir;
	char want[600];

	unsetenv("HOME");
	unsetenv("XDG_CACHE_HOME");
	dir = tg_cache_dir();
	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/') {
		ck_assert_ptr_null(dir);
		return;
	}
	/* the password database's home, as a service without HOME has */
	snprintf(want, sizeof want, "%s/.cache/tgcore", pw->pw_dir);
	if (dir)
		ck_assert_str_eq(dir, want);
	ck_assert(!dir || strncmp(dir, "/tmp", 4));
}
END_TEST

START_TEST(several_processes_at_once)
{
	enum { NPROC = 4, NKEYS = 150 };
	char key[64], got[64], want[64];
	pid_t pids[NPROC];
	int i, j, status;

	setenv("DEBUG", "2", 1);  /* a writer's trouble shows in the log */
	use_db("shared.db");
	for (i = 0; i < NPROC; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0)
			_exit(writer(i, NKEYS));
	}
	for (i = 0; i < NPROC; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "writer %d failed", i);
	}
	for (i = 0; i < NPROC; i++)
		for (j = 0; j < NKEYS; j++) {
			snprintf(key, sizeof key, "w%d-%d", i, j);
			snprintf(want, sizeof want, "value %d of %d", j, i);
			ck_assert_int_eq(get_str(key, got, sizeof got), 1);
			ck_assert_str_eq(got, want);
		}
}
END_TEST

/* ------------------------------------------------ damage on the disk */

/* Runs `sql` on the cache database at CACHEDB behind the library's back;
 * the number of rows it changed. */
static int damage(const char *sql)
{
	sqlite3 *db;
	int n;

	ck_assert_int_eq(sqlite3_open(getenv("CACHEDB"), &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db, sql, 0, 0, 0) == SQLITE_OK, "%s: %s",
	              sql, sqlite3_errmsg(db));
	n = sqlite3_changes(db);
	sqlite3_close(db);
	return n;
}

/* How many rows of `table` there are. */
static int rows(const char *table)
{
	char sql[128];
	sqlite3_stmt *st;
	sqlite3 *db;
	int n = -1;

	snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s_v2\"", table);
	ck_assert_int_eq(sqlite3_open(getenv("CACHEDB"), &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, 0), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static const char *const damages[] = {
	"UPDATE \"%s_v2\" SET val = randomblob(length(val))",
	"UPDATE \"%s_v2\" SET val = substr(val, 1, length(val) / 2)",
	"UPDATE \"%s_v2\" SET val = zeroblob(0)",
	"UPDATE \"%s_v2\" SET val = zeroblob(length(val))",
};

START_TEST(damaged_values_are_dropped)
{
	char buf[64], sql[160];

	use_db("damaged.db");
	for (size_t i = 0; i < sizeof damages / sizeof *damages; i++) {
		put("k", "a value of some length", 22);
		ck_assert_int_eq(get_str("k", buf, sizeof buf), 1);
		snprintf(sql, sizeof sql, damages[i], "test");
		ck_assert_int_eq(damage(sql), 1);
		ck_assert_msg(get_str("k", buf, sizeof buf) == 0, "%s", sql);
		ck_assert_int_eq(rows("test"), 0);  /* dropped */
		put("k", "again", 5);
		ck_assert_int_eq(get_str("k", buf, sizeof buf), 1);
		ck_assert_str_eq(buf, "again");
	}
}
END_TEST

/* (x @ w + 1) / 2 over fresh numbers, against double loops: several
 * kernels, compiled or taken from the cache.  1 when every value is
 * right, else 0 with the reason in `why`. */
static int program_ok(unsigned seed, char *why, size_t n)
{
	enum { N = 24 };
	static float x[N * N], w[N * N];
	float got[N * N];
	int64_t sh[2] = { N, N };
	tg_tensor *r;
	int rc;

	srand(seed);
	for (int i = 0; i < N * N; i++) {
		x[i] = (float)(rand() % 17) - 8;
		w[i] = (float)(rand() % 13) - 6;
	}
	tg_scope_begin();
	r = tg_div_s(tg_add_s(tg_matmul(tg_tensor_new(NULL, TG_FLOAT32, 2, sh,
	                                              x),
	                                tg_tensor_new(NULL, TG_FLOAT32, 2, sh,
	                                              w)), 1.0), 2.0);
	rc = r ? tg_tensor_data(r, got, sizeof got) : -1;
	tg_scope_end();
	if (rc)
		return snprintf(why, n, "%s", tg_last_error()), 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;

			for (int k = 0; k < N; k++)
				s += (double)x[i * N + k] * w[k * N + j];
			if ((double)got[i * N + j] != (s + 1) / 2)
				return snprintf(why, n, "[%d][%d] is %g, want %g", i,
				                j, got[i * N + j], (s + 1) / 2), 0;
		}
	return 1;
}

static void run_program(unsigned seed)
{
	char why[TG_ERROR_MAX + 64];

	ck_assert_msg(program_ok(seed, why, sizeof why), "%s", why);
}

/* Every compiled kernel replaced by bytes that match their checksum
 * but are no shared object: the checksum passes, the load fails. */
static void forge_kernels(void)
{
	sqlite3_stmt *sel, *upd;
	sqlite3 *db;
	int n = 0;

	ck_assert_int_eq(sqlite3_open(getenv("CACHEDB"), &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT key, length(val) FROM "
	                 "compile_v2", -1, &sel, 0), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "UPDATE compile_v2 SET val = "
	                 "?, sum = ? WHERE key = ?", -1, &upd, 0), SQLITE_OK);
	while (sqlite3_step(sel) == SQLITE_ROW) {
		int len = sqlite3_column_int(sel, 1);
		unsigned char *v = malloc((size_t)len + 1);

		ck_assert_ptr_nonnull(v);
		for (int i = 0; i < len; i++)
			v[i] = (unsigned char)(i * 7 + 3);
		sqlite3_bind_blob(upd, 1, v, len, SQLITE_TRANSIENT);
		sqlite3_bind_int64(upd, 2, (sqlite3_int64)tg_hash_bytes(v,
		                   (size_t)len));
		sqlite3_bind_text(upd, 3, (const char *)sqlite3_column_text(sel,
		                  0), -1, SQLITE_TRANSIENT);
		ck_assert_int_eq(sqlite3_step(upd), SQLITE_DONE);
		sqlite3_reset(upd);
		free(v);
		n++;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	sqlite3_close(db);
	ck_assert_int_gt(n, 0);
}

/* Whether every compiled kernel in the cache is an ELF file again. */
static int kernels_are_elf(void)
{
	sqlite3_stmt *st;
	sqlite3 *db;
	int ok = 1, n = 0;

	ck_assert_int_eq(sqlite3_open(getenv("CACHEDB"), &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT val FROM compile_v2",
	                 -1, &st, 0), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_blob(st, 0);

		ok &= sqlite3_column_bytes(st, 0) > 4 && !memcmp(v, "\177ELF", 4);
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ok && n > 0;
}

START_TEST(damaged_kernels_are_compiled_again)
{
	char sql[160];

	use_db("kernels.db");
	run_program(1);
	ck_assert(kernels_are_elf());
	for (size_t i = 0; i < sizeof damages / sizeof *damages; i++) {
		snprintf(sql, sizeof sql, damages[i], "compile");
		ck_assert_int_gt(damage(sql), 0);
		tg_shutdown();  /* no compiled program kept in memory */
		run_program(2 + (unsigned)i);
		ck_assert_msg(kernels_are_elf(), "after %s", sql);
	}
	forge_kernels();
	tg_shutdown();
	run_program(9);
	ck_assert(kernels_are_elf());
}
END_TEST

/* Writes `text` to an existing file; 0 or -1. */
static int put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* A private tmpfs of 2 MB at `dir`, in mount and user namespaces of
 * this (single-threaded) process: 0; -1 where the kernel refuses the
 * namespaces (nothing changed); -2 when it failed half-way. */
static int private_tmpfs(const char *dir)
{
	/* TG_TEST_NO_NAMESPACES=1 tries the fallback where they exist */
	const char *no = getenv("TG_TEST_NO_NAMESPACES");
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
	char map[64];

	if ((no && !strcmp(no, "1")) || unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return -1;
	put_file("/proc/self/setgroups", "deny");  /* absent before 3.19 */
	snprintf(map, sizeof map, "0 %u 1", uid);
	if (put_file("/proc/self/uid_map", map))
		return -2;
	snprintf(map, sizeof map, "0 %u 1", gid);
	if (put_file("/proc/self/gid_map", map) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=2m,mode=0700"))
		return -2;
	return 0;
}

/* Fills the file system of `dir` with one file. */
static int fill(const char *dir)
{
	char path[600], block[4096];
	int fd;

	snprintf(path, sizeof path, "%s/filler", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT, 0600)) < 0)
		return -1;
	memset(block, 'x', sizeof block);
	while (write(fd, block, sizeof block) > 0)
		;
	close(fd);
	return 0;
}

/* The test of full_cache_compiles_without_caching, in a child of its
 * own (namespaces need a single thread; a file size limit would stop
 * Check's own files): 0 when every result was right. */
static int fill_and_run(const char *dir, const char *log)
{
	char db[600], why[TG_ERROR_MAX + 64];
	int ns = private_tmpfs(dir), tmpfs = ns == 0;
	double v = 0;

	if (ns == -2) {
		fprintf(stderr, "namespaces: %s\n", strerror(errno));
		return 1;
	}
	snprintf(db, sizeof db, "%s/cache.db", dir);
	setenv("CACHEDB", db, 1);
	setenv("XDG_CACHE_HOME", dir, 1);
	if (!program_ok(1, why, sizeof why))  /* the cache works */
		return fprintf(stderr, "before: %s\n", why), 1;
	tg_shutdown();
	if (tmpfs) {
		if (fill(dir))  /* then the disk fills */
			return 1;
	} else {  /* no namespaces here: a file size limit does the same */
		struct rlimit r = { 64 << 10, 64 << 10 };

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &r))
			return 1;
	}
	if (!freopen(log, "w", stderr))
		return 1;
	fprintf(stderr, "cache on a full %s: ", tmpfs ? "2 MB tmpfs"
	        : "file (RLIMIT_FSIZE)");
	for (unsigned i = 0; i < 3; i++)  /* new numbers, the same kernels */
		if (!program_ok(2 + i, why, sizeof why))
			return fprintf(stderr, "after: %s\n", why), 1;
	/* and a kernel of another shape: a new compile */
	tg_scope_begin();
	if (tg_tensor_item(tg_sum(tg_arange(NULL, TG_FLOAT32, 0, 1017, 1),
	                          NULL, 0, 0), &v) || v != 1017.0 * 1016 / 2)
		return fprintf(stderr, "sum: %g: %s\n", v, tg_last_error()), 1;
	tg_scope_end();
	return 0;
}

/* The cache fills up half-way through a program: every result stays
 * right, the compiles go on without the cache (their scratch files are
 * not in it), and it is said once. */
START_TEST(full_cache_compiles_without_caching)
{
	char dir[512], log[600], *text;
	pid_t pid;
	int st;

	fresh_dir("fullfs", dir, sizeof dir);
	snprintf(log, sizeof log, "%s-stderr.txt", dir);
	fflush(stdout);
	fflush(stderr);
	ck_assert_int_ge(pid = fork(), 0);
	if (!pid) {
		int rc = fill_and_run(dir, log);

		fflush(stderr);  /* _exit does not */
		_exit(rc);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	text = tl_slurp(log);
	ck_assert_ptr_nonnull(text);
	printf("%s", text);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s",
	              st, text);
	ck_assert_msg(tl_count(text, "compiling without caching") == 1, "%s",
	              text);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("diskcache");

	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, round_trip_and_miss);
	tcase_add_test(tc, entries_survive_a_restart);
	tcase_add_test(tc, cachelevel_zero_disables_it);
	tcase_add_test(tc, unusable_location_behaves_as_a_miss);
	tcase_add_test(tc, keys_may_hold_any_text);
	tcase_add_test(tc, several_processes_at_once);
	tcase_add_test(tc, cache_dir_is_made_private);
	tcase_add_test(tc, shared_cache_dir_is_refused);
	tcase_add_test(tc, foreign_cache_dir_is_refused);
	tcase_add_test(tc, shared_database_is_refused);
	tcase_add_test(tc, database_in_a_shared_directory_is_refused);
	tcase_add_test(tc, without_home_never_a_shared_path);
	tcase_add_test(tc, damaged_values_are_dropped);
	tcase_add_test(tc, damaged_kernels_are_compiled_again);
	tcase_add_test(tc, full_cache_compiles_without_caching);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

/*
 * test_cache.c - the on-disk cache: round trips, CACHELEVEL=0, CACHEDB,
 * an unusable location, and several processes writing at once.
 */
#include "config.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testlib.h"

static void use_db(const char *name)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%d-%s", getenv("TG_TEST_TMP"),
	         (int)getpid(), name);
	unlink(path);
	setenv("CACHEDB", path, 1);
	ck_assert_int_eq(tg_init(), 0);
}

static int get_str(const char *key, char *out, size_t n)
{
	void *val;
	size_t len;
	int hit = tg_diskcache_get("test", key, &val, &len);

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
	tg_diskcache_put("test", "k1", "value one", 9);
	tg_diskcache_put("test", "k2", "", 0);
	ck_assert_int_eq(get_str("k1", buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "value one");
	ck_assert_int_eq(get_str("k2", buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "");
	tg_diskcache_put("test", "k1", "replaced", 8);
	ck_assert_int_eq(get_str("k1", buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "replaced");
}
END_TEST

START_TEST(entries_survive_a_restart)
{
	char buf[64];

	use_db("b.db");
	tg_diskcache_put("test", "persist", "yes", 3);
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
	tg_diskcache_put("test", "k", "v", 1);
	setenv("CACHELEVEL", "0", 1);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 0);
	tg_diskcache_put("test", "k2", "v", 1);
	unsetenv("CACHELEVEL");
	ck_assert_int_eq(get_str("k2", buf, sizeof buf), 0);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 1);
}
END_TEST

START_TEST(unusable_location_behaves_as_a_miss)
{
	char buf[64];

	setenv("CACHEDB", "/nonexistent/dir/cache.db", 1);
	tg_diskcache_put("test", "k", "v", 1);
	ck_assert_int_eq(get_str("k", buf, sizeof buf), 0);
}
END_TEST

START_TEST(keys_may_hold_any_text)
{
	const char *key = "CPU\ncc -O2\nvoid f(void) { \"quoted\" '; }";
	char buf[64];

	use_db("d.db");
	tg_diskcache_put("test", key, "blob", 4);
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
		tg_diskcache_put("test", key, val, strlen(val));
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
	tg_diskcache_put("test", "k", "v", 1);
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
	tg_diskcache_put("test", "k", "v", 1);
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
	tg_diskcache_put("test", "k", "v", 1);
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
	tg_diskcache_put("test", "k", "v", 1);
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
	tg_diskcache_put("test", "k", "v", 1);
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
	suite_add_tcase(s, tc);
	return tl_run(s);
}

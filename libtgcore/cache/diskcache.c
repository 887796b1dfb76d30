/*
 * diskcache.c - the on-disk cache (tinygrad's diskcache): a sqlite
 * database of (key TEXT -> value BLOB) tables, at CACHEDB (default
 * ~/.cache/tgcore/cache.db, read when the database is opened), off for
 * an operation whose settings have CACHELEVEL 0.
 *
 * Several processes may share it: the database is in WAL mode with a
 * busy timeout, and writes are single INSERT OR REPLACE statements, so a
 * reader sees either no entry or a whole one.  Each value is stored with
 * its checksum (FNV-1a, 64 bits): a value changed or cut short on disk
 * is dropped and reads as a miss, so its user recomputes and stores it
 * again.  Any failure is a miss: a broken cache slows a program down,
 * never breaks it.  The first failure to open or write the database (a
 * full disk, a read-only directory) is said once at any DEBUG level,
 * and writing stops for the process; later ones only at DEBUG>=1.  A
 * connection is never used across fork(): the child opens its own.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cache/cache.h"
#include "plugin/registry.h"

/* Bump when the meaning of cached values changes; old tables are left
 * alone (tinygrad's VERSION suffix).  2: a checksum with every value. */
#define CACHE_VERSION 2

static pthread_mutex_t db_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3 *db;
static pid_t db_pid;
static int db_failed;   /* open failed: the cache is off */
static int writes_off;  /* a write failed: only reads from now on */
static int warned;      /* the once-only warning was given */
static char db_file[512];  /* for messages */

/* Said once at any DEBUG level (a cache that cannot be written costs
 * every later run its compiles), then only at DEBUG>=1. */
static void db_warn(const char *what)
{
	tg_debug_log(warned ? 1 : 0, "compile cache %s: %s: %s (compiling "
	             "without caching)", db_file, what,
	             db ? sqlite3_errmsg(db) : "out of memory");
	warned = 1;
}

/* CACHEDB, else cache.db in the cache directory; NULL when there is no
 * private place for it (then the cache is off). */
static char *db_path(void)
{
	const char *p = tg_setting_str(TG_KEY_CACHEDB), *dir;

	if (p && p[0])
		return strdup(p);
	dir = tg_cache_dir();
	return dir ? tg_path_join(dir, "cache.db") : NULL;
}

/* An existing database must be this user's alone: its entries become
 * code (CPU kernels) and BEAM's choices.  Its directory must not be
 * writable by others either (owned by this user or root): another user
 * could create the database there first, or its -wal and -shm files,
 * which SQLite reads as part of it (CACHEDB=/tmp/cache.db). */
static int db_private(const char *path)
{
	char why[TG_ERROR_MAX];

	/* a missing directory: SQLite's open fails, said at DEBUG=1 */
	if (tg_trusted_parent(path, why, sizeof why) >= 0 &&
	    (access(path, F_OK) || !tg_private_path(path, 0, why,
	                                             sizeof why)))
		return 1;
	tg_debug_log(0, "compile cache refused: %s; the cache is off", why);
	return 0;
}

static int db_open(void)
{
	char *path;
	int rc;

	if (db && db_pid == getpid())
		return 0;
	db = NULL;  /* a parent's connection is abandoned, not closed */
	if (db_failed)
		return -1;
	if (!(path = db_path()) || !db_private(path)) {
		free(path);
		db_failed = 1;
		return -1;
	}
	snprintf(db_file, sizeof db_file, "%s", path);
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	                     SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, 30000);
		/* WAL lets readers run beside a writer; if another process
		 * holds the database right now, the rollback journal still
		 * works, so this is not an error */
		if (sqlite3_exec(db, "PRAGMA journal_mode=WAL", 0, 0, 0))
			tg_debug_log(2, "compile cache: WAL mode: %s",
			       sqlite3_errmsg(db));
	}
	if (rc != SQLITE_OK) {
		db_warn("cannot open it");
		sqlite3_close(db);
		db = NULL;
		db_failed = 1;
	}
	free(path);
	if (db_failed)
		return -1;
	db_pid = getpid();
	return 0;
}

/* Prepares `sql` with %s replaced by the versioned table name, creating
 * the table on first use. */
static sqlite3_stmt *prepare(const char *table, const char *sql)
{
	char q[512], create[256];
	sqlite3_stmt *st = NULL;

	snprintf(create, sizeof create, "CREATE TABLE IF NOT EXISTS "
	         "\"%s_v%d\" (key TEXT PRIMARY KEY, val BLOB NOT NULL, "
	         "sum INTEGER NOT NULL)", table, CACHE_VERSION);
	snprintf(q, sizeof q, sql, table, CACHE_VERSION);
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK)
		return st;
	if (sqlite3_exec(db, create, 0, 0, 0) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
		db_warn("cannot read or make its table");
		return NULL;
	}
	return st;
}

/* The stored form of a value's checksum (SQLite's integers are
 * signed). */
static sqlite3_int64 checksum(const void *p, size_t n)
{
	return (sqlite3_int64)tg_hash_bytes(p, n);
}

/* Copies the value of the current row into *val: 1 on success, 0 on
 * OOM, -1 when it does not match its checksum. */
static int fetch(sqlite3_stmt *st, void **val, size_t *len)
{
	const void *p = sqlite3_column_blob(st, 0);
	int n = sqlite3_column_bytes(st, 0);

	if (checksum(p, n > 0 ? (size_t)n : 0) != sqlite3_column_int64(st, 1))
		return -1;
	if (!(*val = malloc(n > 0 ? (size_t)n : 1)))
		return 0;
	if (n > 0)
		memcpy(*val, p, (size_t)n);
	*len = (size_t)n;
	return 1;
}

/* Drops a damaged entry, so that the value recomputed takes its
 * place. */
static void drop(const char *table, const char *key)
{
	sqlite3_stmt *st = prepare(table, "DELETE FROM \"%s_v%d\" WHERE "
	                           "key = ?");

	tg_debug_log(warned ? 1 : 0, "compile cache %s: a %s entry does not "
	             "match its checksum (damaged on disk); dropped, it will "
	             "be recomputed", db_file, table);
	warned = 1;
	if (!st)
		return;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_step(st);
	sqlite3_finalize(st);
}

int tg_diskcache_get(const tg_settings *set, const char *table,
                     const char *key, void **val, size_t *len)
{
	sqlite3_stmt *st;
	int hit = 0;

	*val = NULL;
	*len = 0;
	if (set->cachelevel <= 0)
		return 0;
	pthread_mutex_lock(&db_lock);
	if (db_open() == 0 && (st = prepare(table, "SELECT val, sum FROM "
	                                    "\"%s_v%d\" WHERE key = ?"))) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			hit = fetch(st, val, len);
		sqlite3_finalize(st);
		if (hit < 0) {
			drop(table, key);
			hit = 0;
		}
	}
	pthread_mutex_unlock(&db_lock);
	tg_debug_log(3, "cache %s: %s", table, hit ? "hit" : "miss");
	return hit;
}

void tg_diskcache_put(const tg_settings *set, const char *table,
                      const char *key, const void *val, size_t len)
{
	sqlite3_stmt *st;

	if (set->cachelevel <= 0 || len > INT32_MAX)
		return;
	pthread_mutex_lock(&db_lock);
	if (!writes_off && db_open() == 0 &&
	    (st = prepare(table, "INSERT OR REPLACE INTO \"%s_v%d\" "
	                  "VALUES (?, ?, ?)"))) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_blob(st, 2, val, (int)len, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, checksum(val, len));
		if (sqlite3_step(st) != SQLITE_DONE) {
			db_warn("cannot write to it");
			writes_off = 1;
		}
		sqlite3_finalize(st);
	}
	pthread_mutex_unlock(&db_lock);
}

void tg_diskcache_close(void)
{
	pthread_mutex_lock(&db_lock);
	if (db && db_pid == getpid())
		sqlite3_close(db);
	db = NULL;
	db_failed = 0;
	writes_off = 0;
	warned = 0;
	pthread_mutex_unlock(&db_lock);
}

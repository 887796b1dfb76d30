/*
 * util/config.c - settings from inih files, the environment and the API.
 *
 * Files are read in order (system, user, $TG_CONFIG), later ones
 * overriding earlier ones; the environment overrides the files and
 * tg_config_set() overrides both.  [core] keys are known and checked as
 * they are read, so a typo or a bad value is an error naming the file,
 * the line and the key instead of a setting silently ignored.  Other
 * sections belong to plugins ([cpu] cc=...) and reach them through
 * host->config_get, overridable as TG_<SECTION>_<KEY>.
 *
 * Threads: one lock guards the tables, and every string they hold lives
 * in a pool that is freed only by tg_config_unload (tg_shutdown).  So a
 * getter may hand out a borrowed pointer and drop the lock: when another
 * thread sets the key again, the entry points at a new string and the
 * old one stays readable.  The pool keeps each distinct string once, so
 * a program that toggles a setting does not grow it.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "core.h"

/* The [core] keys, from TG_CORE_KEYS (core.h), indexed by enum tg_key. */
static const struct core_key {
	const char *name, *env;
	enum tg_key_kind kind;
	long min, max, def;
} core_keys[TG_NKEYS] = {
#define KEY_ROW(id, name, env, kind, min, max, def) \
	[TG_KEY_##id] = { name, env, TG_K##kind, min, max, def },
	TG_CORE_KEYS(KEY_ROW)
#undef KEY_ROW
};

/* The names a FLOAT_TYPE key takes, in any case: the float types'
 * public and C names, as tg_dtype_parse (dtype.c) reads them.  The
 * configuration keeps its own list so that it depends on nothing above
 * util/; test_config checks that the two agree. */
static const struct float_name {
	const char *name, *cname;
	tg_dtype dt;
} float_names[] = {
	{ "float16", "half", TG_FLOAT16 },
	{ "bfloat16", "__bf16", TG_BFLOAT16 },
	{ "float32", "float", TG_FLOAT32 },
	{ "float64", "double", TG_FLOAT64 },
};

/* The float type v names: 0 and *out, else -1. */
static int float_parse(const char *v, tg_dtype *out)
{
	for (size_t i = 0; v && i < TG_ARRAY_LEN(float_names); i++)
		if (tg_streq_ci(v, float_names[i].name) ||
		    tg_streq_ci(v, float_names[i].cname)) {
			*out = float_names[i].dt;
			return 0;
		}
	return -1;
}

/* Every string is the pool's (never freed while entries point at it). */
typedef struct entry {
	const char *section, *key, *value, *origin;
} entry;

typedef TG_VEC(entry) entry_vec;

/* cfg_lock guards everything below; it is a leaf: nothing that takes
 * another lock runs under it. */
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static entry_vec file_vals, api_vals;
/* Where each [core] key's value sits in api_vals and file_vals, found
 * again after any change (gen): the settings an operation reads are
 * then one getenv each, not scans of the entries. */
static uint64_t gen = 1;
static struct {
	uint64_t gen;
	const char *api, *file;
} kcache[TG_NKEYS];
static TG_VEC(char *) pool;   /* every string entries and files use */
static TG_VEC(const char *) files;  /* "path" per file looked for */
static TG_VEC(int) files_read;

static const struct core_key *core_key(const char *name)
{
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(core_keys); i++)
		if (tg_streq_ci(core_keys[i].name, name))
			return &core_keys[i];
	return NULL;
}

/* Checks a [core] value; `where` names its origin in the message. */
static int check_value(const struct core_key *k, const char *v,
                       const char *where)
{
	char q[TG_ERROR_MAX / 4];
	tg_dtype dt;
	long n;
	int b;

	if (k->kind == TG_KFLOAT_TYPE && float_parse(v, &dt))
		return tg_error(TG_ECONFIG, "config: %s: %s: expected a float "
		                "type (float16/half, bfloat16, float32/float, "
		                "float64/double), got '%s'", where, k->name,
		                tg_escape(v, q, sizeof q));
	if (k->kind == TG_KINT && (tg_parse_long(v, &n) || n < k->min ||
	                           n > k->max))
		return tg_error(TG_ECONFIG, "config: %s: %s: expected an "
		                "integer from %ld to %ld, got '%s'", where,
		                k->name, k->min, k->max,
		                tg_escape(v, q, sizeof q));
	if (k->kind == TG_KBOOL && tg_parse_bool(v, &b))
		return tg_error(TG_ECONFIG, "config: %s: %s: expected yes or "
		                "no (1/0, true/false, on/off), got '%s'",
		                where, k->name, tg_escape(v, q, sizeof q));
	return 0;
}

/* The pool's copy of s, made on first use; NULL on OOM. */
static const char *intern(const char *s)
{
	char *c;
	size_t i;

	for (i = 0; i < pool.n; i++)
		if (!strcmp(pool.v[i], s))
			return pool.v[i];
	if (!(c = strdup(s)) || TG_VEC_PUSH(&pool, c)) {
		free(c);
		return NULL;
	}
	return c;
}

static entry *find(entry_vec *vec, const char *sec, const char *key)
{
	size_t i;

	for (i = 0; i < vec->n; i++)
		if (tg_streq_ci(vec->v[i].section, sec) &&
		    tg_streq_ci(vec->v[i].key, key))
			return &vec->v[i];
	return NULL;
}

/* Sets sec.key in `vec`, replacing an earlier value, whose strings
 * stay in the pool for readers that still hold them.  Under cfg_lock. */
static int put(entry_vec *vec, const char *sec, const char *key,
               const char *value, const char *origin)
{
	entry e = { intern(sec), intern(key), intern(value), intern(origin) };
	entry *old;

	if (!e.section || !e.key || !e.value || !e.origin)
		return tg_error_oom("config");
	gen++;
	if ((old = find(vec, sec, key)))
		*old = e;
	else if (TG_VEC_PUSH(vec, e))
		return tg_error_oom("config");
	return 0;
}

/* Under cfg_lock; the strings stay in the pool. */
static void drop(entry_vec *vec, const char *sec, const char *key)
{
	entry *e = find(vec, sec, key);

	gen++;
	if (e)
		*e = vec->v[--vec->n];
}

struct parse_ctx {
	const char *file;
	FILE *f;
	int status; /* first error, sticky */
	int line;   /* lines read so far: inih calls back after each */
};

/* inih's reader, counting lines so that errors can name them (Debian's
 * inih is built without INI_HANDLER_LINENO). */
static char *read_line(char *buf, int n, void *user)
{
	struct parse_ctx *pc = user;
	char *s = fgets(buf, n, pc->f);

	if (s && (strchr(s, '\n') || feof(pc->f)))
		pc->line++;
	return s;
}

/* inih callback: returns 0 to mark the line as an error. */
static int on_value(void *user, const char *sec, const char *key,
                    const char *value)
{
	int lineno = ((struct parse_ctx *)user)->line;
	struct parse_ctx *pc = user;
	const struct core_key *k = NULL;
	char where[512];

	if (pc->status)
		return 1;  /* keep only the first error's message */
	snprintf(where, sizeof where, "%s:%d", pc->file, lineno);
	if (!sec[0])
		pc->status = tg_error(TG_ECONFIG, "config: %s: key '%s' is "
		                      "outside any [section]", where, key);
	else if (tg_streq_ci(sec, "core") && !(k = core_key(key)))
		pc->status = tg_error(TG_ECONFIG, "config: %s: unknown key "
		                      "'%s' in [core]", where, key);
	else if (k)
		pc->status = check_value(k, value, where);
	if (!pc->status) {
		pthread_mutex_lock(&cfg_lock);
		pc->status = put(&file_vals, sec, k ? k->name : key, value,
		                 where);
		pthread_mutex_unlock(&cfg_lock);
	}
	return pc->status == 0;
}

/* Records that `path` was looked for; 0 or TG_ENOMEM. */
static int note_file(const char *path)
{
	const char *p;
	int rc = 0;

	pthread_mutex_lock(&cfg_lock);
	if (!(p = intern(path)) || TG_VEC_RESERVE(&files_read, files.n + 1) ||
	    TG_VEC_PUSH(&files, p))
		rc = tg_error_oom("config");
	else
		files_read.v[files_read.n++] = 0;
	pthread_mutex_unlock(&cfg_lock);
	return rc;
}

/* Reads one file; a missing file is fine unless `required`. */
static int read_file(const char *path, int required, const char *what)
{
	struct parse_ctx pc = { path, NULL, 0, 0 };
	const char *why;
	int rc, fd;

	if ((rc = note_file(path)))
		return rc;
	/* a FIFO or a device is refused, not read (or waited on) */
	if ((fd = tg_open_regular(path, O_RDONLY, 0, &why)) < 0 &&
	    (errno == ENOENT || errno == ENOTDIR) && !required)
		return 0;
	if (fd < 0 && required)
		return tg_error(TG_ECONFIG, "config: %s=%s: %s", what, path,
		                errno == ENOENT ? "no such file" : why);
	if (fd < 0 || !(pc.f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return tg_error(TG_ECONFIG, "config: %s: cannot read: %s",
		                path, fd < 0 ? why : strerror(errno));
	}
	rc = ini_parse_stream(read_line, &pc, on_value, &pc);
	fclose(pc.f);
	if (pc.status)
		return pc.status;
	if (rc < 0)
		return tg_error(TG_ECONFIG, "config: %s: out of memory while "
		                "parsing", path);
	if (rc > 0)
		return tg_error(TG_ECONFIG, "config: %s:%d: syntax error "
		                "(expected [section], key = value or ; "
		                "comment)", path, rc);
	pthread_mutex_lock(&cfg_lock);
	files_read.v[files_read.n - 1] = 1;
	pthread_mutex_unlock(&cfg_lock);
	return 0;
}

static int read_files(void)
{
	char *user, *path = NULL;
	const char *env = tg_getenv("TG_CONFIG");
	int rc = tg_user_dir("XDG_CONFIG_HOME", ".config", &user);

	/* no user file when setuid (tg_user_dir gives none) */
	if (!rc && user && !(path = tg_path_join(user, "tgcore/tgcore.ini")))
		rc = tg_error_oom("config");
	if (!rc)
		rc = read_file(TG_CONFDIR "/tgcore.ini", 0, "");
	if (!rc && path)
		rc = read_file(path, 0, "");
	if (!rc && env && env[0])
		rc = read_file(env, 1, "TG_CONFIG");
	free(path);
	free(user);
	return rc;
}

/* Checks [core] values given through the environment. */
static int check_env(void)
{
	char where[300];
	const char *v;
	size_t i;
	int rc;

	for (i = 0; i < TG_ARRAY_LEN(core_keys); i++) {
		if (!core_keys[i].env || !(v = tg_getenv(core_keys[i].env)))
			continue;
		snprintf(where, sizeof where, "environment %s",
		         core_keys[i].env);
		if ((rc = check_value(&core_keys[i], v, where)))
			return rc;
	}
	return 0;
}

/* Merged value of sec.key: API override, environment, files.  Under
 * cfg_lock; the string outlives it (pool or environment). */
static const char *lookup(const char *sec, const char *key);

static long to_long(const char *v, long def)
{
	long n;
	int b;

	if (v && tg_parse_long(v, &n) == 0)
		return n;
	if (v && tg_parse_bool(v, &b) == 0)
		return b;
	return def;
}

/* The level follows DEBUG.  Under cfg_lock, so that of two threads
 * setting DEBUG at once, the level ends as the later one's value. */
static void refresh_debug(void)
{
	tg_debug_set((int)to_long(lookup("core", "DEBUG"), 0));
}

/* ------------------------------------------------------------ start-up */

/* The library starts on first use by reading the configuration once;
 * its status sticks, so that a malformed config file is reported by
 * every call, not just the first. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_done;
static int init_status;
static char init_msg[TG_ERROR_MAX];

int tg_ensure_init(void)
{
	pthread_mutex_lock(&init_lock);
	if (!init_done) {
		tg_clear_error();
		init_status = tg_config_load();
		snprintf(init_msg, sizeof init_msg, "%s", tg_last_error());
		init_done = 1;
	}
	pthread_mutex_unlock(&init_lock);
	if (init_status)
		tg_error(init_status, "%s", init_msg);
	return init_status;
}

int tg_config_load(void)
{
	int rc = read_files();

	if (!rc)
		rc = check_env();
	if (!rc) {
		pthread_mutex_lock(&cfg_lock);
		refresh_debug();
		pthread_mutex_unlock(&cfg_lock);
	}
	return rc;
}

void tg_config_unload(void)
{
	size_t i;

	pthread_mutex_lock(&init_lock);
	init_done = init_status = 0;
	pthread_mutex_lock(&cfg_lock);
	for (i = 0; i < pool.n; i++)
		free(pool.v[i]);
	TG_VEC_FREE(&pool);
	TG_VEC_FREE(&file_vals);
	TG_VEC_FREE(&api_vals);
	gen++;
	TG_VEC_FREE(&files);
	TG_VEC_FREE(&files_read);
	tg_debug_set(0);
	pthread_mutex_unlock(&cfg_lock);
	pthread_mutex_unlock(&init_lock);
}

/* The environment variable for sec.key: the core table's name, else
 * TG_<SECTION>_<KEY> upper-cased (cut to ENV_NAME_MAX - 1 bytes, the
 * same for the value and its origin).  NULL when there is none. */
#define ENV_NAME_MAX 256
static const char *env_name(const char *sec, const char *key, char *buf,
                            size_t n)
{
	const struct core_key *k;
	size_t i;

	if (tg_streq_ci(sec, "core"))
		return (k = core_key(key)) ? k->env : NULL;
	snprintf(buf, n, "TG_%s_%s", sec, key);
	for (i = 0; buf[i]; i++)
		buf[i] = isalnum((unsigned char)buf[i])
			 ? (char)toupper((unsigned char)buf[i]) : '_';
	return buf;
}

static const char *lookup(const char *sec, const char *key)
{
	char buf[ENV_NAME_MAX];
	const char *name, *v;
	entry *e;

	if ((e = find(&api_vals, sec, key)))
		return e->value;
	name = env_name(sec, key, buf, sizeof buf);
	if (name && (v = tg_getenv(name)))
		return v;
	e = find(&file_vals, sec, key);
	return e ? e->value : NULL;
}

const char *tg_cfg_get(const char *sec, const char *key)
{
	const char *v;

	pthread_mutex_lock(&cfg_lock);
	v = lookup(sec, key);
	pthread_mutex_unlock(&cfg_lock);
	return v;
}

long tg_cfg_int(const char *sec, const char *key, long def)
{
	return to_long(tg_cfg_get(sec, key), def);
}

/* Under cfg_lock; the text is the pool's, static or buf. */
static const char *origin(const char *sec, const char *key, char *buf,
                          size_t n)
{
	char nb[ENV_NAME_MAX];
	const char *name;
	entry *e;

	if (find(&api_vals, sec, key))
		return "tg_config_set()";
	name = env_name(sec, key, nb, sizeof nb);
	if (name && tg_getenv(name)) {
		snprintf(buf, n, "environment %s", name);
		return buf;
	}
	e = find(&file_vals, sec, key);
	return e ? e->origin : "default";
}

const char *tg_cfg_origin(const char *sec, const char *key)
{
	static _Thread_local char buf[ENV_NAME_MAX + 16];
	const char *o;

	pthread_mutex_lock(&cfg_lock);
	o = origin(sec, key, buf, sizeof buf);
	pthread_mutex_unlock(&cfg_lock);
	return o;
}

int tg_cfg_verror(const char *sec, const char *key, const char *fmt,
                  va_list ap)
{
	char where[TG_ERROR_MAX / 4], what[TG_ERROR_MAX / 2];
	char q[TG_ERROR_MAX / 4], buf[ENV_NAME_MAX + 16];
	const char *v;

	pthread_mutex_lock(&cfg_lock);  /* the value and its origin agree */
	v = lookup(sec, key);
	snprintf(where, sizeof where, "%s", origin(sec, key, buf,
	                                           sizeof buf));
	tg_escape(v ? v : "", q, sizeof q);
	pthread_mutex_unlock(&cfg_lock);
	vsnprintf(what, sizeof what, fmt, ap);
	if (!v)
		return tg_error(TG_ECONFIG, "config: [%s] %s (unset): %s",
		                sec, key, what);
	return tg_error(TG_ECONFIG, "config: %s: [%s] %s: %s, got '%s'",
	                where, sec, key, what, q);
}

int tg_cfg_error(const char *sec, const char *key, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = tg_cfg_verror(sec, key, fmt, ap);
	va_end(ap);
	return rc;
}

size_t tg_cfg_file_count(void)
{
	size_t n;

	pthread_mutex_lock(&cfg_lock);
	n = files.n;
	pthread_mutex_unlock(&cfg_lock);
	return n;
}

const char *tg_cfg_file(size_t i, int *was_read)
{
	const char *f = NULL;

	pthread_mutex_lock(&cfg_lock);
	*was_read = i < files.n ? files_read.v[i] : 0;
	if (i < files.n)
		f = files.v[i];
	pthread_mutex_unlock(&cfg_lock);
	return f;
}

/* Splits "section.key" (or a [core] key) for the public calls. */
static int split_key(const char *full, char *sec, size_t n,
                     const char **key)
{
	const char *dot = strchr(full, '.');

	if (!dot) {
		snprintf(sec, n, "core");
		*key = full;
		return 0;
	}
	if (dot == full || !dot[1] || (size_t)(dot - full) >= n)
		return tg_error(TG_EINVAL, "config: bad key '%s' (expected "
		                "KEY or section.key)", full);
	memcpy(sec, full, (size_t)(dot - full));
	sec[dot - full] = '\0';
	*key = dot + 1;
	return 0;
}

const char *tg_config_get(const char *full)
{
	char sec[128];
	const char *key;

	if (!full || tg_ensure_init() || split_key(full, sec, sizeof sec, &key))
		return NULL;
	return tg_cfg_get(sec, key);
}

long tg_config_int(const char *full, long def)
{
	char sec[128];
	const char *key;

	if (!full || tg_ensure_init() || split_key(full, sec, sizeof sec, &key))
		return def;
	return tg_cfg_int(sec, key, def);
}

int tg_config_error(const char *full, const char *fmt, ...)
{
	char sec[128];
	const char *key;
	va_list ap;
	int rc;

	if (!full || !fmt)
		return tg_error(TG_EINVAL, "config_error: %s is NULL",
		                full ? "fmt" : "key");
	if ((rc = tg_ensure_init()) || (rc = split_key(full, sec, sizeof sec,
	                                               &key)))
		return rc;
	va_start(ap, fmt);
	rc = tg_cfg_verror(sec, key, fmt, ap);
	va_end(ap);
	return rc;
}

int tg_config_set(const char *full, const char *value)
{
	const struct core_key *k = NULL;
	char sec[128];
	const char *key;
	int rc;

	if (!full)
		return tg_error(TG_EINVAL, "config_set: key is NULL");
	if ((rc = tg_ensure_init()) || (rc = split_key(full, sec, sizeof sec,
	                                               &key)))
		return rc;
	if (tg_streq_ci(sec, "core") && !(k = core_key(key)))
		return tg_error(TG_EINVAL, "config_set: unknown key '%s'", key);
	if (k && value && (rc = check_value(k, value, "tg_config_set()")))
		return rc;
	pthread_mutex_lock(&cfg_lock);
	if (!value)
		drop(&api_vals, sec, k ? k->name : key);
	else
		rc = put(&api_vals, sec, k ? k->name : key, value,
		         "tg_config_set()");
	/* removing it, the level falls back to the environment or file */
	if (!rc && k == &core_keys[TG_KEY_DEBUG])
		refresh_debug();
	pthread_mutex_unlock(&cfg_lock);
	return rc;
}

/* ------------------------------------------ [core] keys by enum tg_key */

const char *tg_setting_name(enum tg_key k)
{
	return k < TG_NKEYS ? core_keys[k].name : "?";
}

static const char *key_lookup(enum tg_key k);

const char *tg_setting_str(enum tg_key k)
{
	const char *v;

	if (k >= TG_NKEYS)
		return NULL;
	pthread_mutex_lock(&cfg_lock);
	v = key_lookup(k);
	pthread_mutex_unlock(&cfg_lock);
	return v;
}

/* lookup("core", k's name) through kcache.  Under cfg_lock. */
static const char *key_lookup(enum tg_key k)
{
	const char *v;

	if (kcache[k].gen != gen) {
		entry *a = find(&api_vals, "core", core_keys[k].name);
		entry *f = find(&file_vals, "core", core_keys[k].name);

		kcache[k].api = a ? a->value : NULL;
		kcache[k].file = f ? f->value : NULL;
		kcache[k].gen = gen;
	}
	if (kcache[k].api)
		return kcache[k].api;
	if (core_keys[k].env && (v = tg_getenv(core_keys[k].env)))
		return v;
	return kcache[k].file;
}

static long key_int(enum tg_key k)
{
	return to_long(key_lookup(k), core_keys[k].def);
}

long tg_setting_int_(enum tg_key k)
{
	long v;

	if (k >= TG_NKEYS)
		return 0;
	pthread_mutex_lock(&cfg_lock);
	v = key_int(k);
	pthread_mutex_unlock(&cfg_lock);
	return v;
}

const char *tg_setting_origin(enum tg_key k)
{
	return k < TG_NKEYS ? tg_cfg_origin("core", core_keys[k].name)
	                    : "default";
}

/* DEFAULT_FLOAT as a type; config checks it when it is set, and a value
 * that slipped past (the environment changed later) means float32. */
static tg_dtype float_type(const char *v)
{
	tg_dtype dt;

	if (float_parse(v, &dt) == 0)
		return dt;
	return TG_FLOAT32;
}

int tg_settings_read(tg_settings *out)
{
	int rc;

	if (!out)
		return tg_error(TG_EINVAL, "settings_read: out is NULL");
	rc = tg_ensure_init();
	pthread_mutex_lock(&cfg_lock);  /* the level changes under it too */
	*out = (tg_settings){
		.debug = tg_debug_level(),
		.noopt = key_int(TG_KEY_NOOPT) != 0,
		.verify = key_int(TG_KEY_VERIFY) != 0,
		.split_reduceop = key_int(TG_KEY_SPLIT_REDUCEOP) != 0,
		.reduceop_split_threshold =
			key_int(TG_KEY_REDUCEOP_SPLIT_THRESHOLD),
		.default_float = float_type(key_lookup(TG_KEY_DEFAULT_FLOAT)),
		.cachelevel = (int)key_int(TG_KEY_CACHELEVEL),
		.beam = (int)key_int(TG_KEY_BEAM),
		.ignore_beam_cache = key_int(TG_KEY_IGNORE_BEAM_CACHE) != 0,
		.beam_timeout = (int)key_int(TG_KEY_BEAM_TIMEOUT_SEC),
		.tc = (int)key_int(TG_KEY_TC),
		.tc_opt = (int)key_int(TG_KEY_TC_OPT),
		.random_opts = key_int(TG_KEY_RANDOM_OPTS),
		.profile = key_int(TG_KEY_PROFILE) != 0,
		.graph = key_int(TG_KEY_GRAPH) != 0,
		.ring = (int)key_int(TG_KEY_RING),
		.jit = (int)key_int(TG_KEY_JIT),
	};
	pthread_mutex_unlock(&cfg_lock);
	return rc;
}

char *tg_output_path(enum tg_key k, const char *name)
{
	const char *set = tg_setting_str(k);
	const char *t = tg_getenv("TMPDIR");
	char *r = set ? strdup(set)
	          : tg_path_join(t && t[0] == '/' ? t : "/tmp", name);

	if (!r)
		tg_error_oom(tg_setting_name(k));
	return r;
}

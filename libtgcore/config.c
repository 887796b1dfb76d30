/*
 * config.c - settings from inih files, the environment and the API.
 *
 * Files are read in order (system, user, $TG_CONFIG), later ones
 * overriding earlier ones; the environment overrides the files and
 * tg_config_set() overrides both.  [core] keys are known and checked as
 * they are read, so a typo or a bad value is an error naming the file,
 * the line and the key instead of a setting silently ignored.  Other
 * sections belong to plugins ([cpu] cc=...) and reach them through
 * host->config_get, overridable as TG_<SECTION>_<KEY>.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "core.h"
#include "ir/ir.h"

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

typedef struct entry {
	char *section, *key, *value, *origin;
} entry;

typedef TG_VEC(entry) entry_vec;

static entry_vec file_vals, api_vals;
static TG_VEC(char *) files;  /* "path" per file looked for */
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
	tg_dtype dt;
	long n;
	int b;

	if (k->kind == TG_KFLOAT_TYPE && (tg_dtype_parse(v, &dt) ||
	                                  !tg_scalar_is_float(dt)))
		return tg_error(TG_ECONFIG, "config: %s: %s: expected a float "
		                "type (float16/half, bfloat16, float32/float, "
		                "float64/double), got '%s'", where, k->name, v);
	if (k->kind == TG_KINT && (tg_parse_long(v, &n) || n < k->min ||
	                           n > k->max))
		return tg_error(TG_ECONFIG, "config: %s: %s: expected an "
		                "integer from %ld to %ld, got '%s'", where,
		                k->name, k->min, k->max, v);
	if (k->kind == TG_KBOOL && tg_parse_bool(v, &b))
		return tg_error(TG_ECONFIG, "config: %s: %s: expected yes or "
		                "no (1/0, true/false, on/off), got '%s'",
		                where, k->name, v);
	return 0;
}

static void entry_free(entry *e)
{
	free(e->section);
	free(e->key);
	free(e->value);
	free(e->origin);
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

/* Sets sec.key in `vec`, replacing an earlier value; copies everything. */
static int put(entry_vec *vec, const char *sec, const char *key,
               const char *value, const char *origin)
{
	entry e = { strdup(sec), strdup(key), strdup(value), strdup(origin) };
	entry *old;

	if (!e.section || !e.key || !e.value || !e.origin)
		goto oom;
	old = find(vec, sec, key);
	if (old) {
		entry_free(old);
		*old = e;
		return 0;
	}
	if (TG_VEC_PUSH(vec, e) == 0)
		return 0;
oom:
	entry_free(&e);
	return tg_error_oom("config");
}

static void drop(entry_vec *vec, const char *sec, const char *key)
{
	entry *e = find(vec, sec, key);

	if (!e)
		return;
	entry_free(e);
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
	if (!pc->status)
		pc->status = put(&file_vals, sec, k ? k->name : key, value,
		                 where);
	return pc->status == 0;
}

/* Reads one file; a missing file is fine unless `required`. */
static int read_file(const char *path, int required, const char *what)
{
	struct parse_ctx pc = { path, NULL, 0, 0 };
	int rc;

	if (TG_VEC_PUSH(&files, strdup(path)) ||
	    TG_VEC_PUSH(&files_read, 0) || !files.v[files.n - 1])
		return tg_error_oom("config");
	if (!tg_is_file(path))
		return required ? tg_error(TG_ECONFIG, "config: %s=%s: no "
		                           "such file", what, path) : 0;
	if (!(pc.f = fopen(path, "r")))
		return tg_error(TG_ECONFIG, "config: %s: cannot read: %s",
		                path, strerror(errno));
	rc = ini_parse_stream(read_line, &pc, on_value, &pc);
	fclose(pc.f);
	if (pc.status)
		return pc.status;
	if (rc < 0)
		return tg_error(TG_ECONFIG, "config: %s: out of memory while "
		                "parsing", path);
	if (rc > 0)
		return tg_error(TG_ECONFIG, "config: %s:%d: syntax error "
		                "(expected [section], key = value or ; comment)",
		                path, rc);
	files_read.v[files_read.n - 1] = 1;
	return 0;
}

static int read_files(void)
{
	char *user = tg_user_dir("XDG_CONFIG_HOME", ".config");
	char *path = user ? tg_path_join(user, "tgcore/tgcore.ini") : NULL;
	const char *env = tg_getenv("TG_CONFIG");
	int rc = path ? 0 : tg_error_oom("config");

	if (!rc)
		rc = read_file(TG_CONFDIR "/tgcore.ini", 0, "");
	if (!rc && tg_getenv("HOME"))  /* no user files when setuid */
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
		snprintf(where, sizeof where, "environment %s", core_keys[i].env);
		if ((rc = check_value(&core_keys[i], v, where)))
			return rc;
	}
	return 0;
}

int tg_config_load(void)
{
	int rc = read_files();

	if (!rc)
		rc = check_env();
	if (!rc)
		tg_debug_set((int)tg_setting_int(TG_KEY_DEBUG));
	return rc;
}

void tg_config_unload(void)
{
	size_t i;

	for (i = 0; i < file_vals.n; i++)
		entry_free(&file_vals.v[i]);
	for (i = 0; i < api_vals.n; i++)
		entry_free(&api_vals.v[i]);
	for (i = 0; i < files.n; i++)
		free(files.v[i]);
	TG_VEC_FREE(&file_vals);
	TG_VEC_FREE(&api_vals);
	TG_VEC_FREE(&files);
	TG_VEC_FREE(&files_read);
	tg_debug_set(0);
}

/* The environment variable for sec.key: the core table's name, else
 * TG_<SECTION>_<KEY> upper-cased.  NULL when there is none. */
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

const char *tg_cfg_get(const char *sec, const char *key)
{
	char buf[256];
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

const char *tg_cfg_origin(const char *sec, const char *key)
{
	static _Thread_local char buf[300];
	const char *name;
	entry *e;

	if ((e = find(&api_vals, sec, key)))
		return "tg_config_set()";
	name = env_name(sec, key, buf, sizeof buf);
	if (name && tg_getenv(name)) {
		memmove(buf + 12, name, strlen(name) + 1);
		memcpy(buf, "environment ", 12);
		return buf;
	}
	e = find(&file_vals, sec, key);
	return e ? e->origin : "default";
}

size_t tg_cfg_file_count(void)
{
	return files.n;
}

const char *tg_cfg_file(size_t i, int *was_read)
{
	*was_read = i < files.n ? files_read.v[i] : 0;
	return i < files.n ? files.v[i] : NULL;
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

long tg_cfg_int(const char *sec, const char *key, long def)
{
	const char *v = tg_cfg_get(sec, key);
	long n;
	int b;

	if (v && tg_parse_long(v, &n) == 0)
		return n;
	if (v && tg_parse_bool(v, &b) == 0)
		return b;
	return def;
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
	if (!value) {
		drop(&api_vals, sec, k ? k->name : key);
		/* the level falls back to the environment or the file */
		if (k == &core_keys[TG_KEY_DEBUG])
			tg_debug_set((int)tg_setting_int(TG_KEY_DEBUG));
		return 0;
	}
	if (k && (rc = check_value(k, value, "tg_config_set()")))
		return rc;
	rc = put(&api_vals, sec, k ? k->name : key, value, "tg_config_set()");
	if (!rc && k == &core_keys[TG_KEY_DEBUG])
		tg_debug_set((int)tg_setting_int(TG_KEY_DEBUG));
	return rc;
}

/* ------------------------------------------ [core] keys by enum tg_key */

const char *tg_setting_name(enum tg_key k)
{
	return k < TG_NKEYS ? core_keys[k].name : "?";
}

const char *tg_setting_str(enum tg_key k)
{
	return k < TG_NKEYS ? tg_cfg_get("core", core_keys[k].name) : NULL;
}

long tg_setting_int_(enum tg_key k)
{
	if (k >= TG_NKEYS)
		return 0;
	return tg_cfg_int("core", core_keys[k].name, core_keys[k].def);
}

const char *tg_setting_origin(enum tg_key k)
{
	return k < TG_NKEYS ? tg_cfg_origin("core", core_keys[k].name)
	                    : "default";
}

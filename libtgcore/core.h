/*
 * core.h - the bottom stage's header (util/: errors, strings, vectors,
 * maps, paths, arenas, the log, and the configuration of util/config.c),
 * one section per .c file (QBE's all.h).  Every other stage's header
 * includes it; it includes no stage.  Never installed; tests link the
 * core's convenience library and may use everything here.
 */
#ifndef TG_CORE_H
#define TG_CORE_H

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>

#include <tg/tg.h>

#define TG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* An impossible state (SQLite's NEVER): `if (TG_NEVER(x)) return
 * tg_error(TG_EINTERNAL, ...);`.  Debug builds stop at it; release
 * builds take the error path, so a bug is reported, not run. */
#ifdef NDEBUG
#define TG_NEVER(x) (x)
#else
#define TG_NEVER(x) ((x) ? (assert(!#x), 1) : 0)
#endif

/* ---------------------------------------------------------- util/error.c */

/* Sets the thread's error to the formatted message and returns `status`.
 * Never fails: messages are truncated to TG_ERROR_MAX bytes. */
#define TG_ERROR_MAX 1024
int tg_error(int status, const char *fmt, ...) TG_PRINTF(2, 3);
int tg_verror(int status, const char *fmt, va_list ap) TG_PRINTF(2, 0);
/* Prefixes the current message with the formatted text ("ctx: old") and
 * returns the current status. */
int tg_error_prefix(const char *fmt, ...) TG_PRINTF(1, 2);
/* Reports host memory exhaustion in `op` (static text; cannot fail). */
int tg_error_oom(const char *op);
/* s as a message quotes it, into buf (n bytes, at least 8): printable
 * ASCII and well-formed UTF-8 as they are; a backslash, a quote, a
 * control byte and a byte that is not UTF-8 escaped C's way (\\, \',
 * \n, \t, \r, \xNN); cut with "..." when it does not fit.  Returns
 * buf. */
const char *tg_escape(const char *s, char *buf, size_t n);

/* --------------------------------------------------------- util/strbuf.c */

/* A growing string whose `s` is never NULL; the first failed append
 * sticks, so a writer can append freely and check once at the end. */
typedef struct tg_strbuf {
	char *s;
	size_t len, cap;
	int failed;
} tg_strbuf;

void tg_strbuf_init(tg_strbuf *sb);
void tg_strbuf_add(tg_strbuf *sb, const char *str);
void tg_strbuf_addn(tg_strbuf *sb, const char *str, size_t n);
void tg_strbuf_addf(tg_strbuf *sb, const char *fmt, ...) TG_PRINTF(2, 3);
/* The string, now owned by the caller (free()), or NULL after any failed
 * append.  The buffer is reset either way. */
char *tg_strbuf_finish(tg_strbuf *sb);
void tg_strbuf_release(tg_strbuf *sb);
/* FNV-1a of n bytes (the compile cache's checksums), and of the
 * NUL-terminated s (interning keys, seen-before sets). */
uint64_t tg_hash_bytes(const void *p, size_t n);
uint64_t tg_hash_str(const char *s);

/* ------------------------------------------------------------ util/vec.c */

/* A growable array: TG_VEC(int) v = {0}; if (TG_VEC_PUSH(&v, 3)) ... */
#define TG_VEC(T) struct { T *v; size_t n, cap; }
/* Makes room for `need` elements of `elem` bytes, doubling from 8.
 * Returns 0 or TG_ENOMEM (the array is unchanged then). */
int tg_vec_grow_(void **v, size_t *cap, size_t need, size_t elem);
/* `vec` is evaluated more than once: pass a plain pointer expression. */
#define TG_VEC_RESERVE(vec, need) \
	tg_vec_grow_((void **)&(vec)->v, &(vec)->cap, (need), sizeof *(vec)->v)
#define TG_VEC_PUSH(vec, x) \
	(TG_VEC_RESERVE(vec, (vec)->n + 1) ? TG_ENOMEM \
	                                   : ((vec)->v[(vec)->n++] = (x), 0))
#define TG_VEC_FREE(vec) (free((vec)->v), (vec)->v = NULL, \
	(vec)->n = (vec)->cap = 0)

/* -------------------------------------------------------- util/ptrmap.c */

/* A map (and set) from pointers to pointers, by identity: zero it to
 * start, tg_ptrmap_free to end.  Keys are never NULL. */
typedef struct tg_ptrmap {
	const void **key;
	void **val;
	size_t n, cap;
} tg_ptrmap;
int tg_ptrmap_has(const tg_ptrmap *m, const void *k);
/* The value, or NULL when k is absent. */
void *tg_ptrmap_get(const tg_ptrmap *m, const void *k);
/* Inserts or updates: 1 when k was new, 0 when present, TG_ENOMEM. */
int tg_ptrmap_put(tg_ptrmap *m, const void *k, void *v);
void tg_ptrmap_free(tg_ptrmap *m);

/* ---------------------------------------------------------- util/paths.c */

/* strdup that reports OOM through tg_error (op names the caller). */
char *tg_strdup(const char *s, const char *op);
/* "a/b" (new string) or NULL on OOM. */
char *tg_path_join(const char *dir, const char *name);
/* mkdir -p with mode 0700 for new directories; 0 or TG_EIO. */
int tg_mkdir_p(const char *path);

/* Environment variable through secure_getenv (NULL under setuid). */
const char *tg_getenv(const char *name);
/* Whether the process runs setuid or setgid (AT_SECURE): then no path
 * comes from the environment or the invoking user's files. */
int tg_secure_mode(void);
/* The per-user base directory (XDG): $xdg_var when absolute, else
 * home/home_rel, home being $HOME or the password database's entry.
 * *out is a new string, or NULL when there is none (secure mode, no
 * home); 0 or TG_ENOMEM. */
int tg_user_dir(const char *xdg_var, const char *home_rel, char **out);
/* 0 when `path` is a directory (want_dir) or regular file owned by this
 * user and not writable by group or others; else -1 with the reason,
 * naming the path, in `why` (code loaded from such a place could come
 * from another user). */
int tg_private_path(const char *path, int want_dir, char *why, size_t n);
/* 0 when `path` (a file or a directory) may give code or settings to
 * this process: owned by this user or root, and not writable by others
 * (another user could replace it); else -1 with the reason, naming the
 * path, in `why` (1 when it does not exist).  Group write is left
 * alone: /usr/local is writable by group staff on Debian. */
int tg_trusted_path(const char *path, char *why, size_t n);
/* The same for the directory that holds `path` (".", for a bare name). */
int tg_trusted_parent(const char *path, char *why, size_t n);
/* Whether `path` is an existing directory / regular file. */
int tg_is_dir(const char *path);
int tg_is_file(const char *path);
/* What a file of mode `mode` is, for messages: "is a directory", "is a
 * FIFO", "is a character device", "is a block device", "is a socket";
 * "is a regular file" for one. */
const char *tg_file_kind(unsigned mode);
/* Opens `path` with open(2)'s flags and mode (O_CLOEXEC added) as a
 * regular file.  Anything else is refused before it is opened where
 * stat can tell, and after (fstat) where it changed in between; a FIFO
 * never blocks the open (O_NONBLOCK, cleared once open).  The fd, or
 * -1 with *why a static text: the file's kind (tg_file_kind), or
 * strerror's ("No such file or directory"), errno kept. */
int tg_open_regular(const char *path, int flags, unsigned mode,
                    const char **why);
/* Parses a whole decimal integer; 0 or TG_EINVAL. */
int tg_parse_long(const char *s, long *out);
/* Parses yes/no/true/false/on/off/1/0; 0 or TG_EINVAL. */
int tg_parse_bool(const char *s, int *out);
/* Case-insensitive string equality. */
int tg_streq_ci(const char *a, const char *b);

/* ---------------------------------------------------------- util/ranges.c */

/* A byte range [begin, end) of a file and the number of what it holds
 * (a tensor), for the readers' layout checks. */
typedef struct tg_range {
	uint64_t begin, end;
	size_t i;
} tg_range;
/* Sorts by begin, then end, then i (a total order: the checks that
 * follow report the same pair on every run).  Where none overlaps, each
 * range then ends at or before the next begins. */
void tg_ranges_sort(tg_range *r, size_t n);

/* ----------------------------------------------------------- util/arena.c */

/* Memory that is freed all at once (QBE's alloc/freeall).  Allocations
 * are 16-byte aligned and never move. */
typedef struct tg_arena {
	struct tg_arena_chunk *head;
	size_t used, size;   /* in the head chunk */
	size_t total;        /* bytes handed out, for statistics */
} tg_arena;

void tg_arena_init(tg_arena *a);
/* NULL on OOM (no message: the caller names the operation). */
void *tg_arena_alloc(tg_arena *a, size_t n);
char *tg_arena_strdup(tg_arena *a, const char *s);
void tg_arena_free(tg_arena *a);

/* ------------------------------------------------------------ util/log.c */

/* The DEBUG level, set at start-up and by tg_config_set("DEBUG"); any
 * thread may read it at any time.  Use the accessors, not the variable. */
extern atomic_int tg_debug_level_;
static inline int tg_debug_level(void)
{
	return atomic_load_explicit(&tg_debug_level_, memory_order_relaxed);
}
/* Overrides the level until the next tg_config_set("DEBUG"), tg_init
 * or tg_shutdown (tests use it to see the DEBUG output). */
void tg_debug_set(int level);
/* Logs one line to stderr when DEBUG >= level (level 0: always). */
void tg_debug_log(int level, const char *fmt, ...) TG_PRINTF(2, 3);

/* --------------------------------------------------------- util/config.c */

/* What a [core] value must look like; checked wherever it comes from. */
enum tg_key_kind { TG_KSTR, TG_KINT, TG_KBOOL, TG_KFLOAT_TYPE };

/* Every [core] key, declared once as X(ID, name, environment variable,
 * kind, min, max, default).  The list makes the TG_KEY_<ID> enum and
 * config.c's table, and code reads core keys only through the enum, so
 * a misspelt or undeclared key does not compile.  min and max bound an
 * INT; the default is what tg_setting_int gives when the key is unset
 * (string keys have none: NULL). */
#define TG_CORE_KEYS(X)                                                 \
	X(DEVICES, "devices", "TG_DEVICES", STR, 0, 0, 0)               \
	X(PLUGIN_PATH, "plugin_path", NULL, STR, 0, 0, 0)               \
	X(DEFAULT_PLUGIN_PATH, "default_plugin_path",                   \
	  "TG_PLUGIN_DEFAULT_PATH", BOOL, 0, 1, 1)                      \
	X(PLUGINS_DISABLE, "plugins_disable", "TG_PLUGINS_DISABLE",     \
	  STR, 0, 0, 0)                                                 \
	X(PLUGIN_ISOLATE, "plugin_isolate", "TG_PLUGIN_ISOLATE", BOOL,  \
	  0, 1, 0)                                                      \
	X(PLUGIN_ISOLATE_TIMEOUT, "plugin_isolate_timeout",             \
	  "TG_PLUGIN_ISOLATE_TIMEOUT", INT, 1, 3600, 30)                \
	X(DEVICE, "DEVICE", "DEVICE", STR, 0, 0, 0)                     \
	X(DEBUG, "DEBUG", "DEBUG", INT, 0, 7, 0)                        \
	X(NOOPT, "NOOPT", "NOOPT", BOOL, 0, 1, 0)                       \
	X(VERIFY, "VERIFY", "VERIFY", BOOL, 0, 1, 0)                    \
	X(CACHELEVEL, "CACHELEVEL", "CACHELEVEL", INT, 0, 9, 2)         \
	X(CACHEDB, "CACHEDB", "CACHEDB", STR, 0, 0, 0)                  \
	X(LRU, "LRU", "LRU", BOOL, 0, 1, 1)                             \
	X(DEFAULT_FLOAT, "DEFAULT_FLOAT", "DEFAULT_FLOAT", FLOAT_TYPE,  \
	  0, 0, 0)                                                      \
	X(SPLIT_REDUCEOP, "SPLIT_REDUCEOP", "SPLIT_REDUCEOP", BOOL,     \
	  0, 1, 1)                                                      \
	X(REDUCEOP_SPLIT_THRESHOLD, "REDUCEOP_SPLIT_THRESHOLD",         \
	  "REDUCEOP_SPLIT_THRESHOLD", INT, 1, LONG_MAX, 32768)          \
	X(JIT, "JIT", "JIT", INT, 0, 2, 1)                              \
	X(BEAM, "BEAM", "BEAM", INT, 0, 64, 0)                          \
	X(IGNORE_BEAM_CACHE, "IGNORE_BEAM_CACHE", "IGNORE_BEAM_CACHE",  \
	  BOOL, 0, 1, 0)                                                \
	X(BEAM_TIMEOUT_SEC, "BEAM_TIMEOUT_SEC", "BEAM_TIMEOUT_SEC",     \
	  INT, 1, 86400, 60)                                            \
	X(TC, "TC", "TC", INT, 0, 2, 1)                                 \
	X(TC_OPT, "TC_OPT", "TC_OPT", INT, 0, 2, 0)                     \
	X(RANDOM_OPTS, "RANDOM_OPTS", "TG_RANDOM_OPTS", INT, 0,         \
	  2147483647, 0)                                                \
	X(PROFILE, "PROFILE", "PROFILE", BOOL, 0, 1, 0)                 \
	X(PROFILEPATH, "PROFILEPATH", "PROFILEPATH", STR, 0, 0, 0)      \
	X(GRAPH, "GRAPH", "GRAPH", BOOL, 0, 1, 0)                       \
	X(GRAPHPATH, "GRAPHPATH", "GRAPHPATH", STR, 0, 0, 0)            \
	X(RING, "RING", "RING", INT, 0, 2, 1)

enum tg_key {
#define TG_KEY_ENUM_(id, ...) TG_KEY_##id,
	TG_CORE_KEYS(TG_KEY_ENUM_)
#undef TG_KEY_ENUM_
	TG_NKEYS
};

/* The kind of each key as a constant, TG_KIND_TG_KEY_<ID>, so that the
 * accessors below can refuse a mismatch at compile time. */
enum {
#define TG_KEY_KIND_(id, name, env, kind, ...) \
	TG_KIND_TG_KEY_##id = TG_K##kind,
	TG_CORE_KEYS(TG_KEY_KIND_)
#undef TG_KEY_KIND_
};

/* Integer (or boolean as 0/1) value of a [core] INT or BOOL key, its
 * default when unset.  `k` must be a TG_KEY_* constant: reading a
 * string key as a number fails to compile (a negative array size). */
#define tg_setting_int(k)                                               \
	((void)sizeof(char[(int)TG_KIND_##k == TG_KINT ||               \
	                   (int)TG_KIND_##k == TG_KBOOL ? 1 : -1]),     \
	 tg_setting_int_(k))
long tg_setting_int_(enum tg_key k);
/* Text of a [core] key, NULL when unset.  Borrowed, valid until
 * tg_shutdown(). */
const char *tg_setting_str(enum tg_key k);
/* The file a path key names (PROFILEPATH, GRAPHPATH), else `name` in
 * the temporary directory ($TMPDIR when absolute, else /tmp): a new
 * string, or NULL on OOM (reported). */
char *tg_output_path(enum tg_key k, const char *name);
/* Where a [core] key's value came from (see tg_cfg_origin). */
const char *tg_setting_origin(enum tg_key k);
/* The key's name as in files and messages ("NOOPT", "devices"). */
const char *tg_setting_name(enum tg_key k);

/* The settings an operation reads, taken together.  Above util/, the
 * [core] keys are read only through this snapshot, taken once where an
 * operation starts (a realize, a reduce or a default float type
 * recorded by the tensor layer, a JIT call, a public program build)
 * and passed down, so that one operation sees one configuration even
 * when another thread calls tg_config_set meanwhile, and so that the
 * hot paths take no lock.  tests/layers.sh holds the list of those
 * places; devices, plugins and the cache read their own keys when they
 * open (HACKING.md, "The layering rule"). */
typedef struct tg_settings {
	int debug;                     /* the DEBUG level in effect, 0..7 */
	int noopt;                     /* NOOPT: no hand-coded opts (0/1) */
	int verify;                    /* VERIFY: check every codegen pass */
	int split_reduceop;            /* SPLIT_REDUCEOP: split big reduces */
	long reduceop_split_threshold; /* ... of at least this many
	                                  elements per output */
	tg_dtype default_float;        /* DEFAULT_FLOAT (float32 unset) */
	int cachelevel;                /* CACHELEVEL: 0 no compile cache */
	int beam;                      /* BEAM: search width, 0 off */
	int ignore_beam_cache;         /* IGNORE_BEAM_CACHE: search again */
	int beam_timeout;              /* BEAM_TIMEOUT_SEC: one search's
	                                  rounds' time budget */
	int tc;                        /* TC: 0 keeps tensor-core opts out
	                                  of the hand-coded opts and BEAM */
	int tc_opt;                    /* TC_OPT: the hand-coded TC opt's
	                                  amount (2 pads to fit) */
	long random_opts;              /* RANDOM_OPTS: a seed; each kernel
	                                  takes random legal opts drawn
	                                  from it (0: off) */
	int profile;                   /* PROFILE: time every kernel and
	                                  copy into a trace (profile.c) */
	int graph;                     /* GRAPH: draw every scheduled
	                                  kernel's lazy graph (graphviz.c) */
	int ring;                      /* RING: how a multi-device reduce
	                                  is all-reduced (lazy/multi.c) */
	int jit;                       /* JIT: 0 runs every call eagerly,
	                                  2 replays without graphs */
	long reduce_passes;            /* tests only, no key: iterations
	                                  per reduce pass wherever a C
	                                  kernel allows passes (0: the
	                                  heuristic; tg_kplan_reduce_block) */
} tg_settings;
/* Fills *out from the configuration as it is now, under one lock, so a
 * concurrent tg_config_set is seen whole or not at all.  Returns 0, or
 * the status of a failed start-up (a bad config file); *out is filled
 * either way, from what could be read and the defaults.  TG_EINVAL when
 * out is NULL. */
int tg_settings_read(tg_settings *out);

/* Reads the files and the environment into the global configuration.
 * 0 or TG_ECONFIG with a message naming file, line and key. */
int tg_config_load(void);
/* Starts the library on first use: reads the configuration once (later
 * calls return the first one's status, with its message).  tg_init
 * and every entry point that needs the configuration call it. */
int tg_ensure_init(void);
void tg_config_unload(void);
/* String-keyed lookups, for plugin sections ([cpu] cc=) and the public
 * calls; the core reads its own keys with tg_setting_*.  Merged value of
 * section.key: API override, environment, files.  Borrowed, valid until
 * tg_shutdown(). */
const char *tg_cfg_get(const char *section, const char *key);
/* Integer (or boolean as 0/1) value of section.key; `def` when unset. */
long tg_cfg_int(const char *section, const char *key, long def);
/* Where the value came from: "environment TG_CPU_CC", "file:line",
 * "tg_config_set()" or "default".  Borrowed (per thread). */
const char *tg_cfg_origin(const char *section, const char *key);
/* Reports the value of section.key as one that cannot be used, and
 * returns TG_ECONFIG: "config: ORIGIN: [section] key: WHAT, got
 * 'VALUE'", ORIGIN as tg_cfg_origin says, the value escaped
 * (tg_escape), WHAT formatted from fmt ("expected an integer from 1 to
 * 64").  The host table's config_error. */
int tg_cfg_error(const char *section, const char *key, const char *fmt,
                 ...) TG_PRINTF(3, 4);
int tg_cfg_verror(const char *section, const char *key, const char *fmt,
                  va_list ap) TG_PRINTF(3, 0);
/* The files that were looked for, with whether each was read. */
size_t tg_cfg_file_count(void);
const char *tg_cfg_file(size_t i, int *was_read);


#endif /* TG_CORE_H */

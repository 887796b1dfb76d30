/*
 * tool.h - a compiler that runs as a child process, shared by the
 * plugins that compile with a program: the CPU plugin's `cc` and the
 * Vulkan plugin's `glslc`.  Linked into each as a convenience library
 * (plugins do not link libtgcore, so they cannot share code through it).
 *
 * The command is "<cmd> <flags>" from two config keys of the plugin's
 * section (defaults from the plugin), split on blanks without quoting
 * and run through posix_spawnp, never a shell.  The source goes to its
 * stdin; its stdout and stderr come back as the log; the file it writes
 * lands in a private scratch directory and is read back as the blob.
 * A run longer than `compile_timeout` seconds (default 300, 0: none) is
 * killed with its process group.  In a setuid or setgid program a bare
 * command name is looked up on a fixed system path only, with a fixed
 * environment.
 *
 * Known limit: an application that reaps every child itself (SIGCHLD
 * set to SIG_IGN, or waitpid(-1) in a handler) makes compiles fail with
 * "cannot wait for the compiler".
 */
#ifndef TG_PLUGIN_TOOL_H
#define TG_PLUGIN_TOOL_H

#include <stddef.h>
#include <sys/types.h>
#include <tg/plugin.h>

/* Where scratch directories go, in order: $TMPDIR (not in setuid
 * programs), /tmp, then the cache directory (a compile's scratch files
 * never need the cache's disk, which may be full, and a noexec /tmp
 * still leaves a place to load a kernel from). */
#define TOOL_SCRATCH_DIRS 3
/* The path looked up for a bare command name in secure mode. */
#define TOOL_SECURE_PATH "/usr/bin:/bin"

/* What a plugin's compiler is called and how it is configured. */
struct tool_spec {
	const char *who;           /* "cpu": "cpu compile: ...", [cpu] */
	const char *cmd_key;       /* "cc": [cpu] cc, TG_CPU_CC */
	const char *cmd_default;   /* "cc" */
	const char *flags_key;     /* "cflags" */
	const char *flags_default; /* "-O2 -march=native ..." */
	int version_lines;         /* lines of `--version` kept (1 or more) */
};

/* The configured command; read-only after tool_new, so compiles may run
 * on several threads at once. */
struct tool;

/* Reads the config ([who] cmd_key, flags_key, compile_timeout) and runs
 * `<cmd> --version` once.  A command that cannot run is not an error
 * here: each compile reports it.  `host` and `spec` are borrowed and
 * must outlive the result.  *out: owned by the caller, tool_free. */
int tool_new(const struct tg_host *host, const struct tool_spec *spec,
             struct tool **out);
void tool_free(struct tool *t);
/* The whole command joined by spaces, and the first version_lines
 * lines of `--version` joined by " | " (or "<cmd> version unknown").
 * Borrowed from t. */
const char *tool_command(const struct tool *t);
const char *tool_version(const struct tool *t);

/* Runs "<cmd> <flags> <tail...>" with `src` on stdin.  A word "%o" in
 * the NULL-ended `tail` is replaced by the path of file `out_name` in a
 * fresh private scratch directory, which the tool must write; its bytes
 * come back in *blob (host->alloc'd, *len bytes).  *log (host->alloc'd,
 * or NULL when there was no output) gets the tool's output, errors or
 * warnings.  TG_ECOMPILE names how the tool failed and quotes its first
 * lines. */
int tool_compile(struct tool *t, const char *const tail[],
                 const char *out_name, const char *src, void **blob,
                 size_t *len, char **log);

/* A malloc'd formatted string (the caller frees it), or NULL when out
 * of memory. */
char *tool_printf(const char *fmt, ...) TG_PRINTF(1, 2);
/* "<dir>/tg-<who>-XXXXXX" for scratch directory i (see
 * TOOL_SCRATCH_DIRS), a template for mkdtemp or mkostemp; -1 when that
 * directory is unset or the path too long. */
int tool_scratch_template(const struct tg_host *host, const char *who,
                          int i, char *path, size_t n);
#endif

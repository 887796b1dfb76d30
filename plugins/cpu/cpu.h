/*
 * cpu.h - the CPU plugin's internal header, one section per .c file.
 *
 * The CPU device runs kernels rendered as C (TG_DIALECT_C): the system C
 * compiler turns them into shared objects (compile.c), which are loaded
 * from memory and run on a persistent thread pool (pool.c), or once in a
 * child process for a trial (trial.c).  cpu.c holds
 * the device, its allocator, the runtime (launches and graphs) and the
 * descriptor the core sees.
 */
#ifndef TG_PLUGIN_CPU_H
#define TG_PLUGIN_CPU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <tg/plugin.h>

/* A kernel as TG_DIALECT_C defines it: work-items [lo, hi) of the
 * flattened global range. */
typedef void (*cpu_kernel_fn)(void *const *bufs, const int64_t *vals,
                              const size_t *global, size_t lo, size_t hi);

/* ------------------------------------------------------------------ */
/* compile.c: building and loading kernel shared objects              */
/* ------------------------------------------------------------------ */

/* The compiler command (config keys `cc` and `cflags`) and what it
 * reports about itself; read-only after cpu_cc_new, so compiles may run
 * on several threads at once. */
struct cpu_cc;

/* A loaded kernel: the shared object and the function in it. */
struct cpu_program {
	void *dl;          /* dlopen handle; closed by cpu_program_free */
	cpu_kernel_fn fn;  /* borrowed from dl */
};

/* Reads the config, runs `<cc> --version` once (../common/tool.h).  A
 * compiler that cannot run is not an error here (compile reports it).
 * `host` is borrowed and must outlive the result.  *out: owned by the
 * caller, cpu_cc_free. */
int cpu_cc_new(const struct tg_host *host, struct cpu_cc **out);
void cpu_cc_free(struct cpu_cc *cc);
/* "cc -O2 ... | cc (Debian 12.2.0-14) 12.2.0 | x86_64 <cpu model>".
 * Borrowed from cc. */
const char *cpu_cc_identity(const struct cpu_cc *cc);
/* First line of `<cc> --version`, or "cc version unknown".  Borrowed. */
const char *cpu_cc_version(const struct cpu_cc *cc);
/* Compiles `src` into a shared object.  *blob (host->alloc'd) and *log
 * (host->alloc'd or NULL: the compiler's output) go to the caller. */
int cpu_cc_compile(struct cpu_cc *cc, const char *src, void **blob,
                   size_t *blob_len, char **log);
/* Loads function `name` from a blob of cpu_cc_compile without leaving a
 * file behind.  *out: owned by the caller, cpu_program_free. */
int cpu_program_load(struct cpu_cc *cc, const char *name, const void *blob,
                     size_t blob_len, struct cpu_program **out);
void cpu_program_free(struct cpu_program *prog);

/* ------------------------------------------------------------------ */
/* pool.c: the thread pool that runs kernels                          */
/* ------------------------------------------------------------------ */

struct cpu_pool;

/* One kernel launch over `total` work-items; all pointers borrowed for
 * the duration of cpu_pool_run. */
struct cpu_job {
	cpu_kernel_fn fn;
	void *const *bufs;
	const int64_t *vals;
	const size_t *global;
	size_t total; /* global[0] * global[1] * global[2] */
};

/* Threads to use from config key `threads` (0 or unset: one per online
 * core).  TG_ECONFIG for anything but a number in [0, 4096]. */
int cpu_pool_threads(const struct tg_host *host, size_t *nthreads);
/* Starts nthreads - 1 workers (the launching thread is the last one).
 * *out: owned by the caller, cpu_pool_free. */
int cpu_pool_new(const struct tg_host *host, size_t nthreads,
                 struct cpu_pool **out);
/* Joins every worker and frees the pool.  NULL is allowed. */
void cpu_pool_free(struct cpu_pool *pool);
/* Runs the job in one contiguous chunk per thread and returns when all
 * chunks are done.  Safe to call from several threads (they take turns). */
void cpu_pool_run(struct cpu_pool *pool, const struct cpu_job *job);
/* Runs jobs[0..n-1] in order, each seeing the writes of the ones
 * before, and returns when all are done: the workers are woken once,
 * split each job as cpu_pool_run would and meet at a spinning barrier
 * between jobs; jobs too small to share run on the calling thread.
 * Safe to call from several threads (they take turns). */
void cpu_pool_run_graph(struct cpu_pool *pool, const struct cpu_job *jobs,
                        size_t n);

/* ------------------------------------------------------------------ */
/* trial.c: a launch in a child process                                */
/* ------------------------------------------------------------------ */

/* Runs the job once in a forked child on its only thread: 0 when the
 * kernel returned; TG_ERUNTIME naming the signal when the child died;
 * TG_ETIMEOUT (the child killed) past timeout_s seconds;
 * TG_EUNSUPPORTED when no child could be made.  The job's writes are
 * lost. */
int cpu_trial(const struct tg_host *host, const struct cpu_job *job,
              double timeout_s);

#endif /* TG_PLUGIN_CPU_H */

#include "config.h"
/*
 * pool.c - a persistent thread pool for kernel launches and graphs.
 *
 * nthreads - 1 workers sleep on a condition variable; a launch posts one
 * job, numbered by `gen`, and the launching thread runs chunk 0 itself
 * while worker i runs chunk i.  Everything a launch shares is guarded by
 * one mutex and two condition variables (no spinning), so helgrind and
 * TSan can follow it.  A worker that wakes late simply sees a newer
 * `gen`: the launcher waits only for workers that have a chunk, and each
 * chunk is taken exactly once because a worker remembers the last gen it
 * saw.
 *
 * A graph (a list of jobs run in order) is posted the same way, once:
 * then every thread walks the list, runs its chunk of each job and meets
 * the others at a barrier before the next job, since a job may read what
 * the one before wrote.  The barrier is one counter that only grows
 * (C11 atomics, release on arrival, acquire while waiting), spun on
 * briefly and then yielded on: a condition variable per kernel would cost
 * a wake-up per kernel, which is what a graph is there to avoid.  Only a
 * thread still waiting after that (another one is descheduled, on a busy
 * machine) sleeps on a condition variable, woken by the arrival that
 * completes the step.  The poster returns after every thread arrived at
 * the last barrier, so no worker can miss a graph's gen.  Jobs too
 * small to share run on the posting thread: alone at the ends of the
 * list (the workers are not woken for them) and, between shared jobs,
 * as one step of thread 0.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"
#include "text.h"

/* Helgrind follows mutexes, not C11 atomics: the barrier tells it that
 * what came before an arrival happens before what follows the wait. */
#ifdef HAVE_VALGRIND_HELGRIND_H
#include <valgrind/helgrind.h>
#else
#define ANNOTATE_HAPPENS_BEFORE(obj) ((void)(obj))
#define ANNOTATE_HAPPENS_AFTER(obj) ((void)(obj))
#endif

/* More threads than this is a typo, not a machine. */
#define POOL_MAX_THREADS 4096

struct worker {
	struct cpu_pool *pool; /* borrowed: the pool owns its workers */
	size_t index;          /* chunk this worker runs, 1 .. nworkers */
	pthread_t tid;
};

/* The part of a graph posted to the workers: jobs [0, n), the first
 * and the last shared.  Step s of it is over when the barrier counter
 * reaches base + nthreads * (s + 1). */
struct segment {
	const struct cpu_job *jobs; /* borrowed for the run */
	size_t n;                   /* 0: the gen is a single job */
	size_t base;
};

struct cpu_pool {
	pthread_mutex_t run_lock; /* one launch or graph at a time */
	pthread_mutex_t lock;     /* guards the fields below but atomics */
	pthread_cond_t work;      /* gen moved on, or stop was set */
	pthread_cond_t done;      /* pending reached 0 */
	pthread_cond_t step;      /* a graph step a sleeper waits for ended */
	struct cpu_job job;       /* the job of generation `gen` */
	struct segment seg;       /* or the graph of generation `gen` */
	size_t nchunks;           /* chunks of that job, caller's included */
	size_t pending;           /* chunks still running on workers */
	uint64_t gen;
	int stop;
	size_t nworkers;
	struct worker *workers;   /* owned, nworkers of them */
	/* Barrier arrivals of graph runs, ever; only grows.  Written by
	 * every thread of a run without the lock. */
	atomic_size_t arrived;
	atomic_uint sleepers;     /* threads asleep on `step` (or going) */
};

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

/* CPUs this process may run on: the affinity mask respects cpusets and
 * taskset, which the online count does not. */
static size_t online_cores(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (size_t)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (size_t)n : 1;
}

int cpu_pool_threads(const struct tg_host *host, size_t *nthreads)
{
	const char *s = host->config_get(host, "threads");
	long n;

	if (s == NULL || *s == '\0') {
		*nthreads = online_cores();
		return 0;
	}
	if (text_long(s, 0, POOL_MAX_THREADS, &n) != 0)
		return text_bad_config(host, "cpu", "threads", "expected an "
		                       "integer from 0 (one per core) to %d",
		                       POOL_MAX_THREADS);
	*nthreads = n == 0 ? online_cores() : (size_t)n;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Running chunks                                                      */
/* ------------------------------------------------------------------ */

/* Fewer work items than this run on one thread: waking the workers
 * costs tens of microseconds, more than such a kernel (a tiny
 * elementwise op, the last stage of a split reduce) takes. */
#define INLINE_ITEMS 32

/* Chunks a job of `total` items is cut into: one per thread, never more
 * than items, and one under INLINE_ITEMS. */
static size_t chunks_of(const struct cpu_pool *pool, size_t total)
{
	size_t nchunks = pool->nworkers + 1;

	if (total < nchunks || total < INLINE_ITEMS)
		nchunks = total < INLINE_ITEMS ? 1 : total;
	return nchunks;
}

/* Chunk k of n over [0, total): the first total % n chunks get one item
 * more.  Written without total * k, which could overflow. */
static void run_chunk(const struct cpu_job *job, size_t n, size_t k)
{
	size_t q = job->total / n, r = job->total % n;
	size_t lo = k * q + (k < r ? k : r);
	size_t hi = lo + q + (k < r);

	job->fn(job->bufs, job->vals, job->global, lo, hi);
}

/* A job on the calling thread alone. */
static void run_alone(const struct cpu_job *job)
{
	if (job->total > 0)
		run_chunk(job, 1, 0);
}

/* ------------------------------------------------------------------ */
/* Graphs: the barrier and the steps                                   */
/* ------------------------------------------------------------------ */

/* A barrier wait spins this many times, then yields this many times,
 * then sleeps.  The others are usually well under a microsecond behind,
 * and the spin catches them; on a busy machine one may be descheduled
 * for milliseconds, and a spinning or yielding thread would take the
 * core it needs (and lose its own scheduler credit). */
#define SPIN_LIMIT 50
#define YIELD_LIMIT 8

static void cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_ia32_pause();
#endif
}

static size_t arrivals(struct cpu_pool *pool)
{
	return atomic_load_explicit(&pool->arrived, memory_order_seq_cst);
}

/* The slow path: sleeps on `step` until `target` arrivals.  Registered
 * in `sleepers` before the last look at the count, so the arrival that
 * completes the step sees it (both seq_cst) and wakes it. */
static void barrier_sleep(struct cpu_pool *pool, size_t target)
{
	pthread_mutex_lock(&pool->lock);
	atomic_fetch_add_explicit(&pool->sleepers, 1, memory_order_seq_cst);
	while (arrivals(pool) < target)
		pthread_cond_wait(&pool->step, &pool->lock);
	atomic_fetch_sub_explicit(&pool->sleepers, 1, memory_order_relaxed);
	pthread_mutex_unlock(&pool->lock);
}

/* Returns once `target` arrivals happened; what the arriving threads
 * wrote before arriving is then visible here (the count is read with
 * acquire, against their release: each fetch_add continues the release
 * sequence). */
static void barrier_wait(struct cpu_pool *pool, size_t target)
{
	unsigned i;

	for (i = 0; i < SPIN_LIMIT + YIELD_LIMIT; i++) {
		if (arrivals(pool) >= target)
			break;
		if (i < SPIN_LIMIT)
			cpu_relax();
		else
			sched_yield();
	}
	if (i == SPIN_LIMIT + YIELD_LIMIT)
		barrier_sleep(pool, target);
	ANNOTATE_HAPPENS_AFTER(&pool->arrived);
}

/* Arrives at the barrier whose step ends at `target` arrivals; the
 * arrival that completes it wakes any thread that went to sleep. */
static void barrier_arrive(struct cpu_pool *pool, size_t target)
{
	size_t n;

	ANNOTATE_HAPPENS_BEFORE(&pool->arrived);
	n = atomic_fetch_add_explicit(&pool->arrived, 1,
	                              memory_order_seq_cst) + 1;
	if (n != target ||
	    atomic_load_explicit(&pool->sleepers, memory_order_seq_cst) == 0)
		return;
	pthread_mutex_lock(&pool->lock);
	pthread_cond_broadcast(&pool->step);
	pthread_mutex_unlock(&pool->lock);
}

/* The end of the step that starts at job i: the job alone when it is
 * shared, else the run of unshared jobs from i (one thread runs them
 * back to back, so they need no barrier between them). */
static size_t step_end(const struct cpu_pool *pool,
                       const struct segment *seg, size_t i)
{
	if (chunks_of(pool, seg->jobs[i].total) > 1)
		return i + 1;
	while (i < seg->n && chunks_of(pool, seg->jobs[i].total) == 1)
		i++;
	return i;
}

/* Thread `me`'s part of jobs [i, end), one step. */
static void run_step(const struct cpu_pool *pool, const struct cpu_job *jobs,
                     size_t i, size_t end, size_t me)
{
	size_t k = chunks_of(pool, jobs[i].total);

	if (k > 1) {
		if (me < k)
			run_chunk(&jobs[i], k, me);
		return;
	}
	for (; me == 0 && i < end; i++)
		run_alone(&jobs[i]);
}

/* Thread `me`'s walk through a segment: each step, then the barrier.
 * Workers only arrive at the last one (only the poster waits there, to
 * know that everything ran), and go back to sleep. */
static void run_segment(struct cpu_pool *pool, const struct segment *seg,
                        size_t me)
{
	size_t nthreads = pool->nworkers + 1, target = seg->base;
	size_t i, end;

	for (i = 0; i < seg->n; i = end) {
		end = step_end(pool, seg, i);
		run_step(pool, seg->jobs, i, end, me);
		target += nthreads;
		barrier_arrive(pool, target);
		if (end < seg->n || me == 0)
			barrier_wait(pool, target);
	}
}

/* ------------------------------------------------------------------ */
/* Posting work                                                        */
/* ------------------------------------------------------------------ */

/* Waits for a generation newer than `*seen`; 0 when told to stop.
 * Called and returns with pool->lock held. */
static int wait_job(struct cpu_pool *pool, uint64_t *seen)
{
	while (!pool->stop && pool->gen == *seen)
		pthread_cond_wait(&pool->work, &pool->lock);
	*seen = pool->gen;
	return !pool->stop;
}

/* Runs worker w's part of the current gen, a graph segment or a chunk
 * of a job.  Called and returns with pool->lock held. */
static void run_posted(struct cpu_pool *pool, const struct worker *w)
{
	struct segment seg = pool->seg;
	struct cpu_job job = pool->job;
	size_t n = pool->nchunks;

	if (seg.n > 0) {
		pthread_mutex_unlock(&pool->lock);
		run_segment(pool, &seg, w->index);
		pthread_mutex_lock(&pool->lock);
		return;
	}
	if (w->index >= n)
		return; /* fewer items than threads: no chunk */
	pthread_mutex_unlock(&pool->lock);
	run_chunk(&job, n, w->index);
	pthread_mutex_lock(&pool->lock);
	if (--pool->pending == 0)
		pthread_cond_signal(&pool->done);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct cpu_pool *pool = w->pool;
	uint64_t seen = 0;

	pthread_mutex_lock(&pool->lock);
	while (wait_job(pool, &seen))
		run_posted(pool, w);
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

/* Posts the job to the workers, runs chunk 0, waits for the rest. */
static void run_shared(struct cpu_pool *pool, const struct cpu_job *job,
                       size_t nchunks)
{
	pthread_mutex_lock(&pool->lock);
	pool->job = *job;
	pool->seg.n = 0;
	pool->nchunks = nchunks;
	pool->pending = nchunks - 1;
	pool->gen++;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);

	run_chunk(job, nchunks, 0);

	pthread_mutex_lock(&pool->lock);
	while (pool->pending > 0)
		pthread_cond_wait(&pool->done, &pool->lock);
	pthread_mutex_unlock(&pool->lock);
}

void cpu_pool_run(struct cpu_pool *pool, const struct cpu_job *job)
{
	size_t nchunks = chunks_of(pool, job->total);

	if (nchunks <= 1) { /* nothing to share: no locks, no wake-ups */
		run_alone(job);
		return;
	}
	pthread_mutex_lock(&pool->run_lock);
	run_shared(pool, job, nchunks);
	pthread_mutex_unlock(&pool->run_lock);
}

/* Posts jobs [0, n) (the first and last shared) to every thread at once
 * and takes part as thread 0; returns when all of them ran. */
static void post_segment(struct cpu_pool *pool, const struct cpu_job *jobs,
                         size_t n)
{
	struct segment seg = { .jobs = jobs, .n = n };

	pthread_mutex_lock(&pool->run_lock);
	/* exact: the poster before us waited for every arrival of its run,
	 * and run_lock orders us after it */
	seg.base = atomic_load_explicit(&pool->arrived, memory_order_relaxed);
	pthread_mutex_lock(&pool->lock);
	pool->seg = seg;
	pool->gen++;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);
	run_segment(pool, &seg, 0);
	pthread_mutex_unlock(&pool->run_lock);
}

void cpu_pool_run_graph(struct cpu_pool *pool, const struct cpu_job *jobs,
                        size_t n)
{
	size_t first = 0, last = n;

	while (first < n && chunks_of(pool, jobs[first].total) == 1)
		run_alone(&jobs[first++]);
	if (first == n)
		return; /* nothing to share: the workers sleep on */
	while (chunks_of(pool, jobs[last - 1].total) == 1)
		last--;
	post_segment(pool, jobs + first, last - first);
	for (; last < n; last++)
		run_alone(&jobs[last]);
}

/* ------------------------------------------------------------------ */
/* Lifetime                                                            */
/* ------------------------------------------------------------------ */

/* Tells the first `n` workers to stop and joins them. */
static void stop_workers(struct cpu_pool *pool, size_t n)
{
	pthread_mutex_lock(&pool->lock);
	pool->stop = 1;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);
	for (size_t i = 0; i < n; i++)
		pthread_join(pool->workers[i].tid, NULL);
}

/* Starts the workers with every signal blocked, so the application's
 * signals keep going to its own threads. */
static int start_workers(const struct tg_host *host, struct cpu_pool *pool)
{
	sigset_t all, old;
	size_t i;
	int err = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < pool->nworkers && err == 0; i++) {
		pool->workers[i].pool = pool;
		pool->workers[i].index = i + 1;
		err = pthread_create(&pool->workers[i].tid, NULL, worker_main,
		                     &pool->workers[i]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err == 0)
		return 0;
	stop_workers(pool, i - 1);
	return host->set_error(host, TG_ERUNTIME,
		"cpu open: cannot start worker thread %zu of %zu: %s", i,
		pool->nworkers, strerror(err));
}

/* Initializes the locks; on failure nothing is left to destroy. */
static int init_sync(struct cpu_pool *pool)
{
	if (pthread_mutex_init(&pool->run_lock, NULL) != 0)
		return -1;
	if (pthread_mutex_init(&pool->lock, NULL) != 0)
		goto out_destroy_run_lock;
	if (pthread_cond_init(&pool->work, NULL) != 0)
		goto out_destroy_lock;
	if (pthread_cond_init(&pool->done, NULL) != 0)
		goto out_destroy_work;
	if (pthread_cond_init(&pool->step, NULL) != 0)
		goto out_destroy_done;
	return 0;
out_destroy_done:
	pthread_cond_destroy(&pool->done);
out_destroy_work:
	pthread_cond_destroy(&pool->work);
out_destroy_lock:
	pthread_mutex_destroy(&pool->lock);
out_destroy_run_lock:
	pthread_mutex_destroy(&pool->run_lock);
	return -1;
}

static void destroy_sync(struct cpu_pool *pool)
{
	pthread_cond_destroy(&pool->step);
	pthread_cond_destroy(&pool->done);
	pthread_cond_destroy(&pool->work);
	pthread_mutex_destroy(&pool->lock);
	pthread_mutex_destroy(&pool->run_lock);
}

static int no_memory(const struct tg_host *host, size_t nthreads)
{
	return host->set_error(host, TG_ENOMEM,
		"cpu open: out of memory creating a pool of %zu threads",
		nthreads);
}

int cpu_pool_new(const struct tg_host *host, size_t nthreads,
                 struct cpu_pool **out)
{
	struct cpu_pool *pool = calloc(1, sizeof(*pool));
	int ret;

	if (pool == NULL)
		return no_memory(host, nthreads);
	pool->nworkers = nthreads > 1 ? nthreads - 1 : 0;
	pool->workers = calloc(pool->nworkers + 1, sizeof(*pool->workers));
	if (pool->workers == NULL || init_sync(pool) != 0) {
		ret = no_memory(host, nthreads);
		goto out_free_pool;
	}
	ret = start_workers(host, pool);
	if (ret != 0)
		goto out_destroy_sync;
	*out = pool;
	return 0;
out_destroy_sync:
	destroy_sync(pool);
out_free_pool:
	free(pool->workers);
	free(pool);
	return ret;
}

void cpu_pool_free(struct cpu_pool *pool)
{
	if (pool == NULL)
		return;
	stop_workers(pool, pool->nworkers);
	destroy_sync(pool);
	free(pool->workers);
	free(pool);
}

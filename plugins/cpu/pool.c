#include "config.h"
/*
 * pool.c - a persistent thread pool for kernel launches.
 *
 * nthreads - 1 workers sleep on a condition variable; a launch posts one
 * job, numbered by `gen`, and the launching thread runs chunk 0 itself
 * while worker i runs chunk i.  Everything shared is guarded by one mutex
 * and two condition variables (no spinning), so helgrind and TSan can
 * follow it.  A worker that wakes late simply sees a newer `gen`: the
 * launcher waits only for workers that have a chunk, and each chunk is
 * taken exactly once because a worker remembers the last gen it saw.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"

/* More threads than this is a typo, not a machine. */
#define POOL_MAX_THREADS 4096

struct worker {
	struct cpu_pool *pool; /* borrowed: the pool owns its workers */
	size_t index;          /* chunk this worker runs, 1 .. nworkers */
	pthread_t tid;
};

struct cpu_pool {
	pthread_mutex_t run_lock; /* one launch at a time */
	pthread_mutex_t lock;     /* guards every field below */
	pthread_cond_t work;      /* gen moved on, or stop was set */
	pthread_cond_t done;      /* pending reached 0 */
	struct cpu_job job;       /* the job of generation `gen` */
	size_t nchunks;           /* chunks of that job, caller's included */
	size_t pending;           /* chunks still running on workers */
	uint64_t gen;
	int stop;
	size_t nworkers;
	struct worker *workers;   /* owned, nworkers of them */
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
	char *end;
	long n;

	if (s == NULL || *s == '\0') {
		*nthreads = online_cores();
		return 0;
	}
	errno = 0;
	n = strtol(s, &end, 10);
	while (*end == ' ' || *end == '\t')
		end++;
	if (errno != 0 || end == s || *end != '\0' || n < 0 ||
	    n > POOL_MAX_THREADS)
		return host->set_error(host, TG_ECONFIG,
			"cpu open: bad threads value '%s' ([cpu] threads or "
			"TG_CPU_THREADS): expected an integer from 0 (one per "
			"core) to %d", s, POOL_MAX_THREADS);
	*nthreads = n == 0 ? online_cores() : (size_t)n;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Running chunks                                                      */
/* ------------------------------------------------------------------ */

/* Chunk k of n over [0, total): the first total % n chunks get one item
 * more.  Written without total * k, which could overflow. */
static void run_chunk(const struct cpu_job *job, size_t n, size_t k)
{
	size_t q = job->total / n, r = job->total % n;
	size_t lo = k * q + (k < r ? k : r);
	size_t hi = lo + q + (k < r);

	job->fn(job->bufs, job->vals, job->global, lo, hi);
}

/* Waits for a generation newer than `*seen`; 0 when told to stop.
 * Called and returns with pool->lock held. */
static int wait_job(struct cpu_pool *pool, uint64_t *seen)
{
	while (!pool->stop && pool->gen == *seen)
		pthread_cond_wait(&pool->work, &pool->lock);
	*seen = pool->gen;
	return !pool->stop;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct cpu_pool *pool = w->pool;
	uint64_t seen = 0;
	struct cpu_job job;
	size_t n;

	pthread_mutex_lock(&pool->lock);
	while (wait_job(pool, &seen)) {
		if (w->index >= pool->nchunks)
			continue; /* fewer items than threads: no chunk */
		job = pool->job;
		n = pool->nchunks;
		pthread_mutex_unlock(&pool->lock);
		run_chunk(&job, n, w->index);
		pthread_mutex_lock(&pool->lock);
		if (--pool->pending == 0)
			pthread_cond_signal(&pool->done);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

/* Posts the job to the workers, runs chunk 0, waits for the rest. */
static void run_shared(struct cpu_pool *pool, const struct cpu_job *job,
                       size_t nchunks)
{
	pthread_mutex_lock(&pool->lock);
	pool->job = *job;
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

/* Fewer work items than this run on the launching thread: waking the
 * workers costs tens of microseconds, more than such a kernel (a tiny
 * elementwise op, the last stage of a split reduce) takes. */
#define INLINE_ITEMS 32

void cpu_pool_run(struct cpu_pool *pool, const struct cpu_job *job)
{
	size_t nchunks = pool->nworkers + 1;

	if (job->total < nchunks || job->total < INLINE_ITEMS)
		nchunks = job->total < INLINE_ITEMS ? 1 : job->total;
	if (nchunks <= 1) { /* nothing to share: no locks, no wake-ups */
		if (job->total > 0)
			run_chunk(job, 1, 0);
		return;
	}
	pthread_mutex_lock(&pool->run_lock);
	run_shared(pool, job, nchunks);
	pthread_mutex_unlock(&pool->run_lock);
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
	return 0;
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

/*
 * counters.c - what has run (tg_counters, tinygrad's GlobalCounters):
 * kernels launched by realizes and replays, their estimated work, and
 * copies (and which of them went device to device).  Atomics, since realizes on different threads add at once;
 * the doubles are kept as integers (operations and bytes are whole
 * numbers) so that they can be atomic too.
 */
#include "config.h"

#include <stdatomic.h>

#include "device/device.h"

static atomic_uint_fast64_t n_kernels, n_copies, n_ops, n_mem, n_copy_bytes,
                            n_peer;

void tg_counters_kernel(const tg_program *p)
{
	double ops, mem;

	tg_program_cost(p, &ops, &mem);
	atomic_fetch_add(&n_kernels, 1);
	atomic_fetch_add(&n_ops, (uint_fast64_t)ops);
	atomic_fetch_add(&n_mem, (uint_fast64_t)mem);
}

void tg_counters_copy(size_t bytes, int peer)
{
	atomic_fetch_add(&n_copies, 1);
	if (peer)
		atomic_fetch_add(&n_peer, 1);
	atomic_fetch_add(&n_copy_bytes, bytes);
}

void tg_counters_get(tg_counters *out)
{
	if (!out)
		return;
	out->kernels = atomic_load(&n_kernels);
	out->copies = atomic_load(&n_copies);
	out->ops = (double)atomic_load(&n_ops);
	out->mem_bytes = (double)atomic_load(&n_mem);
	out->copy_bytes = (double)atomic_load(&n_copy_bytes);
	out->peer_copies = atomic_load(&n_peer);
}

void tg_counters_reset(void)
{
	atomic_store(&n_kernels, 0);
	atomic_store(&n_copies, 0);
	atomic_store(&n_ops, 0);
	atomic_store(&n_mem, 0);
	atomic_store(&n_copy_bytes, 0);
	atomic_store(&n_peer, 0);
}

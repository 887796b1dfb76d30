/*
 * device/device.h - devices and what runs on them: opening and choosing
 * devices, device groups, buffers, programs, graphs, the PROFILE trace
 * and the counters.  Internal; never installed.
 *
 * Lifetime scheme:
 *  - A tg_dev lives from its first open until tg_devices_close_all
 *    (tg_shutdown); device lists and the registry are guarded by
 *    tg_lock.
 *  - A buffer is reference counted (tg/tg.h's tg_buffer_ref and
 *    tg_buffer_unref); a program belongs to whoever made it
 *    (tg_program_free), and a graph borrows its programs, which must
 *    outlive it.
 */
#ifndef TG_DEVICE_H
#define TG_DEVICE_H

#include "core.h"
#include "plugin/registry.h"

/* ---------------------------------------------------------- device/lru.c */

/* Freed device memory kept for reuse, per device (tinygrad's
 * LRUAllocator).  All calls take the device's own lock. */
typedef struct tg_lru_entry {
	size_t size;
	void *mem;
} tg_lru_entry;

typedef struct tg_lru {
	pthread_mutex_t lock;
	TG_VEC(tg_lru_entry) free_list;
	int enabled;
	size_t cached_bytes;
	/* statistics, for tests and DEBUG */
	unsigned long n_alloc, n_reused, n_flush, n_plugin_alloc;
} tg_lru;

struct tg_dev;
void tg_lru_init(tg_lru *lru, int enabled);
/* Reuses cached memory of exactly `size` bytes or asks the plugin; when
 * the plugin runs out, empties the cache and retries once. */
int tg_lru_alloc(struct tg_dev *dev, size_t size, void **out);
/* Keeps `mem` for reuse (or frees it when the cache is disabled). */
void tg_lru_free(struct tg_dev *dev, void *mem, size_t size);
/* Returns every cached block to the plugin. */
void tg_lru_flush(struct tg_dev *dev);
void tg_lru_destroy(struct tg_dev *dev);

/* ------------------------------------------------------- device/device.c */

struct tg_dev {
	char *name;              /* canonical, "CPU" or "MOCK:1" */
	int index;
	tg_plugin_rec *plugin;
	struct tg_device *impl;  /* the plugin's object */
	/* the plugin's tables, copied with defaults for absent fields */
	struct tg_allocator_iface alloc;
	struct tg_compiler_iface comp;
	struct tg_runtime_iface rt;
	struct tg_renderer_caps caps;
	tg_lru lru;
	/* a device group (group.c): its members, borrowed; 0 otherwise */
	size_t ngroup;
	struct tg_dev **group;
};

/* The global lock for the registry and the device list. */
extern pthread_mutex_t tg_lock;
/* Opens device `index` of `rec` or returns the one already open.
 * Callers hold tg_lock. */
int tg_devices_open(tg_plugin_rec *rec, int index, struct tg_dev **out);
/* Checks the tables of a device a plugin (or the core: disk.c) opened
 * and makes it the tg_dev named `name`; on failure the caller still
 * owns impl.  Callers hold tg_lock. */
int tg_devices_adopt(tg_plugin_rec *rec, int index, struct tg_device *impl,
                     const char *name, struct tg_dev **out);
/* The open device named `name`, or NULL.  Callers hold tg_lock. */
struct tg_dev *tg_devices_find(const char *name);
/* Closes every device (tg_shutdown). */
void tg_devices_close_all(void);
/* Renderer capabilities with defaults for absent fields. */
const struct tg_renderer_caps *tg_dev_caps(const struct tg_dev *dev);

/* -------------------------------------------------------- device/group.c */
/* (public: tg_dev_group*) */

#define TG_GROUP_MAX 64
/* 0 when dev is a single device, else an error naming op: a group has
 * no memory, programs or queue of its own. */
int tg_dev_refuse_group(const tg_dev *dev, const char *op);
/* Frees every group (tg_shutdown, after the devices). */
void tg_groups_free(void);

/* --------------------------------------------------------- device/disk.c */

/* The path of a DISK device name ("DISK:path", any case), else NULL. */
const char *tg_disk_path(const char *name);
/* The DISK device of `path`, opened on first use.  Callers hold
 * tg_lock. */
int tg_disk_open(const char *path, struct tg_dev **out);
/* Whether dev is a DISK device (it holds data and runs no kernels). */
int tg_disk_is(const struct tg_dev *dev);

/* ------------------------------------------------------- device/select.c */

/* A parsed device name: canonical plugin name and index. */
typedef struct tg_devname {
	tg_plugin_rec *plugin;
	int index;
} tg_devname;

/* Resolves "cuda:1" / "CLANG" / "CPU:0" to a plugin and index.
 * `what` names the request in messages ("DEVICE=cuda:7"). */
int tg_devname_parse(const char *name, const char *what, tg_devname *out);
/* Canonical text for a parsed name ("CPU", "CUDA:1") into buf. */
void tg_devname_format(const tg_devname *dn, char *buf, size_t n);
/* Probes and opens a parsed device for an explicit request; on failure
 * the message names `what` (the request) and how to undo it (`var`, the
 * variable that made the request, may be NULL).  Callers hold tg_lock. */
int tg_select_open(const tg_devname *dn, const char *what, const char *var,
                   struct tg_dev **out);
/* Picks and opens the default device (once; later calls return it).
 * `why`, if not NULL, gets a sentence valid until tg_shutdown().
 * Callers hold tg_lock. */
int tg_select_default(struct tg_dev **out, const char **why);
/* Forgets the default (tg_shutdown). */
void tg_select_reset(void);

/* ------------------------------------------------------ device/program.c */
/* (public: tg_program_*) */

/* tg_program_new within an operation: the compile cache under its
 * settings (tg_program_new takes a snapshot of its own). */
tg_program *tg_program_build(struct tg_dev *dev, const char *name,
                             const char *src, const tg_settings *set);

/* "plugin\ncompiler identity\n": what a cache of compiled or tuned
 * kernels keys on besides the kernel.  New string, NULL on OOM. */
char *tg_dev_compile_key(struct tg_dev *dev);
/* A kernel codegen left for the device's own renderer (ks->view, a
 * TG_DIALECT_CUSTOM device): runs renderer->render and puts its text
 * in ks->src.  0 at once when ks->src is there already.  Errors name
 * the kernel and the device, after the plugin's message. */
struct tg_ksrc;
int tg_dev_render(struct tg_dev *dev, struct tg_ksrc *ks);

/* Checks a launch (geometry against the device's limits, buffers on
 * the program's device, allocating them) and fills *out for the
 * plugin: handles (a.nbufs of them, the caller's array) get the
 * buffers' device handles; vals are borrowed from a. */
int tg_program_prepare(tg_program *p, const tg_launch_args *a,
                       void **handles, struct tg_launch *out);
/* Whether p's plugin can give it a trial run (tg_program_trial). */
int tg_program_has_trial(const tg_program *p);
/* Runs p once through the plugin's trial entry: a fault or a hang
 * (past timeout_s seconds) fails the call, TG_ERUNTIME or TG_ETIMEOUT
 * with the plugin's message, instead of taking the process down.  The
 * run's writes may not reach the buffers.  TG_EUNSUPPORTED when the
 * plugin has no trial entry or cannot run one now. */
int tg_program_trial(tg_program *p, const tg_launch_args *a,
                     double timeout_s);
/* The estimated work of one launch (the kernel's), which the counters
 * add up; 0 until set. */
void tg_program_set_cost(tg_program *p, double ops, double mem_bytes);
void tg_program_cost(const tg_program *p, double *ops, double *mem_bytes);
/* The plugin's program, the kernel's name, the device.  Borrowed. */
void *tg_program_impl(const tg_program *p);
const char *tg_program_name(const tg_program *p);
struct tg_dev *tg_program_dev(const tg_program *p);

/* ----------------------------------------------------- device/counters.c */
/* (public: tg_counters_*) */

/* One launch of p by a realize or a replay. */
void tg_counters_kernel(const tg_program *p);
/* One copy of `bytes` between buffers. */
void tg_counters_copy(size_t bytes, int peer);

/* -------------------------------------------------------- device/graph.c */

/* Launches on one device recorded once and run many times (the JIT's
 * replays) through the plugin's graph entries, or one launch call per
 * kernel where the plugin has none.  The launch structs and device
 * handles are built once; a replay patches what changed.  A graph is
 * used by one thread at a time; its programs must outlive it. */
typedef struct tg_graph tg_graph;

/* Records launches args[0..n-1] of progs[0..n-1] (all on one device),
 * for the plugin's graph when it has one and native is 1.  NULL on an
 * error (the message names the launch). */
tg_graph *tg_graph_new(tg_program *const *progs, const tg_launch_args *args,
                       size_t n, int native);
void tg_graph_free(tg_graph *g);
/* Sets buffer argument k of launch i (allocating the buffer). */
int tg_graph_set_buffer(tg_graph *g, size_t i, size_t k, tg_buffer *b);
/* Sets variable value k of launch i. */
void tg_graph_set_val(tg_graph *g, size_t i, size_t k, int64_t v);
/* Queues every launch in order (the device's synchronize waits). */
int tg_graph_run(tg_graph *g);
/* Whether the plugin's graph entries run it (else launch by launch). */
int tg_graph_native(const tg_graph *g);

/* ------------------------------------------------------- device/buffer.c */
/* (public: tg_buffer_*) */

/* Device handle of the buffer, allocating it first.  Borrowed. */
int tg_buffer_handle(tg_buffer *buf, void **out);
/* References held on buf now (a snapshot). */
int tg_buffer_refcount(const tg_buffer *buf);
/* Copies src into dst (same size, any devices): by the plugin's
 * allocator->transfer when both devices are its own and it can join
 * them (*peer = 1; peer may be NULL), else through host memory. */
int tg_buffer_transfer(tg_buffer *dst, tg_buffer *src, int *peer);

/* ----------------------------------------------------- device/profile.c */

/* PROFILE=1: one trace event, a kernel or a copy on device `dev`, that
 * started at start_s (tg_now_s) and took dur_s; the numbers go to the
 * event's args.  Thread-safe; OOM drops the event. */
typedef struct tg_profile_ev {
	const char *dev, *name, *cat;  /* copied */
	double start_s, dur_s, flops, bytes;
	size_t global[3], local[3];
	size_t nbufs;
} tg_profile_ev;
void tg_profile_event(const tg_profile_ev *ev);
/* Writes the events so far as Chrome trace JSON to PROFILEPATH (the
 * temporary directory's tgcore_profile.json by default) and forgets
 * them; nothing when there are none.  tg_shutdown and process exit
 * call it. */
int tg_profile_flush(void);

#endif /* TG_DEVICE_H */

/*
 * tg/tg.h - the tgcore application API.
 *
 * tgcore is a lazy tensor compiler whose accelerator backends are plugins
 * loaded at run time.  This header is everything an application may use;
 * backend authors read tg/plugin.h.
 *
 * Conventions (they hold for every function below):
 *  - Functions that can fail return NULL or a negative tg_status.  Then
 *    tg_last_error() says what went wrong, naming the operation and the
 *    values, e.g. "buffer_copyin: 64 bytes into a buffer of 16 bytes".
 *    The error is per thread and stays until the next failing call or
 *    tg_clear_error().  A NULL argument is such a failure, never a
 *    crash: a NULL array whose count is not 0 (a shape, axes, pairs, a
 *    tensor array) or a NULL out-pointer gives TG_EINVAL (or NULL) and
 *    "op: shape is NULL (n = 2)".
 *  - Every function that returns a pointer says who owns it:
 *    "New reference" (release it with the matching _unref/_free),
 *    "Borrowed" (valid as long as the object it came from).
 *  - The library initializes itself on first use (reading the config files
 *    and the environment); tg_shutdown() releases everything.
 *
 * Threads (the contract the library keeps and tests under
 * ThreadSanitizer):
 *  - Every function may be called from several threads at once, except
 *    tg_shutdown(), which must run alone.
 *  - Building tensors is concurrent.  A tensor may be shared between
 *    threads (its reference count is atomic).
 *  - Realizing is serialized: tg_realize(), tg_tensor_data() and the
 *    other calls that run kernels take one process-wide lock around
 *    scheduling and running, so two threads that realize one shared
 *    graph compute it once, and each sees the finished values.  Reading
 *    a tensor that is already realized only copies it out.
 *  - Kernels compile on the thread that needs them.  The renderer is
 *    re-entrant.  A kernel that two threads need at once is compiled by
 *    both, and one copy is kept.
 *  - Configuration calls are safe beside everything else (see
 *    tg_config_get).
 *  - Errors (tg_last_error), scopes, no-grad and training switches are
 *    per thread.
 */
#ifndef TG_TG_H
#define TG_TG_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TG_BUILDING_LIBRARY) && defined(__GNUC__)
#define TG_API __attribute__((visibility("default")))
#else
#define TG_API
#endif

#if defined(__GNUC__)
#define TG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TG_PRINTF(f, a)
#endif

/* ------------------------------------------------------------------ */
/* Status codes                                                        */
/* ------------------------------------------------------------------ */

typedef enum tg_status {
	TG_OK = 0,
	TG_EINVAL = -1,       /* bad argument from the caller */
	TG_ENOMEM = -2,       /* host or device memory exhausted */
	TG_ENODEV = -3,       /* no such device, or no usable device */
	TG_ECOMPILE = -4,     /* kernel source did not compile */
	TG_EPLUGIN = -5,      /* a plugin refused, misbehaved or is unusable */
	TG_ECONFIG = -6,      /* bad configuration file or value */
	TG_EIO = -7,          /* file or cache I/O failed */
	TG_EUNSUPPORTED = -8, /* the device cannot do this */
	TG_ERUNTIME = -9,     /* a device runtime call failed */
	TG_EINTERNAL = -10,   /* an internal invariant broke (a bug) */
	TG_ETIMEOUT = -11,    /* ran past its time limit and was stopped */
	TG_ECOMM = -12        /* communication between processes failed
	                       * (tg/dist.h: an MPI call, a peer gone) */
} tg_status;

/* The most negative status. */
#define TG_STATUS_MIN TG_ECOMM

/* Static name of a status, e.g. "TG_ENOMEM". */
TG_API const char *tg_status_name(int status);

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* The calling thread's last error message; never NULL ("" when none).
 * Borrowed: valid until the next tgcore call on this thread. */
TG_API const char *tg_last_error(void);
/* The status that went with tg_last_error(), TG_OK when none. */
TG_API int tg_last_status(void);
TG_API void tg_clear_error(void);
/* Sets the calling thread's last error and returns status (negative),
 * for libraries built on tgcore (tg/dist.h's libtgcore-dist is one), so
 * that their errors read like tgcore's own. */
TG_API int tg_set_error(int status, const char *fmt, ...) TG_PRINTF(2, 3);

/* ------------------------------------------------------------------ */
/* Data types                                                          */
/* ------------------------------------------------------------------ */

typedef enum tg_dtype {
	TG_BOOL,
	TG_INT8,
	TG_UINT8,
	TG_INT16,
	TG_UINT16,
	TG_INT32,
	TG_UINT32,
	TG_INT64,
	TG_UINT64,
	TG_FLOAT16,
	TG_BFLOAT16,
	TG_FLOAT32,
	TG_FLOAT64,
	TG_NDTYPES
} tg_dtype;

/* Bytes per element; 0 for a value outside the enum. */
TG_API size_t tg_dtype_size(tg_dtype dt);
/* Static name ("float32"); "invalid" for a value outside the enum. */
TG_API const char *tg_dtype_name(tg_dtype dt);
/* Whether dt is a float (float16, bfloat16, float32, float64), an integer
 * (bool is not one) or an unsigned integer; 0 outside the enum. */
TG_API int tg_dtype_is_float(tg_dtype dt);
TG_API int tg_dtype_is_int(tg_dtype dt);
TG_API int tg_dtype_is_unsigned(tg_dtype dt);
/* The type an operation on a and b computes in (tinygrad's promotion
 * lattice): int8 and uint8 give int16, int32 and float16 give float16,
 * int64 and uint64 give float16; TG_NDTYPES when either is outside the
 * enum. */
TG_API tg_dtype tg_dtype_least_upper(tg_dtype a, tg_dtype b);

/* ------------------------------------------------------------------ */
/* Library lifetime and configuration                                  */
/* ------------------------------------------------------------------ */

/* Reads the config files and environment once.  Called implicitly by the
 * first function that needs it; call it to see config errors early.
 * Returns TG_OK or the status of the failure (also on later calls). */
TG_API int tg_init(void);
/* Closes every device, unloads every plugin and frees all caches.  The
 * library may be used again afterwards (it re-reads the configuration).
 * No tgcore object may be used across a shutdown. */
TG_API void tg_shutdown(void);

/* Threads: tg_config_get, tg_config_int and tg_config_set may be called
 * from several threads at once, also while others build, compile and run
 * kernels; a reader sees the value from before or after a concurrent
 * set, never a mix.  A realize reads the settings it needs once, at its
 * start, so a set in the middle of one affects the next one.
 * tg_shutdown() must not run beside any other call. */

/* Value of a setting: API override, else environment, else the config
 * files.  `key` is "KEY" for the [core] section or "section.key".
 * Borrowed: valid until tg_shutdown(), even when another thread sets the
 * key again meanwhile (the library keeps each distinct value it held
 * until then); NULL when unset. */
TG_API const char *tg_config_get(const char *key);
/* Overrides a setting for this process (beats files and environment).
 * A NULL value removes the override.  Affects what is read afterwards:
 * settings read at start-up (plugin path) need a tg_shutdown(); DEBUG
 * takes effect at once. */
TG_API int tg_config_set(const char *key, const char *value);
/* Integer value of a setting, `def` when unset.  A value that is not
 * an integer (or yes/no) also gives `def`: read it with tg_config_get
 * and report it with tg_config_error where that matters. */
TG_API long tg_config_int(const char *key, long def);
/* Reports that the value of a setting cannot be used, and returns
 * TG_ECONFIG.  The error reads
 * "config: WHERE: [section] key: WHAT, got 'VALUE'", WHERE the file
 * and line, the environment variable or tg_config_set() it came from,
 * the value with control and non-UTF-8 bytes escaped, WHAT formatted
 * from fmt ("expected 1 to 1024"). */
TG_API int tg_config_error(const char *key, const char *fmt, ...)
	TG_PRINTF(2, 3);

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

typedef struct tg_dev tg_dev;

/* Opens (once) and returns a device by name: "CPU", "cuda:1", "OPENCL:0".
 * Names are canonicalized (upper case, ":0" dropped, aliases resolved:
 * CLANG -> CPU, GPU -> OPENCL).  NULL or "" gives the default device.
 * Borrowed: the library keeps devices open until tg_shutdown().
 *
 * The device "DISK:path" (any case before the colon) is tinygrad's DISK
 * device, built into the core: the file at path, memory-mapped.  It
 * holds data and runs no kernels.  A tensor of n bytes on it is the
 * file's first n bytes (the file is created, or grown to n bytes, when
 * it is shorter; a file that
 * cannot be written is mapped read-only): tg_empty(disk, ...) reads the
 * file, tg_to(x, disk) writes x there, tg_assign to a tensor on it (or a
 * slice of one) writes the file at once from a value on any device.  On
 * it, tg_shrink/tg_reshape to one contiguous range of the file and
 * tg_bitcast (which may change the element size there: the last axis
 * scales) are views of the file, read only when copied with tg_to;
 * anything else (math, a cast, a permute that is then copied) is refused
 * with the reason, when it is built or when it would run.  The file is
 * opened when a tensor on it is first used, and must be a regular file
 * (a directory, a FIFO or a device is refused, saying which); it must
 * not shrink while tensors on it are in use: the mapping's pages past
 * the new end raise SIGBUS when read.  DISK is never a default
 * device. */
TG_API tg_dev *tg_dev_get(const char *name);
/* The canonical name of the default device and a sentence saying which
 * rule chose it ("CPU=1 is set").  Borrowed; NULL (with an error) when no
 * device is usable. */
TG_API const char *tg_dev_default_name(const char **why);
/* Canonical name, "CPU" or "CUDA:1".  Borrowed. */
TG_API const char *tg_dev_name(const tg_dev *dev);
/* The plugin's description of the device ("pthreads x2, cc 12.2.0").
 * Borrowed. */
TG_API const char *tg_dev_description(const tg_dev *dev);
/* What a device is and can do (tg-info prints it). */
typedef struct tg_dev_info {
	const char *name;         /* "CPU", "OPENCL:1" */
	const char *description;  /* model and driver, one line */
	const char *type;         /* "CPU", "GPU", "IGPU" or "ACCEL" */
	const char *dialect;      /* "c", "opencl", "cuda", "glsl", "custom" */
	uint64_t total_memory;    /* bytes; 0 when unknown */
	uint64_t free_memory;     /* bytes; 0 when unknown */
	int has_local, has_shared;
	size_t local_max_total;   /* largest work-group */
	size_t shared_max;        /* bytes of shared memory per group */
	uint32_t dtype_mask;      /* bit (1u << tg_dtype) per usable dtype */
} tg_dev_info;

/* Fills `info`; strings are borrowed from the device. */
TG_API int tg_dev_get_info(tg_dev *dev, tg_dev_info *info);
/* Waits for all work queued on the device (on each of a group's). */
TG_API int tg_dev_synchronize(tg_dev *dev);

/* A device group: n (2 to 64) distinct devices named as one, the device
 * of tensors sharded or replicated across them (tinygrad's device tuple;
 * see tg_shard).  The same list gives the same group; borrowed like a
 * device.  Its name is the members' joined by ',' ("CPU,CPU:1").  A
 * group has no memory or kernels of its own: tg_buffer_new,
 * tg_program_new and tg_dev_get_info refuse it. */
TG_API tg_dev *tg_dev_group(tg_dev *const *devs, size_t n);
/* Members of a group (0 for a single device), and member i. */
TG_API size_t tg_dev_group_size(const tg_dev *dev);
TG_API tg_dev *tg_dev_group_member(const tg_dev *dev, size_t i);

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

typedef struct tg_buffer tg_buffer;

/* A buffer of `count` elements of `dt` on `dev`.  Device memory is
 * allocated lazily, on first copy or launch.  New reference. */
TG_API tg_buffer *tg_buffer_new(tg_dev *dev, size_t count, tg_dtype dt);
/* A view of `count` elements of `dt` starting `byte_offset` bytes into
 * `base` (which is kept alive by the view).  Needs a device whose
 * allocator supports offset views.  New reference. */
TG_API tg_buffer *tg_buffer_view(tg_buffer *base, size_t byte_offset,
                                 size_t count, tg_dtype dt);
/* Adds a reference; returns `buf`. */
TG_API tg_buffer *tg_buffer_ref(tg_buffer *buf);
/* Drops a reference; the last one frees the device memory (into the
 * device's memory cache).  NULL is allowed. */
TG_API void tg_buffer_unref(tg_buffer *buf);
TG_API size_t tg_buffer_nbytes(const tg_buffer *buf);
TG_API size_t tg_buffer_count(const tg_buffer *buf);
TG_API tg_dtype tg_buffer_dtype(const tg_buffer *buf);
/* Borrowed. */
TG_API tg_dev *tg_buffer_dev(const tg_buffer *buf);
/* Whether device memory exists yet. */
TG_API int tg_buffer_is_allocated(const tg_buffer *buf);
/* Allocates device memory now (no-op when it exists).  Memory is
 * aligned for any element type (the CPU backend uses 64 bytes). */
TG_API int tg_buffer_allocate(tg_buffer *buf);
/* Copies `nbytes` (at most the buffer's size) from host memory. */
TG_API int tg_buffer_copyin(tg_buffer *buf, const void *src, size_t nbytes);
/* Copies `nbytes` (at most the buffer's size) to host memory, after all
 * work queued on the device has finished. */
TG_API int tg_buffer_copyout(tg_buffer *buf, void *dst, size_t nbytes);

/*
 * Memory the caller owns.  A buffer can wrap memory that the core did
 * not allocate, without a copy, where the device can use it (its
 * plugin's allocator->wrap; the CPU plugin can, for memory aligned to
 * 64 bytes):
 *  - tg_buffer_from_host: host memory (on the CPU device, a tensor over
 *    an array of the caller's);
 *  - tg_buffer_from_native: the backend's own memory object (what
 *    tg_buffer_native gives; on the CPU a host pointer), say one another
 *    library allocated.
 * Lifetime: the memory must stay valid until the core calls
 * release(ctx), once, after the last reference to the buffer is gone
 * (tensors over it, and lazy results that read it, hold references).
 * release may be NULL when the caller knows that moment otherwise.  On
 * failure NULL is returned and release is not called.  Writes the core
 * makes (tg_assign, tg_setitem on a tensor over it) land in the memory.
 */
TG_API tg_buffer *tg_buffer_from_host(tg_dev *dev, tg_dtype dt,
                                      size_t count, void *data,
                                      void (*release)(void *ctx),
                                      void *ctx);
/* The same over the backend's own memory: `handle` is what
 * tg_buffer_native would return for such a buffer (a host pointer for
 * the CPU plugin, a cl_mem for OpenCL, a CUdeviceptr for CUDA). */
TG_API tg_buffer *tg_buffer_from_native(tg_dev *dev, tg_dtype dt,
                                        size_t count, void *handle,
                                        void (*release)(void *ctx),
                                        void *ctx);
/* The backend's handle of buf's memory (allocated now if need be):
 * for the CPU plugin a host pointer, for OpenCL a cl_mem, for CUDA a
 * CUdeviceptr; see the plugin's documentation.  Borrowed from buf.
 * Work the core queued may still be writing it: tg_dev_synchronize
 * before another library reads it. */
TG_API int tg_buffer_native(tg_buffer *buf, void **handle);
/* Whether buf is a view (tg_buffer_view) into another buffer. */
TG_API int tg_buffer_is_view(const tg_buffer *buf);

/* ------------------------------------------------------------------ */
/* Programs (compiled kernels)                                         */
/* ------------------------------------------------------------------ */

typedef struct tg_program tg_program;

/* Compiles `source` for `dev` (through the on-disk compile cache) and
 * loads the function `name` from it.  On a compile error returns NULL and
 * tg_last_error() holds the compiler's message.  New reference. */
TG_API tg_program *tg_program_new(tg_dev *dev, const char *name,
                                  const char *source);
/* Releases the program; NULL is allowed. */
TG_API void tg_program_free(tg_program *prog);

/* Launch geometry and arguments of one kernel run. */
typedef struct tg_launch_args {
	tg_buffer *const *bufs; /* kernel buffer arguments, in order */
	size_t nbufs;
	const int64_t *vals; /* symbolic variable values, in order */
	size_t nvals;
	size_t global[3]; /* global size (work-groups x local on GPUs) */
	size_t local[3];  /* work-group size; {1,1,1} when unused */
} tg_launch_args;

/* Runs the program.  When `elapsed_s` is not NULL, waits for the kernel
 * and stores its run time in seconds.  Allocates any unallocated buffer. */
TG_API int tg_program_launch(tg_program *prog, const tg_launch_args *args,
                             double *elapsed_s);

/* ------------------------------------------------------------------ */
/* Counters (tinygrad's GlobalCounters)                                */
/* ------------------------------------------------------------------ */

/* What the library has run since start-up or the last
 * tg_counters_reset(): kernels launched by realizes and JIT replays (a
 * BEAM search's timing runs and tg_program_launch calls do not count),
 * the operations and bytes those kernels were estimated to do, and the
 * copies between buffers.  Counted across threads. */
typedef struct tg_counters {
	uint64_t kernels;
	uint64_t copies;
	double ops;        /* estimated arithmetic operations */
	double mem_bytes;  /* estimated bytes the kernels moved */
	double copy_bytes; /* bytes the copies moved */
	uint64_t peer_copies; /* of the copies, those made device to device
	                         by the plugin (allocator->transfer), not
	                         through host memory */
} tg_counters;

/* Copies the counters since the last reset (or the start) into out. */
TG_API void tg_counters_get(tg_counters *out);
/* Sets every counter back to 0. */
TG_API void tg_counters_reset(void);

/* ------------------------------------------------------------------ */
/* Plugin introspection (what tg-info prints)                          */
/* ------------------------------------------------------------------ */

typedef enum tg_plugin_state {
	TG_PLUGIN_LOADED,   /* entry accepted; see probe fields */
	TG_PLUGIN_REFUSED,  /* could not be used; see `message` */
	TG_PLUGIN_SHADOWED, /* same name found earlier in the search path */
	TG_PLUGIN_DISABLED  /* excluded by TG_PLUGINS_DISABLE */
} tg_plugin_state;

/* One plugin file the search found, and what became of it. */
typedef struct tg_plugin_info {
	const char *file;        /* path tried */
	tg_plugin_state state;
	const char *message;     /* why refused/shadowed/disabled, or "" */
	const char *name;        /* canonical device name; NULL if unknown */
	const char *version;     /* plugin's version; NULL if unknown */
	const char *vendor;
	const char *description;
	int abi_major, abi_minor;
	int ndevices;            /* probe result; -1 when not probed */
	const char *probe_reason; /* why 0 devices; "" otherwise */
} tg_plugin_info;

/* Number of plugin files the search found (loads them on first call). */
TG_API size_t tg_plugin_count(void);
/* Fills `info` for file `i`; strings are borrowed until tg_shutdown(). */
TG_API int tg_plugin_get(size_t i, tg_plugin_info *info);
/* The state's name: "loaded", "refused", "shadowed" or "disabled";
 * "unknown" for a value outside the enum.  Static. */
TG_API const char *tg_plugin_state_name(tg_plugin_state state);

/* Search path entries in order, with where each came from ("TG_PLUGIN_PATH",
 * "config", "default").  Borrowed until tg_shutdown(). */
TG_API size_t tg_plugin_path_count(void);
TG_API const char *tg_plugin_path_get(size_t i, const char **origin);

/* ------------------------------------------------------------------ */
/* Tensors                                                             */
/* ------------------------------------------------------------------ */
/*
 * A tensor is a lazy value: building one records what to compute; the
 * work runs (fused into generated kernels) when a result is needed:
 * tg_tensor_data(), tg_tensor_item(), tg_realize().
 *
 * Ownership (the rules every tensor function follows):
 *  - Arguments are borrowed: no function consumes or frees a tensor it
 *    is given.
 *  - Every function returning a tg_tensor * returns a new reference.
 *    When a scope is open on the calling thread (tg_scope_begin), the
 *    scope holds that reference and drops it at tg_scope_end, unless the
 *    tensor was kept with tg_keep.  Outside any scope the caller owns it
 *    and releases it with tg_tensor_unref.
 *  - So expression chains need no cleanup inside a scope:
 *
 *        tg_scope_begin();
 *        tg_tensor *y = tg_contiguous(tg_permute(tg_reshape(x, 2, s),
 *                                                2, order));
 *        y = tg_keep(y);       // y survives the scope
 *        tg_scope_end();       // the reshape and permute temporaries go
 *        ...
 *        tg_tensor_unref(y);
 *
 *  - Scopes nest; tg_keep moves a tensor to the enclosing scope (or to
 *    the caller when the scope is the outermost).
 *
 * Errors: a failing function returns NULL and sets tg_last_error() to a
 * message naming the op and the shapes ("matmul: shapes (3,4) and (5,6)
 * don't match on the contracted axis (4 vs 5)").  Every function accepts
 * NULL tensor arguments and then returns NULL without touching the
 * error, so a chain is checked once, at its end, and the message is the
 * first failure's.
 *
 * Axes are ints; negative values count from the end.  Shapes are
 * int64_t arrays.  "Python scalar" arguments are doubles: with a float
 * tensor they take its dtype; with an int or bool tensor an integral
 * value takes the tensor's dtype and any other value promotes to the
 * default float (tinygrad's rule for Python ints and floats).
 */

typedef struct tg_tensor tg_tensor;

/* Scopes (per thread).  When there is no memory for a new scope, every
 * tensor function returns NULL (out of memory) until the matching
 * tg_scope_end, so no tensor escapes the scope the caller counts on. */
TG_API void tg_scope_begin(void);
/* Drops every reference the innermost scope holds.  Without an open
 * scope it does nothing. */
TG_API void tg_scope_end(void);
/* Takes t out of the innermost scope: it moves to the enclosing scope,
 * or to the caller when there is none.  Returns t (NULL stays NULL), or
 * NULL when there is no memory to move it: t then stays in the scope
 * and goes with it, so use the result, not t. */
TG_API tg_tensor *tg_keep(tg_tensor *t);

/* Adds a reference (owned by the caller, never by a scope); returns t. */
TG_API tg_tensor *tg_tensor_ref(tg_tensor *t);
/* Drops a reference.  NULL is allowed. */
TG_API void tg_tensor_unref(tg_tensor *t);

/* -- properties -- */
/* The number of dimensions (0 for a scalar, and for NULL). */
TG_API size_t tg_tensor_ndim(const tg_tensor *t);
/* The shape, ndim entries.  Borrowed from t. */
TG_API const int64_t *tg_tensor_shape(const tg_tensor *t);
/* Size of axis `axis` (negative counts from the end); -1 on a bad axis. */
TG_API int64_t tg_tensor_size(const tg_tensor *t, int axis);
TG_API int64_t tg_tensor_numel(const tg_tensor *t);
TG_API tg_dtype tg_tensor_dtype(const tg_tensor *t);
/* Borrowed. */
TG_API tg_dev *tg_tensor_dev(const tg_tensor *t);
/* "(2,3)" into buf (truncated), for messages; "(no buffer)" (static)
 * when buf is NULL. */
TG_API const char *tg_tensor_shape_str(const tg_tensor *t, char *buf,
                                       size_t n);

/* -- creation.  `dev` NULL means the default device.  -- */
/* A tensor of `shape` holding a copy of `data` (numel * dtype size
 * bytes, row-major); data NULL gives uninitialized memory (empty). */
TG_API tg_tensor *tg_tensor_new(tg_dev *dev, tg_dtype dt, size_t ndim,
                                const int64_t *shape, const void *data);
TG_API tg_tensor *tg_empty(tg_dev *dev, tg_dtype dt, size_t ndim,
                           const int64_t *shape);
TG_API tg_tensor *tg_full(tg_dev *dev, tg_dtype dt, size_t ndim,
                          const int64_t *shape, double value);
TG_API tg_tensor *tg_zeros(tg_dev *dev, tg_dtype dt, size_t ndim,
                           const int64_t *shape);
TG_API tg_tensor *tg_ones(tg_dev *dev, tg_dtype dt, size_t ndim,
                          const int64_t *shape);
/* A 0-dim tensor. */
TG_API tg_tensor *tg_tensor_scalar(tg_dev *dev, tg_dtype dt, double value);
/* Same shape, device (and dtype for the first three) as t. */
TG_API tg_tensor *tg_full_like(const tg_tensor *t, double value);
TG_API tg_tensor *tg_zeros_like(const tg_tensor *t);
TG_API tg_tensor *tg_ones_like(const tg_tensor *t);
TG_API tg_tensor *tg_empty_like(const tg_tensor *t);

/* -- results -- */
/* Computes t (and everything it needs) now. */
TG_API int tg_realize(tg_tensor *t);
/* Computes all n tensors with one schedule (shared work runs once). */
TG_API int tg_realize_many(tg_tensor *const *ts, size_t n);
/* Copies the values, row-major, into dst (nbytes must be at least
 * numel * dtype size). */
TG_API int tg_tensor_data(tg_tensor *t, void *dst, size_t nbytes);
/* The single element of a one-element tensor, as a double. */
TG_API int tg_tensor_item(tg_tensor *t, double *out);
/* A realized tensor over buf's memory, without a copy: its dtype and
 * device are buf's, shape's product must be its element count, and
 * buf must be a whole buffer (not a view).  The tensor holds a
 * reference to buf; the caller keeps its own.  Kernels that write buf
 * (tg_program_launch) change the tensor's values; the tensor's
 * assigns write buf. */
TG_API tg_tensor *tg_tensor_from_buffer(tg_buffer *buf, size_t ndim,
                                        const int64_t *shape);
/* t's memory, to hand to a kernel of the caller's or another library:
 * realizes t, which must then own its memory in order (not a view or a
 * constant: tg_contiguous first).  Row-major in t's shape.  New
 * reference.  Writes into it change t. */
TG_API tg_buffer *tg_tensor_buffer(tg_tensor *t);
/* The same values on another device (a lazy copy). */
TG_API tg_tensor *tg_to(const tg_tensor *t, tg_dev *dev);
/*
 * Multi-device tensors (tinygrad's shard and MultiLazyBuffer).
 * tg_shard(t, group, axis) splits t along axis (negative counts from
 * the end) over the members of a device group (tg_dev_group), in order:
 * the first members get ceil(rows / n) rows each and the last the rest;
 * a split that leaves a member no rows is refused.  tg_to(t, group)
 * gives every member a whole copy (replicated).  The result's device is
 * the group, its shape the whole tensor's.  Then:
 *  - elementwise ops run shard by shard; their operands must all be on
 *    the group (tg_full_like and friends make replicated constants);
 *    a replicated operand is sliced to the sharded one's rows, and one
 *    split along another axis is gathered to each member first;
 *  - a reduce over the split axis reduces each shard and then
 *    all-reduces the partial results (adds or maxes them on every
 *    member: directly, or around a ring of chunks, as the RING setting
 *    says), so that every member holds the same result, bit for bit:
 *    it is replicated.  Other reduces stay split;
 *  - reshape, permute, expand, pad, shrink and flip map the split axis
 *    through.  Refused with the reason: a reshape that would move
 *    elements between members, expanding, flipping or striding the
 *    split axis, a shrink of it to anything but one member's rows (or
 *    all), a pad of it that does not undo such a shrink, sliding
 *    windows (tg_pool and convolutions over the split axis);
 *  - tg_to(t, dev) gathers the shards on one device; reading the data
 *    gathers on the group's first member;
 *  - gradients flow back through tg_shard (to t's device), and tg_assign
 *    writes each shard in place, so optimizers work on replicated or
 *    sharded parameters (data-parallel training: parameters replicated,
 *    the batch sharded along axis 0).
 * A tensor with data on a group (tg_tensor_new), and random numbers
 * (tg_rand and the rest: the same stream as on one device), are made on
 * the first member and copied to the others.  The JIT captures steps
 * over tensors on groups: kernels on every member, the copies between
 * them, and outputs that keep their split.
 */
TG_API tg_tensor *tg_shard(const tg_tensor *t, tg_dev *group, int axis);
/* The axis t is split along, or -1 (one device, or replicated). */
TG_API int tg_shard_axis(const tg_tensor *t);
/* A tensor that will own its own contiguous memory. */
TG_API tg_tensor *tg_contiguous(const tg_tensor *t);
TG_API tg_tensor *tg_cast(const tg_tensor *t, tg_dtype dt);
/* Reinterprets the bits; the element size must match, except on DISK
 * (see tg_dev_get), where the last axis scales as in tinygrad. */
TG_API tg_tensor *tg_bitcast(const tg_tensor *t, tg_dtype dt);
/* t takes value's value (same shape, dtype and device); the tensor
 * object, and every reference to it, stays.  Lazy like everything
 * else: realize t to compute it.  When t is realized (and not a view),
 * the new value is computed into t's own memory (tinygrad's assign):
 * views of t and other tensors over that memory see it once it is
 * realized, and a JIT replay updates it in place.  The new value may
 * read t only element by element (t * 0.9 + g, not a flip or a sum of
 * t); else realize it first.  Kernels that read t's old value and are
 * realized together with the assign run before it.
 * When t is a view of realized memory (a slice of a realized tensor,
 * say), the value is written through the view into that memory, as
 * tinygrad's assign does: realize t to write it; then the tensor the
 * view was taken from, and its other views, see the new values when
 * they are next computed (not before t is realized).  The value is
 * computed in full first (one more kernel), so it may read anything.
 * Views that pad or broadcast cannot be written through.  A view at a
 * symbolic place (rows pos .. pos+n of a KV cache, pos a tg_variable)
 * is written where the variable points when the kernel runs, so a JIT
 * replay writes the row of each call's position.
 * On DISK the value (from any device) is written into the file at once
 * (see tg_dev_get). */
TG_API int tg_assign(tg_tensor *t, const tg_tensor *value);

/* -- movement and indexing (views: no data is copied) -- */
/* One entry may be -1 (inferred). */
TG_API tg_tensor *tg_reshape(const tg_tensor *t, size_t ndim,
                             const int64_t *shape);
/* Size-1 axes grow; -1 keeps an axis; new axes may be prepended. */
TG_API tg_tensor *tg_expand(const tg_tensor *t, size_t ndim,
                            const int64_t *shape);
/* New axis i is old axis order[i]. */
TG_API tg_tensor *tg_permute(const tg_tensor *t, size_t n, const int *order);
TG_API tg_tensor *tg_flip(const tg_tensor *t, const int *axes, size_t n);
/* n pairs [begin, end) per axis, n == ndim.  Pairs that keep every
 * axis whole give t itself (a new reference to the same tensor: no
 * graph node, no kernel; tinygrad returns self), as does a pad of all
 * zeros. */
TG_API tg_tensor *tg_shrink(const tg_tensor *t, size_t n,
                            const int64_t *pairs);
/* n pairs (before, after) for the first n axes; negative values crop. */
TG_API tg_tensor *tg_pad(const tg_tensor *t, size_t n, const int64_t *pairs,
                         double value);

/*
 * Semantics of the corners, the same on every backend (tests/test_ops.c
 * pins them), with tinygrad's mid-2024 behaviour where it differs:
 *  - NaN propagates through tg_maximum, tg_minimum, tg_relu (and the
 *    max/min reductions, argmax aside): a NaN operand gives NaN
 *    whichever side it is on, as in PyTorch.  tinygrad's maximum drops
 *    a NaN on its right (x < NaN is false, so it returns x) and its relu
 *    follows the backend's max.  The sign of a zero result of maximum
 *    or minimum of +0 and -0 is not specified.
 *  - tg_sign(NaN) is NaN (numpy, PyTorch, later tinygrad); tinygrad
 *    mid-2024 gives 1.  sign(+-0) is 0.
 *  - tg_mean of an empty tensor (or over an empty axis) is 0, as
 *    tinygrad's (PyTorch gives NaN); tg_sum is 0, tg_max of nothing is
 *    the dtype's lowest value.
 *  - tg_idiv of integers truncates toward zero (C, tinygrad's IDIV),
 *    while tg_mod takes the divisor's sign (Python's %, tinygrad's
 *    mod), so idiv(a, b) * b + mod(a, b) == a only when a and b have
 *    the same sign; tg_floor(tg_div(a, b)) is Python's //.  Integer
 *    division never traps, on any device: tg_idiv(a, 0) is 0
 *    (tinygrad's) and tg_mod(a, 0) is a, so the identity holds for a
 *    zero divisor too; the overflowing idiv(min, -1) wraps to min and
 *    mod(min, -1) is 0.  Float mod is a - b * floor(a / b).
 */

/* -- elementwise, unary -- */
#define TG_UNARY_OPS(X)                                                  \
	X(neg) X(log) X(log2) X(exp) X(exp2) X(sqrt) X(rsqrt) X(sin)       \
	X(cos) X(tan) X(trunc) X(ceil) X(floor) X(round) X(sign) X(abs)    \
	X(reciprocal) X(relu) X(sigmoid) X(tanh) X(silu) X(swish) X(relu6) \
	X(hardswish) X(gelu) X(quick_gelu) X(mish) X(softsign) X(sinh)     \
	X(cosh) X(atanh) X(asinh) X(acosh) X(logical_not) X(bitwise_not)   \
	X(square) X(hardsigmoid)
#define TG_DECLARE_UNARY(name) \
	TG_API tg_tensor *tg_##name(const tg_tensor *t);
/* tg_NAME(t) for each NAME above: tinygrad's Tensor.NAME, elementwise
 * (the notes above say what differs from C or PyTorch). */
TG_UNARY_OPS(TG_DECLARE_UNARY)
#undef TG_DECLARE_UNARY
/* The activations with a parameter, as tinygrad's. */
TG_API tg_tensor *tg_elu(const tg_tensor *t, double alpha);
TG_API tg_tensor *tg_celu(const tg_tensor *t, double alpha);
TG_API tg_tensor *tg_leakyrelu(const tg_tensor *t, double slope);
TG_API tg_tensor *tg_softplus(const tg_tensor *t, double beta);
/* t clamped to [lo, hi] (hardtanh's default is [-1, 1]). */
TG_API tg_tensor *tg_hardtanh(const tg_tensor *t, double lo, double hi);
/* t clamped to [lo, hi], as tinygrad's clip. */
TG_API tg_tensor *tg_clip(const tg_tensor *t, double lo, double hi);

/* -- elementwise, binary (numpy broadcasting, tinygrad promotion) -- */
#define TG_BINARY_OPS(X)                                                 \
	X(add) X(sub) X(mul) X(div) X(idiv) X(mod) X(pow) X(maximum)       \
	X(minimum) X(bitwise_xor) X(bitwise_and) X(bitwise_or) X(lshift)   \
	X(rshift) X(lt) X(le) X(gt) X(ge) X(eq) X(ne)
#define TG_DECLARE_BINARY(name)                                          \
	TG_API tg_tensor *tg_##name(const tg_tensor *a, const tg_tensor *b); \
	TG_API tg_tensor *tg_##name##_s(const tg_tensor *a, double b);
/* tg_NAME(a, b) for each NAME above, with numpy broadcasting and
 * tinygrad's dtype promotion, and tg_NAME_s(a, b) with a scalar b
 * (tinygrad's Tensor.NAME with a Python number); the comparisons give
 * bool. */
TG_BINARY_OPS(TG_DECLARE_BINARY)
#undef TG_DECLARE_BINARY
/* b - a, b / a, b ** a with a scalar b. */
TG_API tg_tensor *tg_rsub_s(const tg_tensor *a, double b);
TG_API tg_tensor *tg_rdiv_s(const tg_tensor *a, double b);
TG_API tg_tensor *tg_rpow_s(const tg_tensor *a, double b);
/* cond ? a : b, broadcast; cond is cast to bool. */
TG_API tg_tensor *tg_where(const tg_tensor *cond, const tg_tensor *a,
                           const tg_tensor *b);
TG_API tg_tensor *tg_where_s(const tg_tensor *cond, double a, double b);
/* t with `value` where mask is true. */
TG_API tg_tensor *tg_masked_fill(const tg_tensor *t, const tg_tensor *mask,
                                 double value);
/* a + (b - a) * w. */
TG_API tg_tensor *tg_lerp(const tg_tensor *a, const tg_tensor *b,
                          const tg_tensor *w);

/* start, start+step, ... below stop (above it when step < 0). */
TG_API tg_tensor *tg_arange(tg_dev *dev, tg_dtype dt, double start,
                            double stop, double step);
/* n x m with ones on the diagonal. */
TG_API tg_tensor *tg_eye(tg_dev *dev, tg_dtype dt, int64_t n, int64_t m);

/* -- random (Threefry2x32 computed on the device: the same numbers on
 * every backend for the same seed and call sequence) -- */
/* Seeds the random numbers and starts every device's counter again
 * (tinygrad's Tensor.manual_seed).  Without it the seed is the clock's
 * seconds at the first draw, as in tinygrad. */
TG_API void tg_manual_seed(uint64_t seed);
/* Uniform in [0, 1). */
TG_API tg_tensor *tg_rand(tg_dev *dev, tg_dtype dt, size_t ndim,
                          const int64_t *shape);
/* Standard normal (Box-Muller). */
TG_API tg_tensor *tg_randn(tg_dev *dev, tg_dtype dt, size_t ndim,
                           const int64_t *shape);
/* Integers in [low, high), int32. */
TG_API tg_tensor *tg_randint(tg_dev *dev, size_t ndim, const int64_t *shape,
                             int64_t low, int64_t high);
TG_API tg_tensor *tg_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                             const int64_t *shape, double low, double high);
TG_API tg_tensor *tg_normal(tg_dev *dev, tg_dtype dt, size_t ndim,
                            const int64_t *shape, double mean, double std);
/* Uniform in [-1, 1) scaled by 1/sqrt(numel). */
TG_API tg_tensor *tg_scaled_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                                    const int64_t *shape);
TG_API tg_tensor *tg_glorot_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                                    const int64_t *shape);
/* PyTorch's kaiming init with leaky-relu slope a (sqrt(5) in nn.Linear). */
TG_API tg_tensor *tg_kaiming_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                                     const int64_t *shape, double a);
TG_API tg_tensor *tg_kaiming_normal(tg_dev *dev, tg_dtype dt, size_t ndim,
                                    const int64_t *shape, double a);
/* tinygrad's multinomial: num_samples category indices (int32) drawn
 * with probabilities proportional to the non-negative weights t (k)
 * -> (num_samples), or per row of t (rows, k) -> (rows, num_samples).
 * Without replacement only one sample is supported (as in tinygrad).
 * A row of zero weights has no distribution (its CDF is 0/0): it gives
 * index 0, as tinygrad's does; negative weights are not checked.  One
 * tg_rand draw per sample, so tg_manual_seed fixes the result. */
TG_API tg_tensor *tg_multinomial(const tg_tensor *t, int64_t num_samples,
                                 int replacement);

/* -- reductions.  axes NULL: every axis (naxes ignored); otherwise the
 * naxes listed (0 reduces nothing).  keepdim keeps reduced axes as 1. -- */
/* The sum over the axes (0 over nothing). */
TG_API tg_tensor *tg_sum(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
/* The largest value over the axes. */
TG_API tg_tensor *tg_max(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
/* The smallest value over the axes. */
TG_API tg_tensor *tg_min(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
/* The mean over the axes. */
TG_API tg_tensor *tg_mean(const tg_tensor *t, const int *axes, size_t naxes,
                          int keepdim);
/* tinygrad's sum(acc_dtype=): t cast to acc, summed there, the result in
 * acc (tg_sum accumulates ints in int32/uint32 and halves in float32,
 * and gives halves back as halves).  tg_mean_acc likewise, acc a float
 * dtype. */
TG_API tg_tensor *tg_sum_acc(const tg_tensor *t, const int *axes,
                             size_t naxes, int keepdim, tg_dtype acc);
TG_API tg_tensor *tg_mean_acc(const tg_tensor *t, const int *axes,
                              size_t naxes, int keepdim, tg_dtype acc);
/* correction 1 is the sample variance. */
TG_API tg_tensor *tg_var(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim, double correction);
TG_API tg_tensor *tg_std(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim, double correction);
TG_API tg_tensor *tg_any(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
TG_API tg_tensor *tg_all(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
/* One axis, or TG_AXIS_NONE to treat t as flattened. */
#define TG_AXIS_NONE INT32_MIN
/* int32 indices of the first maximum/minimum. */
TG_API tg_tensor *tg_argmax(const tg_tensor *t, int axis, int keepdim);
TG_API tg_tensor *tg_argmin(const tg_tensor *t, int axis, int keepdim);
TG_API tg_tensor *tg_logsumexp(const tg_tensor *t, int axis, int keepdim);
TG_API tg_tensor *tg_softmax(const tg_tensor *t, int axis);
TG_API tg_tensor *tg_log_softmax(const tg_tensor *t, int axis);
TG_API tg_tensor *tg_cumsum(const tg_tensor *t, int axis);

/* t with axes d0 and d1 swapped (negative axes count from the end). */
TG_API tg_tensor *tg_transpose(const tg_tensor *t, int d0, int d1);
/* Axes start..end (inclusive) merged into one. */
TG_API tg_tensor *tg_flatten(const tg_tensor *t, int start, int end);
TG_API tg_tensor *tg_unflatten(const tg_tensor *t, int axis, size_t n,
                               const int64_t *sizes);
/* Removes axis (if its size is 1), or every size-1 axis for
 * TG_AXIS_NONE. */
TG_API tg_tensor *tg_squeeze(const tg_tensor *t, int axis);
TG_API tg_tensor *tg_unsqueeze(const tg_tensor *t, int axis);

/* Python's slice for one axis: start:stop:step with defaults. */
typedef struct tg_slice_spec {
	int64_t start, stop, step;
	/* flags: which of start/stop/step were given (others default) */
	unsigned has_start : 1, has_stop : 1, has_step : 1;
	/* an integer index instead of a slice (removes the axis) */
	unsigned is_index : 1;
} tg_slice_spec;
#define TG_SLICE_ALL ((tg_slice_spec){ 0, 0, 1, 0, 0, 0, 0 })
#define TG_SLICE(a, b) ((tg_slice_spec){ (a), (b), 1, 1, 1, 0, 0 })
#define TG_SLICE_STEP(a, b, s) ((tg_slice_spec){ (a), (b), (s), 1, 1, 1, 0 })
#define TG_INDEX_AT(i) ((tg_slice_spec){ (i), 0, 1, 1, 0, 0, 1 })
/* t[s0, s1, ...] for the first n axes (negative indices count from the
 * end, steps may be negative). */
TG_API tg_tensor *tg_slice(const tg_tensor *t, size_t n,
                           const tg_slice_spec *s);
/* One item of tg_index (Python's t[...]): a slice, an integer, None (a
 * new axis), an ellipsis, or a tensor of integer indices. */
typedef enum tg_index_kind {
	TG_INDEX_SLICE,    /* s: start:stop:step (TG_SLICE_ALL is ':') */
	TG_INDEX_INT,      /* s.start, negative from the end; drops the axis */
	TG_INDEX_NEWAXIS,  /* a new axis of size 1 */
	TG_INDEX_ELLIPSIS, /* as many ':' as the other items leave */
	TG_INDEX_TENSOR    /* tensor: indices along the axis */
} tg_index_kind;
/* One item of an index: a slice, an integer, None, ..., or a tensor. */
typedef struct tg_index_spec {
	tg_index_kind kind;
	tg_slice_spec s;
	const tg_tensor *tensor;
} tg_index_spec;
#define TG_IX_SLICE(a, b) \
	((tg_index_spec){ TG_INDEX_SLICE, TG_SLICE(a, b), NULL })
#define TG_IX_STEP(a, b, st) \
	((tg_index_spec){ TG_INDEX_SLICE, TG_SLICE_STEP(a, b, st), NULL })
#define TG_IX_ALL ((tg_index_spec){ TG_INDEX_SLICE, TG_SLICE_ALL, NULL })
#define TG_IX_INT(i) ((tg_index_spec){ TG_INDEX_INT, TG_INDEX_AT(i), NULL })
#define TG_IX_NEWAXIS \
	((tg_index_spec){ TG_INDEX_NEWAXIS, TG_SLICE_ALL, NULL })
#define TG_IX_ELLIPSIS \
	((tg_index_spec){ TG_INDEX_ELLIPSIS, TG_SLICE_ALL, NULL })
#define TG_IX_TENSOR(t) ((tg_index_spec){ TG_INDEX_TENSOR, TG_SLICE_ALL, (t) })
/*
 * t[ix0, ix1, ...] as tinygrad's and numpy's __getitem__.  Slices,
 * integers, new axes and the ellipsis make a view (no kernel).  Index
 * tensors (any integer dtype, on t's device) pick elements: their
 * shapes broadcast together into the result's index axes, which
 * replace the indexed axes where the index tensors stand next to each
 * other, and come first when a slice separates them (numpy's rule).
 * A negative index counts from the end once; an index still outside
 * [0, size) selects nothing and gives 0 (tinygrad's rule: the indices
 * live on the device, so there is no error).  Indexing by tensors is
 * one kernel (a one-hot mask and a sum), with gradients.
 *
 *     tg_index(x, 2, (tg_index_spec[]){ TG_IX_TENSOR(rows), TG_IX_ALL })
 *
 * is x[rows, :].  Bool masks are refused (their result's shape depends
 * on the data).
 */
TG_API tg_tensor *tg_index(const tg_tensor *t, size_t n,
                           const tg_index_spec *ix);
/* t[ix0, ...] = value (tinygrad's __setitem__): the view tg_index
 * gives (slices, ints, new axes, an ellipsis; no index tensors) is
 * written in t's memory, now: t is realized first, value is cast to
 * t's dtype, broadcast to the view's shape and computed in full before
 * it is written (so it may read t, as in x[1:] = x[:-1]), and the
 * write is realized before this returns.  Every tensor over t's memory
 * (t, views taken earlier or later) sees the new values when it is
 * next computed.  t must own its memory in order (a realized
 * contiguous tensor, not a view); neither may require a gradient.
 * tg_setitem_s writes one value. */
TG_API int tg_setitem(tg_tensor *t, size_t n, const tg_index_spec *ix,
                      const tg_tensor *value);
TG_API int tg_setitem_s(tg_tensor *t, size_t n, const tg_index_spec *ix,
                        double value);
/* out[i][j] = t[index[i][j]][j] along `axis` (torch.gather). */
TG_API tg_tensor *tg_gather(const tg_tensor *t, int axis,
                            const tg_tensor *index);
TG_API tg_tensor *tg_cat(const tg_tensor *const *ts, size_t n, int axis);
TG_API tg_tensor *tg_stack(const tg_tensor *const *ts, size_t n, int axis);
/* Tiles t reps[i] times along axis i (torch.repeat). */
TG_API tg_tensor *tg_repeat(const tg_tensor *t, size_t n,
                            const int64_t *reps);
/* Each element `repeats` times in a row along *axis (negative counts
 * from the end), or along t flattened when axis is NULL (tinygrad's
 * repeat_interleave: [a, b] -> [a, a, b, b]).  repeats >= 0. */
TG_API tg_tensor *tg_repeat_interleave(const tg_tensor *t, int64_t repeats,
                                       const int *axis);
/* Pieces of `size` along axis (the last may be smaller) into out[]
 * (room for *n on entry; the count on return).  New references. */
TG_API int tg_split(const tg_tensor *t, int64_t size, int axis,
                    tg_tensor **out, size_t *n);
/* Pieces of the given sizes (summing to the axis) into out[nsizes]. */
TG_API int tg_split_sizes(const tg_tensor *t, const int64_t *sizes,
                          size_t nsizes, int axis, tg_tensor **out);
/* `chunks` nearly equal pieces (as torch.chunk) into out (room for
 * chunks); the count in *n. */
TG_API int tg_chunk(const tg_tensor *t, size_t chunks, int axis,
                    tg_tensor **out, size_t *n);
/* Upper/lower triangle of the last two axes from diagonal k. */
TG_API tg_tensor *tg_triu(const tg_tensor *t, int64_t k);
TG_API tg_tensor *tg_tril(const tg_tensor *t, int64_t k);
/* An int tensor of class indices -> (..., num_classes) int32 0/1. */
TG_API tg_tensor *tg_one_hot(const tg_tensor *t, int64_t num_classes);

/* -- processing -- */
/* Batched, broadcasting matrix product (numpy matmul; 1-D operands
 * as vectors). */
TG_API tg_tensor *tg_matmul(const tg_tensor *a, const tg_tensor *b);
TG_API tg_tensor *tg_dot(const tg_tensor *a, const tg_tensor *b);
/* tinygrad's matmul(acc_dtype=): the products cast to acc and summed
 * there; the result is in acc.  (Without it, ints sum in int32/uint32
 * and halves in float32, and the result has the operands' dtype.) */
TG_API tg_tensor *tg_matmul_acc(const tg_tensor *a, const tg_tensor *b,
                                tg_dtype acc);
/* x @ w (+ bias); a 1-D w multiplies elementwise (tinygrad's linear). */
TG_API tg_tensor *tg_linear(const tg_tensor *x, const tg_tensor *w,
                            const tg_tensor *bias);

/* Options of the convolutions and pools; zero-initialize and set what
 * differs (0 strides/dilations mean 1, groups 0 means 1).  Entry i
 * belongs to spatial axis i (H before W); a 1-D convolution reads
 * entry 0 only, a 3-D one (D, H, W) entries 0 to 2. */
#define TG_CONV_MAX_DIMS 3
/* The options of a convolution or pool (above). */
typedef struct tg_conv_opts {
	int64_t stride[TG_CONV_MAX_DIMS];
	int64_t dilation[TG_CONV_MAX_DIMS];
	/* (before, after) zero padding of each spatial axis: for 2-D
	 * (top, bottom, left, right); negative amounts crop */
	int64_t padding[2 * TG_CONV_MAX_DIMS];
	int64_t groups;
	/* transposed convolutions only: added after each spatial axis */
	int64_t output_padding[TG_CONV_MAX_DIMS];
} tg_conv_opts;
/* A convolution with 1 to TG_CONV_MAX_DIMS spatial axes, as many as
 * the weight has past (out, in) (tinygrad's conv2d, which takes any):
 * x (N,Cin,S...), w (Cout,Cin/groups,K...), bias (Cout) or NULL ->
 * (N,Cout,O...), O = (S + pads - dilation*(K-1) - 1) / stride + 1. */
TG_API tg_tensor *tg_conv(const tg_tensor *x, const tg_tensor *w,
                          const tg_tensor *bias, const tg_conv_opts *opts);
/* tg_conv with x (N,Cin,H,W), w (Cout,Cin/groups,kh,kw). */
TG_API tg_tensor *tg_conv2d(const tg_tensor *x, const tg_tensor *w,
                            const tg_tensor *bias,
                            const tg_conv_opts *opts);
/* The transposed convolution (tinygrad's conv_transpose2d, any number
 * of spatial axes): x (N,Cin,S...), w (Cin,Cout/groups,K...) ->
 * (N,Cout,O...), O = (S-1)*stride - pads + dilation*(K-1) +
 * output_padding + 1. */
TG_API tg_tensor *tg_conv_transpose(const tg_tensor *x, const tg_tensor *w,
                                    const tg_tensor *bias,
                                    const tg_conv_opts *opts);
/* tg_conv_transpose with x and w 4-D. */
TG_API tg_tensor *tg_conv_transpose2d(const tg_tensor *x,
                                      const tg_tensor *w,
                                      const tg_tensor *bias,
                                      const tg_conv_opts *opts);
/* Einstein summation over n operands (tinygrad's einsum, with numpy's
 * rules): "ij,jk->ik" names each operand's axes with letters (case
 * matters); a label repeated inside an operand takes its diagonal
 * ("ii->i"); "..." stands for the axes no letter names, broadcast
 * right-aligned across operands ("...ij,...jk->...ik").  Without "->"
 * the output is the "..." axes, then the letters used exactly once, in
 * ASCII order.  Labels left out of the output are summed.  A size-1
 * axis broadcasts against its label's size in the other operands.
 * Spaces are ignored.  The result's dtype is the operands' product's;
 * an einsum that sums nothing is a view (no kernel). */
TG_API tg_tensor *tg_einsum(const char *formula, size_t n,
                            tg_tensor *const *xs);
/* Pools over the last two axes; stride 0 means the kernel size;
 * opts->padding and dilation apply. count_include_pad for avg. */
TG_API tg_tensor *tg_avg_pool2d(const tg_tensor *x, const int64_t kernel[2],
                                const tg_conv_opts *opts,
                                int count_include_pad);
TG_API tg_tensor *tg_max_pool2d(const tg_tensor *x, const int64_t kernel[2],
                                const tg_conv_opts *opts);
/* softmax(q k^T / sqrt(d) + mask) v; mask (bool: true keeps) or NULL;
 * is_causal masks the upper triangle. */
TG_API tg_tensor *tg_scaled_dot_product_attention(const tg_tensor *q,
                                                  const tg_tensor *k,
                                                  const tg_tensor *v,
                                                  const tg_tensor *mask,
                                                  int is_causal);

/* ------------------------------------------------------------------ */
/* Gradients                                                           */
/* ------------------------------------------------------------------ */
/*
 * Reverse-mode autograd (tinygrad's).  A tensor's requires_grad is -1
 * (undecided: an optimizer turns it on for its parameters), 0 or 1; an
 * op's result needs a gradient when one of its inputs does.  Every op
 * above has its gradient, made from the gradients of the primitives it
 * is built from.
 *
 *     tg_set_requires_grad(w, 1);
 *     loss = tg_mean(tg_square(tg_sub(tg_matmul(x, w), y)), NULL, 0, 0);
 *     tg_backward(loss, NULL);        // w's gradient: tg_grad(w)
 *
 * Gradients are lazy tensors like any other; realize them (an optimizer
 * step does) to compute them.  backward frees the graph it ran through;
 * gradients add up over several backward calls until tg_set_grad(t,
 * NULL) clears them.
 */
/* 1, 0, or -1 for undecided. */
TG_API int tg_requires_grad(const tg_tensor *t);
/* on: 1, 0 or -1. */
TG_API int tg_set_requires_grad(tg_tensor *t, int on);
/* t's gradient (borrowed; NULL when it has none yet). */
TG_API tg_tensor *tg_grad(const tg_tensor *t);
/* Replaces t's gradient (NULL clears it); takes a new reference. */
TG_API int tg_set_grad(tg_tensor *t, tg_tensor *g);
/* Computes the gradients of everything t was made from that requires
 * one, adding to their tg_grad().  t must be a one-element tensor unless
 * `gradient` (t's shape) is given. */
TG_API int tg_backward(tg_tensor *t, const tg_tensor *gradient);
/* The same values without a gradient history (requires_grad 0). */
TG_API tg_tensor *tg_detach(const tg_tensor *t);
/* Gradient recording on (1) or off (0) for this thread (tinygrad's
 * no_grad / inference mode); returns the previous setting. */
TG_API int tg_set_grad_enabled(int on);
TG_API int tg_is_grad_enabled(void);
/* Training mode for this thread (dropout and batch norm's batch
 * statistics, optimizer steps); returns the previous setting. */
TG_API int tg_set_training(int on);
TG_API int tg_is_training(void);

/* ------------------------------------------------------------------ */
/* Files written whole                                                 */
/* ------------------------------------------------------------------ */
/*
 * How tgcore writes every file (checkpoints, traces, graphs), for
 * programs to write theirs the same way: the data goes to a new file in
 * the target's directory, flushed to disk and renamed over the target
 * by tg_savefile_commit, so a reader, a crash or a second saver sees
 * the old file or a new one whole, never a mix.  The last of several
 * concurrent savers wins.  The new file has no name while it is written
 * (O_TMPFILE), so a killed saver leaves nothing behind, and gets a
 * fresh random one (".NAME.XXXXXXXXXXXX.tmp") only to be renamed: a
 * symlink or file planted in a shared directory is never followed,
 * written or reused.  Renaming replaces a symlink at `path` itself, not
 * the file it points to.  The file's mode is 0666 less the umask, as
 * fopen's.
 */
typedef struct tg_savefile tg_savefile;
/* Starts writing `path`; NULL with an error naming the path when the
 * directory does not exist or cannot be written. */
TG_API tg_savefile *tg_savefile_open(const char *path);
/* The stream to write to.  Borrowed: do not fclose it. */
TG_API FILE *tg_savefile_stream(tg_savefile *sf);
/* Marks the data as bad (a write of the caller's failed): commit then
 * refuses. */
TG_API void tg_savefile_fail(tg_savefile *sf);
/* Flushes, syncs and renames over the target; on any error (a write
 * that failed, a full disk) the target is untouched and the new data
 * gone.  Frees sf either way.  0 or a negative status. */
TG_API int tg_savefile_commit(tg_savefile *sf);
/* Drops the new data, leaving the target as it was; frees sf.  NULL is
 * allowed. */
TG_API void tg_savefile_discard(tg_savefile *sf);

/* ------------------------------------------------------------------ */
/* State: named tensors and safetensors files                          */
/* ------------------------------------------------------------------ */
/*
 * A tg_state is an ordered list of (name, tensor) pairs: a model's
 * parameters by name (tinygrad's state dict), or what a safetensors
 * file holds.  It keeps its own reference to each tensor.  Names are
 * non-empty UTF-8 strings, unique within a state.
 *
 * safetensors files: an 8-byte little-endian header length, a JSON
 * header naming each tensor's dtype, shape and byte range, then the
 * data (row-major, little-endian).  Loading refuses a malformed,
 * truncated or lying file (sizes, offsets, unknown dtypes) with a
 * message naming the file and the values, and never reads out of
 * bounds.
 */

typedef struct tg_state tg_state;

/* An empty state.  New; release it with tg_state_free. */
TG_API tg_state *tg_state_new(void);
/* Drops the state's tensor references and frees it.  NULL is allowed. */
TG_API void tg_state_free(tg_state *s);
/* Appends (name, t), taking a new reference to t (the caller keeps
 * its own).  Fails on an empty, non-UTF-8 or duplicate name.  A NULL t
 * (a failed expression) returns its error untouched. */
TG_API int tg_state_add(tg_state *s, const char *name, tg_tensor *t);
TG_API size_t tg_state_count(const tg_state *s);
/* The name and tensor of entry i, in insertion order.  Borrowed from
 * s; NULL (with an error) when i is out of range. */
TG_API const char *tg_state_name(const tg_state *s, size_t i);
TG_API tg_tensor *tg_state_tensor(const tg_state *s, size_t i);
/* The tensor named `name`.  Borrowed from s; NULL with the error
 * "state: no tensor named 'x'" when there is none. */
TG_API tg_tensor *tg_state_get(const tg_state *s, const char *name);

/* A state's metadata: the string pairs of a safetensors file's
 * "__metadata__" (tinygrad's safe_save(metadata=), the "format": "pt"
 * of PyTorch files).  Setting a key replaces its value; a NULL value
 * removes the key.  Keys are non-empty; both are valid UTF-8.  Keys
 * keep their insertion order. */
TG_API int tg_state_set_metadata(tg_state *s, const char *key,
                                 const char *value);
/* The value of key, borrowed from s; NULL with the error
 * "state_metadata: no metadata 'x'" when there is none. */
TG_API const char *tg_state_metadata(const tg_state *s, const char *key);
TG_API size_t tg_state_metadata_count(const tg_state *s);
/* Key i in insertion order, borrowed; NULL (with an error) past the
 * end. */
TG_API const char *tg_state_metadata_key(const tg_state *s, size_t i);

/* Writes s to `path` as safetensors: realizes every tensor with one
 * schedule, then writes the file whole or not at all (tg_savefile).  The metadata first, as "__metadata__" (when there is
 * any), then the tensors in insertion order, the header padded with
 * spaces to a multiple of 8 bytes. */
TG_API int tg_safetensors_save(const tg_state *s, const char *path);
/* Reads a safetensors file: the tensors in header order, each on `dev`
 * (NULL: the default device; a DISK device: views of the file).  The
 * header is read and checked and the file mapped now, through its DISK
 * device; each tensor's bytes are read when it is first realized
 * (tinygrad's lazy safe_load), so only the tensors used are read.  They
 * read the file that was loaded even if another replaces it by rename
 * (as tg_safetensors_save does); writes into the file itself show, and
 * truncating it while they are in use raises SIGBUS as on DISK.  Only a
 * regular file is read: a directory, a FIFO or a device is refused
 * with a message saying which.  "__metadata__" becomes the state's
 * metadata (a repeated key: its last value; a NUL in a key or
 * value is refused).  New; release it with tg_state_free. */
TG_API tg_state *tg_safetensors_load(const char *path, tg_dev *dev);
/* Loads src's values into dst's tensors (a checkpoint into a model's
 * parameters): each tensor of dst takes, with tg_assign, the value of
 * src's tensor of the same name (moved to its device if need be), and
 * the assigned tensors are realized.  Shapes and dtypes must match.
 * When strict, a name of dst missing from src and a name of src missing
 * from dst are errors; otherwise both are skipped.  Everything is
 * checked first: on an error no tensor of dst has changed. */
TG_API int tg_state_load(const tg_state *dst, const tg_state *src,
                         int strict);

/* The element types of GGML and GGUF files, numbered as ggml.h numbers
 * them (a GGUF tensor's type field).  A quantized type stores blocks:
 * tg_ggml_type_block gives the elements and bytes of one. */
typedef enum tg_ggml_type {
	TG_GGML_F32 = 0, TG_GGML_F16 = 1, TG_GGML_Q4_0 = 2, TG_GGML_Q4_1 = 3,
	TG_GGML_Q5_0 = 6, TG_GGML_Q5_1 = 7, TG_GGML_Q8_0 = 8, TG_GGML_Q8_1 = 9,
	TG_GGML_Q2_K = 10, TG_GGML_Q3_K = 11, TG_GGML_Q4_K = 12,
	TG_GGML_Q5_K = 13, TG_GGML_Q6_K = 14, TG_GGML_Q8_K = 15,
	TG_GGML_IQ2_XXS = 16, TG_GGML_IQ2_XS = 17, TG_GGML_IQ3_XXS = 18,
	TG_GGML_IQ1_S = 19, TG_GGML_IQ4_NL = 20, TG_GGML_IQ3_S = 21,
	TG_GGML_IQ2_S = 22, TG_GGML_IQ4_XS = 23, TG_GGML_I8 = 24,
	TG_GGML_I16 = 25, TG_GGML_I32 = 26, TG_GGML_I64 = 27,
	TG_GGML_F64 = 28, TG_GGML_IQ1_M = 29, TG_GGML_BF16 = 30,
	TG_GGML_TQ1_0 = 34, TG_GGML_TQ2_0 = 35, TG_GGML_MXFP4 = 39,
	TG_GGML_NTYPES = 40
} tg_ggml_type;
/* The type's name as ggml spells it ("Q4_K", "BF16"); NULL for a number
 * that names no type. */
TG_API const char *tg_ggml_type_name(int type);
/* One block of the type: *elems values in *bytes bytes (1 value for
 * F32, F16, BF16 and the integer types; 32 or 256 for quantized ones).
 * TG_EINVAL with a message naming the number for one that names no
 * type. */
TG_API int tg_ggml_type_block(int type, size_t *elems, size_t *bytes);
/* The values of `raw`, a uint8 tensor (any shape) holding a GGML
 * tensor's bytes: blocks of `type`, as many as a tensor of `shape`
 * (ndim entries, row-major, each row whole blocks) takes.  Returns them
 * as a tensor of that shape: float32 for the quantized types (Q4_0,
 * Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K) and F32; F16 as float16 and
 * BF16 as bfloat16, their own bits (as tinygrad's ggml_data_to_tensor:
 * a weight keeps 2 bytes where it is materialized, and widens to
 * float32 exactly where a float32 operand meets it), or as float32
 * (the same values) on a device without that dtype; F64 as float64;
 * I8, I16, I32 and I64 as int8 ... int64.  The values are the gguf
 * package's (gguf.quants.dequantize), bit for bit.
 * Lazy: the result is tensor ops on views of raw (shifts, masks, casts,
 * products in float32), decoded on raw's device when it is computed,
 * never on the host, so they fuse into the kernel that consumes them (a
 * matvec with the weight reads its packed bytes once); raw on DISK must
 * be copied to a device that runs kernels first (tg_to).  Quantized
 * types need uint8 and uint32 on that device, not float16.  A new
 * reference; NULL for a NULL raw (the error untouched, as tensor
 * functions do), and NULL with TG_EINVAL and a message naming the type
 * for a number that is no GGML type, a type not listed here, raw not
 * uint8, a negative dimension, rows that are not whole blocks, or a
 * byte count other than the shape's. */
TG_API tg_tensor *tg_ggml_dequantize(const tg_tensor *raw, int type,
                                     size_t ndim, const int64_t *shape);

/*
 * GGUF files (llama.cpp's format for language models), versions 2 and
 * 3, little-endian (a big-endian file is refused, saying so): a header,
 * typed key-value metadata, then tensor infos (name, dims, ggml type,
 * offset) and the tensors' bytes.  tg_gguf_open reads and checks all
 * of the metadata and every tensor's info at once, and maps the file
 * through its DISK device; a tensor's bytes are read only when a
 * tensor made from them is realized.  A truncated or hostile file
 * (counts or offsets beyond the file, overlapping or misaligned
 * tensors, unknown types, a NUL in a key, duplicate keys or tensor
 * names, absurd dims) is refused with a message "gguf_open: PATH: ..."
 * naming the key or the tensor.
 *
 * Keys are returned NUL-terminated; string values are too, with their
 * length (a value may hold a NUL).  Everything returned is borrowed
 * from the tg_gguf and lives until tg_gguf_close.  Arrays may hold
 * arrays (the format allows it; nothing known uses it): such a value is
 * read and checked, and tg_gguf_get_array reports TG_GGUF_ARRAY
 * elements and their count, but their own elements are not reachable
 * through this API.
 */
typedef struct tg_gguf tg_gguf;
/* GGUF metadata value types (the spec's numbers). */
typedef enum tg_gguf_vtype {
	TG_GGUF_UINT8 = 0, TG_GGUF_INT8 = 1, TG_GGUF_UINT16 = 2,
	TG_GGUF_INT16 = 3, TG_GGUF_UINT32 = 4, TG_GGUF_INT32 = 5,
	TG_GGUF_FLOAT32 = 6, TG_GGUF_BOOL = 7, TG_GGUF_STRING = 8,
	TG_GGUF_ARRAY = 9, TG_GGUF_UINT64 = 10, TG_GGUF_INT64 = 11,
	TG_GGUF_FLOAT64 = 12
} tg_gguf_vtype;
/* Opens a GGUF file: the header, every key-value pair and every tensor
 * info read and checked, the file mapped through its DISK device.  Only
 * a regular file is read.  NULL with a message on any error.  New;
 * release it with tg_gguf_close. */
TG_API tg_gguf *tg_gguf_open(const char *path);
/* Frees g.  Tensors made from it stay valid (they hold the file's DISK
 * buffer).  NULL is allowed. */
TG_API void tg_gguf_close(tg_gguf *g);
/* The file's format version: 2 or 3. */
TG_API uint32_t tg_gguf_version(const tg_gguf *g);
/* The DISK device the file is mapped through ("DISK:path"): what
 * tg_gguf_tensor_raw takes for a view of the file.  Borrowed; NULL for
 * a NULL g. */
TG_API tg_dev *tg_gguf_disk(const tg_gguf *g);
/* The alignment of the tensors' data: general.alignment (a uint32 that
 * is a power of two), else 32. */
TG_API size_t tg_gguf_alignment(const tg_gguf *g);
/* The key-value pairs, in the file's order. */
TG_API size_t tg_gguf_kv_count(const tg_gguf *g);
/* Key i; NULL with an error past the end. */
TG_API const char *tg_gguf_kv_key(const tg_gguf *g, size_t i);
/* The index of key, -1 when absent (no error set). */
TG_API long tg_gguf_kv_find(const tg_gguf *g, const char *key);
/* The tg_gguf_vtype of pair i; TG_EINVAL past the end. */
TG_API int tg_gguf_kv_type(const tg_gguf *g, size_t i);
/* The name of a value type ("uint32", "string"); NULL for a number that
 * names none. */
TG_API const char *tg_gguf_vtype_name(int vtype);
/* The value of key as an integer: any integer type or bool (a uint64
 * above INT64_MAX is refused).  A missing key or another type:
 * TG_EINVAL with a message naming the key and its type. */
TG_API int tg_gguf_get_int(const tg_gguf *g, const char *key, int64_t *out);
/* The value of key as a double: float32, float64, or an integer type
 * (converted). */
TG_API int tg_gguf_get_float(const tg_gguf *g, const char *key,
                             double *out);
/* The string value of key, NUL-terminated, its length in *len (when
 * len is not NULL).  NULL with a message when missing or not a
 * string. */
TG_API const char *tg_gguf_get_str(const tg_gguf *g, const char *key,
                                   size_t *len);
/* An array value: its elements' tg_gguf_vtype and their count. */
TG_API int tg_gguf_get_array(const tg_gguf *g, const char *key,
                             int *elem_vtype, size_t *count);
/* Element i of an array value, as tg_gguf_get_str, tg_gguf_get_int and
 * tg_gguf_get_float read a value: an index past the end, a key that is
 * not an array or elements of another type are refused with a
 * message. */
TG_API const char *tg_gguf_array_str(const tg_gguf *g, const char *key,
                                     size_t i, size_t *len);
TG_API int tg_gguf_array_int(const tg_gguf *g, const char *key, size_t i,
                             int64_t *out);
TG_API int tg_gguf_array_float(const tg_gguf *g, const char *key, size_t i,
                               double *out);
/* The tensors, in the file's order. */
TG_API size_t tg_gguf_tensor_count(const tg_gguf *g);
/* The index of the tensor named name, -1 when absent (no error set). */
TG_API long tg_gguf_tensor_find(const tg_gguf *g, const char *name);
/* Tensor i's name; NULL with an error past the end (as for every
 * tg_gguf_tensor_* function). */
TG_API const char *tg_gguf_tensor_name(const tg_gguf *g, size_t i);
/* Tensor i's tg_ggml_type; TG_EINVAL past the end. */
TG_API int tg_gguf_tensor_type(const tg_gguf *g, size_t i);
/* Tensor i's dims into shape (room for 4): row-major (PyTorch) order,
 * GGUF's ne reversed, so a (rows, cols) matrix has ne = {cols, rows}.
 * Returns the number of dims (0 past the end, with an error). */
TG_API size_t tg_gguf_tensor_shape(const tg_gguf *g, size_t i,
                                   int64_t *shape);
/* Tensor i's size in bytes (blocks times the block's bytes); 0 past
 * the end. */
TG_API uint64_t tg_gguf_tensor_nbytes(const tg_gguf *g, size_t i);
/* Where tensor i's bytes start in the file (the data section's start
 * plus its offset); 0 past the end. */
TG_API uint64_t tg_gguf_tensor_offset(const tg_gguf *g, size_t i);
/* Tensor i's bytes as a lazy uint8 tensor of shape (nbytes,), read from
 * the file when it is realized: on dev (NULL: the default device), or,
 * on the file's DISK device, a view of the file.  New reference. */
TG_API tg_tensor *tg_gguf_tensor_raw(const tg_gguf *g, size_t i,
                                     tg_dev *dev);

/* ------------------------------------------------------------------ */
/* Losses and optimizers                                               */
/* ------------------------------------------------------------------ */

/* Mean cross-entropy of logits (..., C) against int class labels (...);
 * labels equal to ignore_index count for nothing; label_smoothing in
 * [0, 1] mixes in the mean log-probability (tinygrad's). */
TG_API tg_tensor *tg_sparse_categorical_crossentropy(const tg_tensor *logits,
                                                     const tg_tensor *labels,
                                                     int64_t ignore_index,
                                                     double label_smoothing);
/* Mean binary cross-entropy of probabilities p against targets y. */
TG_API tg_tensor *tg_binary_crossentropy(const tg_tensor *p,
                                         const tg_tensor *y);
/* The same from logits, computed stably. */
TG_API tg_tensor *tg_binary_crossentropy_logits(const tg_tensor *logits,
                                                const tg_tensor *y);

/*
 * Optimizers (tinygrad's).  An optimizer takes references to the
 * tensors given: those with requires_grad undecided (-1) become its
 * parameters (requires_grad 1); those with 0 are buffers it realizes
 * with every step (batch-norm statistics).  A training step:
 *
 *     tg_optim_zero_grad(opt);
 *     loss = ...;  tg_backward(loss, NULL);
 *     tg_optim_step(opt, &loss, 1);   // also computes loss, one schedule
 *
 * The learning rate is a tensor, so changing it (tg_optim_set_lr) does
 * not recompile anything.
 */
typedef struct tg_optim tg_optim;
/* SGD with momentum, Nesterov momentum and weight decay. */
TG_API tg_optim *tg_optim_sgd(tg_tensor *const *params, size_t n, double lr,
                              double momentum, double weight_decay,
                              int nesterov);
/* LARS: SGD scaled per tensor by the trust ratio tcoef |w| / (|g| + wd
 * |w|); classic applies the rate before momentum. */
TG_API tg_optim *tg_optim_lars(tg_tensor *const *params, size_t n,
                               double lr, double momentum,
                               double weight_decay, int nesterov,
                               int classic, double tcoef);
TG_API tg_optim *tg_optim_adam(tg_tensor *const *params, size_t n,
                               double lr, double b1, double b2, double eps);
/* Adam with decoupled weight decay. */
TG_API tg_optim *tg_optim_adamw(tg_tensor *const *params, size_t n,
                                double lr, double b1, double b2, double eps,
                                double weight_decay);
/* LAMB: AdamW scaled per tensor by |w| / |update|; adam 1 drops that
 * ratio (which is what tg_optim_adam/adamw are). */
TG_API tg_optim *tg_optim_lamb(tg_tensor *const *params, size_t n,
                               double lr, double b1, double b2, double eps,
                               double weight_decay, int adam);
TG_API void tg_optim_free(tg_optim *o);
/* Clears the parameters' gradients. */
TG_API int tg_optim_zero_grad(tg_optim *o);
/* Updates every parameter from its gradient and realizes parameters,
 * buffers, the optimizer's state and the `extra` tensors together. */
TG_API int tg_optim_step(tg_optim *o, tg_tensor *const *extra,
                         size_t nextra);
/* tinygrad's schedule_step: assigns every parameter (and the state) its
 * update, lazily, and gives in *out the tensors a step must realize,
 * so that the caller realizes them together with its own
 * (tg_realize_many) or inside a JIT step; tg_optim_step is this and
 * the realize.  *out is malloc'd (free it), its tensors borrowed from
 * the optimizer. */
TG_API int tg_optim_schedule_step(tg_optim *o, tg_tensor ***out,
                                  size_t *nout);
/* tinygrad's OptimizerGroup: one optimizer that zero_grads and steps n
 * others (different optimizers for different parameters) as one, in
 * one schedule.  The group takes the n optimizers: tg_optim_free of
 * the group frees them, and they must not be freed on their own (their
 * pointers stay usable, for their rates).  On failure the caller keeps
 * them.  A group's rate: tg_optim_set_lr sets every member's;
 * tg_optim_lr is an error. */
TG_API tg_optim *tg_optim_group(tg_optim *const *opts, size_t n);
/* The learning rate, a (1,) float32 tensor (borrowed). */
TG_API tg_tensor *tg_optim_lr(tg_optim *o);
TG_API int tg_optim_set_lr(tg_optim *o, double lr);

/* ------------------------------------------------------------------ */
/* Neural network layers                                               */
/* ------------------------------------------------------------------ */
/*
 * tinygrad's nn layers.  A layer is a plain struct the caller provides;
 * it owns its parameter tensors (one reference each, held outside any
 * scope, so a scope open around init does not take them).
 *
 *  - _init fills the struct (zeroing it first) and returns 0 or a
 *    negative status with tg_last_error() naming the layer and the
 *    values ("groupnorm: 3 groups don't divide 8 channels").  On an
 *    error the struct is left zeroed.
 *  - _forward returns a new reference, as every tensor op does (held by
 *    the open scope, if any); NULL on an error, and NULL for a NULL
 *    input without touching the error.
 *  - _free drops the tensors and zeroes the struct; NULL is allowed.
 *  - _params adds the layer's tensors to a state under "prefix.weight",
 *    "prefix.bias", ... (tinygrad's get_state_dict names; a NULL or ""
 *    prefix gives the bare names); a disabled bias is left out.
 *
 * Parameters are lazy (realize them, or let an optimizer do it) and in
 * the default float dtype (DEFAULT_FLOAT, float32).  Weights and biases
 * have requires_grad -1 (an optimizer turns it on); running statistics
 * have 0.  Initializations are PyTorch's: uniform(-b, b) with
 * b = 1/sqrt(fan_in), where fan_in is the product of the weight's shape
 * after its first axis.
 */

/* y = x @ weight^T + bias.  weight (out, in), bias (out) or NULL;
 * both uniform(-1/sqrt(in), 1/sqrt(in)). */
typedef struct tg_nn_linear {
	tg_tensor *weight, *bias;
} tg_nn_linear;
/* Makes the layer's tensors on dev (NULL: the default device),
 * initialized as above; 0, or a negative status with tg_last_error. */
TG_API int tg_nn_linear_init(tg_nn_linear *m, tg_dev *dev, int64_t in,
                             int64_t out, int bias);
/* x (..., in) -> (..., out).  New reference. */
TG_API tg_tensor *tg_nn_linear_forward(const tg_nn_linear *m,
                                       const tg_tensor *x);
TG_API void tg_nn_linear_free(tg_nn_linear *m);

/* A 2-D convolution.  weight (cout, cin/groups, kh, kw),
 * kaiming_uniform(a = sqrt(5)) (bound 1/sqrt(cin/groups*kh*kw)); bias
 * (cout) uniform with the same bound, or NULL.  opts as tg_conv2d's
 * (NULL: stride 1, no padding, dilation 1, one group), stored with
 * zeros replaced by their defaults. */
typedef struct tg_nn_conv2d {
	tg_tensor *weight, *bias;
	tg_conv_opts opts;
} tg_nn_conv2d;
/* Makes the layer's tensors on dev (NULL: the default device),
 * initialized as above; 0, or a negative status with tg_last_error. */
TG_API int tg_nn_conv2d_init(tg_nn_conv2d *m, tg_dev *dev, int64_t cin,
                             int64_t cout, const int64_t kernel[2],
                             const tg_conv_opts *opts, int bias);
/* x (N, cin, H, W) -> (N, cout, OH, OW).  New reference. */
TG_API tg_tensor *tg_nn_conv2d_forward(const tg_nn_conv2d *m,
                                       const tg_tensor *x);
TG_API void tg_nn_conv2d_free(tg_nn_conv2d *m);

/* A 1-D convolution (tinygrad's Conv1d).  weight (cout, cin/groups, k)
 * as PyTorch's, initialized as Conv2d's (bound 1/sqrt(cin/groups*k)). */
typedef struct tg_nn_conv1d {
	tg_tensor *weight, *bias;
	int64_t stride, padding, dilation, groups;
} tg_nn_conv1d;
/* stride, dilation and groups 0 mean 1; padding on both ends. */
TG_API int tg_nn_conv1d_init(tg_nn_conv1d *m, tg_dev *dev, int64_t cin,
                             int64_t cout, int64_t k, int64_t stride,
                             int64_t padding, int64_t dilation,
                             int64_t groups, int bias);
/* x (N, cin, L) -> (N, cout, OL).  New reference. */
TG_API tg_tensor *tg_nn_conv1d_forward(const tg_nn_conv1d *m,
                                       const tg_tensor *x);
TG_API void tg_nn_conv1d_free(tg_nn_conv1d *m);

/* A transposed 2-D convolution.  weight (cin, cout/groups, kh, kw) as
 * tinygrad's and PyTorch's, kaiming_uniform(a = sqrt(5)) (bound
 * 1/sqrt(cout/groups*kh*kw)); bias (cout) with the same bound, or NULL.
 * opts as tg_conv_transpose2d's, output_padding included. */
typedef struct tg_nn_conv_transpose2d {
	tg_tensor *weight, *bias;
	tg_conv_opts opts;
} tg_nn_conv_transpose2d;
/* Makes the layer's tensors on dev (NULL: the default device),
 * initialized as above; 0, or a negative status with tg_last_error. */
TG_API int tg_nn_conv_transpose2d_init(tg_nn_conv_transpose2d *m,
                                       tg_dev *dev, int64_t cin,
                                       int64_t cout, const int64_t kernel[2],
                                       const tg_conv_opts *opts, int bias);
/* x (N, cin, H, W) -> (N, cout, OH, OW).  New reference. */
TG_API tg_tensor *tg_nn_conv_transpose2d_forward(
	const tg_nn_conv_transpose2d *m, const tg_tensor *x);
TG_API void tg_nn_conv_transpose2d_free(tg_nn_conv_transpose2d *m);

/* A transposed 1-D convolution (tinygrad's ConvTranspose1d).  weight
 * (cin, cout/groups, k), kaiming_uniform(a = sqrt(5)) (bound
 * 1/sqrt(cout/groups*k)); bias (cout) with the same bound, or NULL.
 * opts as tg_conv_transpose's for one spatial axis: entry 0 of stride,
 * dilation and output_padding, padding[0] before and padding[1] after
 * (NULL: stride 1, no padding, dilation 1, one group). */
typedef struct tg_nn_conv_transpose1d {
	tg_tensor *weight, *bias;
	tg_conv_opts opts;
} tg_nn_conv_transpose1d;
/* Makes the layer's tensors on dev (NULL: the default device),
 * initialized as above; 0, or a negative status with tg_last_error. */
TG_API int tg_nn_conv_transpose1d_init(tg_nn_conv_transpose1d *m,
                                       tg_dev *dev, int64_t cin,
                                       int64_t cout, int64_t k,
                                       const tg_conv_opts *opts, int bias);
/* x (N, cin, L) -> (N, cout, OL).  New reference. */
TG_API tg_tensor *tg_nn_conv_transpose1d_forward(
	const tg_nn_conv_transpose1d *m, const tg_tensor *x);
TG_API void tg_nn_conv_transpose1d_free(tg_nn_conv_transpose1d *m);

/* Batch normalization over axis 1 of a (N, C, ...) input (tinygrad's
 * BatchNorm, for 2-D to N-D inputs).  weight ones and bias zeros (C)
 * when affine, else NULL; running_mean zeros, running_var ones (C) and
 * num_batches_tracked zeros (1), always present, requires_grad 0.
 *
 * In training mode (tg_is_training()) the output uses the batch's
 * statistics: the mean over every axis but 1 and the variance as the
 * mean of the squared deviations from that (detached) mean.  When
 * track_running_stats is set, the forward call also assigns (tg_assign)
 *     running_mean = (1 - momentum) running_mean + momentum mean
 *     running_var  = (1 - momentum) running_var
 *                    + momentum n/(n-1) var   (n values per channel)
 *     num_batches_tracked += 1
 * These updates are lazy like everything else: the caller realizes
 * them, e.g. by passing them to tg_realize_many with the loss or by
 * listing them (tg_nn_batchnorm_params) with what the optimizer step
 * realizes.  Training needs more than one value per channel.
 * In eval mode the output uses running_mean and running_var. */
typedef struct tg_nn_batchnorm {
	tg_tensor *weight, *bias, *running_mean, *running_var,
		*num_batches_tracked;
	double eps, momentum;
	int affine, track_running_stats;
} tg_nn_batchnorm;
/* PyTorch's defaults: eps 1e-5, momentum 0.1, affine and tracking on. */
TG_API int tg_nn_batchnorm_init(tg_nn_batchnorm *m, tg_dev *dev,
                                int64_t features, double eps,
                                double momentum, int affine,
                                int track_running_stats);
/* x (N, C, ...) -> the same shape.  Not const: training updates the
 * running statistics.  New reference. */
TG_API tg_tensor *tg_nn_batchnorm_forward(tg_nn_batchnorm *m,
                                          const tg_tensor *x);
TG_API void tg_nn_batchnorm_free(tg_nn_batchnorm *m);

/* Group normalization (tinygrad's GroupNorm): x (N, C, ...) is
 * normalized over each group of C/num_groups channels (and all the
 * axes after 1), then scaled and shifted per channel by weight (ones)
 * and bias (zeros), NULL when not affine. */
typedef struct tg_nn_groupnorm {
	int64_t num_groups, num_channels;
	double eps;
	tg_tensor *weight, *bias;
} tg_nn_groupnorm;
/* eps: 1e-5 as PyTorch's default. */
TG_API int tg_nn_groupnorm_init(tg_nn_groupnorm *m, tg_dev *dev,
                                int64_t num_groups, int64_t num_channels,
                                double eps, int affine);
TG_API tg_tensor *tg_nn_groupnorm_forward(const tg_nn_groupnorm *m,
                                          const tg_tensor *x);
TG_API void tg_nn_groupnorm_free(tg_nn_groupnorm *m);

/* Instance normalization (tinygrad's InstanceNorm): each channel of
 * each sample of x (N, C, ...) normalized over the axes after 1, then
 * the per-channel affine (tinygrad's default: affine on). */
typedef struct tg_nn_instancenorm {
	int64_t num_features;
	double eps;
	tg_tensor *weight, *bias;
} tg_nn_instancenorm;
TG_API int tg_nn_instancenorm_init(tg_nn_instancenorm *m, tg_dev *dev,
                                   int64_t num_features, double eps,
                                   int affine);
TG_API tg_tensor *tg_nn_instancenorm_forward(const tg_nn_instancenorm *m,
                                             const tg_tensor *x);
TG_API void tg_nn_instancenorm_free(tg_nn_instancenorm *m);

/* Layer normalization over the last ndim axes, which must equal
 * `shape` (normalized_shape); weight ones and bias zeros of that shape
 * when elementwise_affine, else NULL. */
typedef struct tg_nn_layernorm {
	size_t ndim;
	int64_t shape[8];
	double eps;
	tg_tensor *weight, *bias;
} tg_nn_layernorm;
/* ndim 1 to 8. */
TG_API int tg_nn_layernorm_init(tg_nn_layernorm *m, tg_dev *dev,
                                size_t ndim, const int64_t *shape,
                                double eps, int elementwise_affine);
TG_API tg_tensor *tg_nn_layernorm_forward(const tg_nn_layernorm *m,
                                          const tg_tensor *x);
TG_API void tg_nn_layernorm_free(tg_nn_layernorm *m);
/* tinygrad's LayerNorm2d: a LayerNorm over the channels of a
 * (N, C, H, W) input, each pixel on its own.  m is a tg_nn_layernorm
 * of normalized shape (C) (tg_nn_layernorm_init with ndim 1); its
 * state dict names are LayerNorm's.  New reference. */
TG_API tg_tensor *tg_nn_layernorm2d_forward(const tg_nn_layernorm *m,
                                            const tg_tensor *x);

/* RMS normalization over the last axis (tinygrad's RMSNorm):
 * x * rsqrt(mean(x^2) + eps), computed in float32 and cast back to
 * x's dtype, times weight (dim, ones). */
typedef struct tg_nn_rmsnorm {
	double eps;
	tg_tensor *weight;
} tg_nn_rmsnorm;
/* eps: 1e-6 as tinygrad's default. */
TG_API int tg_nn_rmsnorm_init(tg_nn_rmsnorm *m, tg_dev *dev, int64_t dim,
                              double eps);
TG_API tg_tensor *tg_nn_rmsnorm_forward(const tg_nn_rmsnorm *m,
                                        const tg_tensor *x);
TG_API void tg_nn_rmsnorm_free(tg_nn_rmsnorm *m);

/* A lookup table (tinygrad's Embedding): weight (vocab_size,
 * embed_size), glorot_uniform.  forward takes an integer tensor of
 * indices and gives (..., embed_size); as tinygrad's, an index outside
 * [0, vocab_size) selects a row of zeros. */
typedef struct tg_nn_embedding {
	int64_t vocab_size, embed_size;
	tg_tensor *weight;
} tg_nn_embedding;
TG_API int tg_nn_embedding_init(tg_nn_embedding *m, tg_dev *dev,
                                int64_t vocab_size, int64_t embed_size);
TG_API tg_tensor *tg_nn_embedding_forward(const tg_nn_embedding *m,
                                          const tg_tensor *idx);
TG_API void tg_nn_embedding_free(tg_nn_embedding *m);

/* Adds the layer's tensors to s, each name prefixed with "prefix.":
 * weight and bias; batchnorm also running_mean, running_var and
 * num_batches_tracked.  Tensors that are NULL (no bias, not affine)
 * are skipped.  0 or a negative status (duplicate name, OOM). */
TG_API int tg_nn_linear_params(const tg_nn_linear *m, tg_state *s,
                               const char *prefix);
TG_API int tg_nn_conv2d_params(const tg_nn_conv2d *m, tg_state *s,
                               const char *prefix);
TG_API int tg_nn_conv1d_params(const tg_nn_conv1d *m, tg_state *s,
                               const char *prefix);
TG_API int tg_nn_conv_transpose1d_params(const tg_nn_conv_transpose1d *m,
                                         tg_state *s, const char *prefix);
TG_API int tg_nn_conv_transpose2d_params(const tg_nn_conv_transpose2d *m,
                                         tg_state *s, const char *prefix);
TG_API int tg_nn_batchnorm_params(const tg_nn_batchnorm *m, tg_state *s,
                                  const char *prefix);
TG_API int tg_nn_groupnorm_params(const tg_nn_groupnorm *m, tg_state *s,
                                  const char *prefix);
TG_API int tg_nn_instancenorm_params(const tg_nn_instancenorm *m,
                                     tg_state *s, const char *prefix);
TG_API int tg_nn_layernorm_params(const tg_nn_layernorm *m, tg_state *s,
                                  const char *prefix);
TG_API int tg_nn_rmsnorm_params(const tg_nn_rmsnorm *m, tg_state *s,
                                const char *prefix);
TG_API int tg_nn_embedding_params(const tg_nn_embedding *m, tg_state *s,
                                  const char *prefix);

/* -- functional forms (tensor ops) -- */
/* tinygrad's Tensor.batchnorm over axis 1 of x (N, C, ...):
 * (x - mean) * weight * invstd + bias, with mean, weight and bias of
 * shape (C) (weight and bias may be NULL) and invstd (C) or any shape
 * that broadcasts to x's. */
TG_API tg_tensor *tg_batchnorm(const tg_tensor *x, const tg_tensor *weight,
                               const tg_tensor *bias, const tg_tensor *mean,
                               const tg_tensor *invstd);
/* tinygrad's Tensor.layernorm over the last axis_count axes (1 to
 * ndim): (x - mean) * rsqrt(mean((x - mean)^2) + eps). */
TG_API tg_tensor *tg_layernorm(const tg_tensor *x, size_t axis_count,
                               double eps);
/* tinygrad's dropout: x itself (a new reference to the same values)
 * unless tg_is_training() and p > 0; else x * (rand >= p) / (1 - p),
 * zeroing about a fraction p of the elements.  p outside [0, 1) is an
 * error in either mode. */
TG_API tg_tensor *tg_dropout(const tg_tensor *x, double p);

/* ------------------------------------------------------------------ */
/* Symbolic sizes: variables in shapes                                 */
/* ------------------------------------------------------------------ */

/* A variable (tinygrad's Variable) stands for an integer in [min, max]
 * inside a shape: a sequence position, a batch size.  Kernels over a
 * shape with a variable are compiled once and take its value as an
 * argument, so one compiled kernel and one JIT capture serve every
 * value:
 *
 *     tg_variable *pos = tg_variable_new("pos", 0, 1023);
 *     tg_variable_bind(pos, 17);
 *     int64_t upto[4] = { 0, tg_dim_affine(tg_variable_dim(pos), 1, 1),
 *                         0, 64 };       // rows 0 .. pos
 *     tg_tensor *keys = tg_shrink(cache, 2, upto);   // (pos+1, 64)
 *
 * tg_variable_dim gives a size that stands for the variable, bound to its
 * value now; tg_dim_affine makes mul*dim + add of it.  Such sizes are
 * negative codes (at most TG_DIM_SYM_BASE) that any int64_t shape or
 * pad/shrink argument takes, and tg_tensor_shape gives back; a code
 * stays valid until tg_shutdown.  A tensor keeps the value each size
 * had when it was made; binding the variable again affects tensors
 * made afterwards (and a JIT replay, which reads the variable's value
 * at each call).
 *
 * What takes symbolic sizes: elementwise ops and broadcasting between
 * equal sizes, sum and max reductions, softmax, matmul, reshape that
 * keeps or inserts size-1 axes around them, expand, permute, shrink,
 * and pad by a symbolic amount.  Memory for a symbolic shape is
 * allocated for the variable's max.  Reading a tensor of symbolic
 * shape to the host (tg_tensor_data) is refused: shrink it to an
 * integer shape first.  Ops that need an element count (mean, var)
 * refuse a symbolic axis with a message; gradients and the nn layers
 * do not take symbolic shapes.
 *
 * Kernels run a symbolic axis as a loop in each thread, not across
 * launch indices, so launch sizes never depend on a value.
 *
 * Variables are named (the names must differ among live variables).
 * Binding and reading a variable are atomic; binding one variable
 * from several threads at once gives no defined order. */
typedef struct tg_variable tg_variable;

#define TG_DIM_SYM_BASE (-(INT64_C(1) << 62))
#define TG_DIM_INVALID INT64_MIN   /* what a failed tg_variable_dim returns */
#define TG_DIM_MAX (INT64_C(1) << 40)

/* A variable in [min, max] (0 <= min <= max <= TG_DIM_MAX), bound to
 * min.  NULL (error set) for a bad name or bounds, or a name in use. */
TG_API tg_variable *tg_variable_new(const char *name, int64_t min, int64_t max);
TG_API void tg_variable_free(tg_variable *v);
/* Binds v to value; TG_EINVAL, naming v and its range, outside it. */
TG_API int tg_variable_bind(tg_variable *v, int64_t value);
TG_API int64_t tg_variable_value(const tg_variable *v);
TG_API const char *tg_variable_name(const tg_variable *v);
/* The size "v" bound to v's value now; TG_DIM_INVALID on error. */
TG_API int64_t tg_variable_dim(const tg_variable *v);
/* mul*dim + add, for an integer or symbolic dim; TG_DIM_INVALID on
 * error (overflow, a code that is not one). */
TG_API int64_t tg_dim_affine(int64_t dim, int64_t mul, int64_t add);
/* Whether dim is a symbolic code. */
TG_API int tg_dim_is_sym(int64_t dim);
/* dim's value with its variables' bound values (dim itself for an
 * integer); -1 for a code that is not one. */
TG_API int64_t tg_dim_value(int64_t dim);
/* "17" or "(pos+1)" into buf (n bytes). */
TG_API const char *tg_dim_str(int64_t dim, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* JIT: capture a step once, replay it                                 */
/* ------------------------------------------------------------------ */
/*
 * A step is a function from input tensors to output tensors, such as
 * one training step or one decode step.  Wrapped in a tg_jit (tinygrad's
 * TinyJit), its first call runs it as usual; its second call runs it
 * too and records every kernel and copy it ran; later calls replay that
 * record with the new inputs' memory: no graph is built, scheduled,
 * lowered or looked up, and the device runs the kernels as one batch
 * where its plugin can (a graph).
 *
 *     static int train_step(void *ctx, tg_tensor *const *in, size_t nin,
 *                           tg_tensor **out, size_t nout)
 *     {
 *         model *m = ctx;
 *         tg_tensor *loss = tg_sparse_categorical_crossentropy(
 *             forward(m, in[0]), in[1], -1, 0);
 *         if (tg_optim_zero_grad(m->opt) || tg_backward(loss, NULL) ||
 *             tg_optim_step(m->opt, &loss, 1))
 *             return tg_last_status();
 *         out[0] = loss;
 *         return 0;
 *     }
 *
 *     tg_jit *jit = tg_jit_new(train_step, &m);
 *     for (...) {
 *         tg_tensor *in[2] = { x, y }, *loss;
 *         if (tg_jit_call(jit, in, 2, &loss, 1) ||
 *             tg_tensor_item(loss, &value))
 *             ...;
 *         tg_tensor_unref(loss);   // or let an open scope drop it
 *     }
 *     tg_jit_free(jit);
 *
 * What a replay does, and so what a step may do:
 *  - Inputs are what changes between calls: their memory is put where
 *    the record read the capture's inputs.  Each call's inputs must
 *    have the capture's count, shapes, dtypes and devices; a mismatch
 *    is an error naming the input and both values, and runs nothing.
 *    An input that is not realized and contiguous is made so first.
 *  - Everything else the step read is fixed at capture.  A realized
 *    tensor it read but did not get as an input (a weight, a learning
 *    rate) is read from the same memory at every replay: updates made
 *    to it in place (tg_assign, an optimizer) are seen, but a tensor
 *    the step or its caller later replaces with another is not.  A
 *    value the step made from host memory (tg_tensor_new, a scalar) is
 *    the capture's value.  So state carried from call to call must be
 *    updated with tg_assign inside the step (as optimizers do), or be
 *    passed in as an input and returned as an output.
 *  - The step's C code does not run on replays: its control flow is
 *    the capture's, and it may not read values to the host during the
 *    capture (tg_tensor_data and tg_tensor_item fail then); return the
 *    tensor as an output instead.  Random numbers (tg_rand, dropout)
 *    are fine: their counter advances on the device, so replays draw
 *    what the same calls would draw eagerly.
 *  - Memory the step allocated belongs to the record and is reused on
 *    every replay.
 *  - Symbolic sizes (see "Symbolic sizes"): a replay passes each
 *    kernel the value its tg_variable has at the call, so a step over
 *    a sequence position is captured once for every position.  An
 *    input may have a symbolic shape (the first bs rows of a tensor):
 *    it must be the capture's up to the values, and made with the
 *    values the variables have at the call.  An output of symbolic
 *    shape comes back with the values of the call.  A captured kernel
 *    names its variables; the capture fails when no live tg_variable
 *    has such a name.
 *  - Outputs are new tensors with no gradient history, in the caller's
 *    open scope if any (else owned by the caller).  An output the step
 *    computed gets the record's memory when the previous call's outputs
 *    are gone, and new memory when the caller still holds them, so a
 *    replay never overwrites a tensor the caller holds.  An output that
 *    is an input, or a tensor the step did not compute (a weight),
 *    shares that tensor's memory, as it would without the JIT.
 *
 * JIT=0 runs every call as the first (no capture); JIT=2 captures but
 * replays kernel by kernel instead of through the plugin's graph.
 * DEBUG=1 prints what a capture recorded.  A tg_jit may be called from
 * several threads; its calls run one at a time. */

typedef struct tg_jit tg_jit;

/* A step: fills out[0..nout-1] from in[0..nin-1] (borrowed) and
 * returns 0, or returns a negative status.  It runs inside a scope the
 * JIT opens and closes: temporaries need no cleanup and the outputs no
 * tg_keep. */
typedef int (*tg_jit_fn)(void *ctx, tg_tensor *const *in, size_t nin,
                         tg_tensor **out, size_t nout);

/* A JIT for fn (ctx is passed to it).  New reference: tg_jit_free. */
TG_API tg_jit *tg_jit_new(tg_jit_fn fn, void *ctx);
TG_API void tg_jit_free(tg_jit *j);
/* Runs the step (first call), captures it (second) or replays it
 * (later); out[] gets nout new tensors.  0 or a negative status; on an
 * error out[] holds NULLs.  Count, shape, dtype and device mismatches
 * against the capture are TG_EINVAL, as is an input on a device group
 * split along another axis or at other rows than the capture's. */
TG_API int tg_jit_call(tg_jit *j, tg_tensor *const *in, size_t nin,
                       tg_tensor **out, size_t nout);
/* Forgets the capture: the next call runs eagerly again. */
TG_API void tg_jit_reset(tg_jit *j);

/* What a JIT has captured and holds (tg_jit_get_info). */
typedef struct tg_jit_info {
	uint64_t calls;        /* successful calls so far */
	int captured;          /* 1 once a capture exists */
	size_t kernels;        /* kernel launches per replay */
	size_t copies;         /* copies between devices per replay */
	size_t graphs;         /* runs of kernels on one device */
	size_t native_graphs;  /* ... that the plugin's graph runs */
	size_t buffers;        /* buffers the capture holds */
	size_t bytes;          /* ... and their size */
} tg_jit_info;
/* What the JIT holds; all zero but calls before the capture. */
TG_API int tg_jit_get_info(const tg_jit *j, tg_jit_info *out);

#ifdef __cplusplus
}
#endif
#endif /* TG_TG_H */

/*
 * tg/plugin.h - the tgcore plugin SDK.
 *
 * A backend is a loadable module that exports exactly one symbol,
 * tg_plugin_entry, written for you by TG_PLUGIN_DEFINE at the bottom of the
 * plugin's main file.  Plugins do NOT link libtgcore: every service they
 * use (logging, errors, memory, configuration) arrives through the
 * struct tg_host table handed to the entry point.  Build against this
 * header with `pkg-config --cflags tgcore-plugin`; install into
 * `pkg-config --variable=plugindir tgcore-plugin`.
 *
 * Versioning (PJRT's rules):
 *  - removing, reordering or retyping a field bumps TG_PLUGIN_ABI_MAJOR;
 *  - appending a field bumps TG_PLUGIN_ABI_MINOR; renaming is free;
 *  - until 1.0 the major stays 0 and every change bumps the minor.
 * Every struct crossing the boundary starts with `size_t struct_size`,
 * filled with TG_STRUCT_SIZE(type, last_field) by whoever creates it.  A
 * reader uses fields added after 0.1 only when TG_HAS() says they are
 * there; an absent or NULL optional entry gets the core's default.
 *
 * Ownership: strings a plugin returns are borrowed for the lifetime of the
 * object they describe (the core copies what it keeps).  Blobs and logs
 * handed to the core are allocated with host->alloc, so nothing is freed
 * across libraries.  Functions return 0 or a negative tg_status and give
 * the detail with host->set_error (which names the operation and values).
 *
 * Good behaviour (a plugin that breaks these is a bug): never exit, abort
 * or print to stdout; leave signal handlers, locale and environment alone;
 * survive zero devices; keep probe cheap, re-entrant and free of contexts;
 * keep the entry point free of side effects; join every thread in close.
 */
#ifndef TG_PLUGIN_H
#define TG_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <tg/tg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TG_PLUGIN_ABI_MAJOR 0
#define TG_PLUGIN_ABI_MINOR 11
/* Oldest plugin minor this core still accepts. */
#define TG_PLUGIN_ABI_MIN_MINOR 1

/* Bytes of `type` up to and including `last`: the struct_size value. */
#define TG_STRUCT_SIZE(type, last) \
	(offsetof(type, last) + sizeof(((type *)0)->last))
/* Whether `ptr` (a `type *`) is big enough to contain `field`. */
#define TG_HAS(ptr, type, field) \
	((ptr)->struct_size >= TG_STRUCT_SIZE(type, field))

struct tg_device;
struct tg_kernel_view;
struct tg_kernel_info;
struct tg_kernel_op;

/* Message levels for host->log; shown when DEBUG >= level. */
enum tg_log_level {
	TG_LOG_ERROR = 0, /* always shown (stderr) */
	TG_LOG_INFO = 1,
	TG_LOG_DEBUG = 2,
	TG_LOG_TRACE = 4
};

/* ------------------------------------------------------------------ */
/* Host services (core -> plugin)                                      */
/* ------------------------------------------------------------------ */

/* Filled by the core, one per plugin, alive until the plugin is unloaded.
 * Every function takes the table itself first so the core knows which
 * plugin is calling. */
struct tg_host {
	size_t struct_size;
	int abi_major; /* the core's TG_PLUGIN_ABI_MAJOR (since 0.1) */
	int abi_minor; /* the core's TG_PLUGIN_ABI_MINOR (since 0.1) */
	/* Logs a line (no trailing newline needed), prefixed with the plugin
	 * name, when DEBUG >= level.  Since 0.1. */
	void (*log)(const struct tg_host *host, int level, const char *fmt, ...)
		TG_PRINTF(3, 4);
	/* Sets the calling thread's error (what tg_last_error() returns) and
	 * returns `status`, so `return host->set_error(host, TG_EINVAL, ...)`
	 * reads naturally.  Name the operation and the values.  Since 0.1. */
	int (*set_error)(const struct tg_host *host, int status,
	                 const char *fmt, ...) TG_PRINTF(3, 4);
	/* Host memory for anything handed to the core (blobs, logs).
	 * alloc(0) returns a unique pointer; free(NULL) is a no-op.  Since 0.1. */
	void *(*alloc)(const struct tg_host *host, size_t size);
	void (*free)(const struct tg_host *host, void *ptr);
	/* Value of `key` in the plugin's own config section ("[cpu] cc=...",
	 * overridable by the environment as TG_CPU_CC and by the API as
	 * "cpu.cc"); NULL when unset.  Borrowed until the plugin is unloaded,
	 * even when the application sets the key again.  May be called from
	 * any thread.  Since 0.1. */
	const char *(*config_get)(const struct tg_host *host, const char *key);
	/* Directory for the plugin's scratch and cache files (exists, is
	 * writable, owned by the user and private to them), e.g.
	 * ~/.cache/tgcore; NULL when there is none (no home directory, a
	 * setuid program, or a directory another user could write).
	 * Since 0.1. */
	const char *cache_dir;
	/* The DEBUG level, to skip formatting work nobody will see. Since 0.1. */
	int debug;
	/* The core's private data; plugins must not touch it.  Since 0.1. */
	void *core_private;
	/* Reading a kernel handed to renderer->render (TG_DIALECT_CUSTOM):
	 * its facts, and its ops one at a time, each into a struct the
	 * caller sized (struct_size set; the core fills the fields that
	 * fit and zeroes nothing beyond).  0, or TG_EINVAL for an index
	 * past the end or a NULL argument.  Since 0.8. */
	int (*kernel_info)(const struct tg_host *host,
	                   const struct tg_kernel_view *k,
	                   struct tg_kernel_info *out);
	int (*kernel_op)(const struct tg_host *host,
	                 const struct tg_kernel_view *k, size_t i,
	                 struct tg_kernel_op *out);
	/* Reports that the value of `key` in the plugin's section cannot
	 * be used, and returns TG_ECONFIG: the error reads "config: WHERE:
	 * [section] key: WHAT, got 'VALUE'", WHERE the file and line, the
	 * environment variable or tg_config_set() it came from, the value
	 * with control and non-UTF-8 bytes escaped, WHAT formatted from
	 * fmt ("expected an integer from 0 to 1024").  Return that status
	 * from probe or open: a configuration error stops device selection
	 * in every mode (the core never picks another device because this
	 * one's settings are bad), where other failures only skip the
	 * device in auto mode.  On an older core (abi_minor < 11) report
	 * TG_ECONFIG through set_error instead.  Since 0.11. */
	int (*config_error)(const struct tg_host *host, const char *key,
	                    const char *fmt, ...) TG_PRINTF(3, 4);
};

/* ------------------------------------------------------------------ */
/* Device description and tables (plugin -> core)                      */
/* ------------------------------------------------------------------ */

enum tg_device_type {
	TG_DEVICE_CPU = 0,
	TG_DEVICE_GPU = 1,  /* discrete GPU */
	TG_DEVICE_IGPU = 2, /* integrated GPU sharing host memory */
	TG_DEVICE_ACCEL = 3 /* other accelerators */
};

/* How the core's C-family renderer writes kernels for this device. */
enum tg_dialect {
	/* C.  A kernel is a function
	 *   void name(void *const *bufs, const int64_t *vals,
	 *             const size_t *global, size_t lo, size_t hi);
	 * that computes work-items [lo, hi) of the global range flattened
	 * with axis 0 fastest (item i is gidx0 = i % global[0],
	 * gidx1 = i / global[0] % global[1], gidx2 = i / (global[0] *
	 * global[1])), so a runtime may split [0, total) across threads.
	 * Disjoint ranges run concurrently: kernels keep no static state
	 * and are exported with default visibility. */
	TG_DIALECT_C = 0,
	TG_DIALECT_OPENCL = 1, /* OpenCL C */
	TG_DIALECT_CUDA = 2,   /* CUDA C (NVRTC) */
	TG_DIALECT_GLSL = 3,   /* GLSL compute, for SPIR-V */
	/* The plugin renders: renderer->render gets the linearized kernel
	 * (below) and returns the text its compiler takes.  Since 0.8. */
	TG_DIALECT_CUSTOM = 4
};

/* ------------------------------------------------------------------ */
/* The linearized kernel, for a plugin's own renderer (since 0.8)       */
/* ------------------------------------------------------------------ */

/* A kernel is a list of ops in execution order, as the core's own
 * renderers get it.  Each op computes one value (or none: STORE,
 * ENDRANGE, BARRIER) from ops before it, named by their position in the
 * list (src[]).  The codes are stable: a value never changes meaning,
 * and new ops get new values.
 *
 * Types: `dtype` is an enum tg_dtype, TG_KTYPE_INDEX (signed 64-bit
 * index arithmetic) or TG_KTYPE_VOID; `lanes` is 1 for a scalar, n for
 * an n-vector (only where renderer->max_upcast >= 2); `space` is
 * TG_KSPACE_GLOBAL or _LOCAL for a buffer pointer, else 0.
 *
 * Arguments (the fields i, u, f, a, b, name), by op:
 *  DEFINE_GLOBAL  i: the buffer number (bufs[i] at launch; outputs
 *                 first); a: 1 when the kernel writes it.  dtype: the
 *                 element type, space GLOBAL.
 *  DEFINE_VAR     name: the variable (vals[j] at launch, j its position
 *                 in tg_kernel_info.vars); a, b: its inclusive bounds.
 *  DEFINE_LOCAL   name; a: elements (work-group memory, space LOCAL).
 *  CONST          the value: f for floats, u for uint64, i otherwise
 *                 (bool 0/1).  A vector CONST is i/u/f in every lane.
 *  SPECIAL        name: "gidx0".."gidx2" (the work-item's position in
 *                 the global range, axis 0 fastest as in TG_DIALECT_C),
 *                 "lidx0".."lidx2" (in its work-group); a: the extent.
 *  RANGE          src (start, end): a loop over [start, end); i: the
 *                 loop's number; a: 1 for a reduce loop.
 *  ENDRANGE       src (range): the end of the innermost open loop.
 *  DEFINE_ACC     src (init, ranges...): an accumulator set to init
 *                 each time execution reaches it; i: its number.  Its
 *                 ranges are loops that open after it.
 *  PHI            src (acc, value): stores value into the accumulator;
 *                 reading the PHI or the DEFINE_ACC reads its current
 *                 value (after the loops: the total).
 *  LOAD           src (buf, index) or (buf, index, gate, alt): the
 *                 element at index (elements, not bytes); with a gate,
 *                 alt when the gate is false (memory is not read).
 *                 A vector LOAD reads lanes consecutive elements.
 *  STORE          src (buf, index, value) or (.., gate): writes when
 *                 the gate (if any) is true.
 *  CAST, BITCAST  src (x): convert, or reinterpret the bits (same size).
 *                 A cast to bool is x != 0; float to int truncates.
 *  VECTORIZE      src (lanes...): a vector of scalars.
 *  GEP            src (vector); i: the lane taken.
 *  BARRIER        src (stores): work-group barrier.
 *  ALU ops        src (operands), all of the op's type except: CMPLT
 *                 and CMPNE give bool; WHERE is (bool, x, y).  IDIV
 *                 and MOD truncate toward zero (C); integer ADD, MUL,
 *                 NEG and SHL wrap; NEG of a bool is logical not;
 *                 MAX of floats propagates a NaN in its first operand;
 *                 MULACC (a, b, c) is a*b + c rounded once (fma);
 *                 THREEFRY (x, key) is Threefry-2x32 on uint64.
 * Every value rounds to its type: a float32 op's result is a float32. */
enum tg_kop {
	TG_KOP_DEFINE_GLOBAL = 1,
	TG_KOP_DEFINE_VAR = 2,
	TG_KOP_DEFINE_LOCAL = 3,
	TG_KOP_DEFINE_ACC = 4,
	TG_KOP_CONST = 5,
	TG_KOP_SPECIAL = 6,
	TG_KOP_RANGE = 7,
	TG_KOP_ENDRANGE = 8,
	TG_KOP_PHI = 9,
	TG_KOP_LOAD = 10,
	TG_KOP_STORE = 11,
	TG_KOP_CAST = 12,
	TG_KOP_BITCAST = 13,
	TG_KOP_VECTORIZE = 14,
	TG_KOP_GEP = 15,
	TG_KOP_BARRIER = 16,
	TG_KOP_WMMA = 17,    /* tensor cores: only with renderer->tc */
	/* ALU */
	TG_KOP_EXP2 = 32,
	TG_KOP_LOG2 = 33,
	TG_KOP_SIN = 34,
	TG_KOP_SQRT = 35,
	TG_KOP_NEG = 36,
	TG_KOP_RECIP = 37,
	TG_KOP_ADD = 38,
	TG_KOP_MUL = 39,
	TG_KOP_IDIV = 40,
	TG_KOP_MAX = 41,
	TG_KOP_MOD = 42,
	TG_KOP_CMPLT = 43,
	TG_KOP_CMPNE = 44,
	TG_KOP_XOR = 45,
	TG_KOP_SHL = 46,
	TG_KOP_SHR = 47,
	TG_KOP_OR = 48,
	TG_KOP_AND = 49,
	TG_KOP_THREEFRY = 50,
	TG_KOP_WHERE = 51,
	TG_KOP_MULACC = 52
};

#define TG_KTYPE_INDEX 32  /* dtype of index arithmetic: int64 */
#define TG_KTYPE_VOID 33   /* dtype of ops with no value */
enum tg_kspace { TG_KSPACE_NONE = 0, TG_KSPACE_GLOBAL = 1,
                 TG_KSPACE_LOCAL = 2 };
/* Most sources of one op: a VECTORIZE of 64 lanes, a DEFINE_ACC of its
 * init and its loops (the core refuses a kernel with more). */
#define TG_KOP_MAX_SRC 65

/* The kernel as a whole.  Strings are borrowed for the render call. */
struct tg_kernel_info {
	size_t struct_size;
	const char *name;      /* the function name to use ("r_4_5"). 0.8 */
	size_t nops;           /* ops in the list.  Since 0.8. */
	size_t nbufs;          /* buffers (bufs[] at launch).  Since 0.8. */
	uint64_t outs;         /* bit i: buffer i is written.  Since 0.8. */
	size_t nvars;          /* variables (vals[] at launch).  Since 0.8. */
	const char *const *vars; /* their names, in vals[] order.  0.8. */
	size_t global[3];      /* the launch's global size.  Since 0.8. */
	size_t local[3];       /* its work-group size.  Since 0.8. */
};

/* One op.  Strings are borrowed for the render call. */
struct tg_kernel_op {
	size_t struct_size;
	int op;                /* enum tg_kop.  Since 0.8. */
	int dtype;             /* enum tg_dtype or TG_KTYPE_*.  Since 0.8. */
	int lanes;             /* 1, or the vector width.  Since 0.8. */
	int space;             /* enum tg_kspace.  Since 0.8. */
	size_t nsrc;           /* Since 0.8. */
	uint32_t src[TG_KOP_MAX_SRC]; /* positions of ops.  Since 0.8. */
	int64_t i;             /* see above.  Since 0.8. */
	uint64_t u;            /* Since 0.8. */
	double f;              /* Since 0.8. */
	int64_t a, b;          /* Since 0.8. */
	const char *name;      /* or NULL.  Since 0.8. */
	int64_t vmin, vmax;    /* inclusive bounds of an integer value
	                          (exact for index math; the type's range
	                          when unknown).  Since 0.8. */
};

/* Memory: opaque handles (`void *`) the plugin interprets.  The core keeps
 * a cache of freed memory in front of `alloc`; a plugin never sees the
 * same handle twice without a free in between. */
struct tg_allocator_iface {
	size_t struct_size;
	/* Allocates `size` bytes (size > 0) into *out.  Return TG_ENOMEM when
	 * the device is out of memory: the core then empties its cache and
	 * retries once.  Required, since 0.1. */
	int (*alloc)(struct tg_device *dev, size_t size, void **out);
	/* Frees memory from alloc (never a view).  Required, since 0.1. */
	void (*free)(struct tg_device *dev, void *mem, size_t size);
	/* Host -> device: n bytes from `src` to `dst` at byte `offset`.
	 * Returns after `src` may be reused.  Required, since 0.1. */
	int (*copy_in)(struct tg_device *dev, void *dst, size_t offset,
	               const void *src, size_t n);
	/* Device -> host, after all queued work that writes `src` is done.
	 * Required, since 0.1. */
	int (*copy_out)(struct tg_device *dev, void *dst, const void *src,
	                size_t offset, size_t n);
	/* A handle for bytes [offset, offset+size) of `mem`, usable wherever
	 * a handle is.  Optional (NULL: no sub-buffer views), since 0.1. */
	int (*view)(struct tg_device *dev, void *mem, size_t offset,
	            size_t size, void **out);
	/* Releases a handle from `view`.  Optional, since 0.1. */
	void (*view_free)(struct tg_device *dev, void *view);
	/* Free and total device memory in bytes (0 for "unknown").
	 * Optional, since 0.1. */
	int (*mem_info)(struct tg_device *dev, uint64_t *free_bytes,
	                uint64_t *total_bytes);
	/* Memory the caller owns as a handle usable wherever one from
	 * alloc is (tg_buffer_from_host, tg_buffer_from_native): `size`
	 * bytes at `ptr`, which is host memory (TG_WRAP_HOST) or the
	 * device's own native memory object (TG_WRAP_NATIVE, what the
	 * plugin documents its handles to be).  The core never frees it:
	 * it calls unwrap when it no longer needs the handle.  Return
	 * TG_EUNSUPPORTED (with set_error saying why: a kind the device
	 * cannot address, an alignment its kernels need) to refuse.
	 * Optional (NULL: nothing can be wrapped), since 0.9. */
	int (*wrap)(struct tg_device *dev, int kind, void *ptr, size_t size,
	            void **out);
	/* Releases a handle from wrap (not the memory: the caller's).
	 * Optional (NULL: nothing to release), since 0.9. */
	void (*unwrap)(struct tg_device *dev, void *mem);
	/* Copies n bytes (n > 0) from `src`, a handle of `src_dev` (another
	 * device this plugin opened), to `dst`, a handle of `dev`, without
	 * a round trip through host memory (a peer copy: cuMemcpyPeer,
	 * clEnqueueCopyBuffer in a shared context, a memcpy between host
	 * memories).  Called on the destination device; it must see
	 * every write queued on src_dev to src (as copy_out does), and work
	 * queued on dev later must see the copy (as after copy_in).  Return
	 * TG_EUNSUPPORTED for a pair of devices it cannot join: the core
	 * then copies through the host.  Optional (NULL: always through
	 * the host), since 0.10. */
	int (*transfer)(struct tg_device *dev, void *dst,
	                struct tg_device *src_dev, const void *src, size_t n);
};
/* Kinds of allocator->wrap. */
#define TG_WRAP_HOST 1
#define TG_WRAP_NATIVE 2

/* Turns kernel source into a binary blob the runtime can load. */
struct tg_compiler_iface {
	size_t struct_size;
	/* A string that changes whenever the same source would compile to a
	 * different blob (compiler path and version, flags, target).  Part
	 * of the compile cache key.  Borrowed.  Required, since 0.1. */
	const char *(*identity)(struct tg_device *dev);
	/* Compiles NUL-terminated `src`.  On success *blob (host->alloc'd,
	 * *blob_len bytes) is handed to the core.  On failure returns
	 * TG_ECOMPILE, calls set_error with the compiler's message and may set
	 * *log (host->alloc'd, NUL-terminated) to the full output.  *log may
	 * also carry warnings on success.  The core sets *blob and *log to
	 * NULL before the call and never passes NULL pointers.  Several
	 * threads may compile at once (a BEAM search builds its candidates
	 * in parallel): keep no unguarded state between calls.  Required,
	 * since 0.1. */
	int (*compile)(struct tg_device *dev, const char *src, void **blob,
	               size_t *blob_len, char **log);
};

/* A tensor core (tinygrad's TensorCore): one matrix op that adds the
 * product of A (M x K) and B (K x N) into C (N x M), dtype_in x dtype_in
 * -> dtype_out.  The TC opt maps a matmul-shaped reduce (a SUM of the
 * product of two loads, maybe cast from dtype_in) onto it: N is an
 * output axis along which A is broadcast, M one along which B is, K a
 * reduce axis.  K is unrolled by dims[2]; then the N x M tile is split
 * off the two axes by `splits`, in order, each as the opt of its kind
 * would: TG_TC_LOCAL across the work-items of a group (a CUDA warp's
 * lanes), TG_TC_UPCAST across one work-item's registers.  The splits of
 * each of N and M multiply to dims[0] and dims[1].  On a CPU the "core"
 * is the register tile of an outer product: N a vector register or two,
 * M rows, K 1, all upcasts.  Static data. */
enum tg_tc_kind { TG_TC_LOCAL = 0, TG_TC_UPCAST = 1 };

/* One split of a tensor core's N or M axis (above). */
struct tg_tc_split {
	int kind;       /* enum tg_tc_kind */
	int dim;        /* 0: N, 1: M */
	uint32_t amt;   /* at least 2 */
};

#define TG_TC_MAX_SPLITS 12

/* A tensor core: an MMA of N x M x K and how its axes split. */
struct tg_tensor_core {
	size_t struct_size;
	uint32_t dims[3];   /* N, M, K.  Since 0.3. */
	int dtype_in;       /* enum tg_dtype of A and B.  Since 0.3. */
	int dtype_out;      /* of C and the sum.  Since 0.3. */
	size_t nsplits;     /* at most TG_TC_MAX_SPLITS.  Since 0.3. */
	struct tg_tc_split splits[TG_TC_MAX_SPLITS]; /* Since 0.3. */
};

/* What the renderer may use on this device.  Static data. */
struct tg_renderer_caps {
	size_t struct_size;
	int dialect;        /* enum tg_dialect.  Since 0.1. */
	int has_local;      /* work-groups with local ids.  Since 0.1. */
	int has_shared;     /* work-group shared memory.  Since 0.1. */
	int max_upcast;     /* widest float vector type (1 = none).  Since 0.1. */
	size_t global_max[3]; /* largest global size per axis (SIZE_MAX:
	                         no limit); the plugin checks products.
	                         Since 0.1. */
	size_t local_max[3];  /* largest local size per axis.  Since 0.1. */
	size_t local_max_total; /* largest work-group (product).  Since 0.1. */
	size_t shared_max;  /* bytes of shared memory.  Since 0.1. */
	uint32_t dtype_mask; /* bit (1u << tg_dtype) per usable dtype.  0.1. */
	/* 1: the device has no exp2/log2/sin of its own; the core then
	 * computes them from adds, multiplies and selects (within 2 ulp;
	 * sin's reduction is exact for |x| < 1.6e6, float32 1e5).  GLSL
	 * gets that for float64 whatever this says.  Since 0.1. */
	int needs_transcendental_fallback;
	int tensor_cores;   /* entries of tc (0: none).  Since 0.1; read
	                       only with tc, since 0.3. */
	const struct tg_tensor_core *tc; /* the device's tensor cores, the
	                       preferred first.  Since 0.3. */
	size_t buffer_align; /* every buffer a generated kernel gets starts
	                       at a multiple of this many bytes (the
	                       allocator's alignment; the core passes
	                       kernels whole allocations, never views): a
	                       power of 2, or 0 when unknown.  A vector
	                       load whose index is proven a multiple of its
	                       width may then be rendered aligned (OpenCL
	                       does; C keeps memcpy).  Since 0.5. */
	/* The plugin's renderer, for dialect TG_DIALECT_CUSTOM (required
	 * then, ignored otherwise): writes kernel `k` (read it with
	 * host->kernel_info and host->kernel_op) as the NUL-terminated text
	 * its compiler->compile takes, into *src (host->alloc'd).  That
	 * text may be source or a serialized binary: compile turns it into
	 * the blob that runtime->load loads, and the compile cache keys it.
	 * Several threads may render at once.  Errors: a negative status
	 * with set_error naming the op it cannot render (the core then
	 * reports the kernel).  Since 0.8. */
	int (*render)(struct tg_device *dev, const struct tg_kernel_view *k,
	              char **src);
};

/* Arguments of one launch.  Created by the core; a plugin reads fields
 * added after 0.1 only when TG_HAS says they are present. */
struct tg_launch {
	size_t struct_size;
	void *const *bufs;    /* buffer handles, in kernel argument order */
	size_t nbufs;
	const int64_t *vals;  /* symbolic variable values */
	size_t nvals;
	size_t global[3];     /* global size (total work-items per axis) */
	size_t local[3];      /* work-group size */
	int wait;             /* 1: return after the kernel finished and
	                         store its run time in `elapsed_s` */
	double elapsed_s;     /* out: seconds, when wait was set */
};

/* Loads blobs and runs them. */
struct tg_runtime_iface {
	size_t struct_size;
	/* Loads function `name` from `blob` into *prog.  Required, 0.1. */
	int (*load)(struct tg_device *dev, const char *name, const void *blob,
	            size_t blob_len, void **prog);
	/* Queues (or runs) the program.  Required, since 0.1. */
	int (*launch)(struct tg_device *dev, void *prog,
	              struct tg_launch *args);
	/* Waits for all queued work.  Required, since 0.1. */
	int (*synchronize)(struct tg_device *dev);
	/* Releases a program from load.  Required, since 0.1. */
	void (*program_free)(struct tg_device *dev, void *prog);

	/* A graph: launches recorded once and run many times (the JIT's
	 * replays), with less overhead than one launch call per kernel.
	 * Optional, since 0.2: give all three or none; without them the
	 * core calls launch once per kernel.
	 *
	 * Records n launches to run in order, each seeing the writes of
	 * the ones before (as n calls of launch would).  progs[i] comes
	 * from load; launches[i] is as for launch, with wait 0.  The
	 * plugin copies what it keeps: the arrays are borrowed for the
	 * call.  Since 0.2.  From a core of 0.6 on (host->abi_minor),
	 * TG_EUNSUPPORTED declines this graph (say why with set_error: a
	 * driver without graphs) and the core launches its kernels one by
	 * one; an older core takes it as an error. */
	int (*graph_new)(struct tg_device *dev, void *const *progs,
	                 struct tg_launch *const *launches, size_t n,
	                 void **graph);
	/* Queues (or runs) the recorded launches with the buffers and
	 * variable values of `launches`: the same count, programs and
	 * geometry as recorded, but any buffer handle or value may have
	 * changed since the last run.  Returns when queued, like launch;
	 * synchronize waits.  A graph runs on one thread at a time.
	 * Since 0.2. */
	int (*graph_run)(struct tg_device *dev, void *graph,
	                 struct tg_launch *const *launches, size_t n);
	/* Frees a graph (after its queued runs finished).  Since 0.2. */
	void (*graph_free)(struct tg_device *dev, void *graph);

	/* A trial run: runs the program once, as launch with wait would,
	 * where a fault or a hang in it cannot take the process down.  A
	 * BEAM search gives each candidate kernel a trial before it runs
	 * the kernel in process.  Returns 0 when the run finished;
	 * TG_ETIMEOUT when it ran past timeout_s seconds and was stopped;
	 * TG_ERUNTIME when it faulted, with a message that names the fault
	 * (the signal); TG_EUNSUPPORTED when no trial can be run now (no
	 * verdict: the core runs the kernel in process).  Its writes need
	 * not reach the buffers: the CPU
	 * plugin runs it in a child process.  Optional (NULL: candidates
	 * run in process only, and a kernel that faults or hangs takes
	 * the process with it), since 0.4. */
	int (*trial)(struct tg_device *dev, void *prog,
	             struct tg_launch *args, double timeout_s);
};

/* Static facts about one opened device. */
struct tg_device_info {
	size_t struct_size;
	const char *name;        /* canonical, "CPU" or "OPENCL:1".  0.1. */
	const char *description; /* model / driver, one line.  0.1. */
	int type;                /* enum tg_device_type.  0.1. */
	uint64_t total_memory;   /* bytes, 0 when unknown.  0.1. */
};

/* An opened device: created by the plugin's open, owned by the plugin,
 * released by its close.  Shaped {tables, ctx} like ggml's backends. */
struct tg_device {
	size_t struct_size;
	void *ctx;                          /* the plugin's state */
	const struct tg_device_info *info;  /* required */
	const struct tg_allocator_iface *allocator; /* required */
	const struct tg_compiler_iface *compiler;   /* required */
	const struct tg_renderer_caps *renderer;    /* required */
	const struct tg_runtime_iface *runtime;     /* required */
	/* Frees the device and joins every thread it started. Required. */
	void (*close)(struct tg_device *dev);
};

/* ------------------------------------------------------------------ */
/* The plugin descriptor                                               */
/* ------------------------------------------------------------------ */

/* Result of a probe; the core fills struct_size, the plugin the rest. */
/* Devices of one plugin whose type a probe reports (types[]). */
#define TG_PROBE_MAX_TYPES 16

/* What a plugin's probe found: how many devices, of which types. */
struct tg_probe {
	size_t struct_size;
	int ndevices;        /* usable devices (0 when unusable).  0.1. */
	int type;            /* enum tg_device_type of device 0, so auto
	                        selection can rank GPUs first without
	                        opening anything (0 = CPU if unset).  0.1. */
	char reason[256];    /* when 0: one line saying why.  Since 0.1. */
	/* types[i]: enum tg_device_type of device i (the index open takes)
	 * for i < ntypes <= min(ndevices, TG_PROBE_MAX_TYPES), so auto
	 * selection ranks every device, not device 0 only: a GPU that an
	 * OpenCL platform lists after a CPU device can be the default.
	 * ntypes 0 (the core's zero): only device 0 is ranked, by `type`.
	 * Keep `type` equal to types[0] for older cores.  Write them only
	 * when TG_HAS(out, struct tg_probe, types).  Since 0.7. */
	int ntypes;
	int types[TG_PROBE_MAX_TYPES];
};

/* The plugin's descriptor, returned by its entry (TG_PLUGIN_DEFINE). */
struct tg_plugin {
	size_t struct_size;
	int abi_major; /* TG_PLUGIN_ABI_MAJOR the plugin was built with */
	int abi_minor; /* TG_PLUGIN_ABI_MINOR the plugin was built with */
	const char *name;    /* canonical device name, upper case: "CPU" */
	const char *const *aliases; /* NULL-terminated, or NULL: {"CLANG",0} */
	const char *version; /* the plugin's own version, "1.2.0" */
	const char *vendor;
	const char *description;
	int priority; /* tie-breaker among devices of one type; higher wins */
	/* Cheap: is the driver present, how many devices?  No contexts, no
	 * threads.  Return 0 with out->ndevices = 0 and out->reason for
	 * "present but unusable".  Required, since 0.1. */
	int (*probe)(const struct tg_host *host, struct tg_probe *out);
	/* Opens device `index` (0 <= index < ndevices).  Required, 0.1. */
	int (*open)(const struct tg_host *host, int index,
	            struct tg_device **out);
	/* Vendor extras: a versioned struct or NULL.  Optional, since 0.1. */
	const void *(*query_extension)(const char *name, int min_version);
	/* Called once before the module is unloaded.  Optional, since 0.1. */
	void (*unload)(const struct tg_host *host);
};

/* The entry point's type.  Returns the plugin's static descriptor, or
 * NULL to refuse (after saying why with host->log).  Cheap, no side
 * effects. */
typedef const struct tg_plugin *(*tg_plugin_entry_fn)(
	const struct tg_host *host);

#define TG_PLUGIN_ENTRY_SYMBOL "tg_plugin_entry"

#if defined(__GNUC__)
#define TG_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define TG_PLUGIN_EXPORT
#endif

/* Emits the entry point for a plugin whose descriptor is `desc` (a static
 * const struct tg_plugin).  Put it at the bottom of the plugin's main
 * file. */
#define TG_PLUGIN_DEFINE(desc)                                              \
	TG_PLUGIN_EXPORT const struct tg_plugin *tg_plugin_entry(           \
		const struct tg_host *host);                                \
	TG_PLUGIN_EXPORT const struct tg_plugin *tg_plugin_entry(           \
		const struct tg_host *host)                                 \
	{                                                                   \
		(void)host;                                                 \
		return &(desc);                                             \
	}

/* Each struct's last field, pinned: appending a field without updating
 * the struct_size a producer fills in fails to compile here. */
#ifdef __cplusplus
#define TG_ASSERT_LAST(type, last)                                          \
	static_assert(sizeof(type) - TG_STRUCT_SIZE(type, last) <           \
	              alignof(type), #type " must end with " #last)
#else
#define TG_ASSERT_LAST(type, last)                                          \
	_Static_assert(sizeof(type) - TG_STRUCT_SIZE(type, last) <          \
	               _Alignof(type), #type " must end with " #last)
#endif
TG_ASSERT_LAST(struct tg_host, config_error);
TG_ASSERT_LAST(struct tg_allocator_iface, transfer);
TG_ASSERT_LAST(struct tg_compiler_iface, compile);
TG_ASSERT_LAST(struct tg_renderer_caps, render);
TG_ASSERT_LAST(struct tg_kernel_info, local);
TG_ASSERT_LAST(struct tg_kernel_op, vmax);
TG_ASSERT_LAST(struct tg_tensor_core, splits);
TG_ASSERT_LAST(struct tg_launch, elapsed_s);
TG_ASSERT_LAST(struct tg_runtime_iface, trial);
TG_ASSERT_LAST(struct tg_device_info, total_memory);
TG_ASSERT_LAST(struct tg_device, close);
TG_ASSERT_LAST(struct tg_probe, types);
TG_ASSERT_LAST(struct tg_plugin, unload);

/* ------------------------------------------------------------------ */
/* Pure helpers                                                        */
/* ------------------------------------------------------------------ */

/* Bit for `dt` in tg_renderer_caps.dtype_mask. */
#define TG_DTYPE_BIT(dt) (1u << (unsigned)(dt))
/* Every dtype. */
#define TG_DTYPE_ALL ((1u << TG_NDTYPES) - 1u)

#ifdef __cplusplus
}
#endif
#endif /* TG_PLUGIN_H */

/*
 * vulkan.h - the Vulkan plugin's internal header, one section per .c file.
 *
 * The Vulkan device runs kernels rendered as GLSL compute shaders
 * (TG_DIALECT_GLSL), compiled to SPIR-V by glslc, run as a child
 * process (program.c, ../common/tool.c).  Only
 * the Vulkan loader is linked.  vulkan.c opens the instance and device
 * and holds the descriptor; memory.c is the allocator; queue.c records
 * launches into a command buffer and submits them in batches; graph.c
 * records a graph's launches once into a command buffer of its own.
 *
 * Shader ABI (what the core's GLSL renderer emits):
 *   #version 450
 *   layout(local_size_x_id = 0, local_size_y_id = 1,
 *          local_size_z_id = 2) in;
 *   layout(std430, set = 0, binding = k) buffer tg_buf_k { T data_k[]; };
 *   layout(push_constant) uniform tg_vals { int v[N]; } vals;
 * Buffer k of a launch is binding k; value i is the int32 at byte 4*i of
 * the push constants; the entry point is "main".  A launch with local
 * {1,1,1} runs work-groups of 64 and the kernel indexes a flattened id:
 *   uint tg_i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y *
 *               gl_NumWorkGroups.x * gl_WorkGroupSize.x;
 *   if (tg_i >= TOTAL) return;
 */
#ifndef TG_PLUGIN_VULKAN_H
#define TG_PLUGIN_VULKAN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <tg/plugin.h>
#include <vulkan/vulkan.h>

struct tool; /* ../common/tool.h: glslc */

#define VK_FLAT_GROUP 64      /* work-group size for local {1,1,1} */
#define VK_BATCH_MAX 256      /* dispatches recorded before a submit */
#define VK_POOL_DESCS 4096    /* storage-buffer descriptors per batch */
#define VK_PUSH_BYTES 128     /* push-constant range every layout has */
#define VK_STAGING_MAX ((VkDeviceSize)64 << 20) /* staging chunk bytes */

/* ------------------------------------------------------------------ */
/* vulkan.c: instance, device, errors                                  */
/* ------------------------------------------------------------------ */

/* Optional device features, each 1 only when reported and enabled. */
struct vk_features {
	int int64, float64, int16, float16, int8;
	int storage8, storage16; /* 8/16-bit storage-buffer access */
	int budget;              /* VK_EXT_memory_budget */
};

/* Device memory: a whole allocation (owner) or a view into one. */
struct vk_mem {
	VkBuffer buf;
	VkDeviceMemory mem;     /* VK_NULL_HANDLE in a view */
	VkDeviceSize size;      /* bytes of the handle */
	VkDeviceSize offset;    /* into buf: 0 unless a view */
	unsigned char *map;     /* persistent mapping at offset, or NULL */
	int owner;              /* 1: alloc'd, 0: a view */
};

/* Host-visible buffer for devices whose memory cannot be mapped. */
struct vk_staging {
	VkBuffer buf;
	VkDeviceMemory mem;
	void *map;
	VkDeviceSize size;
};

/* The open command buffer and what it has used of the batch pools. */
struct vk_queue {
	VkCommandPool cmd_pool;   /* graphs' command buffers come from it */
	VkCommandBuffer cb;
	VkFence fence;
	VkDescriptorPool desc_pool;
	VkQueryPool query_pool;   /* 2 timestamps, or VK_NULL_HANDLE */
	int recording;            /* cb has begun */
	uint32_t ndispatch, nsets, ndescs;
	struct vk_graph *inflight; /* graphs submitted, fence not waited */
	uint64_t frees;           /* VkBuffers destroyed, ever */
};

struct vk_ctx {
	struct tg_device dev;        /* handed to the core; dev.ctx = this */
	struct tg_device_info info;  /* dev.info points here */
	struct tg_renderer_caps caps; /* dev.renderer points here */
	const struct tg_host *host;  /* borrowed, outlives the device */
	pthread_mutex_t lock;        /* the queue, staging, submissions */
	VkInstance instance;
	VkPhysicalDevice phys;
	VkDevice device;
	VkQueue vq;
	uint32_t qfamily;
	uint32_t timestamp_bits;     /* of the queue family; 0: none */
	uint32_t api_version;        /* min(device, instance) */
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties memprops;
	VkDeviceSize max_alloc;      /* maxMemoryAllocationSize */
	struct vk_features feat;
	int force_staging;           /* config `staging`: never map */
	struct vk_staging staging;
	struct vk_queue q;
	struct tool *glslc;          /* owned: the GLSL compiler command */
	char name[32];               /* "VULKAN" or "VULKAN:n" */
	/* "<driverName> <driverInfo>" */
	char driver[VK_MAX_DRIVER_NAME_SIZE + VK_MAX_DRIVER_INFO_SIZE];
	char description[1024];
	char identity[1536];
};

/* Static name of a VkResult ("VK_ERROR_DEVICE_LOST"). */
const char *vk_result_name(VkResult r);
/* Sets the error "vulkan <op>: <VkResult name>" (op formatted like
 * printf) with the status that fits r; returns that status. */
int vk_fail(const struct vk_ctx *ctx, VkResult r, const char *fmt, ...)
	TG_PRINTF(3, 4);

/* ------------------------------------------------------------------ */
/* memory.c: the allocator                                             */
/* ------------------------------------------------------------------ */

/* Creates the staging buffer when device memory cannot be mapped. */
int vk_memory_init(struct vk_ctx *ctx);
void vk_memory_destroy(struct vk_ctx *ctx);
int vk_mem_alloc(struct tg_device *dev, size_t size, void **out);
void vk_mem_free(struct tg_device *dev, void *mem, size_t size);
int vk_copy_in(struct tg_device *dev, void *dst, size_t offset,
               const void *src, size_t n);
int vk_copy_out(struct tg_device *dev, void *dst, const void *src,
                size_t offset, size_t n);
int vk_view(struct tg_device *dev, void *mem, size_t offset, size_t size,
            void **out);
void vk_view_free(struct tg_device *dev, void *view);
int vk_mem_info(struct tg_device *dev, uint64_t *free_bytes,
                uint64_t *total_bytes);

/* ------------------------------------------------------------------ */
/* program.c: GLSL -> SPIR-V, shader modules and pipelines             */
/* ------------------------------------------------------------------ */

/* One pipeline per work-group size. */
struct vk_pipe {
	uint32_t wg[3];
	VkPipeline pipe;
};

struct vk_program {
	VkShaderModule module;
	VkDescriptorSetLayout set_layout; /* nbind storage buffers */
	VkPipelineLayout layout;          /* + VK_PUSH_BYTES of constants */
	uint32_t nbind;                   /* highest binding + 1 */
	struct vk_pipe *pipes;            /* malloc'd, npipes used */
	size_t npipes, cap;
	char name[64];                    /* for messages */
};

/* Reads [vulkan] glslc and glslc_flags, runs `glslc --version` and
 * writes ctx->identity.  Needs ctx->feat, props. */
int vk_compiler_init(struct vk_ctx *ctx);
void vk_compiler_free(struct vk_ctx *ctx);
const char *vk_identity(struct tg_device *dev);
int vk_compile(struct tg_device *dev, const char *src, void **blob,
               size_t *blob_len, char **log);
int vk_load(struct tg_device *dev, const char *name, const void *blob,
            size_t blob_len, void **prog);
void vk_program_free(struct tg_device *dev, void *prog);
/* The pipeline of `prog` for work-group size wg, created on first use.
 * Borrowed from prog.  Call with ctx->lock held. */
int vk_pipeline_get(struct vk_ctx *ctx, struct vk_program *prog,
                    const uint32_t wg[3], VkPipeline *out);

/* ------------------------------------------------------------------ */
/* queue.c: recording, batching, submission                            */
/* ------------------------------------------------------------------ */

/* Work-group size and group counts of one dispatch. */
struct vk_geometry {
	uint32_t wg[3];
	uint32_t groups[3];
};

int vk_queue_init(struct vk_ctx *ctx);
void vk_queue_destroy(struct vk_ctx *ctx);
/* Begins the command buffer if it is not recording.  Lock held. */
int vk_queue_begin(struct vk_ctx *ctx);
/* Submits what was recorded and waits for it; resets the batch pools.
 * A no-op when nothing was recorded.  Lock held. */
int vk_queue_submit(struct vk_ctx *ctx);
/* vk_queue_submit, then waits for the graphs in flight: afterwards no
 * queued work is left.  Lock held. */
int vk_queue_flush(struct vk_ctx *ctx);
int vk_launch(struct tg_device *dev, void *prog, struct tg_launch *args);
int vk_synchronize(struct tg_device *dev);
/* Checks a launch's geometry and computes its dispatch; `what` ("vulkan
 * launch") starts the error. */
int vk_geometry(struct vk_ctx *ctx, const char *what,
                const struct tg_launch *a, struct vk_geometry *g);
/* Checks a launch's buffers and values against p and the limits, and
 * converts the values to vals[a->nvals] for the push constants. */
int vk_check_args(struct vk_ctx *ctx, const char *what,
                  const struct vk_program *p, const struct tg_launch *a,
                  int32_t vals[]);
/* Barriers recorded after each dispatch (later dispatches and copies
 * see its writes) and at the end of a submission (the host does). */
void vk_dispatch_barrier(VkCommandBuffer cb);
void vk_host_barrier(VkCommandBuffer cb);

/* ------------------------------------------------------------------ */
/* graph.c: graphs, one command buffer each                            */
/* ------------------------------------------------------------------ */

struct vk_graph;

int vk_graph_new(struct tg_device *dev, void *const *progs,
                 struct tg_launch *const *launches, size_t n, void **graph);
int vk_graph_run(struct tg_device *dev, void *graph,
                 struct tg_launch *const *launches, size_t n);
void vk_graph_free(struct tg_device *dev, void *graph);
/* Waits for every graph in flight.  Lock held. */
int vk_graphs_wait(struct vk_ctx *ctx);

#endif /* TG_PLUGIN_VULKAN_H */

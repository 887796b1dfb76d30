#include "config.h"
/*
 * program.c - GLSL compute shaders to SPIR-V with glslc, and loaded
 * programs: a shader module, a descriptor-set layout of storage buffers
 * (bindings 0 .. nbind-1 of set 0, nbind read from the SPIR-V), a
 * pipeline layout with VK_PUSH_BYTES of push constants, and one compute
 * pipeline per work-group size (the size is given to the shader as
 * specialization constants 0, 1 and 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "vulkan.h"

#define SPV_MAGIC 0x07230203u
#define SPV_OP_ENTRY_POINT 15u
#define SPV_OP_DECORATE 71u
#define SPV_DEC_BINDING 33u
#define SPV_MODEL_GLCOMPUTE 5u

/* ------------------------------------------------------------------ */
/* Compiler                                                            */
/* ------------------------------------------------------------------ */

/* glslc, Debian's shaderc command, run as a child process (tool.h):
 * Debian 12's libshaderc.so.1 does not link on its own and glslang
 * ships only static archives, so the library route meant bundling 9 MB
 * of glslang and SPIRV-Tools into this plugin.  -O is spirv-opt's
 * performance pass, which does not contract a * b + c into fma, so float
 * results do not change. */
static const struct tool_spec glslc_spec = {
	.who = "vulkan",
	.cmd_key = "glslc",
	.cmd_default = "glslc",
	.flags_key = "glslc_flags",
	.flags_default = "-O",
	.version_lines = 3, /* shaderc, spirv-tools, glslang */
};

/* "--target-env=vulkan1.x" for the API version the device runs. */
static const char *target_env(uint32_t api)
{
	if (api >= VK_API_VERSION_1_3)
		return "--target-env=vulkan1.3";
	if (api >= VK_API_VERSION_1_2)
		return "--target-env=vulkan1.2";
	return "--target-env=vulkan1.1";
}

/* "glslc -O --target-env=vulkan1.3 | shaderc 2023.2-1 | spirv-tools ...
 * | glslang ... | llvmpipe (...) | driver 0x1 | int64 float64 ...":
 * what makes one source compile differently. */
static void write_identity(struct vk_ctx *ctx)
{
	const struct vk_features *f = &ctx->feat;

	snprintf(ctx->identity, sizeof ctx->identity, "%s %s | %s | %s | %s "
	         "| driver 0x%x |%s%s%s%s%s%s%s", tool_command(ctx->glslc),
	         target_env(ctx->api_version), tool_version(ctx->glslc),
	         ctx->props.deviceName, ctx->driver, ctx->props.driverVersion,
	         f->int64 ? " int64" : "", f->float64 ? " float64" : "",
	         f->int16 ? " int16" : "", f->float16 ? " float16" : "",
	         f->int8 ? " int8" : "", f->storage16 ? " storage16" : "",
	         f->storage8 ? " storage8" : "");
}

int vk_compiler_init(struct vk_ctx *ctx)
{
	int ret = tool_new(ctx->host, &glslc_spec, &ctx->glslc);

	if (ret == 0)
		write_identity(ctx);
	return ret;
}

void vk_compiler_free(struct vk_ctx *ctx)
{
	tool_free(ctx->glslc);
	ctx->glslc = NULL;
}

const char *vk_identity(struct tg_device *dev)
{
	struct vk_ctx *ctx = dev->ctx;

	return ctx->identity;
}

/* GLSL -> SPIR-V words.  glslc's errors ("<stdin>:12: error: ...") come
 * back in the message and in full in *log. */
int vk_compile(struct tg_device *dev, const char *src, void **blob,
               size_t *blob_len, char **log)
{
	struct vk_ctx *ctx = dev->ctx;
	const char *const tail[] = {
		"-fshader-stage=compute", target_env(ctx->api_version),
		"-o", "%o", "-", NULL
	};

	return tool_compile(ctx->glslc, tail, "kernel.spv", src, blob,
	                    blob_len, log);
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

/* Reads the highest Binding decoration (+1) into *nbind and checks that
 * there is a GLCompute entry point named "main". */
static int spirv_scan(struct vk_ctx *ctx, const char *name,
                      const uint32_t *w, size_t nw, uint32_t *nbind)
{
	int has_main = 0;
	size_t i;

	*nbind = 0;
	if (nw < 5 || w[0] != SPV_MAGIC)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "vulkan load "
		       "'%s': not SPIR-V (%zu words)", name, nw);
	for (i = 5; i < nw; i += w[i] >> 16) {
		uint32_t op = w[i] & 0xffff, wc = w[i] >> 16;

		if (wc == 0 || i + wc > nw)
			return ctx->host->set_error(ctx->host, TG_EINVAL,
			       "vulkan load '%s': SPIR-V is truncated at word "
			       "%zu", name, i);
		if (op == SPV_OP_DECORATE && wc >= 4 &&
		    w[i + 2] == SPV_DEC_BINDING && w[i + 3] + 1 > *nbind)
			*nbind = w[i + 3] + 1;
		if (op == SPV_OP_ENTRY_POINT && wc >= 5 &&
		    w[i + 1] == SPV_MODEL_GLCOMPUTE &&
		    strncmp((const char *)&w[i + 3], "main", 5) == 0)
			has_main = 1;
	}
	if (!has_main)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "vulkan load "
		       "'%s': no compute entry point \"main\"", name);
	return 0;
}

static int layouts_new(struct vk_ctx *ctx, struct vk_program *p)
{
	VkDescriptorSetLayoutBinding b[64];
	VkDescriptorSetLayoutCreateInfo sci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = p->nbind,
		.pBindings = b,
	};
	VkPushConstantRange pc = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.size = VK_PUSH_BYTES,
	};
	VkPipelineLayoutCreateInfo lci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &p->set_layout,
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &pc,
	};
	VkResult r;

	for (uint32_t i = 0; i < p->nbind; i++)
		b[i] = (VkDescriptorSetLayoutBinding){
			.binding = i,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
	r = vkCreateDescriptorSetLayout(ctx->device, &sci, NULL,
	                                &p->set_layout);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "load '%s': vkCreateDescriptorSetLayout",
		               p->name);
	r = vkCreatePipelineLayout(ctx->device, &lci, NULL, &p->layout);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "load '%s': vkCreatePipelineLayout",
		               p->name);
	return 0;
}

static int module_new(struct vk_ctx *ctx, struct vk_program *p,
                      const void *blob, size_t blob_len)
{
	VkShaderModuleCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = blob_len,
		.pCode = blob,
	};
	uint32_t limit = ctx->props.limits.maxPerStageDescriptorStorageBuffers;
	VkResult r;
	int ret;

	if (blob_len % 4 != 0 || ((uintptr_t)blob & 3) != 0)
		return ctx->host->set_error(ctx->host, TG_EINVAL, "vulkan load "
		       "'%s': SPIR-V of %zu bytes is not aligned words",
		       p->name, blob_len);
	if ((ret = spirv_scan(ctx, p->name, blob, blob_len / 4, &p->nbind)))
		return ret;
	if (p->nbind > 64 || p->nbind > limit)
		return ctx->host->set_error(ctx->host, TG_EUNSUPPORTED, "vulkan"
		       " load '%s': %u storage buffers, the limit is %u",
		       p->name, p->nbind, limit < 64 ? limit : 64);
	r = vkCreateShaderModule(ctx->device, &ci, NULL, &p->module);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "load '%s': vkCreateShaderModule",
		               p->name);
	return 0;
}

int vk_load(struct tg_device *dev, const char *name, const void *blob,
            size_t blob_len, void **prog)
{
	struct vk_ctx *ctx = dev->ctx;
	struct vk_program *p = calloc(1, sizeof *p);
	int ret;

	if (p == NULL)
		return ctx->host->set_error(ctx->host, TG_ENOMEM, "vulkan load:"
		                            " out of host memory");
	snprintf(p->name, sizeof p->name, "%s", name ? name : "?");
	if ((ret = module_new(ctx, p, blob, blob_len)) != 0 ||
	    (ret = layouts_new(ctx, p)) != 0) {
		vk_program_free(dev, p);
		return ret;
	}
	*prog = p;
	return 0;
}

/* Waits for recorded work first: it may use the pipelines. */
void vk_program_free(struct tg_device *dev, void *prog)
{
	struct vk_ctx *ctx = dev->ctx;
	struct vk_program *p = prog;

	pthread_mutex_lock(&ctx->lock);
	vk_queue_flush(ctx);
	pthread_mutex_unlock(&ctx->lock);
	for (size_t i = 0; i < p->npipes; i++)
		vkDestroyPipeline(ctx->device, p->pipes[i].pipe, NULL);
	free(p->pipes);
	vkDestroyPipelineLayout(ctx->device, p->layout, NULL);
	vkDestroyDescriptorSetLayout(ctx->device, p->set_layout, NULL);
	vkDestroyShaderModule(ctx->device, p->module, NULL);
	free(p);
}

/* ------------------------------------------------------------------ */
/* Pipelines                                                           */
/* ------------------------------------------------------------------ */

static VkResult pipeline_new(struct vk_ctx *ctx, struct vk_program *p,
                             const uint32_t wg[3], VkPipeline *out)
{
	VkSpecializationMapEntry map[3];
	VkSpecializationInfo spec = {
		.mapEntryCount = 3,
		.pMapEntries = map,
		.dataSize = 3 * sizeof(uint32_t),
		.pData = wg,
	};
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType =
			VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = p->module,
			.pName = "main",
			.pSpecializationInfo = &spec,
		},
		.layout = p->layout,
	};

	for (uint32_t i = 0; i < 3; i++)
		map[i] = (VkSpecializationMapEntry){
			.constantID = i,
			.offset = i * (uint32_t)sizeof(uint32_t),
			.size = sizeof(uint32_t),
		};
	return vkCreateComputePipelines(ctx->device, VK_NULL_HANDLE, 1, &ci,
	                                NULL, out);
}

int vk_pipeline_get(struct vk_ctx *ctx, struct vk_program *p,
                    const uint32_t wg[3], VkPipeline *out)
{
	struct vk_pipe *grown;
	VkResult r;

	for (size_t i = 0; i < p->npipes; i++)
		if (memcmp(p->pipes[i].wg, wg, sizeof p->pipes[i].wg) == 0)
			return *out = p->pipes[i].pipe, 0;
	if (p->npipes == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4;

		if ((grown = realloc(p->pipes, cap * sizeof *grown)) == NULL)
			return ctx->host->set_error(ctx->host, TG_ENOMEM,
			       "vulkan launch: out of host memory");
		p->pipes = grown;
		p->cap = cap;
	}
	r = pipeline_new(ctx, p, wg, out);
	if (r != VK_SUCCESS)
		return vk_fail(ctx, r, "launch '%s': vkCreateComputePipelines "
		               "for work-group %ux%ux%u", p->name, wg[0], wg[1],
		               wg[2]);
	memcpy(p->pipes[p->npipes].wg, wg, sizeof p->pipes[0].wg);
	p->pipes[p->npipes++].pipe = *out;
	return 0;
}

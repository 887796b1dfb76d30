/*
 * graphkernels.h - the hand-written kernel step_u in each dialect, for
 * the graph suite (test_graph.c) and its bench (bench/bench_graph.c).
 * Buffers (out, in), values (v0, n), for i in [0, n):
 *   step_u: out[i] = in[n - 1 - i] * 3 + v0 + i    (uint32, wrapping)
 * Reading the mirrored item makes each item depend on one that another
 * thread or work-group wrote in the launch before.  GL_HEAD(T) is the
 * GLSL kernel up to its store, over element type T.
 */
#ifndef TG_GRAPHKERNELS_H
#define TG_GRAPHKERNELS_H

static const char c_step_u[] = "#include <stddef.h>\n#include <stdint.h>\n"
	"void step_u(void *const *b, const int64_t *v, const size_t *g,\n"
	"            size_t lo, size_t hi)\n"
	"{\n"
	"	uint32_t *out = b[0];\n"
	"	const uint32_t *in = b[1];\n"
	"	size_t n = (size_t)v[1];\n"
	"	for (size_t i = lo; i < hi; i++)\n"
	"		out[i] = in[n - 1 - i] * 3u + (uint32_t)v[0] +\n"
	"		         (uint32_t)i;\n"
	"	(void)g;\n"
	"}\n";

static const char cl_step_u[] =
	"__kernel void step_u(__global uint *data0, __global const uint "
	"*data1,\n"
	"                     const int var0, const int var1)\n"
	"{\n"
	"	int i = get_global_id(0);\n"
	"	data0[i] = data1[var1 - 1 - i] * 3u + (uint)var0 + (uint)i;\n"
	"}\n";

/* CUDA: launched flat (local 1,1,1), so blocks of the plugin's size
 * with a bound. */
#define CU_HEAD(NAME, T) "extern \"C\" __global__ void " NAME "(" T \
	" *data0, " \
	"const " T " *data1, const int var0, const int var1)\n" \
	"{\n" \
	"	unsigned int i = (blockIdx.y * gridDim.x + blockIdx.x) *\n" \
	"	                 blockDim.x + threadIdx.x;\n" \
	"	unsigned int n = (unsigned int)var1;\n" \
	"	if (i >= n) return;\n"

#define GL_HEAD(T) "#version 450\n" \
	"layout(local_size_x_id = 0, local_size_y_id = 1, " \
	"local_size_z_id = 2) in;\n" \
	"layout(std430, set = 0, binding = 0) buffer tg_buf_0 { " T \
	" data_0[]; };\n" \
	"layout(std430, set = 0, binding = 1) readonly buffer tg_buf_1 { " \
	T " data_1[]; };\n" \
	"layout(push_constant) uniform tg_vals { int v[2]; } vals;\n" \
	"void main() {\n" \
	"	uint i = gl_GlobalInvocationID.x +\n" \
	"	         gl_GlobalInvocationID.y *\n" \
	"	         gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n" \
	"	uint n = uint(vals.v[1]);\n" \
	"	if (i >= n) return;\n"

static const char cu_step_u[] = CU_HEAD("step_u", "unsigned int")
	"	data0[i] = data1[n - 1u - i] * 3u + (unsigned int)var0 + i;\n"
	"}\n";

static const char gl_step_u[] = GL_HEAD("uint")
	"	data_0[i] = data_1[n - 1u - i] * 3u + uint(vals.v[0]) + i;\n"
	"}\n";

#endif

/*
 * test_abi.c - pins the layout of every struct in tg/plugin.h against
 * tests/plugin-abi.txt, so that inserting, removing or retyping a field
 * fails `make check` until somebody bumps TG_PLUGIN_ABI_* and the table
 * on purpose (PLUGINS.md section 2).  Regenerate the table with
 * `tests/test_abi --print > tests/plugin-abi.txt` after such a bump.
 */
#include "config.h"

#include <tg/plugin.h>

#include "testlib.h"

#define F(T, f) { #T, #f, offsetof(struct T, f), \
	sizeof(((struct T *)0)->f) }
#define S(T) { #T, "(sizeof)", 0, sizeof(struct T) }

static const struct field {
	const char *type, *field;
	size_t offset, size;
} fields[] = {
	F(tg_host, struct_size), F(tg_host, abi_major), F(tg_host, abi_minor),
	F(tg_host, log), F(tg_host, set_error), F(tg_host, alloc),
	F(tg_host, free), F(tg_host, config_get), F(tg_host, cache_dir),
	F(tg_host, debug), F(tg_host, core_private), F(tg_host, kernel_info),
	F(tg_host, kernel_op), F(tg_host, config_error), S(tg_host),

	F(tg_allocator_iface, struct_size), F(tg_allocator_iface, alloc),
	F(tg_allocator_iface, free), F(tg_allocator_iface, copy_in),
	F(tg_allocator_iface, copy_out), F(tg_allocator_iface, view),
	F(tg_allocator_iface, view_free), F(tg_allocator_iface, mem_info),
	F(tg_allocator_iface, wrap), F(tg_allocator_iface, unwrap),
	F(tg_allocator_iface, transfer),
	S(tg_allocator_iface),

	F(tg_compiler_iface, struct_size), F(tg_compiler_iface, identity),
	F(tg_compiler_iface, compile), S(tg_compiler_iface),

	F(tg_renderer_caps, struct_size), F(tg_renderer_caps, dialect),
	F(tg_renderer_caps, has_local), F(tg_renderer_caps, has_shared),
	F(tg_renderer_caps, max_upcast), F(tg_renderer_caps, global_max),
	F(tg_renderer_caps, local_max), F(tg_renderer_caps, local_max_total),
	F(tg_renderer_caps, shared_max), F(tg_renderer_caps, dtype_mask),
	F(tg_renderer_caps, needs_transcendental_fallback),
	F(tg_renderer_caps, tensor_cores), F(tg_renderer_caps, tc),
	F(tg_renderer_caps, buffer_align), F(tg_renderer_caps, render),
	S(tg_renderer_caps),

	F(tg_kernel_info, struct_size), F(tg_kernel_info, name),
	F(tg_kernel_info, nops), F(tg_kernel_info, nbufs),
	F(tg_kernel_info, outs), F(tg_kernel_info, nvars),
	F(tg_kernel_info, vars), F(tg_kernel_info, global),
	F(tg_kernel_info, local), S(tg_kernel_info),

	F(tg_kernel_op, struct_size), F(tg_kernel_op, op),
	F(tg_kernel_op, dtype), F(tg_kernel_op, lanes), F(tg_kernel_op, space),
	F(tg_kernel_op, nsrc), F(tg_kernel_op, src), F(tg_kernel_op, i),
	F(tg_kernel_op, u), F(tg_kernel_op, f), F(tg_kernel_op, a),
	F(tg_kernel_op, b), F(tg_kernel_op, name), F(tg_kernel_op, vmin),
	F(tg_kernel_op, vmax), S(tg_kernel_op),

	F(tg_tc_split, kind), F(tg_tc_split, dim), F(tg_tc_split, amt),
	S(tg_tc_split),

	F(tg_tensor_core, struct_size), F(tg_tensor_core, dims),
	F(tg_tensor_core, dtype_in), F(tg_tensor_core, dtype_out),
	F(tg_tensor_core, nsplits), F(tg_tensor_core, splits),
	S(tg_tensor_core),

	F(tg_launch, struct_size), F(tg_launch, bufs), F(tg_launch, nbufs),
	F(tg_launch, vals), F(tg_launch, nvals), F(tg_launch, global),
	F(tg_launch, local), F(tg_launch, wait), F(tg_launch, elapsed_s),
	S(tg_launch),

	F(tg_runtime_iface, struct_size), F(tg_runtime_iface, load),
	F(tg_runtime_iface, launch), F(tg_runtime_iface, synchronize),
	F(tg_runtime_iface, program_free), F(tg_runtime_iface, graph_new),
	F(tg_runtime_iface, graph_run), F(tg_runtime_iface, graph_free),
	F(tg_runtime_iface, trial),
	S(tg_runtime_iface),

	F(tg_device_info, struct_size), F(tg_device_info, name),
	F(tg_device_info, description), F(tg_device_info, type),
	F(tg_device_info, total_memory), S(tg_device_info),

	F(tg_device, struct_size), F(tg_device, ctx), F(tg_device, info),
	F(tg_device, allocator), F(tg_device, compiler),
	F(tg_device, renderer), F(tg_device, runtime), F(tg_device, close),
	S(tg_device),

	F(tg_probe, struct_size), F(tg_probe, ndevices), F(tg_probe, type),
	F(tg_probe, reason), F(tg_probe, ntypes), F(tg_probe, types),
	S(tg_probe),

	F(tg_plugin, struct_size), F(tg_plugin, abi_major),
	F(tg_plugin, abi_minor), F(tg_plugin, name), F(tg_plugin, aliases),
	F(tg_plugin, version), F(tg_plugin, vendor),
	F(tg_plugin, description), F(tg_plugin, priority),
	F(tg_plugin, probe), F(tg_plugin, open),
	F(tg_plugin, query_extension), F(tg_plugin, unload), S(tg_plugin),
};

static void format(char *buf, size_t n, const struct field *f)
{
	snprintf(buf, n, "%s.%s %zu %zu", f->type, f->field, f->offset,
	         f->size);
}

START_TEST(layout_matches_the_committed_table)
{
	char path[512], line[256], want[256];
	size_t i = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/plugin-abi.txt",
	         getenv("TG_TEST_SRCDIR"));
	ck_assert_msg((f = fopen(path, "r")) != NULL, "cannot open %s", path);
	ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
	snprintf(want, sizeof want, "abi %d.%d\n", TG_PLUGIN_ABI_MAJOR,
	         TG_PLUGIN_ABI_MINOR);
	ck_assert_str_eq(line, want);
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		ck_assert_msg(i < TG_ARRAY_LEN(fields), "extra line '%s'", line);
		format(want, sizeof want, &fields[i++]);
		ck_assert_str_eq(line, want);
	}
	fclose(f);
	ck_assert_uint_eq(i, TG_ARRAY_LEN(fields));
}
END_TEST

/* The kernel view's op codes and type numbers are ABI: a plugin's
 * renderer switches on them (tg/plugin.h promises they never change). */
START_TEST(kernel_op_codes_are_pinned)
{
	static const int codes[] = {
		TG_KOP_DEFINE_GLOBAL, TG_KOP_DEFINE_VAR, TG_KOP_DEFINE_LOCAL,
		TG_KOP_DEFINE_ACC, TG_KOP_CONST, TG_KOP_SPECIAL, TG_KOP_RANGE,
		TG_KOP_ENDRANGE, TG_KOP_PHI, TG_KOP_LOAD, TG_KOP_STORE,
		TG_KOP_CAST, TG_KOP_BITCAST, TG_KOP_VECTORIZE, TG_KOP_GEP,
		TG_KOP_BARRIER, TG_KOP_WMMA,
	};
	static const int alu[] = {
		TG_KOP_EXP2, TG_KOP_LOG2, TG_KOP_SIN, TG_KOP_SQRT, TG_KOP_NEG,
		TG_KOP_RECIP, TG_KOP_ADD, TG_KOP_MUL, TG_KOP_IDIV, TG_KOP_MAX,
		TG_KOP_MOD, TG_KOP_CMPLT, TG_KOP_CMPNE, TG_KOP_XOR,
		TG_KOP_SHL, TG_KOP_SHR, TG_KOP_OR, TG_KOP_AND,
		TG_KOP_THREEFRY, TG_KOP_WHERE, TG_KOP_MULACC,
	};

	for (size_t i = 0; i < TG_ARRAY_LEN(codes); i++)
		ck_assert_int_eq(codes[i], 1 + (int)i);
	for (size_t i = 0; i < TG_ARRAY_LEN(alu); i++)
		ck_assert_int_eq(alu[i], 32 + (int)i);
	ck_assert_int_eq(TG_KTYPE_INDEX, 32);
	ck_assert_int_eq(TG_KTYPE_VOID, 33);
	ck_assert_int_eq(TG_KSPACE_GLOBAL, 1);
	ck_assert_int_eq(TG_KSPACE_LOCAL, 2);
	ck_assert_int_eq(TG_KOP_MAX_SRC, 65);
	ck_assert_int_eq(TG_WRAP_HOST, 1);
	ck_assert_int_eq(TG_WRAP_NATIVE, 2);
	ck_assert_int_eq(TG_DIALECT_CUSTOM, 4);
}
END_TEST

START_TEST(struct_size_macros_cover_whole_structs)
{
	/* every struct's struct_size as producers fill it covers up to and
	 * including its last field, and TG_HAS agrees */
	struct tg_plugin d = { .struct_size =
	                       TG_STRUCT_SIZE(struct tg_plugin, open) };

	ck_assert(TG_HAS(&d, struct tg_plugin, open));
	ck_assert(!TG_HAS(&d, struct tg_plugin, query_extension));
	ck_assert(!TG_HAS(&d, struct tg_plugin, unload));
	/* up to the struct's tail padding */
	ck_assert_uint_lt(sizeof(struct tg_probe) -
	                  TG_STRUCT_SIZE(struct tg_probe, types),
	                  _Alignof(struct tg_probe));
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("abi");
	TCase *tc = tcase_create("layout");
	char line[256];
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "--print")) {
		printf("abi %d.%d\n", TG_PLUGIN_ABI_MAJOR, TG_PLUGIN_ABI_MINOR);
		for (i = 0; i < TG_ARRAY_LEN(fields); i++) {
			format(line, sizeof line, &fields[i]);
			puts(line);
		}
		return 0;
	}
	tcase_add_test(tc, layout_matches_the_committed_table);
	tcase_add_test(tc, struct_size_macros_cover_whole_structs);
	tcase_add_test(tc, kernel_op_codes_are_pinned);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

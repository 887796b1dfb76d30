/*
 * test_ggml_dequant.c - tg_ggml_dequantize against the gguf package.
 *
 * tests/gguf/quant_ref.py (run with TG_DEPS_DIR's Python, once, before
 * the tests) writes GGML blocks of every supported type, quantized by
 * the package or random, and the package's own dequantization of them;
 * each case here loads the bytes into a uint8 tensor on the device
 * under test (DEVICE; the CPU in `make check`, OpenCL and Vulkan
 * through tests/dev/<device>/test_ggml_dequant.dev), decodes them there
 * and compares every value bit for bit.  A matvec with a decoded weight
 * of each quantized type must be one kernel (the decode fused into it)
 * and equal numpy's W @ x within float32 rounding; a batch of rows is
 * two (the decode, then the matmul).  Without the references
 * (no TG_DEPS_DIR venv with gguf) the refusals alone run and the suite
 * then skips (77), or fails where TG_TEST_REQUIRE_DEPS is set.
 */
#include "config.h"

#include "optest.h"

#define MAXCASES 128

/* One case of cases.txt or matvec.txt. */
typedef struct ref_case {
	char name[64];
	int type;
	size_t ndim;
	int64_t shape[4];
} ref_case;

static char refdir[512];
static ref_case cases[MAXCASES], matvecs[16];
static int ncases, nmatvecs;

static void setup(void)
{
	ot_suite = "ggml_dequant";
	ot_setup();
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	ot_teardown();
}

/* The bytes of refdir/name.ext (malloc'd), their count in *n. */
static void *load(const char *name, const char *ext, size_t *n)
{
	char path[700];
	FILE *f;
	void *p;
	long len;

	snprintf(path, sizeof path, "%s/%s.%s", refdir, name, ext);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s: cannot open", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc(len ? (size_t)len : 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(fread(p, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return p;
}

/* A realized uint8 tensor of name.raw's bytes on the device. */
static tg_tensor *raw_tensor(const char *name)
{
	size_t n;
	void *b = load(name, "raw", &n);
	tg_tensor *t = tg_tensor_new(ot_dev(), TG_UINT8, 1,
	                             (int64_t[]){ (int64_t)n }, b);

	free(b);
	ck_assert_msg(t && tg_realize(t) == 0, "%s", tg_last_error());
	return t;
}

/* The dtype of the values, and the dtype of the words they are made of
 * on the device. */
static tg_dtype out_dtype(int type, tg_dtype *word)
{
	*word = TG_UINT32;
	switch (type) {
	case TG_GGML_F16: *word = TG_UINT16; return TG_FLOAT16;
	case TG_GGML_BF16: *word = TG_UINT16; return TG_BFLOAT16;
	case TG_GGML_F64: *word = TG_UINT64; return TG_FLOAT64;
	case TG_GGML_I8: *word = TG_UINT8; return TG_INT8;
	case TG_GGML_I16: *word = TG_UINT16; return TG_INT16;
	case TG_GGML_I32: return TG_INT32;
	case TG_GGML_I64: *word = TG_UINT64; return TG_INT64;
	default: return TG_FLOAT32;
	}
}

/* Each case: the values, read back (float16 and bfloat16 widened to
 * float32 on the device, as the package widens them), have the
 * reference's bytes. */
START_TEST(matches_gguf)
{
	const ref_case *c = &cases[_i];
	tg_dtype word, dt = out_dtype(c->type, &word);
	tg_tensor *out;
	size_t n, i;
	unsigned char *want, *got;

	if (!ot_dtypes_ok(dt, word))
		return;
	out = tg_ggml_dequantize(raw_tensor(c->name), c->type, c->ndim,
	                         c->shape);
	ck_assert_msg(out != NULL, "%s: %s", c->name, tg_last_error());
	ck_assert_int_eq(tg_tensor_dtype(out), dt);
	ck_assert_uint_eq(tg_tensor_ndim(out), c->ndim);
	for (i = 0; i < c->ndim; i++)
		ck_assert_int_eq(tg_tensor_shape(out)[i], c->shape[i]);
	if (dt == TG_FLOAT16 || dt == TG_BFLOAT16)
		out = tg_cast(out, TG_FLOAT32);
	want = load(c->name, "want", &n);
	ck_assert_uint_eq(n, (size_t)tg_tensor_numel(out) *
	                     tg_dtype_size(tg_tensor_dtype(out)));
	got = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(got);
	ck_assert_msg(tg_tensor_data(out, got, n) == 0, "%s: %s", c->name,
	              tg_last_error());
	for (i = 0; i < n; i += 4)
		if (memcmp(got + i, want + i, n - i < 4 ? n - i : 4)) {
			uint32_t g = 0, w = 0;

			memcpy(&g, got + i, n - i < 4 ? n - i : 4);
			memcpy(&w, want + i, n - i < 4 ? n - i : 4);
			ck_abort_msg("%s on %s: bytes %zu-%zu are %08x, the "
			             "package's %08x", c->name,
			             tg_dev_name(ot_dev()), i, i + 3, g, w);
		}
	free(got);
	free(want);
}
END_TEST

/* W @ x with W a decoded weight is one kernel: the decode runs inside
 * the matvec, reading the packed bytes. */
START_TEST(matvec_is_one_kernel)
{
	const ref_case *c = &matvecs[_i];
	int64_t rows = c->shape[0], cols = c->shape[1];
	tg_tensor *w, *x, *y;
	tg_counters k;
	size_t n, i;
	float *xs, *want, *got;
	double big = 0;

	xs = load(c->name, "x", &n);
	ck_assert_uint_eq(n, (size_t)cols * sizeof(float));
	x = tg_tensor_new(ot_dev(), TG_FLOAT32, 1, &cols, xs);
	ck_assert_msg(x && tg_realize(x) == 0, "%s", tg_last_error());
	w = tg_ggml_dequantize(raw_tensor(c->name), c->type, 2, c->shape);
	y = tg_matmul(x, tg_transpose(w, 0, 1));
	ck_assert_msg(y != NULL, "%s: %s", c->name, tg_last_error());
	tg_counters_reset();
	ck_assert_msg(tg_realize(y) == 0, "%s", tg_last_error());
	tg_counters_get(&k);
	ck_assert_msg(k.kernels == 1, "%s on %s: %llu kernels, not 1",
	              c->name, tg_dev_name(ot_dev()),
	              (unsigned long long)k.kernels);
	want = load(c->name, "y", &n);
	ck_assert_uint_eq(n, (size_t)rows * sizeof(float));
	got = malloc(n);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(tg_tensor_data(y, got, n), 0);
	for (i = 0; i < (size_t)rows; i++)   /* the sums' scale */
		big = fmax(big, fabs(want[i]));
	for (i = 0; i < (size_t)rows; i++)   /* float32 sums of 512 */
		ck_assert_msg(fabs(got[i] - want[i]) <= 1e-5 * (1 + big),
		              "%s: y[%zu] = %.9g, numpy's %.9g", c->name, i,
		              got[i], want[i]);
	free(got);
	free(want);
	free(xs);
}
END_TEST

/* A batch of rows times a decoded weight (a prompt's prefill) is two
 * kernels: the decode, realized as a float32 weight, then the matmul.
 * The scheduler realizes an op read through an expanding view (the
 * weight broadcast along the batch), as tinygrad's mid-2024 scheduler
 * does, so the decode runs once per batch, not once per row.  Row r
 * of x is (r + 1) times the matvec's x, so y's row r is (r + 1) times
 * numpy's y, within float32 rounding. */
START_TEST(batch_matmul_is_decode_then_matmul)
{
	const ref_case *c = &matvecs[_i];
	int64_t rows = c->shape[0], cols = c->shape[1];
	tg_tensor *w, *x, *y;
	tg_counters k;
	size_t n;
	float *xs, *xb, *want, *got;
	double big = 0;

	xs = load(c->name, "x", &n);
	xb = malloc(4 * n);
	got = malloc(4 * (size_t)rows * sizeof *got);
	ck_assert(xb && got);
	for (int r = 0; r < 4; r++)
		for (int64_t j = 0; j < cols; j++)
			xb[r * cols + j] = xs[j] * (float)(r + 1);
	x = tg_tensor_new(ot_dev(), TG_FLOAT32, 2, (int64_t[]){ 4, cols }, xb);
	ck_assert_msg(x && tg_realize(x) == 0, "%s", tg_last_error());
	w = tg_ggml_dequantize(raw_tensor(c->name), c->type, 2, c->shape);
	y = tg_matmul(x, tg_transpose(w, 0, 1));
	ck_assert_msg(y != NULL, "%s: %s", c->name, tg_last_error());
	tg_counters_reset();
	ck_assert_msg(tg_realize(y) == 0, "%s", tg_last_error());
	tg_counters_get(&k);
	ck_assert_msg(k.kernels == 2, "%s on %s: %llu kernels, not 2",
	              c->name, tg_dev_name(ot_dev()),
	              (unsigned long long)k.kernels);
	ck_assert_int_eq(tg_tensor_data(y, got, 4 * (size_t)rows *
	                                 sizeof *got), 0);
	want = load(c->name, "y", &n);
	for (int64_t i = 0; i < rows; i++)
		big = fmax(big, fabs(want[i]));
	for (int r = 0; r < 4; r++)
		for (int64_t i = 0; i < rows; i++) {
			double g = got[r * rows + i], e = (r + 1) * want[i];

			ck_assert_msg(fabs(g - e) <= 1e-5 * (r + 1) * (1 + big),
			              "%s: y[%d][%lld] = %.9g, numpy's %.9g",
			              c->name, r, (long long)i, g, e);
		}
	free(want);
	free(got);
	free(xb);
	free(xs);
}
END_TEST

/* The call fails with `needle` in the message, naming the operation. */
static void refused(const tg_tensor *raw, int type, size_t ndim,
                    const int64_t *shape, const char *needle)
{
	tg_clear_error();
	ck_assert_ptr_null(tg_ggml_dequantize(raw, type, ndim, shape));
	ck_assert_int_eq(tg_last_status(), TG_EINVAL);
	ck_assert_error("ggml_dequantize: ");
	ck_assert_error(needle);
}

START_TEST(refuses_bad_input)
{
	uint8_t bytes[144] = { 0 };  /* the largest tensor below */
	int64_t n18 = 18, n17 = 17, n54 = 54, n144 = 144, n32 = 32;
	tg_tensor *r18 = tg_tensor_new(ot_dev(), TG_UINT8, 1, &n18, bytes);
	tg_tensor *r17 = tg_tensor_new(ot_dev(), TG_UINT8, 1, &n17, bytes);
	tg_tensor *r54 = tg_tensor_new(ot_dev(), TG_UINT8, 1, &n54, bytes);
	tg_tensor *r144 = tg_tensor_new(ot_dev(), TG_UINT8, 1, &n144, bytes);
	tg_tensor *i8 = tg_tensor_new(ot_dev(), TG_INT8, 1, &n18, bytes);
	tg_tensor *f32 = tg_tensor_new(ot_dev(), TG_FLOAT32, 1, &n18, NULL);
	char disk[600];

	snprintf(disk, sizeof disk, "DISK:%s", tl_tmp_path("ggml.bin"));

	refused(r18, 5, 1, &n32, "type 5 is not a GGML type");
	refused(r18, 99, 1, &n32, "type 99 is not a GGML type");
	refused(r18, -1, 1, &n32, "type -1 is not a GGML type");
	refused(r18, TG_GGML_IQ2_XXS, 1, &n32,
	        "type IQ2_XXS (16) is not supported");
	refused(r18, TG_GGML_IQ4_NL, 1, &n32,
	        "type IQ4_NL (20) is not supported");
	refused(r18, TG_GGML_Q8_1, 1, &n32, "type Q8_1 (9) is not supported");
	refused(r18, TG_GGML_Q2_K, 1, &n32, "type Q2_K (10) is not supported");
	refused(r17, TG_GGML_Q4_0, 1, &n32,
	        "Q4_0: 32 values take 18 bytes, raw has 17");
	refused(r18, TG_GGML_Q4_0, 2, (int64_t[]){ 2, 32 },
	        "Q4_0: 64 values take 36 bytes, raw has 18");
	refused(r54, TG_GGML_Q4_0, 2, (int64_t[]){ 2, 48 },
	        "Q4_0: rows of 48 values are not whole blocks of 32");
	refused(r144, TG_GGML_Q4_K, 2, (int64_t[]){ 8, 32 },
	        "Q4_K: rows of 32 values are not whole blocks of 256");
	refused(r18, TG_GGML_Q4_0, 0, NULL,
	        "Q4_0: rows of 1 values are not whole blocks of 32");
	refused(i8, TG_GGML_Q4_0, 1, &n32, "Q4_0: raw is int8, not uint8");
	refused(f32, TG_GGML_F32, 1, (int64_t[]){ 18 },
	        "F32: raw is float32, not uint8");
	refused(r18, TG_GGML_Q4_0, 1, (int64_t[]){ -32 },
	        "Q4_0: dimension 0 is -32");
	refused(r18, TG_GGML_Q4_0, 1, NULL, "Q4_0: no shape (NULL) for 1");
	refused(r18, TG_GGML_F32, 3, (int64_t[]){ 1 << 30, 1 << 30, 1 << 30 },
	        "F32: the shape has too many values");
	refused(tg_empty(tg_dev_get(disk), TG_UINT8, 1, &n18), TG_GGML_Q4_0,
	        1, &n32, "Q4_0: raw is on DISK:");
	/* NULL raw: NULL, and the earlier error stays (as tensor ops) */
	tg_set_error(TG_ENODEV, "an earlier failure");
	ck_assert_ptr_null(tg_ggml_dequantize(NULL, TG_GGML_Q4_0, 1, &n32));
	ck_assert_int_eq(tg_last_status(), TG_ENODEV);
	ck_assert_error("an earlier failure");
}
END_TEST

/* Empty tensors and a 0-dim value decode too. */
START_TEST(empty_and_scalar)
{
	int64_t zero = 0, four = 4;
	float v = -2.5f, got = 0;
	tg_tensor *e = tg_tensor_new(ot_dev(), TG_UINT8, 1, &zero, NULL);
	tg_tensor *s = tg_tensor_new(ot_dev(), TG_UINT8, 1, &four, &v);
	tg_tensor *d;

	d = tg_ggml_dequantize(e, TG_GGML_Q4_K, 2, (int64_t[]){ 0, 256 });
	ck_assert_msg(d != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_tensor_numel(d), 0);
	ck_assert_int_eq(tg_realize(d), 0);
	d = tg_ggml_dequantize(s, TG_GGML_F32, 0, NULL);
	ck_assert_msg(d != NULL, "%s", tg_last_error());
	ck_assert_uint_eq(tg_tensor_ndim(d), 0);
	ck_assert_int_eq(tg_tensor_data(d, &got, sizeof got), 0);
	ck_assert(got == v);
}
END_TEST

/* Q8_0 blocks whose scale is an infinity, a NaN, -0 or the smallest
 * subnormal half: the decode of the half's rarer encodings (the random
 * references' scales are finite), checked without the references. */
START_TEST(special_scales)
{
	static const struct {
		uint16_t d;
		double scale; /* NAN: every value NaN */
	} sp[] = {
		{ 0x7c00, INFINITY }, { 0xfc00, -INFINITY }, { 0x7e00, NAN },
		{ 0x8000, -0.0 }, { 0x0001, 0x1p-24 }, { 0x83ff, -0x3ffp-24 },
		{ 0x7bff, 65504 }, { 0x0400, 0x1p-14 },
	};
	enum { N = TG_ARRAY_LEN(sp) };
	uint8_t raw[N * 34];
	float got[N * 32];
	int64_t nb = N * 34, shape = N * 32;
	tg_tensor *t;
	size_t b, j;

	for (b = 0; b < N; b++) {
		raw[b * 34] = sp[b].d & 0xff;
		raw[b * 34 + 1] = sp[b].d >> 8;
		for (j = 0; j < 32; j++)   /* 1, -1, 2, -2, ..., 16, -16 */
			raw[b * 34 + 2 + j] = (uint8_t)(int8_t)((j & 1 ?
			                      -1 : 1) * (int)(j / 2 + 1));
	}
	t = tg_tensor_new(ot_dev(), TG_UINT8, 1, &nb, raw);
	t = tg_ggml_dequantize(t, TG_GGML_Q8_0, 1, &shape);
	ck_assert_msg(t && tg_tensor_data(t, got, sizeof got) == 0, "%s",
	              tg_last_error());
	for (b = 0; b < N; b++)
		for (j = 0; j < 32; j++) {
			double q = (j & 1 ? -1 : 1) * (double)(j / 2 + 1);
			float w = (float)(q * sp[b].scale), g = got[b * 32 + j];

			ck_assert_msg(isnan(sp[b].scale) ? isnan(g) :
			              !memcmp(&g, &w, sizeof g),
			              "half %04x times %g: %g, not %g", sp[b].d,
			              q, g, w);
		}
}
END_TEST

/* Reads one "name type ndim dims..." line per case from refdir/file. */
static int read_cases(const char *file, ref_case *c, int max)
{
	char path[700], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof path, "%s/%s", refdir, file);
	if (!(f = fopen(path, "r")))
		return -1;
	while (n < max && fgets(line, sizeof line, f)) {
		long long d[4] = { 0 };
		int k = sscanf(line, "%63s %d %zu %lld %lld %lld %lld",
		               c[n].name, &c[n].type, &c[n].ndim, &d[0],
		               &d[1], &d[2], &d[3]);

		if (k < 3 || c[n].ndim > 4 || k != 3 + (int)c[n].ndim)
			break;
		for (k = 0; k < 4; k++)
			c[n].shape[k] = d[k];
		n++;
	}
	fclose(f);
	return n;
}

/* matvec.txt's lines are "name type rows cols". */
static int read_matvecs(void)
{
	char path[700], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof path, "%s/matvec.txt", refdir);
	if (!(f = fopen(path, "r")))
		return -1;
	while (n < 16 && fgets(line, sizeof line, f)) {
		long long r, c;

		if (sscanf(line, "%63s %d %lld %lld", matvecs[n].name,
		           &matvecs[n].type, &r, &c) != 4)
			break;
		matvecs[n].ndim = 2;
		matvecs[n].shape[0] = r;
		matvecs[n].shape[1] = c;
		n++;
	}
	fclose(f);
	return n;
}

/* Runs quant_ref.py into refdir.  0 when done; 77 when the references
 * are missing (no venv, or no gguf in it), with the reason in why. */
static int make_refs(char *why, size_t n)
{
	const char *deps = getenv("TG_DEPS_DIR");
	const char *src = getenv("TG_TEST_SRCDIR");
	const char *tmp = getenv("TG_TEST_TMP");
	char py[512], cmd[2048];

	snprintf(py, sizeof py, "%s/venv/bin/python", deps ? deps : "");
	snprintf(cmd, sizeof cmd, "'%s' -c 'import gguf' 2>/dev/null", py);
	if (!deps || access(py, X_OK) || system(cmd)) {
		snprintf(why, n, "no Python with the gguf package at %s "
		         "(TG_DEPS_DIR; ./deps.sh installs it)", py);
		return 77;
	}
	snprintf(refdir, sizeof refdir, "%s/%d-ggml-dequant",
	         tmp ? tmp : "/tmp", (int)getpid());
	snprintf(cmd, sizeof cmd, "'%s' '%s/gguf/quant_ref.py' '%s'", py,
	         src ? src : "tests", refdir);
	if (system(cmd)) {
		snprintf(why, n, "%s failed", cmd);
		return 1;
	}
	ncases = read_cases("cases.txt", cases, MAXCASES);
	nmatvecs = read_matvecs();
	if (ncases <= 0 || nmatvecs <= 0) {
		snprintf(why, n, "%s wrote no cases", refdir);
		return 1;
	}
	return 0;
}

static Suite *ggml_dequant_suite(int refs)
{
	Suite *s = suite_create("ggml_dequant");
	TCase *tc = tcase_create("refusals");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, refuses_bad_input);
	tcase_add_test(tc, empty_and_scalar);
	tcase_add_test(tc, special_scales);
	suite_add_tcase(s, tc);
	if (!refs)
		return s;
	tc = tcase_create("gguf");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, matches_gguf, 0, ncases);
	tcase_add_loop_test(tc, matvec_is_one_kernel, 0, nmatvecs);
	tcase_add_loop_test(tc, batch_matmul_is_decode_then_matmul, 0,
	                    nmatvecs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	char why[2300];
	int rc = make_refs(why, sizeof why), failed;

	if (rc == 1 || (rc == 77 && getenv("TG_TEST_REQUIRE_DEPS"))) {
		fprintf(stderr, "test_ggml_dequant: %s\n", why);
		return EXIT_FAILURE;
	}
	failed = tl_run(ggml_dequant_suite(rc == 0)) != EXIT_SUCCESS;
	if (rc == 0 && !failed) {   /* kept after a failure, to look at */
		snprintf(why, sizeof why, "rm -rf '%s'", refdir);
		failed = system(why) != 0;
	}
	if (failed)
		return EXIT_FAILURE;
	if (rc == 77) {
		printf("SKIP: the refusals passed; the comparisons with the "
		       "gguf package need %s\n", why);
		return 77;
	}
	return EXIT_SUCCESS;
}

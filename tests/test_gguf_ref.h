/*
 * test_gguf_ref.h - the part of test_gguf.c that compares tgcore's
 * reading of GGUF files with the gguf package's, through the dumps
 * tests/gguf/make_files.py writes (its docstring gives their format).
 * Included once, by test_gguf.c.
 */
#ifndef TEST_GGUF_REF_H
#define TEST_GGUF_REF_H

#include <time.h>
#include <unistd.h>

static char model_path[600];

/* Runs the generator into gen_dir; NULL when everything is there, else
 * why some comparisons are skipped. */
static const char *make_reference_files(void)
{
	const char *deps = getenv("TG_DEPS_DIR"), *src = getenv("TG_TEST_SRCDIR");
	static char why[700];
	char py[600], cmd[2600];
	struct stat st;

	if (!deps || !src)
		return "TG_DEPS_DIR or TG_TEST_SRCDIR is not set (run it "
		       "through make check)";
	snprintf(py, sizeof py, "%s/venv/bin/python", deps);
	if (access(py, X_OK)) {
		snprintf(why, sizeof why, "no %s (run deps.sh)", py);
		return why;
	}
	snprintf(model_path, sizeof model_path,
	         "%s/models/SmolLM2-135M-Instruct.Q4_1.gguf", deps);
	have_model = stat(model_path, &st) == 0;
	snprintf(gen_dir, sizeof gen_dir, "%s", tl_tmp_path("gguf-ref"));
	snprintf(cmd, sizeof cmd, "'%s' '%s/gguf/make_files.py' '%s' %s%s%s",
	         py, src, gen_dir, have_model ? "'" : "",
	         have_model ? model_path : "", have_model ? "'" : "");
	if (system(cmd) != 0) {
		fprintf(stderr, "test_gguf: the generator failed: %s\n", cmd);
		exit(EXIT_FAILURE);
	}
	if (!have_model) {
		snprintf(why, sizeof why, "no %s (run deps.sh)", model_path);
		return why;
	}
	return NULL;
}

static const char *ref_path(const char *name)
{
	static char buf[4][800];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, 800, "%s/%s", gen_dir, name);
	return p;
}

/* "x" and hex digits: the bytes, NUL-terminated (malloc'd). */
static char *unhex(const char *s, size_t *len)
{
	size_t n, i;
	char *out;
	unsigned v;

	ck_assert_msg(s && s[0] == 'x', "bad hex '%s'", s ? s : "(null)");
	n = (strlen(s) - 1) / 2;
	out = malloc(n + 1);
	ck_assert_ptr_nonnull(out);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(sscanf(s + 1 + 2 * i, "%2x", &v), 1);
		out[i] = (char)v;
	}
	out[n] = '\0';
	*len = n;
	return out;
}

/* A value, scalar (elem < 0) or array element, against the dump's. */
static void check_value(const tg_gguf *g, const char *key, long elem, int vt,
                        const char *want)
{
	int64_t i = 0;
	double d = 0;
	size_t len = 0, wlen;
	const char *s;
	char *w;
	int rc;

	if (vt == TG_GGUF_STRING) {
		s = elem < 0 ? tg_gguf_get_str(g, key, &len)
		    : tg_gguf_array_str(g, key, (size_t)elem, &len);
		ck_assert_msg(s, "%s", tg_last_error());
		w = unhex(want, &wlen);
		ck_assert_uint_eq(len, wlen);
		ck_assert_mem_eq(s, w, len + 1);
		free(w);
		return;
	}
	rc = elem < 0 ? tg_gguf_get_float(g, key, &d)
	     : tg_gguf_array_float(g, key, (size_t)elem, &d);
	if (vt == TG_GGUF_BOOL) {
		ck_assert_int_eq(rc, TG_EINVAL);
	} else {
		ck_assert_msg(!rc, "%s", tg_last_error());
		ck_assert_msg(d == strtod(want, NULL), "%s[%ld]: %.17g, want %s",
		              key, elem, d, want);
	}
	rc = elem < 0 ? tg_gguf_get_int(g, key, &i)
	     : tg_gguf_array_int(g, key, (size_t)elem, &i);
	if (vt == TG_GGUF_FLOAT32 || vt == TG_GGUF_FLOAT64) {
		ck_assert_int_eq(rc, TG_EINVAL);
		ck_assert_error("not an integer");
	} else if (vt == TG_GGUF_UINT64 && strtoull(want, NULL, 10) >
	           INT64_MAX) {
		ck_assert_int_eq(rc, TG_EINVAL);
		ck_assert_error("is above INT64_MAX");
	} else {
		ck_assert_msg(!rc, "%s", tg_last_error());
		ck_assert_msg(i == strtoll(want, NULL, 10), "%s[%ld]: %lld, "
		              "want %s", key, elem, (long long)i, want);
	}
}

/* "kv KEY VT VALUE" or "arr KEY ET COUNT": pair k. */
static char *check_pair(const tg_gguf *g, size_t k, char **tok, int *et)
{
	size_t len, n = 0;
	char *key = unhex(tok[1], &len);
	int vt = atoi(tok[2]);

	ck_assert_int_eq(tg_gguf_kv_find(g, key), (long)k);
	ck_assert_str_eq(tg_gguf_kv_key(g, k), key);
	if (!strcmp(tok[0], "kv")) {
		ck_assert_int_eq(tg_gguf_kv_type(g, k), vt);
		check_value(g, key, -1, vt, tok[3]);
		return key;
	}
	ck_assert_int_eq(tg_gguf_kv_type(g, k), TG_GGUF_ARRAY);
	ck_assert_int_eq(tg_gguf_get_array(g, key, et, &n), 0);
	ck_assert_int_eq(*et, vt);
	ck_assert_uint_eq(n, strtoull(tok[3], NULL, 10));
	return key;
}

/* "tensor NAME TYPE NDIM DIMS... NBYTES FILE_OFFSET BIN_OFFSET". */
static void check_tensor(const tg_gguf *g, size_t k, char **tok,
                         const char *bin, tg_dev *dev)
{
	size_t len, ndim = (size_t)atoi(tok[3]), d;
	char *name = unhex(tok[1], &len);
	int64_t shape[4], bpos;
	uint64_t nbytes;
	unsigned char *got;
	tg_tensor *t;

	ck_assert_str_eq(tg_gguf_tensor_name(g, k), name);
	ck_assert_int_eq(tg_gguf_tensor_find(g, name), (long)k);
	ck_assert_int_eq(tg_gguf_tensor_type(g, k), atoi(tok[2]));
	ck_assert_uint_eq(tg_gguf_tensor_shape(g, k, shape), ndim);
	for (d = 0; d < ndim; d++)
		ck_assert_int_eq(shape[d], strtoll(tok[4 + d], NULL, 10));
	nbytes = strtoull(tok[4 + ndim], NULL, 10);
	ck_assert_uint_eq(tg_gguf_tensor_nbytes(g, k), nbytes);
	ck_assert_uint_eq(tg_gguf_tensor_offset(g, k),
	                  strtoull(tok[5 + ndim], NULL, 10));
	if ((bpos = strtoll(tok[6 + ndim], NULL, 10)) >= 0) {
		t = tg_gguf_tensor_raw(g, k, dev);
		ck_assert_msg(t, "%s", tg_last_error());
		ck_assert_int_eq(tg_tensor_numel(t), (int64_t)nbytes);
		ck_assert_ptr_nonnull(got = malloc((size_t)nbytes));
		ck_assert_int_eq(tg_tensor_data(t, got, (size_t)nbytes), 0);
		ck_assert_msg(!memcmp(got, bin + bpos, (size_t)nbytes),
		              "tensor '%s': bytes differ", name);
		free(got);  /* t goes with the test's scope */
	}
	free(name);
}

/* Splits line into at most n words. */
static size_t words(char *line, char **tok, size_t n)
{
	size_t k = 0;
	char *save = NULL, *w;

	for (w = strtok_r(line, " \n", &save); w && k < n;
	     w = strtok_r(NULL, " \n", &save))
		tok[k++] = w;
	return k;
}

/* Everything the dump base.txt says of the file at path. */
static void check_against_dump(const char *path, const char *base)
{
	char txt[900], binp[900], *line = NULL, *tok[16], *akey = NULL;
	size_t cap = 0, nkv = 0, nt = 0, ai = 0;
	tg_gguf *g = tg_gguf_open(path);
	char *bin;
	FILE *f;
	int et = -1;

	ck_assert_msg(g, "%s", tg_last_error());
	snprintf(txt, sizeof txt, "%s.txt", ref_path(base));
	snprintf(binp, sizeof binp, "%s.bin", ref_path(base));
	ck_assert_ptr_nonnull(f = fopen(txt, "r"));
	ck_assert_ptr_nonnull(bin = tl_slurp(binp));
	while (getline(&line, &cap, f) > 0) {
		size_t n = words(line, tok, 16);

		ck_assert_uint_ge(n, 2);
		if (!strcmp(tok[0], "version")) {
			ck_assert_uint_eq(tg_gguf_version(g), atoi(tok[1]));
		} else if (!strcmp(tok[0], "alignment")) {
			ck_assert_uint_eq(tg_gguf_alignment(g), atoi(tok[1]));
		} else if (!strcmp(tok[0], "counts")) {
			ck_assert_uint_eq(tg_gguf_kv_count(g), atoi(tok[1]));
			ck_assert_uint_eq(tg_gguf_tensor_count(g), atoi(tok[2]));
		} else if (!strcmp(tok[0], "e")) {
			check_value(g, akey, (long)ai++, et, tok[1]);
		} else if (!strcmp(tok[0], "tensor")) {
			check_tensor(g, nt++, tok, bin, tg_dev_get("CPU"));
		} else {
			free(akey);
			akey = check_pair(g, nkv++, tok, &et);
			ai = 0;
		}
	}
	ck_assert_uint_eq(nkv, tg_gguf_kv_count(g));
	ck_assert_uint_eq(nt, tg_gguf_tensor_count(g));
	free(akey);
	free(line);
	free(bin);
	fclose(f);
	tg_gguf_close(g);
}

START_TEST(small_file_as_the_gguf_package_reads_it)
{
	tg_gguf *g;
	int et = -1;
	size_t n = 0;
	int64_t i;

	check_against_dump(ref_path("small.gguf"), "small");
	/* what the dump cannot say */
	ck_assert_ptr_nonnull(g = tg_gguf_open(ref_path("small.gguf")));
	ck_assert_uint_eq(tg_gguf_alignment(g), 64);
	ck_assert_int_eq(tg_gguf_get_array(g, "a.nested", &et, &n), 0);
	ck_assert_int_eq(et, TG_GGUF_ARRAY);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(tg_gguf_array_int(g, "a.nested", 0, &i), TG_EINVAL);
	ck_assert_error("element 0 of key 'a.nested' is an array, not an "
	                "integer");
	tg_gguf_close(g);
}
END_TEST

START_TEST(model_as_the_gguf_package_reads_it)
{
	tg_gguf *g;
	size_t n = 0, len;
	int et = -1;
	int64_t i = 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(g = tg_gguf_open(model_path), "%s", tg_last_error());
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("test_gguf: opened the model in %.3f s\n",
	       (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	ck_assert_str_eq(tg_gguf_get_str(g, "general.architecture", &len),
	                 "llama");
	ck_assert_int_eq(tg_gguf_get_array(g, "tokenizer.ggml.tokens", &et,
	                                   &n), 0);
	ck_assert_int_eq(et, TG_GGUF_STRING);
	ck_assert_uint_eq(n, 49152);
	ck_assert_int_eq(tg_gguf_get_int(g, "llama.block_count", &i), 0);
	ck_assert_int_eq(i, 30);
	tg_gguf_close(g);
	check_against_dump(model_path, "model");
}
END_TEST

/* nn/ggml.c's blocks against gguf.constants.GGML_QUANT_SIZES. */
START_TEST(ggml_types_as_the_gguf_package_knows_them)
{
	FILE *f = fopen(ref_path("ggml.txt"), "r");
	int type, elems, bytes, n = 0;
	size_t e, b;

	ck_assert_ptr_nonnull(f);
	while (fscanf(f, "ggml %d %d %d\n", &type, &elems, &bytes) == 3) {
		ck_assert_msg(!tg_ggml_type_block(type, &e, &b), "type %d: %s",
		              type, tg_last_error());
		ck_assert_int_eq(e, elems);
		/* gguf-py keeps Q8_1's old layout, float d and s (40 bytes);
		 * ggml's block_q8_1 has had fp16 ones (36) since 2023 */
		if (type == TG_GGML_Q8_1)
			ck_assert(bytes == 40 && b == 36);
		else
			ck_assert_msg((int)b == bytes, "type %s: %zu bytes, "
			              "gguf says %d", tg_ggml_type_name(type), b,
			              bytes);
		n++;
	}
	ck_assert_int_ge(n, 30);
	fclose(f);
}
END_TEST

static void add_reference_tests(TCase *tc)
{
	tcase_add_test(tc, small_file_as_the_gguf_package_reads_it);
	tcase_add_test(tc, ggml_types_as_the_gguf_package_knows_them);
	if (have_model)
		tcase_add_test(tc, model_as_the_gguf_package_reads_it);
}

#endif

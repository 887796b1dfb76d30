/*
 * test_util.c - the core's small containers and parsers: strbuf, vec,
 * errors, number and boolean parsing, dtype tables.
 */
#include "config.h"

#include "testlib.h"

START_TEST(strbuf_appends_and_formats)
{
	tg_strbuf sb;
	char *s;
	int i;

	tg_strbuf_init(&sb);
	ck_assert_str_eq(sb.s, "");
	for (i = 0; i < 100; i++)
		tg_strbuf_addf(&sb, "%d,", i);
	tg_strbuf_add(&sb, "end");
	tg_strbuf_addn(&sb, "xyz", 1);
	s = tg_strbuf_finish(&sb);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(strncmp(s, "0,1,2,", 6), 0);
	ck_assert_int_eq(strcmp(s + strlen(s) - 7, "99,endx"), 0);
	ck_assert_str_eq(sb.s, "");
	free(s);
}
END_TEST

START_TEST(strbuf_empty_finish_is_a_string)
{
	tg_strbuf sb;
	char *s;

	tg_strbuf_init(&sb);
	s = tg_strbuf_finish(&sb);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(strbuf_failure_sticks)
{
	tg_strbuf sb;

	tg_strbuf_init(&sb);
	tg_strbuf_add(&sb, "abc");
	tg_strbuf_addn(&sb, "x", SIZE_MAX / 2);  /* cannot fit */
	ck_assert_int_eq(sb.failed, 1);
	tg_strbuf_add(&sb, "more");
	ck_assert_ptr_null(tg_strbuf_finish(&sb));
}
END_TEST

START_TEST(vec_grows_and_refuses_overflow)
{
	TG_VEC(int) v = { 0 };
	size_t cap;
	int i;

	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(TG_VEC_PUSH(&v, i), 0);
	ck_assert_uint_eq(v.n, 1000);
	ck_assert_uint_eq(v.cap, 1024);
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(v.v[i], i);
	cap = v.cap;
	ck_assert_int_eq(TG_VEC_RESERVE(&v, SIZE_MAX / 2), TG_ENOMEM);
	ck_assert_uint_eq(v.cap, cap);  /* unchanged on failure */
	TG_VEC_FREE(&v);
	ck_assert_ptr_null(v.v);
}
END_TEST

START_TEST(errors_set_prefix_and_clear)
{
	ck_assert_str_eq(tg_last_error(), "");
	ck_assert_int_eq(tg_last_status(), TG_OK);
	ck_assert_int_eq(tg_error(TG_EINVAL, "reshape: %d vs %d", 12, 5),
	                 TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "reshape: 12 vs 5");
	ck_assert_int_eq(tg_error_prefix("op %s", "x"), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "op x: reshape: 12 vs 5");
	tg_clear_error();
	ck_assert_str_eq(tg_last_error(), "");
	ck_assert_str_eq(tg_status_name(TG_ENOMEM), "TG_ENOMEM");
	ck_assert_str_eq(tg_status_name(TG_EINTERNAL), "TG_EINTERNAL");
	ck_assert_str_eq(tg_status_name(TG_ETIMEOUT), "TG_ETIMEOUT");
	ck_assert_str_eq(tg_status_name(TG_ECOMM), "TG_ECOMM");
	ck_assert_str_eq(tg_status_name(-99), "TG_E?");
	/* the public setter, for libraries on tgcore; a status that is not
	 * negative becomes TG_EINVAL, so an error never reads as success */
	ck_assert_int_eq(tg_set_error(TG_ECOMM, "dist: rank %d gone", 3),
	                 TG_ECOMM);
	ck_assert_str_eq(tg_last_error(), "dist: rank 3 gone");
	ck_assert_int_eq(tg_last_status(), TG_ECOMM);
	ck_assert_int_eq(tg_set_error(0, "oops"), TG_EINVAL);
	/* a message may quote the one before */
	tg_set_error(TG_EIO, "x: %s", tg_last_error());
	ck_assert_str_eq(tg_last_error(), "x: oops");
	tg_clear_error();
}
END_TEST

static void *other_thread(void *arg)
{
	int *seen_empty = arg;

	*seen_empty = tg_last_error()[0] == '\0';
	tg_error(TG_EIO, "thread's own error");
	return NULL;
}

START_TEST(errors_are_per_thread)
{
	pthread_t t;
	int seen_empty = 0;

	tg_error(TG_EINVAL, "main thread's error");
	ck_assert_int_eq(pthread_create(&t, NULL, other_thread, &seen_empty),
	                 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(seen_empty, 1);
	ck_assert_str_eq(tg_last_error(), "main thread's error");
	ck_assert_int_eq(tg_last_status(), TG_EINVAL);
}
END_TEST

/* Runs tg_debug_log at `level` with DEBUG at `debug`; returns what it
 * wrote to stderr (static buffer). */
static const char *log_at(int debug, int level)
{
	static char got[256];
	FILE *f = tmpfile();
	int saved = dup(2);
	size_t n;

	ck_assert(f && saved >= 0);
	fflush(stderr);
	ck_assert_int_ge(dup2(fileno(f), 2), 0);
	tg_debug_set(debug);
	tg_debug_log(level, "x=%d", 42);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(got, 1, sizeof got - 1, f);
	got[n] = '\0';
	fclose(f);
	return got;
}

START_TEST(debug_log_prints_at_or_under_the_level)
{
	ck_assert_str_eq(log_at(0, 0), "tgcore: x=42\n");  /* 0: always */
	ck_assert_str_eq(log_at(0, 1), "");
	ck_assert_str_eq(log_at(2, 3), "");
	ck_assert_str_eq(log_at(3, 3), "tgcore: x=42\n");
	ck_assert_str_eq(log_at(7, 1), "tgcore: x=42\n");
	ck_assert_int_eq(tg_debug_level(), 7);
	tg_debug_set(0);
	ck_assert_int_eq(tg_debug_level(), 0);
}
END_TEST

START_TEST(long_messages_are_truncated_not_overflowed)
{
	char big[3 * TG_ERROR_MAX];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	tg_error(TG_EINVAL, "%s", big);
	ck_assert_uint_eq(strlen(tg_last_error()), TG_ERROR_MAX - 1);
	tg_error_prefix("%s", big);
	ck_assert_uint_eq(strlen(tg_last_error()), TG_ERROR_MAX - 1);
}
END_TEST

START_TEST(parse_numbers_and_booleans)
{
	long n;
	int b;

	ck_assert_int_eq(tg_parse_long(" 42 ", &n), 0);
	ck_assert_int_eq(n, 42);
	ck_assert_int_eq(tg_parse_long("-7", &n), 0);
	ck_assert_int_eq(n, -7);
	ck_assert_int_eq(tg_parse_long("4x", &n), TG_EINVAL);
	ck_assert_int_eq(tg_parse_long("", &n), TG_EINVAL);
	ck_assert_int_eq(tg_parse_long("99999999999999999999", &n),
	                 TG_EINVAL);
	ck_assert_int_eq(tg_parse_bool("Yes", &b), 0);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(tg_parse_bool("off", &b), 0);
	ck_assert_int_eq(b, 0);
	ck_assert_int_eq(tg_parse_bool("maybe", &b), TG_EINVAL);
}
END_TEST

/* Messages quote values escaped: text as it is, the rest as C
 * escapes, cut with "..." where the buffer ends. */
START_TEST(escape_keeps_text_and_escapes_bytes)
{
	char b[64], small[8];

	ck_assert_str_eq(tg_escape("abc", b, sizeof b), "abc");
	ck_assert_str_eq(tg_escape("caf\xc3\xa9 \xe2\x82\xac", b, sizeof b),
	                 "caf\xc3\xa9 \xe2\x82\xac");
	ck_assert_str_eq(tg_escape("a'b\\c\n\t\r", b, sizeof b),
	                 "a\\'b\\\\c\\n\\t\\r");
	ck_assert_str_eq(tg_escape("\x01\x7f\xff\xc3", b, sizeof b),
	                 "\\x01\\x7F\\xFF\\xC3");
	/* overlong, surrogate, past U+10FFFF, a cut sequence */
	ck_assert_str_eq(tg_escape("\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"
	                           "\xe2\x82", b, sizeof b),
	                 "\\xC0\\xAF\\xED\\xA0\\x80\\xF4\\x90\\x80\\x80"
	                 "\\xE2\\x82");
	ck_assert_str_eq(tg_escape("1234567", small, sizeof small),
	                 "1234567");
	ck_assert_str_eq(tg_escape("12345678", small, sizeof small),
	                 "1234...");
	ck_assert_str_eq(tg_escape("\xff\xff", small, sizeof small),
	                 "\\xFF...");
	ck_assert_str_eq(tg_escape("", small, sizeof small), "");
}
END_TEST

START_TEST(dtype_sizes_and_names)
{
	static const size_t size[TG_NDTYPES] = { 1, 1, 1, 2, 2, 4, 4, 8, 8,
	                                         2, 2, 4, 8 };
	int i;

	for (i = 0; i < TG_NDTYPES; i++)
		ck_assert_uint_eq(tg_dtype_size((tg_dtype)i), size[i]);
	ck_assert_str_eq(tg_dtype_name(TG_BFLOAT16), "bfloat16");
	ck_assert_uint_eq(tg_dtype_size(TG_NDTYPES), 0);
	ck_assert_str_eq(tg_dtype_name((tg_dtype)-1), "invalid");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, strbuf_appends_and_formats);
	tcase_add_test(tc, strbuf_empty_finish_is_a_string);
	tcase_add_test(tc, strbuf_failure_sticks);
	tcase_add_test(tc, vec_grows_and_refuses_overflow);
	tcase_add_test(tc, errors_set_prefix_and_clear);
	tcase_add_test(tc, errors_are_per_thread);
	tcase_add_test(tc, long_messages_are_truncated_not_overflowed);
	tcase_add_test(tc, debug_log_prints_at_or_under_the_level);
	tcase_add_test(tc, parse_numbers_and_booleans);
	tcase_add_test(tc, dtype_sizes_and_names);
	tcase_add_test(tc, escape_keeps_text_and_escapes_bytes);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

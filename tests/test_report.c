/*
 * test_report.c - what the Fashion-MNIST example shows a person
 * (examples/fashion_mnist/report.c): the progress meter leaves the
 * first step's compilation out of the rate and the time left, the
 * training curve has a point per call and an accuracy axis scaled to
 * the data, and the checkpoint's description (width, input scaling,
 * class names) goes through a safetensors file and back, with every
 * malformed description refused by what is wrong.
 */
#include "config.h"

#include <errno.h>
#include <math.h>

#include "report.h"
#include "testlib.h"

/* An epoch of 10 steps of 100 images whose first step compiles for
 * 30 s and whose other steps take 0.5 s each. */
START_TEST(meter_leaves_out_the_compiling_step)
{
	meter m;
	double ips, eta;

	meter_start(&m, 100, 10, 100, 1);
	ck_assert_int_eq(meter_rate(&m, 110, 0, &ips, &eta), 0);
	meter_step(&m, 130, 1);  /* the compiling step */
	ck_assert_int_eq(meter_rate(&m, 130, 1, &ips, &eta), 0);
	meter_step(&m, 130.5, 2);
	ck_assert_int_eq(meter_rate(&m, 130.5, 2, &ips, &eta), 1);
	ck_assert_double_eq_tol(ips, 200, 1e-9);   /* not 100 / 15.25 s */
	ck_assert_double_eq_tol(eta, 4, 1e-9);     /* 8 steps of 0.5 s */
	for (size_t s = 3; s <= 10; s++)
		meter_step(&m, 130 + 0.5 * (double)(s - 1), s);
	ck_assert_int_eq(meter_rate(&m, 134.5, 10, &ips, &eta), 1);
	ck_assert_double_eq_tol(ips, 200, 1e-9);
	ck_assert_double_eq_tol(eta, 0, 1e-9);
	/* a later epoch compiles nothing: timed from its start */
	meter_start(&m, 200, 10, 100, 0);
	ck_assert_int_eq(meter_rate(&m, 200, 0, &ips, &eta), 0);
	meter_step(&m, 201, 1);
	ck_assert_int_eq(meter_rate(&m, 201, 1, &ips, &eta), 1);
	ck_assert_double_eq_tol(ips, 100, 1e-9);
	ck_assert_double_eq_tol(eta, 9, 1e-9);
}
END_TEST

/* 20 points: a polyline each for loss and accuracy with a dot per
 * point, an accuracy axis from 75% to 90% for accuracies of 80-88%,
 * and the axis titles beyond the tick labels (rotated at the sides). */
START_TEST(curve_has_every_point_and_a_scaled_axis)
{
	curve_point p[20];
	char *svg;
	const char *path = tl_tmp_path("curve.svg");

	for (int i = 0; i < 20; i++)
		p[i] = (curve_point){ 0.1 * (i + 1), 1.0 / (i + 1),
		                      0.80 + 0.004 * i };
	ck_assert_int_eq(curve_write_svg(path, p, 20, "a title"), 0);
	svg = tl_slurp(path);
	ck_assert_ptr_nonnull(svg);
	ck_assert_uint_eq(tl_count(svg, "<polyline"), 2);
	ck_assert_uint_eq(tl_count(svg, "<circle"), 40);
	ck_assert_ptr_nonnull(strstr(svg, ">75.0%</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">90.0%</text>"));
	ck_assert_ptr_null(strstr(svg, ">100.0%</text>"));
	ck_assert_ptr_nonnull(strstr(svg, "rotate(-90)\" text-anchor=\"middle\" "
	                                  "fill=\"#c0392b\">training loss"));
	ck_assert_ptr_nonnull(strstr(svg, "rotate(90)\" text-anchor=\"middle\" "
	                                  "fill=\"#2471a3\">test accuracy"));
	ck_assert_ptr_nonnull(strstr(svg, ">a title</text>"));
	free(svg);
	errno = 0;
	ck_assert_int_eq(curve_write_svg(path, p, 0, "none"), -1);
	ck_assert_int_eq(tg_last_status(), TG_EINVAL);
	ck_assert_ptr_nonnull(strstr(tg_last_error(), "no points"));
	ck_assert_int_eq(curve_write_svg("/nonexistent/dir/c.svg", p, 20, "x"),
	                 -1);
	ck_assert_ptr_nonnull(strstr(tg_last_error(), "/nonexistent/dir/c.svg"));
	unlink(path);
}
END_TEST

/* A state with one tensor, for the metadata. */
static tg_state *one_tensor_state(void)
{
	tg_state *s = tg_state_new();
	int64_t n = 3;

	ck_assert_ptr_nonnull(s);
	tg_scope_begin();
	ck_assert_int_eq(tg_state_add(s, "w", tg_ones(tg_dev_get("CPU"),
	                                              TG_FLOAT32, 1, &n)), 0);
	tg_scope_end();
	return s;
}

START_TEST(description_round_trips_through_a_checkpoint)
{
	const char *path = tl_tmp_path("desc.safetensors");
	tg_state *s = one_tensor_state(), *back;
	ckpt_desc d, got;
	char why[256] = "";

	ckpt_desc_default(&d, 2);
	ck_assert_int_eq(ckpt_desc_put(s, &d), 0);
	ck_assert_int_eq(tg_safetensors_save(s, path), 0);
	ck_assert_ptr_nonnull(back = tg_safetensors_load(path, NULL));
	ck_assert_int_eq(ckpt_desc_get(back, &got, why, sizeof why), 0);
	ck_assert_int_eq(got.width, 2);
	ck_assert_double_eq(got.scale, 1 / 127.5);
	ck_assert_double_eq(got.offset, -1);
	for (int i = 0; i < CLASSES; i++)
		ck_assert_str_eq(got.classes[i], class_names[i]);
	ck_assert_str_eq(got.classes[9], "Ankle boot");
	tg_state_free(back);
	tg_state_free(s);
	/* a checkpoint from before: no description, not an error */
	s = one_tensor_state();
	ck_assert_int_eq(ckpt_desc_get(s, &got, why, sizeof why), 1);
	tg_state_free(s);
	unlink(path);
}
END_TEST

/* s with the default description, then key set to value. */
static void refused(const char *key, const char *value, const char *needle)
{
	tg_state *s = one_tensor_state();
	ckpt_desc d;
	char why[256] = "";

	ckpt_desc_default(&d, 1);
	ck_assert_int_eq(ckpt_desc_put(s, &d), 0);
	ck_assert_int_eq(tg_state_set_metadata(s, key, value), 0);
	ck_assert_int_eq(ckpt_desc_get(s, &d, why, sizeof why), -1);
	ck_assert_msg(strstr(why, needle), "%s='%s': \"%s\" lacks \"%s\"",
	              key, value, why, needle);
	tg_state_free(s);
}

START_TEST(malformed_descriptions_are_refused)
{
	refused("model", "resnet", "it holds a 'resnet' model, not this "
	        "program's beautiful_mnist");
	refused("width", "3", "width 3 is neither 1 (quick) nor 2 (full)");
	refused("width", "two", "its metadata's width 'two' is not a number");
	refused("width", "", "its metadata's width '' is not a number");
	refused("input_scale", "nan", "input_scale 'nan' is not a number");
	refused("input_offset", "1e999", "input_offset '1e999' is not a "
	        "number");
	refused("classes", "a,b,c", "classes are not 10 names");
	refused("classes", "a,b,c,d,e,f,g,h,i,j,k", "classes are not 10");
	refused("classes", "a,b,,d,e,f,g,h,i,j", "of 1 to 31 bytes");
	refused("classes", "a,b,c,d,e,f,g,h,i,"
	        "a-class-name-of-more-than-31-bytes", "of 1 to 31 bytes");
}
END_TEST

START_TEST(description_without_a_key_is_refused)
{
	tg_state *s = one_tensor_state();
	ckpt_desc d;
	char why[256] = "";

	ck_assert_int_eq(tg_state_set_metadata(s, "model", "beautiful_mnist"),
	                 0);
	ck_assert_int_eq(ckpt_desc_get(s, &d, why, sizeof why), -1);
	ck_assert_str_eq(why, "no 'width' in its metadata");
	tg_state_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_add_test(tc, meter_leaves_out_the_compiling_step);
	tcase_add_test(tc, curve_has_every_point_and_a_scaled_axis);
	tcase_add_test(tc, description_round_trips_through_a_checkpoint);
	tcase_add_test(tc, malformed_descriptions_are_refused);
	tcase_add_test(tc, description_without_a_key_is_refused);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

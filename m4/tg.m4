# tg.m4 - tgcore's autoconf macros.

# TG_CHECK_C11: compile as ISO C11 (GNU extensions come from
# AC_USE_SYSTEM_EXTENSIONS through config.h, not from -std=gnu11).
AC_DEFUN([TG_CHECK_C11], [
	AC_CACHE_CHECK([whether $CC accepts -std=c11], [tg_cv_c11], [
		tg_save_CFLAGS="$CFLAGS"
		CFLAGS="$CFLAGS -std=c11"
		AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
			_Static_assert(sizeof(int) >= 2, "int");
			static _Thread_local int x;
		]], [[return x;]])], [tg_cv_c11=yes], [tg_cv_c11=no])
		CFLAGS="$tg_save_CFLAGS"
	])
	AS_IF([test "x$tg_cv_c11" = xyes], [CFLAGS="$CFLAGS -std=c11"],
		[AC_MSG_ERROR([a C11 compiler is required (_Static_assert, _Thread_local)])])
])

# TG_CHECK_PTHREAD: sets PTHREAD_CFLAGS / PTHREAD_LIBS.
AC_DEFUN([TG_CHECK_PTHREAD], [
	AC_CACHE_CHECK([whether $CC accepts -pthread], [tg_cv_pthread], [
		tg_save_CFLAGS="$CFLAGS"; tg_save_LIBS="$LIBS"
		CFLAGS="$CFLAGS -pthread"; LIBS="$LIBS -pthread"
		AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <pthread.h>]],
			[[pthread_t t; return pthread_create(&t, 0, 0, 0);]])],
			[tg_cv_pthread=yes], [tg_cv_pthread=no])
		CFLAGS="$tg_save_CFLAGS"; LIBS="$tg_save_LIBS"
	])
	AS_IF([test "x$tg_cv_pthread" = xyes],
		[PTHREAD_CFLAGS=-pthread; PTHREAD_LIBS=-pthread],
		[AC_MSG_ERROR([POSIX threads are required (-pthread)])])
	AC_SUBST([PTHREAD_CFLAGS])
	AC_SUBST([PTHREAD_LIBS])
])

# TG_PLUGIN(NAME, DEFAULT, HELP, DEPS-OK, MISSING-MESSAGE)
#
# Declares an optional backend (collectd's AC_PLUGIN).  --enable-NAME asks
# for it (configure fails, after the summary, when DEPS-OK is not "yes"),
# --enable-NAME=force builds it regardless, --disable-NAME leaves it out;
# DEFAULT "yes" means "build when the dependencies are there".  Defines the
# automake conditional BUILD_PLUGIN_NAME.
AC_DEFUN([TG_PLUGIN], [
	AC_ARG_ENABLE([$1],
		AS_HELP_STRING([--enable-$1], [$3 (default: $2 when its dependencies are found)]),
		[tg_plugin_$1_req="$enableval"], [tg_plugin_$1_req=auto])
	tg_plugin_$1_build=no
	tg_plugin_$1_note=""
	AS_CASE(["$tg_plugin_$1_req"],
		[no], [tg_plugin_$1_note="disabled"],
		[force], [tg_plugin_$1_build=yes; tg_plugin_$1_note="forced"],
		[AS_IF([test "x$4" = xyes],
			[AS_IF([test "x$tg_plugin_$1_req" = xauto && test "x$2" != xyes],
				[tg_plugin_$1_note="off by default"],
				[tg_plugin_$1_build=yes])],
			[tg_plugin_$1_note="$5"
			 AS_IF([test "x$tg_plugin_$1_req" = xyes],
				[tg_plugin_missing="$tg_plugin_missing $1"])])])
	AM_CONDITIONAL(m4_toupper([BUILD_PLUGIN_$1]), [test "x$tg_plugin_$1_build" = xyes])
	tg_plugin_summary="$tg_plugin_summary
    m4_format([%-14s], [$1]) $tg_plugin_$1_build${tg_plugin_$1_note:+ ($tg_plugin_$1_note)}"
])

# TG_PLUGIN_SUMMARY: prints the table of backends.
AC_DEFUN([TG_PLUGIN_SUMMARY], [
	AS_ECHO(["
  Backends (plugins):$tg_plugin_summary"])
])

# TG_PLUGIN_FAIL_IF_MISSING: fails when a requested backend cannot be built.
AC_DEFUN([TG_PLUGIN_FAIL_IF_MISSING], [
	AS_IF([test -n "$tg_plugin_missing"],
		[AC_MSG_ERROR([requested backend(s) lack dependencies:$tg_plugin_missing (see the table above; --disable-NAME to skip)])])
])

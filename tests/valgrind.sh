#!/bin/sh
# LOG_COMPILER for `make check-valgrind`: runs a test under memcheck with
# plugins kept mapped (so leak reports keep their symbols).  Shell tests
# run as they are.
TG_PLUGIN_NO_UNLOAD=1
# valgrind 3.19 does not know every AVX-512 instruction that
# -march=native emits on newer CPUs: build kernels for the baseline.
TG_CPU_CFLAGS="-O2 -shared -fPIC"
export TG_PLUGIN_NO_UNLOAD TG_CPU_CFLAGS
case "$1" in
*.sh) exec "$@" ;;
esac
# Check forks a child per test; memcheck follows forks by default.  The
# suites that fail allocations wrap malloc at link time
# (tests/failalloc.h), so valgrind's own malloc is the one they call.
exec valgrind --quiet --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	--suppressions="$(dirname "$0")/check.supp" "$@"

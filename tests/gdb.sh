#!/bin/sh
# A debugger on a program that runs CPU kernels: gdb reads each loaded
# object's name from the loader's list and opens it in its own process.
# Kernels were named /proc/self/fd/N, which in gdb is gdb's own
# descriptor N (its terminal or a pipe), and gdb hung reading it; they
# are /proc/PID/fd/N now.  The program must run to its end under gdb.
set -u
command -v gdb >/dev/null 2>&1 || { echo "SKIP: no gdb (apt install gdb)"; exit 77; }
prog="$TG_PLUGIN_BUILD_TREE/examples/quickstart"
[ -x "$prog" ] || { echo "FAIL: $prog is missing"; exit 1; }
# LeakSanitizer cannot run under ptrace (ASan builds)
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# the libtool wrapper is a script: gdb runs the real program through it
timeout 300 "$TG_PLUGIN_BUILD_TREE/libtool" --mode=execute gdb -nx -batch \
	-ex run -ex quit "$prog" </dev/null >"$out" 2>&1
rc=$?
[ $rc -eq 124 ] && { echo "FAIL: gdb did not finish in 300 s"; tail -20 "$out"; exit 1; }
grep -q 'exited normally' "$out" || { echo "FAIL: gdb (status $rc):"; tail -20 "$out"; exit 1; }
echo "the program ran to its end under gdb"

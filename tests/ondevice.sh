#!/bin/sh
# DEV_LOG_COMPILER for `make check`: runs a tensor-op suite on a device.
#
#   ondevice.sh [-w WRAPPER] FILE.dev
#
# FILE.dev (tests/dev/<device>/<suite>.dev in the source tree) is one
# line, "suite=test_ops device=OPENCL".  When tg-info shows that the
# device cannot be opened, prints "SKIP: <device>: <reason>" and exits 77
# (automake's skip); otherwise runs tests/<suite> of the build tree (the
# current directory) with DEVICE=<device>, under WRAPPER when one is
# given (TESTS_WRAPPER: tests/valgrind.sh for `make check-valgrind`).
# A device named in TG_TEST_REQUIRE_DEVICES fails instead of skipping.
set -u

wrapper=
if [ "${1:-}" = -w ]; then
	wrapper=${2:-}
	shift 2
fi
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
	echo "usage: $0 [-w WRAPPER] FILE.dev" >&2
	exit 99
fi

suite=
device=
for kv in $(sed -e 's/#.*//' "$1"); do
	case "$kv" in
	suite=*) suite=${kv#suite=} ;;
	device=*) device=${kv#device=} ;;
	*) echo "ERROR: $1: unknown field '$kv'" >&2; exit 99 ;;
	esac
done
if [ -z "$suite" ] || [ -z "$device" ]; then
	echo "ERROR: $1: needs suite=... and device=..." >&2
	exit 99
fi
bin=./tests/$suite
if [ ! -x "$bin" ]; then
	echo "ERROR: $bin not built (run from the top build directory)" >&2
	exit 99
fi

# The device plugins join the CPU one on the path.  Under sanitizers the
# device runs check addresses and undefined behavior, not leaks: the
# runtimes keep memory for the process, lavapipe's frames vanish when the
# Vulkan loader unloads it, and LeakSanitizer's tracer crashes stopping
# PoCL's worker threads.  Their leaks are checked by valgrind (make
# check-valgrind, with tests/check.supp).
TG_PLUGIN_PATH="${TG_PLUGIN_PATH:+$TG_PLUGIN_PATH:}${TG_DEVICE_PLUGIN_PATH:-}"
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export TG_PLUGIN_PATH ASAN_OPTIONS

# Can the device be opened?  tg-info with DEVICE set names it as the
# default device ("default device: OPENCL (DEVICE=OPENCL is set)") when
# it opens, else says why not.
info=${TG_TOOLS:-./libtgcore/tools}/tg-info
out=$(DEVICE=$device "$info" 2>&1)
if ! printf '%s\n' "$out" | grep -q "^default device: $device "; then
	# the plugin's own reason ("present, no devices: no OpenCL
	# platform"), a device that failed to open, else tg-info's verdict
	reason=$(printf '%s\n' "$out" |
		sed -n -e "s/^    $device .*present, no devices: //p" \
		       -e "s/^    $device: cannot open: //p" | head -n 1)
	if [ -z "$reason" ]; then
		reason=$(printf '%s\n' "$out" |
			sed -n -e 's/^default device: none: //p' \
			       -e 't' -e 's/^default device: //p' | head -n 1)
	fi
	if [ -z "$reason" ]; then
		reason="tg-info printed no default device"
	fi
	# CI installs PoCL and lavapipe: there a missing device is a
	# failure, not a skip (TG_TEST_REQUIRE_DEVICES="OPENCL VULKAN")
	for req in ${TG_TEST_REQUIRE_DEVICES:-}; do
		if [ "$req" = "$device" ]; then
			echo "FAIL: $device is required here but: $reason"
			exit 1
		fi
	done
	echo "SKIP: $device: $reason"
	exit 77
fi

# Device compilers (PoCL compiles every kernel with LLVM) are slow:
# stretch the suites' own timeouts, and the default one.
CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT_DEV:-600}
CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-4}
DEVICE=$device
export CK_DEFAULT_TIMEOUT CK_TIMEOUT_MULTIPLIER DEVICE
echo "$suite on $device"
if [ -n "$wrapper" ]; then
	exec "$wrapper" "$bin"
fi
exec "$bin"

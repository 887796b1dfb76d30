#!/bin/sh
# tg-conformance: passes on the CPU plugin (and on OpenCL and Vulkan
# where their runtimes have a device), writes TAP and JUnit, catches a
# backend with a wrong result and one that crashes in launch (each
# case in its own child, the run going on), reports a hang, and
# refuses bad arguments with a message.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out="$tmp/out"
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$out"; exit 1; }
conf="$TG_TOOLS/tg-conformance"
info="$TG_TOOLS/tg-info"
broken="$TG_TEST_PLUGINS/broken"

"$conf" --plugin CPU --tap "$tmp/cpu.tap" --junit "$tmp/cpu.xml" \
	>"$out" 2>&1 || fail "exit status $? on CPU"
for area in contract memory ops kernels; do
	grep -Eq "^$area +[1-9][0-9]* passed, 0 failed" "$out" || fail "CPU: $area line"
done
grep -q '^PASS: 18 cases, 0 failed$' "$out" || fail "CPU: summary"
grep -q '^1\.\.18$' "$tmp/cpu.tap" || fail "TAP plan"
[ "$(grep -c '^ok [0-9]* - ' "$tmp/cpu.tap")" = 18 ] || fail "TAP: 18 ok lines"
grep -q 'not ok' "$tmp/cpu.tap" && fail "TAP: a 'not ok' on CPU"
grep -q '<testsuite name="tg-conformance CPU" tests="18" failures="0" skipped="0">' \
	"$tmp/cpu.xml" || fail "JUnit testsuite line"
[ "$(grep -c '<testcase ' "$tmp/cpu.xml")" = 18 ] || fail "JUnit: 18 testcases"

# The device plugins, where the runtime has a device (as tg-info.sh).
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
TG_PLUGIN_PATH="$TG_PLUGIN_PATH:${TG_DEVICE_PLUGIN_PATH:-}" "$info" >"$tmp/info" 2>&1
for dev in OPENCL VULKAN; do
	grep -q "^    $dev .*: loaded, [1-9]" "$tmp/info" || continue
	TG_PLUGIN_PATH="$TG_PLUGIN_PATH:${TG_DEVICE_PLUGIN_PATH:-}" \
		"$conf" --plugin $dev >"$out" 2>&1 || fail "exit status $? on $dev"
	grep -q '^PASS: 18 cases, 0 failed$' "$out" || fail "$dev: summary"
	echo "tg-conformance passes on $dev"
done

# examples/vendor-plugin with a launch that skips its last work-item
"$conf" --plugin "$broken/wrongresult.la" --junit "$tmp/wrong.xml" \
	>"$out" 2>&1 && fail "exit 0 with a wrong result"
grep -q '^contract  5 passed, 0 failed' "$out" || fail "wrong result: contract"
grep -q '^  FAIL memory/sizes: x + x of 1 float32 on HOSTMEM: element 0 of 1 is .*, want -6 ' \
	"$out" || fail "wrong result: memory/sizes"
grep -q '^  FAIL ops/matmul: matmul (17, 33) @ (33, 29) on HOSTMEM: element [0-9]* of 493 is' \
	"$out" || fail "wrong result: ops/matmul"
grep -q '<failure message="x + x of 1 float32 on HOSTMEM: element 0 of 1 is' \
	"$tmp/wrong.xml" || fail "wrong result: JUnit failure"

# ... and with a launch that dies: each case alone, the run goes on
"$conf" --plugin "$broken/crashlaunch.la" --tap "$tmp/crash.tap" \
	>"$out" 2>&1 && fail "exit 0 with a crash in launch"
grep -q '^  FAIL memory/sizes: crashed in realize x + x of 1 float32 (SIGSEGV)$' \
	"$out" || fail "crash: memory/sizes"
grep -q '^  FAIL ops/reduce: crashed in realize sum over axis 1 (SIGSEGV)$' \
	"$out" || fail "crash: ops/reduce"
grep -q '^FAIL: 18 cases, ' "$out" || fail "crash: the run did not go on"
grep -q '^not ok 6 - memory/sizes$' "$tmp/crash.tap" || fail "crash: TAP"

# a plugin whose probe hangs: each case stops at --timeout
"$conf" --plugin "$TG_TEST_PLUGINS/crash/hangprobe.la" --area contract \
	--timeout 1 >"$out" 2>&1 && fail "exit 0 with a hanging probe"
grep -q '^  FAIL contract/probe: hung in load the plugins: killed after 1 s$' \
	"$out" || fail "hang: contract/probe"

# a name that no plugin has
"$conf" --plugin NOPE --area contract >"$out" 2>&1 && fail "exit 0 without the plugin"
grep -q '^  FAIL contract/loads: plugin NOPE not found on the search path' \
	"$out" || fail "missing plugin"

# bad arguments: status 2 and a message
"$conf" --bogus x >"$out" 2>&1; [ $? = 2 ] || fail "--bogus status"
grep -q 'tg-conformance: --bogus: unknown option' "$out" || fail "--bogus message"
"$conf" --timeout 0 >"$out" 2>&1; [ $? = 2 ] || fail "--timeout 0 status"
grep -q 'tg-conformance: --timeout 0: want seconds > 0' "$out" || fail "--timeout message"
"$conf" --plugin CPU --area nope >"$out" 2>&1; [ $? = 2 ] || fail "--area status"
grep -q 'tg-conformance: --area nope: no such area' "$out" || fail "--area message"
"$conf" --plugin /nonexistent/x.so >"$out" 2>&1; [ $? = 2 ] || fail "missing file status"
grep -q 'tg-conformance: --plugin /nonexistent/x.so: no such file' "$out" || fail "missing file message"
"$conf" --tap >"$out" 2>&1; [ $? = 2 ] || fail "--tap without a value"
grep -q 'tg-conformance: --tap: needs a value' "$out" || fail "--tap message"
[ "$("$conf" --list | wc -l)" = 18 ] || fail "--list"
"$conf" --help >"$out" 2>&1 || fail "--help status"
echo "PASS: tg-conformance"

#!/bin/sh
# tg-conformance: passes on the CPU plugin (and on OpenCL and Vulkan
# where their runtimes have a device), writes TAP and JUnit, catches a
# backend with a wrong result (in the op checks and in the random-opts
# fuzz) and one that crashes in launch (each
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
# the first line names the plugin and device the cases used
head -n 1 "$out" | grep -q '^tg-conformance: plugin CPU [0-9.]* (/.*/cpu\.\(la\|so\)), device CPU: ' \
	|| fail "CPU: the first line does not name the plugin and device"
for area in contract memory ops kernels fuzz; do
	grep -Eq "^$area +[1-9][0-9]* passed, 0 failed" "$out" || fail "CPU: $area line"
done
grep -q '^PASS: 27 cases, 0 failed$' "$out" || fail "CPU: summary"
grep -q '^1\.\.27$' "$tmp/cpu.tap" || fail "TAP plan"
[ "$(grep -c '^ok [0-9]* - ' "$tmp/cpu.tap")" = 27 ] || fail "TAP: 27 ok lines"
grep -q 'not ok' "$tmp/cpu.tap" && fail "TAP: a 'not ok' on CPU"
grep -q '<testsuite name="tg-conformance CPU" tests="27" failures="0" skipped="0">' \
	"$tmp/cpu.xml" || fail "JUnit testsuite line"
[ "$(grep -c '<testcase ' "$tmp/cpu.xml")" = 27 ] || fail "JUnit: 27 testcases"

# The device plugins, where the runtime has a device (as tg-info.sh).
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
TG_PLUGIN_PATH="$TG_PLUGIN_PATH:${TG_DEVICE_PLUGIN_PATH:-}" "$info" >"$tmp/info" 2>&1
for dev in OPENCL VULKAN; do
	grep -q "^    $dev .*: loaded, [1-9]" "$tmp/info" || continue
	TG_PLUGIN_PATH="$TG_PLUGIN_PATH:${TG_DEVICE_PLUGIN_PATH:-}" \
		"$conf" --plugin $dev --fuzz 4 >"$out" 2>&1 || fail "exit status $? on $dev"
	grep -q '^PASS: 27 cases, 0 failed$' "$out" || fail "$dev: summary"
	echo "tg-conformance passes on $dev"
done

# examples/vendor-plugin, with the core's C and with its own renderer
# (TG_DIALECT_CUSTOM: the kernel view, its assembler and its VM).  Its
# memory is malloc's: under ASan and TSan, the 16 TiB allocation must
# return NULL as it does without, not abort.
ASAN_OPTIONS="allocator_may_return_null=1:$ASAN_OPTIONS"
TSAN_OPTIONS="allocator_may_return_null=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
export TSAN_OPTIONS
for r in c vm; do
	TG_HOSTMEM_RENDERER=$r "$conf" --plugin "$TG_TEST_PLUGINS/vendor/hostmem.la" \
		--fuzz 4 >"$out" 2>&1 || fail "exit status $? on HOSTMEM, renderer $r"
	grep -q '^PASS: 27 cases, 0 failed$' "$out" || fail "HOSTMEM $r: summary"
	grep -q '^dtype float16 skipped: HOSTMEM does not compute it' "$out" ||
		fail "HOSTMEM $r: float16 skipped"
done
echo "tg-conformance passes on examples/vendor-plugin, renderers c and vm"
TG_HOSTMEM_RENDERER=bogus "$conf" --plugin "$TG_TEST_PLUGINS/vendor/hostmem.la" \
	--area contract >"$out" 2>&1 && fail "exit 0 with renderer = bogus"
grep -q "FAIL contract/device-info: .*config: environment TG_HOSTMEM_RENDERER: \[hostmem\] renderer: want c (the core renders C for cc) or vm (the plugin renders for its machine), got 'bogus'" \
	"$out" || fail "renderer = bogus message"

# ... with a renderer of its own that fails, returns no text, is
# missing or has a dialect that is not one (the last two refused at
# open): expect_broken NAME AREA PATTERN, where the run must fail with PATTERN
expect_broken() {
	"$conf" --plugin "$broken/$1.la" --area "$2" >"$out" 2>&1 &&
		fail "$1: exit 0"
	grep -q "$3" "$out" || fail "$1: message"
}
rend='render: kernel E_1 on HOSTMEM (the plugin.s renderer)'
open0='FAIL contract/device-info: .*could not open device 0: the device has no valid'
expect_broken renderfail memory "^  FAIL memory/sizes: x + x of 1 float32 on HOSTMEM: .*$rend: hostmem vm: this build renders nothing (HM_FAULT=3)\$"
expect_broken rendernull memory "^  FAIL memory/sizes: .*$rend: the renderer returned no text\$"
expect_broken norender contract "$open0 renderer.render (its dialect is TG_DIALECT_CUSTOM) entry; refusing it"
expect_broken nodialect contract "$open0 renderer.dialect (not an enum tg_dialect) entry; refusing it"

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
# the fuzz sees it too: fewer work-items skip other outputs than NOOPT's
grep -Eq '^  FAIL fuzz/column-sums: column sums of 37x129 on HOSTMEM with RANDOM_OPTS=[0-9]+: element [0-9]+ of 129 is .*, NOOPT gives .* \(TG_RANDOM_OPTS=[0-9]+ DEBUG=2 prints the opts of each kernel\)$' \
	"$out" || fail "wrong result: fuzz/column-sums"

# ... and with a launch that dies: each case alone, the run goes on
"$conf" --plugin "$broken/crashlaunch.la" --tap "$tmp/crash.tap" \
	>"$out" 2>&1 && fail "exit 0 with a crash in launch"
grep -q '^  FAIL memory/sizes: crashed in realize x + x of 1 float32 (SIGSEGV)$' \
	"$out" || fail "crash: memory/sizes"
grep -q '^  FAIL ops/reduce: crashed in realize sum over axis 1 (SIGSEGV)$' \
	"$out" || fail "crash: ops/reduce"
grep -q '^FAIL: 27 cases, ' "$out" || fail "crash: the run did not go on"
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
"$conf" --fuzz 0 >"$out" 2>&1; [ $? = 2 ] || fail "--fuzz 0 status"
grep -q 'tg-conformance: --fuzz 0: want a number from 1 to ' "$out" || fail "--fuzz message"
"$conf" --seed x >"$out" 2>&1; [ $? = 2 ] || fail "--seed x status"
grep -q 'tg-conformance: --seed x: want a number from 1 to ' "$out" || fail "--seed message"
"$conf" --tap >"$out" 2>&1; [ $? = 2 ] || fail "--tap without a value"
grep -q 'tg-conformance: --tap: needs a value' "$out" || fail "--tap message"
[ "$("$conf" --list | wc -l)" = 27 ] || fail "--list"
for h in -h --help; do
	"$conf" $h >"$out" 2>&1 || fail "$h status"
	grep -q '^usage: .*tg-conformance \[--plugin' "$out" || fail "$h usage"
	grep -q '^  --version ' "$out" || fail "$h does not list --version"
done
"$conf" --version >"$out" 2>&1 || fail "--version status"
grep -q '^tg-conformance (tgcore) [0-9][0-9.]*, plugin ABI [0-9]*\.[0-9]*$' "$out" || fail "--version"
# no device: the first line says why
TG_PLUGIN_PATH=/nonexistent "$conf" --area contract >"$out" 2>&1
head -n 1 "$out" | grep -q '^tg-conformance: no device: ' || fail "the first line without a device"
echo "PASS: tg-conformance"

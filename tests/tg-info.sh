#!/bin/sh
# tg-info: lists the search path, each plugin with its result, and the
# default device; exits non-zero when no device is usable.
set -u
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$out"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
info="$TG_TOOLS/tg-info"

"$info" >"$out" 2>&1 || fail "exit status $? with the CPU plugin"
grep -q '(TG_PLUGIN_PATH)' "$out" || fail "search path origin missing"
grep -q 'CPU .*ABI 0\.[0-9]*: loaded, 1 device' "$out" || fail "CPU line"
grep -q '^default device: CPU (auto' "$out" || fail "default device"
grep -q '^built in: DISK:path' "$out" || fail "the DISK line"
grep -q '^      dtypes: all$' "$out" || fail "CPU dtypes line"
# OpenCL and Vulkan devices, where their runtimes have one: name,
# driver, memory, limits and dtypes (no leak check: see ondevice.sh)
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
TG_PLUGIN_PATH="$TG_PLUGIN_PATH:${TG_DEVICE_PLUGIN_PATH:-}" "$info" >"$out" 2>&1 \
	|| fail "exit status $? with the device plugins"
grep -q '^default device: CPU (auto' "$out" || fail "default device with GPU plugins"
for d in OPENCL:opencl VULKAN:glsl; do
	name=${d%%:*}
	if grep -q "^    $name .*: loaded, [1-9]" "$out"; then
		grep -q "^    $name: .* | .*\[[A-Z]*, ${d#*:} kernels, memory [0-9.]* GiB.*, work-group [0-9]*, shared [0-9]* B\]" "$out" \
			|| fail "$name device line"
		grep -A1 "^    $name: " "$out" | grep -q '^      dtypes: ' \
			|| fail "$name dtypes line"
	fi
done

# Uninstalled, with no plugin variable set, as the README's first
# command runs its example: the libtool wrapper loads the build tree's
# libtgcore (its libtgcore.la says installed=no), and that library takes
# its own build tree's plugins in place of the installed directory.
# Only with a shared libtgcore: a static one has no archive to go by.
if grep -qx 'installed=no' "$TG_TOOLS/../libtgcore.la" 2>/dev/null &&
   grep -q "^dlname='..*'" "$TG_TOOLS/../libtgcore.la"; then
	env -u TG_PLUGIN_PATH -u TG_PLUGIN_DEFAULT_PATH -u TG_PLUGIN_BUILD_TREE \
		"$info" >"$out" 2>&1 || fail "exit status $? uninstalled"
	top=$(cd "$TG_TOOLS/../.." && pwd)
	grep -qx "  $top/plugins/cpu  (build tree of the uninstalled libtgcore)" \
		"$out" || fail "the uninstalled library's build tree not searched"
	grep -q '/plugins/common/' "$out" && fail "a convenience archive listed"
	grep -q 'CPU .*ABI 0\.[0-9]*: loaded, 1 device' "$out" \
		|| fail "CPU not loaded from the build tree"
fi

# --version, -h and --help; a bad argument exits 2
"$info" --version >"$out" 2>&1 || fail "--version exit status"
grep -q '^tg-info (tgcore) [0-9][0-9.]*, plugin ABI [0-9]*\.[0-9]*$' "$out" || fail "--version"
for h in -h --help; do
	"$info" $h >"$out" 2>&1 || fail "$h exit status"
	grep -q '^usage: .*tg-info \[--no-isolate\] \[-h|--help\] \[--version\]$' "$out" || fail "$h usage line"
done
"$info" --bogus >"$out" 2>&1; [ $? = 2 ] || fail "a bad argument does not exit 2"

TG_PLUGIN_PATH=/nonexistent/dir "$info" >"$out" 2>&1 && fail "exit 0 with no device"
grep -q 'default device: none: no usable device' "$out" || fail "no-device message"

TG_PLUGIN_PATH="$TG_PLUGIN_PATH:$TG_TEST_PLUGINS" CPU=1 "$info" >"$out" 2>&1 \
	|| fail "exit status with test plugins"
grep -q 'refused: not a tgcore plugin' "$out" || fail "noentry not shown"
grep -q 'refused: built for plugin ABI 1\.' "$out" || fail "newmajor not shown"
grep -q 'present, no devices: nodev-driver.so.1 not found' "$out" || fail "probe0"
grep -q 'MOCK:1: ' "$out" || fail "MOCK:1 device line"
grep -q 'OPENFAIL: cannot open: .*driver refused to open' "$out" || fail "openfail"
grep -q '^default device: CPU (CPU=1 is set)' "$out" || fail "CPU=1 reason"

# A backend setting that does not parse: shown on the plugin's line, and
# no device is chosen (not the next one, issue 46)
TG_CPU_THREADS=abc "$info" >"$out" 2>&1 && fail "exit 0 with a bad setting"
grep -q "CPU .*loaded, unusable, a setting is bad: config: environment TG_CPU_THREADS: \[cpu\] threads: expected an integer from 0 (one per core) to 4096, got 'abc'" \
	"$out" || fail "bad [cpu] threads not shown"
grep -q "^default device: none: no device chosen (auto: " "$out" \
	|| fail "bad [cpu] threads: default device line"

# Plugins that crash, exit or hang in their entry, probe or open: each
# is tried in a child first and listed with what happened; the CPU
# device is still found and is the default.
crash="$TG_TEST_PLUGINS/crash"
TG_PLUGIN_PATH="$TG_PLUGIN_PATH:$crash" TG_PLUGIN_ISOLATE_TIMEOUT=1 \
	"$info" >"$out" 2>&1 || fail "exit status $? with crashing plugins"
grep -q '^plugins (6 found, each tried in a child process first):' "$out" \
	|| fail "plugin count line"
for why in 'crashed in load (SIGABRT)' 'crashed in probe (SIGSEGV)' \
	'exited with status 3 in probe' 'hung in probe: killed after 1 s' \
	'crashed in open CRASHOPEN:1 (SIGBUS)'; do
	grep -q "^    refused: $why when tried in a child process (plugin_isolate); not loaded\$" "$out" \
		|| fail "'$why' not listed"
done
grep -q '^default device: CPU (auto' "$out" || fail "default device with crashing plugins"
# --no-isolate loads into tg-info itself, as applications do: the crash
# takes it down before it names a default device.
TG_PLUGIN_PATH="$TG_PLUGIN_PATH:$crash/crashprobe.la" "$info" --no-isolate \
	>"$out" 2>&1 && fail "--no-isolate survived a probe that crashes"
grep -q '^plugins (2 found):' "$out" || fail "--no-isolate plugin count line"
grep -q '^default device' "$out" && fail "--no-isolate went on after the crash"

TG_CONFIG=/nonexistent.ini "$info" >"$out" 2>&1 && fail "exit 0 with a bad config"
grep -q 'configuration error: config: TG_CONFIG=/nonexistent.ini: no such file' "$out" \
	|| fail "config error"

"$info" --help >"$out" 2>&1 || fail "--help exit status"
"$info" --bogus >"$out" 2>&1 && fail "bad option accepted"
echo "PASS: tg-info"

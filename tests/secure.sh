#!/bin/sh
# Secure mode: a setgid program that compiles a CPU kernel runs the
# compiler from /usr/bin or /bin, never one the caller put first on PATH
# or named in TG_CPU_CC, and keeps no cache in the caller's HOME.  The
# same program without setgid does run the caller's compiler, which
# shows that the planted one would be seen.  Needs root to make a setgid
# copy (CI runs as root); skipped, saying so, otherwise.
set -u
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: making a setgid copy of tests/secure_run needs root"
	exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
tmp="$TG_TEST_TMP/secure.$$"
rm -rf "$tmp"
mkdir -p "$tmp/evil" "$tmp/home" || fail "cannot make $tmp"
cat >"$tmp/evil/cc" <<EOS
#!/bin/sh
touch "$tmp/evil/ran"
exec /usr/bin/cc "\$@"
EOS
chmod 755 "$tmp/evil/cc"
cp tests/secure_run "$tmp/plain" && cp tests/secure_run "$tmp/setgid" ||
	fail "cannot copy tests/secure_run"
chgrp 65534 "$tmp/setgid" && chmod 2755 "$tmp/setgid" ||
	fail "cannot make $tmp/setgid setgid"
plugins="$(cd plugins/cpu && pwd)"
run() {
	# LeakSanitizer cannot stop the threads of a setgid process
	ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
	PATH="$tmp/evil:$PATH" TG_CPU_CC="$tmp/evil/cc" HOME="$tmp/home" \
	XDG_CACHE_HOME="$tmp/home/cache" TMPDIR="$tmp/home" "$@" "$plugins"
}

out=$(run "$tmp/setgid" 2>&1) || fail "setgid run: $out"
[ ! -e "$tmp/evil/ran" ] || fail "the setgid program ran the caller's cc"
[ -z "$(ls -A "$tmp/home")" ] || fail "the setgid program wrote to the caller's HOME: $(ls -A "$tmp/home")"
out=$(run "$tmp/plain" 2>&1) || fail "plain run: $out"
[ -e "$tmp/evil/ran" ] || fail "the plain program did not run TG_CPU_CC (the test would not see it)"
rm -rf "$tmp"
echo "PASS: the setgid program ignored PATH, TG_CPU_CC and HOME"

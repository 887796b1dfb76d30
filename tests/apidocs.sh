#!/bin/sh
# The API reference (Makefile.am, docs/Doxyfile.in): Doxygen documented
# every public function, and every one has its section-3 man page and
# its entry in the HTML.  The functions are read from the headers
# themselves: each TG_API declaration, and each op of the X-macro lists
# (TG_UNARY_OPS: tg_NAME; TG_BINARY_OPS: tg_NAME and tg_NAME_s); and
# every struct of tg/plugin.h, a backend's vtables, has a page too.
set -u
api=apidocs
inc="$TG_TEST_SRCDIR/../libtgcore/include/tg"
if [ ! -f "$api/stamp" ]; then
	echo "SKIP: the API reference was not built (configure found no doxygen)"
	exit 77
fi
fail=0
bad() { echo "FAIL: $*"; fail=1; }

if grep 'is not documented' "$api/warnings.log" | grep -q '(function)'; then
	grep 'is not documented' "$api/warnings.log" | grep '(function)'
	bad "public functions without documentation (above)"
fi
if grep -q 'Compound .* is not documented' "$api/warnings.log"; then
	grep 'Compound .* is not documented' "$api/warnings.log"
	bad "public structs without documentation (above)"
fi
# every page's NAME line parses (lexgrog, what apropos and lintian use):
# "name \- what it is"
if command -v lexgrog >/dev/null 2>&1; then
	for p in "$api"/man/man3/*.3; do
		head -n 1 "$p" | grep -q '^\.so ' && continue
		lexgrog "$p" >/dev/null 2>&1 || bad "$p: no NAME line lexgrog can read"
	done
fi
# every page formats without a groff warning (lintian's groff-message:
# a comment line that starts with ' or . becomes a request)
if command -v groff >/dev/null 2>&1; then
	for p in "$api"/man/man3/*.3; do
		head -n 1 "$p" | grep -q '^\.so ' && continue
		w=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
		[ -z "$w" ] || { echo "$w"; bad "$p: groff warns (above)"; }
	done
fi
# only tgcore's names: a page named after a struct field ("free") would
# take libc's place
ls "$api/man/man3" | grep -v '^tg_\|^TG_\|\.h\.3$' && bad "man pages not named tg_, TG_ or after a header (above)"
funcs=$( (grep -h '^TG_API [^#]*(' "$inc/tg.h" "$inc/dist.h" "$inc/llm.h" |
	sed 's/(.*//; s/.*[ *]//'
	sed -n '/^#define TG_UNARY_OPS/,/[^\\]$/p' "$inc/tg.h" |
		grep -o 'X([a-z_0-9]*)' | sed 's/X(\(.*\))/tg_\1/'
	sed -n '/^#define TG_BINARY_OPS/,/[^\\]$/p' "$inc/tg.h" |
		grep -o 'X([a-z_0-9]*)' | sed 's/X(\(.*\))/tg_\1 tg_\1_s/' |
		tr ' ' '\n') | sort -u)
n=0
for f in $funcs; do
	n=$((n + 1))
	[ -f "$api/man/man3/$f.3" ] || bad "$f: no man page"
	grep -q ">$f<" "$api/html/tg_8h.html" "$api/html/dist_8h.html" \
		"$api/html/llm_8h.html" ||
		bad "$f: not in the HTML"
done
[ "$n" -gt 350 ] || bad "only $n functions read from the headers"
for s in $(grep -o '^struct tg_[a-z_]* {' "$inc/plugin.h" |
	sed 's/struct \(.*\) {/\1/'); do
	[ -f "$api/man/man3/$s.3" ] || bad "struct $s: no man page"
done
[ "$fail" = 0 ] && echo "PASS: $n public functions documented, with man pages and HTML"
exit "$fail"

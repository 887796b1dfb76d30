#!/bin/sh
# The layering rule of HACKING.md, checked on the built objects: no file
# of libtgcore calls a function defined in a module of a higher stage,
# and the compiler's stages read no configuration (their settings are
# passed down, read once per operation).  Run from the top build
# directory by `make check`; needs nm (binutils).
#
# The stages, lowest first (same rank: may call each other):
#   0 util          util/ (arena, errors, strings, logging)
#   1 ir            ir/, dtype.c, util/config.c (it checks dtype names)
#   2 shape         shape/
#   3 codegen       codegen/, render/
#   4 device        device/, plugin/, cache/
#   5 lazy          lazy/
#   6 engine        engine/
#   7 tensor        tensor/
#   8 nn            nn/
#   9 lib           lib.c (init and shutdown: calls every stage)
set -u

command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }

rank_of() {
	case "$1" in
	util) echo 0 ;;
	ir|dtype|config) echo 1 ;;
	shape) echo 2 ;;
	codegen|render) echo 3 ;;
	device|plugin|cache) echo 4 ;;
	lazy) echo 5 ;;
	engine) echo 6 ;;
	tensor) echo 7 ;;
	nn) echo 8 ;;
	lib) echo 9 ;;
	*) echo 99 ;;
	esac
}

# The module of an object: its folder, or for top-level files the file.
module_of() {
	d=$(dirname "$(dirname "$1")")
	m=${d#libtgcore}
	m=${m#/}
	f=$(basename "$1" .o)
	f=${f#libtgcore_core_la-}
	[ -z "$m" ] && m=$f
	[ "$m/$f" = util/config ] && m=config  # util/ by folder, not by rank
	echo "$m"
}

# The library's objects, from the source list of Makefile.am (stale
# objects of moved files may linger in a build tree).
srcdir=${TG_TEST_SRCDIR:-$(dirname "$0")}/..
objs=$(sed -n 's|^[[:space:]]*\(libtgcore/[a-z_/]*\)\.c.*|\1|p' \
	"$srcdir/Makefile.am" | grep -v '/tools/' | while read -r f; do
	o="$(dirname "$f")/.libs/libtgcore_core_la-$(basename "$f").o"
	[ -f "$o" ] && echo "$o"
done)
[ -n "$objs" ] || { echo "ERROR: no objects (build first)"; exit 99; }
tmp=${TMPDIR:-/tmp}/layers.$$
trap 'rm -f "$tmp".*' EXIT

# symbol -> module that defines it
for o in $objs; do
	m=$(module_of "$o")
	nm -g --defined-only "$o" | awk -v m="$m" 'NF == 3 { print $3, m }'
done | sort -k1,1 -u > "$tmp.def"

bad=0
for o in $objs; do
	m=$(module_of "$o")
	r=$(rank_of "$m")
	src=$(basename "$o" .o)
	src=${src#libtgcore_core_la-}
	nm -u "$o" | awk '{ print $2 }' | sort -u > "$tmp.und"
	join "$tmp.und" "$tmp.def" > "$tmp.calls"
	while read -r sym dm; do
		dr=$(rank_of "$dm")
		if [ "$dr" -gt "$r" ]; then
			echo "$m/$src calls $sym of $dm (a higher stage)"
			bad=1
		fi
		# configuration: read by util, device/plugin/cache (at open
		# time) and the stages that start an operation, not by passes
		case "$sym" in tg_cfg_*|tg_config_*|tg_setting_*|tg_settings_*)
			case "$m" in ir|dtype|shape|codegen|render|lazy)
				echo "$m/$src reads the configuration ($sym)"
				bad=1 ;;
			esac ;;
		esac
	done < "$tmp.calls"
done
[ $bad -eq 0 ] && echo "layers: $(echo "$objs" | wc -l) objects follow the stage order"
exit $bad

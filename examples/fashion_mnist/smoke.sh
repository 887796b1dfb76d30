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
"$bin" --smoke --epochs 1 --batch 64 --out "$out" >"$log" 2>&1 || fail "training"
cp "$log" "$out/train.log"
grep -q '^epoch 1: train loss [0-9.]*, test accuracy [0-9.]*%' "$log" \
	|| fail "no accuracy line"
grep -q 'images/s; first step done after' "$log" || fail "no speed line"
test -s "$out/fashion_mnist.safetensors" || fail "no checkpoint"
grep -q '<svg' "$out/fashion_mnist_curve.svg" || fail "no curve"
"$bin" --smoke --eval "$out/fashion_mnist.safetensors" >"$log" 2>&1 \
	|| fail "--eval"
grep -q 'fashion_mnist.safetensors: test accuracy' "$log" || fail "eval line"
grep -q '^  Ankle boot  *[0-9.]*%$' "$log" || fail "no per-class line"
# what a person sees: the first step named as compiling and timed apart,
# and a curve point every step here (8 steps of 64 images)
grep -q "^epoch 1/1: compiling the training step's kernels" "$out/train.log" \
	|| fail "no compiling line before the first step"
grep -q '^epoch 1/1: the first step took [0-9.]* s, compiling included$' \
	"$out/train.log" || fail "no first-step line"
[ "$(grep -c '<circle' "$out/fashion_mnist_curve.svg")" = 16 ] ||
	fail "the curve does not have a point per step"
# a --full checkpoint evaluates without --full: the width, the input
# scaling and the class names travel in its metadata
"$bin" --smoke --full --epochs 1 --batch 64 --out "$out/full" >"$log" 2>&1 \
	|| fail "--full training"
grep -aq '"__metadata__":{"model":"beautiful_mnist","width":"2","input_scale":"0.0078431372549019607","input_offset":"-1","classes":"T-shirt/top,Trouser,' \
	"$out/full/fashion_mnist.safetensors" || fail "no description in the checkpoint"
"$bin" --smoke --eval "$out/full/fashion_mnist.safetensors" >"$log" 2>&1 \
	|| fail "--eval of a --full checkpoint without --full"
grep -q '^fashion_mnist: evaluating, full net' "$log" || fail "--eval did not take the width"
"$bin" --smoke --quick --eval "$out/full/fashion_mnist.safetensors" >"$log" 2>&1 \
	|| fail "--quick --eval of a --full checkpoint"
grep -q 'holds a full net; --quick is ignored' "$log" || fail "no note on --quick"
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

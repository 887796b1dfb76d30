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
echo "fashion_mnist smoke: OK"

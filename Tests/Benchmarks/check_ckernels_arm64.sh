#!/bin/sh
# Builds CKernels + ckernels_variants_check.c for aarch64 (clang, the arm64 Debian root as sysroot,
# static) and runs it under qemu-user twice: -cpu cortex-a72 (NEON, Pi 4) and -cpu max (NEON + SDOT).
# Usage (package root): Tests/Benchmarks/check_ckernels_arm64.sh [ROOT]
#   ROOT defaults to /var/cache/posewatch-ci/trixie-arm64 (made by .ci/check-arm64.sh).
set -eu
ROOT=${1:-/var/cache/posewatch-ci/trixie-arm64}
OUT=.build/ckernels-arm64
mkdir -p "$OUT"
clang --target=aarch64-linux-gnu --sysroot="$ROOT" -fuse-ld=lld -static -O3 -Wall \
  -ISources/CKernels/include Sources/CKernels/*.c Tests/Benchmarks/ckernels_variants_check.c \
  -lpthread -lm -o "$OUT/ckernels_variants_check"
for cpu in cortex-a72 max; do
  echo "== qemu-aarch64-static -cpu $cpu"
  qemu-aarch64-static -cpu "$cpu" "$OUT/ckernels_variants_check"
done

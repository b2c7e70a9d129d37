#!/bin/sh
# Builds CKernels + ckernels_variants_check.c for aarch64 with clang (static) and runs it under
# qemu-user twice: -cpu cortex-a72 (NEON, Pi 4: the `neon` variant) and -cpu max (NEON + SDOT: both
# variants). Every aarch64 kernel variant against the scalar one, bit for bit; CI runs it.
# Usage (package root): Tests/Benchmarks/check_ckernels_arm64.sh [ROOT]
#   ROOT: an arm64 Debian root to use as the sysroot (.ci/check-arm64.sh makes one in
#   /var/cache/posewatch-ci/trixie-arm64). Without one, Debian's cross C library is used
#   (gcc-aarch64-linux-gnu, which brings libc6-dev-arm64-cross; and qemu-user-static).
set -eu
ROOT=${1:-/var/cache/posewatch-ci/trixie-arm64}
OUT=.build/ckernels-arm64
mkdir -p "$OUT"
if [ -d "$ROOT/usr/include/aarch64-linux-gnu" ]; then
  SYSROOT="--sysroot=$ROOT"
elif [ -f /usr/aarch64-linux-gnu/lib/libc.a ]; then
  SYSROOT=  # clang finds Debian's aarch64-linux-gnu cross installation by itself
else
  echo "check_ckernels_arm64: no aarch64 C library: apt-get install gcc-aarch64-linux-gnu qemu-user-static, or pass an arm64 root" >&2
  exit 2
fi
command -v qemu-aarch64-static >/dev/null || { echo "check_ckernels_arm64: qemu-aarch64-static missing (apt-get install qemu-user-static)" >&2; exit 2; }
# shellcheck disable=SC2086  # SYSROOT is one flag or none
clang --target=aarch64-linux-gnu $SYSROOT -fuse-ld=lld -static -O3 -Wall \
  -ISources/CKernels/include Sources/CKernels/*.c Tests/Benchmarks/ckernels_variants_check.c \
  -lpthread -lm -o "$OUT/ckernels_variants_check"
for cpu in cortex-a72 max; do
  echo "== qemu-aarch64-static -cpu $cpu"
  qemu-aarch64-static -cpu "$cpu" "$OUT/ckernels_variants_check"
done

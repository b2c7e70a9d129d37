#!/bin/sh
# Runs the allocation test with a malloc-counting LD_PRELOAD shim (from the package root):
#   Tests/InferenceCoreTests/Scripts/count_allocations.sh [debug|release]
# Without the shim the test is skipped; with it, it asserts that invoke() makes no malloc calls.
set -eu
CONFIG=${1:-debug}
OUT=.build/malloc-counter
mkdir -p "$OUT"
cc -shared -fPIC -O2 -o "$OUT/libmalloc_counter.so" Tests/InferenceCoreTests/Scripts/malloc_counter.c -ldl
swift build -c "$CONFIG" --build-tests -Xswiftc -enable-testing  # other targets use @testable
LD_PRELOAD="$PWD/$OUT/libmalloc_counter.so" ".build/$CONFIG/posewatchPackageTests.xctest" \
  --testing-library swift-testing --filter AllocationTests

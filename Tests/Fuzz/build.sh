#!/bin/sh
# Builds the libFuzzer targets with swiftc and the toolchain's clang (SwiftPM has no fuzzer product
# type): the modules each target needs are compiled from Sources/ with the fuzzer and
# AddressSanitizer instrumentation, optimised (-O, as the release binary), then linked with the
# target's harness. C targets get a module map of their own in $OUT/modules/<name>.
# Usage: Tests/Fuzz/build.sh [OUTPUT_DIR]   (run from the package root; default .build-fuzz)
set -eu
OUT=${1:-.build-fuzz}
ROOT=$(pwd)
mkdir -p "$OUT/modules"
FLAGS="-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6"
CFLAGS="-fsanitize=fuzzer-no-link,address -O2 -g"

# c_target NAME HEADER [extra clang flags]: objects of Sources/NAME/*.c and a module map for Swift.
c_target() {
  name=$1 header=$2
  shift 2
  mkdir -p "$OUT/modules/$name"
  printf 'module %s {\n  header "%s/Sources/%s/include/%s"\n  export *\n}\n' "$name" "$ROOT" "$name" "$header" \
    > "$OUT/modules/$name/module.modulemap"
  for source in "Sources/$name"/*.c; do
    clang $CFLAGS "$@" -I "Sources/$name/include" -c "$source" -o "$OUT/$name-$(basename "$source" .c).o"
  done
}

# swift_module NAME SOURCES…: a wmo object and its .swiftmodule (internals visible to @testable).
swift_module() {
  name=$1
  shift
  swiftc $FLAGS -enable-testing -module-name "$name" -I "$OUT" -I "$OUT/modules/CLinuxSystem" -I "$OUT/modules/CKernels" \
    -wmo -emit-module -emit-module-path "$OUT/$name.swiftmodule" -c "$@" -o "$OUT/$name.o"
}

c_target CLinuxSystem clinuxsystem.h
c_target CKernels ckernels.h -O3
swift_module LinuxSystem Sources/LinuxSystem/*.swift
swift_module InferenceCore $(find Sources/InferenceCore -name '*.swift')
CORE="$OUT/LinuxSystem.o $OUT/InferenceCore.o $OUT/CLinuxSystem-*.o $OUT/CKernels-*.o -lm"

# harness NAME FILE: links one target against the core.
harness() {
  swiftc $FLAGS -module-name "$(echo "$1" | tr - _)" -I "$OUT" -I "$OUT/modules/CLinuxSystem" -I "$OUT/modules/CKernels" \
    "$2" $CORE -o "$OUT/$1"
  echo "built $OUT/$1"
}

harness fuzz-loader Tests/Fuzz/LoaderFuzz.swift
harness fuzz-numpy Tests/Fuzz/NumPyFuzz.swift
harness fuzz-model-invoke Tests/Fuzz/ModelInvokeFuzz.swift

#!/bin/sh
# Builds the libFuzzer loader target with swiftc (SwiftPM has no fuzzer product type):
# LinuxSystem and InferenceCore are compiled from Sources/ into objects with the fuzzer and
# AddressSanitizer instrumentation, then linked with LoaderFuzz.swift.
# Usage: Tests/Fuzz/build.sh [OUTPUT_DIR]   (run from the package root; default .build-fuzz)
set -eu
OUT=${1:-.build-fuzz}
mkdir -p "$OUT"
FLAGS="-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6"
swiftc $FLAGS -module-name LinuxSystem -wmo -emit-module -emit-module-path "$OUT/LinuxSystem.swiftmodule" \
  -c Sources/LinuxSystem/*.swift -o "$OUT/LinuxSystem.o"
swiftc $FLAGS -module-name InferenceCore -I "$OUT" -wmo -emit-module -emit-module-path "$OUT/InferenceCore.swiftmodule" \
  -c $(find Sources/InferenceCore -name '*.swift') -o "$OUT/InferenceCore.o"
swiftc $FLAGS -module-name FuzzLoader -I "$OUT" Tests/Fuzz/LoaderFuzz.swift "$OUT/LinuxSystem.o" "$OUT/InferenceCore.o" \
  -o "$OUT/fuzz-loader"
echo "built $OUT/fuzz-loader"
swiftc $FLAGS -module-name FuzzNumPy -I "$OUT" Tests/Fuzz/NumPyFuzz.swift "$OUT/LinuxSystem.o" "$OUT/InferenceCore.o" \
  -o "$OUT/fuzz-numpy"
echo "built $OUT/fuzz-numpy"

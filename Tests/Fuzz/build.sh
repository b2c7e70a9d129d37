#!/bin/sh
# Builds the libFuzzer targets with swiftc (SwiftPM has no fuzzer product type): the modules
# they need are compiled from Sources/ into objects with the fuzzer and AddressSanitizer
# instrumentation, then linked with LoaderFuzz.swift (fuzz-loader), NumPyFuzz.swift (fuzz-numpy)
# and ClipFuzz.swift (fuzz-clips).
# Usage: Tests/Fuzz/build.sh [OUTPUT_DIR]   (run from the package root; default .build-fuzz)
set -eu
OUT=${1:-.build-fuzz}
mkdir -p "$OUT"
FLAGS="-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6"
# LinuxSystem imports CLinuxSystem (signalfd/timerfd headers): a module map stands in for the one
# SwiftPM writes for its include directory, and its C file is compiled and linked with the rest.
mkdir -p "$OUT/CLinuxSystem"
printf 'module CLinuxSystem {\n    header "%s/Sources/CLinuxSystem/include/clinuxsystem.h"\n    export *\n}\n' "$(pwd)" \
  > "$OUT/CLinuxSystem/module.modulemap"
clang -fsanitize=fuzzer-no-link,address -O1 -g -ISources/CLinuxSystem/include -c Sources/CLinuxSystem/clinuxsystem.c \
  -o "$OUT/clinuxsystem.o"
FLAGS="$FLAGS -Xcc -fmodule-map-file=$OUT/CLinuxSystem/module.modulemap"
swiftc $FLAGS -module-name LinuxSystem -wmo -emit-module -emit-module-path "$OUT/LinuxSystem.swiftmodule" \
  -c Sources/LinuxSystem/*.swift -o "$OUT/LinuxSystem.o"
# InferenceCore imports CKernels (the int8 kernels in C): the same stand-in module map, and its
# C files compiled -O3 as Package.swift does, with the instrumentation.
mkdir -p "$OUT/CKernels"
printf 'module CKernels {\n    header "%s/Sources/CKernels/include/ckernels.h"\n    export *\n}\n' "$(pwd)" \
  > "$OUT/CKernels/module.modulemap"
for source in Sources/CKernels/*.c; do
  clang -fsanitize=fuzzer-no-link,address -O3 -g -ISources/CKernels/include -c "$source" \
    -o "$OUT/ckernels-$(basename "$source" .c).o"
done
KERNELS="$OUT/ckernels-*.o -lm"
swiftc $FLAGS -module-name InferenceCore -I "$OUT" -Xcc -fmodule-map-file="$OUT/CKernels/module.modulemap" -wmo -emit-module -emit-module-path "$OUT/InferenceCore.swiftmodule" \
  -c $(find Sources/InferenceCore -name '*.swift') -o "$OUT/InferenceCore.o"
swiftc $FLAGS -module-name FuzzLoader -I "$OUT" Tests/Fuzz/LoaderFuzz.swift "$OUT/LinuxSystem.o" "$OUT/clinuxsystem.o" "$OUT/InferenceCore.o" $KERNELS \
  -o "$OUT/fuzz-loader"
echo "built $OUT/fuzz-loader"
swiftc $FLAGS -module-name FuzzNumPy -I "$OUT" Tests/Fuzz/NumPyFuzz.swift "$OUT/LinuxSystem.o" "$OUT/clinuxsystem.o" "$OUT/InferenceCore.o" $KERNELS \
  -o "$OUT/fuzz-numpy"
echo "built $OUT/fuzz-numpy"

# fuzz-clips: the Y4M and MJPEG file sources (header parsing, frame walk, conversion and JPEG
# decoding). Capture needs its C shim CV4L2 (cv4l2.c wraps libv4l2, cjpeg.c wraps libjpeg):
# both are compiled with the same instrumentation; the system libraries are linked as they are
# (libjpeg is not instrumented: ASan sees what posewatch hands it, not libjpeg's insides). The
# module map stands in for the one SwiftPM writes for CV4L2's include directory.
ROOT=$(pwd)
mkdir -p "$OUT/CV4L2"
cat > "$OUT/CV4L2/module.modulemap" <<MAP
module CV4L2 {
    header "$ROOT/Sources/CV4L2/include/cv4l2.h"
    header "$ROOT/Sources/CV4L2/include/cjpeg.h"
    export *
}
MAP
for source in cv4l2 cjpeg; do
  clang -fsanitize=fuzzer-no-link,address -O1 -g -ISources/CV4L2/include $(pkg-config --cflags libv4l2 libjpeg) \
    -c Sources/CV4L2/$source.c -o "$OUT/$source.o"
done
swiftc $FLAGS -module-name Capture -I "$OUT" -Xcc -fmodule-map-file="$OUT/CV4L2/module.modulemap" -wmo -emit-module \
  -emit-module-path "$OUT/Capture.swiftmodule" -c Sources/Capture/*.swift -o "$OUT/Capture.o"
swiftc $FLAGS -module-name FuzzClips -I "$OUT" -Xcc -fmodule-map-file="$OUT/CV4L2/module.modulemap" Tests/Fuzz/ClipFuzz.swift \
  "$OUT/LinuxSystem.o" "$OUT/clinuxsystem.o" "$OUT/Capture.o" "$OUT/cv4l2.o" "$OUT/cjpeg.o" $(pkg-config --libs libv4l2 libv4lconvert libjpeg) \
  -o "$OUT/fuzz-clips"
echo "built $OUT/fuzz-clips"

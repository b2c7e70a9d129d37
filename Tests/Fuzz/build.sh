#!/bin/sh
# Builds the libFuzzer targets with swiftc (SwiftPM has no fuzzer product type): the modules they
# need are compiled from Sources/ into objects with the fuzzer and AddressSanitizer
# instrumentation (C targets with clang, into static archives with module maps), then each
# target is linked with them. Release-style code (-O), as the fuzz runner needs for speed.
# Usage: Tests/Fuzz/build.sh [OUTPUT_DIR]   (run from the package root; default .build-fuzz)
# Targets: add a swiftc line at the end; run them with Tests/Fuzz/run-fuzz.sh.
set -eu
OUT=${1:-.build-fuzz}
mkdir -p "$OUT"
ROOT=$(pwd)
FLAGS="-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6"
CFLAGS="-fsanitize=fuzzer-no-link,address -g"
AR=$(command -v llvm-ar || command -v ar)

# c_module NAME [CLANG FLAG...]: Sources/NAME/*.c → $OUT/libNAME.a, and $OUT/NAME/module.modulemap
# for its include/ directory (what SwiftPM generates), so `-I $OUT/NAME` makes `import NAME` work.
c_module() {
  name=$1; shift
  mkdir -p "$OUT/$name"
  printf 'module %s {\n    umbrella "%s/Sources/%s/include"\n    export *\n}\n' "$name" "$ROOT" "$name" >"$OUT/$name/module.modulemap"
  rm -f "$OUT/lib$name.a" "$OUT/$name"/*.o  # a source removed since the last build leaves no object behind
  for source in Sources/"$name"/*.c; do
    clang $CFLAGS "$@" -I "Sources/$name/include" -c "$source" -o "$OUT/$name/$(basename "$source" .c).o"
  done
  "$AR" rcs "$OUT/lib$name.a" "$OUT/$name"/*.o
}

c_module CLinuxSystem -O2
c_module CKernels -O3
C_MODULES="-I $OUT/CLinuxSystem -I $OUT/CKernels"
C_LIBRARIES="$OUT/libCKernels.a $OUT/libCLinuxSystem.a -lm"

swiftc $FLAGS -module-name LinuxSystem $C_MODULES -wmo -emit-module -emit-module-path "$OUT/LinuxSystem.swiftmodule" \
  -c Sources/LinuxSystem/*.swift -o "$OUT/LinuxSystem.o"
# -enable-testing: fuzz-model-invoke reads the model's constant ranges through @testable import.
swiftc $FLAGS -enable-testing -module-name InferenceCore -I "$OUT" $C_MODULES -wmo -emit-module -emit-module-path "$OUT/InferenceCore.swiftmodule" \
  -c $(find Sources/InferenceCore -name '*.swift') -o "$OUT/InferenceCore.o"
swiftc $FLAGS -module-name FuzzLoader -I "$OUT" $C_MODULES Tests/Fuzz/LoaderFuzz.swift "$OUT/LinuxSystem.o" "$OUT/InferenceCore.o" \
  $C_LIBRARIES -o "$OUT/fuzz-loader"
echo "built $OUT/fuzz-loader"
swiftc $FLAGS -module-name FuzzNumPy -I "$OUT" $C_MODULES Tests/Fuzz/NumPyFuzz.swift "$OUT/LinuxSystem.o" "$OUT/InferenceCore.o" \
  $C_LIBRARIES -o "$OUT/fuzz-numpy"
echo "built $OUT/fuzz-numpy"
swiftc $FLAGS -module-name FuzzModelInvoke -I "$OUT" $C_MODULES Tests/Fuzz/ModelInvokeFuzz.swift "$OUT/LinuxSystem.o" "$OUT/InferenceCore.o" \
  $C_LIBRARIES -o "$OUT/fuzz-model-invoke"
echo "built $OUT/fuzz-model-invoke"
swiftc $FLAGS -module-name FuzzModelBitFlips -I "$OUT" $C_MODULES Tests/Fuzz/ModelBitFlipFuzz.swift "$OUT/LinuxSystem.o" "$OUT/InferenceCore.o" \
  $C_LIBRARIES -o "$OUT/fuzz-model-bit-flips"
echo "built $OUT/fuzz-model-bit-flips"

# Capture and PoseEstimation (frames, poses), for targets above the inference core.
c_module CV4L2 -O2
CAPTURE_MODULES="$C_MODULES -I $OUT/CV4L2 -I Sources/CLibV4L2 -I Sources/CLibJPEG"
CAPTURE_LIBRARIES="$OUT/libCV4L2.a -lv4l2 -lv4lconvert -ljpeg $C_LIBRARIES"
swiftc $FLAGS -module-name Capture -I "$OUT" $CAPTURE_MODULES -wmo -emit-module -emit-module-path "$OUT/Capture.swiftmodule" \
  -c Sources/Capture/*.swift -o "$OUT/Capture.o"
swiftc $FLAGS -module-name PoseEstimation -I "$OUT" $CAPTURE_MODULES -wmo -emit-module -emit-module-path "$OUT/PoseEstimation.swiftmodule" \
  -c $(find Sources/PoseEstimation -name '*.swift') -o "$OUT/PoseEstimation.o"
CAPTURE_OBJECTS="$OUT/LinuxSystem.o $OUT/InferenceCore.o $OUT/Capture.o $OUT/PoseEstimation.o"

# The Y4M and MJPEG file sources (header parsing, frame walk, conversion and JPEG decoding); the
# system libraries are linked as they are (libjpeg is not instrumented: ASan sees what posewatch
# hands it, not libjpeg's insides).
swiftc $FLAGS -module-name FuzzClips -I "$OUT" $CAPTURE_MODULES Tests/Fuzz/ClipFuzz.swift $CAPTURE_OBJECTS \
  $CAPTURE_LIBRARIES -o "$OUT/fuzz-clips"
echo "built $OUT/fuzz-clips"

# replay's keypoint-file path: the Appliance sources it uses, compiled into the target itself.
swiftc $FLAGS -module-name FuzzKeypoints -I "$OUT" $CAPTURE_MODULES Tests/Fuzz/KeypointFuzz.swift \
  Sources/Appliance/Replay/KeypointFile.swift Sources/Appliance/Inputs/FrameInput.swift $CAPTURE_OBJECTS \
  $CAPTURE_LIBRARIES -o "$OUT/fuzz-keypoints"
echo "built $OUT/fuzz-keypoints"

# The config file (TOML subset and the key-by-key reader): the Appliance files that need only
# LinuxSystem and Outputs (Configuration.swift says so at its top) are compiled into the target
# itself; the whole Appliance module would pull in ArgumentParser, the camera and the models.
c_module CGPIOD -O2
c_module CLinuxShims -O2
OUTPUT_MODULES="$C_MODULES -I $OUT/CGPIOD -I $OUT/CLinuxShims -I Sources/CLibGPIOD"
swiftc $FLAGS -module-name Outputs -I "$OUT" $OUTPUT_MODULES -wmo -emit-module -emit-module-path "$OUT/Outputs.swiftmodule" \
  -c $(find Sources/Outputs -name '*.swift') -o "$OUT/Outputs.o"
CONFIG_SOURCES="Sources/Appliance/Configuration.swift Sources/Appliance/ConfigurationFile.swift
  Sources/Appliance/ConfigurationTOML.swift Sources/Appliance/ConfigurationMessages.swift"
swiftc $FLAGS -module-name FuzzConfig -I "$OUT" $OUTPUT_MODULES Tests/Fuzz/ConfigFuzz.swift $CONFIG_SOURCES \
  "$OUT/LinuxSystem.o" "$OUT/Outputs.o" "$OUT/libCGPIOD.a" "$OUT/libCLinuxShims.a" $C_LIBRARIES \
  $(pkg-config --libs libgpiod) -o "$OUT/fuzz-config"
echo "built $OUT/fuzz-config"

#!/bin/sh
# Builds the libFuzzer targets with swiftc (SwiftPM has no fuzzer product type). The modules a
# target needs are compiled from Sources/ into objects with the fuzzer and AddressSanitizer
# instrumentation, optimised (-O: what ships, and what CI runs for a fixed time), then linked with
# the target's harness:
#
#   fuzz-loader  LoaderFuzz.swift  TFLite loader, Prepare, Eval   LinuxSystem, InferenceCore
#   fuzz-numpy   NumPyFuzz.swift   .npy parser                    LinuxSystem, InferenceCore
#   fuzz-config  ConfigFuzz.swift  config file (TOML subset and   LinuxSystem, Outputs, and the
#                                  the key-by-key reader)         config files of Appliance
#
# fuzz-config does not build the Appliance module: it pulls in ArgumentParser, the camera and the
# models. The config code is kept to files that need only LinuxSystem and Outputs (CONFIG_SOURCES
# below; Configuration.swift says so at its top), and those files are compiled into the harness
# itself, so the target runs the very code `posewatch run` and SIGHUP use.
#
# C targets get a module map written here (SwiftPM generates its own) and are compiled with
# clang's matching -fsanitize=fuzzer-no-link,address.
#
# Usage: Tests/Fuzz/build.sh [OUTPUT_DIR [TARGET...]]
#        (from the package root; OUTPUT_DIR defaults to .build-fuzz, TARGET to all three:
#        loader numpy config)
set -eu
OUT=${1:-.build-fuzz}
[ $# -gt 0 ] && shift
TARGETS=${*:-loader numpy config}
mkdir -p "$OUT"
ROOT=$(pwd)
# lld: gold warns about every AddressSanitizer thunk (harmless, but 140 lines of noise).
FLAGS="-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -use-ld=lld"
CFLAGS="-fsanitize=fuzzer-no-link,address -O2 -g"
CONFIG_SOURCES="Sources/Appliance/Configuration.swift Sources/Appliance/ConfigurationFile.swift
  Sources/Appliance/ConfigurationTOML.swift Sources/Appliance/ConfigurationMessages.swift"

BUILT=" "
# once NAME: true the first time NAME is asked for in this run (objects are always rebuilt from the
# current Sources, never reused from an earlier run).
once() { case $BUILT in *" $1 "*) return 1 ;; esac; BUILT="$BUILT$1 "; }

# c_module NAME: Sources/NAME/*.c → $OUT/NAME.o, and a module map for its include/ header.
c_module() {
  once "$1" || return 0
  mkdir -p "$OUT/modules/$1" "$OUT/$1-objects"
  header=$(ls "$ROOT/Sources/$1/include/"*.h)
  printf 'module %s {\n    header "%s"\n    export *\n}\n' "$1" "$header" > "$OUT/modules/$1/module.modulemap"
  for source in Sources/"$1"/*.c; do
    clang $CFLAGS -I "Sources/$1/include" -c "$source" -o "$OUT/$1-objects/$(basename "$source" .c).o"
  done
  ld -r "$OUT/$1-objects/"*.o -o "$OUT/$1.o"
}

# swift_module NAME FILES...: one whole-module object and its .swiftmodule.
swift_module() {
  name=$1; shift
  once "$name" || return 0
  swiftc $FLAGS -module-name "$name" $INCLUDES -wmo -emit-module -emit-module-path "$OUT/$name.swiftmodule" \
    -c "$@" -o "$OUT/$name.o"
}

INCLUDES="-I $OUT -I $OUT/modules/CLinuxSystem -I $OUT/modules/CKernels -I $OUT/modules/CGPIOD -I $OUT/modules/CLinuxShims"
for target in $TARGETS; do
  case $target in
    loader|numpy)
      c_module CLinuxSystem
      swift_module LinuxSystem Sources/LinuxSystem/*.swift
      c_module CKernels
      swift_module InferenceCore $(find Sources/InferenceCore -name '*.swift')
      harness=$([ "$target" = loader ] && echo LoaderFuzz || echo NumPyFuzz)
      swiftc $FLAGS -module-name "Fuzz$target" $INCLUDES "Tests/Fuzz/$harness.swift" \
        "$OUT/CLinuxSystem.o" "$OUT/LinuxSystem.o" "$OUT/CKernels.o" "$OUT/InferenceCore.o" -lm -o "$OUT/fuzz-$target"
      ;;
    config)
      c_module CLinuxSystem
      swift_module LinuxSystem Sources/LinuxSystem/*.swift
      c_module CGPIOD
      c_module CLinuxShims
      swift_module Outputs $(find Sources/Outputs -name '*.swift')
      # shellcheck disable=SC2086 # CONFIG_SOURCES is a list of paths without spaces
      swiftc $FLAGS -module-name FuzzConfig $INCLUDES Tests/Fuzz/ConfigFuzz.swift $CONFIG_SOURCES \
        "$OUT/CLinuxSystem.o" "$OUT/LinuxSystem.o" "$OUT/CGPIOD.o" "$OUT/CLinuxShims.o" "$OUT/Outputs.o" \
        $(pkg-config --libs libgpiod) -o "$OUT/fuzz-config"
      ;;
    *) echo "unknown fuzz target $target (loader, numpy, config)" >&2; exit 2 ;;
  esac
  echo "built $OUT/fuzz-$target"
done

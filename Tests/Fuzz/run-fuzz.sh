#!/bin/sh
# Builds the libFuzzer targets (Tests/Fuzz/build.sh: -O, fuzzer + AddressSanitizer) and runs each
# named target for a fixed time; exits non-zero if any target crashed, hit a sanitizer report,
# timed out on one input or ran out of memory. For CI and for a quick local check.
#
# Usage: Tests/Fuzz/run-fuzz.sh SECONDS_PER_TARGET [TARGET...]   (from the package root)
#   TARGET  the name after "fuzz-" of a binary build.sh makes (loader, numpy, keypoints, ...);
#           none: every fuzz-* binary in the build directory.
#   Seeds:  Tests/Fuzz/seeds-TARGET, or the directory listed in seed_directory below.
# Environment: FUZZ_BUILD_DIR (default .build-fuzz), FUZZ_NO_BUILD=1 to skip building,
#   FUZZ_TIMEOUT seconds per input (default 10), FUZZ_RSS_LIMIT_MB (default 2048),
#   FUZZ_WORK_DIR for the growing corpora (default fuzz-corpus-work), FUZZ_ARTIFACTS_DIR for
#   crashing inputs (default fuzz-artifacts). The seed directories in the tree are only read.
set -eu
if [ $# -lt 1 ]; then
  echo "usage: $0 SECONDS_PER_TARGET [TARGET...]" >&2
  exit 2
fi
SECONDS_PER_TARGET=$1; shift
case $SECONDS_PER_TARGET in
  ''|*[!0-9]*) echo "$0: SECONDS_PER_TARGET must be a whole number of seconds, not '$SECONDS_PER_TARGET'" >&2; exit 2 ;;
esac
OUT=${FUZZ_BUILD_DIR:-.build-fuzz}
WORK=${FUZZ_WORK_DIR:-fuzz-corpus-work}
ARTIFACTS=${FUZZ_ARTIFACTS_DIR:-fuzz-artifacts}
TIMEOUT=${FUZZ_TIMEOUT:-10}
RSS_LIMIT_MB=${FUZZ_RSS_LIMIT_MB:-2048}

# Targets whose seeds are not in Tests/Fuzz/seeds-TARGET.
seed_directory() {
  case $1 in
    loader) echo Tests/Fuzz/seeds ;;
    numpy|keypoints) echo Tests/Fuzz/seeds-npy ;;
    *) echo "Tests/Fuzz/seeds-$1" ;;
  esac
}

# Per-target libFuzzer options: model-invoke's inputs are lists of 4-byte edits to a real model
# (a whole MoveNet invoke per input), so they are short and may use their full length at once.
target_options() {
  case $1 in
    model-invoke) echo "-max_len=64 -len_control=0" ;;
    # Lists of 4-byte flips of a real model: a few flips per file, as the swift test does one.
    model-bit-flips) echo "-max_len=32" ;;
    # A config reload runs between two frames and the largest allowed file parses in well under a
    # millisecond: a second on one input means something far worse than linear. Inputs starting
    # with 0xFF are repeated up to 64 KiB by the harness, so 8 KiB inputs reach the largest files.
    config) echo "-dict=Tests/Fuzz/config.dict -timeout=1 -rss_limit_mb=512 -max_len=8192" ;;
    *) echo "" ;;
  esac
}

if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  mkdir -p "$OUT"
  sh Tests/Fuzz/build.sh "$OUT" >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log" >&2; echo "$0: build failed" >&2; exit 1; }
fi
if [ $# -eq 0 ]; then
  set -- $(for binary in "$OUT"/fuzz-*; do [ -x "$binary" ] && basename "$binary" | sed 's/^fuzz-//'; done)
fi

mkdir -p "$WORK" "$ARTIFACTS"
failed=0
for target in "$@"; do
  binary="$OUT/fuzz-$target"
  seeds=$(seed_directory "$target")
  if [ ! -x "$binary" ] || [ ! -d "$seeds" ]; then
    echo "$target: no $binary or no seed directory $seeds" >&2
    failed=1
    continue
  fi
  # New inputs go to a work corpus (the first directory); the seeds in the tree stay as they are.
  mkdir -p "$WORK/$target"
  log="$WORK/$target.log"
  status=0
  "$binary" "$WORK/$target" "$seeds" -max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" \
    -rss_limit_mb="$RSS_LIMIT_MB" -artifact_prefix="$ARTIFACTS/$target-" -print_final_stats=1 $(target_options "$target") >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  corpus=$(ls "$WORK/$target" | wc -l)
  if [ "$status" -eq 0 ]; then
    echo "$target: ${runs:-?} runs in ${SECONDS_PER_TARGET} s, corpus $corpus files, no crash, no timeout"
  else
    failed=1
    echo "$target: FAILED (exit $status) after ${runs:-?} runs; input saved under $ARTIFACTS/$target-*; log $log:" >&2
    grep -E 'ERROR|SUMMARY|Fatal error|timeout|out-of-memory|deadly signal' "$log" | head -n 5 >&2 || true
  fi
done
exit $failed

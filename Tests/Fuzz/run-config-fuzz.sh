#!/bin/sh
# Fuzzes the config parser for a fixed time, as CI does: builds fuzz-config (-O, libFuzzer and
# AddressSanitizer; see build.sh), then runs it from Tests/Fuzz/seeds-config for DURATION seconds.
#
# Fails (non-zero exit, the input saved as OUTPUT_DIR/config-crash-… or -timeout-…/-oom-…) when an
# input traps, touches memory it should not, takes more than 1 s (-timeout; a SIGHUP reload runs
# between two frames, and the largest allowed file parses in well under a millisecond, so a second
# means something is far worse than linear) or needs more than 512 MB (-rss_limit_mb).
# The corpus grows in a scratch directory; Tests/Fuzz/seeds-config is not modified.
#
# Usage: Tests/Fuzz/run-config-fuzz.sh [DURATION [OUTPUT_DIR]]   (from the package root;
#        DURATION defaults to 60 seconds, OUTPUT_DIR to .build-fuzz)
set -eu
DURATION=${1:-60}
OUT=${2:-.build-fuzz}
case $DURATION in '' | *[!0-9]*) echo "DURATION must be a whole number of seconds, not '$DURATION'" >&2; exit 2 ;; esac
Tests/Fuzz/build.sh "$OUT" config
CORPUS=$(mktemp -d "${TMPDIR:-/tmp}/posewatch-config-corpus.XXXXXX")
trap 'rm -rf "$CORPUS"' EXIT INT TERM
cp Tests/Fuzz/seeds-config/* "$CORPUS/"
# -max_len 8192: a real config is about 3 KB; larger files come from the 0xFF patterns (ConfigFuzz.swift).
"$OUT/fuzz-config" "$CORPUS" -dict=Tests/Fuzz/config.dict -max_total_time="$DURATION" -timeout=1 \
  -rss_limit_mb=512 -max_len=8192 -print_final_stats=1 -artifact_prefix="$OUT/config-"

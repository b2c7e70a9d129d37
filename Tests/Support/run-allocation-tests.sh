#!/usr/bin/env bash
# Runs the allocation-counting tests (their names contain "Allocat") with the malloc-counting preload
# library, directly on the test binary so that the build tools are not counted, one test at a time
# (the counter is process-wide).
set -euo pipefail
cd "$(dirname "$0")/../.."
library=$(mktemp -d)/libpw-malloc-count.so
cc -shared -fPIC -O2 -o "$library" Tests/Support/malloc-count-preload.c
swift build --build-tests ${SWIFT_BUILD_FLAGS:-} >/dev/null
binary=$(swift build --show-bin-path ${SWIFT_BUILD_FLAGS:-})/posewatchPackageTests.xctest
LD_PRELOAD="$library" "$binary" --testing-library swift-testing --no-parallel --filter "${1:-Allocat}"

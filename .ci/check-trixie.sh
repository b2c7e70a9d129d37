#!/usr/bin/env bash
# check-trixie.sh: build and test posewatch the way a Raspberry Pi owner on Debian 13 would.
#
# Inside a Debian 13 ("trixie") root made with debootstrap from Debian's archive, with Debian's
# own `swiftlang` (Swift 6.0.3, the oldest toolchain we support), libgpiod v2, libv4l and
# pkg-config, it runs `swift build`, `swift test` and `posewatch doctor` on a clean copy of the
# checkout this script lives in. Exit status 0 and a "PASS" line when all of that succeeds.
#
# The tests run in a **release** build (`-c release -Xswiftc -enable-testing`) by default: the .deb
# is a release build, and Swift 6.0.3's optimiser has broken code that debug builds and newer
# toolchains run correctly (it skipped the deinit of generic ~Copyable owners: a lost camera was
# never closed, see Tests/System/README.md). The camera tests catch that only when optimised.
#
# Usage (as root; debootstrap, chroot and mounts need it):
#   .ci/check-trixie.sh                 # amd64 root, native speed
#   .ci/check-trixie.sh --arch arm64    # arm64 root under qemu-user (what .ci/check-arm64.sh runs)
#   .ci/check-trixie.sh --rebuild-root  # throw the cached root away and debootstrap again
#   .ci/check-trixie.sh --source DIR    # check another checkout (default: the one holding this script)
#   .ci/check-trixie.sh --incremental   # keep the previous run's .build (faster; default builds clean)
#   .ci/check-trixie.sh --configuration debug   # test a debug build instead (quicker to compile
#                                       # under emulation; misses optimiser bugs)
#   .ci/check-trixie.sh --root-only     # make (or top up) the cached root and stop: no copy, no build
#                                       # (Tests/Benchmarks/arm64_instructions.sh uses the root)
#   .ci/check-trixie.sh --deb           # after the checks, build the release .deb in the root
#                                       # (deploy/build-deb.sh <arch>, natively for the root's
#                                       # architecture) and copy it to $POSEWATCH_CI_CACHE/deb-<arch>/
#
# Environment:
#   POSEWATCH_CI_CACHE  where roots and logs live (default /var/cache/posewatch-ci; never the repo)
#   DEBIAN_MIRROR       Debian archive (default http://deb.debian.org/debian, as in /etc/apt)
#   SWIFT_PACKAGES      local mirror of GitHub package repositories (default /opt/swift-packages)
#
# The root is cached as $POSEWATCH_CI_CACHE/trixie-<arch> and reused on later runs (only the
# source copy and the build are redone), so re-runs cost a build and a test run.
set -euo pipefail

ARCH=amd64
REBUILD_ROOT=0
CONFIGURATION=release
SOURCE=
INCREMENTAL=0
DEB=0
ROOT_ONLY=0
while [ $# -gt 0 ]; do
  case $1 in
    --arch) ARCH=${2:?--arch needs amd64 or arm64}; shift 2 ;;
    --arch=*) ARCH=${1#--arch=}; shift ;;
    --rebuild-root) REBUILD_ROOT=1; shift ;;
    --source) SOURCE=${2:?--source needs a directory}; shift 2 ;;
    --incremental) INCREMENTAL=1; shift ;;
    --deb) DEB=1; shift ;;
    --root-only) ROOT_ONLY=1; shift ;;
    --configuration) CONFIGURATION=${2:?--configuration needs release or debug}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-trixie: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case $ARCH in amd64|arm64) ;; *) echo "check-trixie: --arch must be amd64 or arm64" >&2; exit 2 ;; esac
case $CONFIGURATION in
  release) SWIFT_FLAGS="-c release -Xswiftc -enable-testing" ;;
  debug) SWIFT_FLAGS="-c debug" ;;
  *) echo "check-trixie: --configuration must be release or debug" >&2; exit 2 ;;
esac

SUITE=trixie
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${POSEWATCH_CI_CACHE:-/var/cache/posewatch-ci}
SWIFT_PACKAGES=${SWIFT_PACKAGES:-/opt/swift-packages}
ROOT=$CACHE/$SUITE-$ARCH
LOGDIR=$CACHE/logs
LOG=$LOGDIR/check-$SUITE-$ARCH-$(date -u +%Y%m%dT%H%M%SZ).log
REPO=$(cd "${SOURCE:-$(dirname "$0")/..}" && pwd)
# What the build needs from Debian. git: SwiftPM clones dependencies with it.
# libstdc++-14-dev: `--static-swift-stdlib` (deploy/build-deb.sh, --deb) links -lstdc++, which
# swiftlang alone does not bring. (readelf and strip come with swiftlang through binutils.)
PACKAGES="swiftlang libgpiod-dev libv4l-dev libjpeg-dev libstdc++-14-dev pkg-config git ca-certificates"
TAG="check-$SUITE[$ARCH]"
T0=$(date +%s)

say() { printf '[%5ss] %s: %s\n' "$(( $(date +%s) - T0 ))" "$TAG" "$*"; }
fail() {
  say "$*"
  [ -f "$LOG" ] && { echo "----- last 40 lines of $LOG"; tail -n 40 "$LOG"; }
  echo "$TAG: FAIL after $(( $(date +%s) - T0 ))s: $*"
  exit 1
}

[ "$(id -u)" = 0 ] || { echo "$TAG: run as root (debootstrap, chroot and mounts need it)" >&2; exit 2; }
mkdir -p "$CACHE" "$LOGDIR"
: > "$LOG"

# One run per root at a time: two runs sharing a root would overwrite each other's source copy.
exec 9> "$CACHE/$SUITE-$ARCH.lock"
flock -n 9 || { say "another run holds $CACHE/$SUITE-$ARCH.lock; waiting for it"; flock 9; }
# Keep the newest 30 logs; each run writes one (plus its doctor output).
{ ls -1t "$LOGDIR"/check-*.log 2>/dev/null || true; } | tail -n +31 | while read -r old; do rm -f "$old" "$old.doctor"; done

# --- host tools --------------------------------------------------------------------------
# debootstrap builds the root; qemu-user-static runs arm64 binaries on an x86-64 host.
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)
if [ "$ARCH" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then
  command -v qemu-aarch64-static >/dev/null || need+=(qemu-user-static)
fi
if [ ${#need[@]} -gt 0 ]; then
  say "installing host tools: ${need[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"; } >> "$LOG" 2>&1 \
    || fail "could not install ${need[*]}"
fi

# --- arm64 on x86-64: binfmt_misc ---------------------------------------------------------
# Every arm64 program in the root (apt's, dpkg's maintainer scripts, swift, the test binary, and
# every program those start) has to go through qemu. Only the kernel's binfmt_misc can do that for
# programs started by other programs, so we register Debian's qemu-aarch64 entry. Its "F" flag
# makes the kernel open the (static) interpreter now, so it works inside the chroot without
# copying qemu into the root. The registration is global and harmless; it is left in place.
if [ "$ARCH" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then
  BINFMT=/proc/sys/fs/binfmt_misc
  if [ ! -e $BINFMT/register ]; then
    mount -t binfmt_misc binfmt_misc $BINFMT 2>> "$LOG" \
      || fail "cannot mount binfmt_misc: arm64 emulation needs it (see .ci/check-arm64.sh)"
  fi
  if [ ! -e $BINFMT/qemu-aarch64 ]; then
    conf=/usr/lib/binfmt.d/qemu-aarch64.conf   # shipped by qemu-user-static
    [ -r $conf ] || fail "$conf missing (qemu-user-static not installed?)"
    grep -v '^#' $conf > $BINFMT/register || fail "cannot register qemu-aarch64 with binfmt_misc"
  fi
  grep -qx enabled $BINFMT/qemu-aarch64 || echo 1 > $BINFMT/qemu-aarch64
  say "binfmt_misc: $(sed -n 's/^interpreter //p' $BINFMT/qemu-aarch64) ($(qemu-aarch64-static --version | head -1))"
fi

# --- running commands in the root ----------------------------------------------------------
# in_root CMD...: runs CMD in the root, in fresh mount and PID namespaces. /proc, /sys, /dev and
# the Swift package mirror (read-only) are mounted there only; a trap unmounts them, and since the
# mount namespace dies with its last process, nothing can stay mounted on the host even when this
# script is killed. The PID namespace makes sure no process of the build outlives the run.
in_root() {
  unshare --mount --pid --fork --propagation private -- bash -c '
    set -euo pipefail
    R=$1 PKGS=$2; shift 2
    cleanup() { for m in opt/swift-packages dev sys proc; do
                  mountpoint -q "$R/$m" && umount -R -l "$R/$m"; done; true; }
    trap cleanup EXIT
    mount -t proc proc "$R/proc"
    mount --rbind /sys "$R/sys"; mount --make-rslave "$R/sys"
    mount --rbind /dev "$R/dev"; mount --make-rslave "$R/dev"
    mkdir -p "$R/opt/swift-packages"
    mount --bind "$PKGS" "$R/opt/swift-packages"
    mount -o remount,bind,ro "$R/opt/swift-packages"
    cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true   # apt needs DNS
    # A clean environment: nothing from the host toolchain (/opt/swift on PATH) leaks in.
    chroot "$R" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
  ' in_root "$ROOT" "$SWIFT_PACKAGES" "$@"
}

# --- the root: made once, then reused -------------------------------------------------------
STAMP=.posewatch-ci-root   # written last: a root without it is incomplete and gets rebuilt
if [ "$REBUILD_ROOT" = 1 ] || [ ! -f "$ROOT/$STAMP" ]; then
  # Build into $ROOT.new and rename at the end, so an interrupted debootstrap never leaves a
  # half-made root that a later run would trust. No mounts ever live on the host (debootstrap and
  # in_root run in their own mount namespaces), so rm -rf cannot reach into /proc, /dev or /sys.
  rm -rf "$ROOT.new"
  say "debootstrap $SUITE $ARCH from $MIRROR into $ROOT.new (log: $LOG)"
  # In its own mount namespace, so the /proc and /sys debootstrap mounts in the target vanish
  # with it even if it is killed half-way.
  unshare --mount --propagation private -- \
    debootstrap --variant=minbase --arch="$ARCH" --include=ca-certificates \
    --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
    "$SUITE" "$ROOT.new" "$MIRROR" >> "$LOG" 2>&1 || fail "debootstrap failed"
  # Keep daemons in packages from starting inside the chroot.
  printf '#!/bin/sh\nexit 101\n' > "$ROOT.new/usr/sbin/policy-rc.d"; chmod +x "$ROOT.new/usr/sbin/policy-rc.d"
  rm -rf "$ROOT"; mv "$ROOT.new" "$ROOT"
  say "debootstrap done ($(du -sh "$ROOT" | cut -f1))"
fi
# Install (or top up) the build dependencies; skipped when the root already has this exact list.
# The root is not upgraded between runs (runs stay comparable); --rebuild-root takes today's trixie.
if [ "$(cat "$ROOT/$STAMP" 2>/dev/null)" != "$PACKAGES" ]; then
  say "apt-get install $PACKAGES"
  in_root sh -c "apt-get update -qq && apt-get install -y -q --no-install-recommends $PACKAGES && apt-get clean" \
    >> "$LOG" 2>&1 || fail "apt-get install in the $SUITE root failed"
  # SwiftPM fetches https://github.com/... dependencies; point git at the local mirror instead,
  # exactly as this machine's /etc/gitconfig does.
  in_root sh -c "git config --system url./opt/swift-packages/.insteadOf https://github.com/ &&
                 git config --system safe.directory '*'" >> "$LOG" 2>&1 \
    || fail "git config in the root failed"
  echo "$PACKAGES" > "$ROOT/$STAMP"
fi
if [ "$ROOT_ONLY" = 1 ]; then
  echo "$TAG: root ready at $ROOT in $(( $(date +%s) - T0 ))s - log $LOG"
  exit 0
fi

# --- a clean copy of the checkout -----------------------------------------------------------
# Tracked and new (not ignored) files, as they are in the work tree, uncommitted edits included;
# no .build, no Package.resolved, no .git. Copied fresh every run, so every run builds from scratch,
# unless --incremental keeps the last run's .build (tar keeps mtimes, so SwiftPM rebuilds only what
# changed; worth it under emulation, where a clean arm64 build takes ~20 minutes).
SRC=/src/posewatch
rm -rf "$ROOT/src/.build-kept"
[ "$INCREMENTAL" = 1 ] && [ -d "$ROOT$SRC/.build" ] && mv "$ROOT$SRC/.build" "$ROOT/src/.build-kept"
rm -rf "$ROOT$SRC"; mkdir -p "$ROOT$SRC"
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$REPO" ls-files -z -co --exclude-standard \
    | tar -C "$REPO" --null -T - --ignore-failed-read -cf - 2>> "$LOG" | tar -C "$ROOT$SRC" -xf -
else
  tar -C "$REPO" --exclude='./.build*' --exclude=./.swiftpm --exclude=./.git --exclude=./Package.resolved -cf - . \
    | tar -C "$ROOT$SRC" -xf -
fi
rm -f "$ROOT$SRC/Package.resolved"
[ -d "$ROOT/src/.build-kept" ] && mv "$ROOT/src/.build-kept" "$ROOT$SRC/.build"
say "source: $REPO ($(git -C "$REPO" describe --always --dirty 2>/dev/null || echo 'not a git checkout')) -> $ROOT$SRC$([ -d "$ROOT$SRC/.build" ] && echo ', keeping .build')"

# --- build, test, doctor --------------------------------------------------------------------
SWIFT_VERSION=$(in_root swift --version 2>&1 | grep -m1 -o 'Swift version [^ ]*' || true)
GPIOD_VERSION=$(in_root pkg-config --modversion libgpiod 2>/dev/null || true)
say "toolchain: ${SWIFT_VERSION:-swift not found}; libgpiod $GPIOD_VERSION; libv4l2 $(in_root pkg-config --modversion libv4l2 2>/dev/null || true)"
[ -n "$SWIFT_VERSION" ] || fail "no swift in the root"

# Everything (products and test targets) is compiled once, in `swift build --build-tests`; `swift
# test --skip-build` then only runs. A plain `swift build` first would compile every module twice
# (without and with testability), which costs minutes under emulation.
B0=$(date +%s)
say "swift build --build-tests $SWIFT_FLAGS"
in_root sh -c "cd $SRC && swift build --build-tests $SWIFT_FLAGS" >> "$LOG" 2>&1 || fail "swift build failed"
BUILD_S=$(( $(date +%s) - B0 ))
say "swift build ok (${BUILD_S}s)"

B0=$(date +%s)
say "swift test --skip-build $SWIFT_FLAGS"
set +e
in_root sh -c "cd $SRC && swift test --skip-build $SWIFT_FLAGS" 2>&1 | tee -a "$LOG" | grep -E --line-buffered \
  'Test run|Executed [0-9]+ test|error:|✘|Fatal error'
TEST_RC=${PIPESTATUS[0]}
set -e
TEST_S=$(( $(date +%s) - B0 ))
[ "$TEST_RC" = 0 ] || fail "swift test failed (exit $TEST_RC, ${TEST_S}s)"
# The swift-testing summary, plus XCTest's when there are XCTest tests at all.
SUMMARY=$( { grep -E 'Test run with [0-9]+ tests?' "$LOG" | tail -n 1 || true
             grep -E 'Executed [1-9][0-9]* tests?' "$LOG" | tail -n 1 || true; } | sed 's/^[[:space:]]*//' | paste -sd ';' -)
say "swift test ok (${TEST_S}s)"

# posewatch doctor for real: there is no camera or GPIO chip in the root, so it must say so and
# exit 1 (its documented "an item failed" status), not crash. Its header names the libgpiod
# backend compiled in, which proves the shim took the header's v1/v2 path we expect here.
set +e
in_root sh -c "cd $SRC && .build/$CONFIGURATION/posewatch doctor" > "$LOG.doctor" 2>&1
DOCTOR_RC=$?
set -e
cat "$LOG.doctor" >> "$LOG"
sed 's/^/    doctor| /' "$LOG.doctor"
case $DOCTOR_RC in 0|1) ;; *) fail "posewatch doctor exited $DOCTOR_RC (expected 0 or 1)" ;; esac
GPIOD_MAJOR=${GPIOD_VERSION%%.*}
grep -q "libgpiod v$GPIOD_MAJOR " "$LOG.doctor" \
  || fail "doctor does not report the libgpiod v$GPIOD_MAJOR backend (pkg-config says $GPIOD_VERSION)"
BACKEND=$(grep -m1 -o "libgpiod v[12] [0-9.]*" "$LOG.doctor")

# The package an owner of this architecture installs: built inside the root, where
# `dpkg --print-architecture` is the root's, so build-deb.sh compiles the release binary itself
# (static Swift runtime) against the root's libraries (Debian 13: libgpiod v2 → Depends libgpiod3).
DEB_NOTE=""
if [ "$DEB" = 1 ]; then
  D0=$(date +%s)
  say "deploy/build-deb.sh $ARCH (release build in the root)"
  in_root sh -c "cd $SRC && deploy/build-deb.sh $ARCH --output $SRC/.build/deb" >> "$LOG" 2>&1 \
    || fail "deploy/build-deb.sh $ARCH failed"
  mkdir -p "$CACHE/deb-$ARCH"
  PACKAGE=$(ls -t "$ROOT$SRC"/.build/deb/posewatch_*_"$ARCH".deb | head -n 1)
  cp "$PACKAGE" "$CACHE/deb-$ARCH/"
  DEB_NOTE=" - package $CACHE/deb-$ARCH/$(basename "$PACKAGE") ($(( $(date +%s) - D0 ))s)"
  say "package: $CACHE/deb-$ARCH/$(basename "$PACKAGE")"
fi

echo "$TAG: PASS in $(( $(date +%s) - T0 ))s ($CONFIGURATION build ${BUILD_S}s, test ${TEST_S}s) - $SWIFT_VERSION, $BACKEND, doctor exit $DOCTOR_RC - ${SUMMARY:-no test summary line}$DEB_NOTE - log $LOG"

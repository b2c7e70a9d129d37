#!/usr/bin/env bash
# check-arm64.sh: posewatch's test suite on aarch64, under emulation, on an x86-64 machine.
#
# Same check as .ci/check-trixie.sh (debootstrap'd Debian 13 root, Debian's swiftlang 6.0.3,
# libgpiod v2, `swift build`, `swift test`, `posewatch doctor`), but the root is arm64
# (`debootstrap --arch=arm64`) and every program in it, the Swift compiler included, runs under
# qemu-user (Debian's qemu-user-static) through binfmt_misc. Software emulation: expect the
# build and tests to be 10-30x slower than native; the PASS line reports the wall time.
#
# How emulation is wired up (done by check-trixie.sh --arch arm64):
#   - qemu-user-static is installed from Debian if missing;
#   - binfmt_misc is mounted at /proc/sys/fs/binfmt_misc if it is not, and Debian's
#     /usr/lib/binfmt.d/qemu-aarch64.conf entry is registered (flags OPF: "F" makes the kernel
#     open the static qemu at registration, so it works inside the chroot with no qemu copied in).
#     Running one program with an explicit `qemu-aarch64-static` is not enough: swift, clang, ld,
#     git and dpkg's scripts start further arm64 programs, and only binfmt_misc catches those.
#   - on an aarch64 host no emulation is used at all.
#
# Usage (as root):  .ci/check-arm64.sh [--rebuild-root] [--source DIR]
# Root cache: ${POSEWATCH_CI_CACHE:-/var/cache/posewatch-ci}/trixie-arm64 (made on first run).
set -euo pipefail
exec "$(dirname "$0")/check-trixie.sh" --arch arm64 "$@"

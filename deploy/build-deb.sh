#!/usr/bin/env bash
# Builds posewatch_<version>_<arch>.deb: binary, systemd unit, udev rules, default config, the
# libcamerify drop-in and journal-upload example, and a postinst that installs the pose model.
#
#   deploy/build-deb.sh amd64                      build the release binary here and package it
#   deploy/build-deb.sh arm64 --binary PATH        package a binary built elsewhere (e.g. in the
#                                                  emulated arm64 root: swift build -c release
#                                                  --static-swift-stdlib)
# Options: --binary PATH, --classifier PATH (the action classifier .tflite to ship),
#          --output DIR (default .build/deb), --version-suffix TEXT.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

arch=${1:?usage: build-deb.sh amd64|arm64 [--binary PATH] [--classifier PATH] [--output DIR]}
shift
binary="" classifier="" output="$repo/.build/deb" suffix=""
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary=$2; shift 2 ;;
        --classifier) classifier=$2; shift 2 ;;
        --output) output=$2; shift 2 ;;
        --version-suffix) suffix=$2; shift 2 ;;
        *) echo "build-deb.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
case "$arch" in
    amd64) machine="X86-64" ;;
    arm64) machine="AArch64" ;;
    *) echo "build-deb.sh: architecture must be amd64 or arm64, not $arch" >&2; exit 2 ;;
esac

if [ -z "$binary" ]; then
    host=$(dpkg --print-architecture)
    if [ "$host" != "$arch" ]; then
        echo "build-deb.sh: this machine is $host; build the $arch binary on an $arch system (or its emulated root) and pass --binary" >&2
        exit 2
    fi
    # The Swift runtime is linked statically so the package runs on boards without a Swift toolchain.
    (cd "$repo" && swift build -c release --product posewatch --static-swift-stdlib)
    binary=$(cd "$repo" && swift build -c release --show-bin-path)/posewatch
fi
[ -x "$binary" ] || { echo "build-deb.sh: no executable at $binary" >&2; exit 1; }
readelf -h "$binary" | grep -q "Machine:.*$machine" || {
    echo "build-deb.sh: $binary is not an $arch ($machine) executable" >&2; exit 1; }

# A read-write-execute segment cannot be exec'd under the unit's MemoryDenyWriteExecute=yes where the
# kernel enforces it (PR_SET_MDWE: Debian 13, current Raspberry Pi OS); Package.swift links with
# -z separate-code so there is none.
if readelf -lW "$binary" | awk '$1 == "LOAD" && $7 ~ /W/ && $7 ~ /E/ { found = 1 } END { exit !found }'; then
    echo "build-deb.sh: $binary has a read-write-execute LOAD segment; the service could not start under MemoryDenyWriteExecute=yes (link with -z separate-code, as Package.swift does)" >&2
    exit 1
fi

version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' "$repo/Sources/Appliance/PosewatchCommand.swift")$suffix

# Depends from the libraries the binary links, so a libgpiod v1 build asks for libgpiod2 and a v2
# build for libgpiod3. An unknown library stops the build rather than shipping wrong dependencies.
depends=()
for soname in $(readelf -d "$binary" | sed -n 's/.*Shared library: \[\(.*\)\].*/\1/p'); do
    case "$soname" in
        libc.so.6|libm.so.6|libdl.so.2|libpthread.so.0|librt.so.1|libutil.so.1|ld-linux*) package="libc6 (>= 2.36)" ;;
        libstdc++.so.6) package=libstdc++6 ;;
        libgcc_s.so.1) package=libgcc-s1 ;;
        libv4l2.so.0) package=libv4l-0 ;;
        libv4lconvert.so.0) package=libv4lconvert0 ;;
        libgpiod.so.2) package=libgpiod2 ;;
        libgpiod.so.3) package=libgpiod3 ;;
        libz.so.1) package=zlib1g ;;
        libjpeg.so.62) package=libjpeg62-turbo ;;   # Capture's MJPEG decoding (CLibJPEG)
        *) echo "build-deb.sh: $binary links $soname, which this script does not know the package of" >&2; exit 1 ;;
    esac
    [[ " ${depends[*]-} " == *" $package,"* || " ${depends[*]-} " == *" $package "* ]] || depends+=("$package,")
done
depends_line=$(echo "${depends[*]}" | sed 's/,$//')

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/posewatch_${version}_$arch
install -D -m 755 "$binary" "$root/usr/bin/posewatch"
strip --strip-unneeded "$root/usr/bin/posewatch" 2>/dev/null || true
install -D -m 644 "$here/posewatch.service" "$root/usr/lib/systemd/system/posewatch.service"
install -D -m 644 "$repo/udev/60-posewatch.rules" "$root/usr/lib/udev/rules.d/60-posewatch.rules"
install -D -m 644 "$here/posewatch.toml" "$root/etc/posewatch/posewatch.toml"
install -D -m 755 "$here/install-model" "$root/usr/lib/posewatch/install-model"
install -D -m 644 "$here/posewatch-libcamerify.conf" "$root/usr/share/posewatch/posewatch-libcamerify.conf"
install -D -m 644 "$here/journal-upload-posewatch.conf" "$root/usr/share/posewatch/journal-upload-posewatch.conf"
install -D -m 644 "$repo/udev/61-posewatch-camera-id.rules.example" "$root/usr/share/posewatch/61-posewatch-camera-id.rules.example"
install -D -m 644 "$here/../README.md" "$root/usr/share/doc/posewatch/README.md"
install -D -m 644 "$here/debian/copyright" "$root/usr/share/doc/posewatch/copyright"
if [ -n "$classifier" ]; then
    install -D -m 644 "$classifier" "$root/usr/share/posewatch/action_classifier.tflite"
else
    echo "build-deb.sh: no --classifier given; the package uses the action classifier built into the binary" >&2
fi
install -d -m 755 "$root/var/lib/posewatch"

install -d "$root/DEBIAN"
for script in postinst prerm postrm; do install -m 755 "$here/debian/$script" "$root/DEBIAN/$script"; done
echo /etc/posewatch/posewatch.toml > "$root/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: posewatch
Version: $version
Architecture: $arch
Maintainer: posewatch developers <posewatch@localhost>
Installed-Size: $size
Depends: $depends_line
Recommends: curl | wget, ca-certificates
Suggests: libcamera-v4l2, systemd-journal-remote
Section: video
Priority: optional
Description: exercise-watching appliance: camera, pose, action, LEDs and journal
 posewatch watches one person exercise through a camera, recognises the action
 (jumping jacks, lunges, burpees, squats, push-ups or other), counts
 repetitions, shows the current action on GPIO LEDs and writes what it sees to
 the systemd journal. It runs as a sandboxed systemd service.
 .
 The post-install step downloads Google's MoveNet Lightning int8 pose model
 (Apache-2.0) and checks its sha256.
CONTROL
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | xargs -0 md5sum > DEBIAN/md5sums)

mkdir -p "$output"
dpkg-deb --root-owner-group -Zxz --build "$root" "$output/posewatch_${version}_$arch.deb"

#!/usr/bin/env bash
# deploy/image/build.sh: posewatch's flashable Raspberry Pi image (Debian 13 "trixie", arm64).
#
#   sudo deploy/image/build.sh --deb posewatch_0.1.0_arm64.deb \
#        --model movenet_singlepose_lightning_int8_4.tflite [--output DIR] [--refresh-rootfs] [--keep-img]
#
# Writes DIR/posewatch-<version>-rpi-arm64.img.xz and its .sha256 (DIR defaults to the current
# directory) and the build log (--keep-img also keeps the uncompressed .img). Boards: Raspberry Pi
# 3 (B, B+, A+), 4 B, 400, CM4, Zero 2 W and 5, through Debian's kernel from trixie-backports
# (Linux 7.x: the Pi 5's RP1 and SD drivers) and raspi-firmware (docs/image.md: what is proven how).
#
# How (all from Debian's packages): mmdebstrap makes the Debian 13 arm64 root from
# deploy/image/debian-packages; configure-in-root.sh installs posewatch's .deb offline and sets the
# appliance up in a chroot (arm64 programs run under qemu-user through binfmt_misc on an x86-64
# host); genimage assembles the MBR image (genimage.cfg.in) from the tree, with no loop devices,
# device-mapper or mounts, so it builds in containers and CI machines too. Debian's own Raspberry Pi
# images are made with vmdb2, which needs partition devices (kpartx/device-mapper) that such
# machines lack; the result follows their layout (RASPIFIRM/RASPIROOT, raspi-firmware).
#
# The MoveNet model is baked in after its sha256 is checked against the one deploy/install-model
# trusts; the first boot needs no network. The Debian part of the root (everything before
# posewatch) is cached as a directory in $POSEWATCH_IMAGE_CACHE (default
# /var/cache/posewatch-ci/image) keyed by the package list; --refresh-rootfs rebuilds it (e.g. for
# Debian's security updates). POSEWATCH_MIRROR: Debian mirror (default deb.debian.org). Needs root
# (mmdebstrap's root mode, chroot, file owners).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() { echo "usage: $0 --deb posewatch_<version>_arm64.deb --model movenet_singlepose_lightning_int8_4.tflite [--output DIR] [--refresh-rootfs] [--keep-img]" >&2; exit 2; }
deb="" model="" output=$PWD refresh=0 keep_img=0
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) deb=${2:-}; shift 2 || usage ;;
        --model) model=${2:-}; shift 2 || usage ;;
        --output) output=${2:-}; shift 2 || usage ;;
        --refresh-rootfs) refresh=1; shift ;;
        --keep-img) keep_img=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "build.sh: unknown argument $1" >&2; usage ;;
    esac
done
[ -n "$deb" ] && [ -n "$model" ] || usage
[ "$(id -u)" = 0 ] || { echo "build.sh: needs root (mmdebstrap, chroot, file owners)" >&2; exit 2; }
[ -f "$deb" ] || { echo "build.sh: no package at $deb" >&2; exit 1; }
[ -f "$model" ] || { echo "build.sh: no model at $model" >&2; exit 1; }

# The package must be posewatch for arm64.
name=$(dpkg-deb -f "$deb" Package) arch=$(dpkg-deb -f "$deb" Architecture) version=$(dpkg-deb -f "$deb" Version)
[ "$name" = posewatch ] && [ "$arch" = arm64 ] || {
    echo "build.sh: $deb is $name for $arch; the image needs posewatch for arm64 (deploy/build-deb.sh arm64)" >&2; exit 1; }

# The model must be the published MoveNet: the sha256 deploy/install-model checks on the board.
want=$(sed -n 's/^SHA256=\([0-9a-f]\{64\}\)$/\1/p' "$repo/deploy/install-model")
got=$(sha256sum "$model" | cut -d' ' -f1)
[ -n "$want" ] || { echo "build.sh: no SHA256= line in deploy/install-model" >&2; exit 1; }
[ "$got" = "$want" ] || { echo "build.sh: $model has sha256 $got, not MoveNet's $want (deploy/install-model)" >&2; exit 1; }

# Host tools, from Debian. qemu-user-static registers qemu-aarch64 with binfmt_misc, which runs the
# root's arm64 programs (dpkg's maintainer scripts, update-initramfs) during the build.
need=""
for p in mmdebstrap arch-test genimage qemu-user-static binfmt-support dosfstools mtools e2fsprogs xz-utils debian-archive-keyring; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
    echo "build.sh: apt-get install$need"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
if [ "$(uname -m)" != aarch64 ]; then
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 || true
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { echo "build.sh: qemu-aarch64 is not registered with binfmt_misc" >&2; exit 1; }
fi

cache=${POSEWATCH_IMAGE_CACHE:-/var/cache/posewatch-ci/image}
mirror=${POSEWATCH_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache" "$output"
output=$(cd "$output" && pwd)
exec 9>"$cache/lock"
flock -w 3600 9 || { echo "build.sh: another image build holds $cache/lock" >&2; exit 1; }
base=posewatch-$version-rpi-arm64
work=$cache/work
log=$output/$base.build.log
: > "$log"
t0=$(date +%s)
say() { echo "build.sh: [$(( $(date +%s) - t0 ))s] $*"; }
# run_logged WHAT CMD...: runs CMD with its output in the log; on failure shows the log's tail.
run_logged() {
    local what=$1; shift
    if ! "$@" >> "$log" 2>&1; then
        tail -n 30 "$log"; echo "build.sh: $what failed (log: $log)" >&2; exit 1
    fi
}

# ---- the Debian root (cached) ----------------------------------------------------------------
# Debian 13 arm64, minbase plus deploy/image/debian-packages (no recommends), by mmdebstrap, with
# trixie-backports for the kernel only (early/apt-preferences-kernel) and the Pi 5's early drivers
# in the initramfs (early/initramfs-hook-boards), both in place before any package is installed.
# Kept as a directory keyed by the package list, early/ and this recipe's version; later builds copy it.
recipe_version=2
key=$( { cat "$here/debian-packages" "$here"/early/*; echo "$recipe_version $mirror"; } | sha256sum | cut -c1-12)
debian_root=$cache/rootfs-$key
[ "$refresh" = 1 ] && rm -rf "$debian_root"
if [ ! -d "$debian_root" ]; then
    say "mmdebstrap trixie arm64 (Debian root, cached afterwards as $(basename "$debian_root"))"
    rm -rf "$debian_root.tmp"
    run_logged mmdebstrap mmdebstrap --mode=root --arch=arm64 --variant=minbase \
        --components=main,non-free-firmware --aptopt='APT::Install-Recommends "false"' \
        --include="$(grep -v '^#' "$here/debian-packages" | grep . | paste -sd,)" \
        --setup-hook='mkdir -p "$1/boot/firmware" "$1/etc/apt/preferences.d" "$1/etc/initramfs-tools/hooks"' \
        --setup-hook="install -m 644 '$here/early/apt-preferences-kernel' \"\$1/etc/apt/preferences.d/60-posewatch-kernel\"" \
        --setup-hook="install -m 755 '$here/early/initramfs-hook-boards' \"\$1/etc/initramfs-tools/hooks/posewatch-boards\"" \
        trixie "$debian_root.tmp" "deb $mirror trixie main non-free-firmware" "deb $mirror trixie-backports main"
    mv "$debian_root.tmp" "$debian_root"
    find "$cache" -maxdepth 1 -name 'rootfs-*' ! -name "$(basename "$debian_root")" -exec rm -rf {} +
else
    say "Debian root: cached $(basename "$debian_root")"
fi

# ---- posewatch and the appliance's configuration -----------------------------------------------
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
root=$work/root
cp -a "$debian_root" "$root"
cp -R --preserve=mode "$here/rootfs/." "$root/"
# MoveNet, pre-placed where the package's install-model looks: its postinst then only checks the
# sha256 again, and the first boot needs no network.
install -d -m 755 "$root/var/lib/posewatch"
install -m 644 "$model" "$root/var/lib/posewatch/movenet_singlepose_lightning_int8_4.tflite"
stage=$root/root/posewatch-image-stage
install -d -m 700 "$stage"
install -m 644 "$deb" "$stage/posewatch.deb"
install -m 644 "$here/configure-in-root.sh" "$repo/docs/image.md" "$stage/"
commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
printf 'posewatch image %s\nposewatch package %s (sha256 %s)\nrecipe %s\nMoveNet sha256 %s\n' \
    "$base" "$version" "$(sha256sum "$deb" | cut -d' ' -f1)" "$commit" "$got" > "$stage/image-release"
say "configure the root (dpkg -i posewatch, services, raspi-firmware) under emulation"
# In a private mount namespace: /proc, /sys, /dev and the boot partition's bind mount (raspi-firmware
# writes there only when /boot/firmware is a mount point) vanish with it, whatever happens.
run_logged configure-in-root.sh unshare --mount --propagation private -- sh -ec '
    R=$1
    mount -t proc proc "$R/proc"
    mount --rbind /sys "$R/sys"; mount --make-rslave "$R/sys"
    mount --rbind /dev "$R/dev"; mount --make-rslave "$R/dev"
    mount --bind "$R/boot/firmware" "$R/boot/firmware"
    chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        sh /root/posewatch-image-stage/configure-in-root.sh
' configure "$root"
rm -rf "$stage"
# The owner's first-boot files on the FAT partition; its posewatch.toml is the package's
# commented file under a note on how it is used.
install -m 644 "$here"/boot/{user-data,meta-data,journal-upload.conf,posewatch-image.txt} "$root/boot/firmware/"
cat "$here/boot/posewatch.toml.head" "$repo/deploy/posewatch.toml" > "$root/boot/firmware/posewatch.toml"

# ---- the image ---------------------------------------------------------------------------------
# The root partition: the tree plus a quarter and 256 MiB (journal, logs, apt's lists), in MiB;
# cloud-init grows it to the card at first boot.
used=$(( $(du -s -B1M "$root" | cut -f1) - $(du -s -B1M "$root/boot/firmware" | cut -f1) ))
root_size=$(( used + used / 4 + 256 ))M
say "genimage: root $root_size (tree ${used} MiB), boot 512M"
sed -e "s/@ROOT_SIZE@/$root_size/" -e "s/@IMAGE@/$base.img/" "$here/genimage.cfg.in" > "$work/genimage.cfg"
mkdir -p "$work/input" "$work/out"
run_logged genimage genimage --rootpath "$root" --tmppath "$work/tmp" --inputpath "$work/input" \
    --outputpath "$work/out" --config "$work/genimage.cfg"
rm -f "$output/$base.img.xz" "$output/$base.img.xz.sha256"
mv "$work/out/$base.img" "$output/$base.img"
t1=$(date +%s)
say "xz -T0 -6 (image $(( $(stat -c %s "$output/$base.img") / 1048576 )) MiB)"
xz -T0 -6 -f $([ "$keep_img" = 1 ] && echo -k) "$output/$base.img"
(cd "$output" && sha256sum "$base.img.xz" > "$base.img.xz.sha256")
t2=$(date +%s)
raw=$(xz --robot -l "$output/$base.img.xz" | awk '$1=="totals"{print $5}')
echo "build.sh: wrote $output/$base.img.xz ($(( $(stat -c %s "$output/$base.img.xz") / 1048576 )) MiB, $(( raw / 1048576 )) MiB raw, root tree $used MiB) and $base.img.xz.sha256 in $(( t2 - t0 ))s (xz $(( t2 - t1 ))s)"

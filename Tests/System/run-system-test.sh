#!/usr/bin/env bash
# Tests/System/run-system-test.sh [amd64|arm64] — posewatch's system test on real kernel drivers.
#
# Builds the release binary and the .deb, boots a stock Debian kernel with a Debian userland
# (systemd, udev, journald) under QEMU (software emulation: KVM does not boot guests on the CI
# machines), with the vivid camera and a gpio-sim chip whose lines carry the Raspberry Pi header
# names (GPIO0…GPIO27, so the default LED lines GPIO17 GPIO27 GPIO22 GPIO23 GPIO24 GPIO25 exist).
# Inside, Tests/System/guest/systest-guest.sh installs the .deb with dpkg -i as an owner would and
# prints one PASS:/FAIL:/SKIP: line per check. Exit status: 0 when no FAIL and the guest finished.
#
# Caches (outside the repo; rebuilt when missing, so a cold run on a fresh machine works):
#   $POSEWATCH_SYSTEST_CACHE (default /var/cache/posewatch-ci/systest-<arch>)
#     kernel-<kver>/       vmlinuz + a module subset (vivid and deps, our out-of-tree gpio-sim.ko)
#     debs/                the kernel packages from Debian's mirror (deleted once kernel-<kver>/ is built)
#     rootfs-<key>.cpio    the debootstrap'd userland + modules, packed as an initramfs
#     run/                 the last run: console.log (serial), artifacts.log (journal dump), timings
# Environment:
#   POSEWATCH_MIRROR       Debian mirror (default http://deb.debian.org/debian); the only network use
#   POSEWATCH_SYSTEST_DEB  use this .deb instead of building one (e.g. the arm64 package)
#   POSEWATCH_MODEL        MoveNet file (default ../shared/models/ next to the checkout)
#   POSEWATCH_CLASSIFIER   an action classifier file to package (overrides the one built into the
#                          binary; default: none)
#   SYSTEST_QEMU_TIMEOUT   hard limit for the VM in seconds (default 420 amd64, 1200 arm64, plus
#                          the soak's length and a margin)
#   SYSTEST_SOAK           the fault soak's profile, as --soak= (default short)
#   SYSTEST_NO_APT=1       do not apt-get install host tools (they must be there)
# Needs root (debootstrap, cpio with owners, module build). Runs one VM at a time (flock).
set -euo pipefail

arch=amd64 prepare_only="" soak=${SYSTEST_SOAK:-short}
usage="usage: $0 [amd64|arm64] [--prepare|--prepare-kernel] [--soak=short|long|none|SECONDS|MINUTESm|HOURSh]"
for a in "$@"; do
    case "$a" in
        amd64|arm64) arch=$a ;;
        --prepare) prepare_only=1 ;;   # only fill the caches (kernel, gpio-sim.ko, userland)
        --prepare-kernel) prepare_only=kernel ;;   # only the kernel and gpio-sim.ko (no emulation)
        --soak=*) soak=${a#--soak=} ;;  # the fault soak after the checks (guest/systest-soak.sh)
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
# The fault soak's length in seconds (issue 43): short is CI's profile (every fault once, about
# three minutes), long the two-hour one; 0 runs none.
case "$soak" in
    short) soak_seconds=120 ;;
    long) soak_seconds=7200 ;;
    none) soak_seconds=0 ;;
    *) if [[ $soak =~ ^([0-9]{1,6})([mh]?)$ ]]; then
           unit=${BASH_REMATCH[2]:-s}; declare -A per=([s]=1 [m]=60 [h]=3600)
           soak_seconds=$(( 10#${BASH_REMATCH[1]} * ${per[$unit]} ))
       else soak_seconds=-1; fi ;;
esac
if [ "$soak_seconds" -lt 0 ] || [ "$soak_seconds" -gt 172800 ]; then
    printf '%s: --soak=%q: want short, long, none, or a duration such as 600, 45m or 2h (at most 48h)\n' "$0" "$soak" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${POSEWATCH_SYSTEST_CACHE:-/var/cache/posewatch-ci/systest-$arch}
mirror=${POSEWATCH_MIRROR:-http://deb.debian.org/debian}
model_name=movenet_singlepose_lightning_int8_4.tflite
model=${POSEWATCH_MODEL:-$repo/../shared/models/$model_name}
# A worktree elsewhere (e.g. /work/wt-*) sits next to /work/shared too.
[ -n "${POSEWATCH_MODEL:-}" ] || [ -f "$model" ] || model=/work/shared/models/$model_name

# The VM's limit grows with the soak: its length, plus its faults' bounded waits (the short one's
# back-to-back faults take about three minutes on their own), plus a tenth for a loaded host.
soak_margin=0
[ "$soak_seconds" -gt 0 ] && soak_margin=$(( soak_seconds + soak_seconds / 10 + 420 ))
case "$arch" in
    amd64)
        # bookworm: the CI machines are Debian 12 and the amd64 .deb is built against its libraries.
        suite=bookworm; kflavour=amd64; kcc=gcc-12
        qemu_pkg=qemu-system-x86; qemu_timeout=${SYSTEST_QEMU_TIMEOUT:-$(( 420 + soak_margin ))}
        ;;
    arm64)
        # trixie: the arm64 binary comes from .ci/check-arm64.sh's emulated Debian 13 root (libgpiod v2).
        suite=trixie; kflavour=arm64; kcc=aarch64-linux-gnu-gcc
        qemu_pkg=qemu-system-arm; qemu_timeout=${SYSTEST_QEMU_TIMEOUT:-$(( 1200 + soak_margin ))}
        ;;
esac

t_start=$(date +%s.%N)
elapsed() { echo "$(date +%s.%N) - $t_start" | bc | xargs printf '%.1f'; }
log() { printf '[%6ss] %s\n' "$(elapsed)" "$*"; }
declare -A phase_seconds=()
phase() {  # phase NAME CMD...: runs CMD, records its wall time for the summary
    local name=$1 t0; shift; t0=$(date +%s.%N)
    "$@"
    phase_seconds[$name]=$(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%.1f')
    log "$name done in ${phase_seconds[$name]}s"
}

main() {
[ "$(id -u)" = 0 ] || { echo "run-system-test.sh: needs root (debootstrap, module build, cpio owners)" >&2; exit 2; }
mkdir -p "$cache"
# One system test at a time on this machine: the cores are shared and TCG is slow.
exec 9>"$cache/lock"
flock -w 1800 9 || { echo "run-system-test.sh: another system test holds $cache/lock" >&2; exit 1; }

work=$cache/run
rm -rf "$work"; mkdir -p "$work"
qemu_pid="" tail_pid=""
# debootstrap mounts /proc (and more) inside the root it makes; an interrupted run leaves them.
unmount_under() {
    local m
    for m in $(awk -v d="$1" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r); do umount -l "$m" || true; done
}
cleanup() {
    # Never leave a VM, a log follower or a mount behind, whatever happened.
    [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null || true
    [ -n "$tail_pid" ] && kill "$tail_pid" 2>/dev/null || true
    [ -n "$bg_pid" ] && { kill "$bg_pid" 2>/dev/null; wait "$bg_pid" 2>/dev/null; } || true
    unmount_under "$cache/rootfs.tmp"
    rm -rf "$work/overlay" "$work/initrd.cpio"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
}

# ------------------------------------------------------------------------------------ host tools
host_tools() {
    [ -n "${SYSTEST_NO_APT:-}" ] && return 0
    local pkgs="debootstrap cpio kmod xz-utils bc make gcc libc6-dev jq $qemu_pkg"
    [ "$arch" = amd64 ] && pkgs="$pkgs gcc-12"
    [ "$arch" = arm64 ] && pkgs="$pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static"
    local missing=""
    for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    if [ -n "$missing" ]; then
        log "apt-get install$missing"
        DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
}

# ------------------------------------------------------------------------------------ build
deb=""
build() {
    if [ -n "${POSEWATCH_SYSTEST_DEB:-}" ]; then deb=$POSEWATCH_SYSTEST_DEB; log "using $deb"; return; fi
    [ "$arch" = amd64 ] || { echo "arm64: set POSEWATCH_SYSTEST_DEB (deploy/build-deb.sh arm64 --binary …)" >&2; exit 2; }
    export PATH="/opt/swift/usr/bin:$PATH"
    # build-deb.sh runs the release build itself (swift build -c release --product posewatch
    # --static-swift-stdlib: the Swift runtime linked in, as shipped) and packages it; a separate
    # plain `swift build -c release` would only relink the same objects twice per run.
    # The classifier is built into the binary; POSEWATCH_CLASSIFIER packages a file that overrides it.
    local classifier=${POSEWATCH_CLASSIFIER:-} args=()
    if [ -n "$classifier" ]; then args=(--classifier "$classifier"); log "packaging classifier $classifier"
    else log "the action classifier is the one built into the binary"; fi
    rm -rf "$work/deb"
    timeout 1800 "$repo/deploy/build-deb.sh" amd64 "${args[@]}" --output "$work/deb" > "$work/build.log" 2>&1 \
        || { tail -30 "$work/build.log"; echo "FAIL: deploy/build-deb.sh amd64"; exit 1; }
    deb=$(ls "$work"/deb/posewatch_*_amd64.deb)
}

# ------------------------------------------------------------------------------------ kernel
# A private apt state pointed at $suite on the mirror, so the kernel/source packages come from the
# same suite as the userland, whatever the host's sources are.
apt_opts=()
apt_setup() {
    local a=$cache/apt
    mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
    touch "$a/status"
    echo "deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" > "$a/sources.list"
    [ "$suite" = bookworm ] && echo "deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/debian}/debian-security bookworm-security main" >> "$a/sources.list"
    apt_opts=(-o Dir::Etc::sourcelist="$a/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$a/lists"
              -o Dir::Cache="$a/cache" -o Dir::State::status="$a/status"
              -o APT::Architectures::=amd64 -o APT::Architectures::=arm64)
    # Lists are refreshed at most once a day: a newer kernel ABI would rebuild the kernel cache.
    if [ -z "$(find "$a/lists" -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
        log "apt-get update ($suite lists)"
        timeout 300 apt-get "${apt_opts[@]}" update -qq
    fi
}

kver="" kdir="" kpkg=""
kernel_version() {
    kpkg=$(apt-cache "${apt_opts[@]}" depends "linux-image-$kflavour:$arch" | awk '/Depends: linux-image-/{print $2; exit}')
    kpkg=${kpkg%:$arch}
    kver=${kpkg#linux-image-}                                    # 6.1.0-56-amd64
    kdir=$cache/kernel-$kver
}
kernel() {
    if [ -f "$kdir/.complete" ]; then log "kernel $kver: cached"; return; fi
    log "kernel $kver: download, extract, build gpio-sim.ko"
    local ksrcver kseries kabi b=$cache/kbuild
    ksrcver=$(apt-cache "${apt_opts[@]}" show "$kpkg:$arch" | awk '/^Version:/{print $2; exit}')
    kseries=$(echo "$ksrcver" | cut -d. -f1-2)
    kabi=${kver%-$kflavour}
    # "host:" = from the host's own apt lists (bookworm) rather than the private $suite state.
    local want=("$kpkg:$arch" "linux-headers-$kver:$arch" "linux-headers-$kabi-common" "linux-source-$kseries=$ksrcver")
    if [ "$arch" = amd64 ]; then want+=("linux-kbuild-$kseries:amd64")
    else
        # trixie's kbuild host tools need glibc 2.38; bookworm's build of the same version runs here.
        local kb12="linux-kbuild-${kabi%+deb13}+deb12"
        if apt-cache show "$kb12" >/dev/null 2>&1; then want+=("host:$kb12"); else want+=("linux-kbuild-$kabi:amd64"); fi
    fi
    mkdir -p "$cache/debs"
    (cd "$cache/debs"
     for p in "${want[@]}"; do
         local n=${p#host:}; n=${n%%[:=]*}
         ls "${n}"_*.deb >/dev/null 2>&1 && continue      # downloaded by an earlier run
         if [[ $p == host:* ]]; then
             timeout 600 apt-get download "${p#host:}" 2>&1 | grep -v -e unsandboxed -e '^Get:' || true
         else
             timeout 600 apt-get "${apt_opts[@]}" download "$p" 2>&1 | grep -v -e unsandboxed -e '^Get:' || true
         fi
         ls "${n}"_*.deb >/dev/null 2>&1 || { echo "FAIL: could not download $p" >&2; exit 1; }
     done)
    rm -rf "$b" "$kdir"; mkdir -p "$b"/{kroot,hdr,lsrc,gpiosim}
    dpkg -x "$cache"/debs/linux-image-"$kver"_*.deb "$b/kroot"
    local moddir
    for moddir in "$b/kroot/lib/modules/$kver" "$b/kroot/usr/lib/modules/$kver"; do [ -d "$moddir" ] && break; done
    local modbase=${moddir%/lib/modules/$kver}

    # Debian's kernels leave CONFIG_GPIO_SIM and CONFIG_IRQ_SIM unset: build gpio-sim.ko from the
    # matching linux-source with irq_sim.c linked in (irq_to_desc is not exported to modules).
    dpkg -x "$(ls "$cache"/debs/linux-headers-"$kver"_*.deb)" "$b/hdr"
    dpkg -x "$(ls "$cache"/debs/linux-headers-"$kabi"-common_*.deb)" "$b/hdr"
    local kb=$b/hdr/usr/src/linux-headers-$kver kbuild_dir
    kbuild_dir=$kb/$(dirname "$(readlink "$kb/scripts")")
    mkdir -p "$b/kbtmp" "$(dirname "$kbuild_dir")"
    local kbuild_pkg=${want[-1]#host:}; kbuild_pkg=${kbuild_pkg%%[:=]*}
    dpkg -x "$(ls "$cache"/debs/"$kbuild_pkg"_*.deb)" "$b/kbtmp"
    mv "$b"/kbtmp/usr/lib/linux-kbuild-* "$kbuild_dir"
    sed -i "s#^include /usr/src/#include $b/hdr/usr/src/#" "$kb/Makefile"
    rm -f "$kb/vmlinux"    # trixie ships it for BTF, which would need pahole
    if ! echo 'int x;' | $kcc -fmin-function-alignment=8 -x c -c - -o /dev/null 2>/dev/null; then
        sed -i '/^CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=/d' "$kb/include/config/auto.conf"
    fi
    dpkg-deb --fsys-tarfile "$cache"/debs/linux-source-"$kseries"_*.deb | tar -x -C "$b/lsrc" --wildcards './usr/src/linux-source-*.tar.xz'
    local tarball top
    tarball=$(ls "$b"/lsrc/usr/src/linux-source-*.tar.xz); top=$(basename "$tarball" .tar.xz)
    tar --occurrence=1 -xJf "$tarball" -C "$b/lsrc" "$top/drivers/gpio/gpio-sim.c" "$top/drivers/gpio/gpiolib.h" "$top/kernel/irq/irq_sim.c"
    rm -f "$tarball"
    cp "$b/lsrc/$top/drivers/gpio/gpio-sim.c" "$b/gpiosim/gpio-sim-main.c"
    cp "$b/lsrc/$top/drivers/gpio/gpiolib.h" "$b/gpiosim/"
    sed 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$b/lsrc/$top/kernel/irq/irq_sim.c" > "$b/gpiosim/irq_sim.c"
    printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n' > "$b/gpiosim/Kbuild"
    make -s -C "$kb" M="$b/gpiosim" CC="$kcc" modules 2>&1 | grep -v 'Skipping BTF' || true
    [ -f "$b/gpiosim/gpio-sim.ko" ] || { echo "FAIL: gpio-sim.ko did not build" >&2; exit 1; }

    # The module subset the VM needs: vivid with its dependencies, configfs, gpio-sim. Trixie's
    # .ko.xz are decompressed so nothing in the guest depends on compressed-module support.
    mkdir -p "$kdir.tmp/lib/modules/$kver/extra"
    depmod -b "$modbase" "$kver"
    for m in vivid configfs; do
        modprobe -d "$modbase" -S "$kver" --show-depends "$m" | awk '$1=="insmod"{print $2}'
    done | sort -u | while read -r f; do
        rel=${f#$moddir/}
        mkdir -p "$kdir.tmp/lib/modules/$kver/$(dirname "$rel")"
        cp "$f" "$kdir.tmp/lib/modules/$kver/$rel"
    done
    cp "$b/gpiosim/gpio-sim.ko" "$kdir.tmp/lib/modules/$kver/extra/"
    find "$kdir.tmp/lib/modules" -name '*.ko.xz' -exec xz -d {} +
    cp "$moddir"/modules.builtin* "$moddir/modules.order" "$kdir.tmp/lib/modules/$kver/"
    depmod -b "$kdir.tmp" "$kver"
    cp "$b/kroot/boot/vmlinuz-$kver" "$kdir.tmp/vmlinuz"
    rm -rf "$b"
    touch "$kdir.tmp/.complete"
    mv "$kdir.tmp" "$kdir"
    # The packages were only needed to build this; older kernels' caches are dead weight.
    rm -rf "$cache/debs"
    find "$cache" -maxdepth 1 -name 'kernel-*' ! -name "kernel-$kver" -exec rm -rf {} +
}

# ------------------------------------------------------------------------------------ userland
# debootstrap --variant=minbase plus what an owner's board has (systemd, udev, dbus) and what the
# guest checks use (v4l-utils, gpiod, jq, procps). The libraries posewatch links come from its
# Depends: dpkg -i in the VM cannot fetch anything (no network), so they are pre-installed here
# (libjpeg62-turbo comes with libv4lconvert0).
root_pkgs="systemd-sysv,udev,dbus,kmod,procps,v4l-utils,gpiod,jq,libv4l-0,libv4lconvert0,init-system-helpers"
rootfs_cpio="" pkgs="" bg_pid=""
rootfs_key() {
    pkgs=$root_pkgs
    # debootstrap --include takes real package names only: trixie's 64-bit-time_t libraries are
    # libv4l-0t64 and libv4lconvert0t64 (they provide the old names the package depends on).
    case "$suite" in
        bookworm) pkgs="$pkgs,libgpiod2" ;;
        trixie) pkgs="${pkgs/libv4l-0,libv4lconvert0,/libv4l-0t64,libv4lconvert0t64,},libgpiod3" ;;
    esac
    # The cache key covers everything that goes into the image, so a change rebuilds it.
    # Bump rootfs_recipe when the steps of rootfs_finish change.
    local key rootfs_recipe=1
    key=$(printf '%s\n' "$suite" "$arch" "$pkgs" "$kver" "$rootfs_recipe" | sha256sum | cut -c1-12)
    rootfs_cpio=$cache/rootfs-$key.cpio
}
# debootstrap waits on the mirror and dpkg, the kernel step on xz: on a cold cache they run side by
# side (debootstrap in the background), which saves about two minutes.
debootstrap_start() {
    [ -f "$rootfs_cpio" ] && return 0
    local r=$cache/rootfs.tmp extra=()
    unmount_under "$r"; rm -rf "$r"
    log "debootstrap $suite $arch minbase + $pkgs (in the background)"
    [ "$arch" != "$(dpkg --print-architecture)" ] && extra=(--arch="$arch")
    timeout 900 debootstrap "${extra[@]}" --variant=minbase --include="$pkgs" "$suite" "$r" "$mirror" \
        > "$cache/debootstrap.log" 2>&1 &
    bg_pid=$!
}
rootfs_finish() {
    if [ -f "$rootfs_cpio" ]; then log "userland: cached ($(basename "$rootfs_cpio"))"; return; fi
    local r=$cache/rootfs.tmp rc=0
    wait "$bg_pid" || rc=$?
    bg_pid=""
    unmount_under "$r"
    [ $rc = 0 ] || { tail -20 "$cache/debootstrap.log"; echo "FAIL: debootstrap exited $rc" >&2; exit 1; }
    # Smaller initramfs: no docs, manuals, locales or apt lists.
    rm -rf "$r"/usr/share/{doc,man,locale,info} "$r"/var/cache/apt/*.bin "$r"/var/lib/apt/lists/*
    mkdir -p "$r/lib/modules"
    cp -a "$kdir/lib/modules/$kver" "$r/lib/modules/"
    echo posewatch-systest > "$r/etc/hostname"
    : > "$r/etc/fstab"
    # A quiet serial console: no getty, no login; the test harness is a unit (in the overlay).
    ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
    ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyAMA0.service"
    ln -sf /dev/null "$r/etc/systemd/system/getty@tty1.service"
    # Nothing in the VM may touch the network; these would only wait for it.
    ln -sf /dev/null "$r/etc/systemd/system/systemd-networkd-wait-online.service"
    # The whole root is the initramfs: no disk image, no mount tools, nothing to clean up.
    (cd "$r" && find . | cpio -o -H newc --quiet) > "$rootfs_cpio.tmp"
    mv "$rootfs_cpio.tmp" "$rootfs_cpio"
    rm -rf "$r"
    # Older images of this cache are dead weight.
    find "$cache" -maxdepth 1 -name 'rootfs-*.cpio' ! -name "$(basename "$rootfs_cpio")" -delete
}

# ------------------------------------------------------------------------------------ per-run overlay
# What changes every run goes into a second cpio archive appended to the cached one (the kernel
# unpacks concatenated archives in order): the .deb, the model, the guest harness.
overlay() {
    local o=$work/overlay
    rm -rf "$o"
    install -d -m 755 "$o/root" "$o/root/systest" "$o/var" "$o/var/lib" "$o/var/lib/posewatch" \
        "$o/usr" "$o/usr/local" "$o/usr/local/sbin" "$o/etc" "$o/etc/systemd" "$o/etc/systemd/system" \
        "$o/etc/systemd/system/multi-user.target.wants"
    chmod 700 "$o/root"
    install -m 644 "$deb" "$o/root/systest/"
    # The pose model is pre-placed where the package's install-model looks, as an owner installing
    # offline would; postinst then only checks its sha256 (there is no network in the VM).
    [ -f "$model" ] || { echo "FAIL: no MoveNet model at $model" >&2; exit 1; }
    install -m 644 "$model" "$o/var/lib/posewatch/$model_name"
    install -m 755 "$here/guest/systest-guest.sh" "$o/usr/local/sbin/systest-guest"
    install -m 644 "$here/guest/systest-guest-run.sh" "$o/usr/local/sbin/systest-guest-run"
    install -m 644 "$here/guest/systest-soak.sh" "$o/usr/local/sbin/systest-soak"
    install -m 644 "$here/guest/systest-header-pins.sh" "$o/usr/local/sbin/systest-header-pins"
    install -m 644 "$here/guest/posewatch-systest.service" "$o/etc/systemd/system/"
    # The harness unit's own limit must outlast the soak; the VM's limit stays the last resort.
    install -d -m 755 "$o/etc/systemd/system/posewatch-systest.service.d"
    printf '[Service]\nTimeoutStartSec=%s\n' "$qemu_timeout" > "$o/etc/systemd/system/posewatch-systest.service.d/soak.conf"
    ln -s /etc/systemd/system/posewatch-systest.service "$o/etc/systemd/system/multi-user.target.wants/"
    (cd "$o" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) > "$work/overlay.cpio"
    cat "$rootfs_cpio" "$work/overlay.cpio" > "$work/initrd.cpio"
}

# ------------------------------------------------------------------------------------ boot
# The harness's stdout reaches the console through journald, which puts "[ uptime] unit[pid]: "
# in front of each line; the checks' lines are read without it.
strip_prefix='s/^\[ *[0-9.]*\] systest-guest\[[0-9]*\]: //'
boot() {
    local q
    # The console (PASS/FAIL lines) is the first serial port; the guest's journal dump and doctor
    # reports go to a second one, named to the guest on the kernel command line (systest.artifacts=).
    # amd64: a second 16550 (ttyS1). arm64: virt has one PL011 (ttyAMA0), so a PCI 16550 (8250_pci
    # is built into Debian's arm64 kernel) that the guest sees as ttyS0.
    # -cpu max: QEMU 7.2's TCG emulates AVX2 (not AVX-512), and posewatch's AVX2 kernels are its
    # fastest there (MoveNet under qemu-x86_64 -cpu max: avx2 ~0.7 s, scalar ~1.7 s, sse41 ~3.5 s).
    # arm64 stays a Cortex-A72, the Raspberry Pi 4 (NEON without dot product).
    if [ "$arch" = amd64 ]; then
        q=(qemu-system-x86_64 -accel tcg -cpu max -M q35 -smp 2 -m 2048
           -serial "file:$work/console.log" -serial "file:$work/artifacts.log")
        cons=ttyS0 artifacts_port=ttyS1
    else
        q=(qemu-system-aarch64 -accel tcg -M virt -cpu cortex-a72 -smp 2 -m 2048
           -serial "file:$work/console.log"
           -chardev "file,id=artifacts,path=$work/artifacts.log" -device pci-serial,chardev=artifacts)
        cons=ttyAMA0 artifacts_port=ttyS0
    fi
    q+=(-display none -monitor none -no-reboot -nic none)
    q+=(-kernel "$kdir/vmlinuz" -initrd "$work/initrd.cpio"
        -append "console=$cons panic=-1 loglevel=3 rdinit=/sbin/init systemd.show_status=0 systemd.log_level=warning systest.artifacts=$artifacts_port systest.soak=$soak_seconds")
    printf '%q ' "${q[@]}" > "$work/qemu.cmd"; echo >> "$work/qemu.cmd"
    log "booting $suite $arch ($kver) under TCG, limit ${qemu_timeout}s"
    : > "$work/console.log"
    timeout --kill-after=10 "$qemu_timeout" "${q[@]}" < /dev/null > "$work/qemu.out" 2>&1 &
    qemu_pid=$!
    # Follow the console live so a CI log shows progress even if the VM hangs; tail ends by itself
    # when the VM (its timeout wrapper) does.
    tail --pid="$qemu_pid" -s 0.5 -n +1 -F "$work/console.log" 2>/dev/null | sed -u "$strip_prefix" \
        | grep --line-buffered -aE '^(PASS|FAIL|SKIP|INFO):|^=== (systest|soak)' &
    tail_pid=$!
    local rc=0
    wait "$qemu_pid" || rc=$?
    qemu_pid=""
    wait "$tail_pid" 2>/dev/null || true; tail_pid=""
    [ "$rc" = 124 ] && log "VM killed after ${qemu_timeout}s (timeout)"
    [ "$rc" = 0 ] || [ "$rc" = 124 ] || { log "qemu exited $rc:"; tail -5 "$work/qemu.out"; }
}

run_all() {
log "posewatch system test, $arch, cache $cache"
# The pose model is development data, never committed; the VM has no network to download it. As
# the other tests that need ../shared, skip with a clear message rather than fail without it.
if [ -z "$prepare_only" ] && [ ! -f "$model" ]; then
    echo "SKIP: system test: no MoveNet model at $model (../shared/models next to the checkout, or POSEWATCH_MODEL)"
    exit 0
fi
phase host-tools host_tools
phase apt apt_setup
kernel_version; rootfs_key
[ "$prepare_only" = kernel ] || debootstrap_start
[ -n "$prepare_only" ] || phase build build
phase kernel kernel
if [ "$prepare_only" = kernel ]; then log "kernel cache ready: $kdir"; exit 0; fi
phase userland rootfs_finish
if [ -n "$prepare_only" ]; then log "caches ready"; exit 0; fi
phase overlay overlay
phase vm boot

# ------------------------------------------------------------------------------------ verdict
tr -d '\r' < "$work/console.log" | sed "$strip_prefix" > "$work/console.txt"
passes=$(grep -ac '^PASS:' "$work/console.txt" || true)
fails=$(grep -ac '^FAIL:' "$work/console.txt" || true)
skips=$(grep -ac '^SKIP:' "$work/console.txt" || true)
finished=no
grep -aq '^=== systest guest finished' "$work/console.txt" && finished=yes
echo
echo "---- results ($arch)"
grep -aE '^(PASS|FAIL|SKIP):' "$work/console.txt" || true
[ "$finished" = yes ] || echo "FAIL: the guest harness did not finish (see $work/console.log)"
timings=""
for p in host-tools build apt kernel userland overlay vm; do timings="$timings $p=${phase_seconds[$p]:-0}s"; done
# The soak's table last, so it is the one table at the end of the output.
if grep -aq '^SOAK|' "$work/console.txt"; then
    echo
    grep -a '^=== soak table' "$work/console.txt" | tail -1
    grep -a '^SOAK|' "$work/console.txt" | sed 's/^SOAK//' | tee "$work/soak-table.md"
elif [ "$soak_seconds" -gt 0 ]; then
    echo "FAIL: soak: no table (the guest did not get to the end of the soak; see $work/console.log)"
    fails=$((fails + 1))
fi
summary="SUMMARY arch=$arch kernel=$kver pass=$passes fail=$fails skip=$skips finished=$finished total=$(elapsed)s$timings"
echo "$summary" | tee "$work/summary.txt"
echo "logs: $work/console.log (serial), $work/artifacts.log (guest journal), $work/build.log"
[ "$fails" = 0 ] && [ "$finished" = yes ]
}

# Everything runs from functions called on the last line, which ends with exit: bash reads a
# script as it goes, so this way an edit to the file during a run cannot derail it (bash would go
# on reading the changed file at its old offset after run_all returned).
main; run_all; exit

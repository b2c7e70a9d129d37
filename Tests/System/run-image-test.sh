#!/usr/bin/env bash
# Tests/System/run-image-test.sh — builds posewatch's Raspberry Pi image and proves it by booting it.
#
#   sudo Tests/System/run-image-test.sh [--deb posewatch_<v>_arm64.deb] [--image IMG(.xz)]
#
# 1. Build: deploy/image/build.sh with the arm64 .deb (--deb, $POSEWATCH_IMAGE_DEB, else the newest
#    in /var/cache/posewatch-ci/deb-arm64/ that `sudo .ci/check-arm64.sh --incremental --deb` makes)
#    and MoveNet (../shared/models or $POSEWATCH_MODEL). --image tests an image built before.
# 2. Static checks of what no emulator shows: the MBR, partition types and labels, config.txt
#    (arm_64bit, kernel and initramfs present), cmdline.txt (root= matches the partition table),
#    the firmware and the DTBs of the boards we claim.
# 3. Boot a copy, as an owner would have prepared the card: Raspberry Pi Imager-style cloud-init
#    files (user-data with hostname, user and SSH key; network-config with a fixed address and a
#    Wi-Fi network; meta-data), a posewatch.toml and a journal-upload.conf, all written to the FAT
#    partition with mtools. QEMU `virt` (TCG, Cortex-A72 like the Pi 4) boots the image's own kernel,
#    initrd and cmdline.txt on its own root partition (virtio disk). Stand-in hardware: vivid and a
#    gpio-sim chip named like the Pi header (guest/imagetest-hardware.sh; gpio-sim.ko from
#    run-system-test.sh's kernel cache), added to the test copy only.
#    Network: QEMU user networking with restrict=on (the guest reaches nothing outside this
#    machine): the host's SSH reaches the guest's fixed address; the guest's journal upload goes
#    to 10.0.2.100:19532, forwarded to a systemd-journal-remote listening on 127.0.0.1.
# 4. Checks over SSH from the host, one PASS:/FAIL: line each; then a bad posewatch.toml on the boot
#    partition and a reboot: the board must come back, reachable, with the error in the journal and
#    in `posewatch doctor`.
# Exit 0 when no check failed. Logs: $POSEWATCH_IMAGETEST_DIR (default /var/cache/posewatch-ci/imagetest).
# Needs root. Without the MoveNet model it prints one SKIP: line and exits 0.
set -uo pipefail
# The whole script is one function called on the last line: bash reads a script as it runs, so an
# edit to this file during a run (it runs for half an hour) cannot derail it.
main() {
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
deb=${POSEWATCH_IMAGE_DEB:-} image="" machine=virt
usage="usage: $0 [--machine virt|raspi3b|raspi4b] [--deb posewatch_<v>_arm64.deb] [--image IMG(.xz)]"
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) deb=${2:?--deb needs a file}; shift 2 ;;
        --image) image=${2:?--image needs a file}; shift 2 ;;
        --machine) machine=${2:?--machine needs virt, raspi3b or raspi4b}; shift 2 ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
case "$machine" in virt|raspi3b|raspi4b) ;; *) echo "$usage" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "run-image-test.sh: needs root (image build, chroot)" >&2; exit 2; }
model_name=movenet_singlepose_lightning_int8_4.tflite
model=${POSEWATCH_MODEL:-$repo/../shared/models/$model_name}
if [ ! -f "$model" ]; then
    echo "SKIP: image test: no MoveNet model at $model (../shared/models next to the checkout, or POSEWATCH_MODEL)"
    exit 0
fi
work=${POSEWATCH_IMAGETEST_DIR:-/var/cache/posewatch-ci/imagetest}
vm_timeout=${IMAGETEST_BOOT_TIMEOUT:-1800}
mkdir -p "$work"
exec 9>"$work/lock"
flock -w 3600 9 || { echo "run-image-test.sh: another image test holds $work/lock" >&2; exit 1; }
rm -rf "$work/run"; mkdir -p "$work/run"; run=$work/run

t_start=$(date +%s)
log() { printf '[%5ss] %s\n' "$(( $(date +%s) - t_start ))" "$*"; }
passes=0 fails=0
pass() { echo "PASS: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { local name=$1; shift; if "$@" >> "$run/checks.log" 2>&1; then pass "$name"; else fail "$name"; fi; }
qemu_pid="" remote_pid=""
cleanup() {
    [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
    [ -n "$remote_pid" ] && kill "$remote_pid" 2>/dev/null
    rm -f "$run/test.img"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for p in qemu-system-arm mtools fdisk socat jq openssh-client systemd-journal-remote xz-utils e2fsprogs; do
    dpkg -s "$p" >/dev/null 2>&1 || need="${need:-} $p"
done
[ -z "${need:-}" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null

# ------------------------------------------------------------------ 1. build
t0=$(date +%s)
if [ -z "$image" ]; then
    [ -n "$deb" ] || deb=$(ls -t /var/cache/posewatch-ci/deb-arm64/posewatch_*_arm64.deb 2>/dev/null | head -n 1)
    if [ -z "$deb" ]; then
        log "no arm64 .deb: building it (.ci/check-arm64.sh --incremental --deb: Swift 6.0.3 in an emulated Debian 13 root; ~30 min cold)"
        "$repo/.ci/check-arm64.sh" --incremental --deb > "$run/deb.log" 2>&1 || { tail -20 "$run/deb.log"; echo "FAIL: could not build the arm64 .deb"; exit 1; }
        deb=$(ls -t /var/cache/posewatch-ci/deb-arm64/posewatch_*_arm64.deb | head -n 1)
    fi
    log "building the image from $deb"
    mkdir -p "$work/image"
    if ! "$repo/deploy/image/build.sh" --deb "$deb" --model "$model" --output "$work/image" --keep-img | tee "$run/build.out"; then
        echo "FAIL: deploy/image/build.sh"; exit 1
    fi
    image=$(ls -t "$work"/image/posewatch-*-rpi-arm64.img | head -n 1)
fi
build_s=$(( $(date +%s) - t0 ))
case "$image" in
    *.xz) log "xz -d $image"; xz -dc "$image" > "$run/image.img"; image=$run/image.img ;;
esac
[ -f "$image" ] || { echo "FAIL: no image at $image"; exit 1; }
log "image: $image ($(( $(stat -c %s "$image") / 1048576 )) MiB)"

# ------------------------------------------------------------------ 2. static checks
echo "---- static checks (what the emulator cannot show)"
sfdisk -J "$image" > "$run/partitions.json" 2>> "$run/checks.log"
part() { jq -r ".partitiontable.partitions[$1].$2 // empty" "$run/partitions.json"; }
label_id=$(jq -r '.partitiontable.id // empty' "$run/partitions.json")
p1_start=$(part 0 start) p2_start=$(part 1 start)
if [ "$(jq -r .partitiontable.label "$run/partitions.json")" = dos ] && [ "$(part 0 type)" = c ] && [ "$(part 0 bootable)" = true ] \
   && [ "$(part 1 type)" = 83 ] && [ "$(jq '.partitiontable.partitions | length' "$run/partitions.json")" = 2 ]; then
    pass "partition table: MBR (id $label_id), 1: FAT32 LBA (0x0c) bootable at sector $p1_start, 2: Linux (0x83) at sector $p2_start"
else
    fail "partition table: want MBR with FAT32 0x0c bootable + Linux 0x83, got $(jq -c '.partitiontable' "$run/partitions.json")"
fi
boot_off=$(( p1_start * 512 )) root_off=$(( p2_start * 512 ))
boot_label=$(blkid -p -O "$boot_off" -s LABEL -o value "$image" 2>/dev/null)
root_label=$(blkid -p -O "$root_off" -s LABEL -o value "$image" 2>/dev/null)
root_type=$(blkid -p -O "$root_off" -s TYPE -o value "$image" 2>/dev/null)
[ "$boot_label" = RASPIFIRM ] && [ "$root_label" = RASPIROOT ] && [ "$root_type" = ext4 ] \
    && pass "file systems: boot vfat RASPIFIRM, root $root_type $root_label" \
    || fail "file systems: boot label '$boot_label', root '$root_label' ($root_type)"
fat="$image@@$boot_off"
mtype -i "$fat" ::config.txt > "$run/config.txt" 2>> "$run/checks.log"
mtype -i "$fat" ::cmdline.txt > "$run/cmdline.txt" 2>> "$run/checks.log"
mdir -b -i "$fat" :: 2>/dev/null | sed 's#^::/##' > "$run/boot-files.txt"
has_boot_file() { grep -qx "$1" "$run/boot-files.txt"; }
kernel_file=$(tr -d '\r' < "$run/config.txt" | sed -n 's/^kernel=//p' | tail -n 1)
initrd_file=$(tr -d '\r' < "$run/config.txt" | sed -n 's/^initramfs \([^ ]*\).*/\1/p' | tail -n 1)
if grep -qx 'arm_64bit=1' <(tr -d '\r' < "$run/config.txt") && [ -n "$kernel_file" ] && has_boot_file "$kernel_file" \
   && [ -n "$initrd_file" ] && has_boot_file "$initrd_file"; then
    pass "config.txt: arm_64bit=1, kernel=$kernel_file and initramfs $initrd_file present on the boot partition"
else
    fail "config.txt: arm_64bit=1 / kernel ($kernel_file) / initramfs ($initrd_file) missing (see $run/config.txt)"
fi
cmdline=$(tr -d '\r\n' < "$run/cmdline.txt")
root_arg=$(tr ' ' '\n' <<< "$cmdline" | sed -n 's/^root=//p' | tail -n 1)
case "$root_arg" in
    LABEL=*) [ "${root_arg#LABEL=}" = "$root_label" ] && root_ok=yes || root_ok=no ;;
    PARTUUID=*) [ "${root_arg#PARTUUID=}" = "${label_id#0x}-02" ] && root_ok=yes || root_ok=no ;;
    *) root_ok=no ;;
esac
[ "$root_ok" = yes ] && grep -qw rootwait <<< "$cmdline" \
    && pass "cmdline.txt: root=$root_arg matches the root partition, rootwait ($cmdline)" \
    || fail "cmdline.txt: root=$root_arg does not match the partition table (label $root_label, id $label_id) or no rootwait: $cmdline"
# The boards docs/image.md claims: Pi 3 B/B+/A+, Zero 2 W (bcm2837/bcm2710), 4 B, 400, CM4 (bcm2711),
# 5 (bcm2712: C1, and D0 under Debian's and the firmware's name). The Pi 5's firmware is in its
# EEPROM: it needs only config.txt, the kernel, initramfs and its DTB here.
board_dtbs="bcm2837-rpi-3-b.dtb bcm2837-rpi-3-b-plus.dtb bcm2837-rpi-3-a-plus.dtb bcm2837-rpi-zero-2-w.dtb
            bcm2711-rpi-4-b.dtb bcm2711-rpi-400.dtb bcm2711-rpi-cm4-io.dtb
            bcm2712-rpi-5-b.dtb bcm2712-d-rpi-5-b.dtb bcm2712d0-rpi-5-b.dtb"
missing=""
for f in bootcode.bin start.elf fixup.dat start4.elf fixup4.dat $board_dtbs; do
    has_boot_file "$f" || missing="$missing $f"
done
[ -z "$missing" ] && pass "boot partition: firmware (bootcode.bin, start*.elf, fixup*.dat) and the DTBs of Pi 3 B/B+/A+, Zero 2 W, 4 B, 400, CM4, 5 (C1, D0)" \
    || fail "boot partition lacks:$missing"
# kernel= and initramfs apply to every board only outside a [filter] section (the Pi 5 included).
first_section=$(tr -d '\r' < "$run/config.txt" | grep -n '^\[' | grep -v '\[all\]' | head -n 1 | cut -d: -f1)
kernel_line=$(tr -d '\r' < "$run/config.txt" | grep -n '^kernel=' | tail -n 1 | cut -d: -f1)
initrd_line=$(tr -d '\r' < "$run/config.txt" | grep -n '^initramfs ' | tail -n 1 | cut -d: -f1)
[ -n "$kernel_line" ] && [ -n "$initrd_line" ] && { [ -z "$first_section" ] || (( kernel_line < first_section && initrd_line < first_section )); } \
    && pass "config.txt: kernel= and initramfs in no board section (lines $kernel_line, $initrd_line${first_section:+; first section at line $first_section}): every board, the Pi 5 included, boots them" \
    || fail "config.txt: kernel= (line ${kernel_line:-none}) or initramfs (line ${initrd_line:-none}) inside a board section (line $first_section)"
# Each board's device tree as its firmware hands it to the kernel: the header's GPIO controller, its
# line names or their absence, and each default LED line resolved as posewatch resolves it.
mkdir -p "$run/dtb"
for f in $board_dtbs; do mcopy -o -i "$fat" "::$f" "$run/dtb/$f" 2>> "$run/checks.log"; done
if (cd "$run/dtb" && python3 "$here/dtb_header_lines.py" $board_dtbs) > "$run/dtb-lines.txt" 2>&1; then
    pass "device trees: the six default LED lines resolve on every board's header controller (by name on Pi 3/4, by header number on the Pi 5's unnamed pinctrl-rp1)"
else
    fail "device trees: a default LED line resolves nowhere (see below)"
fi
sed 's/^/    /' "$run/dtb-lines.txt"
missing=""
for f in user-data meta-data posewatch.toml journal-upload.conf; do has_boot_file "$f" || missing="$missing $f"; done
[ -z "$missing" ] && pass "boot partition: the owner's files user-data, meta-data, posewatch.toml, journal-upload.conf" \
    || fail "boot partition lacks the owner's files:$missing"
kver=${kernel_file#vmlinuz-}
# The Pi 5's drivers: the SD host and BCM2712 pin/GPIO/interrupt controllers in the initramfs (the
# root is on the card), the RP1 (header GPIO, Ethernet, USB) in the root's modules.
mcopy -o -i "$fat" "::$initrd_file" "$run/initrd.img" 2>> "$run/checks.log"
# An initramfs-tools image is an uncompressed cpio (with the kernel's modules, themselves
# compressed) followed by a zstd one (the rest): list both.
initrd_blocks=$(cpio -it < "$run/initrd.img" 2>&1 >/dev/null | awk '/blocks/ {print $1}')
initrd_ko=$( { cpio -it < "$run/initrd.img" 2>/dev/null
               dd if="$run/initrd.img" bs=512 skip="${initrd_blocks:-0}" status=none | zstd -dc 2>/dev/null | cpio -it 2>/dev/null; } | grep -oE '(sdhci-brcmstb|pinctrl-brcmstb-bcm2712|gpio-brcmstb|irq-bcm2712-mip)\.ko' | sort -u | paste -sd' ')
root_ko=$(for d in misc/rp1 pinctrl clk; do debugfs -R "ls -p /usr/lib/modules/$kver/kernel/drivers/$d" "$image?offset=$root_off" 2>/dev/null; done \
          | grep -oE '(rp1_pci|pinctrl-rp1|clk-rp1)\.ko' | sort -u | paste -sd' ')
[ "$initrd_ko" = "gpio-brcmstb.ko irq-bcm2712-mip.ko pinctrl-brcmstb-bcm2712.ko sdhci-brcmstb.ko" ] && [ "$root_ko" = "clk-rp1.ko pinctrl-rp1.ko rp1_pci.ko" ] \
    && pass "Pi 5 drivers: initramfs has $initrd_ko; kernel $kver's modules have $root_ko" \
    || fail "Pi 5 drivers: initramfs has '${initrd_ko}', kernel $kver's modules '${root_ko}' (want the SD host, BCM2712 pinctrl/GPIO/MIP, RP1)"

# ------------------------------------------------------------------ 3. the owner's card
log "preparing the test card: first-boot files on the FAT partition, stand-in hardware in the root"
cp --sparse=always "$image" "$run/test.img"
# A 4 GiB "card": cloud-init must grow the root partition to it.
truncate -s 4G "$run/test.img"
fat="$run/test.img@@$boot_off"
rm -f "$run/id_ed25519"*; ssh-keygen -q -t ed25519 -N '' -C imagetest@host -f "$run/id_ed25519"
# What Raspberry Pi Imager's OS customisation writes (hostname, user in Raspberry Pi OS's groups
# with an SSH key and sudo, time zone), plus nothing Imager would not.
cat > "$run/user-data" <<USERDATA
#cloud-config
hostname: posewatch-imgtest
manage_etc_hosts: true
users:
- name: owner
  groups: users,adm,dialout,audio,netdev,video,plugdev,cdrom,games,input,gpio,spi,i2c,render,sudo
  shell: /bin/bash
  lock_passwd: true
  ssh_authorized_keys:
    - $(cat "$run/id_ed25519.pub")
  sudo: ALL=(ALL) NOPASSWD:ALL
timezone: Europe/London
USERDATA
printf 'instance-id: imagetest-%s\n' "$(date +%s)" > "$run/meta-data"
# A fixed address the DHCP server would never hand out (10.0.2.15 is QEMU's), so reaching it proves
# network-config was applied; and a Wi-Fi network in the form Imager writes (no `network:` wrapper,
# `wifis:` with renderer networkd; no radio in the VM: the check is that netplan set up
# wpa_supplicant for it).
cat > "$run/network-config" <<'NETCFG'
version: 2
ethernets:
  eth0:
    match:
      macaddress: "52:54:00:12:34:56"
    set-name: eth0
    dhcp4: false
    addresses: [10.0.2.50/24]
    routes:
      - to: default
        via: 10.0.2.2
wifis:
  renderer: networkd
  wlan0:
    dhcp4: true
    optional: true
    access-points:
      "posewatch-test-ssid":
        password: "imagetest-wifi-passphrase"
NETCFG
# The owner's posewatch.toml: the vivid camera, summaries every 4 s, a watchdog that waits out TCG.
cat > "$run/posewatch.toml" <<'TOML'
# posewatch image test
[camera]
device = "/dev/video0"
[journal]
summary_interval = 4
[watchdog]
max_stall = 60.0
TOML
printf '[Upload]\nURL=http://10.0.2.100:19532\n' > "$run/journal-upload.conf"
# QEMU's Raspberry Pi machines have no network card: their card gets the Wi-Fi network only, as
# Imager writes it for a Pi on Wi-Fi (an Ethernet section matching a MAC no device has would fail
# cloud-init's network stage).
[ "$machine" = virt ] || python3 - "$run/network-config" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
start = lines.index("ethernets:"); end = lines.index("wifis:")
open(sys.argv[1], "w").write("\n".join(lines[:start] + lines[end:]))
PY
for f in user-data meta-data network-config posewatch.toml journal-upload.conf; do
    mcopy -o -i "$fat" "$run/$f" "::$f" || fail "mcopy $f to the boot partition"
done
# What the image itself ships as identity (must be nothing: every card makes its own at first boot).
rootfs="$run/test.img?offset=$root_off"
image_mid=$(debugfs -R 'cat /etc/machine-id' "$rootfs" 2>/dev/null | tr -d '[:space:]')
image_keys=$(debugfs -R 'ls -l /etc/ssh' "$rootfs" 2>/dev/null | grep -o 'ssh_host_[a-z0-9]*_key[.a-z]*' | paste -sd' ')
mcopy -o -i "$fat" "::$kernel_file" "$run/vmlinuz"
mcopy -o -i "$fat" "::$initrd_file" "$run/initrd.img"
if [ "$machine" != virt ]; then
    raspi_boot
    echo "SUMMARY image-test machine=$machine pass=$passes fail=$fails total=$(( $(date +%s) - t_start ))s build=${build_s}s"
    echo "logs: $run (console.log, board.txt, checks.log)"
    [ "$fails" = 0 ]; return
fi
# Stand-in hardware (test copy only): the kernel's own gpio-sim (Linux 7.x from backports has it),
# else gpio-sim.ko for this kernel from run-system-test.sh's cache (Debian 13's 6.12 has none).
kcache=/var/cache/posewatch-ci/systest-arm64/kernel-$kver
gpio_sim_ko=""   # an out-of-tree gpio-sim.ko to copy in; empty when the kernel has its own
if ! debugfs -R "ls -p /usr/lib/modules/$kver/kernel/drivers/gpio" "$rootfs" 2>/dev/null | grep -q '/gpio-sim\.ko'; then
    gpio_sim_ko=$kcache/lib/modules/$kver/extra/gpio-sim.ko
    if [ ! -f "$gpio_sim_ko" ]; then
        log "gpio-sim.ko for $kver: run-system-test.sh arm64 --prepare-kernel"
        "$here/run-system-test.sh" arm64 --prepare-kernel > "$run/prepare-kernel.log" 2>&1 || true
    fi
fi
if [ -n "$gpio_sim_ko" ] && [ ! -f "$gpio_sim_ko" ]; then
    fail "no gpio-sim.ko for the image's kernel $kver (run-system-test.sh arm64 --prepare-kernel built $(ls -d /var/cache/posewatch-ci/systest-arm64/kernel-* 2>/dev/null | sed 's#.*/kernel-##'); rebuild the image with --refresh-rootfs for the same kernel)"
    echo "SUMMARY image-test pass=$passes fail=$fails (no boot)"; exit 1
fi
add_to_card imagetest-hardware ${gpio_sim_ko:+"write $gpio_sim_ko /usr/local/lib/imagetest/gpio-sim.ko"} \
    || { fail "could not add the stand-in hardware to the test card (see $run/debugfs.log)"; exit 1; }

# ------------------------------------------------------------------ 4. boot
jport=19532 sport=2222
while ss -ltn | grep -q ":$jport "; do jport=$((jport + 1)); done
while ss -ltn | grep -q ":$sport "; do sport=$((sport + 1)); done
mkdir -p "$run/remote"
/lib/systemd/systemd-journal-remote --listen-http="127.0.0.1:$jport" --output="$run/remote/" > "$run/journal-remote.log" 2>&1 &
remote_pid=$!
# The image's own command line, with the virt machine's serial console last (/dev/console).
append="$cmdline console=ttyAMA0"
q=(qemu-system-aarch64 -accel tcg -M virt -cpu cortex-a72 -smp 2 -m 2048 -display none -monitor none
   -serial "file:$run/console.log"
   -kernel "$run/vmlinuz" -initrd "$run/initrd.img" -append "$append"
   -drive "if=none,file=$run/test.img,format=raw,id=card" -device virtio-blk-pci,drive=card
   -netdev "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:$sport-10.0.2.50:22,guestfwd=tcp:10.0.2.100:19532-cmd:socat - TCP:127.0.0.1:$jport"
   -device virtio-net-pci,netdev=net0,mac=52:54:00:12:34:56)
printf '%q ' "${q[@]}" > "$run/qemu.cmd"; echo >> "$run/qemu.cmd"
log "booting under TCG (kernel $kver), limit ${vm_timeout}s"
t_boot=$(date +%s)
timeout --kill-after=10 "$vm_timeout" "${q[@]}" < /dev/null > "$run/qemu.out" 2>&1 &
qemu_pid=$!

ssh_opts=(-i "$run/id_ed25519" -p "$sport" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
          -o BatchMode=yes -o ConnectTimeout=10 -o LogLevel=ERROR)
g() { timeout 120 ssh "${ssh_opts[@]}" owner@127.0.0.1 "$@"; }
wait_ssh() {  # wait_ssh SECONDS: until the guest accepts our key
    local limit=$(( $(date +%s) + $1 ))
    while (( $(date +%s) < limit )); do
        kill -0 "$qemu_pid" 2>/dev/null || return 1
        g true 2>/dev/null && return 0
        sleep 5
    done
    return 1
}
echo "---- first boot"
if wait_ssh 720; then
    pass "first boot: SSH as 'owner' with the key from user-data accepted from the host after $(( $(date +%s) - t_boot )) s (fixed address 10.0.2.50 from network-config)"
else
    fail "first boot: no SSH login in 720 s (console: $run/console.log)"
    tail -n 30 "$run/console.log"
    echo "SUMMARY image-test pass=$passes fail=$fails"; exit 1
fi
# Let first-boot work settle (cloud-init's final stage, posewatch's start).
g 'timeout 300 cloud-init status --wait' > "$run/cloud-init-status.txt" 2>&1
g 'sudo systemctl is-system-running --wait' > "$run/system-running.txt" 2>&1
info_boot=$(g 'systemd-analyze 2>/dev/null | head -n 1')
echo "INFO: $info_boot; system $(cat "$run/system-running.txt"); cloud-init $(tr '\n' ' ' < "$run/cloud-init-status.txt")"
g 'sudo systemctl --failed --no-legend --plain' > "$run/failed-units.txt" 2>&1
state=$(tr -d '\n' < "$run/system-running.txt")
[ "$state" = running ] && [ ! -s "$run/failed-units.txt" ] \
    && pass "first boot: systemctl is-system-running says running, no failed unit" \
    || fail "first boot: system '$state', failed units: $(tr -s ' \n' ' ' < "$run/failed-units.txt")"

h=$(g hostname)
[ "$h" = posewatch-imgtest ] && pass "user-data: hostname $h" || fail "user-data: hostname '$h', want posewatch-imgtest"
groups=$(g id -nG)
for want in sudo adm video gpio; do grep -qw "$want" <<< "$groups" || missing_group="${missing_group:-} $want"; done
[ -z "${missing_group:-}" ] && g 'sudo -n true' && pass "user-data: user owner in Imager's groups ($groups), sudo without password" \
    || fail "user-data: user owner groups '$groups' (missing:${missing_group:-}) or no sudo"
auth=$(ssh -v -p "$sport" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
       -o PubkeyAuthentication=no -o PreferredAuthentications=password,keyboard-interactive owner@127.0.0.1 true 2>&1 \
       | sed -n 's/.*Authentications that can continue: //p' | head -n 1 | tr -d '\r ')
[ "$auth" = publickey ] && pass "SSH: keys only (the server offers '$auth')" || fail "SSH: the server offers '$auth', want publickey only"
addr=$(g ip -4 -o addr show dev eth0 | awk '{print $4}')
wpa=$(g 'sudo cat /run/netplan/wpa-wlan0.conf 2>/dev/null' | grep -c 'posewatch-test-ssid')
[ "$addr" = 10.0.2.50/24 ] && [ "$wpa" -ge 1 ] \
    && pass "network-config: eth0 $addr (fixed, not QEMU's DHCP 10.0.2.15); Wi-Fi network handed to wpa_supplicant (netplan wpa-wlan0.conf)" \
    || fail "network-config: eth0 '$addr', wpa_supplicant config for the Wi-Fi network: $wpa"
part_size=$(g 'lsblk -bno SIZE /dev/disk/by-label/RASPIROOT') fs_size=$(g 'df -B1 --output=size / | tail -n 1')
(( ${part_size:-0} > 3 * 1024 * 1024 * 1024 && ${fs_size:-0} > 3 * 1024 * 1024 * 1024 )) \
    && pass "root grown to the card: partition $(( part_size / 1048576 )) MiB, file system $(( fs_size / 1048576 )) MiB (4 GiB card)" \
    || fail "root not grown to the 4 GiB card: partition ${part_size:-?} B, file system ${fs_size:-?} B"
# As root (the partition is dmask 0077: the owner's user cannot even look), and only counted when
# root sees the partition's other files, so an unreadable or unmounted partition cannot pass.
g 'sudo test -f /boot/firmware/config.txt && sudo test ! -e /boot/firmware/posewatch.toml' 2>/dev/null; moved=$?
g 'sudo grep -q "^summary_interval = 4" /etc/posewatch/posewatch.toml' && [ "$moved" = 0 ] \
    && pass "posewatch.toml from the boot partition moved to /etc/posewatch/ ($(g 'journalctl -b -u posewatch-boot-config -o cat | grep applied | head -n 1'))" \
    || fail "posewatch.toml not moved from the boot partition to /etc/posewatch/"
mid=$(g cat /etc/machine-id | tr -d '[:space:]') hostkey=$(g 'ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub' | awk '{print $2}')
check_identity "" "$mid" "$hostkey"
g 'sudo /usr/lib/posewatch/install-model --check' > "$run/model-check.txt" 2>&1 \
    && pass "MoveNet baked in: $(tr -d '\n' < "$run/model-check.txt")" || fail "MoveNet: $(tr -d '\n' < "$run/model-check.txt")"
js=$(g 'systemctl is-active systemd-timesyncd systemd-networkd systemd-resolved avahi-daemon ssh' | paste -sd' ')
[ "$js" = "active active active active active" ] && pass "services: timesyncd, networkd, resolved, avahi, ssh active" || fail "services: $js"
jdir=$(g 'ls -d /var/log/journal/$(cat /etc/machine-id) 2>/dev/null') jmax=$(g 'systemd-analyze cat-config systemd/journald.conf | sed -n "s/^SystemMaxUse=//p" | tail -n 1')
[ -n "$jdir" ] && [ "$jmax" = 64M ] && pass "journal: persistent ($jdir), SystemMaxUse=$jmax" || fail "journal: dir '$jdir', SystemMaxUse '$jmax'"

echo "---- posewatch"
ready=no
for i in $(seq 1 60); do
    st=$(g 'systemctl show -p ActiveState,SubState,StatusText,NRestarts posewatch | paste -sd" "')
    case "$st" in *ActiveState=active*SubState=running*) ready=yes; break ;; esac
    sleep 5
done
[ "$ready" = yes ] && pass "posewatch READY (Type=notify, started at boot): $st" || fail "posewatch not READY: $st"
g 'sudo bash -s' < "$here/guest/imagetest-leds.sh" > "$run/leds.txt" 2>&1
if grep -q '^PASS:' "$run/leds.txt"; then pass "$(sed -n 's/^PASS: //p' "$run/leds.txt")"; else fail "$(sed -n 's/^FAIL: //p' "$run/leds.txt")$(grep -v '^FAIL' "$run/leds.txt" | head -n 2)"; fi
sleep 8
g 'journalctl -u posewatch -o json --no-pager' > "$run/posewatch-journal.json" 2>&1
n=$(jq -r 'select(.SYSLOG_IDENTIFIER == "posewatch") | .MESSAGE' "$run/posewatch-journal.json" 2>/dev/null | wc -l)
nsum=$(jq -r 'select(.POSEWATCH_EVENT == "summary") | .MESSAGE' "$run/posewatch-journal.json" 2>/dev/null | wc -l)
(( n > 0 && nsum > 0 )) && pass "ssh … journalctl -u posewatch -o json from the host: $n posewatch entries, $nsum summaries (POSEWATCH_EVENT=summary)" \
    || fail "ssh … journalctl -u posewatch -o json: $n posewatch entries, $nsum summaries"
up_state=$(g 'systemctl show -p ActiveState,SubState,NRestarts systemd-journal-upload | paste -sd" "')
got=0
for i in $(seq 1 24); do
    got=$(journalctl --directory="$run/remote" SYSLOG_IDENTIFIER=posewatch -o json 2>/dev/null | jq -r '._HOSTNAME' | grep -c posewatch-imgtest)
    (( got > 0 )) && break
    sleep 5
done
(( got > 0 )) && pass "journal upload: systemd-journal-remote on the host received $got posewatch entries from posewatch-imgtest ($up_state)" \
    || fail "journal upload: no posewatch entries reached systemd-journal-remote ($up_state; $run/journal-remote.log)"

echo "---- the card's security"
wifi=$(g 'sudo grep -rl imagetest-wifi-passphrase /boot/firmware' 2>/dev/null | paste -sd' ')
kept=$(g "sudo sh -c 'stat -c \"%a %U\" /var/lib/posewatch-image /var/lib/posewatch-image/network-config.*'" 2>/dev/null | paste -sd' ')
[ -z "$wifi" ] && [[ "$kept" == "700 root "*"600 root" ]] \
    && pass "Wi-Fi passphrase: off the boot partition after first boot, kept root-only ($kept; $(g 'journalctl -b -u posewatch-secure-boot-partition -o cat' | grep -m1 '^moved' | cut -c1-80)…)" \
    || fail "Wi-Fi passphrase: still on the boot partition in '$wifi', or not kept root-only: '$kept'"
pw=$(g "sudo awk -F: '\$2 !~ /^[!*]/ { print \$1 }' /etc/shadow" | paste -sd' ')
nacc=$(g 'sudo wc -l /etc/shadow' | awk '{print $1}')
[ -z "$pw" ] && (( ${nacc:-0} > 10 )) && pass "accounts: none of the $nacc has a usable or empty password (owner's user-data sets none)" \
    || fail "accounts with a usable or empty password: '$pw' (of ${nacc:-?})"
llmnr=$(g 'resolvectl llmnr' | paste -sd' ') llport=$(g 'ss -Hlnu sport = :5355' | wc -l)
[[ "$llmnr" == *": no"* && "$llmnr" != *": yes"* && "$llport" = 0 ]] && pass "LLMNR off: $llmnr; nothing listens on UDP 5355" \
    || fail "LLMNR: '$llmnr', $llport sockets on UDP 5355"
warn=$(g 'journalctl -b -u posewatch-boot-config -p warning -o cat' | grep -m1 'plain http')
[ -n "$warn" ] && pass "journal-upload.conf with http://: applied with a warning in the journal: ${warn:0:100}…" \
    || fail "journal-upload.conf with http://: no warning in posewatch-boot-config's journal"

echo "---- a bad posewatch.toml on the boot partition, then a reboot"
boot_id=$(g cat /proc/sys/kernel/random/boot_id)
printf '[camera]\nfps = 30\n' | g 'sudo tee /boot/firmware/posewatch.toml >/dev/null'
g 'sudo systemctl reboot' >/dev/null 2>&1
sleep 20
t_reboot=$(date +%s)
if wait_ssh 600; then
    new_boot_id=$(g cat /proc/sys/kernel/random/boot_id) new_mid=$(g cat /etc/machine-id | tr -d '[:space:]')
    [ -n "$boot_id" ] && [ -n "$new_boot_id" ] && [ "$new_boot_id" != "$boot_id" ] && [ "$new_mid" = "$mid" ] \
        && pass "bad posewatch.toml: the board rebooted (boot_id $boot_id → $new_boot_id, machine-id kept) and is reachable over SSH at the fixed address after $(( $(date +%s) - t_reboot + 20 )) s (network-config no longer on the card)" \
        || fail "bad posewatch.toml: after the reboot boot_id '$boot_id' → '$new_boot_id', machine-id '$mid' → '$new_mid'"
    sleep 10
    for i in $(seq 1 12); do
        st=$(g 'systemctl show -p ActiveState,Result,ExecMainStatus,NRestarts posewatch | paste -sd" "')
        case "$st" in *ExecMainStatus=78*) break ;; esac
        sleep 5
    done
    # posewatch writes it to stderr, which journald stores under the unit at the stream's priority.
    line=$(g 'journalctl -b -u posewatch -o cat --no-pager' | grep -m1 'posewatch\.toml:2: ')
    [[ "$st" == *ExecMainStatus=78* && "$st" == *NRestarts=0* && -n "$line" ]] \
        && pass "bad posewatch.toml: posewatch stopped with 78, not restarted; journal: $line" \
        || fail "bad posewatch.toml: $st; journal line '$line'"
    doc=$(g 'posewatch doctor 2>&1' | grep -m1 'posewatch.toml:')
    [[ "$doc" == */etc/posewatch/posewatch.toml:2* ]] && pass "bad posewatch.toml: posewatch doctor names the file and line: $doc" \
        || fail "bad posewatch.toml: posewatch doctor says '$doc', want /etc/posewatch/posewatch.toml:2"
    g 'sudo systemctl poweroff' >/dev/null 2>&1
else
    fail "bad posewatch.toml: the board did not come back over SSH in 600 s after the reboot"
fi
wait "$qemu_pid" 2>/dev/null; qemu_pid=""
# The card as a thief would read it: the FAT partition's raw bytes, deleted clusters included.
p1_size=$(part 0 size)
raw=$(dd if="$run/test.img" bs=512 skip="$p1_start" count="${p1_size:-0}" status=none | grep -a -c imagetest-wifi-passphrase)
[ -n "$p1_size" ] && [ "$raw" = 0 ] && pass "Wi-Fi passphrase: not in the boot partition's raw bytes after power-off (deleted clusters included)" \
    || fail "Wi-Fi passphrase: $raw raw matches in the boot partition after power-off"
echo "SUMMARY image-test machine=virt pass=$passes fail=$fails total=$(( $(date +%s) - t_start ))s build=${build_s}s vm=$(( $(date +%s) - t_boot ))s"
echo "logs: $run (console.log, checks.log, posewatch-journal.json, remote/)"
[ "$fails" = 0 ]
}
# add_to_card NAME [DEBUGFS-COMMAND...]: puts guest/NAME.sh and guest/NAME.service into the test
# card's root and enables the unit (debugfs writes into the ext4 root inside the image file: no loop
# device, no mount), with any further debugfs commands; fails when the unit did not land.
add_to_card() {
    local name=$1; shift
    { echo "mkdir /usr/local/lib/imagetest"
      printf '%s\n' "$@"
      echo "write $here/guest/$name.sh /usr/local/lib/imagetest/$name.sh"
      echo "write $here/guest/$name.service /etc/systemd/system/$name.service"
      echo "symlink /etc/systemd/system/multi-user.target.wants/$name.service /etc/systemd/system/$name.service"
    } > "$run/debugfs.cmd"
    debugfs -w -f "$run/debugfs.cmd" "$rootfs" > "$run/debugfs.log" 2>&1
    debugfs -R "stat /etc/systemd/system/$name.service" "$rootfs" 2>/dev/null | grep -q 'Type: regular'
}

# check_identity PREFIX MACHINE-ID HOST-KEY-FINGERPRINT: per-card identity. None in the image (read
# from it before the boot), made on this card's first boot, and different from every earlier test
# card's (kept in $work/identities: two copies of one image must not share a machine-id or a host
# key); this card's is added to the list.
check_identity() {
    local prefix=$1 mid=$2 hostkey=$3 seen earlier
    seen=$(grep -c -e "^$mid " -e " ${hostkey:-none}\$" "$work/identities" 2>/dev/null)
    earlier=$(cat "$work/identities" 2>/dev/null | wc -l)
    if [[ "$mid" =~ ^[0-9a-f]{32}$ ]] && [[ "$hostkey" == SHA256:* ]] && [ -z "$image_mid$image_keys" ] && [ "${seen:-0}" = 0 ]; then
        pass "${prefix}per-card identity: the image ships no machine-id and no SSH host key; this card made machine-id $mid and host key $hostkey, unlike the $earlier earlier test cards"
    else
        fail "${prefix}per-card identity: image machine-id '$image_mid', host keys '$image_keys'; card machine-id '$mid', host key '$hostkey', seen on ${seen:-0} earlier cards"
    fi
    [ -n "$mid" ] && [ -n "$hostkey" ] && echo "$mid $hostkey" >> "$work/identities"
}

# raspi_boot: the test card on QEMU's Raspberry Pi machine ($machine) with the Pi's own device tree,
# SD host and GPIO driver. QEMU boots the image's kernel, initrd and cmdline.txt directly with the
# board's DTB from the boot partition (the VideoCore firmware stage, which reads config.txt, is not
# emulated: the static checks cover it). No network reaches these guests: imagetest-board.sh checks
# the board inside and prints marked lines on the serial console (the mini UART, ttyS1, as on a
# real Pi whose PL011 serves Bluetooth), which this reads back.
raspi_boot() {
    local dtb qemu_prefix=() mem=() run_in=$run
    case "$machine" in
        raspi3b) dtb=bcm2837-rpi-3-b.dtb ;;
        raspi4b) dtb=bcm2711-rpi-4-b.dtb mem=(-m 2G) ;;
    esac
    mcopy -o -i "$fat" "::$dtb" "$run/board.dtb" || { fail "$dtb not on the boot partition"; return; }
    add_to_card imagetest-board || { fail "could not add the board checks to the test card (see $run/debugfs.log)"; return; }
    # raspi4b needs QEMU 9 or newer (bookworm's is 7.2): it runs from the Debian 13 root of the
    # project's trixie check (.ci/check-trixie.sh makes it), with trixie's qemu-system-arm added.
    local qemu=qemu-system-aarch64
    if [ "$machine" = raspi4b ] && ! qemu-system-aarch64 -M help | grep -qw raspi4b; then
        local troot=${POSEWATCH_CI_CACHE:-/var/cache/posewatch-ci}/trixie-amd64
        [ -d "$troot/usr" ] || { fail "raspi4b: bookworm's QEMU has no raspi4b and there is no Debian 13 root at $troot (.ci/check-trixie.sh makes it)"; return; }
        if [ ! -x "$troot/usr/bin/qemu-system-aarch64" ]; then
            log "raspi4b: installing trixie's qemu-system-arm into $troot"
            unshare --mount --propagation private -- sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" sh -c "DEBIAN_FRONTEND=noninteractive apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-system-arm"' "$troot" > "$run/qemu-install.log" 2>&1 \
                || { fail "raspi4b: could not install qemu-system-arm in $troot (see $run/qemu-install.log)"; return; }
        fi
        mkdir -p "$troot/imagetest-run"
        qemu_prefix=(unshare --mount --propagation private -- sh -c 'mount --bind "$1" "$0/imagetest-run" && mount -t proc proc "$0/proc" && shift 1 && exec chroot "$0" "$@"' "$troot" "$run")
        run_in=/imagetest-run
    fi
    log "booting $machine ($(${qemu_prefix[@]+"${qemu_prefix[@]}"} $qemu --version | head -n 1)), kernel $kver, DTB $dtb, limit ${vm_timeout}s"
    local q=($qemu -M "$machine" "${mem[@]+"${mem[@]}"}" -display none -monitor none -serial null -serial "file:$run_in/console.log"
             -kernel "$run_in/vmlinuz" -initrd "$run_in/initrd.img" -dtb "$run_in/board.dtb"
             -append "$cmdline console=ttyS1,115200"
             -drive "if=sd,format=raw,file=$run_in/test.img")
    printf '%q ' "${qemu_prefix[@]+"${qemu_prefix[@]}"}" "${q[@]}" > "$run/qemu.cmd"; echo >> "$run/qemu.cmd"
    t_boot=$(date +%s)
    timeout --kill-after=10 "$vm_timeout" ${qemu_prefix[@]+"${qemu_prefix[@]}"} "${q[@]}" < /dev/null > "$run/qemu.out" 2>&1 &
    qemu_pid=$!
    while kill -0 "$qemu_pid" 2>/dev/null; do
        grep -q 'IMAGETEST DONE' "$run/console.log" 2>/dev/null && break
        sleep 5
    done
    sleep 3; kill "$qemu_pid" 2>/dev/null; wait "$qemu_pid" 2>/dev/null; qemu_pid=""
    tr -d '\r' < "$run/console.log" | sed -n 's/.*IMAGETEST //p' > "$run/board.txt"
    if ! grep -q '^DONE' "$run/board.txt"; then
        fail "$machine: the board checks did not finish in ${vm_timeout}s (console: $run/console.log; $(tail -n 3 "$run/qemu.out" | paste -sd' '))"
        tail -n 30 "$run/console.log"; return
    fi
    grep -E '^(INFO|doctor):' "$run/board.txt" | sed 's/^/    /'
    while IFS= read -r l; do pass "$machine: ${l#PASS: }"; done < <(grep '^PASS: ' "$run/board.txt")
    while IFS= read -r l; do fail "$machine: ${l#FAIL: }"; done < <(grep '^FAIL: ' "$run/board.txt")
    grep -q '^PASS: ' "$run/board.txt" || fail "$machine: no check passed"
    # Another copy of the image: its identity must differ from every earlier card's.
    local id
    id=$(sed -n 's/^IDENTITY //p' "$run/board.txt" | head -n 1)
    check_identity "$machine: " "${id%% *}" "$(awk '{print $2}' <<< "$id")"
    echo "INFO: $machine: board checks done after $(( $(date +%s) - t_boot )) s"
}
main "$@"; exit

#!/usr/bin/env bash
# deploy/image/check-recipe.sh: fast static check of the Raspberry Pi image recipe (run by .ci/run;
# building and booting the image is Tests/System/run-image-test.sh, which takes far longer).
# One PASS:/FAIL: line per check and a closing "N passed, N failed" line; exit 1 on any failure.
# Checks that the pieces agree with each other (labels, paths, packages), that the scripts parse,
# and runs apply-boot-config (the boot-partition settings) on scratch directories.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
passes=0 fails=0
pass() { echo "PASS: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Scripts parse.
bad=""
for f in "$here/build.sh" "$here/configure-in-root.sh" "$here/rootfs/usr/lib/posewatch-image/apply-boot-config" \
         "$here/early/initramfs-hook-boards" "$here/rootfs/etc/kernel/postinst.d/z51-posewatch-pi5-dtb" \
         "$repo/Tests/System/guest/imagetest-board.sh" \
         "$here/rootfs/usr/lib/posewatch-image/secure-boot-partition" \
         "$repo/Tests/System/run-image-test.sh" "$repo/Tests/System/guest/imagetest-hardware.sh" \
         "$repo/Tests/System/guest/imagetest-leds.sh"; do
    case "$(head -n 1 "$f")" in *bash*) bash -n "$f" 2>/dev/null || bad="$bad $f" ;; *) sh -n "$f" 2>/dev/null || bad="$bad $f" ;; esac
done
[ -z "$bad" ] && pass "image scripts parse (bash -n / sh -n)" || fail "syntax errors in:$bad"

# The package list: what the image promises is in it, and nothing twice.
pkgs=$(grep -v '^#' "$here/debian-packages" | grep -v '^[[:space:]]*$')
missing=""
for p in linux-image-arm64 raspi-firmware firmware-brcm80211 systemd-sysv systemd-timesyncd systemd-journal-remote \
         wpasupplicant netplan.io cloud-init cloud-guest-utils openssh-server avahi-daemon libgpiod3 libv4l-0t64; do
    grep -qx "$p" <<< "$pkgs" || missing="$missing $p"
done
dups=$(sort <<< "$pkgs" | uniq -d | paste -sd' ')
odd=$(grep -v '^[a-z0-9][a-z0-9+.-]*$' <<< "$pkgs" | paste -sd' ')
[ -z "$missing$dups$odd" ] && pass "debian-packages: $(wc -l <<< "$pkgs") packages, the promised ones present" \
    || fail "debian-packages: missing:${missing:- none}; twice: ${dups:-none}; not a package name: ${odd:-none}"

# Labels: genimage makes RASPIFIRM/RASPIROOT; fstab, raspi-firmware's ROOTPART and cloud-init's
# NoCloud fs_label must name the same ones, and the boot partition must be MBR FAT32 (0x0C).
cfg=$here/genimage.cfg.in conf=$here/configure-in-root.sh
grep -q 'label = "RASPIFIRM"' "$cfg" && grep -q 'label = "RASPIROOT"' "$cfg" \
  && grep -q '^LABEL=RASPIROOT  */  ' "$conf" && grep -q '^LABEL=RASPIFIRM  */boot/firmware  *vfat' "$conf" \
  && grep -q 'ROOTPART=LABEL=RASPIROOT' "$conf" \
  && grep -q 'fs_label: RASPIFIRM' "$here/rootfs/etc/cloud/cloud.cfg.d/60-posewatch.cfg" \
  && grep -q 'mountpoint = "/boot/firmware"' "$cfg" \
  && grep -q 'partition-table-type = "mbr"' "$cfg" && grep -q 'partition-type = 0x0C' "$cfg" \
  && pass "labels agree: genimage RASPIFIRM/RASPIROOT = fstab = raspi-firmware ROOTPART = cloud-init fs_label; MBR, FAT32 0x0C" \
  || fail "labels or partition types disagree between genimage.cfg.in, configure-in-root.sh and the cloud-init config"

# Units: every ExecStart names a program the image has (ours in rootfs/, or Debian's).
bad=""
for u in "$here"/rootfs/etc/systemd/system/*.service "$repo"/Tests/System/guest/imagetest-hardware.service; do
    grep -q '^\[Service\]' "$u" || bad="$bad $(basename "$u"):no-[Service]"
    for prog in $(sed -n 's/^ExecStart=[-@!+]*\([^ ]*\).*/\1/p' "$u"); do
        case "$prog" in
            /usr/lib/posewatch-image/*) [ -x "$here/rootfs$prog" ] || bad="$bad $(basename "$u"):$prog" ;;
            /usr/bin/ssh-keygen|/bin/sh|/usr/lib/systemd/systemd-networkd-wait-online) ;;
            *) bad="$bad $(basename "$u"):$prog(unknown)" ;;
        esac
    done
done
# Every unit of the image's own with an [Install] section is named by a `systemctl enable` command
# of configure-in-root.sh: the commands themselves, continuation lines joined, comments left out (a
# mention in a comment enables nothing).
enabled=$(sed -e '/^[[:space:]]*#/d' -e 's/[[:space:]]#.*$//' "$conf" | sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' \
    | sed -n 's/^[[:space:]]*systemctl[[:space:]]\{1,\}enable[[:space:]]\{1,\}//p' | tr -s ' \t' '\n\n')
own=0
for u in "$here"/rootfs/etc/systemd/system/*.service; do
    grep -q '^\[Install\]' "$u" || continue
    own=$((own + 1))
    grep -qx "$(basename "$u")" <<< "$enabled" || bad="$bad $(basename "$u"):not-enabled"
done
[ "$own" -gt 0 ] || bad="$bad no-unit-with-[Install]"
[ -z "$bad" ] && pass "units: ExecStart programs exist, the image's $own own units are enabled by configure-in-root.sh's systemctl enable" || fail "units:$bad"

# user-data and meta-data on the boot partition are valid cloud-config YAML.
if python3 -c 'import yaml' 2>/dev/null; then
    out=$(python3 - "$here/boot/user-data" "$here/boot/meta-data" <<'PY' 2>&1
import sys, yaml
ud = open(sys.argv[1]).read()
assert ud.startswith("#cloud-config\n"), "user-data must start with #cloud-config"
d = yaml.safe_load(ud)
assert isinstance(d, dict) and d.get("hostname") == "posewatch", f"user-data hostname: {d!r}"
m = yaml.safe_load(open(sys.argv[2]))
assert isinstance(m, dict) and m.get("instance-id"), f"meta-data needs an instance-id: {m!r}"
PY
    ) && pass "boot/user-data and boot/meta-data: valid cloud-config (hostname posewatch, an instance-id)" || fail "boot/user-data, meta-data: $out"
else
    fail "python3-yaml is missing: cannot check boot/user-data"
fi

# apply-boot-config, run on scratch directories as the board runs it at boot.
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/boot" "$t/etc/posewatch"
printf '[camera]\r\ndevice = "/dev/video0"\r\n' > "$t/boot/posewatch.toml"
echo 'old = 1' > "$t/etc/posewatch/posewatch.toml"
cp "$here/boot/journal-upload.conf" "$t/boot/journal-upload.conf"
POSEWATCH_BOOT_DIR=$t/boot POSEWATCH_ETC_DIR=$t/etc "$here/rootfs/usr/lib/posewatch-image/apply-boot-config" > "$t/out1" 2>&1; rc1=$?
printf '[Upload]\nURL=http://collector.invalid:19532\n' > "$t/boot/journal-upload.conf"
POSEWATCH_BOOT_DIR=$t/boot POSEWATCH_ETC_DIR=$t/etc "$here/rootfs/usr/lib/posewatch-image/apply-boot-config" > "$t/out2" 2>&1; rc2=$?
if [ $rc1 = 0 ] && [ $rc2 = 0 ] && [ ! -e "$t/boot/posewatch.toml" ] \
   && [ "$(cat "$t/etc/posewatch/posewatch.toml")" = $'[camera]\ndevice = "/dev/video0"' ] \
   && [ "$(cat "$t/etc/posewatch/posewatch.toml.previous")" = 'old = 1' ] \
   && grep -q 'no URL= line' "$t/out1" \
   && [ ! -e "$t/boot/journal-upload.conf" ] && grep -q '^URL=http://collector.invalid:19532$' "$t/etc/systemd/journal-upload.conf.d/60-boot-partition.conf"; then
    pass "apply-boot-config: posewatch.toml moved (CRLF → LF, previous kept), journal-upload.conf applied only with a URL"
else
    fail "apply-boot-config: exit $rc1/$rc2; $(cat "$t/out1" "$t/out2" | paste -sd' ')"
fi

# The http:// URL above was applied with a warning at warning priority (journald reads the <4>).
grep -q '^<4>warning: journal-upload.conf: http://collector.invalid:19532 is plain http' "$t/out2" \
    && pass "apply-boot-config: a plain http:// journal-upload URL is applied with a warning for the journal" \
    || fail "apply-boot-config: no warning for a plain http:// URL: $(cat "$t/out2" | paste -sd' ')"

# secure-boot-partition: network-config (the Wi-Fi passphrase) leaves the boot partition once
# cloud-init applied it: copied root-only into the root file system, overwritten, removed.
s=$t/secure; mkdir -p "$s/boot" "$s/cloud/data"
printf 'instance-id: card-1\r\n' > "$s/boot/meta-data"; echo card-1 > "$s/cloud/data/instance-id"
printf 'version: 2\r\nwifis:\r\n  wlan0:\r\n    access-points:\r\n      "home": {password: "correct horse"}\r\n' > "$s/boot/network-config"
secure() { POSEWATCH_BOOT_DIR=$s/boot POSEWATCH_SECRETS_DIR=$s/keep POSEWATCH_CLOUD_DIR=$s/cloud \
           "$here/rootfs/usr/lib/posewatch-image/secure-boot-partition"; }
secure > "$s/out1" 2>&1; rc1=$?
printf 'version: 2\n' > "$s/boot/network-config"; echo card-0 > "$s/cloud/data/instance-id"
secure > "$s/out2" 2>&1; rc2=$?
if [ $rc1 = 0 ] && [ $rc2 = 0 ] && [ ! -e "$s/boot/network-config" ] && [ "$(stat -c %a "$s/keep")" = 700 ] \
   && [ "$(stat -c %a "$s/keep/network-config.card-1")" = 600 ] && grep -q 'password: "correct horse"}$' "$s/keep/network-config.card-1" \
   && grep -q '^moved .*applied by cloud-init for instance card-1' "$s/out1" \
   && grep -q "^<4>moved .*cloud-init did not apply it (instance 'card-0', meta-data says 'card-1')" "$s/out2" \
   && [ "$(cat "$s/keep/network-config.card-0")" = 'version: 2' ]; then
    pass "secure-boot-partition: network-config moved off the boot partition (0600 in a 0700 directory), a file cloud-init did not apply moved with a warning"
else
    fail "secure-boot-partition: exit $rc1/$rc2; $(cat "$s/out1" "$s/out2" | paste -sd' '); $(ls -la "$s/boot" "$s/keep" 2>&1 | paste -sd' ')"
fi

# Name resolution the appliance does not need stays off (LLMNR answers and can be spoofed by anyone
# on the network); the build locks every account without a password the owner set.
grep -qx 'LLMNR=no' "$here/rootfs/etc/systemd/resolved.conf.d/60-posewatch.conf" \
  && grep -q "^passwd -l root" "$conf" && grep -q "awk -F: '\$2 !~ /^\[!\*\]/" "$conf" \
  && pass "LLMNR off (resolved.conf.d), root locked and no usable password checked at build" \
  || fail "resolved.conf.d LLMNR=no, or configure-in-root.sh's account lock and check, missing"

# The kernel: Linux 7.x from trixie-backports on every board (the Pi 5's RP1 and SD host drivers),
# pinned for the kernel packages only, the source in mmdebstrap's list; the Pi 5's early drivers in
# the initramfs; the D0 tree copied under the firmware's name after raspi-firmware's hook.
pin=$here/early/apt-preferences-kernel
z51=$here/rootfs/etc/kernel/postinst.d/z51-posewatch-pi5-dtb
mkdir -p "$t/fw"; echo d0 > "$t/fw/bcm2712-d-rpi-5-b.dtb"; POSEWATCH_BOOT_DIR=$t/fw "$z51"; rc=$?
mkdir -p "$t/fw-old"; POSEWATCH_BOOT_DIR=$t/fw-old "$z51"; rc_old=$?
if grep -qx 'Pin: release n=trixie-backports' "$pin" && grep -qx 'Pin-Priority: 990' "$pin" \
   && grep -qx 'Package: linux-image-arm64 linux-image-\*-arm64 linux-binary-\*-arm64 linux-modules-\*-arm64 linux-base-\*-arm64 linux-base' "$pin" \
   && grep -q '"deb $mirror trixie-backports main"' "$here/build.sh" && grep -q 'early/apt-preferences-kernel' "$here/build.sh" \
   && grep -q 'early/initramfs-hook-boards' "$here/build.sh" && grep -q 'manual_add_modules' "$here/early/initramfs-hook-boards" \
   && grep -qw sdhci-brcmstb "$here/early/initramfs-hook-boards" \
   && [ $rc = 0 ] && [ "$(cat "$t/fw/bcm2712d0-rpi-5-b.dtb")" = d0 ] && [ $rc_old = 0 ] && [ -z "$(ls "$t/fw-old")" ] \
   && grep -q '^/etc/kernel/postinst.d/z51-posewatch-pi5-dtb$' "$conf"; then
    pass "kernel from trixie-backports (pinned: kernel packages only), Pi 5 SD drivers in the initramfs, the D0 tree copied as bcm2712d0-rpi-5-b.dtb"
else
    fail "kernel pin ($pin), backports source in build.sh, initramfs hook or the z51 DTB hook (exit $rc/$rc_old) disagree"
fi

# cloud-init must find the boot partition already mounted read-write at /boot/firmware.
ok=yes
for u in cloud-init-main cloud-init-local; do
    grep -qx 'RequiresMountsFor=/boot/firmware' "$here/rootfs/etc/systemd/system/$u.service.d/60-posewatch.conf" 2>/dev/null || ok=no
done
[ $ok = yes ] && pass "cloud-init (main and local stage) waits for /boot/firmware to be mounted" \
    || fail "cloud-init-main/-local drop-ins with RequiresMountsFor=/boot/firmware missing"

echo "image recipe: $passes passed, $fails failed"
[ "$fails" = 0 ]

#!/bin/bash
# imagetest-board: the image boot test on QEMU's Raspberry Pi machines (raspi3b, raspi4b), where the
# host has no network path into the guest. Put into the test copy of the image only (with
# imagetest-board.service) by Tests/System/run-image-test.sh; it waits until posewatch has run for a
# while, checks the board as the Pi's own device tree and GPIO driver present it, and prints one
# marked line per check on the serial console ("IMAGETEST PASS: …", "IMAGETEST FAIL: …", then
# "IMAGETEST DONE pass=N fail=N"), which the host reads from QEMU's serial log.
#
# No camera exists on these machines: posewatch must take its camera-lost path (one journal line,
# the status LED blinking fast, no restart), holding every default LED line on the real pinctrl chip.
set -u
passes=0 fails=0
say() { echo "IMAGETEST $*"; }
pass() { say "PASS: $*"; passes=$((passes + 1)); }
fail() { say "FAIL: $*"; fails=$((fails + 1)); }
status_led=GPIO25
leds="GPIO25 GPIO17 GPIO27 GPIO22 GPIO23 GPIO24"   # deploy/posewatch.toml's defaults: status, then the five actions

say "INFO: $(tr -d '\0' < /proc/device-tree/model), kernel $(uname -r), $(nproc) CPUs, up $(cut -d' ' -f1 /proc/uptime) s"
# 1. The root file system is the SD card's second partition, behind the Pi's own SD host driver.
src=$(findmnt -no SOURCE /)
disk=${src#/dev/}; disk=${disk%p[0-9]*}
card=$(readlink -f "/sys/block/$disk/device")                 # …/<host controller>/mmc_host/mmc0/mmc0:0001
host="$(basename "$(readlink -f "$card/../../../driver")") at $(basename "$(readlink -f "$card/../../..")")"
[[ "$src" =~ ^/dev/mmcblk[0-9]p2$ ]] && pass "root from the SD card: $src (host controller driver $host)" || fail "root is '$src', not the SD card's second partition"

# 2. posewatch started and has run at least 60 s (camera-lost retries included) without a restart.
for _ in $(seq 1 120); do
    since=$(systemctl show -p ActiveEnterTimestampMonotonic --value posewatch)
    now=$(( $(cut -d. -f1 /proc/uptime) * 1000000 ))
    [ "$(systemctl is-active posewatch)" = active ] && (( since > 0 && now - since >= 60000000 )) && break
    sleep 5
done
st=$(systemctl show -p ActiveState,SubState,NRestarts,ExecMainStatus,StatusText posewatch | paste -sd' ')
[[ "$st" == *ActiveState=active*SubState=running* && "$st" == *NRestarts=0* ]] \
    && pass "posewatch started at boot and kept running: $st" || fail "posewatch: $st"
lost=$(journalctl -b -u posewatch -o cat | grep -c 'camera lost: ')
line=$(journalctl -b -u posewatch -o cat | grep -m1 'camera lost: ')
[ "$lost" = 1 ] && pass "camera-lost path: one journal line, '$line'" || fail "camera-lost path: $lost 'camera lost' lines in the journal"

# 3. Every default LED line on the real pinctrl chip, held by posewatch.
read -r chip label < <(gpiodetect | awk '/\[pinctrl-(bcm2835|bcm2711|rp1)\]/ {gsub(/[][]/, "", $2); print $1, $2; exit}')
gpioinfo -c "$chip" > /run/imagetest-gpioinfo 2>&1 || gpioinfo "$chip" > /run/imagetest-gpioinfo 2>&1
held="" missing=""
for led in $leds; do
    n=${led#GPIO}
    row=$(awk -v n="$n" '$1 == "line" && ($2 == n":" || $2 == n) {print; exit}' /run/imagetest-gpioinfo)
    if [[ "$row" == *'"posewatch"'* || "$row" == *'consumer="posewatch"'* ]]; then held="$held $led"; else missing="$missing $led($row)"; fi
done
[ -n "$chip" ] && [ -z "$missing" ] \
    && pass "LED lines on $chip [$label], the real pinctrl driver: every default line held by posewatch:$held" \
    || fail "LED lines on '${chip:-no pinctrl chip}' [$label]: not held by posewatch:$missing"
say "INFO: gpioinfo $chip: $(grep -E 'line +(4|17|22|23|24|25|27):' /run/imagetest-gpioinfo | tr -s ' \t' ' ' | paste -sd';')"

# 4. The status LED's line as the kernel sees it (GPIO debugfs), sampled 12 s: a fast blink (5 Hz,
#    half on) gives about 60 rises; a heartbeat (two 100 ms pulses per 1.5 s) at most 16, on 13 %.
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
# The debugfs row of the status line: the chip's block starts "gpiochipN: GPIOs BASE-END, …".
base=$(sed -n "s/^$chip: GPIOs \([0-9]*\)-.*/\1/p" /sys/kernel/debug/gpio)
want="gpio-$(( ${base:-0} + ${status_led#GPIO} )) "
# Sampled without forking (bash reads the file itself), so a 5 Hz blink is not aliased away. The
# row reads " gpio-25  (GPIO25 |posewatch ) out hi " (gpiolib pads it: the level is not the last word).
sample() {
    local l; v=""
    while IFS= read -r l; do
        [[ "$l" == *"$want"* ]] || continue
        [[ "$l" =~ \)\ +(out|in)\ +(hi|lo) ]] && v=${BASH_REMATCH[2]}
        return
    done < /sys/kernel/debug/gpio
}
mkfifo /run/imagetest-nap 2>/dev/null; exec 7<>/run/imagetest-nap
start=${EPOCHREALTIME/./} prev="" rises=0 on=0 samples=0 unread=0
while (( ${EPOCHREALTIME/./} - start < 12000000 )); do
    sample
    samples=$((samples + 1)); [ "$v" = hi ] && on=$((on + 1)); [ -z "$v" ] && unread=$((unread + 1))
    [ "$prev" = lo ] && [ "$v" = hi ] && rises=$((rises + 1))
    prev=$v
    read -r -t 0.01 -u 7 _ || true   # a 10 ms nap without a fork
done
onpct=$(( samples > 0 ? on * 100 / samples : 0 ))
say "INFO: debugfs row: $(grep -m1 -F "$want" /sys/kernel/debug/gpio | tr -s ' ')"
(( rises >= 24 && onpct >= 20 && onpct <= 80 )) \
    && pass "status LED $status_led toggles (kernel GPIO debugfs, 12 s): $rises rises, on $onpct % of $samples samples: the camera-lost fast blink" \
    || fail "status LED $status_led: $rises rises, on $onpct % of $samples samples in 12 s, $unread without a level read (want a fast blink)"

# 5. posewatch doctor, as an owner would run it (no camera here, so it reports that).
doctor=$(timeout 120 posewatch doctor 2>&1); drc=$?
while IFS= read -r l; do say "doctor: $l"; done <<< "$doctor"
grep -qE 'GPIO25.*(pinctrl-bcm2835|pinctrl-bcm2711|pinctrl-rp1)|pinctrl-(bcm2835|bcm2711|rp1).*GPIO25' <<< "$doctor" \
    && pass "posewatch doctor (exit $drc) finds the LED lines on $label" || fail "posewatch doctor (exit $drc) does not name GPIO25 on the pinctrl chip"

# 6. The Wi-Fi passphrase the card's network-config carried is off the boot partition, kept root-only.
left=$(grep -rl imagetest-wifi-passphrase /boot/firmware 2>/dev/null | paste -sd' ')
kept=$(stat -c '%a %U %n' /var/lib/posewatch-image/network-config.* 2>/dev/null | paste -sd' ')
[ -z "$left" ] && [[ "$kept" == "600 root "* ]] && pass "Wi-Fi passphrase off the boot partition after first boot: $kept" \
    || fail "Wi-Fi passphrase: on the boot partition in '$left'; kept: '$kept'"

# What else systemd says about this boot (QEMU's Pi machines lack Wi-Fi, Bluetooth, USB network and
# the firmware's mailbox services, so units for them may fail here as they would not on a board).
say "INFO: system $(systemctl is-system-running); failed units: $(systemctl --failed --no-legend --plain | awk '{print $1}' | paste -sd' ')"

# 7. This card's identity, for the host to compare with other copies of the image.
say "IDENTITY $(tr -d '[:space:]' < /etc/machine-id) $(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub 2>/dev/null | awk '{print $2}')"
say "DONE pass=$passes fail=$fails"

#!/bin/sh
# imagetest-hardware: the image boot test's stand-in hardware (Tests/System/run-image-test.sh puts
# this into its copy of the image only; it is not part of the image). Started before posewatch by
# imagetest-hardware.service, like a board whose camera and GPIO header are there at boot:
#   - vivid as one webcam-like /dev/video0 (as in systest-guest.sh);
#   - a gpio-sim chip labelled posewatch-sim with 28 lines named GPIO0…GPIO27 like the Raspberry Pi
#     header, so posewatch's default LED lines exist at their BCM offsets: the kernel's own gpio-sim
#     (Linux 7.x), else the one run-system-test.sh builds for Debian 13's 6.12, copied in by the test.
set -eu
modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0
modprobe configfs 2>/dev/null || true
grep -q "^gpio_sim " /proc/modules || modprobe gpio-sim 2>/dev/null || insmod /usr/local/lib/imagetest/gpio-sim.ko
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
C=/sys/kernel/config/gpio-sim/posewatch
mkdir -p "$C/bank0"
echo 28 > "$C/bank0/num_lines"
echo posewatch-sim > "$C/bank0/label"
n=0
while [ $n -le 27 ]; do mkdir -p "$C/bank0/line$n"; echo "GPIO$n" > "$C/bank0/line$n/name"; n=$((n + 1)); done
echo 1 > "$C/live"
udevadm settle -t 30 || true
echo "imagetest hardware: vivid $(cat /sys/class/video4linux/video0/name 2>/dev/null), gpio-sim $(cat "$C/bank0/chip_name") at /sys/devices/platform/$(cat "$C/dev_name")"

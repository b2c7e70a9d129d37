#!/bin/bash
# imagetest-leds: run in the image test's guest over SSH (sudo bash -s): samples posewatch's status
# LED on the gpio-sim chip for 4 s and prints one PASS/FAIL line. A heartbeat is posewatch's
# "healthy" pattern: two 100 ms pulses every 1.5 s, so 2–12 rising edges in 4 s and on ≤ 40 % of the
# time (the same test as systest-guest.sh's is_heartbeat); a 5 Hz blink (camera lost) or a steady
# line is not one.
set -u
led=${1:-GPIO25}
C=/sys/kernel/config/gpio-sim/posewatch
value=/sys/devices/platform/$(cat "$C/dev_name")/$(cat "$C/bank0/chip_name")/sim_gpio${led#GPIO}/value
[ -r "$value" ] || { echo "FAIL: status LED $led: no gpio-sim value file ($value)"; exit 0; }
mkfifo /run/imagetest-nap 2>/dev/null; exec 7<>/run/imagetest-nap
start=${EPOCHREALTIME/./}; stop=$(( start + 4000000 )); prev=$start
read -r last < "$value"; rises=0; on_us=0
while :; do
    now=${EPOCHREALTIME/./}; (( now < stop )) || break
    read -r v < "$value"
    [ "$last" = 1 ] && on_us=$(( on_us + now - prev ))
    [ "$last" = 0 ] && [ "$v" = 1 ] && rises=$(( rises + 1 ))
    last=$v prev=$now
    read -r -t 0.005 -u 7 _ || true
done
on_pct=$(( on_us * 100 / (stop - start) ))
if (( rises >= 2 && rises <= 12 && on_pct > 0 && on_pct <= 40 )); then
    echo "PASS: status LED $led heartbeat: $rises pulses in 4 s, on $on_pct%"
else
    echo "FAIL: status LED $led is no heartbeat: $rises pulses in 4 s, on $on_pct%"
fi

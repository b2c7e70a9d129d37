# systest-header-pins: LED lines by header number (issue 42), sourced by systest-guest after the
# doctor checks, while posewatch.service is stopped. Uses systest-guest's helpers: pass, fail, skip,
# artifact, nap, gpio_raw_info, HAVE_RUN, ACTION_LEDS, STATUS_LED.
#
# A Raspberry Pi's header controller does not always name its lines as an owner names the pins:
# Debian's Pi 5 device tree gives the RP1 controller no gpio-line-names, and the Pi 3 and 4 trees
# call GPIO4 `GPIO_GCLK` and GPIO14 `TXD1`. posewatch then takes `GPIOn` as offset n of the chip
# labelled pinctrl-rp1, pinctrl-bcm2711 or pinctrl-bcm2835 (GPIOLineResolver). Two more gpio-sim
# chips play those controllers, through the kernel's GPIO character device and libgpiod:
#   pi5  label pinctrl-rp1, 54 lines, none named;
#   pi3  label pinctrl-bcm2835, 54 lines, 0–27 named as bcm2837-rpi-3-b.dts names them, the rest
#        unnamed.
# Each is shown to posewatch alone: in a private mount namespace whose /dev holds only that chip's
# node, the camera and /dev/null, so the posewatch-sim chip (which names every line GPIOn) cannot
# answer first.

HP=/run/header-pins
mkdir -p "$HP"
PI3_NAMES="ID_SDA ID_SCL SDA1 SCL1 GPIO_GCLK GPIO5 GPIO6 SPI_CE1_N SPI_CE0_N SPI_MISO SPI_MOSI SPI_SCLK
    GPIO12 GPIO13 TXD1 RXD1 GPIO16 GPIO17 GPIO18 GPIO19 GPIO20 GPIO21 GPIO22 GPIO23 GPIO24 GPIO25 GPIO26 GPIO27"

# make_header_chip DIR LABEL [NAME…]: a live gpio-sim chip of 54 lines labelled LABEL, lines named
# from offset 0 on; prints its kernel name (gpiochipN).
make_header_chip() {
    local d=/sys/kernel/config/gpio-sim/$1 label=$2 n=0 name
    shift 2
    mkdir -p "$d/bank0"
    echo 54 > "$d/bank0/num_lines"
    echo "$label" > "$d/bank0/label"
    for name in "$@"; do mkdir -p "$d/bank0/line$n"; echo "$name" > "$d/bank0/line$n/name"; n=$((n + 1)); done
    echo 1 > "$d/live"
    udevadm settle -t 30
    cat "$d/bank0/chip_name"
}
# sim_dir DIR: the chip's sysfs directory with its sim_gpioN/value files.
sim_dir() { echo "/sys/devices/platform/$(cat "/sys/kernel/config/gpio-sim/$1/dev_name")/$(cat "/sys/kernel/config/gpio-sim/$1/bank0/chip_name")"; }

# alone CHIP CMD…: CMD in a private mount namespace whose /dev holds only CHIP's node, /dev/video0
# and /dev/null (device numbers from sysfs, as udev makes them). CMD ends up with unshare's PID
# (unshare and sh exec): `( exec unshare … sh -c "$ALONE_SH" … ) &` puts CMD's PID in $!.
ALONE_SH='chip=$1; shift
    cam=$(cat /sys/class/video4linux/video0/dev) gpio=$(cat /sys/bus/gpio/devices/$chip/dev) || exit 97
    mount -t tmpfs -o mode=0755 header-pins /dev || exit 97
    mknod -m 666 /dev/null c 1 3 && mknod -m 660 /dev/video0 c "${cam%:*}" "${cam#*:}" \
        && mknod -m 660 "/dev/$chip" c "${gpio%:*}" "${gpio#*:}" || exit 97
    exec "$@"'
alone() { local chip=$1; shift; unshare --mount --propagation private sh -c "$ALONE_SH" sh "$chip" "$@"; }

# check_lines WHO JSON EXPECT…: every EXPECT ("GPIOn BY" with BY "name" or "header number") is an
# ok doctor item on /dev/CHIP at offset n, found that way.
check_lines() {
    local who=$1 json=$2 chip=$3 e line by got bad="" where=""
    shift 3
    for e in "$@"; do
        line=${e%% *} by=${e#* }
        got=$(jq -r --arg l "$line" '.items[] | select(.area == "gpio" and .subject == $l) | "\(.verdict)|\(.chip)|\(.offset)|\(.found_by)"' "$json" 2>/dev/null)
        if [ "$got" = "ok|/dev/$chip|${line#GPIO}|$by" ]; then where="$where $line (${by})"
        else bad="$bad $line(want ok|/dev/$chip|${line#GPIO}|$by, got '${got:-not listed}')"; fi
    done
    [ -z "$bad" ] && pass "header pins ($who): doctor found each LED line at offset n of $chip for GPIOn:${where}" \
        || fail "header pins ($who): doctor:$bad"
}

if ! [ -d /sys/kernel/config/gpio-sim ] || ! command -v unshare >/dev/null; then
    skip "header pins (needs gpio-sim and unshare)"
else
    # The Pi 5: no line named; the six default LEDs by header number.
    PI5=$(make_header_chip pi5 pinctrl-rp1)
    printf '[camera]\ndevice = "/dev/video0"\n' > "$HP/pi5.toml"
    alone "$PI5" posewatch doctor --json --config "$HP/pi5.toml" > "$HP/pi5.json" 2> "$HP/pi5.err"
    artifact "doctor on a pinctrl-rp1 chip with no line names" alone "$PI5" posewatch doctor --config "$HP/pi5.toml"
    expect=()
    for l in $ACTION_LEDS $STATUS_LED; do expect+=("$l header number"); done
    check_lines "pinctrl-rp1, no names" "$HP/pi5.json" "$PI5" "${expect[@]}"

    # The Pi 3: GPIO4 is named GPIO_GCLK (by header number), the default lines by name.
    PI3=$(make_header_chip pi3 pinctrl-bcm2835 $PI3_NAMES)
    printf '[camera]\ndevice = "/dev/video0"\n\n[leds]\nstatus = "GPIO4"\n' > "$HP/pi3.toml"
    alone "$PI3" posewatch doctor --json --config "$HP/pi3.toml" > "$HP/pi3.json" 2> "$HP/pi3.err"
    artifact "doctor on a pinctrl-bcm2835 chip with the Pi 3's names" alone "$PI3" posewatch doctor --config "$HP/pi3.toml"
    expect=("GPIO4 header number")
    for l in $ACTION_LEDS; do expect+=("$l name"); done
    check_lines "pinctrl-bcm2835, Pi 3 names" "$HP/pi3.json" "$PI3" "${expect[@]}"

    # A chip that is not a Pi's header controller: no names, no fallback; doctor refuses the line.
    OTHER=$(make_header_chip other gpio-unnamed)
    alone "$OTHER" posewatch doctor --json --config "$HP/pi5.toml" > "$HP/other.json" 2>/dev/null
    v=$(jq -r '.items[] | select(.area == "gpio" and .subject == "GPIO17") | .verdict' "$HP/other.json" 2>/dev/null)
    [ "$v" = fail ] && pass "header pins: on a chip that is no Pi header controller (label gpio-unnamed), unnamed GPIO17 is refused" \
        || fail "header pins: GPIO17 on an unnamed non-Pi chip: verdict '${v:-not listed}', want fail"

    # posewatch run on the Pi 5 chip: holds the six lines, the status LED beats, all off and
    # released after SIGTERM.
    if [ "${HAVE_RUN:-no}" = yes ]; then
        P5SIM=$(sim_dir pi5)
        ( exec unshare --mount --propagation private sh -c "$ALONE_SH" sh "$PI5" posewatch run --config "$HP/pi5.toml" ) \
            > "$HP/run.out" 2>&1 & runner=$!
        held=0 rises=0 last=0 v=""
        limit=$(( ${EPOCHREALTIME/./} + 60000000 ))
        while (( ${EPOCHREALTIME/./} < limit )); do   # until the lines are held (start-up under TCG)
            held=$(gpio_raw_info "$PI5" | grep -c '"posewatch"')   # v1: "posewatch"; v2: consumer="posewatch"
            [ "$held" -ge 6 ] && break
            nap 0.5
        done
        # The heartbeat's two 100 ms pulses every 1.5 s, as the loop finds time for them between
        # frames (seconds each under a loaded emulator): what counts is that posewatch drives it.
        limit=$(( ${EPOCHREALTIME/./} + 15000000 ))
        while (( ${EPOCHREALTIME/./} < limit )); do
            read -r v < "$P5SIM/sim_gpio${STATUS_LED#GPIO}/value"
            [ "$v" = 1 ] && [ "$last" = 0 ] && rises=$((rises + 1))
            last=$v
            nap 0.01
        done
        kill -TERM $runner 2>/dev/null; wait $runner; rc=$?
        after=$(gpio_raw_info "$PI5" | grep -c '"posewatch"')
        on=0
        for l in $ACTION_LEDS $STATUS_LED; do read -r v < "$P5SIM/sim_gpio${l#GPIO}/value"; on=$((on + v)); done
        artifact "posewatch run on the pinctrl-rp1 chip" cat "$HP/run.out"
        if [ "$held" = 6 ] && [ "$rises" -ge 2 ] && [ "$rc" = 0 ] && [ "$after" = 0 ] && [ "$on" = 0 ]; then
            pass "header pins: posewatch run on pinctrl-rp1 held its 6 lines by header number, status LED beat ($rises rises in 15 s), exit 0 on SIGTERM with all off and released"
        else
            fail "header pins: run on pinctrl-rp1: $held lines held (want 6), $rises status rises in 15 s (want ≥ 2), exit $rc, $after still held, $on on after the stop: $(tail -3 "$HP/run.out" | tr '\n' ' ')"
        fi
    else
        skip "header pins: posewatch run on pinctrl-rp1 (needs posewatch run)"
    fi
    for d in pi5 pi3 other; do
        echo 0 > "/sys/kernel/config/gpio-sim/$d/live"
        find "/sys/kernel/config/gpio-sim/$d" -depth -mindepth 1 -type d -exec rmdir {} \; 2>/dev/null
        rmdir "/sys/kernel/config/gpio-sim/$d"
    done
fi

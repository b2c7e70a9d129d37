#!/bin/bash
# systest-guest: posewatch's system test inside the VM (started by posewatch-systest.service).
#
# Plays the owner: plugs in the "hardware" (vivid camera, gpio-sim chip named like a Raspberry Pi
# header), installs the .deb with dpkg -i, adds the camera-naming udev rule from the package's
# example, then checks the result. Every check prints exactly one line:
#   PASS: …   FAIL: …   SKIP: … (a check that needs `posewatch run`, which does not exist yet)
# INFO: lines carry measurements. The host (run-system-test.sh) collects them from the console.
# Extra material (journal, doctor reports) goes to the second serial port when there is one.
#
# Not `set -e`: a failed check must not stop the others. Every wait below has a bound.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_PAGER= SYSTEMD_COLORS=0

up() { cut -d' ' -f1 /proc/uptime; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; }
info() { echo "INFO: $*"; }
check() {  # check "name" cmd…: PASS/FAIL by the command's status
    local name=$1; shift
    if "$@" >/dev/null 2>&1; then pass "$name"; else fail "$name"; fi
}
# Extra material for the host, on the serial port the kernel command line names (systest.artifacts=:
# ttyS1 on amd64, a PCI serial port on arm64); without one, into a file.
port=$(sed -n 's/.*systest\.artifacts=\([A-Za-z0-9]*\).*/\1/p' /proc/cmdline)
if [ -n "$port" ] && [ -c "/dev/$port" ] && [ "$(cat "/sys/class/tty/$port/type" 2>/dev/null)" != 0 ]; then
    exec 8>"/dev/$port"
else
    exec 8>/run/systest-artifacts.log
fi
artifact() { echo "===== $1" >&8; shift; "$@" >&8 2>&1; }

# A sleep that forks nothing (the LED sampler calls it hundreds of times; forks are slow in TCG).
mkfifo /run/systest-sleep 2>/dev/null; exec 7<>/run/systest-sleep
nap() { read -r -t "$1" -u 7 _ || true; }
wait_for() {  # wait_for SECONDS cmd…: polls every 0.5 s until cmd succeeds; status 1 on timeout
    local limit=$(( ${EPOCHREALTIME/./} + $1 * 1000000 )); shift
    until "$@" >/dev/null 2>&1; do
        (( ${EPOCHREALTIME/./} < limit )) || return 1
        nap 0.5
    done
}

echo "=== systest guest started at uptime $(up)s: $(uname -r) $(uname -m), $(systemctl --version | head -1)"
info "boot: system $(systemctl is-system-running), journald $(systemctl is-active systemd-journald), udevd $(systemctl is-active systemd-udevd)"

# ------------------------------------------------------------------ the hardware
# vivid as a single webcam-like capture node (one input, type webcam).
VIVID_OPTS="n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0"
modprobe vivid $VIVID_OPTS
# gpio-sim: one chip, 28 lines named GPIO0…GPIO27 like the Raspberry Pi header (so a line's offset is
# its BCM number), label posewatch-sim. Found by label, never by chip number.
modprobe gpio-sim
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
C=/sys/kernel/config/gpio-sim/posewatch
mkdir -p "$C/bank0"
echo 28 > "$C/bank0/num_lines"
echo posewatch-sim > "$C/bank0/label"
for n in $(seq 0 27); do mkdir -p "$C/bank0/line$n"; echo "GPIO$n" > "$C/bank0/line$n/name"; done
echo 1 > "$C/live"
udevadm settle -t 30
SIM=/sys/devices/platform/$(cat "$C/dev_name")/$(cat "$C/bank0/chip_name")
GPIOCHIP=/dev/$(cat "$C/bank0/chip_name")
if [ -c /dev/video0 ] && [ -d "$SIM" ] && [ -c "$GPIOCHIP" ]; then
    pass "hardware: vivid /dev/video0 ($(cat /sys/class/video4linux/video0/name)) and gpio-sim $GPIOCHIP 'posewatch-sim' (28 lines GPIO0…GPIO27)"
else
    fail "hardware: vivid or gpio-sim missing (video0: $(ls /dev/video0 2>&1), sim: $SIM)"
fi
# Harness self-test: the unplug/replug the live-loop checks use. vivid's "disconnect" button acts
# like a pulled cable: streaming errors out (vb2 queue error: POLLERR, DQBUF fails) and new opens fail
# with ENODEV; the /dev node stays. vivid reconnects by itself when the LAST open file handle is
# closed (kernel log "vivid-000: reconnect"). So the harness holds its own handle (fd 6) across the
# disconnect: the camera stays "unplugged" until the harness lets go, and only then can come back.
t0=${EPOCHREALTIME/./}
exec 6</dev/video0
out=$(v4l2-ctl -d /dev/video0 -c disconnect=1 2>&1); rc=$?
gone=no; v4l2-ctl -d /dev/video0 --info > /run/after-disconnect.txt 2>&1 || gone=yes
exec 6<&-
back=no; wait_for 10 v4l2-ctl -d /dev/video0 --info && back=yes
info "vivid disconnect=1 (v4l2-ctl exit $rc${out:+: $out}): reopen $([ $gone = yes ] && echo "refused ($(grep -o 'No such device' /run/after-disconnect.txt | head -1))" || echo works); after the last close: $(dmesg | grep -o 'vivid-000: reconnect' | tail -1)"
if [ $gone$back = yesyes ]; then
    pass "harness self-test: vivid disconnect=1 makes /dev/video0 refuse opens while held; closing the last handle reconnects it ($(( (${EPOCHREALTIME/./} - t0) / 1000 )) ms)"
else
    fail "harness self-test: vivid unplug (refused: $gone) / replug (back: $back)"
fi
artifact "v4l2-ctl --all" v4l2-ctl -d /dev/video0 --all
artifact "v4l2-ctl --list-formats-ext" v4l2-ctl -d /dev/video0 --list-formats-ext
# libgpiod's tools changed between v1 (bookworm: `gpioinfo CHIP`, `"posewatch" output`, `unused`) and
# v2 (trixie: `gpioinfo -c CHIP`, `output consumer="posewatch"`, no consumer when free). One line per
# GPIOn line of the sim chip: "NAME posewatch-output", "NAME free" or "NAME other".
if gpioinfo --version 2>&1 | head -n 1 | grep -q ' v2\.'; then GPIOD_TOOLS_V2=1; else GPIOD_TOOLS_V2=0; fi
# gpio_raw_info [CHIP]: gpioinfo of CHIP (default: the sim chip) with either version's syntax.
gpio_raw_info() { local chip=${1:-$GPIOCHIP}; if [ "$GPIOD_TOOLS_V2" = 1 ]; then gpioinfo -c "$chip"; else gpioinfo "$chip"; fi; }
gpio_line_states() {
    gpio_raw_info | awk -v v2="$GPIOD_TOOLS_V2" '
        match($0, /"GPIO[0-9]+"/) {
            name = substr($0, RSTART + 1, RLENGTH - 2)
            if ((v2 && /consumer="posewatch"/ && /[ \t]output/) || (!v2 && /"posewatch" +output/)) state = "posewatch-output"
            else if ((v2 && !/consumer=/) || (!v2 && /unused/)) state = "free"
            else state = "other"
            print name, state
        }'
}
artifact "gpioinfo" gpio_raw_info

# The LEDs posewatch drives by default (Configuration.swift, deploy/posewatch.toml).
ACTION_LEDS="GPIO17 GPIO27 GPIO22 GPIO23 GPIO24"
STATUS_LED=GPIO25
ALL_LEDS="$ACTION_LEDS $STATUS_LED"
led_value() { local v; read -r v < "$SIM/sim_gpio${1#GPIO}/value"; echo "$v"; }

# LED sampler: reads every LED's gpio-sim value as fast as a ~5 ms nap allows for $1 seconds and
# keeps, per line, rising edges (RISES), time on in percent (ONPCT) and the longest pulse (MAXON, ms).
declare -A RISES ONPCT MAXON
sample_leds() {
    local dur=$1 l v now prev start stop
    declare -A last on_us pulse_start
    RISES=(); ONPCT=(); MAXON=()
    for l in $ALL_LEDS; do last[$l]=$(led_value "$l"); RISES[$l]=0; on_us[$l]=0; MAXON[$l]=0; pulse_start[$l]=${EPOCHREALTIME/./}; done
    start=${EPOCHREALTIME/./}; stop=$(( start + dur * 1000000 )); prev=$start
    while now=${EPOCHREALTIME/./}; (( now < stop )); do
        for l in $ALL_LEDS; do
            read -r v < "$SIM/sim_gpio${l#GPIO}/value"
            [ "${last[$l]}" = 1 ] && on_us[$l]=$(( on_us[$l] + now - prev ))
            if [ "$v" = 1 ] && [ "${last[$l]}" = 0 ]; then RISES[$l]=$(( RISES[$l] + 1 )); pulse_start[$l]=$now; fi
            if [ "$v" = 0 ] && [ "${last[$l]}" = 1 ] && (( (now - pulse_start[$l]) / 1000 > MAXON[$l] )); then
                MAXON[$l]=$(( (now - pulse_start[$l]) / 1000 )); fi
            last[$l]=$v
        done
        prev=$now
        nap 0.005
    done
    for l in $ALL_LEDS; do ONPCT[$l]=$(( on_us[$l] * 100 / (stop - start) )); done
}
leds_text() { local l s=""; for l in $ALL_LEDS; do s="$s $l:${RISES[$l]}↑/${ONPCT[$l]}%/${MAXON[$l]}ms"; done; echo "${s# }"; }
# Heartbeat: a few short pulses (2 per 1.5 s) and mostly off. Fast blink: ≥ 3 pulses per second.
is_heartbeat() { (( RISES[$1] >= 2 && RISES[$1] <= 3 * $2 && ONPCT[$1] > 0 && ONPCT[$1] <= 40 )); }
is_fast_blink() { (( RISES[$1] >= 3 * $2 && ONPCT[$1] >= 20 && ONPCT[$1] <= 80 )); }
action_leds_off() { local l; for l in $ACTION_LEDS; do (( RISES[$l] == 0 && ONPCT[$l] == 0 )) || return 1; done; }

# Harness self-test: the sampler must tell a heartbeat, a fast blink and "off" apart, or the LED
# checks of the live loop would mean nothing. Unrequested gpio-sim lines read back their simulated
# pull, so a background loop flips GPIO25's pull in the two patterns (no forks: nap is a read).
pattern() {  # pattern ON_S OFF_S ON_S OFF_S …, repeated until killed
    local p=/sys/devices/platform/$(cat "$C/dev_name")/$(cat "$C/bank0/chip_name")/sim_gpio25/pull
    while :; do
        local i=0 d
        for d in "$@"; do
            if (( i % 2 == 0 )); then echo pull-up > "$p"; else echo pull-down > "$p"; fi
            nap "$d"; i=$((i + 1))
        done
    done
}
pattern 0.1 0.2 0.1 1.1 & pat=$!          # heartbeat: two 100 ms pulses every 1.5 s
sample_leds 4; kill $pat; wait $pat 2>/dev/null; echo pull-down > "$SIM/sim_gpio25/pull"
hb="${RISES[GPIO25]}↑/${ONPCT[GPIO25]}%"; hb_ok=no; is_heartbeat GPIO25 4 && ! is_fast_blink GPIO25 4 && hb_ok=yes
pattern 0.1 0.1 & pat=$!                  # 5 Hz
sample_leds 3; kill $pat; wait $pat 2>/dev/null; echo pull-down > "$SIM/sim_gpio25/pull"
fb="${RISES[GPIO25]}↑/${ONPCT[GPIO25]}%"; fb_ok=no; is_fast_blink GPIO25 3 && ! is_heartbeat GPIO25 3 && fb_ok=yes
off_ok=no; action_leds_off && off_ok=yes
if [ $hb_ok$fb_ok$off_ok = yesyesyes ]; then
    pass "harness self-test: LED sampler tells a heartbeat ($hb in 4 s) from a 5 Hz blink ($fb in 3 s) and off lines"
else
    fail "harness self-test: LED sampler: heartbeat $hb ($hb_ok), 5 Hz $fb ($fb_ok), action lines off: $off_ok ($(leds_text))"
fi

# ------------------------------------------------------------------ install, as an owner would
DEB=$(ls /root/systest/*.deb | head -1)
info "installing $(basename "$DEB") with dpkg -i (no network: the pose model was pre-placed)"
t0=${EPOCHREALTIME/./}
timeout 300 dpkg -i "$DEB" > /run/dpkg.log 2>&1; rc=$?
artifact "dpkg -i" cat /run/dpkg.log
[ $rc = 0 ] && pass "dpkg -i $(basename "$DEB") ($(( (${EPOCHREALTIME/./} - t0) / 1000 )) ms)" || fail "dpkg -i exited $rc: $(tail -3 /run/dpkg.log | tr '\n' ' ')"
version=$(posewatch --version 2>&1); rc=$?
[ $rc = 0 ] && pass "posewatch $version runs with the VM's libraries" || fail "posewatch --version exited $rc: $version"
check "install-model --check: MoveNet at /var/lib/posewatch/ has the published sha256" /usr/lib/posewatch/install-model --check
check "postinst created group gpio" getent group gpio
check "postinst enabled posewatch.service" systemctl is-enabled posewatch.service

# Does the live loop exist yet? The checks that need it switch on by themselves when it lands.
# `posewatch run --help` alone is not enough: before `run` exists, ArgumentParser answers it with
# the top-level help and exit 0. So also require run's own usage line.
HAVE_RUN=no
timeout 30 posewatch run --help > /run/run-help.txt 2>&1 && grep -q 'USAGE: posewatch run' /run/run-help.txt && HAVE_RUN=yes
info "posewatch run --help: $([ $HAVE_RUN = yes ] && echo present || echo 'not there yet (run checks are SKIP)')"

# postinst starts the service on first install. Give it a moment to get there (or fail).
if [ $HAVE_RUN = yes ]; then
    if wait_for 120 sh -c '[ "$(systemctl show -p SubState --value posewatch)" = running ]'; then
        pass "postinst started posewatch.service and it reached READY ($(systemctl show -p StatusText --value posewatch))"
    else
        fail "posewatch.service not running after install: $(systemctl show -p ActiveState,SubState,Result posewatch | tr '\n' ' ')"
    fi
else
    skip "postinst started posewatch.service (needs posewatch run)"
fi
# The doctor checks want the lines free: stop the service (and forget a failed start loop).
timeout 60 systemctl stop posewatch.service; systemctl reset-failed posewatch.service 2>/dev/null

# ------------------------------------------------------------------ udev
check "udev rule installed: /usr/lib/udev/rules.d/60-posewatch.rules" test -f /usr/lib/udev/rules.d/60-posewatch.rules
v=$(stat -c '%G %a' /dev/video0)
[ "$v" = "video 660" ] && pass "/dev/video0 is group video, mode 0660" || fail "/dev/video0 is '$v', want 'video 660'"
g=$(stat -c '%G %a' "$GPIOCHIP")
[ "$g" = "gpio 660" ] && pass "$GPIOCHIP is group gpio, mode 0660 (udev rule + group from postinst)" || fail "$GPIOCHIP is '$g', want 'gpio 660'"
# vivid is not a UVC camera, so 60-posewatch.rules' generic rule leaves it unnamed; the owner names
# it with the package's example rule, exactly as its comments say (copy, keep one rule, reload).
sed -n 's/^#\(SUBSYSTEM=="video4linux", ATTR{name}=="vivid-000-vid-cap".*\)$/\1/p' \
    /usr/share/posewatch/61-posewatch-camera-id.rules.example > /etc/udev/rules.d/61-posewatch-camera-id.rules
udevadm control --reload && udevadm trigger --subsystem-match=video4linux && udevadm settle -t 30
link=$(readlink -f /dev/posewatch-camera 2>/dev/null)
if [ -s /etc/udev/rules.d/61-posewatch-camera-id.rules ] && [ "$link" = /dev/video0 ]; then
    pass "/dev/posewatch-camera -> /dev/video0 (the package's example rule, by V4L2 name)"
else
    fail "/dev/posewatch-camera is '${link:-missing}' (rule: $(cat /etc/udev/rules.d/61-posewatch-camera-id.rules 2>&1))"
fi

# ------------------------------------------------------------------ doctor
# Checks one doctor JSON report ($1: file, $2: who ran it). One jq pass turns the report into
# "area|subject" -> facts separated by \x1f (not a tab: read would merge empty tab-separated fields) (each jq start costs seconds under TCG).
CAMERA_FPS="" DECIMATION="" MODE=""
check_doctor() {
    local json=$1 who=$2 key rest
    if ! jq -e .items "$json" >/dev/null 2>&1; then fail "doctor ($who): no JSON report: $(head -c 300 "$json")"; return; fi
    declare -A V S F
    while IFS=$'\x1f' read -r key verdict summary rest; do V[$key]=$verdict; S[$key]=$summary; F[$key]=$rest; done < <(jq -r '.items[] |
        [ "\(.area)|\(.subject)", .verdict, .summary,
          (if .capture_mode then (.capture_mode | "\(.fourcc) \(.width)x\(.height) at \(.camera_fps) fps (model \(.model_fps) fps, decimation \(.decimation), meets rate \(.meets_model_rate))") else "" end),
          (.capture_mode.camera_fps // ""), (.capture_mode.decimation // ""), (.card // ""), (.driver // ""),
          (if has("used") then .used else "" end | tostring), (.offset // "" | tostring), (.chip // ""), (.role // ""), (.path // ""), (.bytes // "" | tostring),
          (.controls.mode // ""), (.controls.autogain.state // ""), (.controls.autogain.value // "" | tostring), (.controls.text // "")
        ] | map(tostring | gsub("[\u001f\n]"; " ")) | join("\u001f")' "$json")
    local mode cfps dec card driver used offset chip role path bytes cmode cgain cgainv ctext
    IFS=$'\x1f' read -r mode cfps dec card driver used offset chip role path bytes cmode cgain cgainv ctext <<<"${F[camera|/dev/video0]:-}"
    if [ "${V[camera|/dev/video0]:-}" = ok ] && [ -n "$mode" ]; then
        MODE=$mode CAMERA_FPS=$cfps DECIMATION=$dec
        pass "doctor ($who): /dev/video0 '$card' [$driver] usable, would capture $mode"
    else
        fail "doctor ($who): /dev/video0 not usable: ${S[camera|/dev/video0]:-not listed}"
    fi
    # The controls opening the camera sets, queried without writing: vivid offers autogain (on),
    # and no exposure or backlight controls.
    if [ "$cmode" = planned ] && [ "$cgain" = set ] && [ "$cgainv" = 1 ]; then
        pass "doctor ($who): camera controls (set at open): $ctext"
    else
        fail "doctor ($who): camera controls: mode '${cmode:-none}', autogain '${cgain:-none}' '$cgainv': ${ctext:-no controls in the report}"
    fi
    [ "${V[camera|/dev/posewatch-camera]:-}" = ok ] && pass "doctor ($who): configured camera /dev/posewatch-camera is usable" \
        || fail "doctor ($who): /dev/posewatch-camera: ${S[camera|/dev/posewatch-camera]:-not listed}"
    local line bad="" where=""
    for line in $ALL_LEDS; do
        IFS=$'\x1f' read -r mode cfps dec card driver used offset chip role path bytes cmode cgain cgainv ctext <<<"${F[gpio|$line]:-}"
        if [ "${V[gpio|$line]:-}" = ok ] && [ "$used" = false ] && [ "$offset" = "${line#GPIO}" ] && [ "$chip" = "$GPIOCHIP" ]; then
            where="$where $line=${role% LED}"
        else
            bad="$bad $line(${V[gpio|$line]:-not listed}: ${S[gpio|$line]:-})"
        fi
    done
    [ -z "$bad" ] && pass "doctor ($who): every LED line found on $GPIOCHIP at its BCM offset and free:$where" || fail "doctor ($who): LED lines:$bad"
    key=journal\|/run/systemd/journal/socket
    [ "${V[$key]:-}" = ok ] && pass "doctor ($who): journald reachable (${key#journal|})" || fail "doctor ($who): journal: ${S[$key]:-not listed}"
    IFS=$'\x1f' read -r mode cfps dec card driver used offset chip role path bytes cmode cgain cgainv ctext <<<"${F[model|pose model]:-}"
    [ "${V[model|pose model]:-}" = ok ] && pass "doctor ($who): pose model $path ($bytes bytes, published sha256)" \
        || fail "doctor ($who): pose model: ${S[model|pose model]:-not listed}"
    IFS=$'\x1f' read -r mode cfps dec card driver used offset chip role path bytes cmode cgain cgainv ctext <<<"${F[model|action classifier]:-}"
    if [ "${V[model|action classifier]:-}" = ok ]; then pass "doctor ($who): action classifier $path ($bytes bytes)"
    else fail "doctor ($who): action classifier: ${S[model|action classifier]:-not listed}"; fi
}

timeout 120 posewatch doctor --json --camera /dev/posewatch-camera > /run/doctor-root.json 2>/run/doctor-root.err
artifact "posewatch doctor (root)" posewatch doctor --camera /dev/posewatch-camera
check_doctor /run/doctor-root.json root

# The same doctor inside the service's own sandbox: the installed unit with ExecStart swapped
# (DynamicUser, SupplementaryGroups=video gpio, DevicePolicy=closed + DeviceAllow, PrivateNetwork…).
# This is what proves the service user and groups can open the devices.
sed -e '/^\[Install\]/,$d' -e 's/^Type=.*/Type=oneshot/' \
    -e 's|^ExecStart=.*|ExecStart=/usr/bin/posewatch doctor --json --camera /dev/posewatch-camera|' \
    -e 's/^SyslogIdentifier=.*/SyslogIdentifier=posewatch-doctor/' \
    -e '/^\(WatchdogSec\|Restart\|RestartSec\|RestartPreventExitStatus\|ExecReload\|NotifyAccess\|TimeoutStopSec\|StartLimit[A-Za-z]*\)=/d' \
    /usr/lib/systemd/system/posewatch.service > /run/systemd/system/posewatch-doctor.service
systemctl daemon-reload
timeout 120 systemctl start posewatch-doctor.service
journalctl --sync
journalctl -u posewatch-doctor.service -o cat --no-pager | grep '^{' | tail -1 > /run/doctor-sandbox.json
artifact "doctor unit" cat /run/systemd/system/posewatch-doctor.service
artifact "doctor in the sandbox" journalctl -u posewatch-doctor.service --no-pager
check_doctor /run/doctor-sandbox.json "service sandbox: DynamicUser + video,gpio"

# Negative control: without the groups, the same devices must be refused (so the PASSes above are
# due to the udev modes and the unit's groups, not to lax permissions).
setpriv --reuid=65534 --regid=65534 --clear-groups posewatch doctor --json > /run/doctor-nobody.json 2>/dev/null
if jq -e '[.items[] | select(.area=="camera" and .subject=="/dev/video0" and (.summary|test("permission|EACCES|denied";"i")))] | length == 1' /run/doctor-nobody.json >/dev/null 2>&1 \
   && jq -e '[.items[] | select(.area=="gpio" and .verdict=="fail" and (.summary|test("permission|EACCES|denied";"i")))] | length >= 1' /run/doctor-nobody.json >/dev/null 2>&1; then
    pass "a user outside video/gpio is refused the camera and the gpiochip (doctor says why)"
else
    fail "user nobody: expected permission denied on /dev/video0 and $GPIOCHIP: $(jq -c '[.items[]|select(.area=="camera" or .area=="gpio")|.summary]' /run/doctor-nobody.json 2>&1 | head -c 400)"
fi

# LED lines by header number on chips labelled as a Raspberry Pi's (no names; the Pi 3's names).
. /usr/local/sbin/systest-header-pins

# What a frame costs in this VM and which kernels posewatch picked for its CPU (QEMU TCG -cpu max
# emulates AVX2, not AVX-512): the run checks below must hold at this speed.
info "MoveNet in the guest: $(timeout 90 posewatch bench /var/lib/posewatch/movenet_singlepose_lightning_int8_4.tflite --iterations 2 --warmup 1 2>&1 | grep -E '^(threads|latency)' | tr '\n' ' ')"

# ------------------------------------------------------------------ the unit
out=$(systemd-analyze verify /usr/lib/systemd/system/posewatch.service 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && pass "systemd-analyze verify posewatch.service: clean" || fail "systemd-analyze verify (exit $rc): $out"
out=$(systemd-analyze security --no-pager posewatch.service 2>&1 | grep -i 'overall exposure')
score=$(sed -n 's/.*posewatch.service: *\([0-9.]*\).*/\1/p' <<<"$out")
if [ -n "$score" ] && awk -v s="$score" 'BEGIN{exit !(s <= 2.0)}'; then pass "systemd-analyze security: exposure $score for posewatch.service (≤ 2.0)"
else fail "systemd-analyze security: '${out:-no score}' (want ≤ 2.0)"; fi
w=$(systemctl show -p Type,NotifyAccess,WatchdogUSec,RestartPreventExitStatus posewatch.service | tr '\n' ' ')
info "unit as loaded: $w"

# ------------------------------------------------------------------ journal
mark="systest-$(cat /proc/sys/kernel/random/uuid)"
echo "$mark" | systemd-cat -t posewatch-systest -p notice
journalctl --sync
[ "$(journalctl -t posewatch-systest -o cat --no-pager | tail -1)" = "$mark" ] \
    && pass "journald: an entry written with systemd-cat reads back with journalctl" || fail "journald: marker not read back"

# ------------------------------------------------------------------ the live loop
RUN_CHECKS=("READY reached (Type=notify, NotifyAccess=main, active/running)"
    "frames captured at the camera's rate from vivid (summary FRAMES+DROPPED_FRAMES)"
    "status LED heartbeat on gpio-sim" "action LEDs off (vivid shows no person)"
    "LED lines held with consumer posewatch"
    "journal entries with posewatch's fields (native protocol)"
    "dropped frames counted when the loop is slowed (CPUQuota)"
    "camera unplugged (vivid Disconnect): fast-blinking status LED"
    "camera unplugged: exactly one journal error for the episode"
    "camera back (vivid reconnected): recovery without a restart"
    "frozen loop (SIGSTOP) restarted by the watchdog"
    "SIGTERM: clean stop, exit 0, LEDs off and released, final summary"
    "bad config: exit status 78, no restart loop, one line naming file:line and key")
if [ $HAVE_RUN != yes ]; then
    for c in "${RUN_CHECKS[@]}"; do skip "$c (needs posewatch run)"; done
else
    . /usr/local/sbin/systest-guest-run
fi

# ------------------------------------------------------------------ the fault soak (issue 43)
# systest.soak=SECONDS on the kernel command line (run-system-test.sh --soak=…; 0: none).
if [ "$(sed -n 's/.*systest\.soak=\([0-9]*\).*/\1/p' /proc/cmdline)" -gt 0 ] 2>/dev/null; then
    if [ $HAVE_RUN = yes ]; then . /usr/local/sbin/systest-soak; else skip "fault soak (needs posewatch run)"; fi
fi

# ------------------------------------------------------------------ artifacts and the end
journalctl --sync
artifact "journal (posewatch, json)" journalctl -u posewatch.service -o json --no-pager
artifact "journal (boot)" journalctl -b -o short-monotonic --no-pager
echo "=== systest guest finished at uptime $(up)s"

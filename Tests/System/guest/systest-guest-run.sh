# systest-guest-run: the checks that need `posewatch run` (sourced by systest-guest when
# `posewatch run --help` exits 0). Uses its helpers: pass/fail/skip/info/nap/wait_for, SIM,
# GPIOCHIP, ACTION_LEDS, STATUS_LED, ALL_LEDS, CAMERA_FPS, DECIMATION, VIVID_OPTS.
#
# What posewatch run must do for these to pass (docs: deploy/README.md, issue 10):
#   - Type=notify: READY=1 once frames flow; WATCHDOG=1 from the loop; STOPPING=1 on SIGTERM.
#   - status LED (GPIO25): heartbeat while healthy (2 × 100 ms pulses per 1.5 s), 5 Hz blink while
#     the camera is lost, off when stopped; action LEDs off for no_person; lines requested with
#     consumer "posewatch", released on exit.
#   - journal (native protocol): SYSLOG_IDENTIFIER=posewatch, CODE_FILE/LINE/FUNC, POSEWATCH_EVENT
#     start|summary|camera|error|stop; summaries every journal.summary_interval s with FPS,
#     DROPPED_FRAMES, INFERENCE_MS, FRAMES, each covering its own interval (FRAMES+DROPPED_FRAMES =
#     frames the camera delivered in it, exact up to the newest frame, FRAME_AGE_MS old).
#   - LED timing and the watchdog independent of how long one inference takes (under TCG a MoveNet
#     frame takes ~0.7 s, longer than a heartbeat pulse): the loop services them between operators.
#   - camera loss: one PRIORITY≤3 entry per episode, recovery when the device returns, no restart.
#   - bad config: exit 78.

SUMMARY_INTERVAL=4
CONF=/etc/posewatch/posewatch.toml
cp "$CONF" /run/posewatch.toml.packaged
# The owner's config: the named camera, and summaries often enough to measure in a short test.
# watchdog.max_stall (default 10 s without a processed frame) is raised because the slowed-loop
# check throttles posewatch to a quarter CPU in an emulated machine, where one frame can then take
# several seconds, more on a loaded host; the frozen-loop check does not depend on it (a stopped
# process sends nothing, and WatchdogSec=10s is systemd's).
cat > "$CONF" <<EOF
[camera]
device = "/dev/posewatch-camera"

[journal]
summary_interval = $SUMMARY_INTERVAL

[watchdog]
max_stall = 30
EOF

prop() { systemctl show -p "$1" --value posewatch.service; }
cursor() { journalctl -n 1 -o json --no-pager | jq -r .__CURSOR; }
# posewatch.service's entries after cursor $1, one JSON object per line (extra journalctl matches
# may follow). Not --after-cursor: with a filter, systemd before 255 skips the first matching entry
# when the cursor's own entry does not match (systemd#30288; bookworm has 252), which lost exactly
# the entry a check waited for. --cursor includes the cursor's entry; it is dropped here.
after() { local c=$1; shift; journalctl -u posewatch.service -o json --no-pager --cursor "$c" "$@" | grep -vF "$c"; }
# The same as one JSON array.
entries() { journalctl --sync; after "$@" | jq -s . ; }
# at_least N CURSOR MATCH…: true once N entries after CURSOR match.
at_least() { local n=$1; shift; [ "$(after "$@" | wc -l)" -ge "$n" ]; }
# with_priority OP VALUE CURSOR MATCH…: an entry after CURSOR has PRIORITY OP VALUE (jq comparison).
with_priority() { local op=$1 value=$2; shift 2; after "$@" | jq -e "select((.PRIORITY|tonumber) $op $value)" >/dev/null; }
running() { [ "$(prop ActiveState)/$(prop SubState)" = active/running ]; }
n_summaries_since() { entries "$1" POSEWATCH_EVENT=summary | jq length; }

# ------------------------------------------------------------------ READY
c_start=$(cursor)
systemctl reset-failed posewatch.service 2>/dev/null
systemctl start --no-block posewatch.service
t0=${EPOCHREALTIME/./}
if wait_for 180 running; then
    pass "READY reached in $(( (${EPOCHREALTIME/./} - t0) / 1000 )) ms: $(systemctl show -p Type,NotifyAccess,ActiveState,SubState posewatch | tr '\n' ' ')STATUS='$(prop StatusText)'"
else
    fail "READY not reached in 180 s: $(systemctl show -p ActiveState,SubState,Result,ExecMainStatus posewatch | tr '\n' ' ')"
fi
[ "$(prop Type)/$(prop NotifyAccess)" = notify/main ] || fail "unit is $(prop Type)/$(prop NotifyAccess), want notify/main"
pid=$(prop MainPID)
# Transparent huge pages off for the service (ProcessMemory.declineTransparentHugePages): its
# THP_enabled line (Linux 5.0+) reads 0 whatever the kernel's mode.
thp=$(awk '/^THP_enabled:/{print $2}' "/proc/$pid/status" 2>/dev/null)
[ "$thp" = 0 ] && pass "transparent huge pages off for posewatch (THP_enabled 0; the kernel's mode: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null))" \
    || fail "transparent huge pages not off for posewatch: THP_enabled '${thp:-absent}' in /proc/$pid/status"

# ------------------------------------------------------------------ LEDs while healthy
sample_leds 4
info "LEDs over 4 s (rises/on%/longest): $(leds_text)"
is_heartbeat "$STATUS_LED" 4 && pass "status LED $STATUS_LED heartbeat: ${RISES[$STATUS_LED]} pulses in 4 s, on ${ONPCT[$STATUS_LED]}%" \
    || fail "status LED $STATUS_LED is no heartbeat: ${RISES[$STATUS_LED]} pulses in 4 s, on ${ONPCT[$STATUS_LED]}%"
action_leds_off && pass "action LEDs off (vivid shows no person): $ACTION_LEDS" || fail "action LEDs not off: $(leds_text)"
held=$(gpio_line_states | grep -c ' posewatch-output$')
[ "$held" = 6 ] && pass "LED lines held with consumer posewatch as outputs (6 of 6)" \
    || fail "gpioinfo shows $held lines held by posewatch as outputs, want 6: $(gpio_line_states | grep -E '^GPIO(17|27|22|23|24|25) ' | tr '\n' ';')"

# ------------------------------------------------------------------ frames and summaries
# Each summary covers its own interval: FRAMES processed and DROPPED_FRAMES the camera delivered
# that the loop had no time for, exact up to the newest processed frame (a frame the driver dropped
# is known from its sequence numbers only once a later one is dequeued). That frame was captured
# FRAME_AGE_MS before the summary (journald's receive stamp). So over consecutive summaries, the
# sum of FRAMES + DROPPED_FRAMES divided by the time between the first and the last one's newest
# frame is the rate frames came from vivid, to about one frame, however long an inference takes.
# window JSON_ARRAY: "captured/s processed/s dropped processed seconds" over its summaries (the first one is only the start mark).
window() {
    jq -r 'def frame_time: (.__MONOTONIC_TIMESTAMP|tonumber) / 1e6 - (.FRAME_AGE_MS|tonumber) / 1e3;
        if length < 2 or any(.[]; .FRAME_AGE_MS == null) then "" else
        ((.[-1] | frame_time) - (.[0] | frame_time)) as $dt
        | (.[1:] | map(.FRAMES|tonumber) | add) as $f | (.[1:] | map(.DROPPED_FRAMES|tonumber) | add) as $d
        | "\(($f + $d) / $dt) \($f / $dt) \($d) \($f) \($dt)" end' <<<"$1"
}
expected=$(awk -v f="${CAMERA_FPS:-0}" -v d="${DECIMATION:-1}" 'BEGIN{printf "%.1f", f / (d > 0 ? d : 1)}')
within10() { awk -v c="$1" -v e="$2" 'BEGIN{exit !(e > 0 && c >= 0.9 * e && c <= 1.1 * e)}'; }
wait_for $(( 4 * SUMMARY_INTERVAL + 40 )) at_least 3 "$c_start" POSEWATCH_EVENT=summary
base_summaries=$(entries "$c_start" POSEWATCH_EVENT=summary | jq -c '.[-3:]')
read -r base_rate base_fps base_dropped base_frames base_seconds <<<"$(window "$base_summaries")"
info "summaries: $(jq -r 'map("FPS=\(.FPS) FRAMES=\(.FRAMES) DROPPED_FRAMES=\(.DROPPED_FRAMES) FRAME_AGE_MS=\(.FRAME_AGE_MS) INFERENCE_MS=\(.INFERENCE_MS) P99=\(.INFERENCE_P99_MS)") | join("; ")' <<<"$base_summaries")"
if [ -n "${base_rate:-}" ]; then
    line="$(printf '%.1f' "$base_rate")/s over $(printf '%.1f' "$base_seconds") s ($base_frames processed at $(printf '%.2f' "$base_fps")/s + $base_dropped dropped), expected $expected/s ±10%"
    within10 "$base_rate" "$expected" && pass "frames captured at the configured rate from vivid: $line"         || fail "frames captured at $line"
else
    fail "no 3 summaries with FRAMES, DROPPED_FRAMES and FRAME_AGE_MS within $(( 4 * SUMMARY_INTERVAL + 40 )) s of the start"
fi

# ------------------------------------------------------------------ journal fields
all=$(entries "$c_start")
native=$(jq '[.[] | select(._TRANSPORT=="journal" and .SYSLOG_IDENTIFIER=="posewatch" and .CODE_FILE and .CODE_LINE and .CODE_FUNC and .PRIORITY and .POSEWATCH_EVENT)] | length' <<<"$all")
has_start=$(jq '[.[] | select(.POSEWATCH_EVENT=="start")] | length' <<<"$all")
has_sum=$(jq '[.[] | select(.POSEWATCH_EVENT=="summary" and .FPS and .DROPPED_FRAMES and .INFERENCE_MS and .FRAMES)] | length' <<<"$all")
if [ "$native" -gt 0 ] && [ "$has_start" -ge 1 ] && [ "$has_sum" -ge 1 ]; then
    pass "journal: $native native entries with SYSLOG_IDENTIFIER=posewatch, CODE_FILE/LINE/FUNC, POSEWATCH_EVENT (start: $has_start, summaries with FPS/DROPPED_FRAMES/INFERENCE_MS/FRAMES: $has_sum)"
else
    fail "journal: native entries $native, start $has_start, summaries with fields $has_sum; events seen: $(jq -c '[.[].POSEWATCH_EVENT] | unique' <<<"$all")"
fi

# At start, one line says what opening the camera set (vivid: autogain, nothing else offered).
controls=$(jq -r '[.[] | select(.POSEWATCH_EVENT=="camera" and (.MESSAGE|startswith("camera controls: ")))][0].MESSAGE // ""' <<<"$all")
case "$controls" in
    *"autogain on"*) pass "journal: what opening the camera set: $controls" ;;
    *) fail "journal: no 'camera controls: … autogain on' entry at start (got '${controls:-nothing}')" ;;
esac

# Nothing but posewatch's own entries: libv4l2 prints every failed VIDIOC_DQBUF on stderr ("error
# dequeuing buf: Resource temporarily unavailable"), which the unit sends to the journal; the
# capture loop must never ask for a buffer that is not there.
stray=$(jq '[.[] | select(._TRANSPORT=="stdout")] | length' <<<"$all")
[ "$stray" = 0 ] && pass "journal: no stray stderr lines while streaming (e.g. libv4l2's failed-DQBUF messages)" \
    || fail "journal: $stray stray stderr lines while streaming: $(jq -c '[.[] | select(._TRANSPORT=="stdout") | .MESSAGE][:3]' <<<"$all" | head -c 300)"

# ------------------------------------------------------------------ slowed loop
# A quarter CPU for posewatch: it processes fewer frames, and the ones it misses must show up as
# DROPPED_FRAMES, so that processed + dropped is still the camera's rate. (Half a CPU did not always
# slow it: on a loaded host, vivid's busy-waiting capture thread and the harness leave posewatch
# about that much of the guest's two vCPUs anyway.)
QUOTA=25%
c_slow=$(cursor)
systemctl set-property --runtime posewatch.service CPUQuota=$QUOTA
# The first summary after the change is still partly unslowed; the second is the start mark; the
# two after it are slowed throughout. A summary waits for the frame in progress, and a slowed frame
# can take ~8 of the unslowed ones (a quarter CPU instead of up to two vCPUs): the bound allows for
# that (amd64: a frame ~1 s; an emulated arm64 is slower).
slow_bound=$(awk -v f="${base_fps:-0}" -v s=$SUMMARY_INTERVAL 'BEGIN{p = (f > 0 ? 1 / f : 5); printf "%d", 5 * s + 60 + 4 * 8 * p}')
wait_for "$slow_bound" at_least 4 "$c_slow" POSEWATCH_EVENT=summary
slow_summaries=$(entries "$c_slow" POSEWATCH_EVENT=summary | jq -c '.[1:4]')
systemctl set-property --runtime posewatch.service CPUQuota=
read -r slow_rate slow_fps slow_dropped slow_frames slow_seconds <<<"$(window "$slow_summaries")"
info "slowed (CPUQuota=$QUOTA): $(jq -r 'map("FPS=\(.FPS) FRAMES=\(.FRAMES) DROPPED_FRAMES=\(.DROPPED_FRAMES) FRAME_AGE_MS=\(.FRAME_AGE_MS) INFERENCE_MS=\(.INFERENCE_MS)") | join("; ")' <<<"$slow_summaries")"
if [ -n "${slow_rate:-}" ] && [ -n "${base_fps:-}" ] && [ "$slow_dropped" -gt 0 ] \
   && awk -v s="$slow_fps" -v b="$base_fps" 'BEGIN{exit !(s < 0.8 * b)}' && within10 "$slow_rate" "$expected"; then
    pass "dropped frames counted when slowed (CPUQuota=$QUOTA): processed $(printf '%.2f' "$slow_fps")/s < $(printf '%.2f' "$base_fps")/s before, $slow_dropped dropped, processed + dropped $(printf '%.1f' "$slow_rate")/s over $(printf '%.1f' "$slow_seconds") s = the camera's $expected/s ±10%"
else
    fail "slowed loop (CPUQuota=$QUOTA): processed ${slow_fps:-?}/s (before ${base_fps:-?}/s, want < 80 %), dropped ${slow_dropped:-?}, processed + dropped ${slow_rate:-?}/s over ${slow_seconds:-?} s (want $expected/s ±10%)"
fi
running || fail "posewatch stopped running while slowed: $(systemctl show -p ActiveState,SubState,NRestarts posewatch | tr '\n' ' ')"

# ------------------------------------------------------------------ camera unplugged and back
pid=$(prop MainPID); restarts=$(prop NRestarts)
c_unplug=$(cursor)
# vivid's "disconnect" button: the open camera errors out (POLLERR, DQBUF fails) and reopening
# fails with ENODEV (the node stays; a real USB unplug removes it: posewatch must treat both as
# "camera lost" and keep retrying). vivid reconnects when its last open handle closes, so the
# harness holds one (fd 6) to keep the camera unplugged, and lets go to plug it back in.
exec 6</dev/video0
v4l2-ctl -d /dev/video0 -c disconnect=1 2>&1 | head -2
wait_for 20 with_priority '<=' 3 "$c_unplug"
sample_leds 3
info "LEDs with the camera gone (rises/on%/longest): $(leds_text)"
is_fast_blink "$STATUS_LED" 3 && pass "camera unplugged: status LED fast blink (${RISES[$STATUS_LED]} pulses in 3 s, on ${ONPCT[$STATUS_LED]}%)" \
    || fail "camera unplugged: status LED $STATUS_LED not fast-blinking: ${RISES[$STATUS_LED]} pulses in 3 s, on ${ONPCT[$STATUS_LED]}%"
# posewatch must have closed the dead device (or vivid could never reconnect, nor a USB camera be
# re-enumerated cleanly).
held=$(find /proc/"$pid"/fd -lname '/dev/video*' 2>/dev/null | wc -l)
[ "$held" = 0 ] && info "posewatch closed the unplugged camera" \
    || { fail "camera unplugged: posewatch still holds $held descriptor(s) on the dead /dev/video0"
         artifact "posewatch descriptors and video mappings with the camera gone" \
             sh -c "ls -l /proc/$pid/fd; grep -i video /proc/$pid/maps; grep -E '^(State|Threads)' /proc/$pid/status"; }
nap 2
c_back=$(cursor)
exec 6<&-    # plug it back in: the last handle closes, vivid reconnects
wait_for 60 with_priority '>=' 5 "$c_back" POSEWATCH_EVENT=camera \
    && nap 3   # let the LEDs settle into the healthy pattern
errors=$(entries "$c_unplug" | jq '[.[] | select((.PRIORITY|tonumber) <= 3)] | length')
[ "$errors" = 1 ] && pass "camera unplugged: exactly one journal error for the episode ($(entries "$c_unplug" | jq -r '[.[] | select((.PRIORITY|tonumber) <= 3)][0].MESSAGE'))" \
    || fail "camera unplugged: $errors journal entries with PRIORITY ≤ 3, want 1: $(entries "$c_unplug" | jq -c '[.[] | select((.PRIORITY|tonumber) <= 3) | .MESSAGE]' | head -c 400)"
sample_leds 4
info "LEDs after the camera came back: $(leds_text)"
if running && [ "$(prop MainPID)" = "$pid" ] && [ "$(prop NRestarts)" = "$restarts" ] && is_heartbeat "$STATUS_LED" 4 \
   && [ "$(entries "$c_back" POSEWATCH_EVENT=camera | jq '[.[] | select((.PRIORITY|tonumber) >= 5)] | length')" -ge 1 ]; then
    pass "camera back (vivid reconnected): recovered without a restart (same PID $pid), heartbeat again, camera event logged"
else
    fail "camera back: running=$(running && echo yes || echo no) pid $pid→$(prop MainPID) restarts $restarts→$(prop NRestarts) status LED ${RISES[$STATUS_LED]}↑/${ONPCT[$STATUS_LED]}% camera events: $(entries "$c_unplug" POSEWATCH_EVENT=camera | jq -c '[.[] | {P:.PRIORITY,M:.MESSAGE}]' | head -c 300)"
fi

# ------------------------------------------------------------------ frozen loop
pid=$(prop MainPID); restarts=$(prop NRestarts)
wd=$(prop WatchdogUSec); wd=${wd%s}; [[ $wd =~ ^[0-9]+$ ]] || wd=10    # "10s"; anything else: the unit's 10 s
c_freeze=$(cursor)
kill -STOP "$pid"
t0=${EPOCHREALTIME/./}
if wait_for $(( wd + 120 )) sh -c "[ \"\$(systemctl show -p NRestarts --value posewatch)\" -gt $restarts ] && [ \"\$(systemctl show -p SubState --value posewatch)\" = running ]"; then
    took=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
    # grep -c, not -q: an early exit would break the pipe, and pipefail would call that a failure.
    [ "$(after "$c_freeze" | grep -ci 'watchdog timeout')" -ge 1 ] \
        && pass "frozen loop (SIGSTOP pid $pid) killed by the watchdog and restarted: new pid $(prop MainPID), READY again after $took ms" \
        || fail "frozen loop restarted, but systemd logged no watchdog timeout"
else
    fail "frozen loop: no watchdog restart within $(( wd + 120 )) s: $(systemctl show -p ActiveState,SubState,NRestarts,Result posewatch | tr '\n' ' ')"
    kill -CONT "$pid" 2>/dev/null
fi

# ------------------------------------------------------------------ SIGTERM
c_stop=$(cursor); pid=$(prop MainPID)
t0=${EPOCHREALTIME/./}
timeout 30 systemctl stop posewatch.service
took=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
sample_leds 1
res="$(prop Result) $(prop ExecMainCode) $(prop ExecMainStatus)"
free=$(gpio_line_states | grep -cE '^GPIO(17|27|22|23|24|25) free$')
stops=$(entries "$c_stop" | jq '[.[] | select(.POSEWATCH_EVENT=="stop")] | length')
sums=$(entries "$c_stop" | jq '[.[] | select(.POSEWATCH_EVENT=="summary")] | length')
lit=0; for l in $ALL_LEDS; do (( ONPCT[$l] > 0 )) && lit=$((lit + 1)); done
# ExecMainCode 1 = CLD_EXITED (not killed); Result success = no timeout, no SIGKILL.
if [ "$res" = "success 1 0" ] && [ "$free" = 6 ] && [ "$lit" = 0 ] && [ "$stops" -ge 1 ] && [ "$sums" -ge 1 ]; then
    pass "SIGTERM: stopped in $took ms, exit 0, all 6 LEDs off and released, stop event and final summary logged"
else
    fail "SIGTERM: took $took ms, Result/ExecMainCode/Status='$res' (want 'success 1 0'), lines released $free/6, LEDs lit $lit, stop events $stops, summaries $sums"
fi
[ "$took" -le 1500 ] || info "SIGTERM stop took $took ms (issue 10 asks for under 1 s; TCG is slow)"

# ------------------------------------------------------------------ bad config
printf '[camera]\nfps = 30\n' > "$CONF"
systemctl reset-failed posewatch.service 2>/dev/null
systemctl start --no-block posewatch.service
wait_for 90 sh -c '[ "$(systemctl show -p ActiveState --value posewatch)" = failed ]'
nap 5    # longer than RestartSec=2s: a restart would have happened by now
st="$(prop ActiveState) $(prop Result) $(prop ExecMainStatus) $(prop NRestarts)"
# The message comes through the unit's stderr stream, which journald may store a moment after
# systemd has marked the unit failed: wait for it rather than look once. It names file:line and
# key, and appears exactly once (a restart loop would repeat it); no other start of this test
# uses a bad config, so the unit's whole journal is searched.
bad_lines() { journalctl -u posewatch.service -o cat --no-pager | grep -c 'posewatch\.toml:2: .*fps'; }
wait_for 30 sh -c 'journalctl -u posewatch.service -o cat --no-pager | grep -q "posewatch\.toml:2: .*fps"'
nap 1
count=$(bad_lines)
line=$(journalctl -u posewatch.service -o cat --no-pager | grep 'posewatch\.toml:2: .*fps' | head -1)
if [ "$st" = "failed exit-code 78 0" ] && [ "$count" = 1 ]; then
    pass "bad config: exit status 78, no restart (NRestarts=0), logged once: $line"
else
    fail "bad config: ActiveState/Result/ExecMainStatus/NRestarts='$st' (want 'failed exit-code 78 0'), $count messages naming posewatch.toml:2 and fps (want 1): '${line:-none}'"
fi
cp /run/posewatch.toml.packaged "$CONF"
systemctl reset-failed posewatch.service 2>/dev/null

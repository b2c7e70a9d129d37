# systest-soak: the fault soak (issue 43), sourced by systest-guest after the live-loop checks when
# the kernel command line carries systest.soak=SECONDS (run-system-test.sh --soak). Uses the
# helpers of systest-guest and systest-guest-run: pass/fail/info/nap/wait_for, sample_leds,
# gpio_line_states, led_value, prop, cursor, after, entries, with_priority, running, SIM, CONF,
# ALL_LEDS, STATUS_LED.
#
# posewatch.service runs as installed (the real unit, vivid camera, gpio-sim LEDs) while the faults
# a Raspberry Pi meets are injected, and its process is sampled in between:
#   unplug      vivid's Disconnect control (streaming fails, the node stays; vivid comes back when
#               its last handle closes) and, alternately, unbinding and rebinding the vivid driver
#               (the node and the udev symlink go away and come back, as a USB camera's do)
#   journald    systemctl restart systemd-journald
#   clock       the wall clock stepped +1 h, −1 h and back (a Pi has no RTC; timesyncd steps it)
#   varlog      /var/log/journal full (a tmpfs journald writes to, filled with a file for a while)
#   sighup      a SIGHUP storm: a valid and an invalid config alternately rewritten in place
#               (without truncating: same length)
#   stop        systemctl stop + start, the LEDs read while stopped
#   starve      CPUQuota=1% until systemd's watchdog restarts posewatch (the one restart expected)
# Samples (while no fault is active): RSS, descriptors and threads of the main process, NRestarts;
# every summary entry is collected as it appears (journald's monotonic receive time and the PID,
# so a clock step cannot hide a late one). The result is one table (SOAK| lines) and one PASS/FAIL
# line per target.
#
# Profiles: a stop + start and the starvation first (each starts a new process; the last one is
# followed to the end). Then, under 20 minutes ("short", what CI runs), every other fault once,
# back to back; longer, one fault every SOAK_GAP seconds from a rotation in which every other
# fault is a camera unplug (so one every 3 minutes), until the time is up.

SOAK_SECONDS=$(sed -n 's/.*systest\.soak=\([0-9]*\).*/\1/p' /proc/cmdline)
SOAK_INTERVAL=10           # journal.summary_interval during the soak
SOAK_MAX_STALL=30          # watchdog.max_stall: as in the live-loop checks (a loaded host is slow)
SOAK_RSS_LIMIT_KB=1024     # the issue's target: RSS growth ≤ 1 MB after the first 10 minutes
SOAK_BASELINE_S=600        # ... measured from this long after the last start of the process
# A short profile ends inside those 10 minutes. Under emulation a new process's anonymous pages grow
# for its first half minute (8.8 → 12.1 MB in one run; a 2 MB step 28 s after the start in another,
# which a baseline 15 s after the start counted as growth), and file pages come and go with the
# page cache (1.8 MB → 4 kB while /var/log was full). So it takes its baseline SOAK_SHORT_WARMUP_S
# after the start and holds the anonymous pages alone to the limit (a leak is there); the total and
# its split are reported beside them.
SOAK_SHORT_WARMUP_S=45
# SOAK_HOLD: how long the clock stays stepped each way, and a third of how long /var/log stays full.
if [ "$SOAK_SECONDS" -lt 1200 ]; then SOAK_PROFILE=short SOAK_SAMPLE_S=10 SOAK_GAP=0 SOAK_HOLD=5
else SOAK_PROFILE=long SOAK_SAMPLE_S=30 SOAK_GAP=90 SOAK_HOLD=20; fi
S=/run/soak
mkdir -p "$S"; : > "$S/samples"; : > "$S/summaries"; : > "$S/faults"; : > "$S/stops"; : > "$S/full-windows"
soak_t0=$(up); soak_t0_us=$(awk -v u="$soak_t0" 'BEGIN{printf "%d", u * 1e6}')
since() { awk -v a="$(up)" -v b="$1" 'BEGIN{printf "%.0f", a - b}'; }

info "soak: profile $SOAK_PROFILE, ${SOAK_SECONDS}s, summaries every ${SOAK_INTERVAL}s, samples every ${SOAK_SAMPLE_S}s$([ "$SOAK_GAP" -gt 0 ] && echo ", a fault every ${SOAK_GAP}s")"

# The config's text with the summary interval under the key $1 and watchdog.max_stall $2. The
# valid key and the misspelt one are the same length, so the SIGHUP storm rewrites the file in
# place without truncating it (dd conv=notrunc: one byte changes). A truncating rewrite (`>`) can be
# read half-written: an empty file is a valid config (every default), and the storm then applied
# summary_interval 60 and no camera.device (see docs/development.md, Reliability: the fault soak).
config_text() {
    printf '[camera]\ndevice = "/dev/posewatch-camera"\n\n[journal]\n%s = %s\n\n[watchdog]\nmax_stall = %s\n' \
        "$1" "$SOAK_INTERVAL" "${2:-$SOAK_MAX_STALL}"
}
soak_config() { config_text summary_interval "${1:-}" > "$CONF"; }   # $1: max_stall
# The storm's rewrites, in place: the valid file, and one with an unknown key (refused on reload,
# the running settings kept).
storm_config() { config_text "$1" | dd of="$CONF" conv=notrunc status=none; }

# ------------------------------------------------------------------ the journal on a disk of its own
# journald writes the persistent journal under /var/log/journal; here that is a tmpfs of its own,
# so the varlog fault can fill it without touching the rest of the VM. It stays mounted for the
# whole soak (the entries on it are read at the end). journald's size limits would otherwise be
# 10 % of it and keep 15 % free, vacuuming the soak's own history: here the limits are the disk's
# size, so a full disk is full for journald too (its writes fail; nothing old is deleted).
mkdir -p /var/log/journal /run/systemd/journald.conf.d
mount -t tmpfs -o size=256m,mode=2755 tmpfs /var/log/journal
printf '[Journal]\nStorage=persistent\nSystemMaxUse=240M\nSystemKeepFree=0\nSystemMaxFileSize=16M\n' \
    > /run/systemd/journald.conf.d/soak.conf
systemctl restart systemd-journald
journalctl --flush
info "soak: journal on a 256 MB tmpfs at /var/log/journal ($(du -sh /var/log/journal | cut -f1) after the flush)"

# ------------------------------------------------------------------ start
soak_config
systemctl reset-failed posewatch.service 2>/dev/null
systemctl set-property --runtime posewatch.service CPUQuota= 2>/dev/null
systemctl start --no-block posewatch.service
wait_for 180 running || fail "soak: posewatch did not start: $(systemctl show -p ActiveState,SubState,Result posewatch | tr '\n' ' ')"
soak_restarts0=$(prop NRestarts)

# show_state: "PID NRESTARTS SUBSTATE" with one systemctl call.
show_state() {
    systemctl show -p MainPID,NRestarts,SubState posewatch.service \
        | awk -F= '{v[$1]=$2} END{print v["MainPID"], v["NRestarts"], v["SubState"]}'
}
# The soak's summary entries: "MONOTONIC_US PID" lines merged into $S/summaries. Every call reads
# all of this boot's summaries since the soak began and keeps the union with what earlier calls
# saw, so an entry journald loses later (or a cursor that a journal rotation invalidates) cannot
# change the count.
collect_summaries() {
    journalctl -b -u posewatch.service -o json --no-pager POSEWATCH_EVENT=summary 2>/dev/null | awk -v t0="$soak_t0_us" '{
        m = ""; p = ""
        if (match($0, /"__MONOTONIC_TIMESTAMP":"[0-9]+"/)) m = substr($0, RSTART + 25, RLENGTH - 26)
        if (match($0, /"_PID":"[0-9]+"/)) p = substr($0, RSTART + 8, RLENGTH - 9)
        if (m != "" && p != "" && m + 0 >= t0) print m, p }' | sort -n -u - "$S/summaries" > "$S/summaries.new"
    mv "$S/summaries.new" "$S/summaries"
}
uptime_us() { awk '{printf "%d", $1 * 1e6}' /proc/uptime; }   # CLOCK_BOOTTIME, = monotonic here
# One sample of the running process:
# "SECONDS_SINCE_SOAK_START PID RSS_KB FDS THREADS NRESTARTS ANON_KB FILE_KB SHMEM_KB".
# RSS is split as the kernel counts it: anonymous pages (the heap and stacks: where a leak grows),
# file pages (mapped files on a disk) and shared pages (tmpfs-backed mappings: in this VM's RAM root
# the binary, its libraries and the model are shared pages, about 14.7 MB).
sample() {
    local pid nr sub rss anon file shmem threads fds
    read -r pid nr sub <<<"$(show_state)"
    collect_summaries
    [ "$sub" = running ] && [ "$pid" -gt 0 ] || return 0
    read -r rss anon file shmem threads < <(awk '/^VmRSS:/{r=$2} /^RssAnon:/{a=$2} /^RssFile:/{f=$2}
        /^RssShmem:/{s=$2} /^Threads:/{t=$2} END{print r, a, f, s, t}' "/proc/$pid/status" 2>/dev/null)
    fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
    [ -n "$rss" ] && echo "$(since "$soak_t0") $pid $rss $fds $threads $nr $anon $file $shmem" >> "$S/samples"
    # Each process's memory map at its first sample, for the artifact that says where the last
    # process's anonymous pages are (smaps_by_mapping).
    [ -e "$S/smaps-first-$pid" ] || cp "/proc/$pid/smaps" "$S/smaps-first-$pid" 2>/dev/null || true
}
# smaps_by_mapping FILE: a process's smaps summed per mapping name, unnamed mappings by their size
# (a thread's stack, a malloc arena's 64 MB reservation), largest anonymous first:
# "ANON_KB RSS_KB HUGE_KB MAPPINGS NAME" (HUGE_KB: of the anonymous part, in transparent huge pages).
smaps_by_mapping() {
    awk 'function flush() { if (name != "") { anon[name] += a; rss[name] += r; huge[name] += h; n[name]++ } }
         /^[0-9a-f]+-[0-9a-f]+ /{flush(); name = NF >= 6 ? $6 : "-"; a = r = h = 0; next}
         /^Size:/{if (name == "-") name = "(unnamed, " $2 " kB)"} /^Rss:/{r = $2} /^Anonymous:/{a = $2}
         /^AnonHugePages:/{h = $2}
         END{flush(); for (k in anon) printf "%8d %8d %8d %5d %s\n", anon[k], rss[k], huge[k], n[k], k}' "$1" | sort -rn | head -15
}
# sample_for SECONDS: samples every SOAK_SAMPLE_S until SECONDS have passed.
sample_for() {
    local end=$(( ${EPOCHREALTIME/./} + $1 * 1000000 )) left
    while :; do
        sample
        left=$(( (end - ${EPOCHREALTIME/./}) / 1000000 ))
        (( left > 0 )) || break
        nap $(( left < SOAK_SAMPLE_S ? left : SOAK_SAMPLE_S ))
    done
}
record() {  # record FAULT ok|bad TEXT: one injection's outcome
    echo "$1|$2|$3" >> "$S/faults"
    [ "$2" = ok ] && return
    info "soak: $1 failed: $3"
    artifact "soak: $1 failed: the unit's last journal entries" journalctl -u posewatch.service -n 40 --no-pager -o short-monotonic
}
# leds_after_stop WHEN: all six LED lines read 0 and are free (nobody holds them).
leds_after_stop() {
    local l lit="" free
    for l in $ALL_LEDS; do [ "$(led_value "$l")" = 0 ] || lit="$lit $l"; done
    free=$(gpio_line_states | grep -cE '^GPIO(17|27|22|23|24|25) free$')
    if [ -z "$lit" ] && [ "$free" = 6 ]; then echo "$1|ok|all 6 off and free" >> "$S/stops"
    else echo "$1|bad|lit:${lit:- none}, free $free/6" >> "$S/stops"; info "soak: LEDs after $1: lit${lit:- none}, free $free/6"; fi
}
healthy_again() {  # healthy_again PID: the unit running, with the same main process
    wait_for 60 running && [ "$(prop MainPID)" = "$1" ]
}

# ------------------------------------------------------------------ faults
unplug_count=0
fault_unplug() {
    local pid c c_back errors how held drv=/sys/bus/platform/drivers/vivid
    pid=$(prop MainPID); c=$(cursor); unplug_count=$((unplug_count + 1))
    if (( unplug_count % 2 == 1 )) || [ ! -e "$drv/vivid.0" ]; then
        how=disconnect
        exec 6</dev/video0
        v4l2-ctl -d /dev/video0 -c disconnect=1 >/dev/null 2>&1
    else
        how=unbind
        echo vivid.0 > "$drv/unbind"
    fi
    wait_for 30 with_priority '<=' 3 "$c"
    nap 2
    held=$(find /proc/"$pid"/fd -lname '/dev/video*' 2>/dev/null | wc -l)
    c_back=$(cursor)
    if [ $how = disconnect ]; then exec 6<&-; else echo vivid.0 > "$drv/bind"; udevadm settle -t 30; fi
    wait_for 90 with_priority '>=' 5 "$c_back" POSEWATCH_EVENT=camera
    errors=$(entries "$c" | jq '[.[] | select((.PRIORITY|tonumber) <= 3)] | length')
    if healthy_again "$pid" && [ "$errors" = 1 ] && [ "$held" = 0 ] \
       && [ "$(entries "$c_back" POSEWATCH_EVENT=camera | jq '[.[] | select((.PRIORITY|tonumber) >= 5)] | length')" -ge 1 ]; then
        record "unplug ($how)" ok "recovered, same PID"
    else
        record "unplug ($how)" bad "pid $pid→$(prop MainPID), errors $errors (want 1), dead-device fds $held, $(entries "$c" | jq -c '[.[] | select(.POSEWATCH_EVENT=="camera" or (.PRIORITY|tonumber) <= 3) | .MESSAGE][:4]' | head -c 300)"
    fi
}
fault_journald() {
    local pid; pid=$(prop MainPID)
    if timeout 120 systemctl restart systemd-journald && wait_for 30 systemctl is-active -q systemd-journald && healthy_again "$pid"; then
        record journald ok "posewatch kept running"
    else
        record journald bad "journald $(systemctl is-active systemd-journald), pid $pid→$(prop MainPID)"
    fi
}
fault_clock() {
    local pid; pid=$(prop MainPID)
    date -s '+1 hour' >/dev/null; sample_for "$SOAK_HOLD"
    date -s '-2 hours' >/dev/null; sample_for "$SOAK_HOLD"
    date -s '+1 hour' >/dev/null
    healthy_again "$pid" && record clock ok "kept running through +1 h, −1 h, back" \
        || record clock bad "pid $pid→$(prop MainPID) $(prop SubState)"
}
fault_varlog() {
    local pid c; pid=$(prop MainPID)
    local t_full
    t_full=$(uptime_us)
    dd if=/dev/zero of=/var/log/journal/fill bs=64k status=none 2>/dev/null
    local free; free=$(df --output=avail /var/log/journal | tail -1 | tr -d ' ')
    sample_for $(( 3 * SOAK_HOLD ))
    rm -f /var/log/journal/fill
    # journald may fail to store entries while the disk is full: the window is noted so that a
    # summary missed in it can be told apart (it still counts as missed).
    echo "$t_full $(uptime_us)" >> "$S/full-windows"
    healthy_again "$pid" && record "/var/log full" ok "kept running ($(( 3 * SOAK_HOLD )) s full, ${free} kB free)" \
        || record "/var/log full" bad "pid $pid→$(prop MainPID) $(prop SubState)"
}
fault_sighup() {
    local pid c i applied refused; pid=$(prop MainPID); c=$(cursor)
    for i in $(seq 1 20); do
        if (( i % 2 )); then storm_config summary_interval; else storm_config summary_intervak; fi
        kill -HUP "$pid"
        nap 0.25
    done
    storm_config summary_interval; kill -HUP "$pid"   # end on the valid file
    last_config_applied() { journalctl --sync; after "$c" POSEWATCH_EVENT=config | tail -1 | grep -q 'config reloaded'; }
    wait_for 30 last_config_applied
    # Signals pending together are delivered once, and the loop reads them between frames, so
    # fewer reloads than HUPs happen; the last one must have read the last (valid) file.
    local events; events=$(after "$c" POSEWATCH_EVENT=config)
    applied=$(grep -c 'config reloaded' <<<"$events")
    refused=$(grep -c 'config reload failed' <<<"$events")
    healthy_again "$pid" && tail -1 <<<"$events" | grep -q 'config reloaded' \
        && record "SIGHUP storm" ok "21 HUPs: $applied reloads applied, $refused refused, the last applied" \
        || record "SIGHUP storm" bad "pid $pid→$(prop MainPID), $applied applied, $refused refused, last: $(tail -1 <<<"$events" | head -c 200)"
}
fault_stop() {
    local pid t0 res; pid=$(prop MainPID)
    timeout 30 systemctl stop posewatch.service
    res="$(prop Result) $(prop ExecMainStatus)"
    leds_after_stop "systemctl stop"
    systemctl start --no-block posewatch.service
    if [ "$res" = "success 0" ] && wait_for 120 running; then record "stop + start" ok "exit 0, running again"
    else record "stop + start" bad "stop result '$res', $(prop SubState)"; fi
}
starve_restarts=0
# The stall limit is lowered to 5 s by a reload first (a SIGHUP the loop answers at once), so the
# loop stops its pings 5 s after its last frame and systemd's watchdog (WatchdogSec=10s) kills it
# about 15 s into the starvation; the normal file is back before the restarted process reads it.
fault_starve() {
    local pid nr sub c t0 took seen=no
    read -r pid nr sub <<<"$(show_state)"; c=$(cursor)
    soak_config 5; kill -HUP "$pid"
    wait_for 30 sh -c "journalctl -u posewatch.service --cursor '$c' -o cat POSEWATCH_EVENT=config | grep -q 'config reloaded'"
    systemctl set-property --runtime posewatch.service CPUQuota=1%
    t0=${EPOCHREALTIME/./}
    # Until systemd kills it: the process is gone and the unit waits RestartSec (auto-restart).
    local limit=$(( t0 + (SOAK_MAX_STALL + 120) * 1000000 )) p2 n2 s2
    while (( ${EPOCHREALTIME/./} < limit )); do
        read -r p2 n2 s2 <<<"$(show_state)"
        if [ "$s2" = auto-restart ] || [ "$n2" -gt "$nr" ]; then seen=yes; break; fi
        nap 0.2
    done
    systemctl set-property --runtime posewatch.service CPUQuota=
    soak_config
    took=$(( (${EPOCHREALTIME/./} - t0) / 1000000 ))
    [ "$s2" = auto-restart ] && leds_after_stop "watchdog kill"
    wait_for 180 running
    journalctl --sync
    local wd; wd=$(after "$c" | grep -ci 'watchdog timeout')
    read -r p2 n2 s2 <<<"$(show_state)"
    starve_restarts=$(( n2 - nr ))
    if [ $seen = yes ] && [ "$wd" -ge 1 ] && [ "$s2" = running ]; then
        record "CPU starvation (CPUQuota=1%)" ok "watchdog restart after ${took} s (expected), pid $pid→$p2"
    else
        record "CPU starvation (CPUQuota=1%)" bad "restart seen: $seen, watchdog timeouts logged: $wd, now $s2"
    fi
}

# ------------------------------------------------------------------ the run
# The stop and the starvation come first: each starts a new process, and the one started last is
# the one whose memory, descriptors and threads are followed to the end.
sample_for 5
fault_stop
fault_starve
sample_for 15
if [ $SOAK_PROFILE = short ]; then
    for f in unplug journald clock sighup unplug varlog; do
        fault_$f; sample_for 2
    done
    sample_for 5
else
    rotation=(unplug journald unplug sighup unplug clock unplug varlog)
    i=0; last_progress=0
    while (( $(since "$soak_t0") + SOAK_GAP < SOAK_SECONDS )); do
        sample_for "$SOAK_GAP"
        fault_${rotation[$(( i % ${#rotation[@]} ))]}; i=$((i + 1))
        if (( $(since "$soak_t0") - last_progress >= 600 )); then
            last_progress=$(since "$soak_t0")
            info "soak: ${last_progress}s of ${SOAK_SECONDS}s, $i faults, last sample: $(tail -1 "$S/samples")"
        fi
    done
    left=$(( SOAK_SECONDS - $(since "$soak_t0") )); (( left > 0 )) && sample_for "$left"
fi
collect_summaries
read -r end_pid end_nr end_sub <<<"$(show_state)"
cp "/proc/$end_pid/smaps" "$S/smaps-last" 2>/dev/null || true
timeout 30 systemctl stop posewatch.service
leds_after_stop "final stop"
soak_end=$(since "$soak_t0")

# ------------------------------------------------------------------ the verdicts and the table
# The last process's samples: its first 10 minutes (from its own first sample) against the end.
# A short profile has no 10 minutes: it compares a sample after its warm-up with its last.
awk -v pid="$end_pid" '$2 == pid' "$S/samples" > "$S/last-process"
read -r first_t first_rss first_fds first_thr < <(awk 'NR==1{print $1, $3, $4, $5}' "$S/last-process")
base_t=$(( ${first_t:-0} + SOAK_BASELINE_S ))
if [ $SOAK_PROFILE = long ]; then
    # The value at the 10-minute mark: the sample nearest it (at or after).
    read -r b_t b_rss b_anon b_file b_shmem < <(awk -v t="$base_t" '$1 >= t {print $1, $3, $7, $8, $9; exit}' "$S/last-process")
    base_label="at 10 min"
else
    # No 10 minutes: the first sample once the process has run SOAK_SHORT_WARMUP_S.
    read -r b_t b_rss b_anon b_file b_shmem < <(awk -v t="$(( ${first_t:-0} + SOAK_SHORT_WARMUP_S ))" '$1 >= t {print $1, $3, $7, $8, $9; exit}' "$S/last-process")
    base_label="after ${SOAK_SHORT_WARMUP_S} s"
fi
read -r end_t end_rss end_fds end_thr end_anon end_file end_shmem < <(tail -1 "$S/last-process" | awk '{print $1, $3, $4, $5, $7, $8, $9}')
read -r rss_min rss_max < <(awk -v t="${b_t:-0}" '$1 >= t {if (min == "" || $3 < min) min = $3; if ($3 > max) max = $3} END{print min, max}' "$S/last-process")
fds_set=$(awk '{print $4}' "$S/last-process" | sort -un | tr '\n' ' ')
thr_set=$(awk '{print $5}' "$S/last-process" | sort -un | tr '\n' ' ')
samples_n=$(wc -l < "$S/last-process")

# Summaries: consecutive ones of the same process are SOAK_INTERVAL apart, later by the frame in
# progress when one falls due (seconds under emulation; the next one is due an interval after it).
# A gap of two intervals or more means a whole interval without one: missed. Late ones
# (> interval + 3 s) are counted apart.
# Every missed one counts; those in a gap that overlaps a window in which /var/log was full (when
# journald may fail to store them) are also counted apart, to tell where to look.
read -r sums missed late maxgap lost_full < <(awk -v iv="$SOAK_INTERVAL" -v windows="$(tr '\n' ' ' < "$S/full-windows")" '
    BEGIN { k = split(windows, w, " "); for (i = 1; i + 1 <= k; i += 2) { ws[++nw] = w[i]; we[nw] = w[i + 1] } }
    { n++; if ($2 == pid) { g = ($1 - t) / 1e6; full = 0
          for (i = 1; i <= nw; i++) if (t < we[i] && $1 > ws[i]) full = 1
          if (g >= 2 * iv) { k = int(g / iv) - 1; missed += k; if (full) lostfull += k }
          else if (g > iv + 3) late++
          if (g > maxg) maxg = g }
      pid = $2; t = $1 }
    END { printf "%d %d %d %.1f %d\n", n, missed, late, maxg, lostfull }' "$S/summaries")

expected_restarts=$(grep -c '^CPU starvation' "$S/faults")
total_restarts=$(( end_nr - soak_restarts0 ))
unexpected=$(( total_restarts - starve_restarts ))
stops_n=$(wc -l < "$S/stops"); stops_bad=$(grep -c '|bad|' "$S/stops")

verdict() { if eval "$1"; then echo PASS; else echo FAIL; fi; }
row() { echo "SOAK| $1 | $2 | $3 | $4 | $5 |"; }
rss_growth=$(( ${end_rss:-0} - ${b_rss:-0} ))
anon_growth=$(( ${end_anon:-0} - ${b_anon:-0} ))
rss_split="anon ${b_anon:-?}→${end_anon:-?}, file ${b_file:-?}→${end_file:-?}, shared ${b_shmem:-?}→${end_shmem:-?}"
if [ $SOAK_PROFILE = long ]; then held="RSS growth" held_kb=$rss_growth held_b=${b_rss:-} held_e=${end_rss:-}
else held="anonymous RSS growth" held_kb=$anon_growth held_b=${b_anon:-} held_e=${end_anon:-}; fi
v_rss=$(verdict '[ -n "$held_b" ] && [ -n "$held_e" ] && (( held_kb <= SOAK_RSS_LIMIT_KB ))')
v_fds=$(verdict '[ -n "$fds_set" ] && [ "$(wc -w <<<"$fds_set")" = 1 ]')
v_thr=$(verdict '[ -n "$thr_set" ] && [ "$(wc -w <<<"$thr_set")" = 1 ]')
v_sum=$(verdict '(( sums > 0 && missed == 0 ))')
v_wd=$(verdict '(( unexpected == 0 && starve_restarts == expected_restarts ))')
v_led=$(verdict '(( stops_n > 0 && stops_bad == 0 ))')
v_end=$(verdict '[ "$end_sub" = running ]')

echo "=== soak table ($SOAK_PROFILE profile, ${soak_end} s, summaries every ${SOAK_INTERVAL} s)"
row "fault / metric" "injected / $base_label" "outcome / end" "target" "verdict"
row "---" "---" "---" "---" "---"
while IFS= read -r f; do
    n=$(grep -c "^$f|" "$S/faults"); bad=$(grep -c "^$f|bad|" "$S/faults")
    last=$(grep "^$f|" "$S/faults" | tail -1 | cut -d'|' -f3)
    row "$f" "$n" "$((n - bad)) of $n ok; last: $last" "survived, no restart" "$([ "$bad" = 0 ] && echo PASS || echo FAIL)"
done < <(cut -d'|' -f1 "$S/faults" | awk '!seen[$0]++')
row "RSS (kB), last process" "${b_rss:-?} (t=${b_t:-?} s)" "${end_rss:-?} (t=${end_t:-?} s; min ${rss_min:-?}, max ${rss_max:-?}; $rss_split)" "$held ≤ ${SOAK_RSS_LIMIT_KB} kB" "$v_rss: ${held_kb} kB (total ${rss_growth}, anonymous ${anon_growth})"
row "descriptors" "${first_fds:-?}" "${end_fds:-?} (values seen: ${fds_set})" "constant" "$v_fds"
row "threads" "${first_thr:-?}" "${end_thr:-?} (values seen: ${thr_set})" "constant" "$v_thr"
row "summaries" "$sums logged" "$missed missed, $late late (> interval + 3 s), longest gap ${maxgap} s ($lost_full of the missed in a gap overlapping /var/log full)" "none missed" "$v_sum"
row "watchdog restarts" "$expected_restarts expected (starvation)" "$total_restarts in all ($starve_restarts from starvation)" "only the provoked one" "$v_wd"
row "LEDs after a stop" "$stops_n stops" "$((stops_n - stops_bad)) with all off and free$(grep '|bad|' "$S/stops" | cut -d'|' -f1,3 | tr '\n' ';' | sed 's/^/; /;s/;$//')" "all off" "$v_led"
row "service at the end" "$samples_n samples" "$end_sub (pid $end_pid)" "running" "$v_end"

# One PASS/FAIL line per target, so the host's verdict counts them.
fault_bad=$(grep -c '|bad|' "$S/faults")
[ "$fault_bad" = 0 ] && pass "soak: $(wc -l < "$S/faults") faults injected, each survived as expected" \
    || fail "soak: $fault_bad of $(wc -l < "$S/faults") fault injections not survived: $(grep '|bad|' "$S/faults" | head -3 | tr '\n' ';')"
echo "$v_rss: soak: $held ${held_kb} kB from ${held_b:-?} kB ($base_label) to ${held_e:-?} kB (≤ ${SOAK_RSS_LIMIT_KB} kB; total RSS ${rss_growth} kB: $rss_split)"
echo "$v_fds: soak: descriptors constant (seen: $fds_set)"
echo "$v_thr: soak: threads constant (seen: $thr_set)"
echo "$v_sum: soak: summaries: $sums logged, $missed missed, longest gap ${maxgap} s"
echo "$v_wd: soak: watchdog restarts: $total_restarts, $starve_restarts from starvation ($expected_restarts provoked)"
echo "$v_led: soak: LEDs off and released after every stop ($stops_n stops)"
echo "$v_end: soak: posewatch still running at the end (no unit failure)"
artifact "soak samples (t pid rss_kB fds threads nrestarts anon_kB file_kB shmem_kB)" cat "$S/samples"
artifact "soak summaries (monotonic_us pid)" cat "$S/summaries"
artifact "soak faults" cat "$S/faults"
if [ -e "$S/smaps-first-$end_pid" ] && [ -e "$S/smaps-last" ]; then
    artifact "soak: the last process's memory by mapping at its first sample (anonymous kB, RSS kB, of it in huge pages kB, mappings, name)" \
        smaps_by_mapping "$S/smaps-first-$end_pid"
    artifact "soak: the last process's memory by mapping at the end" smaps_by_mapping "$S/smaps-last"
fi
cp /run/posewatch.toml.packaged "$CONF"

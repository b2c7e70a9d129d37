#!/usr/bin/env bash
# arm64_instructions.sh: instructions per MoveNet invoke on the Raspberry Pi's instruction sets,
# posewatch against LiteRT + XNNPACK, counted exactly under qemu-aarch64 on an x86-64 machine.
#
# Nothing here is timed: QEMU's TCG translates every aarch64 instruction, and a plugin
# (Tests/Benchmarks/arm64/insn_count_plugin.c) counts the ones each guest thread executes. For each
# CPU model QEMU emulates (-cpu cortex-a72: Pi 4/400/CM4, NEON without dot product; cortex-a76:
# Pi 5, SDOT; cortex-a53: Pi 3 / Zero 2 W) the guest sees that core's HWCAP (so posewatch picks the
# kernel variant it picks on the board) and a /proc/cpuinfo naming that core (so XNNPACK's cpuinfo
# picks its micro-kernels for it). Start-up is subtracted by counting N and 2N invokes:
# per invoke = (count(2N) - count(N)) / N.
#
# What it measures, per CPU model, 1 thread, same model, same input (posewatch bench's pattern):
#   - posewatch's aarch64 release build, `posewatch bench MOVENET --threads 1` (variant by HWCAP);
#   - per node and per kernel category: one `bench --kernels` invoke, whose clock read after every
#     node is a clock_gettime system call under qemu-user (no vDSO in QEMU 7.2): the plugin notes
#     the thread's count at each one, so each node's count is the difference between two reads;
#   - LiteRT with XNNPACK (the aarch64 ai-edge-litert wheel from PyPI, python3 of the same root):
#     which nodes the delegate took (Tests/Benchmarks/litert_delegation.py; the run fails if it left
#     a CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED node to LiteRT's own kernels) and the CPU part
#     its cpuinfo read; LiteRT's built-in kernels without a delegate beside it, the control;
#   - the rest of a frame: the action classifier (`bench` on Sources/CActionModel), and the capture
#     + conversion of a 640x480 YUYV frame into the 192x192 tensor (CaptureBenchmark --only yuyv).
#
# Set-up (all from Debian's archive and PyPI; cached, later runs only rebuild what changed):
#   - host: qemu-user (Debian's dynamic build, which loads plugins; qemu-user-static cannot),
#     gcc, gcc-aarch64-linux-gnu, libglib2.0-dev; QEMU's plugin header and tests/plugin/insn.c
#     from Debian's qemu *source* package of the installed version (private apt lists, deb-src);
#   - the counter is checked first on a known loop (3 instructions per iteration) at N and 2N
#     iterations, and against QEMU's own per-instruction counter (tests/plugin/insn.c);
#   - the arm64 Debian 13 root of .ci/check-arm64.sh (made with `--root-only` if missing), with
#     python3 added; posewatch and CaptureBenchmark built there in release with Debian's swiftlang
#     6.0.3 and the Swift runtime linked in (`--static-swift-stdlib`), as deploy/build-deb.sh builds
#     the .deb, in $ROOT/src/posewatch-arm64-instructions (its .build is kept);
#   - the host's qemu-aarch64 with its libraries is copied into the root and run there through the
#     host's dynamic loader, so the guest programs see the root's files as on a board.
#
# Usage (as root, from anywhere):
#   Tests/Benchmarks/arm64_instructions.sh [--invokes N] [--cpus "cortex-a72 cortex-a76 cortex-a53"]
#                                          [--model FILE] [--skip-build] [--source DIR]
#   --source DIR  measure another checkout or export (default: the one holding this script)
#   --posewatch-only  only posewatch's MoveNet counts (per invoke, per category), no table; for
#                 comparing two builds of posewatch (e.g. a kernel change) quickly
# Output: one table, then the line
#   arm64 instructions ratio (posewatch/XNNPACK): cortex-a72 R cortex-a76 R cortex-a53 R
# Raw counts and logs: $POSEWATCH_CI_CACHE/arm64-instructions/ (default /var/cache/posewatch-ci).
# A dev/benchmark tool, not part of CI: the first run makes the root (10-40 min) and builds
# posewatch under emulation (20-40 min); later runs take about 5 min per CPU model.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SOURCE=$REPO
INVOKES=3
CPUS="cortex-a72 cortex-a76 cortex-a53"
MODEL=$REPO/../shared/models/movenet_singlepose_lightning_int8_4.tflite
SKIP_BUILD=0
POSEWATCH_ONLY=0
FRAMES=20
while [ $# -gt 0 ]; do
  case $1 in
    --invokes) INVOKES=${2:?}; shift 2 ;;
    --cpus) CPUS=${2:?}; shift 2 ;;
    --model) MODEL=${2:?}; shift 2 ;;
    --skip-build) SKIP_BUILD=1; shift ;;
    --posewatch-only) POSEWATCH_ONLY=1; shift ;;
    --source) SOURCE=$(cd "${2:?}" && pwd); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "arm64_instructions: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "arm64_instructions: run as root (chroot and mounts need it)" >&2; exit 2; }
[ -r "$MODEL" ] || { echo "arm64_instructions: no model at $MODEL (--model FILE)" >&2; exit 2; }

CACHE=${POSEWATCH_CI_CACHE:-/var/cache/posewatch-ci}
ROOT=$CACHE/trixie-arm64
WORK=$CACHE/arm64-instructions
LOG=$WORK/run-$(date -u +%Y%m%dT%H%M%SZ).log
SRC=/src/posewatch-arm64-instructions
BENCH=/opt/posewatch-bench     # in the root: qemu, plugin, model, wheels, scripts
mkdir -p "$WORK"
: > "$LOG"
T0=$(date +%s)
say() { printf '[%5ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
fail() { say "FAIL: $*"; echo "----- last 30 lines of $LOG" >&2; tail -n 30 "$LOG" >&2; exit 1; }

# --- host tools -------------------------------------------------------------------------------
need=()
for p in qemu-user gcc gcc-aarch64-linux-gnu libc6-dev-arm64-cross libglib2.0-dev xz-utils llvm-19; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "apt-get install ${need[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; } \
    >> "$LOG" 2>&1 || fail "could not install ${need[*]}"
fi
QEMU=/usr/bin/qemu-aarch64

# --- the plugin API of this QEMU, from Debian's source package of the same version ------------
QEMU_SRC_VERSION=$(dpkg-query -W -f='${source:Version}' qemu-user)
QSRC=$WORK/qemu-src-$QEMU_SRC_VERSION
if [ ! -r "$QSRC/include/qemu/qemu-plugin.h" ]; then
  say "qemu $QEMU_SRC_VERSION source package (deb-src, private apt lists in $WORK/apt)"
  A=$WORK/apt; mkdir -p "$A/parts" "$A/lists/partial" "$A/cache" "$A/dl"
  # The same archives as the host's apt sources, as deb-src.
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  cat > "$A/parts/src.sources" <<EOF
Types: deb-src
URIs: ${DEBIAN_MIRROR:-http://deb.debian.org/debian}
Suites: $codename $codename-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $codename-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  O=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$A/parts" -o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache")
  { apt-get "${O[@]}" update -qq && (cd "$A/dl" && apt-get "${O[@]}" source --download-only "qemu=$QEMU_SRC_VERSION"); } >> "$LOG" 2>&1 \
    || fail "apt-get source qemu=$QEMU_SRC_VERSION failed"
  rm -rf "$QSRC.tmp"; mkdir -p "$QSRC.tmp"
  tar -C "$QSRC.tmp" --strip-components=1 -xJf "$A/dl"/qemu_*.orig.tar.xz --wildcards \
    '*/include/qemu/qemu-plugin.h' '*/tests/plugin/insn.c' '*/COPYING' >> "$LOG" 2>&1 || fail "cannot unpack the qemu source"
  rm -rf "$QSRC"; mv "$QSRC.tmp" "$QSRC"
fi
gcc -O2 -shared -fPIC -Wall -I"$QSRC/include/qemu" -o "$WORK/insn_count_plugin.so" "$HERE/arm64/insn_count_plugin.c" >> "$LOG" 2>&1 \
  || fail "cannot build the counting plugin"
# shellcheck disable=SC2046
gcc -O2 -shared -fPIC -I"$QSRC/include/qemu" $(pkg-config --cflags glib-2.0) -o "$WORK/libinsn.so" "$QSRC/tests/plugin/insn.c" \
  $(pkg-config --libs glib-2.0) >> "$LOG" 2>&1 || fail "cannot build QEMU's tests/plugin/insn.c"

# --- the counter is exact on a known loop -------------------------------------------------------
aarch64-linux-gnu-gcc -O2 -static -o "$WORK/known_loop" "$HERE/arm64/known_loop.c" >> "$LOG" 2>&1 || fail "cannot build known_loop"
count_loop() {  # count_loop N -> "ours theirs"
  "$QEMU" -cpu cortex-a72 -plugin "$WORK/insn_count_plugin.so,out=$WORK/loop.out" "$WORK/known_loop" "$1"
  local ours; ours=$(awk '$1=="total"{print $2}' "$WORK/loop.out")
  local theirs; theirs=$("$QEMU" -cpu cortex-a72 -plugin "$WORK/libinsn.so" -d plugin "$WORK/known_loop" "$1" 2>&1 | awk '/^total insns/{print $3}')
  echo "$ours $theirs"
}
read -r L1 Q1 < <(count_loop 1000000)
read -r L2 Q2 < <(count_loop 2000000)
[ "$L1" = "$Q1" ] && [ "$L2" = "$Q2" ] && [ $(( L2 - L1 )) = 3000000 ] \
  || fail "instruction counter not exact on the known loop: N=1e6 ours $L1 qemu $Q1, 2N ours $L2 qemu $Q2 (want 2N-N = 3000000)"
LOOP_CHECK="known loop (3 insns/iteration): 1e6 -> $L1, 2e6 -> $L2, difference $(( L2 - L1 )) = 3 x 1e6; QEMU's tests/plugin/insn.c agrees ($Q1, $Q2)"
say "counter exact: $LOOP_CHECK"

# --- the arm64 root (.ci/check-arm64.sh's), with python3 -----------------------------------------
if [ ! -f "$ROOT/.posewatch-ci-root" ] || [ "$(cat "$ROOT/.posewatch-ci-root")" = "" ]; then
  say "making the arm64 root: .ci/check-arm64.sh --root-only (10-40 min under emulation)"
fi
"$REPO/.ci/check-arm64.sh" --root-only >> "$LOG" 2>&1 || fail ".ci/check-arm64.sh --root-only failed"
exec 9> "$CACHE/trixie-arm64.lock"
flock -n 9 || { say "waiting for another run that holds $CACHE/trixie-arm64.lock"; flock 9; }

# in_root [--cpuinfo FILE] CMD...: CMD in the root, in fresh mount and PID namespaces (as
# check-trixie.sh does), with /proc, /sys, /dev and the Swift package mirror mounted there only;
# --cpuinfo bind-mounts FILE over the root's /proc/cpuinfo.
in_root() {
  local cpuinfo=
  if [ "$1" = --cpuinfo ]; then cpuinfo=$2; shift 2; fi
  unshare --mount --pid --fork --propagation private -- bash -c '
    set -euo pipefail
    R=$1 PKGS=$2 CPUINFO=$3; shift 3
    mount -t proc proc "$R/proc"
    mount --rbind /sys "$R/sys"; mount --make-rslave "$R/sys"
    mount --rbind /dev "$R/dev"; mount --make-rslave "$R/dev"
    mkdir -p "$R/opt/swift-packages"
    mount --bind "$PKGS" "$R/opt/swift-packages"; mount -o remount,bind,ro "$R/opt/swift-packages"
    [ -n "$CPUINFO" ] && mount --bind "$CPUINFO" "$R/proc/cpuinfo"
    cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
    chroot "$R" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
  ' in_root "$ROOT" "${SWIFT_PACKAGES:-/opt/swift-packages}" "$cpuinfo" "$@"
}
if [ ! -x "$ROOT/usr/bin/python3" ] || [ ! -x "$ROOT/usr/bin/time" ]; then
  say "apt-get install python3 time in the root"
  in_root sh -c "apt-get update -qq && apt-get install -y -q --no-install-recommends python3 time && apt-get clean" >> "$LOG" 2>&1 \
    || fail "apt-get install python3 in the root failed"
fi

# --- posewatch's aarch64 release build, in the root ----------------------------------------------
rm -rf "$ROOT/src/.arm64-instructions-build"
[ -d "$ROOT$SRC/.build" ] && mv "$ROOT$SRC/.build" "$ROOT/src/.arm64-instructions-build"
rm -rf "$ROOT$SRC"; mkdir -p "$ROOT$SRC"
if git -C "$SOURCE" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$SOURCE" ls-files -z -co --exclude-standard | tar -C "$SOURCE" --null -T - --ignore-failed-read -cf - 2>> "$LOG" | tar -C "$ROOT$SRC" -xf -
else
  tar -C "$SOURCE" --exclude='./.build*' --exclude=./.git -cf - . | tar -C "$ROOT$SRC" -xf -
fi
SOURCE_ID=$(git -C "$SOURCE" describe --always --dirty 2>/dev/null || echo "$SOURCE")
rm -f "$ROOT$SRC/Package.resolved"
[ -d "$ROOT/src/.arm64-instructions-build" ] && mv "$ROOT/src/.arm64-instructions-build" "$ROOT$SRC/.build"
if [ "$SKIP_BUILD" = 0 ] || [ ! -x "$ROOT$SRC/.build/release/posewatch" ]; then
  say "swift build -c release --static-swift-stdlib (posewatch, CaptureBenchmark) in the root, under emulation"
  B0=$(date +%s)
  # --static-swift-stdlib as deploy/build-deb.sh: the binary the .deb ships, so the RSS below is the
  # appliance's (a dynamically linked build maps whole Swift runtime libraries: ~2.4 MB more).
  in_root sh -c "cd $SRC && swift build -c release --static-swift-stdlib --product posewatch && swift build -c release --static-swift-stdlib --product CaptureBenchmark" >> "$LOG" 2>&1 \
    || fail "swift build in the root failed"
  say "built in $(( $(date +%s) - B0 ))s"
fi
SWIFT_VERSION=$(in_root swift --version 2>&1 | grep -m1 -o 'Swift version [^ ]*' || true)
# The malloc-counting preload, so bench reports heap allocations per invoke on arm64 too.
in_root sh -c "cd $SRC && \$(command -v clang || echo /usr/libexec/swift/bin/clang) -shared -fPIC -O2 -o .build/libpw-malloc-count.so Tests/Support/malloc-count-preload.c -ldl" >> "$LOG" 2>&1 \
  || fail "cannot build the malloc-counting preload in the root"

# --- LiteRT for aarch64, from PyPI, unpacked for the root's python3 ------------------------------
PYVER=$(in_root python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
WHEELS=$WORK/wheels-cp${PYVER/./}
if [ ! -f "$WHEELS/.done" ]; then
  say "pip download ai-edge-litert for aarch64, CPython $PYVER"
  rm -rf "$WHEELS"; mkdir -p "$WHEELS"
  pip download --quiet --only-binary=:all: --python-version "$PYVER" --implementation cp \
    --platform manylinux_2_27_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    -d "$WHEELS" ai-edge-litert >> "$LOG" 2>&1 || fail "pip download ai-edge-litert failed"
  touch "$WHEELS/.done"
fi
LITERT_WHEEL=$(basename "$(ls "$WHEELS"/ai_edge_litert-*.whl)")
rm -rf "$ROOT$BENCH" "$WORK/.pyc-warm"; mkdir -p "$ROOT$BENCH/site" "$ROOT$BENCH/lib" "$ROOT$BENCH/Benchmarks/arm64" "$ROOT$BENCH/out"
for w in "$WHEELS"/*.whl; do python3 -m zipfile -e "$w" "$ROOT$BENCH/site" >> "$LOG" 2>&1 || fail "cannot unpack $w"; done
cp "$HERE/compare_litert.py" "$ROOT$BENCH/Benchmarks/"
cp "$HERE/arm64/bench_litert.py" "$ROOT$BENCH/Benchmarks/arm64/"
cp "$HERE/litert_delegation.py" "$ROOT$BENCH/Benchmarks/"
cp "$MODEL" "$ROOT$BENCH/movenet.tflite"

# --- the host's qemu-aarch64 (plugin-capable) inside the root ------------------------------------
cp "$QEMU" "$ROOT$BENCH/qemu-aarch64"
cp "$WORK/insn_count_plugin.so" "$ROOT$BENCH/"
for lib in $(ldd "$QEMU" | awk '$3 ~ /^\// {print $3}'); do cp -L "$lib" "$ROOT$BENCH/lib/"; done
LOADER=$(ldd "$QEMU" | awk '$1 ~ /^\/.*ld-linux/ {print $1}')
cp -L "$LOADER" "$ROOT$BENCH/lib/ld.so"
QEMU_IN_ROOT="$BENCH/lib/ld.so --library-path $BENCH/lib $BENCH/qemu-aarch64"

# /proc/cpuinfo of the board, so XNNPACK's cpuinfo identifies the core (MIDR) as on a Pi.
cpuinfo_for() {  # cpuinfo_for CPU FILE
  local part features
  case $1 in
    cortex-a53) part=0xd03 features="fp asimd evtstrm crc32 cpuid" ;;
    cortex-a72) part=0xd08 features="fp asimd evtstrm crc32 cpuid" ;;
    cortex-a76) part=0xd0b features="fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp" ;;
    *) part=0x000 features="fp asimd" ;;
  esac
  : > "$2"
  for i in $(seq 0 $(( $(nproc) - 1 ))); do
    printf 'processor\t: %d\nBogoMIPS\t: 108.00\nFeatures\t: %s\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: %s\nCPU revision\t: 3\n\n' \
      "$i" "$features" "$part" >> "$2"
  done
}

# count CPU TAG [--marks] -- CMD...: runs CMD in the root under qemu -cpu CPU with the plugin;
# prints the total instruction count; the program's stdout goes to $WORK/TAG.stdout and the
# blocks it ran (code and executions, for the cycle model) to $WORK/TAG.blocks. With
# PRELOAD=LIB in the environment the guest program gets LD_PRELOAD=LIB.
count() {
  local cpu=$1 tag=$2 marks=""; shift 2
  if [ "$1" = --marks ]; then marks=",marks=$BENCH/out/$tag.marks"; shift; fi
  [ "$1" = -- ] && shift
  cpuinfo_for "$cpu" "$WORK/cpuinfo-$cpu"
  in_root --cpuinfo "$WORK/cpuinfo-$cpu" $QEMU_IN_ROOT -cpu "$cpu" \
    -plugin "$BENCH/insn_count_plugin.so,out=$BENCH/out/$tag.count,blocks=$BENCH/out/$tag.blocks$marks" \
    -E PYTHONPATH="$BENCH/site" -E PYTHONHASHSEED=0 -E OPENBLAS_NUM_THREADS=1 ${PRELOAD:+-E LD_PRELOAD=$PRELOAD} "$@" \
    > "$WORK/$tag.stdout" 2>> "$LOG" || fail "$tag: $* failed (stdout in $WORK/$tag.stdout)"
  [ -n "$marks" ] && cp "$ROOT$BENCH/out/$tag.marks" "$WORK/"
  cp "$ROOT$BENCH/out/$tag.count" "$ROOT$BENCH/out/$tag.blocks" "$WORK/"
  awk '$1=="total"{print $2}' "$WORK/$tag.count"
}
# cycles WHAT CPU TAG_N TAG_2N N: llvm-mca's cycles per unit of the blocks two counted runs differ by
# (Tests/Benchmarks/arm64/cycle_model.py), as a "cycles" line of the results. LLVM's scheduling
# model per core: cortex-a53 its own, cortex-a72 the Cortex-A57 model (LLVM has none of the A72's
# own), cortex-a76 the Neoverse N1 model (the A76's server derivative; LLVM's cortex-a76 uses A57's).
cycles() {
  local what=$1 cpu=$2 mcpu line
  case $cpu in cortex-a76) mcpu=neoverse-n1 ;; *) mcpu=$cpu ;; esac
  line=$(python3 "$HERE/arm64/cycle_model.py" --llvm-mca llvm-mca-19 --llvm-mc /usr/lib/llvm-19/bin/llvm-mc \
    "$WORK/$3.blocks" "$WORK/$4.blocks" "$5" "$mcpu" 2>> "$LOG") || fail "cycle model of $3/$4 ($mcpu) failed"
  printf 'cycles\t%s\t%s\t%s\n' "$what" "$cpu" "$line" >> "$RESULTS"
}
per_unit() {  # per_unit COUNT_N COUNT_2N N -> (c2 - c1) / N, rounded
  awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.0f", (b - a) / n }'
}

# Synthetic Y4M clips (640x480 4:2:0, a moving pattern): 30 frames for the RSS run, 10 and 20 for
# counting the whole pipeline per frame (replay: every frame, no dropping); configs: console LEDs, no summary, MoveNet on 1 or 4 threads.
python3 - "$ROOT$BENCH" <<'PY'
import sys
w, h = 640, 480
for frames in (10, 20, 30):
    with open(f"{sys.argv[1]}/clip{frames}.y4m", "wb") as f:
        f.write(b"YUV4MPEG2 W640 H480 F15:1 Ip A1:1 C420jpeg\n")
        for n in range(frames):
            f.write(b"FRAME\n")
            f.write(bytes(((x + 4 * n) * 7 + (y // 8) * 3) & 0xFF for y in range(h) for x in range(w)))
            f.write(bytes([128 + (n % 16)]) * (w * h // 4) + bytes([128 - (n % 16)]) * (w * h // 4))
PY
cp "$MODEL" "$ROOT$BENCH/movenet_singlepose_lightning_int8_4.tflite"
for t in 1 4; do
  printf '[pose]\nthreads = %d\n[models]\npose = "%s"\n[leds]\nbackend = "console"\n[journal]\nsummary_interval = 3600\n' \
    "$t" "$BENCH/movenet_singlepose_lightning_int8_4.tflite" > "$ROOT$BENCH/threads$t.toml"
done

N=$INVOKES
POSEWATCH="$SRC/.build/release/posewatch"
CLASSIFIER="$SRC/Sources/CActionModel/action_classifier.tflite"
RESULTS=$WORK/results.tsv
[ "$POSEWATCH_ONLY" = 1 ] && RESULTS=$WORK/results-posewatch-only.tsv
: > "$RESULTS"
for cpu in $CPUS; do
  say "$cpu: posewatch bench at $N and $(( 2 * N )) invokes"
  PW_PRELOAD="$SRC/.build/libpw-malloc-count.so"
  p1=$(PRELOAD=$PW_PRELOAD count "$cpu" "pw-$cpu-n" -- "$POSEWATCH" bench "$BENCH/movenet.tflite" --threads 1 --warmup 0 --iterations "$N")
  p2=$(PRELOAD=$PW_PRELOAD count "$cpu" "pw-$cpu-2n" -- "$POSEWATCH" bench "$BENCH/movenet.tflite" --threads 1 --warmup 0 --iterations $(( 2 * N )))
  pw=$(per_unit "$p1" "$p2" "$N")
  variant=$(sed -n 's/.*variant: \([^ ]*\).*/\1/p' "$WORK/pw-$cpu-n.stdout")
  allocs=$(sed -n 's/^heap allocations per invoke: \([^ ]*\).*/\1/p' "$WORK/pw-$cpu-2n.stdout")
  printf 'posewatch\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cpu" "$pw" "$p1" "$p2" "$variant" "$allocs" >> "$RESULTS"
  cycles posewatch "$cpu" "pw-$cpu-n" "pw-$cpu-2n" "$N"

  say "$cpu: posewatch bench --kernels (one invoke, a count at every node)"
  count "$cpu" "pwk-$cpu" --marks -- "$POSEWATCH" bench "$BENCH/movenet.tflite" --threads 1 --warmup 0 --iterations 1 --kernels > /dev/null
  # Nodes are the "  index<TAB>operator<TAB>kernel<TAB>µs" lines; the marks of thread 0 end with
  # the kernels invoke's clock reads: one before the first node, one after every node.
  python3 - "$WORK/pwk-$cpu.stdout" "$WORK/pwk-$cpu.marks" "$cpu" >> "$RESULTS" <<'EOF'
import re, sys
stdout, marks, cpu = sys.argv[1:4]
nodes = [l.rstrip("\n").split("\t") for l in open(stdout) if re.match(r"^  \d+\t", l)]
reads = [int(l.split()[1]) for l in open(marks) if l.split()[0] == "0"]
reads = reads[-(len(nodes) + 1):]
for (index, op, kernel, _), a, b in zip(nodes, reads, reads[1:]):
    print(f"node\t{cpu}\t{index.strip()}\t{op}\t{kernel}\t{b - a}")
EOF

  if [ "$POSEWATCH_ONLY" = 1 ]; then
    python3 - "$RESULTS" "$cpu" <<'EOF'
import re, sys
from collections import defaultdict
cats = defaultdict(int)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "posewatch" and f[1] == sys.argv[2]: print(f"{f[1]} posewatch ({f[5]}): {int(f[2]) / 1e6:.2f}M instructions per invoke")
    if f[0] == "cycles" and f[1] == "posewatch" and f[2] == sys.argv[2]: print(f"{f[2]} posewatch, llvm-mca: {f[3]}")
    if f[0] == "node" and f[1] == sys.argv[2]: cats[re.sub(r"-(neon|neondot|scalar)$", "", f[4]) if not f[4].endswith("reference") else "reference"] += int(f[5])
for k, v in sorted(cats.items(), key=lambda kv: -kv[1]): print(f"  {k}\t{v / 1e6:.3f}M")
EOF
    continue
  fi
  say "$cpu: LiteRT + XNNPACK at $N and $(( 2 * N )) invokes"
  # One uncounted run first: Python compiles the unpacked wheels' modules to .pyc on first import,
  # which would count against the first run only.
  [ -f "$WORK/.pyc-warm" ] || { in_root --cpuinfo "$WORK/cpuinfo-$cpu" env PYTHONPATH="$BENCH/site" OPENBLAS_NUM_THREADS=1 \
    python3 "$BENCH/Benchmarks/arm64/bench_litert.py" "$BENCH/movenet.tflite" 1 1 >> "$LOG" 2>&1 && touch "$WORK/.pyc-warm"; }
  l1=$(count "$cpu" "lt-$cpu-n" -- /usr/bin/python3 "$BENCH/Benchmarks/arm64/bench_litert.py" "$BENCH/movenet.tflite" "$N" 1)
  l2=$(count "$cpu" "lt-$cpu-2n" -- /usr/bin/python3 "$BENCH/Benchmarks/arm64/bench_litert.py" "$BENCH/movenet.tflite" $(( 2 * N )) 1)
  lt=$(per_unit "$l1" "$l2" "$N")
  printf 'litert\t%s\t%s\t%s\t%s\n' "$cpu" "$lt" "$l1" "$l2" >> "$RESULTS"
  cycles litert "$cpu" "lt-$cpu-n" "lt-$cpu-2n" "$N"
  grep -q "checksum: $(sed -n 's/.*checksum: //p' "$WORK/lt-$cpu-n.stdout")" "$WORK/lt-$cpu-2n.stdout" || fail "LiteRT outputs differ between runs"
  # What XNNPACK took and the core its cpuinfo saw (bench_litert.py exits 3, and count fails the
  # run, when a compute node was left to LiteRT's own kernels).
  printf 'delegation\t%s\t%s\t%s\n' "$cpu" "$(sed -n 's/^resolver: xnnpack  cpuinfo: //p' "$WORK/lt-$cpu-n.stdout")" \
    "$(sed -n 's/^delegated: //p' "$WORK/lt-$cpu-n.stdout")" >> "$RESULTS"

  say "$cpu: LiteRT built-in kernels, no delegate (the control), at $N and $(( 2 * N )) invokes"
  b1=$(count "$cpu" "ltb-$cpu-n" -- /usr/bin/python3 "$BENCH/Benchmarks/arm64/bench_litert.py" "$BENCH/movenet.tflite" "$N" 1 builtin)
  b2=$(count "$cpu" "ltb-$cpu-2n" -- /usr/bin/python3 "$BENCH/Benchmarks/arm64/bench_litert.py" "$BENCH/movenet.tflite" $(( 2 * N )) 1 builtin)
  printf 'builtin\t%s\t%s\n' "$cpu" "$(per_unit "$b1" "$b2" "$N")" >> "$RESULTS"

  say "$cpu: classifier bench, capture+convert YUYV 640x480"
  c1=$(count "$cpu" "cls-$cpu-n" -- "$POSEWATCH" bench "$CLASSIFIER" --threads 1 --warmup 0 --iterations $(( 4 * N )))
  c2=$(count "$cpu" "cls-$cpu-2n" -- "$POSEWATCH" bench "$CLASSIFIER" --threads 1 --warmup 0 --iterations $(( 8 * N )))
  printf 'classifier\t%s\t%s\n' "$cpu" "$(per_unit "$c1" "$c2" $(( 4 * N )))" >> "$RESULTS"
  cycles classifier "$cpu" "cls-$cpu-n" "cls-$cpu-2n" $(( 4 * N ))
  f1=$(count "$cpu" "cap-$cpu-n" -- "$SRC/.build/release/CaptureBenchmark" "$FRAMES" --only yuyv)
  f2=$(count "$cpu" "cap-$cpu-2n" -- "$SRC/.build/release/CaptureBenchmark" $(( 2 * FRAMES )) --only yuyv)
  printf 'capture\t%s\t%s\n' "$cpu" "$(per_unit "$f1" "$f2" "$FRAMES")" >> "$RESULTS"
  cycles capture "$cpu" "cap-$cpu-n" "cap-$cpu-2n" "$FRAMES"
  g1=$(count "$cpu" "cap420-$cpu-n" -- "$SRC/.build/release/CaptureBenchmark" "$FRAMES" --only yuv420)
  g2=$(count "$cpu" "cap420-$cpu-2n" -- "$SRC/.build/release/CaptureBenchmark" $(( 2 * FRAMES )) --only yuv420)
  printf 'capture420\t%s\t%s\n' "$cpu" "$(per_unit "$g1" "$g2" "$FRAMES")" >> "$RESULTS"
  cycles capture420 "$cpu" "cap420-$cpu-n" "cap420-$cpu-2n" "$FRAMES"

  say "$cpu: the whole pipeline per frame, posewatch replay (10 and 20 frames, pose.threads = 1)"
  r1=$(count "$cpu" "loop-$cpu-n" -- "$POSEWATCH" replay --config "$BENCH/threads1.toml" --format text "$BENCH/clip10.y4m")
  r2=$(count "$cpu" "loop-$cpu-2n" -- "$POSEWATCH" replay --config "$BENCH/threads1.toml" --format text "$BENCH/clip20.y4m")
  printf 'loop\t%s\t%s\n' "$cpu" "$(per_unit "$r1" "$r2" 10)" >> "$RESULTS"
  cycles loop "$cpu" "loop-$cpu-n" "loop-$cpu-2n" 10
done

[ "$POSEWATCH_ONLY" = 1 ] && { say "done (posewatch only); raw counts in $RESULTS"; exit 0; }

# --- peak RSS of the camera loop on arm64 (posewatch run --input, Pi 4 settings) -------------------
# getrusage and /proc/self/status describe the whole QEMU process under qemu-user, so the guest's
# RSS comes from Tests/Benchmarks/arm64/rss_probe.c (LD_PRELOAD): guest mappings x host Rss, sampled
# every 20 ms. The Y4M clip is memory-mapped by Y4MFileSource; its file pages are reported apart
# (a camera has its V4L2 ring instead: camera.buffers x 640x480x2 bytes, 2.4 MB at the default 4).
RSS_CPU=${RSS_CPU:-cortex-a72}
in_root sh -c "cd $SRC && \$(command -v clang || echo /usr/libexec/swift/bin/clang) -shared -fPIC -O2 -o .build/librss-probe.so Tests/Benchmarks/arm64/rss_probe.c -lpthread" >> "$LOG" 2>&1 \
  || fail "cannot build rss_probe in the root"
say "$RSS_CPU: peak RSS of posewatch run --input (30 frames 640x480, pose.threads = 4)"
cpuinfo_for "$RSS_CPU" "$WORK/cpuinfo-$RSS_CPU"
in_root --cpuinfo "$WORK/cpuinfo-$RSS_CPU" $QEMU_IN_ROOT -cpu "$RSS_CPU" \
  -E LD_PRELOAD="$SRC/.build/librss-probe.so" -E RSS_PROBE_EXCLUDE=clip30.y4m \
  "$POSEWATCH" run --config "$BENCH/threads4.toml" --input "$BENCH/clip30.y4m" > "$WORK/rss.stdout" 2> "$WORK/rss.stderr" \
  || fail "posewatch run --input failed under $RSS_CPU (see $WORK/rss.stderr)"
RSS_LINE=$(grep -m1 '^rss_probe: guest peak' "$WORK/rss.stderr") || fail "no rss_probe line in $WORK/rss.stderr"
printf 'rss\t%s\t%s\n' "$RSS_CPU" "$RSS_LINE" >> "$RESULTS"

# --- the table --------------------------------------------------------------------------------------
python3 - "$RESULTS" "$N" "$CPUS" "$LOOP_CHECK" "$SWIFT_VERSION" "$LITERT_WHEEL" "$(qemu-aarch64 --version | head -n 1)" "$REPO/training" <<'EOF'
import os, re, sys
from collections import defaultdict
path, n, cpus, loop, swift, wheel, qemu, training = sys.argv[1:9]
sys.path.insert(0, training)
from config import STRIDE  # the classifier's stride, as the recipe writes it into its metadata
work = os.path.dirname(path)

def classes(tag_n, tag_2n, invokes):
    """Per-invoke instruction classes from the plugin's 'class C N' lines at N and 2N invokes."""
    def read(tag):
        d = {}
        for line in open(os.path.join(work, tag + ".count")):
            f = line.split()
            if f[0] == "total": d["total"] = int(f[1])
            elif f[0] == "class": d[f[1]] = int(f[2])
        return d
    a, b = read(tag_n), read(tag_2n)
    return {k: (b[k] - a[k]) / invokes for k in a}

def ipc_ceiling(c):
    """Cortex-A72 issue limits: 3 instructions decoded per cycle, SIMD multiplies on F0 only (one
    per cycle), SIMD/FP on F0 + F1 (two per cycle), one load per cycle. The cycle floor is the
    largest of these, and total / floor is the highest IPC the mix allows."""
    floor = max(c["total"] / 3, c["simd_mul"], c["simd"] / 2, c["load"])
    return c["total"] / floor
cpus = cpus.split()
pw, lt, nodes, cls, cap, cap420, loop_ = {}, {}, defaultdict(list), {}, {}, {}, {}
builtin, delegation, cyc = {}, {}, defaultdict(dict)
CYCLE_LINE = re.compile(r"cycles per invoke (\d+)\s+instructions per invoke (\d+)\s+CPI ([0-9.]+)\s+coverage ([0-9.]+) of (\d+) blocks")
for line in open(path):
    f = line.rstrip("\n").split("\t")
    if f[0] == "posewatch": pw[f[1]] = (int(f[2]), f[5], f[6])
    elif f[0] == "litert": lt[f[1]] = int(f[2])
    elif f[0] == "builtin": builtin[f[1]] = int(f[2])
    elif f[0] == "delegation": delegation[f[1]] = (f[2], f[3])
    elif f[0] == "cycles":
        g = CYCLE_LINE.search(f[3])
        cyc[f[1]][f[2]] = (int(g.group(1)), float(g.group(3)), float(g.group(4)), int(g.group(5)))
    elif f[0] == "node": nodes[f[1]].append((f[3], f[4], int(f[5])))
    elif f[0] == "classifier": cls[f[1]] = int(f[2])
    elif f[0] == "capture": cap[f[1]] = int(f[2])
    elif f[0] == "capture420": cap420[f[1]] = int(f[2])
    elif f[0] == "loop": loop_[f[1]] = int(f[2])
    elif f[0] == "rss": rss = (f[1], f[2])

def category(op, kernel):
    if kernel.startswith("conv-patch-gemm"): return "CONV_2D 3x3 s2, first layer (patch GEMM)"
    if kernel.startswith("conv-gemm"): return "CONV_2D 1x1 (GEMM)"
    if kernel.startswith("dwconv-3x3s1"): return "DEPTHWISE_CONV_2D 3x3 s1"
    if kernel.startswith("dwconv-3x3s2"): return "DEPTHWISE_CONV_2D 3x3 s2"
    if kernel.startswith("resize-bilinear"): return "RESIZE_BILINEAR"
    if "table" in kernel or kernel.startswith("add-elementwise"): return "elementwise (ADD/SUB/MUL/... tables)"
    return "other (decoder: ARGMAX, GATHER_ND, reference ops, ...)"
order = ["CONV_2D 1x1 (GEMM)", "CONV_2D 3x3 s2, first layer (patch GEMM)", "DEPTHWISE_CONV_2D 3x3 s1",
         "DEPTHWISE_CONV_2D 3x3 s2", "RESIZE_BILINEAR", "elementwise (ADD/SUB/MUL/... tables)",
         "other (decoder: ARGMAX, GATHER_ND, reference ops, ...)"]
def m(x): return f"{x / 1e6:.2f}M"
w = 14
print(f"arm64 instructions per MoveNet Lightning int8 invoke (1 thread, counted under {qemu}, N={n} and 2N invokes)")
print(f"posewatch: aarch64 release build, {swift} (Debian swiftlang); LiteRT: {wheel} (XNNPACK delegate)")
print(f"counter check: {loop}")
print()
print("".ljust(44) + "".join(c.rjust(w) for c in cpus))
print("posewatch kernel variant (HWCAP)".ljust(44) + "".join(pw[c][1].rjust(w) for c in cpus))
print("posewatch insns/invoke".ljust(44) + "".join(m(pw[c][0]).rjust(w) for c in cpus))
print("LiteRT+XNNPACK insns/invoke".ljust(44) + "".join(m(lt[c]).rjust(w) for c in cpus))
print("ratio posewatch/XNNPACK".ljust(44) + "".join(f"{pw[c][0] / lt[c]:.3f}".rjust(w) for c in cpus))
print("posewatch cycles/invoke (llvm-mca)".ljust(44) + "".join(m(cyc["posewatch"][c][0]).rjust(w) for c in cpus))
print("LiteRT+XNNPACK cycles/invoke (llvm-mca)".ljust(44) + "".join(m(cyc["litert"][c][0]).rjust(w) for c in cpus))
print("ratio posewatch/XNNPACK, cycles".ljust(44) + "".join(f"{cyc['posewatch'][c][0] / cyc['litert'][c][0]:.3f}".rjust(w) for c in cpus))
print("model CPI posewatch | XNNPACK".ljust(44) + "".join(f"{cyc['posewatch'][c][1]:.2f}|{cyc['litert'][c][1]:.2f}".rjust(w) for c in cpus))
print("blocks modelled (coverage) posewatch".ljust(44) + "".join(f"{cyc['posewatch'][c][3]} ({cyc['posewatch'][c][2]:.2f})".rjust(w) for c in cpus))
print("blocks modelled (coverage) XNNPACK".ljust(44) + "".join(f"{cyc['litert'][c][3]} ({cyc['litert'][c][2]:.2f})".rjust(w) for c in cpus))
print("LiteRT built-in, no delegate (control)".ljust(44) + "".join(m(builtin[c]).rjust(w) for c in cpus))
print("ratio posewatch/LiteRT built-in".ljust(44) + "".join(f"{pw[c][0] / builtin[c]:.3f}".rjust(w) for c in cpus))
mix = {c: (classes(f"pw-{c}-n", f"pw-{c}-2n", int(n)), classes(f"lt-{c}-n", f"lt-{c}-2n", int(n))) for c in cpus}
print("SIMD multiplies/invoke posewatch | XNNPACK".ljust(44) + "".join(f"{m(mix[c][0]['simd_mul'])}|{m(mix[c][1]['simd_mul'])}".rjust(w) for c in cpus))
print("SIMD share posewatch | XNNPACK".ljust(44) + "".join(f"{mix[c][0]['simd'] / mix[c][0]['total']:.2f}|{mix[c][1]['simd'] / mix[c][1]['total']:.2f}".rjust(w) for c in cpus))
print("A72-port IPC ceiling posewatch | XNNPACK".ljust(44) + "".join(f"{ipc_ceiling(mix[c][0]):.2f}|{ipc_ceiling(mix[c][1]):.2f}".rjust(w) for c in cpus))
print("posewatch heap allocations/invoke".ljust(44) + "".join(pw[c][2].rjust(w) for c in cpus))
for c in cpus:
    print(f"XNNPACK on {c}: cpuinfo {delegation[c][0]}; delegated: {delegation[c][1]}")
print()
print("posewatch per kernel category (nodes; insns/invoke, from one bench --kernels invoke)")
for cat in order:
    counts = {c: [x for (op, k, x) in nodes[c] if category(op, k) == cat] for c in cpus}
    k = len(counts[cpus[0]])
    if k == 0: continue
    print(f"  {cat} ({k})".ljust(44) + "".join(m(sum(counts[c])).rjust(w) for c in cpus))
print("  sum of nodes (incl. one clock read each)".ljust(44) + "".join(m(sum(x for (_, _, x) in nodes[c])).rjust(w) for c in cpus))
print()
# The classifier runs once every STRIDE frames: a frame carries that share of an invoke.
CLASSIFIER_SHARE = 1 / STRIDE
print("rest of a frame (posewatch)")
print("  capture+convert YUYV 640x480 -> 192x192".ljust(44) + "".join(m(cap[c]).rjust(w) for c in cpus))
print("  action classifier invoke".ljust(44) + "".join(m(cls[c]).rjust(w) for c in cpus))
print("  capture+convert Y4M-like I420 640x480".ljust(44) + "".join(m(cap420[c]).rjust(w) for c in cpus))
print(f"  MoveNet + YUYV capture + classifier/{STRIDE}".ljust(44) + "".join(m(pw[c][0] + cap[c] + cls[c] * CLASSIFIER_SHARE).rjust(w) for c in cpus))
print("  whole pipeline per frame (replay, Y4M I420)".ljust(44) + "".join(m(loop_[c]).rjust(w) for c in cpus))
# The replayed clips have nobody in them: every decision is no_person and the classifier never runs
# (replaying 30 and 40 frames instead counts the same per frame), so the pipeline's count holds no
# classifier invoke and the budget below adds a fifth of one.
print("  of which not MoveNet/I420 (no classifier)".ljust(44) + "".join(m(loop_[c] - pw[c][0] - cap420[c]).rjust(w) for c in cpus))
print()
m_rss = re.search(r"peak without it (\d+) kB", rss[1])
peak_kb = int(m_rss.group(1))
print(f"posewatch run --input (30 frames 640x480 Y4M, pose.threads = 4, -cpu {rss[0]}): guest peak RSS without the clip's pages {peak_kb * 1024 / 1e6:.1f} MB ({peak_kb / 1024:.1f} MiB)")
print(f"  {rss[1]}")
mappings = [l.rstrip("\n") for l in open(os.path.join(work, "rss.stderr")) if l.startswith("rss_probe: mapping")]
for l in mappings[:6]: print(f"  {l}")
print()
# The frame budget in cycles: llvm-mca's cycles per frame of the whole pipeline (`replay`, with
# the camera's YUYV conversion in place of the clip's I420 one, and a fifth of a classifier invoke);
# the clocks and the speed-up of MoveNet's operators on more threads are assumptions
# (docs/performance-arm64.md says where each range comes from). Only MoveNet runs on the worker pool;
# the rest is one thread. llvm-mca leaves out caches, memory bandwidth and branch misses, so these
# rates are upper bounds of the model.
boards = [("Pi 4 / 400 / CM4", "cortex-a72", (1.5, 1.8)), ("Pi 5", "cortex-a76", (2.4,)),
          ("Pi 3 B / B+", "cortex-a53", (1.2, 1.4)), ("Pi Zero 2 W", "cortex-a53", (1.0,))]
speedups = {1: (1.0, 1.0), 2: (1.6, 1.85), 3: (2.0, 2.6), 4: (2.3, 3.2)}
print("frame budget at 15 fps in cycles (llvm-mca; clock and thread speed-up assumed)")
for name, cpu, clocks in boards:
    if cpu not in pw: continue
    movenet = cyc["posewatch"][cpu][0]
    rest = (cyc["loop"][cpu][0] - movenet - cyc["capture420"][cpu][0] + cyc["capture"][cpu][0]
            + cyc["classifier"][cpu][0] * CLASSIFIER_SHARE)
    print(f"{name} ({cpu}): {m(movenet + rest)} cycles per frame = MoveNet {m(movenet)} + rest {m(rest)}")
    print("  threads  speed-up  " + "".join(f"fps at {f} GHz".ljust(18) for f in clocks))
    for threads, (s_lo, s_hi) in speedups.items():
        slow, fast = rest + movenet / s_lo, rest + movenet / s_hi
        print(f"  {threads:<9d}{s_lo:.2f}-{s_hi:.2f}  " + "".join(f"{f * 1e9 / slow:.1f} - {f * 1e9 / fast:.1f}".ljust(18) for f in clocks))
print()
print("arm64 instructions ratio (posewatch/XNNPACK): " + " ".join(f"{c} {pw[c][0] / lt[c]:.3f}" for c in cpus))
print("arm64 cycles ratio (posewatch/XNNPACK, llvm-mca): " + " ".join(f"{c} {cyc['posewatch'][c][0] / cyc['litert'][c][0]:.3f}" for c in cpus))
EOF
say "done; raw counts in $RESULTS, log $LOG"

#!/usr/bin/env bash
# Builds the .deb for this machine's architecture (or takes one as $1) and installs it into a
# Debian root with the root's own dpkg (chroot; maintainer scripts run there), then checks what
# an owner would: files, the binary runs against the root's libraries, the group, the service is
# enabled, the pose-model step keeps a correct file and rejects a wrong one, and purge cleans up.
# Prints one PASS/FAIL line per check; exits 1 if any failed. Needs root (chroot) and debootstrap.
#
# The root's suite and architecture follow the package: a libgpiod v1 build (Depends libgpiod2) goes
# into Debian 12 "bookworm", a libgpiod v2 build (libgpiod3) into Debian 13 "trixie"; an arm64
# package into an arm64 root, whose programs run under qemu-user through binfmt_misc (register it
# first, e.g. with .ci/check-arm64.sh). The arm64 package comes from the emulated root:
#   .ci/check-arm64.sh --incremental --deb && deploy/test-deb.sh /var/cache/posewatch-ci/deb-arm64/posewatch_*_arm64.deb
# The root is made once with debootstrap and reused: POSEWATCH_DEBROOT (default
# /var/tmp/posewatch-debroot for bookworm amd64, /var/tmp/posewatch-debroot-<suite>-<arch> otherwise),
# POSEWATCH_MIRROR (default http://deb.debian.org/debian).
# The correct model is taken from ../shared/models (never from the network).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mirror=${POSEWATCH_MIRROR:-http://deb.debian.org/debian}
model_name=movenet_singlepose_lightning_int8_4.tflite
model=${POSEWATCH_MODEL:-$repo/../shared/models/$model_name}
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check() { local name=$1; shift; if "$@" >/dev/null 2>&1; then pass "$name"; else fail "$name"; fi; }

deb=${1:-}
if [ -z "$deb" ]; then
    arch=$(dpkg --print-architecture)
    "$here/build-deb.sh" "$arch" --output "$repo/.build/deb" || { echo "FAIL build-deb.sh"; exit 1; }
    deb=$(ls -t "$repo"/.build/deb/posewatch_*_"$arch".deb | head -n 1)
fi
echo "package: $deb"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Installed-Size\):/  \1:/p'
dpkg-deb --contents "$deb" | awk '{print "  " $1, $6}'

arch=$(dpkg-deb -f "$deb" Architecture)
depends=$(dpkg-deb -f "$deb" Depends)
case "$depends" in
    *libgpiod3*) suite=trixie ;;
    *) suite=bookworm ;;
esac
if [ "$suite-$arch" = bookworm-amd64 ]; then default_root=/var/tmp/posewatch-debroot
else default_root=/var/tmp/posewatch-debroot-$suite-$arch; fi
root=${POSEWATCH_DEBROOT:-$default_root}
# The package's own dependencies (names only), installed with apt so that names another package
# provides resolve (trixie's time64 libraries: libv4l-0t64 provides libv4l-0).
needs=$(echo "$depends" | tr ',' '\n' | sed 's/(.*)//; s/ //g' | grep -v '^$' | tr '\n' ' ')
echo "root: $root (Debian $suite $arch)"
if [ ! -x "$root/bin/sh" ]; then
    echo "creating a Debian $suite $arch root in $root (debootstrap, once)"
    debootstrap --variant=minbase --arch="$arch" --include=init-system-helpers \
        --keyring=/usr/share/keyrings/debian-archive-keyring.gpg "$suite" "$root" "$mirror" \
        > "$root.debootstrap.log" 2>&1 || { tail "$root.debootstrap.log"; echo "FAIL debootstrap"; exit 1; }
fi
# Every run, so a package that gained a dependency still installs (a no-op when all are there).
chroot "$root" apt-get install -y -q --no-install-recommends $needs > "$root.apt.log" 2>&1 \
    || { tail "$root.apt.log"; echo "FAIL apt-get install $needs in $root"; exit 1; }

# Start clean, then pre-place the correct model as an owner installing offline would.
# The root's own dpkg, so a foreign-architecture root (arm64 under qemu-user) accepts the package.
in_root_dpkg() { chroot "$root" /usr/bin/env POSEWATCH_MODEL_URL=file:///nonexistent dpkg "$@"; }
in_root_dpkg --purge posewatch >/dev/null 2>&1 || true
install -D -m 644 "$model" "$root/var/lib/posewatch/$model_name"

echo "--- chroot $root dpkg -i $(basename "$deb")"
# No download may happen in this test: point the URL nowhere.
cp "$deb" "$root/tmp/posewatch-under-test.deb"
in_root_dpkg -i /tmp/posewatch-under-test.deb 2>&1 | sed 's/^/  /'
status=${PIPESTATUS[0]}
rm -f "$root/tmp/posewatch-under-test.deb"
[ "$status" = 0 ] && pass "dpkg installs the package into the Debian root" || fail "dpkg -i exited $status"

check "dpkg records it as installed" sh -c "chroot '$root' dpkg-query -W -f='\${Status}' posewatch | grep -q 'install ok installed'"
for file in /usr/bin/posewatch /usr/lib/systemd/system/posewatch.service /usr/lib/udev/rules.d/60-posewatch.rules \
            /etc/posewatch/posewatch.toml /usr/lib/posewatch/install-model /usr/share/posewatch/posewatch-libcamerify.conf \
            /usr/share/posewatch/journal-upload-posewatch.conf /usr/share/doc/posewatch/README.md; do
    check "installed $file" test -e "$root$file"
done
check "the config is a conffile" sh -c "chroot '$root' dpkg-query -W -f='\${Conffiles}' posewatch | grep -q /etc/posewatch/posewatch.toml"
# With /proc, as on a real system: a binary with a static Swift runtime built by Debian 13's Swift
# 6.0 reads its arguments from /proc/self/cmdline and sees none without it.
first=$(unshare --mount --fork --propagation private -- sh -c \
        'mount -t proc proc "$1/proc" && chroot "$1" /usr/bin/posewatch --help' sh "$root" 2>&1 | head -n 1)
code=${PIPESTATUS[0]}
[ "$code" = 0 ] && [ -n "$first" ] && pass "posewatch runs inside the root with its libraries: $first" || fail "posewatch --help in the root (exit $code)"
check "postinst created group gpio" chroot "$root" getent group gpio
check "postinst enabled posewatch.service" test -L "$root/etc/systemd/system/multi-user.target.wants/posewatch.service"
check "postinst kept the pre-placed correct model" sh -c "cmp '$model' '$root/var/lib/posewatch/$model_name'"
check "install-model --check accepts the correct model" chroot "$root" /usr/lib/posewatch/install-model --check

echo "--- a wrong model file"
printf 'not a model' > "$root/var/lib/posewatch/$model_name"
output=$(chroot "$root" /usr/lib/posewatch/install-model --check 2>&1); code=$?
echo "$output" | sed 's/^/  /'
[ $code = 1 ] && echo "$output" | grep -q "wrong sha256" && pass "install-model --check rejects a wrong model" || fail "install-model --check on a wrong model (exit $code)"
output=$(POSEWATCH_MODEL_URL=file:///nonexistent chroot "$root" /usr/lib/posewatch/install-model 2>&1); code=$?
echo "$output" | sed 's/^/  /'
[ $code = 1 ] && test -f "$root/var/lib/posewatch/$model_name.rejected" && ! test -e "$root/var/lib/posewatch/$model_name" \
    && pass "install-model moves a wrong model aside and fails when it cannot download" || fail "install-model on a wrong model (exit $code)"
output=$(POSEWATCH_MODEL_URL=file:///nonexistent chroot "$root" /var/lib/dpkg/info/posewatch.postinst configure 0.1.0 2>&1); code=$?
[ $code = 0 ] && pass "postinst still succeeds offline without a model (and says what to run)" || fail "postinst offline (exit $code)"

echo "--- dpkg --purge"
in_root_dpkg --purge posewatch 2>&1 | sed 's/^/  /'
check "purge removes the binary" test ! -e "$root/usr/bin/posewatch"
check "purge removes the config" test ! -e "$root/etc/posewatch/posewatch.toml"
check "purge removes /var/lib/posewatch" test ! -e "$root/var/lib/posewatch"

echo "$failures failed"
[ $failures = 0 ]

#!/bin/sh
# Step of posewatch-rpi.yaml, run inside the image's root (vmdb2 `chroot`, under qemu-user on an
# x86-64 host): installs posewatch offline, configures the appliance, writes the boot partition
# through Debian's raspi-firmware, and removes what must differ per card or is dead weight.
set -eu
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
stage=/root/posewatch-image-stage

# Groups Raspberry Pi Imager's user-data puts its user in (Raspberry Pi OS has them, Debian not all):
# cloud-init refuses to add a user to a group that does not exist. gpio: the udev rules give the
# GPIO chips to it (posewatch's postinst makes it too).
for g in gpio spi i2c netdev plugdev; do
    getent group "$g" >/dev/null || groupadd --system "$g"
done

# posewatch itself: its libraries are in the image already, so nothing is downloaded.
dpkg -i "$stage/posewatch.deb"
/usr/lib/posewatch/install-model --check

# Services: posewatch (enabled by its postinst), the boot-partition settings, the network, time
# sync, journal upload (starts once a URL is configured), mDNS, SSH.
systemctl enable posewatch.service posewatch-boot-config.service posewatch-ssh-host-keys.service \
    posewatch-secure-boot-partition.service \
    systemd-networkd.service systemd-resolved.service systemd-timesyncd.service \
    systemd-journal-upload.service avahi-daemon.service ssh.service
systemctl is-enabled posewatch.service

# The boot partition, the way Debian's images do it: root by label, then let raspi-firmware
# write config.txt, cmdline.txt, the kernel, initrd and DTBs to /boot/firmware.
sed -i 's/^#\{0,1\}ROOTPART=.*/ROOTPART=LABEL=RASPIROOT/' /etc/default/raspi-firmware
grep -q '^ROOTPART=LABEL=RASPIROOT$' /etc/default/raspi-firmware
dpkg-reconfigure raspi-firmware
# The Pi 5 D0 tree under the name its firmware looks for (later kernels: run-parts runs it after z50).
/etc/kernel/postinst.d/z51-posewatch-pi5-dtb

cat > /etc/fstab <<'FSTAB'
# posewatch image. The boot partition holds the owner's first-boot files (Wi-Fi password, SSH key):
# root only.
LABEL=RASPIROOT  /               ext4  rw,noatime,errors=remount-ro  0 1
LABEL=RASPIFIRM  /boot/firmware  vfat  rw,noatime,fmask=0077,dmask=0077  0 2
FSTAB

echo posewatch > /etc/hostname
printf '127.0.0.1\tlocalhost\n127.0.1.1\tposewatch\n::1\tlocalhost ip6-localhost ip6-loopback\n' > /etc/hosts
ln -sf /run/systemd/resolve/stub-resolv.conf /etc/resolv.conf

install -D -m 644 "$stage/image.md" /usr/share/doc/posewatch-image/image.md
install -m 644 "$stage/image-release" /etc/posewatch-image-release

# No account may log in with a password the owner did not set: root and the system accounts are
# locked ('!' or '*'); an empty password field would let anyone in on the console.
passwd -l root >/dev/null
usable=$(awk -F: '$2 !~ /^[!*]/ { print $1 }' /etc/shadow | paste -sd' ')
[ -z "$usable" ] || { echo "configure-in-root.sh: accounts with a usable or empty password: $usable" >&2; exit 1; }

# Per card, made on first boot: machine id (systemd), SSH host keys (cloud-init, or
# posewatch-ssh-host-keys.service). Dead weight: apt's lists and downloads, docs, manuals, locales.
rm -f /etc/machine-id /var/lib/dbus/machine-id /etc/ssh/ssh_host_*_key /etc/ssh/ssh_host_*_key.pub
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/man/* /usr/share/info/* /var/log/*.log
# Licences stay: every package's copyright file is kept.
find /usr/share/doc -type f ! -name copyright ! -path '/usr/share/doc/posewatch*' -delete
find /usr/share/doc -depth -type d -empty -delete
find /usr/share/locale -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
# Keep the docs and locales out of later package installs too (the owner's apt-get).
cat > /etc/dpkg/dpkg.cfg.d/posewatch-image-nodoc <<'NODOC'
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
NODOC

#!/usr/bin/env bash
# fresh-check: a new user's first steps (scripts/first-steps.sh) on a clean
# Debian root that has only what the README assumes: Debian's minimal
# base, build-essential, pkg-config, git, Python 3 with venv and pip, and
# Rust. Nothing scripts/setup.sh installs, and nothing from this machine's
# earlier builds (a new cargo home, so crates are downloaded again).
#
#   sudo bash scripts/fresh-check.sh [--keep] [-- COMMAND...]
#
# COMMAND (default: bash scripts/first-steps.sh) runs as root in /src, a
# `git clone` of this checkout's HEAD: commit first, since uncommitted
# changes are not in the clone. --keep leaves the root's directory behind
# and prints its path.
#
# How: debootstrap builds the base root once (Debian bookworm, about 2
# minutes) and keeps it as a tarball in $FRESH_CACHE (default
# /var/cache/bbrlab-fresh); each check unpacks a new copy, chroots into it
# and removes it afterwards, on failure too. Rust comes from this machine's
# rustup toolchains, mounted read-only; cargo's registry and build
# directory are the copy's own. Needs root (debootstrap, mounts, chroot),
# a Debian or Ubuntu host for apt (to install debootstrap if missing), the
# network, and a few minutes (4 on the project's 2-core VM, the Debian root
# built included).
#
# Not part of scripts/test.sh (root, the download, the time). Run it before
# changing dependencies, features, build scripts or the README's quick
# start, and before saying the main command works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "fresh-check: unknown option '$1' (allowed: --keep, --help, -- COMMAND...)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || set -- bash scripts/first-steps.sh

if [ "$(id -u)" != 0 ]; then
  echo "fresh-check: needs root (debootstrap, bind mounts and chroot); run it with sudo" >&2
  exit 2
fi
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_bin=$(dirname "$(command -v cargo || echo /nonexistent/cargo)")
if [ ! -d "$rustup_home/toolchains" ] || [ ! -x "$cargo_bin/rustup" ]; then
  echo "fresh-check: needs a rustup installation to lend the root (looked for $rustup_home/toolchains and rustup beside cargo in PATH)" >&2
  exit 2
fi

cache=${FRESH_CACHE:-/var/cache/bbrlab-fresh}
base=$cache/bookworm.tar
packages=build-essential,ca-certificates,pkg-config,git,python3,python3-venv,python3-pip
mkdir -p "$cache"
if [ ! -f "$base" ]; then
  if ! command -v debootstrap >/dev/null; then
    echo "fresh-check: installing debootstrap" >&2
    apt-get update -q >/dev/null && apt-get install -y -q debootstrap >/dev/null
  fi
  staging=$(mktemp -d "$cache/staging.XXXXXX")
  echo "fresh-check: building the base root with debootstrap (once; log in $cache/debootstrap.log)" >&2
  if ! debootstrap --variant=minbase --include="$packages" bookworm "$staging" \
      "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$cache/debootstrap.log" 2>&1; then
    rm -rf --one-file-system "$staging"
    echo "fresh-check: debootstrap failed; see $cache/debootstrap.log" >&2
    exit 1
  fi
  tar -C "$staging" -cf "$base.tmp" . && mv "$base.tmp" "$base"
  rm -rf --one-file-system "$staging"
fi

root=$(mktemp -d /tmp/bbrlab-fresh.XXXXXX)
mounted=()
finish() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[$i]}" 2>/dev/null || true
  done
  if [ "$keep" = 1 ]; then
    echo "fresh-check: kept the root at $root" >&2
  else
    rm -rf --one-file-system "$root"
  fi
}
trap finish EXIT
tar -C "$root" -xf "$base"

# mount_into SRC DEST [ro]: SRC at DEST inside the root, undone by finish.
mount_into() {
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  mounted+=("$root$2")
  if [ "${3:-}" = ro ]; then
    mount -o remount,bind,ro "$root$2"
  fi
}
mount_into /proc /proc
mount_into /sys /sys
mount_into /dev /dev
mount_into /dev/pts /dev/pts
mount_into "$rustup_home" /opt/rustup ro
mount_into "$cargo_bin" /opt/rust-bin ro
# Name service and certificates as this machine has them (the registries
# may sit behind a proxy or a local mirror), and pip's settings if any.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp -rL /etc/ssl/certs/. "$root/etc/ssl/certs/" 2>/dev/null || true
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
[ -f "$HOME/.cargo/config.toml" ] && install -D -m 644 "$HOME/.cargo/config.toml" "$root/root/.cargo/config.toml"

git clone -q "$(git rev-parse --show-toplevel)" "$root/src"
echo "fresh-check: running '$*' in a clean root at $root (HEAD $(git rev-parse --short HEAD))" >&2
certs=/etc/ssl/certs/ca-certificates.crt
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
  PATH=/root/.cargo/bin:/opt/rust-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  RUSTUP_HOME=/opt/rustup CARGO_HOME=/root/.cargo RUSTUP_TOOLCHAIN="$(rustup show active-toolchain | cut -d' ' -f1)" \
  SSL_CERT_FILE=$certs PIP_CERT=$certs REQUESTS_CA_BUNDLE=$certs CURL_CA_BUNDLE=$certs \
  DEBIAN_FRONTEND=noninteractive \
  bash -c 'cd /src && "$@"' fresh-check "$@"

#!/usr/bin/env bash
# Installs everything bbrlab's build and tests need on a fresh Debian machine
# with a Rust toolchain. Idempotent: safe to run again.
set -euo pipefail

need_rustup_component() {
  if ! rustup component list --installed 2>/dev/null | grep -q "^$1"; then
    echo "setup: installing Rust component $1"
    rustup component add "$1"
  fi
}

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
if command -v rustup >/dev/null 2>&1; then
  need_rustup_component rustfmt
  need_rustup_component clippy
fi

# Debian packages the tests need: iproute2 (`ip netns`, `ip link`) for the
# emulator tests; iperf3 for the README's `bbrlab emu` example; clang,
# libbpf-dev, bpftool, libelf-dev and zlib1g-dev for crates/kernel-cc, whose
# build compiles the BPF congestion controls (bbrlab_bbr, bbrlab_jitter, bbrlab_bbr3) and
# links libbpf (without them it still builds, and `bbrlab kernel load` says
# what is missing).
# valgrind: the speed guard's instruction counts (scripts/speed-guard.sh).
# libns3-dev (Debian's ns-3, 13 MB): scripts/ns3_compare_test.py builds
# scripts/ns3/one_flow.cc against it and runs it, so the program
# ns3_compare.py times is known to build and move data.
DEBIAN_PACKAGES=(iproute2 iperf3 clang libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config valgrind libns3-dev)
if [ "${#DEBIAN_PACKAGES[@]}" -gt 0 ]; then
  missing=()
  for p in "${DEBIAN_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  # chromium: scripts/screenshot-report.sh, to look at the report's figures
  # as a reader's browser shows them.
  dpkg -s chromium >/dev/null 2>&1 || missing+=(chromium)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
fi
# The Python package (crates/bbrlab-py): a virtual environment the scripts
# own, target/venv, with maturin, pytest, Dask, pandas, pyarrow, matplotlib
# and nbclient.
bash "$(dirname "$0")/setup-python.sh"
bash "$(dirname "$0")/setup-docs.sh"  # mdBook, for scripts/test-docs.sh
echo "setup: ok"

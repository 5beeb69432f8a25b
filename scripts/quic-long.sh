#!/usr/bin/env bash
# The long QUIC measurements behind docs/src/quic.md (CI runs only a short
# version: crates/bbrlab/tests/quic.rs and quic_emu.rs).
#
#   1. loopback: s2n-quic's own BBRv2 and CUBIC against bbrlab's bbr,
#      bbr-jitter and cubic through the adapter, 10 s each, 3 rounds with
#      the order rotated (CPU per gigabit as a ratio within each round);
#   2. as root: the same runs through the emulator on scenarios/compare.toml
#      (20 Mbit/s, 40 ms, 100 packets) beside kernel TCP bbr and cubic;
#   3. as root: `validate --quick` for bbr, whose s2n-quic column holds
#      bbrlab's bbr inside s2n-quic to the bounds the UDP transport meets.
#
# Usage: scripts/quic-long.sh [OUT_DIR]   (default out/quic-long; about
# 3 minutes without root, 15 with)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/quic-long}
cargo build --release -p bbrlab -p quic-bulk
bin=${CARGO_TARGET_DIR:-target}/release/bbrlab
"$bin" quic --cc s2n:bbr2,bbr,bbr-jitter,s2n:cubic,cubic --seconds 10 --rounds 3 \
  --out "$out/loopback"
if [ "$(id -u)" != 0 ]; then
  echo "quic-long: not root; skipping the emulated runs and validate" >&2
  exit 0
fi
"$bin" quic --scenario scenarios/compare.toml --cc s2n:bbr2,bbr,s2n:cubic,cubic \
  --out "$out/emulated"
"$bin" validate --quick --algorithms bbr --out "$out/validate"

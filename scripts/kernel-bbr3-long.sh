#!/usr/bin/env bash
# The long validation of bbrlab_bbr3 (issue 24), as root: kernel TCP with
# the BPF BBRv3 against the simulator's bbr3 (linux-v3, stock-kernel
# signals) on all 11 paths of `bbrlab validate`, 3 repetitions of 10 s
# (about 10 minutes), then the ECN and kernel-bbr tests of
# crates/bbrlab/tests/kernel_bbr3_validate.rs (about 3 minutes). CI runs
# that test file, whose validation is the 6-path, 1-repetition subset.
#
# Usage: sudo scripts/kernel-bbr3-long.sh [OUT_DIR]   (default out/validate-bbr3)
# The lock keeps other users of the kernel controls (the root tests) out
# meanwhile; validate loads bbrlab_bbr3 if it is not registered and
# unloads what it loaded.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/validate-bbr3}"
cargo build --release -p bbrlab --features kernel
flock /tmp/bbrlab-kernel-cc.lock target/release/bbrlab validate \
  --algorithms bbrlab_bbr3 --out "$out"
echo "table: $out/validate.md"
cargo test -p bbrlab --features kernel --test kernel_bbr3_validate -- --ignored \
  --test-threads 1 --nocapture --skip six_paths

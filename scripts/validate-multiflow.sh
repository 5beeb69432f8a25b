#!/usr/bin/env bash
# The whole competing-flow validation (issue 31), as root: every path of
# `bbrlab validate --multiflow` (bbr and bbrlab_bbr3 against cubic at 0.5–16
# BDP, RTT unfairness in a shallow and a deep buffer, four staggered bbr
# flows, cubic against cubic, bbrlab_bbr3 and cubic with ECN on CoDel), all
# on 20 Mbit/s / 40 ms, three repetitions of 30 s each: 51 runs, about 30
# minutes; then `bbrlab validate --multiflow --resimulate --out OUT_DIR` judges
# a changed simulator against the same kernel runs in seconds. CI runs
# `--multiflow --quick` instead
# (crates/bbrlab/tests/validate_multiflow.rs, 3 paths of 20 s).
#
# Usage: sudo scripts/validate-multiflow.sh [OUT_DIR] [MORE VALIDATE OPTIONS]
#   (default out/validate-multiflow; e.g. `--reps 1` for one repetition)
# The lock keeps other users of the kernel controls (the root tests) out
# meanwhile; validate loads bbrlab_bbr3 if it is not registered and unloads
# what it loaded.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/validate-multiflow}"
shift || true
cargo build --release -p bbrlab --features kernel
start=$(date +%s)
flock /tmp/bbrlab-kernel-cc.lock target/release/bbrlab validate --multiflow \
  --out "$out" "$@"
echo "table: $out/validate.md ($(( $(date +%s) - start )) s)"

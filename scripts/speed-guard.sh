#!/usr/bin/env bash
# The speed guard: instruction counts of the simulator's hot paths and the
# controllers' per-ACK work (crates/speed-guard, run under Callgrind by
# gungraun), against the committed baseline
# (crates/speed-guard/baseline.json). Fails when an entry is more than 3 %
# above it, or when a commit changed the baseline without a
# "Speed-baseline: REASON" line in its message.
#
#   bash scripts/speed-guard.sh            check (CI runs this)
#   bash scripts/speed-guard.sh --update   measure and write a new baseline
#
# Besides gungraun's benchmarks, it counts the bench path (one `bbr` and
# one `cubic` flow, 20 s) in the release `bbrlab` binary, building it if
# needed. Needs valgrind (scripts/setup.sh installs it) and gungraun-runner
# 0.17.2 (installed here on first use). Takes about 2 minutes here, plus
# the runner's build the first time.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
case "${1:-}" in
  "") ;;
  --update) mode=update ;;
  -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
  *) echo "speed-guard: unknown argument '$1' (allowed: --update, --help)" >&2; exit 2 ;;
esac

command -v valgrind > /dev/null || { echo "speed-guard: valgrind is needed; run bash scripts/setup.sh" >&2; exit 1; }
# gungraun's runner, which runs the benchmarks under Callgrind; its version
# must match the `gungraun` library in crates/speed-guard/Cargo.toml.
# Installed here rather than by setup.sh, so that in CI its build (about
# 100 s) overlaps the root tests instead of delaying every phase.
GUNGRAUN_VERSION=0.17.2
case "$(gungraun-runner --version 2>/dev/null || true)" in
  *"$GUNGRAUN_VERSION"*) ;;
  *) echo "speed-guard: installing gungraun-runner $GUNGRAUN_VERSION"
     cargo install -q gungraun-runner --version "$GUNGRAUN_VERSION" --locked ;;
esac

# The judge's own tests first (a second).
python3 scripts/speed_guard_test.py > /dev/null 2>&1 || { python3 scripts/speed_guard_test.py; exit 1; }

baseline=crates/speed-guard/baseline.json
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
cargo bench -q -p speed-guard --features guard --bench instructions -- --output-format=json > "$summary"
# The bench path in the `bbrlab` binary itself (speed_guard.py says why);
# CI's build-release phase has built it already.
cargo build --release -q -p bbrlab
python3 scripts/speed_guard.py bench-path target/release/bbrlab >> "$summary"
python3 scripts/speed_guard.py "$mode" "$baseline" "$summary"
if [ "$mode" = check ]; then
  python3 scripts/speed_guard.py trailers "$baseline"
fi

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
# Needs valgrind and gungraun-runner 0.17.2 (scripts/setup.sh installs
# both). Takes about 2 minutes here.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
case "${1:-}" in
  "") ;;
  --update) mode=update ;;
  -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
  *) echo "speed-guard: unknown argument '$1' (allowed: --update, --help)" >&2; exit 2 ;;
esac

GUNGRAUN_VERSION=0.17.2
have=$(gungraun-runner --version 2>/dev/null || true)
case "$have" in
  *"$GUNGRAUN_VERSION"*) ;;
  *) echo "speed-guard: gungraun-runner $GUNGRAUN_VERSION is needed (found: ${have:-none}); run bash scripts/setup.sh" >&2
     exit 1 ;;
esac
command -v valgrind > /dev/null || { echo "speed-guard: valgrind is needed; run bash scripts/setup.sh" >&2; exit 1; }

# The judge's own tests first (a second).
python3 scripts/speed_guard_test.py > /dev/null 2>&1 || { python3 scripts/speed_guard_test.py; exit 1; }

baseline=crates/speed-guard/baseline.json
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
cargo bench -q -p speed-guard --features guard --bench instructions -- --output-format=json > "$summary"
python3 scripts/speed_guard.py "$mode" "$baseline" "$summary"
if [ "$mode" = check ]; then
  python3 scripts/speed_guard.py trailers "$baseline"
fi

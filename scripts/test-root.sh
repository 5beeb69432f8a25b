#!/usr/bin/env bash
# The tests that need root (network namespaces, the emulator, kernel
# congestion controls), from the test build `cargo test --no-run` made:
# every test executable of the workspace runs with `--ignored`, one at a
# time, in its package's directory (as `cargo test` would run it).
#
# It runs the executables itself rather than through `cargo test` so that
# it holds no lock on target/: scripts/test.sh runs it in the background,
# beside the phases that build and run everything else. Those are
# CPU-bound and these are bound by the wall clock (their transfers last
# as long as the paths they emulate), so the two overlap. The emulator's
# forwarder runs at SCHED_FIFO and test.sh runs the CPU-bound phases at
# a lower priority (nice), so the builds do not measure themselves here.
#
# Usage: bash scripts/test-root.sh [FILTER]   (as root; FILTER as for a
# test binary, e.g. `emu::` or a test's name). Prints each executable's
# time; exits non-zero if any test failed. Needs the test build first:
#   cargo test --workspace --tests --features bbrlab/kernel --no-run
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "test-root.sh: needs root (namespaces, the emulator, kernel controls)" >&2
  exit 2
fi
# The executables and their packages, from cargo's own account of the
# build (fresh, so this only reads it).
list=$(cargo test --workspace --tests --features bbrlab/kernel --no-run \
  --message-format=json 2>/dev/null | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(os.path.dirname(m["manifest_path"]) + "\t" + m["executable"])
') || {
  echo "test-root.sh: the test build failed or is missing; run" \
    "cargo test --workspace --tests --features bbrlab/kernel --no-run" >&2
  exit 1
}
if [ -z "$list" ]; then
  echo "test-root.sh: cargo listed no test executables" >&2
  exit 1
fi
failed=()
while IFS=$'\t' read -r dir exe; do
  name=$(basename "$exe")
  start=$(date +%s)
  # --ignored: only the tests that need root (every #[ignore] in this
  # workspace says "needs root"); a binary without one ends at once.
  if (cd "$dir" && "$exe" --ignored "$@"); then
    status=ok
  else
    status=FAILED
    failed+=("$name")
  fi
  took=$(($(date +%s) - start))
  if [ "$took" -gt 0 ] || [ "$status" != ok ]; then
    echo "== root tests: $name $status in ${took} s" >&2
  fi
done <<<"$list"
# After the last emulator: remove what an emulator could not (one killed
# outright, or stopped while the disk was full), by the emulator's own
# rule, which keeps a namespace whose emulator still runs.
bbrlab="${CARGO_TARGET_DIR:-target}/debug/bbrlab"
[ -x "$bbrlab" ] && "$bbrlab" emu --reap
if [ "${#failed[@]}" -gt 0 ]; then
  echo "test-root.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "test-root.sh: ok" >&2

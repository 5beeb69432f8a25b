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
#
#   bash scripts/test-root.sh --list   prints the executables (package
#                                      directory TAB path) and exits
#
# Two settings let scripts/test.sh start these tests while it builds the
# release binary, rather than after:
#   ROOT_TESTS_LIST=FILE  the executables, from `--list` run beforehand:
#                         listing them runs cargo, which would wait for the
#                         release build's lock on the build directory.
#   ROOT_TESTS_AFTER=FILE the executables that compare kernel TCP's figures
#                         (retransmissions, shares, rates), which a release
#                         build on the other core disturbs, wait until FILE
#                         exists (test.sh creates it when that build ends;
#                         at most ROOT_TESTS_WAIT_S seconds, 5400 unless
#                         set). The emulator's own tests, whose bounds hold
#                         with every core busy, run first, meanwhile.
set -uo pipefail
cd "$(dirname "$0")/.."

# The executables and their packages, from cargo's own account of the
# build (fresh, so this only reads it).
list_executables() {
  cargo test --workspace --tests --features bbrlab/kernel --no-run \
    --message-format=json 2>/dev/null | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(os.path.dirname(m["manifest_path"]) + "\t" + m["executable"])
'
}
missing_build() {
  echo "test-root.sh: the test build failed or is missing; run" \
    "cargo test --workspace --tests --features bbrlab/kernel --no-run" >&2
  exit 1
}
if [ "${1:-}" = --list ]; then
  list_executables || missing_build
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "test-root.sh: needs root (namespaces, the emulator, kernel controls)" >&2
  exit 2
fi
if [ -n "${ROOT_TESTS_LIST:-}" ]; then
  list=$(cat "$ROOT_TESTS_LIST") || exit 1
else
  list=$(list_executables) || missing_build
fi
if [ -z "$list" ]; then
  echo "test-root.sh: cargo listed no test executables" >&2
  exit 1
fi
# The emulator's own tests (test targets emu, emu_ecn, quic_emu,
# udp_ecn_netns) compare no kernel-TCP figures with the simulator's, and
# emu.rs checks its timing with every core busy: they go first; the rest
# keep cargo's order.
early='^(emu|emu_ecn|quic_emu|udp_ecn_netns)-[0-9a-f]+$'
is_early() { [[ "$(basename "$1")" =~ $early ]]; }
ordered=$(
  while IFS=$'\t' read -r dir exe; do
    if is_early "$exe"; then printf '%s\t%s\n' "$dir" "$exe"; fi
  done <<<"$list"
  while IFS=$'\t' read -r dir exe; do
    if ! is_early "$exe"; then printf '%s\t%s\n' "$dir" "$exe"; fi
  done <<<"$list"
)
# Waits, once and bounded, for ROOT_TESTS_AFTER (when set) before the
# first executable that is not early.
waited=
wait_for_release_build() {
  if [ -z "${ROOT_TESTS_AFTER:-}" ] || [ -n "$waited" ]; then
    return 0
  fi
  waited=1
  local limit=${ROOT_TESTS_WAIT_S:-5400} start took
  start=$(date +%s)
  while [ ! -e "$ROOT_TESTS_AFTER" ]; do
    if [ $(($(date +%s) - start)) -ge "$limit" ]; then
      echo "test-root.sh: $ROOT_TESTS_AFTER did not appear within $limit s" \
        "(the release build's end), so the kernel comparisons did not run" >&2
      return 1
    fi
    sleep 1
  done
  took=$(($(date +%s) - start))
  echo "== root tests: waited ${took} s for the release build" >&2
}
failed=()
while IFS=$'\t' read -r dir exe; do
  name=$(basename "$exe")
  if ! is_early "$exe" && ! wait_for_release_build; then
    failed+=("(all after waiting for the release build)")
    break
  fi
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
done <<<"$ordered"
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

#!/usr/bin/env bash
# Runs every test in the workspace: formatting and clippy, unit,
# integration, property and doc tests, each criterion bench once in test
# mode (so benches keep compiling), the API docs, the book's blocks and the
# Python package; as root, also the tests that need root. This is the
# README's test command and what CI runs.
#
# As root, the root tests (scripts/test-root.sh) start as soon as the test
# build is done and run in the background while everything else runs:
# they are bound by the wall clock (emulated transfers), the rest by the
# CPU, which runs at a lower priority (nice 10) so that it does not
# disturb them. Their output is printed when they end.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/phase.sh
owns_log=0
phase_log_start && owns_log=1
root_pid=
root_log=
on_exit() {
  local rc=$?
  if [ -n "$root_pid" ] && kill -0 "$root_pid" 2>/dev/null; then
    echo "test.sh: stopping the root tests (process group $root_pid)" >&2
    kill -TERM -- "-$root_pid" 2>/dev/null || true
    wait "$root_pid" 2>/dev/null || true
    [ -n "$root_log" ] && tail -n 50 "$root_log" >&2
    # Namespaces of emulators the stop cut short (test-root.sh's own
    # sweep at its end did not run).
    local b="${CARGO_TARGET_DIR:-target}/debug/bbrlab"
    [ -x "$b" ] && "$b" emu --reap
  fi
  rm -f "${root_list:-}" "${release_built:-}"
  [ "$owns_log" = 1 ] && phase_summary
  return $rc
}
trap on_exit EXIT

# A full disk turns every later step's failure into "No space left on
# device" somewhere else: say so up front. A cold run writes about 8 GB
# under target/ (the test build 5.3 GB, the release build, clippy's and
# the docs' outputs).
avail_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [ -n "$avail_kb" ] && [ "$avail_kb" -lt $((10 * 1024 * 1024)) ]; then
  echo "test.sh: warning: only $((avail_kb / 1024 / 1024)) GB free here; a run from a clean target/ writes about 8 GB" >&2
fi
phase setup bash scripts/setup.sh
# The crates' layering (Python's and the default build's dependencies).
phase check-layers bash scripts/check-layers.sh
phase fmt cargo fmt --all -- --check
# One build of every test target, with the binary's `kernel` feature
# (bbrlab's BPF controls; setup.sh installs what it needs) so the kernel
# tests run too. The test profile is the dev profile, which the Python
# package and the book's `cargo build` share. It also puts quic-bulk next
# to the bbrlab binary, for tests/quic*.rs: quic-bulk's own integration
# tests need it, so it is built with the workspace's features (a
# separate `cargo build -p quic-bulk` would build the QUIC stacks again
# with other features, 80-100 s).
phase build-tests cargo test --workspace --all-targets --features bbrlab/kernel --no-run

low=()
release_built=
if [ "$(id -u)" = 0 ]; then
  root_log=$(mktemp)
  # The executables, listed now: listing runs cargo, which would wait for
  # the release build below to release the build directory.
  root_list=$(mktemp)
  bash scripts/test-root.sh --list >"$root_list"
  # Created when the release build ends: the root tests that compare
  # kernel TCP's figures wait for it (test-root.sh says why), the
  # emulator's own tests run beside the build.
  release_built=$(mktemp -u)
  echo "test.sh: the root tests run in the background (log: $root_log)" >&2
  # Its own process group, so that on_exit can stop all of it.
  ROOT_TESTS_LIST=$root_list ROOT_TESTS_AFTER=$release_built \
    setsid bash -c '. scripts/phase.sh; phase root-tests bash scripts/test-root.sh' \
    >"$root_log" 2>&1 </dev/null &
  root_pid=$!
  low=(nice -n 10)
else
  echo "test.sh: not root, so the tests that need root are skipped" >&2
fi

# The release build the book's blocks and the speed guard use. It runs
# beside the emulator's root tests, and before the ones that compare
# kernel TCP's figures (retransmissions among them), which a release
# build of the optimizer's linear algebra on the other core disturbs.
phase build-release "${low[@]}" cargo build --release -q -p bbrlab
if [ -n "$release_built" ]; then
  : >"$release_built"
fi

phase tests "${low[@]}" cargo test --workspace --all-targets --features bbrlab/kernel
phase doctests "${low[@]}" cargo test --workspace --doc --features bbrlab/kernel
phase clippy "${low[@]}" cargo clippy --workspace --all-targets --features bbrlab/kernel -- -D warnings
# The default build (no `kernel` feature), what a fresh machine builds.
phase clippy-default "${low[@]}" cargo clippy -p bbrlab --all-targets -- -D warnings
# The API documentation builds without a warning (broken or private links).
RUSTDOCFLAGS="-D warnings" phase doc "${low[@]}" cargo doc --workspace --no-deps --features bbrlab/kernel
# The published crates package and build on their own.
phase publish-dry-run "${low[@]}" bash scripts/check-publish.sh
# Their API against their last release tags (none yet: reported, and
# cargo-semver-checks is installed only once there is one).
phase semver-test bash scripts/semver_check_test.sh
# The packet-log tools of the Validation chapter (stdlib unittest).
phase rate-rebuild-test python3 scripts/tcp_rate_rebuild_test.py
phase host-noise-test python3 scripts/host_noise_test.py
phase first-probe-test python3 scripts/first_probe_test.py
# The speed comparison's parsing and table (Measurements chapter).
phase speed-compare-test python3 scripts/speed_compare_test.py
# The table of several compare runs of one path (Comparing chapter).
phase compare-seeds-test python3 scripts/compare_seeds_test.py
# The kernel receive-window trace's parsing and summary (same chapter).
phase window-trace-test python3 scripts/kernel_window_trace_test.py
# The recoveries-and-undos table, simulated and kernel (Notes on fidelity).
phase recoveries-test python3 scripts/recoveries_test.py
phase docblocks-test python3 scripts/docblocks_test.py
# The ns-3 comparison's install finding, parsing and table, and its ns-3
# program built and run against Debian's ns-3 (setup.sh installs it).
phase ns3-compare-test python3 scripts/ns3_compare_test.py
phase semver "${low[@]}" bash scripts/semver-check.sh
# The book and README: build, links, every shell block (Python blocks:
# test-python.sh).
phase docs "${low[@]}" bash scripts/test-docs.sh
# Instruction counts against the committed baseline (after the docs, whose
# release build the benchmarks reuse).
phase speed-guard "${low[@]}" bash scripts/speed-guard.sh
# The Python package: pytest (API, Dask sweeps) and the example notebook,
# against the bbrlab binary of the test build (the root tests' binary).
BBRLAB_CLI="${CARGO_TARGET_DIR:-$PWD/target}/debug/bbrlab" \
  phase python "${low[@]}" bash scripts/test-python.sh

if [ -n "$root_pid" ]; then
  echo "test.sh: waiting for the root tests" >&2
  rc=0
  wait "$root_pid" || rc=$?
  root_pid=
  cat "$root_log" >&2
  if [ "$rc" != 0 ]; then
    echo "test.sh: the root tests failed" >&2
    exit "$rc"
  fi
fi

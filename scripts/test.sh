#!/usr/bin/env bash
# Runs every test in the workspace: unit, integration, property and doc
# tests, and each criterion bench once in test mode (so benches keep
# compiling). This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/phase.sh
# .ci/run passes its log on; run alone, this script keeps its own.
if [ -z "${PHASE_LOG:-}" ]; then
  export PHASE_LOG="$(mktemp)"
  trap phase_summary EXIT
fi
phase setup bash scripts/setup.sh
# The crates' layering (Python's and the default build's dependencies).
phase check-layers bash scripts/check-layers.sh
# With the binary's `kernel` feature (bbrlab's BPF controls; setup.sh
# installs what it needs), so the kernel tests run too.
# quic-bulk next to the bbrlab binary the tests run (tests/quic*.rs):
# `cargo test` builds only a package's own binaries for its integration
# tests. The test profile shares its dependencies' build with the tests.
phase build-quic-bulk cargo build -p quic-bulk --profile test
phase tests cargo test --workspace --all-targets --features bbrlab/kernel
# The tests that need root (network namespaces, the emulator, kernel
# congestion controls) are #[ignore]d so `cargo test` passes for anyone;
# as root they run here, from the same build (`--tests`: criterion's
# bench harness takes no `--ignored`).
if [ "$(id -u)" = 0 ]; then
  phase root-tests cargo test --workspace --tests --features bbrlab/kernel -- --ignored
else
  echo "test.sh: not root, so the tests that need root were skipped" >&2
fi
phase doctests cargo test --workspace --doc --features bbrlab/kernel
# The book and README: build, links, every shell block (Python blocks:
# test-python.sh).
phase docs bash scripts/test-docs.sh
# The Python package: pytest (API, Dask sweeps) and the example notebook.
phase python bash scripts/test-python.sh

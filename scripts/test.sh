#!/usr/bin/env bash
# Runs every test in the workspace: unit, integration, property and doc
# tests, and each criterion bench once in test mode (so benches keep
# compiling). This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --all-targets
cargo test --workspace --doc
# The Python package: pytest (API, Dask sweeps) and the example notebook.
bash scripts/test-python.sh

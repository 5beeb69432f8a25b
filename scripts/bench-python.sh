#!/usr/bin/env bash
# The Python package's benchmark (issue 14): figures, not a timed test.
# Builds the extension and the CLI in release mode, then runs
# `python -m bbrlab bench`: a 200-run sweep of ~0.2 s runs on a LocalCluster
# of 1 and 2 workers (automatic batches, and one task per run as the
# baseline), its overhead per run against the CLI's own parallel sweep, and
# simulate() against `bbrlab sim` for a 10 s run. It prints the load
# average before and after: run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-python.sh
VENV=${BBRLAB_VENV:-target/venv}
export VIRTUAL_ENV="$PWD/$VENV"
export PATH="$VIRTUAL_ENV/bin:$PATH"
maturin develop -q --release -m crates/bbrlab-py/Cargo.toml
cargo build -q --release -p bbrlab --bin bbrlab
python -m bbrlab bench --cli target/release/bbrlab "$@"

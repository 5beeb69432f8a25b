#!/usr/bin/env bash
# The Python package's tests (part of scripts/test.sh): builds `bbrlab`
# (crates/bbrlab-py) into the scripts' virtual environment with maturin,
# runs its pytest suite (API, Dask sweeps) and executes the example
# notebook, so none of them can rot.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-python.sh
VENV=${BBRLAB_VENV:-target/venv}
export VIRTUAL_ENV="$PWD/$VENV"
export PATH="$VIRTUAL_ENV/bin:$PATH"
# The dev profile, which `cargo test` shares: the dependencies are already
# built by the test phase, and the tests' runs are small.
maturin develop -q -m crates/bbrlab-py/Cargo.toml
# The CLI the tests compare simulate() against: BBRLAB_CLI when given
# (scripts/test.sh passes its test build's, which the root tests are
# running beside this: a build here, with other features, would replace
# that binary under them), else the dev build, brought up to date.
if [ -z "${BBRLAB_CLI:-}" ]; then
  cargo build -q -p bbrlab --bin bbrlab
fi
python -m pytest -q crates/bbrlab-py/tests
# The example notebook, top to bottom, with short runs (a few seconds).
BBRLAB_NOTEBOOK_DURATION=3s python crates/bbrlab-py/tests/run_notebook.py examples/loss_sweep.ipynb

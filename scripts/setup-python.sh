#!/usr/bin/env bash
# The Python virtual environment the scripts own, target/venv (override with
# BBRLAB_VENV): what building the `bbrlab` Python package (maturin) and its
# tests, the Dask sweeps and the example notebook need, from
# crates/bbrlab-py/requirements-dev.txt. Called by scripts/setup.sh;
# idempotent: pip runs again only when the requirements change.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${BBRLAB_VENV:-target/venv}
PY=${PYTHON:-python3}
REQ=crates/bbrlab-py/requirements-dev.txt

if ! command -v "$PY" >/dev/null 2>&1; then
  echo "setup: $PY not found; install Python 3.9 or later" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating the Python virtual environment $VENV"
  if ! "$PY" -m venv "$VENV" 2>/dev/null; then
    # Debian's own Python keeps venv in a separate package.
    rm -rf "$VENV"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
    "$PY" -m venv "$VENV"
  fi
fi
stamp="$VENV/.requirements.sha256"
if ! sha256sum --status -c "$stamp" 2>/dev/null; then
  echo "setup: installing Python packages from $REQ into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"
  sha256sum "$REQ" >"$stamp"
fi

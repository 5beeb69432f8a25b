#!/usr/bin/env bash
# The new user's first steps, on a fresh machine: a clean Debian root with
# only build tools, Python and Rust (no scripts/setup.sh, nothing installed
# by hand), as ../shared/tools/fresh-machine makes one. Checks that
#   1. the README's main command builds and runs:
#        cargo run --release -p bbrlab -- reproduce
#      (with --quick here: the build is what a fresh machine breaks, and the
#      full run is the same code for longer), and writes the report;
#   2. the README's Python install and first example work in a fresh
#      virtual environment.
#
# Not part of scripts/test.sh: it needs root, the fresh-machine tool (not in
# this repository) and 10-20 minutes for a cold release build. Run it before
# changing dependencies, features, build scripts or the README's quick
# start, and before saying the main command works on a fresh machine:
#
#   sudo bash scripts/fresh-check.sh      # FRESH_MACHINE=/path/to/fresh-machine
#
# It tests the checkout's HEAD (commit first: fresh-machine clones HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
fm=${FRESH_MACHINE:-../shared/tools/fresh-machine}
if [ ! -x "$fm" ]; then
  echo "fresh-check: $fm not found; set FRESH_MACHINE to the fresh-machine tool" >&2
  exit 2
fi
exec "$fm" -- bash -euo pipefail -c '
echo "== main command: cargo run --release -p bbrlab -- reproduce --quick"
cargo run --release -p bbrlab -- reproduce --quick --quiet --out /tmp/report
test -s /tmp/report/index.html
test -s /tmp/report/claims.json
echo "== a binary without the kernel feature explains itself"
if ./target/release/bbrlab kernel list 2>/tmp/kernel.err; then
  echo "bbrlab kernel list succeeded without the kernel feature" >&2; exit 1
fi
grep -q -- "--features kernel" /tmp/kernel.err
echo "== Python: fresh venv, maturin develop, first example"
python3 -m venv /tmp/venv
. /tmp/venv/bin/activate
pip install -q maturin
maturin develop -q --release -m crates/bbrlab-py/Cargo.toml
python - <<PY
import bbrlab
# The README's first Python example.
run = bbrlab.simulate("scenarios/dumbbell.toml", seed=2)
print(run.summary[["algorithm", "goodput_bps", "rtt_median_ms"]])
assert len(run.flows) > 0, "no time series"
assert run.summary["goodput_bps"].iloc[0] > 5e6, "BBR should fill most of 10 Mbit/s"
print("python example ok:", len(run.flows), "flow samples")
PY
echo "fresh-check: ok"
'

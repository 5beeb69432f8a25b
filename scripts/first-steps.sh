#!/usr/bin/env bash
# A new user's first steps, as the README gives them, checked: run by
# scripts/fresh-check.sh inside a fresh Debian root (read its header). On
# a machine where scripts/setup.sh already ran it proves less, since what
# it checks is that nothing beyond Rust, build tools and Python is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== main command: cargo run --release -p bbrlab -- reproduce --quick"
cargo run --release -p bbrlab -- reproduce --quick --quiet --out "$out/report"
test -s "$out/report/index.html"
test -s "$out/report/claims.json"

echo "== a binary without the kernel feature says what is missing"
if ./target/release/bbrlab kernel list 2>"$out/kernel.err"; then
  echo "first-steps: bbrlab kernel list succeeded without the kernel feature" >&2
  exit 1
fi
grep -q -- "--features kernel" "$out/kernel.err"

echo "== Python: a fresh venv, maturin develop, the README's first example"
python3 -m venv "$out/venv"
# shellcheck disable=SC1091
. "$out/venv/bin/activate"
pip install -q maturin
maturin develop -q --release -m crates/bbrlab-py/Cargo.toml
python - <<'PY'
import bbrlab

# The README's first Python example, with checks.
run = bbrlab.simulate("scenarios/dumbbell.toml", seed=2)
print(run.summary[["algorithm", "goodput_bps", "rtt_median_ms"]])
assert len(run.flows) > 0, "no time series"
assert run.summary["goodput_bps"].iloc[0] > 5e6, "BBR should fill most of 10 Mbit/s"
print("python example ok:", len(run.flows), "flow samples")
PY
echo "first-steps: ok"

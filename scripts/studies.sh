#!/usr/bin/env bash
# Runs the six example studies of scenarios/studies/ (docs/src/studies.md)
# with `bbrlab sim`, copies the figures the book shows into
# docs/src/figures/studies/, and prints the numbers the write-ups quote
# (from each run's summary.json). About a minute in release on two cores.
#
#   scripts/studies.sh [OUT_ROOT]     default: out/studies
#
# BBRLAB may name a prebuilt binary; otherwise it is built (release).
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-out/studies}
if [[ -z "${BBRLAB:-}" ]]; then
    cargo build --release -p bbrlab --quiet
    BBRLAB="${CARGO_TARGET_DIR:-target}/release/bbrlab"
fi
figs=docs/src/figures/studies
mkdir -p "$root" "$figs"

for s in rtt-unfairness buffer-depth short-flows parking-lot route-change dualpi2-ecn; do
    echo "== $s"
    "$BBRLAB" sim "scenarios/studies/$s.toml" --out "$root/$s" --force --quiet
done

# The figures: bbrlab's own where it draws them, the rest from the runs'
# files by scripts/studies_figures.py. Run numbers follow each sweep's
# order (keys sorted by name, the last varying fastest).
cp "$root/rtt-unfairness/run-0000/fairness.svg" "$figs/rtt-unfairness-bbr-droptail-jain.svg"
cp "$root/rtt-unfairness/run-0001/fairness.svg" "$figs/rtt-unfairness-bbr-fqcodel-jain.svg"
cp "$root/rtt-unfairness/pantheon.svg" "$figs/rtt-unfairness-pantheon.svg"
python3 scripts/studies_figures.py share "$root/buffer-depth" "$figs/buffer-depth-share.svg"
cp "$root/short-flows/run-0000/fct_cdf.svg" "$figs/short-flows-fct-beside-bbr.svg"
cp "$root/short-flows/run-0001/fct_cdf.svg" "$figs/short-flows-fct-beside-cubic.svg"
cp "$root/parking-lot/run-0004/throughput.svg" "$figs/parking-lot-bbr-droptail-throughput.svg"
cp "$root/parking-lot/run-0007/throughput.svg" "$figs/parking-lot-bbr-fqcodel-throughput.svg"
python3 scripts/studies_figures.py rtt "$root/route-change/run-0000" "$root/route-change/run-0001" "$figs/route-change-min-rtt.svg"
cp "$root/dualpi2-ecn/run-0000/throughput.svg" "$figs/dualpi2-ecn-draft-ect1-throughput.svg"
cp "$root/dualpi2-ecn/run-0002/throughput.svg" "$figs/dualpi2-ecn-linux-v3-ect1-throughput.svg"

python3 scripts/studies_figures.py numbers "$root"

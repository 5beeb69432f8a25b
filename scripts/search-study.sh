#!/usr/bin/env bash
# The book's "Adversarial paths" study (docs/src/search.md): `bbrlab
# search` for the worst utilization of each controller under three
# budgets, CMA-ES against the random baseline, 200 evaluations each, one
# seed; prints the table the chapter pastes, copies the cellular bbr
# search's history figure and every worst path's figures to
# docs/src/figures/search/ and writes their gallery,
# docs/search-study-figures.md. Usage:
#   bash scripts/search-study.sh [OUT_DIR] [EVALUATIONS]
#   sudo CONFIRM=1 bash scripts/search-study.sh ...   (also the kernel table)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/search-study}
N=${2:-200}
cargo build -q --release -p bbrlab
BIN=target/release/bbrlab
CCS="bbr bbr3 bbr3:linux-v3 cubic s2n:bbr2 quinn:bbr noq:bbr3"
# name|flags: a cellular-like rate (20 Mbit/s falling as low as 2, six
# pieces of at least 1 s), a jittery Wi-Fi-like delay (50 Mbit/s, 5 to
# 25 ms one way, eight pieces of at least 0.5 s), a lossy long path
# (50 Mbit/s, 50 ms one way, up to 5 % random loss), and seed 001's
# per-packet jitter (3 Mbit/s, 60 ms, up to 120 ms of independent
# per-packet delay, a 1000-packet buffer), the last also for bbr on the
# QUIC 2018 stack the seed measured.
BUDGETS=(
  "cellular|--rate 20mbit --rate-ratio 10 --delay 30ms --pieces 6 --min-piece 1s --duration 30s"
  "wifi|--rate 50mbit --rate-ratio 1 --delay 5ms --jitter 20ms --pieces 8 --min-piece 500ms --duration 20s"
  "lossy-long|--rate 50mbit --rate-ratio 1 --delay 50ms --loss 0.05 --pieces 1 --duration 30s"
  "packet-jitter|--rate 3mbit --rate-ratio 1 --delay 30ms --packet-jitter 120ms --pieces 1 --duration 60s --buffer 66"
)
mkdir -p "$OUT"
start=$(date +%s)
for b in "${BUDGETS[@]}"; do
  name=${b%%|*}
  flags=${b#*|}
  for cc in $CCS; do
    dir="$OUT/$name/${cc//:/-}"
    mkdir -p "$OUT/$name"
    # shellcheck disable=SC2086
    "$BIN" search --cc "$cc" --objective utilization $flags --evaluations "$N" --seed 1 \
      --quiet --out "$dir" > "$dir.log" 2>&1 || { echo "search-study: $name $cc failed:"; cat "$dir.log"; exit 1; }
  done
done
dir="$OUT/packet-jitter/bbr-quic-2018"
# shellcheck disable=SC2086
"$BIN" search --cc bbr --stack quic-2018 --objective utilization ${BUDGETS[3]#*|} --evaluations "$N" \
  --seed 1 --quiet --out "$dir" > "$dir.log" 2>&1 || { echo "search-study: quic-2018 failed:"; cat "$dir.log"; exit 1; }
mkdir -p docs/src/figures/search
cp "$OUT/cellular/bbr/history.svg" docs/src/figures/search/cellular-bbr-history.svg
# Each worst path's two figures (its rate and round trip beside what the
# flow made of them), and the chapter's gallery of them
# (docs/search-study-figures.md, included by docs/src/search.md).
gallery=docs/search-study-figures.md
{
  echo "<!-- Written by scripts/search-study.sh: each worst path's figures. -->"
  for b in "${BUDGETS[@]}"; do
    name=${b%%|*}
    echo
    echo "**$name.**"
    echo
    for cc in $CCS $([ "$name" = packet-jitter ] && echo bbr-quic-2018); do
      f=${cc//:/-}
      for k in rate rtt; do
        cp "$OUT/$name/$f/worst-$k.svg" "docs/src/figures/search/$name-$f-$k.svg"
      done
      echo "![$cc, the $name budget's worst path: rate and goodput](figures/search/$name-$f-rate.svg)"
      echo "[the round trip](figures/search/$name-$f-rtt.svg)"
      echo
    done
  done
} > "$gallery"
python3 - "$OUT" "$CCS" <<'PY'
import json, sys, pathlib
out, ccs = pathlib.Path(sys.argv[1]), sys.argv[2].split()
print("| budget | controller | CMA-ES's worst utilization | random's worst | the worst path | likely cause (BBRs) |")
print("| --- | --- | --- | --- | --- | --- |")
for budget in ["cellular", "wifi", "lossy-long", "packet-jitter"]:
    for cc in ccs + (["bbr-quic-2018"] if budget == "packet-jitter" else []):
        j = json.loads((out / budget / cc.replace(":", "-") / "search.json").read_text())
        c, r = j["cmaes"], j["random"]
        cw, rw = c["history"][c["worst"]], r["history"][r["worst"]]
        path = "; ".join(
            f"{p['rate_bps'] / 1e6:.1f} Mbit/s, {p['delay_ns'] / 1e6:.0f} ms from {p['start_ns'] / 1e9:.1f} s"
            for p in cw["path"]["pieces"]
        )
        if cw["path"]["loss"] > 0:
            path += f"; {100 * cw['path']['loss']:.2f} % loss"
        if cw["path"]["packet_jitter_ns"] > 0:
            path += f"; per-packet jitter up to {cw['path']['packet_jitter_ns'] / 1e6:.0f} ms"
        reading = j.get("reading") or ""
        cause = reading.split("Likely cause: ")[1].split(":")[0] if "Likely cause: " in reading else ("estimates within 25 %" if reading else "–")
        print(f"| {budget} | {cc} | {cw['value']:.3f} | {rw['value']:.3f} | {path} | {cause} |")
PY

# With CONFIRM=1 (as root): the cellular, wifi and lossy-long budgets
# again for the kernel's bbr and cubic, and bbr3 as bbrlab's BPF control
# (bbrlab_bbr3, Linux v3's rules with the stock kernel's signals; the
# binary is built with the kernel feature and loads it), with flows made
# like kernel TCP's (--tcp-like), each worst path replayed on kernel TCP
# (--confirm); a second table. One replay per row (--confirm-replays 1),
# as the table in the book was made; the kernel's run-to-run spread is
# what --confirm's default of three replays shows.
if [ "${CONFIRM:-0}" = 1 ]; then
  cargo build -q --release -p bbrlab --features kernel
  "$BIN" kernel load bbrlab_bbr3 > /dev/null
  trap '"$BIN" kernel unload bbrlab_bbr3 > /dev/null 2>&1 || true' EXIT
  for b in "${BUDGETS[@]:0:3}"; do
    name=${b%%|*}
    flags=${b#*|}
    for cc in bbr bbr3 cubic; do
      dir="$OUT/confirm/$name/$cc"
      mkdir -p "$OUT/confirm/$name"
      # shellcheck disable=SC2086
      "$BIN" search --cc "$cc" --tcp-like --confirm --confirm-replays 1 --objective utilization $flags --evaluations "$N" \
        --seed 1 --quiet --no-plots --out "$dir" > "$dir.log" 2>&1 || { echo "search-study: confirm $name $cc failed:"; cat "$dir.log"; exit 1; }
    done
  done
  python3 - "$OUT" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1]) / "confirm"
print()
print("| budget | controller | search's worst (tcp-like flows) | on the path as the kernel met it: kernel | simulator, tcp-like flows | simulator, plain flows | lag (s) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for budget in ["cellular", "wifi", "lossy-long"]:
    for cc in ["bbr", "bbr3", "cubic"]:
        s = json.loads((out / budget / cc / "search.json").read_text())
        c = json.loads((out / budget / cc / "confirm.json").read_text())
        w = s["cmaes"]["history"][s["cmaes"]["worst"]]["value"]
        name = f"bbr3 (kernel: {c['kernel_ccs'][0]})" if cc == "bbr3" else cc
        print(f"| {budget} | {name} | {w:.3f} | {c['kernel']:.3f} | {c['simulator']:.3f} | {c['simulator_plain_flows']:.3f} | {c['lag_s']:.2f} |")
PY
fi
echo "search-study: $(( $(date +%s) - start )) s"

#!/usr/bin/env bash
# Seed 001 on real Linux TCP: kernel `bbr` against `bbrlab_jitter` (the
# BPF variant) through `bbrlab emu`, 3 Mbit/s, data-path delay per packet
# ~ N(60 ms, sd) floored at 1 ms with reordering (C11/C12's path), for each
# sd and seed. Each run sends BYTES and reports goodput = BYTES / time.
# Usage (root, controls loaded with `bbrlab kernel load`):
#   seed001-linux-tcp.sh BBRLAB OUT_CSV [BYTES] [SEEDS] [SDS]
set -euo pipefail
B=${1:?bbrlab binary}
OUT=${2:?output csv}
BYTES=${3:-3000000}
SEEDS=${4:-"1 2 3"}
SDS=${5:-"0 10 20 30 40 50 60"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "sd_ms,seed,cc,goodput_bps,seconds,retransmitted_fraction,rtt_median_ms,using_srtt_fraction" > "$OUT"
for sd in $SDS; do
  for seed in $SEEDS; do
    cat > "$tmp/link.toml" <<TOML
seed = $seed
[link.forward]
rate = "3mbit"
delay = "0ms"
queue = { limit = "1000pkt" }
jitter = { normal = { mean = "60ms", sd = "${sd}ms", floor = "1ms" }, reorder = true }
[link.reverse]
delay = "0ms"
TOML
    for cc in bbr bbrlab_jitter; do
      rm -f "$tmp/log.csv" "$tmp/log.cc.csv"
      json=$(timeout 200 "$B" emu --scenario "$tmp/link.toml" --timeout 180 \
        --server "$B tcp recv --listen {server}:5201" \
        --client "$B tcp send --to {server}:5201 --cc $cc --bytes $BYTES --log $tmp/log.csv" \
        2>/dev/null | grep '"cc"' || true)
      srtt=""
      if [ -f "$tmp/log.cc.csv" ]; then
        srtt=$(awk -F, 'NR>1{n++; u+=$8} END{if(n) printf "%.3f", u/n}' "$tmp/log.cc.csv")
      fi
      line=$(echo "$json" | python3 -c 'import json,sys
t=sys.stdin.read().strip()
if not t: print(",,,"); sys.exit()
d=json.loads(t); print("%s,%s,%s,%s"%(d["goodput_bps"],d["seconds"],d.get("retransmitted_fraction") or "",d.get("rtt_median_ms") or ""))')
      echo "$sd,$seed,$cc,$line,$srtt" | tee -a "$OUT"
    done
  done
done

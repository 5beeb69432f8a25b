#!/usr/bin/env python3
"""Rebuild a kernel TCP sender's delivery-rate samples from the emulator's
packet log (`bbrlab emu --log DIR`, its `packets.csv`).

Why: a BBR control publishes only its filtered bandwidth estimate, not the
per-ACK samples behind it, so when the kernel's estimate differs from the
simulator's the question "is the kernel's sample inflated by its own timing,
or did its flow really get that rate from the bottleneck?" needs the samples.
The emulator logs every segment's sequence and ACK numbers and the times it
entered and left the emulator, which is enough to replay Linux's rate
sampler (net/ipv4/tcp_rate.c):

- on each transmission (tcp_rate_skb_sent) the segment remembers the
  delivered count, the time of the last delivery and the send time of the
  first packet of the current flight (both reset to now when nothing is in
  flight);
- on each ACK (tcp_rate_skb_delivered, tcp_rate_gen) the newly delivered
  segment sent last gives the sample: delivered since it was sent, over the
  larger of its send interval and its ACK interval; a sample whose interval
  is below min_rtt is not used (tcp_rate_gen marks it invalid).

What the log cannot show is the SACK blocks. They are modelled as complete:
an ACK reports every segment the receiver had when it sent the ACK (the
ACK's `enqueue_s` at the emulator). Linux's receiver reports at most three
or four ranges, so after heavy loss a rebuilt sample may run ahead of the
kernel's; before the first loss the rebuild is exact up to the emulator's
clock.

Usage: tcp_rate_rebuild.py PACKETS_CSV SRC_PORT [--until S] [--mss BYTES]
Prints one line per ACK that produced a sample: time since the flow's first
data segment, the sample (Mbit/s), the running maximum, delivered packets
and the two intervals (ms). Stdlib only.
"""

import argparse
import csv
import sys

# IPv4 (20) + TCP with timestamps (32): a full segment of MSS 1448 is 1500.
HEADERS = 52


def read_events(path, port):
    """The flow's data segments (forward, from `port`) and ACKs (reverse,
    to `port`) in the order the sender saw them."""
    events = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        need = {"enqueue_s", "released_s", "direction", "bytes", "dropped",
                "src_port", "dst_port", "tcp_seq", "tcp_flags"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: no column(s) {', '.join(sorted(missing))}; "
                             "needs a packets.csv from `bbrlab emu --log` with TCP fields")
        for n, r in enumerate(reader, start=2):
            if not r["tcp_seq"]:
                continue
            try:
                if r["direction"] == "forward" and r["src_port"] == port \
                        and int(r["bytes"]) > HEADERS and "S" not in r.get("tcp_flags", ""):
                    events.append((float(r["enqueue_s"]), 0, r))
                elif r["direction"] == "reverse" and r["dst_port"] == port and r["released_s"]:
                    events.append((float(r["released_s"]), 1, r))
            except ValueError as e:
                raise ValueError(f"{path}, line {n}: {e}") from None
    events.sort(key=lambda e: (e[0], e[1]))
    return events


def rebuild(events, mss=1448, until=None):
    """Yield (t, rate_bps, max_bps, delivered, send_s, ack_s) per valid sample."""
    if not events:
        return
    t0 = events[0][0]
    delivered = 0
    delivered_at = first_tx = t0
    in_flight = 0
    acked = set()
    waiting = []  # transmissions the receiver got and has not yet reported
    min_rtt = None
    best_rate = 0.0
    resent = set()
    for t, kind, r in events:
        if until is not None and t - t0 > until:
            break
        if kind == 0:
            end = int(r["tcp_seq"]) + int(r["bytes"]) - HEADERS
            if end in acked:
                continue
            if in_flight <= 0:
                first_tx = delivered_at = t
            tx = {"end": end, "sent": t, "delivered": delivered,
                  "delivered_at": delivered_at, "first_tx": first_tx,
                  "retransmitted": end in resent}
            resent.add(end)
            in_flight += 1
            if not r["dropped"]:
                waiting.append((float(r["released_s"]), tx))
            continue
        emitted = float(r["enqueue_s"])
        newly = [tx for rel, tx in waiting if rel <= emitted and tx["end"] not in acked]
        waiting = [(rel, tx) for rel, tx in waiting if rel > emitted]
        if not newly:
            continue
        last = max(newly, key=lambda tx: tx["sent"])
        for tx in newly:
            acked.add(tx["end"])
            delivered += 1
            in_flight -= 1
            if not tx["retransmitted"]:
                rtt = t - tx["sent"]
                min_rtt = rtt if min_rtt is None else min(min_rtt, rtt)
        delivered_at, first_tx = t, last["sent"]
        count = delivered - last["delivered"]
        send_s = last["sent"] - last["first_tx"]
        ack_s = t - last["delivered_at"]
        interval = max(send_s, ack_s)
        if min_rtt is None or interval < min_rtt or interval <= 0:
            continue
        rate = count * mss * 8 / interval
        best_rate = max(best_rate, rate)
        yield (t - t0, rate, best_rate, count, send_s, ack_s)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("packets_csv")
    p.add_argument("src_port", help="the sender's port (its data segments' src_port)")
    p.add_argument("--until", type=float, help="stop this many seconds after the first segment")
    p.add_argument("--mss", type=int, default=1448, help="bytes a delivered segment counts (1448)")
    a = p.parse_args(argv)
    try:
        events = read_events(a.packets_csv, a.src_port)
    except (OSError, ValueError) as e:
        print(f"tcp_rate_rebuild: {e}", file=sys.stderr)
        return 2
    if not any(kind == 0 for _, kind, _ in events):
        print(f"tcp_rate_rebuild: no data segments from port {a.src_port} in {a.packets_csv}",
              file=sys.stderr)
        return 2
    print("time_s,rate_mbps,max_mbps,delivered,send_interval_ms,ack_interval_ms")
    for t, rate, best, count, send_s, ack_s in rebuild(events, a.mss, a.until):
        print(f"{t:.6f},{rate / 1e6:.3f},{best / 1e6:.3f},{count},{send_s * 1e3:.3f},{ack_s * 1e3:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

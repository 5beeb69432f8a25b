#!/usr/bin/env python3
"""Measure the hosts' timing noise in an emulator run: how long after a
segment leaves the bottleneck its sender's answer arrives there, beyond
the path's own round trip, from the emulator's packet log (`bbrlab emu
--log DIR`, its `packets.csv`).

Why: the simulator answers an ACK at the instant the path's delays say;
real hosts add some microseconds each time (the receiver's stack, both
hosts' softirqs, the emulator's release timer), different for every
packet. Where two flows meet at a full drop-tail queue that noise decides
who gets the place a departure frees, so `bbrlab validate --multiflow`
gives the simulated ACKs a noise of the size this script measures
(`--sim-host-noise MEAN,SD`).

For every ACK the log shows leaving the emulator towards a sender, when
it acknowledges exactly up to the end of a segment the bottleneck let go
(its `dequeue_s`) and the sender's next segment enters the emulator
within --react-us of the ACK's release (an answer to that ACK, not a
pacing timer's send), the loop is that next segment's `enqueue_s` less
the acknowledged segment's `dequeue_s`. Flows whose sends are clocked by
their ACKs (CUBIC without a pacer) give the clean figure; a paced flow's
sends that happen to follow an ACK are in it too, so read it per flow.

Per flow (sender port) it prints the number of loops, their median, and
the 10th, 25th, 75th and 90th percentiles as offsets from the median in
µs, with the standard deviation a normal distribution with that 10th to
90th percentile spread has ((p90 - p10) / 2.563); with --rtt-ms, also
the median's excess over that round trip (on a path with no per-port
extra delay, the excess includes the ACK's own transmission on the way
back, which the simulator models already).

Usage: host_noise.py PACKETS_CSV [--rtt-ms MS] [--react-us US]
Stdlib only.
"""

import argparse
import bisect
import collections
import csv
import sys

# IPv4 (20) + TCP with timestamps (32), as the emulator's log counts bytes.
HEADERS = 52


def loops(path, react_s):
    """Each sender port's loop times, seconds, in log order."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        need = {"enqueue_s", "dequeue_s", "released_s", "direction", "bytes", "dropped",
                "src_port", "dst_port", "tcp_seq", "tcp_ack"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: no column(s) {', '.join(sorted(missing))}; "
                             "needs a packets.csv from `bbrlab emu --log` with TCP fields")
        rows = list(reader)
    left = {}
    sends = collections.defaultdict(list)
    for n, r in enumerate(rows, start=2):
        if r["direction"] != "forward" or not r["tcp_seq"]:
            continue
        try:
            size = int(r["bytes"]) - HEADERS
            if size <= 0:
                continue
            sends[r["src_port"]].append(float(r["enqueue_s"]))
            if not r["dropped"] and r["dequeue_s"]:
                end = (int(r["tcp_seq"]) + size) % 2**32
                left[(r["src_port"], end)] = float(r["dequeue_s"])
        except ValueError as e:
            raise ValueError(f"{path}:{n}: {e}") from None
    for s in sends.values():
        s.sort()
    out = collections.defaultdict(list)
    for n, r in enumerate(rows, start=2):
        if r["direction"] != "reverse" or not r["tcp_ack"] or not r["released_s"]:
            continue
        try:
            key = (r["dst_port"], int(r["tcp_ack"]))
            released = float(r["released_s"])
        except ValueError as e:
            raise ValueError(f"{path}:{n}: {e}") from None
        if key not in left:
            continue
        s = sends.get(r["dst_port"], [])
        i = bisect.bisect_left(s, released)
        if i < len(s) and s[i] - released <= react_s:
            out[r["dst_port"]].append(s[i] - left[key])
    return out


def quantile(sorted_v, q):
    return sorted_v[min(len(sorted_v) - 1, int(len(sorted_v) * q))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("packets", help="the emulator's packets.csv")
    ap.add_argument("--rtt-ms", type=float, help="the path's round trip without queueing, ms")
    ap.add_argument("--react-us", type=float, default=300.0,
                    help="longest wait from an ACK's release to the send that answers it (default 300)")
    a = ap.parse_args(argv)
    if a.react_us <= 0:
        ap.error(f"--react-us must be above 0, not {a.react_us}")
    try:
        by_port = loops(a.packets, a.react_us / 1e6)
    except (OSError, ValueError) as e:
        print(f"host_noise: {e}", file=sys.stderr)
        return 1
    if not by_port:
        print(f"host_noise: {a.packets}: no ACK answered within {a.react_us:g} us", file=sys.stderr)
        return 1
    print("port,loops,median_ms,p10_us,p25_us,p75_us,p90_us,sd_us" + (",excess_us" if a.rtt_ms else ""))
    for port, v in sorted(by_port.items()):
        v.sort()
        m = quantile(v, 0.5)
        off = [(quantile(v, q) - m) * 1e6 for q in (0.10, 0.25, 0.75, 0.90)]
        sd = (off[3] - off[0]) / 2.563
        row = [port, str(len(v)), f"{m * 1e3:.3f}"] + [f"{x:.0f}" for x in off] + [f"{sd:.0f}"]
        if a.rtt_ms:
            row.append(f"{(m - a.rtt_ms / 1e3) * 1e6:.0f}")
        print(",".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())

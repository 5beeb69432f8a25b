#!/usr/bin/env python3
"""Trace kernel TCP's receive window through one `bbrlab compare` run:
what the receiver offered, how its buffer autotuning measured the reads,
and when the sender sat at the offered edge.

    sudo python3 scripts/kernel_window_trace.py SCENARIO [--seed N]
        [--seconds S] [--out DIR] [--bbrlab BIN]
    python3 scripts/kernel_window_trace.py --parse TRACE [--seconds S] [--out DIR]

Why: a simulated Linux receiver models the window the kernel offers
(`__tcp_select_window()`) and the buffer autotuning behind it
(`tcp_rcv_space_adjust()`, `tcp_rcvbuf_grow()`). The kernel's
`tcpi_rwnd_limited` says how long the window held the sender, not why;
three of the kernel's tracepoints say why:
- `tcp:tcp_probe` on every segment the sender receives: `snd_una`,
  `snd_nxt`, `snd_wnd` (the receiver's offer), `snd_cwnd`;
- `tcp:tcp_rcvbuf_grow` at every measurement above the last (the ones
  that may raise the buffer):
  what the application copied in the interval, what still waited in the
  receive queue (`inq`, which Linux subtracts), the previous measurement
  (`space`), the span held above a hole (`ooo`), the buffer, the window
  clamp, `rcv_ssthresh` and the window then;
- `tcp:tcp_cong_state_set` at each of the sender's congestion-state
  changes (0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss).

The run is `bbrlab compare SCENARIO --with kernel` (as root; the scenario
as compare takes it, one flow), with tracing on for its whole length;
only the events of port 5201 (compare's) are kept. Tracing is restored
afterwards (events off, filters cleared, the buffer size as it was, and
tracefs unmounted if this run mounted it), also when the run fails.
Needs tracefs (mounted at /sys/kernel/tracing if it is not) and a kernel with these tracepoints (`tcp_rcvbuf_grow`:
Linux 6.16).

Writes under DIR (default out/window-trace-NAME, NAME the scenario's file
stem): trace.txt (the raw events), sender.csv (one row per event:
seconds from the first, packets acknowledged, sent, the offered right
edge, the room left under it, all in segments of the flow's MSS from its
first, and cwnd), rcvbuf.csv (one row per measurement, in segments),
states.csv, and compare's output under compare/. Prints the time the
sender sat at the edge within the first S seconds (default 5) and the
receiver's measurements then. `--parse TRACE` reads a saved trace.txt
instead of running anything (no root).
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACING = Path("/sys/kernel/tracing")
EVENTS = ["tcp_probe", "tcp_rcvbuf_grow", "tcp_cong_state_set"]
PORT = 5201
FILTER = f"sport == {PORT} || dport == {PORT}"
# Per-CPU buffer for the run, KiB: a 30 s run at 100 Mbit/s is about
# 250,000 events (each side's segments), some 60 MB of text.
BUFFER_KB = 200_000
LINE = re.compile(r"\s(\d+\.\d+): (tcp_\w+): (.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


class Failed(Exception):
    """A run or trace this script cannot use, with why."""


# The fields of tcp:tcp_rcvbuf_grow that the rcvbuf table reads.
RCVBUF_FIELDS = ["copied", "inq", "space", "ooo", "rcvbuf", "rcv_ssthresh", "window_clamp", "rcv_wnd",
                 "scaling_ratio", "rtt_us"]


def numbers(fields, where):
    """A reader of one event's integer fields that names what is missing
    or malformed."""
    def num(key, base=10):
        if key not in fields:
            raise Failed(f"{where}: no field `{key}` (this script reads the tracepoints of Linux 6.16 or later)")
        try:
            return int(fields[key], base)
        except ValueError:
            raise Failed(f"{where}: field `{key}` is {fields[key]!r}, not a number") from None
    return num


#: The segment size the tables assume when neither --mss nor compare's
#: output gives one: Linux's MSS on a 1,500-byte MTU with timestamps.
DEFAULT_MSS = 1448


def parse(lines, mss=DEFAULT_MSS):
    """(sender rows, rcvbuf rows, state rows) from trace lines; sequence
    numbers and sizes in segments of `mss` bytes from the sender's first
    event, times in seconds from it."""
    probes, grows, states = [], [], []
    for n, line in enumerate(lines, 1):
        m = LINE.search(line)
        if not m:
            continue
        t, event, rest = float(m.group(1)), m.group(2), m.group(3)
        f = dict(FIELD.findall(rest))
        # A kernel whose event lacks a field this script reads, or a line
        # cut short, is named by line and field rather than a traceback.
        num = numbers(f, f"trace line {n} ({event})")
        if event == "tcp_probe" and f.get("dest", "").endswith(f":{PORT}"):
            probes.append((t, num("snd_una", 16), num("snd_nxt", 16), num("snd_wnd"), num("snd_cwnd")))
        elif event == "tcp_rcvbuf_grow" and f.get("sport") == str(PORT):
            for k in RCVBUF_FIELDS:
                num(k)
            grows.append((t, f))
        elif event == "tcp_cong_state_set" and f.get("dport") == str(PORT):
            states.append((t, num("cong_state")))
    if not probes:
        raise Failed(f"no tcp_probe event of the sender (destination port {PORT}) in the trace")
    t0, una0 = probes[0][0], probes[0][1]

    def seg(seq):
        # Sequence numbers wrap at 2^32.
        return ((seq - una0) % (1 << 32)) / mss

    sender = []
    for t, una, nxt, wnd, cwnd in probes:
        edge = (una + wnd) % (1 << 32)
        sender.append({
            "time_s": round(t - t0, 6),
            "acked": round(seg(una), 1),
            "sent": round(seg(nxt), 1),
            "edge": round(seg(edge), 1),
            "room": round(seg(edge) - seg(nxt), 1),
            "cwnd": cwnd,
        })
    rcvbuf = []
    for t, f in grows:
        rcvbuf.append({
            "time_s": round(t - t0, 6),
            "copied": round(int(f["copied"]) / mss, 1),
            "inq": round(int(f["inq"]) / mss, 1),
            "measured": round((int(f["copied"]) - int(f["inq"])) / mss, 1),
            "previous": round(int(f["space"]) / mss, 1),
            "ooo": round(int(f["ooo"]) / mss, 1),
            "rcvbuf_bytes": int(f["rcvbuf"]),
            "rcv_ssthresh": round(int(f["rcv_ssthresh"]) / mss, 1),
            "window_clamp": round(int(f["window_clamp"]) / mss, 1),
            "rcv_wnd": round(int(f["rcv_wnd"]) / mss, 1),
            "scaling_ratio": int(f["scaling_ratio"]),
            "rtt_us": int(f["rtt_us"]),
        })
    state_rows = [{"time_s": round(t - t0, 6), "state": s} for t, s in states]
    return sender, rcvbuf, state_rows


def at_edge_s(sender, until_s):
    """Seconds within the first `until_s` during which the sender had
    less than a segment of room under the offered edge. `tcp_probe` fires
    as an ACK arrives, before it is processed, so an event shows what the
    sender had done since the previous ACK: the time from one event to
    the next counts when the next finds the sender at the edge."""
    held = 0.0
    for a, b in zip(sender, sender[1:]):
        if a["time_s"] >= until_s:
            break
        if b["room"] < 1:
            held += min(b["time_s"], until_s) - a["time_s"]
    return held


def write_csv(path, rows, header):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)


def report(sender, rcvbuf, states, seconds, out):
    """Writes the CSV files and prints the summary."""
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "sender.csv", sender, ["time_s", "acked", "sent", "edge", "room", "cwnd"])
    write_csv(out / "rcvbuf.csv", rcvbuf,
              ["time_s", "copied", "inq", "measured", "previous", "ooo", "rcvbuf_bytes", "rcv_ssthresh",
               "window_clamp", "rcv_wnd", "scaling_ratio", "rtt_us"])
    write_csv(out / "states.csv", states, ["time_s", "state"])
    print(f"sender at the offered edge for {at_edge_s(sender, seconds):.3f} s of the first {seconds:g} s "
          f"({len(sender)} ACK events, {len(states)} state changes)")
    print(f"\nthe receiver's measurements above the last, in the first {seconds:g} s (segments):")
    print("(window_clamp, rcv_ssthresh and window as each measurement found them: the tracepoint fires\n"
          " before the raise, which shows in the next row)")
    print("| time s | copied | in queue | measured | previous | held span | window_clamp | rcv_ssthresh | window |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rcvbuf:
        if r["time_s"] <= seconds:
            print(f"| {r['time_s']:.3f} | {r['copied']:g} | {r['inq']:g} | {r['measured']:g} | {r['previous']:g} "
                  f"| {r['ooo']:g} | {r['window_clamp']:g} | {r['rcv_ssthresh']:g} | {r['rcv_wnd']:g} |")
    print(f"\nwrote {out}")


def compare_mss(out):
    """The kernel flow's MSS from compare's output under `out`, or None."""
    try:
        report = json.loads((out / "compare" / "compare.json").read_text())
    except (OSError, ValueError):
        return None
    for s in report.get("sources", []):
        if s.get("kind") == "kernel" and s.get("payload_bytes_per_packet"):
            return int(s["payload_bytes_per_packet"])
    return None


def write_tracing(name, value):
    try:
        (TRACING / name).write_text(value)
    except OSError as e:
        raise Failed(f"{TRACING / name}: cannot write {value!r} ({e.strerror})") from None


def restore_tracing(old_kb):
    """Turns the events off and gives back the buffer, each step tried even
    if one fails (a failure is printed, since raising here would hide why
    the run stopped)."""
    steps = [("tracing_on", "0")]
    for e in EVENTS:
        steps += [(f"events/tcp/{e}/enable", "0"), (f"events/tcp/{e}/filter", "0")]
    steps += [("trace", ""), ("buffer_size_kb", old_kb)]
    for name, value in steps:
        try:
            write_tracing(name, value)
        except Failed as e:
            print(f"kernel_window_trace: restoring tracefs: {e}", file=sys.stderr)


def mount_tracefs():
    """Mounts tracefs at TRACING when it is not there; True when this call
    mounted it (so the caller unmounts it), False when it was mounted."""
    if (TRACING / "events").is_dir():
        return False
    try:
        p = subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACING)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        raise Failed(f"cannot run mount to mount tracefs at {TRACING} ({e.strerror})") from None
    if p.returncode != 0:
        raise Failed(f"tracefs is not mounted at {TRACING} and mounting it failed "
                     f"(exit {p.returncode}): {(p.stdout.strip().splitlines() or [''])[-1]}")
    return True


def unmount_tracefs():
    """Unmounts what mount_tracefs mounted; a failure is printed, not raised
    (raising here would hide why the run stopped)."""
    try:
        p = subprocess.run(["umount", str(TRACING)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        # umount missing or not runnable: said, so the caller's own error
        # (if any) still ends the run.
        print(f"kernel_window_trace: restoring tracefs: cannot run umount for {TRACING} ({e.strerror})",
              file=sys.stderr)
        return
    if p.returncode != 0:
        print(f"kernel_window_trace: restoring tracefs: umount {TRACING} failed: {p.stdout.strip()}",
              file=sys.stderr)


def run_traced(args, out):
    """Runs compare with the tracepoints on; returns the raw trace text."""
    if os.geteuid() != 0:
        raise Failed("needs root (tracefs and the emulator); or --parse a saved trace")
    mounted = mount_tracefs()
    try:
        return traced(args, out)
    finally:
        if mounted:
            unmount_tracefs()


def traced(args, out):
    """run_traced's work once tracefs is mounted."""
    for e in EVENTS:
        if not (TRACING / "events" / "tcp" / e).is_dir():
            raise Failed(f"this kernel has no tcp:{e} tracepoint ({TRACING / 'events/tcp'}); "
                         "tcp_rcvbuf_grow needs Linux 6.16 or later")
    bbrlab = args.bbrlab or ROOT / "target" / "release" / "bbrlab"
    if not Path(bbrlab).is_file():
        raise Failed(f"no bbrlab at {bbrlab}: cargo build --release -p bbrlab, or --bbrlab BIN")
    try:
        old_kb = (TRACING / "buffer_size_kb").read_text().split()[0]
    except (OSError, IndexError):
        raise Failed(f"{TRACING / 'buffer_size_kb'}: cannot read the trace buffer's size") from None
    cmd = [str(bbrlab), "compare", str(args.scenario), "--with", "kernel", "--out", str(out / "compare")]
    if args.seed is not None:
        cmd += ["--seed", str(args.seed)]
    try:
        write_tracing("tracing_on", "0")
        write_tracing("trace", "")
        write_tracing("buffer_size_kb", str(BUFFER_KB))
        for e in EVENTS:
            write_tracing(f"events/tcp/{e}/filter", FILTER)
            write_tracing(f"events/tcp/{e}/enable", "1")
        write_tracing("tracing_on", "1")
        print(f"kernel_window_trace: {' '.join(cmd)}", file=sys.stderr)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        write_tracing("tracing_on", "0")
        (out / "compare.log").write_text(p.stdout)
        if p.returncode != 0:
            raise Failed(f"compare failed (exit {p.returncode}; {out / 'compare.log'}): "
                         f"{(p.stdout.strip().splitlines() or [''])[-1]}")
        return (TRACING / "trace").read_text()
    finally:
        restore_tracing(old_kb)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("scenario", nargs="?", type=Path, help="a one-flow scenario, as `bbrlab compare` takes it")
    ap.add_argument("--seed", type=int, help="compare's --seed")
    ap.add_argument("--seconds", type=float, default=5.0, help="the summary's span from the first ACK (default 5)")
    ap.add_argument("--out", type=Path, help="output directory (default out/window-trace-NAME)")
    ap.add_argument("--bbrlab", type=Path, help="the bbrlab binary (default target/release/bbrlab)")
    ap.add_argument("--parse", type=Path, metavar="TRACE", help="read this saved trace.txt instead of running")
    ap.add_argument("--mss", type=int, help="segment size for the tables (default: the kernel run's, from "
                    "compare.json beside the trace, else 1448, which it then says)")
    a = ap.parse_args(argv)
    if (a.scenario is None) == (a.parse is None):
        ap.error("give a SCENARIO to run, or --parse TRACE")
    if a.seconds <= 0:
        ap.error(f"--seconds {a.seconds:g}: must be above 0")
    if a.mss is not None and not 1 <= a.mss <= 65535:
        ap.error(f"--mss {a.mss}: must be 1 to 65535 bytes")
    try:
        if a.parse:
            try:
                text = a.parse.read_text(errors="replace")
            except OSError as e:
                raise Failed(f"{a.parse}: {e.strerror}") from None
            out = a.out or a.parse.parent
        else:
            if not a.scenario.is_file():
                raise Failed(f"{a.scenario}: no such scenario file")
            out = a.out or ROOT / "out" / f"window-trace-{a.scenario.stem}"
            out.mkdir(parents=True, exist_ok=True)
            text = run_traced(a, out)
            (out / "trace.txt").write_text(text)
        mss = a.mss or compare_mss(out)
        if mss is None:
            mss = DEFAULT_MSS
            print(f"kernel_window_trace: no kernel payload size in {out / 'compare' / 'compare.json'}; "
                  f"the tables count segments of {mss} bytes (give --mss to set it)", file=sys.stderr)
        report(*parse(text.splitlines(), mss), a.seconds, out)
    except Failed as e:
        print(f"kernel_window_trace: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

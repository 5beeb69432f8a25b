#!/usr/bin/env python3
"""Tabulate several `bbrlab compare` runs of one path, one row per source
and run, with the start-up figures a single pair cannot settle.

    python3 scripts/compare_seeds.py [--first S] DIR [DIR ...]

Each DIR is the output of one `bbrlab compare` (typically the same
scenario with `--seed 1`, `--seed 2`, ...). On a lossy path one pair of
runs is one draw: the random losses fall on different packets in the
simulation and through the emulator, and a loss early in STARTUP can end
it with a low estimate in either. This puts the draws side by side.

Per source (the real ones and the simulations matched to them) and run:
- goodput over the whole window, as compare's table gives it
  (compare.json);
- goodput over the first S seconds of data (default 5) and over the rest
  of the window, from the source's `flows.csv` (delivered bytes at the
  last sample at or before the time);
- when STARTUP ended (the first sample in another mode after one in
  `startup`, in seconds from the first data packet) and the bandwidth
  estimate then; `-` for a flow without modes (CUBIC, Reno);
- the share of data packets retransmitted (compare.json), and where:
  the packets retransmitted in the first S seconds, and the share of
  those sent after them that were retransmitted (`flows.csv`'s
  `retransmitted_packets` and `data_packets_sent`);
- the seconds the receiver's window held the sender: kernel TCP's
  `tcpi_rwnd_limited` (compare.json), a simulation's `rwnd_limited_s`
  (its `summary.json`; a simulated Linux receiver offers a window), `-`
  for a source without one.
Then one line per source with the median of each column.

Reads only what compare wrote; needs no root and runs nothing.
"""

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path


class Failed(Exception):
    """A compare directory this script cannot read, with why."""


def origin_and_rows(flows_csv):
    """(time of the first sample with data sent, rows) of a flows.csv."""
    try:
        with open(flows_csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise Failed(f"{flows_csv}: {e.strerror}") from None
    need = {"time_s", "delivered_bytes", "data_packets_sent", "retransmitted_packets", "mode",
            "bw_estimate_bps"}
    if rows and not need <= set(rows[0]):
        raise Failed(f"{flows_csv}: missing columns {sorted(need - set(rows[0]))}")
    for r in rows:
        if _int(r["data_packets_sent"]) > 0:
            return float(r["time_s"]), rows
    raise Failed(f"{flows_csv}: no sample with data sent")


def _int(text):
    return int(float(text)) if text not in ("", None) else 0


def delivered_at(rows, t, column="delivered_bytes"):
    """`column` (bytes delivered by default) at the last sample at or
    before `t` (0 before any)."""
    got = 0
    for r in rows:
        if float(r["time_s"]) > t:
            break
        got = _int(r[column])
    return got


def startup_exit(rows, origin):
    """(seconds from `origin`, estimate in Mbit/s) at the first sample in a
    mode other than STARTUP after one in STARTUP; (None, None) if the flow
    never reported STARTUP or never left it."""
    seen = False
    for r in rows:
        mode = r["mode"]
        if mode == "startup":
            seen = True
        elif seen and mode:
            bw = r["bw_estimate_bps"]
            return float(r["time_s"]) - origin, (float(bw) / 1e6 if bw else None)
    return None, None


def field(obj, key, where):
    """`obj[key]`, or a named error: a hand-edited or truncated
    compare.json should say which field is missing, not end in a
    traceback."""
    try:
        return obj[key]
    except (KeyError, TypeError, IndexError):
        raise Failed(f"{where}: no `{key}` (is it a `bbrlab compare` output?)") from None


def source_dirs(report, where):
    """(source label, its directory name) for each source of compare.json:
    a real source's kind (`kernel`, `udp`, `s2n`); a simulation matched
    to one `sim-KIND`; the simulation alone `sim`."""
    sources = field(report, "sources", where)
    for s in sources:
        field(s, "source", f"{where}, a source")
        field(s, "kind", f"{where}, source {s['source']!r}")
        field(s, "goodput_mbps", f"{where}, source {s['source']!r}")
    kind_of = {s["source"]: s["kind"] for s in sources if s["kind"] != "simulator"}
    out = []
    for s in sources:
        if s["kind"] != "simulator":
            out.append((s, s["kind"]))
        elif s.get("matched_to") in kind_of:
            out.append((s, "sim-" + kind_of[s["matched_to"]]))
        else:
            out.append((s, "sim"))
    return out


def rwnd_limited(run_dir, src, sub):
    """Seconds the receive window held the sender of `src`, or None: the
    kernel probe's figure in compare.json, or the simulated flow's in
    the simulation's summary.json."""
    if src["kind"] != "simulator":
        return (src.get("host") or {}).get("rwnd_limited_s")
    try:
        summary = json.loads((Path(run_dir) / sub / "summary.json").read_text())
        return summary["runs"][0]["flows"][0].get("rwnd_limited_s")
    except (OSError, ValueError, KeyError, IndexError):
        return None


def rows_of(run_dir, first_s):
    """One dict per source of the compare run in `run_dir`."""
    run_dir = Path(run_dir)
    try:
        report = json.loads((run_dir / "compare.json").read_text())
    except OSError as e:
        raise Failed(f"{run_dir}: no compare.json ({e.strerror}); is it a `bbrlab compare` output?") from None
    except json.JSONDecodeError as e:
        raise Failed(f"{run_dir / 'compare.json'}: not JSON ({e})") from None
    where = run_dir / "compare.json"
    window = float(field(report, "window_s", where))
    if not 0 < first_s < window:
        raise Failed(f"--first {first_s:g}: must lie inside the runs' {window:g} s window")
    out = []
    for src, sub in source_dirs(report, where):
        origin, rows = origin_and_rows(run_dir / sub / "flows.csv")
        head = delivered_at(rows, origin + first_s)
        whole = delivered_at(rows, origin + window)
        exit_s, exit_bw = startup_exit(rows, origin)
        retx_head = delivered_at(rows, origin + first_s, "retransmitted_packets")
        sent_head = delivered_at(rows, origin + first_s, "data_packets_sent")
        retx_rest = delivered_at(rows, origin + window, "retransmitted_packets") - retx_head
        sent_rest = delivered_at(rows, origin + window, "data_packets_sent") - sent_head
        out.append({
            "run": run_dir.name,
            "source": src["source"],
            "goodput": src["goodput_mbps"],
            "first": head * 8 / first_s / 1e6,
            "rest": (whole - head) * 8 / (window - first_s) / 1e6,
            "exit_s": exit_s,
            "exit_bw": exit_bw,
            "retx": 100 * src["retransmitted_fraction"] if src.get("retransmitted_fraction") is not None else None,
            "retx_first": retx_head,
            "retx_rest": 100 * retx_rest / sent_rest if sent_rest > 0 else None,
            "rwnd": rwnd_limited(run_dir, src, sub),
        })
    return out, window


def fmt(x, digits):
    return "-" if x is None else f"{x:.{digits}f}"


def table(all_rows, first_s, window):
    """The Markdown table: every run's rows, then each source's medians."""
    rest = window - first_s
    lines = [
        f"| run | source | goodput Mbit/s | first {first_s:g} s | next {rest:g} s | STARTUP ends, s "
        f"| estimate then, Mbit/s | retx % | retx in first {first_s:g} s | retx % after | rwnd-limited s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in all_rows:
        lines.append(
            f"| {r['run']} | {r['source']} | {fmt(r['goodput'], 2)} | {fmt(r['first'], 1)} | "
            f"{fmt(r['rest'], 1)} | {fmt(r['exit_s'], 2)} | {fmt(r['exit_bw'], 1)} | {fmt(r['retx'], 2)} | "
            f"{r['retx_first']} | {fmt(r['retx_rest'], 2)} | {fmt(r['rwnd'], 3)} |"
        )
    runs = len({r["run"] for r in all_rows})
    for source in dict.fromkeys(r["source"] for r in all_rows):
        mine = [r for r in all_rows if r["source"] == source]

        def med(key):
            xs = [r[key] for r in mine if r[key] is not None]
            return statistics.median(xs) if xs else None

        lines.append(
            f"| median of {len(mine)} | {source} | {fmt(med('goodput'), 2)} | {fmt(med('first'), 1)} | "
            f"{fmt(med('rest'), 1)} | {fmt(med('exit_s'), 2)} | {fmt(med('exit_bw'), 1)} | {fmt(med('retx'), 2)} | "
            f"{fmt(med('retx_first'), 0)} | {fmt(med('retx_rest'), 2)} | {fmt(med('rwnd'), 3)} |"
        )
    return "\n".join(lines), runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="a `bbrlab compare` output directory")
    ap.add_argument("--first", type=float, default=5.0,
                    help="seconds of data for the start-up goodput column (default 5)")
    a = ap.parse_args(argv)
    try:
        all_rows = []
        windows = set()
        for d in a.dirs:
            rows, window = rows_of(d, a.first)
            all_rows += rows
            windows.add(window)
        if len(windows) > 1:
            raise Failed(f"the runs have different windows ({', '.join(f'{w:g} s' for w in sorted(windows))}); "
                         "compare runs of one scenario")
        text, runs = table(all_rows, a.first, windows.pop())
    except Failed as e:
        print(f"compare_seeds: {e}", file=sys.stderr)
        return 1
    print(text)
    print(f"\n{runs} run{'' if runs == 1 else 's'}; times from each source's first data packet.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

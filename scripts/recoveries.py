#!/usr/bin/env python3
"""Loss recoveries and undos, simulated or kernel, as one Markdown table.

    python3 scripts/recoveries.py FILE [FILE ...]

Each FILE is either a simulation's `summary.json` (`bbrlab sim`: one row
per run and flow, from its `loss_episodes`, `undos`, `retransmissions`)
or the JSON lines `bbrlab tcp send` printed, one transfer a line (one row
per line, from its `netns` counters: `sack_recoveries` plus `timeouts` as
the episodes begun, the four undo counters summed as the undos, and
`retransmits`). Columns: the source and run, goodput, the share
retransmitted, episodes begun, undos (and their share of the episodes),
partial undos where the source counts them (the kernel, a simulated flow
with timestamps; a share of the undos),
and retransmissions per episode; then the medians of each source.

A FILE may also be a `compare.json` (`bbrlab compare`): a row for each
source that counts recoveries (the simulator runs and kernel TCP; its
`loss_episodes`, `undos`, `retransmitted_packets`, `retransmitted_fraction`
and, for kernel TCP, `paws_discarded_fraction`), named by its label. Its
retransmissions are counted over compare's window (the scenario's
duration from the first data packet), its recoveries over the whole run.

A kernel file may also hold the lines `bbrlab tcp recv` printed (no
`cc`; its `netns` has `segments_in`), as `bbrlab emu` prints both: the
receivers' lines pair with the senders' in order, the first with the
first, and the table gets a column of the segments the receiver
discarded by PAWS (`paws_discards`, a share of `segments_in`). A
simulated flow with `timestamps = true` is its own source (`simulated
bbr, timestamps`) and fills that column from its summary's `timestamps`
(`paws_discards` over `segments_received`); without them the simulated
receiver discards nothing, and its rows show `-` there.

The two count alike where it matters: an episode is a fast recovery or a
timeout (the simulator counts the first of a run of timeouts, Linux every
one, which on a path with few timeouts differs by a handful), an undo a
reduction taken back as spurious (Linux: `TCPFullUndo`, `TCPPartialUndo`,
`TCPDSACKUndo`, `TCPLossUndo`). The kernel's counters are its network
namespace's: one connection's only where nothing else there uses TCP, as
in `bbrlab emu`'s namespaces. Stdlib only; bad input is named.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

UNDO_KEYS = ("full_undos", "partial_undos", "dsack_undos", "loss_undos")


class Failed(Exception):
    """Input this script cannot use, with where and why."""


def need(obj, key, where):
    try:
        return obj[key]
    except (KeyError, TypeError, IndexError):
        raise Failed(f"{where}: no `{key}`") from None


def row(source, run, goodput_bps, retx_fraction, episodes, undos, retransmissions):
    return {
        "source": source,
        "run": run,
        "goodput": goodput_bps / 1e6,
        "retx": None if retx_fraction is None else 100 * retx_fraction,
        "episodes": episodes,
        "undos": undos,
        "per_episode": retransmissions / episodes if episodes else None,
        "paws": None,
        "partial": None,
    }


def objects(obj, key, where):
    """`obj[key]` as a list of JSON objects, or Failed naming what it is."""
    items = need(obj, key, where)
    if not isinstance(items, list):
        raise Failed(f"{where}: `{key}` is not a list")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise Failed(f"{where}: `{key}` item {i} is not an object")
    return items


def sim_rows(report, path):
    out = []
    for i, r in enumerate(objects(report, "runs", path)):
        params = r.get("params") or {}
        if not isinstance(params, dict):
            raise Failed(f"{path}, run {i}: `params` is not an object")
        name = ", ".join(f"{k}={v}" for k, v in params.items()) or f"run {i}"
        for j, f in enumerate(objects(r, "flows", f"{path}, run {i}")):
            where = f"{path}, run {i}, flow {j}"
            if "loss_episodes" not in f:
                raise Failed(f"{where}: no `loss_episodes` (a summary from before bbrlab reported it)")
            stamps = f.get("timestamps")
            source = "simulated " + str(need(f, "algorithm", where))
            if stamps is not None:
                if not isinstance(stamps, dict):
                    raise Failed(f"{where}: `timestamps` is not an object")
                source += ", timestamps"
            r = row(source, name,
                    need(f, "goodput_bps", where), need(f, "retransmission_rate", where),
                    f["loss_episodes"], need(f, "undos", where), need(f, "retransmissions", where))
            if stamps is not None:
                arrived = need(stamps, "segments_received", where + ", timestamps")
                discarded = need(stamps, "paws_discards", where + ", timestamps")
                r["paws"] = 100 * discarded / arrived if arrived else None
                r["partial"] = need(stamps, "partial_undos", where + ", timestamps")
            out.append(r)
    return out


def is_receiver(s):
    """A `tcp recv` line: no `cc`, and receiver counters (or none read)."""
    if not isinstance(s, dict) or "cc" in s or "netns" not in s:
        return False
    counters = s["netns"]
    return counters is None or (isinstance(counters, dict) and "segments_in" in counters)


def paws_share(s, where):
    """The share of arriving segments the receiver of `tcp recv` line `s`
    discarded by PAWS, in %; None when it arrived nothing."""
    counters = s["netns"]
    if counters is None:
        raise Failed(f"{where}: `netns` is null: the receiver could not read its namespace's counters")
    arrived = need(counters, "segments_in", where)
    return 100 * need(counters, "paws_discards", where) / arrived if arrived else None


def kernel_rows(lines, path):
    out = []
    receivers = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            s = json.loads(line)
        except json.JSONDecodeError as e:
            raise Failed(f"{where}: not JSON ({e})") from None
        if is_receiver(s):
            receivers.append(paws_share(s, where))
            continue
        counters = need(s, "netns", where)
        if counters is None:
            raise Failed(f"{where}: `netns` is null: the sender could not read its namespace's counters")
        episodes = need(counters, "sack_recoveries", where) + need(counters, "timeouts", where)
        undos = sum(need(counters, k, where) for k in UNDO_KEYS)
        out.append(row("kernel " + str(need(s, "cc", where)), f"line {n}", need(s, "goodput_bps", where),
                       s.get("retransmitted_fraction"), episodes, undos, need(s, "retransmits", where)))
        out[-1]["partial"] = counters["partial_undos"]
    if receivers:
        if len(receivers) != len(out):
            raise Failed(f"{path}: {len(receivers)} receiver line(s) for {len(out)} sender line(s); "
                         "each transfer needs both, or no receiver lines at all")
        for r, paws in zip(out, receivers):
            r["paws"] = paws
    return out


def compare_rows(report, path):
    out = []
    for i, src in enumerate(objects(report, "sources", path)):
        where = f"{path}, source {i}"
        if src.get("loss_episodes") is None:
            continue  # a source that does not count them (UDP, s2n-quic)
        r = row(str(need(src, "source", where)), str(path), 1e6 * need(src, "goodput_mbps", where),
                src.get("retransmitted_fraction"), src["loss_episodes"], need(src, "undos", where),
                need(src, "retransmitted_packets", where))
        share = src.get("paws_discarded_fraction")
        r["paws"] = None if share is None else 100 * share
        out.append(r)
    if not out:
        raise Failed(f"{path}: no source counts recoveries (a compare.json from before bbrlab reported them?)")
    return out


def rows_of(path):
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise Failed(f"{path}: {e.strerror}") from None
    try:
        report = json.loads(text)
    except json.JSONDecodeError:
        report = None
    try:
        if isinstance(report, dict) and "runs" in report:
            return sim_rows(report, path)
        if isinstance(report, dict) and "sources" in report:
            return compare_rows(report, path)
        rows = kernel_rows(text.splitlines(), path)
    except TypeError as e:
        # A figure of the wrong type (a string where a count belongs).
        raise Failed(f"{path}: a figure is not a number ({e})") from None
    if not rows:
        raise Failed(f"{path}: neither a simulation's summary.json, a compare.json nor `tcp send` JSON lines")
    return rows


def fmt(x, digits):
    return "-" if x is None else f"{x:.{digits}f}"


def share(r):
    return 100 * r["undos"] / r["episodes"] if r["episodes"] else None


def partial_share(r):
    return 100 * r["partial"] / r["undos"] if r["partial"] is not None and r["undos"] else None


def partial_cell(count, pct):
    return "-" if count is None else f"{fmt(count, 0)} ({fmt(pct, 0)})"


def table(rows):
    # The PAWS column only where some receiver was read: a table of
    # senders alone stays as it was.
    paws = any(r["paws"] is not None for r in rows)
    # Likewise the partial undos, only where some source counts them (the
    # kernel; the simulator with timestamps, without which it has none).
    partial = any(r["partial"] is not None for r in rows)
    lines = ["| source | run | goodput Mbit/s | retransmitted % | episodes | undone (% of episodes) "
             + ("| partial undos (% of undos) " if partial else "")
             + "| retransmissions an episode |" + (" discarded by PAWS % |" if paws else ""),
             "| --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if partial else "")
             + (" --- |" if paws else "")]
    for r in rows:
        lines.append(f"| {r['source']} | {r['run']} | {fmt(r['goodput'], 2)} | {fmt(r['retx'], 1)} | "
                     f"{r['episodes']} | {r['undos']} ({fmt(share(r), 0)}) |"
                     + (f" {partial_cell(r['partial'], partial_share(r))} |" if partial else "")
                     + f" {fmt(r['per_episode'], 1)} |"
                     + (f" {fmt(r['paws'], 1)} |" if paws else ""))
    for src in dict.fromkeys(r["source"] for r in rows):
        mine = [r for r in rows if r["source"] == src]

        def med(key):
            v = [r[key] for r in mine if r[key] is not None]
            return statistics.median(v) if v else None
        shares = [share(r) for r in mine if share(r) is not None]
        partials = [partial_share(r) for r in mine if partial_share(r) is not None]
        lines.append(f"| {src} | median of {len(mine)} | {fmt(med('goodput'), 2)} | {fmt(med('retx'), 1)} | "
                     f"{fmt(med('episodes'), 0)} | {fmt(med('undos'), 0)} "
                     f"({fmt(statistics.median(shares) if shares else None, 0)}) |"
                     + (f" {partial_cell(med('partial'), statistics.median(partials) if partials else None)} |"
                        if partial else "")
                     + f" {fmt(med('per_episode'), 1)} |"
                     + (f" {fmt(med('paws'), 1)} |" if paws else ""))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("files", nargs="+", metavar="FILE", help="a summary.json, a compare.json, or tcp send JSON lines (with tcp recv's, if any)")
    a = ap.parse_args(argv)
    try:
        rows = [r for f in a.files for r in rows_of(f)]
    except Failed as e:
        print(f"recoveries: {e}", file=sys.stderr)
        return 1
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

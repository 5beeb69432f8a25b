#!/usr/bin/env python3
"""How a BBRv3 flow's first PROBE_UP against another flow played out, in
the kernel runs and the simulator's draws of one `validate --multiflow`
path (the Validation chapter's 1-BDP `bbrlab_bbr3` against `cubic`).

    python3 scripts/first_probe.py OUT/multiflow/PATH

OUT/multiflow/PATH is what `validate --multiflow` leaves per path: rep-N/
with the kernel's `kernel-flow-K.csv`, the BBRv3 control's
`kernel-flow-0.cc.csv` and the emulator's `emu-log/packets.csv`, and the
simulator's draws in rep-N/sim*/ (`flows.csv`, `model.csv`). Flow 0 must
be the BBRv3 flow, flow 1 the other (port 5201 + K on the emulator).

Prints, kernel runs against simulator draws:
  - inflight_longterm's mean over 3 s windows, and how much it was raised
    and cut over the run (packets);
  - the first PROBE_UP after 1 s: rounds, inflight_longterm at its start
    and end, and how many ended cut without growing;
  - the first queue overflow after 0.8 s against the first REFILL, and
    the flows' inflight just before it;
  - how the first overflow's drops fell on the flows;
  - each flow's inflight at 0.6 s, the STARTUP exit's inflight_longterm,
    flow 1's largest cwnd before 0.6 s.

Only the standard library; a run missing a file is an error naming it.
"""
import csv
import glob
import os
import statistics as st
import sys

MSS = 1448


def rows(path):
    if not os.path.exists(path):
        sys.exit(f"first_probe: {path} is missing (validate --multiflow writes it)")
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def at(series, t):
    """The sample nearest to time t."""
    return min(series, key=lambda x: abs(float(x["time_s"]) - t))


def pkts(x, col):
    v = x.get(col, "")
    return float(v) / MSS if v not in ("", None) else None


class Run:
    """One side of one repetition (or draw): flow 0's model, each flow's
    series, and the bottleneck's drops as (time, flow)."""

    def __init__(self, model, flows, drops):
        self.model, self.flows, self.drops = model, flows, drops


def kernel_run(rep):
    p = rows(os.path.join(rep, "emu-log", "packets.csv"))
    t0 = float(p[0]["enqueue_s"]) if p else 0.0
    drops = sorted(
        (float(x["enqueue_s"]) - t0, int(x["dst_port"]) - 5201)
        for x in p
        if x["dropped"] and x["direction"] == "forward"
    )
    return Run(
        rows(os.path.join(rep, "kernel-flow-0.cc.csv")),
        [rows(os.path.join(rep, f"kernel-flow-{k}.csv")) for k in (0, 1)],
        drops,
    )


def sim_run(d):
    fl = rows(os.path.join(d, "flows.csv"))
    flows = [[x for x in fl if x["flow"] == str(k)] for k in (0, 1)]
    drops = []
    for k, series in enumerate(flows):
        prev = None
        for x in series:
            v = int(x["drops"] or 0)
            if prev is not None and v > prev:
                drops += [(float(x["time_s"]), k)] * (v - prev)
            prev = v
    model = [x for x in rows(os.path.join(d, "model.csv")) if x["flow"] == "0"]
    return Run(model, flows, sorted(drops))


def episodes(drops, gap=0.1):
    """Drops grouped into overflows: a pause of `gap` s starts a new one."""
    eps = []
    for t, f in drops:
        if eps and t - eps[-1][-1][0] < gap:
            eps[-1].append((t, f))
        else:
            eps.append([(t, f)])
    return eps


def first_up(model):
    """(start s, end s, rounds, ilt at start, ilt at end) of the first
    PROBE_UP after 1 s, or None."""
    start = None
    for x in model:
        t = float(x["time_s"])
        if t < 1:
            continue
        if start is None and x["mode"] == "probe_bw_up":
            start = x
        elif start is not None and x["mode"] != "probe_bw_up":
            return (
                float(start["time_s"]),
                t,
                int(x["round_count"]) - int(start["round_count"]),
                pkts(start, "inflight_longterm_bytes"),
                pkts(x, "inflight_longterm_bytes"),
            )
    return None


def first_mode(model, mode, after):
    return next((float(x["time_s"]) for x in model if float(x["time_s"]) >= after and x["mode"] == mode), None)


def report(label, runs):
    print(f"{label}: {len(runs)} runs")
    line = []
    end = max(float(x["time_s"]) for r in runs for x in r.model)
    for a in range(0, int(end), 3):
        v = [pkts(x, "inflight_longterm_bytes") for r in runs for x in r.model
             if x["inflight_longterm_bytes"] and a <= float(x["time_s"]) < a + 3]
        line.append(f"{a}-{a + 3} s {st.mean(v):.0f}" if v else f"{a}-{a + 3} s -")
    print("  inflight_longterm mean, packets:", ", ".join(line))
    rise, fall = [], []
    for r in runs:
        v = [pkts(x, "inflight_longterm_bytes") for x in r.model if x["inflight_longterm_bytes"]]
        rise.append(sum(max(b - a, 0) for a, b in zip(v, v[1:])))
        fall.append(sum(max(a - b, 0) for a, b in zip(v, v[1:])))
    print(f"  inflight_longterm over the run: raised by {st.mean(rise):.1f}, cut by {st.mean(fall):.1f} packets (mean)")
    ups = [u for u in (first_up(r.model) for r in runs) if u and u[3] and u[4]]
    if ups:
        flat_cut = sum(1 for u in ups if u[4] < u[3] - 0.5)
        print(f"  first PROBE_UP after 1 s: {st.mean(u[2] for u in ups):.2f} rounds, "
              f"inflight_longterm {st.mean(u[3] for u in ups):.1f} -> {st.mean(u[4] for u in ups):.1f}; "
              f"ended cut below its start in {flat_cut} of {len(ups)}")
    over, refill, before, level = [], [], 0, []
    for r in runs:
        e = [ep for ep in episodes(r.drops) if ep[0][0] > 0.8]
        t_over = e[0][0][0] if e else float("inf")
        if e:
            # The flows' inflight just before (the 10 ms samples lag).
            t = t_over - 0.045
            level.append(sum(pkts(at(f, t), "inflight_bytes") for f in r.flows))
        t_ref = first_mode(r.model, "probe_bw_refill", 1.0)
        if t_ref is None:
            continue
        over.append(t_over)
        refill.append(t_ref)
        before += t_over < t_ref - 0.05
    if over:
        print(f"  first overflow after 0.8 s: median {st.median(over):.2f} s; first REFILL median "
              f"{st.median(refill):.2f} s; overflow at least 50 ms before REFILL in {before} of {len(over)}; "
              f"the flows' inflight 45 ms before it: median {st.median(level):.0f} packets")
    # The first overflow (both start-ups'): each flow's drops in its first
    # 40 ms, the next 40 ms, and after.
    split = []
    for r in runs:
        e = episodes(r.drops)
        if not e:
            continue
        t0 = e[0][0][0]
        split.append([sum(1 for t, g in e[0] if g == f and a <= t - t0 < b)
                      for a, b in ((0, 0.04), (0.04, 0.08), (0.08, 1e9)) for f in (0, 1)])
    if split:
        m = [st.mean(x[i] for x in split) for i in range(6)]
        print(f"  first overflow (the start-ups'): drops of flow 0 / flow 1 in its first 40 ms "
              f"{m[0]:.1f} / {m[1]:.1f}, the next 40 ms {m[2]:.1f} / {m[3]:.1f}, after {m[4]:.1f} / {m[5]:.1f} (mean)")
    i0 = [pkts(at(r.flows[0], 0.6), "inflight_bytes") for r in runs]
    i1 = [pkts(at(r.flows[1], 0.6), "inflight_bytes") for r in runs]
    exit_ilt = []
    for r in runs:
        x = next((x for x in r.model if x["inflight_longterm_bytes"]), None)
        if x:
            exit_ilt.append(pkts(x, "inflight_longterm_bytes"))
    peak = [max(pkts(x, "cwnd_bytes") for x in r.flows[1] if float(x["time_s"]) < 0.6) for r in runs]
    lost = [int(at(r.flows[1], 1.0)["retransmitted_packets"]) for r in runs]
    q = st.quantiles(exit_ilt, n=4) if len(exit_ilt) > 1 else exit_ilt * 3
    print(f"  at 0.6 s, median inflight: flow 0 {st.median(i0):.0f}, flow 1 {st.median(i1):.0f}, "
          f"sum {st.median(a + b for a, b in zip(i0, i1)):.0f} packets")
    print(f"  STARTUP's inflight_longterm: median {st.median(exit_ilt):.0f} (quartiles {q[0]:.0f}-{q[2]:.0f}); "
          f"flow 1's largest cwnd before 0.6 s: median {st.median(peak):.0f} packets, "
          f"retransmitted by 1 s: median {st.median(lost):.0f}")


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    base = argv[1]
    reps = sorted(glob.glob(os.path.join(base, "rep-*")))
    if not reps:
        sys.exit(f"first_probe: no rep-N directories in {base}")
    kernel = [kernel_run(r) for r in reps]
    sim = [sim_run(d) for r in reps for d in sorted(glob.glob(os.path.join(r, "sim*"))) if os.path.isdir(d)]
    report("kernel", kernel)
    if sim:
        report("simulator", sim)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

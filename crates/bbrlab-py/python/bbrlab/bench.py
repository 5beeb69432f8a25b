"""``python -m bbrlab bench``: figures for the Python package (issue 14).

1. A sweep of ``--runs`` short runs (about ``--run-seconds`` of wall time
   each: one BBR flow, 100 Mbit/s, 40 ms, 1 % loss, no time series) on the
   LocalCluster ``bbrlab.sweep`` starts by itself, with 1 and then 2
   single-threaded workers: wall time, runs per second and the speed-up
   (the goal is >= 1.8x on 2 cores). Measured twice in the same run: with
   the sweep's automatic batches, and with one Dask task per run
   (``batch_size=1``, the sweep before batching) as the baseline.
2. The same runs with the CLI's own parallel sweep (``bbrlab sim --jobs``,
   a ``[sweep]`` table) and the overhead per run of Dask against it:
   (Dask's wall - the CLI's wall) x workers / runs.
3. ``simulate()`` against ``bbrlab sim`` for a 10 s run with its time
   series (median of ``--repeat``): the ratio of wall times (the goal is
   within 5 %).

Cluster start-up is not timed (a sweep on a running cluster is what a
researcher repeats); each worker imports bbrlab before the clock starts.
The machine's load average is printed before and after: other work on the
cores shows in every figure. Use a release build
(scripts/bench-python.sh builds both sides).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import bbrlab
from bbrlab._sweep import _batches, _local_cluster

SCENARIO = """\
name = "bench"
duration = "{duration}"
sample_interval = "{interval}"

[link.forward]
rate = "100mbit"
delay = "20ms"
queue = {{ limit = "350pkt" }}
loss = {{ bernoulli = 0.01 }}

[link.reverse]
delay = "20ms"

[[flow]]
algorithm = "bbr"
"""


def _warm(client) -> None:
    small = SCENARIO.format(duration="100ms", interval="0s")
    client.run(lambda: bbrlab.simulate(small, progress=False, timeseries=False) and None)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bbrlab bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", type=Path, default=Path("target/release/bbrlab"))
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--run-seconds", type=float, default=0.2, help="wall time per sweep run")
    p.add_argument("--repeat", type=int, default=5, help="repeats of the 10 s comparison")
    args = p.parse_args(argv)
    from distributed import Client

    # Calibrate the simulated duration to ~run-seconds of wall time.
    text = SCENARIO.format(duration="10s", interval="0s")
    bbrlab.simulate(text, progress=False, timeseries=False)
    t = time.perf_counter()
    bbrlab.simulate(text, progress=False, timeseries=False)
    per_sim_s = (time.perf_counter() - t) / 10
    duration_ms = max(10, round(args.run_seconds / per_sim_s * 1000))
    sweep_text = SCENARIO.format(duration=f"{duration_ms}ms", interval="0s")
    seeds = list(range(1, args.runs + 1))
    print(f"sweep: {args.runs} runs of {duration_ms} ms simulated (~{args.run_seconds} s each)")

    print(f"load average before: {_load()}")
    walls = {}
    for workers in (1, 2):
        with _local_cluster(workers) as cluster, Client(cluster) as client:
            _warm(client)
            for batched in (True, False):
                t = time.perf_counter()
                df = bbrlab.sweep(
                    sweep_text,
                    seeds=seeds,
                    client=client,
                    progress=False,
                    batch_size=None if batched else 1,
                )
                walls[workers, batched] = time.perf_counter() - t
                assert (df["status"] == "ok").all() and df["run"].nunique() == args.runs
    for batched in (True, False):
        how = (
            f"automatic batches ({len(_batches(args.runs, 1))} tasks on 1 worker, "
            f"{len(_batches(args.runs, 2))} on 2)"
            if batched
            else "one task per run (batch_size=1)"
        )
        print(f"  {how}:")
        for workers in (1, 2):
            w = walls[workers, batched]
            print(
                f"    Dask LocalCluster, {workers} worker(s): {w:.2f} s, {args.runs / w:.1f} runs/s"
            )
        print(f"    speed-up 1 -> 2 workers: {walls[1, batched] / walls[2, batched]:.2f}x")
    print(
        f"  2 workers, automatic batches against one task per run: "
        f"{walls[2, False] / walls[2, True]:.2f}x as fast"
    )

    cli_walls = {}
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "sweep.toml"
        f.write_text(sweep_text + f"\n[sweep]\nseed = {seeds}\n")
        for jobs in (1, 2):
            out = Path(d) / f"out{jobs}"
            t = time.perf_counter()
            subprocess.run(
                [str(args.cli), "sim", str(f), "--jobs", str(jobs), "--quiet", "--no-plots", "--out", str(out)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            cli_walls[jobs] = time.perf_counter() - t
            shutil.rmtree(out)
            print(f"  bbrlab sim --jobs {jobs}: {cli_walls[jobs]:.2f} s")
    # What two cores give this workload without Dask: the reference for
    # the Dask speed-up (other work on the machine lowers both).
    print(f"  the CLI's speed-up 1 -> 2 jobs: {cli_walls[1] / cli_walls[2]:.2f}x")
    for batched in (True, False):
        for w in (1, 2):
            overhead = (walls[w, batched] - cli_walls[w]) * w / args.runs
            print(
                f"  Dask overhead per run vs the CLI, {w} worker(s), "
                f"{'batched' if batched else 'a task per run'}: {overhead * 1000:.1f} ms"
            )

    ten = SCENARIO.format(duration="10s", interval="10ms")
    py, cli = [], []
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "ten.toml"
        f.write_text(ten)
        for i in range(args.repeat):
            t = time.perf_counter()
            run = bbrlab.simulate(f, progress=False)
            py.append(time.perf_counter() - t)
            assert len(run.flows) == 1000
            out = Path(d) / f"o{i}"
            t = time.perf_counter()
            subprocess.run(
                [str(args.cli), "sim", str(f), "--quiet", "--no-plots", "--out", str(out)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            cli.append(time.perf_counter() - t)
    mp, mc = statistics.median(py), statistics.median(cli)
    print(
        f"10 s run (100 Mbit/s, 40 ms, 1 % loss, 10 ms samples), median of {args.repeat}: "
        f"simulate() {mp:.3f} s, bbrlab sim {mc:.3f} s, ratio {mp / mc:.3f}"
    )
    print(f"load average after: {_load()}")
    return 0


def _load() -> str:
    """The 1, 5 and 15-minute load averages, as ``uptime`` shows them."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())

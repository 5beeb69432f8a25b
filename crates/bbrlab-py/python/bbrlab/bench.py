"""``python -m bbrlab bench``: figures for the Python package (issue 14).

1. A sweep of ``--runs`` short runs (about ``--run-seconds`` of wall time
   each: one BBR flow, 100 Mbit/s, 40 ms, 1 % loss, no time series) on the
   LocalCluster ``bbrlab.sweep`` starts by itself, with 1 and 2
   single-threaded workers (automatic batches): wall time, runs per second
   and the speed-up (the goal is >= 1.8x on 2 cores).
2. The same runs with the CLI's own parallel sweep (``bbrlab sim --jobs``
   1 and 2, a ``[sweep]`` table): what the cores give this workload
   without Dask, and Dask's overhead per run against it:
   (Dask's wall - the CLI's wall) x workers / runs.
3. One Dask task per run (``batch_size=1``, the sweep before batching) as
   the baseline of the batching, in the first round.
4. ``simulate()`` against ``bbrlab sim`` for a 10 s run with its time
   series (median of ``--repeat``, the two alternating): the ratio of wall
   times (the goal is within 5 %).

Why rounds: on a shared machine the load changes from minute to minute,
and a speed-up whose two sides are timed minutes apart measures that
change as much as the cores. Each of ``--rounds`` rounds times all four
sweeps back to back (the order of 1 and 2 alternating between rounds), the
per-round ratios are printed, and the summary is the median of the rounds.

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
from typing import Dict, List, Optional, Tuple

import bbrlab
from bbrlab._sweep import _local_cluster

#: The longest wall time one sweep run may be calibrated to: 200 runs of
#: it take most of an hour per sweep already.
MAX_RUN_SECONDS = 60.0


def _scenario(duration: str, interval: str) -> dict:
    """The benchmark's path: 100 Mbit/s, 40 ms, 1 % random loss, one BBR
    flow, run for ``duration`` with samples every ``interval``."""
    return {
        "name": "bench",
        "duration": duration,
        "sample_interval": interval,
        "link": {
            "forward": {
                "rate": "100mbit",
                "delay": "20ms",
                "queue": {"limit": "350pkt"},
                "loss": {"bernoulli": 0.01},
            },
            "reverse": {"delay": "20ms"},
        },
        "flow": [{"algorithm": "bbr"}],
    }


def _warm(client) -> None:
    small = _scenario("100ms", "0s")
    client.run(lambda: bbrlab.simulate(small, progress=False, timeseries=False) and None)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bbrlab bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", type=Path, default=Path("target/release/bbrlab"))
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--run-seconds", type=float, default=0.2, help="wall time per sweep run")
    p.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="rounds of the sweep measurements (each: Dask 1 and 2 workers, CLI --jobs 1 and 2)",
    )
    p.add_argument("--repeat", type=int, default=11, help="repeats of the 10 s comparison")
    args = p.parse_args(argv)
    for name in ("runs", "rounds", "repeat"):
        if getattr(args, name) < 1:
            p.error(f"--{name}: at least 1, not {getattr(args, name)}")
    # NaN passes a `<= 0` test and then fails deep in the calibration
    # (round(nan)); infinity would ask for an endless run.
    if not 0 < args.run_seconds <= MAX_RUN_SECONDS:
        p.error(f"--run-seconds: more than 0 and at most {MAX_RUN_SECONDS:g} seconds, not {args.run_seconds}")
    if not args.cli.is_file():
        p.error(f"--cli: no such file {args.cli} (build it: cargo build --release -p bbrlab)")

    # Calibrate the simulated duration to ~run-seconds of wall time: a
    # guess from a 10 s run, then the guess itself timed and scaled (a short
    # run costs more per simulated second than a long one), each the
    # fastest of three timings so that a moment of load does not skew it.
    duration_ms = 10_000
    for _ in range(2):
        text = _scenario(f"{duration_ms}ms", "0s")
        wall = min(_timed(lambda: bbrlab.simulate(text, progress=False, timeseries=False)) for _ in range(3))
        duration_ms = max(10, round(duration_ms * args.run_seconds / wall))
    sweep_scenario = _scenario(f"{duration_ms}ms", "0s")
    seeds = list(range(1, args.runs + 1))
    print(f"sweep: {args.runs} runs of {duration_ms} ms simulated (~{args.run_seconds} s each), {args.rounds} round(s)")
    print(
        "  each round times, one after another: Dask LocalCluster with 1 and 2 workers "
        "(automatic batches), bbrlab sim --jobs 1 and --jobs 2; the order of 1 and 2 "
        "alternates between rounds. Round 1 also times one Dask task per run (batch_size=1)."
    )

    walls: Dict[Tuple[str, int], List[float]] = {}
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "sweep.toml"
        f.write_text(bbrlab.scenario_toml({**sweep_scenario, "sweep": {"seed": seeds}}))
        for r in range(args.rounds):
            load = _load()
            order = (1, 2) if r % 2 == 0 else (2, 1)
            for n in order:
                for batched in (True, False) if r == 0 else (True,):
                    key = "dask" if batched else "dask-per-task"
                    walls.setdefault((key, n), []).append(
                        _dask_sweep(sweep_scenario, seeds, n, None if batched else 1)
                    )
            for n in order:
                walls.setdefault(("cli", n), []).append(_timed(lambda: _cli_sweep(args.cli, f, n, Path(d) / "out")))
            line = ", ".join(
                f"{k} {n}: {walls[k, n][-1]:.2f} s"
                for k in ("dask", "cli")
                for n in (1, 2)
            )
            print(
                f"  round {r + 1} (load before {load}): {line}; speed-up Dask "
                f"{walls['dask', 1][-1] / walls['dask', 2][-1]:.2f}x, CLI "
                f"{walls['cli', 1][-1] / walls['cli', 2][-1]:.2f}x",
                flush=True,  # a round takes minutes: show it as it ends
            )

    med = {k: statistics.median(v) for k, v in walls.items()}
    print(f"median of {args.rounds} round(s):")
    for key, what in (("dask", "Dask LocalCluster, automatic batches"), ("cli", "bbrlab sim --jobs")):
        for n in (1, 2):
            print(f"  {what}, {n} {'worker(s)' if key == 'dask' else 'job(s)'}: {med[key, n]:.2f} s, {args.runs / med[key, n]:.1f} runs/s")
        ratios = [a / b for a, b in zip(walls[key, 1], walls[key, 2])]
        print(
            f"  {what}: speed-up 1 -> 2: {med[key, 1] / med[key, 2]:.2f}x "
            f"(per round: {', '.join(f'{x:.2f}x' for x in ratios)})"
        )
    print(
        f"  one task per run (batch_size=1), round 1: 1 worker {walls['dask-per-task', 1][0]:.2f} s, "
        f"2 workers {walls['dask-per-task', 2][0]:.2f} s, speed-up "
        f"{walls['dask-per-task', 1][0] / walls['dask-per-task', 2][0]:.2f}x"
    )
    for n in (1, 2):
        overhead = (med["dask", n] - med["cli", n]) * n / args.runs
        per_task = (walls["dask-per-task", n][0] - walls["cli", n][0]) * n / args.runs
        print(
            f"  Dask overhead per run vs the CLI, {n} worker(s): batched {overhead * 1000:.1f} ms "
            f"(medians), a task per run {per_task * 1000:.1f} ms (round 1)"
        )

    ten = _scenario("10s", "10ms")
    py, cli = [], []
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "ten.toml"
        f.write_text(bbrlab.scenario_toml(ten))
        for i in range(args.repeat):
            t = time.perf_counter()
            run = bbrlab.simulate(f, progress=False)
            py.append(time.perf_counter() - t)
            assert len(run.flows) == 1000
            cli.append(_timed(lambda: _cli_sweep(args.cli, f, None, Path(d) / "o")))
    mp, mc = statistics.median(py), statistics.median(cli)
    print(
        f"10 s run (100 Mbit/s, 40 ms, 1 % loss, 10 ms samples), median of {args.repeat}, interleaved: "
        f"simulate() {mp:.3f} s, bbrlab sim {mc:.3f} s, ratio {mp / mc:.3f}"
    )
    print(f"load average after: {_load()}")
    return 0


def _timed(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def _dask_sweep(text: dict, seeds: List[int], workers: int, batch_size: Optional[int]) -> float:
    """The wall time of one sweep on a fresh LocalCluster of ``workers``
    single-threaded workers (the cluster's start and warm-up not timed; only
    one cluster exists at a time, so no idle workers share the cores)."""
    from distributed import Client

    with _local_cluster(workers) as cluster, Client(cluster) as client:
        _warm(client)
        t = time.perf_counter()
        df = bbrlab.sweep(text, seeds=seeds, client=client, progress=False, batch_size=batch_size)
        wall = time.perf_counter() - t
    if not ((df["status"] == "ok").all() and df["run"].nunique() == len(seeds)):
        raise RuntimeError(f"the benchmark sweep lost or failed runs: {df.attrs.get('failed')}")
    return wall


def _cli_sweep(cli: Path, scenario: Path, jobs: Optional[int], out: Path) -> None:
    """``bbrlab sim`` on ``scenario`` (its ``[sweep]`` with ``--jobs``),
    writing into ``out``, which is removed afterwards."""
    cmd = [str(cli), "sim", str(scenario), "--quiet", "--no-plots", "--out", str(out)]
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(out)


def _load() -> str:
    """The 1, 5 and 15-minute load averages, as ``uptime`` shows them."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())

"""Throughput against delay across a sweep (Pantheon-style), as
``bbrlab plot`` draws it for a sweep's output directory.

``pantheon_points()`` gives one row per run and algorithm, by the same rule
as the CLI (``runner::plots::pantheon_points``): the algorithm's flows'
goodputs added up, and the mean over those flows of each flow's
95th-percentile RTT (Pantheon, Yan et al., USENIX ATC 2018, plots mean
throughput against 95th-percentile one-way delay; the simulator's summary
has RTTs, so the delay here is the round trip). An algorithm with no RTT
sample in a run gives no row. ``plot_pantheon()`` draws the rows with
matplotlib (imported only then), the delay axis logarithmic and reversed
so that better lies up and to the right.

``fairness_over_time(run)`` is Jain's index over sliding windows of a
run's ``flows`` frame, by the Rust rule ``summary.json`` uses, with the
window, step and threshold given. The default windows' summary, and the
queue's percentiles, are also in ``Run.summary_json["fairness_over_time"]``
and ``Run.summary_json["queue"]`` (docs/src/metrics.md).
"""

from __future__ import annotations

import json
import numbers
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import pandas as pd

def fairness_over_time(
    run_or_flows: Any, window: float = 1.0, step: float = 0.1, threshold: float = 0.9
) -> pd.DataFrame:
    """Jain's index over sliding windows of ``window`` seconds ending every
    ``step`` seconds: one row per window (``end_s``, ``flows``, ``jain``).
    ``attrs`` holds ``converged_at_s``, ``time_to_converge_s`` and
    ``last_join_s`` for ``threshold`` (None where the flows never settle).
    ``run_or_flows``: a ``Run`` (with its time series) or its ``flows``
    frame."""
    from . import _native

    for name, v in (("window", window), ("step", step), ("threshold", threshold)):
        # float() would take "1" or True and turn "1s" into a message that
        # names no argument.
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(
                f"fairness_over_time: {name}: a number"
                f"{'' if name == 'threshold' else ' of seconds'}, not {type(v).__name__} {v!r}"
            )
    flows = getattr(run_or_flows, "flows", run_or_flows)
    if not isinstance(flows, pd.DataFrame) or flows.empty:
        # Both ways to get none: timeseries=False, or a scenario whose
        # sample_interval is 0s (which timeseries=True cannot undo).
        raise ValueError(
            "fairness_over_time: no time series (give a Run simulated with timeseries=True "
            "from a scenario whose sample_interval is above 0s, as the default 10ms is; or its flows frame)"
        )
    missing = [c for c in ("time_s", "flow", "delivered_bytes") if c not in flows.columns]
    if missing:
        # A trimmed or foreign frame failed as a bare KeyError.
        raise ValueError(
            f"fairness_over_time: the flows frame has no column(s) {', '.join(missing)} "
            "(Run.flows has them)"
        )
    end, n, jain, at, ttc, joined = _native.sliding_jain(
        flows["time_s"].astype(float).tolist(),
        flows["flow"].astype("int64").tolist(),
        flows["delivered_bytes"].astype("int64").tolist(),
        window_s=float(window),
        step_s=float(step),
        threshold=float(threshold),
    )
    df = pd.DataFrame({"end_s": end, "flows": n, "jain": jain})
    df.attrs.update(
        window_s=window,
        step_s=step,
        threshold=threshold,
        converged_at_s=at,
        time_to_converge_s=ttc,
        last_join_s=joined,
    )
    return df


def plot_dir(
    path: Union[str, "os.PathLike[str]"],
    jain_window_s: Optional[float] = None,
    jain_step_s: float = 0.1,
    jain_threshold: float = 0.9,
) -> List[str]:
    """Draws the figures of a run directory (time series, fairness, queue
    CDF, FCT CDFs where there is an ``fct.csv``) or of a sweep's output
    directory (throughput against delay), what ``bbrlab plot`` draws,
    through the same code, and returns the stems written, each as ``.svg``
    and ``.png`` in ``path``.

    ``jain_window_s`` (seconds, 1 by default), ``jain_step_s`` (seconds)
    and ``jain_threshold`` (0 to 1) are ``bbrlab plot``'s ``--jain-*``
    options. A window given that no window of the run can hold (longer
    than the time after the last flow joined) is refused, as ``bbrlab plot
    --jain-window`` refuses it, rather than leaving the fairness figure
    out without a word.
    """
    from . import _native

    # Checked here: the native side's refusals ("must be real number, not
    # str") named no argument, and took True as 1.
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"plot_dir: path: a directory (a str or path), not {type(path).__name__} {path!r}")
    numbers_given = {"jain_window_s": jain_window_s, "jain_step_s": jain_step_s, "jain_threshold": jain_threshold}
    for name, v in numbers_given.items():
        if v is None and name == "jain_window_s":
            continue  # the default window
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"plot_dir: {name}: a number, not {type(v).__name__} {v!r}")
    return _native.plot_dir(
        os.fspath(path),
        None if jain_window_s is None else float(jain_window_s),
        float(jain_step_s),
        float(jain_threshold),
    )


#: The columns of ``pantheon_points()`` after the run and its parameters.
PANTHEON_COLUMNS = ["algorithm", "flows", "throughput_mbps", "delay_p95_ms"]


def _flows_of_summary(path: Path) -> pd.DataFrame:
    """One row per flow of a CLI ``summary.json``: run, parameters,
    algorithm, goodput_bps, rtt_p95_ms."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read a bbrlab summary.json ({e})") from e
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list):
        raise ValueError(f"{path}: no `runs` list; expected the summary.json `bbrlab sim` writes")
    rows: List[Dict[str, Any]] = []
    for i, r in enumerate(runs):
        # Each shape checked: a hand-edited or foreign file failed as an
        # AttributeError on .get, naming neither the file nor the entry.
        if not isinstance(r, dict):
            raise ValueError(f"{path}: runs[{i}] is not an object; expected the summary.json `bbrlab sim` writes")
        run = r.get("run", f"run {i}")
        flows = r.get("flows")
        if not isinstance(flows, list) or not all(isinstance(f, dict) for f in flows):
            raise ValueError(f"{path}: {run} has no `flows` list of objects")
        for f in flows:
            row = {"run": run, **(r.get("params") or {})}
            row.update(
                algorithm=f.get("algorithm"),
                goodput_bps=f.get("goodput_bps"),
                rtt_p95_ms=f.get("rtt_p95_ms"),
            )
            rows.append(row)
    return pd.DataFrame(rows)


def pantheon_points(source: Union[str, "os.PathLike[str]", pd.DataFrame]) -> pd.DataFrame:
    """One row per run and algorithm: ``run``, the run's swept parameters,
    ``algorithm``, ``flows``, ``throughput_mbps`` and ``delay_p95_ms``.

    ``source``: the output directory of ``bbrlab sim`` (or its
    ``summary.json``), or the DataFrame ``bbrlab.sweep()`` returns (failed
    runs left out)."""
    if isinstance(source, pd.DataFrame):
        df = source
        if "status" in df.columns:
            df = df[df["status"] == "ok"]
        params = list(df.attrs.get("parameters", []))
        cols = list(df.columns)
        at = cols.index("seed") if "seed" in cols else -1
        if not params and at >= 0 and cols[at + 1 : at + 3] == ["run", "status"]:
            # attrs do not survive every pandas operation (pd.concat of
            # two sweeps, a round trip through CSV): the parameters were
            # then dropped from the points without a word. sweep() puts
            # them first, then seed, run and status.
            params = cols[: at + 1]
    else:
        if not isinstance(source, (str, os.PathLike)):
            raise TypeError(
                "pantheon_points: source: a directory bbrlab sim wrote, its summary.json "
                f"or a sweep() DataFrame, not {type(source).__name__}"
            )
        path = Path(os.fspath(source))
        if path.is_dir():
            path = path / "summary.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no summary.json; give the directory `bbrlab sim` wrote or a sweep() DataFrame"
            )
        df = _flows_of_summary(path)
        params = [c for c in df.columns if c not in ("run", "algorithm", "goodput_bps", "rtt_p95_ms")]
    missing = [c for c in ("run", "algorithm", "goodput_bps", "rtt_p95_ms") if c not in df.columns]
    if missing:
        raise ValueError(f"pantheon_points: the frame has no column(s) {', '.join(missing)}")
    out: List[Dict[str, Any]] = []
    # Runs and algorithms in the order they come (sort=False).
    for (run, alg), g in df.groupby(["run", "algorithm"], sort=False):
        delays = pd.to_numeric(g["rtt_p95_ms"], errors="coerce").dropna()
        if delays.empty:
            continue
        row = {"run": run}
        for p in params:
            row[p] = g[p].iloc[0]
        row.update(
            algorithm=alg,
            flows=len(g),
            throughput_mbps=float(pd.to_numeric(g["goodput_bps"]).sum()) / 1e6,
            delay_p95_ms=float(delays.mean()),
        )
        out.append(row)
    cols = ["run"] + params + PANTHEON_COLUMNS
    return pd.DataFrame(out, columns=cols)


def plot_pantheon(points: pd.DataFrame, ax: Any = None, title: str = "Throughput against delay") -> Any:
    """Draws ``pantheon_points()``'s rows with matplotlib: a colour per
    algorithm, the 95th-percentile RTT on a reversed log axis (better is
    up and to the right, as Pantheon draws it). Returns the axes."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("plot_pantheon needs matplotlib (pip install matplotlib)") from e
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for alg, g in points.groupby("algorithm", sort=False):
        ax.scatter(g["delay_p95_ms"], g["throughput_mbps"], label=str(alg))
    ax.set_xscale("log")
    if not ax.xaxis_inverted():
        ax.invert_xaxis()
    ax.set_xlabel("95th-percentile RTT (ms, log scale, reversed)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title(title)
    ax.legend()
    return ax

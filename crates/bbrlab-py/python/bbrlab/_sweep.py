"""Sweeps on Dask: every combination of a grid as one Dask task each.

The grid is expanded by the same parser as a scenario's ``[sweep]`` table
(so ``"flow.algorithm"`` sets every flow's algorithm, as in a file, and a
bad value is refused with the CLI's ``file:line:col`` message before any
task starts). Each task runs one point with ``simulate`` on a worker and
returns its summary; the results come back as one DataFrame.

A task that raises is retried by Dask (``retries``); a task whose worker
dies is rescheduled by the scheduler on another worker (up to
``distributed.scheduler.allowed-failures`` deaths). A run that still fails
is not dropped: it has a row with ``status == "failed"`` and the reason in
``error``, and a warning names how many failed.
"""

from __future__ import annotations

import json
import os
import uuid
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import pandas as pd

from . import _native
from ._run import UNITS, Run, ScenarioLike, _frame, _interactive, _source, _typed

#: Columns every sweep result has after the swept parameters and ``seed``.
STATUS_COLUMNS = ["run", "status", "error"]


def _simulate_text(text: str, base_dir: str, label: str):
    """``simulate`` for a point's text, with relative paths (traces)
    resolved against the scenario file's directory and errors naming the
    point."""
    r = _native.simulate(text=text, file=label, base_dir=base_dir, timeseries=False)
    return Run(
        name=r["name"],
        seed=r["seed"],
        duration_s=r["duration_s"],
        text=r["text"],
        params={},
        flows=pd.DataFrame(),
        link=pd.DataFrame(),
        summary=_frame(r["summary"], UNITS["summary"]),
        summary_json=json.loads(r["summary_json"]),
    )


def _json_values(values: Iterable[Any]) -> List[Any]:
    out = []
    for v in values:
        if hasattr(v, "item"):  # numpy scalars
            v = v.item()
        out.append(v)
    return out


def sweep(
    scenario: ScenarioLike,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Iterable[int]] = None,
    client: Any = None,
    *,
    retries: int = 2,
    n_workers: Optional[int] = None,
    progress: Optional[bool] = None,
) -> pd.DataFrame:
    """Runs every combination of ``grid`` × ``seeds`` as Dask tasks and
    returns one DataFrame: one row per run and flow, a column per swept
    parameter, ``seed``, ``run`` (``run-NNNN``, the CLI's numbering),
    ``status`` (``ok`` or ``failed``), ``error`` (why, for a failed run),
    then the summary columns of ``Run.summary`` (units in
    ``bbrlab.UNITS["summary"]``).

    ``grid`` maps a dotted scenario path to its values, as a ``[sweep]``
    table does (``{"link.forward.loss.bernoulli": [0.001, 0.01],
    "flow.algorithm": ["bbr", "cubic"]}``); it is added to the scenario's
    own ``[sweep]``, if any. ``seeds`` sweeps the scenario's ``seed``.

    ``client`` is any ``dask.distributed.Client`` (a scheduler on several
    machines, a dask-jobqueue Slurm/PBS cluster, ...); without one a
    ``LocalCluster`` of ``n_workers`` single-threaded worker processes
    (default: one per core) is started for the sweep and closed after.

    ``df.attrs["parameters"]`` lists the parameter columns: write the
    result with ``bbrlab.to_parquet(df, path)`` (partitioned by them).
    """
    from distributed import Client, LocalCluster, as_completed

    src = _source(scenario)
    grid = {k: _json_values(v) for k, v in dict(grid or {}).items()}
    if seeds is not None:
        if "seed" in grid:
            raise ValueError("give the seeds either in grid['seed'] or as seeds=, not both")
        grid["seed"] = _json_values(seeds)
    name, _, points = _native.sweep_points(**src, grid=json.dumps(grid))
    base_dir = os.path.abspath(os.path.dirname(src["path"]) if "path" in src else src["base_dir"])
    file = src.get("path", src.get("file", "<string>"))

    own_cluster = None
    if client is None:
        own_cluster = LocalCluster(
            n_workers=n_workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
        )
        client = Client(own_cluster)
    try:
        token = uuid.uuid4().hex[:8]
        futures = {}
        for i, (_, text, _, _) in enumerate(points):
            label = f"{file} run-{i:04d}"
            f = client.submit(
                _simulate_summary,
                text,
                base_dir,
                label,
                key=f"bbrlab-{name}-run-{i:04d}-{token}",
                retries=retries,
                pure=False,
            )
            futures[f] = i
        results: Dict[int, Any] = {}
        show = _interactive() if progress is None else progress
        bar = None
        if show:
            try:
                from tqdm.auto import tqdm

                bar = tqdm(total=len(points), desc=f"sweep {name}", unit="run")
            except ImportError:
                bar = None
        for f in as_completed(list(futures)):
            i = futures[f]
            if f.status == "finished":
                results[i] = f.result()
            else:
                exc = f.exception()
                results[i] = _failure(exc)
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
    finally:
        if own_cluster is not None:
            client.close()
            own_cluster.close()
    return _assemble(points, results)


def _simulate_summary(text: str, base_dir: str, label: str) -> Dict[str, Any]:
    """The Dask task (module-level, so workers import it by name: a remote
    worker needs the ``bbrlab`` package installed, nothing else)."""
    run = _simulate_text(text, base_dir, label)
    return {"summary": run.summary, "seed": run.seed}


def _failure(exc: Optional[BaseException]) -> Dict[str, Any]:
    if exc is None:
        return {"error": "the task ended without a result or an exception"}
    return {"error": f"{type(exc).__name__}: {exc}"}


def _assemble(points: List[Any], results: Dict[int, Any]) -> pd.DataFrame:
    keys: List[str] = []
    for params, _, _, _ in points:
        for k, _ in params:
            if k not in keys and k != "seed":
                keys.append(k)
    frames = []
    failed = []
    for i, (params, _, seed, _) in enumerate(points):
        p = {k: _typed(v) for k, v in params}
        head = {k: p.get(k) for k in keys}
        head["seed"] = seed
        head["run"] = f"run-{i:04d}"
        r = results.get(i, {"error": "no result came back"})
        if "summary" in r:
            s = r["summary"].copy()
            head.update(status="ok", error=None)
            for j, (k, v) in enumerate(head.items()):
                s.insert(j, k, [v] * len(s))
            frames.append(s)
        else:
            head.update(status="failed", error=r["error"])
            frames.append(pd.DataFrame([head]))
            failed.append((head["run"], p, r["error"]))
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    for k in keys + ["seed"]:
        # Keep parameters typed after failed rows' NaNs joined them.
        df[k] = df[k].infer_objects()
    df.attrs["parameters"] = keys + ["seed"]
    df.attrs["failed"] = failed
    if failed:
        warnings.warn(
            f"{len(failed)} of {len(points)} runs failed; their rows have status == 'failed' "
            f"and the reason in 'error' (first: {failed[0][0]}: {failed[0][2]})",
            RuntimeWarning,
            stacklevel=3,
        )
    return df


def to_parquet(df: pd.DataFrame, path: str, partition_cols: Optional[List[str]] = None) -> None:
    """Writes a sweep's result as a Parquet dataset partitioned by its swept
    parameters (``df.attrs["parameters"]`` without ``seed`` unless given),
    one directory level per parameter."""
    if partition_cols is None:
        partition_cols = [c for c in df.attrs.get("parameters", []) if c != "seed"]
    df.to_parquet(path, partition_cols=partition_cols or None, index=False)

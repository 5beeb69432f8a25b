"""Sweeps on Dask: every combination of a grid, in batches of runs, one
Dask task per batch.

The grid is expanded by the same parser as a scenario's ``[sweep]`` table
(so ``"flow.algorithm"`` sets every flow's algorithm, as in a file, and a
bad value is refused with the CLI's ``file:line:col`` message before any
task starts). Each task runs a batch of points one after another with
bbrlab's native simulate on a worker and returns their summaries as Arrow
record batches; the results come back as one DataFrame.

Why batches: a Dask task costs the scheduler, the worker and the client
some milliseconds each (about 13 ms per task on the 2-core machine of
docs/src/measurements.md), which one task per 0.2 s run spends 200 times over, on the same
cores as the runs. A batch pays it once for many runs. The batch size is
chosen from the number of runs and the cluster's worker threads
(:func:`_batches`), or given as ``batch_size=``.

Failures stay per run: a run that raises is retried in its batch
(``retries`` more times) and, if it still fails, has its own row with
``status == "failed"`` and the reason in ``error`` while the rest of its
batch goes on; a batch whose worker dies is rescheduled by the Dask
scheduler on another worker (up to ``distributed.scheduler.allowed-failures``
deaths, after which its runs are failed rows naming the error). No run is
dropped, and a warning names how many failed.
"""

from __future__ import annotations

import json
import math
import os
import uuid
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pandas as pd
import pyarrow as pa

from . import _native
from ._run import UNITS, ScenarioLike, _flag, _interactive, _plain, _seed, _source, _typed, _whole

#: Columns every sweep result has after the swept parameters and ``seed``.
STATUS_COLUMNS = ["run", "status", "error"]

#: How long ``sweep(client="tcp://...")`` tries to reach the scheduler
#: (Dask retries a refused connection until then): long enough for a
#: scheduler that is still starting, short enough to report a wrong one.
CONNECT_TIMEOUT = "30s"

#: Tasks per worker thread when the batch size is chosen automatically:
#: enough that equal batches share out evenly and a slow batch at the end
#: leaves little idle time, few enough that Dask's per-task cost is paid
#: rarely.
TASKS_PER_THREAD = 4

#: The most runs in an automatic batch: a batch of very short runs (10 ms)
#: still pays Dask's per-task cost only about once per second of work, the
#: progress bar still moves, and a killed worker loses at most this many
#: runs' work (they are run again elsewhere).
MAX_BATCH = 100


def _batches(n: int, threads: int, batch_size: Optional[int] = None) -> List[range]:
    """Splits runs ``0..n`` into consecutive batches: of ``batch_size`` runs
    if given, else into ``TASKS_PER_THREAD`` batches per worker thread (more
    if a batch would exceed ``MAX_BATCH`` runs), sizes differing by at most
    one run so that equal batches finish together."""
    if n == 0:
        return []
    if batch_size is not None:
        batch_size = _whole(batch_size, "batch_size", 1)
        return [range(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]
    k = min(n, max(1, threads) * TASKS_PER_THREAD)
    k = max(k, math.ceil(n / MAX_BATCH))
    base, extra = divmod(n, k)
    out, start = [], 0
    for j in range(k):
        size = base + (1 if j < extra else 0)
        out.append(range(start, start + size))
        start += size
    return out


#: Dask settings for the LocalCluster a sweep starts by itself: its
#: processes' background work, which a sweep on all cores pays out of the
#: runs' CPU time. With Dask's defaults the scheduler, nannies and two idle
#: workers took 12-14 % of a core on the 2-core machine of docs/src/measurements.md (event-loop
#: ticks every 20 ms, a stack-sampling profiler every 10 ms, a GIL monitor,
#: memory checks every 100 ms), and a 200-run sweep on 2 workers ran
#: 7 % slower than with these (13.9/14.0 s against 12.9/13.2 s, 1.6-1.8 %
#: of a core idle). Nothing here changes a result: the profile feeds only
#: the dashboard, which this cluster does not start, the tick only warns of
#: a blocked event loop, and the memory limit is still enforced, within 1 s.
QUIET_LOCAL_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "1s",
}


def _local_cluster(n_workers: Optional[int] = None):
    """The LocalCluster a sweep without a client starts (and the benchmark
    measures): one single-threaded worker process per core, so the runs
    (which release the GIL) never share a process's interpreter, no
    dashboard (nobody is looking at it, and its updates would take the
    scheduler's time), and the background work of ``QUIET_LOCAL_CLUSTER``
    turned down. The scheduler runs in this process's event loop; with
    batched tasks it has little to do."""
    import dask
    from distributed import LocalCluster

    # The workers take the configuration in force when they are started
    # (their nannies pass it on); the caller's own is restored after.
    with dask.config.set(QUIET_LOCAL_CLUSTER):
        return LocalCluster(
            n_workers=n_workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            # No dashboard; the scheduler's small HTTP server (health
            # checks) on a free port, not 8787, which another cluster may
            # hold.
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
        )


def _values(values: Any, where: str) -> List[Any]:
    """A grid entry's (or the seeds') values as a plain list: refused if
    it is a single value rather than a collection of them (a string would
    otherwise be swept character by character) or a set (no order), and
    each value checked as a scenario dict's values are (no None, NaN,
    ...)."""
    ndim = getattr(values, "ndim", 1)
    if ndim == 0:
        # A 0-d numpy array is one value (np.array(0.01)); iterating it
        # failed with numpy's own "iteration over a 0-d array".
        values = values.item()
    elif ndim != 1:
        raise TypeError(
            f"{where}: a one-dimensional list of values, not a {ndim}-dimensional "
            f"{type(values).__name__} (each row would be one value)"
        )
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(
            f"{where}: a list of values, not {type(values).__name__} {values!r} "
            f"(for one value: [{values!r}])"
        )
    if isinstance(values, (set, frozenset)):
        # A set's order is its hashes' (strings' vary from one Python
        # process to the next): the runs, and so run-NNNN, would be
        # numbered differently each time the sweep is made.
        raise TypeError(
            f"{where}: a set has no order, so the runs would be numbered differently "
            f"from one session to the next; give a list, e.g. sorted({values!r})"
        )
    return [_plain(v, where) for v in values]


def sweep(
    scenario: ScenarioLike,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Iterable[int]] = None,
    client: Any = None,
    *,
    retries: int = 2,
    n_workers: Optional[int] = None,
    progress: Optional[bool] = None,
    batch_size: Optional[int] = None,
) -> pd.DataFrame:
    """Runs every combination of ``grid`` × ``seeds`` on Dask and returns
    one DataFrame: one row per run and flow, a column per swept parameter,
    ``seed``, ``run`` (``run-NNNN``, the CLI's numbering), ``status``
    (``ok`` or ``failed``), ``error`` (why, for a failed run), then the
    summary columns of ``Run.summary`` (units in ``bbrlab.UNITS["summary"]``).

    ``grid`` maps a dotted scenario path to its values, as a ``[sweep]``
    table does (``{"link.forward.loss.bernoulli": [0.001, 0.01],
    "flow.algorithm": ["bbr", "cubic"]}``); it is added to the scenario's
    own ``[sweep]``, if any. ``seeds`` sweeps the scenario's ``seed``.

    ``client`` is any ``dask.distributed.Client`` (a scheduler on several
    machines, a dask-jobqueue Slurm/PBS cluster, ...) or a scheduler's
    address (``"tcp://host:8786"``, connected to for the sweep and
    disconnected after); without one a
    ``LocalCluster`` of ``n_workers`` single-threaded worker processes
    (default: one per core) is started for the sweep and closed after
    (``n_workers`` with a ``client`` is refused: that cluster has its own).

    Runs go to Dask in batches, one task per batch: by default about
    ``TASKS_PER_THREAD`` batches per worker thread the cluster has when the
    sweep starts (at most ``MAX_BATCH`` runs each); ``batch_size`` sets the
    runs per batch instead (1: a task per run), e.g. for a cluster that
    is still scaling up. A run that raises is tried ``retries`` more times
    in its batch; a batch whose worker dies is rescheduled by Dask.

    ``df.attrs["parameters"]`` lists the parameter columns: write the
    result with ``bbrlab.to_parquet(df, path)`` (partitioned by them).
    """
    from distributed import Client, as_completed

    retries = _whole(retries, "retries", 0, optional=False)
    n_workers = _whole(n_workers, "n_workers", 1)
    if n_workers is not None and client is not None:
        # It sizes only the LocalCluster started without a client: with
        # one it was ignored, and the sweep ran on however many workers
        # the client's cluster had.
        raise ValueError(
            "n_workers: sizes the LocalCluster a sweep starts without a client; "
            "with client= the client's cluster has its own workers (leave n_workers out)"
        )
    progress = _flag(progress, "progress", optional=True)
    src = _source(scenario)
    if grid is not None and not isinstance(grid, Mapping):
        raise TypeError(f"grid: a dict from dotted path to values, not {type(grid).__name__}")
    for k in grid or {}:
        if not isinstance(k, str):
            raise TypeError(f"grid: key {k!r} ({type(k).__name__}): a dotted path such as 'flow.algorithm'")
    grid = {k: _values(v, f"grid[{k!r}]") for k, v in dict(grid or {}).items()}
    if seeds is not None:
        if "seed" in grid:
            raise ValueError("give the seeds either in grid['seed'] or as seeds=, not both")
        grid["seed"] = [_seed(x, "seeds") for x in _values(seeds, "seeds")]
        if not grid["seed"]:
            # Refused here: the native side would name grid["seed"], which
            # the caller did not write.
            raise ValueError("seeds: no seeds; give at least one, or leave seeds out for the scenario's own")
    name, _, points = _native.sweep_points(**src, grid=json.dumps(grid))
    base_dir = os.path.abspath(os.path.dirname(src["path"]) if "path" in src else src["base_dir"])
    file = src.get("path", src.get("file", "<string>"))
    # Refuse a bad batch_size before a cluster is started for nothing.
    _batches(len(points), 1, batch_size)

    own_cluster, own_client = None, False
    if client is None:
        own_cluster = _local_cluster(n_workers)
        client, own_client = Client(own_cluster), True
    else:
        client, own_client = _connect(client)
    futures: Dict[Any, range] = {}
    try:
        threads = sum(client.nthreads().values()) or os.cpu_count() or 1
        token = uuid.uuid4().hex[:8]
        for b in _batches(len(points), threads, batch_size):
            runs = [(i, points[i][1], f"{file} run-{i:04d}") for i in b]
            f = client.submit(
                _run_batch,
                runs,
                base_dir,
                retries,
                key=f"bbrlab-{name}-runs-{b.start:04d}-{b.stop - 1:04d}-{token}",
                retries=retries,
                pure=False,
            )
            futures[f] = b
        results: Dict[int, Any] = {}
        show = _interactive() if progress is None else progress
        bar = None
        if show:
            try:
                from tqdm.auto import tqdm

                bar = tqdm(total=len(points), desc=f"sweep {name}", unit="run")
            except ImportError:
                bar = None
        try:
            for f in as_completed(list(futures)):
                b = futures[f]
                if f.status == "finished":
                    results.update(f.result())
                else:
                    # The batch itself failed (its worker died too often):
                    # each of its runs is a failed row with the reason.
                    failure = _failure(f.exception())
                    results.update((i, failure) for i in b)
                if bar is not None:
                    bar.update(len(b))
        finally:
            if bar is not None:
                bar.close()
    except BaseException:
        # Interrupted (Ctrl-C in Jupyter, where the traceback keeps these
        # futures alive): the batches not yet run are cancelled, or they
        # would go on taking a shared cluster's workers for nobody.
        if futures:
            client.cancel(list(futures))
        raise
    finally:
        if own_client:
            client.close()
        if own_cluster is not None:
            own_cluster.close()
    return _assemble(points, results)


def _connect(client: Any) -> Tuple[Any, bool]:
    """A ``client=`` argument as a Dask client, and whether it was made
    here (a scheduler's address, connected to; the caller closes it) or
    given (a ``dask.distributed.Client``, left open)."""
    from distributed import Client

    if isinstance(client, str):
        try:
            return Client(client, timeout=CONNECT_TIMEOUT), True
        except (OSError, TimeoutError, ValueError) as e:
            raise ConnectionError(
                f"client: cannot reach a Dask scheduler at {client!r} within {CONNECT_TIMEOUT} ({e})"
            ) from None
    if not hasattr(client, "submit"):
        raise TypeError(
            f"client: a dask.distributed.Client or a scheduler address, not {type(client).__name__}"
        )
    return client, False


def _run_batch(runs: List[Tuple[int, str, str]], base_dir: str, retries: int) -> Dict[int, Any]:
    """The Dask task: runs ``(index, scenario text, label)`` one after
    another on a worker, each tried up to ``1 + retries`` times, and
    returns ``{index: {"summary": RecordBatch} or {"error": why}}``: a run
    that keeps failing is reported, not raised, so the rest of its batch
    still runs. (Module-level, so workers import it by name: a remote
    worker needs the ``bbrlab`` package installed, nothing else.)"""
    out: Dict[int, Any] = {}
    for i, text, label in runs:
        for attempt in range(retries + 1):
            try:
                out[i] = {"summary": _simulate_summary(text, base_dir, label)}
                break
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - reported in the run's row
                # BaseException, not Exception: a Rust panic arrives as
                # pyo3's PanicException, a BaseException, and escaping
                # here it failed the whole batch, its finished runs too.
                if attempt == retries:
                    out[i] = _failure(exc)
    return out


def _simulate_summary(text: str, base_dir: str, label: str) -> pa.RecordBatch:
    """One run of a sweep: its summary (``Run.summary``'s columns) as an
    Arrow record batch, with relative paths (traces) resolved against the
    scenario file's directory and errors naming the point. No time series
    and no pandas: the client makes one DataFrame of all runs."""
    r = _native.simulate(text=text, file=label, base_dir=base_dir, timeseries=False)
    return pa.record_batch(r["summary"])


def _failure(exc: Optional[BaseException]) -> Dict[str, Any]:
    if exc is None:
        return {"error": "the task ended without a result or an exception"}
    return {"error": f"{type(exc).__name__}: {exc}"}


def _assemble(points: List[Any], results: Dict[int, Any]) -> pd.DataFrame:
    """One DataFrame from the runs' summaries, in run order: the parameter
    and status columns, then the summary's columns (nulls for a failed
    run's row), converted from Arrow to pandas once for the whole sweep."""
    keys: List[str] = []
    for params, _, _, _ in points:
        for k, _ in params:
            if k not in keys and k != "seed":
                keys.append(k)
    head: Dict[str, List[Any]] = {k: [] for k in keys + ["seed"] + STATUS_COLUMNS}
    batches: List[Any] = []  # a RecordBatch per ok run, None for a failed one
    failed = []
    for i, (params, _, seed, _) in enumerate(points):
        p = {k: _typed(v) for k, v in params}
        run = f"run-{i:04d}"
        r = results.get(i, {"error": "no result came back"})
        if "summary" in r:
            rows, status, error = r["summary"].num_rows, "ok", None
            batches.append(r["summary"])
        else:
            rows, status, error = 1, "failed", r["error"]
            batches.append(None)
            failed.append((run, p, error))
        for k in keys:
            head[k] += [p.get(k)] * rows
        head["seed"] += [seed] * rows
        head["run"] += [run] * rows
        head["status"] += [status] * rows
        head["error"] += [error] * rows
    df = pd.DataFrame(head)
    schema = next((b.schema for b in batches if b is not None), None)
    if schema is not None:
        null_row = pa.RecordBatch.from_pylist([{}], schema=schema)
        table = pa.Table.from_batches([null_row if b is None else b for b in batches], schema=schema)
        summary = table.to_pandas()
        df = pd.concat([df, summary], axis=1)
    elif points:
        # Every run failed: the summary's columns, all missing, so that
        # the frame has the same columns as any other sweep's (they were
        # absent, and df["goodput_bps"] raised KeyError).
        for c in UNITS["summary"]:
            df[c] = pd.Series([None] * len(df), dtype=object if c in ("name", "algorithm") else float)
    for k in keys + ["seed"]:
        # Keep parameters typed (None for a parameter a run did not set).
        df[k] = df[k].infer_objects()
    df.attrs["units"] = {c: UNITS["summary"][c] for c in df.columns if c in UNITS["summary"]}
    df.attrs["parameters"] = keys + ["seed"]
    df.attrs["failed"] = failed
    if failed:
        # The first failure's parameters too: its run number alone does
        # not say which point of the grid to look at.
        run, p, error = failed[0]
        where = ", ".join(f"{k}={v}" for k, v in p.items())
        warnings.warn(
            f"{len(failed)} of {len(points)} runs failed; their rows have status == 'failed' "
            f"and the reason in 'error' (first: {run}{f' ({where})' if where else ''}: {error})",
            RuntimeWarning,
            stacklevel=3,
        )
    return df


def to_parquet(df: pd.DataFrame, path: str, partition_cols: Optional[List[str]] = None) -> None:
    """Writes a sweep's result as a Parquet dataset partitioned by its swept
    parameters (``df.attrs["parameters"]`` without ``seed`` unless given),
    one directory level per parameter."""
    # Checked here: a list or a Run's frame dict failed deep inside as an
    # AttributeError on ``.attrs``.
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"to_parquet: df: the DataFrame sweep() returns, not {type(df).__name__}")
    if partition_cols is not None and (
        isinstance(partition_cols, str) or not all(isinstance(c, str) for c in partition_cols)
    ):
        raise TypeError(f"to_parquet: partition_cols: a list of column names, not {partition_cols!r}")
    if partition_cols is None:
        partition_cols = [c for c in df.attrs.get("parameters", []) if c != "seed"]
    if not partition_cols:
        df.to_parquet(path, index=False)
        return
    # The hive layout written by hand, one ``pq.write_table`` per partition,
    # rather than ``df.to_parquet(partition_cols=...)``: that goes through
    # Arrow's dataset writer, whose background threads can outlive a short
    # script and abort it at exit ("terminate called without an active
    # exception", apache/arrow#36980; about 1 exit in 10 here, pyarrow 21).
    import pyarrow.parquet as pq
    from urllib.parse import quote

    missing = [c for c in partition_cols if c not in df.columns]
    if missing:
        raise ValueError(f"to_parquet: partition columns {missing} are not in the DataFrame")
    rest = df.drop(columns=partition_cols)
    # One schema for every partition, so a column that is all null in one
    # partition keeps the type it has in the others.
    table = pa.Table.from_pandas(rest, preserve_index=False)
    name = f"{uuid.uuid4().hex}-0.parquet"  # a new file per call, as pandas does
    for key, rows in df.reset_index(drop=True).groupby(partition_cols, sort=True, dropna=False).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        parts = [
            f"{c}={'__HIVE_DEFAULT_PARTITION__' if pd.isna(v) else quote(str(v), safe='')}"
            for c, v in zip(partition_cols, key)
        ]
        sub = os.path.join(os.fspath(path), *parts)
        os.makedirs(sub, exist_ok=True)
        pq.write_table(table.take(pa.array(rows)), os.path.join(sub, name))

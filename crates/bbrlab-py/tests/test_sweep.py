"""bbrlab.sweep on Dask: the same results as the runs made one by one, a
killed worker's runs completed elsewhere, failed runs reported."""

from __future__ import annotations

import copy
import os
import signal
import threading
import time

import pandas as pd
import pytest
from distributed import Client, LocalCluster

import bbrlab
from bbrlab import _sweep
from conftest import SMALL

LOSSES = [0.001, 0.02]
ALGORITHMS = ["bbr", "cubic"]
SEEDS = [1, 2]
GRID = {"link.forward.loss.bernoulli": LOSSES, "flow.algorithm": ALGORITHMS}


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as c, Client(c) as client:
        yield client


def one_by_one(loss, algorithm, seed) -> pd.DataFrame:
    """The same run made directly, the parameters set in the dict (not by
    the sweep's expansion)."""
    d = copy.deepcopy(SMALL)
    d["link"]["forward"]["loss"] = {"bernoulli": loss}
    d["flow"][0]["algorithm"] = algorithm
    return bbrlab.simulate(d, seed=seed, timeseries=False).summary


def test_sweep_on_two_workers_matches_the_runs_one_by_one(cluster):
    df = bbrlab.sweep(SMALL, GRID, seeds=SEEDS, client=cluster)
    assert df.attrs["parameters"] == ["flow.algorithm", "link.forward.loss.bernoulli", "seed"]
    assert list(df.columns[:6]) == [
        "flow.algorithm",
        "link.forward.loss.bernoulli",
        "seed",
        "run",
        "status",
        "error",
    ]
    assert len(df) == len(LOSSES) * len(ALGORITHMS) * len(SEEDS)
    assert (df["status"] == "ok").all()
    assert df["error"].isna().all()
    # Typed parameter columns: floats, strings, integers.
    assert df["link.forward.loss.bernoulli"].dtype == float
    assert df["seed"].dtype == "int64"
    # The CLI's order: keys sorted, the last (seed) varying fastest.
    assert list(df["run"]) == [f"run-{i:04d}" for i in range(len(df))]
    assert list(df["seed"][:2]) == [1, 2]
    summary_cols = list(bbrlab.UNITS["summary"])
    for _, row in df.iterrows():
        alone = one_by_one(row["link.forward.loss.bernoulli"], row["flow.algorithm"], row["seed"])
        pd.testing.assert_series_equal(
            row[summary_cols].astype(object),
            alone.iloc[0][summary_cols].astype(object),
            check_names=False,
        )
    # Different seeds are different runs (1-2 % random loss).
    by_seed = df.groupby("seed")["delivered_bytes"].apply(list)
    assert by_seed[1] != by_seed[2]


def test_a_worker_killed_mid_sweep_does_not_lose_runs(cluster):
    """SIGKILL a worker while it runs a sweep task: the scheduler gives its
    tasks to the other worker (the nanny restarts it) and every run
    completes with the same results as an undisturbed sweep."""
    d = copy.deepcopy(SMALL)
    d["duration"] = "60s"  # long enough to be killed mid-run
    grid = {"link.forward.loss.bernoulli": [0.001, 0.01, 0.02]}
    seeds = [1, 2]
    cluster.wait_for_workers(2)
    pids = cluster.run(os.getpid)
    victim, pid = sorted(pids.items())[0]
    killed = threading.Event()

    def kill_when_busy():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            tasks = cluster.processing().get(victim, ())
            if any("bbrlab-" in str(k) for k in tasks):
                time.sleep(0.05)
                os.kill(pid, signal.SIGKILL)
                killed.set()
                return
            time.sleep(0.01)

    t = threading.Thread(target=kill_when_busy)
    t.start()
    df = bbrlab.sweep(d, grid, seeds=seeds, client=cluster)
    t.join()
    assert killed.is_set(), "the worker was never seen running a sweep task"
    assert len(df) == 6
    assert (df["status"] == "ok").all(), df[["run", "status", "error"]]
    cluster.wait_for_workers(2, timeout=60)
    undisturbed = bbrlab.sweep(d, grid, seeds=seeds, client=cluster)
    pd.testing.assert_frame_equal(df, undisturbed)


_CALLS: list = []
_REAL = _sweep._simulate_summary


def _flaky(text, base_dir, label):
    """The sweep's task, failing for CUBIC's run (module-level, so Dask
    refers to it by name and it records into this module's _CALLS)."""
    _CALLS.append(label)
    if "cubic" in text:
        raise RuntimeError("disk full (injected)")
    return _REAL(text, base_dir, label)


def test_a_failing_run_is_retried_then_reported_not_dropped(monkeypatch):
    """A run that raises is retried by Dask; one that still fails keeps its
    row, with status 'failed' and the reason, and a warning is given."""
    _CALLS.clear()
    monkeypatch.setattr(_sweep, "_simulate_summary", _flaky)
    # Threads, not processes: the patched function runs in this process.
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    ) as c, Client(c) as client:
        with pytest.warns(RuntimeWarning, match="1 of 2 runs failed"):
            df = bbrlab.sweep(SMALL, {"flow.algorithm": ["bbr", "cubic"]}, client=client, retries=2)
    assert list(df["status"]) == ["ok", "failed"]
    failed = df[df["status"] == "failed"].iloc[0]
    assert failed["flow.algorithm"] == "cubic"
    assert "disk full (injected)" in failed["error"]
    assert pd.isna(failed["goodput_bps"])
    assert df.attrs["failed"][0][0] == "run-0001"
    # Tried once and retried twice.
    assert sum(c.endswith("run-0001") for c in _CALLS) == 3
    assert sum(c.endswith("run-0000") for c in _CALLS) == 1


def test_grid_errors_are_the_clis_before_any_task(small):
    with pytest.raises(bbrlab.ScenarioError, match=r"<dict>:\d+:\d+: .*bbrx"):
        bbrlab.sweep(small, {"flow.algorithm": ["bbr", "bbrx"]}, client=object())
    with pytest.raises(ValueError, match="seed"):
        bbrlab.sweep(small, {"seed": [1]}, seeds=[2], client=object())


def test_a_scenario_files_own_sweep_runs_too(cluster, small_file):
    text = small_file.read_text() + '\n[sweep]\n"flow.algorithm" = ["bbr", "cubic"]\n'
    small_file.write_text(text)
    df = bbrlab.sweep(small_file, seeds=[3], client=cluster)
    assert list(df["flow.algorithm"]) == ["bbr", "cubic"]
    assert list(df["seed"]) == [3, 3]
    assert list(df["algorithm"]) == ["bbr", "cubic"]


def test_results_write_as_parquet_partitioned_by_parameter(cluster, tmp_path):
    df = bbrlab.sweep(SMALL, GRID, seeds=[1], client=cluster)
    out = tmp_path / "sweep.parquet"
    bbrlab.to_parquet(df, out)
    dirs = sorted(p.name for p in out.iterdir())
    assert dirs == ["flow.algorithm=bbr", "flow.algorithm=cubic"]
    sub = sorted(p.name for p in (out / "flow.algorithm=bbr").iterdir())
    assert sub == ["link.forward.loss.bernoulli=0.001", "link.forward.loss.bernoulli=0.02"]
    back = pd.read_parquet(out)
    assert len(back) == len(df)
    assert sorted(back["goodput_bps"]) == sorted(df["goodput_bps"])


def test_python_m_bbrlab_sim_runs_a_files_sweep_on_a_scheduler(cluster, small_file, tmp_path):
    """The CLI's equivalent: `python -m bbrlab sim FILE --dask-scheduler
    ADDRESS` runs the file's [sweep] on that cluster and writes Parquet."""
    import subprocess
    import sys

    small_file.write_text(small_file.read_text() + '\n[sweep]\n"flow.algorithm" = ["bbr", "cubic"]\n')
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "bbrlab", "sim", str(small_file), "--seeds", "1,2", "--quiet",
         "--dask-scheduler", cluster.scheduler.address, "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "4 of 4 runs ok" in r.stdout
    back = pd.read_parquet(out / "summary.parquet")
    assert sorted(back["flow.algorithm"].astype(str)) == ["bbr", "bbr", "cubic", "cubic"]
    csv = pd.read_csv(out / "summary.csv")
    assert list(csv["seed"]) == [1, 2, 1, 2]

"""bbrlab.sweep on Dask: the same results as the runs made one by one, a
killed worker's runs completed elsewhere, failed runs reported."""

from __future__ import annotations

import copy
import os
import signal
import threading
import time

import numpy as np
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
    """SIGKILL a worker while it runs a sweep task (a batch of three runs):
    the scheduler gives the batch to the other worker (the nanny restarts
    the victim) and every run completes with the same results as an
    undisturbed sweep."""
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
    # Two batches of three runs: the victim's whole batch is lost with it.
    df = bbrlab.sweep(d, grid, seeds=seeds, client=cluster, batch_size=3)
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


@pytest.mark.parametrize("batch_size", [1, 2])
def test_a_failing_run_is_retried_then_reported_not_dropped(monkeypatch, batch_size):
    """A run that raises is retried; one that still fails keeps its row,
    with status 'failed' and the reason, and a warning is given. In a
    batch (batch_size=2: both runs in one task) the other run of the batch
    still succeeds, run once."""
    _CALLS.clear()
    monkeypatch.setattr(_sweep, "_simulate_summary", _flaky)
    # Threads, not processes: the patched function runs in this process.
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    ) as c, Client(c) as client:
        with pytest.warns(RuntimeWarning, match="1 of 2 runs failed"):
            df = bbrlab.sweep(
                SMALL,
                {"flow.algorithm": ["bbr", "cubic"]},
                client=client,
                retries=2,
                batch_size=batch_size,
            )
    assert list(df["status"]) == ["ok", "failed"]
    failed = df[df["status"] == "failed"].iloc[0]
    assert failed["flow.algorithm"] == "cubic"
    assert "disk full (injected)" in failed["error"]
    assert pd.isna(failed["goodput_bps"])
    assert df.attrs["failed"][0][0] == "run-0001"
    ok = df[df["status"] == "ok"].iloc[0]
    assert ok["algorithm"] == "bbr" and ok["goodput_bps"] > 1e6
    # Tried once and retried twice.
    assert sum(c.endswith("run-0001") for c in _CALLS) == 3
    assert sum(c.endswith("run-0000") for c in _CALLS) == 1


class PanicException(BaseException):
    """What a Rust panic in the native module arrives as (pyo3's
    PanicException derives from BaseException, not Exception)."""


def _panicky(text, base_dir, label):
    _CALLS.append(label)
    if "cubic" in text:
        raise PanicException("index out of bounds (injected)")
    return _REAL(text, base_dir, label)


def test_a_panicking_run_fails_alone_and_the_warning_names_its_parameters(monkeypatch):
    """A run that panics (a BaseException) escaped the batch's per-run
    handling: the whole batch failed, so the other run in it (BBR's,
    which had finished) lost its result and was reported failed too, and
    the warning named only run numbers. Now the panicking run alone is a
    failed row, and the warning says its swept parameters."""
    _CALLS.clear()
    monkeypatch.setattr(_sweep, "_simulate_summary", _panicky)
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as c, Client(c) as client:
        with pytest.warns(RuntimeWarning, match=r"run-0001 \(flow\.algorithm=cubic\): PanicException"):
            df = bbrlab.sweep(
                SMALL, {"flow.algorithm": ["bbr", "cubic"]}, client=client, retries=0, batch_size=2
            )
    assert list(df["status"]) == ["ok", "failed"]
    assert "index out of bounds (injected)" in df["error"].iloc[1]
    assert df["goodput_bps"].iloc[0] > 1e6
    assert sum(c.endswith("run-0000") for c in _CALLS) == 1


def test_batches_cover_every_run_once_in_order():
    """Automatic batches: TASKS_PER_THREAD per worker thread, sizes within
    one run of each other, at most MAX_BATCH runs; or batch_size runs."""
    for n, threads in [(1, 2), (6, 2), (200, 2), (201, 2), (200, 64), (5000, 2), (7, 1)]:
        b = _sweep._batches(n, threads)
        assert [i for r in b for i in r] == list(range(n))
        sizes = [len(r) for r in b]
        assert max(sizes) - min(sizes) <= 1
        assert max(sizes) <= _sweep.MAX_BATCH
        assert len(b) == max(min(n, threads * _sweep.TASKS_PER_THREAD), -(-n // _sweep.MAX_BATCH))
    assert [len(r) for r in _sweep._batches(200, 2)] == [25] * 8
    assert [len(r) for r in _sweep._batches(5000, 2)] == [100] * 50
    assert [len(r) for r in _sweep._batches(7, 4, batch_size=3)] == [3, 3, 1]
    assert _sweep._batches(0, 2) == []
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="batch_size"):
            _sweep._batches(5, 2, batch_size=bad)


def test_batch_size_changes_nothing_in_the_results(cluster):
    """A task per run, two runs per task and the automatic batches give the
    same DataFrame."""
    grid = {"flow.algorithm": ALGORITHMS}
    one = bbrlab.sweep(SMALL, grid, seeds=[1, 2, 3], client=cluster, batch_size=1)
    two = bbrlab.sweep(SMALL, grid, seeds=[1, 2, 3], client=cluster, batch_size=2)
    auto = bbrlab.sweep(SMALL, grid, seeds=[1, 2, 3], client=cluster)
    assert len(one) == 6 and (one["status"] == "ok").all()
    pd.testing.assert_frame_equal(one, two)
    pd.testing.assert_frame_equal(one, auto)
    assert one.attrs["units"]["goodput_bps"] == "bit/s"
    with pytest.raises(ValueError, match="batch_size"):
        bbrlab.sweep(SMALL, grid, client=cluster, batch_size=0)


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


def test_python_m_bbrlab_sim_refuses_a_bad_batch_size(small_file, tmp_path):
    """A bad --batch-size is a clear error before any cluster starts."""
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "bbrlab", "sim", str(small_file), "--batch-size", "0", "--quiet",
         "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert "--batch-size: '0': a whole number >= 1" in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag, value", [("--workers", "0"), ("--retries", "-1"), ("--workers", "2.5")])
def test_python_m_bbrlab_sim_names_the_flag_of_a_bad_count(small_file, tmp_path, flag, value):
    """--workers 0 was refused as "n_workers: a whole number >= 1", a
    keyword the command line does not have (and --batch-size 0 as
    "batch_size: ..."): a usage error now names the flag."""
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "bbrlab", "sim", str(small_file), flag, value, "--quiet",
         "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert f"{flag}: '{value}': a whole number" in r.stderr
    assert not (tmp_path / "out").exists()


def test_the_own_local_cluster_turns_down_background_work_without_leaking_it():
    """The LocalCluster a sweep starts passes QUIET_LOCAL_CLUSTER to its
    workers (their profiler and 20 ms ticks cost a 2-core machine ~7 % of a
    sweep), and the caller's own Dask configuration is left as it was."""
    import dask

    before = {k: dask.config.get(k) for k in _sweep.QUIET_LOCAL_CLUSTER}
    assert before["distributed.worker.profile.enabled"] is True, "Dask's default changed"
    with _sweep._local_cluster(1) as c, Client(c) as client:
        (seen,) = client.run(
            lambda: {k: dask.config.get(k) for k in _sweep.QUIET_LOCAL_CLUSTER}
        ).values()
    assert seen == _sweep.QUIET_LOCAL_CLUSTER
    assert {k: dask.config.get(k) for k in _sweep.QUIET_LOCAL_CLUSTER} == before


@pytest.mark.parametrize(
    "grid, seeds, exc, words",
    [
        ({"flow.algorithm": "bbr"}, None, TypeError, ["grid['flow.algorithm']: a list of values", "['bbr']"]),
        ({"flow.algorithm": [None]}, None, ValueError, ["is None"]),
        ({"link.forward.loss.bernoulli": [float("nan")]}, None, ValueError, ["nan", "finite"]),
        ([("flow.algorithm", ["bbr"])], None, TypeError, ["grid: a dict"]),
        ({1: [2]}, None, TypeError, ["grid: key 1"]),
        (None, "123", TypeError, ["seeds: a list of values"]),
        (None, 3, TypeError, ["seeds: a list of values", "[3]"]),
        (None, [-1], ValueError, ["seeds: a whole number from 0"]),
        # A set's order (strings' hashes) changes from one process to the
        # next, and with it which run is run-0000: it was taken.
        ({"flow.algorithm": {"bbr", "cubic"}}, None, TypeError, ["grid['flow.algorithm']: a set has no order"]),
        (None, {1, 2}, TypeError, ["seeds: a set has no order", "sorted("]),
        # Was refused as grid["seed"]: no values, a name the caller never wrote.
        (None, [], ValueError, ["seeds: no seeds"]),
        # numpy: a 0-d array is one value (numpy's "iteration over a 0-d
        # array" named nothing); a 2-d one is not a list of values (each
        # row was swept as one value and refused by the scenario).
        ({"link.forward.loss.bernoulli": np.array(0.01)}, None, TypeError,
         ["grid['link.forward.loss.bernoulli']: a list of values", "[0.01]"]),
        ({"link.forward.loss.bernoulli": np.array([[0.01, 0.02]])}, None, TypeError,
         ["grid['link.forward.loss.bernoulli']: a one-dimensional list of values"]),
    ],
)
def test_a_grid_or_seeds_that_would_be_misread_are_refused_before_any_task(small, grid, seeds, exc, words):
    """A single value where a list belongs (a string used to be swept
    character by character: 'bbr' ran b, b and r), None or NaN values and
    bad seeds are refused before a cluster is started (no client here: a
    LocalCluster would be started for nothing)."""
    with pytest.raises(exc) as e:
        bbrlab.sweep(small, grid, seeds=seeds, progress=False)
    for w in words:
        assert w in str(e.value), str(e.value)


@pytest.mark.parametrize("seeds", ["1,a", "", "1,-2"])
def test_python_m_bbrlab_sim_refuses_bad_seeds_with_usage_not_a_traceback(small_file, tmp_path, seeds):
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "bbrlab", "sim", str(small_file), "--seeds", seeds, "--quiet",
         "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert "argument --seeds" in r.stderr and "whole numbers from 0" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_a_scheduler_address_is_taken_as_the_client(cluster, monkeypatch):
    """``client="tcp://..."`` connects to that scheduler for the sweep (the
    same results as with a Client object), and an address nobody answers
    at is a ConnectionError naming it, not a hang."""
    address = cluster.scheduler.address
    df = bbrlab.sweep(SMALL, {"flow.algorithm": ["bbr"]}, seeds=[1], client=address, progress=False)
    same = bbrlab.sweep(SMALL, {"flow.algorithm": ["bbr"]}, seeds=[1], client=cluster, progress=False)
    pd.testing.assert_frame_equal(df, same)
    import socket

    with socket.socket() as s:  # a free port on loopback, closed again
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(_sweep, "CONNECT_TIMEOUT", "2s")
    with pytest.raises(ConnectionError, match=f"tcp://127.0.0.1:{port}"):
        bbrlab.sweep(SMALL, seeds=[1], client=f"tcp://127.0.0.1:{port}", progress=False)
    with pytest.raises(TypeError, match="client: a dask.distributed.Client or a scheduler address"):
        bbrlab.sweep(SMALL, seeds=[1], client=42, progress=False)


def test_to_parquet_then_exit_does_not_abort(tmp_path):
    """A script that writes a partitioned result and exits at once must exit
    cleanly: Arrow's dataset writer aborted about 1 exit in 10 here
    (apache/arrow#36980), which failed CI once. 20 exits would have shown it
    with a probability of about 0.88."""
    import subprocess
    import sys

    script = (
        "import pandas as pd, sys, bbrlab\n"
        "df = pd.DataFrame({'flow.algorithm': ['bbr', 'cubic'] * 50, 'x': [0.01, 0.02] * 50,"
        " 'goodput_bps': range(100)})\n"
        "df.attrs['parameters'] = ['flow.algorithm', 'x', 'seed']\n"
        "bbrlab.to_parquet(df, sys.argv[1])\n"
    )
    for i in range(20):
        out = tmp_path / f"o{i}.parquet"
        r = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"exit {r.returncode} on run {i}: {r.stderr[-2000:]}"
        back = pd.read_parquet(out)
        assert len(back) == 100
        assert sorted(back["goodput_bps"]) == list(range(100))


def test_to_parquet_refuses_an_unknown_partition_column(tmp_path):
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(ValueError, match=r"partition columns \['b'\]"):
        bbrlab.to_parquet(df, tmp_path / "o.parquet", partition_cols=["b"])


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda p: bbrlab.to_parquet([1, 2], p), "to_parquet: df: the DataFrame"),
        (lambda p: bbrlab.to_parquet(pd.DataFrame({"a": [1]}), p, partition_cols="a"), "partition_cols"),
        (lambda p: bbrlab.pantheon_points(5), "pantheon_points: source"),
    ],
)
def test_results_helpers_refuse_the_wrong_type_by_name(call, words, tmp_path):
    """to_parquet([1, 2], ...) failed as "'list' object has no attribute
    'attrs'", partition_cols="a" was taken character by character, and
    pantheon_points(5) failed in os.fspath naming no argument."""
    with pytest.raises(TypeError, match=words):
        call(tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_n_workers_with_a_client_is_refused_not_ignored(small, cluster, tmp_path, small_file):
    """n_workers sizes only the LocalCluster a sweep starts by itself:
    given with a client it was silently ignored (as was search's jobs=
    with a client, and python -m bbrlab sim --workers with
    --dask-scheduler). Each is refused now, before anything runs."""
    import subprocess
    import sys

    with pytest.raises(ValueError, match="n_workers: sizes the LocalCluster"):
        bbrlab.sweep(small, client=cluster, n_workers=4, progress=False)
    with pytest.raises(ValueError, match="jobs: the threads of a search without a client"):
        bbrlab.search("bbr", client=cluster, jobs=2, progress=False)
    r = subprocess.run(
        [sys.executable, "-m", "bbrlab", "sim", str(small_file), "--workers", "2",
         "--dask-scheduler", "tcp://127.0.0.1:1", "--quiet", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--workers sizes the LocalCluster" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_an_interrupted_sweep_cancels_its_remaining_batches(small, monkeypatch):
    """Ctrl-C during a sweep on a given client left its batches queued
    and running on that client's cluster (in Jupyter the traceback keeps
    the futures alive). The sweep now cancels them as it stops. The
    interrupt is raised by the progress bar after the first batch."""
    import tqdm.auto

    class Interrupting(tqdm.auto.tqdm):
        def update(self, n=1):
            raise KeyboardInterrupt

    monkeypatch.setattr(tqdm.auto, "tqdm", Interrupting)
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as c, Client(c) as client:
        with pytest.raises(KeyboardInterrupt) as e:
            bbrlab.sweep(small, seeds=list(range(1, 9)), client=client, batch_size=1, progress=True)
        deadline = time.time() + 20
        while c.scheduler.tasks and time.time() < deadline:
            time.sleep(0.1)
        left = dict(c.scheduler.tasks)
        del e  # the traceback held the futures, as an interactive session does
    assert not left, f"{len(left)} sweep tasks still on the cluster after the interrupt"


def test_python_m_bbrlab_sim_checks_out_before_running(small_file, tmp_path):
    """An --out that is a file was found only after the whole sweep had
    run, as a FileExistsError traceback: the results were lost. It is a
    usage error now, before any run."""
    import subprocess
    import sys

    out = tmp_path / "taken"
    out.write_text("not a directory")
    r = subprocess.run(
        [sys.executable, "-m", "bbrlab", "sim", str(small_file), "--workers", "1", "--quiet", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    assert "exists and is not a directory" in r.stderr and "Traceback" not in r.stderr


def _always_failing(text, base_dir, label):
    raise RuntimeError("no route to the trace store (injected)")


def test_a_sweep_whose_runs_all_fail_still_has_the_summary_columns(monkeypatch):
    """When every run failed the frame had no summary columns at all, so
    code that reads df["goodput_bps"] on any sweep raised KeyError on
    this one. The columns are there, all missing."""
    monkeypatch.setattr(_sweep, "_simulate_summary", _always_failing)
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as c, Client(c) as client:
        with pytest.warns(RuntimeWarning, match="2 of 2 runs failed"):
            df = bbrlab.sweep(SMALL, {"flow.algorithm": ["bbr", "cubic"]}, client=client, retries=0)
    assert list(df.columns[-len(bbrlab.UNITS["summary"]):]) == list(bbrlab.UNITS["summary"])
    assert df["goodput_bps"].isna().all() and (df["status"] == "failed").all()

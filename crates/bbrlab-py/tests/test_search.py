"""bbrlab.search: the worst path inside a budget, by pycma's CMA-ES
against a random baseline, evaluated here or as Dask tasks. The same
search gives the same history either way; the worst path's scenario runs
in simulate(); bad options are named by their keywords."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from distributed import Client, LocalCluster

import bbrlab
from bbrlab import _search

#: A small budget: 10 Mbit/s falling as low as 2, two pieces, 8 s runs.
BUDGET = dict(rate="10mbit", rate_ratio=5, pieces=2, duration="8s", evaluations=24, seed=4)


def test_a_local_search_reports_both_methods_and_the_worst_path_runs():
    r = bbrlab.search("bbr", "utilization", progress=False, **BUDGET)
    assert isinstance(r, bbrlab.SearchResult)
    h = r.history
    assert list(h.columns) == ["method", "evaluation", "utilization", "worst_so_far", "path", "error"]
    n = (h["method"] == "cmaes").sum()
    assert 16 <= n <= 24 and (h["method"] == "random").sum() == n
    # Worst so far never improves; utilization is a fraction.
    for _, g in h.groupby("method"):
        assert g["worst_so_far"].is_monotonic_decreasing
        assert g["utilization"].between(0, 1.2).all()
    assert r.worst["value"] == h[h["method"] == "cmaes"]["utilization"].min()
    assert r.beat_baseline == (r.worst["value"] < r.baseline_worst["value"])
    assert "bandwidth estimate" in r.reading
    # The worst path's file runs as it stands.
    run = bbrlab.simulate(r.worst["scenario"], timeseries=False)
    assert len(run.summary) == 1


def test_dask_gives_the_same_search():
    local = bbrlab.search("bbr,cubic", "share", progress=False, **{**BUDGET, "rate_ratio": 2})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c, Client(
        c
    ) as client:
        remote = bbrlab.search(["bbr", "cubic"], "share", client=client, progress=False, **{**BUDGET, "rate_ratio": 2})
    pd.testing.assert_frame_equal(local.history, remote.history)
    assert local.worst["scenario"] == remote.worst["scenario"]
    assert local.flows == ["bbr", "cubic"]
    assert local.reading is not None


def test_a_loss_based_controller_gets_no_reading_and_write_makes_the_files(tmp_path):
    r = bbrlab.search("cubic", "retransmissions", progress=False, rate_ratio=1, loss=0.03, pieces=1,
                      duration="5s", evaluations=12, seed=2)
    assert r.reading is None
    # One free number (the loss): the path ignores pycma's second.
    assert r.history["path"].str.contains("random loss").all()
    r.write(tmp_path / "out")
    for f in ["worst.toml", "baseline-worst.toml", "history.csv"]:
        assert (tmp_path / "out" / f).is_file()


def test_a_normal_packet_jitter_searches_its_mean_and_deviation():
    r = bbrlab.search("bbr", "utilization", progress=False, rate="3mbit", rate_ratio=1, delay="15ms",
                      packet_jitter="60ms", packet_jitter_dist="normal", pieces=1, duration="10s",
                      evaluations=12, seed=3)
    assert r.history["path"].str.contains("per-packet jitter Normal").all()
    assert "normal = { mean" in r.worst["scenario"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(rate_ratio=0.5), "rate_ratio 0.5: must be at least 1"),
        (dict(speed=3), "unknown field `speed`"),
        (dict(objective="share"), "give two controllers"),
        (dict(rate="10mbps"), "rate `10mbps`"),
        (dict(cc="bbr9"), "cc bbr9"),
        (dict(packet_jitter="60ms", packet_jitter_dist="gaussian"), "packet_jitter_dist gaussian"),
        # A NaN is named by its keyword, not as a position in the JSON the
        # native side reads; a span past what a Duration holds is refused
        # (it had panicked inside the native call); zero threads are not
        # taken as "every core".
        (dict(loss=float("nan")), "`loss` = nan"),
        (dict(run_timeout_s=1e20), "run_timeout_s 1"),
        (dict(jobs=0), "jobs: a whole number >= 1, not 0"),
    ],
)
def test_bad_options_are_named_by_keyword(kwargs, message):
    args = {"cc": "bbr", **kwargs}
    with pytest.raises(ValueError, match=message):
        bbrlab.search(**args, progress=False, evaluations=10)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"rate": 20_000_000}, "rate = 20000000: invalid type: integer"),
        ({"pieces": 2.5}, "pieces = 2.5: invalid type: floating point"),
        ({"seed": -1}, "seed = -1: invalid value"),
        ({"tcp_like": "yes"}, "tcp_like = 'yes': invalid type: string"),
        ({"objective": 5}, "objective = 5: invalid type: integer"),
    ],
)
def test_a_wrongly_typed_option_is_named_not_placed_in_json(kwargs, words):
    """A value of the wrong type was refused as "invalid type: integer
    `20000000`, expected a string at line 1 column 17": a position in
    JSON the caller never saw. The message names the keyword now."""
    with pytest.raises(ValueError, match=f"^search options: {re.escape(words)}") as e:
        bbrlab.search("bbr", progress=False, **kwargs)
    assert "line" not in str(e.value)



class PanicException(BaseException):
    """What a Rust panic arrives as (pyo3's PanicException is a
    BaseException)."""


def _panicking_evaluate(spec, points, jobs):
    raise PanicException("attempt to subtract with overflow (injected)")


def test_a_panicking_dask_task_is_an_error_naming_its_paths_not_a_hang(monkeypatch):
    """A Dask task that raised a BaseException (a Rust panic) hung the
    search: Dask's client cannot deliver one, so gather() never returned.
    The task now raises a RuntimeError naming its paths. (Run in a thread
    so the old behaviour fails the test instead of hanging it.)"""
    import threading

    monkeypatch.setattr(_search._native, "search_evaluate", _panicking_evaluate)
    outcome = {}

    def run():
        try:
            bbrlab.search("bbr", "utilization", client=client, progress=False, **BUDGET)
        except BaseException as e:  # noqa: BLE001 - inspected below
            outcome["error"] = e

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as c, Client(
        c
    ) as client:
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(60)
        assert not t.is_alive(), "search hung on a task that raised a BaseException"
    e = outcome["error"]
    assert isinstance(e, RuntimeError), repr(e)
    assert "a Dask task evaluating" in str(e)
    assert "PanicException: attempt to subtract with overflow (injected)" in str(e)
    assert "its paths: " in str(e) and "Mbit/s" in str(e)

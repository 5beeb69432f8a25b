"""pantheon_points() and plot_pantheon(): the CLI's rule for a sweep's
throughput against delay, from summary.json and from sweep()'s frame."""

from __future__ import annotations

import json
import re
import subprocess

import pandas as pd
import pytest

import bbrlab


def _summary(tmp_path):
    """A hand-written summary.json of two runs (the CLI's shape)."""
    doc = {
        "scenario": "s",
        "parameters": ["link.forward.queue.limit"],
        "runs": [
            {
                "run": "run-0000",
                "params": {"link.forward.queue.limit": "1bdp"},
                "flows": [
                    {"algorithm": "bbr", "goodput_bps": 4e6, "rtt_p95_ms": 50.0},
                    {"algorithm": "bbr", "goodput_bps": 3e6, "rtt_p95_ms": 70.0},
                    {"algorithm": "cubic", "goodput_bps": 2.5e6, "rtt_p95_ms": 120.0},
                ],
            },
            {
                "run": "run-0001",
                "params": {"link.forward.queue.limit": "4bdp"},
                "flows": [{"algorithm": "cubic", "goodput_bps": 9e6, "rtt_p95_ms": None}],
            },
        ],
    }
    (tmp_path / "summary.json").write_text(json.dumps(doc))
    return tmp_path


def test_points_are_the_summaries_numbers(tmp_path):
    p = bbrlab.pantheon_points(_summary(tmp_path))
    # run-0001's cubic has no RTT: no point.
    assert list(p["run"]) == ["run-0000", "run-0000"]
    assert list(p["algorithm"]) == ["bbr", "cubic"]
    assert list(p["flows"]) == [2, 1]
    assert p["throughput_mbps"].tolist() == pytest.approx([7.0, 2.5])
    assert p["delay_p95_ms"].tolist() == pytest.approx([60.0, 120.0])
    assert list(p["link.forward.queue.limit"]) == ["1bdp", "1bdp"]


def test_a_sweep_frame_gives_the_same_rule(tmp_path):
    df = pd.DataFrame(
        {
            "link.forward.queue.limit": ["1bdp", "1bdp", "4bdp"],
            "seed": [1, 1, 1],
            "run": ["run-0000", "run-0000", "run-0001"],
            "status": ["ok", "ok", "failed"],
            "algorithm": ["bbr", "bbr", "bbr"],
            "goodput_bps": [1e6, 2e6, None],
            "rtt_p95_ms": [10.0, 30.0, None],
        }
    )
    df.attrs["parameters"] = ["link.forward.queue.limit", "seed"]
    p = bbrlab.pantheon_points(df)
    assert len(p) == 1
    assert p.loc[0, "throughput_mbps"] == pytest.approx(3.0)
    assert p.loc[0, "delay_p95_ms"] == pytest.approx(20.0)
    # Without attrs (lost by pd.concat of sweeps or a CSV round trip) the
    # parameters were dropped from the points; they are read from the
    # layout sweep() gives (parameters, seed, run, status).
    csv = tmp_path / "sweep.csv"
    df.to_csv(csv, index=False)
    back = pd.read_csv(csv)
    assert not back.attrs
    pd.testing.assert_frame_equal(bbrlab.pantheon_points(back), p)


def test_a_directory_without_a_summary_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="no summary.json"):
        bbrlab.pantheon_points(tmp_path)
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(ValueError, match="no `runs` list"):
        bbrlab.pantheon_points(tmp_path)


def test_plot_reverses_the_delay_axis(tmp_path):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    ax = bbrlab.plot_pantheon(bbrlab.pantheon_points(_summary(tmp_path)))
    assert ax.xaxis_inverted()
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["bbr", "cubic"]
    out = tmp_path / "pantheon.png"
    ax.figure.savefig(out)
    assert out.stat().st_size > 1000


def test_a_runs_summary_has_the_sliding_jain_and_the_queue_percentiles(small):
    """``Run.summary_json`` carries ``fairness_over_time`` and ``queue``;
    the queue's percentiles are the link frame's forward samples' (numpy's
    default rule is the same linear interpolation)."""
    np = pytest.importorskip("numpy")
    small["duration"] = "3s"
    small["flow"] = [{"algorithm": "cubic"}, {"algorithm": "bbr", "start": "1s"}]
    run = bbrlab.simulate(small, seed=1)
    fair = run.summary_json["fairness_over_time"]
    assert fair["window_s"] == 1.0 and fair["threshold"] == 0.9
    assert fair["last_join_s"] == pytest.approx(1.0)
    assert fair["windows"] > 0
    assert 0.5 <= fair["jain_min"] <= fair["jain_mean"] <= 1.0
    q = run.summary_json["queue"]
    fwd = run.link[run.link["direction"] == "forward"]
    assert q["samples"] == len(fwd)
    for p, key in ((50, "bytes_p50"), (90, "bytes_p90"), (99, "bytes_p99"), (100, "bytes_max")):
        assert q[key] == pytest.approx(np.percentile(fwd["queue_bytes"], p), abs=1e-6)
    assert q["delay_ms_p99"] == pytest.approx(np.percentile(fwd["queue_delay_ms"], 99), abs=1e-5)


def test_fairness_over_time_is_the_summarys_rule_with_other_windows(small):
    """The default windows give the summary's numbers; other windows and
    thresholds are the caller's; bad ones are refused with what is allowed."""
    small["duration"] = "4s"
    small["flow"] = [{"algorithm": "cubic"}, {"algorithm": "cubic", "start": "1s"}]
    run = bbrlab.simulate(small, seed=1)
    fair = run.summary_json["fairness_over_time"]
    df = bbrlab.fairness_over_time(run)
    assert len(df) == fair["windows"]
    assert df.attrs["converged_at_s"] == (
        None if fair["converged_at_s"] is None else pytest.approx(fair["converged_at_s"])
    )
    assert df.attrs["last_join_s"] == pytest.approx(1.0)
    assert (df["flows"] == 2).all()
    assert ((df["jain"] >= 0.5) & (df["jain"] <= 1.0)).all()
    # 2 s windows every 0.5 s: from 3 s (a window after the join) on.
    wide = bbrlab.fairness_over_time(run.flows, window=2.0, step=0.5)
    assert wide["end_s"].iloc[0] == pytest.approx(3.0)
    assert (wide["end_s"].diff().dropna().round(6) == 0.5).all()
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        bbrlab.fairness_over_time(run, threshold=2)
    with pytest.raises(ValueError, match="seconds above 0"):
        bbrlab.fairness_over_time(run, window=0)


def test_plot_dir_draws_a_run_directorys_figures_as_the_cli_does(small_file, cli, tmp_path):
    """plot_dir() is `bbrlab plot`'s code: a run directory written by the
    CLI gets the same figures, as SVG and PNG, and the stems are returned;
    a directory with nothing to draw is refused with what plot reads."""
    out = tmp_path / "out"
    subprocess.run(
        [str(cli), "sim", str(small_file), "--out", str(out), "--quiet", "--no-plots"],
        check=True,
        capture_output=True,
    )
    run_dir = out / "run-0000"
    made = bbrlab.plot_dir(run_dir)
    assert "queue_cdf" in made, made
    for stem in made:
        assert (run_dir / f"{stem}.svg").stat().st_size > 0
        assert (run_dir / f"{stem}.png").stat().st_size > 0
    cli_made = subprocess.run(
        [str(cli), "plot", str(run_dir)], check=True, capture_output=True, text=True
    ).stdout
    assert sorted(made) == sorted(
        line.rsplit("/", 1)[-1].removesuffix(".svg") for line in cli_made.split() if line.endswith(".svg")
    )
    with pytest.raises(ValueError, match="neither a run directory"):
        bbrlab.plot_dir(tmp_path)
    with pytest.raises(ValueError, match="jain_window_s"):
        bbrlab.plot_dir(run_dir, jain_window_s=0.0)


def test_plot_dir_refuses_a_jain_window_no_window_of_the_run_holds(cli, tmp_path):
    """A window longer than the run (two flows, 2 s) was taken, and the
    fairness figure left out without a word; the default window draws it."""
    scenario = tmp_path / "two.toml"
    scenario.write_text(
        'name = "two"\nduration = "2s"\nsample_interval = "10ms"\n'
        '[link.forward]\nrate = "10mbit"\ndelay = "10ms"\n'
        '[link.reverse]\ndelay = "10ms"\n'
        '[[flow]]\nname = "a"\nalgorithm = "bbr"\n'
        '[[flow]]\nname = "b"\nalgorithm = "cubic"\n'
    )
    out = tmp_path / "out"
    subprocess.run(
        [str(cli), "sim", str(scenario), "--out", str(out), "--quiet", "--no-plots"],
        check=True,
        capture_output=True,
    )
    run_dir = out / "run-0000"
    with pytest.raises(ValueError, match="too long for the run"):
        bbrlab.plot_dir(run_dir, jain_window_s=5.0)
    assert not (run_dir / "fairness.svg").exists()
    assert "fairness" in bbrlab.plot_dir(run_dir)


@pytest.mark.parametrize(
    "kwargs, words",
    [({"window": "1s"}, "window: a number of seconds"), ({"step": True}, "step: a number of seconds"),
     ({"threshold": "0.9"}, "threshold: a number")],
)
def test_fairness_over_time_refuses_a_non_number_by_name(small, kwargs, words):
    """window="1s" failed as "could not convert string to float: '1s'"
    (no argument named) and True or "0.9" were taken as numbers."""
    run = bbrlab.simulate(small, progress=False)
    with pytest.raises(TypeError, match=f"fairness_over_time: {words}"):
        bbrlab.fairness_over_time(run, **kwargs)


@pytest.mark.parametrize(
    "kwargs, name",
    [({"jain_step_s": 0.0}, "jain_step_s"), ({"jain_window_s": float("nan")}, "jain_window_s")],
)
def test_plot_dir_names_its_keywords_not_the_clis_flags(tmp_path, kwargs, name):
    """plot_dir's refusals said --jain-step / --jain-window, flags a
    Python caller never wrote; they name the keyword now."""
    with pytest.raises(ValueError, match=f"^{name} ") as e:
        bbrlab.plot_dir(tmp_path, **kwargs)
    assert "--jain" not in str(e.value)


@pytest.mark.parametrize(
    "doc, words",
    [
        ({"runs": [5]}, "runs[0] is not an object"),
        ({"runs": [{"run": "run-0000", "flows": [1]}]}, "run-0000 has no `flows` list"),
    ],
)
def test_a_summary_json_of_another_shape_is_refused_naming_the_entry(tmp_path, doc, words):
    """A summary.json whose runs or flows are not objects failed as
    "'int' object has no attribute 'get'"."""
    (tmp_path / "summary.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=re.escape(words)):
        bbrlab.pantheon_points(tmp_path)


def test_fairness_over_time_names_the_columns_a_frame_lacks(small):
    """A flows frame without delivered_bytes (trimmed by the caller)
    failed as a bare KeyError: 'delivered_bytes'."""
    flows = bbrlab.simulate(small, progress=False).flows[["time_s", "flow", "goodput_bps"]]
    with pytest.raises(ValueError, match="has no column\\(s\\) delivered_bytes"):
        bbrlab.fairness_over_time(flows)


@pytest.mark.parametrize(
    "kwargs, words",
    [({"path": 5}, "plot_dir: path: a directory"), ({"jain_threshold": "0.9"}, "plot_dir: jain_threshold: a number"),
     ({"jain_window_s": True}, "plot_dir: jain_window_s: a number"), ({"jain_step_s": None}, "plot_dir: jain_step_s")],
)
def test_plot_dir_refuses_a_wrong_type_by_name(tmp_path, kwargs, words):
    """The native refusals named no argument ("must be real number, not
    str", "expected str, bytes or os.PathLike object, not int"), and
    jain_window_s=True was taken as 1 s."""
    with pytest.raises(TypeError, match=re.escape(words)):
        bbrlab.plot_dir(**{"path": tmp_path, **kwargs})


def test_fairness_over_time_without_a_time_series_names_both_causes(small):
    """A scenario with sample_interval = "0s" has no time series even with
    timeseries=True; the message named only timeseries=True, which the
    caller had already given."""
    small["sample_interval"] = "0s"
    run = bbrlab.simulate(small, progress=False)
    assert run.flows.empty
    with pytest.raises(ValueError, match="sample_interval is above 0s") as e:
        bbrlab.fairness_over_time(run)
    assert "timeseries=True" in str(e.value)

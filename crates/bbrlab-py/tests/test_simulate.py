"""bbrlab.simulate: types, units, errors, determinism, and the same
results as the CLI (one implementation of running a scenario)."""

from __future__ import annotations

import errno
import json
import subprocess
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbrlab
from conftest import SMALL_TOML


def test_dataframes_have_typed_columns_in_the_dictionarys_units(small):
    run = bbrlab.simulate(small)
    assert isinstance(run, bbrlab.Run)
    f, l, s = run.flows, run.link, run.summary
    assert list(f.columns) == list(bbrlab.UNITS["flows"])
    assert list(l.columns) == list(bbrlab.UNITS["link"])
    assert list(s.columns) == list(bbrlab.UNITS["summary"])
    assert f.attrs["units"]["rtt_ms"] == "ms"
    assert f.attrs["units"]["goodput_bps"] == "bit/s"
    for col in ("time_s", "goodput_bps", "rtt_ms", "pacing_rate_bps", "queue_delay_ms"):
        assert f[col].dtype == np.float64, col
    for col in ("flow", "delivered_bytes", "cwnd_bytes", "drops", "data_packets_sent"):
        assert f[col].dtype == np.int64, col
    assert l["queue_packets"].dtype == np.int64
    assert s["goodput_bps"].dtype == np.float64
    assert s["packets_sent"].dtype == np.int64
    # 2 s sampled every 100 ms (from 0 s), one flow: 20 rows in s; the link: both directions.
    assert len(f) == 20
    assert set(l["direction"]) == {"forward", "reverse"}
    np.testing.assert_allclose(f["time_s"], np.arange(20) * 0.1, atol=1e-12)
    # Units, not just names: RTT in ms on a 20 ms path, goodput in bit/s
    # below the 10 Mbit/s link, time in s.
    rtt = f["rtt_ms"].dropna()
    assert (rtt >= 20.0).all() and (rtt < 200.0).all()
    assert 1e6 < s["goodput_bps"].iloc[0] <= 10e6
    assert set(f["mode"]) <= {"startup", "drain", "probe_bw", "probe_rtt"}
    assert run.seed == 1
    assert run.duration_s == 2.0


def test_same_seed_gives_identical_dataframes_and_another_seed_differs(small):
    a = bbrlab.simulate(small, seed=7)
    b = bbrlab.simulate(small, seed=7)
    c = bbrlab.simulate(small, seed=8)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.link, b.link)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    assert a.seed == 7 and c.seed == 8
    # 1 % random loss: a different seed loses different packets.
    assert not a.flows.equals(c.flows)


def test_path_text_and_dict_are_the_same_scenario(small, small_file):
    by_dict = bbrlab.simulate(small)
    by_path = bbrlab.simulate(small_file)
    by_str_path = bbrlab.simulate(str(small_file))
    by_text = bbrlab.simulate(SMALL_TOML)
    for other in (by_path, by_str_path, by_text):
        pd.testing.assert_frame_equal(by_dict.flows, other.flows)
        pd.testing.assert_frame_equal(by_dict.summary, other.summary)


def test_a_dict_written_as_toml_is_the_same_scenario(small, tmp_path):
    """scenario_toml writes a dict as the file the CLI runs: simulating the
    file gives the dict's run, a sweep table included; what a scenario
    cannot hold is refused with where it is."""
    f = tmp_path / "s.toml"
    f.write_text(bbrlab.scenario_toml(small))
    pd.testing.assert_frame_equal(bbrlab.simulate(small).flows, bbrlab.simulate(f).flows)
    text = bbrlab.scenario_toml({**small, "sweep": {"seed": [1, 2, 3]}})
    assert "[sweep]" in text and "seed = [1, 2, 3]" in text
    with pytest.raises(ValueError, match="duration"):
        bbrlab.scenario_toml({**small, "duration": None})
    with pytest.raises(TypeError, match="a dict"):
        bbrlab.scenario_toml("duration = '1s'")


def test_results_are_the_clis(small_file, cli, tmp_path):
    """simulate() and `bbrlab sim` run the same code: the summary is the
    CLI's summary.json to the digit, and the time series are its CSVs
    (which round to the printed precision)."""
    out = tmp_path / "out"
    subprocess.run(
        [str(cli), "sim", str(small_file), "--out", str(out), "--quiet", "--no-plots"],
        check=True,
        capture_output=True,
    )
    run = bbrlab.simulate(small_file)
    cli_json = json.loads((out / "summary.json").read_text())["runs"][0]
    assert run.summary_json == cli_json
    assert run.summary["goodput_bps"].iloc[0] == cli_json["flows"][0]["goodput_bps"]
    flows = pd.read_csv(out / "run-0000" / "flows.csv")
    assert list(flows.columns) == list(run.flows.columns)
    assert len(flows) == len(run.flows)
    for col in ("time_s", "goodput_bps", "rtt_ms", "cwnd_bytes", "delivered_bytes", "drops"):
        np.testing.assert_allclose(flows[col], run.flows[col], atol=0.5e-3 if "ms" in col else 0.5)
    assert (flows["mode"] == run.flows["mode"]).all()
    link = pd.read_csv(out / "run-0000" / "link.csv")
    np.testing.assert_allclose(link["queue_delay_ms"], run.link["queue_delay_ms"], atol=0.5e-3)
    assert (link["queue_packets"] == run.link["queue_packets"]).all()
    cli_summary = pd.read_csv(out / "summary.csv")
    for col in ("delivered_bytes", "packets_sent", "drops", "rtos"):
        assert cli_summary[col].iloc[0] == run.summary[col].iloc[0]


def test_errors_carry_the_clis_file_line_col_message(small_file, cli):
    bad = small_file.read_text().replace('rate = "10mbit"', 'rate = "10mbps"')
    small_file.write_text(bad)
    with pytest.raises(bbrlab.ScenarioError) as e:
        bbrlab.simulate(small_file)
    cli_run = subprocess.run(
        [str(cli), "sim", str(small_file), "--quiet", "--no-plots", "--out", str(small_file.parent / "o")],
        capture_output=True,
        text=True,
    )
    assert cli_run.returncode != 0
    assert str(e.value) in cli_run.stderr
    assert e.value.location == f"{small_file}:6:8"
    assert "mbps" in e.value.detail
    assert isinstance(e.value, ValueError)


def test_dict_errors_name_the_field(small):
    small["flow"][0]["mss"] = 20
    with pytest.raises(bbrlab.ScenarioError, match=r"^<dict>:\d+:\d+: .*mss"):
        bbrlab.simulate(small)


def test_a_missing_file_and_a_wrong_type_are_refused(tmp_path):
    with pytest.raises(bbrlab.ScenarioError, match="cannot read the scenario file"):
        bbrlab.simulate(tmp_path / "nope.toml")
    with pytest.raises(TypeError):
        bbrlab.simulate(42)
    # A string is a path unless it has '=' or a newline; when that path does
    # not exist the error says the string was taken as one.
    with pytest.raises(bbrlab.ScenarioError, match="taken as a path"):
        bbrlab.simulate("algorithm bbr")


def test_a_missing_file_is_also_a_file_not_found_error(tmp_path):
    """A missing scenario path was only a ScenarioError: a caller's
    ``except FileNotFoundError`` (what open() raises) let it through. It
    is both now, whichever way the path is given, and in sweep too."""
    missing = tmp_path / "nope.toml"
    for given in (missing, str(missing)):
        with pytest.raises(FileNotFoundError) as e:
            bbrlab.simulate(given)
        assert isinstance(e.value, bbrlab.ScenarioError)
        assert isinstance(e.value, ValueError)
        assert isinstance(e.value, bbrlab.ScenarioFileNotFoundError)
        assert e.value.errno == errno.ENOENT
        assert e.value.filename == str(missing)
        assert e.value.location == str(missing)
        assert str(e.value).startswith(f"{missing}: ")
        assert "[Errno" not in str(e.value)
    with pytest.raises(FileNotFoundError, match="taken as a path"):
        bbrlab.simulate("algorithm bbr")
    with pytest.raises(FileNotFoundError):
        bbrlab.sweep(missing, {"flow.0.algorithm": ["bbr"]}, n_workers=1)
    # A directory is there but is no file: the reader's error, not this one.
    with pytest.raises(bbrlab.ScenarioError) as e:
        bbrlab.simulate(tmp_path)
    assert not isinstance(e.value, FileNotFoundError)


def test_a_file_with_an_equals_sign_in_its_path_is_a_path(tmp_path):
    """A hive-partitioned directory (``loss=0.01/``, as to_parquet writes)
    holding a scenario file: the string names a file that exists, so it is
    a path, not TOML text (it was parsed as TOML and refused at 1:1)."""
    d = tmp_path / "loss=0.01"
    d.mkdir()
    (d / "small.toml").write_text(SMALL_TOML)
    run = bbrlab.simulate(str(d / "small.toml"), progress=False, timeseries=False)
    pd.testing.assert_frame_equal(run.summary, bbrlab.simulate(SMALL_TOML, timeseries=False).summary)


def test_a_scenario_with_a_sweep_is_sent_to_sweep(small):
    small["sweep"] = {"flow.algorithm": ["bbr", "cubic"]}
    with pytest.raises(ValueError, match="bbrlab.sweep"):
        bbrlab.simulate(small)


def test_numpy_values_in_a_dict_are_plain_numbers(small):
    small["link"]["forward"]["loss"] = {"bernoulli": np.float64(0.01)}
    small["seed"] = np.int64(1)
    small["flow"][0]["algorithm"] = np.array(["bbr"])[0]  # numpy's str_
    pd.testing.assert_frame_equal(bbrlab.simulate(small).summary, bbrlab.simulate(SMALL_TOML).summary)


def test_timeseries_false_keeps_the_same_summary(small):
    full = bbrlab.simulate(small)
    lean = bbrlab.simulate(small, timeseries=False)
    assert lean.flows.empty and lean.link.empty
    pd.testing.assert_frame_equal(full.summary, lean.summary)


def test_threads_simulate_at_once_with_the_same_results(small):
    """The GIL is released while simulating: runs from threads give the
    same results as one by one (and can overlap; no timing is asserted)."""
    seeds = [1, 2, 3, 4]
    alone = {s: bbrlab.simulate(small, seed=s).summary for s in seeds}
    got = {}

    def work(s):
        got[s] = bbrlab.simulate(small, seed=s).summary

    threads = [threading.Thread(target=work, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in seeds:
        pd.testing.assert_frame_equal(alone[s], got[s])


def test_progress_bar_counts_simulated_seconds(small, capsys):
    bbrlab.simulate(small, progress=True)
    err = capsys.readouterr().err
    assert "simulating" in err and "2.0/2.0" in err and "100%" in err


def test_run_params_are_empty_without_a_sweep(small):
    run = bbrlab.simulate(small)
    assert run.params == {}
    assert run.name == "small"
    assert "[sweep]" not in run.text


def test_reproduce_returns_verdicts_and_figures(tmp_path):
    claims = bbrlab.reproduce(["C3"], tmp_path / "report", quick=True)
    assert [c.id for c in claims] == ["C3"]
    c = claims[0]
    assert isinstance(c.reproduced, bool)
    assert not c.rows.empty
    assert c.figures and all(Path(p).exists() for p in c.figures)
    assert (tmp_path / "report" / "index.html").exists() or any((tmp_path / "report").iterdir())
    assert "C3" in c._repr_html_()


@pytest.mark.parametrize(
    "claims, jobs, words",
    [
        (["C99"], None, ["--only C99", "known: C1"]),
        ([], None, ["no claim named"]),
        (["C3"], 0, ["jobs: a whole number >= 1, not 0"]),
    ],
)
def test_reproduce_refuses_bad_ids_and_zero_jobs_before_running(tmp_path, claims, jobs, words):
    """A caller's bad input is a ValueError (a run's own failure is a
    RuntimeError), raised before any run, so nothing is written."""
    out = tmp_path / "report"
    with pytest.raises(ValueError) as e:
        bbrlab.reproduce(claims, out, quick=True, jobs=jobs)
    assert all(w in str(e.value) for w in words), str(e.value)
    assert not out.exists()


def _with(d, path, value):
    """A copy of scenario dict ``d`` with the dotted ``path`` set."""
    import copy

    d = copy.deepcopy(d)
    *head, last = path.split(".")
    node = d
    for k in head:
        node = node[k]
    node[last] = value
    return d


@pytest.mark.parametrize(
    "path, value, exc, words",
    [
        ("duration", None, ValueError, ["`duration` is None", "leave the key out"]),
        ("link.forward.loss.bernoulli", float("nan"), ValueError, ["`link.forward.loss.bernoulli` = nan", "finite"]),
        ("link.forward.rate", float("inf"), ValueError, ["`link.forward.rate` = inf"]),
        ("seed", 2**70, ValueError, ["`seed` = 1180591620717411303424", "64-bit"]),
        ("flow", [None], ValueError, ["`flow[0]` is None"]),
        ("link.forward.queue", {1, 2}, TypeError, ["`link.forward.queue`", "(set) has no TOML form"]),
    ],
)
def test_dict_values_a_scenario_cannot_hold_are_refused_by_path(small, path, value, exc, words):
    """None, NaN, infinities, integers beyond 64 bits and other objects in
    a dict are refused naming the value's dotted path (they used to fail
    with a column in intermediate JSON text)."""
    with pytest.raises(exc) as e:
        bbrlab.simulate(_with(small, path, value), timeseries=False)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_non_string_keys_and_an_empty_string_are_refused(small):
    small[1] = 2
    with pytest.raises(TypeError, match="key 1 \\(int\\): keys are strings"):
        bbrlab.simulate(small)
    with pytest.raises(ValueError, match="an empty string"):
        bbrlab.simulate("  ")


@pytest.mark.parametrize(
    "seed, exc",
    [(-1, ValueError), (2**63, ValueError), (2**64, ValueError), (1.5, TypeError), ("1", TypeError), (True, TypeError)],
)
def test_a_seed_outside_the_simulators_range_is_refused(small, seed, exc):
    with pytest.raises(exc, match="seed: a whole number from 0 to 2\\^63 - 1"):
        bbrlab.simulate(small, seed=seed)


def test_numpy_and_the_largest_seed_are_taken(small):
    assert bbrlab.simulate(small, seed=np.uint64(2**63 - 1), timeseries=False).seed == 2**63 - 1
    assert bbrlab.simulate(small, seed=np.int32(7), timeseries=False).seed == 7


def test_a_given_seed_is_in_the_runs_text_so_the_text_repeats_the_run(small, cli, tmp_path):
    """Run.text is the scenario as run: with seed= it says that seed (it
    kept the dict's, or none), so the saved text run again, here or by
    `bbrlab sim`, is the same run. A seed a scenario file cannot hold
    (above 2^63 - 1; `bbrlab sweep(seeds=...)` refuses it too) is refused
    rather than run in a way the CLI cannot repeat."""
    run = bbrlab.simulate(small, seed=7, progress=False, timeseries=False)
    again = bbrlab.simulate(run.text, progress=False, timeseries=False)
    assert again.seed == 7
    pd.testing.assert_frame_equal(again.summary, run.summary)
    assert run.summary_json != bbrlab.simulate(small, progress=False, timeseries=False).summary_json
    f = tmp_path / "as-run.toml"
    f.write_text(run.text)
    out = tmp_path / "out"
    subprocess.run(
        [str(cli), "sim", str(f), "--out", str(out), "--quiet", "--no-plots"], check=True, capture_output=True
    )
    cli_json = json.loads((out / "summary.json").read_text())["runs"][0]
    assert cli_json["flows"] == run.summary_json["flows"]


def test_bbr3_with_ecn_on_a_marking_queue_reports_ce(small):
    """bbr3 runs from Python with its profile, and ECN's columns follow
    the schema: a bbr3 flow and a CUBIC flow with ``ecn`` on a step-marking
    queue learn of CE marks (``delivered_ce`` rises, ``ce_fraction`` is a
    fraction), the link counts what it marked, and nothing is dropped."""
    small["duration"] = "3s"
    # 50 Mbit/s: a 1 ms threshold is 4 packets (at 10 Mbit/s it would be
    # less than one, and every packet queued behind another is marked).
    small["link"]["forward"] = {
        "rate": "50mbit",
        "delay": "10ms",
        "queue": {"limit": "200pkt", "aqm": "step", "threshold": "1ms", "ecn": True},
    }
    small["flow"] = [
        {"algorithm": "bbr3", "ecn": True, "bbr3": {"profile": "linux-v3"}},
        {"algorithm": "cubic", "ecn": True},
    ]
    run = bbrlab.simulate(small)
    f, l, s = run.flows, run.link, run.summary
    assert f["delivered_ce"].dtype == np.int64
    assert l["ce_marked"].dtype == np.int64
    assert s["ce_packets"].dtype == np.int64
    assert s["ce_fraction"].dtype == np.float64
    assert f.attrs["units"]["delivered_ce"] == "packets"
    assert list(s["algorithm"]) == ["bbr3", "cubic"]
    for flow in (0, 1):
        ce = f[f["flow"] == flow]["delivered_ce"]
        assert (ce.diff().dropna() >= 0).all(), "cumulative"
        assert ce.iloc[-1] > 0, f"flow {flow} learned of no CE mark"
        assert ce.iloc[-1] <= s["ce_packets"].iloc[flow]
    assert ((s["ce_fraction"] > 0) & (s["ce_fraction"] < 1)).all()
    assert (s["drops"] == 0).all()
    fwd = l[l["direction"] == "forward"]["ce_marked"]
    assert fwd.iloc[-1] > 0 and (l[l["direction"] == "reverse"]["ce_marked"] == 0).all()
    links = {d["direction"]: d for d in run.summary_json["links"]}
    assert links["forward"]["ce_marked"] >= fwd.iloc[-1]
    assert run.summary_json["flows"][0]["ce_packets"] == s["ce_packets"].iloc[0]
    # bbr3's phases are named in the mode column.
    assert set(f[f["flow"] == 0]["mode"]) <= {
        "startup", "drain", "probe_bw_down", "probe_bw_cruise", "probe_bw_refill", "probe_bw_up", "probe_rtt",
    }
    # Without ECN on the flows the same queue drops instead, and no CE is learned.
    for fl in small["flow"]:
        fl["ecn"] = False
    plain = bbrlab.simulate(small)
    assert (plain.flows["delivered_ce"] == 0).all()
    assert (plain.summary["ce_fraction"] == 0).all()
    assert plain.summary["drops"].sum() > 0


def test_a_bbr3_table_for_another_algorithm_is_refused(small):
    small["flow"][0]["bbr3"] = {"profile": "draft"}
    with pytest.raises(bbrlab.ScenarioError, match=r"bbr3.*applies only to `algorithm = \"bbr3\"`"):
        bbrlab.simulate(small)
    small["flow"][0] = {"algorithm": "bbr3", "bbr3": {"profile": "v2"}}
    with pytest.raises(bbrlab.ScenarioError, match="draft, linux-v3"):
        bbrlab.simulate(small)


def test_a_quic_stacks_own_controller_runs_by_name(small):
    # s2n-quic's CUBIC (the quic-controllers crate) through 1 % loss: it
    # is named in the summary and leaves slow start, as its mode column
    # shows from the events s2n publishes.
    small["flow"][0]["algorithm"] = "s2n:cubic"
    run = bbrlab.simulate(small)
    assert list(run.summary["algorithm"]) == ["s2n:cubic"]
    assert run.summary["delivered_bytes"].iloc[0] > 0
    modes = set(run.flows["mode"])
    assert modes <= {"slow_start", "congestion_avoidance"}, modes
    assert "congestion_avoidance" in modes


def test_a_misspelt_stack_controller_lists_every_allowed_name(small):
    small["flow"][0]["algorithm"] = "quinn:bbr2"
    with pytest.raises(bbrlab.ScenarioError, match="quinn:bbr2") as e:
        bbrlab.simulate(small)
    for name in ("bbr3", "s2n:bbr2", "s2n:cubic", "quinn:bbr", "quinn:cubic"):
        assert name in str(e.value)


def test_bbr3_signals_select_the_stock_kernel_substitutes(small):
    """``[flow.bbr3] signals`` reaches the simulator from a dict: on a
    lossy path the stock kernel's substitutes (what ``bbrlab_bbr3`` gets)
    change what bbr3 does, ``exact`` is the default, and an unknown value
    is refused with the allowed ones listed."""
    small["duration"] = "4s"
    small["link"]["forward"]["loss"] = {"bernoulli": 0.03}

    def summary(bbr3):
        small["flow"] = [{"algorithm": "bbr3", "bbr3": bbr3}]
        return bbrlab.simulate(small, seed=1, timeseries=False).summary_json["flows"][0]

    default = summary({"profile": "linux-v3"})
    exact = summary({"profile": "linux-v3", "signals": "exact"})
    stock = summary({"profile": "linux-v3", "signals": "stock-kernel"})
    assert default == exact
    assert stock != exact
    assert stock["delivered_bytes"] > 0
    small["flow"] = [{"algorithm": "bbr3", "bbr3": {"signals": "patched"}}]
    with pytest.raises(bbrlab.ScenarioError, match=r"`patched`.*exact, stock-kernel"):
        bbrlab.simulate(small)


FCT_TOML = """\
name = "fct"
duration = "4s"
sample_interval = "100ms"

[link.forward]
rate = "10mbit"
delay = "10ms"

[link.reverse]
delay = "10ms"

[[flow]]
name = "file"
algorithm = "cubic"
size = "1000B"
start = "0.5s"

[[arrivals]]
name = "web"
algorithm = "bbr"
rate = 20
stop = "3s"
size = { dist = "exponential", mean = "20kB" }
"""


def test_fct_frame_has_fct_csvs_columns_and_the_ideal(tmp_path, cli):
    """Run.fct is fct.csv unrounded: same rows as the CLI's, a lone
    1000-byte flow on an idle 10 Mbit/s, 20 ms path takes its ideal
    (20 ms + 0.8 ms), and the buckets are summary.json's."""
    p = tmp_path / "fct.toml"
    p.write_text(FCT_TOML)
    run = bbrlab.simulate(p)
    fct = run.fct
    assert list(fct.columns) == list(bbrlab.UNITS["fct"])
    assert fct["size_bytes"].dtype == np.int64
    assert fct["fct_s"].dtype == np.float64
    assert fct.attrs["units"]["fct_s"] == "s"
    # 20/s for 3 s: 60 expected, ± 4·sqrt(60) = ± 31.
    web = fct[fct["flow"].str.startswith("web#")]
    assert abs(len(web) - 60) < 31
    assert len(run.summary) == 1, "generated flows are not summary rows"
    file = fct[fct["flow"] == "file"].iloc[0]
    assert file["ideal_s"] == pytest.approx(0.0208, abs=1e-9)
    np.testing.assert_allclose(fct["slowdown"], fct["fct_s"] / fct["ideal_s"], rtol=1e-12)
    buckets = run.fct_buckets()
    assert buckets["count"].sum() == len(fct) == run.summary_json["fct"]["flows_completed"]
    out = tmp_path / "out"
    subprocess.run(
        [str(cli), "sim", str(p), "--out", str(out), "--quiet", "--no-plots"],
        check=True,
        capture_output=True,
    )
    csv = pd.read_csv(out / "run-0000" / "fct.csv")
    assert list(csv["flow"]) == list(fct["flow"])
    np.testing.assert_allclose(csv["fct_s"], fct["fct_s"], atol=0.5e-9)


MODEL_TOML = """
name = "model"
duration = "6s"
sample_interval = "50ms"
[link.forward]
rate = "20mbit"
delay = "20ms"
queue = { limit = "33pkt" }
[link.reverse]
delay = "20ms"
[[flow]]
algorithm = "bbr3"
[[flow]]
algorithm = "cubic"
"""


def test_model_frame_is_model_csv_for_the_bbr_flows(tmp_path, cli):
    """Run.model is model.csv unrounded: one row per sample of the BBR
    flow only (not CUBIC), BBRv3's bounds missing until a loss sets them
    and then present, the same rows as the CLI's file; a run without a BBR
    flow has an empty model."""
    p = tmp_path / "model.toml"
    p.write_text(MODEL_TOML)
    run = bbrlab.simulate(p)
    m = run.model
    assert list(m.columns) == list(bbrlab.UNITS["model"])
    assert m.attrs["units"]["inflight_longterm_bytes"] == "bytes"
    # The units come from the writers' schema, as the data dictionary has them.
    units = m.attrs["units"]
    assert (units["pacing_gain"], units["round_count"], units["ecn_alpha"]) == (
        "ratio", "rounds", "fraction")
    assert units["full_bw_reached"] == units["loss_in_round"] == "flag"
    assert bbrlab.UNITS["flows"]["srtt_ms"] == "ms" and bbrlab.UNITS["link"]["ce_marked"] == "packets"
    assert set(m["flow"]) == {0}
    assert len(m) == 120, "6 s every 50 ms"
    assert m["cwnd_bytes"].dtype == np.int64
    assert m["inflight_longterm_bytes"].dtype == np.float64
    hi = m["inflight_longterm_bytes"]
    assert hi.isna().iloc[0], "unset at the start"
    assert hi.notna().any(), "a 33-packet buffer overflows and sets the bound"
    assert set(m["mode"]) <= {"startup", "drain", "probe_bw_down", "probe_bw_cruise",
                              "probe_bw_refill", "probe_bw_up", "probe_rtt"}
    out = tmp_path / "out"
    subprocess.run(
        [str(cli), "sim", str(p), "--out", str(out), "--quiet", "--no-plots"],
        check=True,
        capture_output=True,
    )
    csv = pd.read_csv(out / "run-0000" / "model.csv")
    assert list(csv.columns) == list(m.columns)
    np.testing.assert_allclose(csv["time_s"], m["time_s"], atol=0.5e-6)
    np.testing.assert_allclose(
        csv["inflight_longterm_bytes"], m["inflight_longterm_bytes"], atol=0.5
    )
    cubic = bbrlab.simulate(MODEL_TOML.replace('"bbr3"', '"cubic"'))
    assert cubic.model.empty


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: bbrlab.simulate(SMALL_TOML, progress="no"), "progress"),
        (lambda: bbrlab.simulate(SMALL_TOML, timeseries="no"), "timeseries"),
        (lambda: bbrlab.simulate(SMALL_TOML, timeseries=0), "timeseries"),
        (lambda: bbrlab.sweep(SMALL_TOML, progress=1), "progress"),
        (lambda: bbrlab.search("bbr", progress="off"), "progress"),
        (lambda: bbrlab.reproduce(["C3"], quick="yes"), "quick"),
        (lambda: bbrlab.reproduce(["C3", 5]), "claims"),
        (lambda: bbrlab.reproduce(None), "claims"),
        (lambda: bbrlab.reproduce(["C3"], 5), "out"),
    ],
)
def test_a_flag_or_claim_of_the_wrong_type_is_refused_by_name(call, name, tmp_path, monkeypatch):
    """progress="no" was taken as yes (truthiness), and the native side's
    refusals ("'str' object is not an instance of 'bool'") named no
    argument: each is now a TypeError naming it, before anything runs."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=f"^{name}: "):
        call()
    assert not (tmp_path / "report").exists()


def test_swept_values_are_typed_as_the_clis_summary_json_types_them(small, cli, tmp_path):
    """Run.params (and sweep()'s parameter columns) typed a swept string
    with Python's int()/float(), which take "1_000" and " 7 ": a flow
    named "1_000" became the integer 1000 where the CLI's summary.json
    keeps the string. They follow the CLI's rule now."""
    names = ["1_000", " 7", "1e400", "12", "2.5"]
    for i, name in enumerate(names):
        small["sweep"] = {"flow.name": [name]}
        f = tmp_path / "one.toml"
        f.write_text(bbrlab.scenario_toml(small))
        out = tmp_path / f"out{i}"
        subprocess.run(
            [str(cli), "sim", str(f), "--out", str(out), "--quiet", "--no-plots"], check=True, capture_output=True
        )
        cli_params = json.loads((out / "summary.json").read_text())["runs"][0]["params"]
        params = bbrlab.simulate(small, progress=False, timeseries=False).params
        assert params == cli_params, name
        assert type(params["flow.name"]) is type(cli_params["flow.name"]), name


@pytest.mark.parametrize("cls", [bbrlab.Run, bbrlab.Claim, bbrlab.SearchResult])
def test_every_result_field_is_in_its_help(cls):
    """help(bbrlab.Run) said nothing of name, seed, duration_s, text and
    params (nor Claim of id ... seconds, SearchResult of objective ...
    failures): each field is described in its class's docstring now."""
    import dataclasses

    missing = [f.name for f in dataclasses.fields(cls) if f"``{f.name}``" not in cls.__doc__]
    assert not missing, f"{cls.__name__}'s docstring does not describe {missing}"


def test_a_given_seed_replaces_a_swept_seed_in_params_and_summary(small):
    """A one-point [sweep] of seed, run with seed=7: the run used 7, but
    Run.params and summary_json["params"] said the replaced seed 3."""
    small["sweep"] = {"seed": [3]}
    run = bbrlab.simulate(small, seed=7, progress=False, timeseries=False)
    assert run.seed == 7
    assert run.params == {"seed": 7}
    assert run.summary_json["params"] == {"seed": 7}
    del small["sweep"]
    assert run.summary_json["flows"] == bbrlab.simulate(small, seed=7, progress=False).summary_json["flows"]


def test_fct_buckets_has_units_like_every_other_frame(small):
    """fct_buckets() was the one frame without attrs["units"] (and had no
    entry in UNITS); without finite flows it had no columns at all."""
    small["flow"] = [{"algorithm": "bbr", "size": "50kB"}, {"algorithm": "cubic", "size": "2MB"}]
    b = bbrlab.simulate(small, progress=False, timeseries=False).fct_buckets()
    assert len(b) and set(b.columns) == set(bbrlab.UNITS["fct_buckets"])
    assert b.attrs["units"]["fct_p99_s"] == "s" and b.attrs["units"]["min_bytes"] == "bytes"
    empty = bbrlab.simulate(SMALL_TOML, progress=False, timeseries=False).fct_buckets()
    assert empty.empty and list(empty.columns) == list(bbrlab.UNITS["fct_buckets"])


def test_help_of_scenario_error_names_its_attributes():
    """help(bbrlab.ScenarioError) said nothing of .location and .detail,
    the parts a program reads instead of parsing the message."""
    assert "`location`" in bbrlab.ScenarioError.__doc__ and "`detail`" in bbrlab.ScenarioError.__doc__


def test_a_missing_trace_of_a_dict_scenario_names_the_working_directory(small, tmp_path, monkeypatch):
    """A dict (or text) scenario has no file: its relative paths resolve
    against the working directory. The error said "against the scenario
    file's directory", which a dict does not have."""
    monkeypatch.chdir(tmp_path)
    small["link"]["forward"]["rate"] = {"trace": "no-such.trace"}
    with pytest.raises(bbrlab.ScenarioError) as e:
        bbrlab.simulate(small, progress=False)
    message = str(e.value)
    assert "no-such.trace" in message and "working directory" in message, message

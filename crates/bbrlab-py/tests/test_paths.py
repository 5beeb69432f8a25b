"""Per-flow access links, bottleneck hops in series and delay schedules,
from a Python dict: the scenario keys reach the simulator, and per-hop
rows and summaries come back."""

from __future__ import annotations

import bbrlab


def test_a_parking_lot_reports_each_hop(small):
    small["link"]["forward"].pop("loss")
    small["link"]["hops"] = [{"rate": "10mbit", "delay": "10ms", "queue": {"limit": "100pkt"}}]
    small["flow"] = [
        {"name": "long", "algorithm": "cubic", "hops": [0, 1]},
        {"name": "second", "algorithm": "cubic", "hops": [1]},
    ]
    run = bbrlab.simulate(small)
    l = run.link
    assert set(l["direction"]) == {"forward", "reverse", "hop1"}
    links = {d["direction"]: d for d in run.summary_json["links"]}
    assert set(links) == {"forward", "reverse", "hop1"}
    # Both flows cross hop 1 (10 Mbit/s): together they cannot exceed it.
    assert run.summary["goodput_bps"].sum() <= 10e6
    hop1 = l[l["direction"] == "hop1"]["drops"]
    assert hop1.iloc[-1] == links["hop1"]["drops"]


def test_an_access_delay_and_a_delay_schedule_move_the_rtt(small):
    small["link"]["forward"].pop("loss")
    small["link"]["forward"].pop("delay")
    # 10 ms one way, then 30 ms from 1 s on; 10 ms back: 20 ms, then 40 ms.
    small["link"]["forward"]["delay_schedule"] = [
        {"at": "0s", "delay": "10ms"},
        {"at": "1s", "delay": "30ms"},
    ]
    small["flow"] = [
        {"algorithm": "bbr", "app_rate": "1mbit"},
        {
            "algorithm": "bbr",
            "app_rate": "1mbit",
            "access": {"forward": {"delay": "5ms"}, "reverse": {"delay": "5ms"}},
        },
    ]
    f = bbrlab.simulate(small).flows
    early = f[(f["time_s"] > 0.3) & (f["time_s"] < 0.9)]
    late = f[f["time_s"] > 1.3]
    for flow, extra in ((0, 0.0), (1, 10.0)):
        e = early[early["flow"] == flow]["rtt_ms"].dropna()
        g = late[late["flow"] == flow]["rtt_ms"].dropna()
        # Base plus at most a serialisation (1.2 ms) and a little queueing.
        assert ((e >= 20.0 + extra) & (e < 23.0 + extra)).all(), (flow, e.describe())
        assert ((g >= 40.0 + extra) & (g < 43.0 + extra)).all(), (flow, g.describe())

#!/usr/bin/env python3
"""Tests of recoveries.py on hand-made simulation summaries and `tcp send`
lines (scripts/test.sh runs these). Stdlib only."""

import contextlib
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recoveries  # noqa: E402


def flow(goodput, rate, episodes, undos, retx):
    return {"algorithm": "bbr", "goodput_bps": goodput, "retransmission_rate": rate,
            "loss_episodes": episodes, "undos": undos, "retransmissions": retx}


SIM = {"runs": [
    {"params": {"seed": 1}, "flows": [flow(1_600_000, 0.39, 350, 200, 5_250)]},
    {"params": {"seed": 2}, "flows": [flow(1_500_000, 0.37, 300, 150, 3_000)]},
]}


def send_line(goodput, retx, counters):
    return json.dumps({"cc": "bbr", "goodput_bps": goodput, "retransmits": retx,
                       "retransmitted_fraction": 0.28, "netns": counters})


def recv_line(segments_in, paws):
    return json.dumps({"bytes": 10_000_000, "seconds": 60.0, "goodput_bps": 1_333_333,
                       "netns": {"segments_in": segments_in, "paws_discards": paws, "ofo_queued": 9,
                                 "ofo_drops": 0, "dsacks_sent": 4}})


COUNTERS = {"sack_recoveries": 488, "timeouts": 2, "full_undos": 14, "partial_undos": 195,
            "dsack_undos": 37, "loss_undos": 0}


class Recoveries(unittest.TestCase):
    def test_both_sources_become_rows_and_medians(self):
        with tempfile.TemporaryDirectory() as t:
            sim = Path(t) / "summary.json"
            sim.write_text(json.dumps(SIM))
            kernel = Path(t) / "kernel.jsonl"
            kernel.write_text(send_line(1_570_000, 3_430, COUNTERS) + "\n\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(recoveries.main([str(sim), str(kernel)]), 0)
            lines = out.getvalue().splitlines()
            self.assertIn("| simulated bbr | seed=1 | 1.60 | 39.0 | 350 | 200 (57) | - | 15.0 |", lines)
            self.assertIn("| simulated bbr | seed=2 | 1.50 | 37.0 | 300 | 150 (50) | - | 10.0 |", lines)
            # Episodes: recoveries plus timeouts; undos: the four summed.
            self.assertIn("| kernel bbr | line 1 | 1.57 | 28.0 | 490 | 246 (50) | 195 (79) | 7.0 |", lines)
            self.assertIn("| simulated bbr | median of 2 | 1.55 | 38.0 | 325 | 175 (54) | - | 12.5 |", lines)
            self.assertIn("| kernel bbr | median of 1 | 1.57 | 28.0 | 490 | 246 (50) | 195 (79) | 7.0 |", lines)

    def test_receiver_lines_pair_in_order_and_add_the_paws_column(self):
        with tempfile.TemporaryDirectory() as t:
            sim = Path(t) / "summary.json"
            sim.write_text(json.dumps(SIM))
            kernel = Path(t) / "kernel.jsonl"
            # As `emu` prints them: each receiver's line before its sender's.
            kernel.write_text("\n".join([
                recv_line(4_000, 800), send_line(1_570_000, 3_430, COUNTERS),
                recv_line(5_000, 500), send_line(1_500_000, 3_000, COUNTERS),
            ]) + "\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(recoveries.main([str(sim), str(kernel)]), 0)
            lines = out.getvalue().splitlines()
            self.assertTrue(lines[0].endswith("| partial undos (% of undos) | retransmissions an episode | discarded by PAWS % |"), lines[0])
            self.assertIn("| kernel bbr | line 2 | 1.57 | 28.0 | 490 | 246 (50) | 195 (79) | 7.0 | 20.0 |", lines)
            self.assertIn("| kernel bbr | line 4 | 1.50 | 28.0 | 490 | 246 (50) | 195 (79) | 6.1 | 10.0 |", lines)
            self.assertIn("| kernel bbr | median of 2 | 1.54 | 28.0 | 490 | 246 (50) | 195 (79) | 6.6 | 15.0 |", lines)
            # The simulated receiver has no timestamps: no figure.
            self.assertIn("| simulated bbr | seed=1 | 1.60 | 39.0 | 350 | 200 (57) | - | 15.0 | - |", lines)
        # Without receiver lines the table has no such column.
        self.assertNotIn("PAWS", recoveries.table(recoveries.kernel_rows([send_line(1, 1, COUNTERS)], "f")))

    def test_receiver_lines_that_do_not_pair_are_named(self):
        cases = [
            ([recv_line(10, 1), send_line(1, 1, COUNTERS), send_line(1, 1, COUNTERS)],
             "1 receiver line\\(s\\) for 2 sender line"),
            ([json.dumps({"bytes": 1, "goodput_bps": 1, "netns": None}), send_line(1, 1, COUNTERS)],
             "f:1: `netns` is null: the receiver"),
            ([json.dumps({"bytes": 1, "netns": {"segments_in": 3}}), send_line(1, 1, COUNTERS)],
             "f:1: no `paws_discards`"),
            # Counters that are not an object: not a receiver's, and not a
            # sender's either.
            ([json.dumps({"bytes": 1, "netns": "segments_in"})], "f:1: no `sack_recoveries`"),
        ]
        for lines, want in cases:
            with self.assertRaisesRegex(recoveries.Failed, want):
                recoveries.kernel_rows(lines, "f")

    def test_a_compare_json_gives_a_row_for_each_source_that_counts(self):
        report = {"scenario": "j", "sources": [
            {"source": "simulator as kernel (bbr)", "kind": "simulator", "goodput_mbps": 1.39,
             "retransmitted_fraction": 0.397, "retransmitted_packets": 520, "loss_episodes": 176, "undos": 60},
            {"source": "kernel TCP (bbr)", "kind": "kernel", "goodput_mbps": 1.59,
             "retransmitted_fraction": 0.309, "retransmitted_packets": 440, "loss_episodes": 88, "undos": 41,
             "paws_discarded_fraction": 0.202},
            {"source": "UDP transport (bbr)", "kind": "udp", "goodput_mbps": 1.5},
        ]}
        with tempfile.TemporaryDirectory() as t:
            p = Path(t) / "compare.json"
            p.write_text(json.dumps(report))
            rows = recoveries.rows_of(p)
            self.assertEqual([r["source"] for r in rows], ["simulator as kernel (bbr)", "kernel TCP (bbr)"])
            lines = recoveries.table(rows).splitlines()
            self.assertIn(f"| kernel TCP (bbr) | {p} | 1.59 | 30.9 | 88 | 41 (47) | 5.0 | 20.2 |", lines)
            self.assertIn(f"| simulator as kernel (bbr) | {p} | 1.39 | 39.7 | 176 | 60 (34) | 3.0 | - |", lines)
            # Written before recoveries were counted: said so.
            p.write_text(json.dumps({"sources": [report["sources"][2]]}))
            with self.assertRaisesRegex(recoveries.Failed, "no source counts recoveries"):
                recoveries.rows_of(p)
            for bad, want in [({"sources": {"a": 1}}, "`sources` is not a list"),
                              ({"sources": [3]}, "`sources` item 0 is not an object"),
                              ({"runs": 5}, "`runs` is not a list"),
                              ({"runs": [{"flows": [7]}]}, "run 0: `flows` item 0 is not an object"),
                              ({"runs": [{"params": 1, "flows": []}]}, "run 0: `params` is not an object"),
                              ({"runs": [{"flows": [dict(flow(1, 0.1, 1, 0, 1), goodput_bps="fast")]}]},
                               "a figure is not a number"),
                              ({"sources": [{"source": "k", "loss_episodes": 1}]}, "source 0: no `goodput_mbps`")]:
                p.write_text(json.dumps(bad))
                with self.assertRaisesRegex(recoveries.Failed, want):
                    recoveries.rows_of(p)

    def test_a_simulated_flow_with_timestamps_is_its_own_source_with_paws(self):
        stamped = dict(flow(1_650_000, 0.35, 567, 284, 4_420),
                       timestamps={"partial_undos": 80, "segments_received": 11_000, "paws_discards": 1_980})
        with tempfile.TemporaryDirectory() as t:
            sim = Path(t) / "summary.json"
            sim.write_text(json.dumps({"runs": [{"params": {"seed": 1}, "flows": [stamped]},
                                                {"params": {"seed": 1}, "flows": [flow(1_600_000, 0.39, 350, 200, 5_250)]}]}))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(recoveries.main([str(sim)]), 0)
            lines = out.getvalue().splitlines()
            self.assertIn("| simulated bbr, timestamps | seed=1 | 1.65 | 35.0 | 567 | 284 (50) | 80 (28) | 7.8 | 18.0 |", lines)
            self.assertIn("| simulated bbr | seed=1 | 1.60 | 39.0 | 350 | 200 (57) | - | 15.0 | - |", lines)
            self.assertIn("| simulated bbr, timestamps | median of 1 | 1.65 | 35.0 | 567 | 284 (50) | 80 (28) | 7.8 | 18.0 |", lines)
            # The kernel's partial undos share the column; compare.json
            # counts none, so its table has no such column.
            kernel = Path(t) / "kernel.jsonl"
            kernel.write_text(send_line(1_570_000, 3_430, dict(COUNTERS, partial_undos=205)) + "\n"
                              + send_line(1_570_000, 3_430, COUNTERS) + "\n")
            lines = recoveries.table(recoveries.rows_of(sim) + recoveries.rows_of(kernel)).splitlines()
            self.assertIn("| kernel bbr | median of 2 | 1.57 | 28.0 | 490 | 251 (51) | 200 (80) | 7.0 | - |", lines)
            self.assertNotIn("partial", recoveries.table(recoveries.compare_rows(
                {"sources": [{"source": "k", "goodput_mbps": 1, "loss_episodes": 2, "undos": 1,
                              "retransmitted_packets": 3}]}, "c")))
            no_partial = dict(stamped, timestamps={"segments_received": 1, "paws_discards": 0})
            sim.write_text(json.dumps({"runs": [{"flows": [no_partial]}]}))
            with self.assertRaisesRegex(recoveries.Failed, "flow 0, timestamps: no `partial_undos`"):
                recoveries.rows_of(sim)
            sim.write_text(json.dumps({"runs": [{"flows": [dict(flow(1, 0.1, 1, 0, 1), timestamps=[1])]}]}))
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertNotEqual(recoveries.main([str(sim)]), 0)
            self.assertIn("`timestamps` is not an object", err.getvalue())

    def test_bad_input_is_named(self):
        with tempfile.TemporaryDirectory() as t:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(recoveries.main([str(Path(t) / "none.json")]), 1)
            self.assertIn("none.json", err.getvalue())
            cases = [
                (send_line(1, 1, None), "`netns` is null"),
                (json.dumps({"cc": "bbr", "goodput_bps": 1, "retransmits": 1}), "no `netns`"),
                ("{not json", "not JSON"),
                (send_line(1, 1, {"sack_recoveries": 1}), "no `timeouts`"),
                (json.dumps({"runs": [{"flows": [{"algorithm": "bbr", "goodput_bps": 1}]}]}),
                 "no `loss_episodes`"),
                ("\n", "neither a simulation's summary.json, a compare.json nor"),
            ]
            for text, want in cases:
                p = Path(t) / "in.json"
                p.write_text(text)
                with self.assertRaisesRegex(recoveries.Failed, want):
                    recoveries.rows_of(p)
            # An episode-free run has no per-episode figure, not an error.
            p = Path(t) / "quiet.json"
            p.write_text(json.dumps({"runs": [{"flows": [flow(1e6, 0.0, 0, 0, 0)]}]}))
            self.assertIsNone(recoveries.rows_of(p)[0]["per_episode"])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Tests of compare_seeds.py on compare directories written here: which
flows.csv each source reads, the start-up figures, the medians and the
errors. `python3 scripts/compare_seeds_test.py`."""

import contextlib
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_seeds  # noqa: E402

HEADER = "time_s,flow,delivered_bytes,data_packets_sent,retransmitted_packets,mode,bw_estimate_bps\n"


def flows(samples):
    """flows.csv text from (t, delivered, sent, mode, bw) samples, one
    packet in ten retransmitted."""
    return HEADER + "".join(f"{t},0,{d},{s},{s // 10},{m},{bw}\n" for t, d, s, m, bw in samples)


def write_run(root, name, kernel_samples, sim_samples, window=10.0):
    """A compare output with kernel TCP and the simulation matched to it."""
    d = Path(root) / name
    for sub, samples in [("kernel", kernel_samples), ("sim-kernel", sim_samples)]:
        (d / sub).mkdir(parents=True)
        (d / sub / "flows.csv").write_text(flows(samples))
    report = {
        "window_s": window,
        "sources": [
            {"source": "simulator as kernel (bbr)", "kind": "simulator",
             "matched_to": "kernel TCP (bbr)", "goodput_mbps": 9.0, "retransmitted_fraction": 0.02},
            {"source": "kernel TCP (bbr)", "kind": "kernel", "goodput_mbps": 8.0,
             "retransmitted_fraction": 0.01, "host": {"rwnd_limited_s": 0.25}},
        ],
    }
    (d / "compare.json").write_text(json.dumps(report))
    summary = {"runs": [{"flows": [{"rwnd_limited_s": 0.125}]}]}
    (d / "sim-kernel" / "summary.json").write_text(json.dumps(summary))
    return d


# The kernel's probe reads PROBE_RTT's gains before the first ACK, then
# STARTUP; it leaves STARTUP at 2.0 s, 1.5 s after its first data (0.5 s).
KERNEL = [
    (0.0, 0, 0, "probe_rtt", 0),
    (0.5, 0, 10, "probe_rtt", 0),
    (1.0, 1_000_000, 100, "startup", 5e6),
    (2.0, 2_000_000, 200, "drain", 8e6),
    (10.5, 11_000_000, 1000, "probe_bw", 9e6),
]
# The simulation starts sending at 0.1 s (its handshake) and never leaves
# STARTUP.
SIM = [
    (0.0, 0, 0, "startup", 0),
    (0.1, 0, 10, "startup", 0),
    (5.1, 5_000_000, 500, "startup", 9e6),
    (10.1, 12_500_000, 1200, "startup", 9e6),
]


class CompareSeeds(unittest.TestCase):
    def test_each_source_reads_its_own_log_from_its_first_data(self):
        with tempfile.TemporaryDirectory() as t:
            d = write_run(t, "seed1", KERNEL, SIM)
            rows, window = compare_seeds.rows_of(d, 5.0)
        self.assertEqual(window, 10.0)
        sim, kernel = rows
        self.assertEqual(kernel["source"], "kernel TCP (bbr)")
        # From 0.5 s: at 5.5 s the last sample is 2.0 s's 2 MB.
        self.assertAlmostEqual(kernel["first"], 2_000_000 * 8 / 5 / 1e6)
        self.assertAlmostEqual(kernel["rest"], 9_000_000 * 8 / 5 / 1e6)
        self.assertAlmostEqual(kernel["exit_s"], 1.5)
        self.assertAlmostEqual(kernel["exit_bw"], 8.0)
        self.assertAlmostEqual(kernel["retx"], 1.0)
        # 20 of the 200 sent by 5.5 s; 80 of the 800 sent after.
        self.assertEqual(kernel["retx_first"], 20)
        self.assertAlmostEqual(kernel["retx_rest"], 10.0)
        self.assertEqual(kernel["rwnd"], 0.25)
        self.assertEqual(sim["rwnd"], 0.125)
        # From 0.1 s: 5 MB at 5.1 s, 12.5 MB at 10.1 s.
        self.assertAlmostEqual(sim["first"], 8.0)
        self.assertAlmostEqual(sim["rest"], 12.0)
        self.assertIsNone(sim["exit_s"])

    def test_the_table_lists_every_run_then_each_sources_median(self):
        with tempfile.TemporaryDirectory() as t:
            a = write_run(t, "seed1", KERNEL, SIM)
            b = write_run(t, "seed2", KERNEL, SIM)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = compare_seeds.main([str(a), str(b)])
        self.assertEqual(rc, 0)
        lines = out.getvalue().splitlines()
        self.assertIn("first 5 s", lines[0])
        self.assertEqual(sum(line.startswith("| seed") for line in lines), 4)
        medians = [line for line in lines if line.startswith("| median of 2")]
        self.assertEqual(len(medians), 2)
        self.assertIn("| kernel TCP (bbr) | 8.00 | 3.2 | 14.4 | 1.50 | 8.0 | 1.00 | 20 | 10.00 | 0.250 |", medians[1])
        # A source that never left STARTUP has no exit to take a median of.
        self.assertIn("| 8.0 | 12.0 | - | - | 2.00 | 50 | 10.00 | 0.125 |", medians[0])

    def test_bad_input_is_named(self):
        with tempfile.TemporaryDirectory() as t:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(compare_seeds.main([str(Path(t) / "none")]), 1)
            self.assertIn("no compare.json", err.getvalue())
            d = write_run(t, "seed1", KERNEL, SIM)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(compare_seeds.main(["--first", "10", str(d)]), 1)
            self.assertIn("inside the runs' 10 s window", err.getvalue())
            other = write_run(t, "long", KERNEL, SIM, window=30.0)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(compare_seeds.main([str(d), str(other)]), 1)
            self.assertIn("different windows", err.getvalue())
            # A hand-edited compare.json names the field it lacks.
            report = json.loads((d / "compare.json").read_text())
            (d / "compare.json").write_text(json.dumps({k: v for k, v in report.items() if k != "window_s"}))
            with self.assertRaisesRegex(compare_seeds.Failed, "compare.json: no `window_s`"):
                compare_seeds.rows_of(d, 5.0)
            del report["sources"][0]["goodput_mbps"]
            (d / "compare.json").write_text(json.dumps(report))
            with self.assertRaisesRegex(compare_seeds.Failed, "compare.json, source '.*': no `goodput_mbps`"):
                compare_seeds.rows_of(d, 5.0)
            report["sources"][0]["goodput_mbps"] = 1.0
            (d / "compare.json").write_text(json.dumps(report))
            # A simulation without a summary has no figure, not an error.
            (d / "sim-kernel" / "summary.json").unlink()
            self.assertIsNone(compare_seeds.rows_of(d, 5.0)[0][0]["rwnd"])
            (d / "kernel" / "flows.csv").write_text("time_s,flow\n0.1,0\n")
            with self.assertRaisesRegex(compare_seeds.Failed, "missing columns"):
                compare_seeds.rows_of(d, 5.0)
            (d / "kernel" / "flows.csv").write_text(flows([(0.1, 0, 0, "startup", 0)]))
            with self.assertRaisesRegex(compare_seeds.Failed, "no sample with data sent"):
                compare_seeds.rows_of(d, 5.0)


if __name__ == "__main__":
    unittest.main()

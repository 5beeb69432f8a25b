#!/usr/bin/env python3
"""Tests of scripts/host_noise.py on hand-made packet logs whose loops are
worked out by hand (scripts/test.sh runs them). Stdlib only."""

import csv
import io
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import host_noise as hn  # noqa: E402

COLUMNS = ["enqueue_s", "dequeue_s", "scheduled_s", "released_s", "direction", "bytes",
           "dropped", "ce", "src_port", "dst_port", "tcp_seq", "tcp_ack", "tcp_flags",
           "tcp_window"]
TMP = tempfile.TemporaryDirectory()


def seg(port, sent, left, seq, dropped=False):
    return {"enqueue_s": sent, "dequeue_s": "" if dropped else left, "direction": "forward",
            "bytes": 1500, "dropped": "tail" if dropped else "", "src_port": port,
            "dst_port": "5201", "tcp_seq": seq, "tcp_ack": 1, "tcp_flags": "A",
            "released_s": "" if dropped else left + 0.02}


def ack(port, released, ack_no):
    return {"enqueue_s": released - 0.02, "dequeue_s": released - 0.02, "released_s": released,
            "direction": "reverse", "bytes": 52, "src_port": "5201", "dst_port": port,
            "tcp_seq": 1, "tcp_ack": ack_no, "tcp_flags": "A"}


def write(rows, columns=COLUMNS):
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", dir=TMP.name, delete=False, newline="")
    w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    f.close()
    return f.name


class Loops(unittest.TestCase):
    def test_a_loop_runs_from_the_acknowledged_segments_departure_to_the_answer(self):
        # Segment 1000..2448 leaves the bottleneck at 0.100; its ACK is
        # released at 0.1400 and the answer enters at 0.14003: 40.03 ms.
        # Segment 2448..3896 leaves at 0.101; its ACK at 0.1411, the
        # answer at 0.14116: 40.16 ms.
        rows = [seg("7", 0.05, 0.100, 1000), seg("7", 0.05, 0.101, 2448),
                ack("7", 0.1400, 2448), seg("7", 0.14003, 0.2, 3896),
                ack("7", 0.1411, 3896), seg("7", 0.14116, 0.2, 5344)]
        got = hn.loops(write(rows), 300e-6)
        self.assertEqual(list(got), ["7"])
        self.assertEqual([round(x * 1e6) for x in got["7"]], [40030, 40160])

    def test_a_send_too_long_after_the_ack_is_not_an_answer(self):
        rows = [seg("7", 0.05, 0.100, 1000), ack("7", 0.1400, 2448),
                seg("7", 0.1410, 0.2, 2448)]
        self.assertEqual(dict(hn.loops(write(rows), 300e-6)), {})
        self.assertEqual([round(x * 1e6) for x in hn.loops(write(rows), 2e-3)["7"]], [41000])

    def test_an_ack_of_a_dropped_segment_or_of_part_of_one_gives_no_loop(self):
        rows = [seg("7", 0.05, 0.100, 1000, dropped=True), ack("7", 0.1400, 2448),
                seg("7", 0.14001, 0.2, 2448), ack("7", 0.1401, 2000),
                seg("7", 0.14011, 0.2, 3896)]
        self.assertEqual(dict(hn.loops(write(rows), 300e-6)), {})

    def test_flows_are_kept_apart_by_port(self):
        rows = [seg("7", 0.05, 0.100, 1000), seg("8", 0.05, 0.1006, 1000),
                ack("7", 0.1400, 2448), ack("8", 0.1406, 2448),
                seg("7", 0.14025, 0.2, 2448), seg("8", 0.14062, 0.2, 2448)]
        got = hn.loops(write(rows), 300e-6)
        self.assertEqual(round(got["7"][0] * 1e6), 40250)
        self.assertEqual(round(got["8"][0] * 1e6), 40020)

    def test_main_prints_the_spread_and_the_excess(self):
        rows = []
        t = 0.100
        for k in range(11):
            seq = 1000 + k * 1448
            rows += [seg("7", 0.05, t, seq), ack("7", t + 0.04, seq + 1448),
                     seg("7", t + 0.04 + k * 1e-5, 0.3, 1_000_000 + seq)]
            t += 0.001
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(hn.main([write(rows), "--rtt-ms", "40"]), 0)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0].split(",")[-1], "excess_us")
        # Loops 40.000..40.100 ms in steps of 10 us: median 40.050, p25 40.020,
        # p10 40.010, p90 40.090.
        self.assertEqual(lines[1], "7,11,40.050,-40,-30,30,40,31,50")

    def test_a_log_without_tcp_fields_is_refused_with_what_is_missing(self):
        path = write([{"enqueue_s": 0.1, "direction": "forward", "bytes": 60}],
                     columns=["enqueue_s", "direction", "bytes"])
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(hn.main([path]), 1)
        self.assertIn("tcp_ack", err.getvalue())
        self.assertIn("emu --log", err.getvalue())


if __name__ == "__main__":
    unittest.main()

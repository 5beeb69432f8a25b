#!/usr/bin/env python3
"""Tests of scripts/tcp_rate_rebuild.py on hand-made packet logs whose
samples are worked out by hand (scripts/test.sh runs them). Stdlib only."""

import csv
import io
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import tcp_rate_rebuild as rr  # noqa: E402

COLUMNS = ["enqueue_s", "dequeue_s", "scheduled_s", "released_s", "direction", "bytes",
           "dropped", "ce", "src_port", "dst_port", "tcp_seq", "tcp_ack", "tcp_flags",
           "tcp_window"]
PORT = "40000"
# Every log the tests write, removed when the tests end.
TMP = tempfile.TemporaryDirectory()


def data(sent, released, seq, dropped=False):
    return {"enqueue_s": sent, "released_s": "" if dropped else released,
            "direction": "forward", "bytes": 1500, "dropped": "tail" if dropped else "",
            "src_port": PORT, "dst_port": "5201", "tcp_seq": seq, "tcp_ack": 1,
            "tcp_flags": "A"}


def ack(emitted, arrives, ack_no):
    return {"enqueue_s": emitted, "released_s": arrives, "direction": "reverse",
            "bytes": 52, "src_port": "5201", "dst_port": PORT, "tcp_seq": 1,
            "tcp_ack": ack_no, "tcp_flags": "A"}


def write(rows):
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", dir=TMP.name, delete=False, newline="")
    w = csv.DictWriter(f, fieldnames=COLUMNS)
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in COLUMNS})
    f.close()
    return f.name


class Rebuild(unittest.TestCase):
    def samples(self, rows):
        return list(rr.rebuild(rr.read_events(write(rows), PORT)))

    def test_a_flight_acked_one_by_one(self):
        # Four segments sent 1 ms apart from t=0, each received 20 ms later
        # and acknowledged at once, the ACK reaching the sender 20 ms after.
        rows = []
        for i in range(4):
            rows.append(data(i * 0.001, 0.020 + i * 0.001, 1 + 1448 * i))
            rows.append(ack(0.020 + i * 0.001, 0.040 + i * 0.001, 1 + 1448 * (i + 1)))
        s = self.samples(rows)
        self.assertEqual(len(s), 4)
        # The last: 4 delivered since the flight began (delivered 0 at
        # t=0), over max(send 3 ms, ack 43 ms) = 43 ms.
        t, rate, best, count, send_s, ack_s = s[-1]
        self.assertEqual(count, 4)
        self.assertAlmostEqual(send_s, 0.003)
        self.assertAlmostEqual(ack_s, 0.043)
        self.assertAlmostEqual(rate, 4 * 1448 * 8 / 0.043)
        self.assertAlmostEqual(best, max(x[1] for x in s))

    def test_a_flight_from_idle_and_an_ack_with_nothing_new(self):
        # Segment 2 is sent after segment 1's ACK arrives (nothing in
        # flight, so the flight's clocks restart at its send): its sample's
        # interval is its own RTT (40 ms), not the 90 ms since the first
        # send; then an ACK covering nothing new yields no sample.
        rows = [data(0.0, 0.020, 1), ack(0.020, 0.040, 1449),
                data(0.050, 0.070, 1449), ack(0.070, 0.090, 2897),
                ack(0.071, 0.091, 2897)]
        s = self.samples(rows)
        self.assertEqual([x[3] for x in s], [1, 1])
        self.assertAlmostEqual(s[1][5], 0.040)

    def test_a_lost_segment_is_not_counted_and_sacked_ones_are(self):
        # Segment 2 of 3 is dropped: the ACK the receiver sends after
        # segment 3 reports segment 3 (SACK) but not 2; the retransmission
        # is counted when it arrives, its sample starting from its own
        # transmission (tcp_rate_skb_sent runs for a retransmission too).
        rows = [data(0.0, 0.020, 1), data(0.001, "", 1449, dropped=True),
                data(0.002, 0.022, 2897),
                ack(0.020, 0.040, 1449), ack(0.022, 0.042, 1449),
                data(0.043, 0.063, 1449), ack(0.063, 0.083, 4345)]
        s = self.samples(rows)
        self.assertEqual([x[3] for x in s], [1, 2, 1])
        # The retransmission's sample: sent at 43 ms with 2 delivered, the
        # last delivery at 42 ms, the flight's first send (segment 3's) at
        # 2 ms; delivered 3 - 2 = 1 over max(41, 41) ms.
        self.assertAlmostEqual(s[-1][4], 0.041)
        self.assertAlmostEqual(s[-1][5], 0.041)

    def test_bad_input_is_a_clear_error(self):
        bad = tempfile.NamedTemporaryFile("w", suffix=".csv", dir=TMP.name, delete=False)
        bad.write("time_s,x\n1,2\n")
        bad.close()
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(rr.main([bad.name, PORT]), 2)
        self.assertIn("no column(s)", err.getvalue())
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(rr.main([write([data(0, 0.02, 1)]), "1"]), 2)
        self.assertIn("no data segments from port 1", err.getvalue())


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Tests of scripts/first_probe.py on a hand-made `validate --multiflow`
path directory whose figures are worked out by hand (scripts/test.sh
runs them). Stdlib only."""

import csv
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import first_probe as fp  # noqa: E402

MSS = 1448


def write(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        for r in rows:
            w.writerow(r)


# The BBRv3 flow's model, 10 ms samples for 4 s: STARTUP until 0.4 s
# (inflight_longterm 70 packets from then), CRUISE, REFILL at 2.5 s, UP
# from 2.6 s (round 40) growing one packet per 10 ms to 2.9 s (round 44),
# then DOWN.
def model(up_grows=True):
    out = []
    for i in range(400):
        t = i / 100
        mode = ("startup" if t < 0.4 else "probe_bw_cruise" if t < 2.5 else
                "probe_bw_refill" if t < 2.6 else "probe_bw_up" if t < 2.9 else "probe_bw_down")
        ilt = "" if t < 0.4 else 70 * MSS
        if mode == "probe_bw_up" and up_grows:
            ilt = (70 + round((t - 2.6) * 100)) * MSS
        if t >= 2.9:
            ilt = (100 if up_grows else 60) * MSS
        out.append({"time_s": f"{t:.2f}", "mode": mode, "inflight_longterm_bytes": ilt,
                    "round_count": 40 + (i - 260) * 2 // 15 if i >= 260 else 30})
    return out


def flow(inflight, cwnd_peak):
    return [{"time_s": f"{i / 100:.2f}", "inflight_bytes": inflight * MSS,
             "cwnd_bytes": (cwnd_peak if i == 30 else inflight) * MSS, "drops": 0,
             "retransmitted_packets": 0 if i < 50 else 7}
            for i in range(400)]


class FirstProbe(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        base = Path(self.tmp.name) / "path"
        rep = base / "rep-0"
        cc = model()
        write(str(rep / "kernel-flow-0.cc.csv"), list(cc[0]), cc)
        for k, (inf, peak) in enumerate([(60, 60), (56, 84)]):
            fl = flow(inf, peak)
            write(str(rep / f"kernel-flow-{k}.csv"), list(fl[0]), fl)
        # The emulator's log: the first packet at 0.3 s; an overflow at
        # 2.0-2.05 s (3 drops of flow 1, 1 of flow 0), another at 2.7 s.
        cols = ["enqueue_s", "direction", "dropped", "dst_port"]
        pk = [{"enqueue_s": 0.3, "direction": "forward", "dropped": "", "dst_port": 5201}]
        for t, port in [(2.30, 5202), (2.32, 5202), (2.345, 5201), (2.35, 5202), (3.0, 5201)]:
            pk.append({"enqueue_s": t, "direction": "forward", "dropped": "tail", "dst_port": port})
        pk.append({"enqueue_s": 2.5, "direction": "reverse", "dropped": "tail", "dst_port": 5201})
        write(str(rep / "emu-log" / "packets.csv"), cols, pk)
        # One simulator draw: UP cut at once (no growth), and its flows'
        # drop counters step at 2.95 s.
        m = [dict(x, flow=0) for x in model(up_grows=False)]
        write(str(rep / "sim" / "model.csv"), list(m[0]), m)
        rows = []
        for k, (inf, peak) in enumerate([(55, 55), (52, 72)]):
            for x in flow(inf, peak):
                x = dict(x, flow=k)
                if float(x["time_s"]) >= 2.95:
                    x["drops"] = 2 + k
                rows.append(x)
        write(str(rep / "sim" / "flows.csv"), list(rows[0]), rows)
        self.base = str(base)

    def tearDown(self):
        self.tmp.cleanup()

    def test_kernel_drops_are_timed_from_the_first_packet_and_named_by_port(self):
        r = fp.kernel_run(self.base + "/rep-0")
        self.assertEqual([f for _, f in r.drops], [1, 1, 0, 1, 0])
        self.assertAlmostEqual(r.drops[0][0], 2.0)
        eps = fp.episodes(r.drops)
        self.assertEqual([len(e) for e in eps], [4, 1])

    def test_simulator_drops_come_from_the_counters(self):
        r = fp.sim_run(self.base + "/rep-0/sim")
        self.assertEqual(r.drops, [(2.95, 0), (2.95, 0), (2.95, 1), (2.95, 1), (2.95, 1)])

    def test_first_up(self):
        s, e, rounds, a, b = fp.first_up(fp.kernel_run(self.base + "/rep-0").model)
        self.assertEqual((s, e, rounds), (2.6, 2.9, 4))
        self.assertAlmostEqual(a, 70)
        self.assertAlmostEqual(b, 100)
        self.assertAlmostEqual(fp.first_up(fp.sim_run(self.base + "/rep-0/sim").model)[4], 60)

    def test_report(self):
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(fp.main(["first_probe.py", self.base]), 0)
        text = out.getvalue()
        self.assertIn("kernel: 1 runs", text)
        self.assertIn("4.00 rounds, inflight_longterm 70.0 -> 100.0; ended cut below its start in 0 of 1", text)
        self.assertIn("ended cut below its start in 1 of 1", text)
        # Kernel: overflow 2.00 s, REFILL 2.50 s: before. Simulator: 2.95 s.
        self.assertIn("median 2.00 s; first REFILL median 2.50 s; overflow at least 50 ms before REFILL in 1 of 1; "
                      "the flows' inflight 45 ms before it: median 116 packets", text)
        self.assertIn("median 2.95 s; first REFILL median 2.50 s; overflow at least 50 ms before REFILL in 0 of 1", text)
        self.assertIn("flow 0 60, flow 1 56, sum 116 packets", text)
        # Kernel: drops at 2.00, 2.02 (flow 1), 2.045 (flow 0), 2.05 (flow 1).
        self.assertIn("drops of flow 0 / flow 1 in its first 40 ms 0.0 / 2.0, the next 40 ms 1.0 / 1.0, after 0.0 / 0.0", text)
        self.assertIn("flow 1's largest cwnd before 0.6 s: median 84 packets, retransmitted by 1 s: median 7", text)
        # Kernel: raised 70 -> 99 one packet a sample in UP, then 100.
        self.assertIn("raised by 30.0, cut by 0.0 packets", text)
        # Simulator: 70 -> 60 when DOWN began.
        self.assertIn("raised by 0.0, cut by 10.0 packets", text)
        self.assertIn("flow 1's largest cwnd before 0.6 s: median 72 packets", text)

    def test_a_missing_file_is_named(self):
        os.remove(self.base + "/rep-0/emu-log/packets.csv")
        with self.assertRaises(SystemExit) as e:
            fp.main(["first_probe.py", self.base])
        self.assertIn("emu-log/packets.csv is missing", str(e.exception))


if __name__ == "__main__":
    unittest.main()

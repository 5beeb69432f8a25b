#!/usr/bin/env python3
"""Tests of kernel_window_trace.py's parsing and summary on trace lines
written here in the kernel's format (the run itself needs root and a
6.16+ kernel; scripts/test.sh runs these). Stdlib only."""

import contextlib
import io
import subprocess
import sys
import tempfile
import unittest
from unittest import mock
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_window_trace as kwt  # noqa: E402

MSS = 1000


def probe(t, una, nxt, wnd, cwnd=10, dest="10.0.0.2:5201"):
    return (f"   tcp-send-77  [001] ..s1.  {t:.6f}: tcp_probe: family=AF_INET src=10.0.0.1:40000 "
            f"dest={dest} mark=0x0 data_len=0 snd_nxt={nxt:#x} snd_una={una:#x} snd_cwnd={cwnd} "
            f"ssthresh=2147483647 snd_wnd={wnd} srtt=800000 rcv_wnd=65536 sock_cookie=1 "
            "skbaddr=0000000000000000 skaddr=0000000000000000")


def grow(t, copied, inq, space, ooo, clamp):
    return (f"   tcp-recv-78  [000] .....  {t:.6f}: tcp_rcvbuf_grow: time=100000 rtt_us=100000 "
            f"copied={copied} inq={inq} space={space} ooo={ooo} scaling_ratio=160 rcvbuf=4000000 "
            f"rcv_ssthresh=50000 window_clamp={clamp} rcv_wnd=40000 family=AF_INET sport=5201 "
            "dport=40000 saddr=10.0.0.2 daddr=10.0.0.1 saddrv6=::ffff:10.0.0.2 daddrv6=::ffff:10.0.0.1 "
            "skaddr=0000000000000000 sock_cookie=1")


def state(t, s):
    return (f"   tcp-send-77  [001] ..s1.  {t:.6f}: tcp_cong_state_set: family=AF_INET sport=40000 "
            f"dport=5201 saddr=10.0.0.1 daddr=10.0.0.2 saddrv6=::ffff:10.0.0.1 "
            f"daddrv6=::ffff:10.0.0.2 cong_state={s}")


# Sequence numbers start 3,000 bytes below 2^32, so they wrap: the edge
# and the sent point are counted across it.
BASE = (1 << 32) - 3000
LINES = [
    "# tracer: nop",
    probe(10.0, BASE, BASE + 10 * MSS, 20 * MSS),          # 10 segments of room
    state(10.05, 3),
    probe(10.1, BASE + 2 * MSS, BASE + 22 * MSS, 20 * MSS),  # at the edge: 22 = 2 + 20
    probe(10.3, BASE + 5 * MSS, BASE + 25 * MSS, 20 * MSS),  # at the edge again
    probe(10.4, BASE + 20 * MSS, BASE + 30 * MSS, 20 * MSS),
    # Another connection's ACK (not compare's port) is left out.
    probe(10.45, 7, 7, 7, dest="10.0.0.2:22"),
    grow(10.2, 30 * MSS, 5 * MSS, 10 * MSS, 12 * MSS, 60 * MSS),
    probe(11.0, BASE + 40 * MSS, BASE + 45 * MSS, 20 * MSS),
]


class KernelWindowTrace(unittest.TestCase):
    def test_events_become_rows_in_segments_from_the_first_ack(self):
        sender, rcvbuf, states = kwt.parse(LINES, MSS)
        self.assertEqual(len(sender), 5)
        self.assertEqual(sender[1], {"time_s": 0.1, "acked": 2.0, "sent": 22.0, "edge": 22.0,
                                     "room": 0.0, "cwnd": 10})
        self.assertEqual(sender[0]["room"], 10.0)
        self.assertEqual(rcvbuf, [{
            "time_s": 0.2, "copied": 30.0, "inq": 5.0, "measured": 25.0, "previous": 10.0, "ooo": 12.0,
            "rcvbuf_bytes": 4000000, "rcv_ssthresh": 50.0, "window_clamp": 60.0, "rcv_wnd": 40.0,
            "scaling_ratio": 160, "rtt_us": 100000,
        }])
        self.assertEqual(states, [{"time_s": 0.05, "state": 3}])

    def test_the_time_at_the_edge_counts_up_to_each_event_that_finds_it(self):
        sender, _, _ = kwt.parse(LINES, MSS)
        # 0.0 -> 0.1 and 0.1 -> 0.3 end at the edge; 0.3 -> 0.4 does not.
        self.assertAlmostEqual(kwt.at_edge_s(sender, 5.0), 0.3)
        # Only the first 0.2 s: 0.1 and the first half of the next.
        self.assertAlmostEqual(kwt.at_edge_s(sender, 0.2), 0.2)

    def test_a_saved_trace_is_summarised_without_root(self):
        with tempfile.TemporaryDirectory() as t:
            trace = Path(t) / "trace.txt"
            trace.write_text("\n".join(LINES) + "\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = kwt.main(["--parse", str(trace), "--mss", str(MSS)])
            self.assertEqual(rc, 0)
            text = out.getvalue()
            self.assertIn("sender at the offered edge for 0.300 s of the first 5 s", text)
            self.assertIn("| 0.200 | 30 | 5 | 25 | 10 | 12 | 60 | 50 | 40 |", text)
            for name in ["sender.csv", "rcvbuf.csv", "states.csv"]:
                self.assertTrue((Path(t) / name).is_file(), name)

    def test_bad_input_is_named(self):
        with self.assertRaisesRegex(kwt.Failed, "no tcp_probe event of the sender"):
            kwt.parse([state(1.0, 3)], MSS)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(kwt.main(["--parse", "/nonexistent/trace.txt"]), 1)
        self.assertIn("/nonexistent/trace.txt", err.getvalue())
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            kwt.main([])
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            kwt.main(["--parse", "x", "--seconds", "0"])
        # A kernel whose event lacks a field, or a malformed one, is named
        # by line and field.
        no_wnd = probe(1.0, 0, 0, 0).replace(" snd_wnd=0", "")
        with self.assertRaisesRegex(kwt.Failed, r"trace line 2 \(tcp_probe\): no field `snd_wnd`"):
            kwt.parse([LINES[1], no_wnd], MSS)
        with self.assertRaisesRegex(kwt.Failed, "field `cong_state` is 'x', not a number"):
            kwt.parse([LINES[1], state(1.0, "x")], MSS)
        with self.assertRaisesRegex(kwt.Failed, r"\(tcp_rcvbuf_grow\): no field `inq`"):
            kwt.parse([LINES[1], grow(1.0, 1, 2, 3, 4, 5).replace(" inq=2", "")], MSS)

    def test_a_guessed_segment_size_is_said(self):
        with tempfile.TemporaryDirectory() as t:
            trace = Path(t) / "trace.txt"
            trace.write_text("\n".join(LINES) + "\n")
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                self.assertEqual(kwt.main(["--parse", str(trace)]), 0)
            self.assertIn("the tables count segments of 1448 bytes (give --mss", err.getvalue())
            # Given, it is not guessed, and nothing is said.
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                self.assertEqual(kwt.main(["--parse", str(trace), "--mss", str(MSS)]), 0)
            self.assertNotIn("segments of", err.getvalue())

    def test_a_failed_mount_is_named_and_what_was_mounted_is_unmounted(self):
        calls = []

        def fake_run(cmd, **kw):
            calls.append(cmd[0])
            code = 32 if cmd[0] == "mount" and fake_run.fail else 0
            return subprocess.CompletedProcess(cmd, code, stdout="mount: permission denied\n")

        with tempfile.TemporaryDirectory() as t, \
                mock.patch.object(kwt, "TRACING", Path(t)), \
                mock.patch.object(kwt.subprocess, "run", fake_run), \
                mock.patch.object(kwt.os, "geteuid", return_value=0):
            fake_run.fail = True
            with self.assertRaisesRegex(kwt.Failed, "mounting it failed \\(exit 32\\): mount: permission denied"):
                kwt.run_traced(None, Path(t))
            self.assertEqual(calls, ["mount"])
            # Mounted by the run, unmounted after it, also when it fails.
            fake_run.fail = False
            calls.clear()
            with mock.patch.object(kwt, "traced", side_effect=kwt.Failed("compare failed")), \
                    contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaisesRegex(kwt.Failed, "compare failed"):
                    kwt.run_traced(None, Path(t))
            self.assertEqual(calls, ["mount", "umount"])
            # An umount that cannot run is said, and the run's own error
            # still ends it.
            calls.clear()

            def no_umount(cmd, **kw):
                calls.append(cmd[0])
                if cmd[0] == "umount":
                    raise FileNotFoundError(2, "No such file or directory")
                return subprocess.CompletedProcess(cmd, 0, stdout="")
            err = io.StringIO()
            with mock.patch.object(kwt.subprocess, "run", no_umount), \
                    mock.patch.object(kwt, "traced", side_effect=kwt.Failed("compare failed")), \
                    contextlib.redirect_stderr(err):
                with self.assertRaisesRegex(kwt.Failed, "compare failed"):
                    kwt.run_traced(None, Path(t))
            self.assertEqual(calls, ["mount", "umount"])
            self.assertIn("cannot run umount", err.getvalue())
            # Already mounted: neither mounted nor unmounted.
            (Path(t) / "events").mkdir()
            calls.clear()
            with mock.patch.object(kwt, "traced", return_value="trace"):
                self.assertEqual(kwt.run_traced(None, Path(t)), "trace")
            self.assertEqual(calls, [])

    def test_tracefs_is_restored_step_by_step_even_when_a_write_fails(self):
        with tempfile.TemporaryDirectory() as t:
            old = kwt.TRACING
            kwt.TRACING = Path(t)
            try:
                for e in kwt.EVENTS:
                    (Path(t) / "events" / "tcp" / e).mkdir(parents=True)
                    (Path(t) / "events" / "tcp" / e / "enable").write_text("1")
                # A write that fails (here: a directory where a file was).
                (Path(t) / "trace").mkdir()
                with self.assertRaisesRegex(kwt.Failed, "trace: cannot write"):
                    kwt.write_tracing("trace", "")
                err = io.StringIO()
                with contextlib.redirect_stderr(err):
                    kwt.restore_tracing("1408")
                self.assertIn("restoring tracefs", err.getvalue())
                # The steps after the failed one still ran.
                self.assertEqual((Path(t) / "buffer_size_kb").read_text(), "1408")
                for e in kwt.EVENTS:
                    self.assertEqual((Path(t) / "events" / "tcp" / e / "enable").read_text(), "0")
            finally:
                kwt.TRACING = old


if __name__ == "__main__":
    unittest.main()

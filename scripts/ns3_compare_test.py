#!/usr/bin/env python3
"""Tests of ns3_compare.py's finding of an ns-3 install, its parsing and
its table, on fake installs (the comparison itself needs ns-3 and minutes,
and is run by hand). When this machine has Debian's ns-3 (`libns3-dev`),
one_flow.cc is also built against it and run for a simulated second."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ns3_compare as nc  # noqa: E402


def fake_install(root, lib_sub, lib_name, header=True):
    """An ns-3 install tree with only what find_ns3 looks at."""
    root = Path(root)
    if header:
        (root / "include" / "ns3").mkdir(parents=True)
        (root / "include" / "ns3" / "tcp-bbr.h").write_text("")
    (root / lib_sub).mkdir(parents=True, exist_ok=True)
    (root / lib_sub / lib_name).write_text("")
    return root


class FindNs3(unittest.TestCase):
    def test_the_wheels_layout_and_version(self):
        with tempfile.TemporaryDirectory() as d:
            fake_install(d, "lib64", "libns3.44-core.so")
            n = nc.find_ns3(d)
            self.assertEqual((n.stem, n.version, n.libdir), ("ns3.44-", "3.44", Path(d) / "lib64"))
            self.assertEqual(nc.cxx_standard(n.version), "c++20")

    def test_debians_layout_takes_the_version_from_the_soname(self):
        with tempfile.TemporaryDirectory() as d:
            lib = "lib/x86_64-linux-gnu"
            fake_install(d, lib, "libns3-core.so.37")
            os.symlink("libns3-core.so.37", Path(d) / lib / "libns3-core.so")
            n = nc.find_ns3(d)
            self.assertEqual((n.stem, n.version), ("ns3-", "3.37"))
            self.assertEqual(nc.cxx_standard(n.version), "c++17")

    def test_missing_headers_or_library_say_what_is_missing(self):
        with tempfile.TemporaryDirectory() as d:
            fake_install(d, "lib64", "libns3.44-core.so", header=False)
            with self.assertRaisesRegex(nc.Failed, r"no ns-3 headers .*tcp-bbr\.h"):
                nc.find_ns3(d)
        with tempfile.TemporaryDirectory() as d:
            fake_install(d, "lib64", "libsomething-else.so")
            with self.assertRaisesRegex(nc.Failed, r"no ns-3 library .*libns3\*-core\.so"):
                nc.find_ns3(d)

    def test_unknown_version_builds_as_cxx20(self):
        self.assertEqual(nc.cxx_standard("unknown"), "c++20")
        self.assertEqual(nc.cxx_standard("3.41"), "c++17")


class Parsing(unittest.TestCase):
    def test_delivered_bytes(self):
        self.assertEqual(nc.parse_ns3("delivered_bytes=357703784 simulated_s=30 cc=TcpBbr\n"), 357703784)

    def test_a_run_that_delivered_nothing_or_printed_nothing_fails(self):
        with self.assertRaisesRegex(nc.Failed, "delivered nothing"):
            nc.parse_ns3("delivered_bytes=0 simulated_s=30 cc=TcpBbr\n")
        with self.assertRaisesRegex(nc.Failed, "no delivered_bytes"):
            nc.parse_ns3("Segmentation fault\n")

    def test_table_takes_the_median_of_the_pairs_ratios(self):
        # ratios 100, 120, 80 -> 100; the medians' ratio would be 5.0/0.05 = 100 too,
        # so one pair is skewed to tell them apart: 6.0/0.04 = 150.
        pairs = [(5.0, 375_000_000, 0.05, 366_000_000),
                 (6.0, 375_000_000, 0.04, 366_000_000),
                 (4.0, 375_000_000, 0.05, 366_000_000)]
        t = nc.table("ns-3 3.44", "bbr", 30, pairs)
        self.assertIn("| ns-3 3.44 `TcpBbr` | 5.000 s (4.000–6.000) | 100.0 Mbit/s |", t)
        self.assertIn("| bbrlab `bbr` | 0.050 s (0.040–0.050) | 97.6 Mbit/s |", t)
        self.assertIn("median of 3 pairs: **100 ×** (pairs 80–150 ×)", t)


class Arguments(unittest.TestCase):
    def check_error(self, argv, text):
        err = tempfile.TemporaryFile(mode="w+")
        stderr, sys.stderr = sys.stderr, err
        try:
            with self.assertRaises(SystemExit) as e:
                nc.parse_args(argv)
        finally:
            sys.stderr = stderr
        self.assertEqual(e.exception.code, 2)
        err.seek(0)
        self.assertIn(text, err.read())

    def test_bad_arguments_are_clear_errors(self):
        self.check_error(["--pairs", "0"], "--pairs must be at least 1 (got 0)")
        self.check_error(["--seconds", "0.01"], "--seconds must be from 0.1 to 3600 (got 0.01)")
        self.check_error(["--cc", "reno"], "invalid choice: 'reno'")
        self.check_error(["--bbrlab", "/nonexistent/bbrlab"], "not an executable file")
        with tempfile.TemporaryDirectory() as d:
            # A directory is executable (searchable) but is no program.
            self.check_error(["--bbrlab", d], "not an executable file")


@unittest.skipUnless(Path("/usr/include/ns3/tcp-bbr.h").is_file() and shutil.which("g++"),
                     "Debian's ns-3 (libns3-dev) is not installed")
class WithDebiansNs3(unittest.TestCase):
    def test_one_flow_builds_runs_and_delivers(self):
        program = nc.compile_program(nc.find_ns3("/usr"))
        p = subprocess.run([str(program), "--cc=TcpBbr", "--seconds=1"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        # 1 s of a 100 Mbit/s path, start-up included: well over 2 MB.
        self.assertGreater(nc.parse_ns3(p.stdout), 2_000_000)
        bad = subprocess.run([str(program), "--cc=TcpNoSuchThing"], capture_output=True, text=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("no congestion control ns3::TcpNoSuchThing", bad.stderr)


if __name__ == "__main__":
    unittest.main()

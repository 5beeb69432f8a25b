#!/usr/bin/env python3
"""Tests of speed_compare.py's parsing and table (the measuring itself
builds old commits for minutes and is run by hand)."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed_compare as sc  # noqa: E402


class Parsing(unittest.TestCase):
    def test_callgrind_count_from_either_line(self):
        self.assertEqual(sc.callgrind_instructions("==1== Collected : 1234\n==1== \n==1== I   refs:      1,234\n"), 1234)
        self.assertEqual(sc.callgrind_instructions("==9== I   refs:      190,594,896\n"), 190594896)
        self.assertIsNone(sc.callgrind_instructions("valgrind: command not found\n"))

    def test_median_ratio_is_of_the_pairs_not_of_the_medians(self):
        pairs = [(1.0, 2.0), (3.0, 3.0), (0.9, 1.0)]
        # pair ratios 0.5, 1.0, 0.9 -> 0.9; medians' ratio would be 1.0/2.0
        self.assertAlmostEqual(sc.median_ratio(pairs), 0.9)

    def test_table_marks_missing_figures(self):
        t = sc.table([("`old`", 623_100_000, None, 1.5, 0.6, None),
                      ("this tree", 300_000_000, 250_000_000, 0.9, None, 85.7)])
        lines = t.splitlines()
        self.assertEqual(len(lines), 4)
        self.assertIn("| `old` | 623.1 M | n/a | 1.500 s | 0.600 | n/a |", lines)
        self.assertIn("| this tree | 300.0 M | 250.0 M | 0.900 s |  | 85.7 MiB |", lines)

    def test_bad_pairs_is_a_clear_error(self):
        with self.assertRaises(SystemExit) as e:
            sc.main(["--pairs", "0", "HEAD"])
        self.assertEqual(e.exception.code, 2)

    def test_scenarios_are_valid_toml(self):
        import tomllib
        one = tomllib.loads(sc.ONE_FLOW.format(duration="20s", algorithm="bbr"))
        self.assertEqual(one["flow"][0]["algorithm"], "bbr")
        self.assertEqual(one["link"]["forward"]["queue"]["limit"], "667pkt")
        self.assertEqual(tomllib.loads(sc.C2)["link"]["forward"]["rate"], "10gbit")


if __name__ == "__main__":
    unittest.main()

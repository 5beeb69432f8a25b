#!/usr/bin/env python3
"""Tests of the speed guard's judge (scripts/speed_guard.py), run by
scripts/speed-guard.sh before the benchmarks. Stdlib only."""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import speed_guard  # noqa: E402


def summary_line(group, id_, ir, both=False):
    metrics = {"Both": [{"Int": ir}, {"Int": ir}]} if both else {"Left": {"Int": ir}}
    return json.dumps({
        "module_path": f"instructions::{group}::fn", "id": id_,
        "profiles": [{"summaries": {"total": {"summary": {"Callgrind": {"Ir": {"metrics": metrics}}}}}}],
    })


class Judge(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.baseline = self.dir / "baseline.json"
        self.baseline.write_text(json.dumps({
            "toolchain": speed_guard.toolchain(),
            "instructions": {"simulator/bbr": 1000, "controller/bbr": 100},
        }))

    def run_check(self, lines):
        s = self.dir / "summary.jsonl"
        s.write_text("\n".join(lines) + "\n")
        return speed_guard.check(self.baseline, s)

    def test_within_tolerance_passes_and_a_second_run_is_read_too(self):
        self.assertEqual(self.run_check([summary_line("simulator", "bbr", 1029),
                                         summary_line("controller", "bbr", 97, both=True)]), 0)

    def test_more_than_three_percent_fails(self):
        self.assertEqual(self.run_check([summary_line("simulator", "bbr", 1031),
                                         summary_line("controller", "bbr", 100)]), 1)

    def test_a_missing_or_new_benchmark_fails(self):
        self.assertEqual(self.run_check([summary_line("simulator", "bbr", 1000)]), 1)
        self.assertEqual(self.run_check([summary_line("simulator", "bbr", 1000),
                                         summary_line("controller", "bbr", 100),
                                         summary_line("controller", "cubic", 50)]), 1)

    def test_another_toolchain_fails_with_a_reason(self):
        data = json.loads(self.baseline.read_text())
        data["toolchain"]["rustc"] = "rustc 0.0.0"
        self.baseline.write_text(json.dumps(data))
        self.assertEqual(self.run_check([summary_line("simulator", "bbr", 1000),
                                         summary_line("controller", "bbr", 100)]), 1)

    def test_update_writes_what_check_then_accepts(self):
        s = self.dir / "s.jsonl"
        s.write_text(summary_line("simulator", "bbr", 5) + "\n")
        speed_guard.update(self.baseline, s)
        self.assertEqual(json.loads(self.baseline.read_text())["instructions"], {"simulator/bbr": 5})
        self.assertEqual(speed_guard.check(self.baseline, s), 0)

    def test_bench_path_lines_count_alongside_gungraun_s(self):
        self.baseline.write_text(json.dumps({
            "toolchain": speed_guard.toolchain(),
            "instructions": {"simulator/bbr": 1000, "binary/bench_path_bbr": 2000},
        }))
        bench = json.dumps({"benchmark": "binary/bench_path_bbr", "instructions": 2061})
        self.assertEqual(self.run_check([summary_line("simulator", "bbr", 1000), bench]), 1)
        bench = json.dumps({"benchmark": "binary/bench_path_bbr", "instructions": 2059})
        self.assertEqual(self.run_check([summary_line("simulator", "bbr", 1000), bench]), 0)

    def test_a_bench_path_line_without_an_integer_is_a_clear_error(self):
        bad = json.dumps({"benchmark": "binary/bench_path_bbr", "instructions": "many"})
        with self.assertRaises(SystemExit) as e:
            self.run_check([bad])
        self.assertIn("summary.jsonl:1: not a benchmark summary", str(e.exception))
        self.assertIn("'many'", str(e.exception))

    def test_a_line_of_the_wrong_shape_is_a_clear_error_not_a_traceback(self):
        for bad in ['[1, 2]', '"text"', json.dumps({"benchmark": "binary/x", "instructions": True})]:
            with self.assertRaises(SystemExit) as e:
                self.run_check([bad])
            self.assertIn("summary.jsonl:1: not a benchmark summary", str(e.exception), bad)

    def test_bench_path_of_a_missing_binary_fails_with_the_reason(self):
        err = subprocess.run([sys.executable, str(Path(speed_guard.__file__)), "bench-path",
                              str(self.dir / "no-such-bbrlab")], capture_output=True, text=True)
        self.assertEqual(err.returncode, 1)
        self.assertIn("no-such-bbrlab: not an executable file", err.stderr)
        self.assertEqual(err.stdout, "")
        # A directory is searchable, so "executable", but no program.
        err = subprocess.run([sys.executable, str(Path(speed_guard.__file__)), "bench-path",
                              str(self.dir)], capture_output=True, text=True)
        self.assertEqual(err.returncode, 1)
        self.assertIn("not an executable file", err.stderr)

    def test_a_baseline_commit_without_a_reason_fails(self):
        repo = self.dir / "repo"
        repo.mkdir()
        git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)
        git("init", "-q")
        git("config", "user.email", "t@example.invalid")
        git("config", "user.name", "t")
        f = repo / "baseline.json"
        f.write_text("{}")
        git("add", ".")
        git("commit", "-qm", "first\n\nSpeed-baseline: the first measurement")
        self.assertEqual(speed_guard_trailers(repo, f), 0)
        f.write_text("{ }")
        git("commit", "-qam", "moved it")
        self.assertEqual(speed_guard_trailers(repo, f), 1)


def speed_guard_trailers(repo, f):
    import os
    old = os.getcwd()
    os.chdir(repo)
    try:
        return speed_guard.trailers(Path(f.name))
    finally:
        os.chdir(old)


if __name__ == "__main__":
    unittest.main()

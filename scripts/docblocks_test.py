#!/usr/bin/env python3
"""Tests of docblocks.py's `output=next` rule on a hand-made repository
(scripts/test.sh runs these): a shell block whose standard output must be
the pasted text after it. Stdlib only."""

import contextlib
import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docblocks  # noqa: E402

FENCE = "```"


def book(blocks):
    """README.md holding `blocks`: (marker or None, language, body) each."""
    out = ["# Test", ""]
    for marker, lang, body in blocks:
        if marker:
            out.append(f"<!-- {marker} -->")
        out += [FENCE + lang, body.rstrip("\n"), FENCE, ""]
    return "\n".join(out) + "\n"


def repo_with(text):
    d = tempfile.TemporaryDirectory()
    (Path(d.name) / "README.md").write_text(text)
    return d


def quiet(f, *args):
    """f(*args) with its prints kept: (result, stdout, stderr)."""
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        r = f(*args)
    return r, o.getvalue(), e.getvalue()


class OutputNext(unittest.TestCase):
    def run_blocks(self, blocks):
        with repo_with(book(blocks)) as d:
            return quiet(docblocks.run_shell, Path(d), Path(d) / "scratch", [])

    def test_the_same_output_passes(self):
        rc, out, err = self.run_blocks([
            ("run: output=next", "sh", "printf 'a  1\\nb  2\\n'\necho progress >&2"),
            (None, "text", "a  1\nb  2\n"),
        ])
        self.assertEqual(rc, 0, err)
        self.assertIn("1 run, 0 skipped, 0 failed", out)

    def test_a_stale_paste_fails_naming_the_line(self):
        rc, _, err = self.run_blocks([
            ("run: output=next", "sh", "printf 'a  1\\nb  3\\n'"),
            (None, "text", "a  1\nb  2\n"),
        ])
        self.assertEqual(rc, 1)
        self.assertIn("line 2 is 'b  3', the book has 'b  2'", err)

    def test_a_shorter_output_fails(self):
        rc, _, err = self.run_blocks([
            ("run: output=next", "sh", "echo a"),
            (None, "text", "a\nb\n"),
        ])
        self.assertEqual(rc, 1)
        self.assertIn("line 2 is '(no more lines)'", err)

    def test_stderr_is_not_compared(self):
        rc, _, err = self.run_blocks([
            ("run: output=next", "sh", "echo a; echo 'Compiling x' >&2"),
            (None, "text", "a\n"),
        ])
        self.assertEqual(rc, 0, err)

    def test_without_the_marker_nothing_is_compared(self):
        rc, _, err = self.run_blocks([
            (None, "sh", "echo something else"),
            (None, "text", "a\n"),
        ])
        self.assertEqual(rc, 0, err)

    def test_differences_in_trailing_space_are_not_differences(self):
        self.assertIsNone(docblocks.output_difference("a  \nb\n\n", "a\nb"))
        self.assertEqual(docblocks.output_difference("a\n", "b\n"),
                         "line 1 is 'a', the book has 'b'")


class Check(unittest.TestCase):
    def check(self, blocks):
        with repo_with(book(blocks)) as d:
            blocks = docblocks.all_blocks(Path(d))
            errs = docblocks.check_outputs(blocks)
            for b in blocks:
                errs += docblocks.check_block(b, Path(d))
            return errs

    def test_output_next_needs_a_text_block_next(self):
        errs = self.check([("run: output=next", "sh", "echo a"), (None, "toml", "a = 1")])
        self.assertEqual(len(errs), 1)
        self.assertIn("needs a ```text block next", errs[0])
        errs = self.check([("run: output=next", "sh", "echo a")])
        self.assertEqual(len(errs), 1)

    def test_output_takes_only_next(self):
        errs = self.check([("run: output=prev", "sh", "echo a"), (None, "text", "a")])
        self.assertTrue(any("output= takes `next`" in e for e in errs), errs)

    def test_a_well_formed_pair_passes(self):
        self.assertEqual(self.check([("run: output=next", "sh", "echo a"), (None, "text", "a")]), [])


if __name__ == "__main__":
    unittest.main()

"""The Python blocks of README.md and the book (docs/) run as written.

Each ```python block not marked `<!-- not run: REASON -->` (the convention
is in scripts/test-docs.sh) is run on its own, in a fresh Python process,
from a scratch directory whose scenarios/, docs/ ... link to the
repository's, so the blocks' relative paths resolve as they do for a reader
at the top of the checkout and their outputs (report/, *.parquet) stay out
of the tree. The blocks are found by scripts/docblocks.py, the same parser
the shell blocks and the link check use.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "scripts"))
import docblocks  # noqa: E402

#: Each block's time limit: the longest (a Dask sweep of 18 runs) takes
#: well under a minute with the test build of the extension.
TIMEOUT_S = 300

BLOCKS = [b for b in docblocks.all_blocks(REPO) if b.lang == "python"]
RUN = [b for b in BLOCKS if b.not_run is None]


def test_the_docs_have_python_blocks_and_the_readmes_runs():
    # A guard against the parser silently finding nothing.
    assert any(b.path.name == "README.md" for b in RUN), "README.md's Python example is not run"


@pytest.mark.parametrize("block", RUN, ids=[str(b.path.relative_to(REPO)) + f":{b.line}" for b in RUN])
def test_python_block_runs(block, tmp_path):
    cwd = docblocks.scratch_dir(REPO, tmp_path / "scratch")
    try:
        p = subprocess.run(
            [sys.executable, "-c", block.body],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        pytest.fail(f"{block.where}: did not finish within {TIMEOUT_S} s; output:\n{out[-4000:]}")
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0, f"{block.where} failed (exit {p.returncode}):\n{block.body}\n--- output:\n{out[-4000:]}"

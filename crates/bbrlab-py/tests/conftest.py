"""Shared scenarios for the Python package's tests.

Runs are kept short (a second or two of simulated time on a 10 Mbit/s
path) so the suite is quick even with the extension built at opt-level 1.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

#: A small scenario as a dict: 10 Mbit/s, 20 ms RTT, one BBR flow, 2 s.
SMALL = {
    "name": "small",
    "duration": "2s",
    "sample_interval": "100ms",
    "link": {
        "forward": {
            "rate": "10mbit",
            "delay": "10ms",
            "queue": {"limit": "100pkt"},
            "loss": {"bernoulli": 0.01},
        },
        "reverse": {"delay": "10ms"},
    },
    "flow": [{"algorithm": "bbr"}],
}

SMALL_TOML = """\
name = "small"
duration = "2s"
sample_interval = "100ms"

[link.forward]
rate = "10mbit"
delay = "10ms"
queue = { limit = "100pkt" }
loss = { bernoulli = 0.01 }

[link.reverse]
delay = "10ms"

[[flow]]
algorithm = "bbr"
"""


@pytest.fixture
def small() -> dict:
    return copy.deepcopy(SMALL)


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL_TOML)
    return p


@pytest.fixture(scope="session")
def cli() -> Path:
    """The bbrlab binary the workspace builds (the CLI side of 'one
    implementation'); built here if the test run did not build it."""
    exe = Path(os.environ.get("BBRLAB_CLI", REPO / "target" / "debug" / "bbrlab"))
    if not exe.exists():
        cargo = shutil.which("cargo")
        if cargo is None:
            pytest.skip("no bbrlab binary and no cargo to build it")
        subprocess.run([cargo, "build", "-q", "-p", "bbrlab", "--bin", "bbrlab"], cwd=REPO, check=True)
    return exe

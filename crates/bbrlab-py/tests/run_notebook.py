"""Executes a notebook top to bottom with nbclient (in the venv's python3
kernel) and fails on the first cell that raises, so examples cannot rot.
Usage: python run_notebook.py NOTEBOOK [--timeout SECONDS]."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("notebook", type=Path)
    p.add_argument("--timeout", type=int, default=600, help="per cell, seconds")
    args = p.parse_args()
    nb = nbformat.read(args.notebook, as_version=4)
    NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(args.notebook.parent)}}).execute()
    images = sum(
        1
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    )
    if images == 0:
        print(f"{args.notebook}: ran, but drew no figure", file=sys.stderr)
        return 1
    print(f"{args.notebook}: every cell ran, {images} figure(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

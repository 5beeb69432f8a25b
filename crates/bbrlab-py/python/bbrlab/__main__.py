"""``python -m bbrlab``: the CLI's sweep on Dask.

    python -m bbrlab sim SCENARIO [--dask-scheduler ADDRESS] [--seeds 1,2,3]
                                  [--workers N] [--out DIR]

runs the scenario's ``[sweep]`` (and ``--seeds``) as Dask tasks (batches of
runs, ``--batch-size``): on the
scheduler at ADDRESS (``tcp://host:8786``, any Dask cluster), or without it
on a LocalCluster of this machine. It writes ``DIR/summary.parquet`` (a
Parquet dataset partitioned by the swept parameters) and
``DIR/summary.csv``, prints the failed runs with their reasons, and exits
with status 1 if any run failed.

    python -m bbrlab bench      the Python/Dask benchmark (bbrlab.bench)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _seed_list(text: str):
    """``--seeds 1,2,3``: whole numbers from 0, refused with the bad item
    (argparse prints it as a usage error)."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit():
            raise argparse.ArgumentTypeError(
                f"{item!r} in {text!r}: seeds are whole numbers from 0, separated by commas (1,2,3)"
            )
        out.append(int(item))
    return out


def _count(least: int):
    """An argparse type: a whole number >= ``least``, refused as a usage
    error naming the flag (the library's message named its keyword,
    ``n_workers`` or ``batch_size``, which the command line does not use)."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or v < least:
            raise argparse.ArgumentTypeError(f"{text!r}: a whole number >= {least}")
        return v

    return parse


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bbrlab", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("sim", help="run a scenario's sweep as Dask tasks")
    sim.add_argument("scenario", type=Path)
    sim.add_argument(
        "--dask-scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler (tcp://host:8786); default: a LocalCluster here",
    )
    sim.add_argument(
        "--seeds", type=_seed_list, help="comma-separated seeds to sweep, e.g. 1,2,3"
    )
    sim.add_argument("--workers", type=_count(1), help="LocalCluster workers (default: one per core)")
    sim.add_argument("--out", type=Path, help="output directory (default: out/<scenario stem>)")
    sim.add_argument("--retries", type=_count(0), default=2, help="retries of a run that raises")
    sim.add_argument(
        "--batch-size",
        type=_count(1),
        metavar="N",
        help="runs per Dask task (default: chosen from the runs and the workers)",
    )
    sim.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    sub.add_parser("bench", help="Python/Dask benchmark figures (see bbrlab.bench)")
    args, rest = p.parse_known_args(argv)

    if args.command == "bench":
        from . import bench

        return bench.main(rest)
    if rest:
        p.error(f"unrecognized arguments: {' '.join(rest)}")

    if args.workers is not None and args.dask_scheduler:
        p.error("--workers sizes the LocalCluster started without --dask-scheduler; give one or the other")

    out = args.out or Path("out") / args.scenario.stem
    if out.exists() and not out.is_dir():
        # Checked before the sweep: found after it, the results were lost
        # to a traceback.
        p.error(f"--out {out}: exists and is not a directory")

    import bbrlab

    try:
        df = bbrlab.sweep(
            args.scenario,
            seeds=args.seeds,
            # An address: the sweep connects, and disconnects after.
            client=args.dask_scheduler,
            retries=args.retries,
            n_workers=args.workers,
            batch_size=args.batch_size,
            progress=not args.quiet,
        )
    except (bbrlab.ScenarioError, ValueError, ConnectionError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    bbrlab.to_parquet(df, out / "summary.parquet")
    df.to_csv(out / "summary.csv", index=False)
    failed = df[df["status"] == "failed"]
    runs = df["run"].nunique()
    print(f"{runs - len(failed)} of {runs} runs ok; wrote {out}/summary.parquet and summary.csv")
    for _, row in failed.iterrows():
        print(f"failed {row['run']}: {row['error']}", file=sys.stderr)
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())

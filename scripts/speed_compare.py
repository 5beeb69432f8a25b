#!/usr/bin/env python3
"""Compare the simulator's speed now with earlier commits, as the speed
work (issue 34) sets its goals: instructions of the bench path, wall time
of a long run taken in alternating pairs, and the 10 Gbit/s path's peak
memory.

    python3 scripts/speed_compare.py [--pairs N] [--skip-c2] REF [REF ...]

Each REF (a commit, tag or branch) is checked out in a git worktree under
target/speed-compare/ and its `bbrlab` built there (release profile, as
that commit configured it); the working tree's is built with
`cargo build --release -p bbrlab`. Then, for every binary:

- instructions (Callgrind, deterministic): `bbrlab sim` of one `bbr` flow
  and one `cubic` flow on 100 Mbit/s, 40 ms, a 2-BDP drop-tail buffer,
  20 s simulated, no time series: the whole process, start-up included;
- wall time: `bbrlab sim` of one `bbr` flow on that path for 600 s
  simulated, each REF's binary alternating with the working tree's, N
  pairs (default 7); the median of each and the median of the pairs'
  ratios (the working tree's time over the REF's: below 1 is faster);
- peak memory: `bbrlab sim` of one `bbr` flow on C2's path (10 Gbit/s,
  100 ms, 1 % random loss, every segment ACKed) for 30 s, one run,
  the process's peak resident set.

Prints one Markdown table. Takes about 5 minutes per REF to build and
2 minutes per REF to measure on a 2-core machine, plus 15 minutes of
wall-time pairs at the default 7. Wall figures drift on a shared machine;
pairs keep the ratio meaningful. A REF whose binary rejects a scenario
(the schema grew since) gets `n/a` with the reason.

Remove the worktrees with `rm -rf target/speed-compare && git worktree
prune`.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ONE_FLOW = """name = "speed-compare"
duration = "{duration}"
seed = 1
sample_interval = "0s"

[link.forward]
rate = "100mbit"
delay = "20ms"
queue = {{ limit = "667pkt" }}

[link.reverse]
delay = "20ms"

[[flow]]
algorithm = "{algorithm}"
"""

C2 = """name = "speed-compare-c2"
duration = "30s"
seed = 1
sample_interval = "100ms"

[link.forward]
rate = "10gbit"
delay = "50ms"
queue = { limit = "100000pkt" }
loss = 0.01

[link.reverse]
delay = "50ms"

[[flow]]
algorithm = "bbr"
ack = "every"
"""


class Failed(Exception):
    """A run that did not succeed: its reason goes in the table."""


def run(cmd, **kw):
    """Runs `cmd`; raises with its standard error when it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise Failed(f"{' '.join(map(str, cmd))} exited {p.returncode}: {last_line(p.stderr)}")
    return p


def last_line(text):
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1] if lines else "(no output)"


def is_program(path):
    """Whether `path` is a file this user may execute: a directory passes
    `os.access(X_OK)` (it is searchable) but is no program."""
    return os.path.isfile(path) and os.access(path, os.X_OK)


def callgrind_instructions(stderr):
    """The instruction count Callgrind prints at exit (`I   refs:` or
    `Collected :`), or None."""
    m = re.search(r"(?:I\s+refs|Collected)\s*:\s*([\d,]+)", stderr)
    return int(m.group(1).replace(",", "")) if m else None


def median_ratio(pairs):
    """The median of each pair's a/b."""
    return statistics.median(a / b for a, b in pairs)


def fmt_m(n):
    return "n/a" if n is None else f"{n / 1e6:,.1f} M"


def build(ref):
    """The path of REF's bbrlab, built in a worktree; None for the working tree."""
    if ref is None:
        print("speed_compare: building the working tree", file=sys.stderr)
        run(["cargo", "build", "--release", "-q", "-p", "bbrlab"], cwd=ROOT)
        return ROOT / "target" / "release" / "bbrlab"
    sha = run(["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=ROOT).stdout.strip()
    base = ROOT / "target" / "speed-compare"
    tree = base / sha[:12]
    if not tree.exists():
        base.mkdir(parents=True, exist_ok=True)
        run(["git", "worktree", "add", "--detach", str(tree), sha], cwd=ROOT)
    env = dict(os.environ, CARGO_TARGET_DIR=str(base / f"target-{sha[:12]}"))
    print(f"speed_compare: building {ref} ({sha[:12]})", file=sys.stderr)
    run(["cargo", "build", "--release", "-q", "-p", "bbrlab"], cwd=tree, env=env)
    return base / f"target-{sha[:12]}" / "release" / "bbrlab"


def sim(binary, scenario, out):
    """One `bbrlab sim` process: (wall seconds, peak RSS in MiB)."""
    cmd = [str(binary), "sim", "-q", "--no-plots", "--force", str(scenario), "--out", str(out)]
    # Standard error to a file: a pipe left unread while waiting could fill.
    with tempfile.TemporaryFile() as err:
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        # wait4 gives this child's own peak, not the largest of all children.
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            raise Failed(f"sim exited {p.returncode}: {last_line(err.read().decode(errors='replace'))}")
    return wall, usage.ru_maxrss / 1024


def instructions(binary, scenario, out):
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
           str(binary), "sim", "-q", "--no-plots", "--force", str(scenario), "--out", str(out)]
    p = run(cmd)
    n = callgrind_instructions(p.stderr)
    if n is None:
        raise Failed("no instruction count in Callgrind's output")
    return n


def attempt(f, *args):
    """(value, None) or (None, reason)."""
    try:
        return f(*args), None
    except (Failed, OSError) as e:
        return None, str(e)


def table(rows):
    """The Markdown table of `rows` (label, instr bbr, instr cubic, wall
    median, ratio, peak)."""
    out = ["| binary | instructions, `bbr` 20 s | instructions, `cubic` 20 s "
           "| wall, `bbr` 600 s (median) | pairs' median ratio, this tree / it | C2 peak memory |",
           "| --- | --- | --- | --- | --- | --- |"]
    for label, ib, ic, wall, ratio, peak in rows:
        out.append("| {} | {} | {} | {} | {} | {} |".format(
            label, fmt_m(ib), fmt_m(ic),
            "n/a" if wall is None else f"{wall:.3f} s",
            "" if ratio is None else f"{ratio:.3f}",
            "n/a" if peak is None else f"{peak:.1f} MiB"))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Builds each REF in a worktree under target/speed-compare/.")
    ap.add_argument("refs", nargs="+", metavar="REF", help="commits to compare with the working tree")
    ap.add_argument("--pairs", type=int, default=7, help="alternating wall-time pairs per REF (default 7, at least 1)")
    ap.add_argument("--skip-c2", action="store_true", help="leave out the 10 Gbit/s peak-memory run")
    a = ap.parse_args(argv)
    if a.pairs < 1:
        ap.error(f"--pairs must be at least 1 (got {a.pairs})")
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode != 0:
        sys.exit("speed_compare: valgrind is needed (bash scripts/setup.sh installs it)")
    try:
        binaries = [(f"`{r}`", build(r)) for r in a.refs] + [("this tree", build(None))]
    except Failed as e:
        sys.exit(f"speed_compare: build failed: {e}")
    with tempfile.TemporaryDirectory(prefix="speed-compare-") as tmp:
        tmp = Path(tmp)
        scen = {}
        for name, text in [("bbr20", ONE_FLOW.format(duration="20s", algorithm="bbr")),
                           ("cubic20", ONE_FLOW.format(duration="20s", algorithm="cubic")),
                           ("bbr600", ONE_FLOW.format(duration="600s", algorithm="bbr")),
                           ("c2", C2)]:
            scen[name] = tmp / f"{name}.toml"
            scen[name].write_text(text)
        notes = []
        results = {}
        for label, b in binaries:
            print(f"speed_compare: measuring {label}", file=sys.stderr)
            ib, e1 = attempt(instructions, b, scen["bbr20"], tmp / "out")
            ic, e2 = attempt(instructions, b, scen["cubic20"], tmp / "out")
            peak = None
            if not a.skip_c2:
                r, e3 = attempt(sim, b, scen["c2"], tmp / "out")
                peak = r[1] if r else None
                if e3:
                    notes.append(f"{label}, C2: {e3}")
            notes += [f"{label}: {e}" for e in (e1, e2) if e]
            results[label] = [ib, ic, peak]
        this = binaries[-1][1]
        rows = []
        this_walls = []
        for label, b in binaries[:-1]:
            pairs = []
            for i in range(a.pairs):
                print(f"speed_compare: wall pair {i + 1}/{a.pairs} against {label}", file=sys.stderr)
                theirs, e = attempt(sim, b, scen["bbr600"], tmp / "out")
                ours, e2 = attempt(sim, this, scen["bbr600"], tmp / "out")
                if e or e2:
                    notes.append(f"{label}, wall: {e or e2}")
                    break
                pairs.append((ours[0], theirs[0]))
            ib, ic, peak = results[label]
            if pairs:
                this_walls += [p[0] for p in pairs]
                rows.append((label, ib, ic, statistics.median(p[1] for p in pairs), median_ratio(pairs), peak))
            else:
                rows.append((label, ib, ic, None, None, peak))
        ib, ic, peak = results["this tree"]
        rows.append(("this tree", ib, ic, statistics.median(this_walls) if this_walls else None, None, peak))
    print(table(rows))
    for n in notes:
        print(f"\nn/a: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

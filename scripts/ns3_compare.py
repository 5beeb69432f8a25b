#!/usr/bin/env python3
"""Time ns-3's TCP against bbrlab's simulator on the same path, process
against process, in alternating pairs.

    python3 scripts/ns3_compare.py [--pairs N] [--seconds S] [--cc bbr|cubic]
                                   [--ns3 PREFIX] [--bbrlab BIN]

The path is the speed work's bench path (issue 34): one bulk flow,
100 Mbit/s forward, 20 ms each way, a 667-packet drop-tail queue at the
bottleneck, S simulated seconds (default 30). ns-3 runs
`scripts/ns3/one_flow.cc` (its `TcpBbr` or `TcpCubic`, pacing on),
compiled here with g++; bbrlab runs `bbrlab sim` of the same path with
`bbr` or `cubic` and no time series. Each pair runs both once, the order
alternating from pair to pair so a machine that speeds up or slows down
favours neither; the figure is the median of the pairs' ratios (ns-3's
time over bbrlab's). Both sides are whole processes, start-up included,
and each must deliver data, or the run counts as failed rather than fast.

ns-3: by default the PyPI wheel `ns3==3.44.post0`, whose C++ headers and
libraries are used directly: pip downloads it (about 70 MB) into
target/ns3-compare/ once and it is unpacked there. `--ns3 PREFIX` uses an
installed ns-3 instead: PREFIX/include/ns3 and libns3*-core.so under
PREFIX/lib, PREFIX/lib64 or PREFIX/lib/x86_64-linux-gnu (Debian's
`libns3-dev`: `--ns3 /usr`). The table says whether that ns-3 was built
with its logging compiled in (the wheel and Debian's package both are;
ns-3's `optimized` profile is not, and runs faster).

bbrlab: `--bbrlab BIN`, or the working tree's, built with `cargo build
--release -p bbrlab`.

Prints one Markdown table and the ratio. Takes about 6 s a pair at the
defaults on a 2-core machine (nearly all of it ns-3's), 7 pairs by default.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed_compare  # noqa: E402  (the bench path, the build, a timed `sim`)
from speed_compare import Failed, last_line, run  # noqa: E402

ROOT = speed_compare.ROOT
PROGRAM = ROOT / "scripts" / "ns3" / "one_flow.cc"
WORK = ROOT / "target" / "ns3-compare"
WHEEL = "ns3==3.44.post0"
# bbrlab's algorithm -> ns-3's TCP congestion control.
NS3_CC = {"bbr": "TcpBbr", "cubic": "TcpCubic"}
# ns-3 modules one_flow.cc links against.
MODULES = ["core", "network", "internet", "point-to-point", "applications", "traffic-control"]


@dataclass(frozen=True)
class Ns3:
    """An ns-3 install: its include directory, library directory, the
    stem its library names share (`ns3.44-` in `libns3.44-core.so`,
    `ns3-` in Debian's `libns3-core.so`) and its version."""

    include: Path
    libdir: Path
    stem: str
    version: str


def find_ns3(prefix):
    """The ns-3 under `prefix`, or Failed saying what is missing there."""
    prefix = Path(prefix)
    include = prefix / "include"
    if not (include / "ns3" / "tcp-bbr.h").is_file():
        raise Failed(f"no ns-3 headers under {prefix}: expected {include / 'ns3' / 'tcp-bbr.h'} "
                     "(ns-3 3.32 or later has TcpBbr)")
    for sub in ["lib64", "lib", "lib/x86_64-linux-gnu"]:
        for core in sorted(glob.glob(str(prefix / sub / "libns3*-core.so"))):
            stem = re.fullmatch(r"lib(ns3[^/]*-)core\.so", Path(core).name).group(1)
            return Ns3(include, prefix / sub, stem, ns3_version(Path(core), stem))
    raise Failed(f"no ns-3 library under {prefix}: expected libns3*-core.so in lib64/, lib/ "
                 "or lib/x86_64-linux-gnu/")


def ns3_version(core, stem):
    """`3.44` from `libns3.44-core.so`; from Debian's `libns3-core.so.37`
    (what the link points to), `3.37`; else `unknown`."""
    m = re.fullmatch(r"ns3\.(\d+)-", stem)
    if m:
        return f"3.{m.group(1)}"
    m = re.search(r"\.so\.(\d+)", os.path.realpath(core))
    return f"3.{m.group(1)}" if m else "unknown"


def fetch_wheel():
    """The prefix of the PyPI wheel's ns-3, downloaded and unpacked under
    target/ns3-compare/ the first time."""
    prefix = WORK / "wheel" / "ns3"
    if (prefix / "include" / "ns3" / "tcp-bbr.h").is_file():
        return prefix
    WORK.mkdir(parents=True, exist_ok=True)
    print(f"ns3_compare: downloading {WHEEL} with pip (about 70 MB)", file=sys.stderr)
    run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "-d", str(WORK / "download"), WHEEL])
    wheels = sorted((WORK / "download").glob("ns3-*.whl"))
    if not wheels:
        raise Failed(f"pip downloaded no ns3 wheel into {WORK / 'download'}")
    with zipfile.ZipFile(wheels[-1]) as z:
        z.extractall(WORK / "wheel")
    return prefix


def compile_program(ns3):
    """one_flow.cc built against `ns3`: the binary's path."""
    # One binary per ns-3 install (its library directory), rebuilt when
    # the source is newer.
    tag = hashlib.sha256(str(ns3.libdir).encode()).hexdigest()[:8]
    out = WORK / f"one_flow-{ns3.stem.rstrip('-')}-{tag}"
    if out.exists() and out.stat().st_mtime >= PROGRAM.stat().st_mtime:
        return out
    WORK.mkdir(parents=True, exist_ok=True)
    print(f"ns3_compare: compiling {PROGRAM.name} against ns-3 {ns3.version}", file=sys.stderr)
    cmd = (["g++", "-O2", f"-std={cxx_standard(ns3.version)}", f"-I{ns3.include}", str(PROGRAM),
            "-o", str(out), f"-L{ns3.libdir}", f"-Wl,-rpath,{ns3.libdir}"]
           + [f"-l{ns3.stem}{m}" for m in MODULES])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        errors = [x for x in p.stderr.splitlines() if "error" in x]
        raise Failed(f"g++ could not build {PROGRAM.name} against ns-3 {ns3.version}: "
                     f"{errors[0] if errors else last_line(p.stderr)}")
    return out


def cxx_standard(version):
    """The C++ standard ns-3 `version`'s headers need: C++20 from 3.42 on
    (and for an unknown version), C++17 before (3.37's headers do not
    build as C++20)."""
    m = re.fullmatch(r"3\.(\d+)", version)
    return "c++17" if m and int(m.group(1)) < 42 else "c++20"


def parse_ns3(stdout):
    """Bytes delivered, from one_flow's `delivered_bytes=N ...` line; Failed
    when the line is missing or nothing was delivered."""
    m = re.search(r"delivered_bytes=(\d+)", stdout)
    if not m:
        raise Failed(f"ns-3 printed no delivered_bytes line: {last_line(stdout)}")
    n = int(m.group(1))
    if n == 0:
        raise Failed("ns-3's flow delivered nothing")
    return n


def logging_compiled_in(program):
    """Whether this ns-3 was built with NS_LOG compiled in: a component
    asked to log then prints to standard error."""
    p = subprocess.run([str(program), "--seconds=0.001"], capture_output=True, text=True,
                       env=dict(os.environ, NS_LOG="TcpSocketBase=level_all"), timeout=60)
    return "TcpSocketBase" in p.stderr


def time_ns3(program, cc, seconds):
    """(wall seconds, bytes delivered) of one ns-3 process."""
    start = time.monotonic()
    p = run([str(program), f"--cc={cc}", f"--seconds={seconds:g}"])
    return time.monotonic() - start, parse_ns3(p.stdout)


def time_bbrlab(binary, scenario, out):
    """(wall seconds, bytes delivered) of one `bbrlab sim` process."""
    wall, _ = speed_compare.sim(binary, scenario, out)
    flows = json.loads((Path(out) / "summary.json").read_text())["runs"][0]["flows"]
    n = sum(f["delivered_bytes"] for f in flows)
    if n == 0:
        raise Failed("bbrlab's flow delivered nothing")
    return wall, n


def spread(xs):
    return f"{statistics.median(xs):.3f} s ({min(xs):.3f}–{max(xs):.3f})"


def table(ns3_label, cc, seconds, pairs):
    """The Markdown table of `pairs`: (ns-3 wall, ns-3 bytes, bbrlab wall,
    bbrlab bytes) each."""
    mbit = lambda b: f"{b * 8 / seconds / 1e6:.1f} Mbit/s"  # noqa: E731
    ratios = [a / c for a, _, c, _ in pairs]
    rows = [
        "| simulator | wall, median (range) | goodput |",
        "| --- | --- | --- |",
        f"| {ns3_label} `{NS3_CC[cc]}` | {spread([p[0] for p in pairs])} "
        f"| {mbit(statistics.median(p[1] for p in pairs))} |",
        f"| bbrlab `{cc}` | {spread([p[2] for p in pairs])} "
        f"| {mbit(statistics.median(p[3] for p in pairs))} |",
        "",
        f"ns-3's time over bbrlab's, median of {len(pairs)} pair{'s' if len(pairs) > 1 else ''}: "
        f"**{statistics.median(ratios):.0f} ×** (pairs {min(ratios):.0f}–{max(ratios):.0f} ×); "
        f"{seconds:g} s simulated.",
    ]
    return "\n".join(rows)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="By default ns-3 is the PyPI wheel " + WHEEL + ", kept under target/ns3-compare/.")
    ap.add_argument("--pairs", type=int, default=7, help="alternating pairs (default 7, at least 1)")
    ap.add_argument("--seconds", type=float, default=30.0, help="simulated seconds, 0.1 to 3600 (default 30)")
    ap.add_argument("--cc", choices=sorted(NS3_CC), default="bbr", help="algorithm (default bbr)")
    ap.add_argument("--ns3", metavar="PREFIX", help="an installed ns-3 (PREFIX/include/ns3, PREFIX/lib...)")
    ap.add_argument("--bbrlab", metavar="BIN", help="bbrlab binary (default: build the working tree's)")
    a = ap.parse_args(argv)
    if a.pairs < 1:
        ap.error(f"--pairs must be at least 1 (got {a.pairs})")
    if not 0.1 <= a.seconds <= 3600:
        ap.error(f"--seconds must be from 0.1 to 3600 (got {a.seconds:g})")
    if a.bbrlab and not speed_compare.is_program(a.bbrlab):
        ap.error(f"--bbrlab {a.bbrlab}: not an executable file")
    return a


def main(argv=None):
    a = parse_args(argv)
    try:
        ns3 = find_ns3(a.ns3 if a.ns3 else fetch_wheel())
        program = compile_program(ns3)
        binary = Path(a.bbrlab) if a.bbrlab else speed_compare.build(None)
    except Failed as e:
        sys.exit(f"ns3_compare: {e}")
    label = f"ns-3 {ns3.version}" + (" (logging compiled in)" if logging_compiled_in(program) else "")
    duration = f"{a.seconds * 1000:.0f}ms"
    pairs = []
    with tempfile.TemporaryDirectory(prefix="ns3-compare-") as tmp:
        scenario = Path(tmp) / "path.toml"
        scenario.write_text(speed_compare.ONE_FLOW.format(duration=duration, algorithm=a.cc))
        for i in range(a.pairs):
            print(f"ns3_compare: pair {i + 1}/{a.pairs}", file=sys.stderr)
            try:
                if i % 2 == 0:
                    n = time_ns3(program, NS3_CC[a.cc], a.seconds)
                    b = time_bbrlab(binary, scenario, Path(tmp) / "out")
                else:
                    b = time_bbrlab(binary, scenario, Path(tmp) / "out")
                    n = time_ns3(program, NS3_CC[a.cc], a.seconds)
            except (Failed, OSError, KeyError, ValueError) as e:
                sys.exit(f"ns3_compare: pair {i + 1}: {e}")
            pairs.append((n[0], n[1], b[0], b[1]))
    print(table(label, a.cc, a.seconds, pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

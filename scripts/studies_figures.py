#!/usr/bin/env python3
"""The two study figures `bbrlab plot` does not draw, and the numbers the
write-ups quote (docs/src/studies.md). Python stdlib only: reads the
`bbrlab sim` outputs (summary.json, flows.csv) that scripts/studies.sh
writes and draws plain SVG line charts.

Usage:
  studies_figures.py rtt RUN_DIR... OUT.svg     srtt and min_rtt over time
  studies_figures.py share SWEEP_DIR OUT.svg    BBR's share by buffer depth
  studies_figures.py numbers OUT_ROOT           every number the write-ups quote
"""

from __future__ import annotations

import csv
import json
import math
import sys
import tomllib
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]

Series = Tuple[str, List[Tuple[float, float]], str]  # label, points, dash


def nice_ticks(lo: float, hi: float) -> List[float]:
    """About five ticks at multiples of 1, 2 or 5 times a power of ten."""
    raw = (hi - lo) / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def svg_chart(
    path: Path,
    title: str,
    xlabel: str,
    ylabel: str,
    series: Sequence[Series],
    xlog: bool = False,
    ymin: float | None = None,
    ymax: float | None = None,
) -> None:
    """A line chart with axes, ticks and a legend, as a standalone SVG."""
    w, h, left, right, top, bottom = 720, 420, 70, 190, 40, 55
    pw, ph = w - left - right, h - top - bottom
    xs = [x for _, pts, _ in series for x, _ in pts]
    ys = [y for _, pts, _ in series for _, y in pts]
    if not xs:
        raise SystemExit(f"{path}: nothing to draw")
    fx = (lambda v: math.log10(v)) if xlog else (lambda v: v)
    x0, x1 = fx(min(xs)), fx(max(xs))
    if x1 == x0:
        x1 = x0 + 1
    y0 = min(ys) if ymin is None else ymin
    y1 = max(ys) if ymax is None else ymax
    if y1 == y0:
        y1 = y0 + 1
    if ymax is None:
        y1 += (y1 - y0) * 0.05  # headroom above the highest point

    def px(v: float) -> float:
        return left + (fx(v) - x0) / (x1 - x0) * pw

    def py(v: float) -> float:
        return top + ph - (v - y0) / (y1 - y0) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{left + pw / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>',
    ]
    # Ticks: decades on a log axis, five steps otherwise.
    if xlog:
        xt = sorted(set(xs))  # a sweep's own points
    else:
        xt = nice_ticks(x0, x1)
    for v in xt:
        x = px(v)
        out.append(f'<line x1="{x}" y1="{top + ph}" x2="{x}" y2="{top + ph + 5}" stroke="black"/>')
        out.append(f'<text x="{x}" y="{top + ph + 18}" text-anchor="middle">{v:g}</text>')
    for v in nice_ticks(y0, y1):
        y = py(v)
        out.append(f'<line x1="{left - 5}" y1="{y}" x2="{left}" y2="{y}" stroke="black"/>')
        out.append(f'<line x1="{left}" y1="{y}" x2="{left + pw}" y2="{y}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{v:.3g}</text>')
    out.append(
        f'<text x="{left + pw / 2}" y="{h - 12}" text-anchor="middle">{xlabel}</text>'
    )
    out.append(
        f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {top + ph / 2})">{ylabel}</text>'
    )
    for i, (label, pts, dash) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"{dash_attr}/>'
        )
        if len(pts) <= 20:  # a sweep's points: mark each
            for x, y in pts:
                out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{colour}"/>')
        ly = top + 10 + i * 20
        out.append(
            f'<line x1="{left + pw + 12}" y1="{ly}" x2="{left + pw + 40}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"{dash_attr}/>'
        )
        out.append(f'<text x="{left + pw + 46}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def read_flows(run: Path) -> List[Dict[str, str]]:
    with open(run / "flows.csv", newline="") as f:
        return list(csv.DictReader(f))


def algorithm_of(run: Path) -> str:
    s = json.loads((run / "summary.json").read_text())
    return s["runs"][0]["flows"][0]["algorithm"]


def rtt_figure(runs: List[Path], out: Path) -> None:
    series: List[Series] = []
    for run in runs:
        alg = algorithm_of(run)
        rows = read_flows(run)
        for col, label, dash in (("srtt_ms", "srtt", ""), ("min_rtt_ms", "min_rtt", "6,4")):
            pts = [(float(r["time_s"]), float(r[col])) for r in rows if r[col]]
            series.append((f"{alg} {label}", pts, dash))
    svg_chart(out, "Route change at 11 s: srtt and min_rtt", "time (s)", "ms", series, ymin=0)


def sweep_summary(sweep: Path) -> List[dict]:
    """One dict per run: its swept values and its flows."""
    return json.loads((sweep / "summary.json").read_text())["runs"]


def share_figure(sweep: Path, out: Path) -> None:
    lines: Dict[str, List[Tuple[float, float]]] = {}
    for run in sweep_summary(sweep):
        # A swept table is recorded as its TOML text.
        q = tomllib.loads("q = " + run["params"]["link.forward.queue"])["q"]
        pkts = float(q["limit"].removesuffix("pkt"))
        kind = q.get("aqm", "drop-tail")
        g = {f["name"]: f["goodput_bps"] for f in run["flows"]}
        # The limits are 0.25 to 8 BDPs of 66.7 packets, rounded to whole
        # packets: label them by the power of two they stand for.
        bdps = 2.0 ** round(math.log2(pkts / 66.7))
        lines.setdefault(kind, []).append((bdps, g["bbr"] / (g["bbr"] + g["cubic"])))
    series = [(k, sorted(v), "") for k, v in sorted(lines.items())]
    svg_chart(
        out,
        "BBR's share against one CUBIC flow",
        "buffer (BDPs of a 20 Mbit/s, 40 ms path)",
        "BBR goodput / total",
        series,
        xlog=True,
        ymin=0,
        ymax=1,
    )


def numbers(root: Path) -> None:
    """Prints, per study, the summary.json numbers the write-ups quote."""

    def mbps(v: float) -> str:
        return f"{v / 1e6:.2f}"

    for study in ("rtt-unfairness", "buffer-depth", "short-flows", "parking-lot", "route-change", "dualpi2-ecn"):
        sweep = root / study
        print(f"== {study}")
        for run in sweep_summary(sweep):
            params = run["params"]
            flows = ", ".join(
                f"{f['name']} {mbps(f['goodput_bps'])}" for f in run["flows"]
            )
            extra = ""
            if run.get("jain_fairness") is not None:
                extra += f" jain {run['jain_fairness']:.3f}"
            q = run.get("queue")
            if q:
                extra += f" queue delay p50/p99 {q['delay_ms_p50']:.1f}/{q['delay_ms_p99']:.1f} ms"
            print(f"{run['run']} {json.dumps(params)}: {flows} Mbit/s{extra}")
            fct = run.get("fct")
            if fct:
                print(f"   fct: {fct['flows_completed']}/{fct['flows_started']} completed")
                for b in fct["buckets"]:
                    if not b["count"]:
                        continue
                    print(
                        f"   {b['label']}: n={b['count']} fct p50/p99 "
                        f"{b['fct_p50_s'] * 1e3:.0f}/{b['fct_p99_s'] * 1e3:.0f} ms, "
                        f"slowdown p50/p99 {b['slowdown_p50']:.1f}/{b['slowdown_p99']:.1f}"
                    )


def main(argv: List[str]) -> None:
    if len(argv) >= 3 and argv[0] == "rtt":
        rtt_figure([Path(a) for a in argv[1:-1]], Path(argv[-1]))
    elif len(argv) == 3 and argv[0] == "share":
        share_figure(Path(argv[1]), Path(argv[2]))
    elif len(argv) == 2 and argv[0] == "numbers":
        numbers(Path(argv[1]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Adversarial path search from Python, with each generation's
evaluations on Dask: the Python counterpart of ``bbrlab search``.

The budget, the paths, the objectives, the scenario files and the
reading are the Rust library's (``claims::search``), the same code the
command runs; what differs is the driver. Here CMA-ES is pycma's
(``cma``, ask and tell, with the same IPOP restarts as the command: a
run that stops starts again from a random point with twice the
population), so that each generation can be handed to Dask as tasks and
a search can use a cluster larger than one machine. The random baseline
gets as many evaluations. For one seed a search repeats itself, but it
does not give the command's numbers: the two CMA-ES implementations draw
different points.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple

import pandas as pd

from . import _native
from ._run import _flag, _interactive, _plain, _whole

#: Points per Dask task at most: a generation of CMA-ES is 10-40 points,
#: each a run of 10-500 ms; smaller tasks spread a generation over more
#: workers, and Dask's cost per task (about 13 ms) stays small beside them.
MAX_POINTS_PER_TASK = 8


@dataclass
class SearchResult:
    """A search's outcome.

    ``objective`` (its name), ``unit`` (its unit, '' for a unitless one) and
    ``lower_is_worse`` (whether a lower value is worse for the
    controller); ``flows``, the controllers of the flows in order; the
    ``seed`` and ``warmup_s`` (seconds at each run's start left out of the
    objective) the search ran with. ``beat_baseline``: whether CMA-ES
    found a worse path than the random baseline; ``failures``: one dict
    (``method``, ``evaluation``, ``error``) per run that did not complete.

    ``history``: one row per evaluation, ``method`` (``cmaes`` or
    ``random``), ``evaluation`` (from 1), the objective's value (column
    named after the objective), ``worst_so_far``, ``path`` (its pieces in
    words) and ``error`` (why a run did not complete, else None).
    ``worst`` and ``baseline_worst``: the worst path of each, a dict with
    ``value``, ``evaluation``, ``path`` and ``scenario`` (the TOML file
    ``bbrlab sim`` runs). ``reading``: why the first flow's BBR did worst
    there (None for another controller).
    """

    objective: str
    unit: str
    lower_is_worse: bool
    flows: List[str]
    seed: int
    warmup_s: float
    history: pd.DataFrame
    worst: dict
    baseline_worst: dict
    beat_baseline: bool
    reading: Optional[str]
    failures: List[dict] = field(default_factory=list)

    def write(self, out: "os.PathLike[str] | str") -> None:
        """Writes ``worst.toml``, ``baseline-worst.toml`` and
        ``history.csv`` into ``out`` (made if missing), as the command
        does."""
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "worst.toml"), "w") as f:
            f.write(self.worst["scenario"])
        with open(os.path.join(out, "baseline-worst.toml"), "w") as f:
            f.write(self.baseline_worst["scenario"])
        self.history.to_csv(os.path.join(out, "history.csv"), index=False)

    def __repr__(self) -> str:
        return (
            f"SearchResult({' vs '.join(self.flows)} by {self.objective}: "
            f"CMA-ES {self.worst['value']:.4g}, random {self.baseline_worst['value']:.4g} "
            f"over {len(self.history) // 2} evaluations each)"
        )


def _flag_to_keyword(message: str) -> str:
    """The library names options as the command line does (``--rate-ratio``);
    here they are keywords (``rate_ratio``), and ``--run-timeout``, in
    seconds, is ``run_timeout_s``."""
    keyword = {"run-timeout": "run_timeout_s"}
    return re.sub(
        r"--([a-z][a-z-]*)",
        lambda m: keyword.get(m.group(1), m.group(1).replace("-", "_")),
        message,
    )


def _spec_json(spec: dict) -> Tuple[str, List[str]]:
    """The options as JSON text with one key per line, and the keys in
    line order (the first on line 2): the native side's type errors
    (``invalid type: integer `5`, expected a string at line 3 column 9``)
    give only a position, which the line turns back into the key."""
    keys = list(spec)
    body = ",\n".join(f"{json.dumps(k)}: {json.dumps(spec[k], allow_nan=False)}" for k in keys)
    return "{\n" + body + "\n}", keys


def _name_the_key(message: str, keys: List[str], spec: dict) -> str:
    """A serde error's position (``... at line N column M``) as the key on
    that line and the value given for it."""
    m = re.match(r"^search options: (.*) at line (\d+) column \d+$", message, re.S)
    if not m or not 0 <= int(m.group(2)) - 2 < len(keys):
        return message
    key = keys[int(m.group(2)) - 2]
    return f"search options: {key} = {spec[key]!r}: {m.group(1)}"


def search(
    cc: "str | Sequence[str]" = "bbr",
    objective: Optional[str] = None,
    *,
    client: Any = None,
    progress: Optional[bool] = None,
    jobs: Optional[int] = None,
    **budget: Any,
) -> SearchResult:
    """Searches a path budget for the path on which ``cc`` (a name, or
    two to set the first against the second) does worst by
    ``objective`` (``utilization``, ``queue-p95``, ``share``, ``jain``,
    ``retransmissions``, ``convergence``), with CMA-ES against a random
    baseline in the same number of evaluations.

    The budget and the search's size are keywords named as the command's
    flags (``bbrlab search --help``; the same defaults): ``rate``
    (``"20mbit"``), ``rate_ratio``, ``delay``, ``jitter``, ``loss``,
    ``pieces``, ``min_piece``, ``duration``, ``buffer``, ``aqm``,
    ``flows``, ``evaluations``, ``warmup``, ``seed``, ``run_timeout_s``.

    ``client``: a ``dask.distributed.Client`` or a scheduler's address;
    each generation's points then run as Dask tasks on its workers (each
    needs the ``bbrlab`` package). Without one the points run here, on
    ``jobs`` threads (default: every core; ``jobs`` with a ``client`` is
    refused).
    """
    import numpy as np

    try:
        import cma
    except ImportError as e:  # pragma: no cover - a dependency
        raise ImportError("bbrlab.search needs pycma: pip install 'bbrlab[search]'") from e

    names = [cc] if isinstance(cc, str) else list(cc)
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"cc: a controller's name or a list of two, not {cc!r}")
    spec = {k: v for k, v in budget.items() if v is not None}
    spec["cc"] = [n for s in names for n in s.split(",")]
    if objective is not None:
        spec["objective"] = objective
    # NaN, infinities and other values a JSON text cannot hold are refused
    # by name here, not as a position in the JSON the native side parses.
    spec_json, keys = _spec_json(_plain(spec, "search options"))
    jobs = _whole(jobs, "jobs", 1)
    if jobs is not None and client is not None:
        # jobs= is the threads of a search run here; with a client the
        # points run as Dask tasks on its workers and jobs was ignored.
        raise ValueError(
            "jobs: the threads of a search without a client; with client= the points "
            "run on the client's workers (leave jobs out)"
        )
    progress = _flag(progress, "progress", optional=True)
    try:
        dims, n, seed, lower_is_worse, warmup_s, obj, unit, flows = _native.search_plan(spec_json)
    except ValueError as e:
        raise ValueError(_flag_to_keyword(_name_the_key(str(e), keys, spec))) from None

    evaluate, close = _evaluator(spec_json, client, jobs)
    show = _interactive() if progress is None else progress
    bar = None
    if show:
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=2 * n, desc=f"search {obj}", unit="run")
        except ImportError:
            bar = None

    def run(points: List[List[float]]) -> List[Tuple[float, Optional[str]]]:
        out = evaluate(points)
        if bar is not None:
            bar.update(len(points))
        return out

    def badness(v: float) -> float:
        return -v if lower_is_worse else v

    try:
        # pycma needs two dimensions at least: a lone number gets a
        # second coordinate that the path ignores.
        width = max(dims, 2)
        cmaes: List[Tuple[List[float], float, Optional[str]]] = []
        rng = np.random.default_rng(seed)
        lam = 4 + int(math.floor(3 * math.log(max(dims, 1))))
        restart = 0
        while len(cmaes) + lam <= n:
            x0 = [0.5] * width if restart == 0 else list(rng.uniform(0.1, 0.9, width))
            es = cma.CMAEvolutionStrategy(
                x0,
                0.3,
                {"popsize": lam, "seed": seed + restart + 1, "bounds": [0, 1], "verbose": -9},
            )
            while not es.stop() and len(cmaes) + lam <= n:
                xs = [list(map(float, x)) for x in es.ask()]
                results = run([x[:dims] for x in xs])
                # pycma minimizes: the worse for the controller, the lower.
                es.tell(xs, [-badness(v) for v, _ in results])
                cmaes.extend((x[:dims], v, e) for x, (v, e) in zip(xs, results))
            restart += 1
            lam *= 2
        if not cmaes:
            raise ValueError(
                f"evaluations {n}: fewer than one CMA-ES generation ({lam} points for {dims} free numbers)"
            )
        base_rng = np.random.default_rng(seed ^ 0x0BA5E11E)
        points = [list(map(float, base_rng.random(dims))) for _ in range(len(cmaes))]
        random = [(x, v, e) for x, (v, e) in zip(points, run(points))]
    finally:
        if bar is not None:
            bar.close()
        close()

    rows = []
    worst = {}
    for method, hist in (("cmaes", cmaes), ("random", random)):
        w: Optional[int] = None
        for i, (x, v, e) in enumerate(hist):
            if w is None or badness(v) > badness(hist[w][1]):
                w = i
            rows.append(
                {
                    "method": method,
                    "evaluation": i + 1,
                    obj: v,
                    "worst_so_far": hist[w][1],
                    "x": x,
                    "error": e,
                }
            )
        worst[method] = w
    history = pd.DataFrame(rows)
    history.insert(4, "path", [_native.search_path(spec_json, x, [])[0] for x in history["x"]])
    history = history.drop(columns="x")

    def record(method: str, other: str) -> dict:
        hist = cmaes if method == "cmaes" else random
        i = worst[method]
        x, v, _ = hist[i]
        ov = (cmaes if other == "cmaes" else random)[worst[other]][1]
        who = "CMA-ES (pycma)" if method == "cmaes" else "the random baseline"
        header = [
            f"Written by bbrlab.search (seed {seed}): the worst path {who} found for "
            f"{' against '.join(flows)} by {obj}, {i + 1} of {len(hist)} evaluations.",
            f"{obj}: {v:.6g}{(' ' + unit) if unit else ''} (measured from {warmup_s:.1f} s); "
            f"the other method's worst: {ov:.6g}.",
        ]
        desc, text = _native.search_path(spec_json, x, header)
        return {"value": v, "evaluation": i + 1, "path": desc, "scenario": text, "x": x}

    best, base = record("cmaes", "random"), record("random", "cmaes")
    failures = [
        {"method": m, "evaluation": i + 1, "error": e}
        for m, hist in (("cmaes", cmaes), ("random", random))
        for i, (_, _, e) in enumerate(hist)
        if e is not None
    ]
    return SearchResult(
        objective=obj,
        unit=unit,
        lower_is_worse=lower_is_worse,
        flows=list(flows),
        seed=seed,
        warmup_s=warmup_s,
        history=history,
        worst=best,
        baseline_worst=base,
        beat_baseline=badness(best["value"]) > badness(base["value"]),
        reading=_native.search_reading(spec_json, best["x"]),
        failures=failures,
    )


def _evaluator(
    spec_json: str, client: Any, jobs: Optional[int]
) -> Tuple[Callable[[List[List[float]]], List[Tuple[float, Optional[str]]]], Callable[[], None]]:
    """How a batch of points is evaluated, and how to let go after: here
    on threads, or as Dask tasks of at most ``MAX_POINTS_PER_TASK``."""
    if client is None:
        threads = jobs or os.cpu_count() or 1
        return (lambda pts: [tuple(r) for r in _native.search_evaluate(spec_json, pts, threads)]), (
            lambda: None
        )
    from ._sweep import _connect

    client, own = _connect(client)
    threads = sum(client.nthreads().values()) or 1

    def evaluate(points: List[List[float]]) -> List[Tuple[float, Optional[str]]]:
        per = max(1, min(MAX_POINTS_PER_TASK, math.ceil(len(points) / threads)))
        chunks = [points[i : i + per] for i in range(0, len(points), per)]
        futures = client.map(_evaluate_chunk, chunks, spec=spec_json, pure=False)
        out: List[Tuple[float, Optional[str]]] = []
        for part in client.gather(futures):
            out.extend(part)
        return out

    return evaluate, (client.close if own else (lambda: None))


def _evaluate_chunk(points: List[List[float]], spec: str) -> List[Tuple[float, Optional[str]]]:
    """The Dask task: a few points, one after another on the worker.
    (Module-level, so a worker imports it by name.)

    A run's own failure comes back as its point's error; anything the
    task raises is re-raised as a RuntimeError naming the task's paths. A
    Rust panic arrives as pyo3's PanicException, a BaseException, which
    Dask's client cannot deliver: ``gather`` then waited forever."""
    try:
        return [tuple(r) for r in _native.search_evaluate(spec, points, 1)]
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - re-raised, named
        paths = "; ".join(_native.search_path(spec, x, [])[0] for x in points)
        raise RuntimeError(
            f"search: a Dask task evaluating {len(points)} point(s) failed "
            f"({type(e).__name__}: {e}); its paths: {paths}"
        ) from None

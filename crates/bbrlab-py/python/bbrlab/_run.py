"""One simulation: ``simulate()`` and its ``Run``; ``reproduce()``.

Scenarios are parsed, run and summarised by the same Rust code as
``bbrlab sim`` (the ``bbrlab`` crate, through ``bbrlab._native``). The time
series and the summary arrive as Arrow record batches (the Arrow PyCapsule
interface), so the DataFrames are typed columns, not parsed text.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

import pandas as pd
import pyarrow as pa

from . import _native

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

#: Units of every column of ``Run.flows``, ``Run.link``, ``Run.model``,
#: ``Run.summary``, ``Run.fct`` and ``Run.fct_buckets()`` (docs/outputs.md,
#: the data dictionary).
#: Also in each DataFrame's ``attrs["units"]``. The time series' units come
#: from the schema the Rust writers use (``_native.column_units()``).
UNITS: Dict[str, Dict[str, str]] = {
    **{table: dict(cols) for table, cols in _native.column_units()},
    "summary": {
        "flow": "index",
        "name": "name",
        "algorithm": "name",
        "goodput_bps": "bit/s",
        "rtt_mean_ms": "ms",
        "rtt_median_ms": "ms",
        "rtt_p95_ms": "ms",
        "rtt_p99_ms": "ms",
        "retransmission_rate": "fraction",
        "drops": "packets",
        "rtos": "count",
        "jain_fairness": "index",
        "time_in_probe_bw": "fraction",
        "time_in_probe_rtt": "fraction",
        "delivered_bytes": "bytes",
        "packets_sent": "packets",
        "ce_packets": "packets",
        "ce_fraction": "fraction",
        "retransmissions": "packets",
        "completion_s": "s",
        "time_using_srtt": "fraction",
    },
    "fct": {
        "flow": "name",
        "algorithm": "name",
        "size_bytes": "bytes",
        "start_s": "s",
        "end_s": "s",
        "fct_s": "s",
        "ideal_s": "s",
        "slowdown": "ratio",
    },
    "fct_buckets": {
        "label": "name",
        "min_bytes": "bytes",
        "max_bytes": "bytes",
        "count": "flows",
        "fct_p50_s": "s",
        "fct_p99_s": "s",
        "slowdown_p50": "ratio",
        "slowdown_p99": "ratio",
    },
}


def scenario_toml(scenario: Mapping[str, Any]) -> str:
    """The TOML text of a scenario given as a dict with the scenario
    file's schema (docs/scenarios.md), to save as a file that ``bbrlab
    sim`` runs. Written by the same Rust code that reads scenarios, so
    the file says what the dict said; a value a scenario cannot hold
    (None, NaN, a non-string key...) raises ``ValueError`` naming it.
    """
    if not isinstance(scenario, Mapping):
        raise TypeError(f"scenario_toml: a dict, not {type(scenario).__name__}")
    return _native.dict_to_toml(json.dumps(_plain(scenario, "scenario dict"), allow_nan=False))


class ScenarioFileNotFoundError(_native.ScenarioError, FileNotFoundError):
    """A scenario path that names no file: a ``ScenarioError`` (and so a
    ``ValueError``) like every refused scenario, and a
    ``FileNotFoundError`` as ``open()`` would raise, so either ``except``
    a caller chose catches it. ``filename`` is the path, ``errno`` is
    ``ENOENT``; the message and ``location``/``detail`` are as for any
    other ``ScenarioError``."""

    def __init__(self, path: str, detail: str):
        message = f"{path}: {detail}"
        # ValueError's __init__ comes first in this class's MRO, so
        # OSError's fields are set here rather than parsed from args.
        _native.ScenarioError.__init__(self, message)
        self.errno = errno.ENOENT
        self.strerror = os.strerror(errno.ENOENT)
        self.filename = path
        self.location = path
        self.detail = detail

    def __str__(self) -> str:
        # OSError's __str__ would print "[Errno 2] ...": the message is
        # the scenario error's, as the CLI prints it.
        return str(self.args[0])


def _existing(path: str) -> str:
    """`path`, or ScenarioFileNotFoundError when nothing is there (a
    directory or an unreadable file gets the native reader's
    ScenarioError, which says why)."""
    if not os.path.exists(path):
        raise ScenarioFileNotFoundError(
            path, "cannot read the scenario file: no such file or directory"
        )
    return path


def _source(scenario: ScenarioLike) -> Dict[str, Any]:
    """The native call's arguments for a scenario given as a path, TOML text
    or a dict with the scenario file's schema."""
    if isinstance(scenario, Mapping):
        return {"text": scenario_toml(scenario), "file": "<dict>", "base_dir": os.getcwd()}
    if isinstance(scenario, os.PathLike):
        return {"path": _existing(os.fspath(scenario))}
    if isinstance(scenario, str):
        if not scenario.strip():
            raise ValueError("scenario: an empty string (give a TOML path, TOML text or a dict)")
        # TOML text has a key = value line; a path has neither '=' nor a
        # newline, except that a file that exists is a path even with an
        # '=' in its name: the hive-partitioned directories to_parquet and
        # other tools write (`loss=0.01/`) hold scenario files too.
        if "\n" not in scenario and os.path.isfile(scenario):
            return {"path": scenario}
        if "\n" in scenario or "=" in scenario:
            return {"text": scenario, "file": "<string>", "base_dir": os.getcwd()}
        if not os.path.exists(scenario):
            # Say which reading was taken: a caller who meant TOML text
            # (a fragment with no key = value yet) would otherwise be told
            # only that a file cannot be read.
            raise ScenarioFileNotFoundError(
                scenario,
                "no such scenario file (a string with no '=' and no "
                "newline is taken as a path; TOML text has key = value lines)",
            )
        return {"path": scenario}
    raise TypeError(
        f"scenario: a TOML path, TOML text or a dict, not {type(scenario).__name__}"
    )


#: TOML's integers are signed 64-bit.
_TOML_INT = (-(2**63), 2**63 - 1)


def _plain(v: Any, what: str, path: str = "") -> Any:
    """``v`` as plain JSON-able Python values (numpy scalars and arrays
    unwrapped), refusing, with the dotted path of the value, what a
    scenario file cannot hold: None, NaN or infinite numbers, integers
    beyond 64 bits, keys that are not strings, and other objects. Without
    this such a value failed later with a position in intermediate JSON
    text. ``what`` names the whole (``scenario dict``, ``grid``)."""
    at = f"{what}: `{path}`" if path else what
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        v = v.tolist()  # numpy scalar or array
    if isinstance(v, Mapping):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise TypeError(f"{at}: key {k!r} ({type(k).__name__}): keys are strings")
            out[k] = _plain(x, what, f"{path}.{k}" if path else k)
        return out
    if isinstance(v, (list, tuple)):
        return [_plain(x, what, f"{path}[{i}]") for i, x in enumerate(v)]
    if v is None:
        raise ValueError(f"{at} is None: a scenario has no null; leave the key out for its default")
    if isinstance(v, str):
        return str(v)  # numpy's str_ too
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        if not _TOML_INT[0] <= v <= _TOML_INT[1]:
            raise ValueError(f"{at} = {v}: beyond TOML's 64-bit integers")
        return v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"{at} = {v}: not a finite number")
        return v
    raise TypeError(f"{at} = {v!r} ({type(v).__name__}) has no TOML form")


def _seed(seed: Any, where: str = "seed") -> int:
    """A seed as a scenario file can hold it (a whole number, 0 to
    2^63 - 1: TOML's integers are signed 64-bit), so that the run's
    ``text`` says the seed and ``bbrlab sim`` repeats the run from it."""
    if hasattr(seed, "item"):
        seed = seed.item()  # numpy integer
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"{where}: a whole number from 0 to 2^63 - 1, not {type(seed).__name__} {seed!r}")
    if not 0 <= seed <= _TOML_INT[1]:
        raise ValueError(
            f"{where}: a whole number from 0 to 2^63 - 1 (a scenario file's seed, a TOML integer), not {seed}"
        )
    return seed


def _whole(value: Any, name: str, least: int, optional: bool = True) -> Any:
    """``value`` if it is a whole number >= ``least`` (or None, where
    ``optional``); else a ValueError naming ``name`` and what it allows. A
    count of workers of 0 (or -1) must not quietly become the default."""
    if value is None and optional:
        return None
    if hasattr(value, "item"):
        value = value.item()  # numpy integer
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name}: a whole number >= {least}, not {value!r}")
    return value


def _flag(value: Any, name: str, optional: bool = False) -> Any:
    """``value`` if it is True or False (or None, where ``optional``); else
    a TypeError naming ``name``. Truthiness would take ``progress="no"``
    as yes, and the native side's refusal does not name the argument."""
    if value is None and optional:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy's bool_
    if not isinstance(value, bool):
        raise TypeError(f"{name}: True or False, not {type(value).__name__} {value!r}")
    return value


def _frame(batch: Any, units: Dict[str, str]) -> pd.DataFrame:
    df = pa.record_batch(batch).to_pandas()
    df.attrs["units"] = {c: units[c] for c in df.columns if c in units}
    return df


def _interactive() -> bool:
    """Progress is shown by default in Jupyter/IPython and on a terminal."""
    if "ipykernel" in sys.modules or hasattr(sys, "ps1"):
        return True
    return sys.stderr is not None and sys.stderr.isatty()


class _Progress:
    """A tqdm bar (tqdm.auto: a widget in Jupyter, text elsewhere) that a
    daemon thread advances from a native Clock while the simulation runs
    with the GIL released."""

    def __init__(self, total_s: float, desc: str, clock: Any) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=round(total_s, 3), desc=desc, unit=" sim s")
        self.clock = clock
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.done.wait(0.2):
            self._update()

    def _update(self) -> None:
        now = round(self.clock.now_ns() / 1e9, 3)
        if now > self.bar.n:
            self.bar.update(now - self.bar.n)

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self._update()
        self.bar.close()


@dataclass
class Run:
    """One finished simulation.

    ``name`` is the scenario's ``name``; ``seed`` the seed it ran with
    (``simulate(seed=)`` if given); ``duration_s`` its simulated length in
    seconds; ``text`` the scenario as run (TOML, with that seed: save it
    and ``bbrlab sim`` repeats the run); ``params`` the swept values of a
    one-point ``[sweep]`` (typed as ``summary.json`` types them; empty
    without one).

    ``flows``, ``link`` and ``summary`` are pandas DataFrames with the
    columns and units of ``flows.csv``, ``link.csv`` and ``summary.csv``
    (docs/outputs.md; ``UNITS``, and each frame's ``attrs["units"]``),
    unrounded. ``summary_json`` is the run's object of the CLI's
    ``summary.json``, the same values to the digit. ``fct`` has one row per
    finished finite flow (listed with a ``size``, or started by an
    ``[[arrivals]]`` table), the columns of ``fct.csv``, unrounded; empty
    without finite flows. ``fct_buckets()`` gives ``summary.json``'s
    ``fct`` buckets (FCT and slowdown percentiles by flow size) as a
    DataFrame. ``model`` has the columns of ``model.csv``: what each BBR
    flow's controller believes at every sample (gains, round count,
    BBRv3's ``inflight_longterm_bytes`` and ``inflight_shortterm_bytes``,
    ...; missing where the controller has no such state); empty without a
    BBR flow or with ``timeseries=False``.
    """

    name: str
    seed: int
    duration_s: float
    text: str
    params: Dict[str, Any]
    flows: pd.DataFrame
    link: pd.DataFrame
    summary: pd.DataFrame
    summary_json: Dict[str, Any] = field(repr=False)
    fct: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    model: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def fct_buckets(self) -> pd.DataFrame:
        """``summary.json``'s ``fct.buckets``: one row per size bucket
        (``label``, ``min_bytes``, ``max_bytes``, ``count``, ``fct_p50_s``,
        ``fct_p99_s``, ``slowdown_p50``, ``slowdown_p99``); empty without
        finite flows."""
        fct = self.summary_json.get("fct")
        df = pd.DataFrame(fct["buckets"] if fct else [], columns=list(UNITS["fct_buckets"]))
        # Units as every other frame has them (it had none: attrs was empty).
        df.attrs["units"] = {c: UNITS["fct_buckets"][c] for c in df.columns}
        return df

    def __repr__(self) -> str:
        return (
            f"Run({self.name!r}, seed={self.seed}, {self.duration_s:g} s, "
            f"{len(self.summary)} flows, {len(self.flows)} flow samples)"
        )


def simulate(
    scenario: ScenarioLike,
    seed: Optional[int] = None,
    *,
    progress: Optional[bool] = None,
    timeseries: bool = True,
) -> Run:
    """Runs a scenario in bbrlab's simulator and returns its ``Run``.

    ``scenario`` is a path to a scenario file (str or ``pathlib.Path``), the
    TOML text of one, or a dict with the same schema (docs/scenarios.md).
    ``seed`` (0 to 2^63 - 1, as a scenario file holds it) replaces the
    scenario's ``seed``, in ``Run.text`` and ``Run.params`` too, so the
    text saved and run again is the same run. A scenario the simulator
    refuses raises ``bbrlab.ScenarioError`` with the CLI's message
    (``file:line:col: ...``; also ``.location`` and ``.detail``). A scenario
    with a ``[sweep]`` is refused: ``bbrlab.sweep`` runs those.

    The GIL is released while simulating, so threads run simulations in
    parallel. ``progress`` (default: in Jupyter or on a terminal) shows a
    tqdm bar of simulated time. ``timeseries=False`` keeps only the summary
    (``flows``, ``link`` and ``model`` are then empty).
    """
    src = _source(scenario)
    if seed is not None:
        seed = _seed(seed)
    progress = _flag(progress, "progress", optional=True)
    timeseries = _flag(timeseries, "timeseries")
    clock = _native.Clock()
    show = _interactive() if progress is None else progress
    bar = None
    if show:
        try:
            # Parse first (cheap) for the duration the bar counts to.
            _, _, points = _native.sweep_points(**src)
            duration = _duration_of(points)
            bar = _Progress(duration, "simulating", clock)
        except ImportError:
            bar = None
    try:
        r = _native.simulate(**src, seed=seed, timeseries=timeseries, clock=clock)
    finally:
        if bar is not None:
            bar.close()
    return Run(
        name=r["name"],
        seed=r["seed"],
        duration_s=r["duration_s"],
        text=r["text"],
        params={k: _typed(v) for k, v in r["params"]},
        flows=_frame(r["flows"], UNITS["flows"]),
        link=_frame(r["link"], UNITS["link"]),
        summary=_frame(r["summary"], UNITS["summary"]),
        summary_json=json.loads(r["summary_json"]),
        fct=_frame(r["fct"], UNITS["fct"]),
        model=_frame(r["model"], UNITS["model"]),
    )


def _duration_of(points: List[Any]) -> float:
    if len(points) != 1:
        return 0.0
    return float(points[0][3]) / 1e9


#: What Rust's ``str::parse`` reads as an integer and as a finite number:
#: Python's ``int()`` and ``float()`` also take ``1_000`` and surrounding
#: spaces, which would type a swept string differently from the CLI.
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _typed(v: str) -> Any:
    """A swept value as the CLI's summary.json types it
    (``runner::output::param_value``): a 64-bit integer, a boolean or a
    finite number when it reads as one, else the string."""
    if _INT.fullmatch(v) and _TOML_INT[0] <= int(v) <= _TOML_INT[1]:
        return int(v)
    if v in ("true", "false"):
        return v == "true"
    if _FLOAT.fullmatch(v):
        x = float(v)
        if x not in (float("inf"), float("-inf")):
            return x
    return v


@dataclass
class Claim:
    """A published claim's verdict from ``reproduce``: its ``id``
    (``C3``), ``title`` and ``source`` (the publication), whether it was
    ``reproduced`` (every check within tolerance), the quantities
    (``rows``: published vs measured), the tolerance ``checks``, the
    ``notes``, the ``figures`` (SVG and PNG files of the report) and the
    wall-clock ``seconds`` its runs took."""

    id: str
    title: str
    source: str
    reproduced: bool
    rows: pd.DataFrame
    checks: pd.DataFrame
    notes: List[str]
    figures: List[Path]
    seconds: float

    def _repr_html_(self) -> str:
        verdict = "reproduced" if self.reproduced else "not reproduced"
        imgs = "".join(
            f"<div>{p.read_text()}</div>" for p in self.figures if p.suffix == ".svg" and p.exists()
        )
        return (
            f"<h4>{self.id}: {self.title} &mdash; {verdict}</h4>"
            f"{self.rows.to_html(index=False)}{imgs}"
        )


def reproduce(
    claims: List[str],
    out: Union[str, "os.PathLike[str]"] = "report",
    *,
    quick: bool = False,
    jobs: Optional[int] = None,
) -> List[Claim]:
    """Runs published claims (e.g. ``["C3"]``) or BBRv3 results (``["V1"]``)
    as ``bbrlab reproduce --only`` does, writes the report into ``out`` and
    returns each one's verdict and figures. The GIL is released while their
    runs simulate."""
    if isinstance(claims, str):
        claims = [claims]
    if not isinstance(claims, (list, tuple)) or not all(isinstance(c, str) for c in claims):
        raise TypeError(f"claims: a list of claim ids such as ['C3', 'V1'], not {claims!r}")
    quick = _flag(quick, "quick")
    jobs = _whole(jobs, "jobs", 1)
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out: the report's directory (a str or path), not {type(out).__name__} {out!r}")
    out = Path(out)
    outcomes = json.loads(_native.reproduce(list(claims), os.fspath(out), quick=quick, jobs=jobs))
    result = []
    for o in outcomes:
        figures = []
        for stem in o["figures"]:
            figures += [p for p in (out / f"{stem}.svg", out / f"{stem}.png") if p.exists()]
        result.append(
            Claim(
                id=o["id"],
                title=o["title"],
                source=o["source"],
                reproduced=o["reproduced"],
                rows=pd.DataFrame(o["rows"]),
                checks=pd.DataFrame(o["checks"]),
                notes=o["notes"],
                figures=figures,
                seconds=o["seconds"],
            )
        )
    return result

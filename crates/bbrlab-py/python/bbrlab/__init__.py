"""bbrlab for Python: BBR congestion control in a deterministic network
simulator.

- ``simulate(scenario, seed=None) -> Run``: one run; ``Run.flows``,
  ``Run.link`` and ``Run.summary`` are pandas DataFrames (units in
  ``UNITS`` and docs/outputs.md).
- ``sweep(scenario, grid, seeds=..., client=None) -> DataFrame``: every
  combination as Dask tasks, on a LocalCluster or any Dask ``Client``.
- ``search(cc, objective, client=None, **budget) -> SearchResult``: the
  path inside a budget on which a controller does worst, by CMA-ES
  against a random baseline, each generation on Dask.
- ``reproduce(["C3"])``: published claims' verdicts and figures.
- ``pantheon_points(sweep_dir_or_frame)`` and ``plot_pantheon(points)``:
  throughput against 95th-percentile RTT, one row per run and algorithm.
- ``fairness_over_time(run, window=1.0, step=0.1)``: Jain's index over
  sliding windows and the time to converge to a fair share.
- ``plot_dir(path)``: the figures ``bbrlab plot`` draws for a run directory
  (time series, fairness, queue CDF, FCT) or a sweep's output directory.

Scenarios are TOML files (docs/scenarios.md), TOML text, or dicts of the
same schema; they run through the same Rust code as the ``bbrlab`` CLI.
A scenario the simulator refuses raises ``ScenarioError`` (a
``ValueError``); a path that names no file raises its subclass
``ScenarioFileNotFoundError``, also a ``FileNotFoundError``.
``scenario_toml(dict)`` writes a dict as the TOML file the CLI runs.
"""

from ._native import ScenarioError
from ._native import provenance as _provenance
from ._plots import fairness_over_time, pantheon_points, plot_dir, plot_pantheon
from ._run import UNITS, Claim, Run, ScenarioFileNotFoundError, reproduce, scenario_toml, simulate
from ._search import SearchResult, search
from ._sweep import sweep, to_parquet

__version__, git_commit = _provenance()

__all__ = [
    "Claim",
    "Run",
    "ScenarioError",
    "ScenarioFileNotFoundError",
    "UNITS",
    "fairness_over_time",
    "pantheon_points",
    "plot_dir",
    "plot_pantheon",
    "reproduce",
    "scenario_toml",
    "search",
    "SearchResult",
    "simulate",
    "sweep",
    "to_parquet",
]

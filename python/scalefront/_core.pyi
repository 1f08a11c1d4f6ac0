"""Type stubs of the Rust extension `scalefront._core` (rust/python/src/lib.rs, sweep.rs), checked against the built
module by `python -m mypy.stubtest scalefront._core`.

The dicts the functions take are laid out as the core's structs (field names as keys, SI units); the Python layer
builds them (scalefront.model, scalefront.scenario, scalefront.network, scalefront.validation). Errors: a bad figure
or an impossible configuration raises `scalefront.errors.ConfigurationError`, a panic
`scalefront.errors.InternalError`.
"""

from typing import Any, TypedDict, final

import numpy.typing as npt

__all__ = [
    "RoiHandle",
    "SweepHandle",
    "__version__",
    "_panic_for_test",
    "cell_costs",
    "cell_sizes",
    "collective_times",
    "data_files",
    "error_categories",
    "evaluate",
    "model_params",
    "network_bom",
    "roi_compare",
    "roi_monte_carlo",
    "roi_summarise",
    "run_sweep",
    "schema",
    "shard_ranges",
    "space_size",
]

__version__: str

class _InputDoc(TypedDict):
    name: str
    kind: str
    doc: str

class _MetricDoc(TypedDict):
    name: str
    unit: str
    kind: str
    group: str
    doc: str

class _Schema(TypedDict):
    inputs: list[_InputDoc]
    metrics: list[_MetricDoc]

#: Columns of a sweep: each axis (index or degree) as uint32, each metric as float64 / int64 / bool.
_Columns = dict[str, npt.NDArray[Any]]

def schema() -> _Schema:
    """The output schema, in column order: every input and every metric with its unit, kind, group and doc."""

def error_categories() -> list[str]:
    """Every category a ConfigurationError can carry, in the core's order."""

def evaluate(config: dict[str, Any]) -> dict[str, Any]:
    """Evaluate one configuration (`scalefront_core::Config` as a dict); every metric by name."""

def model_params(model: dict[str, Any]) -> float:
    """Total parameters of a model given as the core's TransformerSpec dict."""

def space_size(space: dict[str, Any]) -> int:
    """Configurations in a sweep space (`scalefront_core::sweep::SweepSpace` as a dict), counted without evaluating
    any; checks the space first."""

def cell_sizes(space: dict[str, Any]) -> npt.NDArray[Any]:
    """Configurations of every cell (cluster design), in cell-index order (uint64)."""

def cell_costs(space: dict[str, Any]) -> npt.NDArray[Any]:
    """Estimated cost of every cell, in the work units `SweepHandle.work()` counts (uint64)."""

def shard_ranges(costs: list[int], shards: int) -> list[tuple[int, int]]:
    """Contiguous (start, stop) ranges of cells of about equal cost."""

@final
class SweepHandle:
    """Progress, pause and cancellation of one sweep, shared by the thread running it and the one watching it."""

    def __new__(cls) -> SweepHandle: ...
    def done(self) -> int:
        """Configurations evaluated or rejected so far."""
    def feasible(self) -> int:
        """Feasible configurations found so far."""
    def rejected(self) -> dict[str, int]:
        """Configurations rejected so far, by reason (only reasons seen so far)."""
    def cancel(self) -> None:
        """Ask the sweep to stop; it returns within a task with `cancelled` set."""
    def pause(self) -> None:
        """Hold the workers at their next task boundary until `resume()` (or `cancel()`)."""
    def resume(self) -> None: ...
    def paused(self) -> bool: ...
    def held(self) -> int:
        """Workers currently held by `pause()`: once > 0, the sweep is running and waiting."""
    def work(self) -> int:
        """Estimated work done so far, in the units of `cell_costs` (for ETAs: most configurations cost nothing)."""
    def cancelled(self) -> bool: ...
    def next_rows(self, timeout_s: float) -> _Columns | None:
        """The next chunk of streamed feasible rows, waiting up to `timeout_s` (GIL released); None when nothing came
        in time or the stream is over."""

class _SweepResult(TypedDict):
    frontier: _Columns
    evaluated: int
    feasible: int
    rejected: dict[str, int]
    cancelled: bool

def run_sweep(
    space: dict[str, Any],
    handle: SweepHandle,
    stream_rows: bool = False,
    cells: list[int] | None = None,
    threads: int | None = None,
) -> _SweepResult:
    """Run a sweep (blocking, GIL released) of every cell or the given ones (ascending cell indices), on all cores
    or a pool of `threads`: the kept rows as numpy columns with `objective_<i>`, and the counts."""

def collective_times(request: dict[str, Any]) -> list[float]:
    """Times (s) of one collective (`op`: all_reduce, reduce_scatter, all_gather, all_to_all) over consecutive ranks
    for each message size as nccl-tests counts it (for nccl-tests validation and `scalefront calibrate`)."""

def network_bom(request: dict[str, Any]) -> dict[str, Any]:
    """The network's bill of materials for `gpus` GPUs: parts by tier, NVLink switch trays, capex and power."""

@final
class RoiHandle:
    """Progress and cancellation of one ROI Monte Carlo run."""

    def __new__(cls) -> RoiHandle: ...
    def done(self) -> int:
        """Samples done so far."""
    def cancel(self) -> None:
        """Ask the run to stop; it returns within a task with `cancelled` set."""
    def cancelled(self) -> bool: ...

def roi_compare(problem: dict[str, Any], uncertainty: dict[str, Any]) -> dict[str, Any]:
    """The fabric comparison at typical values per GPU count (`scalefront_core::roi::RoiProblem` and
    `montecarlo::Uncertainty` as dicts), with the tornado of every uncertain input."""

def roi_monte_carlo(
    problem: dict[str, Any], uncertainty: dict[str, Any], handle: RoiHandle, first: int, samples: int
) -> dict[str, Any]:
    """Samples `first .. first + samples` of the Monte Carlo (blocking, GIL released): per GPU count, the outcome
    columns and their summary."""

def roi_summarise(gpus: int, columns: dict[str, Any]) -> dict[str, Any]:
    """The summary (P(A cheaper), P10/P50/P90) of one GPU count's Monte Carlo outcome columns."""

def data_files() -> dict[str, str]:
    """The catalog and validation files embedded at build time: {path under data/: text}."""

def _panic_for_test() -> None:
    """Panic inside the core on purpose (tests that a panic reaches Python as InternalError)."""

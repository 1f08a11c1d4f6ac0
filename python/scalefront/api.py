"""The public API for user interfaces: what a front end (the terminal UI, a notebook, a web page) needs, typed
and documented, with names that stay stable while scalefront's internals move.

- **Scenarios**: :class:`ScenarioDraft` opens a built-in scenario or a TOML file, gives a form's values
  (:data:`FORM_FIELDS`), checks edited values (every field's problem at once, :class:`FormErrors`) and saves
  the edited scenario to TOML.
- **Sweeps**: :class:`SweepJob` runs a scenario's sweep (blocking, in a worker thread) and is steered from
  another thread: :meth:`~SweepJob.pause`, :meth:`~SweepJob.resume`, :meth:`~SweepJob.cancel`; progress arrives
  as :class:`Progress`.
- **Frames**: :func:`frontier` and :func:`best_per_fabric_and_size` return polars frames in the export schema
  plus two derived text columns (``layout``, ``topology_label``); :func:`column_spec` says how to show any column
  (short label, unit, formatting, meaning) from the core's schema; :func:`parse_filter` reads filters written
  with those names (``days<10 fabric=ib``).
- **Details**: :meth:`ScenarioDraft.bill_of_materials` for a row; :func:`step_components` lists the step-time
  components of the schema.
- **Fabric comparison**: :func:`compare_fabrics` with :class:`WhatIf` inputs gives a :class:`RoiView` (table,
  verdict, tornado bars); :func:`verdict_at` words it at any of its GPU counts; :func:`fabric_choices` lists the
  fabrics it can compare.
- **Serving**: :func:`serving_sweep` gives a :class:`ServingSweep` of a scenario's model (the default serving
  workload of :mod:`scalefront.inputs.scenario.serving_default`); its :meth:`~ServingSweep.view` under SLOs
  (:data:`SERVING_SLOS`; :func:`parse_slo` reads ``tpot_s<=0.05``) is a :class:`ServingView` (frontier rows, or
  the message of an empty frontier); :func:`serving_columns` says how to show its columns
  (:data:`SERVING_COLUMNS`, :data:`SERVING_DETAIL`).
- **Exports**: :func:`export_rows`, :func:`export_roi`, :func:`export_serving`, :func:`row_as_csv`.
- **Front ends** register under the entry-point group ``scalefront.ui`` (see :class:`UserInterface`);
  :func:`find_ui` loads the installed one for the ``scalefront`` command.

Front ends import from this module only (scalefront's own UI is tested for it).
"""

from __future__ import annotations

import importlib.metadata
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from scalefront import schema
from scalefront._core import SweepHandle
from scalefront.engine.export import write_frame
from scalefront.engine.limits import (
    DEFAULT_MAX_CONFIGS,
    DEFAULT_TIME_LIMIT_S,
    SweepLimits,
    check_size,
    engine_threads,
)
from scalefront.engine.serving_view import (
    SERVING_COLUMNS,
    SERVING_DETAIL,
    SERVING_SLOS,
    ServingSweep,
    ServingView,
    serving_columns,
)
from scalefront.engine.sweep import Progress, SweepResult, run_sweep
from scalefront.errors import CatalogError, ConfigurationError, ScalefrontError, UsageError, message_of
from scalefront.inputs.scenario.build import Scenario, builtin_scenarios
from scalefront.inputs.scenario.draft import FORM_FIELDS, FormErrors, FormField, ScenarioDraft
from scalefront.inputs.scenario.file import DEFAULT_SCENARIO
from scalefront.inputs.scenario.serving import parse_slo
from scalefront.roi.text import modes_text
from scalefront.roi.whatif import (
    INTERACTIVE_SAMPLES,
    RoiView,
    TornadoBar,
    WhatIf,
    compare_fabrics,
    fabric_choices,
    verdict_at,
    what_if_defaults,
)
from scalefront.table import ColumnSpec, Filter, column_spec, column_specs, export_frame_columns, parse_filter, present
from scalefront.units import (
    format_count,
    format_days,
    format_money,
    format_percent,
    format_si,
    format_value,
    parse_count,
    parse_number,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_SCENARIO",
    "FORM_FIELDS",
    "INTERACTIVE_SAMPLES",
    "SERVING_COLUMNS",
    "SERVING_DETAIL",
    "SERVING_SLOS",
    "UI_ENTRY_POINT_GROUP",
    "CatalogError",
    "ColumnSpec",
    "ConfigurationError",
    "Filter",
    "FormErrors",
    "FormField",
    "Progress",
    "RoiView",
    "ScalefrontError",
    "ScenarioDraft",
    "ServingSweep",
    "ServingView",
    "SweepJob",
    "SweepResult",
    "TornadoBar",
    "UsageError",
    "UserInterface",
    "WhatIf",
    "best_per_fabric_and_size",
    "builtin_scenarios",
    "column_spec",
    "column_specs",
    "compare_fabrics",
    "export_roi",
    "export_rows",
    "export_serving",
    "fabric_choices",
    "find_ui",
    "format_count",
    "format_days",
    "format_money",
    "format_percent",
    "format_si",
    "format_value",
    "frontier",
    "message_of",
    "modes_text",
    "parse_count",
    "parse_filter",
    "parse_number",
    "parse_slo",
    "row_as_csv",
    "serving_columns",
    "serving_sweep",
    "step_components",
    "ui_missing_message",
    "verdict_at",
    "what_if_defaults",
]

#: Version of this API. A front end states the version it was written for (:class:`UserInterface`); it changes
#: only when a name here changes incompatibly.
API_VERSION = 3


class SweepJob:
    """One sweep of a scenario: :meth:`run` it in a worker thread; pause, resume or cancel it from any thread.

    A job created with ``paused=True`` (or paused before or during :meth:`run`) holds every engine worker at its
    next task boundary until :meth:`resume`; :meth:`held` counts the workers waiting, so a caller can wait for a
    sweep to be provably running and not finished (the UI's tests do).

    The sweep command's limits hold here too: a space over `max_configs` configurations is refused before any
    work, and a sweep projected past `time_limit_s` is stopped (both raise a one-line :class:`UsageError`)."""

    def __init__(
        self,
        scenario: Scenario | ScenarioDraft,
        *,
        paused: bool = False,
        max_configs: int = DEFAULT_MAX_CONFIGS,
        time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    ):
        self.scenario: Scenario = scenario.scenario if isinstance(scenario, ScenarioDraft) else scenario
        self.max_configs, self.time_limit_s = max_configs, time_limit_s
        self._handle = SweepHandle()
        if paused:
            self._handle.pause()

    @property
    def total(self) -> int:
        """Configurations in the scenario's space (counted exactly, none evaluated)."""
        return self.scenario.size()

    def run(self, on_progress: Callable[[Progress], None] | None = None, *, poll_s: float = 0.05) -> SweepResult:
        """Run the sweep to the end, or until :meth:`cancel` (the result then says ``cancelled``), at any moment,
        planning included. `on_progress` is called from this thread every `poll_s` seconds and once at the end.
        Raises UsageError for a space over the limits (see the class)."""
        check_size(self.scenario.path, self.total, self.max_configs)
        limits = SweepLimits(self.scenario.path, self.total, self.time_limit_s, threads=engine_threads())

        def watch(p: Progress) -> None:
            if on_progress:
                on_progress(p)
            limits(p)

        return run_sweep(self.scenario, on_progress=watch, poll_s=poll_s, handle=self._handle)

    def pause(self) -> None:
        """Hold the engine's workers at their next task boundary."""
        self._handle.pause()

    def resume(self) -> None:
        self._handle.resume()

    def cancel(self) -> None:
        """Stop the sweep (held workers are released to see it); :meth:`run` returns soon after."""
        self._handle.cancel()

    @property
    def paused(self) -> bool:
        return bool(self._handle.paused())

    @property
    def cancelled(self) -> bool:
        return bool(self._handle.cancelled())

    def held(self) -> int:
        """Workers waiting at the pause gate right now."""
        return int(self._handle.held())

    def done(self) -> int:
        """Configurations evaluated or rejected so far."""
        return int(self._handle.done())

    @property
    def planned(self) -> bool:
        """Whether the engine has planned the sweep (estimated its work); a paused job is held before it plans."""
        return self._handle.work_total() is not None


def frontier(result: SweepResult) -> pl.DataFrame:
    """The scenario's Pareto frontiers (per its group-by axes) with the derived ``layout`` and ``topology_label``
    columns."""
    return present(result.frontier())


def best_per_fabric_and_size(result: SweepResult) -> pl.DataFrame:
    """The fastest configuration for each (fabric, GPU count), with the derived columns."""
    return present(result.best_per_fabric_and_size())


def step_components() -> list[ColumnSpec]:
    """The schema's step-time components (they add up to ``step_time_s``), in schema order."""
    return [column_spec(m.name) for m in schema.METRICS if m.group == "step"]


def serving_sweep(draft: ScenarioDraft) -> ServingSweep:
    """The serving sweep of `draft`'s model, at its cost basis (nothing runs until its first
    :meth:`~ServingSweep.view`). A training scenario has no ``[serving]`` table: the workload is stated in
    :mod:`scalefront.inputs.scenario.serving_default`, and :meth:`~ServingSweep.toml` writes it as a serving
    scenario for ``scalefront inference --scenario``."""
    return ServingSweep(draft.scenario, draft.value("mode"), draft.catalog)


def export_rows(frame: pl.DataFrame, path: str | Path, *, force: bool = False) -> Path:
    """Write result rows (as shown: filtered, sorted) to .csv or .parquet in the export schema, atomically; an
    existing file is replaced only with `force` (UsageError otherwise)."""
    return write_frame(export_frame_columns(frame), path, force)


def export_roi(view: RoiView, path: str | Path, *, force: bool = False) -> Path:
    """Write a fabric comparison's table (the ``roi.csv`` columns, plus the chosen mode's ``cost_<fabric>`` and
    ``saving_b_minus_a``) to .csv or .parquet."""
    return write_frame(view.table, path, force)


def export_serving(view: ServingView, path: str | Path, *, force: bool = False) -> Path:
    """Write a serving frontier as shown (every fabric's points under the view's SLOs: the fabric, the swept values,
    the layout and every serving metric) to .csv or .parquet, atomically; an existing file is replaced only with
    `force` (UsageError otherwise)."""
    return write_frame(view.frame, path, force)


def row_as_csv(row: dict[str, Any]) -> str:
    """One result row as CSV text (a header line and a value line, export columns only), for the clipboard."""
    frame = export_frame_columns(pl.DataFrame([row]))
    buffer = io.StringIO()
    frame.write_csv(buffer)
    return buffer.getvalue()


# ------------------------------------------------------------------------------------------------ front ends
#: Entry-point group a front end registers in, e.g. in its pyproject.toml:
#: ``[project.entry-points."scalefront.ui"] tui = "scalefront_tui"``.
UI_ENTRY_POINT_GROUP = "scalefront.ui"


class UserInterface(Protocol):
    """What a front end registered under :data:`UI_ENTRY_POINT_GROUP` provides (a module or an object)."""

    #: The :data:`API_VERSION` it was written for.
    api_version: int

    def run(self, scenario: str) -> None:
        """Open the UI on a scenario (built-in id or file) in this terminal, until the user quits."""

    def serve(
        self,
        scenario: str,
        *,
        host: str,
        port: int,
        public_url: str | None = None,
        export_dir: str | Path | None = None,
        token: str | None = None,
        max_sessions: int | None = None,
    ) -> int:
        """Serve the same UI to web browsers at http://host:port until SIGINT or SIGTERM, and return the exit
        status (130 or 143): files written from a browser only inside `export_dir`, a `token` required beyond
        loopback, at most `max_sessions` apps. Raises UsageError for an address it cannot serve."""


def ui_missing_message() -> str:
    """What to tell a user who asks for the UI when none is installed."""
    return (
        "the terminal UI is a separate package: install it with `pip install scalefront-tui` (from a scalefront "
        "source tree: `pip install ./tui`); batch sweeps need only the core: scalefront sweep [SCENARIO] --out F"
    )


def find_ui() -> UserInterface | None:
    """The installed front end (entry point ``tui`` first), or None. Raises UsageError when it was written for
    another API version (with the command that fixes it)."""
    points = sorted(importlib.metadata.entry_points(group=UI_ENTRY_POINT_GROUP), key=lambda ep: ep.name != "tui")
    if not points:
        return None
    ui: UserInterface = points[0].load()
    wanted = getattr(ui, "api_version", None)
    if wanted != API_VERSION:
        dist = points[0].dist.name if points[0].dist is not None else points[0].value
        raise UsageError(
            f"the installed UI ({dist}) was written for scalefront API version {wanted}, this scalefront has "
            f"{API_VERSION}; install matching versions: pip install -U scalefront {dist}"
        )
    return ui

"""Type stubs of the Rust extension `scalefront._core` (rust/python/src/), checked against the built module by
`python -m mypy.stubtest scalefront._core`.

The dicts the functions take are laid out as the core's structs (field names as keys, SI units); the Python layer
builds them (scalefront.inputs, scalefront.engine, scalefront.roi, scalefront.fidelity). The records they
return are the core's result records, whose TypedDicts below are generated from them. Errors: a bad figure or an
impossible configuration raises `scalefront.errors.ConfigurationError`; a panic, or a dict the core's types cannot
be read from (naming the field), `scalefront.errors.InternalError`.
"""

from typing import Any, Literal, TypedDict, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "ATTENTION_HEADS",
    "ATTENTION_SEQS",
    "SMALL_GEMM_FLOPS",
    "RoiHandle",
    "RoiSession",
    "SweepHandle",
    "__version__",
    "_panic_for_test",
    "catalog_figures",
    "cell_costs",
    "cell_sizes",
    "collective_times",
    "data_files",
    "enums",
    "error_categories",
    "evaluate",
    "fabric_topology_problem",
    "model_params",
    "network_bom",
    "parameters",
    "parse_builtin_toml",
    "result_records",
    "roi_analyse",
    "roi_compare",
    "roi_monte_carlo",
    "roi_summarise",
    "run_sweep",
    "schema",
    "serve",
    "serve_axes",
    "serve_sweep",
    "shard_ranges",
    "space_size",
]

__version__: str
#: GEMMs of fewer FLOPs than this run at a GPU's `small_gemm_efficiency` (the core's compute model).
SMALL_GEMM_FLOPS: float
#: The rows (heads per GPU x sequences per micro-batch) and columns (sequence length) of a GPU's attention table.
ATTENTION_HEADS: list[float]
ATTENTION_SEQS: list[float]

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
    #: "min" or "max" for a metric a sweep can optimise.
    direction: Literal["min", "max"] | None

class _Schema(TypedDict):
    inputs: list[_InputDoc]
    metrics: list[_MetricDoc]
    #: The metrics of a serving evaluation (`serve`).
    serving_metrics: list[_MetricDoc]
    #: The suffix a name carries for its unit, by unit.
    unit_suffixes: dict[str, str]

#: Columns of a sweep: each axis (index or degree) as uint32, each metric as float64 / int64 / bool.
_Columns = dict[str, npt.NDArray[Any]]

# records:begin (generated: python -m scalefront.dev.schema --write)
class _FieldDoc(TypedDict):
    """One key of a record: its name, its stub annotation and its doc."""

    key: str
    hint: str
    doc: str

class _RecordDoc(TypedDict):
    """A record's description for the generated stubs: its TypedDict's name and doc, the records whose keys it
    inlines, and its own keys in order."""

    name: str
    doc: str
    bases: list[str]
    fields: list[_FieldDoc]

class _BomSheet(TypedDict):
    """The bill of materials as `scalefront bom` lists it: counts as whole numbers, then the capex lines, the
    yearly lines and power (USD, W)."""

    gpus: int
    #: Switch tiers as built (0 for a torus, 1 for a dragonfly's routers).
    tiers: int
    #: Switches per tier, leaf first.
    switches_by_tier: list[int]
    nics: int
    switches_total: int
    nvlink_switch_trays: int
    cables: int
    host_links: int
    switch_links: int
    copper_links: int
    dac_cables: int
    active_copper_links: int
    acc_cables: int
    fibres: int
    #: Optical modules: NIC-side plus switch-side.
    transceivers: int
    nic_optics: int
    switch_optics: int
    optical_port_ends: int
    racks: int
    nics_usd: float
    switches_usd: float
    optics_usd: float
    copper_usd: float
    active_copper_usd: float
    fibre_usd: float
    fabric_manager_usd: float
    nvlink_trays_usd: float
    #: Network hardware: every capex line above.
    network_capex_usd: float
    spares_usd: float
    installation_usd: float
    oob_usd: float
    support_usd_per_year: float
    licences_usd_per_year: float
    network_power_w: float

class _SideSpeed(TypedDict):
    """What one fabric delivers on one design: per workload, the chosen candidate and its delivered throughput."""

    #: Index of the chosen candidate per workload.
    chosen: list[int]
    #: Delivered tokens/s per workload: tokens/s x goodput, model error applied.
    tokens_per_s: list[float]
    #: Days to train each workload's tokens at the chosen layout (time to train, model error applied).
    days: list[float]
    goodput: list[float]
    #: What training each workload's tokens would cost renting the GPUs instead (rent mode, for comparison).
    rent_usd: list[float]
    #: Share of each workload's step that is exposed communication (the part the collective model's error
    #: scales): how much of a speed difference the collective model's error can move.
    comm_share: list[float]

class _SideReport(_SideSpeed):
    """One fabric's side at one GPU count as the comparison reports it: what it delivers, and what its cluster
    costs to buy (USD), draws (W) and costs over its life by component."""

    server_capex_usd: float
    network_capex_usd: float
    fabric_capex_usd: float
    it_power_w: float
    #: Present value of each component (`SideCost::breakdown`), the fabric's lines at the premium applied.
    breakdown_usd: dict[str, float]
    #: What each quotable price line amounts to (USD, by the price line's name): the hardware lines' capex,
    #: the present value of the yearly lines (support, NOS and fabric manager licences), the servers.
    lines_usd: dict[str, float]

class _Comparison(TypedDict):
    """The comparison of A and B at one GPU count."""

    gpus: int
    #: rho = W_A / W_B.
    speed_ratio: float
    #: Multiplier applied to A's fabric lines (1 without `--premium`).
    premium_scale: float
    tco_a_usd: float
    tco_b_usd: float
    capex_a_usd: float
    capex_b_usd: float
    opex_a_usd_per_year: float
    opex_b_usd_per_year: float
    #: Fabric cost (PV of the lines that scale with its price) of A and B.
    fabric_a_usd: float
    fabric_b_usd: float
    #: N_A / N_B.
    premium: float
    #: N_A* / N_B: the premium at which both cost the same per delivered work.
    break_even_premium: float
    #: rho PV(TCO_B) - PV(TCO_A): positive when A is cheaper per delivered work.
    savings_usd: float
    #: The value of one busy GPU-hour used for NPV and payback.
    value_usd_per_gpu_hour: float
    #: NPV of choosing A: -(extra capex + delay) + PV(monthly benefit) + PV(extra resale).
    npv_usd: float
    #: A's extra capex over B's (negative: A is cheaper upfront).
    extra_capex_usd: float
    #: PV(TCO_A) - PV(TCO_B): what A costs more over the life, before valuing any speed difference.
    extra_tco_usd: float
    #: A's extra running cost a year (energy, support, licences, staff, replacements).
    extra_opex_usd_per_year: float
    #: The value of A's extra capacity a year (negative when A is slower).
    extra_capacity_usd_per_year: float
    #: A's extra resale at the end of the life (undiscounted).
    extra_residual_usd: float
    #: The capacity A's later delivery loses (its lead time beyond B's), valued as extra capacity is; at month 0.
    delay_usd: float
    #: PV of A's extra capacity over the life at the valuation.
    speed_value_usd: float
    #: A lifecycle's split (`lifecycle`): months of training (the whole life without one), each phase's speed
    #: ratio, the value of A's extra capacity a year while serving, and the PV of speed in each phase (they
    #: add up to `speed_value_usd`).
    training_months: float
    training_speed_ratio: float
    serving_speed_ratio: float
    serving_extra_capacity_usd_per_year: float
    speed_value_training_usd: float
    speed_value_serving_usd: float
    payback: Literal["months", "beyond life", "dominant", "trade-off", "never"]
    #: Months to pay back A's extra capex (infinite when never; 0 when dominant).
    payback_months: float
    life_months: float
    #: Cost per delivered million tokens, per workload, on A and B.
    usd_per_mtoken_a: list[float]
    usd_per_mtoken_b: list[float]
    #: Levelised cost of a useful GPU-hour (busy and advancing training: goodput).
    usd_per_useful_gpu_hour_a: float
    usd_per_useful_gpu_hour_b: float

class _TornadoBar(TypedDict):
    """One input's bar of the tornado of one (GPU count, B) pair, on the headline metric: the NPV of choosing A
    (equal to the savings per delivered work when no value per GPU-hour is given)."""

    #: Index into the inputs.
    input: int
    low: float
    typical: float
    high: float
    #: NPV of choosing A with the input at low and at high, the others typical.
    npv_low_usd: float
    npv_high_usd: float
    break_even_low: float
    break_even_high: float
    #: The value (nearest the typical one) at which the NPV changes sign: the first value past the flip (a
    #: whole number for a whole-number input); NaN when none in [low, high].
    flip: float
    #: Where the line through (low, NPV at low) and (high, NPV at high) crosses zero, in or beyond the range:
    #: the exact flip of an input the NPV is linear in (a unit price: what quote would flip the verdict);
    #: NaN when the two ends are equal.
    linear_flip: float

class _CashFlowYear(TypedDict):
    """One year of the premium's cash flows (year 0: the upfront outlay), in USD of that year and discounted."""

    year: int
    #: A's extra capex and the delay's lost capacity (year 0 only; a cost, so negative).
    upfront_usd: float
    #: The months' benefits of the year: extra capacity valued, less extra running cost.
    benefit_usd: float
    #: A's extra resale (the last year only).
    residual_usd: float
    net_usd: float
    #: The year's flows, each discounted from its month.
    discounted_usd: float
    #: The discounted flows so far: at the last year, the NPV.
    cumulative_discounted_usd: float

class _CountReport(_Comparison):
    """One (GPU count, B) pair at typical values: the comparison's figures, the two designs' topologies, both
    sides, the tornado of every uncertain input that moves the NPV, and the premium's yearly cash flows."""

    #: Which B (1, 2, ...).
    side_b: int
    topology_a: str
    topology_b: str
    a: _SideReport
    b: _SideReport
    tornado: list[_TornadoBar]
    cash_flows: list[_CashFlowYear]
    #: The yearly internal rate of return of choosing A (its premium against its benefits); NaN when the flows
    #: never change sign or are not an outlay followed by returns (`Flows::irr`).
    irr: float

class _TypicalReport(TypedDict):
    """The comparison at typical values, per (GPU count, B) pair."""

    counts: list[_CountReport]

class _McSummary(TypedDict):
    """The Monte Carlo result of one (GPU count, B) pair. P is the share of the samples: each sample draws every
    price, fabric figure and model error from its distribution, so P measures how sure the verdict is given
    what is uncertain about the inputs and the model, not a spread between buyers or jobs."""

    gpus: int
    #: Which B (1, 2, ...).
    side_b: int
    samples: int
    #: P(A is cheaper per delivered work): P(savings > 0).
    p_a_cheaper: float
    #: P(choosing A pays: NPV > 0), the headline probability (equal to `p_a_cheaper` when no value per
    #: GPU-hour is given).
    p_npv_positive: float
    #: The same with the model's error left out of every sample.
    p_npv_positive_no_error: float
    #: P(A's extra capex pays back within the life, or nothing to pay back).
    p_payback_within_life: float
    #: P10, P50, P90 of each outcome.
    premium: list[float]
    break_even_premium: list[float]
    savings_usd: list[float]
    npv_usd: list[float]
    npv_no_error_usd: list[float]
    extra_capex_usd: list[float]
    extra_tco_usd: list[float]
    extra_tco_share: list[float]
    payback_months: list[float]
    speed_ratio: list[float]
    #: The IRR's P10, P50, P90 over the samples (those without one at their bounds, `Flows::irr_ranked`;
    #: samples that are not an investment left out).
    irr: list[float]

class _OutcomeColumns(TypedDict):
    """Every sample's outcome at one GPU count, one column per figure; `payback` as the index of its kind in
    `McReport::payback_kinds`."""

    premium: npt.NDArray[np.float64]
    break_even_premium: npt.NDArray[np.float64]
    savings_usd: npt.NDArray[np.float64]
    npv_usd: npt.NDArray[np.float64]
    npv_no_error_usd: npt.NDArray[np.float64]
    extra_capex_usd: npt.NDArray[np.float64]
    extra_tco_usd: npt.NDArray[np.float64]
    extra_tco_share: npt.NDArray[np.float64]
    payback_months: npt.NDArray[np.float64]
    speed_ratio: npt.NDArray[np.float64]
    irr: npt.NDArray[np.float64]
    payback: npt.NDArray[np.uint32]

class _McCount(TypedDict):
    """The Monte Carlo of one (GPU count, B) pair: its outcomes and their summary."""

    gpus: int
    side_b: int
    outcomes: _OutcomeColumns
    summary: _McSummary

class _McReport(TypedDict):
    """A Monte Carlo run (or a shard of one): per GPU count, its outcomes and summary."""

    counts: list[_McCount]
    #: Stopped early by a cancel: the outcomes are those done.
    cancelled: bool
    #: The payback kinds, in the order `OutcomeColumns::payback` indexes them.
    payback_kinds: list[str]

class _ChoiceDoc(TypedDict):
    """One name a parameter accepts, and its meaning."""

    name: str
    doc: str

class _ScenarioKeyDoc(TypedDict):
    """Where a parameter sits in a scenario file: `[table] key`, written in `form` (one, list, counts, degrees,
    topologies, prices; a list of `min_items` to `max_items` values, 0: no limit); a missing key takes `default`
    (TOML), or means `means`, or is an error (`required`)."""

    table: str
    key: str
    form: str
    min_items: int
    max_items: int
    default: str
    means: str
    required: bool

class _ParamDoc(TypedDict):
    """One input parameter (`scalefront_core::inputs::Param`): a missing value takes `default` (TOML) or means
    `means`; numbers lie within `ge`/`gt`/`le`/`lt`; a name is one of `choices` (whose names form the type
    `choice_type`) or an entry of the catalog section `catalog`; `core` is the field it sets
    (`parallelism.zero_stage`), "" when the Python layer resolves it; `serving` the field of the serving spec it
    sets (`scalefront_core::serve::Serving`), "" for none; `surfaces`: api, flag, bom, column, axis, roi, serve."""

    name: str
    kind: str
    group: str
    doc: str
    unit: str
    default: str
    means: str
    ge: float | None
    gt: float | None
    le: float | None
    lt: float | None
    choice_type: str
    choices: list[_ChoiceDoc]
    catalog: str
    surfaces: list[str]
    core: str
    serving: str
    scenario: _ScenarioKeyDoc | None

class _EnumDoc(TypedDict):
    """A named enum: its name, its doc, and each variant's name and doc (the full doc comment)."""

    name: str
    doc: str
    variants: list[_ChoiceDoc]

class _FigureDoc(TypedDict):
    """One catalog field as the bindings export it (`_core.catalog_figures()`): the row of
    `scalefront_core::figures`, its unit's scale to SI and its choices spelled out."""

    #: The catalog table: `gpus`, `scale_up`, `fabrics`, `topologies`, `reliability`, `prices.gpu`, ...
    section: str
    #: The field's name, with its unit's suffix.
    name: str
    #: `float`, `count`, `flag`, `text`, `names`, `table` or `grid` (`FigureKind`).
    kind: str
    #: The unit the catalog writes it in ("" for names and flags), as in its name (`gbps`, `us`, `usd`).
    unit: str
    #: The same as a reader writes it (`Gb/s`, `µs`, `USD`).
    unit_text: str
    #: One catalog unit in the core's SI unit (`si_unit`).
    si_scale: float
    si_unit: str
    #: The core spec's field it fills (`moe.experts`: a nested spec's); "" when no spec takes it.
    core: str
    #: The values it may take, in its catalog unit (pydantic's `Field` bounds; None: no bound).
    ge: float | None
    gt: float | None
    le: float | None
    lt: float | None
    #: May be written `{ low, typical, high }`.
    ranged: bool
    #: Needs a dated source when a file gives it.
    sourced: bool
    #: Its name in the ROI's tornado and verdict.
    label: str
    #: The ROI's Monte Carlo samples its range.
    sampled: bool
    #: The names a text field may take (empty: any).
    choices: list[str]
    doc: str

# records:end

def schema() -> _Schema:
    """The output schema, in column order: every input and every metric with its unit, kind, group and doc."""

def parameters() -> list[_ParamDoc]:
    """Every input parameter of one evaluation and of a sweep space, in the order of the result's input columns."""

def enums() -> list[_EnumDoc]:
    """Every named enum of the core: its names and docs, in declaration order."""

def error_categories() -> list[str]:
    """Every category a ConfigurationError can carry, in the core's order."""

def result_records() -> list[_RecordDoc]:
    """Every result record the functions return, each before the records that use it, with its keys and their stub
    annotations (the TypedDicts above are generated from it)."""

def evaluate(config: dict[str, Any]) -> dict[str, Any]:
    """Evaluate one configuration (`scalefront_core::Config` as a dict); every metric by name."""

def model_params(model: dict[str, Any]) -> float:
    """Total parameters of a model given as the core's TransformerSpec dict."""

def serve(config: dict[str, Any]) -> dict[str, Any]:
    """Evaluate one serving configuration (`scalefront_core::serve::ServingConfig` as a dict); every serving
    metric by name."""

def serve_axes() -> list[str]:
    """The names of a serving sweep's axes, in the order a layout's index decodes them."""

def serve_sweep(
    config: dict[str, Any], axes: dict[str, Any], objectives: list[str], slos: list[tuple[str, str, float]]
) -> dict[str, Any]:
    """The Pareto frontier of `objectives` over the layouts of one cluster design (`axes` swept) meeting every SLO:
    {"points", "index", "size", "evaluated", "rejected", "over_slo"}."""

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
    def work_total(self) -> int | None:
        """The run's whole estimated work in the same units, once the engine has planned it (None before)."""
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

def fabric_topology_problem(fabric: dict[str, Any], topology: dict[str, Any]) -> str | None:
    """Why the topology cannot carry the fabric's features (in-network reduction off rail-aligned leaves, dual-ToR
    without leaves), or None."""

def network_bom(request: dict[str, Any]) -> _BomSheet:
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

def roi_compare(problem: dict[str, Any], uncertainty: dict[str, Any]) -> dict[str, list[_CountReport]]:
    """The fabric comparison at typical values per GPU count (`scalefront_core::roi::RoiProblem` and
    `montecarlo::Uncertainty` as dicts), with the tornado of every uncertain input: a `_TypicalReport`, typed as a
    dict while its caller (scalefront.roi) takes one."""

def roi_monte_carlo(
    problem: dict[str, Any], uncertainty: dict[str, Any], handle: RoiHandle, first: int, samples: int
) -> _McReport:
    """Samples `first .. first + samples` of the Monte Carlo (blocking, GIL released): per GPU count, the outcome
    columns and their summary."""

def roi_summarise(gpus: int, side_b: int, columns: dict[str, Any]) -> _McSummary:
    """The summary (P(A cheaper), P10/P50/P90) of one (GPU count, B) pair's Monte Carlo outcome columns."""

def roi_analyse(
    problem: dict[str, Any], uncertainty: dict[str, Any], handle: RoiHandle
) -> tuple[dict[str, list[_CountReport]], _McReport]:
    """The comparison at typical values with its tornado and its Monte Carlo (`uncertainty["samples"]`), from one
    plan (GIL released)."""

@final
class RoiSession:
    """A comparison kept for what-ifs of price: every sample's speeds evaluated once."""

    def __new__(cls, problem: dict[str, Any], uncertainty: dict[str, Any]) -> RoiSession: ...
    def reprice(
        self, overrides: list[dict[str, Any]], tornado: bool
    ) -> tuple[dict[str, list[_CountReport]], _McReport]:
        """The comparison with the what-ifs: at typical values (the tornado when asked) and the Monte Carlo."""
    def reprice_as(
        self, problem: dict[str, Any], uncertainty: dict[str, Any], tornado: bool
    ) -> tuple[dict[str, list[_CountReport]], _McReport] | None:
        """The comparison with other prices, economics, options or price ranges, from the kept speeds; None when
        they cannot serve it (compare afresh)."""

def data_files() -> dict[str, str]:
    """The catalog and validation files embedded at build time: {path under data/: text}."""

def parse_builtin_toml(text: str) -> dict[str, Any]:
    """A built-in catalog file as the dict tomllib gives (key order kept); ValueError for invalid TOML or a date."""

def catalog_figures() -> list[_FigureDoc]:
    """Every field of every catalog, section by section in the entries' field order (`scalefront_core::figures`)."""

def _panic_for_test() -> None:
    """Panic inside the core on purpose (tests that a panic reaches Python as InternalError)."""

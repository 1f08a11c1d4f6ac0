"""Catalog entries as typed records: GPUs, scale-up domains, fabrics, topologies, reliability profiles and models
(see data/README.md for every field). Each class is one section of the core's figure table (`figures`), which
gives its conversion to the SI units the core takes (`core_spec`), the figures that may be ranges and those that need
a source; the class gives each field's type and limits (a test holds them to the table's).

Any numeric figure may be a plain number or a range ``{ low = .., typical = .., high = .. }`` (`Range`); every
figure given in a file needs a source that ends with the date it was read (`Entry`).
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, ClassVar, Literal, NamedTuple, cast

from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter, ValidationError, model_validator

from scalefront._enums import CollectiveTuner, Forwarding, Generation, LoadBalancing, RailPlanes, TopologyKind
from scalefront.inputs.catalog.figures import FIGURES, core_spec
from scalefront.inputs.catalog.measured import Measured
from scalefront.inputs.catalog.modes import check_modes, in_mode
from scalefront.inputs.messages import problem, toml_repr

__all__ = [
    "DATED_SOURCE",
    "AtLeastOne",
    "AttentionTable",
    "Count",
    "Entry",
    "FabricEntry",
    "Fraction",
    "FrameworkEntry",
    "GpuEntry",
    "ModelEntry",
    "Modes",
    "NonNegative",
    "Positive",
    "Range",
    "ReductionGain",
    "ReliabilityEntry",
    "ScaleUpEntry",
    "Share",
    "Size",
    "TopologyEntry",
]

DATED_SOURCE = re.compile(r"\d{4}-\d{2}(-\d{2})?\s*$")


def is_dated(source: str) -> bool:
    """Whether a source ends with the date it was read (YYYY-MM or YYYY-MM-DD)."""
    return bool(DATED_SOURCE.search(source))


Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
#: A share that may be zero.
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
AtLeastOne = Annotated[float, Field(ge=1, allow_inf_nan=False)]
# In-switch / in-network reduction can beat the line rate in bus-bandwidth terms; 0 = not available.
ReductionGain = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
#: A rate relative to a measured one (serving_efficiency), in (0, 2].
Relative = Annotated[float, Field(gt=0, le=2, allow_inf_nan=False)]
#: A count the core holds in 32 bits.
Count = Annotated[int, Field(ge=1, le=2**31)]
Size = Annotated[int, Field(ge=0, le=2**31)]
#: A GPU's attention table: achieved fractions by heads per GPU (7 rows: 2 to 128) and sequence length (6 columns:
#: 1,024 to 32,768 tokens), the core's `AttentionTable`.
AttentionRow = Annotated[list[Fraction], Field(min_length=6, max_length=6)]
AttentionTable = Annotated[list[AttentionRow], Field(min_length=7, max_length=7)]


class Range(NamedTuple):
    """A figure's range: the model uses `typical`; uncertainty studies sample from low to high."""

    low: float
    typical: float
    high: float


_RANGE_KEYS = ("low", "typical", "high")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@functools.cache
def _field_adapter(entry: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """The validator of one field of an entry class with its limits (built once per field: a range's ends are
    checked against it every time an entry is made or copied)."""
    info = entry.model_fields[name]
    return TypeAdapter(cast(Any, Annotated[info.annotation, *info.metadata]))


class Entry(BaseModel):
    """A catalog entry: unknown fields rejected, every numeric figure with a dated source, any numeric figure a
    plain number or a `{ low, typical, high }` range."""

    # strict: a string or a boolean where a number belongs is an error, never silently converted.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    sources: dict[str, str] = Field(default_factory=dict, exclude=True)
    #: The ranges given as `{ low, typical, high }` (the field itself holds the typical value).
    ranges: dict[str, Range] = Field(default_factory=dict, exclude=True)
    #: The class's section of the figure table (``fabrics``, ``prices.gpu``, ...).
    SECTION: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _split_ranges(cls, data: Any) -> Any:
        """`field = { low, typical, high }` -> the field holds `typical`, the range is kept in `ranges`."""
        if not isinstance(data, dict):
            return data
        if "ranges" in data:
            raise ValueError("ranges: unknown field (give a figure's range as field = { low, typical, high })")
        out, ranges = dict(data), {}
        for name, value in data.items():
            fig = FIGURES[cls.SECTION].get(name)
            if not isinstance(value, dict) or fig is None or not fig.ranged:
                continue
            if sorted(value) != sorted(_RANGE_KEYS):
                raise ValueError(
                    f"{name}: expected a number or a range {{ low = .., typical = .., high = .. }}, "
                    f"got {toml_repr(value)}"
                )
            if not all(_is_number(value[k]) for k in _RANGE_KEYS):
                raise ValueError(f"{name}: low, typical and high must be numbers, got {toml_repr(value)}")
            low, typical, high = (float(value[k]) for k in _RANGE_KEYS)
            if not low <= typical <= high:
                raise ValueError(f"{name}: a range needs low <= typical <= high, got {toml_repr(value)}")
            out[name] = value["typical"]
            ranges[name] = Range(low, typical, high)
        out["ranges"] = ranges
        return out

    def core_spec(self) -> dict[str, Any]:
        """The entry in the SI units the core takes (its ``scalefront_core`` spec)."""
        return core_spec(self.SECTION, self)

    def range_of(self, name: str) -> Range:
        """The figure's range; a plain number is its own range."""
        if name in self.ranges:
            return self.ranges[name]
        value = float(getattr(self, name))
        return Range(value, value, value)

    @model_validator(mode="after")
    def _ranges_within_limits(self) -> Entry:
        for name, r in self.ranges.items():
            info = type(self).model_fields[name]
            adapter = _field_adapter(type(self), name)
            for end, value in (("low", r.low), ("high", r.high)):
                try:
                    adapter.validate_python(value if info.annotation is float else int(value), strict=False)
                except ValidationError as err:
                    raise ValueError(f"{name}: {end} {value:g}: {problem(err.errors()[0])}") from None
        return self

    @model_validator(mode="after")
    def _figures_have_dated_sources(self) -> Entry:
        fields = type(self).model_fields
        for name, fig in FIGURES[self.SECTION].items():
            # Figures given in the file (defaults need no source, nor a default written out).
            if not fig.sourced or name not in self.model_fields_set:
                continue
            if (
                not fields[name].is_required()
                and getattr(self, name) == fields[name].default
                and name not in self.ranges
            ):
                continue
            source = self.sources.get(name)
            if source is None:
                raise ValueError(f'{name}: no source (add `{name} = "<source>; YYYY-MM"` under `sources`)')
            if not DATED_SOURCE.search(source):
                raise ValueError(f"{name}: source must end with the date it was read, YYYY-MM: {source!r}")
        return self


class Modes(RootModel[dict[str, dict[str, Any]]]):
    """An entry's operating modes (`[<id>.modes.<mode>]`), each table as written: `scalefront.inputs.catalog.modes`
    checks and applies them."""

    model_config = ConfigDict(frozen=True, strict=True)


class GpuEntry(Entry):
    """A GPU type (data/gpus.toml; every field's meaning: the figure table, rendered in data/README.md)."""

    SECTION = "gpus"
    name: str
    peak_bf16_tflops: Positive
    peak_fp8_tflops: NonNegative
    peak_fp4_tflops: NonNegative
    hbm_gb: Positive
    hbm_gbytes_per_s: Positive
    tdp_w: Positive
    gemm_efficiency: Fraction
    small_gemm_efficiency: Fraction
    gemm_efficiency_fp8: Share
    gemm_efficiency_fp4: Share
    grouped_mm_efficiency: Fraction
    grouped_mm_efficiency_fp8: Share
    attention_efficiency: AttentionTable
    attention_efficiency_fa2: AttentionTable
    hbm_efficiency: Fraction
    sm_count: Count
    serving_efficiency: Relative
    runtime_reserve_gb: NonNegative
    server_gpus: Count
    host_power_w: NonNegative
    default_scale_up: str
    scale_up_link: str
    speed_cv: Annotated[float, Field(ge=0, le=0.5, allow_inf_nan=False)]
    generation: Generation
    device_names: list[str] = Field(default_factory=list)
    measured: Measured | None = Field(default=None, exclude=True)


class ScaleUpEntry(Entry):
    """A scale-up domain (data/scale_up.toml)."""

    SECTION = "scale_up"
    name: str
    kind: Literal["nvlink", "pcie", "infinity-fabric"]
    gbytes_per_s: Positive
    domain_gpus: Count
    step_latency_us: NonNegative
    ring_efficiency: Fraction
    in_switch_allreduce_efficiency: ReductionGain
    switch_trays_per_domain: NonNegative
    link: str
    ll_step_latency_us: NonNegative
    ll128_step_latency_us: NonNegative
    nccl_channels: Count
    compute_capability: Count

    def accepts(self, gpu: GpuEntry) -> bool:
        """Whether `gpu` can be a member of this domain: NVSwitch generations switch one NVLink generation only."""
        return self.link in ("pcie", gpu.scale_up_link)


class FabricEntry(Entry):
    """A scale-out fabric (data/fabrics.toml), and its operating modes (`in_mode`)."""

    SECTION = "fabrics"
    name: str
    kind: Literal["infiniband", "roce", "uec", "efa", "tcp"]
    nic: str = ""
    link_gbps: Positive
    links_per_gpu: Count
    #: Default: one NIC port per GPU or more.
    gpus_per_link: Count = 1
    efficiency: Fraction
    nic_latency_us: NonNegative
    switch_hop_latency_us: NonNegative
    switch_radix: Annotated[int, Field(ge=4, le=2**31)]
    in_network_reduction_efficiency: ReductionGain
    load_balancing: LoadBalancing
    load_balance_efficiency: Fraction
    qps_per_connection: AtLeastOne
    tail_latency_factor: AtLeastOne
    collective_tuner: CollectiveTuner
    forwarding: Forwarding
    mtu_bytes: Positive
    header_bytes: NonNegative = 0.0
    in_network_groups_per_leaf: Size
    ll_step_saving_us: NonNegative
    ll128_step_saving_us: NonNegative
    uplink_speedup: AtLeastOne = 1.0
    dual_tor: bool = False
    default_mode: str | None = Field(default=None, exclude=True)
    modes: Modes | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _physical(self) -> FabricEntry:
        if self.in_network_reduction_efficiency > 0 and self.kind != "infiniband":
            raise ValueError(
                "in_network_reduction_efficiency: in-network reduction (SHARP) needs an InfiniBand fabric; "
                f"this one is {self.kind}"
            )
        check_modes(self, needs_summary=True)
        return self

    def in_mode(self, mode: str) -> FabricEntry:
        """The fabric run in `mode`, one of its modes (`scalefront.inputs.catalog.modes`)."""
        return in_mode(self, mode)

    @property
    def mode_names(self) -> list[str]:
        """Its operating modes, sorted (none: the fabric runs one way)."""
        return sorted(self.modes.root) if self.modes is not None else []


class FrameworkEntry(Entry):
    """A training framework family's software terms (data/frameworks.toml)."""

    SECTION = "frameworks"
    name: str
    family: str
    layer_overhead: NonNegative
    microbatch_overhead_s: NonNegative
    step_overhead_s: NonNegative
    optimizer_bytes_per_param: NonNegative
    zeroes_grad_buffer: bool
    overlap_interference: NonNegative
    tp_backward_overlap: Share
    fp8_cast_bytes: NonNegative
    moe_permute_factor: AtLeastOne
    moe_router_s: NonNegative
    host_s_per_kernel: NonNegative
    moe_host_kernels: NonNegative
    moe_host_kernels_per_expert: NonNegative
    grouped_gemm: bool
    torch_grouped_mm: bool
    zero3_gather_per_tensor: bool
    zero3_prefetch: bool
    zero_reduce_per_micro_batch: bool
    pp_defers_zero_reduce: bool
    pp_keeps_weights_gathered: bool
    selective_recomputes_alternate_mms: bool
    fp8_keeps_quantized_inputs: bool


class TopologyEntry(Entry):
    """A topology (data/topologies.toml)."""

    SECTION = "topologies"
    name: str
    kind: TopologyKind
    oversubscription: AtLeastOne
    rail_group_nodes: Count = 32
    rail_planes: RailPlanes = "shared"
    #: Default: optical (beyond any copper reach).
    host_link_m: NonNegative = 30.0

    def core_spec(self, oversubscription: float | None = None) -> dict[str, Any]:
        """The topology as the core takes it (`scalefront_core::TopologySpec`), optionally re-tapered."""
        spec = super().core_spec()
        if oversubscription is not None:
            spec["oversubscription"] = float(oversubscription)
        return spec


class ReliabilityEntry(Entry):
    """A failure profile (data/reliability.toml)."""

    SECTION = "reliability"
    name: str
    gpu_failures_per_hour: NonNegative
    server_failures_per_hour: NonNegative
    nic_failures_per_hour: NonNegative
    switch_failures_per_hour: NonNegative
    link_failures_per_hour: NonNegative
    checkpoint_bytes_per_s: Positive
    checkpoint_bytes_per_param: NonNegative
    restart_s: NonNegative


class ModelEntry(BaseModel):
    """A decoder-only transformer. Dimensions are integers; MoE fields only for mixture-of-experts models."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    SECTION: ClassVar[str] = "models"
    name: str
    layers: Count
    hidden: Count
    heads: Count
    kv_heads: Count
    head_dim: Size = 0
    ffn_hidden: Count
    gated_mlp: bool
    vocab: Count
    seq_len: Count
    tied_embeddings: bool = False
    moe_experts: Count | None = None
    moe_top_k: Count | None = None
    moe_ffn_hidden: Count | None = None
    moe_shared_experts: Size = 0
    moe_first_dense_layers: Size = 0
    moe_node_limit: Size = 0
    mla_q_lora_rank: Size | None = None
    mla_kv_lora_rank: Count | None = None
    mla_qk_nope_head_dim: Count | None = None
    mla_qk_rope_head_dim: Size | None = None
    mla_v_head_dim: Count | None = None
    source: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> ModelEntry:
        if self.heads % self.kv_heads:
            raise ValueError(f"kv_heads: {self.kv_heads} must divide heads ({self.heads})")
        if self.head_dim == 0 and "head_dim" in self.model_fields_set:
            raise ValueError("head_dim: expected a width of at least 1; leave it out for hidden / heads")
        if self.head_dim == 0 and self.hidden % self.heads:
            raise ValueError(
                f"hidden: {self.hidden} is not a multiple of heads ({self.heads}), so a head would be "
                f"{self.hidden / self.heads:g} wide; give head_dim when heads are not hidden / heads wide"
            )
        moe = (self.moe_experts, self.moe_top_k, self.moe_ffn_hidden)
        if any(v is not None for v in moe) and any(v is None for v in moe):
            raise ValueError("moe_experts, moe_top_k and moe_ffn_hidden go together: give all three or none")
        if self.moe_experts is not None and self.moe_top_k is not None and self.moe_top_k > self.moe_experts:
            raise ValueError(f"moe_top_k: {self.moe_top_k} exceeds moe_experts ({self.moe_experts})")
        if self.moe_experts is not None and self.moe_first_dense_layers >= self.layers:
            raise ValueError("moe_first_dense_layers: must be fewer than layers")
        mla = self._mla_fields()
        if any(v is not None for v in mla.values()) and any(v is None for v in mla.values()):
            raise ValueError(f"mla_kv_lora_rank: the MLA fields go together: give all of {', '.join(mla)} or none")
        return self

    def _mla_fields(self) -> dict[str, int | None]:
        return {
            "mla_q_lora_rank": self.mla_q_lora_rank,
            "mla_kv_lora_rank": self.mla_kv_lora_rank,
            "mla_qk_nope_head_dim": self.mla_qk_nope_head_dim,
            "mla_qk_rope_head_dim": self.mla_qk_rope_head_dim,
            "mla_v_head_dim": self.mla_v_head_dim,
        }

    @property
    def is_moe(self) -> bool:
        return self.moe_experts is not None

    def core_spec(self) -> dict[str, Any]:
        """The model as the core takes it (`scalefront_core::TransformerSpec`, with its `moe` and `mla` specs)."""
        return core_spec(self.SECTION, self)

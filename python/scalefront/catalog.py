"""Catalogs: GPUs, scale-up domains, fabrics, topologies, models and prices, read from TOML.

The built-in catalogs are the ``data/`` files embedded in the extension at build time. A user catalog file
adds entries or replaces built-in ones; it holds tables by kind (``[gpus.my-gpu]``, ``[fabrics.my-net]``,
``[scale_up.x]``, ``[topologies.x]``, ``[prices.gpu.x]``, ``[prices.fabric.x]``, ``[prices.economics]``) with
the same fields as the built-in files (see data/README.md). A model file (``--model PATH.toml``) holds one
model's fields at the top level.

Any numeric figure of any entry may be a plain number or a range ``{ low = .., typical = .., high = .. }``
(low <= typical <= high, each within the figure's own limits): the model, ``evaluate`` and sweeps use the typical
value; the ROI's Monte Carlo and tornado sample the range (``entry.range_of(field)``). A range needs a dated source
like any figure. Estimates say ``EST:`` in their source, and why.

Every bad entry is reported as one line naming the file, the entry and the field.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NamedTuple, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from scalefront import _core
from scalefront.errors import CatalogError, UsageError
from scalefront.messages import describe, did_you_mean, key_text, problem, toml_repr

__all__ = [
    "Catalog",
    "Economics",
    "ErrorModelFile",
    "FabricEntry",
    "FabricPrice",
    "GpuEntry",
    "GpuPrice",
    "ModelEntry",
    "Range",
    "ReliabilityEntry",
    "ScaleUpEntry",
    "ScaleUpPrice",
    "TopologyEntry",
    "apply_price_overrides",
    "error_model_spec",
    "load_error_model",
    "load_model_file",
]

_M = TypeVar("_M", bound=BaseModel)
_DATED_SOURCE = re.compile(r"\d{4}-\d{2}(-\d{2})?\s*$")

Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
# In-switch / in-network reduction can beat the line rate in bus-bandwidth terms; 0 = not available.
ReductionGain = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
#: A count the core holds in 32 bits.
Count = Annotated[int, Field(ge=1, le=2**31)]
Size = Annotated[int, Field(ge=0, le=2**31)]


class Range(NamedTuple):
    """A figure's range: the model uses `typical`; uncertainty studies sample from low to high."""

    low: float
    typical: float
    high: float


_RANGE_KEYS = ("low", "typical", "high")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Entry(BaseModel):
    """A catalog entry: unknown fields rejected, every numeric figure with a dated source, any numeric figure a
    plain number or a `{ low, typical, high }` range."""

    # strict: a string or a boolean where a number belongs is an error, never silently converted.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    sources: dict[str, str] = Field(default_factory=dict, exclude=True)
    #: The ranges given as `{ low, typical, high }` (the field itself holds the typical value).
    ranges: dict[str, Range] = Field(default_factory=dict, exclude=True)
    #: Text fields that are facts about the hardware (not names), so they need a source like a figure.
    _SOURCED_TEXT: ClassVar[tuple[str, ...]] = ()

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
            info = cls.model_fields.get(name)
            if not isinstance(value, dict) or info is None or info.annotation not in (int, float):
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

    def range_of(self, name: str) -> Range:
        """The figure's range; a plain number is its own range."""
        if name in self.ranges:
            return self.ranges[name]
        value = float(getattr(self, name))
        return Range(value, value, value)

    @model_validator(mode="after")
    def _ranges_within_limits(self) -> _Entry:
        for name, r in self.ranges.items():
            info = type(self).model_fields[name]
            adapter: TypeAdapter[Any] = TypeAdapter(cast(Any, Annotated[info.annotation, *info.metadata]))
            for end, value in (("low", r.low), ("high", r.high)):
                try:
                    adapter.validate_python(value if info.annotation is float else int(value), strict=False)
                except ValidationError as err:
                    raise ValueError(f"{name}: {end} {value:g}: {problem(err.errors()[0])}") from None
        return self

    @model_validator(mode="after")
    def _figures_have_dated_sources(self) -> _Entry:
        for name, info in type(self).model_fields.items():
            # Figures given in the file (defaults need no source); pydantic keeps the base type of Annotated.
            sourced = info.annotation in (int, float) or name in self._SOURCED_TEXT
            if not sourced or name not in self.model_fields_set:
                continue
            source = self.sources.get(name)
            if source is None:
                raise ValueError(f'{name}: no source (add `{name} = "<source>; YYYY-MM"` under `sources`)')
            if not _DATED_SOURCE.search(source):
                raise ValueError(f"{name}: source must end with the date it was read, YYYY-MM: {source!r}")
        return self


class GpuEntry(_Entry):
    name: str
    peak_bf16_tflops: Positive
    peak_fp8_tflops: NonNegative
    hbm_gb: Positive
    hbm_gbytes_per_s: Positive
    tdp_w: Positive
    gemm_efficiency: Fraction
    gemm_efficiency_fp8: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    attention_efficiency: Fraction
    #: With FlashAttention-2-class kernels (PyTorch SDPA's flash backend).
    attention_efficiency_fa2: Fraction
    hbm_efficiency: Fraction
    sustained_efficiency: Fraction
    runtime_reserve_gb: NonNegative
    server_gpus: Count
    host_power_w: NonNegative
    default_scale_up: str
    #: The GPU's own scale-up port (nvlink3, nvlink4, nvlink5, xgmi, ...): which domains it can join.
    scale_up_link: str
    #: Coefficient of variation of speed between GPUs of this type in one cluster (a synchronous step waits for
    #: the slowest).
    speed_cv: Annotated[float, Field(ge=0, le=0.5, allow_inf_nan=False)]
    #: Architecture generation: the regimes of the prediction intervals (data/model_error.toml).
    generation: Literal["ampere", "hopper", "blackwell", "cdna3"]
    _SOURCED_TEXT = ("scale_up_link",)

    def core_spec(self) -> dict[str, Any]:
        """The entry in the SI units the core takes (`scalefront_core::GpuSpec`)."""
        return {
            "peak_bf16_flops": self.peak_bf16_tflops * 1e12,
            "peak_fp8_flops": self.peak_fp8_tflops * 1e12,
            "hbm_bytes": self.hbm_gb * 1e9,
            "hbm_bytes_per_s": self.hbm_gbytes_per_s * 1e9,
            "tdp_w": self.tdp_w,
            "gemm_efficiency": self.gemm_efficiency,
            "gemm_efficiency_fp8": self.gemm_efficiency_fp8,
            "attention_efficiency": self.attention_efficiency,
            "attention_efficiency_fa2": self.attention_efficiency_fa2,
            "hbm_efficiency": self.hbm_efficiency,
            "sustained_efficiency": self.sustained_efficiency,
            "runtime_reserve_bytes": self.runtime_reserve_gb * 1e9,
            "server_gpus": self.server_gpus,
            "host_power_w": self.host_power_w,
            "speed_cv": self.speed_cv,
            "generation": self.generation,
        }


class ScaleUpEntry(_Entry):
    name: str
    kind: Literal["nvlink", "pcie", "infinity-fabric"]
    gbytes_per_s: Positive
    domain_gpus: Count
    step_latency_us: NonNegative
    ring_efficiency: Fraction
    in_switch_allreduce_efficiency: ReductionGain
    switch_trays_per_domain: NonNegative
    #: The GPU port its switches (or mesh) connect: a GPU joins the domain only with the same `scale_up_link`;
    #: `pcie` joins any GPU through its PCIe host interface.
    link: str
    #: Time of one ring step with NCCL's LL and LL128 protocols (`step_latency_us` is Simple's).
    ll_step_latency_us: NonNegative
    ll128_step_latency_us: NonNegative
    #: Channels NCCL opens for a ring inside the domain.
    nccl_channels: Count
    #: Compute capability (major) of the GPUs the domain joins: the rows of NCCL's tuning tables.
    compute_capability: Count
    _SOURCED_TEXT = ("link",)

    def accepts(self, gpu: GpuEntry) -> bool:
        """Whether `gpu` can be a member of this domain: NVSwitch generations switch one NVLink generation only."""
        return self.link in ("pcie", gpu.scale_up_link)

    def core_spec(self) -> dict[str, Any]:
        """The entry in the SI units the core takes (`scalefront_core::ScaleUpSpec`)."""
        return {
            "bytes_per_s": self.gbytes_per_s * 1e9,
            "domain_gpus": self.domain_gpus,
            "step_latency_s": self.step_latency_us * 1e-6,
            "ring_efficiency": self.ring_efficiency,
            "in_switch_allreduce_efficiency": self.in_switch_allreduce_efficiency,
            "switch_trays_per_domain": self.switch_trays_per_domain,
            "ll_step_latency_s": self.ll_step_latency_us * 1e-6,
            "ll128_step_latency_s": self.ll128_step_latency_us * 1e-6,
            "nccl_channels": self.nccl_channels,
            "compute_capability": self.compute_capability,
        }


class FabricEntry(_Entry):
    name: str
    kind: Literal["infiniband", "roce", "uec", "efa", "tcp"]
    link_gbps: Positive
    links_per_gpu: Count
    efficiency: Fraction
    nic_latency_us: NonNegative
    switch_hop_latency_us: NonNegative
    switch_radix: Annotated[int, Field(ge=4, le=2**31)]
    in_network_reduction_efficiency: ReductionGain
    #: How leaf-crossing flows are spread: static ECMP hashing, adaptive routing, or per-packet spraying.
    load_balancing: Literal["ecmp", "adaptive", "spraying"]
    #: Uplink capacity crossing traffic keeps once spread (the mechanism's own loss; 1 for plain ECMP).
    load_balance_efficiency: Fraction
    #: Queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION): separately hashed flows for ECMP.
    qps_per_connection: Annotated[float, Field(ge=1, allow_inf_nan=False)]
    #: Latency-bound network time under load / unloaded (PFC, incast, congestion-control tails).
    tail_latency_factor: Annotated[float, Field(ge=1, allow_inf_nan=False)]
    forwarding: Literal["cut-through", "store-and-forward"]
    mtu_bytes: Positive
    #: Groups that can reduce in the network at once through one leaf (0 = no limit; SHARP on HDR: 1).
    in_network_groups_per_leaf: Annotated[int, Field(ge=0, le=2**31)]
    #: Time NCCL's LL and LL128 protocols save per network ring step against Simple (calibrated per fabric).
    ll_step_saving_us: NonNegative
    ll128_step_saving_us: NonNegative

    def core_spec(self) -> dict[str, Any]:
        """The entry in the SI units the core takes (`scalefront_core::FabricSpec`)."""
        return {
            "link_bytes_per_s": self.link_gbps * 1e9 / 8,
            "links_per_gpu": self.links_per_gpu,
            "efficiency": self.efficiency,
            "nic_latency_s": self.nic_latency_us * 1e-6,
            "switch_hop_latency_s": self.switch_hop_latency_us * 1e-6,
            "switch_radix": self.switch_radix,
            "in_network_reduction_efficiency": self.in_network_reduction_efficiency,
            "load_balancing": self.load_balancing,
            "load_balance_efficiency": self.load_balance_efficiency,
            "qps_per_connection": float(self.qps_per_connection),
            "tail_latency_factor": float(self.tail_latency_factor),
            "forwarding": self.forwarding,
            "mtu_bytes": float(self.mtu_bytes),
            "in_network_groups_per_leaf": self.in_network_groups_per_leaf,
            "ll_step_saving_s": self.ll_step_saving_us * 1e-6,
            "ll128_step_saving_s": self.ll128_step_saving_us * 1e-6,
        }


class TopologyEntry(_Entry):
    name: str
    kind: Literal["fat-tree", "rail-fat-tree", "dragonfly", "torus-3d"]
    oversubscription: Annotated[float, Field(ge=1, allow_inf_nan=False)]
    rail_group_nodes: Count = 32
    #: Rail-fat-tree: one tree with shared spines (DGX SuperPOD H100/B200) or one tree per rail (multi-plane).
    rail_planes: Literal["shared", "per-rail"] = "shared"
    #: Typical NIC-to-leaf cable length: copper when within the fabric's DAC reach. Default: optical (no DAC).
    host_link_m: NonNegative = 30.0

    def core_spec(self, oversubscription: float | None = None) -> dict[str, Any]:
        """The topology as the core takes it (`scalefront_core::TopologySpec`), optionally re-tapered."""
        over = self.oversubscription if oversubscription is None else oversubscription
        return {
            "kind": self.kind,
            "oversubscription": float(over),
            "rail_group_nodes": self.rail_group_nodes,
            "rail_planes": self.rail_planes,
            "host_link_m": float(self.host_link_m),
        }


Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class GpuPrice(_Entry):
    rent_usd_per_gpu_hour: NonNegative
    #: A server of the GPU's `server_gpus` GPUs without scale-out NICs (the fabric prices them).
    server_usd: NonNegative
    #: GPUs per compute rack (each rack gets an out-of-band management switch).
    gpus_per_rack: Positive


class FabricPrice(_Entry):
    """Parts of a fabric (see data/README.md): NIC port, switch, optical modules (NIC side, switch side), copper,
    fibre, and the yearly support and licences of a quote."""

    nic_usd: NonNegative
    switch_usd: NonNegative
    nic_optic_usd: NonNegative
    switch_optic_usd: NonNegative
    switch_ports_per_optic: Annotated[float, Field(ge=1, allow_inf_nan=False)]
    dac_usd: NonNegative
    dac_reach_m: NonNegative
    fibre_usd: NonNegative
    support_fraction_per_year: Share
    nos_usd_per_switch_year: NonNegative
    nic_w: NonNegative
    switch_w: NonNegative
    nic_optic_w: NonNegative
    switch_optic_w: NonNegative
    #: Sold only inside instance rent (AWS EFA): an owned cluster cannot be priced with it.
    rented: bool = Field(default=False, exclude=True)


class ScaleUpPrice(_Entry):
    switch_tray_usd: NonNegative
    switch_tray_w: NonNegative


class ReliabilityEntry(_Entry):
    name: str
    gpu_failures_per_hour: NonNegative
    server_failures_per_hour: NonNegative
    nic_failures_per_hour: NonNegative
    switch_failures_per_hour: NonNegative
    link_failures_per_hour: NonNegative
    checkpoint_bytes_per_s: Positive
    checkpoint_bytes_per_param: NonNegative
    restart_s: NonNegative

    def core_spec(self) -> dict[str, Any]:
        """The profile as the core takes it (`scalefront_core::ReliabilitySpec`)."""
        return self.model_dump(exclude={"name"})


class Economics(_Entry):
    """What owning a cluster costs beyond its parts: life, money, utilisation, power, facility, quote lines."""

    amortization_years: Positive
    pue: Annotated[float, Field(ge=1, allow_inf_nan=False)]
    usd_per_kwh: NonNegative
    gpu_power_fraction: Fraction
    discount_rate: Annotated[float, Field(gt=-1, le=1, allow_inf_nan=False)]
    residual_fraction: Share
    utilisation: Fraction
    idle_power_fraction: Share
    facility: Literal["colocation", "build"] = "colocation"
    colocation_usd_per_kw_month: NonNegative
    facility_build_usd_per_kw: NonNegative
    facility_life_years: Positive
    server_spares_fraction: NonNegative
    network_spares_fraction: NonNegative
    installation_fraction: NonNegative
    oob_usd_per_rack: NonNegative


class ModelEntry(BaseModel):
    """A decoder-only transformer. Dimensions are integers; MoE fields only for mixture-of-experts models."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
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
    #: Nodes (expert groups) a token may be routed to; 0 = no limit (DeepSeek-V3: 4).
    moe_node_limit: Size = 0
    #: Multi-head latent attention (DeepSeek-V2/V3): all five or none.
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
        """The model as the core takes it (`scalefront_core::TransformerSpec`)."""
        moe = None
        if self.is_moe:
            moe = {
                "experts": self.moe_experts,
                "top_k": self.moe_top_k,
                "ffn_hidden": self.moe_ffn_hidden,
                "shared_experts": self.moe_shared_experts,
                "first_dense_layers": self.moe_first_dense_layers,
                "node_limit": self.moe_node_limit,
            }
        mla = None
        if self.mla_kv_lora_rank is not None:
            mla = {k.removeprefix("mla_"): v for k, v in self._mla_fields().items()}
        return {
            "layers": self.layers,
            "hidden": self.hidden,
            "heads": self.heads,
            "kv_heads": self.kv_heads,
            "head_dim": self.head_dim,
            "ffn_hidden": self.ffn_hidden,
            "gated_mlp": self.gated_mlp,
            "vocab": self.vocab,
            "tied_embeddings": self.tied_embeddings,
            "moe": moe,
            "mla": mla,
        }


def _entry(model_cls: type[_M], raw: Any, file: str, entry: str) -> _M:
    if not isinstance(raw, dict):
        raise CatalogError(f"{file}: [{entry}] must be a table, got {toml_repr(raw)}")
    try:
        return model_cls.model_validate(raw)
    except ValidationError as err:
        parts, msg = describe(err, model_cls, raw)
        where = key_text(parts)
        raise CatalogError(f"{file}: [{entry}] {where}: {msg}" if where else f"{file}: [{entry}] {msg}") from None


def _parse_toml(text: str, file: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CatalogError(f"{file}: not valid TOML: {err}") from None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise CatalogError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        byte = err.object[err.start]
        raise CatalogError(f"{path}: not a UTF-8 text file (byte {err.start} is 0x{byte:02x})") from None


def _unknown(kind: str, name: str, known: dict[str, Any]) -> CatalogError:
    return CatalogError(f"unknown {kind} {name!r}{did_you_mean(name, list(known))}; known: {', '.join(sorted(known))}")


def load_model_file(path: str | Path) -> ModelEntry:
    """Read one model from a TOML file of its fields."""
    path = Path(path)
    return _entry(ModelEntry, _parse_toml(_read(path), str(path)), str(path), path.stem)


@dataclass
class Catalog:
    """Every catalog the model needs, keyed by id."""

    gpus: dict[str, GpuEntry] = field(default_factory=dict)
    scale_up: dict[str, ScaleUpEntry] = field(default_factory=dict)
    fabrics: dict[str, FabricEntry] = field(default_factory=dict)
    topologies: dict[str, TopologyEntry] = field(default_factory=dict)
    models: dict[str, ModelEntry] = field(default_factory=dict)
    gpu_prices: dict[str, GpuPrice] = field(default_factory=dict)
    fabric_prices: dict[str, FabricPrice] = field(default_factory=dict)
    scale_up_prices: dict[str, ScaleUpPrice] = field(default_factory=dict)
    reliability: dict[str, ReliabilityEntry] = field(default_factory=dict)
    economics: Economics | None = None
    #: The prediction intervals' residuals by regime (data/model_error.toml), or None.
    errors: ErrorModelFile | None = None

    _KINDS: ClassVar[dict[str, tuple[str, type[BaseModel]]]] = {
        "gpus": ("gpus", GpuEntry),
        "scale_up": ("scale_up", ScaleUpEntry),
        "fabrics": ("fabrics", FabricEntry),
        "topologies": ("topologies", TopologyEntry),
        "models": ("models", ModelEntry),
        "reliability": ("reliability", ReliabilityEntry),
    }

    @classmethod
    def builtin(cls) -> Catalog:
        """The catalogs shipped with scalefront (data/ at build time)."""
        files = _core.data_files()
        cat = cls()
        for kind in ("gpus", "scale_up", "fabrics", "topologies", "reliability"):
            name = f"{kind}.toml"
            cat._add_table(kind, _parse_toml(files[name], f"data/{name}"), f"data/{name}")
        cat._add_prices(_parse_toml(files["prices.toml"], "data/prices.toml"), "data/prices.toml")
        if "model_error.toml" in files:
            cat.errors = load_error_model(files["model_error.toml"], "data/model_error.toml")
        for path, text in sorted(files.items()):
            if path.startswith("models/"):
                stem = path.removeprefix("models/").removesuffix(".toml")
                cat.models[stem] = _entry(ModelEntry, _parse_toml(text, f"data/{path}"), f"data/{path}", stem)
        cat._check_references("built-in data/")
        return cat

    @classmethod
    def load(cls, *user_files: str | Path) -> Catalog:
        """The built-in catalogs, extended or overridden by each user catalog file in turn."""
        cat = cls.builtin()
        for path in user_files:
            cat.add_file(path)
        return cat

    def add_file(self, path: str | Path) -> None:
        """Merge a user catalog file (tables by kind: gpus, scale_up, fabrics, topologies, models, prices)."""
        file = str(path)
        doc = _parse_toml(_read(Path(path)), file)
        allowed = [*self._KINDS, "prices"]
        for key, table in doc.items():
            if key == "prices":
                self._add_prices(table, file)
            elif key in self._KINDS:
                self._add_table(key, table, file)
            else:
                hint = did_you_mean(key, allowed)
                raise CatalogError(f"{file}: [{key}] is not a catalog kind ({', '.join(allowed)}){hint}")
        self._check_references(file)

    def _add_table(self, kind: str, table: Any, file: str) -> None:
        attr, model_cls = self._KINDS[kind]
        if not isinstance(table, dict):
            raise CatalogError(f"{file}: [{kind}] must be a table of entries, got {toml_repr(table)}")
        target = getattr(self, attr)
        for entry, raw in table.items():
            target[entry] = _entry(model_cls, raw, file, entry)

    _PRICE_TABLES: ClassVar[dict[str, tuple[str, type[_Entry]]]] = {
        "gpu": ("gpu_prices", GpuPrice),
        "fabric": ("fabric_prices", FabricPrice),
        "scale_up": ("scale_up_prices", ScaleUpPrice),
    }

    def _add_prices(self, table: Any, file: str) -> None:
        if not isinstance(table, dict):
            raise CatalogError(f"{file}: prices must be a table, got {toml_repr(table)}")
        for key, value in table.items():
            if key == "economics":
                self.economics = _entry(Economics, value, file, "economics")
                continue
            if key not in self._PRICE_TABLES:
                kinds = [*self._PRICE_TABLES, "economics"]
                hint = did_you_mean(key, kinds)
                raise CatalogError(f"{file}: [{key}] is not a price table ({', '.join(kinds)}){hint}")
            if not isinstance(value, dict):
                raise CatalogError(f"{file}: [{key}] must be a table of entries, got {toml_repr(value)}")
            attr, model_cls = self._PRICE_TABLES[key]
            target = getattr(self, attr)
            for entry, raw in value.items():
                target[entry] = _entry(model_cls, raw, file, f"{key}.{entry}")

    def _check_references(self, file: str) -> None:
        for gid, gpu in self.gpus.items():
            if gpu.default_scale_up not in self.scale_up:
                raise CatalogError(
                    f"{file}: [{gid}] default_scale_up: {gpu.default_scale_up!r} is not in the scale-up catalog "
                    f"({', '.join(sorted(self.scale_up))})"
                )
            if not self.scale_up[gpu.default_scale_up].accepts(gpu):
                raise CatalogError(f"{file}: [{gid}] default_scale_up: {self.mismatch(gid, gpu.default_scale_up)}")

    def mismatch(self, gpu: str, scale_up: str) -> str:
        """Why GPU `gpu` cannot join domain `scale_up` (both known ids), and which domains it can join."""
        link, domain_link = self.gpus[gpu].scale_up_link, self.scale_up[scale_up].link
        return (
            f"GPU {gpu!r} ({link}) cannot join scale-up domain {scale_up!r}, whose switches connect {domain_link} "
            f"ports; domains for it: {', '.join(self.scale_ups_for(gpu))}"
        )

    def scale_ups_for(self, gpu: str) -> list[str]:
        """The scale-up domains GPU `gpu` can join, sorted."""
        entry = self.gpu(gpu)
        return sorted(name for name, domain in self.scale_up.items() if domain.accepts(entry))

    def check_scale_up(self, gpu: str, scale_up: str) -> None:
        """Raise CatalogError when GPU `gpu` cannot join domain `scale_up` (both known ids)."""
        if not self.scale_up_domain(scale_up).accepts(self.gpu(gpu)):
            raise CatalogError(self.mismatch(gpu, scale_up))

    # Look-ups with a clear error for an unknown name.
    def gpu(self, name: str) -> GpuEntry:
        return self.gpus.get(name) or _raise(_unknown("GPU", name, self.gpus))

    def scale_up_domain(self, name: str) -> ScaleUpEntry:
        return self.scale_up.get(name) or _raise(_unknown("scale-up domain", name, self.scale_up))

    def fabric(self, name: str) -> FabricEntry:
        return self.fabrics.get(name) or _raise(_unknown("fabric", name, self.fabrics))

    def topology(self, name: str) -> TopologyEntry:
        return self.topologies.get(name) or _raise(_unknown("topology", name, self.topologies))

    def model(self, name: str) -> ModelEntry:
        return self.models.get(name) or _raise(_unknown("model", name, self.models))

    def gpu_price(self, name: str) -> GpuPrice:
        return self.gpu_prices.get(name) or _raise(CatalogError(f"no price for GPU {name!r} in the price catalog"))

    def fabric_price(self, name: str) -> FabricPrice:
        return self.fabric_prices.get(name) or _raise(
            CatalogError(f"no price for fabric {name!r} in the price catalog")
        )

    def scale_up_price(self, name: str) -> ScaleUpPrice:
        """NVLink switch tray price of a domain; zero for domains whose switches come with the servers."""
        if name in self.scale_up_prices:
            return self.scale_up_prices[name]
        if self.scale_up_domain(name).switch_trays_per_domain > 0:
            raise CatalogError(f"no switch tray price for scale-up domain {name!r} in the price catalog")
        # No trays to buy: nothing to price (model_construct: no figures, so no sources to check).
        return ScaleUpPrice.model_construct(switch_tray_usd=0.0, switch_tray_w=0.0, sources={})

    def reliability_profile(self, name: str) -> ReliabilityEntry:
        return self.reliability.get(name) or _raise(_unknown("reliability profile", name, self.reliability))

    def economics_or_error(self) -> Economics:
        return self.economics or _raise(CatalogError("the price catalog has no [economics] table"))

    def prices(self, gpu: str, fabric: str, scale_up: str, cost_mode: str = "rent") -> dict[str, dict[str, Any]]:
        """Every price of one cluster design, nested as the core takes it (`scalefront_core::Prices`): ``gpu``,
        ``network``, ``scale_up`` and ``economics`` (with ``cost_mode``)."""
        return {
            "gpu": self.gpu_price(gpu).model_dump(),
            "network": self.fabric_price(fabric).model_dump(),
            "scale_up": self.scale_up_price(scale_up).model_dump(),
            "economics": {**self.economics_or_error().model_dump(), "cost_mode": cost_mode},
        }


class ErrorRegimeEntry(BaseModel):
    """The validation residuals of one regime (see data/model_error.toml)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    name: str
    generation: Literal["ampere", "hopper", "blackwell", "cdna3"] | None = None
    moe: bool | None = None
    min_gpus: Count = 1
    max_gpus: Count = 2**32 - 1
    rows: list[str]
    log_residuals: list[float]

    @model_validator(mode="after")
    def _consistent(self) -> ErrorRegimeEntry:
        if len(self.rows) != len(self.log_residuals):
            raise ValueError("log_residuals: one residual per row")
        if self.log_residuals != sorted(self.log_residuals):
            raise ValueError("log_residuals: must be sorted ascending")
        return self


class ErrorModelFile(BaseModel):
    """data/model_error.toml: how the residuals were computed, and the residuals by regime, most specific
    regime first."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    level: Annotated[float, Field(gt=0, lt=1)]
    #: Residuals a regime needs to be used (fewer: the next matching regime).
    min_rows: Count
    method: str
    model_version: str
    regime: list[ErrorRegimeEntry]

    def core_spec(self, level: float | None = None) -> dict[str, Any]:
        """The core's `ErrorModel`: residuals by regime and the level of the intervals."""
        return {
            "level": self.level if level is None else level,
            "min_residuals": self.min_rows,
            "regimes": [
                {
                    "generation": r.generation,
                    "moe": r.moe,
                    "min_gpus": r.min_gpus,
                    "max_gpus": r.max_gpus,
                    "log_residuals": list(r.log_residuals),
                }
                for r in self.regime
            ],
        }


def load_error_model(text: str, file: str) -> ErrorModelFile:
    """Parse a model_error.toml file."""
    return _entry(ErrorModelFile, _parse_toml(text, file), file, "model_error")


#: An error model with no residuals: intervals collapse onto the prediction.
NO_ERRORS: dict[str, Any] = {"level": 0.9, "min_residuals": 1, "regimes": []}


def error_model_spec(catalog: Catalog, level: float | None = None) -> dict[str, Any]:
    """The catalog's error model as the core takes it, at `level` (default: the file's)."""
    if catalog.errors is None:
        return {**NO_ERRORS, "level": NO_ERRORS["level"] if level is None else level}
    return catalog.errors.core_spec(level)


def apply_price_overrides(prices: dict[str, dict[str, Any]], overrides: dict[str, Any]) -> None:
    """Set prices by field name (``switch_usd``, ``usd_per_kwh``, ...) in a nested price dict, wherever the field
    is. Raises UsageError for an unknown name (with a suggestion) or a value that is not a finite number >= 0."""
    where = {
        key: section
        for section, table in prices.items()
        for key, value in table.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    for key, value in overrides.items():
        if key not in where:
            hint = did_you_mean(key, list(where)) or f"; known: {', '.join(sorted(where))}"
            raise UsageError(f"unknown price {key!r}{hint}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not (0 <= value < float("inf")):
            raise UsageError(f"price {key}={value!r}: expected a finite number >= 0")
        prices[where[key]][key] = float(value)


def _raise(err: Exception) -> Any:
    raise err

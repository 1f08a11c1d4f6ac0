"""Catalog entries as typed records: GPUs, scale-up domains, fabrics, topologies, reliability profiles and models
(see data/README.md for every field), each with its conversion to the SI units the core takes (`core_spec`).

Any numeric figure may be a plain number or a range ``{ low = .., typical = .., high = .. }`` (`Range`); every
figure given in a file needs a source that ends with the date it was read (`Entry`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal, NamedTuple, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from scalefront.inputs.catalog.measured import Measured
from scalefront.inputs.messages import problem, toml_repr

__all__ = [
    "Count",
    "Entry",
    "FabricEntry",
    "Fraction",
    "GpuEntry",
    "ModelEntry",
    "NonNegative",
    "Positive",
    "Range",
    "ReductionGain",
    "ReliabilityEntry",
    "ScaleUpEntry",
    "Size",
    "TopologyEntry",
]

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


class Entry(BaseModel):
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
    def _ranges_within_limits(self) -> Entry:
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
    def _figures_have_dated_sources(self) -> Entry:
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


class GpuEntry(Entry):
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
    #: Kernel rates `scalefront measure` recorded on the GPU (`[<id>.measured]`); not read by the model yet.
    measured: Measured | None = Field(default=None, exclude=True)
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


class ScaleUpEntry(Entry):
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


class FabricEntry(Entry):
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


class TopologyEntry(Entry):
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


class ReliabilityEntry(Entry):
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

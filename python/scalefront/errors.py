"""The exceptions scalefront raises.

Bad input (the caller can fix it) derives from :class:`ScalefrontError`; the command line prints its message as one
line and exits with status 2:

- :class:`ConfigurationError` (raised by the Rust core): an invalid figure or an impossible parallelism. It has
  ``.message`` (one plain line), ``.category`` (a stable name from :data:`CATEGORIES`, e.g. ``"tp_heads"``) and
  ``.field`` (the input it is about, e.g. ``"tp"``).
- :class:`CatalogError`: a malformed catalog, scenario or model file, or an unknown name.
- :class:`UsageError`: a bad argument to the Python API or the command line.

:class:`InternalError` is a bug in scalefront (the Rust core panicked), never bad input: it does not derive from
:class:`ScalefrontError`, keeps the panic's message, and the command line exits with status 70 (EX_SOFTWARE).
"""

from __future__ import annotations

__all__ = [
    "CATEGORIES",
    "CatalogError",
    "ClusterError",
    "ConfigurationError",
    "InternalError",
    "ScalefrontError",
    "UsageError",
    "message_of",
]

#: Every category a :class:`ConfigurationError` can carry, with what it means (the core's list, in its order;
#: a test checks the two agree).
CATEGORIES: dict[str, str] = {
    "invalid_figure": "a hardware, price or workload figure out of its range (negative, NaN, zero where it divides)",
    "zero_degree": "a parallel degree, batch size or stage count below 1",
    "gpu_count_mismatch": "tp x pp x dp x cp differs from the GPU count",
    "tp_heads": "tp does not divide the attention heads and the KV heads",
    "pp_layers": "more pipeline stages (pp x vpp) than layers",
    "vpp_without_pp": "interleaved virtual stages without pipeline parallelism",
    "pp_vpp_layers": "the layers do not split evenly over pp x vpp interleaved virtual stages",
    "vpp_micro_batches": "the interleaved schedule needs a micro-batch count that is a multiple of pp",
    "global_batch": "the global batch is not a multiple of dp x micro-batch",
    "cp_seq_len": "the sequence length is not a multiple of 2 x cp",
    "ep_dense": "expert parallelism on a dense model",
    "ep_experts": "ep does not divide the number of experts",
    "ep_dp": "ep x etp does not divide tp x dp x cp (MoE parallel folding)",
    "zero_stage": "a ZeRO stage other than 0-3",
    "fp8_unsupported": "FP8 on a GPU without FP8 tensor cores",
    "uneven_stages": "uneven first/last pipeline stages that do not split the layers",
    "partial_server": "a GPU count that is not a whole number of servers",
    "sp_seq_len": "sequence parallelism with a sequence length that is not a multiple of tp x cp",
    "moe_dense": "an expert setting (expert TP, dispatcher, imbalance) on a dense model",
    "fabric_topology": "a fabric feature the topology cannot carry (SHARP off rail leaves, dual-ToR on a torus)",
    "serving_gpus": "serving: the GPUs do not split into whole model instances (tp x dp_attention x pp)",
    "pd_ratio": "serving: groups of P prefill and D decode instances do not divide the GPUs",
    "kv_cache": "serving: the KV cache does not fit (weights fill the HBM, or the batch is too large)",
    "format_unsupported": "a number format (fp8, fp4) the GPU has no tensor cores for",
    "ep_width": "serving: ep does not divide a pipeline stage's tp x dp_attention GPUs",
    "nvlink_segment": "nvlink_segment_nodes does not fit one NVLink domain or divide the job's servers",
}


class ScalefrontError(Exception):
    """Base class of every bad-input error scalefront raises."""


class ConfigurationError(ScalefrontError):
    """A configuration the model cannot evaluate."""

    def __init__(self, message: str, category: str, field: str | None = None):
        super().__init__(message, category, field)
        self.message = message
        self.category = category
        self.field = field

    def __str__(self) -> str:
        return self.message


class CatalogError(ScalefrontError):
    """A catalog, scenario or model file is malformed, or a name is not in the catalog."""


class UsageError(ScalefrontError, ValueError):
    """A bad argument to the API or the command line."""


class InternalError(RuntimeError):
    """A bug in scalefront: the Rust core panicked. The message is the panic's."""


class ClusterError(RuntimeError):
    """Distributed work failed for a reason other than its input: a shard's worker was lost twice, or the cluster
    cannot be reached. Nothing was written; running it again may succeed."""


def message_of(err: BaseException) -> str:
    """The one-line human message of an error."""
    text = str(err).strip()
    return " ".join(text.splitlines()) if text else type(err).__name__

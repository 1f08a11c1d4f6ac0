"""What a scenario (or one model) needs measured: its models' layer shapes at the TP degrees, tokens per
micro-batch (micro-batch x sequence / CP), micro-batch sizes and expert-parallel degrees it sweeps, as the
`Request`s of `cases.build_plan`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalefront.errors import UsageError
from scalefront.fidelity.measure.cases import ModelShape, Request
from scalefront.inputs.catalog.entries import ModelEntry
from scalefront.inputs.catalog.loader import Catalog, load_model_file
from scalefront.inputs.scenario.build import Scenario, load_mix

__all__ = ["Wanted", "model_request", "scenario_requests"]

#: TP degrees measured for a model given alone (`--model`), the powers of two within an 8-GPU server.
MODEL_TPS = (1, 2, 4, 8)


@dataclass(frozen=True)
class Wanted:
    """What a scenario asks to measure: one request per workload, whether it trains in FP8, and a one-line
    description."""

    requests: tuple[Request, ...]
    fp8: bool
    what: str


def _shape(name: str, model: ModelEntry, seq_len: int) -> ModelShape:
    return ModelShape.from_fields(name, model.model_dump() | {"seq_len": seq_len})


def _degrees(axis: Any, gpu_counts: Sequence[int], fits: Callable[[int], bool]) -> tuple[int, ...]:
    """A sweep's degree axis as values: a list as given, a search as every divisor of a GPU count up to its
    maximum; only the degrees the model allows (`fits`)."""
    if isinstance(axis, dict):
        top = axis["search"]
        values = {d for n in gpu_counts for d in range(1, min(n, top) + 1) if n % d == 0}
    else:
        values = set(axis)
    return tuple(sorted(d for d in values if fits(d)))


def _request(
    s: Scenario, tps: Sequence[int] | None, tokens: Sequence[int] | None, eps: Sequence[int] | None
) -> Request:
    m, space = s.model, s.space
    tp_values = (
        tuple(tps) if tps else _degrees(space["tp"], s.gpu_counts, lambda d: not m.heads % d and not m.kv_heads % d)
    )
    cps = _degrees(space["cp"], s.gpu_counts, lambda d: d == 1 or not s.seq_len % (2 * d))
    batches = tuple(space["micro_batch"])
    token_values = tuple(tokens) if tokens else tuple(sorted({b * s.seq_len // cp for b in batches for cp in cps}))
    experts = m.moe_experts or 1
    ep_values = tuple(eps) if eps else _degrees(space["ep"], s.gpu_counts, lambda d: not experts % d)
    if not tp_values or not token_values:
        raise UsageError(
            f"{s.path}: no TP degree the model {s.model_name!r} allows ({m.heads} heads, {m.kv_heads} KV heads)"
        )
    shape = _shape(Path(s.model_name).stem, m, s.seq_len)
    return Request(shape, tp_values, token_values, batches, ep_values or (1,), s.space["parallelism"]["etp"])


def scenario_requests(
    source: str,
    catalog: Catalog,
    *,
    tps: Sequence[int] | None = None,
    tokens: Sequence[int] | None = None,
    eps: Sequence[int] | None = None,
) -> Wanted:
    """Every workload of scenario `source` (a built-in id or a TOML file); `tps`, `tokens` and `eps` replace the
    scenario's TP degrees, tokens per micro-batch and expert-parallel degrees."""
    parts = load_mix(source, catalog)
    requests = tuple(_request(p.scenario, tps, tokens, eps) for p in parts)
    fp8 = any("fp8" in p.scenario.space["precisions"] for p in parts)
    return Wanted(requests, fp8, f"scenario {parts[0].scenario.name}: {_describe(requests)}")


def model_request(
    model: str,
    catalog: Catalog,
    *,
    tps: Sequence[int] | None = None,
    tokens: Sequence[int] | None = None,
    eps: Sequence[int] | None = None,
) -> Wanted:
    """One model (a catalog id or a model TOML file) at `tps` (default: those of 1, 2, 4, 8 its heads allow),
    `tokens` per micro-batch (default: its sequence length) and `eps` (default 1)."""
    entry = load_model_file(model) if model.endswith(".toml") else catalog.model(model)
    name = Path(model).stem
    allowed = tuple(d for d in (tps or MODEL_TPS) if not entry.heads % d and not entry.kv_heads % d)
    if not allowed:
        raise UsageError(
            f"--tp: none of {', '.join(map(str, tps or MODEL_TPS))} divides {name}'s {entry.heads} heads and "
            f"{entry.kv_heads} KV heads"
        )
    request = Request(
        _shape(name, entry, entry.seq_len), allowed, tuple(tokens or (entry.seq_len,)), (1,), tuple(eps or (1,))
    )
    return Wanted((request,), False, f"model {name}: {_describe((request,))}")


def _describe(requests: Sequence[Request]) -> str:
    return "; ".join(
        f"{r.model.name} at TP {', '.join(map(str, r.tps))}, "
        f"{', '.join(f'{t:,}' for t in r.tokens)} tokens per micro-batch"
        for r in requests
    )

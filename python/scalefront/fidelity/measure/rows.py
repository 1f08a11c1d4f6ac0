"""The rows of a recorded run, read and checked: layer GEMMs, large GEMMs, attention, routed experts and token
routing, in the layouts of `scalefront measure`'s record, ``gpu_bench.py`` and ``moe_bench.py`` (see `replay`).
A missing, non-finite or non-positive value is one line naming the file, the row and the field; a kernel the run
recorded as unavailable (an ``error`` row) is listed, not refused."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalefront.errors import UsageError
from scalefront.fidelity.measure.cases import PASSES

__all__ = [
    "AttentionRow",
    "ExpertRow",
    "GemmRow",
    "LargeGemm",
    "Problem",
    "RoutingRow",
    "attention_rows",
    "expert_rows",
    "fp8_layer_gemms",
    "gemm_rows",
    "hbm",
    "large_gemms",
    "number",
    "routing_rows",
    "section_rows",
    "text",
]


@dataclass(frozen=True)
class GemmRow:
    """One layer GEMM: where it occurs, its shape and precision, and the milliseconds of the passes measured."""

    model: str
    tp: int
    tokens: int
    gemm: str
    dtype: str
    m: int
    k: int
    n: int
    ms: dict[str, float]


@dataclass(frozen=True)
class LargeGemm:
    """A large GEMM's forward rate (gpu_bench.py's MAMF shapes)."""

    dtype: str
    m: int
    k: int
    n: int
    tflops: float


@dataclass(frozen=True)
class AttentionRow:
    heads: int
    kv_heads: int
    head_dim: int
    v_head_dim: int
    seq: int
    batch: int
    backend: str
    fwd_ms: float
    fwdbwd_ms: float


@dataclass(frozen=True)
class ExpertRow:
    model: str
    hidden: int
    ffn: int
    experts_local: int
    tokens_per_expert: int
    gated: bool
    grouped_fwd_ms: float | None
    grouped_dgrad_ms: float | None
    loop_fwd_ms: float
    loop_wgrad_down_ms: float


@dataclass(frozen=True)
class RoutingRow:
    """Unfused token routing of `tokens` tokens (moe_bench.py): router, permutation, weighted un-permutation."""

    model: str
    tokens: int
    hidden: int
    experts: int
    top_k: int
    route_ms: float
    permute_ms: float
    unpermute_ms: float


class Problem:
    """The one-line error of a file: `<file>: <entry>: <field>: <what is wrong>`."""

    def __init__(self, file: str):
        self.file = file

    @property
    def name(self) -> str:
        """The file's name, as sources cite it (a path would name the machine it was replayed on)."""
        return Path(self.file).name

    def __call__(self, where: str, msg: str) -> UsageError:
        return UsageError(f"{self.file}: {where}: {msg}" if where else f"{self.file}: {msg}")


def number(row: dict[str, Any], key: str, where: str, bad: Problem, *, whole: bool = False) -> Any:
    if key not in row:
        return _missing(row, key, where, bad)
    v = row[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or (whole and not float(v).is_integer()):
        raise bad(where, f"{key}: expected a {'whole ' if whole else ''}number, got {json.dumps(v)}")
    if not math.isfinite(v) or v <= 0:
        what = "a positive whole number" if whole else "a positive time or rate"
        raise bad(where, f"{key}: {json.dumps(v)}: expected {what} (a failed or partial run?)")
    return int(v) if whole else float(v)


def _missing(row: dict[str, Any], key: str, where: str, bad: Problem) -> Any:
    raise bad(where, f"{key}: missing (a partial run, or a file from another tool?)")


def text(row: dict[str, Any], key: str, where: str, bad: Problem, default: str | None = None) -> str:
    v = row.get(key, default)
    if not isinstance(v, str):
        raise bad(where, f"{key}: expected text, got {json.dumps(v)}" if key in row else f"{key}: missing")
    return v


def section_rows(
    doc: dict[str, Any], section: str, bad: Problem, *, required: bool = True
) -> list[tuple[str, dict[str, Any]]]:
    """`(where, row)` of a record's section, a list of objects; missing and empty are errors when `required`."""
    rows = doc.get(section)
    if rows is None and not required:
        return []
    if not isinstance(rows, list) or (required and not rows):
        got = "missing" if rows is None else f"{json.dumps(rows)[:40]}"
        what = "a non-empty list" if required else "a list"
        raise bad(section, f"expected {what} of measurements, got {got} (a partial run?)")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise bad(f"{section}[{i}]", f"expected an object, got {json.dumps(row)[:40]}")
    return [(f"{section}[{i}]", row) for i, row in enumerate(rows)]


def _label(row: dict[str, Any], *keys: str) -> str:
    return " ".join(str(row[k]) for k in keys if k in row)


def _gemm_label(row: dict[str, Any]) -> str:
    """`llama3-8b, TP 1, 4096 tokens, qkv`: where a GEMM row occurs."""
    forms = {"model": "{}", "tp": "TP {}", "tokens": "{} tokens", "gemm": "{}"}
    return ", ".join(form.format(row[k]) for k, form in forms.items() if k in row)


def _gemm(where: str, row: dict[str, Any], bad: Problem, dtype: str, passes: Sequence[str]) -> GemmRow:
    where = f"{where} ({_gemm_label(row)})"
    m, k, n = (number(row, key, where, bad, whole=True) for key in ("m", "k", "n"))
    return GemmRow(
        model=text(row, "model", where, bad, ""),
        tp=number(row, "tp", where, bad, whole=True) if "tp" in row else 1,
        tokens=number(row, "tokens", where, bad, whole=True) if "tokens" in row else m,
        gemm=text(row, "gemm", where, bad, ""),
        dtype=text(row, "dtype", where, bad, dtype),
        m=m,
        k=k,
        n=n,
        ms={p: number(row, f"{p}_ms", where, bad) for p in passes},
    )


def gemm_rows(doc: dict[str, Any], bad: Problem) -> tuple[list[GemmRow], list[str]]:
    rows, failed = [], []
    for where, row in section_rows(doc, "gemms", bad):
        if "error" in row:
            failed.append(f"{where} {_label(row, 'model', 'tp', 'tokens', 'gemm', 'dtype')}: {row['error']}")
        else:
            rows.append(_gemm(where, row, bad, "bf16", PASSES))
    _check_complete(rows, bad)
    return rows, failed


def _check_complete(rows: Sequence[GemmRow], bad: Problem) -> None:
    """Every layer (model, TP, tokens, precision) of a run has the same GEMMs as its model's other layers."""
    layers: dict[tuple[str, str], dict[tuple[int, int], set[str]]] = {}
    for r in rows:
        layers.setdefault((r.model, r.dtype), {}).setdefault((r.tp, r.tokens), set()).add(r.gemm)
    for (model, dtype), groups in layers.items():
        every = set().union(*groups.values())
        for (tp, tokens), names in sorted(groups.items()):
            if names != every:
                missing = ", ".join(sorted(every - names))
                raise bad(
                    "gemms",
                    f"{model} TP {tp}, {tokens} tokens ({dtype}) has no {missing} GEMM that its other layers have "
                    "(a partial run)",
                )


def attention_rows(doc: dict[str, Any], bad: Problem) -> tuple[list[AttentionRow], list[str]]:
    rows, failed = [], []
    for where, row in section_rows(doc, "attention", bad):
        label = _label(row, "heads", "kv_heads", "seq", "batch", "backend")
        if "error" in row:
            failed.append(f"{where} attention {label}: {row['error']}")
            continue
        where = f"{where} ({label})"
        # gpu_bench.py's rows are all head dim 128 and say nothing of it.
        head_dim = number(row, "head_dim", where, bad, whole=True) if "head_dim" in row else 128
        rows.append(
            AttentionRow(
                heads=number(row, "heads", where, bad, whole=True),
                kv_heads=number(row, "kv_heads", where, bad, whole=True),
                head_dim=head_dim,
                v_head_dim=number(row, "v_head_dim", where, bad, whole=True) if "v_head_dim" in row else head_dim,
                seq=number(row, "seq", where, bad, whole=True),
                batch=number(row, "batch", where, bad, whole=True),
                backend=text(row, "backend", where, bad),
                fwd_ms=number(row, "fwd_ms", where, bad),
                fwdbwd_ms=number(row, "fwdbwd_ms", where, bad),
            )
        )
    return rows, failed


def large_gemms(doc: dict[str, Any], bad: Problem) -> list[LargeGemm]:
    out = []
    for section, dtype in (("mamf_bf16", "bf16"), ("mamf_fp8", "fp8")):
        for where, row in section_rows(doc, section, bad, required=section == "mamf_bf16" and "fp8_error" not in doc):
            m, k, n = (number(row, key, where, bad, whole=True) for key in ("m", "k", "n"))
            out.append(LargeGemm(dtype=dtype, m=m, k=k, n=n, tflops=number(row, "tflops", where, bad)))
    return out


def hbm(doc: dict[str, Any], bad: Problem) -> tuple[float | None, float | None]:
    if "hbm_error" in doc:
        return None, None
    return number(doc, "copy_GBps", "", bad), number(doc, "triad_GBps", "", bad)


def _expert_row(where: str, row: dict[str, Any], bad: Problem) -> ExpertRow:
    def whole(key: str) -> Any:
        return number(row, key, where, bad, whole=True)

    def ms(key: str) -> Any:
        return None if key.startswith("grouped") and "grouped_error" in row else number(row, key, where, bad)

    return ExpertRow(
        model=text(row, "model", where, bad, ""),
        hidden=whole("hidden"),
        ffn=whole("ffn"),
        experts_local=whole("experts_local"),
        tokens_per_expert=whole("tokens_per_expert"),
        gated=row.get("gated", True) is not False,
        grouped_fwd_ms=ms("grouped_fwd_ms"),
        grouped_dgrad_ms=ms("grouped_dgrad_ms"),
        loop_fwd_ms=ms("loop_fwd_ms"),
        loop_wgrad_down_ms=ms("loop_wgrad_down_ms"),
    )


def expert_rows(doc: dict[str, Any], bad: Problem, required: bool) -> tuple[list[ExpertRow], list[str]]:
    rows, failed = [], []
    for where, row in section_rows(doc, "experts", bad, required=required):
        label = _label(row, "model", "experts_local", "tokens_per_expert")
        where = f"{where} ({label})"
        if "error" in row:
            failed.append(f"{where}: {row['error']}")
            continue
        if "grouped_error" in row:
            failed.append(f"{where} grouped: {row['grouped_error']}")
        rows.append(_expert_row(where, row, bad))
    return rows, failed


def routing_rows(doc: dict[str, Any], bad: Problem) -> list[RoutingRow]:
    out = []
    for where, row in section_rows(doc, "plumbing", bad):
        where = f"{where} ({_label(row, 'model', 'tokens')})"
        tokens, experts, top_k, moved = (
            number(row, k, where, bad, whole=True) for k in ("tokens", "experts", "top_k", "moved_bytes_each_way")
        )
        times = [number(row, k, where, bad) for k in ("route_ms", "permute_ms", "unpermute_ms")]
        # moe_bench.py: moved_bytes_each_way = tokens x top_k x hidden x 2 bytes
        out.append(
            RoutingRow(text(row, "model", where, bad), tokens, moved // (tokens * top_k * 2), experts, top_k, *times)
        )
    return out


def fp8_layer_gemms(doc: dict[str, Any], bad: Problem) -> tuple[list[GemmRow], list[str]]:
    """moe_bench.py's FP8 forward GEMMs of dense layers at 8,192 tokens (their BF16 twins are not kept)."""
    rows, failed = [], []
    for where, row in section_rows(doc, "fp8_layer_gemms", bad):
        if "error" in row:
            failed.append(f"{where} {_label(row, 'model', 'tp', 'gemm')} fp8: {row['error']}")
            continue
        fp8_ms = number(row, "fp8_ms", f"{where} ({_label(row, 'model', 'tp', 'gemm')})", bad)
        rows.append(_gemm(where, row | {"fwd_ms": fp8_ms, "tokens": row.get("m")}, bad, "fp8", ("fwd",)))
    return rows, failed

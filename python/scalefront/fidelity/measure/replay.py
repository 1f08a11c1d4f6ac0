"""A recorded run read back: the JSON `scalefront measure` writes (``--record``, or ``bench.py``'s
measure-run.json), and the JSON of the reference scripts it grew from, ``gpu_bench.py`` (HBM, large GEMMs, layer
GEMMs, attention) and ``moe_bench.py`` (routed experts, token routing, FP8 layer GEMMs). Several files of one GPU
make one `Run`.

A file that is not such a record (another tool's, not JSON, truncated, not UTF-8), or whose rows are missing,
partial, not finite or not positive, is one line naming the file, the entry and the field; a kernel the run
recorded as unavailable (an ``error`` row) is listed, not refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scalefront.errors import UsageError
from scalefront.fidelity.measure.driver import FORMAT, TOOL
from scalefront.fidelity.measure.host_rows import HostLaunch, HostLayer, host_section
from scalefront.fidelity.measure.rows import (
    AttentionRow,
    ExpertRow,
    GemmRow,
    LargeGemm,
    Problem,
    RoutingRow,
    attention_rows,
    expert_rows,
    fp8_layer_gemms,
    gemm_rows,
    hbm,
    large_gemms,
    routing_rows,
    text,
)
from scalefront.inputs.files import read_text

__all__ = ["Run", "read_runs", "run_of"]

GPU_BENCH = "gpu_bench.py"
MOE_BENCH = "moe_bench.py"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Run:
    """One GPU's recorded measurements, from one or several files."""

    files: tuple[str, ...]
    tools: tuple[str, ...]
    gpu: str
    torch: str
    driver: str
    date: str | None
    commands: tuple[str, ...]
    copy_gbytes_per_s: float | None = None
    triad_gbytes_per_s: float | None = None
    gemms: tuple[GemmRow, ...] = ()
    large: tuple[LargeGemm, ...] = ()
    attention: tuple[AttentionRow, ...] = ()
    experts: tuple[ExpertRow, ...] = ()
    routing: tuple[RoutingRow, ...] = ()
    #: The host probe (`measure --host`): launch times and MoE layers in eager PyTorch.
    host_launch: HostLaunch | None = None
    host: tuple[HostLayer, ...] = ()
    #: Kernels the run recorded as unavailable, one line each.
    failed: tuple[str, ...] = field(default=())


def _header(doc: dict[str, Any], bad: Problem, tool: str) -> dict[str, Any]:
    """The run's device, software, date and command (what a catalog source cites)."""
    gpu = text(doc, "gpu", "", bad)
    date = doc.get("date")
    if date is not None and (not isinstance(date, str) or not _DATE.match(date)):
        raise bad("date", f"expected YYYY-MM-DD, got {json.dumps(date)}")
    command = doc.get("command") if tool == TOOL else tool
    return {
        "tools": (tool,),
        "gpu": gpu,
        "torch": str(doc.get("torch", "")),
        "driver": str(doc.get("driver", "")),
        "date": date,
        "commands": (str(command),),
    }


def _check_plan(doc: dict[str, Any], bad: Problem) -> dict[str, int]:
    """A record of this tool holds as many rows per section as its plan had (else it was cut short)."""
    plan = doc.get("plan")
    if not isinstance(plan, dict):
        raise bad("plan", "missing: the record does not say what was planned")
    counts = {}
    for section in ("gemms", "attention", "experts", "host"):
        planned = plan.get(section, 0)
        if isinstance(planned, bool) or not isinstance(planned, int) or planned < 0:
            raise bad("plan", f"{section}: expected a count of rows, got {json.dumps(planned)}")
        rows = doc.get(section, [])
        if not isinstance(rows, list):
            raise bad(section, f"expected a list of measurements, got {json.dumps(rows)[:40]}")
        got = len(rows)
        if got != planned:
            raise bad(section, f"{got} rows, but the run planned {planned} (a partial run)")
        counts[section] = planned
    return counts


def _read_measure(doc: dict[str, Any], bad: Problem) -> Run:
    if doc.get("format") != FORMAT:
        raise bad(
            "format",
            f"{json.dumps(doc.get('format'))}: this scalefront reads format {FORMAT}; "
            "replay it with the scalefront that wrote it",
        )
    planned = _check_plan(doc, bad)
    text(doc, "date", "", bad)
    # A run without the HBM case (`bench.py --only-host`) says so in its plan.
    copy, triad = hbm(doc, bad) if doc["plan"].get("hbm", 1) != 0 else (None, None)
    gemms, failed = gemm_rows(doc, bad) if planned["gemms"] else ([], [])
    attention, att_failed = attention_rows(doc, bad) if planned["attention"] else ([], [])
    experts, exp_failed = expert_rows(doc, bad, required=bool(planned["experts"]))
    host_launch, host, host_failed = host_section(doc, bad)
    failed = failed + att_failed + exp_failed + host_failed
    failed += [f"hbm: {doc['hbm_error']}"] if "hbm_error" in doc else []
    return Run(
        files=(bad.name,),
        **_header(doc, bad, TOOL),
        copy_gbytes_per_s=copy,
        triad_gbytes_per_s=triad,
        gemms=tuple(gemms),
        attention=tuple(attention),
        experts=tuple(experts),
        host_launch=host_launch,
        host=tuple(host),
        failed=tuple(failed),
    )


def _read_gpu_bench(doc: dict[str, Any], bad: Problem) -> Run:
    copy, triad = hbm(doc, bad)
    gemms, failed = gemm_rows(doc, bad)
    attention, att_failed = attention_rows(doc, bad)
    return Run(
        files=(bad.name,),
        **_header(doc, bad, GPU_BENCH),
        copy_gbytes_per_s=copy,
        triad_gbytes_per_s=triad,
        gemms=tuple(gemms),
        large=tuple(large_gemms(doc, bad)),
        attention=tuple(attention),
        failed=tuple(failed + att_failed),
    )


def _read_moe_bench(doc: dict[str, Any], bad: Problem) -> Run:
    experts, failed = expert_rows(doc, bad, required=True)
    fp8, fp8_failed = fp8_layer_gemms(doc, bad)
    return Run(
        files=(bad.name,),
        **_header(doc, bad, MOE_BENCH),
        gemms=tuple(fp8),
        experts=tuple(experts),
        routing=tuple(routing_rows(doc, bad)),
        failed=tuple(failed + fp8_failed),
    )


_READERS: dict[str, Callable[[dict[str, Any], Problem], Run]] = {
    TOOL: _read_measure,
    GPU_BENCH: _read_gpu_bench,
    MOE_BENCH: _read_moe_bench,
}


def _tool_of(doc: Any, bad: Problem) -> str:
    """Which tool wrote `doc`: this one says so; gpu_bench.py's has its MAMF GEMMs, moe_bench.py's its experts."""
    if isinstance(doc, dict):
        if doc.get("tool") == TOOL:
            return TOOL
        if "tool" not in doc and "mamf_bf16" in doc:
            return GPU_BENCH
        if "tool" not in doc and "fp8_layer_gemms" in doc:
            return MOE_BENCH
    keys = ", ".join(sorted(doc)[:6]) if isinstance(doc, dict) else type(doc).__name__
    raise bad(
        "",
        f"not a recorded GPU benchmark run (found {keys or 'an empty object'}); --replay reads the JSON of "
        f"scalefront measure --record, bench.py, {GPU_BENCH} or {MOE_BENCH}",
    )


def run_of(doc: Any, source: str) -> Run:
    """A record already in memory (the run just measured), checked as a file of it would be; `source` names it."""
    bad = Problem(source)
    return _READERS[_tool_of(doc, bad)](doc, bad)


def _read_one(path: str) -> Run:
    content = read_text(Path(path))
    try:
        doc = json.loads(content)
    except json.JSONDecodeError as err:
        where = "truncated" if err.pos >= len(content.rstrip()) else "malformed"
        raise Problem(path)(
            "", f"{where} JSON at line {err.lineno} column {err.colno} ({err.msg}); a run cut short?"
        ) from None
    return run_of(doc, path)


def _merge(a: Run, b: Run) -> Run:
    if a.gpu != b.gpu:
        raise UsageError(
            f"{b.files[0]}: gpu: {b.gpu!r} is not {a.files[0]}'s {a.gpu!r}; replay one GPU's runs together"
        )
    join = {
        name: getattr(a, name) + getattr(b, name)
        for name in (
            "files",
            "tools",
            "commands",
            "gemms",
            "large",
            "attention",
            "experts",
            "routing",
            "host",
            "failed",
        )
    }
    return Run(
        **join,
        gpu=a.gpu,
        torch=a.torch or b.torch,
        driver=a.driver or b.driver,
        date=a.date or b.date,
        copy_gbytes_per_s=a.copy_gbytes_per_s or b.copy_gbytes_per_s,
        triad_gbytes_per_s=a.triad_gbytes_per_s or b.triad_gbytes_per_s,
        host_launch=a.host_launch or b.host_launch,
    )


def read_runs(paths: Sequence[str]) -> Run:
    """The recorded runs of one GPU in `paths`, read, checked and joined."""
    runs = [_read_one(p) for p in paths]
    run = runs[0]
    for other in runs[1:]:
        run = _merge(run, other)
    return run

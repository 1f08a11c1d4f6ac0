"""Fidelity: scalefront's predictions against published measurements (tests/validation/*.toml, embedded in
the package at build time as validation/*.toml).

Each training row is converted to a *measured step time* in the source's own FLOP convention, then compared
with the predicted step time of the same configuration:
- `step_time_s`: as published;
- `tokens_per_s_per_gpu`: global_batch x seq_len / (tokens/s/GPU x GPUs);
- `tflops_per_gpu`: the source's FLOPs per step / (TFLOP/s x GPUs). `tflops_formula = "megatron-sc21"` is
  Narayanan et al. SC21 eq. 3, 96 B s l h^2 (1 + s/6h + V/16lh) (recomputation included); otherwise the
  model's own FLOP count (with recomputed FLOPs when `tflops_counts_recompute`).
Collective rows compare predicted all-reduce bus bandwidth with nccl-tests' at each message size.
The error of a row is predicted / measured - 1 on step time (positive = the model is too slow).
"""

from __future__ import annotations

import statistics
import tomllib
from dataclasses import dataclass
from typing import Any

from scalefront import _core
from scalefront.catalog import Catalog, ModelEntry
from scalefront.model import builtin_catalog, evaluate

__all__ = ["CollectiveCheck", "TrainingCheck", "collective_checks", "load_table", "summary", "training_checks"]

#: Rows without an `overlap` key are taken as Megatron-LM's usual setting: overlapped gradient reduction.
DEFAULT_OVERLAP = "dp"
#: Rows name no topology: DGX SuperPODs and the other published clusters are rail-optimized fat-trees.
DEFAULT_TOPOLOGY = "rail-fat-tree"


@dataclass(frozen=True)
class TrainingCheck:
    id: str
    source: str
    gpu: str
    gpus: int
    fabric: str
    model: str
    measured_step_time_s: float
    predicted_step_time_s: float
    feasible: bool
    metric: str
    note: str
    #: "validation" rows are judged; "calibration" rows fit their GPU's sustained_efficiency and "reference" rows
    #: (configuration incomplete in the source, see `excluded_because`) are shown but not counted.
    role: str = "validation"
    excluded_because: str = ""

    @property
    def error(self) -> float:
        return self.predicted_step_time_s / self.measured_step_time_s - 1.0


@dataclass(frozen=True)
class CollectiveCheck:
    id: str
    source: str
    size_bytes: float
    measured_busbw_gbytes_per_s: float
    predicted_busbw_gbytes_per_s: float

    @property
    def error(self) -> float:
        return self.predicted_busbw_gbytes_per_s / self.measured_busbw_gbytes_per_s - 1.0


def load_table(name: str) -> dict[str, Any]:
    """A validation table embedded in the package (`training_runs` or `collectives`)."""
    return tomllib.loads(_core.data_files()[f"validation/{name}.toml"])


def _sc21_flops_per_step(m: ModelEntry, global_batch: int, seq_len: int) -> float:
    # Narayanan et al. SC21, eq. 3 (full recomputation counted): 96 B s l h^2 (1 + s / 6h + V / 16 l h).
    b, s, layers, h, v = global_batch, seq_len, m.layers, m.hidden, m.vocab
    return 96.0 * b * s * layers * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * layers * h))


def training_checks(catalog: Catalog | None = None, rows: list[dict[str, Any]] | None = None) -> list[TrainingCheck]:
    cat = catalog or builtin_catalog()
    out = []
    for row in rows if rows is not None else load_table("training_runs")["run"]:
        if "model_dims" in row:
            model: Any = ModelEntry.model_validate(row["model_dims"])
            model_name = model.name
        else:
            model = row["model"]
            model_name = model
        r = evaluate(
            model,
            row["gpu"],
            row["gpus"],
            fabric=row["fabric"],
            topology=row.get("topology", DEFAULT_TOPOLOGY),
            tp=row["tp"],
            pp=row["pp"],
            dp=row["dp"],
            cp=row["cp"],
            ep=row["ep"],
            vpp=row["vpp"],
            micro_batch=row["micro_batch"],
            global_batch=row["global_batch"],
            seq_len=row["seq_len"],
            recompute=row["recompute"],
            zero=row["zero"],
            overlap=row.get("overlap", DEFAULT_OVERLAP),
            precision=row["precision"],
            flash_attention=row.get("flash_attention", True),
            uneven_stages=row.get("uneven_stages", False),
            catalog=cat,
        )
        tokens_per_step = row["global_batch"] * row["seq_len"]
        if "step_time_s" in row:
            metric, measured = "step_time_s", float(row["step_time_s"])
        elif "tokens_per_s_per_gpu" in row:
            metric = "tokens_per_s_per_gpu"
            measured = tokens_per_step / (row["tokens_per_s_per_gpu"] * row["gpus"])
        elif "tflops_per_gpu" in row:
            metric = "tflops_per_gpu"
            if row.get("tflops_formula") == "megatron-sc21":
                flops = _sc21_flops_per_step(
                    cat.model(model) if isinstance(model, str) else model, row["global_batch"], row["seq_len"]
                )
            else:
                per_token = r.model_flops_per_token
                if row.get("tflops_counts_recompute"):
                    per_token *= r.hfu / r.mfu
                flops = per_token * tokens_per_step
            measured = flops / (row["tflops_per_gpu"] * 1e12 * row["gpus"])
        else:
            raise ValueError(f"validation row {row['id']}: no measurement")
        out.append(
            TrainingCheck(
                id=row["id"],
                source=row["source"],
                gpu=row["gpu"],
                gpus=row["gpus"],
                fabric=row["fabric"],
                model=model_name,
                measured_step_time_s=measured,
                predicted_step_time_s=r.step_time_s,
                feasible=r.feasible,
                metric=metric,
                note=row.get("note", ""),
                role=row.get("role", "validation"),
                excluded_because=row.get("excluded_because", ""),
            )
        )
    return out


def calibrate(catalog: Catalog | None = None) -> dict[str, tuple[float, list[str]]]:
    """Fit each GPU's `sustained_efficiency` on its calibration rows: the value (to 0.01) at which the
    geometric mean of predicted / measured step time over those rows is 1. Returns {gpu: (value, row ids)}."""
    import math
    from dataclasses import replace

    base = catalog or builtin_catalog()
    table = [r for r in load_table("training_runs")["run"] if r.get("role") == "calibration"]
    fitted: dict[str, tuple[float, list[str]]] = {}
    for gpu in sorted({r["gpu"] for r in table}):
        rows = [r for r in table if r["gpu"] == gpu]

        def log_ratio(value: float, gpu: str = gpu, rows: list[dict[str, Any]] = rows) -> float:
            gpus = dict(base.gpus)
            gpus[gpu] = gpus[gpu].model_copy(update={"sustained_efficiency": value})
            checks = training_checks(replace(base, gpus=gpus), rows)
            return sum(math.log(c.predicted_step_time_s / c.measured_step_time_s) for c in checks) / len(checks)

        lo, hi = 0.2, 1.0  # slower at lo; step time falls as the efficiency rises
        if log_ratio(hi) > 0:
            fitted[gpu] = (1.0, [r["id"] for r in rows])
            continue
        for _ in range(40):
            mid = (lo + hi) / 2
            if log_ratio(mid) > 0:
                lo = mid
            else:
                hi = mid
        fitted[gpu] = (round((lo + hi) / 2, 2), [r["id"] for r in rows])
    return fitted


def collective_checks(catalog: Catalog | None = None) -> list[CollectiveCheck]:
    cat = catalog or builtin_catalog()
    out = []
    for curve in load_table("collectives")["curve"]:
        fabric = cat.fabric(curve["fabric"]) if curve["fabric"] != "none" else cat.fabric("ib-ndr")
        topo = cat.topology(curve.get("topology", DEFAULT_TOPOLOGY))
        sizes = [float(p[0]) for p in curve["points"]]
        times = _core.collective_times(
            {
                "scale_up": cat.scale_up_domain(curve["scale_up"]).core_spec(),
                "fabric": fabric.core_spec(),
                "topology": topo.core_spec(),
                "gpus": curve["gpus"],
                "server_gpus": curve["gpus_per_node"],
                "op": curve["op"],
                "sizes_bytes": sizes,
            }
        )
        n = curve["gpus"]
        for (size, measured), t in zip(curve["points"], times, strict=True):
            busbw = size / t * 2.0 * (n - 1) / n / 1e9  # nccl-tests PERFORMANCE.md: all-reduce busbw factor
            out.append(CollectiveCheck(curve["id"], curve["source"], float(size), float(measured), busbw))
    return out


def summary(errors: list[float]) -> dict[str, float]:
    """Median and worst absolute percentage error."""
    abs_pct = [abs(e) * 100.0 for e in errors]
    return {"rows": len(abs_pct), "median_ape_pct": statistics.median(abs_pct), "worst_ape_pct": max(abs_pct)}


#: Collective points judged: the bandwidth regime that carries training traffic. Smaller messages are shown but
#: not judged: NCCL's protocol switches (LL, LL128, Simple) and pipeline fill are not modelled (see docs).
JUDGED_COLLECTIVE_BYTES = 2**30
#: The fidelity bar (issue 6): median and worst absolute percentage error of the judged rows.
MEDIAN_LIMIT_PCT = 15.0
WORST_LIMIT_PCT = 35.0


def judged_training(checks: list[TrainingCheck]) -> list[TrainingCheck]:
    return [c for c in checks if c.role == "validation"]


def judged_collectives(checks: list[CollectiveCheck]) -> list[CollectiveCheck]:
    return [c for c in checks if c.size_bytes >= JUDGED_COLLECTIVE_BYTES]


def render(training: list[TrainingCheck], collectives: list[CollectiveCheck], markdown: bool = False) -> str:
    """The tables and summaries, as plain text or Markdown."""
    t_sum = summary([c.error for c in judged_training(training)])
    c_sum = summary([c.error for c in judged_collectives(collectives)])
    lines: list[str] = []
    if markdown:
        lines += [
            "# Validation: scalefront against published measurements",
            "",
            "Generated by `scalefront validate --markdown` from `tests/validation/*.toml`; every row cites its "
            "source there. Error = predicted / measured step time - 1 (positive: the model is too slow); for "
            "collectives, predicted / measured bus bandwidth - 1. `calibration` rows fit their GPU's "
            "`sustained_efficiency` and are not counted; `reference` rows lack part of their configuration in "
            "the source and are not counted either (the reason is in the table).",
            "",
            f"**Training runs** (held-out rows): {t_sum['rows']} rows, median absolute error "
            f"{t_sum['median_ape_pct']:.1f}%, worst {t_sum['worst_ape_pct']:.1f}% "
            f"(bar: median {MEDIAN_LIMIT_PCT:.0f}%, worst {WORST_LIMIT_PCT:.0f}%).",
            "",
            f"**All-reduce bus bandwidth** (messages >= 1 GiB): {c_sum['rows']} points, median "
            f"{c_sum['median_ape_pct']:.1f}%, worst {c_sum['worst_ape_pct']:.1f}%.",
            "",
            "| row | role | GPU | GPUs | fabric | model | measured step s | predicted step s | error |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for c in training:
            role = c.role if c.role != "reference" else f"reference: {c.excluded_because}"
            lines.append(
                f"| {c.id} | {role} | {c.gpu} | {c.gpus} | {c.fabric} | {c.model} | {c.measured_step_time_s:.3f} | "
                f"{c.predicted_step_time_s:.3f} | {c.error:+.1%} |"
            )
        lines += [
            "",
            "| curve | bytes | measured busbw GB/s | predicted GB/s | error | judged |",
            "|---|---|---|---|---|---|",
        ]
        for k in collectives:
            judged = "yes" if k.size_bytes >= JUDGED_COLLECTIVE_BYTES else "no"
            lines.append(
                f"| {k.id} | {k.size_bytes:,.0f} | {k.measured_busbw_gbytes_per_s:.2f} | "
                f"{k.predicted_busbw_gbytes_per_s:.2f} | {k.error:+.1%} | {judged} |"
            )
        return "\n".join(lines) + "\n"
    lines.append(f"{'row':44} {'role':11} {'gpu':10} {'gpus':>6} {'measured s':>11} {'predicted s':>11} {'error':>8}")
    for c in training:
        lines.append(
            f"{c.id[:44]:44} {c.role:11} {c.gpu:10} {c.gpus:6d} {c.measured_step_time_s:11.3f} "
            f"{c.predicted_step_time_s:11.3f} {c.error:+8.1%}"
        )
    lines.append("")
    lines.append(f"{'collective':36} {'bytes':>14} {'measured GB/s':>13} {'predicted':>10} {'error':>8}")
    for k in collectives:
        mark = "" if k.size_bytes >= JUDGED_COLLECTIVE_BYTES else "  (not judged)"
        lines.append(
            f"{k.id[:36]:36} {k.size_bytes:14,.0f} {k.measured_busbw_gbytes_per_s:13.2f} "
            f"{k.predicted_busbw_gbytes_per_s:10.2f} {k.error:+8.1%}{mark}"
        )
    lines += [
        "",
        f"training runs (held out): {t_sum['rows']} rows, median |error| {t_sum['median_ape_pct']:.1f}%, "
        f"worst {t_sum['worst_ape_pct']:.1f}%",
        f"all-reduce bus bandwidth (>= 1 GiB): {c_sum['rows']} points, median |error| {c_sum['median_ape_pct']:.1f}%, "
        f"worst {c_sum['worst_ape_pct']:.1f}%",
    ]
    return "\n".join(lines)

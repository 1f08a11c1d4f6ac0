"""A lifecycle comparison in words (`scalefront.roi.lifecycle`): the sentence the verdict adds (the life's phases
and the split of the NPV between training and serving, at typical values) and the split table of the terminal
report, the memo and the UI. Formatting only: the numbers are the core's (`RoiResult.lifecycle_split`)."""

from __future__ import annotations

from typing import Any

import polars as pl

from scalefront.roi.result import RoiResult
from scalefront.roi.words import money

__all__ = ["SPLIT_HEAD", "SPLIT_HEADER", "slo_text", "split_lines", "split_row", "split_sentence", "split_table"]

#: The split table's header (at most 100 columns, as the terminal report).
SPLIT_HEADER = (
    f"{'GPUs':>7} {'design B':<18} {'train':>5} {'serve':>5} {'speed T':>7} {'speed S':>7} "
    f"{'training':>10} {'serving':>10} {'costs etc.':>11} {'NPV':>9}"
)


def slo_text(slos: list[tuple[str, str, float]]) -> str:
    """`TPOT <= 50 ms and TTFT <= 2 s`."""
    names = {"tpot_s": "TPOT", "ttft_s": "TTFT"}
    return " and ".join(
        f"{names.get(m, m)} {op} {v * 1e3:g} ms" if v < 1 else f"{names.get(m, m)} {op} {v:g} s" for m, op, v in slos
    )


def split_row(result: RoiResult, gpus: int, b: str) -> dict[str, Any] | None:
    """The split of one (GPU count, design B), or None without a lifecycle."""
    if result.lifecycle is None or result.lifecycle_split.is_empty():
        return None
    rows = result.lifecycle_split.filter((pl.col("gpus") == gpus) & (pl.col("fabric_b") == b)).to_dicts()
    return rows[0] if rows else None


def split_sentence(result: RoiResult, gpus: int, b: str) -> str:
    """The verdict's lifecycle sentence for one pair (empty without a lifecycle)."""
    row, life = split_row(result, gpus, b), result.lifecycle
    if row is None or life is None:
        return ""
    return (
        f" Over its life it trains for {row['training_months']:g} months, then serves {life.model} for "
        f"{row['serving_months']:g} ({slo_text(life.slos)}; {row['serving_speed_ratio'] - 1:+.1%} tokens/s per GPU "
        f"on A): of the NPV at typical values ({money(row['npv_usd'], True)}), speed while training is worth "
        f"{money(row['speed_value_training_usd'], True)}, speed while serving "
        f"{money(row['speed_value_serving_usd'], True)}, and the rest (costs, delay, resale) "
        f"{money(row['rest_usd'], True)}."
    )


def split_lines(result: RoiResult) -> list[str]:
    """The split table: per GPU count and design B, each phase's months and speed ratio (A over B), the NPV's
    parts at typical values and the NPV (empty without a lifecycle)."""
    if result.lifecycle is None or result.lifecycle_split.is_empty():
        return []
    lines = [
        "Lifecycle, at typical values: months training (train), then serving (serve); A's speed over B's in",
        "each; the NPV of choosing A split into speed while training, speed while serving and the rest.",
        SPLIT_HEADER,
        "-" * len(SPLIT_HEADER),
    ]
    for r in result.lifecycle_split.iter_rows(named=True):
        lines.append(
            f"{r['gpus']:>7,} {r['fabric_b']:<18} {r['training_months']:>5g} {r['serving_months']:>5g} "
            f"{r['training_speed_ratio']:>7.3f} {r['serving_speed_ratio']:>7.3f} "
            f"{money(r['speed_value_training_usd'], True):>10} {money(r['speed_value_serving_usd'], True):>10} "
            f"{money(r['rest_usd'], True):>11} {money(r['npv_usd'], True):>9}"
        )
    return lines


#: The split table's columns in the memo.
SPLIT_HEAD = [
    "GPUs",
    "design B",
    "months training",
    "months serving",
    "speed training",
    "speed serving",
    "serving tok/s/GPU A / B",
    "speed while training",
    "speed while serving",
    "costs, delay, resale",
    "NPV",
]


def split_table(result: RoiResult) -> list[list[str]]:
    """The split's rows as the memo shows them (`SPLIT_HEAD`), at typical values."""
    return [
        [
            f"{r['gpus']:,}",
            result.labels.get(r["fabric_b"], r["fabric_b"]),
            f"{r['training_months']:g}",
            f"{r['serving_months']:g}",
            f"{r['training_speed_ratio']:.3f}",
            f"{r['serving_speed_ratio']:.3f}",
            f"{r['serving_tokens_per_s_per_gpu_a']:,.0f} / {r['serving_tokens_per_s_per_gpu_b']:,.0f}",
            money(r["speed_value_training_usd"], True),
            money(r["speed_value_serving_usd"], True),
            money(r["rest_usd"], True),
            money(r["npv_usd"], True),
        ]
        for r in result.lifecycle_split.iter_rows(named=True)
    ]

"""The candidate designs of a comparison: each workload swept once at typical values over both fabrics; per
(fabric, GPU count, topology) the fastest few distinct layouts, as the engine's choices, for each Monte Carlo
sample to re-optimise among."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from scalefront._enums import AXES
from scalefront.engine.sweep import SweepResult
from scalefront.inputs.scenario.build import MixPart, Scenario

__all__ = ["CANDIDATE_GROUPS", "designs"]

#: Sweep grouping that keeps the best schedule of every parallel-degree combination (the candidates).
CANDIDATE_GROUPS = ["fabric", "tp", "pp", "cp", "ep"]


#: Per axis: None for a degree (the engine's own value), else the labelled columns and their lists of labels.
_Sources = dict[str, list[tuple[str, Any]] | None]


def _sources(scenario: Scenario) -> _Sources:
    """Where each axis's index is read from in a labelled sweep row (`_choice`): the scenario's label columns."""
    out: _Sources = {}
    for axis in AXES:
        sources = [(c, labels) for c, (a, labels) in scenario.labels.items() if a == axis]
        lists = [(c, labels) for c, labels in sources if labels is not None]
        out[axis] = None if len(lists) < len(sources) else lists
    return out


def _choice(sources: _Sources, row: dict[str, Any]) -> dict[str, int]:
    """A labelled sweep row as the engine's choice: each axis's index into the scenario's space, the one whose
    labels (`Scenario.labels`: a topology's name and oversubscription, ...) are the row's; the degrees tp, pp, dp,
    cp and ep as values. The bindings turn it into the core's configuration (`SweepSpace::config`)."""
    out: dict[str, int] = {}
    for axis, lists in sources.items():
        if lists is None:  # the engine's own value: a degree
            out[axis] = row[axis]
            continue
        out[axis] = next(i for i in range(len(lists[0][1])) if all(labels[i] == row[c] for c, labels in lists))
    return out


def _design_label(row: dict[str, Any], scale_ups: int) -> str:
    label = f"{row['topology']} {row['oversubscription']:g}:1"
    return f"{label} {row['scale_up']}" if scale_ups > 1 else label


_DESIGN_KEYS = ["fabric", "gpus", "topology", "oversubscription", "scale_up", "precision"]


def _candidates(result: SweepResult, k: int) -> dict[tuple[str, int, str], list[dict[str, Any]]]:
    """The fastest `k` feasible rows (one per parallel-degree combination) per design."""
    scenario = result.scenario
    assert scenario is not None, "candidates come from a sweep run here"
    kept = result.kept.filter(pl.col("feasible")).sort([*_DESIGN_KEYS, "time_to_train_s"])
    best = kept.group_by([*_DESIGN_KEYS, "tp", "pp", "cp", "ep", "dp"], maintain_order=True).first()
    out: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    sources = _sources(scenario)
    # Only the columns read here (a row as a dict of every column costs more than the rest of the loop).
    read = {"fabric", "gpus", "topology", "oversubscription", "scale_up"}
    read |= {c for axis, lists in sources.items() for c in ([axis] if lists is None else [c for c, _ in lists])}
    rows_read = best.sort([*_DESIGN_KEYS, "time_to_train_s"]).select([c for c in best.columns if c in read])
    for row in rows_read.iter_rows(named=True):
        key = (row["fabric"], row["gpus"], _design_label(row, len(scenario.scale_up_names)))
        rows = out.setdefault(key, [])
        if len(rows) < k:
            rows.append(_choice(sources, row))
    return out


def designs(parts: list[tuple[MixPart, SweepResult]], a: str, bs: Sequence[str], k: int) -> list[dict[str, Any]]:
    """Every (fabric, GPU count, topology) with candidates for every workload of the mix: side 0 for A, side
    1, 2, ... for each design B in the order of `bs`."""
    per_workload = [_candidates(result, k) for _, result in parts]
    keys = set(per_workload[0]).intersection(*per_workload[1:])
    side = {a: 0, **{b: i + 1 for i, b in enumerate(bs)}}
    out = []
    for fabric, gpus, label in sorted((x for x in keys if x[0] in side), key=lambda x: (x[1], side[x[0]], x[2])):
        out.append(
            {
                "side": side[fabric],
                "gpus": gpus,
                "topology": label,
                "candidates": [cands[(fabric, gpus, label)] for cands in per_workload],
            }
        )
    return out

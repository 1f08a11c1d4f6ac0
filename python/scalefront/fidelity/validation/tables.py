"""The published measurements scalefront is judged against (the validation tables, embedded in the package at build
time as validation/*.toml), how a row's publication family is told, and the targets and gates its errors are judged
by."""

from __future__ import annotations

import statistics
from typing import Any

from scalefront._core import data_files
from scalefront.inputs.files import parse_builtin_toml

__all__ = [
    "COLLECTIVE_LARGE_MEDIAN_LIMIT_PCT",
    "COLLECTIVE_LARGE_WORST_LIMIT_PCT",
    "COLLECTIVE_MEDIAN_LIMIT_PCT",
    "COVERAGE_RANGE_PCT",
    "COVERAGE_TOLERANCE_PCT",
    "JUDGED_COLLECTIVE_BYTES",
    "LARGE_COLLECTIVE_BYTES",
    "MEDIAN_LIMIT_PCT",
    "MEDIAN_TARGET_PCT",
    "MEDIUM_COLLECTIVE_BYTES",
    "MOE_MEDIAN_LIMIT_PCT",
    "MOE_MEDIAN_TARGET_PCT",
    "WORST_LIMIT_PCT",
    "WORST_TARGET_PCT",
    "load_table",
    "source_family",
    "summary",
]


def load_table(name: str) -> dict[str, Any]:
    """A validation table embedded in the package (`training_runs` or `collectives`)."""
    path = f"validation/{name}.toml"
    return parse_builtin_toml(data_files()[path], f"data/{path}")


def source_family(row_id: str) -> str:
    """The publication family of a row id: the part before the first dash (megatron-sc21 and megatron-h100 are
    told apart by their second part)."""
    head, _, rest = row_id.partition("-")
    return f"{head}-{rest.split('-')[0]}" if head == "megatron" else head


def summary(errors: list[float]) -> dict[str, float]:
    """Median and worst absolute percentage error."""
    abs_pct = [abs(e) * 100.0 for e in errors]
    return {"rows": len(abs_pct), "median_ape_pct": statistics.median(abs_pct), "worst_ape_pct": max(abs_pct)}


#: Collective points judged: every size from 64 KiB (issue 11); smaller messages are shown, not judged. The
#: large-message regime (>= 1 GiB) and the >= 64 MiB regime (issue 10) are reported apart.
JUDGED_COLLECTIVE_BYTES = 2**16
LARGE_COLLECTIVE_BYTES = 2**30
MEDIUM_COLLECTIVE_BYTES = 2**26
#: The fidelity gates (issue 22, written down before the final measurement in docs/design/fidelity-v3.md Sec. 7):
#: median and worst absolute percentage error of the judged training rows, the median of the judged MoE rows, and
#: the range the held-out coverage of the 90% intervals must fall in.
MEDIAN_TARGET_PCT = 6.0
WORST_TARGET_PCT = 30.0
MOE_MEDIAN_TARGET_PCT = 12.0
COVERAGE_RANGE_PCT = (85.0, 95.0)
#: The test gate: the model may not fall behind what it reaches today (see docs/validation.md for the targets'
#: shortfall and why). The worst-row limit applies to the rows judged before issue 22's research
#: (tests/validation/test_fidelity.py names them); the research's rows are reported with their misses.
MEDIAN_LIMIT_PCT = 10.0
WORST_LIMIT_PCT = 50.0
MOE_MEDIAN_LIMIT_PCT = 22.0
#: The collectives' gates, at what the model reaches (docs/validation.md): median from 64 KiB (14.9% with NCCL's
#: protocols and tree pipeline fill, rust/core/src/network/nccl.rs; the issue's target of 10% is not reached);
#: median and worst from 1 GiB (medium sizes on multi-node trees are the known shortfall, see SHORTFALL).
COLLECTIVE_MEDIAN_LIMIT_PCT = 16.0
COLLECTIVE_LARGE_MEDIAN_LIMIT_PCT = 12.0
COLLECTIVE_LARGE_WORST_LIMIT_PCT = 50.0
#: Held-out coverage of the prediction intervals must be within this many points of the nominal level: 2.5 binomial
#: standard errors of a 90% coverage measured on ~100 rows (100 x sqrt(0.9 x 0.1 / 100) = 3.0 points), so a
#: miss beyond it is the intervals' fault, not the sample's.
COVERAGE_TOLERANCE_PCT = 7.5

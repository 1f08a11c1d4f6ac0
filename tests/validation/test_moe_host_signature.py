"""The analysis script behind fidelity-v3.md Sec. 14's host-bound signature (benchmarks/moe_host_signature.py): its
rank correlation on hand-worked cases, and its rows: every judged MoE row once, each with a positive GPU time per
layer and micro-batch, sorted by it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from scalefront.fidelity.validation.tables import load_table
from scalefront.fidelity.validation.training import training_checks
from scalefront.inputs.catalog.loader import builtin_catalog

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "moe_host_signature.py"


def load_script():
    spec = importlib.util.spec_from_file_location("moe_host_signature", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_spearman_on_hand_worked_cases():
    sig = load_script()
    # d = rank differences 0, 1, 1, 0: rho = 1 - 6 x 2 / (4 x 15) = 0.8.
    assert sig.spearman([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]) == pytest.approx(0.8)
    assert sig.spearman([1.0, 2.0, 3.0], [30.0, 20.0, 10.0]) == pytest.approx(-1.0)
    # Ties share their mean rank: 0, 1.5, 1.5, 3.
    assert sig.ranks([5.0, 7.0, 7.0, 9.0]) == [0.0, 1.5, 1.5, 3.0]


def test_every_judged_moe_row_once_sorted_by_its_layer_time():
    sig = load_script()
    catalog = builtin_catalog()
    rows = sig.layer_times(catalog)
    table = load_table("training_runs")["run"]
    judged_moe = {c.id for c in training_checks(catalog, table) if c.role == "validation" and c.moe}
    assert sorted(r[2] for r in rows) == sorted(judged_moe)
    times = [r[0] for r in rows]
    assert all(t > 0.0 for t in times)
    assert times == sorted(times)

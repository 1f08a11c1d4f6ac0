"""The model reproduces published training runs and collective benchmarks (issue 6's bar), the calibration is
reproducible from its rows, and the table itself is what it claims to be."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scalefront import validation
from scalefront.model import builtin_catalog

DATED = re.compile(r"(19|20)\d{2}(-\d{2})?")


@pytest.fixture(scope="module")
def training():
    return validation.training_checks()


@pytest.fixture(scope="module")
def collectives():
    return validation.collective_checks()


def test_held_out_training_runs_are_within_the_bar(training):
    judged = validation.judged_training(training)
    s = validation.summary([c.error for c in judged])
    worst = max(judged, key=lambda c: abs(c.error))
    assert s["median_ape_pct"] <= validation.MEDIAN_LIMIT_PCT, s
    assert s["worst_ape_pct"] <= validation.WORST_LIMIT_PCT, f"{worst.id}: {worst.error:+.1%}"


def test_all_reduce_bus_bandwidth_is_within_the_bar(collectives):
    judged = validation.judged_collectives(collectives)
    assert len(judged) >= 10
    s = validation.summary([c.error for c in judged])
    assert s["median_ape_pct"] <= validation.MEDIAN_LIMIT_PCT, s
    assert s["worst_ape_pct"] <= validation.WORST_LIMIT_PCT, s


def test_calibration_is_reproducible_from_its_rows():
    # Every calibrated sustained_efficiency in data/gpus.toml is what `scalefront validate --calibrate` fits.
    catalog = builtin_catalog()
    fitted = validation.calibrate()
    assert set(fitted) >= {"a100-80gb", "h100-sxm"}
    for gpu, (value, rows) in fitted.items():
        assert rows, gpu
        assert catalog.gpu(gpu).sustained_efficiency == pytest.approx(value, abs=0.005), gpu


def test_calibration_rows_are_few_and_the_rest_is_held_out(training):
    roles = [c.role for c in training]
    assert set(roles) <= {"validation", "calibration", "reference"}
    assert roles.count("calibration") <= 8
    assert roles.count("validation") >= 20
    for c in training:
        if c.role == "reference":
            assert len(c.excluded_because) > 20, c.id


def test_the_table_covers_what_it_must():
    runs = validation.load_table("training_runs")["run"]
    curves = validation.load_table("collectives")["curve"]
    assert len(runs) >= 20
    ids = [r["id"] for r in runs]
    assert len(set(ids)) == len(ids)
    for r in runs:
        assert DATED.search(r["source"]), r["id"]
        assert r["tp"] * r["pp"] * r["dp"] * r["cp"] == r["gpus"], r["id"]
        assert r["global_batch"] % (r["dp"] * r["micro_batch"]) == 0, r["id"]
    # At least 4 independent sources (by publication family).
    families = {r["id"].split("-")[0] for r in runs}
    assert len(families) >= 4, families
    gpus = {r["gpu"] for r in runs}
    assert {"a100-80gb", "h100-sxm"} <= gpus
    fabrics = {r["fabric"] for r in runs} | {c["fabric"] for c in curves}
    assert any(f.startswith("ib-") for f in fabrics) and any(f.startswith("roce-") for f in fabrics)
    assert any("deepseek" in str(r.get("model", "")) or "moe_experts" in r.get("model_dims", {}) for r in runs)
    sizes = [r["gpus"] for r in runs]
    assert min(sizes) <= 8 and max(sizes) >= 1000
    assert any(c["fabric"].startswith("roce-") for c in curves)
    assert any(c["fabric"].startswith("ib-") for c in curves)
    assert any(c["fabric"] == "none" for c in curves)


def test_docs_validation_md_is_current(training, collectives):
    docs = Path(__file__).resolve().parents[2] / "docs" / "validation.md"
    if not docs.exists():
        pytest.skip("docs/ is not part of this checkout")
    assert docs.read_text() == validation.render(training, collectives, markdown=True), (
        "docs/validation.md is stale: regenerate it with `scalefront validate --markdown > docs/validation.md`"
    )

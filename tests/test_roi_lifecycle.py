"""The cluster's life in the ROI (issue 23 item 3): `[lifecycle]` trains for its months, then serves `[serving]` at
an SLO for the rest. Worked by hand: a lifecycle that trains all its life is the training answer; serving the
whole life at the same tokens/s per GPU is worth nothing from speed; the serving months' value is A's extra
tokens/s per GPU over B's times B's levelised GPU-hour over the discounted serving months; the split adds up to
the NPV. Bad inputs are one line naming the file, the table and the key."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from helpers import assert_one_line_error, files_in, roi_problem, run, scenario_text
from scalefront.roi import RoiOptions, compare
from scalefront.roi.text import WIDTH, render, verdict

OPTIONS = RoiOptions(samples=200, seed=3)
#: A dense 70B model served inside one 8-GPU NVLink domain (tp 8, one stage): its decode never crosses the fabric.
IN_SERVER = {"model": "llama3-70b", "tp": 8, "pp": 1, "batch": [16, 64, 256]}


def with_life(life: dict[str, Any] | None, serving: dict[str, Any] | None = None, **changes: Any) -> tuple:
    raw, name = roi_problem(**changes)
    raw = copy.deepcopy(raw)
    if life is not None:
        raw["lifecycle"] = life
    if serving is not None:
        raw["serving"] = serving
    return raw, name


def annuity(months: float, rate: float) -> float:
    """a(m) = v (1 - v^m) / (1 - v), v = (1 + r)^(-1/12): the present value of 1 at the end of each month."""
    v = (1 + rate) ** (-1 / 12)
    return months if rate == 0 else v * (1 - v**months) / (1 - v)


@pytest.fixture(scope="module")
def training_only():
    return compare(with_life(None), options=OPTIONS)


def test_a_lifecycle_that_trains_all_its_life_is_the_training_answer(training_only):
    whole = compare(with_life({"training_months": 60}, IN_SERVER), options=OPTIONS)
    assert whole.table.equals(training_only.table)
    assert whole.tornado.equals(training_only.tornado)
    split = whole.lifecycle_split
    assert split["serving_months"].to_list() == [0.0, 0.0]
    assert split["speed_value_serving_usd"].to_list() == [0.0, 0.0]
    # Without [lifecycle] nothing of it shows: no sentence, no table, no JSON key.
    assert "Over its life" not in verdict(training_only) and "Lifecycle" not in render(training_only)
    assert training_only.lifecycle is None and training_only.lifecycle_split.is_empty()


def test_serving_the_whole_life_at_equal_speed_is_worth_nothing_from_speed():
    # No fabric incidents (they stall one fabric's busy time more than the other's): A and B then serve exactly
    # the same tokens/s per GPU (the decode stays inside a server), so A's life is no faster and its NPV is what
    # it costs more: -(extra capex) - PV(extra opex) + PV(extra resale).
    raw = with_life({"training_months": 0}, IN_SERVER)
    raw[0]["economics"]["prices"] = {"incidents_per_year": 0}
    r = compare(raw, options=OPTIONS)
    for row, s in zip(r.table.iter_rows(named=True), r.lifecycle_split.iter_rows(named=True), strict=True):
        assert s["serving_tokens_per_s_per_gpu_a"] == s["serving_tokens_per_s_per_gpu_b"] > 0
        assert (s["training_months"], s["serving_months"]) == (0.0, 60.0)
        assert s["serving_speed_ratio"] == 1.0 and row["speed_ratio"] == 1.0
        assert s["speed_value_training_usd"] == 0.0 and s["speed_value_serving_usd"] == 0.0
        assert row["speed_value_usd"] == 0.0 and row["npv_usd"] == pytest.approx(s["rest_usd"])
        assert row["npv_usd"] < 0  # InfiniBand costs more upfront and a year


def test_the_serving_months_value_a_s_extra_tokens_at_b_s_gpu_hour():
    # DeepSeek-V3 with expert parallelism over 16 GPUs: dispatch and combine cross the fabric every decode step.
    moe = {"model": "deepseek-v3", "tp": 1, "ep": 16, "dp_attention": 16, "batch": [256, 1024]}
    r = compare(with_life({"training_months": 12, "tpot_slo_s": 0.1}, moe), options=OPTIONS)
    econ = r.mix[0].scenario.space["economics"]
    rate, busy_hours = econ["discount_rate"], econ["utilisation"] * 8766 / 12
    for row, s in zip(r.table.iter_rows(named=True), r.lifecycle_split.iter_rows(named=True), strict=True):
        assert s["serving_tokens_per_s_per_gpu_a"] != s["serving_tokens_per_s_per_gpu_b"]
        a_t, a_s = annuity(12, rate), annuity(60, rate) - annuity(12, rate)
        value = row["value_usd_per_gpu_hour"] * row["gpus"] * busy_hours
        # Each phase: (its speed ratio - 1) x the cluster's busy GPU-hours a month at B's levelised rate x its
        # discounted months; the life's ratio weighs the two by them.
        assert s["speed_value_training_usd"] == pytest.approx((s["training_speed_ratio"] - 1) * value * a_t)
        assert s["speed_value_serving_usd"] == pytest.approx((s["serving_speed_ratio"] - 1) * value * a_s)
        life = (s["training_speed_ratio"] * a_t + s["serving_speed_ratio"] * a_s) / (a_t + a_s)
        assert row["speed_ratio"] == pytest.approx(life, rel=1e-12)
        parts = s["speed_value_training_usd"] + s["speed_value_serving_usd"] + s["rest_usd"]
        assert parts == pytest.approx(row["npv_usd"]) and row["speed_value_usd"] == pytest.approx(
            s["speed_value_training_usd"] + s["speed_value_serving_usd"]
        )
    # The serving model's error is an input of the Monte Carlo (one draw for every design).
    assert any(i.field == "serving" and i.empirical for i in r.inputs)
    assert "serving validation residuals" in r.model_error
    # Words: the verdict's sentence, the report's table within the terminal's width.
    assert "then serves deepseek-v3 for 48 (TPOT <= 100 ms" in verdict(r)
    assert "Lifecycle, at typical values" in render(r)
    assert all(len(line) <= WIDTH for line in render(r).splitlines())


def test_roi_json_and_report_carry_the_split(tmp_path, capsys):
    path = tmp_path / "life.toml"
    raw, _ = with_life({"training_months": 24}, IN_SERVER)
    path.write_text(scenario_text(raw), encoding="utf-8")
    code, out, err = run(["roi", str(path), "--samples", "50", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    life = doc["lifecycle"]
    assert (life["training_months"], life["serving_months"], life["slo"]) == (24, 36.0, ["tpot_s<=0.05"])
    assert [(s["gpus"], s["fabric_b"]) for s in life["split"]] == [
        (n, b) for n in (4096, 16384) for b in ("roce-400g@untuned", "roce-400g@tuned")
    ]
    assert "trains for 24 months, then serves llama3-70b for 36" in doc["verdict"]
    code, _, err = run(["roi", str(path), "--samples", "50", "--report", str(tmp_path / "memo")], capsys)
    assert code == 0, err
    memo = (tmp_path / "memo" / "report.md").read_text(encoding="utf-8")
    assert "## The cluster's life: training, then serving" in memo and "speed while serving" in memo


BAD = [
    ({"training_months": -1}, IN_SERVER, ["[lifecycle] training_months"]),
    ({"training_months": 61}, IN_SERVER, ["[lifecycle] training_months", "beyond the cluster's 60-month life"]),
    ({"tpot_slo_s": 1e-6}, IN_SERVER, ["[lifecycle] tpot_slo_s", "no serving layout of llama3-70b meets"]),
    ({}, {**IN_SERVER, "model": "llama3-7b0"}, ["[serving] model"]),
    ({}, {**IN_SERVER, "tpot": 1}, ["[serving] tpot", "not a serving input"]),
    ({"months": 3}, IN_SERVER, ["[lifecycle] months"]),
]


@pytest.mark.parametrize(("life", "serving", "mentions"), BAD)
def test_bad_lifecycle_inputs_are_one_line_naming_file_table_and_key(tmp_path, capsys, life, serving, mentions):
    path = tmp_path / "life.toml"
    raw, _ = with_life(life, serving, **{"cluster.gpus": [512]})
    path.write_text(scenario_text(raw), encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = run(["roi", str(path), "--samples", "20", "--out", str(out_dir / "roi.csv")], capsys)
    assert_one_line_error(code, out, err, str(path), *mentions)
    assert files_in(out_dir) == []


def test_the_layout_the_monte_carlo_evaluates_again_is_the_one_the_sweep_chose():
    # Each design carries its best layout's configuration; the core evaluating it at the catalog's figures gives
    # the sweep's own tokens/s per GPU (the Monte Carlo evaluates it again on each sample's fabric figures).
    from scalefront import _core
    from scalefront.inputs.catalog import builtin_catalog
    from scalefront.roi.compare import prepare

    moe = {"model": "deepseek-v3", "tp": 1, "ep": 16, "dp_attention": 16, "batch": [256, 1024]}
    raw = with_life({"training_months": 12, "tpot_slo_s": 0.1}, moe, **{"cluster.gpus": [4096]})
    p = prepare(raw, "ib-ndr", ["roce-400g"], builtin_catalog(), OPTIONS)
    served = [d["serving"] for d in p.problem["designs"]]
    assert served and p.problem["options"]["training_months"] == 12.0
    for s in served:
        again = _core.serve(s["config"])
        assert again["output_tokens_per_s_per_gpu"] == s["tokens_per_s_per_gpu"]
        assert again["tpot_s"] <= 0.1

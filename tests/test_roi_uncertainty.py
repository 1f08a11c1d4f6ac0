"""What the comparison's probability is made of (issue 20, item 1) and the premium's cash flows (item 2): the
collective model's error split into a term every fabric shares and a term per fabric, EFA kept apart; the price
book's correlated groups with their stated loadings; whole-number inputs; one shared draw for the modes of one
fabric; the yearly cash flows adding up to the NPV, and no IRR when the flows never change sign."""

from __future__ import annotations

import math
import tomllib

import polars as pl
import pytest

from helpers import DATA, roi_problem
from scalefront.fidelity.validation.calibration import INTERFERENCE_RANGE
from scalefront.inputs.catalog import builtin_catalog
from scalefront.roi import RoiOptions, compare
from scalefront.roi.model_error import collective_error_terms
from scalefront.roi.uncertain import MAX_LOADING, grouped, price_inputs

CAT = builtin_catalog()


@pytest.fixture(scope="module")
def result():
    return compare(roi_problem(), "ib-ndr", ["roce-400g", "roce-400g@branded"], options=RoiOptions(samples=200))


def test_the_collective_error_is_a_common_term_and_one_term_per_fabric(result):
    by_name = {i.name: i for i in result.inputs}
    common = by_name["model error, communication (all fabrics)"]
    assert common.targets == [{"section": "model_error", "side": None, "field": "collective"}]
    ib = by_name["model error, ib-ndr communication only"]
    assert ib.targets == [{"section": "model_error", "side": 0, "field": "collective"}]
    # The two modes of roce-400g (white box, branded) are one fabric: one draw of its specific term for both.
    roce = by_name["model error, roce-400g communication only"]
    assert [t["side"] for t in roce.targets] == [1, 2]


def test_efa_is_kept_apart_from_the_rdma_fabrics():
    # The fallback (pooled validation residuals): EFA's curves never enter the RDMA fabrics' common term.
    rdma = collective_error_terms(CAT, ["ib-ndr", "roce-400g"], "validation")
    efa = collective_error_terms(CAT, ["efa"], "validation")
    assert rdma.common and efa.common and not set(efa.common) & set(rdma.common) - {0.0}
    # The specific term is the offset of the fabric's own curves: a spread around its bias, not the pooled spread.
    for values in rdma.specific.values():
        assert len(values) == 400 and values == sorted(values)
        width = values[360] - values[40]
        assert width < rdma.common[int(0.9 * len(rdma.common))] - rdma.common[int(0.1 * len(rdma.common))]
    assert collective_error_terms(CAT, ["ib-ndr", "roce-400g"], "validation") == rdma, "the same catalog, the same"


def test_the_decomposition_draws_one_common_term_per_transport_family():
    # data/model_error.toml's per-fabric decomposition (issue 19), drawn as zero-mean normals of its RMS: one common
    # term for InfiniBand and RoCE (one NCCL transport), one per family when EFA is compared with InfiniBand.
    same = collective_error_terms(CAT, ["ib-ndr@default", "roce-400g@tuned"])
    assert same.common and not same.common_by_family and set(same.specific) == {"ib-ndr", "roce-400g"}
    net_ib = next(f for f in CAT.errors.collective_family if f.family == "net_ib")
    # The 400 points' standard deviation is the family's RMS (within the quantile grid's discretisation).
    sd = (sum(v * v for v in same.common) / len(same.common)) ** 0.5
    assert sd == pytest.approx(net_ib.log_rms, rel=0.02) and sum(same.common) == pytest.approx(0.0, abs=1e-9)
    apart = collective_error_terms(CAT, ["ib-ndr", "efa"])
    assert set(apart.common_by_family) == {"net_ib", "efa"} and apart.family_of == {"ib-ndr": "net_ib", "efa": "efa"}


def test_prices_load_on_their_groups_as_stated():
    sides = [("ib-ndr", 0), ("roce-400g", 1)]
    inputs, groups = grouped(price_inputs(CAT, sides, "h100-sxm", "nvlink4-8", {}), CAT)
    loads = {i.name: {groups[g]: v for g, v in i.loadings} for i in inputs}
    assert groups == list(CAT.correlations)
    assert loads["ib-ndr switch price"] == {"nvidia-deal": 0.6}
    assert loads["roce-400g switch price"] == {"merchant-switch": 0.7}
    assert loads["power price"] == {"power-facility": 0.5}
    # NVIDIA LinkX optics: one vendor's deal and one optics market, scaled so that sqrt(a^2 + b^2) = 0.9.
    linkx = loads["ib-ndr switch optics price"]
    assert set(linkx) == {"nvidia-deal", "optics-market"}
    assert math.hypot(*linkx.values()) == pytest.approx(MAX_LOADING)
    assert linkx["optics-market"] / linkx["nvidia-deal"] == pytest.approx(0.7 / 0.6)
    assert loads["support per year (ib-ndr, roce-400g)"] == {}


def test_whole_numbers_are_sampled_as_whole_numbers(result):
    # Operations staff (whole engineers; queue pairs are now a mode's setting, not a range).
    staff = next(i for i in result.inputs if i.name.endswith("operations staff") and "roce-400g" in i.name)
    assert staff.integer and (staff.low, staff.typical, staff.high) == (4.0, 6.0, 10.0)
    assert not next(i for i in result.inputs if i.name == "power price").integer


def test_the_cash_flows_add_up_to_the_npv(result):
    for row in result.table.iter_rows(named=True):
        flows = result.cash_flows.filter((pl.col("gpus") == row["gpus"]) & (pl.col("fabric_b") == row["fabric_b"]))
        years = flows.sort("year")
        assert years["year"].to_list() == list(range(6))
        assert years["net_usd"][0] == pytest.approx(-(row["extra_capex_usd"] + row["delay_usd"]))
        assert years["cumulative_discounted_usd"][-1] == pytest.approx(row["npv_usd"], rel=1e-9, abs=1.0)
        assert years["residual_usd"][-1] == pytest.approx(row["extra_residual_usd"])
        # The IRR is a rate at which the flows' NPV is zero, or none.
        if row["irr"] is not None and math.isfinite(row["irr"]):
            v = (1 + row["irr"]) ** (-1 / 12)
            monthly = (row["extra_capacity_usd_per_year"] - row["extra_opex_usd_per_year"]) / 12
            npv = years["net_usd"][0] + sum(monthly * v**m for m in range(1, 61)) + row["extra_residual_usd"] * v**60
            assert npv == pytest.approx(0.0, abs=1e-6 * abs(years["net_usd"][0]))


#: The lowest discount rate a sample draws (data/prices.toml's range).
RATE = tomllib.loads((DATA / "prices.toml").read_text())["economics"]["discount_rate"]["low"]


def test_the_table_irr_is_the_p50_of_the_samples_beside_their_p50_payback(result):
    # The IRR column is the samples' (issue 20: a row read payback 12 months next to a typical-value IRR of -3%):
    # its P50 is the nearest-rank median of every sample's IRR, those that are not an investment left out.
    for row in result.table.iter_rows(named=True):
        mine = result.samples.filter((pl.col("gpus") == row["gpus"]) & (pl.col("fabric_b") == row["fabric_b"]))
        irr = sorted(x for x in mine["irr"].to_list() if not math.isnan(x))
        assert row["irr_p50"] == irr[math.ceil(0.5 * len(irr)) - 1]
        # A sample whose discounted payback falls within the life recovers its outlay at the discount rate, so its
        # IRR is at least that rate: where the P50 payback is within the life, so is the P50 IRR above it.
        paid = mine.filter(pl.col("payback") == "months")
        assert all(x >= RATE - 1e-9 for x in paid["irr"].to_list())
        if row["payback_months_p50"] <= row["life_months"]:
            assert row["irr_p50"] >= RATE - 1e-9


def test_no_irr_when_the_flows_never_change_sign():
    # A dearer InfiniBand (--premium 3) whose capacity is worth nothing and that resells for nothing: an outlay
    # followed by extra running costs, never recovered: IRR none (null in --json), payback never.
    raw, name = roi_problem()
    raw["economics"]["prices"] = {"residual_fraction": 0.0}
    r = compare((raw, name), options=RoiOptions(samples=1, premium=3.0, value_usd_per_gpu_hour=0.0))
    assert r.table.height == 2
    for row in r.table.iter_rows(named=True):
        assert row["extra_capex_usd"] > 0 and row["extra_residual_usd"] == 0 and row["payback"] == "never"
        assert math.isnan(row["irr"])


def test_a_price_the_scenario_sets_is_not_drawn_for_the_designs_its_table_prices():
    # `[economics.prices."roce-400g@branded"]` prices the branded boxes in every mode, not the white boxes; a
    # design's own table (`roce-400g@tuned`) prices that design only.
    sides = [("roce-400g@tuned", 0), ("roce-400g@tuned@branded", 1)]

    def drawn(fixed: dict[str, set[str]]) -> set[str]:
        return {i.name for i in price_inputs(CAT, sides, "h100-sxm", "nvlink4-8", fixed) if "switch price" in i.name}

    both = drawn({})
    assert both == {"roce-400g@tuned switch price", "roce-400g@tuned@branded switch price"}
    assert drawn({"roce-400g@branded": {"switch_usd"}}) == {"roce-400g@tuned switch price"}
    assert drawn({"roce-400g@untuned@branded": {"switch_usd"}}) == {"roce-400g@tuned switch price"}
    assert drawn({"roce-400g": {"switch_usd"}}) == {"roce-400g@tuned@branded switch price"}
    assert drawn({"roce-400g@tuned": {"switch_usd"}}) == {"roce-400g@tuned@branded switch price"}


def test_the_interference_the_calibration_leaves_open_is_drawn_once_for_both_fabrics(result):
    # Megatron-Core's overlap interference fits along a nearly flat objective (design note Sec. 29): the comparison
    # draws it from 0 to 0.6 around the fit, one draw that every design takes (the software, not the fabric).
    fitted = CAT.framework("megatron-core").overlap_interference
    low, high = INTERFERENCE_RANGE
    drawn = {i.name: i for i in result.inputs}["megatron-core overlap interference"]
    assert (drawn.low, drawn.typical, drawn.high) == (low, fitted, max(high, fitted))
    assert drawn.targets == [{"section": "framework", "side": None, "field": "overlap_interference"}]


def test_a_framework_term_the_core_does_not_sample_stays_at_its_typical_value():
    # A user catalog may give the layer overhead a range too; the Monte Carlo samples the interference only.
    from dataclasses import replace as dc_replace

    from scalefront.inputs.catalog.entries import Range
    from scalefront.inputs.scenario.build import load_mix
    from scalefront.roi.uncertain import framework_inputs

    entry = CAT.framework("megatron-core")
    ranged = entry.model_copy(update={"ranges": {**entry.ranges, "layer_overhead": Range(0.0, 0.02, 0.2)}})
    catalog = dc_replace(CAT, frameworks={**CAT.frameworks, "megatron-core": ranged})
    mix = load_mix(roi_problem(), catalog)
    names = [i.name for i in framework_inputs(catalog, mix)]
    assert names == ["megatron-core overlap interference"]

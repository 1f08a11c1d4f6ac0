"""`scalefront roi`: the fabric comparison a buyer reads (issue 12). Values are worked by hand where the formula is
simple; the core's own tests (rust/core/src/decision/roi/, cost/economics.rs, rust/core/tests/roi.rs) work the TCO,
payback and Monte Carlo arithmetic through in full."""

from __future__ import annotations

import copy
import json
import math

import polars as pl
import pytest

from helpers import assert_one_line_error, files_in, roi_problem, run, scenario_text, toml_table
from scalefront import _core, evaluate
from scalefront.errors import UsageError
from scalefront.inputs.catalog import builtin_catalog
from scalefront.roi import RoiOptions, compare, model_error_residuals
from scalefront.roi.model_error import collective_error_terms
from scalefront.roi.text import WIDTH, modes_text, render, verdict

CAT = builtin_catalog()


@pytest.fixture(scope="module")
def result():
    return compare(roi_problem(), options=RoiOptions(samples=400, seed=3))


def test_one_row_per_gpu_count_owned_and_like_for_like(result):
    t = result.table
    assert t["gpus"].to_list() == [4096, 16384]
    assert (t["topology_a"] == t["topology_b"]).all() and t["topology_a"][0] == "rail-fat-tree 1:1"
    for col in (
        "tco_a_usd",
        "tco_b_usd",
        "capex_a_usd",
        "opex_a_usd_per_year",
        "premium",
        "break_even_premium",
        "savings_usd",
        "npv_usd",
        "payback",
        "payback_months",
        "usd_per_mtoken_a",
        "usd_per_useful_gpu_hour_a",
        "p_a_cheaper",
        "break_even_premium_p10",
        "break_even_premium_p90",
        "savings_usd_p50",
        "payback_months_p50",
    ):
        assert col in t.columns, col
    # No duplicate of the break-even (the old "life" column) and no rent-mode cost in the ROI table.
    assert not [c for c in t.columns if c.startswith("break_even_premium_life") or "rent" in c]
    # Cost-avoidance valuation: NPV = savings = rho TCO_B - TCO_A - the capacity A's later delivery loses.
    for r in t.iter_rows(named=True):
        assert r["npv_usd"] == pytest.approx(r["savings_usd"], rel=1e-9, abs=1e-3)
        expected = r["speed_ratio"] * r["tco_b_usd"] - r["tco_a_usd"] - r["delay_usd"]
        assert r["savings_usd"] == pytest.approx(expected, rel=1e-9)
        assert r["break_even_premium_p10"] <= r["break_even_premium_p50"] <= r["break_even_premium_p90"]


def test_at_the_break_even_premium_both_cost_the_same_per_delivered_token(result):
    # --premium set to the break-even premium: savings (rho TCO_B - TCO_A) = 0; a little above, A loses.
    for row in result.table.iter_rows(named=True):
        p = row["break_even_premium"]
        at = compare(roi_problem(**{"cluster.gpus": [row["gpus"]]}), options=RoiOptions(premium=p, samples=1))
        assert at.table["savings_usd"][0] == pytest.approx(0.0, abs=1e-6 * row["tco_b_usd"])
        above = compare(roi_problem(**{"cluster.gpus": [row["gpus"]]}), options=RoiOptions(premium=p * 1.01, samples=1))
        assert above.table["savings_usd"][0] < 0


def test_a_dearer_a_wins_less_often():
    # Raising A's switch price (a catalog file with a dearer range) never raises P(A cheaper) and lowers savings.
    entry = {**CAT.fabric_price("ib-ndr").model_dump(), "sources": dict(CAT.fabric_price("ib-ndr").sources)}
    base = compare(roi_problem(), options=RoiOptions(samples=300))
    for k in ("switch_usd",):
        entry[k] = {"low": 64000.0, "typical": 72000.0, "high": 100000.0}
    cat = copy.deepcopy(CAT)
    from scalefront.inputs.catalog import FabricPrice

    cat.fabric_prices["ib-ndr"] = FabricPrice.model_validate(entry)
    dear = compare(roi_problem(), catalog=cat, options=RoiOptions(samples=300))
    for b, d in zip(base.table.iter_rows(named=True), dear.table.iter_rows(named=True), strict=True):
        assert d["p_a_cheaper"] <= b["p_a_cheaper"]
        assert d["savings_usd"] < b["savings_usd"] and d["premium"] > b["premium"]


def test_same_seed_same_bytes_and_another_seed_differs(capsys, tmp_path):
    argv = ["roi", "--samples", "200", "--seed", "9", "--json"]
    code, out1, _ = run(argv, capsys)
    code2, out2, _ = run(argv, capsys)
    assert code == code2 == 0 and out1 == out2
    _, out3, _ = run(["roi", "--samples", "200", "--seed", "10", "--json"], capsys)
    assert json.loads(out3)["rows"] != json.loads(out1)["rows"]


def wide_switch_prices():
    """The catalog with switch price ranges wide enough that each flips the verdict somewhere in its range."""
    cat = copy.deepcopy(CAT)
    for fabric, (lo, hi) in {"ib-ndr": (5e3, 400e3), "roce-400g": (1e3, 400e3)}.items():
        price = cat.fabric_prices[fabric]
        r = price.range_of("switch_usd")
        ranges = {**price.ranges, "switch_usd": type(r)(lo, r.typical, hi)}
        cat.fabric_prices[fabric] = price.model_copy(update={"ranges": ranges})
    return cat


def test_tornado_flip_values_flip_the_verdict_when_fed_back():
    # Feed each switch price's flip value back through a catalog with that price (a plain number): the sign of
    # the savings changes; just short of it (towards the typical price) it does not.
    cat = wide_switch_prices()
    flips = compare(roi_problem(), catalog=cat, options=RoiOptions(samples=1))
    checked = 0
    for row in flips.table.iter_rows(named=True):
        base_positive = row["savings_usd"] > 0
        bars = flips.tornado.filter((pl.col("gpus") == row["gpus"]) & pl.col("input").str.ends_with("switch price"))
        for bar in bars.iter_rows(named=True):
            if bar["flip"] is None:
                continue
            fabric = bar["input"].split()[0].partition("@")[0]  # the fabric's price entry, in any mode
            near = bar["typical"] + 0.999 * (bar["flip"] - bar["typical"])
            for value, flipped in ((bar["flip"], True), (near, False)):
                fed = copy.deepcopy(cat)
                fed.fabric_prices[fabric] = fed.fabric_prices[fabric].model_copy(
                    update={"switch_usd": value, "ranges": {}}
                )
                r = compare(roi_problem(**{"cluster.gpus": [row["gpus"]]}), catalog=fed, options=RoiOptions(samples=1))
                assert (r.table["savings_usd"][0] > 0) == (base_positive != flipped), (bar, value)
            checked += 1
    assert checked >= 2


def test_the_verdict_states_the_winner_its_cost_its_speed_and_how_often_it_pays(result):
    v = verdict(result)
    # The report states the operating modes compared (issue 19): the bare ids are their default modes.
    modes = modes_text(result)
    assert modes.startswith("Compared: InfiniBand (ib-ndr@default), NCCL defaults on InfiniBand")
    assert "Ethernet (roce-400g@untuned), NCCL defaults: 1 queue pair" in modes
    row = result.table.filter(pl.col("gpus") == 16384).row(0, named=True)
    assert v.startswith("At 16,384 GPUs (llama3-70b, 2T tokens), against Ethernet (roce-400g@untuned): ")
    assert "of the scenarios" in v and "without the model's own error" in v
    # The central figure is the Monte Carlo's median, not the typical-value estimate.
    from scalefront.roi.words import money

    assert money(abs(row["extra_tco_usd_p50"])) in v


def test_terminal_output_fits_100_columns(result):
    text = render(result)
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    assert text.splitlines()[0].startswith("At 16,384 GPUs")
    assert any(line.startswith("Compared: InfiniBand (ib-ndr@default)") for line in text.splitlines())


def test_roi_help_is_readable(capsys):
    code, out, _ = run(["roi", "--help"], capsys)
    assert code == 0
    assert "'dest':" not in out and "'option_strings'" not in out  # not a dump of argparse's dict
    assert "30%" in out and "%%" not in out


def test_out_and_report_are_atomic_and_refuse_to_overwrite(capsys, tmp_path):
    out = tmp_path / "roi.csv"
    rep = tmp_path / "rep"
    argv = ["roi", "--samples", "50", "--out", str(out), "--report", str(rep)]
    code, stdout, _ = run(argv, capsys)
    assert code == 0 and out.exists()
    # One row per (GPU count, design B): the scenario compares with RoCE untuned and tuned.
    table = pl.read_csv(out)
    assert table["gpus"].to_list() == [n for n in (512, 1024, 2048, 4096, 8192, 16384) for _ in range(2)]
    assert table["fabric_b"].to_list()[:2] == ["roce-400g@untuned", "roce-400g@tuned"]
    html_text = (rep / "report.html").read_text()
    assert html_text.count("<svg") == 5 and "<script" not in html_text and "src=" not in html_text
    md = (rep / "report.md").read_text()
    assert "![" in md and "npv.svg" in md and (rep / "tornado.svg").exists()
    before = files_in(tmp_path)
    code, stdout, err = run(argv, capsys)
    assert_one_line_error(code, stdout, err, "--force")
    assert files_in(tmp_path) == before
    assert run([*argv, "--force"], capsys)[0] == 0


def test_a_cancelled_monte_carlo_stops_and_says_so():
    handle = _core.RoiHandle()
    handle.cancel()  # before it starts: deterministic, no timing
    r = compare(roi_problem(), options=RoiOptions(samples=5000), handle=handle)
    assert r.mc_cancelled and r.table["samples"][0] < 5000


def test_progress_reports_samples():
    seen = []
    compare(roi_problem(), options=RoiOptions(samples=300), on_progress=seen.append)
    assert seen and seen[-1].done == seen[-1].total == 300 and seen[-1].rate > 0


def test_model_error_sources():
    common, label = model_error_residuals("validation", CAT)
    assert len(common) >= 20 and "validation" in label
    assert common == sorted(common) and -1.0 < common[0] < 0 < common[-1] < 1.0
    collective = collective_error_terms(CAT, ["ib-ndr", "roce-400g"], "validation")
    assert len(collective.common) >= 10 and set(collective.specific) == {"ib-ndr", "roce-400g"}
    assert model_error_residuals("none", CAT)[0] == [] and collective_error_terms(CAT, ["ib-ndr"], "none").common == []
    none = compare(roi_problem(), options=RoiOptions(samples=50, model_error="none"))
    assert not [i for i in none.inputs if "model error" in i.name]
    with pytest.raises(UsageError, match="--model-error"):
        model_error_residuals("/nonexistent.toml", CAT)


def test_model_error_from_a_file(write):
    path = write("err.toml", "common_log_residuals = [-0.1, 0.0, 0.1]\ncollective_log_residuals = [0.05]\n")
    common, label = model_error_residuals(str(path), CAT)
    assert (common, label) == ([-0.1, 0.0, 0.1], str(path))
    assert collective_error_terms(CAT, ["ib-ndr"], str(path)).common == [0.05]


def test_a_workload_mix_weighs_its_workloads():
    raw, name = roi_problem()
    wl = raw.pop("workload")
    long = {**wl, "name": "long-context", "seq_len": 16384, "global_batch": 512, "share": 0.3}
    raw["workloads"] = [{**wl, "name": "pretraining", "share": 0.7}, long]
    r = compare((raw, name), options=RoiOptions(samples=50))
    w = r.workloads
    assert sorted(set(w["workload"])) == ["long-context", "pretraining"]
    assert w.filter(pl.col("workload") == "pretraining")["share"][0] == 0.7
    assert verdict(r).startswith("At 16,384 GPUs (the mix pretraining 70%, long-context 30%)")
    # Each workload's own speed ratio bounds the mix's, both times the busy time each fabric's incidents leave
    # (Side::work: the work index is sum_w share_w tau_w / ref_w times 1 - stall fraction): that factor is what a
    # run of one workload alone adds to its tokens-per-second ratio.
    raw_one = {**{k: v for k, v in raw.items() if k != "workloads"}, "workload": wl}
    one = compare((raw_one, name), options=RoiOptions(samples=50))
    for row in r.table.iter_rows(named=True):
        per = w.filter(pl.col("gpus") == row["gpus"])
        ratios = (per["tokens_per_s_a"] / per["tokens_per_s_b"]).to_list()
        alone = one.workloads.filter(pl.col("gpus") == row["gpus"])
        busy = one.table.filter(pl.col("gpus") == row["gpus"])["speed_ratio"][0] / (
            alone["tokens_per_s_a"][0] / alone["tokens_per_s_b"][0]
        )
        assert min(ratios) * busy - 1e-12 <= row["speed_ratio"] <= max(ratios) * busy + 1e-12


def test_mix_shares_must_add_up(capsys, write):
    raw, _ = roi_problem()
    wl = raw.pop("workload")
    raw["workloads"] = [{**wl, "share": 0.5}]
    text = scenario_text({k: v for k, v in raw.items() if k != "workloads"})
    text += "[[workloads]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in raw["workloads"][0].items())
    path = write("mix.toml", text)
    code, out, err = run(["roi", str(path)], capsys)
    assert_one_line_error(code, out, err, "the shares add up to 0.5")


def test_a_scenario_price_override_is_certain(write):
    raw, name = roi_problem()
    raw["economics"]["prices"] = {"usd_per_kwh": 0.1}
    r = compare((raw, name), options=RoiOptions(samples=20))
    assert "power price" not in [i.name for i in r.inputs]
    assert "power price" in [i.name for i in compare(roi_problem(), options=RoiOptions(samples=20)).inputs]


def test_idle_gpus_seed_arithmetic():
    # "1% of 16,384 GPUs idle at $3/GPU-h is $47K a day": 163.84 GPUs x 24 h x $3 = $11,796 a day.
    r = evaluate("llama3-70b", "h100-sxm", 16384, tp=8, pp=8, global_batch=2048, prices={"rent_usd_per_gpu_hour": 3.0})
    assert 0.01 * r.cost_rent_usd / (r.time_to_train_s / 86400) == pytest.approx(11796.48, rel=1e-9)


def test_rented_and_unpriced_fabrics_are_refused(capsys, write):
    with pytest.raises(UsageError, match="instance rent"):
        compare(roi_problem(), "ib-ndr", "efa")
    fab = toml_table("fabrics.my-net", {**CAT.fabric("roce-400g").model_dump(), "sources": {}})
    assert "my-net" not in CAT.fabric_prices and fab  # a fabric without prices is a clear catalog error
    with pytest.raises(Exception, match="no price for fabric"):
        CAT.fabric_price("my-net")


def test_own_cost_of_a_run_is_its_busy_time_at_the_levelised_tco():
    # cost_own_usd = run seconds x PV(TCO) / PV(busy seconds); with no discounting, no residual, always busy, no
    # facility, no opex but energy, and no spares: straight-line capex / life x time + energy x time.
    plain = {
        "discount_rate": 0.0,
        "residual_fraction": 0.0,
        "utilisation": 1.0,
        "colocation_usd_per_kw_month": 0.0,
        "server_spares_fraction": 0.0,
        "network_spares_fraction": 0.0,
        "installation_fraction": 0.0,
        "oob_usd_per_rack": 0.0,
        "support_fraction_per_year": 0.0,
        "nos_usd_per_switch_year": 0.0,
        "fabric_manager_usd_per_endpoint_year": 0.0,
        "usd_per_fte_year": 0.0,
        "optic_replacement_fraction_per_year": 0.0,
        "switch_replacement_fraction_per_year": 0.0,
        "nic_replacement_fraction_per_year": 0.0,
    }
    r = evaluate(prices=plain)
    econ = CAT.economics_or_error()
    life = econ.amortization_years * 365.25 * 86400
    energy = r.it_power_w * econ.pue * r.time_to_train_s / 3.6e6 * econ.usd_per_kwh
    assert r.cost_own_usd == pytest.approx(r.capex_usd * r.time_to_train_s / life + energy, rel=1e-9)
    assert math.isfinite(r.cost_own_usd)


@pytest.mark.parametrize("value", ["local", "tcp://127.0.0.1:8786"])
def test_cluster_without_the_extra_is_refused_before_any_work(value, capsys, monkeypatch, tmp_path):
    # Without Dask installed (the `cluster` extra), --cluster names the install line; nothing is written. (With
    # the extra, tests/test_cluster.py runs the Monte Carlo on a local cluster.)
    from scalefront.engine import cluster

    monkeypatch.setattr(cluster, "available", lambda: False)
    out = tmp_path / "t.csv"
    code, stdout, err = run(["roi", "--cluster", value, "--samples", "10", "--out", str(out)], capsys)
    assert_one_line_error(code, stdout, err, f"--cluster {value} needs the cluster extra: pip install")
    assert files_in(tmp_path) == []


def test_a_cluster_that_is_no_address_is_refused(capsys):
    code, out, err = run(["roi", "--cluster", "my-laptop", "--samples", "10"], capsys)
    assert_one_line_error(code, out, err, "expected auto, local or a Dask scheduler address")


def test_the_cheapest_design_rule_says_which_design_each_fabric_has():
    two_topologies = {"cluster.topology": ["rail-fat-tree", {"name": "fat-tree", "oversubscription": 2.0}]}
    r = compare(roi_problem(**two_topologies), options=RoiOptions(samples=20, design="cheapest"))
    same = compare(roi_problem(**two_topologies), options=RoiOptions(samples=20))
    assert (same.table["topology_a"] == same.table["topology_b"]).all()
    # Each fabric on its own cheapest design costs no more per delivered token than on the shared topology.
    for c, s in zip(r.table.iter_rows(named=True), same.table.iter_rows(named=True), strict=True):
        assert c["usd_per_mtoken_a"] <= s["usd_per_mtoken_a"] * (1 + 1e-12)
        assert c["usd_per_mtoken_b"] <= s["usd_per_mtoken_b"] * (1 + 1e-12)
    assert "each fabric on its cheapest design" in render(r) and "same topology for both" in render(same)


def test_ctrl_c_during_the_monte_carlo_stops_it_and_writes_nothing(capsys, tmp_path, monkeypatch):
    # A KeyboardInterrupt from the progress callback (where Ctrl-C lands in the waiting thread) cancels the run
    # and is re-raised; the command exits 130 and writes no --out file.
    def interrupt(_progress):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        compare(roi_problem(), options=RoiOptions(samples=100_000), on_progress=interrupt)
    import scalefront.roi as roi_module

    real = roi_module.compare

    def interrupted(*args, **kwargs):
        return real(*args, **{**kwargs, "on_progress": interrupt})

    monkeypatch.setattr(roi_module, "compare", interrupted)
    out = tmp_path / "roi.csv"
    code, _, err = run(["roi", "--samples", "100000", "--out", str(out)], capsys)
    assert code == 130 and "interrupted" in err and not out.exists() and files_in(tmp_path) == []

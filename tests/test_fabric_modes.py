"""Fabric operating modes (issue 19): `FABRIC@MODE` wherever a fabric id goes, resolved by the catalog to a fabric
in that mode (figures and prices), outputs that name the mode, and one-line errors for bad modes and designs the
topology cannot carry."""

from __future__ import annotations

import json

import pytest

from helpers import assert_one_line_error, run, small_scenario, toml_table
from scalefront import evaluate
from scalefront.errors import CatalogError
from scalefront.inputs.catalog import builtin_catalog
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.network import bom

CAT = builtin_catalog()


def test_a_bare_id_is_its_default_mode_and_outputs_name_it():
    # NCCL's defaults (1 QP per connection, env.rst; the plugin's 2-QP default lived 2023-12-13..2024-01-22 only)
    # are what a bare roce-400g means; InfiniBand's default runs CollNet off (NCCL_COLLNET_ENABLE = 0).
    assert CAT.fabric_id("roce-400g") == "roce-400g@untuned" and CAT.fabric("roce-400g").qps_per_connection == 1
    assert CAT.fabric_id("ib-ndr") == "ib-ndr@default"
    assert CAT.fabric("ib-ndr").in_network_reduction_efficiency == 0.0
    assert CAT.fabric_id("spectrum-x") == "spectrum-x"  # no modes: the id alone
    assert evaluate(gpus=64, tp=8, fabric="roce-400g").fabric == "roce-400g@untuned"


def test_each_mode_sets_its_figures_with_their_sources():
    tuned, hyper, dlb = (CAT.fabric(f"roce-400g@{m}") for m in ("tuned", "hyperscale", "dlb"))
    # OCI's quick starts run 4 QPs; Meta 16 with E-ECMP; MegaScale's uplinks at twice the NIC rate.
    assert (tuned.qps_per_connection, hyper.qps_per_connection, hyper.uplink_speedup) == (4.0, 16.0, 2.0)
    assert "OCI" in tuned.sources["qps_per_connection"] and "MegaScale" in hyper.sources["uplink_speedup"]
    assert dlb.load_balancing == "dlb" and dlb.range_of("load_balance_efficiency").low == 0.5
    # What a mode does not set is the fabric's own, source included.
    assert (
        tuned.switch_radix == 128 and tuned.sources["switch_radix"] == CAT.fabric("roce-400g").sources["switch_radix"]
    )
    sharp = CAT.fabric("ib-ndr@sharp")
    assert sharp.in_network_reduction_efficiency == 1.0 and sharp.in_network_groups_per_leaf == 2


def test_a_mode_prices_what_it_adds():
    # Deep-buffer spines cost more per spine and core switch; the SHARP aggregation manager is one line.
    untuned = bom(16384, "roce-400g", "fat-tree", oversubscription=2)
    hyper = bom(16384, "roce-400g@hyperscale", "fat-tree", oversubscription=2)
    upper = sum(untuned["switches_by_tier"][1:])
    premium = CAT.fabric_price("roce-400g@hyperscale").spine_switch_premium_usd
    assert hyper["switches_usd"] - untuned["switches_usd"] == pytest.approx(upper * premium)
    assert (untuned["fabric"], hyper["fabric"]) == ("roce-400g@untuned", "roce-400g@hyperscale")
    sharp = bom(4096, "ib-ndr@sharp", "rail-fat-tree")
    assert sharp["fabric_manager_usd"] == CAT.fabric_price("ib-ndr@sharp").fabric_manager_usd > 0
    assert bom(4096, "ib-ndr", "rail-fat-tree")["fabric_manager_usd"] == 0


def test_dual_tor_doubles_host_links_not_switches_and_keeps_the_speed():
    """Alibaba HPN (SIGCOMM 2024): each 400G NIC as 2 x 200G ports to two ToRs. Host links double at half the rate
    (16,384 -> 32,768, split by reach as before: 2 x 6,554 DAC-reach and 2 x 9,830 ACC-reach, rounded), the same
    leaves and switches carry them (a 200G link takes half a 400G cage), the leaf bandwidth per GPU is unchanged,
    so the step time equals the tuned hosts'; goodput rises, a leaf no longer being a single point of failure."""
    tuned = bom(16384, "roce-400g@tuned", "fat-tree", oversubscription=2)
    hpn = bom(16384, "roce-400g@hpn", "fat-tree", oversubscription=2)
    assert (tuned["host_links"], hpn["host_links"]) == (16384, 32768)
    assert hpn["copper_links"] + hpn["active_copper_links"] == 32768
    assert (hpn["switches_by_tier"], hpn["switches_usd"]) == (tuned["switches_by_tier"], tuned["switches_usd"])
    assert CAT.fabric("roce-400g@hpn").dual_tor and "HPN" in CAT.fabric("roce-400g@hpn").sources["dual_tor"]
    runs = {m: evaluate(gpus=16384, fabric=f"roce-400g@{m}", topology="fat-tree") for m in ("tuned", "hpn")}
    assert runs["hpn"].step_time_s == runs["tuned"].step_time_s
    assert runs["hpn"].goodput > runs["tuned"].goodput


@pytest.mark.parametrize(
    "name, mentions",
    [
        ("roce-400g@", ["roce-400g@", "no mode or variant after '@'", "tuned", "branded"]),
        ("roce-400g@tunned", ["'tunned'", "roce-400g", "did you mean 'tuned'"]),
        ("roce-400g@sharp", ["'sharp'", "roce-400g", "untuned"]),
        ("spectrum-x@tuned", ["spectrum-x has no operating modes"]),
        ("roce-400g@Tuned", ["'Tuned' is not a mode name"]),
        ("roce-400g@tuned@b", ["'b' is not a price variant of roce-400g", "branded"]),
        ("roce-400g@bogus@branded", ["unknown mode 'bogus'", "untuned", "branded"]),
        ("roce-400g@tuned@branded@x", ["more than two '@'"]),
        ("roce-400g@branded@tuned", ["'branded' is a price variant, not a mode", "roce-400g@tuned@branded"]),
    ],
)
def test_bad_modes_are_one_line_naming_fabric_and_mode(capsys, name, mentions):
    assert_one_line_error(*run(["eval", "--fabric", name], capsys), *mentions)
    assert_one_line_error(*run(["bom", "--gpus", "64", "--fabric", name], capsys), *mentions)
    assert_one_line_error(*run(["roi", "--a", name, "--samples", "10"], capsys), *mentions)


def test_impossible_designs_are_one_line_naming_fabric_mode_and_topology(capsys, write):
    # SHARP needs rail-aligned leaves (HPC-X 2.26): on the top-of-rack fat-tree it cannot run.
    assert_one_line_error(
        *run(["eval", "--fabric", "ib-ndr@sharp", "--topology", "fat-tree"], capsys),
        "ib-ndr@sharp",
        "fat-tree",
        "rail-aligned",
    )
    assert_one_line_error(*run(["bom", "--gpus", "64", "--fabric", "ib-ndr@sharp", "--topology", "torus-3d"], capsys))
    # A sweep that lists only trees SHARP cannot use is refused; a mixed list rejects the impossible cells.
    path = write("s.toml", small_scenario(fabric='["ib-ndr@sharp"]', topology='["fat-tree"]'))
    assert_one_line_error(*run(["sweep", str(path), "--all", str(path.with_suffix(".csv"))], capsys), "ib-ndr@sharp")
    # Dual-ToR on a torus: a user's mode that sets it.
    roce = {**CAT.fabrics["roce-400g"].model_dump(), "sources": CAT.fabrics["roce-400g"].sources}
    mode = {"summary": "HPN dual-ToR", "dual_tor": True, "sources": {"dual_tor": "Alibaba HPN, SIGCOMM 2024; 2024-08"}}
    text = toml_table("fabrics.hpn", {**roce, "default_mode": "dual", "modes": {"dual": mode}})
    price = CAT.fabric_prices["roce-400g"]
    text += toml_table("prices.fabric.hpn", {**price.model_dump(), "sources": dict(price.sources)})
    cat = write("hpn.toml", text)
    assert_one_line_error(
        *run(["eval", "--catalog", str(cat), "--fabric", "hpn@dual", "--topology", "torus-3d"], capsys),
        "hpn@dual",
        "torus-3d",
        "leaf-spine",
    )
    code, out, _ = run(["eval", "--catalog", str(cat), "--fabric", "hpn", "--topology", "fat-tree", "--json"], capsys)
    assert code == 0 and json.loads(out)["fabric"] == "hpn@dual"


def _catalog_with(write, fabric: dict, name: str = "x") -> Catalog:
    cat = Catalog.builtin()
    cat.add_file(write(f"{name}.toml", toml_table(f"fabrics.{name}", fabric)))
    return cat


def test_a_mode_is_checked_like_an_entry(write):
    base = CAT.fabrics["roce-400g"]
    roce = {**base.model_dump(), "sources": dict(base.sources)}
    bad = [
        ({"summary": "s", "qps_per_connection": 8.0}, "modes.m.qps_per_connection: no source"),
        ({"summary": "s", "kind": "infiniband"}, "modes.m.kind: not a figure a mode can set"),
        ({"summary": "s", "qps_per_connectoin": 8.0}, "did you mean 'qps_per_connection'"),
        ({"qps_per_connection": 8.0, "sources": {"qps_per_connection": "x; 2026-11"}}, "modes.m.summary: missing"),
        (
            {"summary": "s", "qps_per_connection": 0.5, "sources": {"qps_per_connection": "x; 2026-11"}},
            "modes.m.qps_per_connection",
        ),
        # SHARP on RoCE: in-network reduction needs an InfiniBand fabric.
        (
            {
                "summary": "s",
                "in_network_reduction_efficiency": 1.2,
                "sources": {"in_network_reduction_efficiency": "x; 2026-11"},
            },
            "needs an InfiniBand fabric",
        ),
    ]
    for mode, message in bad:
        with pytest.raises(CatalogError, match=message.replace("(", r"\(").replace(")", r"\)")):
            _catalog_with(write, {**roce, "default_mode": "m", "modes": {"m": mode}})
    with pytest.raises(CatalogError, match="default_mode: 'n' is not one of its modes"):
        _catalog_with(write, {**roce, "default_mode": "n", "modes": {"m": {"summary": "s"}}})


def test_sweeps_take_modes_as_an_axis_and_label_rows_with_them(capsys, tmp_path, write):
    fabrics = '["roce-400g", "roce-400g@tuned", "roce-400g@hyperscale"]'
    path = write("m.toml", small_scenario(fabric=fabrics, gpu='["h100-sxm"]', gpus="[128]"))
    out = tmp_path / "rows.csv"
    code, _, err = run(["sweep", str(path), "--all", str(out)], capsys)
    assert code == 0, err
    header, *rows = out.read_text().splitlines()
    column = header.split(",").index("fabric")
    assert {r.split(",")[column] for r in rows} == {"roce-400g@untuned", "roce-400g@tuned", "roce-400g@hyperscale"}
    # The same id twice, once bare and once with its default mode, is one fabric listed twice.
    twice = write("t.toml", small_scenario(fabric='["roce-400g", "roce-400g@untuned"]'))
    assert_one_line_error(*run(["sweep", str(twice), "--all", str(tmp_path / "t.csv")], capsys), "fabric")


def test_nics_shared_by_fabrics_have_one_set_of_nic_figures():
    # NCCL's net_ib transport drives InfiniBand and RoCE with one code path and one NET latency table (tuning.cc):
    # the same NIC gets one efficiency, NIC latency and LL/LL128 savings on every fabric (roi-review-2 E3, E5).
    by_nic: dict[str, set[tuple[object, ...]]] = {}
    for fid in CAT.fabric_ids():
        f = CAT.fabric(fid)
        figures = (f.range_of("efficiency"), f.nic_latency_us, f.ll_step_saving_us, f.ll128_step_saving_us)
        by_nic.setdefault(f.nic, set()).add(figures)
    assert {nic: len(v) for nic, v in by_nic.items()} == dict.fromkeys(by_nic, 1)
    assert {f.nic for f in (CAT.fabric("ib-ndr"), CAT.fabric("roce-400g"))} == {"connectx-7-400g"}


def test_a_mode_and_a_price_variant_together_run_the_mode_and_buy_the_variant(capsys):
    # Tuned RoCE on branded boxes: the tuned mode's physics, the branded entry's prices; in the default mode the
    # variant keeps its short name, and a mode's own price lines (hyperscale's deep-buffer spines) still apply.
    cat = builtin_catalog()
    both = "roce-400g@tuned@branded"
    assert cat.fabric(both) == cat.fabric("roce-400g@tuned")
    assert cat.fabric_price(both) == cat.fabric_price("roce-400g@branded") != cat.fabric_price("roce-400g@tuned")
    assert cat.fabric_id(both) == both and cat.fabric_price_key(both) == "roce-400g@branded"
    assert cat.fabric_id("roce-400g@untuned@branded") == "roce-400g@branded"
    spines = cat.fabric_price("roce-400g@hyperscale@branded")
    assert spines.switch_usd == cat.fabric_price("roce-400g@branded").switch_usd
    assert spines.spine_switch_premium_usd == cat.fabric_price("roce-400g@hyperscale").spine_switch_premium_usd > 0
    code, out, _ = run(["eval", "--fabric", both, "--gpus", "1024", "--json"], capsys)
    tuned = json.loads(run(["eval", "--fabric", "roce-400g@tuned", "--gpus", "1024", "--json"], capsys)[1])
    doc = json.loads(out)
    assert code == 0 and doc["step_time_s"] == tuned["step_time_s"]
    assert doc["network_capex_usd"] > tuned["network_capex_usd"]
    code, out, _ = run(["roi", "--b", f"roce-400g@tuned,{both}", "--samples", "20", "--json"], capsys)
    assert code == 0 and json.loads(out)["fabrics_b"] == ["roce-400g@tuned", both]

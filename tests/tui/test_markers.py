"""One marker, colour and name per fabric (issue 21, D9): the same in every chart and table, whatever order the
rows come in, glyphs unique so that the charts read without colour (NO_COLOR), a fabric in an operating mode
(`roce-400g@tuned`) with a marker of its own in its fabric's colour. Pure functions: no app."""

from __future__ import annotations

import polars as pl

from scalefront_tui.widgets.figures import FrontierView, breakdown, scaling, time_cost
from scalefront_tui.widgets.markers import SLOTS, FabricMarkers
from scalefront_tui.widgets.plot import SHADES, stacked_bars


def test_a_fabric_keeps_its_marker_whatever_order_it_is_asked_in():
    markers = FabricMarkers(["ib-ndr", "roce-400g", "eth-100g-tcp"])
    first = {name: markers.of(name) for name in ("eth-100g-tcp", "roce-400g", "ib-ndr")}
    assert [first[n].glyph for n in ("ib-ndr", "roce-400g", "eth-100g-tcp")] == ["●", "■", "▲"]
    assert markers.of("spectrum-x").glyph == "◆", "a fabric met later takes the next free marker"
    assert {name: markers.of(name) for name in first} == first


def test_an_operating_mode_takes_the_hollow_form_in_its_fabrics_colour():
    markers = FabricMarkers(["ib-ndr", "roce-400g"])
    tuned = markers.of("roce-400g@tuned")
    assert tuned.glyph == "□" and tuned.colour == markers.colour("roce-400g")
    again = markers.of("roce-400g@adaptive")
    assert again.glyph not in ("■", "□") and again.colour == markers.colour("roce-400g")
    alone = FabricMarkers().of("uec-800g@tuned")
    assert alone.glyph == "●", "the first name of a fabric takes the filled glyph, whatever its mode"


def test_glyphs_never_repeat_however_many_fabrics():
    """`large` sweeps eight fabrics: ● and ■ each stood for two of them."""
    names = [f"fabric-{i}" for i in range(12)] + [f"fabric-{i}@tuned" for i in range(12)]
    markers = FabricMarkers(names)
    glyphs = [markers.glyph(n) for n in names]
    assert len(set(glyphs)) == len(glyphs)
    assert {markers.glyph(f"fabric-{i}") for i in range(len(SLOTS))} == {slot[0] for slot in SLOTS}


def frontier(order: list[str]) -> pl.DataFrame:
    """Two points per fabric, in the given order (as a sort would leave them)."""
    rows = []
    for i, fabric in enumerate(order):
        for gpus in (512, 1024):
            rows.append(
                {
                    "fabric": fabric,
                    "gpus": gpus,
                    "time_to_train_days": 10.0 * (i + 1) * 1024 / gpus,
                    "cost_to_train_usd": 1e6 * (i + 1),
                    "scaling_efficiency": 0.5 + 0.1 * i,
                    **{c: 0.1 * (i + 1) for c in ("compute_s", "dp_comm_s")},
                    **{c: 0.0 for c in ("recompute_s", "tp_comm_s", "pp_comm_s", "cp_comm_s", "ep_comm_s")},
                    **{c: 0.0 for c in ("bubble_s", "optimizer_s", "overhead_s", "framework_s", "host_wait_s")},
                }
            )
    return pl.DataFrame(rows)


def test_every_chart_draws_a_fabric_with_its_marker_whatever_the_rows_order():
    """The review (D9): sorted by cost, the time-vs-cost legend read `● roce-400g ■ ib-ndr` and the scaling
    chart `● eth ■ ib-ndr`: markers followed the rows' order."""
    markers = FabricMarkers(["ib-ndr", "roce-400g", "eth-100g-tcp"])
    expected = {name: f"{markers.glyph(name)} {name}" for name in ("ib-ndr", "roce-400g", "eth-100g-tcp")}
    for order in (["roce-400g", "ib-ndr", "eth-100g-tcp"], ["eth-100g-tcp", "roce-400g", "ib-ndr"]):
        rows = frontier(order)
        view = FrontierView(rows, rows, ["fabric"], ["fabric", "gpus"], None, markers, "rent")
        for drawing in (time_cost(view, False), scaling(view, True), breakdown(view, 1024)):
            text = "\n".join(line.plain for line in drawing(80, 20))
            for name, label in expected.items():
                assert label in text, (name, text)


def test_the_breakdown_fills_each_part_with_its_own_glyph():
    """The step-time legend repeated █ ▓ ▒ for compute and bubble, PP comm and optimizer, DP comm and
    overhead: without colour they could not be told apart."""
    parts = [f"part {i}" for i in range(10)]
    lines = stacked_bars([("a", [1.0] * 10)], parts, 120, 10, str)
    legend = " ".join(line.plain for line in lines[:-1])
    fills = [legend[legend.index(f" {p}") - 1] for p in parts]
    assert fills == list(SHADES[:10]) and len(set(SHADES)) == len(SHADES)

"""The ROI tab's what-ifs through the public API (review D1-D4): a quote means what `roi --premium` means, a
dearer quote never makes A likelier to win, a changed price keeps its uncertainty and moves the answer
continuously, the verdict speaks of any GPU count, and a comparison of an edited scenario equals a fresh one."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import pytest

from scalefront import api
from scalefront.cli import main

#: Samples of these comparisons: the same seed (0) and count as the CLI runs they are checked against.
SAMPLES = 400


@pytest.fixture(scope="module")
def draft() -> api.ScenarioDraft:
    """The built-in comparison at two GPU counts (the question's 4,096 among them)."""
    d = api.ScenarioDraft.open("ib-vs-roce")
    return d.edit({**d.values(), "gpus": "2048, 4096"})


def test_a_quote_means_what_roi_premium_means(draft, tmp_path, capsys):
    """+30% in the UI is `scalefront roi --premium 1.3`: the same table, number for number."""
    path = draft.save(tmp_path / "s.toml").file
    assert main(["roi", str(path), "--b", "roce-400g", "--premium", "1.3", "--samples", str(SAMPLES), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["rows"]
    view = api.compare_fabrics(draft, api.WhatIf("ib-ndr", "roce-400g", premium=1.3), samples=SAMPLES)
    assert [r["gpus"] for r in cli] == view.table["gpus"].to_list()
    for key in ("premium", "break_even_premium", "p_a_cheaper", "p_payback_within_life", "npv_usd", "savings_usd"):
        assert view.table[key].to_list() == pytest.approx([r[key] for r in cli], rel=1e-12), key
    assert view.table["premium"].to_list() == pytest.approx([1.3, 1.3])


def test_a_dearer_quote_never_makes_a_likelier_to_win(draft):
    """Quotes from -10% to +100% (through the catalog's +18% and +56%): P(A cheaper), P(payback) and NPV never
    rise as the quote rises, and the break-even premium (what A may cost) does not move with the quote."""
    rows = [
        api.compare_fabrics(draft, api.WhatIf("ib-ndr", "roce-400g", premium=q), samples=SAMPLES).table
        for q in (0.9, 0.95, 1.0, 1.0001, 1.05, 1.18, 1.3, 1.56, 2.0)
    ]
    for key in ("p_a_cheaper", "p_payback_within_life", "npv_usd"):
        for i in range(2):
            series = [t[key][i] for t in rows]
            assert all(b <= a + 1e-12 for a, b in itertools.pairwise(series)), (key, series)
    assert rows[0]["p_a_cheaper"][1] > rows[-1]["p_a_cheaper"][1]  # the quote matters at all
    for t in rows[1:]:
        assert t["break_even_premium"].to_list() == pytest.approx(rows[0]["break_even_premium"].to_list())


def test_a_changed_price_keeps_its_uncertainty(draft):
    """The server price 0.01% up or down moves the answer by a hair, not by the price's whole uncertainty (D2: any
    value other than the catalog's used to drop it), and the break-even band stays as wide."""
    base = api.WhatIf("ib-ndr", "roce-400g")
    server = api.what_if_defaults(draft, "ib-ndr", "roce-400g").server_usd
    assert server is not None
    views = [
        api.compare_fabrics(draft, replace(base, server_usd=None if f is None else server * f), samples=SAMPLES)
        for f in (None, 1.0001, 0.9999)
    ]
    width = [(v.table["break_even_premium_p90"] - v.table["break_even_premium_p10"]).to_list() for v in views]
    for v, w in zip(views[1:], width[1:], strict=True):
        assert w == pytest.approx(width[0], rel=1e-2)
        assert v.table["p_a_cheaper"].to_list() == pytest.approx(views[0].table["p_a_cheaper"].to_list(), abs=0.01)
        assert v.table["break_even_premium"].to_list() == pytest.approx(
            views[0].table["break_even_premium"].to_list(), rel=1e-3
        )


def test_the_verdict_speaks_of_any_gpu_count(draft):
    view = api.compare_fabrics(draft, api.WhatIf("ib-ndr", "roce-400g"), samples=SAMPLES)
    assert "At 4,096 GPUs" in view.verdict and "At 4,096 GPUs" in api.verdict_at(view, 4096)
    assert "At 2,048 GPUs" in api.verdict_at(view, 2048)
    with pytest.raises(ValueError, match="512"):
        api.verdict_at(view, 512)


def test_an_edited_scenario_compares_as_a_fresh_one(tmp_path):
    """D1: H100 edited to GB200 at 8,192 compares exactly as the same scenario opened from its file."""
    edited = api.ScenarioDraft.open("ib-vs-roce")
    edited = edited.edit({**edited.values(), "gpu": "gb200", "gpus": "8192"})
    fresh = api.ScenarioDraft.open(edited.save(tmp_path / "gb200.toml").file)
    views = [api.compare_fabrics(d, api.WhatIf("ib-ndr", "roce-400g"), samples=SAMPLES) for d in (edited, fresh)]
    assert views[0].verdict == views[1].verdict and views[0].table.equals(views[1].table)
    assert api.what_if_defaults(edited, "ib-ndr", "roce-400g") == api.what_if_defaults(fresh, "ib-ndr", "roce-400g")


def test_the_fabric_choices_are_the_ownable_catalog_fabrics(draft):
    choices = api.fabric_choices(draft)
    # Every operating mode is a choice of its own (the canonical ids: roce-400g@untuned for the bare id).
    assert {"ib-ndr@default", "ib-ndr@sharp", "roce-400g@untuned", "roce-400g@tuned", "spectrum-x"} <= set(choices)
    # And every price variant in every mode (the default mode's under its short name).
    assert {"roce-400g@branded", "roce-400g@tuned@branded", "roce-400g@hyperscale@branded"} <= set(choices)
    assert "roce-400g@untuned@branded" not in choices
    # Sorted by price entry, then id: a fabric's own modes together, its price variants after them.
    assert choices == sorted(choices, key=lambda f: (draft.catalog.fabric_price_key(f), f))
    assert choices.index("roce-400g@untuned") + 1 == choices.index("roce-400g@branded")
    assert all(not draft.catalog.fabric_price(f).rented for f in choices)


def test_a_what_if_overrides_the_scenarios_own_figure(draft):
    """A scenario that sets its rent ($3/GPU-hour, certain) shows it, and a rent what-if replaces it: renting, each
    fabric's cost scales by exactly 4/3."""
    rented = draft.edit({**draft.values(), "rent": "$3"})
    base = api.what_if_defaults(rented, "ib-ndr", "roce-400g")
    assert base.rent_usd_per_gpu_hour == 3.0
    w = api.WhatIf("ib-ndr", "roce-400g", mode="rent")
    at3 = api.compare_fabrics(rented, w, samples=50)
    at4 = api.compare_fabrics(rented, replace(w, rent_usd_per_gpu_hour=4.0), samples=50)
    for fabric in ("ib-ndr", "roce-400g"):
        assert at4.table[f"cost_{fabric}"].to_list() == pytest.approx([v * 4 / 3 for v in at3.table[f"cost_{fabric}"]])

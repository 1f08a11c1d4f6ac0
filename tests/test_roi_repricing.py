"""The ROI tab's what-ifs of price re-price the comparison kept from the last run (`scalefront.roi.repricing`, issue
21's 100 ms) and give what a fresh comparison with those inputs gives, frame for frame and word for word (issue 21:
"after any re-run, the ROI verdict equals a fresh run"); a what-if of physics (another fabric) compares afresh."""

from __future__ import annotations

from dataclasses import replace

import pytest
from polars.testing import assert_frame_equal

from scalefront import api
from scalefront.roi import RoiOptions, compare, repricing
from scalefront.roi.text import verdict
from scalefront.roi.whatif import _with_what_ifs

#: Monte Carlo samples of these comparisons (the tab's what-ifs run 2,000; fewer keep the test quick).
SAMPLES = 300
FRAMES = ("table", "workloads", "tornado", "samples", "breakdown", "cash_flows")


@pytest.fixture(scope="module")
def draft() -> api.ScenarioDraft:
    d = api.ScenarioDraft.open("ib-vs-roce")
    return d.edit({**d.values(), "gpus": "2048, 4096"})


def _fresh(draft: api.ScenarioDraft, w: api.WhatIf) -> api.RoiView:
    """The comparison with the what-ifs as a fresh `compare` (its own sweep and Monte Carlo) sees it."""
    raw, catalog = _with_what_ifs(draft, w)
    options = RoiOptions(samples=SAMPLES, premium=w.premium)
    return compare((raw, draft.file), w.fabric_a, w.fabric_b, catalog=catalog, options=options)


def _assert_same(view: api.RoiView, fresh) -> None:  # type: ignore[no-untyped-def]
    for name in FRAMES:
        assert_frame_equal(getattr(view.result, name), getattr(fresh, name), check_exact=True), name
    assert view.verdict == verdict(fresh)


def _what_ifs(draft: api.ScenarioDraft) -> list[api.WhatIf]:
    base = api.what_if_defaults(draft, "ib-ndr", "roce-400g")
    assert base.server_usd is not None and base.rent_usd_per_gpu_hour is not None
    return [
        replace(base, premium=1.3),
        replace(base, server_usd=base.server_usd * 1.2),
        replace(base, years=4.0, utilisation=0.6),
        replace(base, usd_per_kwh=0.15, pue=1.5),
        replace(base, rent_usd_per_gpu_hour=base.rent_usd_per_gpu_hour * 1.5, premium=0.9),
    ]


def test_a_price_what_if_re_prices_the_kept_comparison_as_a_fresh_run_would(draft):
    """Quote, server price, life and utilisation, power and PUE, rent with a quote below par: each re-prices the
    session kept from the catalog-price run (no new one is made) and equals the fresh comparison exactly."""
    base = api.what_if_defaults(draft, "ib-ndr", "roce-400g")
    api.compare_fabrics(draft, base, samples=SAMPLES)
    kept = repricing._kept
    assert kept is not None
    for w in _what_ifs(draft):
        view = api.compare_fabrics(draft, w, samples=SAMPLES)
        assert repricing._kept is kept, w  # re-priced, not compared afresh
        _assert_same(view, _fresh(draft, w))
    # Back to the catalog's prices: the first answer again.
    _assert_same(api.compare_fabrics(draft, base, samples=SAMPLES), _fresh(draft, base))


def test_a_what_if_of_physics_compares_afresh(draft):
    """Another design B (the tuned operating mode: other fabric figures) or another sample count cannot use the
    kept speeds: a new comparison is kept, and it equals the fresh one."""
    base = api.what_if_defaults(draft, "ib-ndr", "roce-400g")
    api.compare_fabrics(draft, base, samples=SAMPLES)
    kept = repricing._kept
    tuned = replace(base, fabric_b="roce-400g@tuned", premium=1.2)
    view = api.compare_fabrics(draft, tuned, samples=SAMPLES)
    assert repricing._kept is not kept
    _assert_same(view, _fresh(draft, tuned))


def test_the_core_refuses_kept_speeds_for_other_physics(draft):
    """The guard in the core (`RoiSession.reprice_as`): a fabric figure's range moved (a timing input) or another
    seed gets None, not numbers from the wrong speeds."""
    base = api.what_if_defaults(draft, "ib-ndr", "roce-400g")
    api.compare_fabrics(draft, base, samples=SAMPLES)
    kept = repricing._kept
    assert kept is not None
    problem, uncertainty = kept.prepared.problem, kept.prepared.uncertainty
    assert kept.session.reprice_as(problem, uncertainty, False) is not None
    timing = [dict(i) for i in uncertainty["inputs"]]
    moved = next(i for i in timing if any(t["section"] == "fabric" for t in i["targets"]))
    moved["high"] = moved["high"] + 0.5 * (moved["high"] - moved["typical"]) + 0.01
    assert kept.session.reprice_as(problem, {**uncertainty, "inputs": timing}, False) is None
    assert kept.session.reprice_as(problem, {**uncertainty, "seed": 1}, False) is None


def test_a_lifecycles_what_if_of_price_re_prices_as_a_fresh_run_would():
    """A scenario with a [lifecycle] (training, then serving): the quote and the server price re-price the kept
    training speeds, the serving layouts are chosen and evaluated again from the new inputs, and the answer is the
    fresh comparison's."""
    draft = api.ScenarioDraft.open("lifecycle")
    base = api.what_if_defaults(draft, "ib-ndr", "roce-400g")
    assert base.server_usd is not None
    api.compare_fabrics(draft, base, samples=SAMPLES)
    kept = repricing._kept
    for w in (replace(base, premium=1.3), replace(base, server_usd=base.server_usd * 1.2)):
        view = api.compare_fabrics(draft, w, samples=SAMPLES)
        assert repricing._kept is kept
        _assert_same(view, _fresh(draft, w))

"""Invariants of evaluate() over generated configurations (hypothesis; example counts set in conftest.py)."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import helpers
from scalefront import Catalog, ConfigurationError, Overlap, evaluate
from scalefront.inputs.catalog import builtin_catalog

CAT = builtin_catalog()
MODELS = ["llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b", "deepseek-v3"]
REL = 1e-12  # room for floating-point reassociation only


@st.composite
def configs(draw) -> dict:
    """A valid configuration by construction (tp divides the heads, ep the experts and dp x cp, ...)."""
    model_id = draw(st.sampled_from(MODELS))
    m = CAT.model(model_id)
    gpu = draw(st.sampled_from(sorted(CAT.gpus)))
    tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if m.kv_heads % t == 0 and m.heads % t == 0]))
    pp = draw(st.sampled_from([1, 2, 4, 8]))
    vpp = draw(st.sampled_from([1, 2])) if pp > 1 else 1
    cp = draw(st.sampled_from([1, 2]))
    dp = draw(st.sampled_from([1, 2, 4, 8, 32, 128]))
    ep = 1
    if m.is_moe:
        ep = draw(st.sampled_from([e for e in (1, 2, 4, 8) if m.moe_experts % e == 0 and (dp * cp) % e == 0]))
    precision = "fp8" if CAT.gpu(gpu).peak_fp8_tflops > 0 and draw(st.booleans()) else "bf16"
    return dict(
        model=model_id,
        gpu=gpu,
        gpus=tp * pp * cp * dp,
        tp=tp,
        pp=pp,
        vpp=vpp,
        cp=cp,
        ep=ep,
        micro_batch=draw(st.sampled_from([1, 2])),
        zero=draw(st.integers(0, 3)),
        recompute=draw(st.sampled_from(["none", "selective", "full"])),
        sequence_parallel=draw(st.booleans()),
        fabric=draw(st.sampled_from(sorted(CAT.fabrics))),
        topology=draw(st.sampled_from(sorted(CAT.topologies))),
        overlap=draw(st.sampled_from(["none", "dp", "full", "dp=0.5,tp=0.5,pp=0.5,ep=0.5"])),
        precision=precision,
    )


def _evaluate(**kw):
    try:
        return evaluate(**kw)
    except ConfigurationError as err:  # e.g. pp x vpp deeper than a model's layers
        assume(False)
        raise AssertionError from err  # unreachable


def _with_fabric(name: str, **update) -> Catalog:
    fabrics = {**CAT.fabrics, name: CAT.fabrics[name].model_copy(update=update)}
    return dataclasses.replace(CAT, fabrics=fabrics)


def _with_gpu(name: str, **update) -> Catalog:
    gpus = {**CAT.gpus, name: CAT.gpus[name].model_copy(update=update)}
    return dataclasses.replace(CAT, gpus=gpus)


@given(configs(), st.floats(1.0, 8.0))
def test_more_fabric_bandwidth_is_never_slower(kw, factor):
    base = _evaluate(**kw)
    fab = CAT.fabric(kw["fabric"])
    faster = evaluate(**kw, catalog=_with_fabric(kw["fabric"], link_gbps=fab.link_gbps * factor))
    assert faster.step_time_s <= base.step_time_s * (1 + REL)
    # Bandwidth moves no figure of the run but time (and what time costs).
    assert faster.memory == base.memory and faster.params_total == base.params_total


@given(configs(), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(1.0, 4.0))
def test_more_efficient_fabric_is_never_slower(kw, eff, balance, tail):
    fab = CAT.fabric(kw["fabric"])
    lo = dict(
        efficiency=fab.efficiency * max(eff, 0.05),
        load_balance_efficiency=fab.load_balance_efficiency * max(balance, 0.05),
        tail_latency_factor=fab.tail_latency_factor * tail,
    )
    worse = _evaluate(**kw, catalog=_with_fabric(kw["fabric"], **lo))
    base = evaluate(**kw)
    assert base.step_time_s <= worse.step_time_s * (1 + REL)


@given(configs(), st.lists(st.floats(0.0, 1.0), min_size=8, max_size=8))
def test_more_overlap_is_never_slower(kw, f):
    lo = Overlap(*(min(a, b) for a, b in zip(f[:4], f[4:], strict=True)))
    hi = Overlap(*(max(a, b) for a, b in zip(f[:4], f[4:], strict=True)))
    kw = {**kw, "overlap": lo}
    less = _evaluate(**kw)
    more = evaluate(**{**kw, "overlap": hi})
    assert more.step_time_s <= less.step_time_s * (1 + REL)
    assert evaluate(**{**kw, "overlap": "full"}).step_time_s <= more.step_time_s * (1 + REL)


@given(configs(), st.floats(1.0, 4.0))
def test_more_hbm_never_turns_feasible_into_infeasible(kw, factor):
    base = _evaluate(**kw)
    gpu = CAT.gpu(kw["gpu"])
    bigger = evaluate(**kw, catalog=_with_gpu(kw["gpu"], hbm_gb=gpu.hbm_gb * factor))
    if base.feasible:
        assert bigger.feasible
    assert bigger.memory.memory_margin_bytes >= base.memory.memory_margin_bytes
    assert bigger.memory.memory_per_gpu_bytes == base.memory.memory_per_gpu_bytes
    assert bigger.step_time_s == base.step_time_s


@given(configs())
def test_mfu_bounded_by_the_kernels_it_is_made_of(kw):
    r = _evaluate(**kw)
    gpu = CAT.gpu(kw["gpu"])
    # Every FLOP runs in a GEMM or attention kernel at best at its measured efficiency; communication, bubble
    # and optimizer time only lower the average.
    best_attention = max(max(row) for row in gpu.attention_efficiency)
    assert 0 < r.mfu <= max(gpu.gemm_efficiency, best_attention) * (1 + REL)
    assert r.mfu <= r.hfu * (1 + REL)
    assert 0 < r.scaling_efficiency <= 1 + REL


@given(configs())
def test_accounting_identities_hold_everywhere(kw):
    # The definitions (the breakdown adds up to the step time, GB = bytes / 1e9, feasible = margin >= 0) are
    # pinned once, in test_evaluate.py::test_accounting_identities; here the formulas that must hold anywhere.
    r = _evaluate(**kw)
    b = r.breakdown
    assert min(dataclasses.astuple(b)) >= 0 and min(dataclasses.astuple(r.hidden)) >= 0
    # The bubble idles the pipeline's micro-batch work: compute, exposed model-parallel traffic and what the
    # framework adds per micro-batch (all its time but its per-step part: the fixed step overhead and the compute
    # lost to the data- and pipeline-parallel traffic hidden once per step).
    f = CAT.framework(r.framework)
    per_step_s = f.step_overhead_s + f.overlap_interference * (r.hidden.dp_comm_hidden_s + r.hidden.pp_comm_hidden_s)
    per_micro_batch_s = b.framework_s - per_step_s
    work = b.compute_s + b.recompute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + per_micro_batch_s
    assert b.bubble_s / work == pytest.approx((r.pp - 1) / (r.vpp * r.micro_batches), rel=1e-9, abs=1e-15)
    assert r.steps == math.ceil(r.tokens / (r.global_batch * r.seq_len))
    rent = CAT.gpu_price(kw["gpu"]).rent_usd_per_gpu_hour
    assert r.cost_rent_usd == pytest.approx(r.gpus * rent * r.time_to_train_s / 3600, rel=1e-12)


@pytest.fixture(scope="module")
def fresh_catalog() -> Catalog:
    """The built-in catalog parsed again (not the cached one evaluate() uses by default), once for the module."""
    return Catalog.builtin()


@given(configs())
def test_same_input_same_result(fresh_catalog, kw):
    first = _evaluate(**kw)
    assert evaluate(**kw) == first
    assert evaluate(**kw, catalog=fresh_catalog) == first  # a freshly parsed catalog changes nothing


@given(configs(), st.sampled_from([0.5, 0.8, 0.9]))
def test_intervals_bracket_the_prediction_and_widen_with_the_level(kw, level):
    # The interval's ends come from the error model's order statistics: they bracket the prediction whenever
    # the residuals straddle zero, a higher level never narrows them, and time and cost to train scale alike.
    r = _evaluate(**kw, interval=level)
    wide = _evaluate(**kw, interval=0.95)
    assert r.step_time_s_lo <= r.step_time_s_hi
    assert wide.step_time_s_lo <= r.step_time_s_lo * (1 + REL) and wide.step_time_s_hi >= r.step_time_s_hi * (1 - REL)
    ratio = r.step_time_s_hi / r.step_time_s
    assert r.time_to_train_days_hi / r.time_to_train_days == pytest.approx(ratio, rel=1e-9)
    assert r.cost_to_train_usd_hi / r.cost_to_train_usd == pytest.approx(ratio, rel=1e-9)


# ---------------------------------------------------------------------------------------------- ROI Monte Carlo


@pytest.fixture(scope="module")
def roi_problem():
    """The small comparison of the ROI tests."""
    return helpers.roi_problem()


@settings(max_examples=6)
@given(st.floats(0.7, 1.6), st.floats(0.0, 0.5), st.integers(0, 2**32 - 1))
def test_a_higher_premium_never_raises_p_a_wins(roi_problem, p, more, seed):
    # Same seed, same samples: with a higher premium A's cost only rises, sample by sample.
    from scalefront.roi import RoiOptions, compare

    low = compare(roi_problem, options=RoiOptions(premium=p, samples=80, seed=seed))
    high = compare(roi_problem, options=RoiOptions(premium=p + more, samples=80, seed=seed))
    for lo, hi in zip(low.table.iter_rows(named=True), high.table.iter_rows(named=True), strict=True):
        assert hi["p_a_cheaper"] <= lo["p_a_cheaper"]
    assert (high.samples["savings_usd"] <= low.samples["savings_usd"] + 1e-6).all()


@settings(max_examples=4)
@given(st.integers(0, 2**32 - 1))
def test_more_samples_converge(roi_problem, seed):
    # The first n samples of a seeded run are a run of n samples; P(A cheaper) from n samples stays within 4
    # standard errors of the 1,600-sample estimate, for n = 50, 200, 800.
    import polars as pl

    from scalefront.roi import RoiOptions, compare

    long = compare(roi_problem, options=RoiOptions(samples=1600, seed=seed))
    short = compare(roi_problem, options=RoiOptions(samples=200, seed=seed))
    for g in long.table["gpus"]:
        s = long.samples.filter(pl.col("gpus") == g)
        p = (s["savings_usd"] > 0).mean()
        assert short.samples.filter(pl.col("gpus") == g)["savings_usd"].to_list() == s["savings_usd"][:200].to_list()
        for n in (50, 200, 800):
            p_n = (s["savings_usd"][:n] > 0).mean()
            se = max(math.sqrt(p * (1 - p) / n), 1 / n)
            assert abs(p_n - p) <= 4 * se, (g, n, p_n, p)

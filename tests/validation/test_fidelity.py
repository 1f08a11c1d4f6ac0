"""The model reproduces published training runs and collective benchmarks (no worse than it does today: the test
limits; issue 22's gates are reported in docs/validation.md, met or not), the intervals cover held-out rows as often
as the tolerance allows, and the table itself is what it claims to be. That the calibration, the error
model and docs/validation.md are what their commands compute from the table is checked with every other derived file
by tests/test_regen.py."""

from __future__ import annotations

import json
import re

import pytest

from helpers import DATA, REPO
from scalefront import evaluate
from scalefront.fidelity import validation
from scalefront.inputs.catalog.loader import builtin_catalog

DATED = re.compile(r"(19|20)\d{2}(-\d{2})?")

#: The judged rows of data/validation/training_runs.toml on main before issue 22's research (main at 2026-11-26,
#: the rows without a role): the population the worst-row regression limit was written for. Computed with
#: `git show main:data/validation/training_runs.toml | python -c "import sys, tomllib; print(sorted(r['id'] for r
#: in tomllib.loads(sys.stdin.read())['run'] if 'role' not in r))"`. The research's rows are reported in
#: docs/validation.md with their misses, not guarded.
PRE_ISSUE22_JUDGED = frozenset(
    {
        "ao-b200-llama4-scout-2layer-fsdp4-ep4-bf16-4gpu",
        "ao-b200-llama4-scout-2layer-fsdp4-ep4-mxfp8-4gpu",
        "ao-mi300x-llama3-8b-fsdp-fp8-tensorwise-8gpu",
        "automodel-h100-dsv3-bf16-1024gpu",
        "automodel-h100-dsv3-bf16-256gpu",
        "bloom-176b-384gpu",
        "dgxc-2505-gb200-dsv3-bf16-128gpu",
        "dgxc-2505-gb200-dsv3-bf16-512gpu",
        "dgxc-2505-gb200-grok1-bf16-128gpu",
        "dgxc-2505-gb200-grok1-fp8-256gpu",
        "dgxc-2505-gb200-llama31-405b-bf16-128gpu",
        "dgxc-2505-gb200-llama31-405b-fp8-512gpu",
        "dgxc-2505-gb200-nemotron4-340b-fp8-512gpu-strong",
        "dgxc-2505-h100-dsv3-bf16-1024gpu",
        "dgxc-2505-h100-grok1-bf16-512gpu",
        "dgxc-2505-h100-nemotron4-340b-bf16-256gpu",
        "dgxc-llama31-405b-bf16-2304gpu",
        "dgxc-llama31-405b-bf16-576gpu",
        "dgxc-llama31-70b-bf16-2048gpu",
        "dgxc-llama31-70b-bf16-512gpu",
        "dgxc-llama31-70b-bf16-64gpu",
        "dgxc-llama31-8b-bf16-128gpu",
        "dgxc-llama31-8b-bf16-8gpu",
        "gpt-neox-20b-96gpu",
        "mbridge-2509-h100-dsv3-fp8-1024gpu",
        "mbridge-2511-b200-llama3-8b-fp8-8gpu",
        "mbridge-2511-gb200-dsv3-bf16-256gpu",
        "mbridge-2511-h100-llama3-70b-fp8-64gpu",
        "mbridge-2511-h100-llama31-405b-fp8-1024gpu",
        "mbridge-2602-b200-dsv3-mxfp8-256gpu",
        "mbridge-260401-b200-dsv3-mxfp8-256gpu",
        "mbridge-260401-b200-qwen3-235b-mxfp8-256gpu",
        "mbridge-260401-b200-qwen3-30b-mxfp8-8gpu",
        "mbridge-260401-gb200-dsv3-mxfp8-256gpu",
        "mbridge-260401-gb200-llama3-70b-mxfp8-64gpu",
        "mbridge-260401-gb200-llama31-405b-fp8-256gpu",
        "mbridge-260401-gb200-qwen3-235b-mxfp8-256gpu",
        "mbridge-260401-gb200-qwen3-30b-mxfp8-8gpu",
        "mbridge-260401-h100-llama31-405b-fp8-1024gpu",
        "mbridge-260401-h100-qwen3-235b-fp8-256gpu",
        "mbridge-260401-h100-qwen3-30b-fp8-16gpu",
        "megascale-f9-megascale-530b-11200gpu",
        "megascale-f9-megatron-530b-11200gpu",
        "megascale-f9-megatron-530b-2240gpu",
        "megascale-t2-megascale-175b-1024gpu",
        "megascale-t2-megascale-175b-12288gpu",
        "megascale-t2-megascale-175b-256gpu",
        "megascale-t2-megascale-175b-3072gpu",
        "megascale-t2-megatron-175b-1024gpu",
        "megascale-t2-megatron-175b-12288gpu",
        "megascale-t2-megatron-175b-256gpu",
        "megascale-t2-megatron-175b-512gpu",
        "megascale-t2-megatron-175b-6144gpu",
        "megascale-t2-megatron-175b-768gpu",
        "megascale-t2-megatron-175b-8192gpu",
        "megatron-h100-weak-1.7b",
        "megatron-h100-weak-16b",
        "megatron-h100-weak-32b",
        "megatron-sc21-t1-1.7b",
        "megatron-sc21-t1-145.6b",
        "megatron-sc21-t1-18.4b",
        "megatron-sc21-t1-1t",
        "megatron-sc21-t1-3.6b",
        "megatron-sc21-t1-310.1b",
        "megatron-sc21-t1-529.6b",
        "megatron-sc21-t1-7.5b",
        "megatron-sc21-t1-76.1b",
        "mosaic-a100-40-mpt13b-128gpu",
        "mosaic-a100-40-mpt7b-128gpu",
        "mosaic-a100-80-mpt13b-8gpu",
        "mosaic-a100-80-mpt30b-8gpu",
        "mosaic-a100-80-mpt70b-64gpu",
        "mosaic-h100-mpt7b-8gpu",
        "mtnlg-530b-280nodes",
        "mtnlg-530b-420nodes",
        "nemo-2407-h100-gpt3-175b-fp8-512gpu",
        "nemo-2407-h100-llama3-70b-fp8-64gpu",
        "nemo-2502-b200-gpt3-175b-fp8-512gpu",
        "nemo-2502-b200-mixtral-8x22b-fp8-256gpu-64k",
        "nemo-2502-b200-mixtral-8x7b-fp8-64gpu",
        "nemo-2502-b200-nemotron4-340b-fp8-128gpu",
        "nemo-2504-gb200-gpt3-175b-fp8-128gpu",
        "nemo-2504-gb200-mixtral-8x22b-fp8-256gpu-64k",
        "nemo-2504-gb200-mixtral-8x7b-fp8-64gpu",
        "nemo-2504-gb200-nemotron4-15b-fp8-64gpu",
        "tt2412-h100-llama31-405b-4d-cp1-32k-fp8-512gpu",
        "tt2412-h100-llama31-405b-4d-cp8-256k-fp8-512gpu",
        "tt2412-h100-llama31-405b-fsdp8-tp8-pp8-1f1b-fp8-512gpu",
        "tt2412-h100-llama31-405b-fsdp8-tp8-pp8-interleaved-fp8-512gpu",
        "tt2412-h100-llama31-70b-fsdp32-tp8-asynctp-fp8-256gpu",
        "tt2412-h100-llama31-70b-fsdp32-tp8-fp8-256gpu",
        "tt2412-h100-llama31-8b-fsdp-compile-8gpu",
        "tt2412-h100-llama31-8b-fsdp-compile-fp8-128gpu",
        "tt2412-h100-llama31-8b-fsdp-compile-fp8-8gpu",
        "tt2412-h100-llama31-8b-fsdp1-cp8-256k-fp8",
        "tt2412-h100-llama31-8b-fsdp2-cp4-128k-fp8",
        "tt2412-h100-llama31-8b-fsdp4-cp2-64k-fp8",
        "tt2412-h100-llama31-8b-fsdp8-cp1-32k-fp8",
        "tt2506-h100-llama3-70b-fsdp32-tp8-asynctp-bf16-256gpu",
        "tt2506-h100-llama3-70b-fsdp32-tp8-bf16-256gpu",
        "tt2506-h100-llama3-8b-fsdp8-tp8-bf16-64gpu",
        "tt2506-h200-llama31-8b-fsdp-fp8-64gpu",
    }
)


@pytest.fixture(scope="module")
def training():
    return validation.training_checks()


@pytest.fixture(scope="module")
def collectives():
    return validation.collective_checks()


@pytest.fixture(scope="module")
def coverage():
    return validation.held_out_coverage()


def test_held_out_training_runs_are_within_the_bar(training):
    judged = validation.judged_training(training)
    s = validation.summary([c.error for c in judged])
    assert s["median_ape_pct"] <= validation.MEDIAN_LIMIT_PCT, s
    # The worst-row limit guards the population it was written for: the rows judged before issue 22's research.
    # Every one is still judged except those the table's rules moved since, each named with its reason: one became
    # a calibration row (the calibration rule); the others are reference because an input their source leaves open
    # moves their prediction by more than 6%: the micro-batch (Sec. 28), activation recomputation (Sec. 29).
    guarded = [c for c in judged if c.id in PRE_ISSUE22_JUDGED]
    left = {c.id: c for c in training if c.id in PRE_ISSUE22_JUDGED and c.role != "validation"}
    assert {i for i, c in left.items() if c.role == "calibration"} == {"mosaic-h100-mpt7b-8gpu"}
    reference = {i for i, c in left.items() if c.role == "reference"}
    rows = {r["id"]: r for r in validation.load_table("training_runs")["run"]}
    listing = {i: rows[i].get("unstated", []) for i in reference}
    by_input = {name: {i for i, names in listing.items() if name in names} for name in validation.UNSTATED_INPUTS}
    assert by_input["micro_batch"] - by_input["recompute"] == {"megatron-h100-weak-16b", "megatron-h100-weak-32b"}
    assert {i.split("-")[0] for i in by_input["recompute"]} == {"megascale", "nemo"}
    assert reference == by_input["micro_batch"] | by_input["recompute"] and len(reference) == 18, sorted(reference)
    assert len(guarded) == len(PRE_ISSUE22_JUDGED) - len(left)
    worst = max(guarded, key=lambda c: abs(c.error))
    assert abs(worst.error) * 100 <= validation.WORST_LIMIT_PCT, f"{worst.id}: {worst.error:+.1%}"
    moe = validation.summary([c.error for c in judged if c.moe])
    assert moe["median_ape_pct"] <= validation.MOE_MEDIAN_LIMIT_PCT, moe


def test_prediction_intervals_cover_held_out_rows_as_claimed(coverage):
    # Fitted without each source family in turn, the 90% intervals hold that family's measured step times
    # about 90% of the time (within the tolerance).
    assert coverage.rows >= 60
    assert abs(coverage.coverage - coverage.level) * 100 <= validation.COVERAGE_TOLERANCE_PCT, coverage


def test_the_readme_says_truly_which_gates_the_table_meets(training, coverage):
    # The README's sentence on issue 22's gates is hand-written: it said "25+ source families ... are [met]" through a
    # session whose table judged 24. It names the gates met and those not met; each half must hold.
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "held-out coverage of the 90% intervals 85-95%," in readme
    assert "are not met (its 150+ judged rows over 25+ source families are)" in readme
    judged = validation.judged_training(training)
    assert len(judged) >= 150 and len({c.source_family for c in judged}) >= 25
    # The coverage gate is among those the sentence says are missed (84.8% since the MLPerf v5.1 rows of the design
    # note's Sec. 38): when it is met again, the sentence must say so.
    assert not 0.85 <= coverage.coverage <= 0.95, coverage
    s = validation.summary([c.error for c in judged])
    moe = validation.summary([c.error for c in judged if c.moe])
    met = (
        s["median_ape_pct"] <= validation.MEDIAN_TARGET_PCT,
        s["worst_ape_pct"] <= validation.WORST_TARGET_PCT,
        moe["median_ape_pct"] <= validation.MOE_MEDIAN_TARGET_PCT,
    )
    assert not any(met), met  # the sentence says none of the three is met: reword it when one is


def test_every_prediction_carries_its_interval(training):
    # Split-conformal: the interval is where the measured times of the row's regime fell around its predictions;
    # in a regime whose residuals are all on one side (the V100 rows, all slower than predicted) it does not hold
    # the point prediction, and says so rather than hide the bias.
    for c in training:
        assert 0 < c.predicted_lo_s <= c.predicted_hi_s, c.id
    inside = sum(c.predicted_lo_s <= c.predicted_step_time_s <= c.predicted_hi_s for c in training)
    assert inside >= 0.8 * len(training)


def test_collective_bus_bandwidth_is_within_the_gate_at_every_size_from_64_kib(collectives):
    judged = validation.judged_collectives(collectives)
    assert len({c.id for c in judged}) >= 20 and {c.op for c in judged} == {"all_reduce", "all_gather", "alltoall"}
    s = validation.summary([c.error for c in judged])
    assert s["median_ape_pct"] <= validation.COLLECTIVE_MEDIAN_LIMIT_PCT, s
    large = validation.summary([c.error for c in validation.judged_collectives(collectives, 2**30)])
    assert large["median_ape_pct"] <= validation.COLLECTIVE_LARGE_MEDIAN_LIMIT_PCT, large
    assert large["worst_ape_pct"] <= validation.COLLECTIVE_LARGE_WORST_LIMIT_PCT, large


def test_a_ring_of_whole_nodes_pays_the_network_step_on_every_step(collectives):
    # An all-gather is always a ring. Over 8 (64 GPUs) and 32 (256 GPUs) p5 nodes on EFA, the held-out curves'
    # 32 MiB points take S / (n x busbw) = 33,554,432 / (64 x 46.29 GB/s) = 11.33 us and 33,554,432 / (256 x
    # 12.38 GB/s) = 10.59 us a step, though 7 of every 8 steps stay inside a node: each network edge carries a
    # chunk on every step, so the ring advances at the network step's pace. A form that charged the network only
    # on the chain's inter-node edges (NCCL's tuner: 31 x 14 us + 224 x 3.4 us at 256 GPUs) gives about 5-6 us a
    # step (docs/design/fidelity-v3.md, Sec. 16); 35% separates the two.
    for curve, gpus, step_us in (
        ("h100-efa-64gpu-8node-p5-allgather", 64, 11.33),
        ("h100-efa-256gpu-32node-p5-allgather", 256, 10.59),
    ):
        point = next(c for c in collectives if c.id == curve and c.size_bytes == 2**25)
        assert point.measured_busbw_gbytes_per_s * gpus * step_us * 1e-6 * 1e9 == pytest.approx(2**25, rel=2e-3)
        predicted_step_us = 2**25 / (gpus * point.predicted_busbw_gbytes_per_s * 1e9) * 1e6
        assert abs(predicted_step_us / step_us - 1.0) <= 0.35, (curve, predicted_step_us)


def test_calibration_and_forced_algorithm_curves_are_not_judged(collectives):
    roles = {c.id: c.role for c in collectives}
    assert roles["h100-efa-32gpu-4node-p5"] == "calibration"
    assert roles["h100-roce-1024gpu-128node-ring-ll128"] == "reference"
    # The curves the fabrics' LL/LL128 per-step savings were fitted on (data/fabrics.toml) are not judged.
    assert roles["h200-roce-16gpu-2node-gcp-a3ultra-allgather"] == "calibration"
    assert roles["h100-ib-ndr-32gpu-4node-default-gjaion"] == "calibration"
    assert not any(c.id in ("h100-efa-32gpu-4node-p5",) for c in validation.judged_collectives(collectives))


def test_calibration_rows_follow_the_stated_rule_and_the_rest_is_held_out(training):
    rows = validation.load_table("training_runs")["run"]
    calibration = sorted(r["id"] for r in rows if r.get("role") == "calibration")
    assert calibration == validation.calibration_rule(rows)
    roles = [c.role for c in training]
    assert set(roles) <= {"validation", "calibration", "reference"}
    # One per framework and source family at most; most rows are judged.
    pairs = {(c.framework, c.source_family) for c in training if c.role == "calibration"}
    assert len(pairs) == roles.count("calibration")
    assert roles.count("validation") >= 60
    for c in training:
        if c.role == "reference":
            assert len(c.excluded_because) > 20, c.id


def test_only_gpus_measured_on_a_recorded_run_anchor_the_framework_fits():
    # The table header's rule: the calibration candidates are rows on GPUs whose kernel figures the project measured
    # (`scalefront measure` on a recorded run in data/measurements). The V100's GEMM rate cites a published
    # measurement (DeepBench) while its attention and HBM figures stay estimates: not one of them.
    from scalefront.fidelity.validation.calibration import measured_gpus

    cat = builtin_catalog()
    assert measured_gpus(cat) == {"h100-sxm", "h200"}
    assert cat.gpus["v100-16gb"].sources["gemm_efficiency"].startswith("measured (published)")


def test_rows_whose_unstated_inputs_decide_the_prediction_are_reference():
    # The table's header rule (docs/design/fidelity-v3.md Sec. 28, 29): an input no source gives nor software default
    # fixes is listed in `unstated`; where its admissible values move the prediction by more than the judged-median
    # gate the row cannot test the model and is reference, saying so.
    rows = validation.load_table("training_runs")["run"]
    listed = [r for r in rows if r.get("unstated")]
    assert {r["id"] for r in listed} >= {"megatron-h100-weak-16b", "megatron-h100-weak-32b", "megatron-h100-weak-7.1b"}
    limit = validation.UNSTATED_SPREAD_LIMIT_PCT / 100
    spread = {r["id"]: validation.unstated_spread(r) for r in listed}
    for r in listed:
        assert set(r["unstated"]) <= set(validation.UNSTATED_INPUTS), r["id"]
        assert r["micro_batch"] in validation.admissible_micro_batches(r), r["id"]
        if spread[r["id"]] > limit:
            assert r.get("role") == "reference", r["id"]
            for name, words in (("micro_batch", "micro-batch"), ("recompute", "recomputation")):
                assert name not in r["unstated"] or words in r["excluded_because"], r["id"]
    # Worked by hand from the model: the 32B row at TP 8 reduces over one GPU per node, and micro-batch 1, 2 and 4
    # (global batch 192 over 48 replicas) hide 0.03-0.33 s of it, far more than 6% of a 0.9 s step: over 25% when
    # hidden traffic costs nothing, the premise of that count (Sec. 28's fit had no overlap interference); the
    # interference fitted since (0.509, Sec. 29) charges half of what hides, and the spread stays over the limit.
    from scalefront.fidelity.validation.calibration import with_terms

    no_interference = with_terms(builtin_catalog(), "megatron-core", {"overlap_interference": 0.0})
    thirty_two = next(r for r in listed if r["id"] == "megatron-h100-weak-32b")
    assert validation.unstated_spread(thirty_two, no_interference) > 0.25
    assert spread["megatron-h100-weak-32b"] > limit
    assert spread["megatron-h100-weak-7.1b"] < limit
    seven = next(r for r in listed if r["id"] == "megatron-h100-weak-7.1b")
    assert validation.unstated_spread({**seven, "unstated": []}) == 0.0
    # Recomputation (Sec. 29): SC21's ZeRO-3 GPT-3 175B on 384 GPUs at micro-batch 4 fits 80 GB only with full
    # recomputation. Korthikanti et al. (arXiv 2205.05198) eq. 1, s b h (34 + 5 a s / h) bytes a layer, is
    # 2048 x 4 x 12288 x (34 + 5 x 96 x 2048 / 12288) = 11.5 GB, 1.1 TB over 96 layers; selective keeps 34 s b h,
    # 330 GB: so its unstated recomputation moves nothing, while the paper rows that fit all three do move.
    zero3 = next(r for r in listed if r["id"] == "megatron-sc21-t2-zero3-175b-384gpu")
    assert zero3["unstated"] == ["recompute"] and spread[zero3["id"]] == 0.0
    for setting, floor_gb in (("none", 1000), ("selective", 300)):
        e = validation.evaluate_row({**zero3, "recompute": setting})
        assert not e.feasible and e.memory_per_gpu_gb > floor_gb, setting
    assert min(spread[r["id"]] for r in listed if r["id"].startswith("megascale-")) > limit
    assert validation.RECOMPUTE_SETTINGS == ("none", "selective", "full")
    # An input the rule cannot enumerate is refused, naming the row.
    with pytest.raises(ValueError, match=re.escape("megatron-h100-weak-7.1b: unstated ['fabric']")):
        validation.unstated_spread({**seven, "unstated": ["fabric"]})


def test_the_report_names_the_runs_the_memory_estimate_would_refuse(training, collectives):
    # Every row ran, so each fitted its GPUs; the report lists the counted rows the model's memory estimate says do
    # not fit (a sweep would drop those layouts), with how far over. AutoModel's DeepSeek-V3 rows ran with the full
    # recomputation their configs set (Sec. 29); without it the model puts them at 175-202 GB on 80 GB H100s.
    report = validation.render(training, collectives, markdown=True).splitlines()
    line = next(x for x in report if x.startswith("**Memory**"))
    counted = [c for c in training if c.role != "reference"]
    over = [c for c in counted if c.memory_margin_gb < 0]
    assert f"on {len(over)} of {len(counted)} judged and calibration rows" in line
    for c in over:
        assert f"{c.id} {c.memory_per_gpu_gb:.1f} GB ({-c.memory_margin_gb:.1f} GB over)" in line
    rows = {r["id"]: r for r in validation.load_table("training_runs")["run"]}
    for rid in ("automodel-h100-dsv3-bf16-1024gpu", "automodel-h100-dsv3-bf16-256gpu"):
        assert rows[rid]["recompute"] == "full"
        assert validation.evaluate_row({**rows[rid], "recompute": "none"}).memory_per_gpu_gb > 160


def test_the_calibration_writes_the_interference_as_the_range_it_leaves_open():
    # data/frameworks.toml keeps the fitted interference as { low = 0, typical = fit, high = max(0.6, fit) }, its
    # source saying why, and writing the same fit again changes nothing.
    from scalefront.fidelity.validation.calibration import FrameworkFit, write_calibration

    text = (
        "[x]\nlayer_overhead = 0.1\noverlap_interference = 0.2\n\n[x.sources]\n"
        'layer_overhead = "Calibrated: old; 2026-01"\noverlap_interference = "Calibrated: old; 2026-01"\n'
    )
    for value, high in ((0.3, 0.6), (0.7, 0.7)):
        fit = FrameworkFit("x", {"layer_overhead": 0.02, "overlap_interference": value}, ("a", "b", "c"))
        out = write_calibration(text, {"x": fit}, "2026-11")
        assert f"overlap_interference = {{ low = 0.0, typical = {value}, high = {high} }}" in out
        assert "layer_overhead = 0.02\n" in out and "arXiv 2507.03114" in out
        assert write_calibration(out, {"x": fit}, "2026-11") == out


def test_the_table_covers_what_it_must(training):
    runs = validation.load_table("training_runs")["run"]
    curves = validation.load_table("collectives")["curve"]
    facts = validation.table_facts(training)
    assert facts.rows >= 60 and facts.sources >= 8 and facts.moe >= 15 and facts.blackwell >= 10, facts
    for r in runs:
        # Every row names the software it ran, its framework family and the settings the model uses.
        assert r.get("software"), r["id"]
        assert r.get("framework") in builtin_catalog().frameworks, r["id"]
        assert r.get("attention") in validation.ATTENTION_KERNELS, r["id"]
        assert "overlap" in r or "dp_overlap" in r, r["id"]
        assert r.get("grad_reduce_dtype") in ("fp32", "bf16"), r["id"]
    ids = [r["id"] for r in runs]
    assert len(set(ids)) == len(ids)
    for r in runs:
        assert DATED.search(r["source"]), r["id"]
        assert r["tp"] * r["pp"] * r["dp"] * r["cp"] == r["gpus"], r["id"]
        assert r["global_batch"] % (r["dp"] * r["micro_batch"]) == 0, r["id"]
    families = {validation.source_family(r["id"]) for r in runs}
    assert len(families) >= 8, families
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


@pytest.mark.parametrize("index", range(4))
def test_h200_layers_from_measured_kernels_with_no_gpu_factor(index):
    # Issue 22's layer gate: one Llama 3 layer forward and backward on one H200 (vocab 128, no parallelism, no
    # recomputation), against the eager layers measured in data/measurements/h200-gpu-bench.json layers[0..3]
    # (21.59 / 19.74 / 76.16 / 70.30 ms). The kernels alone (framework kernels-only) and the kernels with eager
    # PyTorch's measured layer term both come within 8%; nothing scales the kernels per GPU.
    layer = json.loads((DATA / "measurements" / "h200-gpu-bench.json").read_text(encoding="utf-8"))["layers"][index]
    cat = builtin_catalog()
    model = cat.models[layer["model"]].model_copy(update={"layers": 1, "vocab": 128, "seq_len": layer["seq"]})
    measured_s = layer["fwdbwd_ms"] * 1e-3
    batch = {"global_batch": layer["batch"], "micro_batch": layer["batch"]}
    for framework in ("kernels-only", "eager-pytorch"):
        r = evaluate(model, "h200", 1, tp=1, pp=1, dp=1, recompute="none", zero=0, **batch, framework=framework)
        layer_s = r.breakdown.compute_s + r.breakdown.framework_s
        assert abs(layer_s / measured_s - 1) <= 0.08, (framework, layer_s, measured_s)


def test_the_framework_fit_is_the_least_squares_with_a_term_held_at_its_bound():
    # Linear residuals r = A x - b whose unconstrained least squares is x = (0.6, 1.5): the second term past its
    # bound of 1 (TERM_BOUNDS). Worked by hand: b = A (0.6, 1.5) = (2.1, 1.35, 0.9); with x1 held at 1,
    # x0 = sum(a0 (b - a1)) / sum(a0^2) = (1.1 + 0.85 + 0.7) / 3 = 0.88333. Clipping the unconstrained fit would
    # leave x0 at 0.6.
    import numpy as np

    from scalefront.fidelity.validation.calibration import _gauss_newton

    a = np.array([[1.0, 1.0], [1.0, 0.5], [1.0, 0.2]])
    b = np.array([2.1, 1.35, 0.9])
    assert _gauss_newton(lambda x: a @ x - b, np.zeros(2)) == pytest.approx([2.65 / 3, 1.0], abs=1e-6)


def test_torchtitan_per_op_recomputation_costs_what_its_own_table_measured(training):
    # torchtitan's docs/performance.md, one cluster (64 A100 80GB, FSDP2), Llama 2 13B at local batch 2: no
    # activation checkpointing 2,162 tokens/s/GPU, per-op selective 1,904 (3.789 s and 4.303 s a step, +13.6%).
    # The op policy reruns every other GEMM of a block (wk, wo, w3: 39% of its forward GEMM FLOPs); Korthikanti's
    # rule, which reruns none, took the step 0.7% longer.
    by_id = {c.id: c for c in training}
    none, op = by_id["ttperf-a100-llama2-13b-none-64gpu"], by_id["ttperf-a100-llama2-13b-sel-op-64gpu"]
    measured = op.measured_step_time_s / none.measured_step_time_s
    predicted = op.predicted_step_time_s / none.predicted_step_time_s
    assert measured == pytest.approx(1.136, abs=0.001)
    assert predicted == pytest.approx(measured, abs=0.03)

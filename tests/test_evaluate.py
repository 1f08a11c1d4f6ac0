"""scalefront.evaluate: hand-checked figures and the accounting identities a user relies on (its errors:
test_evaluate_errors.py)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from scalefront import (
    Evaluation,
    Overlap,
    evaluate,
    parse_overlap,
    schema,
)
from scalefront.inputs.catalog import Catalog, builtin_catalog

H100_BF16_PEAK = 989e12  # NVIDIA H100 SXM datasheet, dense BF16 (data/gpus.toml)
H100_FP8_PEAK = 1979e12


def llama_params(layers, hidden, kv_dim, ffn, vocab):
    """Llama-style parameter count: q,o (h x h) + k,v (h x kv_dim) + SwiGLU (3 x h x ffn) + 2 RMSNorms per
    layer, untied input and output embeddings, and the final norm."""
    per_layer = 2 * hidden * hidden + 2 * hidden * kv_dim + 3 * hidden * ffn + 2 * hidden
    return layers * per_layer + 2 * vocab * hidden + hidden


# A spread of valid configurations (dense, pipelined, interleaved, MoE with EP, CP, ZeRO-3, FP8, full recompute).
CONFIGS = [
    dict(),
    dict(model="llama3-70b", gpus=1024, tp=8, pp=4, vpp=5),
    dict(model="llama3-70b", gpus=512, tp=4, pp=8, zero=0, recompute="full", overlap="none"),
    dict(model="llama3-8b", gpus=64, tp=2, cp=2, zero=3, overlap="full"),
    dict(model="mixtral-8x7b", gpus=256, tp=4, pp=2, ep=8, overlap="full"),
    dict(model="gpt3-175b", gpu="a100-80gb", gpus=1536, tp=8, pp=8, fabric="ib-hdr", topology="fat-tree"),
    dict(model="llama3-405b", gpu="h200", gpus=2048, tp=8, pp=16, precision="fp8", fabric="roce-400g"),
    dict(model="deepseek-v3", gpu="b200", gpus=2048, tp=8, pp=8, ep=32, sequence_parallel=False),
]
CONFIG_IDS = [
    "default",
    "pp4-vpp5",
    "pp8-full-recompute",
    "cp2-zero3",
    "mixtral-ep8",
    "gpt3-a100",
    "405b-fp8",
    "deepseek-ep32",
]


# ---------------------------------------------------------------- hand-checked figures


def test_llama3_70b_parameter_count():
    # Per layer 2*8192*8192 + 2*8192*1024 + 3*8192*28672 + 2*8192 = 855,654,400; x 80 = 68,452,352,000;
    # + 2 * 128256 * 8192 embeddings (2,101,346,304) + final norm 8192 = 70,553,706,496 ("70B").
    expected = llama_params(80, 8192, 1024, 28672, 128256)
    assert expected == 70_553_706_496
    r = evaluate("llama3-70b")
    assert r.params_total == pytest.approx(expected, rel=1e-9)
    assert r.params_active == r.params_total  # dense


def test_llama3_8b_and_405b_parameter_counts():
    # Meta model cards: Llama 3 8B is 8.03B parameters; 405B is 405.9B (HF safetensors metadata).
    assert evaluate("llama3-8b", gpus=8).params_total == pytest.approx(
        llama_params(32, 4096, 1024, 14336, 128256), rel=1e-9
    )
    assert llama_params(32, 4096, 1024, 14336, 128256) == pytest.approx(8.03e9, rel=1e-3)
    r = evaluate("llama3-405b", gpus=1024, pp=8)
    assert r.params_total == pytest.approx(llama_params(126, 16384, 1024, 53248, 128256), rel=1e-9)


def test_mixtral_total_and_active_parameters():
    # Mixtral 8x7B (arXiv 2401.04088 / HF card): 46.7B total, 12.9B active with 2 of 8 experts per token.
    # attention 2*4096^2 + 2*4096*1024 = 41,943,040; one expert 3*4096*14336 = 176,160,768; router 4096*8;
    # norms 2*4096. total = 32*(41,943,040 + 8*176,160,768 + 32,768 + 8,192) + 2*32000*4096 + 4096 = 46.70B;
    # active = 32*(41,943,040 + 2*176,160,768 + 32,768 + 8,192) + 2*32000*4096 + 4096 = 12.88B.
    r = evaluate("mixtral-8x7b", gpus=64, tp=8)
    assert r.params_total == pytest.approx(46_702_776_320, rel=1e-5)
    assert r.params_active == pytest.approx(12_879_925_248, rel=1e-5)


def test_model_flops_per_token():
    # Training FLOPs per token = 6 x (matmul parameters) + causal attention 6 * L * h * s (QK^T and AV: 4*s*h per
    # layer forward, halved by the causal mask, x3 for backward; PaLM, arXiv 2204.02311, App. B, halved).
    # Matmul parameters exclude the input-embedding lookup (vocab x h) and the norms (80*2*8192 + 8192).
    n = llama_params(80, 8192, 1024, 28672, 128256) - 128256 * 8192 - (80 * 2 * 8192 + 8192)
    expected = 6 * n + 6 * 80 * 8192 * 8192
    assert evaluate("llama3-70b").model_flops_per_token == pytest.approx(expected, rel=1e-6)


def test_bf16_gradients_of_a_70b_model_are_140_gb():
    # No sharding at all (tp 1, pp 1, ZeRO-0, 8-way DP): each GPU holds 2 bytes of BF16 gradient and 2 of weight
    # per parameter (2 x 70.55B = 141.1 GB) and 12 bytes of FP32 master weights + Adam m, v (846.6 GB).
    r = evaluate("llama3-70b", "h100-sxm", 8, tp=1, zero=0, grad_reduce_dtype="bf16")
    p = 70_553_706_496
    assert r.memory.gradients_bytes == pytest.approx(2 * p, rel=1e-6)
    # Megatron's default FP32 main gradients double them (theoretical_memory_usage.py: 18 bytes per parameter).
    fp32 = evaluate("llama3-70b", "h100-sxm", 8, tp=1, zero=0)
    assert fp32.memory.gradients_bytes == pytest.approx(4 * p, rel=1e-6)
    assert r.memory.weights_bytes == pytest.approx(2 * p, rel=1e-6)
    assert r.memory.optimizer_bytes == pytest.approx(12 * p, rel=1e-6)
    assert not r.feasible


def test_zero_stages_shard_what_they_should():
    # 1024 GPUs, tp 8 -> dp 128. ZeRO-1 shards optimizer states over dp, ZeRO-2 also gradients, ZeRO-3 also
    # weights (plus two gathered layers: 2 x 855.65M / 8 x 2 bytes = 427.9 MB).
    z = {s: evaluate(zero=s).memory for s in range(4)}
    dp = 128
    assert z[1].optimizer_bytes == pytest.approx(z[0].optimizer_bytes / dp, rel=1e-12)
    assert z[1].gradients_bytes == z[0].gradients_bytes and z[1].weights_bytes == z[0].weights_bytes
    assert z[2].gradients_bytes == pytest.approx(z[0].gradients_bytes / dp, rel=1e-12)
    assert z[2].weights_bytes == z[0].weights_bytes
    assert z[3].weights_bytes == pytest.approx(z[0].weights_bytes / dp + 2 * 855_654_400 / 8 * 2, rel=1e-6)
    for s in range(4):  # activations do not depend on ZeRO
        assert z[s].activations_bytes == z[0].activations_bytes


def test_steps_time_and_rent_cost_of_the_default_run(raw):
    r = evaluate()  # Llama 3 70B, 1024 H100, 1T tokens, global batch 512 x 8192
    tokens_per_step = 512 * 8192
    assert r.global_batch == 512 and r.seq_len == 8192
    # steps = ceil(1e12 / 4,194,304) = ceil(238,418.58) = 238,419
    assert r.steps == math.ceil(1e12 / tokens_per_step) == 238_419
    # Wall-clock time: the steps' compute time stretched by failures (goodput, data/reliability.toml).
    assert 0.5 < r.goodput <= 1.0
    assert r.time_to_train_s == pytest.approx(r.steps * r.step_time_s / r.goodput, rel=1e-12)
    assert r.time_to_train_days == pytest.approx(r.time_to_train_s / 86400, rel=1e-12)
    rent = raw("prices.toml")["gpu"]["h100-sxm"]["rent_usd_per_gpu_hour"]["typical"]  # $2.94/GPU-h neocloud median
    assert r.cost_rent_usd == pytest.approx(1024 * rent * r.time_to_train_s / 3600, rel=1e-12)
    assert r.cost_mode == "rent" and r.cost_to_train_usd == r.cost_rent_usd


def test_cost_mode_own():
    r = evaluate(cost_mode="own")
    assert r.cost_to_train_usd == r.cost_own_usd
    assert r.cost_rent_usd == evaluate().cost_rent_usd


def test_rent_price_override_scales_rent_cost_only():
    three = evaluate(prices={"rent_usd_per_gpu_hour": 3.0})
    six = evaluate(prices={"rent_usd_per_gpu_hour": 6.0})
    assert six.cost_rent_usd == pytest.approx(2 * three.cost_rent_usd, rel=1e-12)
    # 1024 GPUs x $3/h x the run's hours
    assert three.cost_rent_usd == pytest.approx(1024 * 3.0 * three.time_to_train_s / 3600, rel=1e-12)
    assert six.step_time_s == three.step_time_s
    assert six.cost_own_usd == three.cost_own_usd  # owning does not pay rent
    assert evaluate(prices={"rent_usd_per_gpu_hour": 0}).cost_rent_usd == 0.0


def test_switch_price_override_changes_network_capex():
    base = evaluate()
    dearer = evaluate(prices={"switch_usd": 2 * builtin_catalog().fabric_price("ib-ndr").switch_usd})
    assert dearer.network_capex_usd > base.network_capex_usd
    # Capex also buys spares of the network's parts and their installation, in proportion (data/prices.toml).
    econ = builtin_catalog().economics_or_error()
    extra = 1 + econ.network_spares_fraction + econ.installation_fraction
    network = dearer.network_capex_usd - base.network_capex_usd
    assert dearer.capex_usd - base.capex_usd == pytest.approx(network * extra)


@pytest.mark.parametrize(
    "kw, expected",
    [
        # 2^22 / 8192 = 512 sequences, dp 128 x micro-batch 1 divides it.
        (dict(), 512),
        # Llama 3 8B on 24 GPUs, tp 1: dp 24, ceil(512 / 24) = 22 -> 22 x 24 = 528.
        (dict(model="llama3-8b", gpus=24, tp=1), 528),
        # dp 1024 > 512 sequences: at least one sequence per replica.
        (dict(model="llama3-8b", gpus=1024, tp=1), 1024),
        # micro-batch 2 on dp 24: unit 48, ceil(512 / 48) = 11 -> 528.
        (dict(model="llama3-8b", gpus=24, tp=1, micro_batch=2), 528),
        # Interleaved: unit dp x mb x pp = 32 x 1 x 4 = 128 -> 512.
        (dict(gpus=1024, tp=8, pp=4, vpp=5), 512),
        # Interleaved, dp 24, pp 2: unit 48 -> 528 (micro-batches 22, a multiple of pp).
        (dict(model="llama3-8b", gpus=48, tp=1, pp=2, vpp=2), 528),
        # GPT-3 seq 2048: 2^22 / 2048 = 2048 sequences; tp 8, pp 8 on 1536 -> dp 24, ceil(2048/24) = 86 -> 2064.
        (dict(model="gpt3-175b", gpus=1536, tp=8, pp=8), 2064),
        # seq_len override: 2^22 / 4096 = 1024.
        (dict(seq_len=4096), 1024),
    ],
)
def test_default_global_batch(kw, expected):
    r = evaluate(**kw)
    assert r.global_batch == expected
    assert r.micro_batches == expected // (r.dp * r.micro_batch)


@pytest.mark.parametrize("kw", CONFIGS, ids=CONFIG_IDS)
def test_accounting_identities(kw):
    # The kernels alone: the framework adds nothing (its own identities: test_framework_time_adds_its_terms).
    r = evaluate(**kw, framework="kernels-only")
    assert r.breakdown.framework_s == 0.0
    b = r.breakdown
    cat = builtin_catalog()
    gpu = cat.gpu(r.gpu)
    # The breakdown adds up to the step time.
    assert sum(dataclasses.astuple(b)) == pytest.approx(r.step_time_s, rel=1e-12)
    assert all(v >= 0 for v in dataclasses.astuple(b))
    assert all(v >= 0 for v in dataclasses.astuple(r.hidden))
    # 1F1B bubble: (pp - 1) / (vpp x micro-batches) of the micro-batch work (Narayanan et al. SC21, Sec. 2.2).
    work = b.compute_s + b.recompute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s
    assert b.bubble_s / work == pytest.approx((r.pp - 1) / (r.vpp * r.micro_batches), rel=1e-9, abs=1e-15)
    # Parallel degrees multiply to the GPU count; micro-batches fill the global batch.
    assert r.tp * r.pp * r.dp * r.cp == r.gpus
    assert r.micro_batches * r.dp * r.micro_batch == r.global_batch
    # Throughput and utilisation follow from the step time.
    assert r.tokens_per_s == pytest.approx(r.global_batch * r.seq_len / r.step_time_s, rel=1e-12)
    peak = (gpu.peak_fp8_tflops if r.precision == "fp8" else gpu.peak_bf16_tflops) * 1e12
    assert r.mfu == pytest.approx(r.model_flops_per_token * r.tokens_per_s / (r.gpus * peak), rel=1e-9)
    assert r.tflops_per_gpu == pytest.approx(r.mfu * peak / 1e12, rel=1e-9)
    assert r.hfu >= r.mfu
    assert r.scaling_efficiency == pytest.approx(b.compute_s / r.step_time_s, rel=1e-12)
    # Memory: the parts add up; the headline figure is the total in GB (10^9 bytes).
    m = r.memory
    parts = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes + m.reserve_bytes
    assert m.memory_per_gpu_bytes == pytest.approx(parts, rel=1e-12)
    assert r.memory_per_gpu_gb == pytest.approx(m.memory_per_gpu_bytes / 1e9, rel=1e-15)
    assert m.hbm_bytes == gpu.hbm_gb * 1e9
    assert m.reserve_bytes == pytest.approx(gpu.runtime_reserve_gb * 1e9)
    assert m.memory_margin_bytes == pytest.approx(m.hbm_bytes - m.memory_per_gpu_bytes, rel=1e-12, abs=1.0)
    assert r.feasible == (m.memory_margin_bytes >= 0)
    # The run.
    assert r.steps == math.ceil(r.tokens / (r.global_batch * r.seq_len))
    # Wall-clock time: the steps' compute time stretched by failures (goodput, data/reliability.toml).
    assert 0.5 < r.goodput <= 1.0
    assert r.time_to_train_s == pytest.approx(r.steps * r.step_time_s / r.goodput, rel=1e-12)
    assert r.energy_mwh > 0 and r.capex_usd > r.network_capex_usd > 0


def test_no_pipeline_no_bubble_and_fewer_micro_batches_bigger_bubble():
    assert evaluate().breakdown.bubble_s == 0.0
    assert evaluate().breakdown.pp_comm_s == 0.0
    # Same pipeline, vpp 5 cuts the bubble share by 5: (4-1)/16 = 18.75% vs (4-1)/(5*16) = 3.75%.
    plain = evaluate(gpus=1024, tp=8, pp=4, framework="kernels-only")
    inter = evaluate(gpus=1024, tp=8, pp=4, vpp=5, framework="kernels-only")
    assert plain.micro_batches == inter.micro_batches == 16
    work = lambda b: b.compute_s + b.recompute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s  # noqa: E731
    assert plain.breakdown.bubble_s / work(plain.breakdown) == pytest.approx(3 / 16, rel=1e-12)
    assert inter.breakdown.bubble_s / work(inter.breakdown) == pytest.approx(3 / 80, rel=1e-12)


def test_fp8_uses_the_fp8_peak():
    bf16 = evaluate()
    fp8 = evaluate(precision="fp8")
    assert fp8.step_time_s < bf16.step_time_s
    assert fp8.tflops_per_gpu == pytest.approx(fp8.mfu * H100_FP8_PEAK / 1e12, rel=1e-9)
    assert bf16.tflops_per_gpu == pytest.approx(bf16.mfu * H100_BF16_PEAK / 1e12, rel=1e-9)


def test_overlap_moves_communication_from_exposed_to_hidden():
    # Each kind of communication is either exposed (in the breakdown) or hidden: overlap only re-labels it.
    # Without overlap nothing hides but the sequence-parallel backward re-gather, which Megatron always issues
    # asynchronously behind its data-gradient GEMM (kernels only: no framework overlaps anything by itself).
    for kw in CONFIGS[:5]:
        kw = {k: v for k, v in kw.items() if k != "overlap"} | {"framework": "kernels-only"}
        none = evaluate(overlap="none", **kw)
        full = evaluate(overlap="full", **kw)
        no_sp = evaluate(overlap="none", **{**kw, "sequence_parallel": False})
        assert no_sp.hidden.tp_comm_hidden_s == 0.0
        for kind in ("tp", "pp", "dp", "ep"):
            if kind != "tp":
                assert getattr(none.hidden, f"{kind}_comm_hidden_s") == 0.0
            total = getattr(none.breakdown, f"{kind}_comm_s") + getattr(none.hidden, f"{kind}_comm_hidden_s")
            exposed, hidden = getattr(full.breakdown, f"{kind}_comm_s"), getattr(full.hidden, f"{kind}_comm_hidden_s")
            assert exposed + hidden == pytest.approx(total, rel=1e-12, abs=1e-18)
        assert full.step_time_s <= none.step_time_s


def test_megatron_hides_the_tp_backward_behind_its_weight_gradients_without_overlap():
    # Megatron-LM launches the input gradient's all-reduce asynchronously and computes the weight gradient meanwhile
    # (data/frameworks.toml tp_backward_overlap = 1): one pass of the TP collectives (a third of them with full
    # recomputation's three passes, a half with two) hides though overlap says none.
    kw = dict(gpus=1024, tp=8, pp=4, overlap="none", sequence_parallel=False)
    waits = evaluate(**kw, framework="kernels-only")
    megatron = evaluate(**kw, framework="megatron-core")
    assert waits.hidden.tp_comm_hidden_s == 0.0
    total = waits.breakdown.tp_comm_s
    assert megatron.hidden.tp_comm_hidden_s == pytest.approx(total / 2, rel=1e-9)
    assert megatron.breakdown.tp_comm_s == pytest.approx(total / 2, rel=1e-9)
    # Megatron-LM before 2021-09 (6e1bde1e0f) waits for that all-reduce: the run says so and nothing hides.
    before = evaluate(**kw, framework="megatron-core", tp_async_allreduce=False)
    assert before.hidden.tp_comm_hidden_s == 0.0
    assert before.breakdown.tp_comm_s == pytest.approx(total, rel=1e-9)
    assert before.step_time_s > megatron.step_time_s


def _framework(**terms: float) -> Catalog:
    """The built-in catalog with a framework `test` that adds `terms` to the kernels and nothing else."""
    cat = builtin_catalog()
    base = cat.framework("kernels-only")
    frameworks = {**cat.frameworks, "test": base.model_copy(update=terms)}
    return dataclasses.replace(cat, frameworks=frameworks)


def test_framework_time_adds_its_terms():
    # Llama 3 70B on 1,024 H100 (tp 8, pp 4: 16 micro-batches of one sequence): a framework that adds 10% to each
    # layer's compute (recomputation too), 1 ms per micro-batch and 0.5 s per step, no overlap interference.
    kw = dict(gpus=1024, tp=8, pp=4, recompute="selective")
    bare = evaluate(**kw, framework="kernels-only")
    terms = dict(layer_overhead=0.1, microbatch_overhead_s=1e-3, step_overhead_s=0.5)
    r = evaluate(**kw, framework="test", catalog=_framework(**terms))
    b, m = r.breakdown, r.micro_batches
    assert m == 16 and b.compute_s == bare.breakdown.compute_s
    assert b.framework_s == pytest.approx(0.1 * (b.compute_s + b.recompute_s) + m * 1e-3 + 0.5, rel=1e-12)
    # The per-micro-batch part lengthens the bubble too: 3 / 16 of the micro-batches' work, framework time included.
    per_micro_batch = b.framework_s - 0.5
    work = b.compute_s + b.recompute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + per_micro_batch
    assert b.bubble_s == pytest.approx(3 / 16 * work, rel=1e-9)


def test_overlap_interference_slows_compute_by_a_share_of_the_hidden_traffic():
    # Half of every hidden second comes back as framework time; nothing else moves.
    kw = dict(gpus=1024, tp=8, pp=4, overlap="full")
    bare = evaluate(**kw, framework="kernels-only")
    r = evaluate(**kw, framework="test", catalog=_framework(overlap_interference=0.5))
    hidden = sum(dataclasses.astuple(bare.hidden))
    assert hidden > 0 and r.breakdown.compute_s == bare.breakdown.compute_s
    assert r.breakdown.framework_s == pytest.approx(0.5 * hidden, rel=1e-9)


def test_infeasible_configuration_explains_itself():
    # Llama 3 70B on one 8-GPU server, tp 8, no ZeRO: 70.55B/8 params x (2 weight + 2 grad + 12 optimizer)
    # bytes = 141.1 GB before activations > 80 GB.
    r = evaluate("llama3-70b", "h100-sxm", 8, tp=8, zero=0)
    assert r.feasible is False
    assert r.memory.memory_margin_bytes < 0
    assert r.memory_per_gpu_gb > 141.1
    assert "GB" in r.reason
    assert f"{r.memory_per_gpu_gb:.1f} GB" in r.reason  # states the need
    assert "80 GB" in r.reason  # and the capacity
    assert r.step_time_s > 0  # still evaluated
    ok = evaluate()
    assert ok.feasible is True and ok.reason is None


def test_resolved_inputs_and_defaults():
    r = evaluate()
    assert (r.model, r.gpu, r.gpus, r.fabric, r.topology) == (
        "llama3-70b",
        "h100-sxm",
        1024,
        "ib-ndr@default",
        "rail-fat-tree",
    )
    assert (r.tp, r.pp, r.dp, r.cp, r.ep, r.vpp, r.micro_batch) == (8, 1, 128, 1, 1, 1, 1)
    assert r.scale_up == "nvlink4-8"  # the H100's default_scale_up
    assert evaluate("llama3-70b", "gb200", 1152, pp=2).scale_up == "nvlink5-72"
    assert r.overlap == "dp"  # the default mode, by name
    assert evaluate(overlap=Overlap(dp=0.5, tp=1.0)).overlap == "dp=0.5,tp=1,pp=0,ep=0"
    assert r.oversubscription == builtin_catalog().topology("rail-fat-tree").oversubscription
    assert evaluate(oversubscription=2.0).oversubscription == 2.0
    assert evaluate(oversubscription=4.0).step_time_s >= evaluate(oversubscription=1.0).step_time_s
    assert evaluate(tokens=15e12).tokens == 15e12


def test_evaluation_is_frozen_and_serialisable():
    r = evaluate()
    assert isinstance(r, Evaluation)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.step_time_s = 1.0  # type: ignore[misc]
    d = r.to_dict()
    assert list(d) == schema.COLUMNS
    assert d["compute_s"] == r.breakdown.compute_s
    assert d["memory_per_gpu_bytes"] == r.memory.memory_per_gpu_bytes
    assert d["overlap"] == "dp"
    assert json.loads(json.dumps(d)) == d


def test_same_input_same_result():
    for kw in CONFIGS:
        assert evaluate(**kw) == evaluate(**kw)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("none", Overlap()),
        ("dp", Overlap(dp=1.0)),
        ("full", Overlap(1.0, 1.0, 1.0, 1.0)),
        (0.5, Overlap(0.5, 0.5, 0.5, 0.5)),
        ("0.25", Overlap(0.25, 0.25, 0.25, 0.25)),
        ("dp=0.9,tp=0.5", Overlap(dp=0.9, tp=0.5)),
        (" pp = 1 , ep=0.3", Overlap(pp=1.0, ep=0.3)),
    ],
)
def test_parse_overlap(value, expected):
    assert parse_overlap(value) == expected

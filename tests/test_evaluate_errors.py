"""scalefront.evaluate's errors: unknown names listed with the known ones and a suggestion, impossible layouts as one
class with their category, bad arguments as usage errors."""

from __future__ import annotations

import pytest

from scalefront import CatalogError, ConfigurationError, ScalefrontError, UsageError, evaluate
from scalefront.inputs.catalog import builtin_catalog


@pytest.mark.parametrize(
    "kind, kwarg, bad, suggestion",
    [
        ("GPU", "gpu", "h100-sxn", "h100-sxm"),
        ("fabric", "fabric", "ib-ndx", "ib-ndr"),
        ("topology", "topology", "fattree", "fat-tree"),
        ("model", "model", "llama3-70", "llama3-70b"),
        ("scale-up domain", "scale_up", "nvlink4", "nvlink4-8"),
    ],
)
def test_unknown_names_list_known_values_and_suggest(kind, kwarg, bad, suggestion):
    cat = builtin_catalog()
    known = {
        "gpu": cat.gpus,
        "fabric": cat.fabrics,
        "topology": cat.topologies,
        "model": cat.models,
        "scale_up": cat.scale_up,
    }[kwarg]
    with pytest.raises(CatalogError) as info:
        evaluate(**{kwarg: bad})
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"unknown {kind} {bad!r}")
    assert f"did you mean {suggestion!r}" in msg
    for name in known:
        assert name in msg


@pytest.mark.parametrize(
    "kw, category",
    [
        (dict(tp=16), "tp_heads"),  # Llama 3 70B has 8 KV heads
        (dict(tp=3, gpus=24), "tp_heads"),  # 64 heads not divisible by 3
        (dict(dp=64), "gpu_count_mismatch"),  # 8 x 1 x 64 x 1 = 512 != 1024
        (dict(global_batch=513), "global_batch"),  # not a multiple of dp 128
        (dict(ep=2), "ep_dense"),  # Llama is dense
        (dict(model="mixtral-8x7b", ep=3, gpus=96), "ep_experts"),  # 3 does not divide 8 experts
        (dict(vpp=2), "vpp_without_pp"),
        (dict(pp=128, tp=8), "pp_layers"),  # 128 stages > 80 layers
        (dict(cp=3, gpus=192), "cp_seq_len"),  # 8192 not a multiple of 6
        (dict(gpu="a100-80gb", precision="fp8"), "fp8_unsupported"),
        (dict(gpus=1024, tp=8, pp=4, vpp=2, global_batch=96), "vpp_micro_batches"),  # 3 micro-batches, pp 4
    ],
)
def test_impossible_parallelism_is_a_configuration_error(kw, category):
    with pytest.raises(ConfigurationError) as info:
        evaluate(**kw)
    err = info.value
    assert isinstance(err, ScalefrontError)
    assert err.args[1] == category
    assert "\n" not in str(err.args[0])


@pytest.mark.parametrize(
    "kw, where",
    [
        (dict(gpus=-3), "gpus"),
        (dict(gpus=0), "gpus"),
        (dict(gpus=True), "gpus"),
        (dict(gpus=8.0), "gpus"),
        (dict(tp="8"), "tp"),
        (dict(micro_batch=0), "micro_batch"),
        (dict(zero=5), "zero"),
        (dict(zero=True), "zero"),
        (dict(overlap="bogus"), "overlap"),
        (dict(overlap=1.5), "overlap"),
        (dict(overlap="dp=2"), "overlap"),
        (dict(tokens=-1), "tokens"),
        (dict(tokens=float("nan")), "tokens"),
        (dict(tokens=float("inf")), "tokens"),
        (dict(cost_mode="buy"), "cost_mode"),
        (dict(prices={"rent_usd_per_gpu_hour": -1.0}), "rent_usd_per_gpu_hour"),
        (dict(prices={"rent_usd_per_gpu_hour": float("nan")}), "rent_usd_per_gpu_hour"),
        (dict(prices={"rent_usd_per_gpu_hr": 3.0}), "did you mean 'rent_usd_per_gpu_hour'"),
        (dict(seq_len=0), "seq_len"),
    ],
)
def test_bad_arguments_are_usage_errors(kw, where):
    with pytest.raises(UsageError) as info:
        evaluate(**kw)
    assert isinstance(info.value, ScalefrontError)
    assert where in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "kw, words",
    [(dict(gpus=1024, tp=3), "does not divide gpus"), (dict(gpus=1024, tp=8, pp=4, dp=64), "GPU count")],
    ids=["dp-derived", "dp-given"],
)
def test_impossible_layouts_raise_one_class(kw, words):
    # Whether dp is derived (1024 is not a multiple of tp = 3) or given (8 x 4 x 64 = 2048 GPUs, not 1024), the
    # layout cannot fill the cluster: one class and one category for both (review 2, T22).
    with pytest.raises(ConfigurationError) as info:
        evaluate("llama3-70b", "h100-sxm", **kw)
    assert (info.value.category, info.value.field) == ("gpu_count_mismatch", "gpus")
    assert words in str(info.value) and "\n" not in str(info.value)


# `evaluate` checks its arguments itself: a bad recompute, precision, a float ZeRO stage or a GPU count beyond the
# core's 32 bits is the UsageError the docstring promises, not a ConfigurationError in the core's wording.
@pytest.mark.parametrize(
    "kw",
    [dict(recompute="bogus"), dict(precision="fp16"), dict(zero=1.0), dict(gpus=2**33)],
    ids=["recompute", "precision", "float-zero", "huge-gpus"],
)
def test_bad_choice_arguments_are_usage_errors_too(kw):
    with pytest.raises(UsageError):
        evaluate(**kw)

"""Issue 11's inputs and outputs as a user meets them: software settings on `evaluate` and `scalefront eval`,
prediction intervals, the calibration and error-model commands."""

from __future__ import annotations

import re
import tomllib

import pytest

from helpers import assert_one_line_error, run
from scalefront import ConfigurationError, evaluate
from scalefront.fidelity import validation
from scalefront.inputs.catalog import ModelEntry


def test_126_layers_run_on_pp16_vpp8_with_embedding_and_loss_in_the_split():
    # Llama 3.1 405B's 126 layers on pp 16 x vpp 8 = 128 chunks, as NVIDIA runs it: (126 + 1 + 1) / 128 = 1 unit
    # per chunk. Without the embedding and loss in the split the chunks outnumber the layers.
    kw = dict(model="llama3-405b", gpu="h100-sxm", gpus=2048, tp=8, pp=16, vpp=8, global_batch=512, seq_len=8192)
    with pytest.raises(ConfigurationError) as err:
        evaluate(**kw)
    assert err.value.category == "pp_layers"
    r = evaluate(**kw, embedding_in_split=True, loss_in_split=True)
    assert r.step_time_s > 0
    with pytest.raises(ConfigurationError) as err:
        evaluate(**kw, first_stage_layers=100, last_stage_layers=100)
    assert err.value.category == "uneven_stages" and err.value.field == "first_stage_layers"


def test_moe_parallel_folding_accepts_tp2_dp16_ep32():
    # Qwen3-235B-style layout from Megatron-Bridge: TP 2 x DP 16 = 32 ranks regrouped as ETP 1 x EP 32.
    qwen = ModelEntry(
        name="Qwen3-235B-A22B",
        layers=94,
        hidden=4096,
        heads=64,
        kv_heads=4,
        head_dim=128,
        ffn_hidden=12288,
        gated_mlp=True,
        vocab=151936,
        seq_len=4096,
        moe_experts=128,
        moe_top_k=8,
        moe_ffn_hidden=1536,
    )
    kw = dict(gpu="h100-sxm", gpus=256, tp=2, pp=8, dp=16, ep=32, global_batch=512, embedding_in_split=True)
    kw["loss_in_split"] = True
    with pytest.raises(ConfigurationError) as err:
        evaluate(qwen, **kw)
    assert err.value.category == "ep_dp"
    r = evaluate(qwen, **kw, etp=1)
    assert r.etp == 1 and r.breakdown.ep_comm_s + r.hidden.ep_comm_hidden_s > 0


def test_gradient_dtype_and_fsdp_resharding_are_inputs():
    fp32 = evaluate("llama3-8b", "h100-sxm", 64, tp=1, zero=3)
    bf16 = evaluate("llama3-8b", "h100-sxm", 64, tp=1, zero=3, grad_reduce_dtype="bf16")
    assert fp32.memory.gradients_bytes == pytest.approx(2 * bf16.memory.gradients_bytes)
    keep = evaluate("llama3-8b", "h100-sxm", 64, tp=1, zero=3, reshard_after_forward=False)
    assert keep.memory.weights_bytes > fp32.memory.weights_bytes
    assert keep.grad_reduce_dtype == "fp32" and bf16.grad_reduce_dtype == "bf16"


def test_mla_fields_go_together():
    fields = dict(name="m", layers=4, hidden=1024, heads=8, kv_heads=8, ffn_hidden=4096, gated_mlp=True, vocab=1000)
    with pytest.raises(ValueError, match="MLA fields go together"):
        ModelEntry(**fields, seq_len=1024, mla_kv_lora_rank=512)


def test_intervals_follow_the_level_and_print_in_eval(capsys):
    wide = evaluate(interval=0.9)
    narrow = evaluate(interval=0.5)
    assert wide.interval == 0.9 and narrow.interval == 0.5
    assert wide.step_time_s_lo <= narrow.step_time_s_lo <= narrow.step_time_s_hi <= wide.step_time_s_hi
    code, out, _ = run(["eval", "--interval", "80%"], capsys)
    assert code == 0
    assert re.search(r"step time [0-9.]+ s \(80%: [0-9.]+-[0-9.]+\)", out), out
    code, out, err = run(["eval", "--interval", "1.5"], capsys)
    assert_one_line_error(code, out, err)


def test_calibrate_errors_prints_the_committed_file_and_refuses_to_overwrite(capsys, tmp_path):
    code, out, _ = run(["validate", "--calibrate-errors"], capsys)
    assert code == 0
    doc = tomllib.loads(out)
    assert doc["level"] == validation.INTERVAL_LEVEL and doc["regime"][-1]["name"] == "all"
    target = tmp_path / "model_error.toml"
    target.write_text("keep me")
    code, out, err = run(["validate", "--calibrate-errors", "--out", str(target)], capsys)
    assert_one_line_error(code, out, err)
    assert target.read_text() == "keep me"
    assert run(["validate", "--calibrate-errors", "--out", str(target), "--force"], capsys)[0] == 0
    assert tomllib.loads(target.read_text()) == doc


def test_calibrate_write_updates_only_the_calibrated_lines(capsys, tmp_path):
    from scalefront import _core

    text = _core.data_files()["frameworks.toml"]
    target = tmp_path / "frameworks.toml"
    moved = re.sub(r"(?m)^layer_overhead = [0-9.]+$", "layer_overhead = 0.5", text, count=1)
    assert moved != text
    target.write_text(moved)
    code, _, err = run(["validate", "--calibrate", "--write", str(target)], capsys)
    assert code == 2 and "--force" in err  # an existing file is replaced only when asked
    assert run(["validate", "--calibrate", "--write", str(target), "--force"], capsys)[0] == 0
    # The catalog is current, so writing the fit back restores it exactly.
    assert target.read_text() == text


def test_coverage_command_reports_each_family(capsys):
    code, out, _ = run(["validate", "--coverage"], capsys)
    assert code == 0
    assert "held-out coverage of the 90% intervals" in out

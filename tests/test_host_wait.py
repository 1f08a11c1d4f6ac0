"""The GPU's wait for the host as `eval` shows it (MoE layers' launches, ZeRO-3 collectives issued by tensor): its
own line of the step (and of --json, adding up to the step time) where the host's work outpaces the GPU's, with what
it means; nothing where it does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run

#: Qwen3-30B-A3B (Hugging Face Qwen/Qwen3-30B-A3B config.json): 128 experts of 768, top 8, hidden 2,048.
QWEN3_30B = """\
name = "Qwen3-30B-A3B"
layers = 48
hidden = 2048
heads = 32
kv_heads = 4
head_dim = 128
ffn_hidden = 6144
gated_mlp = true
vocab = 151936
seq_len = 4096
tied_embeddings = false
moe_experts = 128
moe_top_k = 8
moe_ffn_hidden = 768
moe_shared_experts = 0
moe_first_dense_layers = 0
source = "Qwen/Qwen3-30B-A3B config.json; 2025-04"
"""


def _eval(tmp_path: Path, capsys, framework: str, *more: str) -> tuple[int, str, str]:
    model = tmp_path / "qwen3-30b.toml"
    model.write_text(QWEN3_30B, encoding="utf-8")
    argv = ["eval", "--model", str(model), "--gpus", "64", "--tp", "1", "--pp", "1", "--ep", "8"]
    return run([*argv, "--framework", framework, *more], capsys)


def test_eager_small_experts_wait_for_the_host_and_say_so(tmp_path, capsys):
    # 16 local experts looped: 33.4 us x (79.7 + 16.4 x 16) = 11.4 ms of launches a layer, more than its GPU work.
    code, out, err = _eval(tmp_path, capsys, "eager-pytorch")
    assert code == 0, err
    assert "  host wait   " in out
    assert "launch kernels slower than the GPU runs them" in out and "measure --host" in out
    assert all(len(line) <= 80 for line in out.splitlines() if "host_s_per_kernel" in line or "measure --host" in line)
    code, out, err = _eval(tmp_path, capsys, "eager-pytorch", "--json")
    doc = json.loads(out)
    assert doc["host_wait_s"] > 0.1 * doc["step_time_s"]
    parts = ("compute_s", "recompute_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "cp_comm_s", "ep_comm_s")
    parts += ("bubble_s", "optimizer_s", "overhead_s", "framework_s", "host_wait_s")
    assert sum(doc[p] for p in parts) == pytest.approx(doc["step_time_s"], rel=1e-12)


def test_a_framework_whose_host_keeps_ahead_shows_no_wait(tmp_path, capsys):
    code, out, err = _eval(tmp_path, capsys, "megatron-core")
    assert code == 0, err
    assert "host wait" not in out
    code, out, _ = _eval(tmp_path, capsys, "megatron-core", "--json")
    assert json.loads(out)["host_wait_s"] == 0.0


def test_zero3_by_tensor_waits_for_the_host_and_says_why(capsys):
    # DeepSpeed 2021 gathers ZeRO-3 weights by tensor through the list API: a slice and a copy per rank on the
    # host (evaluate::zero3). GPT-3 175B at dp 1,536 with full recomputation: per micro-batch the forward's and the
    # backward's gathers, the recomputed forward's for 3 of each layer's 4 tensors (DeepSpeed keeps fc2 for the
    # backward), and the gradients' reduce-scatter: 385 tensors x 1,536 ranks x 3.75 collectives x 7.3 us = 16.19 s.
    argv = ["eval", "--model", "gpt3-175b", "--gpu", "a100-80gb", "--fabric", "ib-hdr", "--gpus", "1536"]
    argv += ["--tp", "1", "--pp", "1", "--zero", "3", "--global-batch", "1536", "--seq-len", "2048"]
    argv += ["--micro-batch", "1", "--recompute", "full", "--framework", "deepspeed"]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert "ZeRO-3 collectives by tensor slice and copy once per rank" in out
    assert "MoE layers" not in out
    assert all(len(line) <= 80 for line in out.splitlines() if "host" in line)
    code, out, err = run([*argv, "--json"], capsys)
    assert json.loads(out)["host_wait_s"] == pytest.approx(385 * 1536 * 3.75 * 7.3e-6, rel=1e-9)
    code, out, err = run([*argv[:-2], "--framework", "megatron-core"], capsys)
    assert "host wait" not in out

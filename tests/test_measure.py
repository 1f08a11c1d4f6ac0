"""`scalefront measure --replay`: the catalog figures fitted to the recorded H200 and H100 runs in data/measurements/
(checked against medians worked by hand from the JSON), the catalog file it writes (loadable, evaluable, sourced,
identical bytes for identical input, never overwritten without --force), and the layer shapes a plan measures."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from helpers import DATA, assert_one_line_error, files_in, run
from scalefront.fidelity.measure.cases import AttentionCase, GemmCase, ModelShape, build_plan, layer_gemms
from scalefront.fidelity.measure.plan import model_request, scenario_requests
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

H200 = DATA / "measurements" / "h200-gpu-bench.json"
H200_GRID = DATA / "measurements" / "h200-measure-grid.json"
H100 = DATA / "measurements" / "h100-gpu-bench.json"
H100_MOE = DATA / "measurements" / "h100-moe-fp8-bench.json"
H100_QUICK = DATA / "measurements" / "h100-measure-quick.json"
DATE = ["--date", "2026-11-26"]


def _replay(tmp_path: Path, capsys: pytest.CaptureFixture[str], *files: Path, gpu: str = "h200") -> tuple[str, dict]:
    out = tmp_path / "measured.toml"
    argv = ["measure", *(a for f in files for a in ("--replay", str(f))), "--gpu", gpu, "--out", str(out), *DATE]
    code, stdout, err = run(argv, capsys)
    assert code == 0, err
    return stdout, tomllib.loads(out.read_text(encoding="utf-8"))


def test_h200_figures_are_the_medians_worked_by_hand(tmp_path, capsys):
    stdout, doc = _replay(tmp_path, capsys, H200)
    gpu = doc["gpus"]["measured"]
    # 188 of the 192 layer GEMMs are of 50 GFLOP or more, each 3 x 2mkn over its three times; the middle two of
    # the sorted rates: llama3-405b TP 1, 16,384 tokens, qkv (16384 x 16384 x 18432): 29.687 TFLOP / 43.4217 ms =
    # 683.69 TF/s; llama3-8b TP 2, 8,192 tokens, qkv (8192 x 4096 x 3072): 618.48 GFLOP / 0.90437 ms = 683.88.
    # Median 683.78 / 989 = 0.6914.
    assert gpu["gemm_efficiency"] == 0.691
    # The 4 under 50 GFLOP (llama3-8b TP 4-8 projections and a TP 8 qkv): middle two 627.02 and 670.25 TF/s,
    # 648.64 / 989 = 0.6559.
    assert gpu["small_gemm_efficiency"] == 0.656
    # No FP8 layer GEMMs in a gpu_bench.py run: the 10 large FP8 GEMMs, middle two 1,272.21 and 1,273.29 TF/s:
    # 1,272.75 / 1,979 = 0.6431.
    assert gpu["gemm_efficiency_fp8"] == 0.643
    # (copy 4,249.82 + triad 4,407.90) / 2 = 4,328.86 GB/s / 4,800 = 0.9018.
    assert gpu["hbm_efficiency"] == 0.902
    # Not fitted: the attention table (the run has 7 of its 42 cells); the base's (h200), as are the peaks the
    # figures are fractions of.
    base = builtin_catalog().gpu("h200")
    assert gpu["attention_efficiency"] == base.attention_efficiency
    assert gpu["peak_bf16_tflops"] == base.peak_bf16_tflops
    assert "683.8 of 989 TF/s" in stdout and "0.693 -> 0.691" in stdout
    assert "attention_efficiency       not fitted" in stdout


def test_the_catalog_hopper_figures_are_the_replays_of_the_recorded_runs(tmp_path, capsys):
    # h200's kernel figures are the fit of its two records, attention table included; h100-sxm's of its three
    # (its attention table is the H200's: it has no record of all the cells). Rerunning the sources' commands
    # gives the catalog's figures exactly.
    cat = builtin_catalog()
    figures = ("gemm_efficiency", "small_gemm_efficiency", "gemm_efficiency_fp8", "hbm_efficiency")
    _, doc = _replay(tmp_path, capsys, H200, H200_GRID)
    h200 = cat.gpu("h200")
    for name in (*figures, "attention_efficiency", "attention_efficiency_fa2"):
        assert doc["gpus"]["measured"][name] == getattr(h200, name), name
        assert "scalefront measure --replay data/measurements/h200-gpu-bench.json" in h200.sources[name]
    (tmp_path / "h100").mkdir()
    _, doc = _replay(tmp_path / "h100", capsys, H100, H100_MOE, H100_QUICK, gpu="h100-sxm")
    h100 = cat.gpu("h100-sxm")
    for name in figures:
        assert doc["gpus"]["measured"][name] == getattr(h100, name), name
    assert h100.attention_efficiency == h200.attention_efficiency


def test_the_attention_table_reads_short_calls_from_their_forward(tmp_path, capsys):
    # H200 grid, default backend, 128 heads x 32,768 tokens took 225.3 ms forward+backward (GPU-bound: read as
    # measured): 3.5 x 128 x 32768^2 x 256 = 123.1 TFLOP / 0.2253 s = 546.5 TF/s = 0.553 of 989. 2 heads x 1,024
    # tokens took 0.35 ms (under 1 ms: eager PyTorch's launches): its forward, 0.537 GFLOP in 0.0203 ms = 26.5 TF/s,
    # x 0.88 (the backend's median forward+backward / forward over its 37 longer calls) = 23 TF/s = 0.023.
    _, doc = _replay(tmp_path, capsys, H200_GRID)
    table = doc["gpus"]["measured"]["attention_efficiency"]
    assert table[6][5] == 0.553 and table[0][0] == 0.023
    assert len(table) == 7 and {len(row) for row in table} == {6}


def test_h100_gpu_and_moe_records_fit_together(tmp_path, capsys):
    _, doc = _replay(tmp_path, capsys, H100, H100_MOE, gpu="h100-sxm")
    gpu = doc["gpus"]["measured"]
    # moe_bench.py's 32 FP8 forward layer GEMMs (llama3-70b/405b, TP 1-8, 8,192 tokens) take precedence over
    # large shapes; their median is 1,248.1 TF/s / 1,979 = 0.6307.
    assert gpu["gemm_efficiency_fp8"] == 0.631
    assert "median of 32 FP8 layer GEMMs (fwd)" in gpu["sources"]["gemm_efficiency_fp8"]
    # (3,018.60 + 3,065.24) / 2 / 3,350 = 0.9080.
    assert gpu["hbm_efficiency"] == 0.908
    measured = gpu["measured"]
    # Qwen3-30B-A3B experts (2048 -> 768), 32 local, 128 tokens each: 2 x 4096 x 2048 x 768 x 3 = 38.65 GFLOP
    # grouped in 0.155 ms = 249 TF/s (the report's table).
    qwen = [e for e in measured["experts"] if (e["hidden"], e["ffn"], e["experts_local"]) == (2048, 768, 32)]
    assert [round(e["grouped_fwd_tflops"]) for e in qwen] == [249, 572, 671]
    deepseek = [r for r in measured["token_routing"] if r["experts"] == 256 and r["tokens"] == 16384]
    assert deepseek[0]["hidden"] == 7168 and round(deepseek[0]["unpermute_ms"], 1) == 10.0


def test_a_real_run_of_this_tool_replays(tmp_path, capsys):
    # bench.py --quick on a real H100: 253 cases, one of them (Mixtral's FP8 router, 4096 -> 8: FP8 needs dimensions
    # divisible by 16) unavailable on all 4 TP degrees; listed, not refused.
    stdout, doc = _replay(tmp_path, capsys, H100_QUICK, gpu="h100-sxm")
    gpu = doc["gpus"]["measured"]
    assert "not available in the run (4)" in stdout and "must be divisible by 16" in stdout
    assert "driver 580.159.04" in gpu["sources"]["gemm_efficiency"] and gpu["sources"]["hbm_efficiency"].endswith(
        "2026-11-26"
    )
    # copy 2,971.3, triad 3,039.4 GB/s: 3,005.3 / 3,350 = 0.8971.
    assert gpu["hbm_efficiency"] == 0.897
    assert len(gpu["measured"]["gemm_fp8"]) > 0 and all("wgrad_tflops" in p for p in gpu["measured"]["gemm_fp8"])


def test_the_written_entry_loads_evaluates_and_cites_the_run(tmp_path, capsys):
    _replay(tmp_path, capsys, H200)
    path = tmp_path / "measured.toml"
    cat = Catalog.load(path)
    gpu = cat.gpu("measured")
    assert gpu.gemm_efficiency == 0.691 and gpu.measured is not None
    assert gpu.measured.device == "NVIDIA H200"
    # 192 layer GEMMs over 126 distinct shapes (some shapes recur across models and token counts).
    assert len(gpu.measured.gemm_bf16) == len({(p.m, p.k, p.n) for p in gpu.measured.gemm_bf16})
    assert {a.backend for a in gpu.measured.attention} == {"default", "cudnn", "flash", "efficient"}
    source = gpu.sources["gemm_efficiency"]
    assert "NVIDIA H200" in source and "torch 2.11.0+cu130" in source and "gpu_bench.py" in source
    assert source.endswith("; 2026-11-26") and "scalefront measure" in source
    # The price is the base's, so eval, bom and roi can use the entry.
    code, _out, err = run(["eval", "--catalog", str(path), "--gpu", "measured", "--gpus", "64", "--tp", "8"], capsys)
    assert code == 0, err


def test_identical_bytes_and_no_overwrite_without_force(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    texts = []
    for folder in (a, b):
        argv = ["measure", "--replay", str(H200), "--gpu", "h200", "--out", str(folder / "h200m.toml"), *DATE]
        assert run(argv, capsys)[0] == 0
        texts.append((folder / "h200m.toml").read_bytes())
    assert texts[0].replace(b"/a/", b"/b/") == texts[1]
    argv = ["measure", "--replay", str(H200), "--gpu", "h200", "--out", str(a / "h200m.toml"), *DATE]
    assert_one_line_error(*run(argv, capsys), "already exists", "--force")
    (a / "h200m.toml").write_text("old", encoding="utf-8")
    assert run([*argv, "--force"], capsys)[0] == 0
    assert (a / "h200m.toml").read_bytes() == texts[0]


def test_the_device_name_finds_the_catalog_gpu(tmp_path, capsys):
    # "NVIDIA H100 80GB HBM3": H100 names two catalog GPUs; 80GB picks h100-sxm.
    out = tmp_path / "x.toml"
    code, stdout, err = run(["measure", "--replay", str(H100), "--out", str(out), *DATE], capsys)
    assert code == 0, err
    assert "fitted figures (h100-sxm -> measured)" in stdout
    assert files_in(tmp_path) == ["x.toml"]


def test_layer_gemms_by_hand():
    cat = builtin_catalog()
    llama = ModelShape.from_fields("llama3-70b", cat.model("llama3-70b").model_dump())
    # 64 heads of 128 and 8 KV heads: QKV 8192 -> (8192 + 2 x 1024) / 8; MLP 28,672 wide, gated.
    assert layer_gemms(llama, 8) == [
        ("qkv", 8192, 1280),
        ("proj", 1024, 8192),
        ("up", 8192, 7168),
        ("down", 3584, 8192),
    ]
    ds = ModelShape.from_fields("deepseek-v3", cat.model("deepseek-v3").model_dump())
    # MLA: q 7168 -> 1536 -> 128 x (128 + 64) / 8; kv 7168 -> 512 + 64, 512 -> 128 x (128 + 128) / 8; output
    # 128 x 128 / 8 -> 7168; the 3 dense layers' MLP (18,432); router to 256 experts; one shared 2,048 expert.
    assert layer_gemms(ds, 8) == [
        ("q_down", 7168, 1536),
        ("q_up", 1536, 3072),
        ("kv_down", 7168, 576),
        ("kv_up", 512, 4096),
        ("proj", 2048, 7168),
        ("up", 7168, 4608),
        ("down", 2304, 7168),
        ("router", 7168, 256),
        ("shared_up", 7168, 512),
        ("shared_down", 256, 7168),
    ]


def test_the_default_scenario_plan():
    wanted = scenario_requests("ib-vs-roce", builtin_catalog())
    (r,) = wanted.requests
    # tp searched up to 8 (all divide 64 heads and 8 KV heads); micro-batch 1, 2 x 8,192 / cp 1, 2.
    assert (r.tps, r.tokens, r.batches) == ((1, 2, 4, 8), (4096, 8192, 16384), (1, 2))
    assert not wanted.fp8
    plan = build_plan(wanted.requests, fp8=False, experts=True, quick=False)
    gemms = [c for c in plan.cases if isinstance(c, GemmCase)]
    assert sum(len(c.uses) for c in gemms) == 4 * 4 * 3
    # Attention: 64/8 heads over TP 1-8, micro-batch 1 and 2, default and flash backends; no experts (dense).
    assert plan.count(type(plan.cases[-1])) == 4 * 2 * 2
    quick = build_plan(wanted.requests, fp8=True, experts=True, quick=True)
    assert quick.rep_ms < plan.rep_ms and {c.dtype for c in quick.cases if isinstance(c, GemmCase)} == {"bf16", "fp8"}


def test_the_attention_grid_adds_every_cell_of_the_catalog_table_once():
    wanted = scenario_requests("ib-vs-roce", builtin_catalog())
    plain = build_plan(wanted.requests, fp8=False, experts=False, quick=True)
    grid = build_plan(wanted.requests, fp8=False, experts=False, quick=True, attention_grid=True)
    cells = {(c.heads, c.seq, c.backend) for c in grid.cases if isinstance(c, AttentionCase) and c.batch == 1}
    # 7 head counts x 6 sequence lengths x 2 backends, even in a quick plan (default backend only otherwise).
    assert len(cells) == 7 * 6 * 2
    # The scenario's own 64/8 heads over TP 1-8 at 8,192 tokens, batch 1 (64/8, 32/4, 16/2, 8/1) are grid cells
    # (one key-value head per eight): counted once.
    assert grid.count(AttentionCase) == plain.count(AttentionCase) + 7 * 6 * 2 - 4


def test_a_moe_model_plan_measures_its_experts_by_tokens_per_expert():
    wanted = model_request("mixtral-8x7b", builtin_catalog(), tps=[1, 8], eps=[8])
    plan = build_plan(wanted.requests, fp8=False, experts=True, quick=True)
    experts = [c for c in plan.cases if type(c).__name__ == "ExpertCase"]
    # 32,768 tokens x top-2 x ep 8 / 8 experts = 65,536 per expert (the model's), and the 128/512/2,048 ladder;
    # expert TP = the TP degree (1, 8): widths 14,336 and 1,792; one local expert (8 / ep 8).
    assert sorted({(c.ffn, c.tokens_per_expert) for c in experts}) == [
        (f, n) for f in (1792, 14336) for n in (128, 512, 2048, 65536)
    ]
    assert {c.experts_local for c in experts} == {1}

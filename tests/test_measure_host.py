"""`scalefront measure --host`: the host probe (eager PyTorch's time per kernel launch, and each MoE layer's host
time against its GPU busy time) planned, run on a fake device, recorded, replayed and printed; the recorded H100
probe read back; bad host rows refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import DATA, assert_one_line_error, files_in, run
from helpers.measure import FakeDevice
from scalefront.cli import measure as measure_cli
from scalefront.fidelity.measure import bench
from scalefront.fidelity.measure.cases import Case, HostCase, build_plan
from scalefront.fidelity.measure.host_rows import host_section, host_terms
from scalefront.fidelity.measure.plan import model_request
from scalefront.fidelity.measure.rows import Problem
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

#: The fake node: 30 us of host time per kernel; a grouped layer launches 120 kernels, a loop 80 plus 15 per local
#: expert; the GPU is busy 2 ms a layer.
HOST_US, GPU_BUSY_MS = 30.0, 2.0


def _kernels(c: HostCase) -> int:
    return 120 if c.grouped else 80 + 15 * c.experts_local


class HostFake(FakeDevice):
    def measure(self, case: Case) -> dict[str, Any]:
        if not isinstance(case, HostCase):
            return super().measure(case)
        self.measured.append(case)
        if case.kind == "launch":
            return {"cpu": "Fake CPU", "elementwise_host_us": 7.0, "gemm_host_us": 16.0, "linear_fwdbwd_host_us": 27.0}
        k = _kernels(case)
        host_ms = k * HOST_US / 1e3
        return {"kernels": k, "host_ms": host_ms, "gpu_busy_ms": GPU_BUSY_MS, "wall_ms": max(host_ms, GPU_BUSY_MS)}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(measure_cli, "open_device", HostFake)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795651200")


def test_the_plan_probes_each_moe_layer_looped_and_grouped_at_its_local_experts():
    catalog = builtin_catalog()
    moe = model_request("mixtral-8x7b", catalog, tps=[1], tokens=[4096], eps=[2, 8]).requests
    host = [
        c for c in build_plan(moe, fp8=False, experts=False, quick=True, host=True).cases if isinstance(c, HostCase)
    ]
    # The launch loops once, then each EP degree x tokens, looped and grouped: Mixtral's 8 experts over EP 2 and 8
    # leave 4 and 1 local.
    assert host[0].kind == "launch"
    assert [(c.experts_local, c.grouped) for c in host[1:]] == [(4, False), (4, True), (1, False), (1, True)]
    assert {(c.hidden, c.ffn, c.experts, c.top_k, c.tokens) for c in host[1:]} == {(4096, 14336, 8, 2, 4096)}
    # DeepSeek-V3's experts hold 4 x 3 x 7,168 x 2,048 = 176 MB of weights and gradients each: 16 GB hold 90 of
    # them, so EP 1 probes 90 of its 256 (the kernels per expert extrapolate) and EP 8 its 32.
    dsv3 = model_request("deepseek-v3", catalog, tps=[1], tokens=[4096], eps=[1, 8]).requests
    plan = build_plan(dsv3, fp8=False, experts=False, quick=True, host=True)
    assert [c.experts_local for c in plan.cases if isinstance(c, HostCase)][1::2] == [90, 32]
    dense = model_request("llama3-8b", catalog, tps=[1]).requests
    plan = build_plan(dense, fp8=False, experts=False, quick=True, host=True)
    assert [c.kind for c in plan.cases if isinstance(c, HostCase)] == ["launch"]
    assert not any(isinstance(c, HostCase) for c in build_plan(dense, fp8=False, experts=False, quick=True).cases)


def test_measure_host_prints_records_and_replays_the_probe(tmp_path, capsys, fake):
    out, record = tmp_path / "poc.toml", tmp_path / "poc.json"
    argv = ["measure", "--model", "mixtral-8x7b", "--tp", "1", "--ep", "8", "--host", "--quick"]
    code, stdout, err = run([*argv, "--out", str(out), "--record", str(record)], capsys)
    assert code == 0, err
    # One local expert: the loop launches 80 + 15 = 95 kernels, 2.85 ms of host time at 30 us against 2 ms of GPU.
    line = "mixtral-8x7b 32768 tokens, 1 experts local, loop: 95 kernels, host 2.85 ms, GPU busy 2.00 ms"
    assert line in stdout
    assert "us per kernel launched: elementwise 7.0, gemm 16.0, linear fwdbwd 27.0" in stdout
    assert "30.0 us of host time per kernel (median); host-bound (host time over GPU busy time) in 2" in stdout
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert saved["plan"]["host"] == 3 and len(saved["host"]) == 3
    code, again, err = run(["measure", "--replay", str(record), "--out", str(tmp_path / "r.toml")], capsys)
    assert code == 0, err
    assert line in again
    assert "--host" in out.read_text(encoding="utf-8")  # the command the entry cites
    # One local-expert count (EP 8: 1 of 8) fixes no line: only the time per kernel is measured, the kernel counts
    # stay eager PyTorch's, with their sources.
    eager, built_in = Catalog.load(out).framework("poc-eager"), builtin_catalog().framework("eager-pytorch")
    assert eager.host_s_per_kernel == 3e-05 and eager.moe_host_kernels == built_in.moe_host_kernels
    assert eager.sources["moe_host_kernels"] == built_in.sources["moe_host_kernels"]


def test_the_recorded_h100_probe_reads_back_host_bound_small_expert_layers():
    doc = json.loads((DATA / "measurements" / "h100-host-probe.json").read_text(encoding="utf-8"))
    launch, layers, failed = host_section(doc, Problem("h100-host-probe.json"))
    assert failed == [] and len(layers) == 56
    assert launch is not None and launch.host_us["elementwise"] == pytest.approx(7.34, abs=0.01)
    # Qwen3-30B-A3B at EP 8 (16 of 128 experts local), 4,096 tokens, grouped_mm: 125 kernels, 5.84 ms of host time
    # against 1.10 ms of GPU work: the host sets the pace.
    (row,) = [
        r for r in layers if r.model == "qwen3-30b-a3b" and r.experts_local == 16 and r.grouped and r.tokens == 4096
    ]
    assert row.kernels == 125 and row.host_ms == pytest.approx(5.84, abs=0.01)
    assert row.gpu_busy_ms == pytest.approx(1.10, abs=0.01)
    # DeepSeek-V3's 64 local experts of 2,048 at 16,384 tokens as grouped GEMMs keep the GPU busy 27.7 ms against
    # 5.3 ms of host time; as a loop the host's 1,132 launches take as long as the GPU's work (29.2 against 28.7).
    (big,) = [
        r for r in layers if r.model == "deepseek-v3" and r.experts_local == 64 and r.tokens == 16384 and r.grouped
    ]
    assert big.gpu_busy_ms > 5 * big.host_ms


def _recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict[str, Any]]:
    """A recorded --host run of Mixtral 8x7B at EP 8 on the fake device: the record's path and its JSON (HBM, the
    GEMMs, attention, experts, and the host probe's launch row and two MoE layers)."""
    record = tmp_path / "poc.json"
    argv = ["measure", "--model", "mixtral-8x7b", "--tp", "1", "--ep", "8", "--host", "--quick", "--no-fp8"]
    assert run([*argv, "--out", str(tmp_path / "a.toml"), "--record", str(record)], capsys)[0] == 0
    return record, json.loads(record.read_text(encoding="utf-8"))


def _refused_on_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: dict[str, Any], message: str) -> None:
    """`doc` written as a record and replayed: one line with `message`, exit 2, nothing written beside it."""
    bad = tmp_path / "bad" / "run.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = run(["measure", "--replay", str(bad), "--out", str(bad.parent / "x.toml")], capsys)
    assert_one_line_error(code, out, err, message)
    assert files_in(bad.parent) == ["run.json"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"host_ms": float("nan")}, "host[1] (mixtral-8x7b): host_ms: NaN: expected a positive time or rate"),
        ({"kernels": 0}, "host[1] (mixtral-8x7b): kernels: 0: expected a positive whole number"),
        ({"kind": "disk"}, "host[1]: kind: expected 'launch' or 'moe_layer', got 'disk'"),
        ({"kernels": 95.5}, "host[1] (mixtral-8x7b): kernels: expected a whole number, got 95.5"),
    ],
)
def test_a_bad_host_row_is_one_line_and_nothing_is_written(tmp_path, capsys, fake, change, message):
    _, doc = _recorded(tmp_path, capsys)
    doc["host"][1] |= change
    _refused_on_replay(tmp_path, capsys, doc, message)


def test_host_is_a_measuring_option_not_a_replay_one(tmp_path, capsys):
    record = DATA / "measurements" / "h100-measure-quick.json"
    code, out, err = run(["measure", "--replay", str(record), "--host", "--out", str(tmp_path / "x.toml")], capsys)
    assert_one_line_error(code, out, err, "--host measures (leave it out)")
    assert files_in(tmp_path) == []


def test_the_eager_frameworks_host_terms_are_the_recorded_probes():
    # data/frameworks.toml's eager-pytorch host figures are host_terms of the recorded probe (what
    # benchmarks/host_terms.py prints), to three significant figures.
    doc = json.loads((DATA / "measurements" / "h100-host-probe.json").read_text(encoding="utf-8"))
    terms = host_terms(host_section(doc, Problem("h100-host-probe.json"))[1])
    assert terms is not None and (terms.layers, terms.looped) == (56, 28)
    eager = builtin_catalog().framework("eager-pytorch")
    for name in ("host_s_per_kernel", "moe_host_kernels", "moe_host_kernels_per_expert"):
        assert getattr(eager, name) == float(f"{getattr(terms, name):.3g}"), name
    assert builtin_catalog().framework("megatron-core").host_s_per_kernel == 0.0
    script = DATA.parent / "benchmarks" / "host_terms.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert "host_s_per_kernel = 3.34e-05" in done.stdout and "moe_host_kernels_per_expert = 16.4" in done.stdout


def test_a_run_with_two_expert_counts_writes_every_host_term_and_a_host_only_run_only_them(tmp_path, capsys, fake):
    # Mixtral's 8 experts over EP 2 and 8: 4 and 1 local. The fake loop launches 80 + 15 x 4 = 140 and 95 kernels:
    # the line through them has intercept 80 and slope 15; every layer takes 30 us of host time a kernel.
    record = tmp_path / "poc.json"
    argv = ["measure", "--model", "mixtral-8x7b", "--tp", "1", "--ep", "2,8", "--host", "--quick", "--no-fp8"]
    code, stdout, err = run([*argv, "--out", str(tmp_path / "poc.toml"), "--record", str(record)], capsys)
    assert code == 0, err
    assert "[frameworks.poc-eager]; use it with --catalog" in stdout
    eager = Catalog.load(tmp_path / "poc.toml").framework("poc-eager")
    assert (eager.host_s_per_kernel, eager.moe_host_kernels, eager.moe_host_kernels_per_expert) == (3e-05, 80.0, 15.0)
    assert eager.sources["moe_host_kernels"].startswith("measured: kernels beside the experts")
    assert eager.layer_overhead == builtin_catalog().framework("eager-pytorch").layer_overhead
    # The host probe alone (bench.py --only-host): a catalog file with the framework entry and no GPU.
    doc = json.loads(record.read_text(encoding="utf-8"))
    only = {k: v for k, v in doc.items() if k not in ("copy_GBps", "triad_GBps")}
    only |= {
        "gemms": [],
        "attention": [],
        "experts": [],
        "plan": {"hbm": 0, "gemms": 0, "attention": 0, "experts": 0, "host": 5},
    }
    path = tmp_path / "only.json"
    path.write_text(json.dumps(only), encoding="utf-8")
    code, stdout, err = run(["measure", "--replay", str(path), "--out", str(tmp_path / "only.toml")], capsys)
    assert code == 0, err
    catalog = Catalog.load(tmp_path / "only.toml")
    assert catalog.framework("only-eager").moe_host_kernels_per_expert == 15.0
    assert "[gpus." not in (tmp_path / "only.toml").read_text(encoding="utf-8")
    assert "host-bound (host time over GPU busy time) in 4" in stdout


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda doc: doc.update(host={"kind": "launch"}), "host: expected a list of measurements"),
        (lambda doc: doc["host"].pop(), "host: 2 rows, but the run planned 3 (a partial run)"),
        (lambda doc: doc["host"].__setitem__(0, "launch"), 'host[0]: expected an object, got "launch"'),
    ],
)
def test_a_cut_or_malformed_host_section_is_one_line(tmp_path, capsys, fake, edit, message):
    _, doc = _recorded(tmp_path, capsys)
    edit(doc)
    _refused_on_replay(tmp_path, capsys, doc, message)


def test_a_host_row_the_run_could_not_measure_is_listed_not_refused(tmp_path, capsys, fake):
    record, doc = _recorded(tmp_path, capsys)
    doc["host"][2] = {k: v for k, v in doc["host"][2].items() if k in ("kind", "model")} | {"error": "OOM"}
    record.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = run(["measure", "--replay", str(record), "--out", str(tmp_path / "r.toml")], capsys)
    assert code == 0, err
    assert "not available in the run" in out and "host[2] host moe_layer: OOM" in out


def test_bench_only_host_records_the_probe_alone_and_summarises_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench.py"])
    argv = ["--quick", "--only-host", "--model", "mixtral-8x7b", "--tp", "1", "--ep", "2,8"]
    code = bench.main([*argv, "--models-dir", str(DATA / "models"), "--out", str(tmp_path)], device=HostFake)
    assert code == 0
    out, err = capsys.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    # The launch loops and 4 MoE layers (2 EP degrees, looped and grouped) at 30 us a kernel; no GPU kernel.
    assert summary["cases"] == 5 and summary["host_moe_us_per_kernel_median"] == 30.0
    assert summary["gemm_bf16_median_tflops"] is None and summary["hbm_copy_gbytes_per_s"] is None
    doc = json.loads((tmp_path / "measure-run.json").read_text(encoding="utf-8"))
    assert doc["plan"] == {"hbm": 0, "gemms": 0, "attention": 0, "experts": 0, "host": 5}
    code, _, err = run(
        ["measure", "--replay", str(tmp_path / "measure-run.json"), "--out", str(tmp_path / "n.toml")], capsys
    )
    assert code == 0, err
    assert Catalog.load(tmp_path / "n.toml").framework("n-eager").moe_host_kernels_per_expert == 15.0

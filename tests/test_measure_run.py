"""`scalefront measure` on a device, without a GPU: the benchmark loop against a fake device that times every case
at fixed rates (so each fitted figure is a rate worked by hand over the datasheet), its progress (count, rate, ETA
on a terminal, silent when piped), Ctrl-C leaving nothing written, the record it keeps for --replay, the message
without PyTorch, and bench.py, the same loop as a script for a bare GPU box."""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import DATA, assert_one_line_error, files_in, run
from helpers.measure import FakeDevice
from scalefront.cli import measure as measure_cli
from scalefront.fidelity.measure import bench, session
from scalefront.fidelity.measure.driver import Status, run_plan
from scalefront.inputs.catalog.loader import builtin_catalog


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> list[FakeDevice]:
    """The command's device is a FakeDevice (the list holds the one it opened)."""
    opened: list[FakeDevice] = []

    def open_device(rep_ms: int) -> FakeDevice:
        opened.append(FakeDevice(rep_ms))
        return opened[-1]

    monkeypatch.setattr(measure_cli, "open_device", open_device)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795651200")  # 2026-11-26
    return opened


def test_a_run_fits_the_rates_it_measured(tmp_path, capsys, fake):
    out, record = tmp_path / "poc.toml", tmp_path / "poc.json"
    argv = ["measure", "--model", "llama3-8b", "--fp8", "--out", str(out), "--record", str(record)]
    code, stdout, err = run(argv, capsys)
    assert code == 0, err
    assert err == ""  # progress is for terminals; piped, stderr stays quiet
    from scalefront.inputs.catalog.loader import Catalog

    gpu = Catalog.load(out).gpu("poc")
    # The device's name picks h100-sxm (H100, 80GB): 700 / 989 = 0.7078; 1,400 / 1,979 = 0.7074; median(3,000,
    # 3,100) = 3,050 / 3,350 = 0.9104. The attention table is fitted only from a run of all its cells
    # (--attention-grid): the base's stays.
    figures = ("gemm_efficiency", "gemm_efficiency_fp8")
    assert [getattr(gpu, f) for f in figures] == [0.708, 0.707]
    assert gpu.hbm_efficiency == 0.91
    base = builtin_catalog().gpu("h100-sxm")
    assert gpu.attention_efficiency == base.attention_efficiency
    assert "attention_efficiency       not fitted" in stdout
    assert "driver 580.159.04" in gpu.sources["gemm_efficiency"]
    assert gpu.sources["gemm_efficiency"].endswith("2026-11-26")
    # Every case printed as it finished: HBM, 16 BF16 + 16 FP8 GEMM shapes, 4 TP x 2 backends of attention.
    assert stdout.count("gemm bf16 ") == 16 and stdout.count("gemm fp8 ") == 16
    assert stdout.count("attention 32/8 heads") == 2 and "copy 3000 GB/s, triad 3100 GB/s" in stdout
    # The record replays to the same entry.
    again = tmp_path / "again.toml"
    assert run(["measure", "--replay", str(record), "--out", str(again), "--name", "poc"], capsys)[0] == 0
    assert _without_command(again) == _without_command(out)


def _without_command(path: Path) -> list[str]:
    return [line.split("`scalefront measure")[0] for line in path.read_text(encoding="utf-8").splitlines()[3:]]


def test_ctrl_c_writes_nothing(tmp_path, capsys, monkeypatch):
    def open_device(rep_ms: int) -> FakeDevice:
        return FakeDevice(rep_ms, interrupt_at=5)

    monkeypatch.setattr(measure_cli, "open_device", open_device)
    argv = ["measure", "--model", "llama3-8b", "--out", str(tmp_path / "a.toml"), "--record", str(tmp_path / "a.json")]
    code, _, err = run(argv, capsys)
    assert code == 130 and "interrupted; nothing was written" in err
    assert files_in(tmp_path) == []


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_counts_and_estimates(tmp_path, capsys, fake, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code, _stdout, _ = run(["measure", "--model", "llama3-8b", "--quick", "--out", str(tmp_path / "q.toml")], capsys)
    assert code == 0
    shown = terminal.getvalue()
    # --quick: HBM, 16 GEMM shapes, 4 attention runs (default backend only).
    assert "measuring 1 / 21 benchmarks" in shown and "measuring 21 / 21 benchmarks (100%)" in shown
    assert re.search(r"[0-9.]+k?/s  ETA \d+s", shown)


def test_the_driver_reports_count_rate_and_eta():
    from scalefront.fidelity.measure.cases import build_plan
    from scalefront.fidelity.measure.plan import model_request
    from scalefront.inputs.catalog.loader import builtin_catalog

    wanted = model_request("llama3-8b", builtin_catalog(), tps=[1])
    plan = build_plan(wanted.requests, fp8=False, experts=False, quick=True)
    ticks = iter(range(100))  # one second per clock reading: the start, then one after each case
    seen: list[Status] = []
    record = run_plan(
        plan,
        FakeDevice(),
        date="2026-11-26",
        command="test",
        clock=lambda: float(next(ticks)),
        on_result=lambda c, v, s: seen.append(s),
    )
    # HBM, 4 GEMM shapes, 1 attention run: 6 cases at one per second.
    assert [(s.done, s.total, s.rate) for s in seen[:2]] == [(1, 6, 1.0), (2, 6, 1.0)]
    assert [s.eta_s for s in seen] == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    assert record["plan"] == {"gemms": 4, "attention": 1, "experts": 0, "hbm": 1}
    assert [r["gemm"] for r in record["gemms"]] == ["qkv", "proj", "up", "down"]


def test_without_pytorch_one_line_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    monkeypatch.delitem(sys.modules, "scalefront.fidelity.measure.torch_device", raising=False)
    code, out, err = run(["measure", "--out", str(tmp_path / "x.toml")], capsys)
    assert_one_line_error(code, out, err, "pip install 'scalefront[measure]'")
    assert files_in(tmp_path) == []
    assert session.INSTALL in err


def test_bench_script_writes_a_record_and_one_json_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench.py"])
    code = bench.main(
        [
            "--quick",
            "--model",
            "mixtral-8x7b",
            "--tp",
            "1",
            "--models-dir",
            str(DATA / "models"),
            "--out",
            str(tmp_path),
        ],
        device=FakeDevice,
    )
    assert code == 0
    out, err = capsys.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["device"] == "NVIDIA H100 80GB HBM3" and summary["errors"] == 0
    assert summary["gemm_bf16_median_tflops"] == 700.0 and summary["gemm_fp8_median_tflops"] == 1400.0
    assert (
        summary["attention_fwdbwd_median_tflops"] == {"default": 490.0}
        and summary["experts_grouped_fwd_median_tflops"] == 350.0
    )
    assert "[1/" in err and "ETA" in err
    record = tmp_path / "measure-run.json"
    assert summary["record"] == str(record)
    code, stdout, err = run(["measure", "--replay", str(record), "--out", str(tmp_path / "m.toml")], capsys)
    assert code == 0, err
    assert "routed experts, 128 tokens per expert" in stdout


def test_bench_script_runs_without_scalefront_installed():
    # -S: no site-packages, so neither scalefront's extension nor pydantic can be imported; the device half of the
    # package must load on its own (PyTorch is imported only when a run starts).
    script = Path(bench.__file__)
    done = subprocess.run([sys.executable, "-S", str(script), "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "--quick" in done.stdout


def test_the_card_in_hand_is_the_base_not_the_scenarios_gpu(tmp_path, capsys, monkeypatch):
    class H200(FakeDevice):
        def describe(self) -> dict[str, Any]:
            return super().describe() | {"gpu": "NVIDIA H200"}

    monkeypatch.setattr(measure_cli, "open_device", H200)
    # The default scenario sweeps h100-sxm; the run is on an H200, whose datasheet the figures are fractions of:
    # HBM median(3,000, 3,100) / 4,800 = 0.635.
    code, stdout, err = run(["measure", "--quick", "--out", str(tmp_path / "h.toml")], capsys)
    assert code == 0, err
    assert "measuring NVIDIA H200 (h200)" in stdout and "fitted figures (h200 -> measured)" in stdout
    assert "hbm_efficiency             0.902 -> 0.635" in stdout


def test_the_written_command_writes_the_same_entry_again(tmp_path, capsys):
    # The file's "# Command:" line names every option that decides what it holds (--name, --date, --catalog too):
    # run as written, it writes the same bytes.
    recorded = DATA / "measurements" / "h200-gpu-bench.json"
    out = tmp_path / "a.toml"
    argv = ["measure", "--replay", str(recorded), "--out", str(out), "--name", "my-h200", "--date", "2026-11-01"]
    assert run(argv, capsys)[0] == 0
    command = next(line for line in out.read_text().splitlines() if line.startswith("# Command: "))
    words = shlex.split(command.removeprefix("# Command: "))
    assert words[:2] == ["scalefront", "measure"] and "--name" in words and "--date" in words
    first = out.read_bytes()
    out.unlink()
    assert run([*words[1:]], capsys)[0] == 0
    assert out.read_bytes() == first

"""`scalefront measure --replay` on bad or partial recorded runs: one line naming the file and the entry, exit 2,
nothing written. Each case is one change away from a recorded run that replays (the H200 and H100 records in
data/measurements/, or a run of the fake device); the fuzz test breaks records at random the same way."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import DATA, assert_one_line_error, files_in, run

H200 = json.loads((DATA / "measurements" / "h200-gpu-bench.json").read_text(encoding="utf-8"))
MOE = json.loads((DATA / "measurements" / "h100-moe-fp8-bench.json").read_text(encoding="utf-8"))


def _measure_record() -> dict[str, Any]:
    """A small record in this tool's format: what `scalefront measure --record` writes."""
    from helpers.measure import FakeDevice
    from scalefront.fidelity.measure.cases import build_plan
    from scalefront.fidelity.measure.driver import run_plan
    from scalefront.fidelity.measure.plan import model_request
    from scalefront.inputs.catalog.loader import builtin_catalog

    wanted = model_request("llama3-8b", builtin_catalog(), tps=[1, 2])
    plan = build_plan(wanted.requests, fp8=False, experts=False, quick=True)
    return run_plan(plan, FakeDevice(), date="2026-11-26", command="scalefront measure --model llama3-8b")


OURS = _measure_record()


def _replay(folder: Path, files: dict[str, bytes], capsys: pytest.CaptureFixture[str], gpu: str = "h200") -> tuple:
    for name, data in files.items():
        (folder / name).write_bytes(data)
    argv = ["measure", *(a for name in files for a in ("--replay", str(folder / name)))]
    return run([*argv, "--gpu", gpu, "--out", str(folder / "out.toml"), "--date", "2026-11-26"], capsys)


def _dumps(doc: Any) -> bytes:
    return json.dumps(doc).encode()  # NaN and Infinity as Python's json writes them (as gpu_bench.py would)


def _changed(doc: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> bytes:
    d = copy.deepcopy(doc)
    change(d)
    return _dumps(d)


def _drop(rows: str, i: int) -> Callable[[dict[str, Any]], None]:
    return lambda d: d[rows].pop(i)


CASES: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "NaN time": (_changed(H200, lambda d: d["gemms"][5].update(fwd_ms=math.nan)), ("gemms[5]", "fwd_ms: NaN")),
    "zero time": (_changed(H200, lambda d: d["attention"][0].update(fwdbwd_ms=0)), ("attention[0]", "fwdbwd_ms: 0")),
    "infinite rate": (_changed(H200, lambda d: d.update(copy_GBps=math.inf)), ("copy_GBps: Infinity",)),
    "negative bandwidth": (_changed(H200, lambda d: d.update(triad_GBps=-1.0)), ("triad_GBps: -1.0",)),
    "text for a time": (_changed(H200, lambda d: d["gemms"][0].update(dgrad_ms="fast")), ("gemms[0]", "dgrad_ms")),
    "missing shape": (_changed(H200, lambda d: d["gemms"][7].pop("k")), ("gemms[7]", "k: missing")),
    "missing pass": (_changed(H200, lambda d: d["gemms"][9].pop("wgrad_ms")), ("gemms[9]", "wgrad_ms: missing")),
    # gemms[3] is llama3-8b TP 1, 4,096 tokens, down: that layer now lacks a GEMM its model's other layers have.
    "missing GEMM of a layer": (_changed(H200, _drop("gemms", 3)), ("gemms", "TP 1, 4096 tokens", "no down GEMM")),
    "no attention section": (_changed(H200, lambda d: d.pop("attention")), ("attention", "partial run")),
    "empty GEMMs": (_changed(H200, lambda d: d.update(gemms=[])), ("gemms", "non-empty list")),
    "a row that is not an object": (_changed(H200, lambda d: d["attention"].append(3)), ("attention[28]",)),
    "truncated JSON": (_dumps(H200)[: len(_dumps(H200)) // 2], ("truncated JSON",)),
    "not JSON": (b"# nccl-tests\n#  size  count  type\n", ("malformed JSON", "line 1")),
    "not UTF-8": (b'{"gpu": "H\xff200"}', ("not a UTF-8",)),
    "another tool's JSON": (b'{"step_time_s": 1.2, "mfu": 0.4}', ("not a recorded GPU benchmark run", "mfu")),
    "a list, not a record": (b"[1, 2]", ("not a recorded GPU benchmark run",)),
    "no GPU name": (_changed(H200, lambda d: d.pop("gpu")), ("gpu: missing",)),
    "moe_bench without experts": (_changed(MOE, lambda d: d.pop("experts")), ("experts", "partial run")),
    "moe_bench NaN unpermute": (
        _changed(MOE, lambda d: d["plumbing"][2].update(unpermute_ms=math.nan)),
        ("plumbing[2]", "unpermute_ms"),
    ),
    "cut-short run of this tool": (_changed(OURS, _drop("gemms", 2)), ("gemms", "planned 8", "partial run")),
    "newer format": (_changed(OURS, lambda d: d.update(format=99)), ("format", "99")),
    "bad date": (_changed(OURS, lambda d: d.update(date="26/11/2026")), ("date", "YYYY-MM-DD")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_recorded_runs(tmp_path, capsys, case):
    data, mentions = CASES[case]
    code, out, err = _replay(tmp_path, {"run.json": data}, capsys, gpu="h100-sxm" if "MOE" in case else "h200")
    assert_one_line_error(code, out, err, "run.json", *mentions)
    assert files_in(tmp_path) == ["run.json"]


def test_the_unbroken_records_replay(tmp_path, capsys):
    for name, doc, gpu in (("h200.json", H200, "h200"), ("moe.json", MOE, "h100-sxm"), ("ours.json", OURS, "h100-sxm")):
        folder = tmp_path / name
        folder.mkdir()
        code, _, err = _replay(folder, {name: _dumps(doc)}, capsys, gpu=gpu)
        assert code == 0, (name, err)


def test_two_gpus_in_one_replay(tmp_path, capsys):
    code, out, err = _replay(tmp_path, {"h200.json": _dumps(H200), "h100.json": _dumps(MOE)}, capsys)
    assert_one_line_error(code, out, err, "h100.json", "NVIDIA H100 80GB HBM3", "NVIDIA H200")
    assert files_in(tmp_path) == ["h100.json", "h200.json"]


def test_the_wrong_base_gpu(tmp_path, capsys):
    # An H200's 684 TF/s layer GEMMs cannot run on an A100 (312 TF/s peak).
    code, out, err = _replay(tmp_path, {"run.json": _dumps(H200)}, capsys, gpu="a100-80gb")
    assert_one_line_error(code, out, err, "run.json", "gemm_efficiency", "a100-80gb", "--gpu")


@pytest.mark.parametrize(
    "argv, mention",
    [
        (["--replay", "r.json", "--model", "llama3-8b"], "--model"),
        (["--replay", "r.json", "--quick"], "--quick"),
        (["ib-vs-roce", "--model", "llama3-8b"], "not both"),
        (["--replay", "r.json", "--name", "a b"], "--name"),
        (["--replay", "r.json", "--date", "2026-13-01"], "--date"),
        (["--tp", "0"], "--tp"),
        (["--model", "llama3-8b", "--record", "out.toml"], "same file"),
    ],
)
def test_bad_arguments(tmp_path, capsys, monkeypatch, argv, mention):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.json").write_bytes(_dumps(H200))
    code, out, err = run(["measure", *argv, "--gpu", "h200", "--out", "out.toml"], capsys)
    assert_one_line_error(code, out, err, mention)
    assert files_in(tmp_path) == ["r.json"]


BAD_VALUES = [math.nan, 0, -1.5, "x", None, math.inf, [], {}]


def _path(draw: st.DrawFn, doc: Any) -> list[str | int]:
    """Keys and indices from the top of `doc` down to a value, chosen by `draw`."""
    path: list[str | int] = []
    while isinstance(doc, dict | list) and doc:
        step: str | int = (
            draw(st.sampled_from(sorted(doc))) if isinstance(doc, dict) else draw(st.integers(0, len(doc) - 1))
        )
        path.append(step)
        doc = doc[step]  # type: ignore[index]
        if draw(st.integers(0, 3)) == 0:
            break
    return path


@st.composite
def breakages(draw: st.DrawFn) -> tuple[str, list[str | int], int]:
    """(record, path to a value, index into BAD_VALUES, or -1 to remove it): one value of a record broken."""
    name = draw(st.sampled_from(["h200", "ours"]))
    return name, _path(draw, {"h200": H200, "ours": OURS}[name]), draw(st.integers(-1, len(BAD_VALUES) - 1))


def _broken(name: str, path: list[str | int], bad: int) -> bytes:
    doc = copy.deepcopy({"h200": H200, "ours": OURS}[name])
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if not path:
        return _dumps(BAD_VALUES[bad])
    if bad < 0:
        del parent[path[-1]]
    else:
        parent[path[-1]] = BAD_VALUES[bad]
    return _dumps(doc)


@settings(derandomize=True, database=None, deadline=None, max_examples=60)
@given(breakages())
def test_fuzzed_records_are_replayed_or_refused_in_one_line(tmp_path_factory, breakage):
    """A broken value is either one the fit does not read (the replay succeeds) or one line, exit 2, nothing
    written; never a traceback."""
    import contextlib
    import io

    from scalefront.cli import main

    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "run.json").write_bytes(_broken(*breakage))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["measure", "--replay", str(folder / "run.json"), "--gpu", "h200", "--out", str(folder / "o.toml")])
    if code == 0:
        assert files_in(folder) == ["o.toml", "run.json"]
    else:
        assert code == 2 and err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue(), err.getvalue()
        assert "run.json" in err.getvalue()
        assert files_in(folder) == ["run.json"]

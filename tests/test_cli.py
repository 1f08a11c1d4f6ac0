"""The `scalefront` command: a few real subprocesses, the rest in-process through scalefront.cli.main."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import scalefront
from helpers import DATA, assert_one_line_error, run
from scalefront import evaluate, schema
from scalefront.inputs.catalog import Catalog

#: `--json` has exactly the export columns (the core's schema), in their order.
REQUIRED_KEYS = set(schema.COLUMNS)


def _script() -> list[str]:
    """The installed console script, next to the interpreter running the tests."""
    exe = Path(sys.executable).parent / "scalefront"
    found = str(exe) if exe.exists() else shutil.which("scalefront")
    if not found:
        pytest.skip("the scalefront console script is not installed")
    return [found]


def _proc(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=60)


def _as_json(evaluation) -> dict:
    return json.loads(json.dumps(evaluation.to_dict()))


# ---------------------------------------------------------------- real subprocesses


@pytest.mark.parametrize(
    "launcher",
    [lambda: _script(), lambda: [sys.executable, "-m", "scalefront"], lambda: [sys.executable, "-m", "scalefront.cli"]],
    ids=["console-script", "python-m-scalefront", "python-m-scalefront.cli"],
)
def test_subprocess_json_equals_evaluate(launcher, tmp_path):
    p = _proc([*launcher(), "eval", "--json", "--gpus", "512", "--pp", "2"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    doc = json.loads(p.stdout)  # exactly one JSON document: json.loads rejects trailing data
    assert isinstance(doc, dict)
    assert set(doc) >= REQUIRED_KEYS
    assert doc == _as_json(evaluate(gpus=512, pp=2))


def test_subprocess_table(tmp_path):
    p = _proc([*_script(), "eval", "--model", "llama3-8b", "--gpus", "64", "--tp", "2"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "where the time goes" in p.stdout
    assert "compute" in p.stdout and "TP comm" in p.stdout


@pytest.mark.parametrize(
    "args",
    [["--gpu", "h100"], ["--gpus", "abc"], ["--tp", "16"]],
    ids=["unknown-gpu", "gpus-abc", "tp16"],
)
def test_subprocess_bad_input_exits_2_with_one_line(args, tmp_path):
    p = _proc([*_script(), "eval", *args], tmp_path)
    assert_one_line_error(p.returncode, p.stdout, p.stderr)


def test_subprocess_malformed_model_file(tmp_path):
    (tmp_path / "m.toml").write_text("name = \nlayers = 2\n", encoding="utf-8")
    p = _proc([sys.executable, "-m", "scalefront", "eval", "--model", "m.toml"], tmp_path)
    assert_one_line_error(p.returncode, p.stdout, p.stderr)
    assert "m.toml" in p.stderr and "TOML" in p.stderr


def test_version(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0
    assert out.strip() == f"scalefront {scalefront.__version__}"


def test_no_command_without_a_terminal_runs_the_default_sweep_and_says_how_to_get_the_ui(capsys):
    # Bare `scalefront` opens the terminal UI only on a terminal (issue 5); piped, it runs the batch sweep of the
    # default scenario, and says why (or, without scalefront-tui installed, how to install it).
    code, out, err = run([], capsys)
    assert code == 0 and "Pareto frontier" in out and "ib-vs-roce" in out
    assert "pip install ./tui" in err or "not a terminal" in err


# ---------------------------------------------------------------- JSON output, in-process


def test_json_has_the_documented_keys(capsys):
    code, out, err = run(["eval", "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert list(doc) == schema.COLUMNS
    step = [m.name for m in schema.METRICS if m.group == "step"]
    assert step == [
        "compute_s",
        "recompute_s",
        "tp_comm_s",
        "pp_comm_s",
        "dp_comm_s",
        "cp_comm_s",
        "ep_comm_s",
        "bubble_s",
        "optimizer_s",
        "overhead_s",
        "framework_s",
        "host_wait_s",
    ]
    assert all(isinstance(doc[k], float) for k in step)
    assert sum(doc[k] for k in step) == pytest.approx(doc["step_time_s"], rel=1e-12)
    # Counts are JSON integers, flags booleans.
    assert all(isinstance(doc[m.name], int) for m in schema.METRICS if m.kind == "count")
    assert isinstance(doc["steps"], int) and isinstance(doc["network_tiers"], int)
    assert (doc["gpu"], doc["gpus"], doc["fabric"], doc["topology"]) == (
        "h100-sxm",
        1024,
        "ib-ndr@default",
        "rail-fat-tree",
    )
    # The output names the fabric's operating mode: a bare id is its default mode (issue 19).
    assert (doc["tp"], doc["pp"], doc["dp"]) == (8, 1, 128)
    assert doc["feasible"] is True


@pytest.mark.parametrize(
    "argv, kw",
    [
        ([], {}),
        (
            ["--model", "mixtral-8x7b", "--gpus", "256", "--tp", "4", "--pp", "2", "--ep", "8", "--overlap", "full"],
            dict(model="mixtral-8x7b", gpus=256, tp=4, pp=2, ep=8, overlap="full"),
        ),
        (
            [
                "--gpus",
                "1024",
                "--tp",
                "8",
                "--pp",
                "4",
                "--vpp",
                "5",
                "--micro-batch",
                "2",
                "--zero",
                "3",
                "--recompute",
                "full",
                "--no-sequence-parallel",
                "--precision",
                "fp8",
            ],
            dict(
                gpus=1024,
                tp=8,
                pp=4,
                vpp=5,
                micro_batch=2,
                zero=3,
                recompute="full",
                sequence_parallel=False,
                precision="fp8",
            ),
        ),
        (
            [
                "--gpu",
                "a100-80gb",
                "--fabric",
                "roce-200g",
                "--topology",
                "fat-tree",
                "--oversubscription",
                "2:1",
                "--tokens",
                "300B",
                "--cost-mode",
                "own",
                "--global-batch",
                "1024",
                "--seq-len",
                "4096",
            ],
            dict(
                gpu="a100-80gb",
                fabric="roce-200g",
                topology="fat-tree",
                oversubscription=2.0,
                tokens=300e9,
                cost_mode="own",
                global_batch=1024,
                seq_len=4096,
            ),
        ),
        (
            ["--tokens", "15T", "--overlap", "dp=0.5,tp=0.25", "--dp", "128", "--cp", "1", "--scale-up", "pcie-gen5"],
            dict(tokens=15e12, overlap="dp=0.5,tp=0.25", dp=128, scale_up="pcie-gen5"),
        ),
        (
            ["--price", "rent_usd_per_gpu_hour=6", "--price", "switch_usd=40,000"],
            dict(prices={"rent_usd_per_gpu_hour": 6.0, "switch_usd": 40000.0}),
        ),
        (["--gpus", "8", "--zero", "0"], dict(gpus=8, zero=0)),  # infeasible: reason in the JSON
    ],
    ids=["defaults", "mixtral", "parallel-flags", "cluster-flags", "suffixes", "prices", "infeasible"],
)
def test_json_equals_evaluate(capsys, argv, kw):
    # The JSON is the evaluation's fields, and, when it does not fit, why (the table's DOES NOT FIT line).
    code, out, err = run(["eval", "--json", *argv], capsys)
    assert code == 0, err
    result = evaluate(**kw)
    assert json.loads(out) == {**_as_json(result), **({"reason": result.reason} if not result.feasible else {})}


def test_price_flag_doubles_rent(capsys):
    _, three, _ = run(["eval", "--json", "--price", "rent_usd_per_gpu_hour=3"], capsys)
    _, six, _ = run(["eval", "--json", "--price", "rent_usd_per_gpu_hour=6"], capsys)
    assert json.loads(six)["cost_to_train_usd"] == pytest.approx(2 * json.loads(three)["cost_to_train_usd"], rel=1e-12)


def test_catalog_flag_adds_a_gpu(capsys, my_gpu_catalog):
    code, out, err = run(
        ["eval", "--json", "--catalog", str(my_gpu_catalog), "--gpu", "my-gpu", "--gpus", "8", "--zero", "0"], capsys
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["gpu"] == "my-gpu" and doc["feasible"] is True  # 200 GB holds what 80 GB cannot
    assert doc == _as_json(evaluate(gpu="my-gpu", gpus=8, zero=0, catalog=Catalog.load(my_gpu_catalog)))


def test_model_file_flag(capsys, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text((DATA / "models" / "llama3-8b.toml").read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err = run(["eval", "--json", "--model", str(path), "--gpus", "64"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["model"] == str(path)
    assert doc["params_total"] == evaluate("llama3-8b", gpus=64).params_total


# ---------------------------------------------------------------- table output


def _shares(table: str) -> dict[str, float]:
    """{component: percent} from the 'where the time goes' block."""
    block = table.split("where the time goes")[1].split("\n\n")[0]
    found = re.findall(r"^  ([A-Za-z][A-Za-z ]+?)\s+[\d.]+ (?:s|ms|us)\s+([\d.]+)%", block, flags=re.M)
    return {name: float(pct) for name, pct in found}


def test_table_names_where_the_time_goes(capsys):
    code, out, err = run(["eval", "--gpus", "1024", "--pp", "4", "--vpp", "5"], capsys)
    assert code == 0 and err == ""
    shares = _shares(out)
    assert {"compute", "TP comm", "DP comm", "PP comm", "pipeline bubble"} <= set(shares)
    assert sum(shares.values()) == pytest.approx(100.0, abs=0.05 * len(shares) + 1e-9)  # each share rounded to 0.1%
    r = evaluate(gpus=1024, pp=4, vpp=5)
    assert shares["compute"] == pytest.approx(100 * r.breakdown.compute_s / r.step_time_s, abs=0.051)
    assert shares["pipeline bubble"] == pytest.approx(100 * r.breakdown.bubble_s / r.step_time_s, abs=0.051)
    assert f"step time {r.step_time_s:.3f} s" in out
    assert f"memory per GPU {r.memory_per_gpu_gb:.1f} GB of 80 GB" in out
    assert "DOES NOT FIT" not in out


def test_table_without_pipeline_has_no_bubble_line(capsys):
    _, out, _ = run(["eval"], capsys)
    assert "pipeline bubble" not in _shares(out)
    assert "compute" in _shares(out)


def test_table_flags_an_infeasible_configuration(capsys):
    code, out, _ = run(["eval", "--gpus", "8", "--zero", "0"], capsys)
    assert code == 0  # an answer, not an error
    r = evaluate(gpus=8, zero=0)
    assert f"DOES NOT FIT: {r.reason}" in " ".join(x.strip() for x in out.splitlines())  # wrapped at 80 columns


# ---------------------------------------------------------------- bad input


BAD = [
    ("unknown-gpu", ["--gpu", "h100-sxn"], "did you mean 'h100-sxm'"),
    ("gpus-negative", ["--gpus", "-3"], "--gpus"),
    ("gpus-zero", ["--gpus", "0"], "--gpus"),
    ("gpus-abc", ["--gpus", "abc"], "--gpus"),
    ("zero-5", ["--zero", "5"], "--zero"),
    ("tp-16-llama70b", ["--tp", "16"], "tp = 16"),
    ("negative-price", ["--price", "rent_usd_per_gpu_hour=-1"], "--price"),
    ("price-no-equals", ["--price", "cheap"], "--price"),
    ("unknown-price", ["--price", "rent_usd_per_gpu_hr=1"], "rent_usd_per_gpu_hour"),
    ("overlap-bogus", ["--overlap", "bogus"], "overlap"),
    ("tokens-negative", ["--tokens", "-1"], "--tokens"),
    ("tokens-abc", ["--tokens", "lots"], "--tokens"),
    ("tokens-inf", ["--tokens", "inf"], "--tokens"),
    ("oversubscription-below-1", ["--oversubscription", "0.5"], "--oversubscription"),
    ("global-batch", ["--global-batch", "513"], "global batch 513"),
    ("unknown-model", ["--model", "llama3-7b"], "unknown model"),
    ("missing-model-file", ["--model", "nowhere.toml"], "nowhere.toml"),
    ("missing-catalog", ["--catalog", "nowhere.toml"], "nowhere.toml"),
    ("precision-choice", ["--precision", "fp16"], "--precision"),
    ("unknown-option", ["--gpu-count", "8"], "--gpu-count"),
    ("ep-on-dense", ["--ep", "2"], "ep = 2"),
]


@pytest.mark.parametrize("args, mention", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_exits_2_with_one_line(capsys, args, mention):
    code, out, err = run(["eval", *args], capsys)
    assert_one_line_error(code, out, err)
    assert mention in err


@pytest.mark.parametrize(
    "text, mention",
    [
        ("name = \nlayers = 2\n", "not valid TOML"),
        (
            (DATA / "models" / "llama3-8b.toml").read_text(encoding="utf-8").replace("hidden = 4096\n", ""),
            "[bad] hidden: missing",
        ),
    ],
    ids=["malformed", "missing-field"],
)
def test_bad_model_file_exits_2(capsys, tmp_path, text, mention):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(["eval", "--model", str(path)], capsys)
    assert_one_line_error(code, out, err)
    assert str(path) in err and mention in err


def test_bad_catalog_file_exits_2(capsys, tmp_path):
    path = tmp_path / "cat.toml"
    path.write_text('[gpus.x]\nname = "x"\n', encoding="utf-8")
    code, out, err = run(["eval", "--catalog", str(path)], capsys)
    assert_one_line_error(code, out, err)
    assert f"{path}: [x]" in err


def test_eval_suggests_the_segment_that_keeps_a_part_filled_nvl72_job_whole(capsys):
    # 128 GB200s fill one NVL72 (18 trays) and 14 trays of the next: the table says so, names the segment NVIDIA's
    # launcher would pick (the greatest divisor of the 32 trays up to 18: 16) and the step time it would give, the
    # one `--nvlink-segment-nodes 16` prints; once given, it says the job runs in segments and stops suggesting.
    # 100 GB200s (25 trays) would take segments of 5, which do not shorten this step: no hint. 1,024 H100s on 8-GPU
    # servers have nothing to suggest.
    job = ["eval", "--model", "gpt3-175b", "--gpu", "gb200", "--gpus", "128", "--tp", "8", "--pp", "4", "--dp", "4"]
    job += ["--global-batch", "32"]
    code, out, err = run(job, capsys)
    assert code == 0, err
    assert "128 GPUs fill 72-GPU NVLink domains in rank order" in out
    hint = re.search(r"segments of 16 servers the step takes ([\d.]+) s \(-\d+%\):\s+--nvlink-segment-nodes 16", out)
    assert hint, out
    code, out, err = run([*job, "--nvlink-segment-nodes", "16"], capsys)
    assert "in NVLink segments of 16 servers" in out and "--nvlink-segment-nodes" not in out
    assert f"step time {hint.group(1)} s" in out
    code, out, err = run(["eval", "--gpu", "gb200", "--gpus", "100", "--tp", "4"], capsys)
    assert code == 0 and "placement" not in out.split("step time")[0]
    code, out, err = run(["eval"], capsys)
    assert code == 0 and "placement" not in out.split("step time")[0]


def test_eval_says_what_selective_recomputation_reruns_where_the_framework_differs(capsys):
    # torchtitan's selective recomputation is its per-operator policy (every other GEMM of a block rerun), not
    # Korthikanti et al.'s: the table says so, within 80 columns, under torchtitan only and only when selective.
    job = ["eval", "--model", "llama3-8b", "--gpus", "8", "--tp", "1", "--global-batch", "16"]
    code, out, err = run([*job, "--framework", "torchtitan", "--recompute", "selective"], capsys)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("  recompute "))
    assert line == "  recompute  selective as torchtitan runs it: every other GEMM of a layer rerun"
    assert len(line) <= 80
    for other in (
        ["--framework", "megatron-core", "--recompute", "selective"],
        ["--framework", "torchtitan", "--recompute", "full"],
    ):
        code, out, err = run([*job, *other], capsys)
        assert code == 0, err
        assert "selective as" not in out


def test_eval_names_the_framework_and_the_software_switches_a_run_changes(capsys):
    # The framework whose terms apply is always named; a switch set away from its default that the settings line
    # does not show is listed by its input name, wrapped within 80 columns.
    code, out, err = run(["eval"], capsys)
    assert code == 0, err
    assert [x for x in out.splitlines() if x.startswith("  software ")] == ["  software   megatron-core"]
    job = ["eval", "--gpus", "64", "--precision", "fp8", "--zero", "3", "--no-reshard-after-forward"]
    flags = ["--fp8-param-gather", "--no-gradient-accumulation-fusion", "--no-tp-async-allreduce"]
    code, out, err = run([*job, *flags], capsys)
    assert code == 0, err
    head = out.split("step time")[0].splitlines()
    start = next(i for i, x in enumerate(head) if x.startswith("  software "))
    block = [head[start], *[x for x in head[start + 1 :] if x.startswith(" " * 13) and x.strip()]]
    assert all(len(x) <= 80 for x in block)
    text = " ".join(x.strip() for x in block)
    assert text.startswith("software   megatron-core; ")
    for said in ("reshard_after_forward off", "fp8_param_gather on", "gradient_accumulation_fusion off"):
        assert said in text
    assert "tp_async_allreduce off" in text


@pytest.mark.parametrize(
    "job",
    [
        [],
        ["--model", "llama3-405b", "--gpus", "64", "--tp", "8"],  # does not fit: the reason wraps too
        ["--model", "mixtral-8x7b", "--gpus", "64", "--ep", "8", "--tp", "1"],
        ["--gpu", "gb200", "--gpus", "100", "--tp", "4"],  # the NVLink-segment hint
        ["--model", "llama3-70b", "--gpus", "64", "--tp", "8", "--pp", "2", "--vpp", "5", "--zero", "3"],
    ],
)
def test_eval_fits_an_80_column_terminal_breaking_only_between_items(capsys, job):
    code, out, err = run(["eval", *job], capsys)
    assert code == 0, err
    assert [x for x in out.splitlines() if len(x) > 80] == []
    # A broken line goes on under its label, and no item is split: the topology name and the throughput stay whole.
    assert "rail-fat-tree" in out and " TFLOP/s per GPU" in out and "global batch " in out


def test_eval_reruns_the_megatron_modules_a_run_names(capsys):
    # `--recompute-modules` takes Megatron-Core's names in any order and spells them one way; the table says what
    # is rerun, and rerunning the whole MoE block costs more than its activation alone. A name Megatron-Core does
    # not have, a repeated one, or modules under another recomputation mode: one line, exit 2.
    job = ["eval", "--model", "mixtral-8x7b", "--gpus", "64", "--ep", "8", "--tp", "1", "--global-batch", "64"]
    code, out, err = run([*job, "--recompute-modules", "moe, layernorm", "--json"], capsys)
    assert code == 0, err
    block = json.loads(out)
    assert block["recompute_modules"] == "layernorm,moe"
    code, out, err = run([*job, "--recompute-modules", "moe_act,layernorm", "--json"], capsys)
    act = json.loads(out)
    assert block["recompute_s"] > act["recompute_s"] > 0 and block["ep_comm_s"] > act["ep_comm_s"]
    assert act["memory_per_gpu_gb"] > block["memory_per_gpu_gb"]
    code, out, err = run([*job, "--recompute-modules", "moe_act,layernorm"], capsys)
    line = next(x for x in out.splitlines() if x.startswith("  recompute "))
    assert line == "  recompute  selective, these modules rerun: moe_act, layernorm" and len(line) <= 80
    for bad in (["--recompute-modules", "attn"], ["--recompute-modules", "mlp,mlp"]):
        code, out, err = run([*job, *bad], capsys)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "--recompute-modules" in err and "core_attn" in err
    code, out, err = run([*job, "--recompute", "full", "--recompute-modules", "core_attn"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "recompute_modules" in err, err
    # --help lists the names it takes, and shows no empty default.
    code, out, err = run(["eval", "--help"], capsys)
    text = " ".join(out.split())
    assert "--recompute-modules NAME,..." in text and "any of core_attn, moe_act, layernorm" in text
    assert "(default: )" not in text

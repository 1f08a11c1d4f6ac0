"""`scalefront inference` and `scalefront.inputs.serving`: one serving configuration, a serving scenario's frontiers
under SLOs, and the bad inputs each refuses in one line."""

from __future__ import annotations

import csv
import io
import json

import pytest

from helpers import DATA, assert_one_line_error, files_in, run
from scalefront.engine.serving import run_serving_sweep
from scalefront.errors import ConfigurationError
from scalefront.inputs.scenario.serving import read_serving_scenario
from scalefront.inputs.serving import serve_model
from scalefront.schema import SERVING_METRICS

SCENARIO = """[serving]
model = "llama3-70b"
gpu = "h100-sxm"
gpus = 16
fabric = ["ib-ndr", "roce-400g"]
tp = [2, 4, 8]
mode = ["colocated", "disaggregated"]
batch = [1, 16, 64, 256]
input_tokens = 1000
output_tokens = 500

[slo]
tpot_s = 0.05
"""


def test_the_default_is_llama3_70b_on_one_h100_server(capsys):
    code, out, err = run(["inference", "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert (result["model"], result["gpu"], result["gpus"], result["tp"]) == ("llama3-70b", "h100-sxm", 8, 8)
    # Every serving metric of the core's schema, each named with its unit.
    assert {m.name for m in SERVING_METRICS} <= set(result)
    assert result["instances"] == 1 and result["instance_gpus"] == 8
    # Throughput per GPU is the cluster's over its 8 GPUs; a user sees one token per TPOT.
    assert result["output_tokens_per_s_per_gpu"] == pytest.approx(result["output_tokens_per_s"] / 8)
    assert result["output_tokens_per_s_per_user"] == pytest.approx(1 / result["tpot_s"])
    text = run(["inference"], capsys)[1]
    assert "TTFT" in text and "per million output tokens" in text


def test_cost_per_million_tokens_follows_the_price_and_the_throughput(capsys):
    # Rent: the GPUs' hours at the catalog's rent; twice the rent, twice the cost per token (same throughput).
    base = serve_model(batch=64)
    doubled = serve_model(batch=64, prices={"rent_usd_per_gpu_hour": 2 * base["cost_usd_per_hour"] / 8})
    assert doubled["output_tokens_per_s"] == base["output_tokens_per_s"]
    assert doubled["cost_usd_per_million_tokens"] == pytest.approx(2 * base["cost_usd_per_million_tokens"])
    expected = base["cost_usd_per_hour"] / (base["output_tokens_per_s"] * 3600) * 1e6
    assert base["cost_usd_per_million_tokens"] == pytest.approx(expected)


def test_a_larger_batch_trades_latency_for_throughput():
    small, large = serve_model(batch=8), serve_model(batch=512)
    assert large["tpot_s"] > small["tpot_s"]
    assert large["output_tokens_per_s_per_gpu"] > 10 * small["output_tokens_per_s_per_gpu"]


@pytest.mark.parametrize(
    ("argv", "mentions"),
    [
        (["--output-tokens", "0"], ["--output-tokens"]),
        (["--gpus", "24", "--mode", "disaggregated"], ["prefill_instances:decode_instances", "gpus = 24"]),
        (["--gpus", "12"], ["gpus = 12"]),
        (["--gpus", "1", "--tp", "1", "--quantization", "bf16"], ["KV cache does not fit", "tp"]),
        (["--batch", "100000"], ["batch = 100000"]),
        (["--gpu", "h100-nope"], ["h100-nope"]),
        (["--quantization", "fp4"], ["quantization fp4", "bf16 runs on every GPU"]),
        # The default weight format on a GPU without FP8: the line says what runs instead.
        (["--gpu", "a100-80gb"], ["quantization fp8", "FP8 tensor cores", "bf16 runs on every GPU"]),
        (["--attention-quantization", "fp4"], ["attention_quantization fp4"]),
        (["--ep", "8"], ["ep = 8"]),
        (["--slo", "tpot_s<=0.05"], ["--slo goes with --scenario"]),
        (["--max-output-tokens", "999"], ["max_output_tokens = 999", "at least output_tokens"]),
    ],
)
def test_bad_serving_inputs_are_one_line_naming_the_input(capsys, argv, mentions):
    assert_one_line_error(*run(["inference", *argv], capsys), *mentions)


def test_a_job_is_printed_beside_the_steady_state_and_its_figures_hold_together(capsys):
    # 4,096 requests of 1,000 +- 100% output tokens, capped at 5,000: the job outlasts what the steady state would
    # take for them by the drain; its throughput is its tokens over its time.
    m = serve_model(batch=256, requests=4_096, output_tokens_cv=1.0, max_output_tokens=5_000).metrics
    assert 0 < m["job_drain_s"] < m["job_time_s"]
    assert m["job_output_tokens_per_s"] == pytest.approx(4_096 * 1_000 / m["job_time_s"], rel=1e-12)
    assert m["job_time_s"] > 4_096 * 1_000 / m["output_tokens_per_s"]
    assert serve_model(batch=256).metrics["job_time_s"] == 0  # no requests: no job
    argv = [
        "inference",
        "--batch",
        "256",
        "--requests",
        "4096",
        "--output-tokens-cv",
        "1",
        "--max-output-tokens",
        "5000",
    ]
    code, out, _ = run(argv, capsys)
    assert code == 0 and "job of 4,096 requests: " in out and "of it draining the last batch" in out
    code, out, _ = run(["inference", "--batch", "256"], capsys)
    assert code == 0 and "job of" not in out


def test_attention_in_its_own_format_is_shown_and_costs_bytes(capsys):
    # Llama 3 70B at TP 8: BF16 attention projections hold 18,874,368 weights a layer a GPU one byte wider than
    # FP8, over 80 layers 1,509,949,440 bytes more (the core's test works it through).
    same = serve_model(batch=64)
    bf16 = serve_model(batch=64, attention_quantization="bf16")
    assert bf16["weights_bytes"] - same["weights_bytes"] == pytest.approx(1_509_949_440, rel=1e-9)
    assert bf16["tpot_s"] > same["tpot_s"]
    code, out, _ = run(["inference", "--attention-quantization", "bf16"], capsys)
    text = " ".join(out.split())  # the workload line may break between its items at 80 columns
    assert code == 0 and "fp8 weights (attention bf16), fp8 KV cache" in text
    code, out, _ = run(["inference", "--attention-quantization", "fp8"], capsys)
    assert code == 0 and "fp8 weights, fp8 KV cache" in " ".join(out.split())


def test_the_core_names_the_input_of_an_impossible_layout():
    with pytest.raises(ConfigurationError) as err:
        serve_model(gpus=24, mode="disaggregated")
    assert (err.value.category, err.value.field) == ("pd_ratio", "decode_instances")


def test_a_scenario_gives_one_frontier_per_fabric_within_the_slo(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    scenario = read_serving_scenario(path)
    assert [c["fabric"] for c in scenario.clusters] == ["ib-ndr", "roce-400g"]
    assert scenario.layouts == 3 * 2 * 4 and scenario.slos == [("tpot_s", "<=", 0.05)]
    frontiers = run_serving_sweep(scenario)
    assert len(frontiers) == 2
    for f in frontiers:
        assert f.layouts == 24 and f.evaluated + f.rejected == 24
        assert f.points and all(p["tpot_s"] <= 0.05 for p in f.points)
        # On the frontier, no point is both faster per GPU and quicker per token than another.
        for a in f.points:
            assert not any(
                b["output_tokens_per_s_per_gpu"] > a["output_tokens_per_s_per_gpu"] and b["tpot_s"] < a["tpot_s"]
                for b in f.points
            )
    code, out, err = run(["inference", "--scenario", str(path)], capsys)
    assert code == 0, err
    assert "16 x h100-sxm (nvlink4-8) over ib-ndr" in out and "over roce-400g" in out


def test_a_job_scenario_trades_the_jobs_time_and_needs_its_requests(tmp_path, capsys):
    # With [serving] requests the frontier can trade the job's time (shown in minutes); without, a job's metric
    # as an objective is one line saying what it needs.
    path = tmp_path / "job.toml"
    base = '[serving]\nmodel = "llama3-70b"\ngpu = "h100-sxm"\ngpus = 16\ntp = [2, 4, 8]\nbatch = [0, 64]\n'
    path.write_text(base + "requests = 100000\noutput_tokens_cv = 1.0\nmax_output_tokens = 8000\n")
    code, out, err = run(["inference", "--scenario", str(path), "--objectives", "job_time_s,tpot_s"], capsys)
    assert code == 0, err
    assert "on the frontier of job_time_s, tpot_s" in out and "job min" in out
    points = run_serving_sweep(read_serving_scenario(path))[0].points
    assert points and all(p["job_time_s"] > 100_000 * 1_000 / p["output_tokens_per_s"] for p in points)
    path.write_text(base)
    for argv in (["--objectives", "job_time_s,tpot_s"], ["--slo", "job_time_s<=3600"]):
        assert_one_line_error(*run(["inference", "--scenario", str(path), *argv], capsys), "job_time_s", "requests")


def test_an_slo_nothing_meets_is_an_empty_frontier_with_a_message(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    code, out, err = run(["inference", "--scenario", str(path), "--slo", "ttft_s<=1e-9", "--json"], capsys)
    assert code == 0, err
    assert all(f["points"] == [] and f["over_slo"] == f["evaluated"] > 0 for f in json.loads(out))
    assert "no layout of 16 x h100-sxm" in err and "meets the SLOs" in err


def test_the_frontier_exports_as_csv_and_never_overwrites_without_force(tmp_path, capsys):
    path, out_csv = tmp_path / "s.toml", tmp_path / "f.csv"
    path.write_text(SCENARIO)
    assert run(["inference", "--scenario", str(path), "--out", str(out_csv)], capsys)[0] == 0
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert rows and {"fabric", "tp", "batch", "tpot_s", "cost_usd_per_million_tokens"} <= set(rows[0])
    first = out_csv.read_bytes()
    before = files_in(tmp_path)
    assert_one_line_error(*run(["inference", "--scenario", str(path), "--out", str(out_csv)], capsys), str(out_csv))
    assert files_in(tmp_path) == before and out_csv.read_bytes() == first
    assert run(["inference", "--scenario", str(path), "--out", str(out_csv), "--force"], capsys)[0] == 0
    assert out_csv.read_bytes() == first  # identical bytes for identical input


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        ("[serving]\nmodle = 'x'\n", ["[serving] modle", "not a serving input"]),
        ("[serving]\ninput_tokens = [100, 200]\n", ["[serving] input_tokens", "takes one value"]),
        ("[serving]\noutput_tokens = 0\n", ["[serving] output_tokens"]),
        ("[serving]\ntp = []\n", ["[serving] tp", "empty"]),
        ("[serving]\n[slo]\ntpot = 0.05\n", ["[slo] tpot", "not a serving metric"]),
        ("[servng]\n", ["[servng]"]),
    ],
)
def test_bad_serving_scenarios_name_the_file_and_the_key(tmp_path, capsys, text, mentions):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert_one_line_error(*run(["inference", "--scenario", str(path)], capsys), str(path), *mentions)


def test_objectives_and_slos_are_checked(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    assert_one_line_error(
        *run(["inference", "--scenario", str(path), "--objectives", "step_time_s"], capsys), "step_time_s"
    )
    assert_one_line_error(*run(["inference", "--scenario", str(path), "--slo", "tpot_s<0.05"], capsys), "--slo")
    # A cost frontier: cost per million tokens against time to first token.
    code, out, _ = run(
        ["inference", "--scenario", str(path), "--objectives", "cost_usd_per_million_tokens,ttft_s", "--json"], capsys
    )
    assert code == 0 and all(f["points"] for f in json.loads(out))


def test_help_says_what_ep_and_cost_mode_mean_to_a_serving_instance(capsys):
    # The parameter table's docs are training's ("ep x etp divides tp x dp x cp", "cost_to_train_usd"); `inference
    # --help` must state the serving rule and the serving cost instead, naming inputs and metrics that exist.
    code, out, _ = run(["inference", "--help"], capsys)
    assert code == 0
    flat = " ".join(out.split())
    assert "cost_to_train_usd" not in flat and "tp x dp x cp" not in flat
    assert "ep divides tp x dp_attention" in flat
    assert "which cost cost_usd_per_million_tokens uses" in flat
    assert "cost_usd_per_million_tokens" in {m.name for m in SERVING_METRICS}
    # The rule the help states is the one the core checks: ep 3 divides neither tp 8 x dp_attention 1 nor 8 experts.
    with pytest.raises(ConfigurationError, match="ep"):
        serve_model(model="mixtral-8x7b", tp=8, ep=3)


def test_a_training_scenario_serves_its_own_serving_table(tmp_path, capsys):
    """A training scenario's [serving] table over the Serving tab's defaults: 32 GPUs, tp fixed at 8 (so no longer
    swept), every fabric of the scenario; its [lifecycle] TPOT bound is the frontier's SLO."""
    path = tmp_path / "life.toml"
    training = (DATA / "scenarios" / "ib-vs-roce.toml").read_text(encoding="utf-8")
    path.write_text(
        training + "\n[lifecycle]\ntpot_slo_s = 0.03\n\n[serving]\ngpus = 32\ntp = 8\ninput_tokens = 2000\n",
        encoding="utf-8",
    )
    code, out, err = run(["inference", "--scenario", str(path), "--json"], capsys)
    assert code == 0, err
    frontiers = json.loads(out)
    assert [f["cluster"]["fabric"] for f in frontiers] == ["ib-ndr@default", "roce-400g@untuned", "eth-100g-tcp"]
    assert all(f["cluster"]["gpus"] == 32 for f in frontiers)
    points = [p for f in frontiers for p in f["points"]]
    assert points and all(p["tp"] == 8 and p["tpot_s"] <= 0.03 for p in points)
    # 2 pipeline depths x 7 batches: the default axes less tp.
    assert {f["layouts"] for f in frontiers} == {14}


def test_a_built_in_scenario_is_named_by_id_as_sweep_and_roi_take_it(capsys):
    # The lifecycle scenario's own comment sends its reader to `scalefront inference --scenario`; its id works there
    # as with `sweep` and `roi` (its [serving] table: DeepSeek-V3 on 64 H100s, over each of its two fabrics).
    code, out, err = run(["inference", "--scenario", "lifecycle", "--json"], capsys)
    assert code == 0, err
    assert [f["cluster"]["gpus"] for f in json.loads(out)] == [64, 64]
    code, out, err = run(["inference", "--scenario", "no-such-scenario"], capsys)
    assert code == 2 and out == "" and "no-such-scenario" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "job",
    [
        [],
        ["--requests", "1000"],
        ["--model", "llama3-70b", "--gpus", "32", "--tp", "8", "--mode", "disaggregated"],
    ],
)
def test_inference_fits_an_80_column_terminal(capsys, job):
    # Over SSH at 80 columns: the layout, workload, memory and job lines break between their items.
    code, out, err = run(["inference", *job], capsys)
    assert code == 0, err
    assert [x for x in out.splitlines() if len(x) > 80] == []
    assert "KV cache" in out and "tokens in" in out

"""Bad inputs a user met (issue 9's list): each reproduced, each answered with one plain line naming the file, the
table or entry and the key (or the option), exit 2, no traceback and nothing written. The fuzz test
(test_fuzz.py) covers the space around them; bad nccl-tests logs for `calibrate`: test_bad_input_calibrate.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import DATA, assert_one_line_error, files_in, run, small_scenario, toml_table
from scalefront import ConfigurationError, evaluate
from scalefront.errors import CatalogError, UsageError
from scalefront.inputs.catalog import Catalog
from scalefront.inputs.scenario import load_scenario

NOT_UTF8 = b'name = "x"\n\xff\xfe = 1\n'
#: Words of pydantic's own messages that must never reach a user.
PYDANTIC_WORDS = re.compile(r"Input should|constrained-|literal\[|list\[|function-|\.str\b|model_type|union_tag")

# The shared small scenario cut down to 1 GPU x 1 count x 1 fabric x 1 topology and a few layouts, the schedule
# axes left to their defaults (so that a test may add them).
SCENARIO = small_scenario(
    name='"tiny"',
    gpu='["h100-sxm"]',
    gpus="[64]",
    fabric='["ib-ndr"]',
    topology='["rail-fat-tree"]',
    tp="[8]",
    vpp=None,
    micro_batch=None,
    recompute=None,
    zero=None,
    overlap=None,
)


@pytest.fixture
def scenario(write) -> Path:
    return write("tiny.toml", SCENARIO)


# ---------------------------------------------------------------- files that are not UTF-8 text


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "{f}"],
        ["eval", "--model", "{f}"],
        ["eval", "--catalog", "{f}"],
        ["bom", "--gpus", "8", "--catalog", "{f}"],
    ],
    ids=["scenario", "model", "catalog", "bom-catalog"],
)
def test_a_file_that_is_not_utf8_is_one_line(tmp_path, capsys, argv):
    # Was: UnicodeDecodeError with a traceback, exit 1.
    path = tmp_path / "binary.toml"
    path.write_bytes(NOT_UTF8)
    code, out, err = run([a.format(f=path) for a in argv], capsys)
    assert_one_line_error(code, out, err, str(path), "not a UTF-8 text file (byte 11 is 0xff)")


# ---------------------------------------------------------------- output paths


def _unwritable(tmp_path: Path) -> dict[str, str]:
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    return {
        "proc": "/proc/out.csv",  # the directory exists, but no file can be created in it
        "sys": "/sys/out.csv",
        "parent-is-a-file": str(a_file / "out.csv"),
        "empty": "",
        "missing-folder": str(tmp_path / "nowhere" / "out.csv"),
    }


@pytest.mark.parametrize("which", ["proc", "sys", "parent-is-a-file", "empty", "missing-folder"])
@pytest.mark.parametrize("option", ["--out", "--all"])
def test_unwritable_sweep_output_is_refused_before_any_work(tmp_path, capsys, scenario, which, option):
    # Was: a traceback after the whole sweep ran (/proc, /sys, a file as parent), or `--out ''` taken as no
    # --out at all (the frontier printed, nothing written).
    target = _unwritable(tmp_path)[which]
    before = files_in(tmp_path)
    code, out, err = run(["sweep", str(scenario), option, target], capsys)
    assert_one_line_error(code, out, err, option)
    assert files_in(tmp_path) == before


@pytest.mark.parametrize("which", ["proc", "parent-is-a-file", "empty"])
def test_roi_checks_every_output_before_writing_any(tmp_path, capsys, which):
    # Was: `roi --out X --report /proc/...` ran the sweeps, wrote X, then crashed with a traceback.
    report = _unwritable(tmp_path)[which].removesuffix("/out.csv").removesuffix("out.csv")
    report = report if which != "parent-is-a-file" else str(tmp_path / "a-file" / "report")
    before = files_in(tmp_path)
    code, out, err = run(["roi", "--out", str(tmp_path / "roi.csv"), "--report", report], capsys)
    assert_one_line_error(code, out, err, "--report")
    assert files_in(tmp_path) == before


def test_roi_unwritable_out_is_refused_before_any_work(tmp_path, capsys):
    code, out, err = run(["roi", "--out", "/proc/roi.csv"], capsys)
    assert_one_line_error(code, out, err, "--out", "/proc")


# ---------------------------------------------------------------- model files


def test_hidden_not_divisible_by_heads_is_refused(write, capsys):
    # Was accepted: 4097 / 32 heads = 128.03 channels per head went into the FLOP count.
    text = (DATA / "models" / "llama3-8b.toml").read_text(encoding="utf-8").replace("hidden = 4096", "hidden = 4097")
    path = write("odd.toml", text)
    code, out, err = run(["eval", "--model", str(path), "--gpus", "64"], capsys)
    assert_one_line_error(code, out, err, f"{path}: [odd] hidden: 4097 is not a multiple of heads (32)")
    # With an explicit head width the heads need not tile hidden (as in Gemma): accepted.
    path = write("wide.toml", text.replace("hidden = 4097", "hidden = 4097\nhead_dim = 128"))
    assert run(["eval", "--model", str(path), "--gpus", "64", "--json"], capsys)[0] == 0


# ---------------------------------------------------------------- numbers on the command line


@pytest.mark.parametrize(
    "text, ratio", [("3:2", 1.5), ("2:1", 2.0), ("2", 2.0), ("4:3", 4 / 3), ("1:1", 1.0), ("1.5", 1.5)]
)
def test_oversubscription_is_a_ratio(capsys, text, ratio):
    # Was: "3:2" read as 3 (only the part before the colon).
    code, out, err = run(["eval", "--topology", "fat-tree", "--oversubscription", text, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["oversubscription"] == pytest.approx(ratio, rel=1e-15)
    code, out, err = run(["bom", "--gpus", "64", "--oversubscription", text, "--json"], capsys)
    assert code == 0 and json.loads(out)["oversubscription"] == pytest.approx(ratio, rel=1e-15)


@pytest.mark.parametrize("text", ["2:3", "3:2:1", "3:", ":2", "3:0", "a:b", "-2:1"])
def test_bad_oversubscription_ratio(capsys, text):
    code, out, err = run(["eval", "--oversubscription", text], capsys)
    assert_one_line_error(code, out, err, "--oversubscription")


@pytest.mark.parametrize(
    "text, tokens", [("2e12", 2 * 10**12), ("1.5T", 1_500_000_000_000), ("4.35T", 4_350_000_000_000)]
)
def test_tokens_are_read_exactly(capsys, text, tokens):
    # 4.35 x 10^12 in floating point is 4,349,999,999,999.9995 (was what --tokens 4.35T trained); read as
    # written it is a whole number.
    code, out, err = run(["eval", "--tokens", text, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["tokens"] == tokens


@pytest.mark.parametrize(
    "text, mention",
    [("1.5", "whole positive number"), ("0.5T", None), ("1000", "at least one sequence"), ("8191", "8191")],
)
def test_tokens_must_be_a_whole_number_of_at_least_one_sequence(capsys, text, mention):
    # Was accepted: `--tokens 1.5` trained 1.5 tokens in one step. Decided: tokens are a count (a whole number) and
    # at least one sequence (Llama 3 70B: 8,192 tokens); fewer than one optimizer step is one step.
    code, out, err = run(["eval", "--tokens", text], capsys)
    if mention is None:  # 0.5T is a whole number of tokens: fine
        assert code == 0, err
        return
    assert_one_line_error(code, out, err, "tokens", mention)


def test_tokens_in_the_api_and_in_a_scenario(write):
    with pytest.raises(ConfigurationError) as info:
        evaluate(tokens=1.5)
    assert (info.value.category, info.value.field) == ("invalid_figure", "tokens")
    assert evaluate(tokens=8192).steps == 1  # one sequence: one step of the 4M-token batch
    path = write("t.toml", SCENARIO.replace("tokens = 1e11", "tokens = 1.5"))
    with pytest.raises(CatalogError, match=rf"^{re.escape(str(path))}: \[workload\] tokens: tokens = 1.5 is invalid"):
        load_scenario(path)


# ---------------------------------------------------------------- a GPU and a scale-up domain it cannot join


def test_gpu_cannot_join_a_domain_of_another_nvlink_generation(capsys):
    # Was accepted: an H100 (NVLink 4) in a GB200 NVL72 rack (NVLink 5 switch trays) got 72-GPU NVLink.
    code, out, err = run(["eval", "--scale-up", "nvlink5-72"], capsys)
    assert_one_line_error(code, out, err, "'h100-sxm' (nvlink4) cannot join scale-up domain 'nvlink5-72'", "nvlink4-8")
    code, out, err = run(["bom", "--gpus", "72", "--scale-up", "nvlink5-72"], capsys)
    assert_one_line_error(code, out, err, "cannot join")
    with pytest.raises(CatalogError, match="cannot join"):
        evaluate("llama3-70b", "a100-80gb", 64, scale_up="nvlink4-8")
    # What each GPU can join: its own generation, and any PCIe domain.
    assert evaluate("llama3-70b", "gb200", 1152, pp=2, scale_up="nvlink5-576").scale_up == "nvlink5-576"
    assert evaluate(gpus=64, scale_up="pcie-gen5").scale_up == "pcie-gen5"
    cat = Catalog.builtin()
    pcie = ["pcie-gen3", "pcie-gen4", "pcie-gen5", "pcie-gen6"]
    assert cat.scale_ups_for("h100-sxm") == ["nvlink4-8", "nvlink4-8-h800", *pcie]
    assert cat.scale_ups_for("mi300x") == ["infinity-fabric-8", *pcie]
    for gid, gpu in cat.gpus.items():
        assert cat.scale_up[gpu.default_scale_up].accepts(gpu), gid


def test_scenario_sweeps_each_gpu_only_with_domains_it_can_join(write):
    mixed = SCENARIO.replace('gpu = ["h100-sxm"]', 'gpu = ["h100-sxm", "gb200"]').replace(
        "gpus = [64]", 'gpus = [64]\nscale_up = ["default", "nvlink5-72"]'
    )
    s = load_scenario(write("mixed.toml", mixed))
    assert s.scale_up_names == ["nvlink4-8", "nvlink5-72"]
    assert [g["scale_ups"] for g in s.space["gpus"]] == [[0], [1]]  # H100: its HGX board; GB200: the NVL72 rack
    only_h100 = SCENARIO.replace("gpus = [64]", 'gpus = [64]\nscale_up = ["nvlink5-72"]')
    path = write("bad.toml", only_h100)
    with pytest.raises(CatalogError, match=rf"^{re.escape(str(path))}: \[cluster\] scale_up: GPU 'h100-sxm'"):
        load_scenario(path)


def test_catalog_gpu_whose_default_domain_it_cannot_join(write, h100_entry):
    path = write("gpu.toml", toml_table("gpus.my-gpu", {**h100_entry, "default_scale_up": "nvlink5-72"}))
    with pytest.raises(CatalogError, match=r"\[my-gpu\] default_scale_up: GPU 'my-gpu' \(nvlink4\) cannot join"):
        Catalog.load(path)
    no_source = {**h100_entry, "sources": {k: v for k, v in h100_entry["sources"].items() if k != "scale_up_link"}}
    with pytest.raises(CatalogError, match=r"\[my-gpu\] scale_up_link: no source"):
        Catalog.load(write("gpu2.toml", toml_table("gpus.my-gpu", no_source)))


def test_catalog_fabric_with_the_retired_congestion_constant_says_what_replaced_it(write, raw, capsys):
    # A catalog written for 0.x sets `congestion_efficiency`: refused with the mechanisms that replaced it.
    entry = {**raw("fabrics.toml")["roce-400g"], "congestion_efficiency": 0.8}
    entry["sources"] = {**entry["sources"], "congestion_efficiency": "ours; 2026-11"}
    path = write("fabric.toml", toml_table("fabrics.my-roce", entry))
    code, out, err = run(["eval", "--fabric", "my-roce", "--catalog", str(path)], capsys)
    assert_one_line_error(code, out, err, "fabric.toml", "[my-roce] congestion_efficiency", "load_balancing")


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("qps_per_connection", 0.5, "qps_per_connection"),
        ("tail_latency_factor", 0.9, "tail_latency_factor"),
        ("load_balance_efficiency", 1.5, "load_balance_efficiency"),
        ("load_balancing", "magic", "load_balancing"),
        ("forwarding", "teleport", "forwarding"),
        ("mtu_bytes", -1.0, "mtu_bytes"),
        ("in_network_groups_per_leaf", -1, "in_network_groups_per_leaf"),
    ],
)
def test_catalog_fabric_mechanism_figures_out_of_range_are_refused(write, raw, capsys, field, value, says):
    # The load-balance, tail and in-network fields of a user's fabric: one line naming file, entry and field.
    entry = {**raw("fabrics.toml")["roce-400g"], field: value}
    path = write("fabric.toml", toml_table("fabrics.my-roce", entry))
    code, out, err = run(["eval", "--fabric", "my-roce", "--catalog", str(path)], capsys)
    assert_one_line_error(code, out, err, "fabric.toml", "[my-roce]", says)


# ---------------------------------------------------------------- objectives


def test_duplicate_objectives_are_refused(capsys, write):
    # Was accepted: `--objectives mfu,mfu` swept with one objective twice.
    code, out, err = run(["sweep", "--objectives", "mfu,mfu"], capsys)
    assert_one_line_error(code, out, err, "--objectives", "objective 'mfu' is listed twice")
    path = write("dup.toml", SCENARIO + '[objectives]\nminimize = ["mfu", "cost_to_train_usd", "mfu"]\n')
    with pytest.raises(CatalogError, match=r"\[objectives\] minimize: objective 'mfu' is listed twice"):
        load_scenario(path)
    with pytest.raises(UsageError, match="objectives: objective 'mfu' is listed twice"):
        load_scenario(write("ok.toml", SCENARIO), objectives=["mfu", "mfu"])
    code, out, err = run(["sweep", "--group-by", "fabric,fabric"], capsys)
    assert_one_line_error(code, out, err, "--group-by", "'fabric' is listed twice")


# ---------------------------------------------------------------- scenario messages in plain English

PLAIN = [
    # (id, (old, new) edit of SCENARIO, the message after "<file>: ")
    (
        "gpus-not-a-list",
        ("gpus = [64]", 'gpus = "many"'),
        "[cluster] gpus: expected a list such as [512, 1024] or a range",
    ),
    ("gpus-zero", ("gpus = [64]", "gpus = [0]"), "[cluster] gpus: item 1: expected a whole number from 1"),
    ("tp-zero", ("tp = [8]", "tp = [0]"), "[parallelism] tp: item 1: expected a whole number from 1"),
    ("tp-word", ("tp = [8]", 'tp = "all"'), "[parallelism] tp: expected 'search', a list such as [1, 2, 4, 8]"),
    ("tp-search-false", ("tp = [8]", "tp = { search = false }"), "[parallelism] tp: search: expected one of true"),
    ("tp-search-typo", ("tp = [8]", "tp = { serch = true }"), "[parallelism] tp: serch: unknown field; did you mean"),
    (
        "overlap-table",
        ("pp = [1, 2]", "pp = [1, 2]\noverlap = [{ dp = 1 }]"),
        "[parallelism] overlap: item 1: expected",
    ),
    (
        "overlap-out-of-range",
        ("pp = [1, 2]", 'pp = [1, 2]\noverlap = ["dp=1,tp=5"]'),
        "[parallelism] overlap: item 1: overlap tp=5.0 (from 'dp=1,tp=5'): expected a fraction in [0, 1]",
    ),
    ("overlap-number", ("pp = [1, 2]", "pp = [1, 2]\noverlap = [1.5]"), "[parallelism] overlap: item 1: overlap"),
    ("zero-4", ("pp = [1, 2]", "pp = [1, 2]\nzero = [4]"), "[parallelism] zero, item 1: expected a number <= 3, got 4"),
    (
        "recompute-word",
        ("pp = [1, 2]", 'pp = [1, 2]\nrecompute = ["some"]'),
        "[parallelism] recompute, item 1: expected one of none, selective or full, got 'some'",
    ),
    ("vpp-empty", ("pp = [1, 2]", "pp = [1, 2]\nvpp = []"), "[parallelism] vpp: expected at least 1 item, got []"),
    (
        "gpu-not-a-list",
        ('gpu = ["h100-sxm"]', 'gpu = "h100-sxm"'),
        "[cluster] gpu: expected a list such as ['h100-sxm']",
    ),
    ("topology-number", ('topology = ["rail-fat-tree"]', "topology = [5]"), "[cluster] topology: item 1: expected"),
    (
        "topology-oversubscription",
        ('topology = ["rail-fat-tree"]', 'topology = [{ name = "fat-tree", oversubscription = 0.5 }]'),
        "[cluster] topology: item 1: oversubscription: expected a number >= 1, got 0.5",
    ),
    ("tokens-word", ("tokens = 1e11", 'tokens = "lots"'), "[workload] tokens: expected a number, got 'lots'"),
    ("tokens-nan", ("tokens = 1e11", "tokens = nan"), "[workload] tokens: expected a finite number, got nan"),
    ("name-number", ('name = "tiny"', "name = 5"), "name: expected text in double quotes, got 5"),
    ("price-negative", (None, "[economics.prices]\nswitch_usd = -1\n"), "[economics] prices: switch_usd: expected"),
    (
        "entry-price-word",
        (None, '[economics.prices.ib-ndr]\nswitch_usd = "x"\n'),
        "[economics] prices: ib-ndr.switch_usd: expected a finite number >= 0, got 'x'",
    ),
    ("reliability-number", (None, "[economics]\nreliability = 5\n"), "[economics] reliability: expected text"),
    ("unknown-table", ("[cluster]", "[clusters]"), "[clusters]: unknown field; did you mean 'cluster'?"),
]


@pytest.mark.parametrize("change, message", [p[1:] for p in PLAIN], ids=[p[0] for p in PLAIN])
def test_scenario_errors_read_as_plain_english(write, capsys, change, message):
    # Were: `gpus.list[constrained-int]: Input should be a valid list`, `tp.literal['search']: Input should be
    # 'search' (got [0])`, `[overlap tp=5] 0 (from 'dp=1,tp=5')`, ...
    old, new = change
    path = write("bad.toml", SCENARIO + new if old is None else SCENARIO.replace(old, new, 1))
    code, out, err = run(["sweep", str(path)], capsys)
    assert_one_line_error(code, out, err, f"scalefront: error: {path}: {message}")
    assert not PYDANTIC_WORDS.search(err), err


def test_catalog_errors_read_as_plain_english(write, h100_entry):
    for change, message in [
        ({"server_gpus": [8]}, "server_gpus: expected a whole number, got [8]"),
        ({"kind": 1}, "unknown field"),
        (
            {"tdp_w": {"max": 700}},
            "tdp_w: expected a number or a range { low = .., typical = .., high = .. }, got {max = 700}",
        ),
        ({"tdp_w": {"low": 800, "typical": 700, "high": 900}}, "tdp_w: a range needs low <= typical <= high"),
        ({"tdp_w": {"low": -1, "typical": 700, "high": 900}}, "tdp_w: low -1: expected a number > 0"),
    ]:
        path = write("g.toml", toml_table("gpus.my-gpu", {**h100_entry, **change}))
        with pytest.raises(CatalogError) as info:
            Catalog.load(path)
        assert str(info.value).startswith(f"{path}: [my-gpu] ") and message in str(info.value), info.value
        assert not PYDANTIC_WORDS.search(str(info.value))


# ---------------------------------------------------------------- help and printing


@pytest.mark.parametrize("command", ["eval", "sweep", "bom", "roi", "validate"])
def test_help_shows_each_default_once(capsys, command):
    # Was: "sequences per step (default: ~4M tokens) (default: None)", "(default: False)" on every flag.
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())  # argparse wraps lines
    assert "(default: None)" not in text and "(default: False)" not in text and "(default: [])" not in text
    for option_help in re.split(r"\s(?=--?[a-z])", text):
        assert option_help.count("default") <= 1, option_help


def test_help_of_eval_shows_the_defaults(capsys):
    _, out, _ = run(["eval", "--help"], capsys)
    text = " ".join(out.split())
    assert "--gpus GPUS number of GPUs (default: 1,024)" in text
    assert "sequences per optimizer step (default: ~4M tokens)" in text


def test_bom_of_a_torus_has_no_negative_zero(capsys):
    # Was: `switches -0` (a float -0.0 formatted). A torus has no switches.
    code, out, err = run(["bom", "--gpus", "512", "--topology", "torus-3d"], capsys)
    assert code == 0, err
    assert re.search(r"switches\s+0\s", out) and "no switches" in out, out
    assert "-0" not in out
    code, out, _ = run(["bom", "--gpus", "512", "--topology", "torus-3d", "--json"], capsys)
    doc = json.loads(out)
    assert doc["switches_total"] == 0 and isinstance(doc["switches_total"], int)


# ---------------------------------------------------------------- interleaved stages


def test_interleaved_layers_must_split_evenly_over_pp_x_vpp(capsys):
    # Was accepted: Llama 3 70B's 80 layers on pp 4 x vpp 3 = 12 virtual stages (6.67 layers each).
    code, out, err = run(["eval", "--pp", "4", "--vpp", "3"], capsys)
    assert_one_line_error(code, out, err, "80 layers do not split evenly over pp x vpp = 4 x 3 = 12")
    with pytest.raises(ConfigurationError) as info:
        evaluate(pp=4, vpp=3)
    assert (info.value.category, info.value.field) == ("pp_vpp_layers", "vpp")
    assert evaluate(pp=4, vpp=5).feasible  # 20 stages of 4 layers
    assert evaluate(pp=3, gpus=960, global_batch=960).pp == 3  # plain 1F1B keeps the uneven split (27/27/26)
    # Published runs with asymmetric stages ask for it (the busiest stage then holds ceil(80 / 12) x 3 = 21 layers).
    assert evaluate(pp=4, vpp=3, uneven_stages=True).vpp == 3

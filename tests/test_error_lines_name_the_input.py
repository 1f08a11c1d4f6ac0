"""A refused input's one line names what the user gave: the command whose option is unknown, the scenario entry
behind a model file that cannot be read, the option of an empty fabric id, the file two outputs share, the file
whose folder cannot take it, the figure a partial copy of a built-in entry gets wrong, and the catalog files
searched for an unknown name. (The bad-input harness of the reliability review flagged each as misleading.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import assert_one_line_error, files_in, run, small_scenario


def test_an_unknown_option_names_its_command_and_that_commands_help(capsys):
    code, out, err = run(["eval", "--bogus"], capsys)
    assert_one_line_error(code, out, err, "scalefront eval: error: unrecognized arguments: --bogus")
    assert "(see scalefront eval --help)" in err
    code, out, err = run(["--bogus"], capsys)
    assert_one_line_error(code, out, err, "(see scalefront --help)")


@pytest.mark.parametrize(
    ("model_file", "content", "message"),
    [
        ("missing.toml", None, "missing.toml: cannot read"),
        ("garbage.toml", b"\x00\x9f\xff", "garbage.toml: "),
        ("zero.toml", b"name = 'x'\nlayers = 0\n", "zero.toml: [zero] "),
    ],
)
def test_a_model_file_that_cannot_be_read_is_named_behind_the_scenario_entry(
    tmp_path: Path, capsys, model_file, content, message
):
    if content is not None:
        (tmp_path / model_file).write_bytes(content)
    scenario = tmp_path / "s.toml"
    scenario.write_text(small_scenario(model=f'"{model_file}"'), encoding="utf-8")
    code, out, err = run(["sweep", str(scenario), "--out", str(tmp_path / "f.csv")], capsys)
    assert_one_line_error(code, out, err, f"{scenario}: [workload] model: ", message)
    assert "f.csv" not in files_in(tmp_path)


def test_an_empty_fabric_id_names_its_option(tmp_path: Path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text(small_scenario(), encoding="utf-8")
    code, out, err = run(["roi", str(scenario), "--samples", "100", "--a", " "], capsys)
    assert_one_line_error(code, out, err, "argument --a: ' ': expected a fabric id")


def test_two_outputs_in_one_file_name_it(tmp_path: Path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text(small_scenario(), encoding="utf-8")
    out_csv = tmp_path / "same.csv"
    argv = ["sweep", str(scenario), "--out", str(out_csv), "--all", str(tmp_path / "." / "same.csv")]
    code, out, err = run(argv, capsys)
    assert_one_line_error(code, out, err, "--out and --all name the same file", "same.csv")
    assert files_in(tmp_path) == ["s.toml"]


def test_a_folder_that_cannot_take_the_file_names_the_file(tmp_path: Path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text(small_scenario(), encoding="utf-8")
    # /proc takes no new file, even for root.
    code, out, err = run(["sweep", str(scenario), "--out", "/proc/frontier.csv"], capsys)
    assert_one_line_error(code, out, err, "--out: /proc/frontier.csv: cannot create files in /proc")


def test_a_partial_copy_of_a_built_in_entry_hears_of_its_wrong_figure_first(tmp_path: Path, capsys):
    catalog = tmp_path / "neg.toml"
    catalog.write_text(
        "[fabrics.ib-ndr]\nlink_gbps = -400.0\n[fabrics.ib-ndr.sources]\nlink_gbps = 'quote; 2026-11'\n",
        encoding="utf-8",
    )
    code, out, err = run(["eval", "--catalog", str(catalog), "--fabric", "ib-ndr"], capsys)
    assert_one_line_error(code, out, err, f"{catalog}: [ib-ndr] link_gbps: expected a number > 0, got -400.0")


def test_an_unknown_name_says_which_catalogs_were_searched(tmp_path: Path, capsys):
    catalog = tmp_path / "mine.toml"
    catalog.write_text("", encoding="utf-8")
    code, out, err = run(["eval", "--catalog", str(catalog), "--fabric", "my-net"], capsys)
    assert_one_line_error(code, out, err, "unknown fabric 'my-net'", f"searched the built-in catalog and {catalog}")
    code, out, err = run(["eval", "--fabric", "my-net"], capsys)
    assert_one_line_error(code, out, err, "unknown fabric 'my-net'")
    assert "searched" not in err


@pytest.mark.parametrize(
    ("listed", "message"),
    [
        ('["roce-401g"]', "item 1: unknown fabric 'roce-401g' (did you mean 'roce-400g'?)"),
        ('["roce-400g@tuned", 5]', "item 2: expected text in double quotes, got 5"),
    ],
)
def test_a_bad_design_in_compare_with_names_the_scenario_entry(tmp_path: Path, capsys, listed, message):
    text = (Path(__file__).parents[1] / "data/scenarios/ib-vs-roce.toml").read_text(encoding="utf-8")
    lines = [f"compare_with = {listed}" if ln.startswith("compare_with") else ln for ln in text.splitlines()]
    scenario = tmp_path / "s.toml"
    scenario.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(["roi", str(scenario), "--samples", "5", "--out", str(tmp_path / "r.csv")], capsys)
    assert_one_line_error(code, out, err, f"{scenario}: [cluster] compare_with, {message}")
    assert "r.csv" not in files_in(tmp_path)


def test_an_nvlink_segment_that_cannot_be_placed_names_the_domain_and_the_job(capsys):
    # 128 GB200s are 32 four-GPU trays; an NVL72 holds 18. Segments of 16 place the job (two 64-GPU halves, the
    # data-parallel rings inside NVLink); 5 does not divide 32 trays, 19 does not fit a rack; an H100 server's
    # NVLink ends at the server.
    job = ["eval", "--model", "gpt3-175b", "--gpu", "gb200", "--gpus", "128", "--tp", "8", "--pp", "4", "--dp", "4"]
    job += ["--global-batch", "32", "--json"]
    code, out, err = run([*job, "--nvlink-segment-nodes", "16"], capsys)
    assert code == 0, err
    segmented = json.loads(out)
    code, out, err = run(job, capsys)
    packed = json.loads(out)
    assert segmented["dp_comm_s"] < packed["dp_comm_s"]
    for segment in ("5", "19"):
        code, out, err = run([*job, "--nvlink-segment-nodes", segment], capsys)
        assert_one_line_error(
            code, out, err, f"nvlink_segment_nodes = {segment} must fit one NVLink domain (18 servers)", "32 servers"
        )
    code, out, err = run(["eval", "--nvlink-segment-nodes", "2"], capsys)
    assert_one_line_error(code, out, err, "the NVLink domain ends at the server")

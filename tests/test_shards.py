"""Sharded sweeps without an engine (scalefront.engine.shards, `sweep --shard K/N`, `scalefront merge`): the merged
frontier is the one-machine frontier byte for byte, merged --all parts are the one-machine --all export, and a
merge refuses parts that are missing, repeated, foreign or of another kind, with one line and nothing written."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import SMALL_SCENARIO, assert_one_line_error, run, toml_table
from helpers.sweeps import load_doc, scenarios
from scalefront.engine.export import StreamWriter
from scalefront.engine.shards import (
    PART_KEY,
    fingerprint,
    merge_all_parts,
    merge_parts,
    parse_shard,
    part_metadata,
    plan_shards,
    run_shard,
    write_part,
)
from scalefront.engine.sweep import COLUMNS, run_sweep
from scalefront.errors import UsageError
from scalefront.inputs.catalog import Catalog
from scalefront.inputs.scenario import load_scenario


def write_parts(scenario, count: int, directory: Path, all_rows: bool = False) -> list[Path]:
    """Every shard of `count` swept and written as a part (and, with `all_rows`, an --all part beside it)."""
    paths = []
    for shard in plan_shards(scenario, count):
        writer = None
        if all_rows:
            meta = part_metadata(scenario, shard, "all")
            writer = StreamWriter(directory / f"all-{shard.index}.parquet", metadata=meta)
        result = run_shard(scenario, shard, on_rows=writer.write if writer else None)
        if writer:
            writer.commit(result.kept.clear())
        paths.append(write_part(result, scenario, shard, directory / f"part-{shard.index}.parquet"))
    return paths


# ---------------------------------------------------------------- exact merge


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(doc=scenarios(), count=st.integers(min_value=1, max_value=9), seed=st.randoms())
def test_merged_parts_equal_the_one_machine_sweep(tmp_path_factory, doc, count, seed):
    # Random small scenarios (any axes, objectives, groupings, prices) split in 1-9 shards, merged from parts
    # given in any order: the same kept rows, frontier, CSV bytes and counts as one run, and the --all parts
    # concatenated are the one-machine --all rows in the same order.
    directory = tmp_path_factory.mktemp("shards")
    scenario = load_doc(directory, doc)
    rows: list[pl.DataFrame] = []
    whole = run_sweep(scenario, on_rows=rows.append)
    paths = write_parts(scenario, count, directory, all_rows=True)
    seed.shuffle(paths)
    merged = merge_parts(paths)
    assert merged.kept.equals(whole.kept)
    assert merged.frontier().write_csv() == whole.frontier().write_csv()
    assert (merged.evaluated, merged.feasible, merged.rejected) == (whole.evaluated, whole.feasible, whole.rejected)
    every = merge_all_parts(sorted(directory.glob("all-*.parquet")), directory / "every.parquet")
    expected = pl.concat(rows) if rows else whole.kept.clear()
    assert pl.read_parquet(every).equals(expected)


def test_merge_on_the_command_line_writes_the_one_machine_bytes(small, tmp_path, capsys):
    one, one_all = tmp_path / "one.csv", tmp_path / "one-all.csv"
    assert run(["sweep", str(small), "--out", str(one), "--all", str(one_all)], capsys)[0] == 0
    for k in (1, 2, 3):
        args = ["sweep", str(small), "--shard", f"{k}/3", "--out", str(tmp_path / f"p{k}.parquet")]
        code, out, err = run([*args, "--all", str(tmp_path / f"a{k}.parquet")], capsys)
        assert code == 0 and out == "" and err.startswith("wrote "), err
    merged, merged_all = tmp_path / "m.csv", tmp_path / "m-all.csv"
    code, out, err = run(["merge", *(str(tmp_path / f"p{k}.parquet") for k in (3, 1, 2)), "--out", str(merged)], capsys)
    assert code == 0 and err == f"wrote {merged}\n", err
    assert merged.read_bytes() == one.read_bytes()
    alls = [str(tmp_path / f"a{k}.parquet") for k in (1, 2, 3)]
    code, _, err = run(["merge", *alls, "--out", str(merged_all)], capsys)
    assert code == 0, err
    assert merged_all.read_bytes() == one_all.read_bytes()
    # Without --out, the frontiers are printed as a sweep prints them.
    code, out, _ = run(["merge", *(str(tmp_path / f"p{k}.parquet") for k in (1, 2, 3))], capsys)
    assert code == 0 and out.startswith("scenario small: ") and "Pareto frontier" in out


# ---------------------------------------------------------------- shards


def test_shards_cover_the_cells_in_order_balanced_by_estimated_cost(small):
    scenario = load_scenario(small)
    shards = plan_shards(scenario, 5)
    assert [s.label for s in shards] == ["1/5", "2/5", "3/5", "4/5", "5/5"]
    assert shards[0].start == 0 and all(a.stop == b.start for a, b in itertools.pairwise(shards))
    # 2 GPUs x 2 counts x 2 fabrics x 2 topologies x 1 precision = 16 cells, 256 configurations each.
    assert shards[-1].stop == 16 and sum(s.configurations for s in shards) == scenario.size() == 16 * 256
    share = sum(s.work for s in shards) / 5
    # Each shard is within one cell's cost of an equal share (a cell here costs at most 256 units).
    assert all(abs(s.work - share) <= 256 for s in shards)


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"])
def test_bad_shard_specs_are_refused(text, capsys, small):
    with pytest.raises(UsageError, match="K/N"):
        parse_shard(text)
    code, out, err = run(["sweep", str(small), "--shard", text, "--out", "p.parquet"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--shard" in err


@pytest.mark.parametrize(
    "args, mention",
    [
        (["--shard", "1/2"], "give --out PART.parquet"),
        (["--shard", "1/2", "--out", "p.csv"], "must be a .parquet file"),
        (["--shard", "1/2", "--out", "p.parquet", "--all", "a.csv"], "must be a .parquet file"),
    ],
)
def test_a_shard_writes_parquet_parts(small, tmp_path, capsys, monkeypatch, args, mention):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["sweep", str(small), *args], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and mention in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.toml"]


def test_the_fingerprint_follows_the_space_not_the_file(small, tmp_path, write, h100_price):
    scenario = load_scenario(small)
    assert fingerprint(scenario) == fingerprint(load_scenario(small))
    copy = tmp_path / "copy.toml"
    copy.write_text(SMALL_SCENARIO.replace('name = "small"', 'name = "renamed"'), encoding="utf-8")
    assert fingerprint(load_scenario(copy)) == fingerprint(scenario)  # same space, same rows
    other = tmp_path / "other.toml"
    other.write_text(SMALL_SCENARIO.replace("tokens = 1e11", "tokens = 2e11"), encoding="utf-8")
    assert fingerprint(load_scenario(other)) != fingerprint(scenario)
    # A catalog that changes a figure the space uses (the H100's rent) changes it too.
    quote = write("quote.toml", toml_table("prices.gpu.h100-sxm", {**h100_price, "rent_usd_per_gpu_hour": 1.99}))
    assert fingerprint(load_scenario(small, Catalog.load(quote))) != fingerprint(scenario)


# ---------------------------------------------------------------- refusals


@pytest.fixture
def parts(small, tmp_path):
    """Parts 1..3 of 3 of the small scenario, in tmp_path/parts."""
    d = tmp_path / "parts"
    d.mkdir()
    return write_parts(load_scenario(small), 3, d)


def assert_refused(argv: list[str], capsys, *mentions: str) -> None:
    code, out, err = run(argv, capsys)
    assert_one_line_error(code, out, err, *mentions)


def test_a_missing_part_is_refused(parts, tmp_path, capsys):
    out = tmp_path / "m.csv"
    assert_refused(["merge", str(parts[0]), str(parts[2]), "--out", str(out)], capsys, "shard 2 of 3 missing")
    assert not out.exists()


def test_a_repeated_part_is_refused(parts, tmp_path, capsys):
    copy = tmp_path / "again.parquet"
    copy.write_bytes(parts[1].read_bytes())
    out = tmp_path / "m.csv"
    argv = ["merge", *map(str, parts), str(copy), "--out", str(out)]
    assert_refused(argv, capsys, str(copy), "shard 2/3 again", str(parts[1]))
    assert not out.exists()


def test_a_part_of_another_scenario_or_catalog_is_refused(parts, small, tmp_path, capsys):
    other = tmp_path / "other.toml"
    other.write_text(SMALL_SCENARIO.replace("tokens = 1e11", "tokens = 2e11"), encoding="utf-8")
    d = tmp_path / "other"
    d.mkdir()
    foreign = write_parts(load_scenario(other), 3, d)[1]
    out = tmp_path / "m.csv"
    argv = ["merge", str(parts[0]), str(foreign), str(parts[2]), "--out", str(out)]
    assert_refused(argv, capsys, str(foreign), "from a different scenario or catalog than")
    assert not out.exists()


def test_parts_of_another_split_are_refused(parts, small, tmp_path, capsys):
    d = tmp_path / "four"
    d.mkdir()
    four = write_parts(load_scenario(small), 4, d)
    assert_refused(["merge", *map(str, parts), str(four[3])], capsys, "shard 4/4, but", "shard 1/3")


def test_a_file_that_is_no_part_is_refused(parts, small, tmp_path, capsys):
    plain = tmp_path / "plain.parquet"
    pl.DataFrame({"a": [1]}).write_parquet(plain)
    assert_refused(["merge", str(plain)], capsys, str(plain), "not a scalefront part")
    assert_refused(["merge", str(small)], capsys, str(small), "not a Parquet file")
    assert_refused(["merge", str(tmp_path / "nope.parquet")], capsys, "no such file")
    # A directory, a device and an empty name are what they are, not "no such file".
    assert_refused(["merge", str(tmp_path)], capsys, f"{tmp_path} is a directory")
    assert_refused(["merge", "/dev/null"], capsys, "/dev/null is not a regular file")
    assert_refused(["merge", ""], capsys, "a part's file name is empty")


def test_parts_of_another_version_or_kind_are_refused(parts, small, tmp_path, capsys):
    meta = json.loads(pl.read_parquet_metadata(parts[1])[PART_KEY])
    old = tmp_path / "old.parquet"
    pl.read_parquet(parts[1]).write_parquet(old, metadata={PART_KEY: json.dumps({**meta, "scalefront": "0.0.1"})})
    assert_refused(["merge", str(parts[0]), str(old), str(parts[2])], capsys, "written by scalefront 0.0.1")
    every = tmp_path / "every.parquet"
    pl.read_parquet(parts[1]).write_parquet(every, metadata={PART_KEY: json.dumps({**meta, "kind": "all"})})
    assert_refused(["merge", str(parts[0]), str(every), str(parts[2])], capsys, "an --all part, but")


def test_a_merged_frontier_is_not_written_over_an_existing_file(parts, tmp_path, capsys):
    out = tmp_path / "m.csv"
    out.write_text("precious\n", encoding="utf-8")
    assert_refused(["merge", *map(str, parts), "--out", str(out)], capsys, "already exists")
    assert out.read_text(encoding="utf-8") == "precious\n"
    code, _, err = run(["merge", *map(str, parts), "--out", str(out), "--force"], capsys)
    assert code == 0, err
    assert out.read_text(encoding="utf-8").splitlines()[0] == ",".join(COLUMNS)


def test_an_empty_out_is_refused_not_taken_for_printing(parts, tmp_path, monkeypatch, capsys):
    # --out '' (a variable that expanded to nothing) must not print the frontier as if --out were absent.
    monkeypatch.chdir(tmp_path)
    assert_refused(["merge", *map(str, parts), "--out", ""], capsys, "--out: the file name is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts", "small.toml"]

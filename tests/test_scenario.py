"""Scenario files (scalefront.inputs.scenario): the built-ins, defaults, ranges, prices, sizes worked by hand, and bad
files reported as one line naming the file, the key and the value."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import DATA, run, small_scenario
from scalefront.engine.sweep import run_sweep
from scalefront.errors import CatalogError, UsageError
from scalefront.inputs.catalog import builtin_catalog
from scalefront.inputs.scenario import (
    AXES,
    DEFAULT_SCENARIO,
    OBJECTIVES,
    builtin_scenarios,
    load_scenario,
    read_scenario,
)
from scalefront.schema import INPUT_COLUMNS

CAT = builtin_catalog()

# The shared small scenario with 1 GPU, 1 topology, 3 recompute and 2 named overlap modes: 1 GPU x 2 counts x 2
# fabrics x 1 topology; tp 1,2,4,8 x pp 1,2 (dp searched; every product divides 64 and 128); vpp 2 x micro-batch
# 2 x recompute 3 x ZeRO 2 x overlap 2 = 48 per layout: 4 x 8 x 48 = 1,536.
BASE = small_scenario(
    gpu='["h100-sxm"]',
    topology='["rail-fat-tree"]',
    recompute='["none", "selective", "full"]',
    overlap='["dp", "full"]',
)


@pytest.fixture
def base(write) -> Path:
    return write("base.toml", BASE)


# ---------------------------------------------------------------- built-ins


def test_builtin_scenarios_are_the_data_files():
    found = builtin_scenarios()
    assert DEFAULT_SCENARIO == "ib-vs-roce"
    assert set(found) == {p.stem for p in (DATA / "scenarios").glob("*.toml")} >= {"ib-vs-roce", "large"}
    for name, text in found.items():
        assert text == (DATA / "scenarios" / f"{name}.toml").read_text(encoding="utf-8")


def test_default_scenario_by_id():
    s = load_scenario("ib-vs-roce")
    assert s.name == "ib-vs-roce" and s.path == "built-in scenario ib-vs-roce"
    assert s.gpu_counts == [512, 1024, 2048, 4096, 8192, 16384]  # start 512, stop 16,384, factor 2
    # Fabrics by canonical id: a bare id is its default operating mode.
    assert s.fabric_names == ["ib-ndr@default", "roce-400g@untuned", "eth-100g-tcp"]
    assert s.topology_names == ["rail-fat-tree", "fat-tree"] and s.oversubscriptions == [1.0, 2.0]
    assert s.scale_up_names == ["nvlink4-8"]  # "default": the H100's own domain
    assert s.space["tp"] == {"search": 8} and s.space["pp"] == {"search": 16}
    # 6 counts (powers of two) x 40 layouts (tp 4 x pp 5 x cp 2) x 3 fabrics x 2 topologies x vpp 4 x mb 2 x
    # recompute 3 x ZeRO 2 x overlap 2.
    assert s.size() == 6 * 40 * 3 * 2 * 4 * 2 * 3 * 2 * 2 == 138_240


def test_large_scenario_size_without_sweeping():
    # Counts 512, 1,024, ..., 16,384 (32 of them); tp = divisors <= 8, pp = divisors <= 16 of each count, cp 1
    # or 2; 6 GPUs x 8 fabrics x 4 topologies x 2 precisions x mb 2 x vpp 3 x recompute 3 x ZeRO 4 x overlap 2.
    # With dp derived, only layouts whose tp x pp x cp divides the count belong to the space: 2,138 of the 2,278
    # tp x pp x cp combinations (the other 140, e.g. 3 x 3 x 1 on 1,536 GPUs, have no whole dp).
    def divisors(n: int, most: int) -> list[int]:
        return [d for d in range(1, most + 1) if n % d == 0]

    layouts = sum(
        1
        for n in range(512, 16385, 512)
        for tp in divisors(n, 8)
        for pp in divisors(n, 16)
        for cp in (1, 2)
        if n % (tp * pp * cp) == 0
    )
    assert layouts == 2138
    s = load_scenario("large")
    assert len(s.gpu_counts) == 32
    assert s.size() == layouts * 6 * 8 * 4 * 2 * 2 * 3 * 3 * 4 * 2 == 118_222_848


def test_a_file_shadows_a_builtin_id(tmp_path, monkeypatch):
    (tmp_path / "large").write_text(BASE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_scenario("large").name == "small"


# ---------------------------------------------------------------- defaults, ranges, sizes


def test_minimal_file_gets_the_documented_defaults(write):
    path = write(
        "min.toml",
        'name = "m"\n[workload]\nmodel = "llama3-8b"\ntokens = 1e9\nglobal_batch = 8\n'
        '[cluster]\ngpu = ["h100-sxm"]\ngpus = [8]\nfabric = ["ib-ndr"]\ntopology = ["fat-tree"]\n',
    )
    s = load_scenario(path)
    sp = s.space
    assert sp["precisions"] == ["bf16"] and sp["training"]["seq_len"] == CAT.model("llama3-8b").seq_len == 8192
    assert sp["tp"] == sp["pp"] == sp["dp"] == {"search": 2**31}  # "search": every divisor
    assert sp["cp"] == sp["ep"] == [1]
    assert sp["vpp"] == sp["micro_batch"] == [1]
    assert sp["sequence_parallel"] == [True] and sp["recompute"] == ["selective"] and sp["zero"] == [1]
    assert sp["overlap"] == [{"dp": 1.0, "tp": 0.0, "pp": 0.0, "ep": 0.0}] and s.overlap_names == ["dp"]
    assert sp["economics"]["cost_mode"] == "rent"
    assert sp["objectives"] == ["time_to_train_days", "cost_to_train_usd"] and sp["group_by"] == ["fabric"]


def test_searched_degrees_only_combine_into_whole_dp(write):
    # tp and pp searched over 8 GPUs (divisors 1, 2, 4, 8), dp searched = 8 / (tp x pp), cp left at [1]. dp is
    # whole for tp x pp in 1x1, 1x2, 1x4, 1x8, 2x1, 2x2, 2x4, 4x1, 4x2, 8x1: 10 layouts. The other 6 (2x8,
    # 4x4, 4x8, 8x2, 8x4, 8x8) have no dp at all; they are not configurations of the space (sweep.rs,
    # `factorizations`: "Searched degrees only combine into products that divide the GPU count"), and the
    # default cp = [1] cannot be what makes them fail.
    path = write(
        "min.toml",
        'name = "m"\n[workload]\nmodel = "llama3-8b"\ntokens = 1e9\nglobal_batch = 8\n'
        '[cluster]\ngpu = ["h100-sxm"]\ngpus = [8]\nfabric = ["ib-ndr"]\ntopology = ["fat-tree"]\n',
    )
    s = load_scenario(path)
    assert s.size() == 10
    assert run_sweep(s).rejected.get("gpu_count_mismatch", 0) == 0


@pytest.mark.parametrize(
    "tp, pp, cp, size",
    [
        ("{ search = true, max = 8 }", "{ search = true, max = 4 }", "{ search = true, max = 2 }", 40),
        ("[1, 2, 3, 4, 6, 8]", "[1, 2, 3, 4]", "[1, 2]", 40),
    ],
    ids=["searched", "listed"],
)
def test_layouts_over_48_gpus_by_hand(write, tp, pp, cp, size):
    # 48 GPUs (2^4 x 3): tp <= 8 in {1,2,3,4,6,8}, pp <= 4 in {1,2,3,4}, cp in {1,2}: 48 combinations. 8 do
    # not divide 48: two factors of 3 (tp 3 or 6 with pp 3, cp 1 or 2: 4) or 2^5 (4x4x2, 8x4x1, 8x4x2, 8x2x2).
    # dp is derived ("search"), so searched or listed, only the 40 that divide are configurations.
    text = BASE.replace("gpus = [64, 128]", "gpus = [48]").replace(
        'fabric = ["ib-ndr", "roce-400g"]', 'fabric = ["ib-ndr"]'
    )
    text = text.replace(
        "tp = [1, 2, 4, 8]\npp = [1, 2]\nvpp = [1, 2]\nmicro_batch = [1, 2]\n"
        'recompute = ["none", "selective", "full"]\nzero = [1, 3]\noverlap = ["dp", "full"]\n',
        f"tp = {tp}\npp = {pp}\ncp = {cp}\n",
    )
    s = load_scenario(write("s.toml", text))
    assert s.size() == size
    r = run_sweep(s)
    assert r.evaluated == size
    assert r.rejected.get("gpu_count_mismatch", 0) == size - 40


def test_base_size_by_hand(base):
    assert load_scenario(base).size() == 1536


@pytest.mark.parametrize(
    "gpus, values",
    [
        ("{ start = 8, stop = 64, factor = 2 }", [8, 16, 32, 64]),
        ("{ start = 512, stop = 2000, step = 512 }", [512, 1024, 1536]),  # inclusive, stops below 2,048
        ("{ start = 64, stop = 64, factor = 4 }", [64]),
        ("[128, 64]", [128, 64]),
    ],
)
def test_gpu_count_ranges(write, gpus, values):
    s = load_scenario(write("s.toml", BASE.replace("gpus = [64, 128]", f"gpus = {gpus}")))
    assert s.gpu_counts == values and s.space["gpu_counts"] == values


def test_oversubscription_from_the_catalog_or_the_file(write):
    s = load_scenario(
        write(
            "s.toml",
            BASE.replace(
                'topology = ["rail-fat-tree"]', 'topology = ["fat-tree", { name = "fat-tree", oversubscription = 3.0 }]'
            ),
        )
    )
    assert s.topology_names == ["fat-tree", "fat-tree"]
    assert s.oversubscriptions == [CAT.topology("fat-tree").oversubscription, 3.0]
    assert [t["oversubscription"] for t in s.space["topologies"]] == s.oversubscriptions


@pytest.mark.parametrize("absolute", [False, True], ids=["relative-path", "absolute-path"])
def test_model_file_relative_to_the_scenario(tmp_path, base, monkeypatch, absolute):
    # README: "[workload] model: ... or a model TOML file (relative to the scenario)", however the scenario
    # itself is named. The working directory is tmp_path; the files are in tmp_path/sub.
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "mine.toml").write_text((DATA / "models" / "llama3-8b.toml").read_text(encoding="utf-8"), encoding="utf-8")
    (sub / "s.toml").write_text(BASE.replace('model = "llama3-8b"', 'model = "mine.toml"'), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    s = load_scenario(sub / "s.toml" if absolute else "sub/s.toml")
    assert s.model_name == "mine.toml"
    assert s.space["model"] == load_scenario(base).space["model"]  # the same model as the catalog's llama3-8b


def test_group_by_and_objectives_override_the_file(base):
    s = load_scenario(base, group_by=["gpus", "tp"], objectives=["mfu", "energy_mwh", "cost_to_train_usd"])
    assert s.space["group_by"] == ["gpus", "tp"]
    assert s.space["objectives"] == ["mfu", "energy_mwh", "cost_to_train_usd"]
    assert load_scenario(base).space["group_by"] == ["fabric"]


def test_every_documented_objective_and_axis_is_accepted(base):
    for o in OBJECTIVES:
        other = "mfu" if o != "mfu" else "energy_mwh"
        assert load_scenario(base, objectives=[o, other]).space["objectives"] == [o, other]
    assert load_scenario(base, group_by=list(AXES)).space["group_by"] == list(AXES)
    assert set(AXES) <= set(INPUT_COLUMNS)  # every axis is a column of the exports


# ---------------------------------------------------------------- prices


def test_price_overrides(base):
    text = base.read_text() + (
        '[economics]\nmode = "own"\n[economics.prices]\nrent_usd_per_gpu_hour = 1.5\nusd_per_kwh = 0.2\n'
        "[economics.prices.roce-400g]\nswitch_usd = 1000\n"
    )
    base.write_text(text)
    s = load_scenario(base)
    assert s.space["economics"]["cost_mode"] == "own"
    assert [g["prices"]["rent_usd_per_gpu_hour"] for g in s.space["gpus"]] == [1.5]
    assert s.space["gpus"][0]["prices"]["server_usd"] == CAT.gpu_price("h100-sxm").server_usd
    assert s.space["economics"]["usd_per_kwh"] == 0.2
    ib, roce = s.space["fabrics"]
    assert ib["prices"]["switch_usd"] == CAT.fabric_price("ib-ndr").switch_usd
    assert roce["prices"]["switch_usd"] == 1000.0
    assert roce["prices"]["nic_usd"] == CAT.fabric_price("roce-400g").nic_usd


def test_price_table_for_an_entry_not_in_the_scenario(base):
    base.write_text(base.read_text() + "[economics.prices.b200]\nserver_usd = 1\n")
    with pytest.raises(CatalogError, match=r"'b200' is neither a GPU nor a fabric of this scenario"):
        load_scenario(base)


def _switch_prices(base, fabrics: str, tables: str) -> dict[str, float]:
    """Each fabric's switch price in a scenario of `fabrics` with the price `tables`."""
    base.write_text(BASE.replace('fabric = ["ib-ndr", "roce-400g"]', f"fabric = {fabrics}") + tables)
    s = load_scenario(base)
    return {name: f["prices"]["switch_usd"] for name, f in zip(s.fabric_names, s.space["fabrics"], strict=True)}


def test_a_fabric_price_table_applies_by_price_entry_then_by_design(base):
    # A mode runs the fabric's parts: `roce-400g`'s table prices it in every mode. A price variant is a price entry
    # of its own (branded boxes): `roce-400g`'s table leaves it alone, its own table prices it in every mode, and a
    # design's own table (mode and variant) comes last.
    fabrics = '["roce-400g@tuned", "roce-400g@branded", "roce-400g@tuned@branded"]'
    white, branded = CAT.fabric_price("roce-400g").switch_usd, CAT.fabric_price("roce-400g@branded").switch_usd
    assert white != branded
    got = _switch_prices(base, fabrics, '[economics.prices."roce-400g"]\nswitch_usd = 1\n')
    assert got == {"roce-400g@tuned": 1.0, "roce-400g@branded": branded, "roce-400g@tuned@branded": branded}
    tables = (
        '[economics.prices."roce-400g@branded"]\nswitch_usd = 2\n'
        '[economics.prices."roce-400g@tuned@branded"]\nswitch_usd = 3\n'
    )
    got = _switch_prices(base, fabrics, tables)
    assert got == {"roce-400g@tuned": white, "roce-400g@branded": 2.0, "roce-400g@tuned@branded": 3.0}


def test_a_price_table_for_a_design_roi_compares_is_the_files_own(base):
    # `[cluster] compare_with` names designs of the scenario too: their tables are accepted by a sweep (which does
    # not run them) as by `roi` (which does).
    fabrics = '["ib-ndr", "roce-400g"]\ncompare_with = ["roce-400g@tuned@branded"]'
    got = _switch_prices(base, fabrics, '[economics.prices."roce-400g@tuned@branded"]\nswitch_usd = 3\n')
    assert set(got) == {"ib-ndr@default", "roce-400g@untuned"}
    s = load_scenario(base, fabrics=["roce-400g@tuned@branded"])
    assert s.space["fabrics"][0]["prices"]["switch_usd"] == 3.0


def test_a_price_table_spelt_two_ways_is_refused(base):
    # `roce-400g@untuned@branded` is `roce-400g@branded` (the default mode keeps the short name).
    tables = (
        '[economics.prices."roce-400g@branded"]\nswitch_usd = 2\n'
        '[economics.prices."roce-400g@untuned@branded"]\nswitch_usd = 3\n'
    )
    with pytest.raises(
        CatalogError,
        match=r"'roce-400g@untuned@branded' is the table of fabric roce-400g@branded, which is priced twice",
    ):
        _switch_prices(base, '["roce-400g@branded"]', tables)


def test_a_price_table_for_a_mode_the_scenario_lacks_lists_the_tables_it_may_hold(base):
    with pytest.raises(
        CatalogError, match=r"'roce-400g@tuned' is neither .* its price tables: h100-sxm, roce-400g, roce-400g@untuned$"
    ):
        _switch_prices(base, '["roce-400g"]', '[economics.prices."roce-400g@tuned"]\nswitch_usd = 2\n')


# ---------------------------------------------------------------- bad files: one line, file, key, value


NEG_PRICE = "[economics.prices]\nrent_usd_per_gpu_hour = -1\n"
BAD = [
    # (id, change to BASE, what the message must name besides the file)
    ("unknown-key", ("global_batch = 64", "global_bath = 64"), ["global_bath", "did you mean 'global_batch'"]),
    ("unknown-table", ("[parallelism]", "[paralelism]"), ["paralelism", "did you mean 'parallelism'"]),
    ("wrong-type", ("global_batch = 64", 'global_batch = "64"'), ["global_batch", "'64'"]),
    ("empty-axis", ('fabric = ["ib-ndr", "roce-400g"]', "fabric = []"), ["fabric", "[]"]),
    ("zero-gpus", ("gpus = [64, 128]", "gpus = [0, 64]"), ["gpus", "0"]),
    ("negative-price", (None, NEG_PRICE), ["rent_usd_per_gpu_hour", "-1"]),
    (
        "unknown-price",
        (None, "[economics.prices]\nrent_usd_per_gpu_hr = 1\n"),
        ["rent_usd_per_gpu_hr", "did you mean 'rent_usd_per_gpu_hour'"],
    ),
    ("unknown-fabric", ('"roce-400g"', '"roce-400"'), ["fabric", "'roce-400'", "did you mean 'roce-400g'"]),
    ("unknown-gpu", ('"h100-sxm"', '"h100-sx"'), ["gpu", "'h100-sx'", "did you mean 'h100-sxm'"]),
    ("unknown-model", ('"llama3-8b"', '"llama3-7b"'), ["model", "'llama3-7b'"]),
    ("malformed-toml", ("tokens = 1e11", "tokens = "), ["not valid TOML", "line 4"]),
    ("one-objective", (None, '[objectives]\nminimize = ["mfu"]\n'), ["minimize", "'mfu'"]),
    ("unknown-objective", (None, '[objectives]\nminimize = ["mfu", "speed"]\n'), ["minimize", "'speed'"]),
    ("bad-group-by", (None, '[objectives]\ngroup_by = ["fabrc"]\n'), ["group_by", "'fabrc'"]),
    ("bad-recompute", ('"none", "selective"', '"nothing", "selective"'), ["recompute", "'nothing'"]),
    ("bad-overlap", ('overlap = ["dp", "full"]', 'overlap = ["dp", "sometimes"]'), ["overlap", "'sometimes'"]),
    (
        "unknown-recompute-module",
        ("zero = [1, 3]", 'zero = [1, 3]\nrecompute_modules = ["moe", "attn"]'),
        ["recompute_modules", "'attn'", "core_attn"],
    ),
    (
        "repeated-recompute-module",
        ("zero = [1, 3]", 'zero = [1, 3]\nrecompute_modules = "mlp,mlp"'),
        ["recompute_modules", "'mlp,mlp'", "each at most once"],
    ),
    (
        "range-backwards",
        ("gpus = [64, 128]", "gpus = { start = 128, stop = 64, factor = 2 }"),
        ["gpus", "stop (64) is below start (128)"],
    ),
    (
        "range-factor-and-step",
        ("gpus = [64, 128]", "gpus = { start = 8, stop = 64, factor = 2, step = 8 }"),
        ["gpus", "factor", "step"],
    ),
    (
        # 2^31 GPU counts: refused before listing them (100,001 is the smallest count refused).
        "range-too-many-counts",
        ("gpus = [64, 128]", "gpus = { start = 1, stop = 100001, step = 1 }"),
        ["gpus", "100,001 GPU counts", "at most 100,000"],
    ),
    ("zero-stage-4", ("zero = [1, 3]", "zero = [1, 4]"), ["zero", "4"]),
    (
        "oversubscription-below-1",
        ('topology = ["rail-fat-tree"]', 'topology = [{ name = "fat-tree", oversubscription = 0.5 }]'),
        ["oversubscription", "0.5"],
    ),
]


def _bad_file(write, change) -> Path:
    old, new = change
    text = BASE + new if old is None else BASE.replace(old, new, 1)
    assert text != BASE
    return write("bad.toml", text)


@pytest.mark.parametrize("change, mentions", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_file_is_one_catalog_error(write, change, mentions):
    path = _bad_file(write, change)
    with pytest.raises(CatalogError) as info:
        load_scenario(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: ")
    for m in mentions:
        assert m in msg, msg


@pytest.mark.parametrize("change, mentions", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_file_exits_2_with_one_line(write, capsys, change, mentions):
    path = _bad_file(write, change)
    out_file = path.parent / "out.csv"
    code, out, err = run(["sweep", str(path), "--out", str(out_file)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"scalefront: error: {path}: ") and "Traceback" not in err
    for m in mentions:
        assert m in err
    assert not out_file.exists()


def test_negative_price_for_one_entry_says_what_is_wrong(base):
    # A per-entry table ([economics.prices.<id>]) with a negative price: the message must name the key and the
    # value and say that prices cannot be negative, not that a number was expected.
    base.write_text(base.read_text() + "[economics.prices.ib-ndr]\nswitch_usd = -1\n")
    with pytest.raises(CatalogError) as info:
        load_scenario(base)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{base}: ")
    assert "switch_usd" in msg and "-1" in msg
    assert ">= 0" in msg, msg


def test_missing_scenario_file(capsys, tmp_path):
    code, out, err = run(["sweep", str(tmp_path / "nowhere.toml")], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "nowhere.toml" in err and "cannot read" in err


def test_megatron_modules_rerun_where_recomputation_is_selective(write):
    # [parallelism] recompute_modules: the modules every selective configuration of the space reruns; the
    # configurations without or with full recomputation are as before, and every row shows the setting.
    def fastest(modules: str | None) -> dict[str, float]:
        extra = "" if modules is None else f"\nrecompute_modules = {modules}"
        text = BASE.replace("zero = [1, 3]", f"zero = [1, 3]{extra}", 1) + '[objectives]\ngroup_by = ["recompute"]\n'
        kept = run_sweep(load_scenario(write("m.toml", text))).kept
        assert set(kept["recompute_modules"]) == {"" if modules is None else "layernorm,mlp"}
        modes = ("none", "selective", "full")
        return {r: kept.filter(kept["recompute"] == r)["time_to_train_days"].min() for r in modes}

    plain, mlp = fastest(None), fastest('["mlp", "layernorm"]')
    assert mlp["none"] == plain["none"] and mlp["full"] == plain["full"]
    # Rerunning the whole MLP costs more than Korthikanti's norms and activation, less than the whole layer.
    assert plain["selective"] < mlp["selective"] < mlp["full"]


def test_duplicate_axis_values_do_not_duplicate_configurations(write):
    # fabric = ["ib-ndr", "ib-ndr"]: either refused (naming the key) or swept once; never every configuration
    # twice (the --all export would then hold duplicate configurations).
    path = write("dup.toml", BASE.replace('fabric = ["ib-ndr", "roce-400g"]', 'fabric = ["ib-ndr", "ib-ndr"]'))
    try:
        s = load_scenario(path)
    except CatalogError as err:
        assert "fabric" in str(err) and "\n" not in str(err)
        return
    rows = []
    result = run_sweep(s, on_rows=rows.append)
    assert s.size() == 1536 // 2
    assert result.feasible == sum(r.height for r in rows)
    assert not any(r.select(INPUT_COLUMNS).is_duplicated().any() for r in rows)


# ---------------------------------------------------------------- workload mixes


def test_a_mix_is_one_scenario_per_workload():
    from scalefront.inputs.scenario import load_mix

    parts = load_mix("mix")
    assert [(p.name, p.share) for p in parts] == [("70b-pretraining", 0.6), ("moe", 0.25), ("long-context", 0.15)]
    assert [p.scenario.seq_len for p in parts] == [8192, 4096, 32768]
    assert parts[1].scenario.model_name == "mixtral-8x7b"
    # The same cluster for all: counts, fabrics, topologies.
    assert len({tuple(p.scenario.gpu_counts) for p in parts}) == 1
    # A single-workload scenario is a mix of one at share 1.
    assert [(p.name, p.share) for p in load_mix("ib-vs-roce")] == [("llama3-70b", 1.0)]


@pytest.mark.parametrize(
    "mix, message",
    [
        ([0.5, 0.4], "the shares add up to 0.5 + 0.4 = 0.9; they must add up to 1"),
        ([0.5, 0.6], "the shares add up to 0.5 + 0.6 = 1.1"),
        ([1.0, 0.0], "share"),
    ],
)
def test_mix_shares_are_checked(mix, message):
    from scalefront.inputs.scenario import load_mix

    raw, _ = read_scenario("ib-vs-roce")
    raw = {k: v for k, v in raw.items() if k != "workload"}
    wl = read_scenario("ib-vs-roce")[0]["workload"]
    raw["workloads"] = [{**wl, "name": f"w{i}", "share": s} for i, s in enumerate(mix)]
    with pytest.raises(CatalogError, match=re.escape(message)):
        load_mix((raw, "m.toml"))


def test_mix_needs_distinct_names_and_not_both_forms():
    from scalefront.inputs.scenario import load_mix

    raw, _ = read_scenario("ib-vs-roce")
    wl = raw["workload"]
    with pytest.raises(CatalogError, match="not both"):
        load_mix(({**raw, "workloads": [{**wl, "share": 1.0}]}, "m.toml"))
    twice = {k: v for k, v in raw.items() if k != "workload"}
    twice["workloads"] = [{**wl, "share": 0.5}, {**wl, "share": 0.5}]
    with pytest.raises(CatalogError, match="'llama3-70b' is listed twice"):
        load_mix((twice, "m.toml"))
    with pytest.raises(UsageError, match="choose one with --workload"):
        load_scenario("mix")
    assert load_scenario("mix", workload="moe").model_name == "mixtral-8x7b"

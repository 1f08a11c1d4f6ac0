"""Catalogs: the built-in data/ files, user catalog files and model files, and the errors of bad ones."""

from __future__ import annotations

import datetime
import re

import pytest

import scalefront
from helpers import DATA, toml_table
from scalefront import Catalog, CatalogError, ScalefrontError, _core, evaluate, load_model_file

KIND_FILES = ["gpus.toml", "scale_up.toml", "fabrics.toml", "topologies.toml"]
DATE_AT_END = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?\s*$")


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _raw_entries(raw):
    """(file, entry id, raw table) of every built-in catalog and price entry, read with tomllib."""
    for f in KIND_FILES:
        for eid, e in raw(f).items():
            yield f, eid, e
    prices = raw("prices.toml")
    for table in ("gpu", "fabric"):
        for eid, e in prices[table].items():
            yield "prices.toml", f"{table}.{eid}", e
    yield "prices.toml", "economics", prices["economics"]


# ---------------------------------------------------------------- built-in catalog


def test_builtin_catalog_has_every_entry_of_the_data_files(raw):
    cat = Catalog.builtin()
    # The ids are the top-level tables of each data file.
    assert set(cat.gpus) == set(raw("gpus.toml"))
    assert set(cat.scale_up) == set(raw("scale_up.toml"))
    assert set(cat.fabrics) == set(raw("fabrics.toml"))
    assert set(cat.topologies) == set(raw("topologies.toml"))
    assert set(cat.models) == {p.stem for p in (DATA / "models").glob("*.toml")}
    assert {"h100-sxm", "a100-80gb", "mi300x"} <= set(cat.gpus)
    assert {"llama3-70b", "mixtral-8x7b"} <= set(cat.models)
    # Every GPU and fabric is priced and every GPU's scale-up domain exists, so evaluate() works for each.
    assert set(cat.gpu_prices) == set(cat.gpus)
    # Prices may wait for a fabric that is not in the catalog yet (spectrum-x, uec-800g): a superset.
    assert set(cat.fabric_prices) >= set(cat.fabrics)
    assert cat.economics is not None
    for gpu in cat.gpus.values():
        assert gpu.default_scale_up in cat.scale_up


def test_builtin_values_are_the_file_values(raw):
    cat = Catalog.builtin()
    h100 = cat.gpu("h100-sxm")
    # NVIDIA H100 SXM datasheet: 989 dense BF16 TFLOP/s, 80 GB HBM3 (data/gpus.toml).
    assert h100.peak_bf16_tflops == 989.0
    assert h100.hbm_gb == 80.0
    assert cat.fabric("ib-ndr").link_gbps == raw("fabrics.toml")["ib-ndr"]["link_gbps"] == 400.0
    # A range { low, typical, high }: the model uses the typical value and keeps the range.
    rent = raw("prices.toml")["gpu"]["h100-sxm"]["rent_usd_per_gpu_hour"]
    assert cat.gpu_price("h100-sxm").rent_usd_per_gpu_hour == rent["typical"]
    assert tuple(cat.gpu_price("h100-sxm").range_of("rent_usd_per_gpu_hour")) == (
        rent["low"],
        rent["typical"],
        rent["high"],
    )
    # A plain number is its own range.
    assert tuple(cat.gpu_price("h100-sxm").range_of("gpus_per_rack")) == (32.0, 32.0, 32.0)
    m = cat.model("llama3-70b")
    # Llama 3 paper (arXiv 2407.21783) Table 3: 80 layers, model dim 8192, FFN 28672, 64 heads, 8 KV heads.
    assert (m.layers, m.hidden, m.ffn_hidden, m.heads, m.kv_heads, m.vocab) == (80, 8192, 28672, 64, 8, 128256)
    assert not m.is_moe
    assert cat.model("mixtral-8x7b").is_moe


def test_every_data_file_is_embedded_byte_for_byte():
    # data/**/*.toml, the validation tables (data/validation/*.toml) among them.
    on_disk = {p.relative_to(DATA).as_posix(): p for p in DATA.rglob("*.toml")}
    embedded = _core.data_files()
    assert set(embedded) == set(on_disk)
    for rel, path in on_disk.items():
        assert embedded[rel].encode("utf-8") == path.read_bytes(), f"data/{rel} differs from the embedded copy"


def test_every_builtin_figure_has_a_dated_source(raw):
    checked = 0
    for file, eid, entry in _raw_entries(raw):
        sources = entry.get("sources", {})
        # A source for a field the entry does not have is a typo that would leave the real field unsourced.
        assert set(sources) <= set(entry) - {"sources"}, f"{file} [{eid}]: sources for unknown fields"
        for field, value in entry.items():
            if not _is_number(value):
                continue
            source = sources.get(field)
            assert source, f"{file} [{eid}] {field}: no source"
            m = DATE_AT_END.search(source)
            assert m, f"{file} [{eid}] {field}: source does not end with YYYY-MM[-DD]: {source!r}"
            datetime.date(int(m[1]), int(m[2]), int(m[3] or 1))  # a real calendar date
            assert 1990 <= int(m[1]) <= 2100
            checked += 1
    assert checked > 150  # 6 GPUs x 11 figures alone is 66: the walk really visited the files


def test_every_builtin_model_names_a_dated_source(raw):
    for path in sorted((DATA / "models").glob("*.toml")):
        source = raw(f"models/{path.name}")["source"]
        assert DATE_AT_END.search(source), f"{path.name}: source {source!r} has no date"


# ---------------------------------------------------------------- user catalog files


def _gpu_file(write, entry, header="gpus.my-gpu", name="bad.toml"):
    return write(name, toml_table(header, entry))


def _without(d, key):
    return {k: v for k, v in d.items() if k != key}


# (case id, how to break a copy of the h100-sxm entry, substrings the one-line message must contain)
BAD_GPU_ENTRIES = [
    ("unknown-field", lambda e: {**e, "hbm_gbs": 1.0}, ["hbm_gbs", "unknown field", "did you mean 'hbm_gb'"]),
    ("missing-field", lambda e: _without(e, "tdp_w"), ["tdp_w", "missing"]),
    ("string-for-number", lambda e: {**e, "tdp_w": "lots"}, ["tdp_w", "number"]),
    ("negative", lambda e: {**e, "tdp_w": -700.0}, ["tdp_w", "expected a number > 0, got -700.0"]),
    ("zero-peak", lambda e: {**e, "peak_bf16_tflops": 0.0}, ["peak_bf16_tflops"]),
    ("fraction-above-1", lambda e: {**e, "gemm_efficiency": 1.5}, ["gemm_efficiency"]),
    ("fractional-count", lambda e: {**e, "server_gpus": 8.5}, ["server_gpus", "expected a whole number, got 8.5"]),
    ("undated-source", lambda e: {**e, "sources": {**e["sources"], "tdp_w": "datasheet"}}, ["tdp_w", "YYYY-MM"]),
    ("no-source", lambda e: {**e, "sources": _without(e["sources"], "tdp_w")}, ["tdp_w", "no source"]),
    ("name-not-string", lambda e: {**e, "name": 5}, ["name", "expected text", "got 5"]),
]


@pytest.mark.parametrize("mutate, expected", [c[1:] for c in BAD_GPU_ENTRIES], ids=[c[0] for c in BAD_GPU_ENTRIES])
def test_bad_gpu_entry_is_one_line_naming_file_entry_and_field(write, h100_entry, mutate, expected):
    path = _gpu_file(write, mutate(h100_entry))
    with pytest.raises(CatalogError) as info:
        Catalog.load(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: [my-gpu]")
    for part in expected:
        assert part in msg


def test_nan_figure_is_rejected(write, h100_entry):
    text = toml_table("gpus.my-gpu", h100_entry).replace("tdp_w = 700.0", "tdp_w = nan")
    with pytest.raises(CatalogError, match=r"\[my-gpu\] tdp_w: .*finite"):
        Catalog.load(write("nan.toml", text))


# data/README.md: "the loader rejects ... a wrong type": a string or a boolean where a number belongs is an error,
# never coerced (`tdp_w = "700"` is not 700 W, `server_gpus = true` is not 1 GPU per server).
@pytest.mark.parametrize(
    "field, value",
    [("tdp_w", "700"), ("tdp_w", True), ("server_gpus", True), ("hbm_gb", "80")],
    ids=["numeric-string-float", "bool-float", "bool-int", "numeric-string-hbm"],
)
def test_wrong_toml_type_is_rejected_not_coerced(write, h100_entry, field, value):
    path = _gpu_file(write, {**h100_entry, field: value})
    with pytest.raises(CatalogError) as info:
        Catalog.load(path)
    assert f"[my-gpu] {field}" in str(info.value)


def test_malformed_toml_names_the_file_and_line(write, h100_entry):
    good = toml_table("gpus.my-gpu", h100_entry)
    path = write("broken.toml", good + "this is = = not toml\n")
    with pytest.raises(CatalogError) as info:
        Catalog.load(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: not valid TOML")
    bad_line = good.count("\n") + 1  # the appended line follows the entry's lines
    assert f"line {bad_line}," in msg


def test_unknown_kind_table_suggests_the_kind(write, h100_entry):
    path = _gpu_file(write, h100_entry, header="gpu.my-gpu")
    with pytest.raises(CatalogError) as info:
        Catalog.load(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: [gpu]")
    assert "did you mean 'gpus'" in msg


def test_default_scale_up_pointing_nowhere(write, h100_entry):
    path = _gpu_file(write, {**h100_entry, "default_scale_up": "nvlink9"})
    with pytest.raises(CatalogError) as info:
        Catalog.load(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: [my-gpu] default_scale_up")
    assert "'nvlink9'" in msg and "nvlink4-8" in msg  # lists the domains that do exist


def test_bad_fabric_kind_and_bad_price_entry(write, raw):
    fab = {**raw("fabrics.toml")["ib-ndr"], "kind": "ethernet"}
    path = write("fab.toml", toml_table("fabrics.my-net", fab))
    wanted = r"^.*fab\.toml: \[my-net\] kind: expected one of infiniband, .*, got 'ethernet'$"
    with pytest.raises(CatalogError, match=wanted):
        Catalog.load(path)
    # Who picks a collective's algorithm is a name from the core's list, checked like any other.
    fab = {**raw("fabrics.toml")["efa"], "collective_tuner": "aws-ofi-p6"}
    path = write("tuner.toml", toml_table("fabrics.my-efa", fab))
    wanted = r"^.*tuner\.toml: \[my-efa\] collective_tuner: expected one of nccl or aws-ofi-p5, got 'aws-ofi-p6'$"
    with pytest.raises(CatalogError, match=wanted):
        Catalog.load(path)
    price = {**raw("prices.toml")["gpu"]["h100-sxm"], "rent_usd_per_gpu_hour": -1.0}
    path = write("price.toml", toml_table("prices.gpu.h100-sxm", price))
    with pytest.raises(CatalogError, match=r"price\.toml: \[gpu\.h100-sxm\] rent_usd_per_gpu_hour: "):
        Catalog.load(path)
    with pytest.raises(CatalogError, match=r"\[rent\] is not a price table"):
        Catalog.load(write("price2.toml", "[prices.rent]\nx = 1.0\n"))


@pytest.mark.parametrize(
    "flag", ["selective_recomputes_alternate_mms", "fp8_keeps_quantized_inputs", "zeroes_grad_buffer"]
)
@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda e, f: {**e, f: "yes"}, "expected true or false, got 'yes'"),
        (lambda e, f: _without(e, f), "missing"),
    ],
    ids=["string-for-flag", "missing-flag"],
)
def test_bad_framework_flag_is_one_line_naming_file_entry_and_field(write, raw, mutate, expected, flag):
    # A framework's behaviour flags (the per-operator selective recomputation, the FP8 inputs kept for the backward)
    # are read as strictly as figures.
    path = write("fw.toml", toml_table("frameworks.my-titan", mutate(raw("frameworks.toml")["torchtitan"], flag)))
    with pytest.raises(CatalogError) as info:
        Catalog.load(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg == f"{path}: [my-titan] {flag}: {expected}"


def test_negative_optimizer_bytes_is_one_line_naming_file_entry_and_field(write, raw):
    # The optimizer step's traffic per parameter (design note Sec. 36) is a byte count: none below zero.
    entry = {**raw("frameworks.toml")["megatron-core"], "optimizer_bytes_per_param": -3.0}
    path = write("fw.toml", toml_table("frameworks.my-core", entry))
    with pytest.raises(CatalogError) as info:
        Catalog.load(path)
    assert str(info.value) == f"{path}: [my-core] optimizer_bytes_per_param: expected a number >= 0, got -3.0"


def test_unreadable_file_is_a_catalog_error(tmp_path):
    path = tmp_path / "missing.toml"
    with pytest.raises(CatalogError, match=r"missing\.toml: cannot read"):
        Catalog.load(path)


def test_user_catalog_adds_a_gpu(my_gpu_catalog):
    cat = Catalog.load(my_gpu_catalog)
    assert "my-gpu" in cat.gpus and "h100-sxm" in cat.gpus  # added, built-ins kept
    # Llama 3 70B on 8 GPUs, tp 8, no ZeRO: ~160 GB per GPU (12 B/param optimizer states of 70.55B / 8 alone is
    # 106 GB), so an 80 GB H100 cannot hold it and a 200 GB copy of the H100 can.
    kw = dict(model="llama3-70b", gpus=8, tp=8, zero=0)
    mine = evaluate(gpu="my-gpu", catalog=cat, **kw)
    h100 = evaluate(gpu="h100-sxm", catalog=cat, **kw)
    assert mine.gpu == "my-gpu"
    assert mine.feasible and not h100.feasible
    assert mine.memory.hbm_bytes == 200e9
    # Only the HBM capacity differs, so the time, memory need and cost are the H100's.
    assert mine.step_time_s == h100.step_time_s
    assert mine.memory.memory_per_gpu_bytes == h100.memory.memory_per_gpu_bytes
    assert mine.cost_rent_usd == h100.cost_rent_usd


def test_user_gpu_needs_a_price(write, h100_entry):
    path = write("noprice.toml", toml_table("gpus.my-gpu", h100_entry))
    cat = Catalog.load(path)
    # The message names every file a price was looked for in (a user file may hold a price under a misspelt id).
    with pytest.raises(
        CatalogError, match=rf"^no price for GPU 'my-gpu' in data/prices.toml or {re.escape(str(path))}$"
    ):
        evaluate(gpu="my-gpu", catalog=cat)


def test_user_catalog_overrides_a_builtin_entry_and_later_files_win(write, h100_entry):
    first = write("a.toml", toml_table("gpus.h100-sxm", {**h100_entry, "hbm_gb": 120.0}))
    second = write("b.toml", toml_table("gpus.h100-sxm", {**h100_entry, "hbm_gb": 160.0}))
    assert Catalog.load(first).gpu("h100-sxm").hbm_gb == 120.0
    assert Catalog.load(first, second).gpu("h100-sxm").hbm_gb == 160.0
    # The built-in catalog itself is untouched.
    assert Catalog.builtin().gpu("h100-sxm").hbm_gb == 80.0
    assert evaluate().memory.hbm_bytes == 80e9


def test_a_user_file_changes_one_builtin_price_and_keeps_the_rest(write, raw):
    # A buyer's NIC quote: only the NIC line and its source. The built-in roce-400g price (data/prices.toml) keeps
    # every other line, range and source; the NIC line is the quote's, a plain number (no range left over).
    path = write(
        "nic.toml",
        "[prices.fabric.roce-400g]\nnic_usd = 1200.0\n"
        '[prices.fabric.roce-400g.sources]\nnic_usd = "vendor quote Q-17; 2026-11"\n'
        '[prices.fabric.roce-400g.status]\nnic_usd = "quoted"\n',
    )
    builtin = raw("prices.toml")["fabric"]["roce-400g"]
    mine = Catalog.load(path).fabric_prices["roce-400g"]
    assert mine.nic_usd == 1200.0 and mine.range_of("nic_usd") == (1200.0, 1200.0, 1200.0)
    assert mine.sources["nic_usd"] == "vendor quote Q-17; 2026-11" and mine.status_of("nic_usd") == "quoted"
    assert mine.switch_usd == builtin["switch_usd"]["typical"] == 22000.0
    assert mine.range_of("switch_usd") == (15000.0, 22000.0, 30000.0)
    assert mine.sources["switch_usd"] == builtin["sources"]["switch_usd"]
    assert mine.ops_staff_fte == builtin["ops_staff_fte"]["typical"]
    assert mine.modes == Catalog.builtin().fabric_prices["roce-400g"].modes
    # Llama 3 70B on 512 H100s, one 400G NIC a GPU: the network's capex falls by 512 x (2,188 - 1,200) exactly.
    kw = dict(model="llama3-70b", gpu="h100-sxm", gpus=512, tp=8, pp=4, fabric="roce-400g")
    before, after = evaluate(**kw), evaluate(**kw, catalog=Catalog.load(path))
    assert before.network_capex_usd - after.network_capex_usd == pytest.approx(512 * (2188.0 - 1200.0))


def test_a_new_entry_like_a_builtin_one_takes_its_figures_and_sources(write):
    # An H100 with 141 GB (the README's example): every other figure, range and source is the H100's; the one
    # changed figure carries its own source, as a changed built-in figure must. The price table takes like too.
    path = write(
        "like.toml",
        '[gpus.h100-141]\nlike = "h100-sxm"\nname = "H100 with 141 GB"\nhbm_gb = 141.0\n'
        '[gpus.h100-141.sources]\nhbm_gb = "our vendor\'s part; 2026-11"\n'
        '[prices.gpu.h100-141]\nlike = "h100-sxm"\nserver_usd = 330000.0\n'
        '[prices.gpu.h100-141.sources]\nserver_usd = "quote; 2026-11"\n',
    )
    cat = Catalog.load(path)
    mine, h100 = cat.gpu("h100-141"), cat.gpu("h100-sxm")
    assert mine.hbm_gb == 141.0 and mine.sources["hbm_gb"] == "our vendor's part; 2026-11"
    assert (
        mine.gemm_efficiency == h100.gemm_efficiency
        and mine.sources["gemm_efficiency"] == h100.sources["gemm_efficiency"]
    )
    assert mine.model_dump() == {**h100.model_dump(), "name": "H100 with 141 GB", "hbm_gb": 141.0}
    price = cat.gpu_prices["h100-141"]
    assert price.server_usd == 330000.0 and price.range_of("rent_usd_per_gpu_hour") == cat.gpu_prices[
        "h100-sxm"
    ].range_of("rent_usd_per_gpu_hour")
    kw = dict(model="llama3-70b", gpus=512, tp=8, pp=4, catalog=cat)
    assert evaluate(gpu="h100-141", **kw).step_time_s == evaluate(gpu="h100-sxm", **kw).step_time_s
    # The built-in V100 in an 8-GPU server is the 4-GPU server's part: like = "v100-16gb" in data/gpus.toml.
    v8, v4 = Catalog.builtin().gpu("v100-16gb-8x"), Catalog.builtin().gpu("v100-16gb")
    assert (v8.server_gpus, v4.server_gpus, v8.gemm_efficiency) == (8, 4, v4.gemm_efficiency)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[gpus.x]\nlike = 3\n", r"bad\.toml: \[x\] like: expected the id of another entry of \[gpus\], got 3$"),
        (
            '[gpus.x]\nlike = "h100-sx"\n',
            r"\[x\] like: 'h100-sx' is not an entry of \[gpus\]; did you mean 'h100-sxm'\?$",
        ),
        ('[gpus.h200]\nlike = "h100-sxm"\n', r"\[h200\] like: 'h200' exists already; give only the figures you change"),
        ('[prices.gpu.x]\nlike = "nope"\n', r"\[gpu\.x\] like: 'nope' is not an entry of \[prices\.gpu\]"),
    ],
)
def test_a_bad_like_is_one_line_naming_file_entry_and_field(write, text, expected):
    with pytest.raises(CatalogError, match=expected):
        Catalog.load(write("bad.toml", text))


def test_a_changed_figure_needs_a_source_of_its_own(write):
    # The built-in source described the built-in figure: a changed figure without one is refused, one line.
    path = write("nosrc.toml", "[prices.fabric.roce-400g]\nnic_usd = 1200.0\n")
    with pytest.raises(CatalogError, match=r"nosrc\.toml: \[fabric\.roce-400g\] nic_usd: no source"):
        Catalog.load(path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[gpus.h100-sxm]\nhbm_gb = -1.0\n[gpus.h100-sxm.sources]\nhbm_gb = "x; 2026-11"\n',
            r"\[h100-sxm\] hbm_gb: .*> 0",
        ),
        (
            '[prices.fabric.roce-400g]\nnic_usd = 1.0\nsources = "q; 2026-11"\n',
            r"\[fabric\.roce-400g\] sources: expected a table",
        ),
    ],
)
def test_a_bad_change_to_a_builtin_entry_is_one_line_naming_the_users_file(write, text, expected):
    path = write("change.toml", text)
    with pytest.raises(CatalogError, match=rf"^{re.escape(str(path))}: {expected}"):
        Catalog.load(path)


def test_a_new_entry_still_needs_every_figure(write):
    text = '[prices.fabric.my-net]\nnic_usd = 1200.0\n[prices.fabric.my-net.sources]\nnic_usd = "q; 2026-11"\n'
    path = write("new.toml", text)
    with pytest.raises(CatalogError, match=r"new\.toml: \[fabric\.my-net\] switch_usd: missing"):
        Catalog.load(path)


def test_later_files_change_what_earlier_ones_left(write):
    first = write("a.toml", '[gpus.h100-sxm]\nhbm_gb = 120.0\n[gpus.h100-sxm.sources]\nhbm_gb = "ours; 2026-11"\n')
    second = write(
        "b.toml",
        '[prices.economics]\ndiscount_rate = 0.09\n[prices.economics.sources]\ndiscount_rate = "ours; 2026-11"\n',
    )
    third = write("c.toml", '[gpus.h100-sxm]\ntdp_w = 650.0\n[gpus.h100-sxm.sources]\ntdp_w = "capped; 2026-11"\n')
    cat = Catalog.load(first, second, third)
    gpu = cat.gpu("h100-sxm")
    assert (gpu.hbm_gb, gpu.tdp_w) == (120.0, 650.0)
    assert (gpu.sources["hbm_gb"], gpu.sources["tdp_w"]) == ("ours; 2026-11", "capped; 2026-11")
    assert gpu.gemm_efficiency == Catalog.builtin().gpu("h100-sxm").gemm_efficiency
    assert cat.economics is not None and cat.economics.discount_rate == 0.09
    assert cat.economics.pue == Catalog.builtin().economics.pue


def test_user_catalog_adds_a_model_by_name(write, raw):
    model = dict(raw("models/llama3-8b.toml"))
    path = write("models.toml", toml_table("models.my-8b", model))
    cat = Catalog.load(path)
    r = evaluate("my-8b", gpus=8, tp=8, catalog=cat)
    assert r.params_total == evaluate("llama3-8b", gpus=8, tp=8).params_total


# ---------------------------------------------------------------- model files


def test_model_file_works_like_the_catalog_model(write):
    path = write("my-model.toml", (DATA / "models" / "llama3-70b.toml").read_text(encoding="utf-8"))
    assert load_model_file(path) == Catalog.builtin().model("llama3-70b")
    from_file = evaluate(model=str(path))
    builtin = evaluate(model="llama3-70b")
    assert from_file.model == str(path)
    assert from_file.to_dict() == {**builtin.to_dict(), "model": str(path)}
    assert evaluate(model=path).step_time_s == builtin.step_time_s  # a Path works too


LLAMA_8B = (DATA / "models" / "llama3-8b.toml").read_text(encoding="utf-8")

BAD_MODEL_FILES = [
    ("missing", LLAMA_8B.replace("hidden = 4096\n", ""), ["hidden", "missing"]),
    ("unknown-extra", LLAMA_8B + "dropout = 0.1\n", ["dropout", "unknown field"]),
    ("string-type", LLAMA_8B.replace('name = "Llama 3 8B"', "name = 8"), ["name"]),
    ("negative", LLAMA_8B.replace("layers = 32", "layers = -32"), ["layers"]),
    ("kv-heads", LLAMA_8B.replace("kv_heads = 8", "kv_heads = 7"), ["kv_heads", "must divide heads"]),
    ("moe-partial", LLAMA_8B + "moe_experts = 8\n", ["moe_experts", "go together"]),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in BAD_MODEL_FILES], ids=[c[0] for c in BAD_MODEL_FILES])
def test_bad_model_file_names_file_and_field(write, text, expected):
    path = write("bad-model.toml", text)
    with pytest.raises(CatalogError) as info:
        evaluate(model=str(path))
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: [bad-model]")
    for part in expected:
        assert part in msg


def test_malformed_model_file(write):
    path = write("m.toml", LLAMA_8B.replace("layers = 32", "layers = "))
    with pytest.raises(CatalogError, match=r"m\.toml: not valid TOML: .*line 3"):
        evaluate(model=str(path))


# A misspelt field is reported as the unknown field it is, with the suggestion (not as the real field "missing").
def test_misspelt_model_field_is_named_with_a_suggestion(write):
    path = write("typo.toml", LLAMA_8B.replace("kv_heads = 8", "kv_head = 8"))
    with pytest.raises(CatalogError) as info:
        load_model_file(path)
    assert "kv_head:" in str(info.value) and "did you mean 'kv_heads'" in str(info.value)


# The same for model files: `layers = true` is not a 1-layer model, `hidden = "4096"` and `gated_mlp = "yes"` are
# refused.
@pytest.mark.parametrize(
    "old, new, field",
    [
        ("layers = 32", "layers = true", "layers"),
        ("hidden = 4096", 'hidden = "4096"', "hidden"),
        ("gated_mlp = true", 'gated_mlp = "yes"', "gated_mlp"),
    ],
    ids=["bool-for-int", "string-for-int", "string-for-bool"],
)
def test_model_file_wrong_type_is_rejected(write, old, new, field):
    path = write("typed.toml", LLAMA_8B.replace(old, new))
    with pytest.raises(CatalogError, match=rf"\[typed\] {field}"):
        load_model_file(path)


def test_errors_share_one_base_class():
    assert issubclass(CatalogError, ScalefrontError)
    assert issubclass(scalefront.UsageError, ScalefrontError)
    assert issubclass(scalefront.ConfigurationError, ScalefrontError)
    assert issubclass(ScalefrontError, Exception)


def _same_document(a, b) -> bool:
    """Equal values of equal types, tables with their keys in the same order (what a catalog's order depends on)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_document(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_document(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_the_core_reads_every_embedded_file_as_tomllib_does():
    # The built-in files are parsed by the core for speed (scalefront.inputs.files.parse_builtin_toml): the same
    # documents as Python's reader, key order and types included (an int stays an int, 1.0 a float).
    import tomllib

    files = _core.data_files()
    assert len(files) > 20
    for path, text in files.items():
        assert _same_document(_core.parse_builtin_toml(text), tomllib.loads(text)), path


def test_the_core_declines_what_tomllib_must_read():
    # A date, or text that is not TOML: the core declines (ValueError) and the reader falls back to tomllib, which
    # gives its own value or the usual one-line error.
    from scalefront.inputs.files import parse_builtin_toml

    for text in ["when = 2026-11-26", "x = [1,"]:
        with pytest.raises(ValueError):
            _core.parse_builtin_toml(text)
    assert parse_builtin_toml("when = 2026-11-26", "data/x.toml") == {"when": datetime.date(2026, 11, 26)}
    with pytest.raises(CatalogError, match=r"^data/x\.toml: not valid TOML"):
        parse_builtin_toml("x = [1,", "data/x.toml")

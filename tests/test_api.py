"""scalefront.api, the public API for user interfaces: numbers as people write and read them, friendly columns
and filters from the schema, an editable scenario (form values, every error at once, saving to TOML), a sweep
steered from another thread (pause gate, cancel), the fabric comparison with what-if inputs, and exports.
Worked values are shown in comments. How front ends find and use the API: test_ui_entry_point.py."""

from __future__ import annotations

import re
import threading
from dataclasses import replace

import polars as pl
import pytest

from scalefront import api, schema
from scalefront.inputs.catalog import builtin_catalog
from scalefront.units import split_list


@pytest.fixture(scope="module")
def draft() -> api.ScenarioDraft:
    return api.ScenarioDraft.open("ib-vs-roce")


@pytest.fixture(scope="module")
def result(draft: api.ScenarioDraft) -> api.SweepResult:
    return api.SweepJob(draft).run()


# ---------------------------------------------------------------------------------------------- numbers
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2T", 2e12),
        ("2 trillion", 2e12),
        ("1,024", 1024),
        ("1k", 1000),
        ("$2.50", 2.5),
        ("15%", 0.15),
        ("1.5e12", 1.5e12),
        ("4_096", 4096),
        ("$1.2M", 1.2e6),
        (" 16384 ", 16384),
    ],
)
def test_numbers_as_people_write_them(text, value):
    assert api.parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["abc", "1,02", "", "2x", "1.2.3", "$", "1e999"])
def test_a_bad_number_says_so_in_plain_words(text):
    with pytest.raises(ValueError) as err:
        api.parse_number(text, what="tokens")
    message = str(err.value)
    assert message.startswith("tokens: ")
    assert "invalid literal" not in message and "could not convert" not in message


def test_lists_split_on_commas_that_are_not_thousands_separators():
    assert split_list("512, 1,024, 2k") == ["512", "1,024", "2k"]
    assert split_list("1,024,2,048") == ["1,024", "2,048"]
    assert split_list("512,1024;2048 4096") == ["512", "1024", "2048", "4096"]


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.23e6, "$1.23M"), (1.2e6, "$1.20M"), (412e3, "$412k"), (980, "$980"), (2.5, "$2.50"), (-3.1e6, "-$3.10M")],
)
def test_money_always_has_three_figures(value, text):
    assert api.format_money(value) == text


def test_counts_percentages_and_si():
    assert api.format_count(16384) == "16,384"
    assert api.format_percent(0.145) == "14.5%"
    assert api.format_si(2e12) == "2T" and api.format_si(70.6e9) == "70.6B"


def test_columns_format_by_their_schema_unit():
    # MFU is a "fraction" in the schema: shown as a percentage wherever it is shown.
    assert api.column_spec("mfu").format(0.145) == "14.5%"
    assert api.column_spec("cost_to_train_usd").format(130600.0) == "$131k"
    assert api.column_spec("gpus").format(16384) == "16,384"
    assert api.column_spec("tokens").format(2e12) == "2T"
    assert api.column_spec("step_time_s").format(0.85) == "850ms"
    # Under a millisecond in microseconds (an optimizer step of 47.9 us read "0.0479ms"), zero as "0s".
    assert [api.column_spec("optimizer_s").format(v) for v in (4.79e-5, 0.0)] == ["47.9us", "0s"]
    assert api.column_spec("time_to_train_days").label == "days"
    # A cost ratio shown as a premium, as `roi --premium 1.3` and the ROI tab's quote mean it: 1.3 is +30%.
    assert (api.format_value(1.3, "premium"), api.format_value(0.9, "premium")) == ("+30%", "-10%")
    for c in (*schema.INPUTS, *schema.METRICS):  # every column has a label and a formatter
        assert api.column_spec(c.name).label
        assert isinstance(api.column_spec(c.name).format(1 if c.kind != "text" else "x"), str)


# ---------------------------------------------------------------------------------------------- frames
def test_frontier_frames_carry_the_derived_columns_and_exports_drop_them(result, tmp_path):
    frame = api.frontier(result)
    row = frame.row(0, named=True)
    # layout joins the degrees: "tp8 pp16 v5 dp64 cp2" for tp 8, pp 16, vpp 5, dp 64, cp 2 (ep 1 left out).
    expected = f"tp{row['tp']} pp{row['pp']}" + (f" v{row['vpp']}" if row["vpp"] > 1 else "") + f" dp{row['dp']}"
    assert row["layout"].startswith(expected)
    assert row["topology_label"] in (row["topology"], f"{row['topology']} {row['oversubscription']:g}:1")
    # ZeRO 2-3 show in the layout's dp part (a 70B model at tp1 pp1 only fits with its weights sharded), 0-1 not.
    rest = [f"{axis}{row[axis]}" for axis in ("cp", "ep") if row[axis] > 1]
    for zero, part in ((3, f"fsdp{row['dp']}"), (2, f"dp{row['dp']}z2"), (1, f"dp{row['dp']}"), (0, f"dp{row['dp']}")):
        shown = api.present(frame.head(1).drop("layout").with_columns(pl.lit(zero).alias("zero")))
        assert shown["layout"][0] == " ".join([expected.rsplit(" ", 1)[0], part, *rest])
    written = api.export_rows(frame.head(3), tmp_path / "f.csv")
    back = pl.read_csv(written)
    assert back.columns == schema.COLUMNS and back.height == 3
    csv = api.row_as_csv(row)
    assert csv.splitlines()[0].split(",") == schema.COLUMNS


def test_filters_take_friendly_names_substrings_and_human_numbers(result):
    frame = api.frontier(result)
    specs = api.column_specs(frame)

    def rows(text: str) -> pl.DataFrame:
        return api.parse_filter(text, specs).apply(frame)

    assert rows("days<10")["time_to_train_days"].max() < 10
    assert set(rows("fabric=ib")["fabric"]) == {"ib-ndr@default"}  # a substring
    assert rows("fabric==ib").height == 0  # the whole value
    assert set(rows("fabric=ib,roce")["fabric"]) == {"ib-ndr@default", "roce-400g@untuned"}
    assert set(rows("fabric!=tcp")["fabric"]) == {"ib-ndr@default", "roce-400g@untuned"}
    assert rows("gpus>=4k")["gpus"].min() >= 4000
    # Thresholds inside the data's range, so each filter keeps some rows and drops others.
    cost_m = round(float(frame["cost_to_train_usd"].median()) / 1e6, 1)
    cheap = rows(f"cost<${cost_m}M")
    assert 0 < cheap.height < frame.height and cheap["cost_to_train_usd"].max() < cost_m * 1e6
    mfu_pct = round(float(frame["mfu"].median()) * 100)
    busy = rows(f"mfu>={mfu_pct}%")
    assert busy.height > 0 and busy.equals(rows(f"mfu>={mfu_pct}")) and busy["mfu"].min() >= mfu_pct / 100
    assert set(rows("ib")["fabric"]) == {"ib-ndr@default"}  # a bare word: any text column
    assert (
        rows("days<10 fabric=roce").height
        == frame.filter((pl.col("time_to_train_days") < 10) & (pl.col("fabric") == "roce-400g@untuned")).height
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("dayz<10", "did you mean 'days'"),
        ("d<3", "could mean"),
        ("fabric>3", "fabric is text"),
        ("gpus>=many", "'many' is not a number"),
        ("days<", "nothing after"),
    ],
)
def test_a_bad_filter_says_which_term_and_why(result, text, reason):
    with pytest.raises(ValueError, match=reason):
        api.parse_filter(text, api.column_specs(api.frontier(result)))


def test_step_components_are_the_schemas_step_group():
    assert [c.name for c in api.step_components()] == [m.name for m in schema.METRICS if m.group == "step"]


# ---------------------------------------------------------------------------------------------- scenarios
def test_form_values_show_the_scenario_as_people_read_it(draft):
    values = draft.values()
    assert values["tokens"] == "2T"
    assert values["global_batch"] == "1,024"
    assert values["gpus"] == "512, 1,024, 2,048, 4,096, 8,192, 16,384"
    assert values["topology"] == "rail-fat-tree, fat-tree 2:1"
    assert values["rent"] == "" and values["mode"] == "rent"
    assert not draft.edited and draft.title == "ib-vs-roce"


def test_every_field_problem_is_reported_at_once_in_plain_words(draft):
    values = {
        **draft.values(),
        "tokens": "abc",
        "global_batch": "1,0x",
        "gpus": "512, lots",
        "fabric": "ib",
        "topology": "fat-tree 0.5:1",
        "rent": "-$3",
        "mode": "buy",
    }
    errors = draft.check(values)
    assert set(errors) == {"tokens", "global_batch", "gpus", "fabric", "topology", "rent", "mode"}
    assert errors["tokens"] == "'abc' is not a number; write it like 2T, 1,024, 1k or $2.50"
    assert "unknown fabric 'ib'" in errors["fabric"]
    assert errors["mode"] == "choose rent or own"
    assert all("invalid literal" not in m for m in errors.values())


def test_edits_keep_untouched_fields_as_the_file_has_them(draft):
    edited = draft.edit({**draft.values(), "tokens": "1.5T", "rent": "$2.50"})
    assert edited.edited and edited.title == "ib-vs-roce (edited)"
    assert edited.raw["workload"]["tokens"] == 1.5e12
    assert edited.raw["economics"]["prices"]["rent_usd_per_gpu_hour"] == 2.5
    assert edited.raw["cluster"]["gpus"] == draft.raw["cluster"]["gpus"]  # the range stays a range
    assert draft.edit(draft.values()).raw == draft.raw


def test_gpu_counts_as_a_range(draft):
    """Issue 21, D17: `512-4096` was refused. A range doubles unless it says `step` or `x`; it is written to the
    file as the file's own range, and a range of many counts shows as a range (`large` showed 32 values)."""
    edited = draft.edit({**draft.values(), "gpus": "512-4096"})
    assert edited.scenario.gpu_counts == [512, 1024, 2048, 4096]
    assert edited.raw["cluster"]["gpus"] == {"start": 512, "stop": 4096, "factor": 2}
    assert draft.edit({**draft.values(), "gpus": "1k-2k step 500"}).scenario.gpu_counts == [1000, 1500, 2000]
    assert draft.edit({**draft.values(), "gpus": "64 - 4,096 x4"}).scenario.gpu_counts == [64, 256, 1024, 4096]
    assert "below where it starts" in draft.check({**draft.values(), "gpus": "4096-512"})["gpus"]
    assert api.ScenarioDraft.open("large").value("gpus") == "512-16,384 step 512"
    assert edited.value("gpus") == "512, 1,024, 2,048, 4,096"


def test_rent_of_zero_is_refused(draft):
    """D17: a rent of $0 was taken (a stray `0` made every run free)."""
    assert "more than $0" in draft.check({**draft.values(), "rent": "0"})["rent"]
    assert draft.check({**draft.values(), "rent": "$0.01"}) == {}


def test_a_gpu_family_suggests_its_variant(draft):
    """D17: `h100` suggested `h200`; the catalog has `h100-sxm` (and `h100-96gb-500w`)."""
    assert "did you mean 'h100-sxm'?" in draft.check({**draft.values(), "gpu": "h100"})["gpu"]
    assert "did you mean 'h200'?" in draft.check({**draft.values(), "gpu": "h2000"})["gpu"]


def test_the_scale_up_domain_is_a_field(draft):
    """D12: no scale-up (NVLink) field. `default` is each GPU's own domain; a named one must accept the GPU."""
    assert draft.value("scale_up") == "default"
    values = {**draft.values(), "gpu": "gb200", "scale_up": "nvlink5-72"}
    edited = draft.edit(values)
    assert edited.raw["cluster"]["scale_up"] == ["nvlink5-72"] and edited.value("scale_up") == "nvlink5-72"
    assert "did you mean 'nvlink5-72'" in draft.check({**values, "scale_up": "nvlnk5-72"})["scale_up"]
    assert "cannot join" in draft.check({**draft.values(), "scale_up": "nvlink5-72"})["scale_up"]


def test_a_scenario_level_problem_is_named_by_its_field(draft):
    errors = draft.check({**draft.values(), "model": "llama-nine"})
    assert "unknown model 'llama-nine'" in errors["model"]


def test_save_writes_toml_that_reads_back_the_same_and_never_overwrites(draft, tmp_path):
    edited = draft.edit({**draft.values(), "gpus": "1k, 2,048"})
    saved = edited.save(tmp_path / "mine.toml")
    assert saved.title == f"ib-vs-roce (saved to {tmp_path / 'mine.toml'})"
    assert api.ScenarioDraft.open(tmp_path / "mine.toml").scenario.space == edited.scenario.space
    with pytest.raises(api.UsageError, match="already exists"):
        edited.save(tmp_path / "mine.toml")
    with pytest.raises(api.UsageError, match=r"\.toml"):
        edited.save(tmp_path / "mine.txt")


def test_bill_of_materials_uses_the_scenarios_prices(draft, result):
    row = api.frontier(result).row(0, named=True)
    base = draft.bill_of_materials(row)
    dearer = draft.edit(draft.values())
    dearer.raw.setdefault("economics", {}).setdefault("prices", {})[row["fabric"]] = {"switch_usd": 0.0}
    assert dearer.bill_of_materials(row)["network_capex_usd"] < base["network_capex_usd"]
    assert base["nics"] > 0


# ---------------------------------------------------------------------------------------------- sweeps
def test_a_paused_job_holds_until_resumed_and_cancel_stops_it(draft):
    job = api.SweepJob(draft, paused=True)
    box: dict[str, api.SweepResult] = {}
    thread = threading.Thread(target=lambda: box.setdefault("r", job.run()))
    thread.start()
    try:
        while job.held() == 0:  # held at the gate: running, not finished
            thread.join(0.01)
        assert job.paused and "r" not in box
        job.resume()
        thread.join(60)
        assert not box["r"].cancelled and box["r"].evaluated == job.total
    finally:
        job.cancel()
        thread.join(60)
    cancelled = api.SweepJob(draft, paused=True)
    cancelled.cancel()
    assert cancelled.run().cancelled


# ---------------------------------------------------------------------------------------------- ROI
def test_what_ifs_move_the_comparison_the_right_way(draft):
    base = api.what_if_defaults(draft, "ib-ndr", "roce-400g")
    econ = builtin_catalog().economics_or_error()
    assert (base.usd_per_kwh, base.pue, base.years, base.utilisation) == (
        econ.usd_per_kwh,
        econ.pue,
        econ.amortization_years,
        econ.utilisation,
    )
    before = api.compare_fabrics(draft, base, samples=100)
    # A quoted at twice B's network cost (above the catalog's premium at every count): A's fabric cost is exactly
    # twice B's, its total cost of ownership rises and what it saves falls.
    assert (before.table["premium"] < 2.0).all()
    dearer = api.compare_fabrics(draft, replace(base, premium=2.0), samples=100)
    assert dearer.table["fabric_a_usd"].to_list() == pytest.approx([2 * v for v in dearer.table["fabric_b_usd"]])
    assert (dearer.table["cost_ib-ndr"] > before.table["cost_ib-ndr"]).all()
    assert (dearer.table["saving_b_minus_a"] < before.table["saving_b_minus_a"]).all()
    # Dearer power raises the own-mode cost on both fabrics.
    power = api.compare_fabrics(draft, replace(base, usd_per_kwh=0.2), samples=100)
    assert (power.table["cost_roce-400g"] > before.table["cost_roce-400g"]).all()
    # Rent mode: the table's costs are the runs' rents, and break-even and payback are not offered.
    rent = api.compare_fabrics(draft, replace(base, mode="rent"), samples=100)
    assert rent.table["cost_ib-ndr"].to_list() == rent.table["rent_a_usd"].to_list()
    assert "break_even_premium" not in [c.name for c in rent.columns]
    assert rent.verdict.startswith("renting") and before.verdict.startswith("At 16,384 GPUs")


def test_tornado_bars_come_with_flip_values(draft):
    view = api.compare_fabrics(draft, api.what_if_defaults(draft, "ib-ndr", "roce-400g"), sensitivity=True, samples=50)
    assert view.tornado is not None
    bars = view.tornado[16384]
    assert {"roce-400g tail latency factor", "roce-400g switch price"} <= {b.input for b in bars}
    widths = [abs(b.high - b.low) for b in bars]
    assert widths == sorted(widths, reverse=True)  # widest first
    assert all(b.low_label and b.high_label for b in bars)
    # Where an input's range crosses the verdict the bar says where (at 8,192 GPUs today: placement, both collective
    # errors, NIC and server prices); at 16,384 the compute model leaves IB ahead across every range.
    assert any(b.flips_at for counts in view.tornado.values() for b in counts)
    # Whole numbers (operations staff) flip at whole numbers, shown as "<= 5" / ">= 7", never "< 5.4".
    staff = [b.flips_at for bs in view.tornado.values() for b in bs if "operations staff" in b.input and b.flips_at]
    assert staff and all(re.fullmatch(r"(<=|>=) \d+", f) for f in staff), staff
    assert api.compare_fabrics(draft, api.what_if_defaults(draft, "ib-ndr", "roce-400g"), samples=10).tornado is None


def test_export_roi_writes_the_table(draft, tmp_path):
    view = api.compare_fabrics(draft, api.what_if_defaults(draft, "ib-ndr", "roce-400g"), samples=10)
    back = pl.read_csv(api.export_roi(view, tmp_path / "roi.csv"))
    assert back["gpus"].to_list() == [512, 1024, 2048, 4096, 8192, 16384]

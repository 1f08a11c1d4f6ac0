"""`roi --quote FILE`: a vendor's quote (TOML or CSV) replaces the prices it covers, after its bundle discount and
currency rate; those lines become certain (no longer sampled) and `quoted`, which the quote-status coverage
counts. A bad quote is one line naming the file, the line and the field, exit 2, and nothing written."""

from __future__ import annotations

import re
from dataclasses import replace

import polars as pl
import pytest

from helpers import assert_one_line_error, files_in, roi_problem, run
from scalefront.errors import UsageError
from scalefront.inputs.catalog import builtin_catalog
from scalefront.roi import RoiOptions, compare
from scalefront.roi.quote import apply_quote, load_quote

CAT = builtin_catalog()

QUOTE = """vendor = "Example Networks"
date = "2026-11-20"
currency = "EUR"
usd_per_unit = 1.10

[[line]]
fabric = "roce-400g"
item = "switch"
unit_price = 20000.0
quantity = 388

[[line]]
fabric = "roce-400g"
item = "switch_optic_usd"
unit_price = 1000.0

[[discount]]
fabric = "roce-400g"
fraction = 0.10
"""


def test_a_quote_replaces_its_lines_after_discount_and_currency(write):
    # 20,000 EUR x 1.10 USD/EUR x (1 - 10% bundle) = $19,800 a switch; 1,000 EUR -> $990 a module.
    path = write("quote.toml", QUOTE)
    q = load_quote(str(path), CAT)
    assert [(x.entry, x.item, x.usd, x.line) for x in q.lines] == [
        ("roce-400g", "switch_usd", pytest.approx(19_800.0), 6),
        ("roce-400g", "switch_optic_usd", pytest.approx(990.0), 12),
    ]
    cat = apply_quote(CAT, q)
    price = cat.fabric_price("roce-400g")
    assert price.switch_usd == pytest.approx(19_800.0) and "switch_usd" not in price.ranges
    assert price.status_of("switch_usd") == "quoted" and "quote quote.toml, line 6" in price.sources["switch_usd"]
    assert price.sources["switch_usd"].endswith("; 2026-11")
    assert CAT.fabric_price("roce-400g").status_of("switch_usd") == "estimate", "the built-in catalog is untouched"


def test_quoted_lines_are_certain_and_counted_as_quoted(write):
    path = write("quote.toml", QUOTE)
    plain = compare(roi_problem(), options=RoiOptions(samples=20))
    quoted = compare(roi_problem(), options=RoiOptions(samples=20, quote=str(path)))
    names = [i.name for i in quoted.inputs]
    switch = "roce-400g switch price"
    assert switch in [i.name for i in plain.inputs] and switch not in names
    for p, q in zip(plain.table.iter_rows(named=True), quoted.table.iter_rows(named=True), strict=True):
        assert p["quoted_share"] == 0 and 0 < q["quoted_share"] < 1
        assert q["quoted_share"] + q["list_share"] + q["estimate_share"] == pytest.approx(1.0)
    assert quoted.fingerprint != plain.fingerprint


def test_a_csv_quote_reads_the_same(write):
    csv_text = (
        "fabric,item,unit_price,currency,usd_per_unit,discount_fraction,vendor,date\n"
        "roce-400g,switch,20000,EUR,1.10,0.10,Example Networks,2026-11-20\n"
    )
    q = load_quote(str(write("quote.csv", csv_text)), CAT)
    assert [(x.item, x.usd, x.line) for x in q.lines] == [("switch_usd", pytest.approx(19_800.0), 2)]
    assert (q.vendor, q.date) == ("Example Networks", "2026-11-20")


BAD = [
    (
        "unknown item",
        'vendor = "x"\n[[line]]\nfabric = "roce-400g"\nitem = "swich"\nunit_price = 1.0\n',
        "line 4: item:",
    ),
    ("unknown fabric", '[[line]]\nfabric = "roce-401g"\nitem = "switch"\nunit_price = 1.0\n', "line 2: fabric:"),
    ("number for a gpu", '[[line]]\ngpu = 5\nitem = "server"\nunit_price = 1.0\n', "line 2: gpu: expected a"),
    ("list for a fabric", '[[line]]\nfabric = ["a"]\nitem = "switch"\nunit_price = 1.0\n', "line 2: fabric: expected"),
    ("negative price", '[[line]]\nfabric = "roce-400g"\nitem = "switch"\nunit_price = -5.0\n', "line 4: unit_price:"),
    ("NaN price", '[[line]]\nfabric = "roce-400g"\nitem = "switch"\nunit_price = nan\n', "line 4: unit_price:"),
    (
        "no rate",
        'currency = "EUR"\n[[line]]\nfabric = "roce-400g"\nitem = "switch"\nunit_price = 1.0\n',
        "line 1: currency:",
    ),
    (
        "duplicate",
        '[[line]]\nfabric = "roce-400g"\nitem = "switch"\nunit_price = 1.0\n'
        '[[line]]\nfabric = "roce-400g"\nitem = "switch_usd"\nunit_price = 2.0\n',
        "line 7: item: roce-400g switch_usd is quoted twice (line 1)",
    ),
    (
        "unknown field",
        '[[line]]\nfabric = "roce-400g"\nitem = "switch"\nunit_price = 1.0\nprize = 2\n',
        "line 5: prize:",
    ),
    ("syntax", '[[line]]\nfabric = "roce-400g\n', "line 2: syntax:"),
    ("csv price", "fabric,item,unit_price\nroce-400g,switch,cheap\n", "line 2: unit_price:"),
]


@pytest.mark.parametrize(("case", "text", "needle"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_quote_is_one_line_naming_file_line_and_field_and_writes_nothing(case, text, needle, capsys, tmp_path):
    name = "quote.csv" if case.startswith("csv") else "quote.toml"
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    out, rep = tmp_path / "roi.csv", tmp_path / "rep"
    before = files_in(tmp_path)
    code, stdout, err = run(
        ["roi", "--quote", str(path), "--samples", "5", "--out", str(out), "--report", str(rep)], capsys
    )
    assert_one_line_error(code, stdout, err, f"{path}: {needle}")
    assert files_in(tmp_path) == before


def test_a_quote_that_is_not_utf8_is_refused(capsys, tmp_path):
    path = tmp_path / "quote.toml"
    path.write_bytes(b'vendor = "ok"\n[[line]]\nfabric = "roce-400g"\nitem = "sw\xe9tch"\nunit_price = 1.0\n')
    code, stdout, err = run(["roi", "--quote", str(path), "--samples", "5"], capsys)
    assert_one_line_error(code, stdout, err, f"{path}: line 4: encoding: not UTF-8 text (byte 0xe9)")


def test_a_missing_quote_file_is_named():
    with pytest.raises(UsageError, match=re.escape("--quote /nonexistent.toml: cannot read it")):
        load_quote("/nonexistent.toml", CAT)


def test_the_quoted_table_rows_match_the_pairs(write):
    # A quote for a fabric the comparison does not use is harmless: its coverage stays 0.
    text = QUOTE.replace('fabric = "roce-400g"', 'fabric = "spectrum-x"')
    r = compare(roi_problem(), options=RoiOptions(samples=10, quote=str(write("q.toml", text))))
    assert (r.table["quoted_share"] == 0).all()
    assert r.table.filter(pl.col("gpus") == 16384).height == 1


MODE_QUOTE = '[[line]]\nfabric = "roce-400g@tuned"\nitem = "switch"\nunit_price = 20000.0\n'


def test_a_quote_for_a_fabric_in_a_mode_prices_the_fabrics_parts(write, capsys, tmp_path):
    # A mode runs the same parts: the line is the fabric's, in every mode; a price variant keeps its own.
    q = load_quote(str(write("quote.toml", MODE_QUOTE)), CAT)
    assert [(x.entry, x.item, x.usd) for x in q.lines] == [("roce-400g", "switch_usd", 20_000.0)]
    cat = apply_quote(CAT, q)
    for name in ("roce-400g@tuned", "roce-400g", "roce-400g@untuned"):
        assert (
            cat.fabric_price(name).switch_usd == 20_000.0 and cat.fabric_price(name).status_of("switch_usd") == "quoted"
        )
    assert cat.fabric_price("roce-400g@branded") == CAT.fabric_price("roce-400g@branded")
    # End to end (it raised a KeyError before): a comparison runs on it.
    code, _, err = run(["roi", "--quote", str(tmp_path / "quote.toml"), "--samples", "5", "--json"], capsys)
    assert code == 0 and err == ""


def test_the_same_line_quoted_for_a_fabric_and_its_mode_is_quoted_twice(capsys, tmp_path):
    path = tmp_path / "quote.toml"
    path.write_text('[[line]]\nfabric = "roce-400g"\nitem = "switch"\nunit_price = 1.0\n' + MODE_QUOTE, "utf-8")
    code, stdout, err = run(["roi", "--quote", str(path), "--samples", "5"], capsys)
    assert_one_line_error(code, stdout, err, f"{path}: line 7: item: roce-400g switch_usd is quoted twice (line 1)")


def test_a_line_a_mode_prices_itself_is_refused(write):
    # No built-in mode prices a quotable line; a user's could, and the fabric's entry it would price is not read then.
    entry = CAT.fabric_prices["roce-400g"]
    tuned = {"switch_usd": 99_000.0, "sources": {"switch_usd": "a test's own mode price; 2026-11"}}
    modes = {**(entry.modes.root if entry.modes is not None else {}), "tuned": tuned}
    priced = type(entry).model_validate({**entry.model_dump(), "sources": entry.sources, "modes": modes})
    cat = replace(CAT, fabric_prices={**CAT.fabric_prices, "roce-400g": priced})
    assert cat.fabric_price("roce-400g@tuned").switch_usd == 99_000.0
    with pytest.raises(
        UsageError, match=re.escape("line 3: item: roce-400g@tuned's mode prices switch_usd itself (99000)")
    ):
        load_quote(str(write("quote.toml", MODE_QUOTE)), cat)

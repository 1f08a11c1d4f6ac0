"""`roi --quote FILE`: a vendor's quote, its line items mapped to the price book's lines, and those lines marked
quoted. A quote is TOML or CSV:

TOML::

    vendor = "NVIDIA via an integrator"
    date = "2026-11-20"
    currency = "EUR"            # optional, USD by default; any other currency needs usd_per_unit
    usd_per_unit = 1.08         # USD per unit of the currency
    [[line]]
    fabric = "ib-ndr"           # a fabric of the catalog, in any mode (or gpu = "h100-sxm" for a server line)
    item = "switch"             # a price line (switch_usd) or its short name (switch)
    unit_price = 33500.0
    quantity = 795              # optional, for the record
    [[discount]]                # a bundle discount on every quoted line of one fabric (or gpu)
    fabric = "ib-ndr"
    fraction = 0.05

CSV: a header `fabric,item,unit_price` with optional `gpu`, `quantity`, `currency`, `usd_per_unit`,
`discount_fraction`, `vendor`, `date` columns, one line item per row.

A quoted line replaces the catalog's price (its range too: a quote is certain) after the bundle discount and the
currency rate, and its quote status becomes `quoted`, its source the quote's file, line, vendor and date. A bad file
(unreadable, not UTF-8, an unknown item or fabric, a negative or non-finite price, a currency other than USD without
a rate, a line quoted twice) is refused with one line naming the file, the line and the field.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scalefront.errors import CatalogError, UsageError
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.messages import did_you_mean

__all__ = ["ITEMS", "Quote", "QuoteLine", "apply_quote", "load_quote"]

#: The price lines a quote may price, by their short names (the price book's own names are accepted too).
ITEMS = {
    "nic": "nic_usd",
    "switch": "switch_usd",
    "nic_optic": "nic_optic_usd",
    "switch_optic": "switch_optic_usd",
    "dac": "dac_usd",
    "fibre": "fibre_usd",
    "nos": "nos_usd_per_switch_year",
    "fabric_manager": "fabric_manager_usd_per_endpoint_year",
    "ufm": "fabric_manager_usd_per_endpoint_year",
    "server": "server_usd",
}
_GPU_ITEMS = {"server_usd"}
_TOP_KEYS = {"vendor", "date", "currency", "usd_per_unit", "line", "discount"}
_LINE_KEYS = {"fabric", "gpu", "item", "unit_price", "quantity", "currency", "usd_per_unit", "discount_fraction"}
_DISCOUNT_KEYS = {"fabric", "gpu", "fraction"}


@dataclass(frozen=True)
class QuoteLine:
    """One quoted price: the entry (fabric or GPU id), the price line, its price in USD after the bundle discount
    and the currency rate, and where the quote says it."""

    entry: str
    kind: str  # "fabric" or "gpu"
    item: str
    usd: float
    line: int


@dataclass(frozen=True)
class Quote:
    path: str
    vendor: str
    date: str
    lines: tuple[QuoteLine, ...]
    #: sha256 of the file's bytes.
    digest: str


def _fail(path: str, line: int, field: str, message: str) -> UsageError:
    return UsageError(f"{path}: line {line}: {field}: {message}")


def _text(path: str) -> tuple[str, bytes]:
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise UsageError(f"--quote {path}: cannot read it ({err.strerror or err})") from None
    try:
        return raw.decode("utf-8"), raw
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise _fail(path, line, "encoding", f"not UTF-8 text (byte 0x{raw[err.start]:02x})") from None


def _number(path: str, line: int, field: str, value: Any, lower: float, upper: float = math.inf) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not lower <= float(value) <= upper:
        bound = f"a finite number >= {lower:g}" + (f" and <= {upper:g}" if math.isfinite(upper) else "")
        raise _fail(path, line, field, f"expected {bound}, got {value!r}")
    return float(value)


def _item(path: str, line: int, raw: Any, kind: str) -> str:
    names = sorted(set(ITEMS) | set(ITEMS.values()))
    item = ITEMS.get(raw, raw) if isinstance(raw, str) else raw
    allowed = _GPU_ITEMS if kind == "gpu" else set(ITEMS.values()) - _GPU_ITEMS
    if not isinstance(item, str) or item not in allowed:
        hint = did_you_mean(str(raw), names) or f"; known: {', '.join(names)}"
        raise _fail(path, line, "item", f"unknown item {raw!r} for a {kind} line{hint}")
    return item


def _entry(path: str, line: int, row: dict[str, Any], catalog: Catalog) -> tuple[str, str]:
    """(price book entry, kind) of a line: exactly one of `fabric` and `gpu`, known to the catalog. A fabric named in
    an operating mode (`roce-400g@tuned`) is priced by its fabric's entry: the mode runs the same parts."""
    given = [k for k in ("fabric", "gpu") if row.get(k) not in (None, "")]
    if len(given) != 1:
        raise _fail(path, line, "fabric", "give one of fabric = <id> or gpu = <id>")
    kind = given[0]
    entry = row[kind]
    if not isinstance(entry, str):
        raise _fail(path, line, kind, f"expected a catalog id as text, got {entry!r}")
    try:
        if kind == "fabric":
            return catalog.fabric_price_key(entry), kind
        catalog.gpu_price(entry)
    except CatalogError:
        known = list(catalog.fabric_prices if kind == "fabric" else catalog.gpu_prices)
        raise _fail(path, line, kind, f"unknown {kind} {entry!r}{did_you_mean(str(entry), known)}") from None
    return str(entry), kind


def _mode_keeps_line(path: str, line: int, catalog: Catalog, fabric: str, item: str) -> None:
    """Refuse a line the named fabric's operating mode prices itself: the quote would price the fabric's entry, which
    that mode does not read."""
    entry = catalog.fabric_price_key(fabric)
    own, named = getattr(catalog.fabric_prices[entry], item), getattr(catalog.fabric_price(fabric), item)
    if own != named:
        message = (
            f"{fabric}'s mode prices {item} itself ({named:g}): a quote on {entry}'s line ({own:g}) would not reach it"
        )
        raise _fail(path, line, "item", message)


def _rate(path: str, line: int, currency: Any, rate: Any) -> float:
    if currency in (None, "", "USD"):
        return 1.0
    if not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
        raise _fail(path, line, "currency", f"expected a 3-letter currency code such as USD or EUR, got {currency!r}")
    if rate in (None, ""):
        raise _fail(path, line, "currency", f"{currency} needs usd_per_unit (USD per {currency})")
    return _number(path, line, "usd_per_unit", rate, 1e-9)


@dataclass(frozen=True)
class _Row:
    line: int
    fields: dict[str, Any]
    field_lines: dict[str, int]


def _lines_of_tables(text: str, table: str) -> list[int]:
    """The 1-based line of each `[[table]]` header, in order."""
    return [n + 1 for n, t in enumerate(text.splitlines()) if re.match(rf"\s*\[\[\s*{table}\s*\]\]", t)]


def _field_lines(text: str, start: int) -> dict[str, int]:
    """The 1-based line of each `key = ` after the 1-based line `start` (a table's header; 0 for the top level) up
    to the next table header."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for n in range(start, len(lines)):
        if re.match(r"\s*\[", lines[n]):
            break
        m = re.match(r"\s*([A-Za-z0-9_\-]+)\s*=", lines[n])
        if m:
            out.setdefault(m.group(1), n + 1)
    return out


def _toml_rows(path: str, text: str) -> tuple[dict[str, Any], list[_Row], list[_Row]]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"at line (\d+)", str(err))
        raise _fail(path, int(m.group(1)) if m else 1, "syntax", str(err).split(" (at line")[0]) from None
    top_lines = _field_lines(text, 0)
    for key in doc:
        if key not in _TOP_KEYS:
            raise _fail(path, top_lines.get(key, 1), key, f"unknown field{did_you_mean(key, sorted(_TOP_KEYS))}")
    rows = []
    for table, keys in (("line", _LINE_KEYS), ("discount", _DISCOUNT_KEYS)):
        entries = doc.get(table, [])
        headers = _lines_of_tables(text, table)
        if not isinstance(entries, list) or len(headers) != len(entries):
            raise _fail(path, top_lines.get(table, 1), table, f"write each one as a [[{table}]] table")
        out = []
        for header, entry in zip(headers, entries, strict=True):
            lines = _field_lines(text, header)
            for key in entry:
                if key not in keys:
                    raise _fail(path, lines.get(key, header), key, f"unknown field{did_you_mean(key, sorted(keys))}")
            out.append(_Row(header, dict(entry), lines))
        rows.append(out)
    return doc, rows[0], rows[1]


def _csv_rows(path: str, text: str) -> tuple[dict[str, Any], list[_Row], list[_Row]]:
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    allowed = _LINE_KEYS | {"vendor", "date"}
    for name in header:
        if name not in allowed:
            raise _fail(path, 1, name, f"unknown column{did_you_mean(name, sorted(allowed))}")
    for need in ("item", "unit_price"):
        if need not in header:
            raise _fail(path, 1, need, "missing column (a quote's CSV needs fabric or gpu, item, unit_price)")
    rows: list[_Row] = []
    top: dict[str, Any] = {}
    for row in reader:
        n = reader.line_num
        fields: dict[str, Any] = {k: v for k, v in row.items() if v not in (None, "") and k is not None}
        for key in ("unit_price", "quantity", "usd_per_unit", "discount_fraction"):
            if key in fields:
                try:
                    fields[key] = float(fields[key])
                except ValueError:
                    raise _fail(path, n, key, f"expected a number, got {fields[key]!r}") from None
        top.setdefault("vendor", fields.pop("vendor", ""))
        top.setdefault("date", fields.pop("date", ""))
        rows.append(_Row(n, fields, dict.fromkeys(fields, n)))
    return top, rows, []


def load_quote(path: str, catalog: Catalog) -> Quote:
    """Read and check a quote (TOML, or CSV by its `.csv` suffix): each line's USD price after its discount."""
    text, raw = _text(path)
    doc, rows, discounts = _csv_rows(path, text) if path.lower().endswith(".csv") else _toml_rows(path, text)
    if not rows:
        raise _fail(path, 1, "line", "no line items (a quote needs at least one [[line]] or CSV row)")
    top_rate = _rate(path, 1, doc.get("currency"), doc.get("usd_per_unit"))
    bundle: dict[tuple[str, str], float] = {}
    for d in discounts:
        key = _entry(path, d.line, d.fields, catalog)
        if key in bundle:
            raise _fail(path, d.line, "fabric", f"a second bundle discount for {key[0]}")
        bundle[key] = _number(
            path, d.field_lines.get("fraction", d.line), "fraction", d.fields.get("fraction"), 0.0, 1.0
        )
    lines: list[QuoteLine] = []
    seen: dict[tuple[str, str], int] = {}
    for r in rows:
        at = r.field_lines.get
        entry, kind = _entry(path, at("fabric", at("gpu", r.line)), r.fields, catalog)
        item = _item(path, at("item", r.line), r.fields.get("item"), kind)
        if kind == "fabric":
            _mode_keeps_line(path, at("item", r.line), catalog, str(r.fields["fabric"]), item)
        if (entry, item) in seen:
            raise _fail(
                path, at("item", r.line), "item", f"{entry} {item} is quoted twice (line {seen[(entry, item)]})"
            )
        seen[(entry, item)] = r.line
        price = _number(path, at("unit_price", r.line), "unit_price", r.fields.get("unit_price"), 0.0)
        rate = top_rate
        if "currency" in r.fields or "usd_per_unit" in r.fields:
            rate = _rate(path, at("currency", r.line), r.fields.get("currency"), r.fields.get("usd_per_unit"))
        own = _number(
            path, at("discount_fraction", r.line), "discount_fraction", r.fields.get("discount_fraction", 0.0), 0.0, 1.0
        )
        if "quantity" in r.fields:
            _number(path, at("quantity", r.line), "quantity", r.fields["quantity"], 0.0)
        usd = price * rate * (1.0 - own) * (1.0 - bundle.get((entry, kind), 0.0))
        lines.append(QuoteLine(entry, kind, item, usd, r.line))
    vendor, date = str(doc.get("vendor", "") or ""), str(doc.get("date", "") or "")
    return Quote(path, vendor, date, tuple(lines), hashlib.sha256(raw).hexdigest())


def apply_quote(catalog: Catalog, quote: Quote) -> Catalog:
    """A copy of `catalog` whose quoted lines carry the quote's price (certain: no range), status `quoted` and
    the quote as their source."""
    out = replace(catalog, fabric_prices=dict(catalog.fabric_prices), gpu_prices=dict(catalog.gpu_prices))
    who = ", ".join(x for x in (quote.vendor, quote.date) if x)
    for q in quote.lines:
        table: dict[str, Any] = out.fabric_prices if q.kind == "fabric" else out.gpu_prices
        entry = table[q.entry]
        ranges = {k: v for k, v in entry.ranges.items() if k != q.item}
        source = f"quote {Path(quote.path).name}, line {q.line}" + (f" ({who})" if who else "")
        dated = f"{source}; {quote.date[:7]}" if re.match(r"\d{4}-\d{2}", quote.date) else source
        update = {q.item: q.usd, "ranges": ranges, "sources": {**entry.sources, q.item: dated}}
        table[q.entry] = entry.model_copy(update={**update, "status": {**entry.status, q.item: "quoted"}})
    return out

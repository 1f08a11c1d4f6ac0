"""Result frames for a reader: friendly column names, units and formatting from the core's schema, two derived
text columns (the parallel layout, the topology with its oversubscription), and filter expressions written
with those friendly names (``days<10 fabric=ib cost<$2M mfu>=40%``).

Nothing here computes a model figure: the columns are the schema's (:mod:`scalefront.schema`), the derived
ones only join existing values into text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from scalefront import schema
from scalefront.units import format_value, parse_number

__all__ = [
    "DERIVED",
    "ColumnSpec",
    "Filter",
    "column_spec",
    "column_specs",
    "export_frame_columns",
    "parse_filter",
    "present",
]

#: Short names shown in table headers (and accepted by filters) for the columns a buyer reads most; every other
#: column is named after its schema name without the unit suffix ("energy_mwh" -> "energy").
SHORT_LABELS: dict[str, str] = {
    "ttft_s": "TTFT",
    "tpot_s": "TPOT",
    "output_tokens_per_s_per_gpu": "tok/s/GPU",
    "cost_usd_per_million_tokens": "$/Mtok",
    "concurrent_sequences": "batch",
    "max_batch": "max batch",
    "kv_cache_bytes": "KV cache",
    "time_to_train_days": "days",
    "cost_to_train_usd": "cost",
    "mfu": "MFU",
    "hfu": "HFU",
    "gpus": "GPUs",
    "gpu": "GPU",
    "tp": "TP",
    "pp": "PP",
    "dp": "DP",
    "cp": "CP",
    "ep": "EP",
    "vpp": "VPP",
    "zero": "ZeRO",
    "micro_batch": "mb",
    "global_batch": "batch",
    "sequence_parallel": "SP",
    "step_time_s": "step",
    "tokens_per_s": "tokens/s",
    "tflops_per_gpu": "TFLOP/s",
    "scaling_efficiency": "scaling",
    "memory_per_gpu_gb": "mem/GPU",
    "memory_margin_gb": "mem left",
    "usd_per_million_tokens": "$/Mtok",
    "network_capex_usd": "net capex",
    "cost_rent_usd": "rent cost",
    "cost_own_usd": "own cost",
    "oversubscription": "oversub",
    "interruptions_per_day": "interrupts/day",
    "checkpoint_interval_s": "checkpoint",
    "tp_comm_s": "TP comm",
    "pp_comm_s": "PP comm",
    "dp_comm_s": "DP comm",
    "cp_comm_s": "CP comm",
    "ep_comm_s": "EP comm",
    "bubble_s": "bubble",
    "topology_label": "topology",
}
#: More names a filter accepts for a column (besides its name and label, case and `_`/space/`-` ignored).
ALIASES: dict[str, tuple[str, ...]] = {
    "time_to_train_days": ("time", "time_to_train"),
    "cost_to_train_usd": ("usd", "price"),
    "memory_per_gpu_gb": ("memory", "mem"),
    "usd_per_million_tokens": ("per_mtok", "usd_per_mtok"),
    "topology_label": ("topo",),
    "network_capex_usd": ("network",),
}


@dataclass(frozen=True)
class ColumnSpec:
    """How to show one column: its frame name, a short label, unit, kind and meaning (from the schema)."""

    name: str
    label: str
    #: As in the schema: "USD", "days", "s", "fraction", ... or "" (plain number, text).
    unit: str
    #: float, count, flag or text.
    kind: str
    doc: str
    #: The schema group (input, result, step, ...), or "derived".
    group: str = "input"
    aliases: tuple[str, ...] = field(default=())

    @property
    def numeric(self) -> bool:
        return self.kind in ("float", "count")

    def format(self, value: Any) -> str:
        """The value as this column shows it (``$1.23M``, ``14.5%``, ``16,384``, ``2T``)."""
        return format_value(value, self.unit, self.kind)

    @property
    def header(self) -> str:
        """The label, with the unit where the values do not carry it (``days``; ``$`` and ``%`` are in the values)."""
        return self.label


def _default_label(col: schema.Column) -> str:
    suffix = schema.UNIT_SUFFIXES.get(col.unit, "")
    name = col.name.removesuffix(suffix) if suffix and col.name.endswith(suffix) else col.name
    return name.replace("_", " ")


def _from_schema(col: schema.Column) -> ColumnSpec:
    return ColumnSpec(
        name=col.name,
        label=SHORT_LABELS.get(col.name, _default_label(col)),
        unit=col.unit,
        kind=col.kind,
        doc=col.doc,
        group=col.group,
        aliases=ALIASES.get(col.name, ()),
    )


def _layout(row: dict[str, Any]) -> str:
    parts = [f"tp{row['tp']}", f"pp{row['pp']}"]
    if row["vpp"] > 1:
        parts.append(f"v{row['vpp']}")
    # ZeRO 3 shards the weights over dp (FSDP's full sharding), ZeRO 2 the gradients: without it "tp1 pp1 dp1024"
    # of a 70B model reads as replicated weights that could not fit. ZeRO 1 (the distributed optimizer) is the
    # frameworks' usual default and left out. Written into the dp part, so that the layout stays as wide.
    zero = row.get("zero") or 0
    parts.append(f"fsdp{row['dp']}" if zero >= 3 else f"dp{row['dp']}z2" if zero == 2 else f"dp{row['dp']}")
    parts += [f"{axis}{row[axis]}" for axis in ("cp", "ep") if row[axis] > 1]
    return " ".join(parts)


def _topology_label(row: dict[str, Any]) -> str:
    over = row["oversubscription"]
    return row["topology"] if over == 1 else f"{row['topology']} {over:g}:1"


@dataclass(frozen=True)
class Derived:
    """A text column joined from other columns for reading (never exported)."""

    spec: ColumnSpec
    needs: tuple[str, ...]
    make: Callable[[dict[str, Any]], str]
    #: Columns it reads where the frame has them.
    uses: tuple[str, ...] = ()


#: The derived columns :func:`present` adds.
DERIVED: dict[str, Derived] = {
    "layout": Derived(
        ColumnSpec(
            "layout",
            "layout",
            "",
            "text",
            "parallel layout: tp, pp (v: interleaved stages), dp (fsdp: ZeRO 3, weights sharded over dp; dp..z2: "
            "ZeRO 2, gradients sharded), cp, ep",
            "derived",
        ),
        ("tp", "pp", "vpp", "dp", "cp", "ep"),
        _layout,
        ("zero",),
    ),
    "topology_label": Derived(
        ColumnSpec(
            "topology_label",
            "topology",
            "",
            "text",
            "topology and its leaf oversubscription (2:1 = half the uplink bandwidth)",
            "derived",
            ALIASES["topology_label"],
        ),
        ("topology", "oversubscription"),
        _topology_label,
    ),
}
#: Serving metrics first, so that a name both tables share (capex_usd, it_power_w) keeps the training meaning.
_SCHEMA_SPECS = {c.name: _from_schema(c) for c in (*schema.SERVING_METRICS, *schema.INPUTS, *schema.METRICS)}


def column_spec(name: str) -> ColumnSpec:
    """How to show the schema or derived column `name` (KeyError if there is none)."""
    if name in DERIVED:
        return DERIVED[name].spec
    return _SCHEMA_SPECS[name]


def column_specs(frame: pl.DataFrame) -> list[ColumnSpec]:
    """The specs of a frame's schema and derived columns, in the frame's order (other columns are skipped)."""
    return [column_spec(c) for c in frame.columns if c in _SCHEMA_SPECS or c in DERIVED]


def present(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with the derived columns added (where their source columns are present)."""
    out = frame
    for name, derived in DERIVED.items():
        if name in out.columns or not set(derived.needs) <= set(out.columns):
            continue
        read = [*derived.needs, *(c for c in derived.uses if c in out.columns)]
        values = [derived.make(row) for row in out.select(read).iter_rows(named=True)]
        out = out.with_columns(pl.Series(name, values, dtype=pl.Utf8))
    return out


def export_frame_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` without the derived columns: the export schema's columns, in their order."""
    return frame.select([c for c in frame.columns if c not in DERIVED])


# ------------------------------------------------------------------------------------------------- filters
def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", "_", text.strip().lower())


_TERM = re.compile(r"^(?P<key>[^<>=!~]+?)\s*(?P<op>==|!=|>=|<=|=|<|>|~)\s*(?P<value>.*)$")


@dataclass(frozen=True)
class Term:
    """One condition of a filter: a column, an operator and the values it was given (or a bare word)."""

    column: str | None
    op: str
    values: tuple[Any, ...]

    def expr(self, specs: dict[str, ColumnSpec], text_columns: Sequence[str]) -> pl.Expr:
        if self.column is None:  # a bare word: substring of any text column
            word = str(self.values[0]).lower()
            hit = pl.any_horizontal(
                [pl.col(c).cast(pl.Utf8).str.to_lowercase().str.contains(word, literal=True) for c in text_columns]
            )
            return ~hit if self.op == "!" else hit
        spec = specs[self.column]
        col = pl.col(self.column)
        if not spec.numeric:
            text = col.cast(pl.Utf8).str.to_lowercase()
            words = [str(v).lower() for v in self.values]
            if self.op == "==":
                return pl.any_horizontal([text == w for w in words])
            contains = pl.any_horizontal([text.str.contains(w, literal=True) for w in words])
            return ~contains if self.op == "!=" else contains
        if self.op in ("=", "==", "~"):
            return pl.any_horizontal([col == v for v in self.values])
        if self.op == "!=":
            return pl.all_horizontal([col != v for v in self.values])
        value = self.values[0]
        compare = {"<": col.lt, "<=": col.le, ">": col.gt, ">=": col.ge}[self.op]
        return compare(value)


@dataclass(frozen=True)
class Filter:
    """A parsed filter: every term must hold. ``str(f)`` is the text it was parsed from."""

    text: str
    terms: tuple[Term, ...]
    specs: dict[str, ColumnSpec]

    def __str__(self) -> str:
        return self.text

    def apply(self, frame: pl.DataFrame) -> pl.DataFrame:
        """The rows of `frame` that match; terms about a column `frame` lacks match nothing."""
        if not self.terms or frame.is_empty():
            return frame
        text_columns = [c for c in frame.columns if frame.schema[c] == pl.Utf8]
        exprs = []
        for term in self.terms:
            if term.column is not None and term.column not in frame.columns:
                return frame.clear()
            exprs.append(term.expr(self.specs, text_columns))
        return frame.filter(pl.all_horizontal(exprs))


def _resolve(key: str, specs: Sequence[ColumnSpec]) -> ColumnSpec:
    want = _norm(key)
    names: dict[str, ColumnSpec] = {}
    for s in specs:  # exact names first, then labels and aliases (a label never hides a column's own name)
        names.setdefault(_norm(s.name), s)
    for s in specs:
        for n in (s.label, *s.aliases):
            names.setdefault(_norm(n), s)
    if want in names:
        return names[want]
    prefixed = {s.name: s for n, s in names.items() if n.startswith(want)}
    if len(prefixed) == 1:
        return next(iter(prefixed.values()))
    if prefixed:
        options = ", ".join(sorted(s.label for s in prefixed.values()))
        raise ValueError(f"{key!r} could mean {options}; type more of the name")
    close = difflib.get_close_matches(want, list(names), n=1)
    hint = f"did you mean {names[close[0]].label!r}? " if close else ""
    common = ", ".join(s.label for s in specs[:10])
    raise ValueError(f"{key!r} is not a column; {hint}columns include {common}")


def _value(spec: ColumnSpec, raw: str) -> Any:
    if not spec.numeric:
        return raw
    value = parse_number(raw, what=spec.label)
    if spec.unit == "fraction" and "%" not in raw and value > 1:
        value /= 100.0  # "mfu>40" means 40%
    return value


def parse_filter(text: str, specs: Sequence[ColumnSpec]) -> Filter:
    """Parse a filter typed by a person: space-separated terms, all of which must hold.

    - ``name OP value`` with OP one of ``= == != < <= > >= ~``; `name` is a column's name, label or alias
      (``days``, ``cost``, ``mfu``, ``gpus``, ``fabric``, ``layout``) or an unambiguous start of one;
    - on text columns ``=`` and ``~`` match a substring (``fabric=ib`` matches ib-ndr), ``==`` the whole value,
      ``!=`` excludes a substring;
    - numbers as people write them (``cost<$2M``, ``gpus>=4k``, ``mfu>40%`` or ``mfu>40``);
    - several values separated by commas are alternatives (``fabric=ib,roce``);
    - a bare word matches rows with it in any text column (``!word`` excludes them).

    Raises ValueError with a message that says which term is wrong and why."""
    by_name = {s.name: s for s in specs}
    terms: list[Term] = []
    for raw_term in text.split():
        m = _TERM.match(raw_term)
        if not m:
            if any(ch in raw_term for ch in "<>=~"):
                raise ValueError(f"{raw_term!r}: write a term as name=value, name<number, ... (e.g. days<10)")
            negate = raw_term.startswith("!")
            word = raw_term[1:] if negate else raw_term
            if not word:
                raise ValueError("'!' needs a word after it (e.g. !tcp)")
            terms.append(Term(None, "!" if negate else "~", (word,)))
            continue
        spec = _resolve(m["key"], specs)
        op, raw = m["op"], m["value"].strip()
        if not raw:
            raise ValueError(f"{raw_term!r}: nothing after {op!r}")
        items = [v for v in raw.split(",") if v] if op in ("=", "==", "!=", "~") and not spec.numeric else [raw]
        if spec.numeric and op in ("=", "==", "!=", "~"):
            items = [v for v in re.split(r",(?!\d{3}(?!\d))", raw) if v]
        if op in ("<", "<=", ">", ">=") and not spec.numeric:
            raise ValueError(f"{raw_term!r}: {spec.label} is text; use = (contains) or == (equals)")
        terms.append(Term(spec.name, op, tuple(_value(spec, v) for v in items)))
    return Filter(text.strip(), tuple(terms), by_name)


def known_names(specs: Iterable[ColumnSpec]) -> list[str]:
    """The labels a filter accepts, in the given order (for help texts)."""
    return [s.label for s in specs]

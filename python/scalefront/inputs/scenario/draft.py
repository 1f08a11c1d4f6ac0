"""A scenario being edited: the values a form shows for it, checking edited values (every field's problem at
once, in plain words), the edited scenario, and saving it to a TOML file.

Values are typed as people write them (``2T``, ``1,024``, ``1k``, ``$2.50``; lists separated by commas; GPU
counts also as a range, ``512-4096`` doubling, ``512-16k step 512`` or ``512-4096 x4``); fields left as they were
keep the file's own form (a ``{ start, stop, factor }`` range stays a range).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalefront.errors import CatalogError, ScalefrontError, UsageError, message_of
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.network import bom
from scalefront.inputs.params import param
from scalefront.inputs.scenario.build import Scenario, build_scenario, read_scenario
from scalefront.units import format_count, format_money, format_si, parse_count, parse_number, split_list

__all__ = ["FORM_FIELDS", "FormErrors", "FormField", "ScenarioDraft"]


@dataclass(frozen=True)
class FormField:
    """One editable value of a scenario."""

    key: str
    label: str
    #: Where it lives in the scenario file (tables, then the key).
    path: tuple[str, ...]
    #: name, number, count, names, counts, topologies, price or choice.
    kind: str
    help: str
    choices: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """How a scenario error names this field: ``[workload] tokens``."""
        return f"[{'.'.join(self.path[:-1])}] {self.path[-1]}"


FORM_FIELDS: tuple[FormField, ...] = (
    FormField("model", "model", ("workload", "model"), "name", "a catalog model id or a model TOML file"),
    FormField("tokens", "tokens", ("workload", "tokens"), "number", "training tokens: 2T, 15e12, 300B"),
    FormField("global_batch", "global batch", ("workload", "global_batch"), "count", "sequences per step: 1,024"),
    FormField("gpu", "GPU types", ("cluster", "gpu"), "names", "GPU ids, separated by commas"),
    FormField(
        "scale_up",
        "scale-up domain",
        ("cluster", "scale_up"),
        "names",
        "NVLink domains, e.g. nvlink5-72; default: each GPU's own",
    ),
    FormField("gpus", "GPU counts", ("cluster", "gpus"), "counts", "e.g. 512, 1k, 4,096 or 512-4096 (doubling)"),
    FormField("fabric", "fabrics", ("cluster", "fabric"), "names", "fabric ids, separated by commas"),
    FormField("topology", "topologies", ("cluster", "topology"), "topologies", "e.g. rail-fat-tree, fat-tree 2:1"),
    FormField(
        "rent",
        "rent $/GPU-hour",
        ("economics", "prices", "rent_usd_per_gpu_hour"),
        "price",
        "empty: each GPU's catalog price",
    ),
    FormField(
        "mode", "cost mode", ("economics", "mode"), "choice", "rent or own (capex + energy)", param("cost_mode").choices
    ),
)
_BY_KEY = {f.key: f for f in FORM_FIELDS}


class FormErrors(ScalefrontError):
    """Edited values that do not make a scenario: ``errors`` maps each field's key (or "" for the scenario as a
    whole) to what is wrong with it, in plain words."""

    def __init__(self, errors: dict[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{_BY_KEY[k].label}: {v}" if k in _BY_KEY else v for k, v in errors.items()))


def _get(raw: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = raw
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _set(raw: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = raw
    for key in path[:-1]:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


def _topology_text(item: Any) -> str:
    if isinstance(item, dict):
        over = item.get("oversubscription")
        return str(item.get("name")) if over is None else f"{item.get('name')} {float(over):g}:1"
    return str(item)


_RANGE = re.compile(r"^(?P<start>[\w.,]+)\s*-\s*(?P<stop>[\w.,]+)(?:\s+(?:(?P<step>step)\s*|x)(?P<by>[\w.,]+))?$")


def _parse_range(text: str) -> dict[str, int] | None:
    """A range of GPU counts, as the scenario file writes it: ``512-4096`` (doubling), ``512-4096 x4``,
    ``512-16k step 512``; None if `text` is not written as a range."""
    m = _RANGE.match(text.strip())
    if m is None:
        return None
    start, stop = parse_count(m["start"]), parse_count(m["stop"])
    if stop < start:
        raise ValueError(f"{text.strip()!r}: the range ends ({stop:,}) below where it starts ({start:,})")
    by = parse_count(m["by"]) if m["by"] else 2
    if not m["step"] and by < 2:
        raise ValueError(f"{text.strip()!r}: multiply by 2 or more (x2 doubles)")
    return {"start": start, "stop": stop, "step" if m["step"] else "factor": by}


#: A range of GPU counts that spans more values than this shows as a range, else as its list.
_LISTED = 8


def _range_text(r: dict[str, Any]) -> str:
    """A range of the scenario file as the form writes it: ``512-4,096``, ``512-16,384 step 512``."""
    span = f"{format_count(int(r['start']))}-{format_count(int(r['stop']))}"
    if "step" in r:
        return f"{span} step {format_count(int(r['step']))}"
    return span if int(r.get("factor", 2)) == 2 else f"{span} x{int(r['factor'])}"


_TOPOLOGY = re.compile(r"^(?P<name>[\w.\-]+?)(?:(?:\s+|:)(?P<ratio>[\d.]+)(?::1)?)?$")


def _parse_topologies(text: str) -> list[Any]:
    items = [t.strip() for t in re.split(r"\s*[,;]\s*", text.strip()) if t.strip()]
    if not items:
        raise ValueError("give at least one topology, e.g. rail-fat-tree")
    out: list[Any] = []
    for item in items:
        m = _TOPOLOGY.match(item)
        if not m:
            raise ValueError(f"{item!r}: write a topology as its id, or id and oversubscription (fat-tree 2:1)")
        if m["ratio"] is None:
            out.append(m["name"])
            continue
        ratio = float(m["ratio"])
        if ratio < 1:
            raise ValueError(f"{item!r}: the oversubscription must be 1 or more (2:1 = half the uplink bandwidth)")
        out.append({"name": m["name"], "oversubscription": ratio})
    return out


class ScenarioDraft:
    """A scenario as loaded or edited: its file's content, the checked :class:`~scalefront.scenario.Scenario`, and
    the form values that show it. Immutable: :meth:`edit` returns a new draft."""

    def __init__(
        self,
        raw: dict[str, Any],
        file: str,
        catalog: Catalog | None = None,
        *,
        original: dict[str, Any] | None = None,
        saved_to: str | None = None,
    ):
        self.catalog = catalog or builtin_catalog()
        self.raw = copy.deepcopy(raw)
        self.file = file
        self.original = copy.deepcopy(raw if original is None else original)
        #: The file the draft was last saved to, if any.
        self.saved_to = saved_to
        self.scenario: Scenario = build_scenario(self.raw, self._error_file, self.catalog)

    @classmethod
    def open(cls, source: str | Path, catalog: Catalog | None = None) -> ScenarioDraft:
        """A built-in scenario id or a scenario TOML file, checked (CatalogError names the file and key)."""
        raw, file = read_scenario(source)
        return cls(raw, file, catalog)

    @property
    def _error_file(self) -> str:
        return f"{self.file} (edited)" if self.edited else self.file

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def edited(self) -> bool:
        """Whether the scenario differs from the file it was opened from."""
        return self.raw != self.original

    @property
    def title(self) -> str:
        """The scenario's name, marked when edited: ``ib-vs-roce (edited)``, ``ib-vs-roce (saved to x.toml)``."""
        if self.saved_to and not self.edited:
            return f"{self.name} (saved to {self.saved_to})"
        return f"{self.name} (edited)" if self.edited else self.name

    # ------------------------------------------------------------------------------------------------ form
    def value(self, key: str) -> str:
        """The form text of one field."""
        f = _BY_KEY[key]
        v = _get(self.raw, f.path)
        if f.kind == "counts":
            counts = self.scenario.gpu_counts
            long = isinstance(v, dict) and len(counts) > _LISTED
            return _range_text(v) if long else ", ".join(format_count(n) for n in counts)
        if v is None:
            return {"choice": "rent", "names": "default"}.get(f.kind, "")
        if f.kind == "number":
            return format_si(float(v))
        if f.kind == "count":
            return format_count(int(v))
        if f.kind == "price":
            return format_money(float(v)) if float(v) < 1000 else f"${float(v):,.2f}"
        if f.kind == "topologies":
            return ", ".join(_topology_text(t) for t in v)
        if f.kind == "names":
            return ", ".join(str(x) for x in v)
        return str(v)

    def values(self) -> dict[str, str]:
        """Every field's form text, by key."""
        return {f.key: self.value(f.key) for f in FORM_FIELDS}

    def _parse(self, f: FormField, text: str) -> Any:
        text = text.strip()
        if f.kind == "price":
            if not text:
                return None
            value = parse_number(text)
            if not value > 0:
                raise ValueError("must be more than $0 (leave it empty for each GPU's catalog price)")
            return value
        if not text:
            raise ValueError("this field is required")
        if f.kind == "name":
            if not text.endswith(".toml"):
                self.catalog.model(text)
            return text
        if f.kind == "number":
            value = parse_number(text)
            if not value > 0:
                raise ValueError("must be more than 0")
            return value
        if f.kind == "count":
            return parse_count(text)
        if f.kind == "counts":
            return _parse_range(text) or [parse_count(t) for t in split_list(text)]
        if f.kind == "choice":
            if text not in f.choices:
                raise ValueError(f"choose {' or '.join(f.choices)}")
            return text
        if f.kind == "topologies":
            values = _parse_topologies(text)
            for t in values:
                self.catalog.topology(t["name"] if isinstance(t, dict) else t)
            return values
        names = [t.strip() for t in re.split(r"\s*[,;\s]\s*", text) if t.strip()]
        lookup = {"gpu": self.catalog.gpu, "fabric": self.catalog.fabric, "scale_up": self.catalog.scale_up_domain}
        for name in names:
            if not (f.key == "scale_up" and name == "default"):
                lookup[f.key](name)
        return names

    def check(self, values: dict[str, str]) -> dict[str, str]:
        """What is wrong with edited form values, by field key ("" for the scenario as a whole); empty if nothing."""
        try:
            self.edit(values)
        except FormErrors as err:
            return err.errors
        return {}

    def edit(self, values: dict[str, str]) -> ScenarioDraft:
        """A new draft with the fields whose text differs from :meth:`values` set from it. Raises
        :class:`FormErrors` with every field's problem (and the scenario's, once the fields parse)."""
        current = self.values()
        raw = copy.deepcopy(self.raw)
        errors: dict[str, str] = {}
        for key, text in values.items():
            f = _BY_KEY[key]
            if text.strip() == current[key].strip():
                continue
            try:
                _set(raw, f.path, self._parse(f, text))
            except (ValueError, CatalogError) as err:
                errors[key] = _plain(message_of(err))
        if errors:
            raise FormErrors(errors)
        try:
            return ScenarioDraft(raw, self.file, self.catalog, original=self.original, saved_to=self.saved_to)
        except ScalefrontError as err:
            raise FormErrors(_scenario_error(message_of(err))) from None

    # ------------------------------------------------------------------------------------------------ files
    def toml(self) -> str:
        """The scenario as a TOML file's text."""
        import tomli_w

        return tomli_w.dumps(self.raw)

    def save(self, path: str | Path, *, force: bool = False) -> ScenarioDraft:
        """Write the scenario to a TOML file (atomically; an existing file only with `force`); the draft that
        now stands for that file."""
        from scalefront.engine.export import write_text

        target = Path(path)
        if target.suffix.lower() != ".toml":
            raise UsageError(f"{target}: a scenario file is .toml")
        written = write_text(self.toml(), target, force=force)
        return ScenarioDraft(self.raw, str(written), self.catalog, saved_to=str(written))

    # ------------------------------------------------------------------------------------------------ reading
    def price_overrides(self, gpu: str, fabric: str) -> dict[str, float]:
        """The scenario's price overrides that apply to one GPU type and fabric (scalars, then their tables)."""
        prices = _get(self.raw, ("economics", "prices")) or {}
        out = {k: float(v) for k, v in prices.items() if not isinstance(v, dict)}
        for entry in (gpu, fabric):
            out.update({k: float(v) for k, v in (prices.get(entry) or {}).items()})
        return out

    def bill_of_materials(self, row: dict[str, Any]) -> dict[str, Any]:
        """The network's parts, capex and power for a result row (its GPUs, fabric, topology), at the
        scenario's prices (see :func:`scalefront.network.bom`)."""
        return bom(
            int(row["gpus"]),
            str(row["fabric"]),
            str(row["topology"]),
            oversubscription=float(row["oversubscription"]),
            gpu=str(row["gpu"]),
            scale_up=str(row["scale_up"]),
            prices=self.price_overrides(str(row["gpu"]), str(row["fabric"])),
            catalog=self.catalog,
        )


def _plain(text: str) -> str:
    """A catalog message without the pydantic or Python wording people should not have to read."""
    text = re.sub(r"\binvalid literal for int\(\) with base 10: ", "not a whole number: ", text)
    text = re.sub(r"could not convert string to float: ", "not a number: ", text)
    return text


_SCENARIO_ERROR = re.compile(r"^.*?: \[(?P<table>[\w.\-]+)\] (?P<key>[\w\-]+): (?P<msg>.*)$")


def _scenario_error(message: str) -> dict[str, str]:
    m = _SCENARIO_ERROR.match(message)
    if m:
        where = f"[{m['table']}] {m['key']}"
        for f in FORM_FIELDS:
            if f.where == where or (f.kind == "price" and m["table"].startswith("economics.prices")):
                return {f.key: _plain(m["msg"])}
    return {"": _plain(message.split(": ", 1)[-1] if ": " in message else message)}

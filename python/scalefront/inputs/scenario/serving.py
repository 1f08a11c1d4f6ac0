"""A serving scenario: a TOML file whose ``[serving]`` table holds serving inputs (the parameter table's ``serve``
parameters, by name: the options of ``scalefront inference``), a list of values on a swept axis (tp, pp, ep,
dp_attention, mode, prefill_instances, decode_instances, batch, max_num_tokens, quantization, kv_cache_dtype) or on
a cluster key (gpu, gpus, scale_up, fabric, topology: one frontier per cluster design), one value elsewhere;
``[objectives]`` (``maximize``/``minimize``: serving metrics, one to three in all) and ``[slo]`` (metric = limit: an
upper bound on a minimised metric, a lower bound on a maximised one; or ``{ max = .. }`` / ``{ min = .. }``).

    [serving]
    model = "deepseek-v3"
    gpus = 64
    fabric = ["ib-ndr", "roce-400g"]
    tp = [1, 2, 4, 8]
    ep = [8, 16, 32, 64]
    dp_attention = [1, 8, 16, 32, 64]
    batch = [64, 256, 1024, 4096]
    input_tokens = 2000
    output_tokens = 1000

    [slo]
    tpot_s = 0.05

Errors name the file, the table and the key, in one line.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalefront._core import serve_axes
from scalefront.errors import CatalogError, UsageError, message_of
from scalefront.inputs.files import parse_toml, read_text
from scalefront.inputs.params import param, taking
from scalefront.schema import SERVING_METRICS

__all__ = [
    "CLUSTER_KEYS",
    "DEFAULT_OBJECTIVES",
    "ServingScenario",
    "parse_slo",
    "read_serving_scenario",
    "serving_objectives",
    "serving_table",
]

#: Keys whose lists make one frontier per combination (a cluster design each).
CLUSTER_KEYS = ("gpu", "gpus", "scale_up", "fabric", "topology")
#: What a frontier trades by default: throughput per GPU against time per output token.
DEFAULT_OBJECTIVES = ("output_tokens_per_s_per_gpu", "tpot_s")
_DIRECTION = {m.name: m.direction for m in SERVING_METRICS}


@dataclass(frozen=True)
class ServingScenario:
    """A serving sweep: the shared inputs, the cluster designs, the swept axes, objectives and SLOs."""

    fixed: dict[str, Any]
    clusters: list[dict[str, Any]]
    axes: dict[str, list[Any]]
    objectives: list[str]
    slos: list[tuple[str, str, float]]

    @property
    def layouts(self) -> int:
        """Layouts per cluster design."""
        n = 1
        for values in self.axes.values():
            n *= len(values)
        return n


def parse_slo(text: str) -> tuple[str, str, float]:
    """``tpot_s<=0.05`` (or ``>=``) as (metric, op, limit); UsageError naming the text."""
    for op in ("<=", ">="):
        name, found, value = text.partition(op)
        if found:
            name = name.strip()
            if name not in _DIRECTION:
                raise UsageError(f"--slo {text}: {name!r} is not a serving metric")
            try:
                return name, op, float(value)
            except ValueError:
                raise UsageError(f"--slo {text}: {value.strip()!r} is not a number") from None
    raise UsageError(f"--slo {text}: expected METRIC<=VALUE or METRIC>=VALUE (tpot_s<=0.05)")


def serving_objectives(names: list[str]) -> list[str]:
    """Checked objective names: one to three serving metrics with a direction."""
    if not 1 <= len(names) <= 3:
        raise UsageError(f"objectives: {len(names)} given; a frontier takes one to three")
    for n in names:
        if _DIRECTION.get(n) is None:
            choices = ", ".join(m for m, d in _DIRECTION.items() if d)
            raise UsageError(f"objectives: {n!r} is not a serving objective (one of {choices})")
    return names


def _slo_entry(where: str, name: str, value: Any) -> tuple[str, str, float]:
    direction = _DIRECTION.get(name, "missing")
    if direction == "missing":
        raise UsageError(f"{where} {name}: not a serving metric")
    if isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in ("max", "min"):
        bound, limit = next(iter(value.items()))
        op = "<=" if bound == "max" else ">="
    elif direction is not None:
        op, limit = ("<=" if direction == "min" else ">="), value
    else:
        raise UsageError(f"{where} {name}: give {{ max = .. }} or {{ min = .. }} (the metric has no direction)")
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        raise UsageError(f"{where} {name}: expected a number, got {limit!r}")
    return name, op, float(limit)


#: The TOML type each kind of parameter that `Param.check` leaves to a later layer takes here (names are looked up
#: in the catalog after this, which needs them to be text).
_TYPES: dict[str, tuple[type, str]] = {
    "model": (str, "a catalog model id or a model file"),
    "id": (str, "a catalog id"),
    "flag": (bool, "true or false"),
    "prices": (dict, "a table of price overrides"),
}


def _values(where: str, key: str, value: Any, axes: tuple[str, ...]) -> list[Any]:
    """The key's values, each checked by its parameter."""
    p = param(key)
    values = value if isinstance(value, list) else [value]
    if isinstance(value, list) and key not in axes and key not in CLUSTER_KEYS:
        raise UsageError(
            f"{where} {key}: takes one value (only the swept axes and {', '.join(CLUSTER_KEYS)} take lists)"
        )
    if not values:
        raise UsageError(f"{where} {key}: an empty list")
    for v in values:
        kind, expected = _TYPES.get(p.kind, (object, ""))
        if not isinstance(v, kind):
            raise UsageError(f"{where} {key}: expected {expected}, got {v!r}")
        try:
            p.check(v)
        except UsageError as err:
            raise UsageError(f"{where} {key}: {message_of(err)}") from None
    return values


def serving_table(table: Mapping[str, Any], where: str) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """A ``[serving]`` table checked (of a serving scenario, or beside a training scenario's tables; `where` names
    the file): its one-value keys and its lists (swept axes and cluster keys), or a UsageError naming the file, the
    table and the key."""
    if not isinstance(table, Mapping):
        raise UsageError(f"{where} [serving]: expected a table of serving inputs")
    names = {p.name for p in taking("serve")}
    axes_names = tuple(serve_axes())
    fixed: dict[str, Any] = {}
    lists: dict[str, list[Any]] = {}
    for key, value in table.items():
        if key not in names:
            raise UsageError(f"{where} [serving] {key}: not a serving input (see scalefront inference --help)")
        values = _values(f"{where} [serving]", key, value, axes_names)
        (lists if isinstance(value, list) else fixed)[key] = values if isinstance(value, list) else values[0]
    return fixed, lists


def read_serving_scenario(path: str | Path) -> ServingScenario:
    """Read and check a serving scenario (see the module doc)."""
    doc = parse_toml(read_text(Path(path)), str(path))
    where = f"{path}:"
    unknown = sorted(set(doc) - {"serving", "objectives", "slo"})
    if "serving" not in doc or unknown:
        extra = f"; unknown table [{unknown[0]}]" if unknown else ""
        raise CatalogError(
            f"{where} a serving scenario has a [serving] table and optionally [objectives], [slo]{extra}"
        )
    fixed, lists = serving_table(doc["serving"], where)
    clusters_keys = [k for k in CLUSTER_KEYS if k in lists]
    combos = itertools.product(*(lists[k] for k in clusters_keys))
    clusters = [dict(zip(clusters_keys, combo, strict=True)) for combo in combos]
    axes = {k: v for k, v in lists.items() if k not in CLUSTER_KEYS}
    objectives = doc.get("objectives", {})
    chosen = list(objectives.get("maximize", [])) + list(objectives.get("minimize", []))
    slos = [_slo_entry(f"{where} [slo]", k, v) for k, v in doc.get("slo", {}).items()]
    return ServingScenario(fixed, clusters, axes, serving_objectives(chosen or list(DEFAULT_OBJECTIVES)), slos)

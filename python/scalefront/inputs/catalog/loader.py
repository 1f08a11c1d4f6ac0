"""The `Catalog`: every catalog the model needs, keyed by id, read from the built-in ``data/`` files (embedded in
the extension at build time) and from user catalog files that add or replace entries; look-ups that name an
unknown id with a suggestion; a model file (``--model PATH.toml``) read on its own."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from scalefront._core import data_files, fabric_topology_problem
from scalefront.errors import CatalogError
from scalefront.inputs.catalog.entries import (
    Entry,
    FabricEntry,
    FrameworkEntry,
    GpuEntry,
    ModelEntry,
    ReliabilityEntry,
    ScaleUpEntry,
    TopologyEntry,
    is_dated,
)
from scalefront.inputs.catalog.error_model import NO_ERRORS, ErrorModelFile, load_error_model
from scalefront.inputs.catalog.fabric_names import FabricName, parse_fabric_name
from scalefront.inputs.catalog.overlay import overlay, take_like
from scalefront.inputs.catalog.prices import Correlation, Economics, FabricPrice, GpuPrice, ScaleUpPrice
from scalefront.inputs.files import parse_builtin_toml, parse_toml, read_text, validated
from scalefront.inputs.messages import did_you_mean, toml_repr

__all__ = ["ENTRY_CLASSES", "Catalog", "builtin_catalog", "error_model_spec", "load_model_file", "overlay"]

#: Every catalog entry class by its section of the figure table (`scalefront.inputs.catalog.figures`).
ENTRY_CLASSES: dict[str, type[Entry] | type[ModelEntry]] = {
    cls.SECTION: cls
    for cls in (
        GpuEntry,
        ScaleUpEntry,
        FabricEntry,
        TopologyEntry,
        FrameworkEntry,
        ReliabilityEntry,
        GpuPrice,
        FabricPrice,
        ScaleUpPrice,
        Economics,
        ModelEntry,
    )
}

#: How prose names a fabric's family (`Catalog.fabric_label`), by its `kind`.
FABRIC_FAMILIES = {
    "infiniband": "InfiniBand",
    "roce": "Ethernet",
    "uec": "Ultra Ethernet",
    "efa": "EFA",
    "tcp": "TCP Ethernet",
}


def _unknown(kind: str, name: str, known: dict[str, Any], files: Sequence[str] = ()) -> CatalogError:
    """An unknown name, the closest known one, every known one, and the user catalogs searched beside the
    built-in one (a name expected from a --catalog file that does not define it)."""
    hint = did_you_mean(name, list(known)).removeprefix("; ")
    close = f" ({hint})" if hint else ""
    searched = f" (searched the built-in catalog and {', '.join(files)})" if files else ""
    return CatalogError(f"unknown {kind} {name!r}{close}; known: {', '.join(sorted(known))}{searched}")


_E = TypeVar("_E", bound=Entry)


def load_model_file(path: str | Path) -> ModelEntry:
    """Read one model from a TOML file of its fields (a dated source among them, as every catalog figure has)."""
    path = Path(path)
    return _model(parse_toml(read_text(path), str(path)), str(path), path.stem)


def _model(raw: Any, file: str, stem: str) -> ModelEntry:
    model = validated(ModelEntry, raw, file, stem)
    if not is_dated(model.source):
        raise CatalogError(
            f"{file}: [{stem}] source: a model names where its dimensions come from, ending with the date it was "
            f'read: source = "<paper or config>; YYYY-MM"'
        )
    return model


@dataclass
class Catalog:
    """Every catalog the model needs, keyed by id."""

    gpus: dict[str, GpuEntry] = field(default_factory=dict)
    scale_up: dict[str, ScaleUpEntry] = field(default_factory=dict)
    fabrics: dict[str, FabricEntry] = field(default_factory=dict)
    topologies: dict[str, TopologyEntry] = field(default_factory=dict)
    frameworks: dict[str, FrameworkEntry] = field(default_factory=dict)
    models: dict[str, ModelEntry] = field(default_factory=dict)
    gpu_prices: dict[str, GpuPrice] = field(default_factory=dict)
    fabric_prices: dict[str, FabricPrice] = field(default_factory=dict)
    scale_up_prices: dict[str, ScaleUpPrice] = field(default_factory=dict)
    reliability: dict[str, ReliabilityEntry] = field(default_factory=dict)
    economics: Economics | None = None
    #: Groups of prices that move together in the ROI's Monte Carlo (`[correlation.<id>]` of the price book).
    correlations: dict[str, Correlation] = field(default_factory=dict)
    #: The prediction intervals' residuals by regime (data/model_error.toml), or None.
    errors: ErrorModelFile | None = None
    #: The user catalog files merged in, in order (named when an id has no price in any of them).
    files: list[str] = field(default_factory=list)
    #: sha256 of every file read into the catalog, in order (the built-in data, then each user file).
    digest: str = ""
    #: Each entry's table as read (the built-in one with the user files' changes laid over it), by section and id:
    #: what a later user file's entry of the same id changes (`overlay`).
    entry_tables: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict, repr=False, compare=False)

    _KINDS: ClassVar[dict[str, tuple[str, type[BaseModel]]]] = {
        "gpus": ("gpus", GpuEntry),
        "scale_up": ("scale_up", ScaleUpEntry),
        "fabrics": ("fabrics", FabricEntry),
        "topologies": ("topologies", TopologyEntry),
        "frameworks": ("frameworks", FrameworkEntry),
        "models": ("models", ModelEntry),
        "reliability": ("reliability", ReliabilityEntry),
    }

    @classmethod
    def builtin(cls) -> Catalog:
        """The catalogs shipped with scalefront (data/ at build time)."""
        files = data_files()
        cat = cls()
        cat.digest = hashlib.sha256("".join(f"{k}\0{v}\0" for k, v in sorted(files.items())).encode()).hexdigest()
        for kind in ("gpus", "scale_up", "fabrics", "topologies", "frameworks", "reliability"):
            name = f"{kind}.toml"
            cat._add_table(kind, parse_builtin_toml(files[name], f"data/{name}"), f"data/{name}")
        cat._add_prices(parse_builtin_toml(files["prices.toml"], "data/prices.toml"), "data/prices.toml")
        if "model_error.toml" in files:
            cat.errors = load_error_model(files["model_error.toml"], "data/model_error.toml", parse_builtin_toml)
        for path, text in sorted(files.items()):
            if path.startswith("models/"):
                stem = path.removeprefix("models/").removesuffix(".toml")
                cat.models[stem] = _model(parse_builtin_toml(text, f"data/{path}"), f"data/{path}", stem)
        cat._check_references("built-in data/")
        return cat

    @classmethod
    def load(cls, *user_files: str | Path) -> Catalog:
        """The built-in catalogs, extended or overridden by each user catalog file in turn."""
        cat = cls.builtin()
        for path in user_files:
            cat.add_file(path)
        return cat

    def add_file(self, path: str | Path) -> None:
        """Merge a user catalog file (tables by kind: gpus, scale_up, fabrics, topologies, frameworks, models,
        prices)."""
        file = str(path)
        self.files.append(file)
        text = read_text(Path(path))
        doc = parse_toml(text, file)
        self.digest = hashlib.sha256(f"{self.digest}\0{text}".encode()).hexdigest()
        allowed = [*self._KINDS, "prices"]
        for key, table in doc.items():
            if key == "prices":
                self._add_prices(table, file)
            elif key in self._KINDS:
                self._add_table(key, table, file)
            else:
                hint = did_you_mean(key, allowed)
                raise CatalogError(f"{file}: [{key}] is not a catalog kind ({', '.join(allowed)}){hint}")
        self._check_references(file)

    def _add_table(self, kind: str, table: Any, file: str) -> None:
        attr, model_cls = self._KINDS[kind]
        if not isinstance(table, dict):
            raise CatalogError(f"{file}: [{kind}] must be a table of entries, got {toml_repr(table)}")
        target = getattr(self, attr)
        for entry, raw in table.items():
            if issubclass(model_cls, Entry):
                target[entry] = self._entry(model_cls, kind, entry, raw, file, entry)
            else:  # a model is replaced whole: its one source describes all its dimensions
                target[entry] = validated(model_cls, raw, file, entry)

    _PRICE_TABLES: ClassVar[dict[str, tuple[str, type[Entry]]]] = {
        "gpu": ("gpu_prices", GpuPrice),
        "fabric": ("fabric_prices", FabricPrice),
        "scale_up": ("scale_up_prices", ScaleUpPrice),
    }

    def _add_prices(self, table: Any, file: str) -> None:
        if not isinstance(table, dict):
            raise CatalogError(f"{file}: prices must be a table, got {toml_repr(table)}")
        for key, value in table.items():
            if key == "economics":
                self.economics = self._entry(Economics, "prices", "economics", value, file, "economics")
                continue
            if key == "correlation" and isinstance(value, dict):
                for entry, raw in value.items():
                    self.correlations[entry] = validated(Correlation, raw, file, f"correlation.{entry}")
                continue
            if key not in self._PRICE_TABLES:
                kinds = [*self._PRICE_TABLES, "economics", "correlation"]
                hint = did_you_mean(key, kinds)
                raise CatalogError(f"{file}: [{key}] is not a price table ({', '.join(kinds)}){hint}")
            if not isinstance(value, dict):
                raise CatalogError(f"{file}: [{key}] must be a table of entries, got {toml_repr(value)}")
            attr, model_cls = self._PRICE_TABLES[key]
            target = getattr(self, attr)
            for entry, raw in value.items():
                target[entry] = self._entry(model_cls, f"prices.{key}", entry, raw, file, f"{key}.{entry}")

    def _entry(self, cls: type[_E], section: str, entry: str, raw: Any, file: str, label: str) -> _E:
        """Entry `entry` of `section` as `cls`: `raw` itself for a new id, `raw` laid over the entry already read
        for a known one (`overlay`), so that a user file changes a built-in figure by giving only that figure and
        its source."""
        base = self.entry_tables.get((section, entry))
        if isinstance(raw, dict) and "like" in raw:
            base, raw = take_like(self.entry_tables, section, entry, raw, f"{file}: [{label}]")
        if base is not None and isinstance(raw, dict):
            raw = overlay(base, raw)
        result = validated(cls, raw, file, label)
        self.entry_tables[(section, entry)] = raw
        return result

    def _check_references(self, file: str) -> None:
        for fid, price in self.fabric_prices.items():
            fabric = self.fabrics.get(fid)
            if price.modes is None or fabric is None:
                continue
            for mode in sorted(set(price.modes.root) - set(fabric.mode_names)):
                known = ", ".join(fabric.mode_names) or "none"
                raise CatalogError(f"{file}: [fabric.{fid}.modes.{mode}] fabric {fid} has no mode {mode!r} ({known})")
        for gid, gpu in self.gpus.items():
            if gpu.default_scale_up not in self.scale_up:
                raise CatalogError(
                    f"{file}: [{gid}] default_scale_up: {gpu.default_scale_up!r} is not in the scale-up catalog "
                    f"({', '.join(sorted(self.scale_up))})"
                )
            if not self.scale_up[gpu.default_scale_up].accepts(gpu):
                raise CatalogError(f"{file}: [{gid}] default_scale_up: {self.mismatch(gid, gpu.default_scale_up)}")

    def mismatch(self, gpu: str, scale_up: str) -> str:
        """Why GPU `gpu` cannot join domain `scale_up` (both known ids), and which domains it can join."""
        link, domain_link = self.gpus[gpu].scale_up_link, self.scale_up[scale_up].link
        return (
            f"GPU {gpu!r} ({link}) cannot join scale-up domain {scale_up!r}, whose switches connect {domain_link} "
            f"ports; domains for it: {', '.join(self.scale_ups_for(gpu))}"
        )

    def scale_ups_for(self, gpu: str) -> list[str]:
        """The scale-up domains GPU `gpu` can join, sorted."""
        entry = self.gpu(gpu)
        return sorted(name for name, domain in self.scale_up.items() if domain.accepts(entry))

    def check_scale_up(self, gpu: str, scale_up: str) -> None:
        """Raise CatalogError when GPU `gpu` cannot join domain `scale_up` (both known ids)."""
        if not self.scale_up_domain(scale_up).accepts(self.gpu(gpu)):
            raise CatalogError(self.mismatch(gpu, scale_up))

    # Look-ups with a clear error for an unknown name.
    def gpu(self, name: str) -> GpuEntry:
        return self.gpus.get(name) or _raise(_unknown("GPU", name, self.gpus, self.files))

    def scale_up_domain(self, name: str) -> ScaleUpEntry:
        return self.scale_up.get(name) or _raise(_unknown("scale-up domain", name, self.scale_up, self.files))

    def fabric(self, name: str) -> FabricEntry:
        """The fabric `name` (`FABRIC`, `FABRIC@MODE`, `FABRIC@VARIANT` or `FABRIC@MODE@VARIANT`: fabric_names), in
        its default mode when it has modes and none is named. A price variant (a price entry of its own and no mode
        of that name: `roce-400g@branded`, a branded box instead of a white box) changes what it costs, not how it
        runs."""
        n = self._fabric_name(name)
        entry = self.fabrics[n.base]
        return entry if n.mode is None else entry.in_mode(n.mode)

    def _fabric_name(self, name: str) -> FabricName:
        """`name` resolved against its fabric's modes and its price variants, checked."""
        base = name.partition("@")[0]
        entry = self.fabrics.get(base) or _raise(_unknown("fabric", base, self.fabrics, self.files))
        keys = (k.partition("@") for k in self.fabric_prices)
        variants = sorted(v for b, _, v in keys if b == base and v and v not in entry.mode_names)
        return parse_fabric_name(name, entry.mode_names, entry.default_mode, variants)

    def fabric_id(self, name: str) -> str:
        """The canonical id of fabric `name`, as every output names it: `roce-400g@untuned` for `roce-400g` (its
        default mode), the id alone for a fabric without modes, `roce-400g@tuned@branded` for tuned RoCE on branded
        boxes and `roce-400g@branded` for them in the default mode."""
        return self._fabric_name(name).canonical

    def is_price_variant(self, name: str) -> bool:
        """Whether `name` names a price variant (`roce-400g@branded`, `roce-400g@tuned@branded`)."""
        try:
            return self._fabric_name(name).variant is not None
        except CatalogError:
            return False

    def design_problem(self, fabric: str, topology: str, oversubscription: float | None = None) -> str | None:
        """Why topology `topology` cannot carry fabric `fabric`'s features, naming both (SHARP needs rail-aligned
        leaves, dual-ToR needs leaves: the core's rule); None when it can."""
        topo = self.topology(topology)
        problem = fabric_topology_problem(self.fabric(fabric).core_spec(), topo.core_spec(oversubscription))
        return None if problem is None else f"fabric {self.fabric_id(fabric)} on topology {topology}: {problem}"

    def check_design(self, fabric: str, topology: str, oversubscription: float | None = None) -> None:
        """Raise CatalogError with `design_problem`'s message when the topology cannot carry the fabric."""
        problem = self.design_problem(fabric, topology, oversubscription)
        if problem is not None:
            raise CatalogError(problem)

    def fabric_mode_summary(self, name: str) -> str:
        """What fabric `name`'s operating mode is, its one-line summary ("" for a fabric without modes)."""
        n = self._fabric_name(name)
        modes = self.fabrics[n.base].modes
        return str(modes.root[n.mode].get("summary", "")) if modes is not None and n.mode is not None else ""

    def fabric_ids(self) -> list[str]:
        """Every fabric in every mode, by canonical id, sorted."""
        ids = [f"{b}@{m}" for b, e in self.fabrics.items() for m in e.mode_names]
        return sorted(ids + [b for b, e in self.fabrics.items() if not e.mode_names])

    def price_variant_ids(self) -> list[str]:
        """Every price variant in every mode of its fabric, by canonical id, sorted (`roce-400g@branded`,
        `roce-400g@tuned@branded`, ...)."""
        ids = set()
        for key in self.fabric_prices:
            base, _, variant = key.partition("@")
            entry = self.fabrics.get(base)
            if entry is None or not variant or variant in entry.mode_names:
                continue
            ids |= {self.fabric_id(f"{base}@{m}@{variant}") for m in entry.mode_names} or {key}
        return sorted(ids)

    def topology(self, name: str) -> TopologyEntry:
        return self.topologies.get(name) or _raise(_unknown("topology", name, self.topologies, self.files))

    def framework(self, name: str) -> FrameworkEntry:
        return self.frameworks.get(name) or _raise(_unknown("framework", name, self.frameworks, self.files))

    def model(self, name: str) -> ModelEntry:
        return self.models.get(name) or _raise(_unknown("model", name, self.models, self.files))

    def _no_price(self, kind: str, name: str, priced: dict[str, Any]) -> CatalogError:
        """No [prices.<kind>.<name>] anywhere: the files searched, and the closest priced id (a misspelt one)."""
        where = " or ".join(["data/prices.toml", *self.files])
        return CatalogError(f"no price for {kind} {name!r} in {where}{did_you_mean(name, list(priced))}")

    def gpu_price(self, name: str) -> GpuPrice:
        return self.gpu_prices.get(name) or _raise(self._no_price("GPU", name, self.gpu_prices))

    def fabric_price_key(self, name: str) -> str:
        """The price book entry that holds fabric `name`'s lines: a price variant's own (`roce-400g@branded`, for
        `roce-400g@tuned@branded` too), else its fabric's (`roce-400g` for `roce-400g@tuned`: a mode runs the same
        parts); CatalogError as `fabric_price`, without building the priced entry."""
        if name.partition("@")[0] not in self.fabrics:
            self.fabric_price(name)  # a price-only fabric, or the error for it
            return name
        n = self._fabric_name(name)
        if n.price_key not in self.fabric_prices:
            raise self._no_price("fabric", n.base, self.fabric_prices)
        return n.price_key

    def fabric_price_tables(self, name: str) -> tuple[str, ...]:
        """The ids whose price table in a scenario (`[economics.prices.<id>]`) applies to fabric `name`, the most
        general first: its price entry (`roce-400g` for every mode of it; `roce-400g@branded` for the branded boxes
        in every mode), then the design itself (`roce-400g@tuned@branded`) where that is not its price entry."""
        key = self.fabric_price_key(name)
        own = self.fabric_id(name) if name.partition("@")[0] in self.fabrics else name
        return (key,) if own == key else (key, own)

    def price_table_id(self, key: str) -> str:
        """A scenario price table's id as `fabric_price_tables` names it: a price entry's key as written
        (`roce-400g`), any other spelling of a fabric design canonical (`roce-400g@untuned@branded` is
        `roce-400g@branded`); a GPU's id, or a name that is neither, unchanged."""
        if key in self.fabric_prices or key.partition("@")[0] not in self.fabrics:
            return key
        try:
            return self.fabric_id(key)
        except CatalogError:
            return key

    def fabric_price(self, name: str) -> FabricPrice:
        """The parts of fabric `name` as its mode prices them, from its price variant's entry where it names one
        (the mode's price lines over the variant's: a branded box in the hyperscale mode still buys its spines)."""
        if name.partition("@")[0] not in self.fabrics:
            return self.fabric_prices.get(name) or _raise(self._no_price("fabric", name, self.fabric_prices))
        n = self._fabric_name(name)
        price = self.fabric_prices.get(n.price_key) or _raise(self._no_price("fabric", n.base, self.fabric_prices))
        if n.mode is None:
            return price
        own = self.fabric_prices.get(n.base)
        modes = own.modes if own is not None else None
        if n.variant is not None and price.modes is None and modes is not None and n.mode in modes.root:
            price = price.model_copy(update={"modes": modes})  # a variant's own mode tables would come first
        return price.in_mode(n.mode)

    def scale_up_price(self, name: str) -> ScaleUpPrice:
        """NVLink switch tray price of a domain; zero for domains whose switches come with the servers."""
        if name in self.scale_up_prices:
            return self.scale_up_prices[name]
        if self.scale_up_domain(name).switch_trays_per_domain > 0:
            raise CatalogError(f"no switch tray price for scale-up domain {name!r} in the price catalog")
        # No trays to buy: nothing to price (model_construct: no figures, so no sources to check).
        return ScaleUpPrice.model_construct(switch_tray_usd=0.0, switch_tray_w=0.0, sources={})

    def reliability_profile(self, name: str) -> ReliabilityEntry:
        return self.reliability.get(name) or _raise(_unknown("reliability profile", name, self.reliability, self.files))

    def economics_or_error(self) -> Economics:
        return self.economics or _raise(CatalogError("the price catalog has no [economics] table"))

    def prices(self, gpu: str, fabric: str, scale_up: str, cost_mode: str = "rent") -> dict[str, dict[str, Any]]:
        """Every price of one cluster design, nested as the core takes it (`scalefront_core::Prices`): ``gpu``,
        ``network``, ``scale_up`` and ``economics`` (with ``cost_mode``)."""
        return {
            "gpu": self.gpu_price(gpu).model_dump(),
            "network": self.fabric_price(fabric).model_dump(),
            "scale_up": self.scale_up_price(scale_up).model_dump(),
            "economics": {**self.economics_or_error().model_dump(), "cost_mode": cost_mode},
        }

    def fabric_label(self, name: str) -> str:
        """A fabric's family for prose, with its canonical id: ``InfiniBand (ib-ndr@default)``; the id alone when
        it is unknown."""
        try:
            kind, name = self.fabric(name).kind, self.fabric_id(name)
        except CatalogError:
            return name
        return f"{FABRIC_FAMILIES.get(kind, kind)} ({name})"


_BUILTIN: Catalog | None = None


def builtin_catalog() -> Catalog:
    """The shipped catalogs, parsed once per process."""
    global _BUILTIN
    if _BUILTIN is None:
        _BUILTIN = Catalog.builtin()
    return _BUILTIN


def error_model_spec(catalog: Catalog, level: float | None = None) -> dict[str, Any]:
    """The catalog's error model as the core takes it, at `level` (default: the file's)."""
    if catalog.errors is None:
        return {**NO_ERRORS, "level": NO_ERRORS["level"] if level is None else level}
    return catalog.errors.core_spec(level)


def _raise(err: Exception) -> Any:
    raise err

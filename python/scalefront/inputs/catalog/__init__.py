"""Catalogs: GPUs, scale-up domains, fabrics, topologies, models and prices, read from TOML.

The built-in catalogs are the ``data/`` files embedded in the extension at build time. A user catalog file
adds entries or replaces built-in ones; it holds tables by kind (``[gpus.my-gpu]``, ``[fabrics.my-net]``,
``[scale_up.x]``, ``[topologies.x]``, ``[prices.gpu.x]``, ``[prices.fabric.x]``, ``[prices.economics]``) with
the same fields as the built-in files (see data/README.md). A model file (``--model PATH.toml``) holds one
model's fields at the top level.

Any numeric figure of any entry may be a plain number or a range ``{ low = .., typical = .., high = .. }``
(low <= typical <= high, each within the figure's own limits): the model, ``evaluate`` and sweeps use the typical
value; the ROI's Monte Carlo and tornado sample the range (``entry.range_of(field)``). A range needs a dated source
like any figure. Estimates say ``EST:`` in their source, and why.

Every bad entry is reported as one line naming the file, the entry and the field.

Modules: ``entries`` (the records and their SI conversions), ``prices``, ``error_model`` (data/model_error.toml),
``loader`` (the `Catalog`).
"""

from __future__ import annotations

from scalefront.inputs.catalog.entries import (
    Entry,
    FabricEntry,
    GpuEntry,
    ModelEntry,
    Range,
    ReliabilityEntry,
    ScaleUpEntry,
    TopologyEntry,
)
from scalefront.inputs.catalog.error_model import ErrorModelFile, ErrorRegimeEntry, load_error_model
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog, error_model_spec, load_model_file
from scalefront.inputs.catalog.prices import Economics, FabricPrice, GpuPrice, ScaleUpPrice, apply_price_overrides

__all__ = [
    "Catalog",
    "Economics",
    "Entry",
    "ErrorModelFile",
    "ErrorRegimeEntry",
    "FabricEntry",
    "FabricPrice",
    "GpuEntry",
    "GpuPrice",
    "ModelEntry",
    "Range",
    "ReliabilityEntry",
    "ScaleUpEntry",
    "ScaleUpPrice",
    "TopologyEntry",
    "apply_price_overrides",
    "builtin_catalog",
    "error_model_spec",
    "load_error_model",
    "load_model_file",
]

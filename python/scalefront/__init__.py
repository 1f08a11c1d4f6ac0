"""scalefront: plan GPU training clusters with numbers.

>>> import scalefront
>>> r = scalefront.evaluate("llama3-70b", "h100-sxm", 1024, fabric="ib-ndr", tp=8, pp=4, vpp=5)
>>> r.step_time_s, r.mfu, r.time_to_train_days, r.cost_to_train_usd  # doctest: +SKIP

Every name is imported on first use, so that `import scalefront` (and the `scalefront` command's first instant,
when it installs its Ctrl-C and SIGTERM handlers, `scalefront.console`) costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scalefront import api as api
    from scalefront._core import __version__
    from scalefront.errors import CatalogError, ConfigurationError, ScalefrontError, UsageError
    from scalefront.inputs.catalog.entries import ModelEntry
    from scalefront.inputs.catalog.loader import Catalog, load_model_file
    from scalefront.inputs.model import (
        Breakdown,
        Evaluation,
        HiddenComm,
        Inputs,
        Memory,
        Overlap,
        evaluate,
        evaluate_inputs,
        parse_overlap,
    )

__all__ = [
    "Breakdown",
    "Catalog",
    "CatalogError",
    "ConfigurationError",
    "Evaluation",
    "HiddenComm",
    "Inputs",
    "Memory",
    "ModelEntry",
    "Overlap",
    "ScalefrontError",
    "UsageError",
    "__version__",
    "evaluate",
    "evaluate_inputs",
    "load_model_file",
    "parse_overlap",
]

#: Where each public name lives.
_HOMES = {
    "__version__": "scalefront._core",
    **dict.fromkeys(("CatalogError", "ConfigurationError", "ScalefrontError", "UsageError"), "scalefront.errors"),
    "ModelEntry": "scalefront.inputs.catalog.entries",
    **dict.fromkeys(("Catalog", "load_model_file"), "scalefront.inputs.catalog.loader"),
    **dict.fromkeys(
        (
            "Breakdown",
            "Evaluation",
            "HiddenComm",
            "Inputs",
            "Memory",
            "Overlap",
            "evaluate",
            "evaluate_inputs",
            "parse_overlap",
        ),
        "scalefront.inputs.model",
    ),
}


def __getattr__(name: str) -> object:
    """A public name (or `scalefront.api`, the API for user interfaces) on first use."""
    if name == "api":
        return importlib.import_module("scalefront.api")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'scalefront' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "api"])

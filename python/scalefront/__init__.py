"""scalefront: plan GPU training clusters with numbers.

>>> import scalefront
>>> r = scalefront.evaluate("llama3-70b", "h100-sxm", 1024, fabric="ib-ndr", tp=8, pp=4, vpp=5)
>>> r.step_time_s, r.mfu, r.time_to_train_days, r.cost_to_train_usd  # doctest: +SKIP
"""

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


def __getattr__(name: str) -> object:
    """`scalefront.api` (the API for user interfaces) on first use, so that `import scalefront` stays light."""
    if name == "api":
        import importlib

        return importlib.import_module("scalefront.api")
    raise AttributeError(f"module 'scalefront' has no attribute {name!r}")

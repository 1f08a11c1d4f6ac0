"""Type stubs of the Rust extension `scalefront._core` (rust/python/src/lib.rs)."""

from typing import Any

__version__: str

class ScalefrontError(Exception):
    """Base class of every scalefront error."""

class ConfigurationError(ScalefrontError):
    """args = (message, category, field or None)."""

def evaluate(config: dict[str, Any]) -> dict[str, Any]:
    """Evaluate one configuration given as a dict of SI figures (see scalefront.model)."""

def data_files() -> dict[str, str]:
    """The catalog files embedded at build time: {path under data/: text}."""

"""The exceptions scalefront raises. Every one derives from :class:`ScalefrontError`.

- :class:`ConfigurationError` (raised by the Rust core): an invalid figure or an impossible parallelism;
  ``err.args`` is (message, category, field or None), the category naming the failure (``"tp_heads"``,
  ``"gpu_count_mismatch"``, ...).
- :class:`CatalogError`: a malformed catalog, scenario or model file, or an unknown name.
- :class:`UsageError`: a bad argument to the Python API or the command line.
"""

from __future__ import annotations

from scalefront._core import ConfigurationError, ScalefrontError

__all__ = ["CatalogError", "ConfigurationError", "ScalefrontError", "UsageError", "message_of"]


class CatalogError(ScalefrontError):
    """A catalog, scenario or model file is malformed, or a name is not in the catalog."""


class UsageError(ScalefrontError, ValueError):
    """A bad argument to the API or the command line."""


def message_of(err: BaseException) -> str:
    """The one-line human message of a scalefront error."""
    if isinstance(err, ConfigurationError) and err.args:
        return str(err.args[0])
    return str(err)

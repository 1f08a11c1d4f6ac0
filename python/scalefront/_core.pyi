"""Type stubs of the Rust extension `scalefront._core` (rust/python/src/lib.rs, sweep.rs)."""

from typing import Any

import numpy as np

__version__: str

class ScalefrontError(Exception):
    """Base class of every scalefront error."""

class ConfigurationError(ScalefrontError):
    """args = (message, category, field or None)."""

class SweepHandle:
    """Progress and cancellation of one sweep, polled from Python."""

    def __init__(self) -> None: ...
    def done(self) -> int: ...
    def feasible(self) -> int: ...
    def rejected(self) -> dict[str, int]: ...
    def cancel(self) -> None: ...
    def cancelled(self) -> bool: ...
    def next_rows(self, timeout_s: float) -> dict[str, np.ndarray] | None: ...

def evaluate(config: dict[str, Any]) -> dict[str, Any]:
    """Evaluate one configuration given as a dict of SI figures (see scalefront.model)."""

def space_size(space: dict[str, Any]) -> int:
    """Configurations in a sweep space, counted without evaluating any."""

def run_sweep(space: dict[str, Any], handle: SweepHandle, stream_rows: bool = False) -> dict[str, Any]:
    """Run a sweep (blocking, GIL released); returns the kept rows as numpy columns and the counts."""

def collective_times(spec: dict[str, Any]) -> list[float]:
    """Times of one collective over consecutive ranks for each message size."""

def network_bom(spec: dict[str, Any]) -> dict[str, Any]:
    """The network's bill of materials, capex and power."""

def data_files() -> dict[str, str]:
    """The catalog and validation files embedded at build time: {path: text}."""

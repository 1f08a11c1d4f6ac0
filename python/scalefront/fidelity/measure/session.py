"""One `scalefront measure` run as the command makes it: the device opened (PyTorch is the optional ``measure``
extra: without it, one line saying how to install it), the catalog GPU a device is, the plan run into a record
that is read back as any recorded run is, and the date the sources cite."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

from scalefront.errors import UsageError
from scalefront.fidelity.measure.cases import Case, Plan
from scalefront.fidelity.measure.driver import Device, Status, run_plan
from scalefront.fidelity.measure.replay import Run, run_of
from scalefront.inputs.catalog.loader import Catalog

__all__ = ["INSTALL", "THIS_RUN", "gpu_for", "measure", "open_device", "today"]

INSTALL = (
    "scalefront measure needs PyTorch and Triton on the GPU node: pip install 'scalefront[measure]' "
    "(or build the entry from a recorded run with --replay FILE)"
)
#: How errors and sources name a run measured now rather than read from a file.
THIS_RUN = "not kept (no --record)"


def open_device(rep_ms: int) -> Device:
    """The PyTorch device, or UsageError when PyTorch, Triton or a CUDA GPU is missing."""
    try:
        from scalefront.fidelity.measure.torch_device import TorchDevice
    except ImportError:
        raise UsageError(INSTALL) from None
    try:
        return TorchDevice(rep_ms)
    except RuntimeError as err:
        raise UsageError(f"{err}: run scalefront measure on the GPU node, or --replay a recorded run") from None


def today() -> str:
    """YYYY-MM-DD: SOURCE_DATE_EPOCH when set (reproducible output), else today (UTC)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    seconds = float(epoch) if epoch and epoch.strip().isdigit() else time.time()
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


_MODEL = re.compile(r"^[A-Z]+\d+[A-Z]*$")
_MEMORY = re.compile(r"^\d+GB$")


def _words(name: str) -> set[str]:
    return set(name.upper().replace(",", " ").replace("(", " ").replace(")", " ").split())


def gpu_for(device: str, catalog: Catalog) -> str:
    """The catalog GPU whose name has the device's model number (H200, H100, MI300X) and, when several do, its
    memory size (80GB); else UsageError asking for --gpu."""
    words = _words(device)
    models = {w for w in words if _MODEL.match(w)}
    found = [gid for gid, g in catalog.gpus.items() if models & _words(g.name)]
    if len(found) > 1:
        memory = {w for w in words if _MEMORY.match(w)}
        found = [gid for gid in found if memory & _words(catalog.gpus[gid].name)] or found
    if len(found) != 1:
        which = f"one of {', '.join(found)}" if found else f"none of {', '.join(catalog.gpus)} matches"
        raise UsageError(f"which catalog GPU is {device!r} ({which})? pass --gpu ID")
    return found[0]


def measure(
    plan: Plan,
    device: Device,
    *,
    command: str,
    date: str,
    on_result: Callable[[Case, dict[str, Any], Status], None] | None = None,
) -> tuple[dict[str, Any], Run]:
    """Run `plan` on `device`: the record (as --record writes it) and the run read back from it."""
    record = run_plan(plan, device, date=date, command=command, on_result=on_result)
    return record, run_of(record, THIS_RUN)

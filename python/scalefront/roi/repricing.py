"""What-ifs of price without a new Monte Carlo (the UI's what-if form, issue 21's 100 ms): the comparison of one
scenario, pair of fabrics and sample count is kept as a core `RoiSession` (every sample's speeds evaluated once,
with the sweeps' candidates), and a comparison of the same physics at other prices, economics, premium or price
ranges re-prices it: the same numbers as a fresh `compare` with those inputs, without re-sweeping or re-evaluating
a step. The core checks that the kept speeds serve the new inputs (`RoiSession.reprice_as`; otherwise, or for
another scenario, fabric, GPU count or sample count, this compares afresh and keeps that).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from scalefront._core import RoiSession
from scalefront.inputs.catalog.loader import Catalog
from scalefront.roi.compare import Prepared, finish, prepare
from scalefront.roi.result import RoiOptions, RoiResult

__all__ = ["compare_kept"]


@dataclass(frozen=True)
class _Kept:
    """One comparison kept: what its physics is keyed by, its prepared inputs (sweeps and candidates), its session."""

    key: Hashable
    prepared: Prepared
    session: RoiSession


_lock = threading.Lock()
_kept: _Kept | None = None


def compare_kept(
    key: Hashable,
    scenario: tuple[dict[str, Any], str],
    fabric_a: str,
    fabric_b: str,
    catalog: Catalog,
    options: RoiOptions,
) -> RoiResult:
    """`scalefront.roi.compare` of a parsed scenario with the tornado, re-priced from the kept comparison when
    `key` (what the caller's physics is: its scenario before price what-ifs, fabrics, samples) is the kept one's
    and the core finds the kept speeds serve it; else compared afresh (as a session) and kept."""
    global _kept
    with _lock:
        kept = _kept if _kept is not None and _kept.key == key else None
        prepared = prepare(scenario, fabric_a, fabric_b, catalog, options, swept_as=kept.prepared if kept else None)
        if kept is not None:
            out = kept.session.reprice_as(prepared.problem, prepared.uncertainty, True)
            if out is not None:
                return finish(prepared, dict(out[0]), dict(out[1]))
            prepared = prepare(scenario, fabric_a, fabric_b, catalog, options)  # its own sweeps
        session = RoiSession(prepared.problem, prepared.uncertainty)
        _kept = _Kept(key, prepared, session)
        typical, mc = session.reprice([], True)
        return finish(prepared, dict(typical), dict(mc))

"""NCCL's low-latency protocols per NIC and transport: the LL and LL128 step savings (`ll_step_saving_us`,
`ll128_step_saving_us`) fitted once per NIC generation on the calibration curves of every fabric that NIC serves,
and written into data/fabrics.toml for each of them (`scalefront validate --calibrate-protocols --write`).

Why per NIC and not per fabric: NCCL's net_ib transport drives InfiniBand and RoCE with one code path, and its
tuner charges them one NET latency table (NVIDIA/nccl src/graph/tuning.cc @5067397c, `hwLatencies[NET]`: Ring
LL / LL128 / Simple 2.7 / 4.0 / 14.0 us), so the same ConnectX-7 gets the same protocol savings on either fabric
(issue 19; roi-review-2 E5: fitted apart, they made RoCE small collectives 1.6-3x faster than InfiniBand's).

The fit: on a grid of 0-8 us in 0.25 us steps for each saving, the pair with the least median |ln(predicted /
measured bus bandwidth)| over every point of the NIC's calibration curves (the rows marked `role =
"calibration"` in data/validation/collectives.toml, chosen before any fit); ties go to the smaller savings. A NIC
without calibration curves of its own takes the fitted NIC of its transport (`BORROWS`), stated in its source.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from dataclasses import dataclass

from scalefront._core import collective_times
from scalefront.fidelity.validation.collectives import CORE_OPS, bus_bandwidth_factor
from scalefront.fidelity.validation.tables import load_table
from scalefront.fidelity.validation.training import DEFAULT_TOPOLOGY
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

__all__ = ["BORROWS", "GRID_US", "ProtocolFit", "fit_protocols", "write_protocols"]

#: The grid each saving is searched on (us).
GRID_US = tuple(i * 0.25 for i in range(33))
#: NICs without calibration curves of their own, and the fitted NIC whose savings they take: the same net_ib
#: transport (ConnectX-6, ConnectX-8, BlueField-3) or, for Ultra Ethernet, no curve at all (an estimate).
BORROWS = {
    "connectx-6-200g": "connectx-7-400g",
    "connectx-8-800g": "connectx-7-400g",
    "bluefield-3-400g": "connectx-7-400g",
    "uec-800g": "connectx-7-400g",
}


@dataclass(frozen=True)
class ProtocolFit:
    """The savings of one NIC: fitted on `curves`, or borrowed from `borrowed_from`."""

    nic: str
    ll_us: float
    ll128_us: float
    curves: tuple[str, ...]
    median_abs_log_error: float
    borrowed_from: str = ""


def _curves_of(catalog: Catalog, nic: str) -> list[dict[str, object]]:
    return [
        c
        for c in load_table("collectives")["curve"]
        if c.get("role") == "calibration" and c["fabric"] != "none" and catalog.fabric(str(c["fabric"])).nic == nic
    ]


def _log_errors(catalog: Catalog, curve: dict[str, object], ll_us: float, ll128_us: float) -> list[float]:
    fabric = catalog.fabric(str(curve["fabric"])).core_spec()
    fabric.update(ll_step_saving_s=ll_us * 1e-6, ll128_step_saving_s=ll128_us * 1e-6)
    fabric["in_network_reduction_efficiency"] = 0.0
    points = curve["points"]
    assert isinstance(points, list)
    sizes = [float(p[0]) for p in points]
    times = collective_times(
        {
            "scale_up": catalog.scale_up_domain(str(curve["scale_up"])).core_spec(),
            "fabric": fabric,
            "topology": catalog.topology(str(curve.get("topology", DEFAULT_TOPOLOGY))).core_spec(),
            "gpus": curve["gpus"],
            "server_gpus": curve["gpus_per_node"],
            "op": CORE_OPS[str(curve["op"])],
            "sizes_bytes": sizes,
        }
    )
    factor = bus_bandwidth_factor(str(curve["op"]), int(str(curve["gpus"])))
    return [math.log(s / t * factor / 1e9 / float(p[1])) for s, t, p in zip(sizes, times, points, strict=True)]


def _fit_nic(catalog: Catalog, nic: str, curves: list[dict[str, object]]) -> ProtocolFit:
    best: tuple[float, float, float] | None = None
    for ll, ll128 in itertools.product(GRID_US, GRID_US):
        errors = [abs(e) for c in curves for e in _log_errors(catalog, c, ll, ll128)]
        score = statistics.median(errors)
        if best is None or score < best[0] - 1e-12:
            best = (score, ll, ll128)
    assert best is not None
    return ProtocolFit(nic, best[1], best[2], tuple(str(c["id"]) for c in curves), best[0])


def fit_protocols(catalog: Catalog | None = None) -> dict[str, ProtocolFit]:
    """The LL and LL128 savings of every NIC the catalog's fabrics name: fitted where the NIC has calibration
    curves, else borrowed (`BORROWS`). NICs that neither have curves nor borrow (EFA, TCP) are left out."""
    cat = catalog or builtin_catalog()
    nics = sorted({f.nic for f in cat.fabrics.values() if f.nic})
    fits = {nic: _fit_nic(cat, nic, curves) for nic in nics if (curves := _curves_of(cat, nic))}
    for nic, source in BORROWS.items():
        if nic in nics and nic not in fits and source in fits:
            s = fits[source]
            fits[nic] = ProtocolFit(nic, s.ll_us, s.ll128_us, s.curves, s.median_abs_log_error, borrowed_from=source)
    return dict(sorted(fits.items()))


def _source(fit: ProtocolFit, date: str) -> str:
    curves = ", ".join(fit.curves)
    how = (
        f"scalefront's collective model against the calibration curves {curves} (data/validation/collectives.toml), "
        f"grid 0-8 us in 0.25 us, least median |log error| {fit.median_abs_log_error:.3f} (scalefront validate "
        "--calibrate-protocols)"
    )
    if fit.borrowed_from:
        return f"EST: {fit.borrowed_from}'s fit kept for {fit.nic}, which has no calibration curve: {how}; {date}"
    return f"fit per NIC and NCCL transport ({fit.nic}, shared by every fabric on it): {how}; {date}"


def write_protocols(fabrics_toml: str, fits: dict[str, ProtocolFit], date: str, catalog: Catalog | None = None) -> str:
    """data/fabrics.toml's text with every fabric's LL and LL128 savings and their sources set from its NIC's fit
    (`fit_protocols`); every other line unchanged."""
    cat = catalog or builtin_catalog()
    out = fabrics_toml
    for fid, entry in cat.fabrics.items():
        fit = fits.get(entry.nic)
        if fit is None:
            continue
        for field, value in (("ll_step_saving_us", fit.ll_us), ("ll128_step_saving_us", fit.ll128_us)):
            out = _set_line(out, fid, field, f"{value}", f'"{_source(fit, date)}"')
    return out


def _set_line(text: str, fid: str, field: str, value: str, source: str) -> str:
    """Set `field = value` in [fid] and its source in [fid.sources]."""
    for table, line in ((f"[{fid}]", f"{field} = {value}"), (f"[{fid}.sources]", f"{field} = {source}")):
        start = text.index(f"\n{table}\n") + len(table) + 2
        end = text.find("\n[", start)
        end = len(text) if end < 0 else end
        block = text[start:end]
        block, n = re.subn(rf"(?m)^{re.escape(field)} = .*$", line.replace("\\", "\\\\"), block, count=1)
        if n != 1:
            raise ValueError(f"data/fabrics.toml: [{fid}] has no {field} line to set")
        text = text[:start] + block + text[end:]
    return text

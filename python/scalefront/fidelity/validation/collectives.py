"""Collectives: the model's bus bandwidth against nccl-tests curves at every message size, and their summaries by
size regime, operation, fabric and curve."""

from __future__ import annotations

from dataclasses import dataclass

from scalefront._core import collective_times
from scalefront.fidelity.validation.tables import (
    JUDGED_COLLECTIVE_BYTES,
    LARGE_COLLECTIVE_BYTES,
    MEDIUM_COLLECTIVE_BYTES,
    load_table,
    summary,
)
from scalefront.fidelity.validation.training import DEFAULT_TOPOLOGY
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

__all__ = [
    "CORE_OPS",
    "CollectiveCheck",
    "bus_bandwidth_factor",
    "collective_checks",
    "collective_curve_lines",
    "collective_summary_lines",
    "judged_collectives",
]


@dataclass(frozen=True)
class CollectiveCheck:
    id: str
    source: str
    size_bytes: float
    measured_busbw_gbytes_per_s: float
    predicted_busbw_gbytes_per_s: float
    op: str = "all_reduce"
    #: "validation" (judged), "calibration" (a catalog figure was read from the curve) or "reference" (the run
    #: forces an algorithm or protocol; the model predicts NCCL's default choice): the last two shown, not judged.
    role: str = "validation"
    #: The curve's scale-out fabric id ("none" inside one scale-up domain).
    fabric: str = "none"

    @property
    def error(self) -> float:
        return self.predicted_busbw_gbytes_per_s / self.measured_busbw_gbytes_per_s - 1.0


#: nccl-tests' operation names -> the core's.
CORE_OPS = {
    "all_reduce": "all_reduce",
    "all_gather": "all_gather",
    "reduce_scatter": "reduce_scatter",
    "alltoall": "all_to_all",
}


def bus_bandwidth_factor(op: str, ranks: int) -> float:
    """busbw / algbw as nccl-tests reports it (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce, (n-1)/n otherwise."""
    per_rank = (ranks - 1) / ranks
    return 2.0 * per_rank if op == "all_reduce" else per_rank


def collective_checks(catalog: Catalog | None = None) -> list[CollectiveCheck]:
    cat = catalog or builtin_catalog()
    out = []
    for curve in load_table("collectives")["curve"]:
        fabric = cat.fabric(curve["fabric"]) if curve["fabric"] != "none" else cat.fabric("ib-ndr")
        topo = cat.topology(curve.get("topology", DEFAULT_TOPOLOGY))
        sizes = [float(p[0]) for p in curve["points"]]
        op = curve["op"]
        fabric_spec = fabric.core_spec()
        if not curve.get("collnet", False):
            # NCCL runs in-network reduction (CollNet/SHARP) only when asked: NCCL_COLLNET_ENABLE defaults to 0
            # (NVIDIA/nccl docs/userguide env.rst @5067397c); nccl-tests curves say when they set it.
            fabric_spec["in_network_reduction_efficiency"] = 0.0
        times = collective_times(
            {
                "scale_up": cat.scale_up_domain(curve["scale_up"]).core_spec(),
                "fabric": fabric_spec,
                "topology": topo.core_spec(),
                "gpus": curve["gpus"],
                "server_gpus": curve["gpus_per_node"],
                "op": CORE_OPS[op],
                "sizes_bytes": sizes,
            }
        )
        factor = bus_bandwidth_factor(op, curve["gpus"])
        role = curve.get("role", "validation")
        for (size, measured), t in zip(curve["points"], times, strict=True):
            busbw = size / t * factor / 1e9
            out.append(
                CollectiveCheck(
                    curve["id"], curve["source"], float(size), float(measured), busbw, op, role, curve["fabric"]
                )
            )
    return out


def judged_collectives(
    checks: list[CollectiveCheck], min_bytes: int = JUDGED_COLLECTIVE_BYTES
) -> list[CollectiveCheck]:
    """Held-out points (not calibration curves) of at least `min_bytes`."""
    return [c for c in checks if c.size_bytes >= min_bytes and c.role == "validation"]


def collective_summary_lines(collectives: list[CollectiveCheck]) -> list[str]:
    """One line per regime: sizes >= 64 KiB, >= 64 MiB, >= 1 GiB; and per operation from 64 KiB."""
    lines = []
    for label, floor in (
        ("64 KiB", JUDGED_COLLECTIVE_BYTES),
        ("64 MiB", MEDIUM_COLLECTIVE_BYTES),
        ("1 GiB", LARGE_COLLECTIVE_BYTES),
    ):
        judged = judged_collectives(collectives, floor)
        s = summary([c.error for c in judged])
        curves = len({c.id for c in judged})
        lines.append(
            f"**Collectives, held-out curves, sizes >= {label}**: {s['rows']} points on {curves} curves, median "
            f"|error| {s['median_ape_pct']:.1f}%, worst {s['worst_ape_pct']:.1f}%."
        )
    judged_all = judged_collectives(collectives)
    for op in sorted({c.op for c in collectives}):
        lines += _group_line(f"- {op} (>= 64 KiB): {{points}} points, ", [c for c in judged_all if c.op == op])
    for fabric in sorted({c.fabric for c in collectives}):
        judged = [c for c in judged_all if c.fabric == fabric]
        lines += _group_line(f"- fabric {fabric} (>= 64 KiB): {{points}} points on {{curves}} curves, ", judged)
    return lines


def _group_line(head: str, judged: list[CollectiveCheck]) -> list[str]:
    """`head` (with {points} and {curves} filled in) and the group's median and worst |error|; nothing if empty."""
    if not judged:
        return []
    s = summary([c.error for c in judged])
    head = head.format(points=s["rows"], curves=len({c.id for c in judged}))
    return [f"{head}median {s['median_ape_pct']:.1f}%, worst {s['worst_ape_pct']:.1f}%."]


def collective_curve_lines(collectives: list[CollectiveCheck], markdown: bool) -> list[str]:
    """Median and worst |error| per curve at sizes >= 64 KiB (calibration and reference curves marked)."""
    lines = (
        ["| curve | fabric | role | points >= 64 KiB | median |error| | worst |error| |", "|---|---|---|---|---|---|"]
        if markdown
        else [f"{'curve':48} {'fabric':10} {'role':11} {'points':>6} {'median':>7} {'worst':>7}"]
    )
    for cid in dict.fromkeys(c.id for c in collectives):
        points = [c for c in collectives if c.id == cid and c.size_bytes >= JUDGED_COLLECTIVE_BYTES]
        if not points:
            continue
        s = summary([c.error for c in points])
        c = points[0]
        if markdown:
            lines.append(
                f"| {cid} | {c.fabric} | {c.role} | {s['rows']} | {s['median_ape_pct']:.1f}% | "
                f"{s['worst_ape_pct']:.1f}% |"
            )
        else:
            lines.append(
                f"{cid[:48]:48} {c.fabric:10} {c.role:11} {s['rows']:6d} {s['median_ape_pct']:6.1f}% "
                f"{s['worst_ape_pct']:6.1f}%"
            )
    return lines

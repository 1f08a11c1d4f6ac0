"""Can the model tell two fabrics apart? The collective model's error per fabric, as a common term per NCCL
transport family plus a fabric-specific term (issue 19 item 5), fitted on the judged nccl-tests points of
data/validation/collectives.toml and written into data/model_error.toml by `scalefront validate --calibrate-errors`;
and the uncertainty of a speed difference between two fabrics that the comparison reports.

Residual of a curve: the mean over its judged points (>= 64 KiB, role validation) of ln(predicted / measured bus
bandwidth) = ln(measured / predicted time). Curves, not points, are the independent units (a curve's points share
a testbed). Families: `net_ib` (InfiniBand, RoCE and Spectrum-X: one NCCL transport, net_ib, on ConnectX NICs) and
`efa` (AWS's libfabric transport), kept apart. For a family: the common term is the root mean square of its curves'
residuals (the model's collective error on that transport). For a fabric: the fabric-specific term is the root mean
square of its curves' residuals about the family's mean (how far that fabric's error moves from the family's); a
fabric without curves takes its family's largest (EST: stated as unvalidated by `validated_gpus = 0`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scalefront.fidelity.validation.collectives import CollectiveCheck, judged_collectives
from scalefront.inputs.catalog.error_model import ErrorModelFile

__all__ = [
    "INDISTINGUISHABLE_Z",
    "CollectiveErrors",
    "FabricError",
    "FamilyError",
    "SpeedDifference",
    "collective_errors",
    "fabric_family",
    "fit_collective_errors",
    "render_collective_errors",
    "speed_difference",
]

#: Two-sided 90% normal quantile, the level of the prediction intervals (data/model_error.toml `level`).
INDISTINGUISHABLE_Z = 1.6449


def fabric_family(fabric: str) -> str:
    """The NCCL transport family of a fabric id (its mode stripped): "efa" or "net_ib"."""
    return "efa" if fabric.split("@")[0] == "efa" else "net_ib"


@dataclass(frozen=True)
class FamilyError:
    """The collective error common to every fabric of one transport family."""

    family: str
    curves: int
    #: Mean of the family's curve residuals (ln), the model's bias on this transport.
    log_mean: float
    #: Root mean square of the family's curve residuals (ln): the common term.
    log_rms: float


@dataclass(frozen=True)
class FabricError:
    """One fabric's collective error beyond its family's, at the scale it was validated."""

    fabric: str
    family: str
    curves: int
    points: int
    #: Largest GPU count among its judged curves (0: no curve, the term is the family's largest).
    validated_gpus: int
    #: Root mean square of its curves' residuals about the family mean (ln): the fabric-specific term.
    log_rms: float


@dataclass(frozen=True)
class CollectiveErrors:
    """The decomposition: a common term per family and a specific term per fabric."""

    families: dict[str, FamilyError]
    fabrics: dict[str, FabricError]

    def common(self, fabric: str) -> float:
        family = self.families.get(fabric_family(fabric))
        return family.log_rms if family else 0.0

    def specific(self, fabric: str) -> FabricError:
        """The fabric's term by its base id; a fabric without curves: its family's largest, validated at 0 GPUs."""
        base, family = fabric.split("@")[0], fabric_family(fabric)
        if base in self.fabrics:
            return self.fabrics[base]
        known = [f.log_rms for f in self.fabrics.values() if f.family == family]
        return FabricError(base, family, 0, 0, 0, max(known, default=self.common(fabric)))


@dataclass(frozen=True)
class SpeedDifference:
    """A's speed over B's as ln(ratio), with the standard deviation (ln) the collective error puts on it."""

    log_ratio: float
    log_sd: float

    @property
    def indistinguishable(self) -> bool:
        """True when the difference lies within the model's 90% error band."""
        return abs(self.log_ratio) <= INDISTINGUISHABLE_Z * self.log_sd


def speed_difference(
    speed_ratio: float, share_a: float, share_b: float, fabric_a: str, fabric_b: str, errors: CollectiveErrors
) -> SpeedDifference:
    """The uncertainty of `speed_ratio` (A's speed / B's) from the collective error, where `share_*` is each side's
    exposed communication as a share of its step. A collective error e stretches a step by share x e (ln, first
    order), so ln(ratio) moves by share_b (c_b + f_b) - share_a (c_a + f_a): in one family the common term c is one
    draw and counts (share_a - share_b)^2 c^2; in two families each side draws its own."""
    ca, cb = errors.common(fabric_a), errors.common(fabric_b)
    fa, fb = errors.specific(fabric_a).log_rms, errors.specific(fabric_b).log_rms
    if fabric_family(fabric_a) == fabric_family(fabric_b):
        common_var = ((share_a - share_b) * ca) ** 2
    else:
        common_var = (share_a * ca) ** 2 + (share_b * cb) ** 2
    var = common_var + (share_a * fa) ** 2 + (share_b * fb) ** 2
    return SpeedDifference(math.log(speed_ratio), math.sqrt(var))


def _rms(values: Sequence[float]) -> float:
    return math.sqrt(sum(v * v for v in values) / len(values)) if values else 0.0


def fit_collective_errors(checks: list[CollectiveCheck], gpus_by_curve: dict[str, int]) -> CollectiveErrors:
    """The decomposition from collective checks (networked curves only; `gpus_by_curve`: each curve's GPUs)."""
    points: dict[str, list[float]] = {}
    fabric_of: dict[str, str] = {}
    for c in judged_collectives(checks):
        if c.fabric == "none":
            continue
        points.setdefault(c.id, []).append(math.log(c.predicted_busbw_gbytes_per_s / c.measured_busbw_gbytes_per_s))
        fabric_of[c.id] = c.fabric.split("@")[0]
    means = {cid: sum(v) / len(v) for cid, v in points.items()}
    families: dict[str, FamilyError] = {}
    for name in sorted({fabric_family(f) for f in fabric_of.values()}):
        residuals = [m for cid, m in means.items() if fabric_family(fabric_of[cid]) == name]
        mean = sum(residuals) / len(residuals)
        families[name] = FamilyError(name, len(residuals), mean, _rms(residuals))
    fabrics: dict[str, FabricError] = {}
    for fabric in sorted(set(fabric_of.values())):
        ids = [cid for cid, f in fabric_of.items() if f == fabric]
        family = families[fabric_family(fabric)]
        fabrics[fabric] = FabricError(
            fabric,
            family.family,
            len(ids),
            sum(len(points[cid]) for cid in ids),
            max(gpus_by_curve[cid] for cid in ids),
            _rms([means[cid] - family.log_mean for cid in ids]),
        )
    return CollectiveErrors(families, fabrics)


def collective_errors(file: ErrorModelFile | None) -> CollectiveErrors | None:
    """The decomposition stored in data/model_error.toml, or None when the file has none."""
    if file is None or not file.collective_family:
        return None
    families: dict[str, FamilyError] = {
        f.family: FamilyError(f.family, f.curves, f.log_mean, f.log_rms) for f in file.collective_family
    }
    fabrics = {
        f.fabric: FabricError(f.fabric, f.family, f.curves, f.points, f.validated_gpus, f.log_rms)
        for f in file.collective_fabric
    }
    return CollectiveErrors(families, fabrics)


def render_collective_errors(errors: CollectiveErrors) -> list[str]:
    """data/model_error.toml's collective tables for `errors`."""
    lines = []
    for f in errors.families.values():
        lines += ["", "[[collective_family]]", f'family = "{f.family}"', f"curves = {f.curves}"]
        lines += [f"log_mean = {f.log_mean:.6f}", f"log_rms = {f.log_rms:.6f}"]
    for e in errors.fabrics.values():
        lines += ["", "[[collective_fabric]]", f'fabric = "{e.fabric}"', f'family = "{e.family}"']
        lines += [f"curves = {e.curves}", f"points = {e.points}", f"validated_gpus = {e.validated_gpus}"]
        lines.append(f"log_rms = {e.log_rms:.6f}")
    return lines

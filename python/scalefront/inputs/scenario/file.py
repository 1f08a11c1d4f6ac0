"""The scenario file's format (``data/scenarios/*.toml``; every key is documented in the README, "Scenario files"):
the file around its tables (one workload or a mix, the tables of `scalefront.inputs.scenario.sections`, generated
from the core's parameter table), the checks of objectives and group-by axes, and the one line that names the
file, the table and the key of the first problem (`validate_file`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, ValidationError, model_validator

from scalefront._enums import AXES, OBJECTIVES
from scalefront.errors import CatalogError
from scalefront.inputs.messages import describe, did_you_mean, key_text
from scalefront.inputs.scenario.forms import Strict
from scalefront.inputs.scenario.sections import Cluster, Economics, Lifecycle, Objectives, Parallelism, Workload
from scalefront.inputs.scenario.serving import serving_table

__all__ = [
    "AXES",
    "DEFAULT_SCENARIO",
    "OBJECTIVES",
    "MixWorkload",
    "ScenarioFile",
    "group_by_problem",
    "objectives_problem",
    "validate_file",
]

DEFAULT_SCENARIO = "ib-vs-roce"


class MixWorkload(Workload):
    """One workload of a mix: a share of the cluster's busy hours."""

    #: A label (default: the model id); names must differ within a mix.
    name: str | None = None
    share: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]

    @property
    def label(self) -> str:
        return self.name or self.model


#: Shares of a mix must add up to 1 within this.
SHARE_TOLERANCE = 1e-6


class ScenarioFile(Strict):
    name: Annotated[str, Field(min_length=1)]
    description: str = ""
    #: One workload ...
    workload: Workload | None = None
    #: ... or a mix: several workloads, each with its share of the cluster's busy hours (shares sum to 1).
    workloads: Annotated[list[MixWorkload], Field(min_length=1)] | None = None
    cluster: Cluster
    parallelism: Parallelism = Parallelism()
    economics: Economics = Economics()
    objectives: Objectives = Objectives()
    #: The cluster's life for `roi`: months of training, then serving (`scalefront.roi.lifecycle`).
    lifecycle: Lifecycle | None = None
    #: A serving workload beside the training one: serving inputs by name, as a serving scenario's [serving] table
    #: (checked by `scalefront.inputs.scenario.serving.serving_table`).
    serving: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_workload_or_a_mix(self) -> ScenarioFile:
        if (self.workload is None) == (self.workloads is None):
            raise ValueError(
                "[workload]: give one [workload] table or a mix of [[workloads]] tables (each with a share), not "
                + ("both" if self.workload is not None else "neither")
            )
        if self.workloads is not None:
            labels = [w.label for w in self.workloads]
            repeated = next((n for i, n in enumerate(labels) if n in labels[:i]), None)
            if repeated is not None:
                raise ValueError(
                    f"[[workloads]] name: {repeated!r} is listed twice; give each workload a different name"
                )
            total = sum(w.share for w in self.workloads)
            if abs(total - 1.0) > SHARE_TOLERANCE:
                shares = " + ".join(f"{w.share:g}" for w in self.workloads)
                raise ValueError(
                    f"[[workloads]] share: the shares add up to {shares} = {total:g}; they must add up to 1"
                )
        return self

    def mix(self) -> list[tuple[str, float, Workload]]:
        """(name, share, workload) of every workload: one at share 1, or the mix."""
        if self.workloads is None:
            assert self.workload is not None
            return [(self.workload.model, 1.0, self.workload)]
        return [(w.label, w.share, w) for w in self.workloads]


def objectives_problem(names: list[str]) -> str | None:
    """What is wrong with a list of objectives (two or three distinct names of OBJECTIVES), if anything."""
    for o in names:
        if o not in OBJECTIVES:
            return f"objective {o!r} is not one of {', '.join(OBJECTIVES)}{did_you_mean(o, OBJECTIVES)}"
    repeated = next((o for i, o in enumerate(names) if o in names[:i]), None)
    if repeated is not None:
        return f"objective {repeated!r} is listed twice; give two or three different objectives"
    if not 2 <= len(names) <= 3:
        return f"give two or three objectives, got {len(names)}"
    return None


def group_by_problem(axes: list[str]) -> str | None:
    """What is wrong with a list of group-by axes (distinct names of AXES), if anything."""
    for a in axes:
        if a not in AXES:
            return f"group-by axis {a!r} is not one of {', '.join(AXES)}{did_you_mean(a, AXES)}"
    repeated = next((a for i, a in enumerate(axes) if a in axes[:i]), None)
    return f"group-by axis {repeated!r} is listed twice" if repeated is not None else None


def validate_file(raw: dict[str, Any], file: str) -> ScenarioFile:
    """A parsed scenario checked against the format, or CatalogError naming the file, table and key."""
    try:
        spec = ScenarioFile.model_validate(raw)
    except ValidationError as err:
        parts, msg = describe(err, ScenarioFile, raw)
        if not parts and msg.startswith("["):  # a whole-file rule that names its own table and key
            raise CatalogError(f"{file}: {msg}") from None
        raise CatalogError(f"{file}: {_where(parts, raw)}: {msg}") from None
    if spec.serving is not None:
        serving_table(spec.serving, f"{file}:")
    return spec


def _where(parts: list[str | int], raw: dict[str, Any]) -> str:
    """`['cluster', 'gpus', 0]` -> `[cluster] gpus, item 1`; a top-level table -> `[table]`; else the key."""
    if not parts:
        return "top level"
    head = str(parts[0])
    if len(parts) == 1:
        return f"[{head}]" if isinstance(raw.get(head), dict) or head in _TABLES else head
    return f"[{head}] {key_text(parts[1:])}"


_TABLES = ("workload", "workloads", "cluster", "parallelism", "economics", "objectives", "lifecycle", "serving")

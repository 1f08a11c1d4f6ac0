"""data/model_error.toml: the validation residuals by regime that the prediction intervals are built from (the
core applies them; `scalefront validate --calibrate-errors` writes the file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scalefront._enums import Generation
from scalefront.inputs.catalog.entries import Count
from scalefront.inputs.files import parse_toml, validated

__all__ = [
    "NO_ERRORS",
    "CollectiveFabricEntry",
    "CollectiveFamilyEntry",
    "ErrorModelFile",
    "ErrorRegimeEntry",
    "load_error_model",
]


class ErrorRegimeEntry(BaseModel):
    """The validation residuals of one regime (see data/model_error.toml)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    name: str
    generation: Generation | None = None
    moe: bool | None = None
    min_gpus: Count = 1
    max_gpus: Count = 2**32 - 1
    rows: list[str]
    log_residuals: list[float]

    @model_validator(mode="after")
    def _consistent(self) -> ErrorRegimeEntry:
        if len(self.rows) != len(self.log_residuals):
            raise ValueError("log_residuals: one residual per row")
        if self.log_residuals != sorted(self.log_residuals):
            raise ValueError("log_residuals: must be sorted ascending")
        return self


class CollectiveFamilyEntry(BaseModel):
    """The collective model's error common to one NCCL transport family (fidelity.validation.fabric_error)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    family: Literal["net_ib", "efa"]
    curves: Count
    log_mean: float
    log_rms: Annotated[float, Field(ge=0)]


class CollectiveFabricEntry(BaseModel):
    """One fabric's collective error beyond its family's, at the largest GPU count validated."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    fabric: str
    family: Literal["net_ib", "efa"]
    curves: Count
    points: Count
    validated_gpus: Count
    log_rms: Annotated[float, Field(ge=0)]


class ErrorModelFile(BaseModel):
    """data/model_error.toml: how the residuals were computed, and the residuals by regime, most specific
    regime first."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    level: Annotated[float, Field(gt=0, lt=1)]
    #: Residuals a regime needs to be used (fewer: the next matching regime).
    min_rows: Count
    method: str
    model_version: str
    regime: list[ErrorRegimeEntry]
    #: The collective error per transport family and per fabric (absent: no decomposition).
    collective_family: list[CollectiveFamilyEntry] = []
    collective_fabric: list[CollectiveFabricEntry] = []

    def core_spec(self, level: float | None = None) -> dict[str, Any]:
        """The core's `ErrorModel`: residuals by regime and the level of the intervals."""
        return {
            "level": self.level if level is None else level,
            "min_residuals": self.min_rows,
            "regimes": [
                {
                    "generation": r.generation,
                    "moe": r.moe,
                    "min_gpus": r.min_gpus,
                    "max_gpus": r.max_gpus,
                    "log_residuals": list(r.log_residuals),
                }
                for r in self.regime
            ],
        }


def load_error_model(text: str, file: str, parse: Callable[[str, str], dict[str, Any]] = parse_toml) -> ErrorModelFile:
    """Parse a model_error.toml file (`parse`: `scalefront.inputs.files.parse_builtin_toml` for the built-in one)."""
    return validated(ErrorModelFile, parse(text, file), file, "model_error")


#: An error model with no residuals: intervals collapse onto the prediction.
NO_ERRORS: dict[str, Any] = {"level": 0.9, "min_residuals": 1, "regimes": []}

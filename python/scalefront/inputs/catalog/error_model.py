"""data/model_error.toml: the validation residuals by regime that the prediction intervals are built from (the
core applies them; `scalefront validate --calibrate-errors` writes the file)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scalefront.inputs.catalog.entries import Count
from scalefront.inputs.files import parse_toml, validated

__all__ = ["NO_ERRORS", "ErrorModelFile", "ErrorRegimeEntry", "load_error_model"]


class ErrorRegimeEntry(BaseModel):
    """The validation residuals of one regime (see data/model_error.toml)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    name: str
    generation: Literal["ampere", "hopper", "blackwell", "cdna3"] | None = None
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


def load_error_model(text: str, file: str) -> ErrorModelFile:
    """Parse a model_error.toml file."""
    return validated(ErrorModelFile, parse_toml(text, file), file, "model_error")


#: An error model with no residuals: intervals collapse onto the prediction.
NO_ERRORS: dict[str, Any] = {"level": 0.9, "min_residuals": 1, "regimes": []}

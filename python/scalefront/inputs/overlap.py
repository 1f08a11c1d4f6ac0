"""Which communication may hide behind compute (the ``overlap`` input): a named mode, one fraction for every kind of
communication, or ``kind=fraction`` pairs, read into an :class:`Overlap` of the fractions the core takes."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scalefront.errors import UsageError

__all__ = ["OVERLAP_MODES", "Overlap", "parse_overlap"]


@dataclass(frozen=True)
class Overlap:
    """Fractions (0..1) of each kind of communication allowed to hide behind compute."""

    dp: float = 0.0
    tp: float = 0.0
    pp: float = 0.0
    ep: float = 0.0

    def label(self) -> str:
        """The mode's name when it is one (none, dp, full), else ``dp=..,tp=..,pp=..,ep=..``."""
        for name, mode in OVERLAP_MODES.items():
            if mode == self:
                return name
        return ",".join(f"{k}={v:g}" for k, v in vars(self).items())

    def core_spec(self) -> dict[str, float]:
        return {"dp": self.dp, "tp": self.tp, "pp": self.pp, "ep": self.ep}


#: Named overlap modes: ``none``; ``dp`` = Megatron's overlapped gradient reduce-scatter and parameter
#: all-gather (overlap_grad_reduce, overlap_param_gather); ``full`` = also TP comm/GEMM overlap (Transformer
#: Engine userbuffers), overlapped pipeline sends and expert all-to-all hidden by micro-batch interleaving.
OVERLAP_MODES = {
    "none": Overlap(),
    "dp": Overlap(dp=1.0),
    "full": Overlap(dp=1.0, tp=1.0, pp=1.0, ep=1.0),
}


def parse_overlap(value: str | float | Overlap) -> Overlap:
    """An overlap mode name (none, dp, full), one fraction for all kinds, or ``dp=0.9,tp=0.5,...``."""
    if isinstance(value, Overlap):
        return value
    if isinstance(value, (int, float)):
        return _fraction_overlap({k: float(value) for k in ("dp", "tp", "pp", "ep")}, value)
    text = str(value).strip()
    if text in OVERLAP_MODES:
        return OVERLAP_MODES[text]
    try:
        return _fraction_overlap({k: float(text) for k in ("dp", "tp", "pp", "ep")}, text)
    except ValueError:
        pass
    parts: dict[str, float] = {}
    for item in text.split(","):
        key, sep, num = item.partition("=")
        key = key.strip()
        if not sep or key not in ("dp", "tp", "pp", "ep"):
            raise UsageError(
                f"overlap {text!r}: expected one of {', '.join(OVERLAP_MODES)}, a fraction in [0, 1], "
                "or kind=fraction pairs such as dp=0.9,tp=0.5 (kinds: dp, tp, pp, ep)"
            )
        if key in parts:
            raise UsageError(f"overlap {text!r}: {key} is given twice")
        try:
            parts[key] = float(num)
        except ValueError:
            raise UsageError(f"overlap {key}={num.strip()!r}: expected a fraction in [0, 1]") from None
    return _fraction_overlap(parts, text)


def _fraction_overlap(parts: dict[str, float], shown: object) -> Overlap:
    for key, v in parts.items():
        if not (0.0 <= v <= 1.0) or math.isnan(v):
            raise UsageError(f"overlap {key}={v} (from {shown!r}): expected a fraction in [0, 1]")
    return Overlap(**parts)

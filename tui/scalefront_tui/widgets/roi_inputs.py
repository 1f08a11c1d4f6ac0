"""The ROI tab's what-if inputs: the number fields, how a typed value is read and checked, and which change of
the scenario as run resets them."""

from __future__ import annotations

from scalefront.api import ScenarioDraft, parse_number

#: The what-if number fields (id, label, WhatIf field), in the order they are laid out (two per row, after the
#: fabrics, the quote and the cost basis).
NUMBER_FIELDS = [
    ("wi-util", "utilisation"),
    ("wi-server", "server $"),
    ("wi-rent", "rent $/GPU-h"),
    ("wi-kwh", "$/kWh"),
    ("wi-pue", "PUE"),
    ("wi-years", "years"),
]
WHAT_IF_ATTRS = {
    "wi-util": "utilisation",
    "wi-server": "server_usd",
    "wi-rent": "rent_usd_per_gpu_hour",
    "wi-kwh": "usd_per_kwh",
    "wi-pue": "pue",
    "wi-years": "years",
}


def scenario_change(old: ScenarioDraft, new: ScenarioDraft) -> str:
    """What changed between two scenarios as run that resets the what-ifs ("" when nothing did)."""
    parts = []
    for what, get in (
        ("GPU", lambda d: d.scenario.gpu_names),
        ("GPU counts", lambda d: d.value("gpus")),
        ("fabrics", lambda d: d.scenario.fabric_names),
    ):
        if get(old) != get(new):
            parts.append(what)
    return f"new {', '.join(parts)}" if parts else ""


def read_number(field_id: str, label: str, text: str) -> float:
    """A what-if's value as typed: the quote as +% over B (30, +30%, -5) -> 1.30, 0.95; utilisation 80 or 80% ->
    0.8; money and plain numbers as parse_number reads them. ValueError names the field."""
    if field_id == "wi-premium":
        value = parse_number(text.removesuffix("%").removeprefix("+"), what=label)
        if not value > -100:
            raise ValueError(f"{label}: a quote above -100% (30 means 30% dearer than B)")
        return 1.0 + value / 100.0
    value = parse_number(text, what=label)
    if field_id == "wi-util" and value > 1:
        value /= 100.0  # "80" means 80%
    _check(field_id, label, value)
    return value


def _check(field_id: str, label: str, value: float) -> None:
    if field_id == "wi-years" and not value > 0:
        raise ValueError(f"{label} must be more than 0")
    if field_id == "wi-pue" and value < 1:
        raise ValueError("PUE is 1 or more (facility power / IT power)")
    if field_id == "wi-util" and not 0 < value <= 1:
        raise ValueError("utilisation is the share of hours with work: more than 0%, at most 100%")
    if value < 0:
        raise ValueError(f"{label} cannot be negative")

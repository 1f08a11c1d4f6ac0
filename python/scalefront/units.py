"""Numbers as people write and read them: ``2T``, ``1,024``, ``1k``, ``$2.50``, ``15%`` in; ``16,384``,
``14.5%``, ``$1.23M``, ``$412k``, ``2T`` out.

Parsing is what a form or a filter accepts; formatting is driven by a column's unit and kind in the core's
schema (:mod:`scalefront.schema`), so every reader shows the same column the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

__all__ = [
    "SI_SCALES",
    "format_bytes",
    "format_count",
    "format_days",
    "format_money",
    "format_number",
    "format_percent",
    "format_seconds",
    "format_si",
    "format_value",
    "parse_count",
    "parse_number",
    "scale_of",
    "split_list",
]

#: Multipliers of the suffixes a number may carry (case-insensitive; `b` and `g` both mean 10^9).
SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}

# A number with optional $, thousands separators (1,024), decimal part, exponent, suffix and %.
_NUMBER = re.compile(
    r"""^\s*(?P<sign>[-+])?\s*(?P<dollar>\$)?\s*
    (?P<digits>(?:\d{1,3}(?:,\d{3})+|\d[\d_]*)(?:\.\d*)?|\.\d+)
    (?P<exp>[eE][-+]?\d+)?\s*(?P<suffix>[kKmMbBgGtT])?\s*(?P<percent>%)?\s*$""",
    re.VERBOSE,
)


#: Words a number may end with instead of a suffix ("2 trillion").
WORDS = {"thousand": "k", "million": "M", "billion": "B", "trillion": "T"}


def parse_number(text: str, *, what: str | None = None) -> float:
    """A number written as a person would: ``2T``, ``2 trillion``, ``1.5e12``, ``1,024``, ``1k``, ``$2.50``,
    ``15%`` (0.15). Raises ValueError saying what is wrong (prefixed with `what`, when given) and the accepted
    forms."""
    words = text.strip()
    for word, suffix in WORDS.items():
        if words.lower().endswith(word):
            words = words[: -len(word)].rstrip() + suffix
    m = _NUMBER.match(words)
    if not m:
        shown = text.strip()
        prefix = f"{what}: " if what else ""
        if not shown:
            raise ValueError(f"{prefix}empty; give a number such as 2T, 1,024, 1k or $2.50")
        raise ValueError(f"{prefix}{shown!r} is not a number; write it like 2T, 1,024, 1k or $2.50")
    value = float(m["digits"].replace(",", "").replace("_", "") + (m["exp"] or ""))
    if m["suffix"]:
        value *= SUFFIXES[m["suffix"].lower()]
    if m["percent"]:
        value /= 100.0
    if m["sign"] == "-":
        value = -value
    if not math.isfinite(value):
        raise ValueError(f"{f'{what}: ' if what else ''}{text.strip()!r} is not a finite number")
    return value


def parse_count(text: str, *, what: str | None = None) -> int:
    """A positive whole number: ``4096``, ``4,096``, ``4k`` (4,000), ``16384``."""
    value = parse_number(text, what=what)
    if value != int(value) or value < 1:
        raise ValueError(f"{f'{what}: ' if what else ''}{text.strip()!r} is not a whole number of 1 or more")
    return int(value)


# List items are separated by `;`, whitespace, or a comma that is not a thousands separator (a comma followed by
# exactly three digits and then no further digit is part of the number: "1,024, 2,048" is two items).
_SEPARATOR = re.compile(r"\s*;\s*|\s*,(?!\d{3}(?!\d))\s*|\s+")


def split_list(text: str) -> list[str]:
    """Items of a list typed in one field: ``512, 1,024, 2k`` -> ``['512', '1,024', '2k']``."""
    return [item for item in _SEPARATOR.split(text.strip()) if item]


# ---------------------------------------------------------------------------------------------------- output
#: Decimal scales and their suffixes, largest first, as tables, forms and the UI write them.
SI_SCALES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))
#: The same scales as `scalefront eval`'s report writes them (K), and as the progress line writes rates (G). The
#: letters differ from SI_SCALES for the same scale; they are kept so that printed text stays as it was.
REPORT_SCALES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))
RATE_SCALES = ((1e9, "G"), (1e6, "M"), (1e3, "k"))


def scale_of(value: float, scales: Sequence[tuple[float, str]] = SI_SCALES, at: float = 1.0) -> tuple[float, str]:
    """The one SI scaling of every reader: `value` divided by the largest scale its size reaches (abs(value) >=
    `at` x scale) and that scale's suffix, or (value, "") below them all. Each reader picks its digits."""
    for scale, suffix in scales:
        if abs(value) >= scale * at:
            return value / scale, suffix
    return value, ""


def _sig3(value: float) -> str:
    """Three significant figures, without a trailing '.0' (12.3, 1.23, 123, 0.123)."""
    if value == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    text = f"{value:.{digits}f}"
    # Rounding may carry into a new digit (9.996 -> 10.00): redo with one digit less.
    if digits and len(text.lstrip("-").replace(".", "")) > 3 and abs(float(text)) >= 10 ** (3 - digits):
        text = f"{value:.{digits - 1}f}"
    return text


def _scaled(value: float) -> tuple[str, str]:
    """Three significant figures of `value` scaled to k, M, B or T (from where it rounds up to one), and that
    suffix."""
    scaled, suffix = scale_of(value, SI_SCALES, at=0.9995)
    return _sig3(scaled), suffix


def format_si(value: float, unit: str = "") -> str:
    """``2e12`` -> ``2T``, ``70.6e9`` -> ``70.6B``, ``1536`` -> ``1.54k``; `unit` is appended (``1.2kW``)."""
    if not math.isfinite(value):
        return "∞" if value > 0 else ("-∞" if value < 0 else "-")
    text, suffix = _scaled(value)
    if "." in text and (suffix or abs(value) >= 1):
        text = text.rstrip("0").rstrip(".")
    return f"{text}{suffix}{unit}"


def format_bytes(value: float) -> str:
    """Bytes in decimal units, as GPU memory is quoted: ``35.7e9`` -> ``35.7 GB``, ``80e9`` -> ``80 GB``."""
    text = format_si(value)
    for si, unit in (("T", " TB"), ("B", " GB"), ("M", " MB"), ("k", " kB")):
        if text.endswith(si):
            return text[:-1] + unit
    return f"{text} B"


def format_money(value: float) -> str:
    """US dollars with three significant figures, always: ``$1.23M``, ``$1.20M``, ``$412k``, ``$980``, ``$2.50``,
    ``-$3.10M``."""
    if not math.isfinite(value):
        return "-"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value < 10:
        return f"{sign}${value:.2f}"
    if value < 999.5:
        return f"{sign}${value:.0f}"
    text, suffix = _scaled(value)
    return f"{sign}${text}{suffix}"


def format_count(value: float) -> str:
    """A whole number with thousands separators: ``16,384``."""
    return f"{value:,.0f}" if math.isfinite(value) else "-"


def format_percent(value: float) -> str:
    """A share in [0, 1] as a percentage with one decimal: ``0.145`` -> ``14.5%``."""
    return f"{value * 100:.1f}%" if math.isfinite(value) else "-"


def format_days(value: float) -> str:
    """Days with three significant figures (``33.3``, ``4.29``, ``128``); ``never`` for infinity."""
    if not math.isfinite(value):
        return "never" if value > 0 else "-"
    return _sig3(value) if value < 1000 else format_count(value)


def format_seconds(value: float) -> str:
    """A duration in seconds, in the unit that reads best: ``47.9us``, ``850ms``, ``1.23s``, ``12.4min``, ``3.2h``
    (``us``, not ``µs``: it reads the same on every terminal)."""
    if not math.isfinite(value):
        return "-"
    if value and abs(value) < 1e-3:
        return f"{_sig3(value * 1e6)}us"
    if abs(value) < 1:
        return f"{_sig3(value * 1e3)}ms" if value else "0s"
    if abs(value) < 600:
        return f"{_sig3(value)}s"
    if abs(value) < 3 * 3600:
        return f"{_sig3(value / 60)}min"
    return f"{_sig3(value / 3600)}h"


def format_number(value: float) -> str:
    """A plain number: whole numbers with separators, others with three significant figures."""
    if not math.isfinite(value):
        return "-"
    if value == int(value) and abs(value) < 1e6:
        return format_count(value)
    return format_si(value)


def _watts(value: float) -> str:
    text = format_si(value)
    prefix = {"k": "k", "M": "M", "B": "G", "T": "T"}.get(text[-1:])
    return f"{text[:-1]} {prefix}W" if prefix else f"{text} W"


def format_value(value: object, unit: str = "", kind: str = "float") -> str:
    """A value of a schema column (unit and kind as in :class:`scalefront.schema.Column`) as text."""
    if value is None:
        return "-"
    if kind == "flag" or isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "text" or not isinstance(value, int | float):
        return str(value)
    if kind == "count":
        return format_count(value)
    v = float(value)
    if unit in ("USD", "USD/Mtoken"):
        return format_money(v)
    if unit == "fraction":
        return format_percent(v)
    if unit == "ratio":
        return f"{v:.2f}x" if math.isfinite(v) else "∞"
    if unit == "premium":
        # A cost ratio as a premium, the way `roi --premium` and the ROI tab's quote read it: 1.3 -> +30%.
        return f"{v - 1:+.0%}" if math.isfinite(v) else "∞"
    if unit == "days":
        return format_days(v)
    if unit == "s":
        return format_seconds(v)
    if unit == "bytes":
        return format_bytes(v)
    if unit in ("GB", "MWh", "W"):
        return format_si(v, f" {unit}") if unit != "W" else _watts(v)
    if unit == "TFLOP/s":
        return format_si(v)
    if unit == "tokens/s":
        return format_si(v, "/s")
    if unit == "1/day":
        return f"{_sig3(v)}/day"
    return format_si(v)

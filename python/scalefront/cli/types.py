"""The argparse types of the command line: numbers as people write them (`15T`, `1.5e12`, `2,000`), whole counts,
ratios, coverage levels, KEY=VALUE prices, comma-separated names, shards and ports, and the type of each kind of
input parameter (`of_param`). A bad value is argparse's one-line usage error."""

from __future__ import annotations

import argparse
import datetime
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from scalefront.engine.shards import parse_shard
from scalefront.errors import UsageError
from scalefront.inputs.params import Param

__all__ = [
    "bounded",
    "count",
    "counts",
    "csv_list",
    "day",
    "decimal",
    "level",
    "names",
    "number",
    "of_param",
    "port",
    "positive_int",
    "positive_number",
    "price",
    "ratio",
    "shard",
    "size",
]

_SUFFIXES = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def decimal(text: str) -> Decimal:
    """A number as written, exactly: `15T`, `1.5e12`, `300_000`, `2,000` (suffixes k, M, B/G, T)."""
    t = text.strip().lower().replace("_", "").replace(",", "")
    scale = 1
    if t and t[-1] in _SUFFIXES:
        scale, t = _SUFFIXES[t[-1]], t[:-1]
    try:
        value = Decimal(t) * scale
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value.is_finite():
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def number(text: str, *, allow_zero: bool) -> float:
    value = decimal(text)
    if value < 0 or (value == 0 and not allow_zero):
        raise argparse.ArgumentTypeError(
            f"expected a {'non-negative' if allow_zero else 'positive'} number, got {text!r}"
        )
    return float(value)


def positive_number(text: str) -> float:
    return number(text, allow_zero=False)


def count(text: str) -> int:
    """A whole positive number (tokens, configurations): `1.5T` is 1,500,000,000,000; `1.5` is refused."""
    value = decimal(text)
    if value <= 0 or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"expected a whole positive number such as 2e12 or 15T, got {text!r}")
    return int(value)


def counts(text: str) -> list[int]:
    """Comma-separated whole positive numbers, each as `count` reads it: `1,2,4,8`, `4K,8K`."""
    return [count(item) for item in csv_list(text)]


def day(text: str) -> str:
    """A date, YYYY-MM-DD."""
    try:
        return datetime.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def size(text: str) -> int:
    """A whole number >= 0 (layers, modules)."""
    value = decimal(text)
    if value < 0 or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(value)


def level(text: str) -> float:
    percent = text.strip().endswith("%")
    value = number(text.strip().rstrip("%"), allow_zero=False) / (100.0 if percent else 1.0)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a coverage level between 0 and 1 (0.9 or 90%), got {text!r}")
    return value


def ratio(text: str) -> float:
    """`2`, `2:1` or `3:2` (= 1.5), at least 1 (an oversubscription, the busiest rank's load over the mean)."""
    top, sep, bottom = text.partition(":")
    value = number(top, allow_zero=False) / (number(bottom, allow_zero=False) if sep else 1.0)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a ratio >= 1 such as 1, 2 or 2:1, 3:2, got {text!r}")
    return value


def price(text: str) -> tuple[str, float]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE such as switch_usd=40000, got {text!r}")
    return key.strip(), number(value, allow_zero=True)


def csv_list(text: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def names(problem_of: Callable[[list[str]], str | None]) -> Callable[[str], list[str]]:
    """An argparse type: a comma-separated list in which `problem_of` finds nothing wrong."""

    def parse(text: str) -> list[str]:
        items = csv_list(text)
        problem = problem_of(items)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return items

    return parse


def shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except UsageError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--shard: ")) from None


def port(text: str) -> int:
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {text!r}")
    return value


def bounded(p: Param) -> Callable[[str], float]:
    """A real number within the bounds of the input parameter `p`."""

    def parse(text: str) -> float:
        value = float(decimal(text))
        try:
            p.check(value)
        except UsageError:
            raise argparse.ArgumentTypeError(f"expected {p.expected}, got {text!r}") from None
        return value

    return parse


def of_param(p: Param) -> Callable[[str], object]:
    """The type of an input parameter's option, by its kind and bounds (a name: the text as written)."""
    if p.kind == "count":
        return positive_int if p.ge == 1 else size
    kinds: dict[str, Callable[[str], object]] = {
        "tokens": count,
        "float": bounded(p),
        "ratio": ratio,
        "level": level,
        "prices": price,
    }
    return kinds.get(p.kind, str)

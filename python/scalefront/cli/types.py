"""The argparse types of the command line: numbers as people write them (`15T`, `1.5e12`, `2,000`), whole counts,
ratios, coverage levels, KEY=VALUE prices, comma-separated names, shards and ports, and the type of each kind of
input parameter (`of_param`). A bad value is argparse's one-line usage error."""

from __future__ import annotations

import argparse
import datetime
import os
import re
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
    "seed",
    "shard",
    "size",
    "workers",
]

_SUFFIXES = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}
#: The largest count the core takes (its counts are 32-bit): 2^31.
MAX_COUNT = 2**31
#: The largest whole number of tokens, configurations or samples: 10^18 (a 64-bit integer holds it).
MAX_AMOUNT = 10**18
#: The largest magnitude of any number: far beyond any figure of the model, well inside a float's range.
MAX_NUMBER = Decimal("1e30")
#: Digits grouped by commas in thousands (`2,000`, `1,234,567.5`); a comma anywhere else is not a separator.
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?(e[+-]?\d+)?[kmbgt]?")
#: Seeds are 64-bit unsigned integers.
MAX_SEED = 2**64 - 1


def _shown(text: str) -> str:
    """The value as a message quotes it, shortened."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def positive_int(text: str) -> int:
    """A whole number from 1 to MAX_COUNT (GPUs, degrees, workers)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {_shown(text)}") from None
    if not 1 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"expected a positive integer up to {MAX_COUNT:,}, got {_shown(text)}")
    return value


def seed(text: str) -> int:
    """A random seed: a whole number from 0 to 2^64 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 2^64 - 1, got {_shown(text)}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 2^64 - 1, got {_shown(text)}")
    return value


def decimal(text: str) -> Decimal:
    """A number as written, exactly: `15T`, `1.5e12`, `300_000`, `2,000` (suffixes k, M, B/G, T; a comma only
    between groups of three digits), at most MAX_NUMBER in size."""
    t = text.strip().lower().replace("_", "")
    if "," in t:
        if not _THOUSANDS.fullmatch(t):
            raise argparse.ArgumentTypeError(
                f"expected a number such as 2,000 or 1.5 (a comma only separates thousands), got {_shown(text)}"
            )
        t = t.replace(",", "")
    scale = 1
    if t and t[-1] in _SUFFIXES:
        scale, t = _SUFFIXES[t[-1]], t[:-1]
    try:
        value = Decimal(t) * scale
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected a number, got {_shown(text)}") from None
    if not value.is_finite():
        raise argparse.ArgumentTypeError(f"expected a finite number, got {_shown(text)}")
    if abs(value) > MAX_NUMBER:
        raise argparse.ArgumentTypeError(f"expected a number of at most 1e30, got {_shown(text)}")
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
    """A whole positive number up to 10^18 (tokens, configurations, samples): `1.5T` is 1,500,000,000,000; `1.5` is
    refused."""
    value = decimal(text)
    if value <= 0 or value != value.to_integral_value() or value > MAX_AMOUNT:
        raise argparse.ArgumentTypeError(
            f"expected a whole positive number up to 1e18 such as 2e12 or 15T, got {_shown(text)}"
        )
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
    """A whole number from 0 to MAX_COUNT (layers, modules)."""
    value = decimal(text)
    if value < 0 or value != value.to_integral_value() or value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {MAX_COUNT:,}, got {_shown(text)}")
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
    items = [t.strip() for t in text.split(",")]
    if not any(items):
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    if not all(items):
        raise argparse.ArgumentTypeError(f"an empty item in the list {_shown(text)}")
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


def workers(text: str) -> int:
    """Worker processes of a local cluster: 1 to four per core of this machine (each is a process of its own)."""
    most = 4 * (os.cpu_count() or 1)
    value = positive_int(text)
    if value > most:
        raise argparse.ArgumentTypeError(f"expected at most {most} worker processes (4 per core), got {_shown(text)}")
    return value


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


def name_set(p: Param) -> Callable[[str], str]:
    """A comma-separated set of the input parameter `p`'s choices, in their one spelling (`Param.normalised`)."""

    def parse(text: str) -> str:
        try:
            p.check(text)
        except UsageError:
            raise argparse.ArgumentTypeError(f"expected {p.expected}, got {text!r}") from None
        return str(p.normalised(text))

    return parse


def of_param(p: Param) -> Callable[[str], object]:
    """The type of an input parameter's option, by its kind and bounds (a name: the text as written)."""
    if p.kind == "count":
        return positive_int if p.ge == 1 else size
    kinds: dict[str, Callable[[str], object]] = {
        "names": name_set(p),
        "tokens": count,
        "float": bounded(p),
        "ratio": ratio,
        "level": level,
        "prices": price,
    }
    return kinds.get(p.kind, str)

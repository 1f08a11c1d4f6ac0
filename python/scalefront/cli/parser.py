"""What every command shares: the parser whose usage errors are one line, the help formatter, the exit statuses
(defined once), and the options several commands take: the input parameters (one option each, from the core's
parameter table), the catalog files."""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from scalefront.cli import types as arg
from scalefront.errors import UsageError
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.params import Param, taking
from scalefront.signals import EXIT_INTERRUPTED, EXIT_TERMINATED

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_TEMPFAIL",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Help",
    "Parser",
    "add_catalog_option",
    "add_input_options",
    "catalog_of",
    "input_values",
]

#: Exit statuses: bad input (EX_USAGE-like 2), a bug in scalefront (the core panicked: EX_SOFTWARE from
#: sysexits.h, distinct from bad input), a lost cluster worker (EX_TEMPFAIL: retrying may work), Ctrl-C and
#: SIGTERM (128 + the signal, as shells report them).
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_TEMPFAIL = 75


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with the accepted values argparse lists) and exit 2, and a value
    that starts with a minus and a digit (-1, -1/3, -5e3) is a value, never taken for an option (no option of
    scalefront looks like one), so that its own type says what is wrong with it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\d")

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[Parser]


class Help(argparse.HelpFormatter):
    """Each option's default shown once: appended to its help unless the help already says it, and not for options
    whose default means "not given" (None), "none" (an empty list or string), or that turn a flag on or off (a bool)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        # argparse %-formats every help text: a literal % (as in "+/-20%") must be written %% or the help prints
        # the action's dict.
        text = (action.help or "").replace("%", "%%")
        default = action.default
        if "default" in text or default is None or isinstance(default, bool) or default in ([], "", argparse.SUPPRESS):
            return text
        shown = f"{default:,}" if isinstance(default, int) and not isinstance(default, bool) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})"


def add_input_options(
    parser: argparse.ArgumentParser,
    surface: str,
    *,
    grouped: bool,
    defaults: Mapping[str, Any] | None = None,
    docs: Mapping[str, str] | None = None,
) -> dict[str, argparse._ActionsContainer]:
    """One option per input parameter `surface` (flag, bom) takes, in the parameter table's order: `--micro-batch`,
    `--no-...` for a flag that is on by default, `--price KEY=VALUE` (repeatable); typed and bounded by the
    parameter's kind, its doc and default as help. `defaults` replaces a parameter's default for this command (None:
    the option is required); `docs` replaces a parameter's meaning where this command reads it otherwise. `grouped`:
    under the table's groups (workload, cluster, ...), which it returns."""
    groups: dict[str, argparse._ActionsContainer] = {}
    for p in taking(surface):
        if grouped and p.group not in groups:
            groups[p.group] = parser.add_argument_group(p.group)
        default = defaults[p.name] if defaults and p.name in defaults else p.default
        required = default is None and not p.optional
        doc = docs[p.name] if docs and p.name in docs else p.doc
        _add_input(groups.get(p.group, parser), p, default, required, doc)
    return groups


def _add_input(group: argparse._ActionsContainer, p: Param, default: Any, required: bool, doc: str) -> None:
    option = f"--{p.name.replace('_', '-')}"
    if p.kind == "flag":
        if default:
            group.add_argument(f"--no-{option[2:]}", dest=p.name, action="store_false", help=f"turn off: {doc}")
        else:
            group.add_argument(option, dest=p.name, action="store_true", help=doc)
        return
    if p.kind == "prices":
        text = f"{doc} (repeatable)"
        group.add_argument(
            "--price", dest=p.name, type=arg.price, action="append", default=[], metavar="KEY=VALUE", help=text
        )
        return
    small = p.kind == "count" and p.ge is not None and p.le is not None and p.le - p.ge < 16
    # A names-kind value is a list of its choices, checked whole by `arg.of_param`; its help lists them.
    choices = list(range(int(p.ge or 0), int(p.le or 0) + 1)) if small else list(p.choices) or None
    metavar = None
    if p.kind == "names":
        choices, metavar = None, "NAME,..."
        doc = f"{doc}; any of {', '.join(p.choices)}"
    shown = int(default) if p.kind == "tokens" and default is not None else default
    group.add_argument(
        option,
        dest=p.name,
        type=int if small else arg.of_param(p),
        choices=choices,
        metavar=metavar,
        default=shown,
        required=required,
        help=f"{doc} (default: {p.means})" if p.means else doc,
    )


def input_values(args: argparse.Namespace, surface: str) -> dict[str, Any]:
    """The values of the options `add_input_options` added for `surface`, by parameter name (prices as a dict)."""
    return {
        p.name: _prices(getattr(args, p.name)) if p.kind == "prices" else getattr(args, p.name) for p in taking(surface)
    }


def _prices(pairs: list[tuple[str, float]]) -> dict[str, float]:
    """Repeated --price KEY=VALUE options as a dict; a key given twice is refused (which one was meant?)."""
    prices: dict[str, float] = {}
    for key, value in pairs:
        if key in prices:
            raise UsageError(f"--price {key} is given twice ({prices[key]:g} and {value:g}); give it once")
        prices[key] = value
    return prices


def add_catalog_option(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="FILE",
        help="a catalog file that adds or replaces entries (repeatable)",
    )


def catalog_of(args: argparse.Namespace) -> Catalog:
    """The built-in catalogs, with the --catalog files merged in."""
    return Catalog.load(*args.catalog) if args.catalog else builtin_catalog()

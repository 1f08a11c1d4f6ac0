"""What every command shares: the parser whose usage errors are one line, the help formatter, the exit statuses
(defined once), and the options several commands take (the cluster, prices, catalog files)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, NoReturn

from scalefront.cli import types as arg
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_TEMPFAIL",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Help",
    "Parser",
    "add_catalog_option",
    "add_cluster_options",
    "add_price_option",
    "catalog_of",
    "cluster_arguments",
]

#: Exit statuses: bad input (EX_USAGE-like 2), a bug in scalefront (the core panicked: EX_SOFTWARE from
#: sysexits.h, distinct from bad input), a lost cluster worker (EX_TEMPFAIL: retrying may work), Ctrl-C and
#: SIGTERM (128 + the signal, as shells report them).
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_TEMPFAIL = 75
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with the accepted values argparse lists) and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[Parser]


class Help(argparse.HelpFormatter):
    """Each option's default shown once: appended to its help unless the help already says it, and not for options
    whose default means "not given" (None), "off" (False) or "none" (an empty list)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        # argparse %-formats every help text: a literal % (as in "+/-20%") must be written %% or the help prints
        # the action's dict.
        text = (action.help or "").replace("%", "%%")
        default = action.default
        if "default" in text or default is None or default is False or default == [] or default == argparse.SUPPRESS:
            return text
        shown = f"{default:,}" if isinstance(default, int) and not isinstance(default, bool) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})"


def add_cluster_options(group: argparse._ActionsContainer, *, gpus: int | None, topology: str) -> None:
    """--gpu, --gpus (required when there is no default), --scale-up, --fabric, --topology, --oversubscription."""
    group.add_argument("--gpu", default="h100-sxm", help="GPU id (servers per GPU count, NVLink domain)")
    group.add_argument("--gpus", type=arg.positive_int, default=gpus, required=gpus is None, help="number of GPUs")
    group.add_argument("--scale-up", help="intra-node domain id (default: the GPU's)")
    group.add_argument("--fabric", default="ib-ndr", help="scale-out fabric id")
    group.add_argument("--topology", default=topology, help="topology id")
    group.add_argument(
        "--oversubscription",
        type=arg.oversubscription,
        help="leaf oversubscription (2, 2:1, or 3:2 = 1.5); default: the topology's",
    )


def cluster_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The cluster options, prices and catalogs as `evaluate` and `bom` take them."""
    return {
        "gpu": args.gpu,
        "gpus": args.gpus,
        "scale_up": args.scale_up,
        "fabric": args.fabric,
        "topology": args.topology,
        "oversubscription": args.oversubscription,
        "prices": dict(args.price),
        "catalog": catalog_of(args),
    }


def add_price_option(group: argparse._ActionsContainer, what: str) -> None:
    group.add_argument("--price", type=arg.price, action="append", default=[], metavar="KEY=VALUE", help=what)


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

"""How a catalog entry builds on one read before: a user file's entry laid over the built-in one of the same id
(`overlay`), and a new entry that starts from another of its table (`like = "id"`: a GPU like the H100 but with
more memory, the same server part in a larger server), which then takes its own figures the same way."""

from __future__ import annotations

from typing import Any

from scalefront.errors import CatalogError
from scalefront.inputs.messages import did_you_mean, toml_repr

#: The sub-tables of an entry that say something about each of its figures, merged by figure name.
_PER_FIGURE = ("sources", "status")


def overlay(base: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    """Entry table `raw` (a user file's) laid over `base` (the same id's as read before): the figures `raw` gives
    replace `base`'s, whole (a range or a mode table included), and drop `base`'s source and quote status for
    them, so a changed figure needs a source of its own; the figures it does not give keep `base`'s, sources
    included."""
    given = {k for k in raw if k not in _PER_FIGURE}
    out = {k: v for k, v in base.items() if k not in _PER_FIGURE and k not in given}
    out.update((k, raw[k]) for k in given)
    for table in _PER_FIGURE:
        if table not in base and table not in raw:
            continue
        ours = raw.get(table, {})
        if not isinstance(ours, dict):
            out[table] = ours  # reported by the entry's validation, naming the user's file
            continue
        kept = {k: v for k, v in base.get(table, {}).items() if k not in given}
        out[table] = {**kept, **ours}
    return out


def take_like(
    tables: dict[tuple[str, str], dict[str, Any]], section: str, entry: str, raw: dict[str, Any], where: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(base, rest) for entry `entry` of `section` whose table `raw` says `like = "other"`: `base` is that other
    entry's table as read so far (built-in, or earlier in the file), `rest` the figures `raw` gives of its own, to be
    laid over it by `overlay`. `where` names the file and entry for the one-line errors: a `like` that is not a
    string, names no entry of the table, or is given for an id that exists already (change its figures directly)."""
    like = raw["like"]
    if not isinstance(like, str):
        raise CatalogError(f"{where} like: expected the id of another entry of [{section}], got {toml_repr(like)}")
    if (section, entry) in tables:
        raise CatalogError(f"{where} like: {entry!r} exists already; give only the figures you change, without like")
    base = tables.get((section, like))
    if base is None:
        known = sorted(e for s, e in tables if s == section)
        raise CatalogError(f"{where} like: {like!r} is not an entry of [{section}]{did_you_mean(like, known)}")
    return base, {k: v for k, v in raw.items() if k != "like"}

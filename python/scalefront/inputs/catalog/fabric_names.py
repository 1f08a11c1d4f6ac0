"""A fabric's name: `FABRIC`, `FABRIC@MODE` (how it is run: `roce-400g@tuned`), `FABRIC@VARIANT` (how it is bought:
`roce-400g@branded`, a price entry of its own) or both, `FABRIC@MODE@VARIANT` (`roce-400g@tuned@branded`: tuned
RoCE on branded boxes). The mode sets the physics, the variant the price entry; a name without a mode means the
fabric's default mode. One canonical spelling per design names it in every output: the mode always (`roce-400g`
is `roce-400g@untuned`), except a variant in the default mode, which keeps its short name (`roce-400g@branded`).
"""

from __future__ import annotations

from dataclasses import dataclass

from scalefront.errors import CatalogError
from scalefront.inputs.catalog.modes import MODE_NAME, unknown_mode
from scalefront.inputs.messages import did_you_mean

__all__ = ["FabricName", "parse_fabric_name"]

_GRAMMAR = "write FABRIC@MODE, FABRIC@VARIANT or FABRIC@MODE@VARIANT"


@dataclass(frozen=True)
class FabricName:
    """A fabric name, resolved: the fabric, its mode (the default one when none is named; None for a fabric without
    modes) and its price variant (None: the fabric's own price entry)."""

    base: str
    mode: str | None
    variant: str | None
    default_mode: str | None

    @property
    def canonical(self) -> str:
        """The design's one spelling (module doc)."""
        if self.variant is None:
            return self.base if self.mode is None else f"{self.base}@{self.mode}"
        if self.mode == self.default_mode:
            return f"{self.base}@{self.variant}"
        return f"{self.base}@{self.mode}@{self.variant}"

    @property
    def price_key(self) -> str:
        """The price book entry that holds its lines: the variant's own, else the fabric's (a mode runs the same
        parts)."""
        return self.base if self.variant is None else f"{self.base}@{self.variant}"


def _hint(base: str, modes: list[str], variants: list[str]) -> str:
    parts = [f"modes of {base}: {', '.join(modes)}"] if modes else []
    parts += [f"its price variants: {', '.join(variants)}"] if variants else []
    return f"; {'; '.join(parts)}" if parts else ""


def _checked_suffix(name: str, suffix: str, hint: str) -> str:
    if not suffix:
        raise CatalogError(f"fabric {name!r}: no mode or variant after '@' ({_GRAMMAR}){hint}")
    if not MODE_NAME.fullmatch(suffix):
        raise CatalogError(f"fabric {name!r}: {suffix!r} is not a mode name (lower-case letters, digits and '-'){hint}")
    return suffix


def parse_fabric_name(name: str, modes: list[str], default_mode: str | None, variants: list[str]) -> FabricName:
    """`name` resolved against its fabric's `modes` (and default) and `variants` (the price variants its price book
    holds); CatalogError naming what is wrong and listing both."""
    base, *suffixes = name.split("@")
    hint = _hint(base, modes, variants)
    if len(suffixes) > 2:
        raise CatalogError(f"fabric {name!r}: more than two '@' ({_GRAMMAR}){hint}")
    suffixes = [_checked_suffix(name, s, hint) for s in suffixes]
    if len(suffixes) == 2 and suffixes[0] in variants and suffixes[0] not in modes:
        order = f"; the mode comes first: {base}@{suffixes[1]}@{suffixes[0]}" if suffixes[1] in modes else hint
        raise CatalogError(f"fabric {name!r}: {suffixes[0]!r} is a price variant, not a mode ({_GRAMMAR}){order}")
    variant = None
    if suffixes and suffixes[-1] not in modes and suffixes[-1] in variants:
        variant = suffixes.pop()
    elif len(suffixes) == 2:
        last = suffixes[1]
        known = did_you_mean(last, variants) or (f"; its price variants: {', '.join(variants)}" if variants else "")
        raise CatalogError(f"fabric {name!r}: {last!r} is not a price variant of {base}{known or ' (it has none)'}")
    if not suffixes:
        return FabricName(base, default_mode, variant, default_mode)
    mode = suffixes[0]
    if mode not in modes:
        also = f"; its price variants: {', '.join(variants)}" if variants else ""
        raise CatalogError(f"{unknown_mode(base, mode, modes)}{also}")
    return FabricName(base, mode, variant, default_mode)

"""One marker, colour and name per fabric for the whole session, in every chart and table (issue 21, D9).

A fabric keeps the marker it was first given, whatever order a sort or a filter puts the rows in, and whichever
chart draws it: the app gives the scenario's fabrics their markers when it opens, and any other series name
(a fabric added by a re-run, a GPU when a scenario groups by GPU) gets the next free one when first drawn.

Markers are unique glyphs, so that the charts still read without colour (`NO_COLOR`, a monochrome terminal).
The first name of a fabric takes its filled glyph whatever its mode (outputs name default modes too:
``roce-400g@untuned``); a further mode of that fabric (``roce-400g@tuned``) keeps its colour and takes the hollow
form (``■`` roce-400g@untuned, ``□`` roce-400g@tuned): the family reads at a glance and the two stay apart. Past
the glyph pairs below (and for a second mode of one fabric), names take a letter, still unique.

Pure: no widgets. `plot.py` draws with the glyphs and colours; the tables prefix a fabric's name with its glyph."""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text

#: (filled glyph, hollow glyph, colour) per slot; colours readable on dark and light themes (Tableau 10).
SLOTS = (
    ("●", "○", "#3b9ede"),
    ("■", "□", "#e8861a"),
    ("▲", "△", "#3cb043"),
    ("◆", "◇", "#d64545"),
    ("★", "☆", "#9b6fd0"),
    ("▼", "▽", "#b07b52"),
    ("▶", "▷", "#e377c2"),
    ("◀", "◁", "#17becf"),
)
#: Glyphs after the slots run out: letters, in colours cycled from the slots.
LETTERS = string.ascii_uppercase
#: Separates a fabric from its operating mode in a name (``roce-400g@tuned``).
MODE_SEPARATOR = "@"


@dataclass(frozen=True)
class Marker:
    """How one series is drawn: its glyph, its colour and its name."""

    glyph: str
    colour: str
    name: str

    def label(self) -> Text:
        """The glyph in its colour, then the name: ``● ib-ndr``."""
        return Text.assemble((self.glyph, self.colour), f" {self.name}")


class FabricMarkers:
    """The session's markers: `of(name)` gives a name its marker the first time and the same one ever after."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._given: dict[str, Marker] = {}
        #: The slot of each fabric (the part of a name before `@`).
        self._slot_of: dict[str, int] = {}
        self._used: set[str] = set()
        for name in names:
            self.of(name)

    def of(self, name: str) -> Marker:
        """The marker of a fabric (or fabric@mode, or any series name)."""
        if name not in self._given:
            self._given[name] = self._new(name)
        return self._given[name]

    def glyph(self, name: str) -> str:
        return self.of(name).glyph

    def colour(self, name: str) -> str:
        return self.of(name).colour

    def _new(self, name: str) -> Marker:
        base = name.partition(MODE_SEPARATOR)[0]
        if base not in self._slot_of and len(self._slot_of) < len(SLOTS):
            self._slot_of[base] = len(self._slot_of)
        slot = self._slot_of.get(base)
        if slot is not None:
            filled, hollow, colour = SLOTS[slot]
            # The first name of a fabric takes its filled glyph, whatever its mode (outputs name the default mode
            # too: `ib-ndr@default`); further modes of that fabric the hollow one.
            glyph = filled if filled not in self._used else hollow
            if glyph not in self._used:
                return self._take(glyph, colour, name)
        colour = SLOTS[slot][2] if slot is not None else SLOTS[len(self._given) % len(SLOTS)][2]
        letter = next((c for c in [*LETTERS, *string.ascii_lowercase, *string.digits] if c not in self._used), "?")
        return self._take(letter, colour, name)

    def _take(self, glyph: str, colour: str, name: str) -> Marker:
        self._used.add(glyph)
        return Marker(glyph, colour, name)

    def legend(self, names: Iterable[str]) -> list[tuple[str, str, str]]:
        """`(glyph, colour, name)` for each name, in the order given (for `plot.legend_lines`)."""
        return [(m.glyph, m.colour, m.name) for m in (self.of(n) for n in names)]

"""A table of result rows (a polars frame) for the keyboard: columns labelled, formatted and described from
scalefront's schema; the columns that fit the width, by priority (or the ones the user chose); a current
column moved with left/right (h/l), sorted by with `s` (again: reversed) or a click on its header, and marked in
its header; rows marked with `m` (a visible ✓ in the first column), all unmarked with `u`; j/k/g/G and page
up/down; `y` copies the row. With the session's fabric markers, a fabric's name carries its marker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import polars as pl
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable

from scalefront.api import ColumnSpec, column_spec, row_as_csv
from scalefront_tui.screens.columns import ColumnsScreen
from scalefront_tui.widgets.markers import FabricMarkers

#: A marked row's sign (not a fabric marker: those are ● ■ ▲ ...).
MARK = "✓"
#: The column whose values carry the fabric markers.
FABRIC = "fabric"
#: Cell padding of a DataTable column (one space each side).
PADDING = 2
#: The vertical scrollbar's width (DEFAULT_CSS).
SCROLLBAR = 1


class FrameTable(DataTable[Text | str]):
    """Shows a frame; the frame in its shown order is `.frame` (sorting reorders it)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Detail"),
        Binding("s", "sort", "Sort"),
        Binding("m", "mark", "Mark"),
        Binding("u", "unmark_all", "Unmark all", show=False),
        Binding("y", "copy_row", "Copy", show=False),
        Binding("c", "choose_columns", "Columns", show=False),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "Top", show=False),
        Binding("G", "scroll_bottom", "Bottom", show=False),
        Binding("h", "cursor_left", "Column left", show=False),
        Binding("l", "cursor_right", "Column right", show=False),
    ]

    # A one-column scrollbar (Textual's default is two): at 80 columns the answer's six columns fit beside the
    # mode-qualified fabric names ("● roce-400g@untuned").
    DEFAULT_CSS = """
    FrameTable { scrollbar-size-vertical: 1; width: 100%; }
    """

    class Changed(Message):
        """The shown rows, their order or the marks changed."""

        def __init__(self, table: FrameTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> FrameTable:
            return self.table

    def __init__(
        self,
        priority: Sequence[str],
        *,
        id: str | None = None,
        markable: bool = True,
        header_lines: int = 1,
        sort_keys: dict[str, str] | None = None,
    ) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True, header_height=header_lines)
        #: Headers on two lines split a label at its first space ("days" over "ib-ndr"), for narrow columns.
        self.header_lines = header_lines
        #: Column names in the order they are given room (the first ones always show).
        self.priority = list(priority)
        self.markable = markable
        self.frame = pl.DataFrame()
        self.specs: dict[str, ColumnSpec] = {}
        #: Columns the user chose (None: as many as fit, by priority).
        self.chosen: list[str] | None = None
        self.sort_by: tuple[str, bool] | None = None
        #: A shown column sorted by another's values (the ROI table's payback text by its months).
        self.sort_keys: dict[str, str] = dict(sort_keys or {})
        self.current_column = self.priority[0] if self.priority else ""
        #: Marked rows, by their key (the values of `key_columns`).
        self.marks: list[tuple[Any, ...]] = []
        self.key_columns: list[str] = []
        self._shown_columns: list[str] = []
        self._width = 0
        self._width_cache: dict[str, int] | None = None
        #: The session's fabric markers (None: fabric names as they are).
        self.markers: FabricMarkers | None = None

    # ------------------------------------------------------------------------------------------------ data
    def load(self, frame: pl.DataFrame, specs: Sequence[ColumnSpec] | None = None, key: Sequence[str] = ()) -> None:
        """Show `frame` (keeping the sort, the marks that still exist and the cursor's row where possible).
        `specs` describes its columns (default: the schema's); `key` names the columns that identify a row."""
        self.specs = {s.name: s for s in specs} if specs is not None else {c: column_spec(c) for c in frame.columns}
        self.key_columns = list(key) or [
            c for c in frame.columns if self.specs.get(c) and self.specs[c].group == "input"
        ]
        if self.sort_by is not None and self.sort_by[0] in frame.columns:
            by = self.sort_keys.get(self.sort_by[0], self.sort_by[0])
            by = by if by in frame.columns else self.sort_by[0]
            frame = frame.sort(by, descending=self.sort_by[1], nulls_last=True, maintain_order=True)
        self.frame = frame
        self._width_cache = None
        keys = set(self._keys())
        self.marks = [m for m in self.marks if m in keys]
        self._render_rows()

    def _keys(self) -> list[tuple[Any, ...]]:
        if not self.key_columns or self.frame.is_empty():
            return []
        return list(self.frame.select(self.key_columns).iter_rows())

    def record(self, index: int | None = None) -> dict[str, Any] | None:
        """The row at `index` (default: the cursor's) as a dict, or None."""
        i = self.cursor_row if index is None else index
        if self.frame.is_empty() or not 0 <= i < self.frame.height:
            return None
        return self.frame.row(i, named=True)

    def marked_records(self) -> list[dict[str, Any]]:
        """The marked rows, in the order they were marked."""
        keys = self._keys()
        return [self.frame.row(keys.index(m), named=True) for m in self.marks if m in keys]

    # ------------------------------------------------------------------------------------------------ columns
    def shown_columns(self) -> list[str]:
        """The columns on screen, in display order."""
        return list(self._shown_columns)

    def _widths(self) -> dict[str, int]:
        """Each column's width: its label or its widest value (of the first 200 rows), computed once per frame."""
        if self._width_cache is not None:
            return self._width_cache
        out = {}
        for name, spec in self.specs.items():
            if name not in self.frame.columns:
                continue
            cells = [len(spec.format(v)) for v in self.frame[name].to_list()[:200]]
            if name == FABRIC and self.markers is not None:
                cells = [c + 2 for c in cells]  # "● " before the name
            label = max(len(part) for part in self._label(spec).split("\n"))
            out[name] = max([label + 2, *cells])  # +2: room for the sort arrow
        self._width_cache = out
        return out

    def _fit(self) -> list[str]:
        if self.chosen is not None:
            return [c for c in self.chosen if c in self.specs and c in self.frame.columns]
        widths = self._widths()
        mark = 1 + PADDING if self.markable else 0
        room = (self._width or self.size.width or 80) - mark - SCROLLBAR
        picked: list[str] = []
        used = 0
        for name in [*self.priority, *[c for c in widths if c not in self.priority]]:
            if name not in widths or name in picked:
                continue
            need = widths[name] + PADDING
            if picked and used + need > room:
                if name in self.priority:
                    continue  # a narrower column further down may still fit
                break
            picked.append(name)
            used += need
        order = {name: i for i, name in enumerate(self.priority)}
        return sorted(picked, key=lambda c: order.get(c, len(order)))

    def _label(self, spec: ColumnSpec) -> str:
        return spec.header.replace(" ", "\n", 1) if self.header_lines > 1 else spec.header

    def _header(self, name: str) -> Text:
        spec = self.specs[name]
        label = self._label(spec)
        if self.sort_by and self.sort_by[0] == name:
            label += " ▼" if self.sort_by[1] else " ▲"
        return Text(label, style="underline" if name == self.current_column else "")

    def _render_rows(self) -> None:
        cursor_key = None
        if 0 <= self.cursor_row < len(self._keys()) and self.row_count:
            cursor_key = self._keys()[min(self.cursor_row, len(self._keys()) - 1)]
        widths = self._widths()
        self._shown_columns = self._fit()
        if self.current_column not in self._shown_columns and self._shown_columns:
            self.current_column = self._shown_columns[0]
        self.clear(columns=True)
        if self.markable:
            self.add_column("", key="__mark", width=1)
        for name in self._shown_columns:
            self.add_column(self._header(name), key=name, width=widths[name])
        keys = self._keys()
        marked = set(self.marks)
        specs = [self.specs[c] for c in self._shown_columns]
        for i, values in enumerate(self.frame.select(self._shown_columns).iter_rows() if self._shown_columns else []):
            is_marked = bool(keys) and keys[i] in marked
            style = "bold" if is_marked else ""
            cells: list[Text | str] = [self._cell(s, v, style) for s, v in zip(specs, values, strict=True)]
            if self.markable:
                cells.insert(0, Text(MARK, style="bold") if is_marked else "")
            self.add_row(*cells, key=str(i))
        if cursor_key is not None and cursor_key in keys:
            self.move_cursor(row=keys.index(cursor_key), animate=False)
        self.post_message(self.Changed(self))

    def _cell(self, spec: ColumnSpec, value: Any, style: str) -> Text:
        text = spec.format(value)
        if spec.name == FABRIC and self.markers is not None:
            mark = self.markers.of(text)
            return Text.assemble((mark.glyph, mark.colour), " ", (text, style))
        return Text(text, style=style, justify="right" if spec.numeric else "left")

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            if not self.frame.is_empty() or self.specs:
                self._render_rows()

    def choose(self, columns: list[str] | None) -> None:
        """Show these columns (None: as many as fit, by priority)."""
        self.chosen = columns
        self._render_rows()

    # ------------------------------------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Marking and opening a row's detail exist only in tables of configurations."""
        if action in ("mark", "select_cursor", "unmark_all"):
            return self.markable
        return True

    def _move_column(self, step: int) -> None:
        if not self._shown_columns:
            return
        i = self._shown_columns.index(self.current_column) if self.current_column in self._shown_columns else 0
        self.current_column = self._shown_columns[max(0, min(len(self._shown_columns) - 1, i + step))]
        for name in self._shown_columns:
            self.columns[self._column_key(name)].label = self._header(name)
        self._require_update_dimensions = True
        self.refresh()
        index = self._shown_columns.index(self.current_column) + (1 if self.markable else 0)
        self.scroll_to_region(self._get_column_region(index), animate=False)

    def _column_key(self, name: str) -> Any:
        return next(k for k in self.columns if k.value == name)

    def action_cursor_left(self) -> None:
        self._move_column(-1)

    def action_cursor_right(self) -> None:
        self._move_column(+1)

    def sort_rows(self, column: str, descending: bool) -> None:
        """Sort the rows by a column (nulls last, ties kept in their order)."""
        self.sort_by = (column, descending)
        self.current_column = column
        self.load(self.frame, list(self.specs.values()), self.key_columns)

    def action_sort(self) -> None:
        """Sort by the current column; on the column already sorted by, reverse the order."""
        if self.frame.is_empty() or not self.current_column:
            return
        descending = self.sort_by is not None and self.sort_by[0] == self.current_column and not self.sort_by[1]
        self.sort_rows(self.current_column, descending)
        label = self.specs[self.current_column].label
        self.app.notify(
            f"sorted by {label}, {'descending' if descending else 'ascending'} (s again reverses)", timeout=3
        )

    def action_mark(self) -> None:
        """Mark the cursor's row, or unmark it."""
        keys = self._keys()
        if not self.markable or not keys:
            return
        key = keys[self.cursor_row]
        self.marks = [m for m in self.marks if m != key] if key in self.marks else [*self.marks, key]
        self._render_rows()

    def action_unmark_all(self) -> None:
        """Unmark every row."""
        if self.marks:
            self.marks = []
            self._render_rows()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header sorts by it, as `s` on it does (again: reversed)."""
        event.stop()
        name = event.column_key.value
        if name in self.specs and name in self._shown_columns:
            self.current_column = name
            self.action_sort()

    def action_copy_row(self) -> None:
        """Copy the cursor's row (CSV: a header line and the values) to the clipboard."""
        row = self.record()
        if row is None:
            return
        self.app.copy_to_clipboard(row_as_csv(row))
        self.app.notify(
            "copied the row as CSV to the clipboard (OSC 52: your terminal must allow it; tmux needs set-clipboard on)",
            timeout=4,
        )

    def action_choose_columns(self) -> None:
        def chosen(result: list[str] | bool | None) -> None:
            if result is False:
                return
            self.choose(result if isinstance(result, list) else None)

        all_columns = [s for s in self.specs.values() if s.name in self.frame.columns]
        self.app.push_screen(ColumnsScreen(all_columns, self._shown_columns, self.chosen is None), chosen)

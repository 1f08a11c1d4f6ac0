"""The dialogs of the scalefront UI, one per module: help (`help.py`), writing a file (`write_file.py`: export,
save) and choosing a table's columns (`columns.py`)."""

from __future__ import annotations

from scalefront_tui.screens.columns import ColumnsScreen
from scalefront_tui.screens.help import HelpScreen
from scalefront_tui.screens.write_file import (
    WriteFileScreen,
    export_roi_dialog,
    export_rows_dialog,
    export_serving_dialog,
    save_scenario_dialog,
    tab_export_dialog,
)

__all__ = [
    "ColumnsScreen",
    "HelpScreen",
    "WriteFileScreen",
    "export_roi_dialog",
    "export_rows_dialog",
    "export_serving_dialog",
    "save_scenario_dialog",
    "tab_export_dialog",
]

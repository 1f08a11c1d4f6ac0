"""Where the app may read and write files.

In the user's own terminal the app writes where the user says (``~`` expanded, relative names under the working
directory). Served to a browser (`scalefront serve`), whoever holds the page is not necessarily the machine's
user, so every path is confined to the export directory chosen when the server started: a relative name, no
``..``, no link leading out, no absolute path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath

from scalefront.api import UsageError


@dataclass(frozen=True)
class FileAccess:
    """`root` is None in a terminal (no confinement), else the served export directory (absolute)."""

    root: Path | None = None

    @property
    def confined(self) -> bool:
        return self.root is not None

    def where(self) -> str:
        """Where relative names land, for dialogs."""
        return str(self.root) if self.root is not None else str(Path.cwd())

    def resolve(self, text: str) -> Path:
        """The path a file name typed in the app stands for; UsageError (one line) when it may not be used."""
        name = text.strip()
        if not name:
            raise UsageError("the file name is empty")
        if self.root is None:
            return Path(name).expanduser()
        return self._confined(name, self.root)

    def _confined(self, name: str, root: Path) -> Path:
        pure = PurePath(name)
        outside = f"outside the export directory: in the browser, files are read and written only in {root} ({name})"
        if pure.is_absolute() or name.startswith("~") or ".." in pure.parts:
            raise UsageError(outside)
        path = root / pure
        if path.is_symlink():
            raise UsageError(f"a link: in the browser, files are read and written only in {root} ({name})")
        resolved = path.resolve()
        if not resolved.is_relative_to(root.resolve()):
            raise UsageError(outside)
        return resolved

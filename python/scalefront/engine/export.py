"""Writing result frames to CSV or Parquet (by suffix) so that nothing is ever lost: every file is written
to a temporary file beside its target and renamed into place at the end, an existing file is never
replaced unless asked, and an interrupted export leaves no partial file.

`StreamWriter` writes frames that arrive in chunks (a sweep's `--all` rows) without holding them in memory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import polars as pl

from scalefront import schema
from scalefront.errors import UsageError

__all__ = [
    "FORMATS",
    "Outputs",
    "StreamWriter",
    "check_target",
    "check_text_target",
    "check_writable_dir",
    "read_frame",
    "write_frame",
    "write_lazy",
    "write_text",
]

FORMATS = {".csv": "csv", ".parquet": "parquet"}
#: How every Parquet file is laid out: row groups of a fixed number of rows, so that the bytes depend on the rows
#: only, never on how they arrived (a sweep's chunks, the thread count, the shards of a merge).
PARQUET_ROW_GROUP_ROWS = 65_536


def _format(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(f"{path}: unknown output format {path.suffix!r}; use a .csv or .parquet file name")
    return fmt


def check_writable_dir(directory: Path) -> None:
    """Fail unless a file can be created in `directory` (an existing directory): tried by creating and removing
    an empty hidden file, since permissions alone do not tell (/proc, /sys, read-only mounts, root)."""
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".scalefront-probe.", dir=directory)
    except OSError as err:
        raise UsageError(f"cannot create files in {directory} ({err.strerror or err})") from None
    os.close(fd)
    os.unlink(probe)


def check_target(path: str | Path, force: bool) -> Path:
    """Fail early (before any work) when `path` cannot be written: empty, unknown suffix, a directory, an
    existing file without `force`, or a folder that is missing, not a folder, or not writable."""
    if not str(path).strip():
        raise UsageError("the file name is empty; give a .csv or .parquet path")
    p = Path(path)
    _format(p)
    return _check_path(p, force)


def _check_path(p: Path, force: bool) -> Path:
    if p.is_dir():
        raise UsageError(f"{p} is a directory")
    if p.exists() and not force:
        raise UsageError(f"{p} already exists; pass --force to replace it")
    if not p.parent.exists():
        raise UsageError(f"{p.parent} does not exist")
    try:
        check_writable_dir(p.parent)
    except UsageError as err:
        raise UsageError(f"{p}: {err}") from None
    return p


def write_failed(target: Path, err: BaseException) -> UsageError:
    """A failed write (a full disk, a quota, an I/O error) as one line naming the file."""
    reason = getattr(err, "strerror", None)
    if not reason:
        reason = "no space left on device" if "No space left" in str(err) else "the write failed"
    return UsageError(f"{target}: cannot write it ({reason[:1].lower()}{reason[1:]}); nothing was written")


#: What a failed write raises: the OS's error, or polars' for a file it writes itself.
WRITE_ERRORS = (OSError, pl.exceptions.PolarsError)


def _place(tmp: Path, target: Path, force: bool) -> None:
    """Move the finished temporary file into place: atomically, and without replacing an existing file
    unless `force` (a link fails if the target appeared meanwhile)."""
    if force:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)
    except FileExistsError:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"{target} appeared while writing; nothing replaced (pass --force to replace it)") from None
    except OSError:
        # File systems without hard links: check-then-rename (the check above ran before the work).
        if target.exists():
            tmp.unlink(missing_ok=True)
            raise UsageError(f"{target} already exists; pass --force to replace it") from None
        os.replace(tmp, target)
        return
    tmp.unlink()


def _temp_beside(target: Path, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    os.close(fd)
    # mkstemp creates 0600; give the result the mode any new file gets (0666 less the umask).
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(name, 0o666 & ~umask)
    return Path(name)


def write_frame(
    frame: pl.DataFrame, path: str | Path, force: bool = False, metadata: dict[str, str] | None = None
) -> Path:
    """Write `frame` to `path` (.csv or .parquet) atomically; `metadata` goes into a Parquet file's key-value
    metadata (a CSV file has none: asking for it there is an error)."""
    target = check_target(path, force)
    fmt = _format(target)
    if metadata and fmt != "parquet":
        raise UsageError(f"{target}: this file carries metadata and must be a .parquet file")
    tmp = _temp_beside(target, ".tmp")
    try:
        _write_frame_to(frame, tmp, fmt, metadata, target)
        _place(tmp, target, force)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _write_frame_to(frame: pl.DataFrame, tmp: Path, fmt: str, metadata: dict[str, str] | None, target: Path) -> None:
    """A frame into a temporary file; a failed write is one line naming the target."""
    try:
        if fmt == "csv":
            frame.write_csv(tmp)
        else:
            frame.write_parquet(tmp, metadata=metadata, row_group_size=PARQUET_ROW_GROUP_ROWS)
    except WRITE_ERRORS as err:
        raise write_failed(target, err) from None


def write_lazy(frame: pl.LazyFrame, path: str | Path, force: bool = False) -> Path:
    """Stream a lazy frame (e.g. Parquet files scanned in order) to `path` (.csv or .parquet) atomically,
    without holding it in memory; row order is kept."""
    target = check_target(path, force)
    tmp = _temp_beside(target, ".tmp")
    try:
        _sink(frame, tmp, target)
        _place(tmp, target, force)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _sink(frame: pl.LazyFrame, tmp: Path, target: Path, metadata: dict[str, str] | None = None) -> None:
    """Stream a lazy frame into a temporary file (the target's format); a failed write is one line.

    Polars streams in its own threads and does not look at signals: the sink runs in a worker thread while this
    one waits, so that Ctrl-C and SIGTERM are handled at once (a merge of 8 GB takes minutes). It writes into a
    private folder, removed whatever happens: a sink abandoned mid-way cannot leave or recreate a file."""
    folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    inner = folder / "sink"
    try:
        if _format(target) == "csv":
            _in_worker(lambda: frame.sink_csv(inner))
        else:
            _in_worker(lambda: frame.sink_parquet(inner, metadata=metadata, row_group_size=PARQUET_ROW_GROUP_ROWS))
        os.replace(inner, tmp)
    except WRITE_ERRORS as err:
        raise write_failed(target, err) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _in_worker(work: Callable[[], object]) -> None:
    """Run `work` in a daemon thread, waiting in short joins so that this thread stays free for signals; its
    exception is raised here. Interrupted, the worker is left to end with the process."""
    box: dict[str, BaseException] = {}

    def run() -> None:
        try:
            work()
        except BaseException as err:  # handed to the waiting thread
            box["error"] = err

    worker = threading.Thread(target=run, name="scalefront-write", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    if "error" in box:
        raise box["error"]


def check_text_target(path: str | Path, force: bool) -> Path:
    """Fail early (before any work) when a text file cannot be written at `path` (see `check_target`)."""
    if not str(path).strip():
        raise UsageError("the file name is empty")
    return _check_path(Path(path), force)


def write_text(text: str, path: str | Path, force: bool = False) -> Path:
    """Write `text` (UTF-8) to `path` atomically, as `write_frame` does (an existing file only with `force`)."""
    target = check_text_target(path, force)
    tmp = _temp_beside(target, ".tmp")
    try:
        _write_text_to(text, tmp, target)
        _place(tmp, target, force)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _write_text_to(text: str, tmp: Path, target: Path) -> None:
    try:
        tmp.write_text(text, encoding="utf-8")
    except OSError as err:
        raise write_failed(target, err) from None


#: Columns that are text whatever they hold: every text column of the schema (an overlap column of fractions such as
#: "0.5" stays a string, a recompute_modules column every row leaves empty reads back as "").
TEXT_COLUMNS = tuple(c.name for c in (*schema.INPUTS, *schema.METRICS) if c.kind == "text")


def read_frame(path: str | Path) -> pl.DataFrame:
    """Read a frame scalefront wrote (CSV or Parquet, by suffix), with the types it was written with."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: no such file")
    if _format(p) == "parquet":
        return pl.read_parquet(p)
    header = pl.read_csv(p, n_rows=0).columns
    text = [c for c in TEXT_COLUMNS if c in header]
    frame = pl.read_csv(p, schema_overrides=dict.fromkeys(text, pl.Utf8))
    return frame.with_columns(pl.col(text).fill_null(""))


class StreamWriter:
    """Append frames of one schema to a CSV or Parquet target, then `commit()` (atomic rename) or
    `abort()` (remove everything written). CSV appends to one temporary file; Parquet writes one temporary
    part per chunk and streams them into the target at the end."""

    def __init__(self, path: str | Path, force: bool = False, metadata: dict[str, str] | None = None):
        self.target = check_target(path, force)
        self.force = force
        self.format = _format(self.target)
        if metadata and self.format != "parquet":
            raise UsageError(f"{self.target}: this file carries metadata and must be a .parquet file")
        #: Key-value metadata of a Parquet target, set before `commit` (it may hold counts known only then).
        self.metadata = metadata
        self.rows = 0
        self._parts: Path | None = None
        self._tmp: Path | None = None
        if self.format == "csv":
            self._tmp = _temp_beside(self.target, ".tmp")
        else:
            self._parts = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.", dir=self.target.parent))
        self._chunks = 0

    def write(self, frame: pl.DataFrame) -> None:
        try:
            if self.format == "csv":
                assert self._tmp is not None
                with open(self._tmp, "ab") as fh:
                    frame.write_csv(fh, include_header=self._chunks == 0)
            else:
                assert self._parts is not None
                frame.write_parquet(
                    self._parts / f"part-{self._chunks:08d}.parquet", row_group_size=PARQUET_ROW_GROUP_ROWS
                )
        except WRITE_ERRORS as err:
            raise write_failed(self.target, err) from None
        self._chunks += 1
        self.rows += frame.height

    def finish(self, empty: pl.DataFrame) -> Path:
        """The whole file, finished in its temporary (placed by `commit` or an `Outputs`): `empty` (a frame with the
        schema and no rows) is written when no chunk came."""
        if self._chunks == 0:
            self.write(empty)
        if self.format == "parquet":
            assert self._parts is not None
            self._tmp = _temp_beside(self.target, ".tmp")
            parts = sorted(self._parts.glob("part-*.parquet"))  # chunk order is row order
            _sink(pl.scan_parquet(parts), self._tmp, self.target, self.metadata)
            self._cleanup()
        assert self._tmp is not None
        return self._tmp

    def commit(self, empty: pl.DataFrame) -> Path:
        """Finish (see `finish`) and place the file."""
        try:
            _place(self.finish(empty), self.target, self.force)
        finally:
            self.abort()
        return self.target

    def abort(self) -> None:
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
        self._cleanup()

    def _cleanup(self) -> None:
        if self._parts is not None:
            shutil.rmtree(self._parts, ignore_errors=True)
            self._parts = None


class Outputs:
    """Several files written to temporaries beside their targets as the work goes, then placed together by
    `commit` at the end: a failure before (a full disk, Ctrl-C, a limit, an error) removes every temporary and
    places none, and a failure while placing removes the files this set had placed (an existing file replaced with
    `force` stays replaced). Use as a context manager: leaving it by an exception aborts."""

    def __init__(self, force: bool = False):
        self.force = force
        self._staged: list[tuple[Path, Path]] = []
        self._streams: list[StreamWriter] = []
        self._made_dirs: list[Path] = []

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self.abort()

    def frame(self, frame: pl.DataFrame, path: str | Path, metadata: dict[str, str] | None = None) -> None:
        """`frame` to `path` (.csv or .parquet), placed at `commit`."""
        target = check_target(path, self.force)
        tmp = self._temp(target)
        _write_frame_to(frame, tmp, _format(target), metadata, target)

    def text(self, text: str, path: str | Path) -> None:
        """`text` (UTF-8) to `path`, placed at `commit`; a missing folder is created (and removed on abort)."""
        target = Path(path)
        self._make_dir(target.parent)
        target = check_text_target(target, self.force)
        _write_text_to(text, self._temp(target), target)

    def stream(self, writer: StreamWriter, empty: pl.DataFrame) -> None:
        """A finished stream (`StreamWriter.finish`), placed at `commit`."""
        self._streams.append(writer)
        self._staged.append((writer.finish(empty), writer.target))

    def commit(self) -> list[Path]:
        """Place every file, in the order given; returns the targets."""
        placed: list[Path] = []
        try:
            for tmp, target in self._staged:
                existed = target.exists()
                _place(tmp, target, self.force)
                if not existed:
                    placed.append(target)
        except BaseException:
            for target in placed:
                target.unlink(missing_ok=True)
            self.abort()
            raise
        self._made_dirs = []
        self.abort()
        return [target for _, target in self._staged]

    def abort(self) -> None:
        """Remove every temporary (and the folders this set made, when empty)."""
        for tmp, _ in self._staged:
            tmp.unlink(missing_ok=True)
        for writer in self._streams:
            writer.abort()
        for d in reversed(self._made_dirs):
            with contextlib.suppress(OSError):
                d.rmdir()
        self._made_dirs = []

    def _temp(self, target: Path) -> Path:
        tmp = _temp_beside(target, ".tmp")
        self._staged.append((tmp, target))
        return tmp

    def _make_dir(self, directory: Path) -> None:
        missing = [d for d in (directory, *directory.parents) if not d.exists()]
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise write_failed(directory, err) from None
        self._made_dirs += reversed(missing)

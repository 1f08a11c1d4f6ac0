"""Running bad inputs in-process and checking the promise every one must keep: one line on stderr, exit 2, no
traceback, nothing on stdout, nothing written (the working folder, which holds the inputs and is where outputs are
asked for, is unchanged). Shared by the fuzz tests (tests/test_fuzz.py, tests/test_fuzz_review.py,
tests/test_fuzz_serving.py)."""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.cli import ONE_LINE_ERROR, files_in
from scalefront.cli import main

#: Every fuzz test tries the same corpus on every run: no randomness, no example database.
FUZZ = settings(derandomize=True, database=None, deadline=None)
#: Inputs per fuzz test unless it says otherwise.
EXAMPLES = 200


def run_in(folder: Path, argv: list[str]) -> tuple[int, str, str]:
    """`scalefront.cli.main(argv)` in `folder`, with stdout and stderr captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def folder_with(files: dict[str, bytes]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="scalefront-fuzz-") as name:
        folder = Path(name)
        (folder / "a-file").write_text("not a folder\n", encoding="utf-8")
        (folder / "a-folder").mkdir()
        for file, data in files.items():
            (folder / file).write_bytes(data)
        yield folder


def fuzz(inputs: st.SearchStrategy[Any], check: Callable[[Any], None], examples: int = EXAMPLES) -> None:
    """`check(x)` for `examples` inputs drawn from `inputs` (the same ones every run); fails if hypothesis tried
    fewer, so that a strategy that runs dry cannot shrink the corpus unseen."""
    tried = 0

    @settings(FUZZ, max_examples=examples)
    @given(inputs)
    def each(x: Any) -> None:
        nonlocal tried
        tried += 1
        check(x)

    each()
    assert tried >= examples, f"hypothesis tried {tried} of {examples} inputs"


def assert_rejected(files: dict[str, bytes], argv: list[str]) -> None:
    """One line on stderr, exit 2, no traceback, nothing on stdout, the folder unchanged."""
    with folder_with(files) as folder:
        before = {p: (folder / p).read_bytes() if (folder / p).is_file() else None for p in files_in(folder)}
        code, out, err = run_in(folder, argv)
        after = {p: (folder / p).read_bytes() if (folder / p).is_file() else None for p in files_in(folder)}
    shown = f"{argv} {next((files[f] for f in argv if f in files), b'')[:400]!r}"
    assert code == 2, f"exit {code} for {shown}\nstderr: {err}"
    assert out == "", f"stdout for {shown}: {out[:300]}"
    assert "Traceback" not in err and ONE_LINE_ERROR.match(err), f"stderr for {shown}: {err}"
    assert after == before, f"files changed for {shown}"

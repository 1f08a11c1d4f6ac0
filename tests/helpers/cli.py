"""Running the command in-process, and the checks every bad input must pass (one line on stderr, exit 2,
nothing written)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from scalefront.cli import main


def run(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`scalefront.cli.main(argv)` in-process: (exit status, stdout, stderr). argparse errors exit through
    SystemExit."""
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


#: The one line a bad input prints: `scalefront: error: ...` (or `scalefront sweep: error: ...` from argparse).
ONE_LINE_ERROR = re.compile(r"^scalefront(?: [a-z]+)?: error: \S.*\n$")


def assert_one_line_error(code: int, out: str, err: str, *mentions: str) -> None:
    """Bad input: exit 2, nothing on stdout, one `scalefront...: error: ...` line on stderr (no traceback) that
    mentions each of `mentions`."""
    assert code == 2, (code, err)
    assert out == "", out
    assert "Traceback" not in err, err
    assert ONE_LINE_ERROR.match(err), err
    for m in mentions:
        assert m in err, (m, err)


def files_in(directory: Path) -> list[str]:
    """Every file and folder under `directory` (hidden ones too), relative, sorted: to check nothing was written."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))

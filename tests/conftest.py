"""Shared helpers and fixtures: paths to the repository's data/, raw TOML of the built-in catalogs, TOML writers
(catalog entries, scenarios), writers of user catalog files built from a copy of a built-in entry, and running
the command in-process with the checks every bad input must pass (one line on stderr, exit 2)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from scalefront.cli import main

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"

# Modest example counts keep the suite fast; no database so nothing is written outside tests/; no deadline
# because the first call of a process parses the catalogs.
settings.register_profile(
    "scalefront",
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("scalefront")


def toml_value(v: Any) -> str:
    """A Python value as a TOML value (inline tables and arrays included)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {v!r} as TOML here")


def toml_table(header: str, entry: dict[str, Any]) -> str:
    """One catalog entry as TOML text: scalars under [header], its sources under [header.sources]."""
    lines = [f"[{header}]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in entry.items() if k != "sources"]
    if "sources" in entry:
        lines.append(f"[{header}.sources]")
        lines += [f"{k} = {toml_value(v)}" for k, v in entry["sources"].items()]
    return "\n".join(lines) + "\n"


def scenario_text(doc: dict[str, Any]) -> str:
    """A scenario dict (top-level scalars, then tables; [economics.prices.<id>] sub-tables) as TOML."""
    lines = [f"{k} = {toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    for table, body in doc.items():
        if not isinstance(body, dict):
            continue
        lines.append(f"[{table}]")
        subs = {}
        for k, v in body.items():
            if k == "prices" and isinstance(v, dict):
                subs = v
            else:
                lines.append(f"{k} = {toml_value(v)}")
        scalars = {k: v for k, v in subs.items() if not isinstance(v, dict)}
        if scalars:
            lines.append(f"[{table}.prices]")
            lines += [f"{k} = {toml_value(v)}" for k, v in scalars.items()]
        for entry, prices in subs.items():
            if isinstance(prices, dict):
                lines.append(f"[{table}.prices.{entry}]")
                lines += [f"{k} = {toml_value(v)}" for k, v in prices.items()]
    return "\n".join(lines) + "\n"


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


@pytest.fixture(scope="session")
def raw() -> Callable[[str], dict[str, Any]]:
    """raw("gpus.toml") -> the parsed data/ file, independent of scalefront's loader."""
    cache: dict[str, dict[str, Any]] = {}

    def load(rel: str) -> dict[str, Any]:
        if rel not in cache:
            cache[rel] = tomllib.loads((DATA / rel).read_text(encoding="utf-8"))
        return cache[rel]

    return load


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """write("name.toml", text) -> path of a new file under tmp_path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write


@pytest.fixture
def h100_entry(raw) -> dict[str, Any]:
    """A deep copy of the built-in h100-sxm GPU entry (with its sources), to mutate."""
    e = raw("gpus.toml")["h100-sxm"]
    return {**e, "sources": dict(e["sources"])}


@pytest.fixture
def h100_price(raw) -> dict[str, Any]:
    e = raw("prices.toml")["gpu"]["h100-sxm"]
    return {**e, "sources": dict(e["sources"])}


@pytest.fixture
def my_gpu_catalog(write, h100_entry, h100_price) -> Path:
    """A user catalog adding `my-gpu`: an h100-sxm with 200 GB of HBM, priced like an H100."""
    gpu = {**h100_entry, "name": "My GPU", "hbm_gb": 200.0}
    text = toml_table("gpus.my-gpu", gpu) + toml_table("prices.gpu.my-gpu", h100_price)
    return write("my-catalog.toml", text)


#: A small sweep (two GPUs, two counts, two fabrics, two topologies, a searched layout) for the shard and cluster
#: tests: enough cells to split, fast enough to run many times.
SMALL_SCENARIO = """\
name = "small"
[workload]
model = "llama3-8b"
tokens = 1e11
global_batch = 64
[cluster]
gpu = ["h100-sxm", "a100-80gb"]
gpus = [64, 128]
fabric = ["ib-ndr", "roce-400g"]
topology = ["rail-fat-tree", { name = "fat-tree", oversubscription = 2.0 }]
[parallelism]
tp = [1, 2, 4, 8]
pp = [1, 2]
vpp = [1, 2]
micro_batch = [1, 2]
recompute = ["selective", "full"]
zero = [1, 3]
overlap = ["dp", 0.5]
"""


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """SMALL_SCENARIO written to a file."""
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO, encoding="utf-8")
    return path

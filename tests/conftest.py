"""Fixtures shared by the test modules, the hypothesis profile, and the suite's tiers (markers by path).

Helpers that tests import (the in-process command, bad-input checks, TOML writers, the small scenarios) are in
tests/helpers/; test modules import from there, never from conftest or from one another."""

from __future__ import annotations

import signal
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from helpers import DATA, SMALL_SCENARIO, toml_table

TESTS = Path(__file__).resolve().parent

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

# The tests that interrupt a real `scalefront` send it SIGINT. A suite started as a shell script's background job
# inherits SIGINT ignored (POSIX), and so would its children, which keep an ignored signal ignored as Python does:
# give the suite Python's own Ctrl-C handler, so that the processes it starts begin with the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# ---------------------------------------------------------------- tiers

#: Markers by where a test lives: a folder ("tui/"), a module, or a module and a test-name prefix
#: ("module.py::test_prefix"). The markers are declared in pyproject.toml (--strict-markers). `python -m pytest`
#: runs every tier; `make test-fast` leaves out ui, fuzz, cluster and process (CONTRIBUTING.md, "Checks").
MARKS_BY_PATH: dict[str, tuple[str, ...]] = {
    "tui/": ("ui",),
    "tui/test_terminal.py": ("process",),  # the console script in a real pseudo-terminal
    "tui/test_browser.py": ("process",),  # `scalefront serve` and a headless Chromium
    "test_memo_browser.py": ("process",),  # the decision memo in a headless Chromium
    "tui/test_serve_security.py": ("process",),  # real `scalefront serve` processes (and a few pure checks)
    "test_fuzz.py": ("fuzz",),
    "test_fuzz_review.py": ("fuzz",),
    "test_fuzz.py::test_bad_input_in_a_real_process": ("process",),
    "test_cluster.py": ("cluster",),
    "test_readme.py::test_every_command": ("cluster",),  # one of them starts a local Dask cluster
    "test_cluster.py::test_ctrl_c_": ("process",),
    "test_sweep_cli.py::test_ctrl_c_": ("process",),
    "test_cli.py::test_subprocess_": ("process",),
}


def _matches(where: str, module: str, node: str) -> bool:
    if where.endswith("/"):
        return module.startswith(where)
    if "::" in where:
        return node.startswith(where)
    return module == where


def _marks_for(item: pytest.Item) -> set[str]:
    module = item.path.relative_to(TESTS).as_posix()
    node = f"{module}::{item.name}"
    return {mark for where, marks in MARKS_BY_PATH.items() if _matches(where, module, node) for mark in marks}


def _check_marks_by_path() -> None:
    """Every entry names a folder or module that exists and, with a prefix, a test defined there: a renamed test
    must not drop out of its tier unseen."""
    for where in MARKS_BY_PATH:
        module, _, prefix = where.partition("::")
        path = TESTS / module
        if not path.exists() or (prefix and f"def {prefix}" not in path.read_text(encoding="utf-8")):
            raise pytest.UsageError(f"tests/conftest.py: MARKS_BY_PATH entry {where!r} names no test")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _check_marks_by_path()
    for item in items:
        for mark in sorted(_marks_for(item)):
            item.add_marker(mark)


# ---------------------------------------------------------------- fixtures


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


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """The shared small scenario (helpers.SMALL_SCENARIO) written to a file."""
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO, encoding="utf-8")
    return path

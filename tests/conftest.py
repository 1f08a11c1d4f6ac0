"""Shared fixtures: paths to the repository's data/, raw TOML of the built-in catalogs, and writers of user
catalog files built from a copy of a built-in entry."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

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


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"cannot write {v!r} as TOML here")


def toml_table(header: str, entry: dict[str, Any]) -> str:
    """One catalog entry as TOML text: scalars under [header], its sources under [header.sources]."""
    lines = [f"[{header}]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in entry.items() if k != "sources"]
    if "sources" in entry:
        lines.append(f"[{header}.sources]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in entry["sources"].items()]
    return "\n".join(lines) + "\n"


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

"""Front ends and the core: the core never imports the UI package, finds it through the entry-point group
`scalefront.ui` (refusing one written for another API version), says how to install it when there is none, and
the UI package imports nothing of scalefront but its public API, `scalefront.api`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from scalefront import api, cli

REPO = Path(__file__).resolve().parents[1]


def test_the_core_never_imports_the_ui_package():
    for path in (REPO / "python" / "scalefront").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n.split(".")[0] == "scalefront_tui" for n in names), path.name


def test_the_ui_imports_only_the_public_api():
    """scalefront_tui may import `scalefront.api` (and nothing private: no other scalefront module, no name
    starting with an underscore)."""
    for path in (REPO / "tui" / "scalefront_tui").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("scalefront.") or alias.name == "scalefront.api", path.name
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "scalefront":
                assert node.module == "scalefront.api", f"{path.name} imports {node.module}"
                assert all(not a.name.startswith("_") for a in node.names), path.name


def test_without_a_ui_the_command_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setattr(api, "find_ui", lambda: None)
    assert cli.main(["tui"]) == 2
    assert "pip install scalefront-tui" in capsys.readouterr().err
    assert cli.main(["serve"]) == 2
    assert "pip install ./tui" in capsys.readouterr().err


def test_a_ui_for_another_api_version_is_refused(monkeypatch):
    class EntryPoint:
        name = "tui"
        value = "old_ui"
        dist = None

        def load(self):
            return type("OldUI", (), {"api_version": 0})()

    monkeypatch.setattr(api.importlib.metadata, "entry_points", lambda group: [EntryPoint()])
    with pytest.raises(api.UsageError, match="API version 0"):
        api.find_ui()


def test_serve_refuses_a_bad_port():
    with pytest.raises(SystemExit) as err:
        cli.main(["serve", "--port", "70000"])
    assert err.value.code == 2

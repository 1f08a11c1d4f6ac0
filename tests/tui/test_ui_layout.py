"""The UI package's layout, read from its source: modules in sub-packages (widgets/, screens/) hold to the same
boundary as the top level (nothing of scalefront but `scalefront.api`), no import circle exists anywhere in
the package (imports inside functions and under TYPE_CHECKING count: they are dependencies all the same), no
pane or dialog imports the app (messages go up, data goes down), and modules and functions stay short."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import scalefront_tui

PACKAGE = Path(scalefront_tui.__file__).resolve().parent


def modules() -> dict[str, ast.Module]:
    """Every module of the package, sub-packages included, by dotted name."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = [PACKAGE.name, *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def imported(tree: ast.Module, known: set[str]) -> set[str]:
    """The modules `tree` imports, anywhere in it; `from package import module` names the module itself."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{alias.name}" for alias in node.names} & known
            names.update(subs or {node.module})
    return names


def test_the_package_has_sub_packages_to_check():
    """The checks below walk widgets/ and screens/ too (a glob of the top level alone would miss them)."""
    names = set(modules())
    assert {"scalefront_tui.app", "scalefront_tui.widgets.roi", "scalefront_tui.screens.write_file"} <= names


def test_every_module_imports_only_the_public_api():
    for name, tree in modules().items():
        for module in imported(tree, set()):
            if module.split(".")[0] == "scalefront":
                assert module == "scalefront.api", f"{name} imports {module}"
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "scalefront.api":
                assert all(not a.name.startswith("_") for a in node.names), name


def test_no_import_circles():
    found = modules()
    graph = {name: {m for m in imported(tree, set(found)) if m in found} for name, tree in found.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        raise AssertionError(f"import circle: {' -> '.join(err.args[1])}") from None


def test_no_pane_or_dialog_imports_the_app():
    found = modules()
    for name, tree in found.items():
        if name.startswith(("scalefront_tui.widgets", "scalefront_tui.screens")) or name == "scalefront_tui.messages":
            assert "scalefront_tui.app" not in imported(tree, set(found)), name


def test_modules_and_functions_are_short():
    """No module over 500 lines, no function over 60 (decorators and docstrings counted), as the rest of the
    code is held (tests/test_layout.py)."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 500:
            long.append(f"{path.name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                start = min([d.lineno for d in node.decorator_list] + [node.lineno])
                if node.end_lineno - start + 1 > 60:
                    long.append(f"{path.name}: {node.name}, {node.end_lineno - start + 1} lines")
    assert long == []

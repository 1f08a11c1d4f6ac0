"""The Python package's shape, as CONTRIBUTING's Layout states it: no import circles (module-level, in-function and
type-checking imports alike), nothing imported through the package face from inside it, no private name imported
from another module, no module over 500 lines, no function over 60 lines."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "scalefront"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["scalefront", *path.relative_to(PACKAGE).with_suffix("").parts]
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, str | None]]:
    """(module, imported name or None) of every import in the module, wherever it is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            out += [(base, a.name) for a in node.names]
    return out


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (`from a import b` is an edge to a.b when that is a module)."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets = set()
        for base, attr in _imports(name, path):
            if attr and f"{base}.{attr}" in MODULES:
                targets.add(f"{base}.{attr}")
            elif base in MODULES:
                targets.add(base)
        graph[name] = targets - {name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                found.append(sorted([v, *component]))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    assert _circles(_graph()) == []


def test_circles_are_found():
    # The check itself: a two-module circle and a three-module one are reported, a chain is not.
    assert _circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_nothing_inside_imports_the_package_face_or_a_private_name_of_another_module():
    # `from scalefront import _core` or `__version__` runs the package face, which imports the catalog and the
    # model: a latent circle. `from scalefront._core import ...` does not.
    found = []
    for name, path in MODULES.items():
        for base, attr in _imports(name, path):
            through_face = base == "scalefront" and name != "scalefront" and f"scalefront.{attr}" not in MODULES
            private = attr is not None and attr.startswith("_") and not attr.startswith("__") and base in MODULES
            if through_face or private:
                found.append(f"{name}: from {base} import {attr}")
    assert found == []


def test_modules_and_functions_are_short():
    lines = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    assert [f"{name}: {n} lines" for name, n in lines.items() if n > 500] == []
    long = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > 60:
                    long.append(f"{name}.{node.name}: {length} lines")
    assert long == []


RUST_CORE = Path(__file__).resolve().parents[1] / "rust" / "core" / "src"


def _rust_groups(root: Path) -> dict[str, set[str]]:
    """Which top-level groups of the Rust core (step, network, cost, evaluate, ...) each group's non-test code
    names through `crate::` (comments stripped; a file's `#[cfg(test)]` module ends it, by the crate's
    convention, and a `tests.rs` file is such a module moved out of its parent; macros are not groups)."""
    import re

    edges: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.rs")):
        if path.name == "tests.rs":
            continue
        group = path.relative_to(root).parts[0].removesuffix(".rs")
        code = path.read_text(encoding="utf-8").split("\n#[cfg(test)]", 1)[0]
        code = re.sub(r"//.*", "", code)
        names = set(re.findall(r"crate::(\w+)", code)) - {group, "record", "named_enum", "sampled"}
        edges.setdefault(group, set()).update(names)
    return {group: names & edges.keys() for group, names in edges.items()}  # crate-root re-exports are not groups


def test_the_rust_core_s_subsystems_import_only_downwards():
    edges = _rust_groups(RUST_CORE)
    assert {"step", "network", "cost", "evaluate", "decision", "sweep"} <= set(edges)
    assert _circles(edges) == []


def test_the_docs_name_only_core_files_that_exist():
    """Every path into the Rust core that the docs, docstrings and comments give (rust/core/src/..., a file or a
    module's folder) exists: a reader following one finds the code."""
    import re

    root = RUST_CORE.parents[2]
    texts = [root / name for name in ("README.md", "CONTRIBUTING.md", "data/README.md")]
    for folder, pattern in (("docs", "*.md"), ("python", "*.py"), ("tui", "*.py"), ("tests", "*.py")):
        texts += sorted((root / folder).rglob(pattern))
    missing = []
    for path in texts:
        for ref in re.findall(r"rust/core/(?:src|tests)/[A-Za-z0-9_/]+(?:\.rs|/)?", path.read_text(encoding="utf-8")):
            if not (root / ref).exists():
                missing.append(f"{path.relative_to(root)}: {ref}")
    assert missing == []


def test_a_rust_tests_file_is_a_test_only_module():
    """The import check skips `tests.rs` files: each must be its parent's `#[cfg(test)] mod tests;`."""
    for path in RUST_CORE.rglob("tests.rs"):
        parent = path.parent / "mod.rs"
        assert "#[cfg(test)]\nmod tests;" in parent.read_text(encoding="utf-8"), path


def test_rust_group_circles_are_found(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.rs").write_text("use crate::b::Y;\n// crate::c in a comment is not an import\n")
    (tmp_path / "b.rs").write_text("use crate::a::x;\n#[cfg(test)]\nmod tests { use crate::c::Z; }\n")
    edges = _rust_groups(tmp_path)
    assert edges == {"a": {"b"}, "b": {"a"}}
    assert _circles(edges) != []


RUST = Path(__file__).resolve().parents[1] / "rust"


def _rust_long_functions(text: str, limit: int = 60) -> list[str]:
    """Functions of rustfmt-formatted code (outside its `#[cfg(test)]` module) longer than `limit` lines: from the
    `fn` line to the closing brace at the same indentation."""
    import re

    lines = text.split("\n#[cfg(test)]", 1)[0].split("\n")
    long, i = [], 0
    while i < len(lines):
        m = re.match(r"(\s*)(pub(\([^)]*\))? )?(const )?(unsafe )?fn (\w+)", lines[i])
        if m and not lines[i].rstrip().endswith(";"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j] == m.group(1) + "}"), i)
            if end - i + 1 > limit:
                long.append(f"{m.group(6)}: {end - i + 1} lines")
            i = end
        i += 1
    return long


def test_rust_modules_and_functions_are_short():
    files = sorted(p for p in RUST.rglob("*.rs") if "target" not in p.parts)
    texts = {p.relative_to(RUST).as_posix(): p.read_text(encoding="utf-8") for p in files}
    assert [f"{name}: {len(t.splitlines())} lines" for name, t in texts.items() if len(t.splitlines()) > 500] == []
    assert [f"{name}: {fn}" for name, t in texts.items() for fn in _rust_long_functions(t)] == []


def test_long_rust_functions_are_found():
    body = "\n".join(f"    let x{i} = {i};" for i in range(60))
    tests = f"#[cfg(test)]\nmod tests {{\n    fn t() {{\n{body}\n    }}\n}}\n"
    text = f"pub fn short() {{\n}}\n\nfn long() {{\n{body}\n}}\n\n{tests}"
    assert _rust_long_functions(text) == ["long: 62 lines"]

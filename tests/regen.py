"""Regenerate every file in the tree that is derived from the model, in order, or check that none is stale.

    python tests/regen.py            # write them (make regen); rebuilds the extension where a step needs it
    python tests/regen.py --check    # exit 1 naming each stale file (make regen-check; tests/test_regen.py)

The steps, each reading what the ones before it wrote:

1. schema and stubs: `python/scalefront/_evaluation.py` (the typed `Evaluation`), the README's column table and the
   result records' TypedDicts in `python/scalefront/_core.pyi`, from the Rust core's schema; from its parameter
   table `_enums.py`, `_inputs.py`, the scenario file's tables and the README's input and scenario-key tables; from
   its catalog figure table `data/README.md`'s field tables (`python -m scalefront.dev.schema --write`);
2. protocols: each NIC's LL/LL128 step savings in `data/fabrics.toml`, fitted on its fabrics' calibration curves
   (`scalefront validate --calibrate-protocols --write data/fabrics.toml --force`), then a rebuild;
3. calibration: each training framework's fitted terms in `data/frameworks.toml` and each GPU's serving_efficiency
   in `data/gpus.toml` (`scalefront validate --calibrate --write data/frameworks.toml --write-gpus data/gpus.toml
   --force`), then a rebuild (the catalogs are embedded);
4. error model: `data/model_error.toml` (`scalefront validate --calibrate-errors --out ... --force`), then a rebuild;
5. `docs/validation.md` (`scalefront validate --markdown`);
6. the README's figures taken from that table (`README_FIGURES`: counts, medians, coverage);
7. the README's `scalefront roi` example: the default scenario's verdict, legend and table (`--seed 0`);
8. without --check only: the UI snapshots (`pytest tests/tui/test_snapshots.py --snapshot-update`); look at the
   SVGs before committing them. The test suite checks them.

The model is reached through its commands (`scalefront`, `python -m scalefront.dev.schema`) and the extension only,
in subprocesses, never through the package's modules, so this file does not follow their layout and a rebuild
between steps is seen by the next one. A command that writes into a tree runs on a copy, so --check writes nothing.
This file lives in tests/ because it writes into the source tree and so has no place in the installed package.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The extension rebuilt with the fast profile, as `make build` does.
BUILD = [sys.executable, "-m", "pip", "install", "-q", "--no-deps"]
BUILD += ["--config-settings=build-args=--profile dev-release", "-e", "."]


def _run(cmd: list[str]) -> str:
    """`cmd`'s stdout; its failure stops the regeneration with its stderr."""
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"regen: `{' '.join(cmd)}` failed (exit {p.returncode}):\n{p.stdout[-4000:]}{p.stderr}")
    return p.stdout


def scalefront(*args: str) -> str:
    """The command line's stdout."""
    return _run([sys.executable, "-m", "scalefront", *args])


def extension(call: str) -> Any:
    """`_core.<call>` of the built extension, through JSON."""
    code = f"import json; from scalefront import _core; print(json.dumps(_core.{call}))"
    return json.loads(_run([sys.executable, "-c", code]))


# ---------------------------------------------------------------------------------------------- 1. schema


#: What `python -m scalefront.dev.schema --write` writes: from the output schema and the records, and from the
#: parameter table (`scalefront.dev.inputs`).
SCHEMA_FILES = (
    "python/scalefront/_evaluation.py",
    "python/scalefront/_core.pyi",
    "README.md",
    "python/scalefront/_enums.py",
    "python/scalefront/_inputs.py",
    "python/scalefront/inputs/scenario/sections.py",
    "data/README.md",
)


def schema_files(texts: dict[str, str]) -> dict[str, str]:
    """`python -m scalefront.dev.schema --write`, run on a copy of the files it rewrites."""
    with tempfile.TemporaryDirectory(prefix="scalefront-regen-") as tmp:
        root = Path(tmp)
        for name, text in texts.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        _run([sys.executable, "-m", "scalefront.dev.schema", "--write", "--root", str(root)])
        return {name: (root / name).read_text(encoding="utf-8") for name in texts}


# ---------------------------------------------------------------------------------------------- 2-4. validation

#: The date `--calibrate --write` stamps on a calibrated figure's source ("...; YYYY-MM"): today's. A fit that
#: moved no figure keeps the file as it is, old dates included, so the check does not go stale with the calendar.
CALIBRATION_DATE = re.compile(r'^(\w+ = "Calibrated: [^"]*); \d{4}-\d{2}"$', re.M)


def calibration(texts: dict[str, str]) -> dict[str, str]:
    """data/frameworks.toml's fitted terms and data/gpus.toml's serving_efficiency, as `--calibrate` writes them."""
    names = {"--write": "data/frameworks.toml", "--write-gpus": "data/gpus.toml"}
    with tempfile.TemporaryDirectory(prefix="scalefront-regen-") as tmp:
        paths = {flag: Path(tmp) / Path(name).name for flag, name in names.items()}
        for flag, path in paths.items():
            path.write_text(texts[names[flag]], encoding="utf-8")
        scalefront("validate", "--calibrate", *(a for f, p in paths.items() for a in (f, str(p))), "--force")
        new = {names[flag]: path.read_text(encoding="utf-8") for flag, path in paths.items()}
    out = {}
    for name, text in new.items():
        undated = [CALIBRATION_DATE.sub(r'\1; DATE"', t) for t in (texts[name], text)]
        out[name] = texts[name] if undated[0] == undated[1] else text
    return out


#: The date `--calibrate-protocols --write` stamps on a fitted saving's source: kept where the fit did not move.
PROTOCOL_DATE = re.compile(
    r'^(ll(?:128)?_step_saving_us = "(?:fit per NIC|EST: [a-z0-9-]+\'s fit kept)[^"]*); \d{4}-\d{2}"$', re.M
)


def protocols(texts: dict[str, str]) -> dict[str, str]:
    old = texts["data/fabrics.toml"]
    with tempfile.TemporaryDirectory(prefix="scalefront-regen-") as tmp:
        path = Path(tmp) / "fabrics.toml"
        path.write_text(old, encoding="utf-8")
        scalefront("validate", "--calibrate-protocols", "--write", str(path), "--force")
        new = path.read_text(encoding="utf-8")
    undated = [PROTOCOL_DATE.sub(r'\1; DATE"', t) for t in (old, new)]
    return {"data/fabrics.toml": old if undated[0] == undated[1] else new}


def error_model(texts: dict[str, str]) -> dict[str, str]:
    return {"data/model_error.toml": scalefront("validate", "--calibrate-errors")}


def validation_docs(texts: dict[str, str]) -> dict[str, str]:
    return {"docs/validation.md": scalefront("validate", "--markdown")}


# ---------------------------------------------------------------------------------------------- 5. README figures

#: Figures of docs/validation.md's summary, each read from the phrase that holds it there ({name} is a figure,
#: {_} a number not used).
VALIDATION_FACTS = [
    "**Training runs**: {rows} rows from {families} source families ({moe} MoE, {_} on Blackwell GPUs); "
    "{calibrate} calibrate, {_} are shown as reference, {judged} are judged, from {judged_families} source families.",
    "**Judged rows**: median absolute error {median}%, worst {worst}%",
    "{within} of {_} within 15%. MoE rows ({moe_judged}): median {moe_median}%",
    "held-out coverage {coverage}%",
    "sizes >= 64 KiB**: {_} points on {curves} curves, median |error| {c64k}%, worst {c64k_worst}%",
    "sizes >= 64 MiB**: {_} points on {_} curves, median |error| {c64m}%",
    "sizes >= 1 GiB**: {_} points on {_} curves, median |error| {c1g}%, worst {c1g_worst}%",
    "- all_reduce (>= 64 KiB): {_} points, median {all_reduce}%",
    "- all_gather (>= 64 KiB): {_} points, median {all_gather}%",
    "- alltoall (>= 64 KiB): {_} points, median {alltoall}%",
    "- fabric ib-ndr (>= 64 KiB): {_} points on {_} curves, median {ib_ndr}%",
    "- fabric roce-400g (>= 64 KiB): {_} points on {_} curves, median {roce_400g}%",
    "- fabric efa (>= 64 KiB): {_} points on {_} curves, median {efa}%",
]

#: The README's phrases that repeat those figures. Each is rewritten with the current figures, printed with the
#: decimals the README gives them. A phrase the README no longer has is an error: edit it here with the README.
README_FIGURES = [
    "Judged against {curves} held-out nccl-tests curves",
    "The training table has {rows} runs from {families} source families",
    "dense and MoE ({moe} rows:",
    "Today, on the {judged} judged rows: median absolute error {median}%, worst {worst}%, {within} within 15%; "
    "MoE rows ({moe_judged}): median {moe_median}%.",
    "the intervals cover {coverage}% of that family's rows",
    "the median-sized one; {calibrate} rows)",
    "Collectives, held out, from 64 KiB: median {c64k}% (all_reduce {all_reduce}%, all_gather {all_gather}%, "
    "alltoall {alltoall}%; IB NDR {ib_ndr}%, RoCE 400G {roce_400g}%, EFA {efa}%; per curve in docs/validation.md), "
    "worst {c64k_worst}%",
    "from 64 MiB {c64m}%; from 1 GiB {c1g}%, worst {c1g_worst}%.",
]

_FIELD = re.compile(r"\{(\w+)\}")


def phrase(template: str) -> tuple[re.Pattern[str], list[str]]:
    """A template's pattern (any run of white space where it has a space; a number for each {name}) and names."""
    names, parts, at = [], [], 0
    for m in _FIELD.finditer(template):
        parts.append(r"\s+".join(re.escape(w) for w in template[at : m.start()].split(" ")))
        parts.append(r"([0-9]+(?:\.[0-9]+)?)")
        names.append(m.group(1))
        at = m.end()
    parts.append(r"\s+".join(re.escape(w) for w in template[at:].split(" ")))
    return re.compile("".join(parts)), names


def find_once(template: str, text: str, where: str) -> re.Match[str]:
    pattern, _ = phrase(template)
    found = list(pattern.finditer(text))
    if len(found) != 1:
        raise SystemExit(f"regen: {where} has {len(found)} phrases like {template!r}, not one; edit tests/regen.py")
    return found[0]


def validation_facts(docs: str) -> dict[str, str]:
    facts: dict[str, str] = {}
    for template in VALIDATION_FACTS:
        m = find_once(template, docs, "docs/validation.md")
        facts |= {n: v for n, v in zip(phrase(template)[1], m.groups(), strict=True) if n != "_"}
    return facts


def _like(old: str, value: str) -> str:
    """`value` with as many decimals as `old` has."""
    decimals = len(old.partition(".")[2])
    return f"{float(value):.{decimals}f}"


def readme_figures(texts: dict[str, str]) -> dict[str, str]:
    facts, readme = validation_facts(texts["docs/validation.md"]), texts["README.md"]
    for template in README_FIGURES:
        m = find_once(template, readme, "README.md")
        names = phrase(template)[1]
        for i in reversed(range(len(names))):  # from the end, so earlier spans stay valid
            new = _like(m.group(i + 1), facts[names[i]])
            readme = readme[: m.start(i + 1)] + new + readme[m.end(i + 1) :]
    return {"README.md": readme}


#: Where the README shows `scalefront roi`'s answer on the default scenario (seed 0).
ROI_EXAMPLE = ("<!-- roi-example:start -->\n", "<!-- roi-example:end -->\n")


def readme_roi_example(texts: dict[str, str]) -> dict[str, str]:
    """The verdict, the legend and the table of `scalefront roi --seed 0`, between the README's markers."""
    readme, (start, end) = texts["README.md"], ROI_EXAMPLE
    if readme.count(start) != 1 or readme.count(end) != 1:
        raise SystemExit(f"regen: README.md needs one {start.strip()} and one {end.strip()}")
    paragraphs = scalefront("roi", "--seed", "0").split("\n\n")
    keep = [paragraphs[0], *(p for p in paragraphs if p.startswith("A costs:") or "GPUs design B" in p)]
    block = "```\n" + "\n\n".join(p.strip("\n") for p in keep) + "\n```\n"
    head, rest = readme.split(start)
    return {"README.md": head + start + block + end + rest.split(end, 1)[1]}


# ---------------------------------------------------------------------------------------------- the steps


@dataclass(frozen=True)
class Step:
    name: str
    #: The files it reads (besides the model) and writes, relative to the repository.
    files: tuple[str, ...]
    #: Their texts now (earlier steps' outputs included) -> the texts they should have.
    render: Callable[[dict[str, str]], dict[str, str]]
    #: What it writes is embedded in the extension: rebuild before the next step.
    embedded: bool = False


STEPS = [
    Step("schema", SCHEMA_FILES, schema_files),
    Step("protocols", ("data/fabrics.toml",), protocols, embedded=True),
    Step("calibration", ("data/frameworks.toml", "data/gpus.toml"), calibration, embedded=True),
    Step("error model", ("data/model_error.toml",), error_model, embedded=True),
    Step("validation table", ("docs/validation.md",), validation_docs),
    Step("README figures", ("docs/validation.md", "README.md"), readme_figures),
    Step("README roi example", ("README.md",), readme_roi_example),
]


def stale_build() -> list[str]:
    """Files of data/ (catalogs, validation tables) whose text differs from what the built extension embeds."""
    embedded = extension("data_files()")
    tree = {p.relative_to(ROOT / "data").as_posix(): p for p in (ROOT / "data").rglob("*.toml")}
    names = sorted(set(tree) | set(embedded))
    return [n for n in names if n not in tree or embedded.get(n) != tree[n].read_text(encoding="utf-8")]


def run(write: bool, snapshots: bool = True) -> list[str]:
    """Run the steps; returns the files that were (or, checking, would be) rewritten."""
    if write:
        _run(BUILD)
    elif stale := stale_build():
        raise SystemExit(
            f"regen: the extension was built from other files than the tree's ({', '.join(stale)}): "
            "rebuild it first (make build)"
        )
    texts: dict[str, str] = {}
    changed: list[str] = []
    for step in STEPS:
        current = {f: texts[f] if f in texts else (ROOT / f).read_text(encoding="utf-8") for f in step.files}
        new = step.render(current)
        texts |= new
        moved = [f for f in new if new[f] != current[f]]
        changed += moved
        if write:
            for f in moved:
                (ROOT / f).write_text(new[f], encoding="utf-8")
                print(f"regen: {step.name}: wrote {f}")
            if step.embedded and moved:
                _run(BUILD)
    if write and snapshots:
        _run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "tests/tui/test_snapshots.py",
                "--snapshot-update",
            ]
        )
        print("regen: UI snapshots updated (look at tests/tui/__snapshots__ before committing)")
    return list(dict.fromkeys(changed))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/regen.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a derived file is stale")
    parser.add_argument("--no-snapshots", action="store_true", help="leave the UI snapshots as they are")
    args = parser.parse_args(argv)
    changed = run(write=not args.check, snapshots=not args.no_snapshots)
    if args.check and changed:
        print(f"regen: stale: {', '.join(changed)}; run `make regen` (python tests/regen.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

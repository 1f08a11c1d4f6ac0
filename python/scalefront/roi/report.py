"""`scalefront roi --report DIR`: the decision memo (`scalefront.roi.memo`) as a self-contained HTML page (charts
inlined as SVG, no scripts, no network) and in Markdown with the charts as SVG files beside it.

matplotlib draws the charts (`scalefront.roi.charts`; the `report` extra, in the README's main install line): the
de facto plotting library, well kept, and its SVG output embeds in one HTML file. Every file is written
atomically; an existing report is replaced only when asked; the same result and date give the same bytes."""

from __future__ import annotations

import html
from pathlib import Path

from scalefront._core import __version__
from scalefront.engine.export import Outputs, check_writable_dir
from scalefront.errors import UsageError
from scalefront.roi.charts import CHARTS, charts
from scalefront.roi.memo import Block, memo
from scalefront.roi.result import RoiResult

__all__ = [
    "CHARTS",
    "REPORT_FILES",
    "check_report_dir",
    "html_page",
    "markdown",
    "report_files",
    "stage_report",
    "write_report",
]

REPORT_FILES = ("report.html", "report.md", *CHARTS)


def _check_dir(directory: Path, force: bool) -> None:
    """The report folder: an existing writable folder without a report (unless `force`), or one that can be
    created (its nearest existing parent is a writable folder)."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--report: {directory} exists and is not a directory")
    taken = [name for name in REPORT_FILES if (directory / name).exists()]
    if taken and not force:
        raise UsageError(f"--report: {directory} already holds {', '.join(taken)}; pass --force to replace them")
    existing = next(d for d in (directory, *directory.parents) if d.exists())
    try:
        check_writable_dir(existing)
    except UsageError as err:
        raise UsageError(f"--report: {err}") from None


def check_report_dir(directory: str | Path, force: bool) -> Path:
    """Fail before any work when the report cannot be written."""
    if not str(directory).strip():
        raise UsageError("--report: the folder name is empty")
    d = Path(directory)
    _check_dir(d, force)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--report needs matplotlib: pip install 'scalefront[report]'") from None
    return d


# ---------------------------------------------------------------------------------------------- writing

_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}"
    "table{border-collapse:collapse;font-size:12px;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 6px;"
    "text-align:left;vertical-align:top}th{background:#f0f2f6}.callout{font-size:17px;background:#f4f6fa;"
    "padding:1em;border-left:5px solid #4c72b0;font-weight:bold}figure{margin:1.5em 0}figcaption{font-weight:bold}"
    ".header{color:#555;font-size:13px}"
)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(blocks: list[Block]) -> str:
    """The memo in Markdown, the charts as image links to the SVG files."""
    out: list[str] = []
    for b in blocks:
        if b.kind == "h1":
            out += [f"# {b.text}", ""]
        elif b.kind == "h2":
            out += [f"## {b.text}", ""]
        elif b.kind == "callout":
            out += [f"> **{b.text}**", ""]
        elif b.kind == "p":
            out += [b.text, ""]
        elif b.kind == "ul":
            out += [*(f"- {i}" for i in b.items), ""]
        elif b.kind == "table":
            out += ["| " + " | ".join(map(_md_cell, b.head)) + " |", "|" + "---|" * len(b.head)]
            out += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in b.rows] + [""]
        elif b.kind == "figure":
            out += [f"![{b.items[0]}]({b.text})", ""]
    return "\n".join(out)


def html_page(blocks: list[Block], svgs: dict[str, str]) -> str:
    """The memo as one self-contained HTML page, the charts inlined."""
    body: list[str] = []
    for b in blocks:
        e = html.escape
        if b.kind in ("h1", "h2"):
            body.append(f"<{b.kind}>{e(b.text)}</{b.kind}>")
        elif b.kind == "callout":
            body.append(f"<p class='callout' id='recommendation'>{e(b.text)}</p>")
        elif b.kind == "p":
            body.append(f"<p>{e(b.text)}</p>")
        elif b.kind == "ul":
            body.append("<ul>" + "".join(f"<li>{e(i)}</li>" for i in b.items) + "</ul>")
        elif b.kind == "table":
            th = "".join(f"<th>{e(h)}</th>" for h in b.head)
            rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in b.rows)
            body.append(f"<table><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table>")
        elif b.kind == "figure":
            body.append(f"<figure id='{e(b.text)}'><figcaption>{e(b.items[0])}</figcaption>{svgs[b.text]}</figure>")
    title = html.escape(blocks[0].text)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title}</title><style>{_CSS}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )


def report_files(result: RoiResult, date: str = "") -> dict[str, str]:
    """The memo's files by name: the charts (SVG), report.md and report.html (self-contained). `date` is the date
    the memo states (the caller's today by default; a fixed date gives the same bytes)."""
    blocks = memo(result, date or "(undated)", __version__)
    svgs = charts(result)
    return {**svgs, "report.md": markdown(blocks), "report.html": html_page(blocks, svgs)}


def stage_report(result: RoiResult, directory: str | Path, outputs: Outputs, date: str = "") -> Path:
    """The memo's files into `outputs` (placed together with the others at its commit); the HTML file's path."""
    d = check_report_dir(directory, outputs.force)
    for name, text in report_files(result, date).items():
        outputs.text(text, d / name)
    return d / "report.html"


def write_report(result: RoiResult, directory: str | Path, force: bool = False, date: str = "") -> Path:
    """Write report.html, report.md and the charts into `directory`, all or none; returns the HTML file."""
    with Outputs(force) as outputs:
        path = stage_report(result, directory, outputs, date)
        outputs.commit()
    return path

"""The decision memo (`roi --report`) as a committee opens it: a real headless Chromium loads report.html from disk
and the test reads the rendered page through the DevTools protocol: the recommendation on top, the headline
numbers, the matrix of designs and GPU counts, what would change the decision, every chart drawn at a visible
size, the cash flows, an assumptions table with provenance, confidence and quote status, the risks not priced;
the page fits its width. Screenshots go to SCALEFRONT_SCREENSHOT_DIR when set (docs/img/ holds the committed
ones: `SCALEFRONT_SCREENSHOT_DIR=docs/img python -m pytest tests/test_memo_browser.py`).

Without Chromium the test is skipped, unless SCALEFRONT_REQUIRE_BROWSER=1 (CI sets it), which makes a missing
browser a failure."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
from pathlib import Path

import pytest

from helpers.browser import CHROMIUM, Cdp, open_page
from scalefront.roi import RoiOptions, compare
from scalefront.roi.report import write_report

pytestmark = pytest.mark.skipif(
    CHROMIUM is None and os.environ.get("SCALEFRONT_REQUIRE_BROWSER") != "1",
    reason="needs Chromium (apt-get install chromium); CI requires it",
)

WIDTH = 1280


async def _shot(cdp: Cdp, path: Path, y: float, height: float) -> None:
    clip = {"x": 0, "y": y, "width": WIDTH, "height": height, "scale": 1}
    picture = await cdp.call("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)
    path.write_bytes(base64.b64decode(picture["data"]))


async def _read(url: str, profile: Path, shots: Path) -> dict[str, object]:
    async with open_page(profile, url, WIDTH, 900) as cdp:
        page = await cdp.evaluate(
            """(() => {
              const text = s => Array.from(document.querySelectorAll(s)).map(e => e.textContent);
              const box = e => e.getBoundingClientRect();
              return {
                title: document.title,
                h1: text('h1'),
                h2: text('h2'),
                recommendation: (document.querySelector('#recommendation') || {}).textContent || '',
                headers: text('th'),
                figures: Array.from(document.querySelectorAll('figure')).map(f => {
                  const s = f.querySelector('svg');
                  return {id: f.id, width: s ? box(s).width : 0, height: s ? box(s).height : 0};
                }),
                tables: document.querySelectorAll('table').length,
                scrollWidth: document.documentElement.scrollWidth,
                scrollHeight: document.documentElement.scrollHeight,
                top: box(document.querySelector('#recommendation')).top,
                charts: box(document.querySelector('figure')).top,
              };
            })()"""
        )
        assert isinstance(page, dict)
        await _shot(cdp, shots / "memo-top.png", 0, 900)
        await _shot(cdp, shots / "memo-charts.png", float(page["charts"]) - 40, 900)
        return page


def test_the_memo_reads_in_a_headless_browser(tmp_path):
    if CHROMIUM is None:
        pytest.fail("SCALEFRONT_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
    designs = ["roce-400g@untuned", "roce-400g@tuned", "roce-400g@branded"]
    result = compare("ib-vs-roce", "ib-ndr", designs, options=RoiOptions(samples=300))
    html = write_report(result, tmp_path / "memo", date="2026-11-26")
    shots = tmp_path / "shots"
    shots.mkdir()
    page = asyncio.run(_read(html.resolve().as_uri(), tmp_path / "profile", shots))

    assert "decision memo" in page["title"] and len(page["h1"]) == 1
    assert page["recommendation"].startswith("Recommendation.")
    assert any(word in page["recommendation"] for word in ("Buy", "Leans", "No clear winner"))
    assert page["top"] < 400, "the recommendation is on the first screen"
    for section in (
        "The numbers at",
        "Every design at every GPU count",
        "What would change the decision",
        "Assumptions",
        "Prices that move together",
        "Risks the model does not price",
        "Glossary",
    ):
        assert any(h.startswith(section) for h in page["h2"]), section
    for header in (
        "NPV P10 / P50 / P90",
        "P(A pays)",
        "P without model error",
        "IRR",
        "status",
        "confidence",
        "source (date)",
        "cumulative (NPV)",
    ):
        assert header in page["headers"], header
    figures = {f["id"]: f for f in page["figures"]}
    assert set(figures) == {"premium.svg", "npv.svg", "npv_by_gpus.svg", "tornado.svg", "cash_flow.svg"}
    for name, f in figures.items():
        assert f["width"] > 400 and f["height"] > 200, f"{name} is drawn at a visible size: {f}"
    assert page["scrollWidth"] <= WIDTH + 1, "nothing wider than the window"
    for shot in shots.iterdir():
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    keep = os.environ.get("SCALEFRONT_SCREENSHOT_DIR")
    if keep:
        for shot in shots.iterdir():
            shutil.copy(shot, Path(keep) / shot.name)

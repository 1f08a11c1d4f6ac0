"""The same app in a web browser, end to end: `scalefront serve` on a free localhost port, a real headless
Chromium (the OS package) loads the page, the page's terminal connects over its WebSocket and the app draws the
frontier; the test takes a screenshot, checks the text the browser received, and stops both.

Chromium is driven over the DevTools protocol (CDP) with aiohttp's WebSocket client (aiohttp comes with
textual-serve), so no browser-automation package is needed and nothing is downloaded. The page draws on a
canvas, so the text is read from the terminal output the browser's WebSocket received (CDP Network events),
replayed into pyte, a terminal emulator, at the size the page asked for.

Without Chromium the test is skipped, unless SCALEFRONT_REQUIRE_BROWSER=1 (CI sets it: .ci/run installs
Chromium), which makes a missing browser a failure.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pyte
import pytest

from helpers.browser import CHROMIUM, TIMEOUT_S, Cdp, start_chromium, stop
from scalefront import api

pytestmark = pytest.mark.skipif(
    CHROMIUM is None and os.environ.get("SCALEFRONT_REQUIRE_BROWSER") != "1",
    reason="needs Chromium (apt-get install chromium); CI requires it",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(condition: Any, what: str, timeout: float = TIMEOUT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def scalefront_command() -> list[str]:
    script = Path(sys.executable).with_name("scalefront")
    return [str(script)] if script.exists() else [sys.executable, "-m", "scalefront"]


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


class BrowserTerminal:
    """The terminal the page shows, rebuilt from the frames its WebSocket received."""

    def __init__(self) -> None:
        self.screen: pyte.Screen | None = None
        self.stream: pyte.ByteStream | None = None
        self.seen = 0

    def feed(self, events: list[dict[str, Any]]) -> None:
        for event in events[self.seen :]:
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.webSocketCreated" and self.screen is None:
                query = parse_qs(urlparse(params["url"]).query)
                if "width" in query:
                    self.screen = pyte.Screen(int(query["width"][0]), int(query["height"][0]))
                    self.stream = pyte.ByteStream(self.screen)
            elif method == "Network.webSocketFrameReceived" and self.stream is not None:
                frame = params["response"]
                if frame.get("opcode") == 2:  # binary: the app's terminal output
                    self.stream.feed(base64.b64decode(frame["payloadData"]))
        self.seen = len(events)

    def text(self) -> str:
        return "\n".join(self.screen.display) if self.screen is not None else ""


async def drive(url: str, devtools_port: int, shot: Path, first: dict[str, str]) -> str:
    import aiohttp

    with urllib.request.urlopen(f"http://127.0.0.1:{devtools_port}/json", timeout=5) as response:
        targets = json.loads(response.read())
    page = next(t for t in targets if t["type"] == "page")
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws,
    ):
        cdp = Cdp(ws)
        await cdp.call("Network.enable")
        await cdp.call("Page.enable")
        await cdp.call("Page.navigate", url=url)
        terminal = BrowserTerminal()
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            await cdp.pump(0.5)
            terminal.feed(cdp.events)
            text = terminal.text()
            lines = text.splitlines()
            header = next((i for i, line in enumerate(lines) if "GPUs" in line and "days" in line), None)
            row = next((line for line in lines[header + 1 : header + 3] if "," in line), "") if header else ""
            if first["days"] in row and first["cost"] in row:  # the first row, under a header of one or two lines
                break
            if time.monotonic() > deadline:
                pytest.fail(f"the page did not show the frontier within {TIMEOUT_S:.0f} s; it shows:\n{text}")
        await cdp.pump(1.0)  # let the browser paint what it received
        drawn = await cdp.call("Runtime.evaluate", expression="document.querySelectorAll('.xterm-screen').length")
        assert drawn["result"]["value"] == 1, "the page has its terminal"
        picture = await cdp.call("Page.captureScreenshot", format="png")
        shot.write_bytes(base64.b64decode(picture["data"]))
        return terminal.text()


def test_the_app_in_a_headless_browser(tmp_path, child_processes):
    if CHROMIUM is None:
        pytest.fail("SCALEFRONT_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
    draft = api.ScenarioDraft.open(api.DEFAULT_SCENARIO)
    row = api.frontier(api.SweepJob(draft).run()).row(0, named=True)
    first = {
        "days": api.column_spec("time_to_train_days").format(row["time_to_train_days"]),
        "cost": api.column_spec("cost_to_train_usd").format(row["cost_to_train_usd"]),
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [*scalefront_command(), "serve", "--port", str(port)],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    profile = tmp_path / "chromium-profile"
    browser: subprocess.Popen[bytes] | None = None
    try:
        wait_for(lambda: http_ok(url) or server.poll() is not None, "the server to answer")
        assert server.poll() is None, log.read_text(errors="replace")
        browser, devtools_port = start_chromium(profile)
        shot = tmp_path / "browser.png"
        text = asyncio.run(drive(url, devtools_port, shot, first))
        keep = os.environ.get("SCALEFRONT_SCREENSHOT_DIR")
        if keep:
            shutil.copy(shot, Path(keep) / "browser.png")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
        for label in ("scalefront", "Frontier", "fabric", "GPUs", "days", "cost", "MFU", row["fabric"]):
            assert label in text, label
        apps = child_processes(server.pid)
        assert len(apps) == 1, "one app for the one page"
        stop(browser)  # the page closes with the browser: its session's app must end within seconds
        browser = None
        wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in apps), "the app to end", timeout=10)
    finally:
        if browser is not None:
            stop(browser)
        stop(server)
    assert server.returncode is not None

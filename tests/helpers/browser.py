"""A headless Chromium (the OS package) driven over the DevTools protocol (CDP) with aiohttp's WebSocket client
(aiohttp comes with textual-serve): no browser-automation package, nothing downloaded. `open_page` starts the
browser on a page, gives a `Cdp` client for it, and stops the browser after."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
TIMEOUT_S = 90.0


class Cdp:
    """A minimal DevTools client: commands by id, events collected."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        await self.ws.send_json({"id": my_id, "method": method, "params": params})
        while True:
            message = json.loads((await self.ws.receive(timeout=TIMEOUT_S)).data)
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        out = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return out["result"].get("value")

    async def wait_loaded(self) -> None:
        """Until the page's document has loaded (an event, not a delay)."""
        deadline = time.monotonic() + TIMEOUT_S
        while await self.evaluate("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError("the page did not load")
            await self.pump(0.2)

    async def pump(self, seconds: float) -> None:
        """Collect events for up to `seconds` (returns early when none comes)."""
        try:
            while True:
                message = json.loads((await self.ws.receive(timeout=seconds)).data)
                self.events.append(message)
        except TimeoutError:
            return


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def start_chromium(profile: Path, width: int = 1280, height: int = 800) -> tuple[subprocess.Popen[bytes], int]:
    """A headless Chromium on about:blank and its DevTools port (read from the profile's DevToolsActivePort)."""
    assert CHROMIUM is not None
    browser = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            f"--window-size={width},{height}",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + TIMEOUT_S
    while not (port_file.exists() and port_file.read_text().strip()):
        if time.monotonic() > deadline or browser.poll() is not None:
            stop(browser)
            raise TimeoutError("Chromium did not open its DevTools port")
        time.sleep(0.1)
    return browser, int(port_file.read_text().split()[0])


@contextlib.asynccontextmanager
async def open_page(profile: Path, url: str, width: int = 1280, height: int = 800) -> AsyncIterator[Cdp]:
    """A Chromium showing `url`, loaded, as a `Cdp` client; the browser stops after."""
    import aiohttp

    browser, port = start_chromium(profile, width, height)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=5) as response:
            targets = json.loads(response.read())
        page = next(t for t in targets if t["type"] == "page")
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws,
        ):
            cdp = Cdp(ws)
            await cdp.call("Page.enable")
            await cdp.call(
                "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
            )
            await cdp.call("Page.navigate", url=url)
            await cdp.wait_loaded()
            yield cdp
    finally:
        stop(browser)

"""`scalefront serve` is safe by default: other web pages cannot drive it (Host and Origin checked, a token beyond
loopback), a browser session writes files only inside the export directory, the server runs at most
--max-sessions apps, each app ends with its session (also when the client vanishes), and SIGTERM ends the server
and every session within seconds. Bad addresses are one line, exit 2.

The pure checks (`Gate`, `FileAccess`) are tested directly; the rest drives a real `scalefront serve` over its
WebSocket as a browser tab does (the terminal output is replayed into pyte to read the screen). Every wait is on
an event (a text on the screen, a file, a process gone), bounded by a timeout that fails with a message.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyte
import pytest

from scalefront.api import UsageError
from scalefront_tui.files import FileAccess
from scalefront_tui.web.guard import Gate

TIMEOUT_S = 120.0  # a loaded 2-core CI machine starts an app and sweeps in well under this


# ------------------------------------------------------------------------------------------------ pure checks
def test_a_loopback_server_answers_only_its_own_host_names():
    gate = Gate.for_server("127.0.0.1", 8000, None, None)
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "LOCALHOST:8000"):
        assert gate.refusal(host, None, None) is None, host
    # DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 sends its own name as Host.
    assert "does not answer to the host" in (gate.refusal("evil.example:8000", None, None) or "")
    assert gate.refusal("127.0.0.1:8001", None, None) is not None
    assert gate.refusal(None, None, None) is not None


def test_only_the_pages_own_origin_may_open_a_session():
    gate = Gate.for_server("127.0.0.1", 8000, None, "https://plan.example.org")
    assert gate.refusal("127.0.0.1:8000", "http://127.0.0.1:8000", None) is None
    assert gate.refusal("127.0.0.1:8000", "https://plan.example.org", None) is None  # behind the stated proxy
    for origin in ("http://evil.example", "null", "http://127.0.0.1:9999", "file://"):
        assert "may not open sessions" in (gate.refusal("127.0.0.1:8000", origin, None) or ""), origin


def test_beyond_loopback_a_token_is_required():
    gate = Gate.for_server("0.0.0.0", 8000, "s3cret-token", None)
    assert gate.refusal("10.0.0.5:8000", None, "s3cret-token") is None
    assert gate.refusal("10.0.0.5:8000", "http://10.0.0.5:8000", "s3cret-token") is None
    for token in (None, "", "s3cret-tokeN", "s3cret-token-"):
        assert "token is required" in (gate.refusal("10.0.0.5:8000", None, token) or ""), token
    assert gate.refusal("10.0.0.5:8000", "http://evil.example", "s3cret-token") is not None


def test_served_files_stay_inside_the_export_directory(tmp_path):
    root = tmp_path / "exports"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "out").symlink_to(tmp_path / "outside")
    (root / "link.csv").symlink_to(tmp_path / "outside" / "x.csv")
    files = FileAccess(root)
    assert files.resolve("frontier.csv") == root / "frontier.csv"
    assert files.resolve(" sub/f.parquet ") == root / "sub" / "f.parquet"
    for name in ("/etc/x.csv", str(tmp_path / "outside" / "x.csv"), "../x.csv", "sub/../../x.csv", "~/x.csv"):
        with pytest.raises(UsageError, match="outside the export directory"):
            files.resolve(name)
    for name in ("out/x.csv", "link.csv"):  # a link leading out of the directory
        with pytest.raises(UsageError):
            files.resolve(name)
    with pytest.raises(UsageError, match="empty"):
        files.resolve("  ")


def test_in_a_terminal_names_are_the_users_own(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert FileAccess().resolve("~/x.csv") == tmp_path / "x.csv"
    assert FileAccess().resolve("/tmp/x.csv") == Path("/tmp/x.csv")


# ------------------------------------------------------------------------------------------------ the server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scalefront_command() -> list[str]:
    script = Path(sys.executable).with_name("scalefront")
    return [str(script)] if script.exists() else [sys.executable, "-m", "scalefront"]


def wait_for(condition: Callable[[], Any], what: str, timeout: float = TIMEOUT_S) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)
    return value


class Served:
    """A `scalefront serve` on a free loopback port, stopped at the end."""

    def __init__(self, tmp_path: Path, *extra: str) -> None:
        self.port = free_port()
        self.exports = tmp_path / "exports"
        self.exports.mkdir()
        self.log = tmp_path / "serve.log"
        argv = [*scalefront_command(), "serve", "--port", str(self.port), "--export-dir", str(self.exports), *extra]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(argv, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)
        wait_for(lambda: self.answers() or self.proc.poll() is not None, "the server to answer")
        assert self.proc.poll() is None, self.log.read_text()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answers(self) -> bool:
        try:
            return self.get("/")[0] == 200
        except OSError:
            return False

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as err:
            return int(err.code), err.read().decode()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return int(self.proc.returncode)


@pytest.fixture
def served(tmp_path):
    servers: list[Served] = []

    def start(*extra: str) -> Served:
        servers.append(Served(tmp_path, *extra))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


class Tab:
    """A browser tab's WebSocket session: keys in, the terminal it draws (pyte) out."""

    def __init__(self, ws: Any, width: int = 120, height: int = 40) -> None:
        self.ws = ws
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        self.closed = False
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        import aiohttp

        async for message in self.ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.raw += message.data
                self.stream.feed(message.data)
        self.closed = True

    def text(self) -> str:
        return "\n".join(self.screen.display)

    async def keys(self, *keys: str) -> None:
        for key in keys:
            await self.ws.send_str(json.dumps(["stdin", key]))

    async def wait_text(self, text: str, timeout: float = TIMEOUT_S, *, gone: bool = False) -> None:
        deadline = time.monotonic() + timeout
        while (text in self.text()) == gone:
            if time.monotonic() > deadline:
                what = "to leave" if gone else "on"
                pytest.fail(f"timed out waiting for {text!r} {what} the screen:\n{self.text()}")
            await asyncio.sleep(0.05)

    async def wait_gone(self, text: str) -> None:
        await self.wait_text(text, gone=True)


async def open_tab(session: Any, url: str, **headers: str) -> Tab:
    ws = await session.ws_connect(url.replace("http", "ws") + "/ws?width=120&height=40", headers=headers)
    await ws.send_str(json.dumps(["resize", {"width": 120, "height": 40}]))
    return Tab(ws)


async def export(tab: Tab, name: str, *, force: bool = False) -> None:
    """Press e, replace the dialog's file name with `name` (ctrl+a ctrl+k clear its default), tick "replace" with
    `force`, Enter. The name is typed ahead, one key at a time, without waiting for the dialog: keys that arrive
    before it is drawn reach its field, in order (issue 21, D14)."""
    await tab.keys("e", "\x01", "\x0b", *name)
    if force:
        await tab.wait_text(name[-12:])
        await tab.keys("\t", " ", "\t")
    await tab.keys("\r")


#: The export dialog's title (the footer also says "Export").
DIALOG = "to .csv or .parquet"


@pytest.mark.asyncio
async def test_a_browser_session_writes_only_inside_the_export_directory(served, tmp_path):
    import aiohttp

    server = served()
    precious = tmp_path / "precious.csv"
    precious.write_text("precious csv")
    async with aiohttp.ClientSession() as session:
        tab = await open_tab(session, server.url)
        await tab.wait_text("on the frontier of")
        await export(tab, str(precious), force=True)
        await tab.wait_text("outside the export directory")
        assert "a name alone goes in" in tab.text(), "the dialog says where a bare name is written"
        await tab.keys("\x1b")
        await tab.wait_gone(DIALOG)
        await export(tab, "../escape.csv")
        await tab.wait_text("outside the export directory")
        await tab.keys("\x1b")
        await tab.wait_gone(DIALOG)
        await export(tab, "frontier.csv")
        wait_for(lambda: (server.exports / "frontier.csv").exists(), "the export inside the directory")
        await tab.ws.close()
    assert precious.read_text() == "precious csv"
    assert not (tmp_path / "escape.csv").exists()
    assert (server.exports / "frontier.csv").read_text().startswith("model,gpu,gpus")


@pytest.mark.asyncio
async def test_other_sites_pages_are_refused(served, child_processes):
    import aiohttp

    server = served()
    assert server.get("/", {"Host": "evil.example:80"})[0] == 403
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(server.url.replace("http", "ws") + "/ws", headers={"Origin": "http://evil.x"})
        assert refused.value.status == 403
    assert child_processes(server.proc.pid) == []
    status, page = server.get("/")
    assert status == 200 and "googleapis" not in page and "fonts/RobotoMono" in page  # works offline
    assert server.get("/static/")[0] in (403, 404)  # no directory listing


#: A browser tab in a process of its own, to be killed without closing its socket (an abrupt client exit).
HOLDING_CLIENT = """
import asyncio, json, sys, aiohttp
async def main():
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(sys.argv[1] + "/ws?width=80&height=24") as ws:
            await ws.send_str(json.dumps(["resize", {"width": 80, "height": 24}]))
            async for _ in ws:
                pass
asyncio.run(main())
"""


@pytest.mark.asyncio
async def test_sessions_are_limited_and_end_with_their_socket(served, child_processes):
    import aiohttp

    server = served("--max-sessions", "1")
    client = subprocess.Popen([sys.executable, "-c", HOLDING_CLIENT, server.url.replace("http", "ws")])
    try:
        apps = wait_for(lambda: child_processes(server.proc.pid), "the first session's app")
        async with aiohttp.ClientSession() as session:
            second = await open_tab(session, server.url)
            await second.wait_text("--max-sessions 1")
            wait_for(lambda: second.closed, "the second tab to be closed")
        assert child_processes(server.proc.pid) == apps
    finally:
        client.kill()  # no close frame: the connection just drops
        client.wait(5)
    wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in apps), "the app to end", timeout=10)


@pytest.mark.asyncio
async def test_sigterm_ends_the_server_and_its_sessions_within_seconds(served, child_processes):
    import aiohttp

    server = served()
    async with aiohttp.ClientSession() as session:
        tabs = [await open_tab(session, server.url) for _ in range(2)]
        for tab in tabs:
            await tab.wait_text("Frontier")
        apps = child_processes(server.proc.pid)
        assert len(apps) == 2
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        await asyncio.get_running_loop().run_in_executor(None, server.proc.wait, 15)
        took = time.monotonic() - started
    assert server.proc.returncode == 128 + signal.SIGTERM
    assert took < 8, f"took {took:.1f} s"
    assert not any(Path(f"/proc/{pid}").exists() for pid in apps)
    assert "server stopped (SIGTERM); 2 sessions ended" in server.log.read_text()


def test_an_app_whose_server_died_ends(served, child_processes):
    """A server killed with SIGKILL cannot stop its sessions; each app notices and ends by itself."""
    import aiohttp

    server = served()

    async def one_session() -> list[int]:
        async with aiohttp.ClientSession() as session:
            tab = await open_tab(session, server.url)
            await tab.wait_text("Frontier")
            apps = child_processes(server.proc.pid)
            server.proc.kill()
            server.proc.wait(5)
            return apps

    apps = asyncio.run(one_session())
    assert len(apps) == 1
    wait_for(lambda: not Path(f"/proc/{apps[0]}").exists(), "the orphaned app to end", timeout=10)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--host", ""], "--host '': name the address"),
        (["--host", "not a host"], "--host 'not a host': not an address"),
        (["--max-sessions", "0"], "--max-sessions"),
        (["--export-dir", "/nonexistent-dir"], "--export-dir /nonexistent-dir: not a directory"),
        (["--token", "short"], "--token"),
    ],
)
def test_bad_serve_options_are_one_line(args, message, tmp_path):
    result = subprocess.run([*scalefront_command(), "serve", *args], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_a_busy_port_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*scalefront_command(), "serve", "--port", str(port)], capture_output=True, text=True, cwd=tmp_path
        )
    assert result.returncode == 2
    expected = f"scalefront: error: --port {port}: already in use on 127.0.0.1; choose another with --port"
    assert result.stderr.strip() == expected
    assert os.listdir(tmp_path) == []

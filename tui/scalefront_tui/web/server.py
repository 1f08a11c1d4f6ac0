"""The HTTP and WebSocket server of `scalefront serve`, built on textual-serve's app protocol.

What it adds to textual-serve's server: the request checks of :mod:`.guard`, at most `max_sessions` app
processes (one more gets a message, not an app), apps that end with their session (:mod:`.sessions`), a
shutdown on SIGINT or SIGTERM that ends every session within seconds, an export directory that each app is
confined to, and a page that loads nothing from outside (no web fonts from the Internet).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from textual_serve.server import Server

from scalefront_tui.web.guard import Gate
from scalefront_tui.web.page import render_page
from scalefront_tui.web.sessions import AppProcess

log = logging.getLogger("scalefront.serve")

#: Seconds between WebSocket pings: a client that vanished without closing (a dropped network) is noticed
#: within about 1.5 times this.
HEARTBEAT_S = 5.0
#: Seconds the server waits for open requests when it stops (sessions are ended before).
SHUTDOWN_S = 2.0


@dataclass(frozen=True)
class ServeOptions:
    """A served UI: the scenario each session opens, where apps may write, and who may connect."""

    scenario: str
    host: str
    port: int
    export_dir: Path
    max_sessions: int
    token: str | None = None
    public_url: str | None = None

    @property
    def base_url(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        name = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{name}:{self.port}"

    @property
    def app_argv(self) -> list[str]:
        """The command of one session's app: the UI's own module, confined to the export directory."""
        return [sys.executable, "-m", "scalefront_tui", self.scenario, "--export-dir", str(self.export_dir)]


class SafeServer(Server):
    """textual-serve's server with the checks, limits and cleanup above."""

    def __init__(self, options: ServeOptions) -> None:
        super().__init__(
            " ".join(options.app_argv),
            host=options.host,
            port=options.port,
            title=f"scalefront {Path(options.scenario).name}",
            public_url=options.base_url,
        )
        self.options = options
        self.gate = Gate.for_server(options.host, options.port, options.token, options.public_url)
        self.sessions: set[AppProcess] = set()
        self.sockets: set[web.WebSocketResponse] = set()
        #: The signal that stopped the server, once one has.
        self.stopped_by: signal.Signals | None = None
        #: Sessions open when it stopped (each ended before run() returns).
        self.ended_at_stop = 0

    async def _make_app(self) -> web.Application:
        app = web.Application()
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                web.get("/ws/{token}", self.handle_websocket, name="websocket-token"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ]
        )
        app.on_shutdown.append(self.on_shutdown)
        return app

    def _refusal(self, request: web.Request, token: str | None) -> str | None:
        return self.gate.refusal(request.headers.get("Host"), request.headers.get("Origin"), token)

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        token = request.query.get("token")
        reason = self._refusal(request, token)
        if reason is not None:
            return web.Response(status=403, text=f"scalefront: {reason}\n")
        html = render_page(
            title=self.title,
            static_url="/static/",
            websocket_path="/ws" + (f"/{token}" if self.gate.token is not None and token else ""),
            font_size=request.query.get("fontsize", "16"),
        )
        return web.Response(
            text=html,
            content_type="text/html",
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"},
        )

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        reason = self._refusal(request, request.match_info.get("token"))
        if reason is not None:
            raise web.HTTPForbidden(text=f"scalefront: {reason}\n")
        websocket = web.WebSocketResponse(heartbeat=HEARTBEAT_S)
        await websocket.prepare(request)
        if len(self.sessions) >= self.options.max_sessions:
            await self._turn_away(websocket)
            return websocket
        self.sockets.add(websocket)
        try:
            await self._run_session(request, websocket)
        finally:
            self.sockets.discard(websocket)
        return websocket

    async def _turn_away(self, websocket: web.WebSocketResponse) -> None:
        n = self.options.max_sessions
        text = (
            f"\r\n  scalefront: {n} session{'s are' if n > 1 else ' is'} open, the most this server runs "
            f"(--max-sessions {n}).\r\n  Close another tab of it, then reload this page.\r\n"
        )
        with contextlib.suppress(Exception):
            await websocket.send_bytes(text.encode())
            await websocket.close(code=1013, message=b"too many sessions")

    async def _run_session(self, request: web.Request, websocket: web.WebSocketResponse) -> None:
        width = _dimension(request.query.get("width"), 80)
        height = _dimension(request.query.get("height"), 24)
        service = AppProcess(
            self.options.app_argv,
            self.options.export_dir,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        self.sessions.add(service)
        try:
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # a broken client must not take the server down
            log.warning("session ended: %s", error)
        finally:
            await service.stop()
            self.sessions.discard(service)

    async def on_shutdown(self, app: web.Application) -> None:
        self.ended_at_stop = len(self.sessions)
        await asyncio.gather(*(s.stop() for s in list(self.sessions)), return_exceptions=True)
        for websocket in list(self.sockets):
            with contextlib.suppress(Exception):
                await websocket.close(code=1001, message=b"server stopped")

    def _stop(self, sig: signal.Signals) -> None:
        self.stopped_by = sig
        self.request_exit()

    def run(self, sock: socket.socket) -> None:
        """Serve on a bound socket until SIGINT or SIGTERM; every session's app has ended when this returns."""
        logging.basicConfig(level=logging.WARNING, format="scalefront serve: %(message)s")
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stop, sig)
        web.run_app(
            self._make_app(),
            sock=sock,
            handle_signals=False,
            loop=loop,
            shutdown_timeout=SHUTDOWN_S,
            print=lambda *args: None,
            access_log=None,
        )


def _dimension(text: str | None, default: int) -> int:
    """A terminal width or height from the page, within what a screen can hold."""
    try:
        value = int(text or default)
    except ValueError:
        return default
    return min(max(value, 10), 1000)

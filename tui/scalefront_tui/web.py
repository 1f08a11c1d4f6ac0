"""The UI in a web browser, with textual-serve: an HTTP server whose page connects over a WebSocket to a new
app process per browser tab (`python -m scalefront_tui SCENARIO`, driven by Textual's web driver)."""

from __future__ import annotations

import shlex
import sys


def serve(scenario: str, *, host: str, port: int, public_url: str | None = None) -> None:
    """Serve until interrupted (Ctrl-C, SIGTERM). `public_url` is the address browsers use when it is not
    http://host:port (behind a proxy); pages and their WebSocket are addressed through it."""
    from textual_serve.server import Server

    command = shlex.join([sys.executable, "-m", "scalefront_tui", scenario])
    server = Server(command, host=host, port=port, title=f"scalefront {scenario}", public_url=public_url)
    server.serve()

"""scalefront-tui: the terminal UI of scalefront, also served to web browsers (`scalefront serve`).

It registers itself with the core through the entry point group ``scalefront.ui`` (this module is the entry
point: `api_version`, `run`, `serve`), so the core never imports it; it uses only ``scalefront.api``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["api_version", "run", "serve"]

#: The version of `scalefront.api` this UI is written for.
api_version = 3


def run(scenario: str) -> None:
    """Open the UI on a scenario (built-in id or TOML file) in this terminal, until the user quits."""
    from scalefront_tui.app import run as run_app

    run_app(scenario)


def serve(
    scenario: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    public_url: str | None = None,
    export_dir: str | Path | None = None,
    token: str | None = None,
    max_sessions: int | None = None,
) -> int:
    """Serve the same UI to web browsers at http://host:port (each browser tab runs its own app, at most
    `max_sessions` at once) until SIGINT or SIGTERM; the exit status (130 or 143). Files written from a browser go
    only into `export_dir` (default: the working directory); beyond loopback a `token` is required (generated
    when not given)."""
    from scalefront_tui.web import DEFAULT_MAX_SESSIONS
    from scalefront_tui.web import serve as serve_web

    return serve_web(
        scenario,
        host=host,
        port=port,
        public_url=public_url,
        export_dir=export_dir,
        token=token,
        max_sessions=max_sessions or DEFAULT_MAX_SESSIONS,
    )

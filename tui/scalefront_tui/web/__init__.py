"""The UI in a web browser (`scalefront serve`): an HTTP server whose page connects over a WebSocket to a new app
process per browser tab (`python -m scalefront_tui SCENARIO --export-dir DIR`, driven by Textual's web driver).

Safe by default: it listens on 127.0.0.1; it checks Host and Origin so that other web pages cannot drive it;
beyond loopback it needs a token; it runs at most `max_sessions` apps and ends each with its session; the apps
write only inside the export directory. Bad addresses and busy ports are one line (UsageError), before any
output.
"""

from __future__ import annotations

import errno
import secrets
import signal
import socket
import sys
from pathlib import Path

from scalefront.api import UsageError
from scalefront_tui.web.guard import is_loopback
from scalefront_tui.web.server import SafeServer, ServeOptions

#: Sessions (app processes, ~120 MB each) a server runs at once unless told otherwise.
DEFAULT_MAX_SESSIONS = 4
#: The most --max-sessions accepts: each session is a process of its own.
MAX_SESSIONS_LIMIT = 64

__all__ = ["DEFAULT_MAX_SESSIONS", "MAX_SESSIONS_LIMIT", "serve"]


def serve(
    scenario: str,
    *,
    host: str,
    port: int,
    public_url: str | None = None,
    export_dir: str | Path | None = None,
    token: str | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
) -> int:
    """Serve the UI on `scenario` until SIGINT or SIGTERM; the exit status (128 + the signal, as shells report
    it). A non-loopback `host` gets a generated token unless one is given. Raises UsageError (one line) for an
    address that cannot be served."""
    options = _options(scenario, host, port, public_url, export_dir, token, max_sessions)
    sock = bind(options.host, options.port)
    server = SafeServer(options)
    try:
        _announce(options)
        server.run(sock)
    finally:
        sock.close()
    sig = server.stopped_by or signal.SIGINT
    n = server.ended_at_stop
    print(f"scalefront: server stopped ({sig.name}); {n} session{'' if n == 1 else 's'} ended", file=sys.stderr)
    return 128 + int(sig)


def _options(
    scenario: str,
    host: str,
    port: int,
    public_url: str | None,
    export_dir: str | Path | None,
    token: str | None,
    max_sessions: int,
) -> ServeOptions:
    if not host.strip():
        raise UsageError(
            "--host '': name the address to listen on: 127.0.0.1 (this machine only, the default), "
            "or 0.0.0.0 (every IPv4 network) or :: (every network)"
        )
    if not 1 <= max_sessions <= MAX_SESSIONS_LIMIT:
        raise UsageError(f"--max-sessions {max_sessions}: expected 1 to {MAX_SESSIONS_LIMIT}")
    if token is not None and len(token) < 8:
        raise UsageError("--token: use at least 8 characters (or leave it out for a random one)")
    directory = Path(export_dir if export_dir is not None else Path.cwd()).expanduser()
    if not directory.is_dir():
        raise UsageError(f"--export-dir {directory}: not a directory")
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(18)
    return ServeOptions(scenario, host, port, directory.resolve(), max_sessions, token, public_url)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or UsageError saying why not."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as err:
        reason = err.strerror if isinstance(err, socket.gaierror) else "not a valid name"
        raise UsageError(f"--host {host!r}: not an address this machine can listen on ({reason})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise UsageError(_bind_problem(host, port, err)) from None
    sock.setblocking(False)
    return sock


def _bind_problem(host: str, port: int, err: OSError) -> str:
    if err.errno == errno.EADDRINUSE:
        return f"--port {port}: already in use on {host}; choose another with --port"
    if err.errno == errno.EACCES:
        return f"--port {port}: not allowed for this user (ports below 1024 need privileges); try --port 8000"
    if err.errno == errno.EADDRNOTAVAIL:
        return f"--host {host}: not an address of this machine"
    return f"cannot listen on {host}:{port}: {err.strerror}"


def _announce(options: ServeOptions) -> None:
    url = options.base_url + "/" + (f"?token={options.token}" if options.token else "")
    if is_loopback(options.host):
        where = "this machine only; from elsewhere: ssh -L PORT:localhost:PORT HOST"
    else:
        where = f"every network {options.host} is on; anyone with this address, token included, gets the app"
    print(
        f"scalefront: serving the UI at {url} ({where}); files written from the browser go to "
        f"{options.export_dir}; at most {options.max_sessions} sessions; Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )

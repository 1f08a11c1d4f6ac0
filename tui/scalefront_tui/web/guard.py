"""Who may open a session of the served UI.

A browser on the user's machine will connect to any address a web page names, so a server on 127.0.0.1 is not
private by itself: any page the user visits can open a WebSocket to it (cross-site WebSocket hijacking), and a
page whose host name is re-pointed at 127.0.0.1 (DNS rebinding) sends its own name as Host. Three checks close
that, each a pure function of the request's headers:

- Host must name this server (when it listens on loopback): a rebound name is refused.
- Origin, which browsers always send on a WebSocket and on cross-site requests, must be the page's own origin
  (the Host it addressed, or the public URL behind a proxy): another site's page is refused. A request with no
  Origin comes from a program, not a web page, and only the token (if any) applies.
- A token (random, printed with the address) when the server listens beyond loopback, or when asked for with
  --token: it travels in the page's address (``/?token=...``) and the WebSocket's path (``/ws/TOKEN``).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from urllib.parse import urlsplit

#: Host names that mean this machine only.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def is_loopback(host: str) -> bool:
    return host.lower() in LOOPBACK_HOSTS or host.startswith("127.")


def _netloc(host: str, port: int) -> str:
    """`host:port` as it appears in a Host header (IPv6 in brackets)."""
    name = f"[{host}]" if ":" in host else host
    return f"{name}:{port}"


@dataclass(frozen=True)
class Gate:
    """The checks one server applies. `hosts` are the Host header values accepted (lower case), or None to accept
    any (a server reachable beyond loopback, where the token guards); `origins` are extra accepted Origins (the
    public URL's); `token` is required when not None."""

    hosts: frozenset[str] | None
    origins: frozenset[str]
    token: str | None

    @classmethod
    def for_server(cls, host: str, port: int, token: str | None, public_url: str | None) -> Gate:
        origins: set[str] = set()
        extra_hosts: set[str] = set()
        if public_url:
            parts = urlsplit(public_url)
            origins.add(f"{parts.scheme}://{parts.netloc}".lower())
            extra_hosts.add(parts.netloc.lower())
        if not is_loopback(host):
            return cls(None, frozenset(origins), token)
        names = {"127.0.0.1", "localhost", "::1", host.lower()}
        hosts = {_netloc(n, port) for n in names}
        if port == 80:
            hosts |= {_netloc(n, port).rsplit(":", 1)[0] for n in names}
        return cls(frozenset(hosts | extra_hosts), frozenset(origins), token)

    def refusal(self, host_header: str | None, origin: str | None, token: str | None) -> str | None:
        """Why a request is refused, or None when it may proceed."""
        host = (host_header or "").lower()
        if self.hosts is not None and host not in self.hosts:
            return f"this server does not answer to the host {host_header!r}"
        if origin is not None and not self._same_origin(origin.lower(), host):
            return f"pages from {origin} may not open sessions here"
        if self.token is not None and not hmac.compare_digest((token or "").encode(), self.token.encode()):
            return "a valid token is required: open the address the server printed (it ends with ?token=...)"
        return None

    def _same_origin(self, origin: str, host: str) -> bool:
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and bool(host) and parts.netloc == host

"""The page a browser loads: textual-serve's terminal (xterm.js and its Textual protocol, served from the
package's own static files) with the font shipped in the package instead of one fetched from Google Fonts, so
the UI works on a network without Internet access."""

from __future__ import annotations

from html import escape

_PAGE = """<!DOCTYPE html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>{title}</title>
    <link rel="stylesheet" href="{static}css/xterm.css" />
    <script src="{static}js/textual.js"></script>
    <style>
      @font-face {{
        font-family: "Roboto Mono";
        src: url("{static}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
        font-style: normal;
      }}
      @font-face {{
        font-family: "Roboto Mono";
        src: url("{static}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype");
        font-style: italic;
      }}
      html, body {{ margin: 0; height: 100%; background: #0c181f; }}
      .textual-terminal {{ width: 100vw; height: 100vh; }}
      .intro {{
        position: absolute; inset: 0; display: flex; align-items: center; justify-content: center;
        color: rgba(255, 255, 255, 0.9); font-family: "Roboto Mono", monospace; font-size: 16px;
      }}
      body.-first-byte .intro {{ display: none; }}
      .closed {{ display: none; }}
      body.-closed .closed {{
        position: absolute; inset: 0; display: flex; flex-direction: column; align-items: center;
        justify-content: center; background: #0c181f; color: white; font-family: "Roboto Mono", monospace;
      }}
      body.-closed .closed button {{ margin: 16px; padding: 12px 28px; font-family: inherit; }}
    </style>
  </head>
  <body>
    <div class="intro">{title}: starting…</div>
    <div class="closed">
      <div>Session ended.</div>
      <button type="button" onclick="window.location.reload()">Start again</button>
    </div>
    <div id="terminal" class="textual-terminal"
         data-session-websocket-url="{websocket}" data-font-size="{font_size}"></div>
    <script>
      // The WebSocket address follows the page's own (scheme, host and port), so a proxy or a tunnel works.
      const terminal = document.getElementById("terminal");
      const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
      const path = terminal.dataset.sessionWebsocketUrl;
      terminal.dataset.sessionWebsocketUrl = scheme + "//" + window.location.host + path;
    </script>
  </body>
</html>
"""


def render_page(*, title: str, static_url: str, websocket_path: str, font_size: str) -> str:
    """The page's HTML; `websocket_path` is the session's path on this server (``/ws`` or ``/ws/TOKEN``)."""
    try:
        size = min(max(int(font_size), 8), 48)
    except ValueError:
        size = 16
    return _PAGE.format(
        title=escape(title), static=escape(static_url), websocket=escape(websocket_path), font_size=size
    )

"""One app process per browser session, and nothing left behind.

textual-serve starts each session's app through a shell and, to stop it, asks it to quit and waits for it
without a bound, so an app busy in a sweep (or one whose page closed before it started) can outlive its session
and the server. Here the app is started directly (no shell), in its own process group, and stopping it is
bounded: ask it to quit, then SIGTERM its group, then SIGKILL; the server stops every session on shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from asyncio.subprocess import PIPE, Process
from pathlib import Path
from typing import Any

from textual_serve.app_service import AppService

#: Seconds an app has to quit on request, then to end after SIGTERM, before the next step.
QUIT_GRACE_S = 2.0
TERM_GRACE_S = 2.0


class AppProcess(AppService):
    """textual-serve's app service, with the process started without a shell in its own group and a bounded
    stop."""

    def __init__(self, argv: list[str], cwd: Path, **kwargs: Any) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv
        self.cwd = cwd

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=environment,
            cwd=self.cwd,
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def stop(self) -> None:
        """End the app within QUIT_GRACE_S + TERM_GRACE_S seconds, whatever it is doing."""
        task, self._task = self._task, None
        if task is None:
            return
        with contextlib.suppress(Exception):
            await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        with contextlib.suppress(Exception):
            await self.send_meta({"type": "quit"})
        for sig, grace in ((None, QUIT_GRACE_S), (signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, None)):
            if sig is not None:
                self._signal_group(sig)
            if await self._ended(grace):
                break
        task.cancel()
        with contextlib.suppress(BaseException):
            await task

    async def _ended(self, grace_s: float | None) -> bool:
        process = self._process
        if process is None:
            return True
        try:
            await asyncio.wait_for(process.wait(), grace_s)
        except TimeoutError:
            return False
        return True

    def _signal_group(self, sig: signal.Signals) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)

"""A browser session of the lab's web server, apart from textual-serve: the limits a server is started with, the
room left for one more session (how many, how much disk), the page's messages forwarded to its app, and the end
of a session, on a reload, when idle, or at shutdown. serve_server.py, which overrides textual-serve, calls these.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService

from tui_lab.analysis.format import fmt_bytes
from tui_lab.cli.serve_access import terminal_size
from tui_lab.served import folder_bytes

log = logging.getLogger("tui-lab.serve")


@dataclass
class Limits:
    root: Path
    max_sessions: int
    idle_s: float
    quota: int
    origins: frozenset[str]  # scheme://host:port, lower case
    download: bool = False
    download_any: bool = False
    allow_pickle: bool = False
    from_hf: str | None = None
    memory: int = 0  # bytes of data each app process may hold (RLIMIT_DATA); 0: no limit
    total_quota: int = 0  # bytes the sessions' folders may hold together; 0: no limit


@dataclass
class Session:
    token: str
    service: AppService
    websocket: web.WebSocketResponse
    last_seen: float = field(default_factory=time.monotonic)


def no_room(limits: Limits, sessions: dict[str, Session], token: str | None = None) -> str | None:
    """Why one more session (or `token`'s, back after a reload) cannot start: too many live, or no new folder
    while the sessions' folders hold `total_quota`; None when it can."""
    live = [t for t in sessions if t != token]
    if len(live) >= limits.max_sessions:
        return (f"tui-lab is full: {len(live)} of {limits.max_sessions} sessions are in use "
                "(serve --max-sessions); close a tab or try again later")
    folders = limits.root / "sessions"
    if limits.total_quota and (token is None or not (folders / token).is_dir()):  # a new folder
        held = folder_bytes(folders)
        if held >= limits.total_quota:
            return (f"tui-lab is full: the sessions' folders hold {fmt_bytes(held)} of the "
                    f"{fmt_bytes(limits.total_quota)} they share (serve --total-quota-mb); no new session "
                    "until the operator clears some")
    return None


async def forward_messages(session: Session) -> None:
    """The page's keys, resizes and pings to its app until the websocket closes; anything else is dropped."""
    service = session.service
    async for message in session.websocket:
        if message.type != WSMsgType.TEXT:
            continue
        session.last_seen = time.monotonic()
        try:
            kind, data = message.json()[:2]
        except (ValueError, TypeError):
            continue
        if kind == "stdin" and isinstance(data, str):
            await service.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            await service.set_terminal_size(*terminal_size(data.get("width"), data.get("height")))
        elif kind == "ping":
            await session.websocket.send_json(["pong", data])


async def end_session(session: Session) -> None:
    await session.service.stop()
    with contextlib.suppress(Exception):
        await session.websocket.close()


async def close_idle(limits: Limits, sessions: dict[str, Session]) -> None:
    """Forever: a session whose page sent nothing for `idle_s` is ended (its app saves its model)."""
    while True:
        await asyncio.sleep(min(5.0, max(limits.idle_s / 4, 0.2)))
        now = time.monotonic()
        for token, session in list(sessions.items()):
            if now - session.last_seen > limits.idle_s and sessions.get(token) is session:
                log.info("closing idle session %s", token[:6])
                del sessions[token]
                await end_session(session)

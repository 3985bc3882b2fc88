"""The lab's web server: textual-serve 1.1 with what a classroom needs around it.

textual-serve has no origin check, no session cap and no idle timeout, starts one `sh -c` process per websocket
in the server's own process group, and its `stop()` waits without a timeout. `LabServer` keeps its page, its
static files and its app protocol (`AppService`) and adds:
- sessions named by a token in the URL (`/s/<token>`, websocket `/ws/<token>`): a reload finds its folder again;
- a Host check on every request (DNS rebinding) and an Origin allowlist on the websocket (a page elsewhere
  cannot drive the lab); a websocket without an Origin only from loopback;
- at most `max_sessions` at once (`GET /` answers 503 with the reason when full), an idle timeout;
- each app in its own process group, ended within 5 s of its tab closing (asked to quit first, so it saves its
  live model), and every session ended the same way within 5 s of SIGTERM or Ctrl-C.
It overrides textual-serve's handlers and `AppService._open_app_process`: pyproject pins textual-serve to 1.1.x
and tests/test_serve.py checks the pin.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import re
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from tui_lab.served import ENV, ServedPolicy

log = logging.getLogger("tui-lab.serve")
TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")
QUIT_WAIT_S = 2.5  # the app's own quit (it saves its live model, its run keeps its last step) before SIGTERM
TERM_WAIT_S = 1.0  # after SIGTERM, before SIGKILL
KILL_WAIT_S = 0.5  # after SIGKILL: 4 s in all from the quit asked, counted from one clock; the server's own exit
# takes the rest of the 5 s promised (SIGTERM with two runs training took 5.15 s when the phases added up to 5.5 s)


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


@dataclass
class Session:
    token: str
    service: AppService
    websocket: web.WebSocketResponse
    last_seen: float = field(default_factory=time.monotonic)


def origin_of(url: str) -> str:
    """scheme://host:port of a URL, lower case, the port always written (so :80 and no port compare equal)."""
    parts = urlsplit(url.strip())
    scheme = (parts.scheme or "http").lower()
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if scheme in ("https", "wss") else 80)
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


def allowed_origins(port: int, public_url: str, extra: list[str]) -> frozenset[str]:
    loopback = [f"http://{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]")]
    return frozenset(origin_of(url) for url in (*loopback, public_url, *extra))


def is_loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


class LabAppService(AppService):
    """One browser session's app: its own process group (so it can be ended whole) and its policy."""

    def __init__(self, *args, policy: ServedPolicy, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.policy = policy

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        return super()._build_environment(width, height) | {ENV: self.policy.to_env()}

    async def _open_app_process(self, width: int = 80, height: int = 24):
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", f"exec {self.command}", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=environment, cwd=self.policy.folder, start_new_session=True)
        self._stdin = process.stdin
        return process

    async def stop(self) -> None:
        """Quit (the app saves its live model, a run its last step), then end the process group: every phase ends
        at a time fixed from the start, so the whole takes at most QUIT + TERM + KILL seconds, the quit message's
        own wait included."""
        process, task = self._process, self._task
        if process is None or task is None:
            return
        self._task = None
        end = time.monotonic()
        with contextlib.suppress(Exception):
            await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
            await asyncio.wait_for(self.send_meta({"type": "quit"}), 0.5)
        for signum, wait in ((None, QUIT_WAIT_S), (signal.SIGTERM, TERM_WAIT_S), (signal.SIGKILL, KILL_WAIT_S)):
            if signum is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signum)
            end += wait
            try:
                await asyncio.wait_for(process.wait(), max(end - time.monotonic(), 0.05))
                break
            except TimeoutError:
                continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # anything the app started and left behind
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


class LabServer(Server):
    def __init__(self, command: str, host: str, port: int, url: str, limits: Limits, banner: list[str]) -> None:
        super().__init__(command, host=host, port=port, title="tui-lab", public_url=url)
        self.limits, self.banner = limits, banner
        self.sessions: dict[str, Session] = {}
        self.hosts = frozenset(urlsplit(o).netloc for o in limits.origins)

    # -- the web application ------------------------------------------------------------------------
    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        aiohttp_jinja2.setup(app, loader=__import__("jinja2").FileSystemLoader(self.templates_path))
        app.add_routes([
            web.get("/", self.handle_new, name="index"),
            web.get("/s/{token}", self.handle_page, name="page"),
            web.get("/ws/{token}", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, name="static"),
        ])
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler):
        """Host on every request, Origin where a browser sends one: a page elsewhere gets no session."""
        host = _with_port(request.host, urlsplit(self.public_url).scheme)
        if host not in self.hosts:
            return web.Response(status=421, text=f"tui-lab: this server does not answer to the host {request.host!r}")
        origin = request.headers.get("Origin")
        if origin is not None and origin_of(origin) not in self.limits.origins:
            log.warning("refused origin %s", origin)
            return web.Response(status=403, text=f"tui-lab: origin {origin!r} is not allowed (serve --allow-origin)")
        if origin is None and request.path.startswith("/ws/") and not is_loopback(request.remote):
            return web.Response(status=403, text="tui-lab: a websocket without an Origin is taken from loopback only")
        return await handler(request)

    def _full(self, token: str | None = None) -> str | None:
        live = [t for t in self.sessions if t != token]
        if len(live) >= self.limits.max_sessions:
            return (f"tui-lab is full: {len(live)} of {self.limits.max_sessions} sessions are in use "
                    "(serve --max-sessions); close a tab or try again later")
        return None

    async def handle_new(self, request: web.Request) -> web.StreamResponse:
        reason = self._full()
        if reason:
            return web.Response(status=503, text=reason)
        raise web.HTTPFound(f"/s/{secrets.token_urlsafe(18)}")

    async def handle_page(self, request: web.Request) -> web.StreamResponse:
        token = self._token(request)
        reason = self._full(token)
        if reason:
            return web.Response(status=503, text=reason)
        base = self.public_url
        ws = ("wss:" if base.startswith("https") else "ws:") + base.split(":", 1)[1] + f"/ws/{token}"
        context = {"font_size": to_int(request.query.get("fontsize", "16"), 16), "app_websocket_url": ws,
                   "config": {"static": {"url": f"{base}/static/"}}, "application": {"name": self.title}}
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    @staticmethod
    def _token(request: web.Request) -> str:
        token = request.match_info["token"]
        if not TOKEN.fullmatch(token):
            raise web.HTTPNotFound(text="tui-lab: no such session (open the server's address for a new one)")
        return token

    # -- sessions -----------------------------------------------------------------------------------
    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        token = self._token(request)
        if token in self.sessions:  # a reload: the old tab's app ends (saving its model) before the new one starts
            await self._end(self.sessions.pop(token))
        reason = self._full(token)
        if reason:
            return web.Response(status=503, text=reason)
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        folder = self.limits.root / "sessions" / token
        folder.mkdir(parents=True, exist_ok=True)
        lim = self.limits
        policy = ServedPolicy(str(folder), lim.download, lim.download_any, lim.allow_pickle, lim.from_hf, lim.quota,
                              train_slots=os.cpu_count() or 1, root=str(lim.root))
        service = LabAppService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                close=websocket.close, download_manager=self.download_manager, policy=policy)
        session = self.sessions[token] = Session(token, service, websocket)
        try:
            await service.start(to_int(request.query.get("width", "80"), 80),
                                to_int(request.query.get("height", "24"), 24))
            await self._messages(session)
        except asyncio.CancelledError:
            pass
        finally:
            if self.sessions.get(token) is session:
                del self.sessions[token]
            await service.stop()
            with contextlib.suppress(Exception):
                await websocket.close()
        return websocket

    async def _messages(self, session: Session) -> None:
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
                await service.set_terminal_size(to_int(str(data.get("width")), 80), to_int(str(data.get("height")), 24))
            elif kind == "ping":
                await session.websocket.send_json(["pong", data])

    async def _end(self, session: Session) -> None:
        await session.service.stop()
        with contextlib.suppress(Exception):
            await session.websocket.close()

    async def _watch_idle(self) -> None:
        while True:
            await asyncio.sleep(min(5.0, max(self.limits.idle_s / 4, 0.2)))
            now = time.monotonic()
            for token, session in list(self.sessions.items()):
                if now - session.last_seen > self.limits.idle_s and self.sessions.get(token) is session:
                    log.info("closing idle session %s", token[:6])
                    del self.sessions[token]
                    await self._end(session)

    async def on_startup(self, app: web.Application) -> None:
        for line in self.banner:
            print(line, flush=True)
        app["idle"] = asyncio.create_task(self._watch_idle())

    async def on_shutdown(self, app: web.Application) -> None:
        """SIGTERM or Ctrl-C: every session asked to quit (saving its model) and ended, all at once, within 5 s."""
        app["idle"].cancel()
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(self._end(s) for s in sessions), return_exceptions=True)

    def serve(self, debug: bool = False) -> None:
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self.request_exit)
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
                    print=lambda *args: None, shutdown_timeout=0.5)


def _with_port(host: str, scheme: str) -> str:
    """A Host header with its port written out (a browser leaves out :80 and :443)."""
    parts = urlsplit(f"//{host}")
    name = (parts.hostname or "").lower()
    name = f"[{name}]" if ":" in name else name
    try:
        port = parts.port
    except ValueError:
        return ""
    return f"{name}:{port or (443 if scheme == 'https' else 80)}"

"""The lab's web server: textual-serve 1.1 with what a classroom needs around it.

textual-serve has no origin check, no session cap and no idle timeout, starts one `sh -c` process per websocket
in the server's own process group, and its `stop()` waits without a timeout. `LabServer` keeps its page, its
static files and its app protocol (`AppService`) and adds:
- sessions named by a token in the URL (`/s/<token>`, websocket `/ws/<token>`): a reload finds its folder again;
  tokens are issued by the server only (signed with a key kept in the root), an unknown one is refused;
- a Host check on every request (DNS rebinding) and an Origin allowlist on the websocket (a page elsewhere
  cannot drive the lab); a websocket without an Origin only from loopback;
- at most `max_sessions` at once (`GET /` answers 503 with the reason when full), and no new session's folder
  once the sessions' folders together hold `total_quota`; an idle timeout;
- a terminal size a page may ask for bounded (MAX_WIDTH x MAX_HEIGHT, clamped), and each app's memory bounded
  (RLIMIT_DATA, set in the child before exec): an app that ends on its own leaves its page a one-line reason;
- its own page (`serve_page.html`): the font from the lab's static files, no third-party host named;
- each app in its own process group, ended within 5 s of its tab closing (asked to quit first, so it saves its
  live model), and every session ended the same way within 5 s of SIGTERM or Ctrl-C.
It overrides textual-serve's handlers and `AppService._open_app_process` (all of its overrides are here):
pyproject pins textual-serve to 1.1.x and tests/processes/test_serve.py checks the pin. Who may connect and with
what size is serve_access.py; how an app ends and what its page is told, serve_ending.py; the limits, the room
for a session, its messages and its end, serve_sessions.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from tui_lab.cli.serve_access import TOKEN, Tokens, is_loopback, origin_of, terminal_size, with_port
from tui_lab.cli.serve_ending import StderrTail, ended_reason, limit_memory
from tui_lab.cli.serve_sessions import Limits, Session, close_idle, end_session, forward_messages, no_room
from tui_lab.served import ENV, ServedPolicy

log = logging.getLogger("tui-lab.serve")
QUIT_WAIT_S = 2.5  # the app's own quit (it saves its live model, its run keeps its last step) before SIGTERM
TERM_WAIT_S = 1.0  # after SIGTERM, before SIGKILL
KILL_WAIT_S = 0.5  # after SIGKILL: 4 s in all from the quit asked, counted from one clock; the server's own exit
# takes the rest of the 5 s promised (SIGTERM with two runs training took 5.15 s when the phases added up to 5.5 s)
PAGE = Path(__file__).with_name("serve_page.html")


class LabAppService(AppService):
    """One browser session's app: its own process group (so it can be ended whole) and its policy."""

    def __init__(self, *args, policy: ServedPolicy, memory: int = 0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.policy, self.memory = policy, memory
        self.stderr: StderrTail | None = None
        self._closing: asyncio.Task | None = None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        return super()._build_environment(width, height) | {ENV: self.policy.to_env()}

    async def _open_app_process(self, width: int = 80, height: int = 24):
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", f"exec {self.command}", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=environment, cwd=self.policy.folder, start_new_session=True,
            preexec_fn=limit_memory(self.memory))
        process.stderr = self.stderr = StderrTail(process.stderr)
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        """textual-serve's reading loop; then the page is closed, with why if the app failed (textual-serve left a
        dead terminal open when an app died without saying "exit")."""
        await super().run()
        if self._closing is None:  # else its "exit" already started the closing
            await self._ended()

    async def on_meta(self, data: bytes) -> None:
        """The app's "exit" closes its page once its process has ended, so that the page can be told how it ended
        (an app past its memory limit fails on its way out); one that lingers is ended as stop() ends one."""
        if json.loads(data).get("type") != "exit":
            await super().on_meta(data)
        elif self._closing is None:
            self._closing = asyncio.create_task(self._ended())

    async def _ended(self) -> None:
        process = self._process
        if self._task is not None and process is not None:  # not stop(): the app ended on its own
            # Said "exit" (or its output ended) but goes on: ended as stop() ends one, so that its page hears why.
            for signum, wait in ((None, QUIT_WAIT_S), (signal.SIGTERM, TERM_WAIT_S), (signal.SIGKILL, 1.0)):
                if signum is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, signum)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), wait)
                    break
            reason = ended_reason(process.returncode, self.stderr.tail if self.stderr else b"", self.memory)
            if reason:
                log.warning("%s", reason)
                with contextlib.suppress(Exception):
                    await self.remote_write_str(json.dumps(["reason", reason]))
        with contextlib.suppress(Exception):
            await self.remote_close()

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
        self.tokens = Tokens(limits.root)

    # -- the web application ------------------------------------------------------------------------
    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        aiohttp_jinja2.setup(app, loader=__import__("jinja2").FileSystemLoader(PAGE.parent))
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
        host = with_port(request.host, urlsplit(self.public_url).scheme)
        if host not in self.hosts:
            return web.Response(status=421, text=f"tui-lab: this server does not answer to the host {request.host!r}")
        origin = request.headers.get("Origin")
        if origin is not None and origin_of(origin) not in self.limits.origins:
            log.warning("refused origin %s", origin)
            return web.Response(status=403, text=f"tui-lab: origin {origin!r} is not allowed (serve --allow-origin)")
        if origin is None and request.path.startswith("/ws/") and not is_loopback(request.remote):
            return web.Response(status=403, text="tui-lab: a websocket without an Origin is taken from loopback only")
        return await handler(request)

    async def handle_new(self, request: web.Request) -> web.StreamResponse:
        reason = no_room(self.limits, self.sessions)
        if reason:
            return web.Response(status=503, text=reason)
        raise web.HTTPFound(f"/s/{self.tokens.issue()}")

    async def handle_page(self, request: web.Request) -> web.StreamResponse:
        token = self._token(request)
        reason = no_room(self.limits, self.sessions, token)
        if reason:
            return web.Response(status=503, text=reason)
        base = self.public_url
        ws = ("wss:" if base.startswith("https") else "ws:") + base.split(":", 1)[1] + f"/ws/{token}"
        context = {"font_size": max(6, min(to_int(request.query.get("fontsize", "16"), 16), 64)),
                   "app_websocket_url": ws,
                   "config": {"static": {"url": f"{base}/static/"}}, "application": {"name": self.title}}
        return aiohttp_jinja2.render_template(PAGE.name, request, context)

    def _token(self, request: web.Request) -> str:
        """A token this server issued (or one whose folder it made before): a made-up one is refused."""
        token = request.match_info["token"]
        if not (TOKEN.fullmatch(token) and (self.tokens.valid(token) or
                                            (self.limits.root / "sessions" / token).is_dir())):
            raise web.HTTPNotFound(text="tui-lab: no such session (the server issues them: open its address for a "
                                        "new one)")
        return token

    # -- sessions -----------------------------------------------------------------------------------
    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        token = self._token(request)
        if token in self.sessions:  # a reload: the old tab's app ends (saving its model) before the new one starts
            await end_session(self.sessions.pop(token))
        reason = no_room(self.limits, self.sessions, token)
        if reason:
            return web.Response(status=503, text=reason)
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        folder = self.limits.root / "sessions" / token
        folder.mkdir(parents=True, exist_ok=True)
        lim = self.limits
        policy = ServedPolicy(str(folder), lim.download, lim.download_any, lim.allow_pickle, lim.from_hf, lim.quota,
                              train_slots=os.cpu_count() or 1, root=str(lim.root), total_quota=lim.total_quota)
        service = LabAppService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                close=websocket.close, download_manager=self.download_manager, policy=policy,
                                memory=lim.memory)
        session = self.sessions[token] = Session(token, service, websocket)
        try:
            await service.start(*terminal_size(request.query.get("width"), request.query.get("height")))
            await forward_messages(session)
        except asyncio.CancelledError:
            pass
        finally:
            if self.sessions.get(token) is session:
                del self.sessions[token]
            await service.stop()
            with contextlib.suppress(Exception):
                await websocket.close()
        return websocket

    async def on_startup(self, app: web.Application) -> None:
        for line in self.banner:
            print(line, flush=True)
        app["idle"] = asyncio.create_task(close_idle(self.limits, self.sessions))

    async def on_shutdown(self, app: web.Application) -> None:
        """SIGTERM or Ctrl-C: every session asked to quit (saving its model) and ended, all at once, within 5 s."""
        app["idle"].cancel()
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(end_session(s) for s in sessions), return_exceptions=True)

    def serve(self, debug: bool = False) -> None:
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self.request_exit)
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
                    print=lambda *args: None, shutdown_timeout=0.5)



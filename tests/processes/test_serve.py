"""`tui-lab serve`: the page, its websocket and (where installed) headless Chromium show the first screen.

Each test starts the real server on a free localhost port in its own process group and ends that
group afterwards, so neither the server nor an app process it started outlives the test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from serve_support import ENV, ROOT, app_pids, end_group, fetch_page, free_port, group_members, read_until, served

from tui_lab.analysis import count_params
from tui_lab.cli import main
from tui_lab.cli.serve import app_argv, app_command, public_url
from tui_lab.presets import load_preset

COUNT = f"{count_params(load_preset('gpt2-toy')).total:,}"  # what the first screen shows, computed here


@pytest.mark.timeout(240)
async def test_page_and_websocket_stream_the_first_screen_and_take_keys():
    with served("--preset", "gpt2-toy") as (url, proc):
        async with aiohttp.ClientSession() as session:
            page = await fetch_page(session, url)
            assert "tui-lab" in page
            ws_url = re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)
            # What textual.js does on open: connect with its size, send the size, then a ping.
            async with session.ws_connect(f"{ws_url}?width=80&height=24") as ws:
                await ws.send_json(["resize", {"width": 80, "height": 24}])
                await ws.send_json(["ping", "1"])
                screen, texts = await read_until(ws, COUNT, timeout=60)
                assert "gpt2-toy" in screen and '["pong", "1"]' in texts
                await ws.send_json(["stdin", "2"])  # a key press as xterm.js forwards it: the Attention view
                await read_until(ws, "masked self-attention", timeout=120)
        if Path("/proc/self/stat").exists():  # closing the tab ends its app process, within 5 s
            deadline = time.monotonic() + 5
            while group_members(proc.pid) - {proc.pid} and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            assert group_members(proc.pid) == {proc.pid}


@pytest.mark.parametrize("flags,needle", [
    (["--device", "tpu"], "device"),
    (["--preset", "nope"], "unknown preset"),
    (["--checkpoint", "no/such/folder"], "not a folder"),
    (["--preset", "gpt2-toy", "--from-hf", "."], "choose one of"),
    (["--port", "0"], "--port (0)"),
    (["--port", "eighty"], "--port"),
    (["--host", "192.0.2.1"], "cannot be used"),  # TEST-NET: never an address of this machine
    (["--download"], "--download only goes with --from-hf"),
    (["--preset", "gpt2-toy", "--allow-pickle"], "--allow-pickle only goes with --from-hf"),
])
def test_bad_flags_are_one_line_before_anything_starts(flags, needle, capsys):
    assert main(["serve", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_a_port_in_use_is_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["serve", "--port", str(taken.getsockname()[1])]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot be used" in err and len(err.splitlines()) == 1


def test_the_app_command_survives_a_shell(tmp_path):
    weird = tmp_path / "it's a \"run\" $(touch pwned) `touch pwned2`; echo"
    words = ["--checkpoint", str(weird)]
    command = app_command(words)
    assert shlex.split(command) == [sys.executable, "-m", "tui_lab.cli", *words]
    out = subprocess.run(command, shell=True, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    # The shell passed the name through untouched: the app refused it as a folder, and nothing ran.
    assert out.returncode == 2 and "is not a folder" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.glob("pwned*"))
    weird.mkdir()
    args = argparse.Namespace(preset=None, device="cpu", checkpoint=os.path.relpath(weird), from_hf=None)
    assert app_argv(args) == ["--device", "cpu", "--checkpoint", str(weird.resolve())]  # cwd-independent


def test_download_and_allow_pickle_reach_the_served_app_command(monkeypatch, capsys):
    """`serve --from-hf gpt2 --download --allow-pickle`: every browser session's app gets both flags."""
    from tui_lab.cli import launch, serve

    built = {}

    def record(command, args, url, limits, banner):  # the server that would start, with the command it would run
        built["command"], built["limits"] = command, limits
        return 0

    monkeypatch.setattr(serve, "_serve", record)
    monkeypatch.setattr(serve, "check_app_flags", lambda argv: launch.parser().parse_args(argv))  # no cache look-up
    flags = ["--from-hf", "gpt2", "--download", "--allow-pickle", "--device", "cpu"]
    assert main(["serve", "--port", str(free_port()), *flags]) == 0
    words = shlex.split(built["command"])
    assert words[:3] == [sys.executable, "-m", "tui_lab.cli"]
    assert words[3:] == ["--device", "cpu", "--from-hf", "gpt2", "--download", "--allow-pickle"]
    app = launch.parser().parse_args(words[3:])  # what the app process parses
    assert app.from_hf == "gpt2" and app.download and app.allow_pickle
    limits = built["limits"]  # and the policy every session's app is handed (it binds the page)
    assert limits.download and limits.allow_pickle and limits.from_hf == "gpt2" and not limits.download_any
    assert main(["serve", "--port", str(free_port()), "--from-hf", "gpt2"]) == 0
    assert "--download" not in shlex.split(built["command"])  # without the flag no session downloads at all
    assert not built["limits"].download  # (the served policy refuses it: the page cannot widen the operator's choice)
    args = argparse.Namespace(preset=None, device=None, checkpoint=None, from_hf="gpt2")  # no hub flags at all
    assert app_argv(args) == ["--from-hf", "gpt2"]


# Installed here with apt's `chromium`; CI need not have it.
HOOK = """Object.defineProperty(Object.prototype, 'terminal', {configurable: true, set(value) {
  window.__labTerminal = value;  // the page's xterm.js Terminal, kept where the test can read its screen
  Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true, enumerable: true});
}});"""
SCREEN = """(() => { const t = window.__labTerminal; if (!t) return '';
  const rows = [];
  for (let y = 0; y < t.rows; y++) {
    const line = t.buffer.active.getLine(y);
    rows.push(line ? line.translateToString(true) : '');
  }
  return rows.join('\\n'); })()"""


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs a chromium binary on PATH")
@pytest.mark.timeout(240)
async def test_headless_chromium_shows_the_first_screen(tmp_path):
    # xterm.js paints on a canvas, so the DOM holds no text: read the terminal's own buffer over CDP.
    sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium refuses to run as root otherwise
    cmd = ["chromium", "--headless", "--disable-gpu", *sandbox, "--remote-debugging-port=0",
           f"--user-data-dir={tmp_path}", "--window-size=1280,800", "about:blank"]
    with served("--preset", "gpt2-toy") as (url, _):
        browser = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            screen = await _screen_in_chromium(tmp_path / "DevToolsActivePort", url, COUNT, timeout=120)
        finally:
            end_group(browser)
    assert COUNT in screen and "gpt2-toy" in screen and "Architecture" in screen


async def _screen_in_chromium(port_file: Path, url: str, needle: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while not (port_file.exists() and port_file.read_text().strip()):
        assert time.monotonic() < deadline, "chromium did not start"
        await asyncio.sleep(0.1)
    port = int(port_file.read_text().split()[0])
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
            page = next(t for t in await response.json() if t["type"] == "page")
        async with session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as cdp:
            calls = iter(range(1, 10**6))

            async def call(method: str, **params):
                call_id = next(calls)
                await cdp.send_json({"id": call_id, "method": method, "params": params})
                while True:
                    reply = await cdp.receive_json(timeout=30)
                    if reply.get("id") == call_id:
                        return reply.get("result", {})

            await call("Page.enable")  # without it the hook below never ran here
            await call("Page.addScriptToEvaluateOnNewDocument", source=HOOK)
            await call("Page.navigate", url=url)
            screen = ""
            while needle not in screen and time.monotonic() < deadline:
                await asyncio.sleep(0.25)
                screen = (await call("Runtime.evaluate", expression=SCREEN, returnByValue=True))["result"]["value"]
            return screen


def test_the_page_gets_an_address_a_browser_can_reach():
    assert public_url("127.0.0.1", 8000, None) == "http://127.0.0.1:8000"
    assert public_url("::1", 8001, None) == "http://[::1]:8001"
    # 0.0.0.0 is where the server listens, never where a browser elsewhere can connect its websocket
    assert public_url("0.0.0.0", 8000, None) == f"http://{socket.gethostname()}:8000"
    assert public_url("0.0.0.0", 8000, "https://lab.example.org/") == "https://lab.example.org"




async def wait_until(check, timeout: float) -> float:
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, f"not within {timeout} s"
        await asyncio.sleep(0.1)
    return time.monotonic() - start


@pytest.mark.timeout(240)
async def test_a_served_session_is_a_guest(tmp_path):
    """Forged Origin and Host get nothing; sessions are capped (503 with the reason); a tab's folder is named by its
    URL's token, found again on reload; a closed tab's app ends within 5 s; an idle one is closed after saving its
    live model; SIGTERM ends the server and every session within 5 s."""
    root = tmp_path / "root"
    with served("--root", str(root), "--max-sessions", "1", "--idle-minutes", "0.25") as (url, proc):
        origin = {"Origin": url}
        async with aiohttp.ClientSession() as session:
            page = await fetch_page(session, url)
            ws_url = re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)
            token = ws_url.rsplit("/", 1)[1]
            async with session.get(url, headers={"Host": "evil.example"}) as response:
                assert response.status == 421  # DNS rebinding: a name the server was not given
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(f"{ws_url}?width=80&height=24", headers={"Origin": "http://evil.example"})
            assert refused.value.status == 403 and not app_pids(proc)  # no app started for a foreign page
            async with session.ws_connect(f"{ws_url}?width=80&height=24", headers=origin) as ws:
                await ws.send_json(["resize", {"width": 80, "height": 24}])
                await read_until(ws, "· cpu", timeout=90)  # the header names the live model once it is built
                (pid,) = app_pids(proc)
                folder = root / "sessions" / token
                assert Path(f"/proc/{pid}/cwd").resolve() == folder.resolve()  # the app works in its own folder
                async with session.get(url, allow_redirects=False) as full:
                    assert full.status == 503 and "1 of 1 sessions are in use" in await full.text()
            took = await wait_until(lambda: not app_pids(proc), timeout=5)  # the closed tab's app is gone
            assert took < 5
            assert (folder / "autosave" / "model.safetensors").is_file()  # it saved its live model on the way out
            (folder / "autosave").rename(folder / "kept")
            async with session.ws_connect(f"{ws_url}?width=80&height=24", headers=origin) as ws:  # a reload
                await read_until(ws, "· cpu", timeout=90)
                (pid,) = app_pids(proc)
                assert Path(f"/proc/{pid}/cwd").resolve() == folder.resolve() and (folder / "kept").is_dir()
                # idle for 15 s: the server closes it, after the app saved its live model
                closed = await ws.receive(timeout=40)
                while closed.type not in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED,
                                          aiohttp.WSMsgType.CLOSING):
                    closed = await ws.receive(timeout=40)
            assert (folder / "autosave" / "model.safetensors").is_file()
            await wait_until(lambda: not app_pids(proc), timeout=5)
            async with session.ws_connect(f"{ws_url}?width=80&height=24", headers=origin) as ws:
                await read_until(ws, "Architecture", timeout=90)
                assert app_pids(proc)
                proc.send_signal(signal.SIGTERM)
                start = time.monotonic()
                proc.wait(timeout=10)
                assert time.monotonic() - start < 5
        assert group_members(proc.pid) == set()


def test_serve_limits_are_said_at_start_and_checked(monkeypatch, capsys):
    from tui_lab.cli import serve

    assert serve.default_max_sessions(free=10 * 400 * 1024**2, cores=2) == 4  # 2 per core
    assert serve.default_max_sessions(free=3 * 400 * 1024**2, cores=8) == 3  # memory
    assert serve.default_max_sessions(free=100, cores=8) == 1  # at least one
    for flags, needle in ((["--max-sessions", "0"], "--max-sessions (0)"),
                          (["--idle-minutes", "nan"], "--idle-minutes"), (["--quota-mb", "-1"], "--quota-mb (-1)"),
                          (["--allow-download-any"], "only goes with"),
                          (["--allow-origin", "evil.example"], "--allow-origin")):
        assert main(["serve", "--port", str(free_port()), *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert needle in err and len(err.splitlines()) == 1


def test_textual_serve_is_the_pinned_version():
    """serve_server.py overrides textual-serve's handlers and AppService internals: pinned to 1.1.x."""
    import tomllib
    from importlib.metadata import version

    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "textual-serve>=1.1,<1.2" in pins
    assert version("textual-serve").startswith("1.1.")
    from textual_serve.app_service import AppService

    for name in ("_open_app_process", "_build_environment", "send_meta", "set_terminal_size", "send_bytes"):
        assert hasattr(AppService, name)

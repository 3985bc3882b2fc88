"""A served lab for the tests: `served(*flags)` starts `tui-lab serve` on a free port and ends its process group;
reading its pages and its apps' processes."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[2]


CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")  # cursor moves and colours between the characters


ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(*flags: str, timeout: float = 60.0):
    """(url, process) of `tui-lab serve` on a free port; the whole process group is ended on exit."""
    cmd = [sys.executable, "-m", "tui_lab.cli", "serve", "--port", str(free_port()), *flags]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
                            start_new_session=True)
    lines: list[str] = []
    # Drain the server's output all along: a full pipe would block its request log.
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    try:
        deadline = time.monotonic() + timeout
        while not any("serving the lab on" in line for line in lines):
            assert proc.poll() is None, f"server exited: {''.join(lines)}"
            assert time.monotonic() < deadline, f"server did not start: {''.join(lines)}"
            time.sleep(0.05)
        url = next(line for line in lines if "serving the lab on" in line).split(" on ")[1].split()[0]
        yield url, proc
    finally:
        end_group(proc)


def end_group(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)  # textual-serve exits gracefully on SIGTERM
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pass
    try:  # and anything the server started (an app process, its shell) goes with it
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=5)


async def fetch_page(session: aiohttp.ClientSession, url: str, timeout: float = 30.0) -> str:
    """The page, once the server answers (it prints its address just before it binds)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            async with session.get(url) as response:
                assert response.status == 200
                return await response.text()
        except aiohttp.ClientConnectionError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def read_until(ws, needle: str | re.Pattern, timeout: float, tail: int | None = None) -> tuple[str, list[str]]:
    """The terminal text streamed (escape codes removed) until `needle` (a string, or a pattern) shows, and the text
    messages. `tail`: only the last `tail` bytes are read and returned (a run streaming for minutes)."""
    data, texts = b"", []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = await ws.receive(timeout=1.0)
        except TimeoutError:
            continue
        if message.type == aiohttp.WSMsgType.BINARY:
            data = (data + message.data)[-tail:] if tail else data + message.data
        elif message.type == aiohttp.WSMsgType.TEXT:
            texts.append(message.data)
        else:
            break  # closed: the app exited
        screen = CSI.sub("", data.decode("utf-8", "replace"))
        if (needle.search(screen) if isinstance(needle, re.Pattern) else needle in screen):
            return screen, texts
    shown = needle.pattern if isinstance(needle, re.Pattern) else needle
    raise AssertionError(f"{shown!r} not streamed within {timeout} s; got {CSI.sub('', data.decode())[-2000:]!r}")


# -- process groups -------------------------------------------------------------------------------------------
def _processes():
    """(pid, state, parent pid, process group) of every process /proc shows."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        yield int(stat.parent.name), fields[0], int(fields[1]), int(fields[2])


def group_members(pgid: int) -> set[int]:
    """The live processes of process group `pgid` (zombies left out)."""
    return {pid for pid, state, _, group in _processes() if group == pgid and state != "Z"}


# -- a served session is a guest (issue 24) -----------------------------------------------------------------
def app_pids(server: subprocess.Popen) -> set[int]:
    """The app processes the server started: each in a session of its own, a child of the server."""
    return {pid for pid, state, parent, _ in _processes() if parent == server.pid and state != "Z"}


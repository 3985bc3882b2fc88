"""SIGTERM to `tui-lab serve` while sessions train: how long the server and its sessions take to end (promised:
5 s), and the step each run was kept at in its session's `kept-run/` (issue 37, item 3).

    PYTHONPATH=. python benchmarks/interface/served_shutdown.py [--sessions 2] [--train-s 5]

Starts the real server (gpt2-toy) on a free loopback port, opens each session through its websocket as the page
does, switches to Train (4) and starts a run (g), lets them train, sends the server SIGTERM and prints the seconds
until the server exited and until its whole process group was gone, then each session's kept step. The keep
interval is set long (TUI_LAB_KEEP_EVERY_S=600): what is kept is the final checkpoint written on the way out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))  # the tests' served-lab helpers
from serve_support import free_port, group_members, read_until  # noqa: E402

STEP = re.compile(r"step [1-9]\d*/\d+")  # a run past its first step


async def screen_until(ws, pattern: re.Pattern, timeout: float) -> re.Match:
    """The last match of `pattern` on the streamed screen (its last 20 kB: a run streams for minutes)."""
    screen, _ = await read_until(ws, pattern, timeout, tail=20000)
    return list(pattern.finditer(screen))[-1]


async def open_and_train(http: aiohttp.ClientSession, url: str) -> tuple[str, aiohttp.ClientWebSocketResponse]:
    async with http.get(url) as response:
        page = await response.text()
    ws_url = re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)
    ws = await http.ws_connect(f"{ws_url}?width=120&height=40", headers={"Origin": url})
    await ws.send_json(["resize", {"width": 120, "height": 40}])
    await screen_until(ws, re.compile(r"· cpu"), 180)  # the live model is built
    await ws.send_json(["stdin", "4"])  # Train
    await asyncio.sleep(2)
    await ws.send_json(["stdin", "g"])
    print("  ", (await screen_until(ws, STEP, 180)).group(0), flush=True)
    return ws_url.rsplit("/", 1)[1], ws


async def main(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="served-shutdown-"))
    port = free_port()
    env = os.environ | {"TUI_LAB_KEEP_EVERY_S": str(args.keep_every_s)}
    server = subprocess.Popen([sys.executable, "-m", "tui_lab.cli", "serve", "--port", str(port), "--preset",
                               "gpt2-toy", "--root", str(root)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=env, start_new_session=True)
    threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(300):
                try:
                    async with http.get(url, allow_redirects=False):
                        break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.1)
            sessions = await asyncio.gather(*(open_and_train(http, url) for _ in range(args.sessions)))
            await asyncio.sleep(args.train_s)
            for token, _ in sessions:
                print("  before:", token[:6], sorted(p.name for p in (root / "sessions" / token).iterdir()))
            start = time.monotonic()
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
            exited = time.monotonic() - start
            while group_members(server.pid) and time.monotonic() - start < 30:
                await asyncio.sleep(0.02)
            gone = time.monotonic() - start
            for _, ws in sessions:
                await ws.close()
    finally:
        try:
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    print(f"{args.sessions} sessions training, SIGTERM: server exited in {exited:.2f} s, its group gone in "
          f"{gone:.2f} s (promised: 5 s)")
    for token, _ in sessions:
        meta = root / "sessions" / token / "kept-run" / "meta.json"
        kept = json.loads(meta.read_text())["step"] if meta.is_file() else None
        print(f"  session {token[:6]}: kept-run/ holds step {kept}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--train-s", dest="train_s", type=float, default=5.0)
    parser.add_argument("--keep-every-s", dest="keep_every_s", type=float, default=600.0)
    asyncio.run(main(parser.parse_args()))

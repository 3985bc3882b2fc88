"""A served lab under abuse on loopback (issue 37): what a page may send cannot take the machine, and what it may
write cannot pass the quotas.

Each test starts the real `tui-lab serve` (tests/test_serve.py's `served`) and bounds itself in time (its timeout)
and in memory (the app's RLIMIT_DATA, read back from /proc). Template bombs and SIGTERM while training are
covered beside the chat templates and the served runs; not here.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest
from aiohttp import web
from serve_support import app_pids, fetch_page, free_port, read_until, served

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the app's limits in /proc")]


def proc_fields(pid: int, name: str) -> dict[str, str]:
    """/proc/PID/environ (NUL-separated) or /proc/PID/status (lines of `Key: value`) as a dict."""
    text = Path(f"/proc/{pid}/{name}").read_text()
    pairs = text.split("\0") if name == "environ" else text.splitlines()
    sep = "=" if name == "environ" else ":"
    return {k.strip(): v.strip() for k, _, v in (p.partition(sep) for p in pairs if sep in p)}


def data_limit(pid: int) -> int:
    line = next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines() if "Max data size" in line)
    return int(line.split()[3])


async def websocket_url(session: aiohttp.ClientSession, url: str) -> str:
    page = await fetch_page(session, url)
    return re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)


@pytest.mark.timeout(180)
async def test_an_oversized_terminal_is_clamped_and_the_app_cannot_pass_its_memory_limit(tmp_path):
    """`?width=30000&height=30000` and `["resize", 30000x30000]` (an app grew 0.6 -> 4.7 GB): the app starts at
    500x200 at most, keeps its memory, and holds the RLIMIT_DATA the operator chose."""
    with served("--preset", "gpt2-toy", "--root", str(tmp_path), "--session-memory-mb", "2048") as (url, proc):
        async with aiohttp.ClientSession() as session:
            ws_url = await websocket_url(session, url)
            async with session.ws_connect(f"{ws_url}?width=30000&height=30000") as ws:
                await read_until(ws, "· cpu", timeout=90)
                (pid,) = app_pids(proc)
                env = proc_fields(pid, "environ")
                assert (env["COLUMNS"], env["ROWS"]) == ("500", "200")  # the first size, clamped
                assert data_limit(pid) == 2048 * 1024**2  # and a limit the app cannot raise
                before = int(proc_fields(pid, "status")["VmRSS"].split()[0]) * 1024
                for _ in range(3):
                    await ws.send_json(["resize", {"width": 30000, "height": 30000}])
                await asyncio.sleep(8)  # unclamped, the app grew past 1 GB within this
                status = proc_fields(pid, "status")
                assert app_pids(proc) == {pid}  # still the same app, alive
                grown = int(status["VmHWM"].split()[0]) * 1024 - before
                assert grown < 200 * 1024**2, f"the app grew {grown / 1024**2:.0f} MiB after the resize"


# What an app that runs out of memory does, without the lab's start-up: it says it is a Textual app, then allocates.
GREEDY_APP = "import sys; sys.stdout.write('__GANGLION__\\n'); sys.stdout.flush(); hoard = bytearray(768 * 1024**2)"


@asynccontextmanager
async def lab_server(root: Path, command: str, memory: int):
    """serve_server.LabServer in this process on a free port, running `command` for each session."""
    from tui_lab.cli.serve_access import allowed_origins
    from tui_lab.cli.serve_server import LabServer, Limits

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    (root / "sessions").mkdir(parents=True, exist_ok=True)
    limits = Limits(root, 2, 600.0, 10**9, allowed_origins(port, url, []), memory=memory)
    runner = web.AppRunner(await LabServer(command, "127.0.0.1", port, url, limits, [])._make_app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield url
    finally:
        await runner.cleanup()  # ends every session's process group


@pytest.mark.timeout(260)
async def test_an_app_past_its_memory_limit_ends_and_its_page_says_why(tmp_path):
    """The app's process holds RLIMIT_DATA (set before exec): an app asking for 768 MB under 256 MB gets a
    MemoryError and ends; its page gets one line naming the limit and the flag, then the socket closes (textual-serve
    left a dead terminal open and said nothing)."""
    command = shlex.join([sys.executable, "-c", GREEDY_APP])
    async with lab_server(tmp_path, command, memory=256 * 1024**2) as url, aiohttp.ClientSession() as session:
        ws_url = await websocket_url(session, url)
        async with session.ws_connect(f"{ws_url}?width=80&height=24") as ws:
            texts = []
            # 2-8 s on a quiet machine; over 30 s in a CI run beside three long-tier crawlers (load 7 on 2 cores),
            # over 90 s beside five (load 8-9)
            async with asyncio.timeout(200):
                async for message in ws:
                    if message.type == aiohttp.WSMsgType.TEXT:
                        texts.append(message.json())
    (reason,) = [data for kind, data in texts if kind == "reason"]
    assert "memory limit (256.0 MiB, serve --session-memory-mb)" in reason and "\n" not in reason


@pytest.mark.timeout(120)
async def test_tokens_come_from_the_server_only(tmp_path):
    """`/ws/aaaaaaaaaaaaaaaa` was accepted (a client chose its own folder): a token the server did not issue gets
    404, no folder and no app; one it issued opens, and is found again by a server restarted on the same root."""
    with served("--preset", "gpt2-toy", "--root", str(tmp_path)) as (url, proc):
        async with aiohttp.ClientSession() as session:
            ws_url = await websocket_url(session, url)
            token = ws_url.rsplit("/", 1)[1]
            forged = token[:-1] + ("A" if token[-1] != "A" else "B")
            for guess in ("a" * 16, "a" * 64, forged):
                async with session.get(f"{url}/s/{guess}") as response:
                    assert response.status == 404 and "the server issues them" in await response.text()
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(f"{url.replace('http', 'ws', 1)}/ws/{guess}?width=80&height=24")
                assert refused.value.status == 404
            assert not app_pids(proc)
            assert [p.name for p in (tmp_path / "sessions").iterdir()] == []
    with served("--preset", "gpt2-toy", "--root", str(tmp_path)) as (url, _):
        async with aiohttp.ClientSession() as session:
            await fetch_page(session, f"{url}/s/{token}")  # a reload after a restart: 200 (it waits for the bind)


@pytest.mark.timeout(120)
async def test_the_sessions_folders_together_have_a_cap(tmp_path):
    """Six plain connects left six autosave folders past --quota-mb: with the sessions' folders full, no new session
    starts (503, naming the flag); a session whose folder exists still opens, to delete its runs."""
    with served("--preset", "gpt2-toy", "--root", str(tmp_path), "--quota-mb", "1", "--total-quota-mb", "2") as (
            url, _):
        async with aiohttp.ClientSession() as session:
            ws_url = await websocket_url(session, url)
            token = ws_url.rsplit("/", 1)[1]
            folder = tmp_path / "sessions" / token
            folder.mkdir(parents=True)
            (folder / "big").write_bytes(b"x" * 2 * 1024**2)  # as if its runs had filled the server's share
            async with session.get(url, allow_redirects=False) as response:
                assert response.status == 503 and "--total-quota-mb" in await response.text()
            async with session.get(f"{url}/s/{token}") as response:
                assert response.status == 200


@pytest.mark.timeout(60)
async def test_the_page_names_no_third_party_host(tmp_path):
    """The page asked fonts.googleapis.com for Roboto Mono on every visit: it names only the lab now, and the font
    comes from the lab's own static files."""
    with served("--preset", "gpt2-toy", "--root", str(tmp_path)) as (url, _):
        lab = urlsplit(url).netloc
        async with aiohttp.ClientSession() as session:
            page = await fetch_page(session, url)
            hosts = set(re.findall(r"(?:https?:|wss?:)?//([A-Za-z0-9.\-\[\]:]+)", page))
            assert hosts == {lab}, hosts
            fonts = re.findall(r'url\("([^"]+\.ttf)"\)', page)
            assert fonts
            for address in fonts:
                async with session.get(address) as response:
                    assert response.status == 200 and len(await response.read()) > 10_000
            for address in re.findall(r'(?:href|src)="([^"]+\.(?:css|js))"', page):
                async with session.get(address) as response:
                    text = await response.text()
                assert "@import" not in text and "googleapis" not in text and not re.search(r"url\(['\"]?https?:", text)


@pytest.mark.timeout(120)
def test_queued_lora_runs_cannot_pass_the_quota(tmp_path, monkeypatch):
    """Queued lora runs took a 20 MB session to 34 MB: each run's merged checkpoint is checked before it is written,
    so the second of two runs that fit one at a time is refused in one line and writes nothing."""
    from tui_lab.experiments.registry import get
    from tui_lab.served import ENV, ServedPolicy

    home = tmp_path / "sessions" / "tok"
    home.mkdir(parents=True)
    monkeypatch.setenv(ENV, ServedPolicy(str(home), quota=6 * 1024**2, root=str(tmp_path)).to_env())
    exp = get("lora")

    def run(out: str):
        return exp.run(exp.resolve(sets={"steps": "2", "batch_size": "2", "seq_len": "16", "lora_rank": "2",
                                         "out": str(home / out)}))

    run("first")  # ~3.8 MB of a 6 MB quota
    with pytest.raises(ValueError, match="lora's merged checkpoint needs about .* quota") as refused:
        run("second")
    assert "\n" not in str(refused.value) and not (home / "second").exists()
    assert ServedPolicy(str(home)).used() <= 6 * 1024**2


def test_a_cached_pickle_only_model_is_refused_as_the_banner_says(tmp_path, monkeypatch, capsys):
    """A served session opened a cached pytorch_model.bin-only model though the banner said "pickle weights refused":
    the session's open is refused in one line (nothing loads), and so is the operator's own --from-hf at start."""
    from types import SimpleNamespace

    from tui_lab.app.hub_open import open_from_hub
    from tui_lab.cli import main, serve
    from tui_lab.served import ENV, ServedPolicy

    model = tmp_path / "sessions" / "tok" / "pickled"
    model.mkdir(parents=True)
    (model / "config.json").write_text('{"model_type": "gpt2"}')
    (model / "pytorch_model.bin").write_bytes(b"not read")
    loads, notes = [], []
    live = SimpleNamespace(start_load_hf=lambda app, spec: loads.append(spec), status="gpt2-toy", model=None)
    app = SimpleNamespace(live=live, notify=lambda text, **_: notes.append(text), sub_title="")
    monkeypatch.setenv(ENV, ServedPolicy(str(model.parent)).to_env())
    open_from_hub(app, "pickled")
    assert loads == [] and len(notes) == 1 and "pickle" in notes[0] and "--allow-pickle" in notes[0]
    monkeypatch.setenv(ENV, ServedPolicy(str(model.parent), allow_pickle=True).to_env())
    open_from_hub(app, "pickled")
    assert loads == ["pickled"] or loads == [str(model)]  # the operator allowed pickles: it loads (weights_only)
    monkeypatch.delenv(ENV)
    monkeypatch.setattr(serve, "_serve", lambda *args: 0)  # no server: only what is refused before one starts
    assert main(["serve", "--port", str(free_port()), "--from-hf", str(model)]) == 2
    err = capsys.readouterr().err.strip()
    assert "only a pickle" in err and "--allow-pickle" in err and len(err.splitlines()) == 1
    assert main(["serve", "--port", str(free_port()), "--from-hf", str(model), "--allow-pickle"]) == 0

"""`tui-lab serve`: the same app in a web browser, through `textual-serve` (serve_server.py wraps it).

textual-serve runs one app process per browser tab (a shell command it starts with Textual's web
driver) and streams the terminal over a websocket to xterm.js in the page. We hand it the app's own
launch command, from this very Python, so the browser sees exactly what `tui-lab` shows in a terminal.
The launch flags are checked here, before the server starts, so a bad flag is one line and exit 2
rather than a page that opens on "Session ended".

A browser session is a guest: its paths stay in its own folder under --root, the operator's --download and
--allow-pickle bind it (the page cannot widen them), a foreign Origin or Host gets nothing, sessions are capped
(--max-sessions) and closed when idle (--idle-minutes). Decided where the issue was silent: the per-session quota
defaults to 1 GiB (--quota-mb), the idle timeout may be fractional (minutes), and the cap counts open tabs.
Each session's app has a memory limit (--session-memory-mb; default free memory / sessions, at least 1 GiB) and
the sessions' folders together a disk cap (--total-quota-mb; default 10 x --quota-mb): a page cannot take the
machine, nor multiply its quota by opening sessions (issue 37).
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

from tui_lab.analysis.format import fmt_bytes
from tui_lab.cli import HF_MODEL_TYPES, UsageError

WILDCARD_HOSTS = ("0.0.0.0", "::", "")
SESSION_BYTES = 400 * 1024**2  # an app session measured 300-370 MiB (issue 24): 400 MiB each by default
SESSIONS_PER_CORE = 2
SESSION_MEMORY_FLOOR_MB = 1024  # an idle app holds ~0.35 GB of data, training a toy ~0.4 (issue 37): room to work
TOTAL_QUOTAS = 10  # the sessions' folders together: this many sessions' quotas by default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)")
    parser.add_argument("--public-url", dest="public_url", metavar="URL",
                        help="the address browsers use, if not http://HOST:PORT (a proxy, a classroom's name)")
    # The app's launch flags, passed through to every browser session.
    parser.add_argument("--preset", help="preset to open")
    parser.add_argument("--checkpoint", metavar="DIR", help="open a checkpoint folder saved by tui-lab")
    parser.add_argument("--from-hf", dest="from_hf", metavar="ID|DIR",
                        help=f"open a Hugging Face model folder or id (model types {', '.join(HF_MODEL_TYPES)}); "
                             "an id not in the local cache is downloaded only with --download (a browser session "
                             "cannot start a download itself)")
    parser.add_argument("--download", action="store_true",
                        help="with --from-hf ID: each session downloads that id without asking (files and progress "
                             "still show); without it no session downloads anything")
    parser.add_argument("--allow-download-any", dest="allow_download_any", action="store_true",
                        help="with --download: sessions may download any Hub id, not only the --from-hf one")
    parser.add_argument("--allow-pickle", dest="allow_pickle", action="store_true",
                        help="with --from-hf ID: accept weights that exist only as pytorch_model.bin (read with "
                             "weights_only); without it no session can accept them")
    parser.add_argument("--device", help="cpu, cuda, cuda:N or mps (default cpu)")
    # What a browser session may do.
    parser.add_argument("--root", metavar="DIR",
                        help="the folder sessions keep their runs in, each in its own sessions/TOKEN folder named by "
                             "its URL (default: ~/tui-lab/served, or $TUI_LAB_DATA/served)")
    parser.add_argument("--max-sessions", dest="max_sessions", type=int, metavar="N",
                        help="browser sessions at once (default: free memory / 400 MiB, at most 2 per core, at "
                             "least 1); when full the page answers 503 and says so")
    parser.add_argument("--idle-minutes", dest="idle_minutes", type=float, default=30.0, metavar="M",
                        help="close a session idle this long, after it saves its live model (default 30)")
    parser.add_argument("--quota-mb", dest="quota_mb", type=int, default=1024, metavar="MB",
                        help="disk each session's folder may use (default 1024)")
    parser.add_argument("--session-memory-mb", dest="session_memory_mb", type=int, metavar="MB",
                        help="memory (data) each session's app process may hold; past it the session ends and its page "
                             "says why (default: free memory / --max-sessions, at least 1024)")
    parser.add_argument("--total-quota-mb", dest="total_quota_mb", type=int, metavar="MB",
                        help="disk the sessions' folders may use together; past it no new session starts and no "
                             f"write starts (default {TOTAL_QUOTAS} x --quota-mb)")
    parser.add_argument("--allow-origin", dest="allow_origin", action="append", default=[], metavar="URL",
                        help="another page address allowed to open sessions (loopback and --public-url always are)")


def app_argv(args: argparse.Namespace) -> list[str]:
    """The launch flags for the app, folders made absolute (the app process may not share our cwd)."""
    argv = []
    for flag, value in (("--preset", args.preset), ("--device", args.device)):
        if value is not None:
            argv += [flag, value]
    for flag, folder in (("--checkpoint", args.checkpoint), ("--from-hf", args.from_hf)):
        if folder is not None:
            path = Path(folder).expanduser()
            # `--from-hf gpt2` names a model in the HF cache, not a folder here: pass a bare name as is.
            argv += [flag, str(path.resolve()) if path.exists() else folder]
    # A Namespace built without them (a caller of app_argv) means neither: the app asks before downloading.
    argv += [flag for flag, name in (("--download", "download"), ("--allow-pickle", "allow_pickle"))
             if getattr(args, name, False)]
    return argv


def app_command(argv: list[str]) -> str:
    """One shell command line (textual-serve runs it with a shell), every argument quoted."""
    words = [sys.executable, "-m", "tui_lab.cli", *argv]
    return subprocess.list2cmdline(words) if sys.platform == "win32" else shlex.join(words)


def check_app_flags(argv: list[str]) -> None:
    """The app's own checks (preset, device, folders), run here so a bad flag never reaches a browser."""
    from tui_lab.cli import launch

    launch._checked(launch.parser().parse_args(argv))


def check_address(host: str, port: int) -> None:
    if not 1 <= port <= 65535:
        raise UsageError(f"--port ({port}) must be between 1 and 65535")
    try:  # bind once now: "address in use" as one line before the server prints anything
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds
            probe.bind(infos[0][4])
    except OSError as err:
        raise UsageError(f"--host {host} --port {port} cannot be used: {err.strerror or err}") from None


def public_url(host: str, port: int, given: str | None) -> str:
    if given:
        return given.rstrip("/")
    if host in WILDCARD_HOSTS:  # the page's websocket address must be one a browser elsewhere can reach
        host = socket.gethostname()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    return f"http://{host}:{port}"


def default_max_sessions(free: int | None, cores: int) -> int:
    """What fits the machine: free memory / 400 MiB, at most 2 per core, at least 1."""
    by_memory = free // SESSION_BYTES if free is not None else SESSIONS_PER_CORE * cores
    return max(1, min(by_memory, SESSIONS_PER_CORE * cores))


def check_limits(args: argparse.Namespace) -> None:
    """serve's own numbers, before anything starts."""
    if args.max_sessions is not None and not 1 <= args.max_sessions <= 1000:
        raise UsageError(f"--max-sessions ({args.max_sessions}) must be between 1 and 1000")
    if not (math.isfinite(args.idle_minutes) and 0 < args.idle_minutes <= 7 * 24 * 60):
        raise UsageError(f"--idle-minutes ({args.idle_minutes}) must be above 0 and at most a week (10080)")
    if not 1 <= args.quota_mb <= 10**7:
        raise UsageError(f"--quota-mb ({args.quota_mb}) must be between 1 and 10000000")
    total = getattr(args, "total_quota_mb", None)
    if total is not None and not args.quota_mb <= total <= 10**9:
        raise UsageError(f"--total-quota-mb ({total}) must be at least --quota-mb ({args.quota_mb}) and at most "
                         "1000000000")
    memory = getattr(args, "session_memory_mb", None)
    if memory is not None and not 64 <= memory <= 10**8:
        raise UsageError(f"--session-memory-mb ({memory}) must be between 64 and 100000000")
    if args.allow_download_any and not args.download:
        raise UsageError("--allow-download-any only goes with --download")
    for url in args.allow_origin:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"--allow-origin ({url}) must be a page address like https://lab.example.org")


def root_folder(given: str | None) -> Path:
    from tui_lab.paths import served_root

    root = Path(given).expanduser().absolute() if given else served_root()
    try:
        (root / "sessions").mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"--root ({root}) cannot be used: {err.strerror or err}") from None
    return root


def check_pickle(args: argparse.Namespace) -> None:
    """The banner says "pickle weights refused" without --allow-pickle: an operator's cached pickle-only model too."""
    if not args.from_hf or args.allow_pickle:
        return
    from tui_lab.hf.folder import weights_file
    from tui_lab.hf.hub import locate

    folder = locate(args.from_hf)
    found = weights_file(folder) if folder is not None else None
    if found is not None and found.name.startswith("pytorch_model"):
        raise UsageError(f"--from-hf {args.from_hf}: its weights are only a pickle ({found.name}); add --allow-pickle "
                         "to serve them (they are read with weights_only)")


def session_memory(given: int | None, free: int | None, sessions: int) -> int:
    """Bytes each app may hold: --session-memory-mb, else free memory shared by the sessions, at least 1 GiB."""
    if given is not None:
        return given * 1024**2
    share = free // sessions if free is not None else 0
    return max(share, SESSION_MEMORY_FLOOR_MB * 1024**2)


def run(args: argparse.Namespace) -> int:
    argv = app_argv(args)
    check_app_flags(argv)
    check_pickle(args)
    check_limits(args)
    check_address(args.host, args.port)
    url = public_url(args.host, args.port, args.public_url)
    limits, banner = _limits(args, url)
    if "--from-hf" in argv:  # the operator's model as the app receives it (a folder made absolute)
        limits.from_hf = argv[argv.index("--from-hf") + 1]
    return _serve(app_command(argv), args, url, limits, banner)


def _limits(args: argparse.Namespace, url: str):
    from tui_lab.cli.serve_access import allowed_origins
    from tui_lab.cli.serve_sessions import Limits
    from tui_lab.devices import free_memory

    root, cores, free = root_folder(args.root), os.cpu_count() or 1, free_memory("cpu")
    chosen = args.max_sessions or default_max_sessions(free, cores)
    why = "--max-sessions" if args.max_sessions else (
        f"free memory {fmt_bytes(free) if free is not None else 'unknown'} / 400 MiB, at most 2 per core x {cores}")
    memory = session_memory(args.session_memory_mb, free, chosen)
    total_mb = args.total_quota_mb or TOTAL_QUOTAS * args.quota_mb
    limits = Limits(root, chosen, args.idle_minutes * 60, args.quota_mb * 1024**2,
                    allowed_origins(args.port, url, args.allow_origin), args.download, args.allow_download_any,
                    args.allow_pickle, args.from_hf, memory=memory, total_quota=total_mb * 1024**2)
    banner = [f"tui-lab: serving the lab on {url} (ctrl+c stops)",
              f"tui-lab: at most {chosen} sessions ({why}); idle ones close after {args.idle_minutes:g} min; "
              f"each keeps its runs in {root}/sessions/TOKEN, {args.quota_mb} MB at most, {total_mb} MB together",
              f"tui-lab: each session's app may hold {fmt_bytes(memory)} of memory (--session-memory-mb)",
              f"tui-lab: downloads {_downloads(args)}, pickle weights {'accepted' if args.allow_pickle else 'refused'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        banner.append("tui-lab: warning: running as root; every session's app runs as root too (a user of its own "
                      "is safer for a class)")
    return limits, banner


def _downloads(args: argparse.Namespace) -> str:
    if not args.download:
        return "off"
    return "of any Hub id" if args.allow_download_any else f"of {args.from_hf} only"


def _serve(command: str, args: argparse.Namespace, url: str, limits, banner: list[str]) -> int:
    from tui_lab.cli.serve_server import LabServer

    server = LabServer(command, args.host, args.port, url, limits, banner)
    try:
        server.serve()
    except OSError as err:  # lost the port between the check and the bind
        raise UsageError(f"--host {args.host} --port {args.port} cannot be used: {err.strerror or err}") from None
    return 0

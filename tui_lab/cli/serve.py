"""`tui-lab serve`: the same app in a web browser, through `textual-serve`.

textual-serve runs one app process per browser tab (a shell command it starts with Textual's web
driver) and streams the terminal over a websocket to xterm.js in the page. We hand it the app's own
launch command, from this very Python, so the browser sees exactly what `tui-lab` shows in a terminal.
The launch flags are checked here, before the server starts, so a bad flag is one line and exit 2
rather than a page that opens on "Session ended".
"""

from __future__ import annotations

import argparse
import shlex
import socket
import subprocess
import sys
from pathlib import Path

from tui_lab.cli import HF_MODEL_TYPES, UsageError

WILDCARD_HOSTS = ("0.0.0.0", "::", "")


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
                             "an id not in the local cache asks each browser session before downloading")
    parser.add_argument("--download", action="store_true",
                        help="with --from-hf ID: the app downloads without asking (the files and progress still show)")
    parser.add_argument("--allow-pickle", dest="allow_pickle", action="store_true",
                        help="with --from-hf ID: accept weights that exist only as pytorch_model.bin (read with "
                             "weights_only)")
    parser.add_argument("--device", help="cpu, cuda, cuda:N or mps (default cpu)")


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


def run(args: argparse.Namespace) -> int:
    argv = app_argv(args)
    check_app_flags(argv)
    check_address(args.host, args.port)
    url = public_url(args.host, args.port, args.public_url)
    server = _server(app_command(argv), args.host, args.port, url)
    try:
        server.serve()
    except OSError as err:  # lost the port between the check and the bind
        raise UsageError(f"--host {args.host} --port {args.port} cannot be used: {err.strerror or err}") from None
    return 0


def _server(command: str, host: str, port: int, url: str):
    from textual_serve.server import Server

    class LabServer(Server):
        async def on_startup(self, app) -> None:
            # textual-serve's banner shows the whole command line; a person needs the address.
            print(f"tui-lab: serving the lab on {self.public_url} (ctrl+c stops)", flush=True)

    return LabServer(command, host=host, port=port, title="tui-lab", public_url=url)

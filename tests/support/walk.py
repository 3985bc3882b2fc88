"""A walk through the app as a person makes it: a real terminal (tmux), keys at typing speed, a busy CPU.

Pilot tests press keys at machine speed on an idle event loop and read widget fields. A person types
10-20 keys a second, on a machine doing other work, and reads the screen. So a walk starts `tui-lab` in a
private tmux server at a given size, sends keys about 15 a second with jitter (`send-keys`, one key per
command, as a terminal delivers them), and reads the screen back as text (`capture-pane -p`) or with its
colours (`-e`, parsed by rich). `Busy` is the other work: a torch matmul loop on 2 threads in its own process.

    walk.press("2")                      # open view 2
    walk.wait_for("query [0]")           # bounded: fails with the screen it last saw
    walk.type("512")                     # one key per character, ~15/s
    walk.press("Down", "Down", "k")

Everything goes through one tmux control-mode client: spawning a `tmux` process per poll costs ~8 ms of a
shared core, taken from the app being walked (benchmarks/interface/launch_time.py measured it).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.text import Text

ROOT = Path(__file__).resolve().parents[2]
KEYS_PER_SECOND = 15.0
JITTER = 0.4  # each gap is the mean gap times a factor drawn from [1 - JITTER, 1 + JITTER]
# A screen read costs the tmux server ~0.2 ms (control mode): at 50 a second ~1% of a core, and a wait ends on
# average 10 ms after the screen changed, not 25 (at 20 a second: ~2 s over the walks' ~150 waits).
POLL_S = 0.02
BUSY_SCRIPT = """
import torch
torch.set_num_threads(2)
a = torch.randn(384, 384)
while True:
    a = torch.tanh(a @ a)
"""


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


def app_command(args: list[str]) -> list[str]:
    """The `tui-lab` entry point beside this Python (the venv's), else the module: what a person runs."""
    entry = Path(sys.executable).with_name("tui-lab")
    return [str(entry), *args] if entry.exists() else [sys.executable, "-m", "tui_lab.cli", *args]


class Busy:
    """Other work on the machine: a 2-thread matmul loop, started and stopped with the walk."""

    def __init__(self) -> None:
        env = {**os.environ, "OMP_NUM_THREADS": "2"}
        self.proc = subprocess.Popen([sys.executable, "-c", BUSY_SCRIPT], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


class Tmux:
    """A private tmux server (its own socket) driven through one control-mode client."""

    def __init__(self, cols: int, rows: int, env: dict[str, str]) -> None:
        self.socket = f"walk-{os.getpid()}-{random.randrange(1 << 30)}"
        # A new server takes the environment of the command that starts it: the app's windows inherit it.
        subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "walk",
                        "-x", str(cols), "-y", str(rows)], check=True, env=env)
        self.client = subprocess.Popen(["tmux", "-L", self.socket, "-C", "attach", "-t", "walk"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=env)
        self._reply()  # the attach answers with an empty block
        self.command("refresh-client -f no-output")  # we read screens, not the output stream
        self.command(f"refresh-client -C {cols}x{rows}")  # the control client must not resize the window

    def command(self, line: str) -> str:
        assert self.client.stdin is not None
        self.client.stdin.write(line.encode() + b"\n")
        return self._reply()

    def _reply(self) -> str:
        assert self.client.stdout is not None
        lines: list[bytes] = []
        inside = False
        for raw in self.client.stdout:
            if raw.startswith(b"%begin"):
                inside, lines = True, []
            elif inside and raw.startswith((b"%end", b"%error")):
                if raw.startswith(b"%error"):
                    raise RuntimeError(f"tmux: {b''.join(lines).decode(errors='replace').strip()}")
                return b"".join(lines).decode(errors="replace")
            elif inside:
                lines.append(raw)
        raise RuntimeError("tmux control client closed")

    def close(self) -> None:
        try:
            socket_path = self.command("display -p '#{socket_path}'").strip()
            assert self.client.stdin is not None
            self.client.stdin.close()
            self.client.wait(timeout=5)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            socket_path = ""
            self.client.kill()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        if socket_path:
            Path(socket_path).unlink(missing_ok=True)  # the server leaves its socket file behind


def _quote(text: str) -> str:
    """One tmux command argument: single-quoted, a quote inside closed, escaped and reopened."""
    return "'" + text.replace("'", "'\\''") + "'"


class Walk:
    """`tui-lab ARGS` in a tmux window of `cols` x `rows`, walked at typing speed."""

    def __init__(self, args: list[str] = (), cols: int = 80, rows: int = 24, seed: int = 0,
                 env: dict[str, str] | None = None) -> None:
        self.cols, self.rows = cols, rows
        self.rng = random.Random(seed)
        self.keys_sent: list[str] = []  # what was sent, for a failure's message
        self._last_input = float("-inf")  # time.monotonic() of the last key or click sent
        self.home = Path(tempfile.mkdtemp(prefix="tui-lab-walk-"))
        # Not PYTHONDONTWRITEBYTECODE: the app runs from compiled bytecode, as an installed one does; a checkout run
        # with it compiles every tui_lab module on every launch (~0.2 s of CPU of each). The first launch writes
        # tui_lab's __pycache__ (git ignores it), the others read it.
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("TMUX", "PYTEST")) and k != "PYTHONDONTWRITEBYTECODE"}
        base.update({"TERM": "xterm-256color", "COLORTERM": "truecolor", "PYTHONPATH": str(ROOT),
                     "TUI_LAB_EXPORTS": str(self.home / "exports"),
                     "TUI_LAB_CACHE": os.environ.get("TUI_LAB_CACHE", str(self.home / "cache"))})
        base.update(env or {})
        self.tmux = Tmux(cols, rows, base)
        command = " ".join(_quote(part) for part in app_command(list(args)))
        self.pane, pid = self.tmux.command(
            f"new-window -d -P -F '#{{pane_id}} #{{pane_pid}}' -c {_quote(str(self.home))} "
            f"{_quote('exec ' + command)}").split()
        self.pid = int(pid)
        self.tmux.command(f"set-option -t {self.pane} remain-on-exit on")  # a crash stays readable

    # -- keys --------------------------------------------------------------------------------------
    def press(self, *keys: str, rate: float = KEYS_PER_SECOND) -> None:
        """Named keys as tmux spells them ("Tab", "Down", "Enter", "Escape", "BSpace", "F2", "C-s") or
        single characters, one by one at about `rate` a second."""
        for key in keys:
            self._gap(rate)
            self.tmux.command(f"send-keys -t {self.pane} {_quote(key)}" if len(key) > 1 else
                              f"send-keys -t {self.pane} -l {_quote(key)}")
            self.keys_sent.append(key)

    def type(self, text: str, rate: float = KEYS_PER_SECOND) -> None:
        """Each character of `text` as its own key, as fingers deliver them."""
        for ch in text:
            self._gap(rate)
            self.tmux.command(f"send-keys -t {self.pane} -l {_quote(ch)}")
            self.keys_sent.append(ch)

    def burst(self, text: str) -> None:
        """`text` in one write, as a terminal hands a busy app the keys typed while it was working."""
        self.tmux.command(f"send-keys -t {self.pane} -l {_quote(text)}")
        self.keys_sent.append(text)
        self._last_input = time.monotonic()

    def click(self, text: str) -> bool:
        """A left click on the first cell of `text` on screen (an xterm SGR mouse report, as a terminal sends it);
        False, and nothing sent, when `text` is not on screen."""
        for y, line in enumerate(self.screen().splitlines()):
            x = line.find(text)
            if x >= 0:
                for end in "Mm":  # press, release
                    self.tmux.command(f"send-keys -t {self.pane} -l '\x1b[<0;{x + 2};{y + 1}{end}'")
                self.keys_sent.append(f"click {text!r}")
                self._last_input = time.monotonic()
                return True
        return False

    def palette(self, command: str) -> None:
        """ctrl+p, the command typed at typing speed, Enter: as a person picks a palette command."""
        self.press("C-p")
        self.wait_for("Search for commands", timeout=15)  # the palette has the keys
        self.type(command)
        self.wait_for(command, timeout=15)
        self.press("Enter")

    def resize(self, cols: int, rows: int) -> None:
        """The window to `cols` x `rows`, as a person widens a terminal; back once the screen has that many rows."""
        self.tmux.command(f"refresh-client -C {cols}x{rows}")
        self.tmux.command(f"resize-window -t {self.pane} -x {cols} -y {rows}")
        self.wait_for(lambda s: len(s.splitlines()) >= rows - 1, timeout=10)
        self.cols, self.rows = cols, rows

    def _gap(self, rate: float) -> None:
        """Wait out the gap between the last key (or click) and the next: keys in a row come at `rate` with
        jitter; a key after a longer pause (a wait for the screen) goes at once, as the pause was its gap."""
        gap = self.rng.uniform(1 - JITTER, 1 + JITTER) / rate
        time.sleep(max(0.0, self._last_input + gap - time.monotonic()))
        self._last_input = time.monotonic()

    # -- the screen --------------------------------------------------------------------------------
    def screen(self) -> str:
        return self.tmux.command(f"capture-pane -p -t {self.pane}")

    def history(self) -> str:
        """Everything the pane printed, scrolled-off lines too, wrapped lines joined (a command's output)."""
        return self.tmux.command(f"capture-pane -p -J -S - -E - -t {self.pane}")

    def exited(self, timeout: float = 30.0) -> str:
        """The pane's history once its command has exited (a CLI command run in the terminal)."""
        end = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > end:
                raise AssertionError(f"still running after {timeout} s\n{self.screen()}")
            time.sleep(0.05)
        return self.history()

    def lines(self) -> list[Text]:
        """The screen's lines with their colours (capture-pane -e, parsed by rich)."""
        raw = self.tmux.command(f"capture-pane -p -e -t {self.pane}")
        return [Text.from_ansi(line) for line in raw.split("\n")[: self.rows]]

    def wait_for(self, want: str | re.Pattern[str] | Callable[[str], object], timeout: float = 10.0,
                 poll: float = POLL_S) -> str:
        """The screen once it shows `want` (text, a regex, or a test of the whole screen); fails after
        `timeout` seconds with the last screen seen."""
        test = _matcher(want)
        end = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if test(screen):
                return screen
            if time.monotonic() > end or not self.alive():
                raise AssertionError(f"not on screen within {timeout} s: {want!r}\nkeys sent: "
                                     f"{self.keys_sent[-40:]}\n--- screen ---\n{screen}")
            time.sleep(poll)

    def wait_steady(self, quiet: float = 0.5, timeout: float = 10.0) -> str:
        """The screen once it has not changed for `quiet` seconds (the app has drawn what it was sent)."""
        end = time.monotonic() + timeout
        last, since = self.screen(), time.monotonic()
        while time.monotonic() < end:
            time.sleep(POLL_S)
            now = self.screen()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return now
        return last

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return self.tmux.command(f"display -p -t {self.pane} '#{{pane_dead}}'").strip() != "1"

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.tmux.close()
        shutil.rmtree(self.home, ignore_errors=True)


def _matcher(want: str | re.Pattern[str] | Callable[[str], object]) -> Callable[[str], object]:
    if isinstance(want, str):
        return lambda screen: want in screen
    if isinstance(want, re.Pattern):
        return lambda screen: want.search(screen)
    return want


def line_with(screen: str, text: str) -> str:
    """The first line of `screen` holding `text` ("" if none)."""
    return next((line for line in screen.splitlines() if text in line), "")


def field_text(screen: str, label: str) -> str:
    """What a form row shows after its label ("d_model          768" -> "768"): a row that starts with the
    label (not "kv heads  per token" elsewhere on the screen); "" if none or the field is empty."""
    names = [re.escape(label)] + [re.escape(label[:n]) + "…" for n in range(len(label) - 1, 7, -1)]  # cut short
    for line in screen.splitlines():
        match = re.match(rf" ?(?:{'|'.join(names)}) +([^ ▏▕│┃]*)", line)
        if match:
            return match.group(1)
    return ""

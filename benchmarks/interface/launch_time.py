"""Launch-to-first-frame of `tui-lab` against a bare Textual app, both in a real terminal (tmux).

The bare app is a Header, a Static and a Footer: what any Textual app pays before its first paint.
`tui-lab`'s first frame shows the preset's exact parameter count; its first screen is complete when the
Architecture view's form is on it too (its last field visible at 80 x 24, `decoder_mode`): both are timed.

Both run in one private tmux server (80 x 24), alternating bare and tui-lab within each round so that
the machine's load falls on both alike. A run is timed from the `new-window` command that starts the
process until its text (the Static's, or the parameter count) is on the pane's screen, read with
`capture-pane` every few ms through one tmux control-mode client (a poll costs ~0.2 ms; spawning a
`tmux` process per poll cost ~8 ms of a shared core and slowed the apps it was timing). Prints one
line per run, the medians and their difference with the load average, and, last, one JSON object.

Bytecode: an installed app runs from compiled `.pyc` files (Textual in the venv does), but a checkout run
with PYTHONDONTWRITEBYTECODE=1 compiles every tui_lab module on every launch. So the apps run with
bytecode written under a temporary PYTHONPYCACHEPREFIX, after one untimed warm-up launch each.

    PYTHONPATH=. .venv/bin/python benchmarks/interface/launch_time.py [--runs 7] [--preset gpt2-toy]
    # another tree (an older checkout) beside this one, in the same session:
    PYTHONPATH=. .venv/bin/python benchmarks/interface/launch_time.py --tree before=../before --tree after=.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))
from walk import Tmux  # noqa: E402  (the walk's control client: one tmux driver for tests and benchmarks)

BARE_TEXT = "bare Textual app: first frame"
FORM_LAST_FIELD = "decoder_mode"  # the form's last row visible at 80 x 24 (new axes pushed final_norm below)
BARE_APP = f'''
from textual.app import App
from textual.widgets import Footer, Header, Static


class Bare(App):
    def compose(self):
        yield Header()
        yield Static({BARE_TEXT!r})
        yield Footer()


Bare().run()
'''


def screen_seconds(tmux: Tmux, shell_command: str, needles: tuple[str, ...], poll_s: float,
                   timeout: float) -> list[float]:
    """Seconds from starting `shell_command` in a fresh 80 x 24 window until each needle is on its screen."""
    if "'" in shell_command:
        raise ValueError("the command must not contain a single quote (it is quoted for tmux)")
    start = time.perf_counter()
    window, pane, pid = tmux.command(
        f"new-window -d -P -F '#{{window_id}} #{{pane_id}} #{{pane_pid}}' '{shell_command}'").split()
    seen: list[float] = []
    try:
        while time.perf_counter() - start < timeout:
            screen = tmux.command(f"capture-pane -p -t {pane}")
            while len(seen) < len(needles) and needles[len(seen)] in screen:
                seen.append(time.perf_counter() - start)
            if len(seen) == len(needles):
                return seen
            time.sleep(poll_s)
        raise RuntimeError(f"{needles[len(seen)]!r} not on screen within {timeout} s: {shell_command}")
    finally:
        tmux.command(f"kill-window -t {window}")
        _wait_gone(int(pid))


def _wait_gone(pid: int, grace: float = 5.0) -> None:
    """The app (and a torch import in its worker) must not eat the next run's CPU."""
    end = time.perf_counter() + grace
    while time.perf_counter() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)


def contestants(args: argparse.Namespace, bare_path: Path) -> dict[str, tuple[str, tuple[str, str]]]:
    """label -> (shell command, (text of its first frame, text of its complete first screen))."""
    from tui_lab.analysis import count_params
    from tui_lab.presets import load_preset

    needle = f"{count_params(load_preset(args.preset)).total:,}"
    python = sys.executable
    out = {"bare": (f"exec {python} {bare_path}", (BARE_TEXT, BARE_TEXT))}
    for label, tree in (t.partition("=")[::2] for t in args.tree or ["tui-lab=."]):
        root = Path(tree).resolve()
        out[label] = (f"cd {root} && PYTHONPATH={root} exec {python} -m tui_lab.cli --preset {args.preset}",
                      (needle, FORM_LAST_FIELD))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each contestant (default 7)")
    parser.add_argument("--preset", default="gpt2-toy")
    parser.add_argument("--tree", action="append", metavar="LABEL=DIR",
                        help="a checkout whose tui_lab to launch (repeatable; default tui-lab=.)")
    parser.add_argument("--poll-ms", type=float, default=3.0, help="screen poll interval (default 3 ms)")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    times: dict[str, list[list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        bare_path = Path(tmp) / "bare_app.py"
        bare_path.write_text(BARE_APP)
        runs = contestants(args, bare_path)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        tmux = Tmux(80, 24, env)
        try:
            for command, needles in runs.values():  # warm-up: writes the bytecode, not timed
                screen_seconds(tmux, command, needles, args.poll_ms / 1000, args.timeout)
            for i in range(args.runs):
                for label, (command, needles) in runs.items():
                    first, full = screen_seconds(tmux, command, needles, args.poll_ms / 1000, args.timeout)
                    times.setdefault(label, []).append([first, full])
                    print(f"round {i + 1} {label}: first frame after {first:.3f} s, screen complete after "
                          f"{full:.3f} s", flush=True)
                    time.sleep(0.3)  # let the killed app's process leave before the next starts
        finally:
            tmux.close()
    report(args, times, load_start)


def report(args: argparse.Namespace, times: dict[str, list[list[float]]], load_start: float) -> None:
    medians = {label: round(statistics.median(t[0] for t in ts), 3) for label, ts in times.items()}
    complete = {label: round(statistics.median(t[1] for t in ts), 3) for label, ts in times.items()}
    diffs = {label: round(m - medians["bare"], 3) for label, m in medians.items() if label != "bare"}
    load_end = os.getloadavg()[0]
    for label, m in medians.items():
        extra = f" ({diffs[label]:+.3f} s vs bare); first screen complete {complete[label]:.3f} s" \
            if label in diffs else ""
        print(f"median first frame {label}: {m:.3f} s{extra}")
    print(f"load average (1 min) {load_start:.2f} at start, {load_end:.2f} at end; {os.cpu_count()} CPUs")
    print(json.dumps({"preset": args.preset, "runs": args.runs, "median_s": medians, "minus_bare_s": diffs,
                      "complete_median_s": complete,
                      "runs_s": {label: [[round(x, 3) for x in t] for t in ts] for label, ts in times.items()},
                      "load_avg": [round(load_start, 2), round(load_end, 2)], "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()

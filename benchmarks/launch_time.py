"""Launch-to-first-frame of `tui-lab`: the app in a pseudo-terminal, timed until its first screen shows.

The first frame is the Architecture view with the preset's exact parameter count (arithmetic only);
torch loads afterwards, in the worker that builds the live model. Also times `import torch` alone in a
fresh interpreter, for comparison. Prints one line per run and, last, one JSON object.

    .venv/bin/python benchmarks/launch_time.py [--runs 3] [--preset gpt2-small]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import termios
import time

from tui_lab.analysis import count_params
from tui_lab.presets import load_preset


def first_frame_seconds(preset: str, timeout: float = 30.0, cols: int = 120, rows: int = 40) -> float:
    """Seconds from spawning the process to the count appearing on the terminal."""
    needle = f"{count_params(load_preset(preset)).total:,}".encode()
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # child: becomes the app
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "tui_lab.cli", "--preset", preset])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    seen = b""
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
                # the count is written as one run of text; keep a short tail to catch a split read
                if needle in seen:
                    return time.perf_counter() - start
                seen = seen[-4096:]
        raise RuntimeError(f"no first frame within {timeout} s")
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(fd)


def torch_import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import torch; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--preset", default="gpt2-small")
    args = parser.parse_args()
    frames = []
    for i in range(args.runs):
        frames.append(first_frame_seconds(args.preset))
        print(f"run {i + 1}: first frame after {frames[-1]:.3f} s")
    torch_s = torch_import_seconds()
    print(f"import torch alone: {torch_s:.3f} s; load average {os.getloadavg()[0]:.2f}")
    print(json.dumps({"preset": args.preset, "first_frame_s_median": round(statistics.median(frames), 3),
                      "first_frame_s": [round(f, 3) for f in frames], "import_torch_s": round(torch_s, 3)}))


if __name__ == "__main__":
    main()

"""Shared by the generation benchmarks: the machine line they print first, and the same measurement rerun
in a child process whose OpenMP starts with one thread (the reference column)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import torch


def machine_line(load: tuple[float, float, float]) -> str:
    return (f"torch {torch.__version__}, {torch.get_num_threads()} CPU thread(s) by default, "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def rerun_with_one_thread(script: str, argv: list[str]) -> dict:
    """`script argv --child` with OMP_NUM_THREADS=1: the JSON its last line prints."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, script, *argv, "--child"], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def add_reference_options(parser: argparse.ArgumentParser) -> None:
    """--device, --no-reference (skip the one-thread column) and the hidden --child the rerun passes."""
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--no-reference", action="store_true", help="skip the OMP_NUM_THREADS=1 column")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)


def reference_argv() -> list[str]:
    """This run's arguments for the one-thread child (which always measures)."""
    return [a for a in sys.argv[1:] if a != "--no-reference"]

"""How a served app ends, and what its page is told: the memory limit set in the child, the tail of its stderr
kept, and the one line that says why an app ended on its own.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from tui_lab.analysis.format import fmt_bytes

# What an app's failed allocation leaves in its stderr: Python's, torch's and C++'s words for it.
OUT_OF_MEMORY = ("MemoryError", "Cannot allocate memory", "can't allocate memory", "not enough memory",
                 "std::bad_alloc", "out of memory", "can't start new thread")
STDERR_TAIL = 8192  # bytes of an app's stderr kept, to say why it ended


def ended_reason(returncode: int | None, stderr: bytes, memory: int) -> str | None:
    """One line for the page of an app that ended on its own; None when it quit cleanly."""
    if returncode in (0, None):
        return None
    text = stderr.decode("utf-8", "replace")
    if memory and out_of_memory(stderr):
        return (f"tui-lab: this session's app passed its memory limit ({fmt_bytes(memory)}, serve "
                "--session-memory-mb) and ended; reload to start it again (the session's folder is kept)")
    last = next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
    said = f": {last[:200]}" if last else ""
    return f"tui-lab: this session's app ended (exit {returncode}){said}; reload to start it again"


def out_of_memory(stderr: bytes) -> bool:
    """An uncaught failure to allocate (a traceback naming it), not a run's out-of-memory the app reported itself."""
    text = stderr.decode("utf-8", "replace")
    return "Traceback" in text and any(word in text for word in OUT_OF_MEMORY)


class StderrTail:
    """The app's stderr as textual-serve reads it, keeping its last STDERR_TAIL bytes for `ended_reason`."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream, self.tail = stream, b""

    async def read(self, n: int = -1) -> bytes:
        data = await self.stream.read(n)
        self.tail = (self.tail + data)[-STDERR_TAIL:]
        return data


def limit_memory(limit: int) -> Callable[[], None] | None:
    """Run in the child between fork and exec: the limit holds for the app and each process it starts (each its
    own). Data, not address space: torch reserves address space it never touches (an idle app: VmSize 0.9 GB,
    VmData 0.3 GB; its trainer process 1.2 and 0.6), and RLIMIT_DATA counts every private writable mapping (Linux
    4.7+), where tensors live. None where there is no limit to set (0, or no fork: Windows)."""
    if not limit or sys.platform == "win32":
        return None
    import resource

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    return apply

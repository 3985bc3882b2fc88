"""What a benchmark run costs in CPU, from /proc (Linux): the CPU's name, each thread's and another process's CPU
seconds, and `CpuWindow`, the app's CPU per wall second (whole, by thread) and its trainer child's between two
marks, with an optional cProfile of the UI thread. ui_latency.py reads the app with it while keys arrive."""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import threading
import time
from pathlib import Path


def cpu_name() -> str:
    """The CPU's model name and its widest vector units, from /proc/cpuinfo (Linux; 'unknown' elsewhere)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    flags = set(fields.get("flags", "").split())
    units = [name for flag, name in (("avx512f", "AVX-512"), ("amx_tile", "AMX"), ("avx2", "AVX2")) if flag in flags]
    if "AVX-512" in units:
        units.remove("AVX2")
    return f"{fields.get('model name', 'unknown')} ({', '.join(units) or 'no AVX'})"


TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process so far, by thread name (/proc: Linux only)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        name = names.get(int(task.name), "other")
        if name.startswith(("QueueFeederThread", "Thread-")) or name == "other":
            name = "other (queue threads, OpenMP, ...)"
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
    return out


def process_cpu(pid: int) -> float:
    """CPU seconds of another process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


class CpuWindow:
    """The app's CPU per wall second (whole process, each thread) and the trainer child's, between two marks."""

    def __init__(self, child_pid: int, profile: bool) -> None:
        self.child_pid = child_pid
        # CPU time of the UI thread, not wall time: on a shared machine waiting for a core is not a cost
        self.profiler = cProfile.Profile(time.thread_time) if profile else None

    def begin(self) -> None:
        self.wall, self.cpu, self.threads = time.perf_counter(), time.process_time(), thread_cpu()
        self.child = process_cpu(self.child_pid)
        if self.profiler:
            self.profiler.enable()  # the UI thread only: cProfile follows the thread that enabled it

    def end(self, steps: int) -> dict:
        if self.profiler:
            self.profiler.disable()
        wall = time.perf_counter() - self.wall
        cpu, threads, child = time.process_time() - self.cpu, thread_cpu(), process_cpu(self.child_pid) - self.child
        by_thread = {k: round((v - self.threads.get(k, 0.0)) / wall, 3) for k, v in threads.items()}
        return {"app_cpu": round(cpu / wall, 3), "child_cpu": round(child / wall, 3), "window_s": round(wall, 1),
                "steps": steps, "app_cpu_ms_per_step": round(1000 * cpu / steps, 1) if steps else None,
                "app_cpu_threads": {k: v for k, v in sorted(by_thread.items(), key=lambda kv: -kv[1]) if v}}

    def report(self, top: int = 25) -> str:
        out = io.StringIO()
        pstats.Stats(self.profiler, stream=out).sort_stats("tottime").print_stats(top)
        pstats.Stats(self.profiler, stream=out).sort_stats("cumulative").print_stats(top)
        return out.getvalue()

"""How many CPU threads a call runs on: chosen for each call from the size of its ops and the load now.

Why per call (issue 39): a count measured once and kept goes stale. On the shared 2-core machine the kept
choice for gpt2-toy-english (2 threads, measured at load 1.6) made `tui-lab generate` 20-80x slower than one
thread once other work held the load at 4: OpenMP threads meet at a barrier after every op, and a thread
the scheduler has set aside for another process's timeslice holds all of them there.

The rule (`choose`), in order:
1. A count forced by the environment (TUI_LAB_DECODE_THREADS, TUI_LAB_TRAIN_THREADS) wins: for measuring.
2. Ops too small to share out take 1 thread. The grain is the multiply-adds of the call's largest op (rows
   x tokens per pass x d_model x its widest output). Below SPLIT_MACS an op takes tens of microseconds on
   one core, about what a fork and join costs on an idle machine, so a second thread gains little there
   and loses a timeslice whenever a core is busy. gpt2-toy's cached step (1 x 128 x 1024) is below it.
   Where the caller can try counts (`may_try`: a generation's cached steps, hundreds alike) and cores are free,
   the size cannot say, so the caller tries: the choice names the counts to try (`trial`). On idle cores 2
   threads made gpt2-toy's steps 5-13% faster on an Intel Xeon (AVX-512) and 13% slower on an AMD EPYC (AVX2).
3. Otherwise every core that others leave free now, at most `ceiling` (torch's count, or OMP_NUM_THREADS
   as a person set it), at least 1.

The load now (`load_now`) is the others' runnable tasks, read from /proc/stat's `procs_running` a few times
over ~10 ms, less this process's own running threads (the reader, a spinning OpenMP worker: they are not
others), averaged. The 1-minute load average is not used where /proc is there: it lags by a minute (a busy
process started 5 s ago barely shows) and counts this process's own past threads (a run on 2 threads would
then see itself as the other load and flip to 1, and back). Without /proc (macOS) the load average, less
one for this process, is the estimate. Where /proc/stat counts more CPUs than this process may use (a
container on a bigger host), the others are scaled to this process's share of them. No torch here.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

SPLIT_MACS = 1 << 19  # an op's multiply-adds below which it is not shared out (see the module's docstring)
FREE_SHARE = 0.75  # a core counts as free when others leave at least this share of it
SAMPLES, SAMPLE_GAP_S = 8, 0.0012  # /proc/stat reads per estimate, and the pause between them


@dataclass(frozen=True)
class Load:
    """What `load_now` saw: the cores this process may use and the others' runnable tasks on them."""

    cores: int
    others: float  # runnable tasks of other processes, scaled to `cores`
    source: str  # "procs_running" or "loadavg"
    load1: float | None  # the 1-minute load average, reported beside (not used where /proc is there)

    @property
    def free(self) -> int:
        """Cores others leave free now (0 or more)."""
        return max(0, math.floor(self.cores - self.others + (1 - FREE_SHARE)))


@dataclass(frozen=True)
class Choice:
    """A thread count and why: what `--json` shows."""

    threads: int
    why: str
    grain: int  # multiply-adds of the call's largest op
    ceiling: int
    load: Load | None  # None when the count was forced or the ops too small to look
    trial: tuple[int, ...] = ()  # counts the caller tries before it settles (rule 2); `threads` until then

    def to_dict(self) -> dict:
        out = asdict(self)
        out["load"] = {**asdict(self.load), "free": self.load.free} if self.load is not None else None
        return out


def choose(grain: int, ceiling: int, forced_by: str, load: Load | None = None, may_try: bool = False) -> Choice:
    """The thread count for a call whose largest op does `grain` multiply-adds; `forced_by` names the
    environment variable that may force it; `load` is read now when not given (and needed). `may_try`: the
    caller can try counts where the ops are too small to tell (rule 2)."""
    ceiling = max(1, ceiling)
    forced = os.environ.get(forced_by, "")
    if forced.isdigit() and int(forced) > 0:
        return Choice(int(forced), f"forced by {forced_by}", grain, ceiling, None)
    small = f"ops too small to share out ({grain:,} < {SPLIT_MACS:,} multiply-adds)"
    if grain < SPLIT_MACS and (not may_try or ceiling == 1):
        return Choice(1, small, grain, ceiling, None)
    if ceiling == 1:
        return Choice(1, "one thread allowed (torch's count or OMP_NUM_THREADS)", grain, ceiling, None)
    load = load or load_now()
    if grain < SPLIT_MACS:
        free = min(ceiling, load.free)
        if free < 2:
            return Choice(1, f"{small}, and {load.free} of {load.cores} cores free", grain, ceiling, load)
        return Choice(1, f"{small} to tell from their size: {load.free} of {load.cores} cores free, so the first "
                         f"steps try 1 and {free} threads", grain, ceiling, load, trial=(1, free))
    threads = max(1, min(ceiling, load.free))
    why = (f"{load.free} of {load.cores} cores free ({load.others:.1f} tasks of others running, "
           f"{load.source})" + (f", at most {ceiling}" if load.free > ceiling else ""))
    return Choice(threads, why, grain, ceiling, load)


def op_grain(config, tokens: int) -> int:
    """Multiply-adds of the largest matmul over `tokens` token vectors of a model with `config`: d_model into
    its widest output (the feed-forward's inner width or the vocabulary)."""
    return int(tokens) * config.d_model * max(config.d_model, config.d_ff, config.vocab or 0)


def ceiling_threads() -> int:
    """The most threads a call may take: OMP_NUM_THREADS as a person set it, else the cores."""
    given = os.environ.get("OMP_NUM_THREADS", "").split(",")[0]
    return int(given) if given.isdigit() and int(given) > 0 else usable_cores()


def usable_cores() -> int:
    """The CPUs this process may run on: its affinity, within a cgroup's CPU quota where one is set."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def load_now() -> Load:
    """The others' runnable tasks now (see the module's docstring)."""
    cores = usable_cores()
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    counts = []
    for i in range(SAMPLES):
        running, host_cpus = _procs_running()
        if running is None:
            return Load(cores, max(0.0, (load1 or 0.0) - 1), "loadavg", load1)
        counts.append(max(0, running - _own_running()) * min(1.0, cores / max(1, host_cpus)))
        if i < SAMPLES - 1:
            time.sleep(SAMPLE_GAP_S)
    return Load(cores, sum(counts) / len(counts), "procs_running", load1)


def _procs_running() -> tuple[int | None, int]:
    """/proc/stat's runnable tasks and the CPUs it counts; (None, 0) where there is no /proc."""
    try:
        text = Path("/proc/stat").read_text()
    except OSError:
        return None, 0
    host = sum(1 for line in text.splitlines() if line.startswith("cpu") and line[3:4].isdigit())
    running = next((int(line.split()[1]) for line in text.splitlines() if line.startswith("procs_running")), None)
    return running, host


def _own_running() -> int:
    """This process's threads that are running or runnable (the reader among them)."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for task in tasks:
        try:
            stat = Path(f"/proc/self/task/{task}/stat").read_text()
        except OSError:
            continue  # the thread ended
        count += stat[stat.rfind(")") + 2:][:1] == "R"
    return max(1, count)

import os

# Tests run on shared 2-core machines: keep torch from oversubscribing them.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The app's trainer process too (it takes every core by default): its 2 OpenMP threads spin at each
# barrier, which on a 2-core runner doubled a Pilot training test's CPU time (32 s vs 18 s) for the same
# tiny steps. Tests of the thread policy set their own counts.
os.environ.setdefault("TUI_LAB_TRAIN_THREADS", "1")

import gc  # noqa: E402
import tempfile  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _private_user_folders(tmp_path_factory, monkeypatch):
    """Exports and per-machine measurements go to a temporary folder, never the person's home."""
    monkeypatch.setenv("TUI_LAB_EXPORTS", str(tmp_path_factory.mktemp("exports")))
    monkeypatch.setenv("TUI_LAB_CACHE", os.environ.get("TUI_LAB_TEST_CACHE") or _SESSION_CACHE)


_SESSION_CACHE = tempfile.mkdtemp(prefix="tui-lab-cache-")


def _share_parsed_css() -> None:
    """Every Pilot app parses each widget's CSS again, twice (once more when its theme is set): ~0.16 s of the
    ~3.5 s of CPU an app launch costs here (measured: 8 launches each way), paid by ~150 launches. A person runs
    one app per process, so only tests repeat it.
    Textual caches parses per stylesheet, by source and not by theme variables (a theme change clears it); this
    cache is per process and keyed by the variables too, so every app gets the rules it would have parsed."""
    import inspect

    from textual.css.stylesheet import Stylesheet

    parse_rules = Stylesheet._parse_rules
    if list(inspect.signature(parse_rules).parameters) != ["self", "css", "read_from", "is_default_rules",
                                                            "tie_breaker", "scope"]:
        return  # another Textual: leave it as it is
    parsed: dict[tuple, list] = {}

    def shared(self, css, read_from, is_default_rules=False, tie_breaker=0, scope=""):
        key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(sorted(self._variables.items())))
        if key not in parsed:  # a parse that fails raises here and is not kept
            parsed[key] = parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
        return parsed[key]

    Stylesheet._parse_rules = shared


_share_parsed_css()


def _settled(pump) -> bool:
    """Nothing queued, nothing being handled, no refresh asked for: the pump waits in its queue's `get` (Textual's
    own Queue: a deque and an Event), so every
    message posted to it before now has been handled (and its idle refresh check would find nothing to do)."""
    queue = pump.__dict__.get("_message_queue")  # a cached_property: absent until the pump has one
    return (queue is not None and not queue.values and not queue.ready_event.is_set()
            and any(not waiter.done() for waiter in queue.ready_event._waiters)
            and pump._pending_message is None and not pump._next_callbacks
            and not (getattr(pump, "_refresh_styles_required", False) or getattr(pump, "_scroll_required", False)
                     or getattr(pump, "_repaint_required", False) or getattr(pump, "_layout_required", False)))


def _cheaper_pilot_waits() -> None:
    """Pilot's `pause()`, `press()` and each click wait until the App, the screen and every widget on it have
    handled what was queued to them (`Pilot._wait_for_screen`): a callback posted to each of the ~680 widgets of
    the app with its seven views, and an Idle event handled by each: ~40 ms of CPU per pause (~0.4 s of wall on a
    loaded 2-core machine), paid by every `wait_for` poll (each 50 ms), key press and click of ~250 tests.
    Here the callback goes only to the App, the screen and the widgets that have anything left to handle; a
    widget already waiting on an empty queue has handled everything queued to it, which is what the wait is
    for. A person's app never runs Pilot; this is the tests' cost only. Another Textual: left as it is."""
    import asyncio
    import inspect

    from textual._queue import Queue
    from textual.message_pump import MessagePump
    from textual.pilot import Pilot, WaitForScreenTimeout

    original, pump_init = inspect.getsource(Pilot._wait_for_screen), inspect.getsource(MessagePump.__init__)
    if (list(inspect.signature(Pilot._wait_for_screen).parameters) != ["self", "timeout"]
            or "screen.walk_children(with_self=True)" not in original or "call_later(decrement_counter)" not in original
            or "self._pending_message" not in pump_init or "self._next_callbacks" not in pump_init
            or "self.ready_event.wait()" not in inspect.getsource(Queue.get)
            or not hasattr(asyncio.Event(), "_waiters")):
        return

    async def _wait_for_screen(self, timeout: float = 30.0) -> bool:
        try:
            screen = self.app.screen
        except Exception:
            return False
        children = [self.app, screen, *(node for node in screen.walk_children() if not _settled(node))]
        count = 0
        count_zero_event = asyncio.Event()

        def decrement_counter() -> None:
            nonlocal count
            count -= 1
            if count == 0:
                count_zero_event.set()

        for child in children:
            if child.call_later(decrement_counter):
                count += 1
        if count:
            wait_for = [asyncio.create_task(count_zero_event.wait()),
                        asyncio.create_task(self.app._exception_event.wait())]
            _, pending = await asyncio.wait(wait_for, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            if len(wait_for) == len(pending):
                raise WaitForScreenTimeout("Timed out while waiting for widgets to process pending messages.")
            if count > 0:
                return False
        return True

    Pilot._wait_for_screen = _wait_for_screen


_cheaper_pilot_waits()


def _loop_idle_waits() -> None:
    """Pilot's `press()` waits twice per key, and `pause()` once, until the process looks idle (textual._wait:
    20 ms sleeps until one passes with under 1 ms of the process's CPU, at most 1 s). The process's CPU counts
    every thread's: while a worker thread builds a model, generates, trains or measures, each wait ran its full
    second, two per key typed (a test typing 11 keys during a generation spent 22 s so). Here the same wait reads
    the CPU of the thread that runs the app's event loop (the thread that awaits it): it ends once the app has
    stopped handling what the key caused, as Textual's ends on an idle app; a worker thread's own results are
    what the tests' `wait_for` conditions wait for. A person's app never runs Pilot. Another Textual: left as is."""
    import asyncio
    import inspect
    import time

    import textual.app as textual_app
    import textual.pilot as textual_pilot
    from textual import _wait

    original = _wait.wait_for_idle
    if (list(inspect.signature(original).parameters) != ["min_sleep", "max_sleep"]
            or "process_time()" not in inspect.getsource(original)
            or textual_app.wait_for_idle is not original or textual_pilot.wait_for_idle is not original):
        return

    # The window stays Textual's 20 ms, longer than a frame (~17 ms): a change's repaint waits on a timer, not on
    # CPU, and 5 ms windows ended a pause before it (a screen read half laid out: test_heatmap_readout.py).
    async def wait_for_idle(min_sleep: float = _wait.SLEEP_GRANULARITY, max_sleep: float = 1) -> None:
        start = time.monotonic()
        while True:
            cpu = time.thread_time()
            await asyncio.sleep(_wait.SLEEP_GRANULARITY)
            cpu_elapsed, elapsed = time.thread_time() - cpu, time.monotonic() - start
            if elapsed >= max_sleep or (elapsed > min_sleep and cpu_elapsed < _wait.SLEEP_IDLE):
                return

    textual_app.wait_for_idle = textual_pilot.wait_for_idle = wait_for_idle


_loop_idle_waits()


# Garbage collection took ~1 s of the ~3.3 s of CPU a Pilot app launch costs in a test worker (gc.callbacks, 3
# launches): each app makes ~50k objects, and every young collection and each full one walked the ~400k that
# torch, transformers and Textual bring. Rarer young collections, and everything loaded by collection time moved
# out of the collector's sight: 2.0-2.4 s per launch with 0.1-0.2 s of collecting. A person runs one app per
# process; only the tests, ~150 launches in two processes, pay this.
gc.set_threshold(10_000, 10, 10)


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()


# -- the walk: the app in a real terminal at typing speed beside a busy CPU (tests/support/walk.py) --------------
@pytest.fixture(scope="session")
def busy_cpu():
    """A 2-thread matmul loop for all the walks (one process: its torch import is paid once, not per module)."""
    from walk import Busy, tmux_available

    if not tmux_available():
        pytest.skip("tmux is not installed (the walk needs a real terminal)")
    busy = Busy()
    yield busy
    busy.stop()


@pytest.fixture(scope="session")
def bare80(busy_cpu):
    """Bare `tui-lab` at 80 x 24 with its shipped toy in, shared by the walks that start from it (a launch costs
    seconds of the walks' minute). Each walk opens its view first; one that resizes the window puts it back.
    The screens of the launch are kept for the opening walk: `first_screen` (the Tour's first page) and
    `nav_screen` (its nav line and keys drawn)."""
    from walk import Walk

    # One decoding thread: no thread-count measurement in Generate (the mechanism walk's panels run on it).
    w = Walk([], 80, 24, seed=23, env={"TUI_LAB_DECODE_THREADS": "1"})
    try:
        w.first_screen = w.wait_for("Step 1 of 8", timeout=40)
        w.nav_screen = w.wait_for(lambda s: "1 the model's form" in s and "n next" in s.splitlines()[-1], timeout=40)
        w.wait_for("shipped toy", timeout=40)  # the live model is in: nothing reloads a form mid-walk
        yield w
    finally:
        w.close()


@pytest.fixture(scope="session")
def preset80(busy_cpu):
    """`tui-lab --preset gpt2-toy` at 80 x 24 with its live model in (random weights: applying another preset
    asks nothing, and no shipped model reloads the form), shared by the walks that start from the form."""
    from walk import Walk

    w = Walk(["--preset", "gpt2-toy"], 80, 24, seed=230)
    try:
        w.wait_for("random weights: gpt2-toy", timeout=60)
        yield w
    finally:
        w.close()


@pytest.fixture
def walk(busy_cpu, request):
    """`walk(*app_args, size=(80, 24))` starts `tui-lab ARGS` in tmux; every walk started is closed after."""
    from walk import Walk

    started = []

    def start(*args: str, size: tuple[int, int] = (80, 24), seed: int | None = None):
        seed = zlib.crc32(request.node.nodeid.encode()) if seed is None else seed
        started.append(Walk(list(args), *size, seed=seed))
        return started[-1]

    yield start
    for one in started:
        one.close()


# The developer's fast loop is `pytest -m "not slow" -n 2` (README). Slow is chosen by room: the folders whose
# tests drive the app with Pilot or tmux, start processes (trainer children, torchrun ranks, servers, a fresh venv)
# or train real runs. A single slow test elsewhere carries @pytest.mark.slow itself. CI runs everything.
SLOW_ROOMS = ("app", "walk", "experiments", "processes")


# Tests that drive the app through its event loop and timers (Pilot, tmux walks). On a loaded 2-core machine a
# wait can still run out where nothing is wrong, and one such wait failed a whole CI run: each gets one rerun,
# which the summary counts ("N rerun"), so a flaky test shows up without hiding a test that always fails.
# The two-rank torchrun tests too: a CI run saw one rank abort (SIGABRT) once under gloo on localhost, and the
# same test passed four runs out of four alone and beside another worker.
APP_DRIVING_ROOMS = ("app", "walk")
RERUN_FILES = ("test_distributed.py",)


# The walks live in tests/walk/, and only there: the walk command (README, .ci/run) collects that folder alone
# (collecting all ~3,200 tests to select the walks took ~10 s of the walks' minute). Every test in it is a walk; a
# walk anywhere else would run in neither command, so it stops the run.
WALK_ROOM = "walk"
TESTS = Path(__file__).resolve().parent


def _room(item) -> str:
    """The first folder under tests/ that holds the test's file ('' for a file directly in tests/)."""
    parts = Path(item.path).resolve().relative_to(TESTS).parts
    return parts[0] if len(parts) > 1 else ""


# The longest test first: the crawler's CI tier (~3 min of one worker) ran last in a CI run and kept one worker busy
# for 184 s after the other had finished (the tests' 600 s became 784 s). Work stealing shares out the rest.
FIRST = ("tests/app/shell/test_crawl.py",)


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(FIRST))  # stable: the rest keep their order
    misplaced = []
    for item in items:
        room = _room(item)
        if room in SLOW_ROOMS:
            item.add_marker(pytest.mark.slow)
        if room in APP_DRIVING_ROOMS or item.path.name in RERUN_FILES:
            item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=1))
        if room == WALK_ROOM:
            item.add_marker(pytest.mark.walk)
        elif item.get_closest_marker("walk") is not None:
            misplaced.append(item.nodeid)
    if misplaced:
        raise pytest.UsageError("walk tests belong in tests/walk/ (the walk command collects only that folder): "
                                + ", ".join(misplaced))


# -- where the suite's time goes: TUI_LAB_TIMELINE=FILE writes one JSON line per test (its worker, start and end on
# the wall clock, and the CPU seconds it cost the worker and its reaped children). CPU is what load does not
# change: it finds the tests to make cheaper on a machine that is busy; the wall times show each worker's idle gaps.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("TUI_LAB_TIMELINE")
    if not path:
        yield
        return
    import json
    import resource
    import time

    def cpu() -> float:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    start, cpu_start = time.time(), cpu()
    yield
    line = {"test": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "start": start,
            "end": time.time(), "cpu": cpu() - cpu_start}
    with open(path, "a") as out:
        out.write(json.dumps(line) + "\n")

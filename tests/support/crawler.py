"""A crawler over the app's own keys (no tests here): every state a person can reach, checked.

It reads the keys from Textual's binding maps at run time (`app.active_bindings`: the focused widget's, its
ancestors', the screen's and the app's, shown in the footer or hidden), never from a list, so a panel or key
added later is crawled without naming it. From each view (its number key) it presses every key of the view,
then every key of the state that reached (two keys deep; three in the long tier), with Tab, Shift+Tab, Esc
and Enter beside them; the view is opened again (Esc, its number key) before each first key. A seeded random
walk of keys (the view keys among them) follows; the seed is printed, so a failure replays.

States are told apart by the screen's text with the volatile parts masked (digits, a plot's braille, a
progress bar's cells). Each new state is checked against the rules of tests/screen_rules.py and these:
- no traceback (the app still runs) and no error notification from a handler's exception;
- no dead press: a key the screen names (the footer, or a hint or title beside its description, as
  "log scale l") changes the screen or shows a message once the app has settled (at most 5 s);
- no swallowed key: a key the screen names never types into a field;
- no unbound key named: a letter the screen names beside its description is bound where the focus is, unless it
  is named inside a widget that binds it (a panel's title, a grid's border: that widget's key);
- a view's status line (a Static whose id ends in -status or -summary) is never scrolled out of reach:
  once the keys scroll it off, PageUp and Home bring it back;
- a one-line label is not cut ("…") while its pane has room for it whole.

Every key a view binds at its home state is pressed from it (a dimmed one too: it must do nothing), so the
per-view counts (bindings pressed / bound) reach all of them; a key that starts a run (training, a measurement)
is followed by the run's stop key, pressed and checked, so the keys after it do not wait on a worker's frames.
`plan()` says, from the classes alone, which keys of each view a crawl of a given depth presses
(tests/app/shell/test_crawl_plan.py).

What a press costs (issue 36, h-crawl): the screen is read once per frame the app draws (App._display
counted), from the compositor's strips, not once per 30 ms poll through a Rich console; a settle asks the
app's queues once, when the screen looks still, not on every poll; the rules look at the widgets the screen
shows, not a query of every view's ~700; a state seen before is not checked again (its status line neither).
benchmarks/interface/crawl_cost.py prints a crawl's counts with its wall and CPU seconds.

    crawl = Crawler(["--preset", "gpt2-toy"], (80, 24), depth=2, walk_keys=300, seed=7)
    report = await crawl.run()      # report.failures, report.summary()
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import random
import re
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from app_support import app_for, screen_lines, wait_ready
from screen_rules import (
    ELLIPSIS,
    cut_numbers,
    edge_words,
    forecast_rooms,
    input_values,
    overlaps,
    plot_overruns,
    plot_rows,
    shown_widgets,
    squeezed_boxes,
    table_cells,
    text_problems,
    under_menus,
)

# Keys the crawler never presses: they end the session (quit), copy to the clipboard, or open the command
# palette (a list of every action, crawled through the keys themselves).
SKIP_ACTIONS = {"quit", "app.quit", "screen.copy_text", "command_palette", "app.command_palette"}
EXTRA_KEYS = ("tab", "shift+tab", "escape", "enter")
CI_DEPTH = 2  # the CI tier's keys deep (tests/app/shell/test_crawl.py; its plan: tests/app/shell/test_crawl_plan.py)
# The keys that end a run a key started (enabled only while it runs).
STOP_ACTIONS = {"stop", "cancel", "cancel_job", "cancel_build"}
NAMED_WAIT_S = 5.0  # a named key's effect may wait for pending work: at most this long
DEBUG = bool(os.environ.get("TUI_LAB_CRAWL_DEBUG"))  # print each settle the 5 s cap ended
VERIFY = bool(os.environ.get("TUI_LAB_CRAWL_VERIFY"))  # compare each screen read with screen_lines
POLL_S = 0.03  # between two looks at the screen while a key's effect settles
# The screen (its volatile parts masked) unchanged this long, with no work pending (a worker, a key held, a view's
# parts mounting): settled. With work pending (a training run's worker never ends) the screen must hold still for
# BUSY_QUIET_S instead.
QUIET_S = 0.06
BUSY_QUIET_S = 0.3
# A key that changed nothing, with no work pending, is left after this (a named key waits up to NAMED_WAIT_S while
# work is pending: "once the app has settled"; a named key that still changed nothing is a dead press).
UNNAMED_WAIT_S = 0.1
NAMED_IDLE_WAIT_S = 0.6
# Keys that move a cursor or scroll: pressed from every state, but not the first of two (a cursor one cell on
# shows the same panels and keys; the second key's checks would repeat the first's).
MOTION = {
    "up",
    "down",
    "left",
    "right",
    "home",
    "end",
    "pageup",
    "pagedown",
    "ctrl+pageup",
    "ctrl+pagedown",
    "shift+tab",
    "ctrl+home",
    "ctrl+end",
    "shift+left",
    "shift+right",
    "shift+home",
    "shift+end",
    "ctrl+left",
    "ctrl+right",
    "backspace",
    "delete",
    "ctrl+w",
    "ctrl+u",
    "ctrl+k",
    "ctrl+f",
    "ctrl+a",
    "ctrl+e",
    "ctrl+d",
    "ctrl+shift+left",
    "ctrl+shift+right",
    "shift+up",
    "shift+down",
}
_DIGITS = re.compile(r"\d+")
_BRAILLE = re.compile("[\u2800-\u28ff]")
_BARS = re.compile("[━╸╺╾╼─]{3,}")
# A handler's exception shown by tui_lab.app.guard: its message is Python's, not the app's own refusal.
_INTERNAL = re.compile(
    r"\b(NoneType|object has no attribute|not subscriptable|index out of range|"
    r"unexpected keyword|positional argument|not iterable|unhashable|KeyError|"
    r"referenced before assignment|NoMatches|No nodes match)\b"
)


def masked(lines: Sequence[str]) -> str:
    """The screen with what changes by itself masked: numbers (timings, steps), plot ink, progress bars."""
    text = "\n".join(lines)
    return _BARS.sub("━", _BRAILLE.sub("⠿", _DIGITS.sub("#", text)))


def state_id(lines: Sequence[str]) -> str:
    return hashlib.sha1(masked(lines).encode()).hexdigest()[:10]


@dataclass
class Failure:
    rule: str
    detail: str
    path: str
    screen: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.detail}\n  after: {self.path}\n" + "\n".join(
            f"  |{line}" for line in self.screen.splitlines()
        )


@dataclass
class Report:
    label: str
    seed: int
    states: set[str] = field(default_factory=set)
    keys: int = 0
    renders: int = 0  # looks at the screen while keys settled
    mismatches: int = 0  # (TUI_LAB_CRAWL_VERIFY) looks where the crawler's grid and a fresh render differ
    distinct_keys: set[str] = field(default_factory=set)
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    known: list[Failure] = field(default_factory=list)

    cut_short: list[str] = field(default_factory=list)  # what the time budget ended before it was done
    coverage: dict[str, list[int]] = field(default_factory=dict)  # view: [its keys pressed, its keys]
    uncovered: dict[str, list[str]] = field(default_factory=dict)  # view: its keys never pressed
    never_live: dict[str, list[str]] = field(default_factory=dict)  # view: its keys pressed only while dimmed
    walked: int = 0  # keys of the random walk pressed
    key_seconds: float = 0.0  # wall time of the keys (the app's start not counted)
    cpu_seconds: float = 0.0  # this process's CPU time over them (all threads): the crawl's cost beside the load

    def summary(self) -> str:
        short = f", cut short by the time budget: {', '.join(self.cut_short)}" if self.cut_short else ""
        views = ", ".join(f"{v} {done}/{total}" for v, (done, total) in self.coverage.items())
        return (
            f"{self.label}: {len(self.states)} states, {self.keys} keys pressed ({len(self.distinct_keys)} "
            f"distinct), {self.renders} screen looks, {self.seconds:.0f} s (keys {self.key_seconds:.0f} s, CPU "
            f"{self.cpu_seconds:.0f} s), seed {self.seed}, "
            f"{len(self.failures)} failures, {len(self.known)} known findings, {len(self.refusals)} refusals shown"
            f"{short}\n  bindings per view (pressed/bound): {views}; random walk {self.walked} keys"
            + "".join(f"\n  {v} not pressed: {' '.join(keys)}" for v, keys in self.uncovered.items() if keys)
            + "".join(f"\n  {v} pressed only while dimmed: {' '.join(keys)}"
                      for v, keys in self.never_live.items() if keys)
        )

    @property
    def complete(self) -> bool:
        """Every view's every key pressed and the walk done: the budget cut nothing."""
        return not self.cut_short and all(done >= total for done, total in self.coverage.values())


@contextlib.contextmanager
def _no_idle_waits():
    """Textual's Pilot.press waits, twice a key, until the process's CPU time stops moving (textual._wait: at most
    1 s each); with a model's threads or a worker busy that is the full second, most of a crawl's time. The crawler
    waits on the app's own signals instead (_settle: the screen drawn and still, no worker, key or mount pending)."""
    import textual.app as textual_app

    async def no_wait(*_args, **_kwargs) -> None:
        await asyncio.sleep(0)

    original = textual_app.wait_for_idle
    textual_app.wait_for_idle = no_wait
    try:
        yield
    finally:
        textual_app.wait_for_idle = original


class OutOfTime(Exception):
    """The crawl's time budget is spent: what it reached is reported, the rest named as cut short."""


def footer_shows(footer: str, display: str) -> bool:
    """Whether the footer row drawn shows a key (as the footer prints it: "esc", "^s"). A key the footer shows is
    named by the frame read before the press, not by the bindings of that moment: a focus moved after the last
    frame (a field's `esc leave` enabled while the frame still had the list's footer and `q quit`) named a key the
    person never saw, and its press changed nothing on that frame (the long tier's translator 80x24 walk at
    d10fea8, seed 839854392, Experiments `i escape`)."""
    return display in footer.replace("\u258f", " ").split()


def _naming(line: str, key: str, binding) -> list[int]:
    """The columns where `line` names the letter `key` as a word, when it also prints a word of its description
    ("log scale l"); [] when it does not name it."""
    low = line.lower()
    if not any(w in low for w in _key_words(binding)):
        return []
    # (a letter after a number is its unit, not a key: "about 4 s left" beside "next-token" named `s` (sort next)
    # on a head-ablation run's progress line, the long tier's HF 160x48 walk)
    return [m.start() for m in re.finditer(rf"(?<![\w^+-])(?<!\d ){re.escape(key)}(?![\w+-])", line)]


def _key_words(binding) -> list[str]:
    """The words a screen may print beside a binding's key: its description's and its action's."""
    words = re.findall(r"[a-z]{3,}", f"{binding.description} {binding.action}".lower())
    return [w for w in words if w not in {"app", "screen", "the", "and", "show", "toggle", "action"}]


class Crawler:
    def __init__(
        self,
        argv: Sequence[str],
        size: tuple[int, int],
        depth: int = 2,
        walk_keys: int = 300,
        seed: int | None = None,
        known: Sequence[tuple[str, str, str]] = (),
        budget_s: float | None = None,
        progress_s: float | None = None,
    ) -> None:
        self.argv, self.size, self.depth, self.walk_keys = list(argv), size, depth, walk_keys
        # every progress_s seconds a line of counts, and each failure as found, go to sys.__stderr__ (pytest -s or
        # --capture=sys lets them through at once): a case killed by its timeout has printed what it reached
        self.progress_s, self._progress_at = progress_s, time.monotonic()
        self.budget_s = budget_s  # wall time for the keys (the app's start not counted); None: no limit
        self._until = float("inf")
        self.seed = seed if seed is not None else random.randrange(1 << 30)
        self.known = list(known)  # (rule, a regex of the detail, the reason and issue item)
        label = f"{' '.join(self.argv) or 'tui-lab'} at {size[0]}x{size[1]}, depth {depth}"
        self.report = Report(label, self.seed)
        self._seen_failures: set[str] = set()
        self._dead: set[tuple[str | None, str]] = set()
        self._modes: set[tuple] = set()
        self._paints = 0  # frames the app has drawn (App._display with an update): the screen moves only then
        self._shown: tuple[int, list[str]] | None = None  # the screen's text as of frame _paints
        self._view_bindings: dict[str, dict[str, str]] = {}  # view: {key: action} of its home state, enabled or not
        self._covered: dict[str, set[str]] = {}  # view: its keys pressed anywhere in its crawl
        self._live: dict[str, set[str]] = {}  # view: its keys pressed while enabled (not dimmed)
        self._crawling: str | None = None
        self._deferred: list[tuple[str, list[str], int]] = []  # (view, path, depth): keys below, put off
        self._ever_bound: dict[str | None, dict[str, object]] = {}  # view: {key: binding} bound in any state seen

    # --- driving ---------------------------------------------------------------------------------------
    async def run(self) -> Report:
        start = time.monotonic()
        print(f"crawl {self.report.label}: seed {self.seed} (replay with this seed)")
        app = app_for(*self.argv)
        try:
            with _no_idle_waits():
                async with app.run_test(size=self.size) as pilot:
                    await self.attach(pilot, app)
                    views = self._view_keys()
                    began, cpu = time.monotonic(), time.process_time()
                    budget = self.budget_s if self.budget_s is not None else float("inf")
                    # Breadth first, so a budget cuts the second keys, not a view's first: every view's every key
                    # (within 60% of the budget), then the keys below the states those reached (each its share,
                    # to 85%), then the random walk (the rest).
                    self._until = began + budget * 0.6
                    for key, view_id in views:
                        await self._within_budget(self._crawl_view(key, view_id), f"view {view_id}")
                    deferred, first = self._deferred, time.monotonic() - began
                    for j, (view_id, path, depth) in enumerate(deferred):
                        self._until = began + first + (budget * 0.85 - first) * (j + 1) / len(deferred)
                        await self._within_budget(self._crawl_below(view_id, path, depth), f"{' '.join(path)} …")
                    self._count_coverage()
                    self._until = began + budget
                    await self._within_budget(self._random_walk([k for k, _ in views]), "random walk")
                    self._until = float("inf")
                    self.report.key_seconds = time.monotonic() - began
                    self.report.cpu_seconds = time.process_time() - cpu
                    await self._stop_jobs()
        except Exception as err:  # noqa: BLE001 - the app ended: that is the finding
            self._fail("traceback", f"{type(err).__name__}: {err}", getattr(self, "_path", ""), traceback.format_exc())
        self.report.seconds = time.monotonic() - start
        return self.report

    async def attach(self, pilot, app) -> None:
        """Watch `app` (its frames, its notifications) and wait until its views are up."""
        self.pilot, self.app = pilot, app
        self._count_paints()
        self._count_notes()
        await wait_ready(pilot)
        await self._all_mounted()

    async def _all_mounted(self, timeout: float = 90.0) -> None:
        """Until the views the app mounts in the background are in (a mount between two keys moves the screen)."""
        mounting, start = getattr(self.app, "mounting", None), time.monotonic()
        while mounting is not None and not getattr(mounting, "_done", True) and time.monotonic() - start < timeout:
            await self.pilot.pause(0.05)

    async def _within_budget(self, crawl, what: str) -> None:
        try:
            await crawl
        except OutOfTime:
            self.report.cut_short.append(what)

    def _view_keys(self) -> list[tuple[str, str]]:
        """The number keys that open a view, read from the app's bindings: (key, view id)."""
        found = []
        for key, active in self.app.active_bindings.items():
            m = re.fullmatch(r"show_view\('(\w+)'\)", active.binding.action)
            if m and key.isdigit():
                found.append((key, m.group(1)))
        return sorted(found)

    def _keys(self) -> list[str]:
        """Every key the state answers to: its bindings (not the view keys: each view is a root) and the extras."""
        keys = []
        for key, active in self.app.active_bindings.items():
            action = active.binding.action
            if action in SKIP_ACTIONS or action.startswith("show_view("):
                continue
            keys.append(key)  # a dimmed key too: pressed, it must do nothing (not named: no dead press)
        return keys + [k for k in EXTRA_KEYS if k not in keys]

    def _named(self, lines: Sequence[str]) -> set[str]:
        """The keys the screen names: shown in the footer, or printed as a word beside their description."""
        named = set()
        for key, active in self.app.active_bindings.items():
            binding = active.binding
            if binding.action in SKIP_ACTIONS or binding.action.startswith("show_view(") or not active.enabled:
                continue
            if binding.show:
                if footer_shows(lines[-1] if lines else "", self.app.get_key_display(binding)):
                    named.add(key)
            elif len(key) == 1 and key.isalpha() and any(_naming(line, key, binding) for line in lines[:-1]):
                named.add(key)
        return named

    def _named_unbound(self, lines: Sequence[str]) -> list[str]:
        """Letter keys the screen names beside their description (a hint line, a title) that nothing binds where
        the focus is now, though the view binds them in another state (a grid's `z dense` named on the view's hint
        line over a table that took the grid's place): pressed, they do nothing. A key named inside a widget that
        binds it (a panel's title, its Cancel button, a grid's border) is that widget's, acting once it has the
        focus; a field that types letters is left out (its letters are text, and the footer says Esc)."""
        from tui_lab.app.shell.view_focus import in_field

        if in_field(self.app.focused) or len(self.app.screen_stack) != 1:
            return []
        bound, found = self.app.active_bindings, []
        for key, binding in self._ever_bound.get(self._view_id(), {}).items():
            if key in bound or len(key) != 1 or not key.isalpha() or binding.action in SKIP_ACTIONS:
                continue
            for y, line in enumerate(lines[:-1]):
                if any(not self._bound_by_widget_at(x, y, key) for x in _naming(line, key, binding)):
                    found.append(f"{self._view_id()}: {key!r} ({binding.description}) is named and bound "
                                 f"nowhere here: {line.strip()!r}")
                    break
        return found

    def _bound_by_widget_at(self, x: int, y: int, key: str) -> bool:
        """The widget drawn at (x, y), one it sits in or one inside it (a box's title naming its grid's keys) binds
        `key`: the key is that widget's, acting while it has the focus."""
        try:
            widget, _ = self.app.screen.get_widget_at(x, y)
        except Exception:  # noqa: BLE001 - nothing drawn there
            return False
        for node in (widget, *widget.ancestors, *widget.walk_children()):
            bindings = getattr(node, "_bindings", None)
            if bindings is not None and key in bindings.key_to_bindings:
                return True
        return False

    async def _crawl_view(self, view_key: str, view_id: str) -> None:
        await self._open(view_key, view_id)
        # the view's first frame may be a layout it changes once it knows its size (a class set on resize): its
        # root state is taken once the screen held still a while
        root = await self._settle(self._lines(), len(self._added), False, quiet=0.3, limit=0.3)
        await self._visit(root, view_key)
        await self._status_reach(view_id, view_key)
        self._view_bindings[view_id] = self.bindings()
        self._covered[view_id], self._live[view_id] = set(), set()
        self._crawling = view_id
        try:
            await self._expand([view_key], self.depth, view_id)
        finally:
            self._crawling = None

    async def _crawl_below(self, view_id: str, path: list[str], depth: int) -> None:
        """The keys below a state a view's first key reached (put off by _expand): the path pressed again."""
        self._crawling = view_id
        try:
            await self._replay(path)
            await self._expand(path, depth)
            await self._end_jobs(path)
        finally:
            self._crawling = None

    def _count_coverage(self) -> None:
        for view_id, bindings in self._view_bindings.items():
            covered = self._covered[view_id] & set(bindings)
            self.report.coverage[view_id] = [len(covered), len(bindings)]
            self.report.uncovered[view_id] = sorted(set(bindings) - covered)
            self.report.never_live[view_id] = sorted(covered - self._live[view_id])

    def bindings(self) -> dict[str, str]:
        """Every key of the state, enabled or not (a stop key waits for a run), shown or hidden, with Tab,
        Shift+Tab, Esc and Enter: {key: action}. The keys a view's crawl must press."""
        found = {}
        for key, active in self.app.active_bindings.items():
            action = active.binding.action
            if action in SKIP_ACTIONS or action.startswith("show_view("):
                continue
            found[key] = action
        return found | {k: found.get(k, k) for k in EXTRA_KEYS}

    def _mode(self) -> tuple:
        """What a state answers to: its view, dialog, focused widget and keys. Two states of one mode (a plot
        on a log axis or not, a cursor a row down) take the same keys to the same handlers: the keys below the
        first are pressed once per mode, the states themselves each checked."""
        focused = self.app.focused
        return (
            self._view_id(),
            type(self.app.screen).__name__,
            type(focused).__name__ if focused is not None else None,
            getattr(focused, "id", None),
            tuple(sorted(self._keys())),
        )

    async def _expand(self, path: list[str], depth: int, view_id: str | None = None) -> None:
        """Press each key of the state `path` reached, and below it to `depth` when that key reached a new state
        of a mode not crawled yet; the path is replayed from its view before each key (Esc, the view's number
        key, the keys after it) when the last key moved the screen."""
        if depth == 0:
            return
        mode = self._mode()
        self._modes.add(mode)
        here = state_id(self._lines())
        for key in self._keys():
            # back to the state `path` reached when a key moved the screen; while a run goes on its screen moves by
            # itself (steps, losses): then only a key that left the state's mode (a dialog, the focus) is undone
            moved = self._mode() != mode if self._jobs() else state_id(self._lines()) != here
            if moved:
                await self._replay(path)
                here = state_id(self._lines())  # a run done or a setting saved: the view's home moved on
            await self._press(key, path)
            if depth > 1 and self._new_below and key not in MOTION and self._mode() not in self._modes:
                if view_id is not None:  # a view's first key: the keys below it wait for every view's first keys
                    self._modes.add(self._mode())
                    self._deferred.append((view_id, [*path, key], depth - 1))
                else:
                    await self._expand([*path, key], depth - 1)
            await self._end_jobs(path)

    async def _replay(self, path: list[str]) -> None:
        """Back to the state `path` reached: Esc (close a dialog, leave a field), the view's key, the rest."""
        from tui_lab.app.shell.view_focus import in_field

        for _ in range(3):
            if len(self.app.screen_stack) == 1 and not in_field(self.app.focused):
                break
            await self._press("escape", None)
        for key in path:
            await self._press(key, None)

    async def _open(self, view_key: str, view_id: str) -> None:
        await self._replay([view_key])

    async def _random_walk(self, view_keys: list[str]) -> None:
        rng = random.Random(self.seed)
        path: list[str] = []
        for _ in range(self.walk_keys):
            keys = self._keys()
            pool = keys + view_keys
            key = rng.choice(pool)
            path = [*path[-30:], key]
            await self._press(key, path[:-1], label=f"random walk (seed {self.seed})")
            self.report.walked += 1

    async def _stop_jobs(self) -> None:
        """Cancel what the crawl started (a training run, a measurement): the test's next app waits for no thread."""
        for view_key, _ in self._view_keys():
            await self._press(view_key, None)
            for key, active in self.app.active_bindings.items():
                if active.enabled and active.binding.action in STOP_ACTIONS:
                    await self._press(key, None)

    async def _end_jobs(self, path: list[str]) -> None:
        """A key started a run (training, a measurement, generation, an experiment): its stop key is pressed,
        checked like any key, so the next key does not wait on a worker's frames; then Esc and the path again
        when the state moved."""
        if not self._jobs():
            return
        for key, active in list(self.app.active_bindings.items()):
            if active.enabled and active.binding.action in STOP_ACTIONS:
                await self._press(key, path, label="stop the run it started")
                break
        start = time.monotonic()
        while self._jobs() and time.monotonic() - start < NAMED_WAIT_S:
            await asyncio.sleep(POLL_S)

    def _jobs(self) -> bool:
        from textual.worker import WorkerState

        return any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in self.app.workers)

    # --- one key -----------------------------------------------------------------------------------------
    def _count_paints(self) -> None:
        """Count the frames the app draws: in a terminal the screen changes only when App._display writes an
        update, so the screen is read once per frame, not once per poll; a poll that finds no new frame costs
        nothing."""
        display = self.app._display

        def counted(screen, renderable) -> None:
            if renderable is not None:
                self._paints += 1
            display(screen, renderable)

        self.app._display = counted

    def _count_notes(self) -> None:
        """Every notification the app shows, kept in order (`_added`): `len(app._notifications)` drops the expired
        ones, so a new one posted as an older one expired left the count the same and read as no message (a dead
        press of Attention e and of a second a, d or r, each of which notifies)."""
        notes, add = self.app._notifications, self.app._notifications.add
        self._added: list = []

        def added(notification):
            self._added.append(notification)
            return add(notification)

        notes.add = added

    def _lines(self) -> list[str]:
        """The screen's text: rendered from the compositor's strips (what screen_lines prints through a Rich
        console, without the console), once per frame the app drew."""
        if self._shown is not None and self._shown[0] == self._paints:
            return self._shown[1]

        paints = self._paints
        lines = self._rendered()
        if VERIFY and lines != screen_lines(self.app):
            self.report.mismatches += 1
        self.report.renders += 1
        self._shown = (paints, lines)
        return lines

    def _rendered(self) -> list[str]:
        from textual._compositor import visible_screen_stack

        visible_screen_stack.set(self.app._background_screens)
        strips = self.app.screen._compositor.render_strips()
        return ["".join(segment.text for segment in strip if not segment.control) for strip in strips]

    def _inputs(self) -> dict[int, str]:
        from textual.widgets import Input

        return {id(w): w.value for w in shown_widgets(self.app, Input)}

    async def _press(self, key: str, path: list[str] | None, label: str = "") -> None:
        """Press `key`; when `path` is given (the keys that led here) the press is checked and counted."""
        self._new_below = False
        if path is not None and time.monotonic() > self._until:
            raise OutOfTime
        if not self.app.is_running:
            raise RuntimeError("the app is no longer running")
        before = self._lines()
        view = self._view_id()
        for bound, active in self.app.active_bindings.items():  # what the view binds in some state
            self._ever_bound.setdefault(view, {}).setdefault(bound, active.binding)
        named = {k for k in self._named(before) if (view, k) not in self._dead} if path is not None else set()
        values = self._inputs()
        notes = len(self._added)
        active = self.app.active_bindings.get(key)
        live = active is None or active.enabled  # a dimmed key is pressed too; it counts as live once enabled
        focus = (self.app.focused, self.app.screen, self._keys_published())
        await self.pilot.press(key)
        if path is None:  # a key on the way back to a state: drawn, not checked
            await self._settle(before, notes, False, limit=0.05, focus=focus)
            return
        after = await self._settle(before, notes, key in named, focus=focus)
        where = " ".join([*(path or []), key]) + (f"  [{label}]" if label else "")
        self._path = where
        self.report.keys += 1
        if self.progress_s is not None and time.monotonic() - self._progress_at >= self.progress_s:
            self._progress_at = time.monotonic()
            self._say(f"crawl {self.report.label} (seed {self.seed}): {len(self.report.states)} states, "
                      f"{self.report.keys} keys, random walk {self.report.walked}, {len(self.report.failures)} "
                      f"failures so far, at {where!r}")
        self.report.distinct_keys.add(key)
        if self._crawling is not None and view == self._crawling:
            self._covered[self._crawling].add(key)
            if live:
                self._live[self._crawling].add(key)
        changed = after != before or len(self._added) != notes or self.app.focused is not focus[0]
        if key in named and not changed and view == self._view_id():
            self._dead.add((view, key))  # not waited on again for 5 s: once found, reported once
            focus = self.app.focused
            bound = active.binding.action if active is not None else "nothing bound"
            detail = (f"{view}: {key!r} is named on the screen and changed nothing (focus {focus!r}, "
                      f"{'live' if live else 'dimmed'}: {bound})")
            self._fail("dead press", detail, where, "\n".join(before))
        if key in named and len(key) == 1:
            typed = [v for k, v in self._inputs().items() if k in values and typed_into(values[k], v, key)]
            if typed:
                self._fail(
                    "swallowed key",
                    f"{view}: {key!r} is named on the screen and typed into a field: {typed}",
                    where,
                    "\n".join(after),
                )
        self._notifications(notes, where, after)
        # a state seen before was checked then (the same screen: the same scroll, the same labels)
        self._new_below = await self._visit(self._lines(), where)
        if self._new_below:
            await self._status_reach(view, where)

    async def _settle(
        self,
        before: list[str],
        notes: int,
        named: bool,
        quiet: float = QUIET_S,
        limit: float | None = None,
        focus: tuple[object, object, int] | None = None,
    ) -> list[str]:
        """The screen once the key's effect is drawn: it changed and then held still (its volatile parts masked)
        with no work pending, or (nothing changed) the wait ran out: at once for an unnamed key, longer for a
        named one, and up to NAMED_WAIT_S while work is pending (its effect may come from a worker).
        `focus`: (the focused widget, the screen, `_keys_published()`) before the press. A focus moved is an effect
        (a person sees the field's colour go), and the screen is not read as settled until it has published its
        keys since and run what waited for a frame (up to NAMED_WAIT_S): a focus change reaches the footer frames
        later (the long tier's translator 160x48 walk at 51361c5, nine cases at once, seed 708064202, read Esc that
        had left a field as changing nothing: the footer still said `esc leave`)."""
        start = time.monotonic()
        limit = limit if limit is not None else NAMED_IDLE_WAIT_S if named else UNNAMED_WAIT_S
        last, still_since, changed = masked(before), start, False
        while True:
            await asyncio.sleep(POLL_S)
            now, lines = time.monotonic(), self._lines()
            look = masked(lines)
            if look != last:
                last, still_since = look, now
            moved = focus is not None and self.app.focused is not focus[0]
            changed = changed or lines != before or len(self._added) != notes or moved
            pending = self._pending()
            if moved and now - start < NAMED_WAIT_S and (self._unpublished(focus) or self._after_frame()):
                continue  # the footer has not followed the focus yet
            if changed and now - still_since >= (BUSY_QUIET_S if pending else quiet) and await self._drawn():
                return lines
            if not changed and not pending and now - start >= limit and await self._drawn():
                return lines
            if now - start >= NAMED_WAIT_S:
                if DEBUG:
                    print(f"  settle cap: {getattr(self, '_path', '')!r} changed={changed} pending={pending} "
                          f"workers={[w.name for w in self.app.workers]} paints={self._paints}")
                return lines

    async def _drawn(self) -> bool:
        """The screen still looks settled once the app and its widgets have handled what was queued to them
        and drawn it (a footer recomposed after its bindings changed, a slow frame on a loaded machine): no new
        frame. Asked once a settle seems done, not on every poll (it looks at every widget's queue)."""
        paints = self._paints
        await self.pilot._wait_for_screen()
        self.app.screen._on_timer_update()  # what is dirty drawn now, not at the next frame
        return self._paints == paints

    def _keys_published(self) -> int:
        """How many times the current screen has told its footer that its keys changed (Screen.refresh_bindings
        publishes on its bindings_updated_signal; counted from the first ask)."""
        signal = self.app.screen.bindings_updated_signal
        if not hasattr(signal, "crawl_count"):
            publish = signal.publish

            def counted(data) -> None:
                signal.crawl_count += 1
                publish(data)

            signal.crawl_count, signal.publish = 0, counted
        return signal.crawl_count

    def _unpublished(self, focus: tuple[object, object, int]) -> bool:
        """The screen of the press has not told its footer of its keys since (a new screen composes its own)."""
        return self.app.screen is focus[1] and self._keys_published() == focus[2]

    def _after_frame(self) -> bool:
        """Callbacks wait for the screen's next frame (call_after_refresh: the footer recomposes so once told its
        keys changed)."""
        return bool(self.app.screen._callbacks)

    def _pending(self) -> bool:
        """The app has work under way: a key in flight or held, a view's parts mounting, a worker running."""
        from textual.worker import WorkerState

        mounting = getattr(self.app, "mounting", None)
        if mounting is not None and (
            mounting.keys.busy or any(getattr(v, "parts_pending", False) for v in mounting.views())
        ):
            return True
        return any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in self.app.workers)

    def _view_id(self) -> str | None:
        mounting = getattr(self.app, "mounting", None)  # the App's views and their tabs (app/shell/view_mounting.py)
        tabs = mounting.tabs if mounting is not None else None
        return str(tabs.active) if tabs is not None and len(self.app.screen_stack) == 1 else None

    def _notifications(self, notes: int, where: str, lines: list[str]) -> None:
        for note in self._added[notes:]:
            if note.severity != "error":
                continue
            if _INTERNAL.search(note.message) or note.title == "error" and "Error" in note.message.split(":")[0]:
                self._fail("error notification", f"{note.title}: {note.message}", where, "\n".join(lines))
            else:
                self.report.refusals.append(f"{where}: {note.message}")

    async def _status_reach(self, view: str | None, where: str) -> None:
        """A view's status line scrolled off by a key comes back with PageUp and Home."""
        if view is None or view != self._view_id():
            return
        hidden = self._hidden_status(view)
        if not hidden:
            return
        for key in ("pageup", "home"):
            await self.pilot.press(key)
        await self._settle(self._lines(), len(self._added), False)
        still = self._hidden_status(view)
        if still:
            self._fail(
                "status out of reach",
                f"{', '.join(still)} scrolled off screen; PageUp, Home do not bring it back",
                where,
                "\n".join(self._lines()),
            )

    def _hidden_status(self, view_id: str) -> list[str]:
        from screen_rules import _seen_region
        from textual.widgets import Static

        view = self.app.mounted_view(view_id)
        found = []
        for widget in view.query(Static) if view is not None else []:
            if not (widget.id and widget.id.endswith(("-status", "-summary"))):
                continue
            if not (widget.display and all(a.display for a in widget.ancestors if hasattr(a, "display"))):
                continue
            if not str(widget.render()).strip():
                continue  # nothing to read yet
            region, _ = _seen_region(widget)
            if not region.area:
                found.append(f"#{widget.id}")
        return found

    # --- the rules on a state ------------------------------------------------------------------------------
    async def _visit(self, lines: list[str], where: str) -> bool:
        """Check a state the first time it is seen; True when it is new. What the rules find is looked at again
        once the app has drawn what was queued: a frame read while a status was being rewritten (`#ex-status`
        between two progress lines) or a view half laid out (a blank footer line once) passes then, and only
        what is still there fails, on the screen it is on."""
        sid = state_id(lines)
        if sid in self.report.states:
            return False
        self.report.states.add(sid)
        # the rules read the widgets now: the screen rendered now too (a run's status may have changed since
        # the frame `lines` was read from, before the app drew it)
        lines = self._rendered()
        if self._problems(lines):
            await self._drawn()
            lines = self._rendered()
        for rule, detail in self._problems(lines):
            self._fail(rule, detail, where, "\n".join(lines))
        return True

    def _problems(self, lines: list[str]) -> list[tuple[str, str]]:
        """(rule, detail) of each rule the screen `lines`, rendered now, breaks."""
        width = self.size[0]
        found = [("cut number", p) for p in cut_numbers(under_menus(self.app, lines[:-1]), width)]
        found += [("overlap", p) for p in overlaps(self.app)]
        found += [("plot rows", p) for p in plot_rows(self.app, lines)]
        found += [("text", p) for p in text_problems(self.app, lines)]
        found += [("edge word", p) for p in edge_words(self.app, lines)]
        found += [("field value", p) for p in input_values(self.app, lines)]
        found += [("plot overrun", p) for p in plot_overruns(self.app, lines)]
        found += [("table cell", p) for p in table_cells(self.app, lines)]
        found += [("label cut with room", p) for p in cut_with_room(self.app, lines)]
        found += [("empty box", p) for p in squeezed_boxes(lines, least=1)]  # a box drawn with no row inside
        found += [("scrollbar forecast", p) for p in forecast_rooms(self.app)]
        found += [("unbound key named", p) for p in self._named_unbound(lines)]
        from tui_lab.app.shell.view_focus import in_field

        # In a field that types every letter, q too, the footer names Esc (the way back to q), not q
        # (tests/app/shell/test_app_field_footer.py)
        focused = self.app.focused
        typing = in_field(focused) and focused is not None and focused.check_consume_key("q", "q")
        # (an open select's menu takes q to search: its footer names Esc as "Dismiss menu")
        wanted = "esc" if typing else "q quit"
        if len(self.app.screen_stack) == 1 and not re.search(rf"(^|\s){wanted}\s", lines[-1]):
            found.append(("footer", f"footer lacks {wanted!r}: {lines[-1].rstrip()!r}"))
        return found

    def _fail(self, rule: str, detail: str, where: str, screen: str) -> None:
        key = f"{rule}|{_DIGITS.sub('#', detail)}"
        if key in self._seen_failures:
            return  # the same finding on another state: reported once
        self._seen_failures.add(key)
        failure = Failure(rule, detail, f"{where} at {self.size[0]}x{self.size[1]}", screen)
        for known_rule, pattern, reason in self.known:
            if known_rule == rule and re.search(pattern, detail):
                failure.detail += f"  (known: {reason})"
                self.report.known.append(failure)
                return
        self.report.failures.append(failure)
        if self.progress_s is not None:
            self._say(f"crawl {self.report.label} (seed {self.seed}) found:\n{failure}")

    @staticmethod
    def _say(text: str) -> None:
        print(text, file=sys.__stderr__, flush=True)


def typed_into(old: str, new: str, key: str) -> bool:
    """`new` is `old` with `key` typed into it: inserted at the cursor, or over a selection of it all."""
    if new == key and old != key:
        return True
    return len(new) == len(old) + 1 and any(new[i] == key and new[:i] + new[i + 1 :] == old for i in range(len(new)))


def cut_with_room(app, lines: list[str]) -> list[str]:
    """One-line labels that end in "…" (their text has none) while their pane has room for the whole text: the
    pane's width less what the label's neighbours on its row take."""
    from screen_rules import _name, _plain, _seen_region
    from textual.widgets import Static

    found = []
    for widget in shown_widgets(app, Static):
        text = _plain(widget) if widget.display and widget.visible else None
        if not text or "\n" in text.strip() or ELLIPSIS in text:
            continue
        r, _ = _seen_region(widget)
        if not r.area or r.height != 1 or r.bottom > len(lines):
            continue
        shown = lines[r.y][r.x : r.right].rstrip()
        if not shown.endswith(ELLIPSIS):
            continue
        parent = widget.parent
        pane = getattr(parent, "content_region", None)
        if pane is None:
            continue
        row = [
            w
            for w in parent.children
            if w is not widget and w.display and w.region.area and w.region.y <= r.y < w.region.bottom
        ]
        # The label's own padding (the form's gap before each editor) is not room for its text.
        room = pane.width - sum(w.outer_size.width for w in row) - (widget.outer_size.width - widget.content_size.width)
        if len(text.strip()) <= room:
            found.append(f"{_name(widget)} shows {shown.strip()!r} for {text.strip()!r} with {room} columns free")
    return found



def _view_classes(view_id: str):
    """A view's class and the widget classes of its package that bind keys of their own."""
    import importlib
    import inspect
    import pkgutil

    from textual.widget import Widget

    from tui_lab.app.app import VIEWS

    spec = next(s for s in VIEWS if s.id == view_id)
    view_cls = spec.widget_class()
    package = view_cls.__module__.rsplit(".", 1)[0]
    widgets = []
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Widget) and cls.__module__ == module.__name__ and "BINDINGS" in vars(cls):
                if cls is not view_cls:
                    widgets.append(cls)
    return view_cls, widgets


def declared(view_id: str) -> dict[str, str]:
    """Every key a view's classes bind, {key: action}: its view class's and its package's widgets'."""
    view_cls, widgets = _view_classes(view_id)
    keys: dict[str, str] = {}
    for cls in [view_cls, *widgets]:
        for key, bindings in cls._merged_bindings.key_to_bindings.items():
            keys.setdefault(key, bindings[0].action)
    return keys


def plan(depth: int, extra_keys: Sequence[str] = EXTRA_KEYS) -> dict[str, dict[str, str]]:
    """What a crawl of `depth` presses, read from the classes (no app started): for each view of the App's
    VIEWS, {key: how it is reached}: every key bound by the view's class (active wherever the focus is inside
    the view, so pressed from its home state, dimmed or not: depth 1) and by each widget class of the view's
    package that binds keys (pressed once Tab has focused it, a new mode expanded one key down: depth 2).
    A key the crawler skips (SKIP_ACTIONS) or cannot reach at `depth` is missing."""
    from tui_lab.app.app import VIEWS

    found: dict[str, dict[str, str]] = {}
    for spec in VIEWS:
        view_cls, widgets = _view_classes(spec.id)
        keys: dict[str, str] = {}
        for level, classes in ((1, [view_cls]), (2, widgets if "tab" in extra_keys else [])):
            for cls in classes:
                for key, bindings in cls._merged_bindings.key_to_bindings.items():
                    if depth >= level and any(b.action not in SKIP_ACTIONS for b in bindings):
                        keys.setdefault(key, f"depth {level}: a key of {cls.__name__}")
        found[spec.id] = keys
    return found

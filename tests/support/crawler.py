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
- a view's status line (a Static whose id ends in -status or -summary) is never scrolled out of reach:
  once the keys scroll it off, PageUp and Home bring it back;
- a one-line label is not cut ("…") while its pane has room for it whole.

    crawl = Crawler(["--preset", "gpt2-toy"], sizes=[(80, 24)], depth=2, walk_keys=300, seed=7)
    report = await crawl.run()      # report.failures, report.summary()
"""

from __future__ import annotations

import hashlib
import random
import re
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from app_support import app_for, screen_lines, wait_ready
from screen_rules import (
    ELLIPSIS,
    cut_numbers,
    edge_words,
    input_values,
    overlaps,
    plot_overruns,
    plot_rows,
    text_problems,
)

# Keys the crawler never presses: they end the session (quit), copy to the clipboard, or open the command
# palette (a list of every action, crawled through the keys themselves).
SKIP_ACTIONS = {"quit", "app.quit", "screen.copy_text", "command_palette", "app.command_palette"}
EXTRA_KEYS = ("tab", "shift+tab", "escape", "enter")
NAMED_WAIT_S = 5.0  # a named key's effect may wait for pending work: at most this long
QUIET_S = 0.25  # the screen unchanged this long after a change: settled
UNNAMED_WAIT_S = 0.3  # an unnamed key (Tab, a cursor key) that changed nothing is left after this
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
    distinct_keys: set[str] = field(default_factory=set)
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    known: list[Failure] = field(default_factory=list)

    cut_short: list[str] = field(default_factory=list)  # what the time budget ended before it was done

    def summary(self) -> str:
        short = f", cut short by the time budget: {', '.join(self.cut_short)}" if self.cut_short else ""
        return (
            f"{self.label}: {len(self.states)} states, {self.keys} keys pressed ({len(self.distinct_keys)} "
            f"distinct), {self.seconds:.0f} s, seed {self.seed}, {len(self.failures)} failures, "
            f"{len(self.known)} known findings, {len(self.refusals)} refusals shown{short}"
        )


class OutOfTime(Exception):
    """The crawl's time budget is spent: what it reached is reported, the rest named as cut short."""


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
    ) -> None:
        self.argv, self.size, self.depth, self.walk_keys = list(argv), size, depth, walk_keys
        self.budget_s = budget_s  # wall time for the keys (the app's start not counted); None: no limit
        self._until = float("inf")
        self.seed = seed if seed is not None else random.randrange(1 << 30)
        self.known = list(known)  # (rule, a regex of the detail, the reason and issue item)
        label = f"{' '.join(self.argv) or 'tui-lab'} at {size[0]}x{size[1]}, depth {depth}"
        self.report = Report(label, self.seed)
        self._seen_failures: set[str] = set()
        self._dead: set[tuple[str | None, str]] = set()

    # --- driving ---------------------------------------------------------------------------------------
    async def run(self) -> Report:
        start = time.monotonic()
        print(f"crawl {self.report.label}: seed {self.seed} (replay with this seed)")
        app = app_for(*self.argv)
        try:
            async with app.run_test(size=self.size) as pilot:
                self.pilot, self.app = pilot, app
                await wait_ready(pilot)
                views = self._view_keys()
                began = time.monotonic()
                budget = self.budget_s if self.budget_s is not None else float("inf")
                for i, (key, view_id) in enumerate(views):
                    # each view its share of two thirds of the budget; the random walk has what is left
                    self._until = began + budget * 2 / 3 * (i + 1) / len(views)
                    await self._within_budget(self._crawl_view(key, view_id), f"view {view_id}")
                self._until = began + budget
                await self._within_budget(self._random_walk([k for k, _ in views]), "random walk")
                self._until = float("inf")
                await self._stop_jobs()
        except Exception as err:  # noqa: BLE001 - the app ended: that is the finding
            self._fail("traceback", f"{type(err).__name__}: {err}", getattr(self, "_path", ""), traceback.format_exc())
        self.report.seconds = time.monotonic() - start
        return self.report

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
            if action in SKIP_ACTIONS or action.startswith("show_view(") or not active.enabled:
                continue
            keys.append(key)
        return keys + [k for k in EXTRA_KEYS if k not in keys]

    def _named(self, lines: Sequence[str]) -> set[str]:
        """The keys the screen names: shown in the footer, or printed as a word beside their description."""
        named, body = set(), "\n".join(lines[:-1])
        for key, active in self.app.active_bindings.items():
            binding = active.binding
            if binding.action in SKIP_ACTIONS or binding.action.startswith("show_view(") or not active.enabled:
                continue
            if binding.show:
                named.add(key)
            elif len(key) == 1 and key.isalpha():
                for line in body.splitlines():
                    low = line.lower()
                    if re.search(rf"(?<![\w^+-]){re.escape(key)}(?![\w+-])", line) and any(
                        w in low for w in _key_words(binding)
                    ):
                        named.add(key)
                        break
        return named

    async def _crawl_view(self, view_key: str, view_id: str) -> None:
        await self._open(view_key, view_id)
        root = self._lines()
        self._visit(root, view_key)
        await self._expand([view_key], self.depth)

    async def _expand(self, path: list[str], depth: int) -> None:
        """Press each key of the state `path` reached, and below it to `depth`; the path is replayed from its
        view before each key (Esc, the view's number key, the keys after it)."""
        if depth == 0:
            return
        here = state_id(self._lines())
        for key in self._keys():
            if state_id(self._lines()) != here:
                await self._replay(path)
            await self._press(key, path)
            if depth > 1 and self._new_below and key not in MOTION:
                await self._expand([*path, key], depth - 1)
                await self._replay(path)

    async def _replay(self, path: list[str]) -> None:
        """Back to the state `path` reached: Esc (leave a field, close a dialog), the view's key, the rest."""
        await self._press("escape", None)
        if len(self.app.screen_stack) > 1:
            await self._press("escape", None)
        for key in path:
            await self._press(key, None)

    async def _open(self, view_key: str, view_id: str) -> None:
        await self._press("escape", None)
        await self._press(view_key, None)

    async def _random_walk(self, view_keys: list[str]) -> None:
        rng = random.Random(self.seed)
        path: list[str] = []
        for _ in range(self.walk_keys):
            keys = self._keys()
            pool = keys + view_keys
            key = rng.choice(pool)
            path = [*path[-30:], key]
            await self._press(key, path[:-1], label=f"random walk (seed {self.seed})")

    async def _stop_jobs(self) -> None:
        """Cancel what the crawl started (a training run, a measurement): the test's next app waits for no thread."""
        for view_key, _ in self._view_keys():
            await self._press(view_key, None)
            for key, active in self.app.active_bindings.items():
                if active.binding.action in ("stop", "cancel", "cancel_job"):
                    await self._press(key, None)

    # --- one key -----------------------------------------------------------------------------------------
    def _lines(self) -> list[str]:
        return screen_lines(self.app)

    def _inputs(self) -> dict[int, str]:
        from textual.widgets import Input

        return {id(w): w.value for w in self.app.screen.query(Input)}

    async def _press(self, key: str, path: list[str] | None, label: str = "") -> None:
        """Press `key`; when `path` is given (the keys that led here) the press is checked and counted."""
        self._new_below = False
        if path is not None and time.monotonic() > self._until:
            raise OutOfTime
        if not self.app.is_running:
            raise RuntimeError("the app is no longer running")
        before = self._lines()
        view = self._view_id()
        named = {k for k in self._named(before) if (view, k) not in self._dead} if path is not None else set()
        values = self._inputs()
        notes = len(self.app._notifications)
        await self.pilot.press(key)
        if path is None:  # a key on the way back to a state: drawn, not waited on
            await self._settle(before, notes, False, quiet=0.1, limit=0.15)
            return
        after = await self._settle(before, notes, key in named)
        where = " ".join([*(path or []), key]) + (f"  [{label}]" if label else "")
        self._path = where
        self.report.keys += 1
        self.report.distinct_keys.add(key)
        changed = after != before or len(self.app._notifications) != notes
        if key in named and not changed and view == self._view_id():
            self._dead.add((view, key))  # not waited on again for 5 s: once found, reported once
            detail = f"{view}: {key!r} is named on the screen and changed nothing"
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
        await self._status_reach(view, where)
        self._new_below = self._visit(self._lines(), where)

    async def _settle(
        self, before: list[str], notes: int, named: bool, quiet: float = QUIET_S, limit: float | None = None
    ) -> list[str]:
        """The screen once the key's effect is drawn: it changed and then held still, or (nothing changed)
        the wait ran out (5 s for a named key: its work may be pending)."""
        start = time.monotonic()
        limit = limit if limit is not None else NAMED_WAIT_S if named else UNNAMED_WAIT_S
        last, still_since, changed = before, time.monotonic(), False
        while True:
            await self.pilot.pause(0.05)
            now, lines = time.monotonic(), self._lines()
            if lines != last:
                last, still_since = lines, now
            changed = changed or lines != before or len(self.app._notifications) != notes
            if changed and now - still_since >= quiet:
                return lines
            if now - start >= (NAMED_WAIT_S if changed else limit):
                return lines

    def _view_id(self) -> str | None:
        mounting = getattr(self.app, "mounting", None)  # the App's views and their tabs (app/shell/view_mounting.py)
        tabs = mounting.tabs if mounting is not None else None
        return str(tabs.active) if tabs is not None and len(self.app.screen_stack) == 1 else None

    def _notifications(self, notes: int, where: str, lines: list[str]) -> None:
        for note in list(self.app._notifications)[notes:]:
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
        await self._settle(self._lines(), len(self.app._notifications), False)
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
    def _visit(self, lines: list[str], where: str) -> bool:
        """Check a state the first time it is seen; True when it is new."""
        sid = state_id(lines)
        if sid in self.report.states:
            return False
        self.report.states.add(sid)
        width = self.size[0]
        found = [("cut number", p) for p in cut_numbers(lines[:-1], width)]
        found += [("overlap", p) for p in overlaps(self.app)]
        found += [("plot rows", p) for p in plot_rows(self.app, lines)]
        found += [("text", p) for p in text_problems(self.app, lines)]
        found += [("edge word", p) for p in edge_words(self.app, lines)]
        found += [("field value", p) for p in input_values(self.app, lines)]
        found += [("plot overrun", p) for p in plot_overruns(self.app, lines)]
        found += [("label cut with room", p) for p in cut_with_room(self.app, lines)]
        from tui_lab.app.shell.view_focus import in_field

        # In a field every letter types, q too: its footer names Esc, not q (tests/test_app_keys.py)
        if len(self.app.screen_stack) == 1 and not in_field(self.app.focused) and "q quit" not in lines[-1]:
            found.append(("footer", f"footer lacks 'q quit': {lines[-1].rstrip()!r}"))
        for rule, detail in found:
            self._fail(rule, detail, where, "\n".join(lines))
        return True

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
    for widget in app.screen.query(Static):
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
        room = pane.width - sum(w.outer_size.width for w in row)
        if len(text.strip()) <= room:
            found.append(f"{_name(widget)} shows {shown.strip()!r} for {text.strip()!r} with {room} columns free")
    return found

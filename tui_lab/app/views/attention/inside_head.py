"""Inside one head (`c`): the query under the grid's cursor, through softmax(q·kᵀ / √d_k) · v, row by row.

The rows come from `tui_lab.mechanism.inside_head` (the live model's own q, k, v at its hook points); this
lays them out: one column per key around the cursor's key (as many as fit), the softmax also as one bar per
key over all of them, the weighted sum of values over the first value dims that fit, and a last line that
sets the softmax beside the grid's cell and the weighted sum beside the head's output (`hook_z`).
The pass runs in a thread worker, once per capture, and only while the panel is open.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

LABEL_W, CELL_W = 11, 9  # a cell holds an 8-character token label whole
BARS = " ▁▂▃▄▅▆▇█"
KIND_NAMES = {"encoder-self": "encoder self", "decoder-self": "decoder self", "cross": "cross"}


@dataclass(frozen=True)
class Pointer:
    """What the grid points at: the kind, layer and head picked, the cursor's query and key, their labels."""

    kind: str
    layer: int
    head: int
    query: int
    key: int
    rows: list[str]
    cols: list[str]


def number(x: float) -> str:
    """A cell's number: whole or absent, never cut (width CELL_W - 1 at most)."""
    if x == -math.inf:
        return "-∞"
    if x != x:
        return "—"
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}" if abs(x) < 1000 else f"{x:.0e}"


def bar(p: float, top: float) -> str:
    """One key's weight as a bar, full at the row's largest weight; any weight above 0 shows."""
    if p <= 0 or top <= 0:
        return BARS[0]
    return BARS[max(1, min(len(BARS) - 1, math.ceil(p / top * (len(BARS) - 1))))]


def key_window(n_keys: int, cursor: int, width: int) -> range:
    """The keys whose columns fit beside the labels, the cursor's among them (centred where it can be)."""
    fit = max(1, (width - LABEL_W) // CELL_W)
    start = max(0, min(cursor - fit // 2, n_keys - fit))
    return range(start, min(n_keys, start + fit))


def shorten(label: str, width: int) -> str:
    return label if len(label) <= width else label[:width - 1] + "…"


def title(steps) -> str:
    """The border's title: which head (short, so it is never cut at 80 columns)."""
    return f"inside head {steps.head} · layer {steps.layer} · {KIND_NAMES[steps.kind]}-attention"


def header(steps, pointer: Pointer) -> str:
    """Which query, d_k, and (grouped-query) the key/value head this query head shares."""
    query = pointer.rows[pointer.query] if pointer.query < len(pointer.rows) else str(pointer.query)
    text = f"query [{steps.query}] {query!r} · d_k {steps.d_k}"
    if steps.kv_heads < steps.heads:
        first, last = steps.kv_head * steps.group, (steps.kv_head + 1) * steps.group - 1
        text += f" · K, V: kv head {steps.kv_head} of {steps.kv_heads}, shared by heads {first}-{last}"
    return text


def step_rows(steps) -> list[tuple[str, list[float]]]:
    """(label, value per key) for each step before the values: q·k, the scale, ALiBi's bias, the mask, softmax."""
    scale = f"÷ √{steps.d_k}" if abs(steps.scale * math.sqrt(steps.d_k) - 1) < 1e-6 else f"× {steps.scale:g}"
    rows = [("q·k" + (" (RoPE)" if steps.rope else ""), steps.dots), (scale, steps.scaled)]
    if steps.bias is not None:
        rows.append(("+ ALiBi", [s + b for s, b in zip(steps.scaled, steps.bias, strict=True)]))
    rows += [("mask" if not all(steps.allowed) else "mask: none", steps.masked), ("softmax", steps.weights)]
    return rows


def vector_line(label: str, values: list[float], width: int) -> Text:
    """`label` and a vector as a list: as many whole numbers as fit in `width`, then how many dims it has."""
    dims = f" ({len(values)} dims)"
    parts = [number(v) for v in values]
    while len(parts) > 1 and LABEL_W + len(f"[{', '.join(parts)}, …]{dims}") > width:
        parts.pop()
    more = ", …" if len(parts) < len(values) else ""
    line = Text(f"{label:<{LABEL_W}}", style="bold")
    line.append(f"[{', '.join(parts)}{more}]")
    line.append(dims, style="dim")
    return line


def panel_text(steps, pointer: Pointer, width: int) -> Text:
    """The whole panel as lines of text fitted to `width` cells."""
    keys = key_window(len(steps.weights), pointer.key, width)
    out = Text(header(steps, pointer) + "\n", style="bold")
    line = Text(f"{'key':<{LABEL_W}}", style="bold")
    for k in keys:
        style = "reverse" if k == pointer.key else ""
        line.append(shorten(pointer.cols[k] if k < len(pointer.cols) else str(k), CELL_W - 1).rjust(CELL_W), style)
    out.append_text(line + "\n")
    out.append_text(vector_line("q", steps.q, width) + "\n")
    for label, values in step_rows(steps):
        line = Text(f"{label:<{LABEL_W}}", style="bold")
        for k in keys:
            line.append(number(values[k]).rjust(CELL_W), "reverse" if k == pointer.key else "")
        out.append_text(line + "\n")
    bars = Text(f"{'softmax':<{LABEL_W}}", style="bold")
    room = max(1, width - LABEL_W)
    for k, p in list(enumerate(steps.weights))[:room]:
        bars.append(bar(p, max(steps.weights)), "reverse" if k == pointer.key else "cyan")
    n = len(steps.weights)
    note = f"  all {n} keys, full bar {max(steps.weights):.3f}" + \
        (f"; numbers for {keys.start}-{keys.stop - 1}" if len(keys) < n else "")
    out.append_text(bars + Text(note if n + len(note) <= room else "", style="dim") + "\n")
    out.append_text(vector_line("Σ p·v", steps.out, width) + "\n")
    out.append_text(check_lines(steps, pointer))
    return out


def check_lines(steps, pointer: Pointer) -> Text:
    """The softmax beside the grid's cell, the weighted sum beside the head's output, and how far apart."""
    same = steps.weight_error < 1e-4 and steps.out_error < 1e-4
    style = "green" if same else "bold red"
    text = Text(f"{'= grid':<{LABEL_W}}", style="bold")
    text.append(f"softmax[{pointer.key}] {steps.weights[pointer.key]:.4f} = the grid's cell "
                f"{steps.pattern[pointer.key]:.4f} (max diff {steps.weight_error:.0e})\n", style)
    text.append(f"{'= output':<{LABEL_W}}", style="bold")
    text.append(f"Σ p·v = this head's output, hook_z (max diff {steps.out_error:.0e})", style)
    return text


class InsideHead(Static, can_focus=True):
    """The panel: `follow()` a capture's inputs, `point()` at a cell; the trace runs when the panel is open."""

    DEFAULT_CSS = """
    InsideHead { height: auto; max-height: 1fr; border: round $primary-darken-2; padding: 0 1; }
    InsideHead:focus { border: round $accent; }
    """
    BINDINGS = [Binding("up", "move(-1, 0)", "query up", show=False),
                Binding("down", "move(1, 0)", "query down", show=False),
                Binding("left", "move(0, -1)", "key left", show=False),
                Binding("right", "move(0, 1)", "key right", show=False)]

    class Traced(Message):
        def __init__(self, trace: Any, generation: int, error: str = "") -> None:
            super().__init__()
            self.trace, self.generation, self.error = trace, generation, error

    class Move(Message):
        """The arrows while the panel has the focus (at 80x24 it stands in for the grid): move the grid's cursor."""

        def __init__(self, d_row: int, d_col: int) -> None:
            super().__init__()
            self.d_row, self.d_col = d_row, d_col

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.inputs: tuple[Any, Any, Any] | None = None  # (model, source ids, decoder input ids)
        self.generation = 0  # one per capture followed: a slower trace of an older one is dropped
        self.trace: Any = None
        self.pointer: Pointer | None = None
        self.steps: Any = None  # the last steps drawn (tests and the walk read them)

    def follow(self, model: Any, src: Any, tgt: Any) -> None:
        """A new capture: its inputs, traced again the next time the panel is shown."""
        self.inputs, self.trace, self.steps = (model, src, tgt), None, None
        self.generation += 1
        if self.display:
            self._start_trace()

    def point(self, pointer: Pointer) -> None:
        self.pointer = pointer
        if self.display:
            self.draw()

    def opened(self) -> None:
        if self.trace is None:
            self._start_trace()
        self.draw()

    def _start_trace(self) -> None:
        if self.inputs is None:
            return
        (model, src, tgt), generation = self.inputs, self.generation

        def run() -> None:
            from tui_lab.mechanism.inside_head import trace

            try:
                result = trace(model, src, tgt)
            except Exception as err:  # noqa: BLE001 - said in the panel, never a crash
                self.post_message(self.Traced(None, generation, str(err).splitlines()[0] if str(err) else
                                              type(err).__name__))
                return
            if not get_current_worker().is_cancelled:
                self.post_message(self.Traced(result, generation))

        self.update("tracing the pass: q, k and v of every head...")
        self.run_worker(run, thread=True, exclusive=True, group="inside-head", exit_on_error=False)

    def on_inside_head_traced(self, message: Traced) -> None:
        message.stop()
        if message.generation != self.generation:
            return
        if message.error:
            self.update(Text(f"inside one head: the trace failed: {message.error}", style="red"))
            return
        self.trace = message.trace
        self.draw()

    def action_move(self, d_row: int, d_col: int) -> None:
        self.post_message(self.Move(d_row, d_col))

    def on_resize(self) -> None:
        if self.display and self.steps is not None:
            self.draw()

    def draw(self) -> None:
        self.border_title = "inside one head"
        self.update(self._text())

    def _text(self) -> Text | str:
        p = self.pointer
        if self.inputs is None:
            return "inside one head: run a capture first (r)"
        if p is None or p.kind not in KIND_NAMES:
            return "inside one head: pick an attention grid (k); masks, positions and copy have no head"
        if p.head < 0:
            return "inside one head: pick one head (h); the mean of heads is no head's own computation"
        if self.trace is None:
            return "tracing the pass: q, k and v of every head..."
        try:
            steps = self.trace.steps(p.kind, p.layer, p.head, p.query)
        except ValueError as err:
            return f"inside one head: {err}"
        if not 0 <= p.key < len(steps.weights):  # a cursor of the grid drawn before this capture (a longer text)
            keys = len(steps.weights)
            return f"inside one head: the cursor's key {p.key} is past this text's {keys} key{'s' * (keys != 1)}; " \
                   "move it (arrows)"
        self.steps = steps
        self.border_title = title(self.steps)
        return panel_text(self.steps, p, self.content_size.width or 80)

"""Speed: cached vs uncached greedy generation of the live model on its device, measured in a worker.

`tui_lab.generation.speed.compare_generation` does the measuring (the same function as `tui-lab bench generate`);
this view runs it in a thread worker with a progress bar and Cancel, then plots per-token latency
against position for both paths (the uncached one grows with the sequence, the cached one stays flat)
and lists the numbers.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Input, Label, ProgressBar, Static
from textual.worker import get_current_worker

from tui_lab.app.guard import guarded
from tui_lab.app.runs import downsample
from tui_lab.app.widgets.line_plot import Line, LinePlot
from tui_lab.generation.lengths import default_lengths  # torch-free

COLUMNS = ("new tokens", "cached s", "uncached s", "speedup", "cached tok/s", "uncached tok/s", "identical")


class SpeedProgress(Message):
    def __init__(self, job: int, done: int, total: int) -> None:
        super().__init__()
        self.job, self.done, self.total = job, done, total


class SpeedDone(Message):
    def __init__(self, job: int, report: Any = None, error: str | None = None) -> None:
        super().__init__()
        self.job, self.report, self.error = job, report, error


def measure(poster: Any, job: int, model: Any, prompt_len: int, lengths: tuple[int, ...], repeats: int) -> None:
    """Worker thread: run the comparison, post progress and the report (or the error)."""
    try:
        from tui_lab.generation.speed import compare_generation

        worker = get_current_worker()
        report = compare_generation(model, prompt_len, lengths, repeats,
                                    on_progress=lambda d, t: poster.post_message(SpeedProgress(job, d, t)),
                                    should_stop=lambda: worker.is_cancelled)
        poster.post_message(SpeedDone(job, report))
    except Exception as err:  # noqa: BLE001 - shown, never a crash
        poster.post_message(SpeedDone(job, error=str(err).strip().splitlines()[0] if str(err) else repr(err)))


def parse_lengths(text: str) -> tuple[int, ...]:
    try:
        lengths = tuple(int(part) for part in text.replace(",", " ").split())
    except ValueError:
        raise ValueError(f"lengths must be whole numbers separated by commas, got {text!r}") from None
    if not lengths or any(n < 1 for n in lengths):
        raise ValueError(f"lengths ({text!r}) must be one or more numbers, each >= 1")
    return lengths


class SpeedView(Vertical):
    BINDINGS = [Binding("r", "run", "run"), Binding("x", "cancel", "cancel")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.job = 0
        self.running = False
        self.report: Any = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="sp-inputs"):
            yield Label("prompt", classes="sp-name")
            yield Input("16", id="sp-prompt", classes="sp-field", compact=True)
            yield Label("new tokens", classes="sp-name")
            yield Input("", placeholder="fit max_len", id="sp-lengths", compact=True)
            yield Label("repeats", classes="sp-name")
            yield Input("3", id="sp-repeats", classes="sp-field", compact=True)
            yield Button("Run r", id="sp-run", variant="primary", compact=True)
            yield Button("Cancel x", id="sp-cancel", variant="error", compact=True)
        yield ProgressBar(id="sp-progress", show_eta=True)
        yield Static("cached vs uncached greedy generation of the live model: press r", id="sp-summary")
        yield LinePlot("per-token latency (ms) vs position", "new token", "ms", id="sp-plot")
        yield DataTable(id="sp-table", zebra_stripes=True, cursor_type="row")

    def on_mount(self) -> None:
        self.query_one("#sp-table", DataTable).add_columns(*COLUMNS)

    def view_activated(self) -> None:
        self.query_one("#sp-run", Button).focus()

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        return [("Speed: compare cached vs uncached generation", "r", self.action_run),
                ("Speed: cancel the comparison", "x", self.action_cancel)]

    @guarded
    def action_run(self) -> None:
        live = self.app.live
        if not live.ready:
            raise ValueError(f"the live model is not ready yet ({live.status})")
        prompt_len = _positive("prompt", self.query_one("#sp-prompt", Input).value)
        repeats = _positive("repeats", self.query_one("#sp-repeats", Input).value)
        text = self.query_one("#sp-lengths", Input).value
        # Empty: the core's lengths that fit the model's max_len after the prompt, so none slides.
        lengths = parse_lengths(text) if text.strip() else default_lengths(live.model.config, prompt_len, 128)
        self.job += 1
        self.running, self.report = True, None
        self.query_one("#sp-progress", ProgressBar).update(total=len(lengths) * 2 * (repeats + 1), progress=0)
        training = getattr(self.app.view("train"), "training", False) if self.app.query("#view-train") else False
        busy = " - training is running too, so both share the CPU" if training else ""
        self._summary(f"measuring {live.origin} on {live.device}{busy}...")
        model, job = live.model, self.job
        self.run_worker(lambda: measure(self, job, model, prompt_len, lengths, repeats), thread=True, group="speed",
                        exclusive=True, exit_on_error=False)

    def action_cancel(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "speed")
            self._summary("cancelling...")

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        actions = {"sp-run": self.action_run, "sp-cancel": self.action_cancel}
        if event.button.id in actions:
            event.stop()
            actions[event.button.id]()

    def on_speed_progress(self, message: SpeedProgress) -> None:
        if message.job == self.job:
            self.query_one("#sp-progress", ProgressBar).update(total=message.total, progress=message.done)

    def on_speed_done(self, message: SpeedDone) -> None:
        if message.job != self.job:
            return
        self.running = False
        if message.error:
            self._summary(f"failed: {message.error}")
            self.notify(message.error, title="speed", severity="error")
            return
        self.report = message.report
        self._show(message.report)

    def _show(self, report: Any) -> None:
        table = self.query_one("#sp-table", DataTable)
        table.clear()
        for run in report.runs:
            table.add_row(run.new_tokens, f"{run.cached_s:.3f}", f"{run.uncached_s:.3f}", f"{run.speedup:.2f}x",
                          f"{run.tokens_per_s(True, report.batch):.1f}", f"{run.tokens_per_s(False, report.batch):.1f}",
                          "yes" if run.identical else "NO")
        if not report.runs:
            self._summary("cancelled before the first length was measured")
            self.query_one("#sp-plot", LinePlot).set_lines([])
            return
        last = report.runs[-1]
        lines = [Line(name, *_xy(steps), colour=colour) for name, steps, colour in
                 (("cached", last.cached_step_s, "green"), ("uncached", last.uncached_step_s, "red"))]
        title = f"per-token latency (ms), {last.new_tokens} new tokens after a {report.prompt_len}-token prompt"
        self.query_one("#sp-plot", LinePlot).set_lines(lines, title=title)
        same = all(r.identical for r in report.runs)
        self._summary(f"{report.device}: the KV cache is {last.speedup:.2f}x faster at {last.new_tokens} tokens; "
                      f"outputs {'identical' if same else 'DIFFER'} on every length"
                      + (" (cancelled: lengths measured so far)" if report.cancelled else "")
                      + ("; learned positions slid past max_len" if any(r.slid for r in report.runs) else ""))

    def _summary(self, text: str) -> None:
        self.query_one("#sp-summary", Static).update(text)


def _xy(step_s: list[float]) -> tuple[list[float], list[float]]:
    points = downsample([(i + 1, s * 1000) for i, s in enumerate(step_s)])
    return [x for x, _ in points], [y for _, y in points]


def _positive(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {text!r}") from None
    if value < 1:
        raise ValueError(f"{name} ({value}) must be >= 1")
    return value

"""Experiments: the seeds' lessons as runs (tui_lab.experiments), launched here, drawn and exported.

Pick an experiment on the left; its lesson and options show on the right. `r` runs it (the full run, or
the quick one with `k`) in a thread worker off the event loop, with a progress bar; `r` again while one
runs queues another; `x` cancels the run and empties the queue. The result's plots (overlaid curves),
tables and grids are picked with `f` (or the picker) and `e` exports them (JSON and CSV). The `sweep`
entry shows a field picker: any axis or training knob, its values and seeds, one run after another,
its table and curves growing as each run ends. In a served session a run holds one of the server's
training slots, as a Train run does: with none free, `r` is refused in one line.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, ContentSwitcher, Input, Label, OptionList, ProgressBar, Select, Static

from tui_lab.app.background_job import JobCancelled, JobDone, JobPoster, JobProgress, JobView
from tui_lab.app.guard import guarded
from tui_lab.app.views.experiments import draw
from tui_lab.app.views.experiments.notes_keys import ExperimentList, FigureTable, NotesBack
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.heatmap import Heatmap, QuietHeatmap
from tui_lab.app.widgets.line_plot import LinePlot
from tui_lab.app.widgets.narrow_row import NarrowRow
from tui_lab.app.widgets.toggle import OnOffCheckbox
from tui_lab.experiments import registry
from tui_lab.served import ServedPolicy, check_room, exports_folder, output_folder, training_slot


def run_job(poster: JobPoster, name: str, options: dict[str, Any]) -> Any:
    """Worker thread: run one experiment on one torch thread fewer than the cores (the UI keeps one: an
    OpenMP pool spinning on every core beside the UI collapses throughput, docs/REFERENCE), posting progress.
    In a served session it holds one of the server's training slots like any run (one ValueError line when all
    are taken)."""
    from tui_lab.experiments import Cancelled
    from tui_lab.generation.threads import torch_threads

    last = [0.0]

    def progress(fraction: float, text: str, partial: Any = None) -> None:
        now = time.monotonic()
        if partial is not None or now - last[0] > 0.2:  # a few posts a second; every partial result
            last[0] = now
            poster.progress(fraction, 1.0, text, partial)

    try:
        with training_slot(ServedPolicy.from_env()), torch_threads(max(1, (os.cpu_count() or 2) - 1)):
            return registry.get(name).run(options, progress, lambda: poster.stopped)
    except Cancelled:
        raise JobCancelled from None


def _no_slot() -> str | None:
    """Why a run cannot take a training slot now (a served server's are all in use), else None."""
    try:
        with training_slot(ServedPolicy.from_env()):
            return None
    except ValueError as err:
        return str(err)


class ExperimentsView(JobView):
    # x, k and e stay off the footer (the Cancel button, the quick checkbox and a finished run's status line name
    # them) so that f1..f7 and q fit at 80 columns.
    BINDINGS = [Binding("r", "run", "run/queue"), Binding("x", "cancel", "cancel", show=False),
                Binding("e", "export", "export", show=False), Binding("f", "next_figure", "figure"),
                Binding("k", "quick", "quick", show=False),
                # ←/→ from the list turn a table wider than its room a column (its › and ‹ marks point there):
                # the table itself sits many Tabs away. In a field they move the text cursor, as ever.
                Binding("left", "figure_side(-1)", show=False), Binding("right", "figure_side(1)", show=False)]
    # Not exclusive: `r` while one runs queues the next (`running` holds the name of the one running).
    JOB_GROUP, JOB_EXCLUSIVE, JOB_PROGRESS = "experiments", False, "#ex-progress"
    JOB_BUTTONS = {"ex-run": "action_run", "ex-cancel": "action_cancel"}
    JOB_CANCEL, JOB_CANCEL_BUTTON = "cancel", "ex-cancel"  # x and Cancel x while a run goes

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """f dimmed until a result has a second figure to turn to; x while a run goes (JobView)."""
        if action == "next_figure":
            return True if self.result is not None and len(draw.figures(self.result)) > 1 else None
        if action == "figure_side":
            return self._shown_table() is not None
        return super().check_action(action, parameters)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.queue: deque[tuple[str, dict[str, Any]]] = deque()
        self.result: Any = None
        self.finished: Any = None  # the last run that ended (self.result may be a run's partial result)
        self.repeats = 0  # finished runs in a row that drew its numbers (draw.finished_status)
        self.shown_status = ""  # the line of the run whose figures are shown (a cancelled sweep's partial too)
        self.partial_job = 0  # the run whose partial result is shown (a sweep draws each finished part)
        self.selected = registry.names()[0]

    def compose(self) -> ComposeResult:
        with Horizontal(id="ex-body"):
            yield ExperimentList(*registry.names(), id="ex-list")
            with Vertical(id="ex-main"):
                # A run's state stays under what scrolls: at 80x24 the lesson, the form, the notes and the figure do not
                # fit, and the keys (focus in the list) could not scroll a status back that had gone off the top.
                with VerticalScroll(id="ex-scroll"):
                    # A lesson or notes taller than their room scroll (a scrollbar says so; Tab reaches them).
                    with VerticalScroll(id="ex-lesson-box", classes="ex-text-box"):
                        yield Static("", id="ex-lesson")
                    with Horizontal(id="ex-inputs"):
                        # Short: at 80 columns the field is ~20 wide beside its buttons (the defaults are listed above).
                        yield FieldInput(placeholder="name=value; ...", id="ex-options", compact=True)
                        yield OnOffCheckbox("quick k", id="ex-quick", compact=True)
                        yield Button("Run r", id="ex-run", variant="primary", compact=True)
                        yield Button("Cancel x", id="ex-cancel", variant="error", compact=True)
                    with NarrowRow(id="ex-sweep"):
                        yield Label("field", classes="ex-name")
                        yield Select([(f, f) for f in draw.sweep_fields()], value="positions", allow_blank=False,
                                     id="ex-field", compact=True)
                        yield Label("values", classes="ex-name")
                        yield FieldInput(draw.sweep_values("positions"), id="ex-values", compact=True)
                        yield Label("seeds", classes="ex-name")
                        yield FieldInput("0", id="ex-seeds", compact=True)
                    with VerticalScroll(id="ex-summary-box", classes="ex-text-box"):
                        yield Static("", id="ex-summary")
                    yield Select([], prompt="no results yet", id="ex-figure", compact=True)
                    with ContentSwitcher(id="ex-figures", initial="ex-plot"):
                        yield LinePlot(id="ex-plot")
                        yield FigureTable(id="ex-table", zebra_stripes=True, cursor_type="row", fixed_columns=1)
                        yield QuietHeatmap(id="ex-grid", keys_note="z dense · # numbers")  # z, # on its legend
                with Horizontal(id="ex-state"):
                    yield ProgressBar(total=1, id="ex-progress", show_eta=False)
                    yield Static("", id="ex-status")

    def on_mount(self) -> None:
        listing = self.query_one("#ex-list", OptionList)
        # As wide as the longest name (plus border and padding): a name is never broken over two lines.
        listing.styles.width = max(len(name) for name in registry.names()) + 4
        listing.highlighted = 0
        self._select(self.selected)
        self.query_one("#ex-progress", ProgressBar).update(total=1.0, progress=0.0)
        self._status("r runs it")

    def home(self) -> OptionList:
        """The list of experiments: r, f act at once, arrows pick one."""
        return self.query_one("#ex-list", OptionList)

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        return [("Experiments: run (or queue) the one picked", "r", self.action_run),
                ("Experiments: cancel the run and the queue", "x", self.action_cancel),
                ("Experiments: export the results (JSON, CSV)", "e", self.action_export)]

    def _shown_table(self) -> FigureTable | None:
        """The figure's table when it shows and columns lie beside what fits."""
        table = self.query_one("#ex-table", FigureTable)
        shown = self.query_one("#ex-figures", ContentSwitcher).current == "ex-table" and table.display
        return table if shown and any(table.hidden_sides()) else None

    def action_figure_side(self, step: int) -> None:
        if table := self._shown_table():
            table.action_scroll_right() if step > 0 else table.action_scroll_left()

    # -- picking -----------------------------------------------------------------------------------
    def on_notes_back(self, message: NotesBack) -> None:
        self.query_one("#ex-scroll").scroll_home(animate=False)

    @on(OptionList.OptionHighlighted, "#ex-list")
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        self._select(registry.names()[event.option_index])

    def _select(self, name: str) -> None:
        self.selected = name
        exp = registry.get(name)
        # What a run with nothing typed would use: with quick ticked, the quick values (issue 36 item 24: the
        # lesson read steps=1500 while the quick run trained far fewer).
        quick = self.query_one("#ex-quick", OnOffCheckbox).value
        used = exp.resolve(quick)
        options = "; ".join(f"{k}={draw.fmt(v)}" for k, v in used.items() if name != "sweep" or
                            k not in ("field", "values", "seeds"))
        which = "quick options" if quick and exp.quick else "options"
        self.query_one("#ex-lesson", Static).update(f"[b]{exp.title}[/b]  {exp.lesson}\n[dim]{which}: {options}[/dim]")
        self.query_one("#ex-sweep").display = name == "sweep"
        if self.result is not None and not self.running:  # the figures stay the last run's: say whose
            ran = self.result.experiment
            unfinished = "" if self.result is self.finished else " (unfinished)"
            self._status(self.shown_status if ran == name else f"figures from {ran}{unfinished}; r runs {name}")

    @on(OnOffCheckbox.Changed, "#ex-quick")
    def _quick_changed(self, event: OnOffCheckbox.Changed) -> None:
        self._select(self.selected)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter in a field runs with what it holds, as in Generate (it did nothing: a person typed options, pressed
        Enter and saw no run and no message)."""
        event.stop()
        self.action_run()

    @on(Select.Changed, "#ex-field")
    def _field_changed(self, event: Select.Changed) -> None:
        self.query_one("#ex-values", Input).value = draw.sweep_values(str(event.value))

    # -- running -----------------------------------------------------------------------------------
    def _options(self, name: str) -> dict[str, Any]:
        """The options of a run from the form: parsed and checked now, so a bad value is one line at once."""
        sets = draw.parse_sets(self.query_one("#ex-options", Input).value)
        if name == "sweep":
            sets |= {"field": str(self.query_one("#ex-field", Select).value),
                     "values": self.query_one("#ex-values", Input).value,
                     "seeds": self.query_one("#ex-seeds", Input).value}
        options = registry.get(name).resolve(self.query_one("#ex-quick", OnOffCheckbox).value, sets)
        if "out" in options:  # a folder the run writes (lora's merged model): served, inside the session's folder
            options["out"] = output_folder(str(options["out"]), f"{name}-merged")
        return options

    @guarded
    def action_run(self) -> None:
        name = self.selected
        options = self._options(name)
        if not self.running and (full := _no_slot()):  # queued runs take theirs when they start
            self._status(f"{name} refused: {full}")
            raise ValueError(full)
        if self.running:
            self.queue.append((name, options))
            self._status(f"queued {name} ({len(self.queue)} waiting)")
            return
        self._start(name, options)

    def _start(self, name: str, options: dict[str, Any]) -> None:
        self.start_job(lambda poster: run_job(poster, name, options), total=1.0, label=name)
        self._status(f"{name}: starting")

    def action_cancel(self) -> None:
        if self.running:
            self.queue.clear()
            self.cancel_job()
            self._status(f"cancelling {self.running} (it stops between steps)...")

    def action_quick(self) -> None:
        box = self.query_one("#ex-quick", OnOffCheckbox)
        box.value = not box.value

    def job_progress(self, message: JobProgress) -> None:
        super().job_progress(message)
        waiting = f" ({len(self.queue)} queued)" if self.queue else ""
        self._status(f"{self.running}: {message.text}{waiting}")
        if message.partial is not None and message.done < 1.0:
            self.partial_job = self.job
            self._show(message.partial)

    def job_finished(self, done: JobDone, name: Any) -> None:
        if done.error or done.cancelled:
            line = f"{name} failed: {done.error}" if done.error else f"{name} cancelled; the queue was emptied"
            self._status(line)
            if done.error:
                self.notify(done.error, title=name, severity="error")
            if self.partial_job == self.job:  # its partial figures stay shown: this line is theirs
                self.shown_status = line
        else:
            self.repeats = self.repeats + 1 if draw.same_numbers(done.result, self.finished) else 0
            self.shown_status = draw.finished_status(done.result, self.finished, self.repeats)
            self._status(self.shown_status)
            self.finished = done.result
            self._show(done.result)
        if self.queue:
            self._start(*self.queue.popleft())

    # -- results -----------------------------------------------------------------------------------
    def _show(self, result: Any) -> None:
        self.result = result
        self.query_one("#ex-summary", Static).update("\n".join(draw.summary_lines(result)))
        picker = self.query_one("#ex-figure", Select)
        keep = picker.value
        choices = draw.figures(result)
        picker.set_options([(label, key) for key, label in choices])
        keys = [key for key, _ in choices]
        if keys:
            picker.value = keep if keep in keys else keys[0]
            self._draw(str(picker.value))
        self.refresh_bindings()  # f: a second figure to turn to

    @on(Select.Changed, "#ex-figure")
    def _figure_changed(self, event: Select.Changed) -> None:
        if self.result is not None and isinstance(event.value, str):
            self._draw(event.value)

    def action_next_figure(self) -> None:
        picker = self.query_one("#ex-figure", Select)
        keys = [key for key, _ in draw.figures(self.result)] if self.result is not None else []
        if keys:
            picker.value = keys[(keys.index(picker.value) + 1) % len(keys)] if picker.value in keys else keys[0]
            # at 80x24 the figure is below the notes: f turned it out of sight (the long tier's walk)
            self.query_one("#ex-figures").scroll_visible(animate=False)

    def _draw(self, key: str) -> None:
        kind, _, name = key.partition(":")
        switcher = self.query_one("#ex-figures", ContentSwitcher)
        if kind == "plot":
            plot, widget = self.result.plots[name], self.query_one("#ex-plot", LinePlot)
            widget.xlabel, widget.ylabel = plot.xlabel, plot.ylabel
            widget.set_lines(draw.plot_lines(self.result, name), title=plot.title)
            switcher.current = "ex-plot"
        elif kind == "table":
            columns, rows = draw.table_cells(self.result, name)
            table = self.query_one("#ex-table", FigureTable)
            labels, table.header_height = draw.stacked(columns)
            table.set_table(labels, rows)
            switcher.current = "ex-table"
        else:
            grid = self.result.grids[name]
            self.query_one("#ex-grid", Heatmap).set_grid(grid.values, grid.row_labels, grid.col_labels,
                                                         axes=tuple(grid.axes))
            switcher.current = "ex-grid"

    @guarded
    def action_export(self) -> None:
        if self.result is None:
            raise ValueError("nothing to export yet: run an experiment first (r)")
        check_room(2 * len(json.dumps(self.result.to_dict(), indent=1)), "the export")  # the JSON and its CSVs
        paths = self.result.export(exports_folder())  # served: the session's own exports/
        self.notify(f"{len(paths)} files: {paths[0].parent}", title=f"exported {self.result.experiment}")
        self._status(f"exported {paths[0].name} and {len(paths) - 1} CSV files to {paths[0].parent}")

    def _status(self, text: str) -> None:
        status = self.query_one("#ex-status", Static)
        status.update(draw.break_long_words(text, status.content_region.width))

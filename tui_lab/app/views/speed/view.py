"""Speed: cached vs uncached greedy generation measured in a worker, beside what the analysis predicts.

`tui_lab.bench.kv_speed.compare_generation` does the measuring (the same function as `tui-lab bench generate`);
this view runs it in a thread worker with a progress bar and Cancel, then plots the seconds spent against
tokens generated for both paths (the running total of each token's median over repeats), the same for the
prediction from the FLOPs (`draw`), the totals and the speedup, with a log y axis on `l`.

The model measured is the live one, or, with "demo model" ticked, a wider random model built for the
measurement only (the live model is untouched). On a 0.9M-parameter toy both curves are mostly per-step
overhead, so the demo is ticked by default when the live model is narrower than it (`DEMO`).

`k` swaps in the MHA vs GQA vs MQA panel (`gqa`): the live model's width built with kv_heads = heads,
a divisor and 1, cached generation side by side; `r` and `x` then run and cancel that one.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, Input, Label, ProgressBar, Static

from tui_lab.analysis.format import fmt_bytes
from tui_lab.app.background_job import JobDone, JobPoster, JobView
from tui_lab.app.guard import guarded
from tui_lab.app.view_contract import TrainingNews
from tui_lab.app.views.speed import draw
from tui_lab.app.views.speed.approximate import LINFORMER_LINE, demo_for, performer_line
from tui_lab.app.views.speed.gqa import KVPanel
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.line_plot import LinePlot
from tui_lab.app.widgets.marked_table import MarkedTable
from tui_lab.app.widgets.table_fill import fill_table
from tui_lab.app.widgets.toggle import OnOffCheckbox
from tui_lab.config import ModelConfig  # torch-free
from tui_lab.generation.lengths import default_lengths  # torch-free

# Short names: all seven fit whole at 80 columns ("new tokens" and "identical" once pushed the last off).
COLUMNS = ("tokens", "cached s", "uncached s", "speedup", "cached tok/s", "uncached tok/s", "same")
# The demo: narrow enough that attention over the cache (4*L*E FLOPs a layer) is a real share of a cached
# step (24*E^2) at a few hundred tokens, wide enough that the step is not all overhead, shallow enough that
# the uncached path (~L^2 * E^2 over a run) finishes in about half a minute on a 2-core CPU: measured on a
# shared 2-core Xeon (1 thread a path), 512 tokens after a 16-token prompt, 3 repeats took 30 s and the
# cached step rose 17% over the run (d_model 256 or 512 took 60-110 s and the rise drowned in the noise).
DEMO = ModelConfig(name="speed-demo", d_model=128, heads=4, d_ff=512, decoder_layers=2, vocab=256, max_len=1024,
                   dropout=0.0)
DEMO_LENGTHS = (512,)
LENGTHS_TYPED = r"(?:\D|(?<!\d{6})\d)*"  # any text (a typo is named at r), no number past six digits


class Measured(NamedTuple):
    report: Any
    config: Any  # the config of the model measured
    peaks: dict[str, float]


def measure(poster: JobPoster, model: Any, device: str, prompt_len: int, lengths: tuple[int, ...],
            repeats: int) -> Measured:
    """Worker thread: run the comparison (building the demo model first when `model` is a ModelConfig), then
    the matmul peak on each path's thread count."""
    from tui_lab.bench.kv_speed import compare_generation

    if isinstance(model, ModelConfig):
        from tui_lab.loading import load_model

        model = load_model("config", model, device=device, seed=0).model  # fixed weights: runs compare
    report = compare_generation(model, prompt_len, lengths, repeats, on_progress=poster.progress,
                                should_stop=lambda: poster.stopped)
    return Measured(report, model.config, _peaks(report))


def _peaks(report: Any) -> dict[str, float]:
    """The matmul peak with each path's thread count (measured once per machine, then read back)."""
    from tui_lab.generation.threads import torch_threads
    from tui_lab.hardware import matmul_peak_flops

    peaks = {}
    for path, threads in report.threads.items():
        with torch_threads(threads):
            peaks[path] = matmul_peak_flops(report.device)
    return peaks


def parse_lengths(text: str) -> tuple[int, ...]:
    try:
        lengths = tuple(int(part) for part in text.replace(",", " ").split())
    except ValueError:
        raise ValueError(f"lengths must be whole numbers separated by commas, got {text!r}") from None
    if not lengths or any(n < 1 for n in lengths):
        raise ValueError(f"lengths ({text!r}) must be one or more numbers, each >= 1")
    return lengths


class SpeedView(JobView):
    # Two keys on the footer: at 80 columns it keeps room for f1..f7 and "q quit" (the button and checkboxes
    # name x, l and d).
    BINDINGS = [Binding("r", "run", "run"), Binding("x", "cancel", "cancel", show=False),
                Binding("l", "log", "log", show=False), Binding("d", "demo", "demo", show=False),
                Binding("k", "kv_heads", "MHA/GQA")]
    JOB_GROUP, JOB_PROGRESS = "speed", "#sp-progress"
    JOB_BUTTONS = {"sp-run": "action_run", "sp-cancel": "action_cancel"}
    JOB_CANCEL, JOB_CANCEL_BUTTON = "cancel", "sp-cancel"  # x and Cancel x while a measurement goes

    @property
    def cancellable(self) -> bool:
        """x cancels the shown panel's measurement: the MHA/GQA one while it is shown."""
        panels = self.query(KVPanel)
        if panels and panels.first().display:
            return bool(panels.first().running)
        return bool(self.running)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report: Any = None
        self.config: Any = None  # the config of the model measured (the demo's or the live one's)
        self.peaks: dict[str, float] = {}
        self.demo_set = False  # the demo box follows the live model's size until a person ticks it
        self.measured_demo = False  # whether the last run measured the demo model
        self.training_elsewhere = False  # a run trains (TrainingNews): the measurement shares the CPU with it

    def compose(self) -> ComposeResult:
        with Vertical(id="sp-cache"):  # cached vs uncached; `k` swaps it for the MHA/GQA/MQA panel
            yield from self._compose_cache()
        yield KVPanel(id="sp-kv")

    def _compose_cache(self) -> ComposeResult:
        with Horizontal(id="sp-inputs"):
            yield Label("prompt", classes="sp-name")
            yield FieldInput("16", id="sp-prompt", classes="sp-field", compact=True)
            yield Label("new tokens", classes="sp-name")
            # The lengths field grows with the screen: no number in it past six digits, so each shows whole (the
            # short fields take what they show: FieldInput).
            yield FieldInput("", placeholder="fit max_len", id="sp-lengths", compact=True, restrict=LENGTHS_TYPED)
            yield Label("repeats", classes="sp-name")
            yield FieldInput("3", id="sp-repeats", classes="sp-field", compact=True)
            yield Button("Run r", id="sp-run", variant="primary", compact=True)
            yield Button("Cancel x", id="sp-cancel", variant="error", compact=True)
        with Horizontal(id="sp-options"):
            yield OnOffCheckbox(f"demo model d ({DEMO.d_model}x{DEMO.decoder_layers}, window {DEMO.max_len})",
                                id="sp-demo", compact=True)
            yield OnOffCheckbox("log scale l", id="sp-log", compact=True)
            yield ProgressBar(total=1, id="sp-progress", show_eta=True)
        # The summary stays above the scroll (issue 36: at 80x24 a scroll down the results, the table focused,
        # left it off screen and PageUp/Home moved the table's cursor, not the pane): the plot, the notes and the
        # table scroll below it.
        yield Static("cached vs uncached greedy generation: press r", id="sp-summary")
        with VerticalScroll(id="sp-results", can_focus=False):
            yield LinePlot("seconds spent vs tokens generated", "tokens generated", "seconds", id="sp-plot")
            yield Static("", id="sp-analysis")
            yield MarkedTable(id="sp-table", zebra_stripes=True, cursor_type="row")

    def on_mount(self) -> None:
        fill_table(self.query_one("#sp-table", DataTable), COLUMNS, [])
        self.query_one(KVPanel).display = False

    @property
    def kv_shown(self) -> bool:
        return self.query_one(KVPanel).display

    def action_kv_heads(self) -> None:
        """Swap between cached-vs-uncached and MHA-vs-GQA-vs-MQA (each keeps its fields and results)."""
        shown = not self.kv_shown
        self.query_one(KVPanel).display = shown
        self.query_one("#sp-cache").display = not shown
        self.query_one("#kv-run" if shown else "#sp-run", Button).focus()
        self.job_state_changed()  # x follows the shown panel's measurement

    def on_training_news(self, message: TrainingNews) -> None:
        self.training_elsewhere = message.training

    def view_activated(self) -> None:
        live = self.app.live
        if not self.demo_set and live.ready:
            # The toy's steps are all overhead: start on the demo unless the live model is at least as wide.
            self._set_demo(live.model.config.d_model <= DEMO.d_model)

    def home(self) -> Button:
        """The shown comparison's Run button: r, k, x, l, d act at once."""
        return self.query_one("#kv-run" if self.kv_shown else "#sp-run", Button)

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        return [("Speed: compare cached vs uncached generation", "r", self.action_run),
                ("Speed: cancel the comparison", "x", self.action_cancel),
                ("Speed: log scale on/off", "l", self.action_log),
                ("Speed: demo model on/off", "d", self.action_demo),
                ("Speed: MHA vs GQA vs MQA, cached generation side by side", "k", self.action_kv_heads)]

    @property
    def demo(self) -> bool:
        return self.query_one("#sp-demo", OnOffCheckbox).value

    def action_log(self) -> None:
        box = self.query_one("#sp-log", OnOffCheckbox)
        box.value = not box.value

    def action_demo(self) -> None:
        self.demo_set = True
        self._set_demo(not self.demo)

    def _set_demo(self, on: bool) -> None:
        self.query_one("#sp-demo", OnOffCheckbox).value = on
        self.query_one("#sp-lengths", Input).placeholder = " ".join(map(str, DEMO_LENGTHS)) if on else "fit max_len"

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter in a field runs with what the fields hold, as r does (and as Enter does in Generate and Experiments):
        it did nothing, and a typing field's footer offers no r, so a person saw no run and no message."""
        event.stop()
        self.action_run()

    @on(OnOffCheckbox.Changed, "#sp-log")
    def _log_changed(self, event: OnOffCheckbox.Changed) -> None:
        self.query_one("#sp-plot", LinePlot).set_log(event.value)

    @on(OnOffCheckbox.Changed, "#sp-demo")
    def _demo_changed(self, event: OnOffCheckbox.Changed) -> None:
        if event.checkbox.has_focus:
            self.demo_set = True  # ticked by a person: keep it
        self._set_demo(event.value)

    @guarded
    def action_run(self) -> None:
        if self.kv_shown:
            self.query_one(KVPanel).run()
            return
        live = self.app.live
        if not live.ready:
            raise ValueError(f"the live model is not ready yet ({live.status})")
        prompt_len = _positive("prompt", self.query_one("#sp-prompt", Input).value)
        repeats = _positive("repeats", self.query_one("#sp-repeats", Input).value)
        text = self.query_one("#sp-lengths", Input).value
        if live.model.config.self_attention == "linformer":
            self._summary(LINFORMER_LINE)
            raise ValueError("not run: Linformer has no decoding to measure")  # each press says so, not once
        demo = self.demo
        demo_config = demo_for(DEMO, live.model.config)  # a live Performer's demo is a Performer
        config = demo_config if demo else live.model.config
        # Empty: the demo's length, or the core's lengths that fit the model's max_len after the prompt.
        lengths = parse_lengths(text) if text.strip() else DEMO_LENGTHS if demo else default_lengths(
            config, prompt_len, 128)
        check_budget(config, live.device, prompt_len, lengths, repeats)
        self.report = None
        busy = " - training is running too, so both share the CPU" if self.training_elsewhere else ""
        what = (f"the demo model (d_model {DEMO.d_model}, {DEMO.decoder_layers} layers, random weights; the live "
                f"model is unchanged)" if demo else live.origin)
        self._summary(f"measuring {what} on {live.device}{busy}...")
        model, device = demo_config if demo else live.model, live.device
        self.measured_demo = demo
        self.start_job(lambda poster: measure(poster, model, device, prompt_len, lengths, repeats),
                       total=len(lengths) * 2 * (repeats + 1))

    def action_cancel(self) -> None:
        if self.kv_shown:
            self.query_one(KVPanel).cancel()
        elif self.cancel_job():
            self._summary("cancelling...")

    def job_finished(self, done: JobDone, label: Any) -> None:
        if done.error:
            self._summary(f"failed: {done.error}")
            self.notify(done.error, title="speed", severity="error")
            return
        self.report, self.config, self.peaks = done.result
        self._show(self.report)

    def _show(self, report: Any) -> None:
        rows = [(run.new_tokens, f"{run.cached_s:.3f}", f"{run.uncached_s:.3f}", f"{run.speedup:.2f}x",
                 f"{run.tokens_per_s(True, report.batch):.1f}", f"{run.tokens_per_s(False, report.batch):.1f}",
                 "yes" if run.identical else "NO") for run in report.runs]
        fill_table(self.query_one("#sp-table", DataTable), COLUMNS, rows)
        analysis = self.query_one("#sp-analysis", Static)
        if not report.runs:
            self._summary("cancelled before the first length was measured")
            self.query_one("#sp-plot", LinePlot).set_lines([])
            analysis.update("")
            return
        last = report.runs[-1]
        prediction = draw.predict(self.config, report, last, self.peaks) if self.peaks else None
        self.query_one("#sp-plot", LinePlot).set_lines(draw.plot_lines(last, prediction),
                                                      title=draw.plot_title(report, last), ymax=draw.plot_top(last))
        same = all(r.identical for r in report.runs)
        self._summary(f"{report.device}: the KV cache is {last.speedup:.2f}x faster at {last.new_tokens} tokens; "
                      f"outputs {'identical' if same else 'DIFFER'} on every length"
                      + (" (cancelled: lengths measured so far)" if report.cancelled else "")
                      + ("; learned positions slid past max_len" if any(r.slid for r in report.runs) else ""))
        lines = draw.analysis_lines(self.config, report, last, prediction, self.measured_demo) if prediction else []
        approximate = performer_line(self.config, report.prompt_len + last.new_tokens)
        analysis.update("\n".join(lines + ([approximate] if approximate else [])))

    def _summary(self, text: str) -> None:
        self.query_one("#sp-summary", Static).update(text)


def check_budget(config: Any, device: str, prompt_len: int, lengths: tuple[int, ...], repeats: int) -> None:
    """Refuse, before anything runs, a measurement that cannot end soon or fit in memory (the floor the CLI's
    `bench generate` refuses on): each length runs cached and uncached, a warm-up and `repeats` timed runs."""
    from tui_lab.analysis.budget import GENERATION_LIMIT_S, Budget, fmt_seconds, generation_budget
    from tui_lab.devices import free_memory

    runs = [generation_budget(config, prompt_len, n, 1, cached, device) for n in lengths for cached in (True, False)]
    total = Budget(sum(b.seconds for b in runs) * (repeats + 1), max(b.bytes for b in runs))
    what = f"{repeats} repeats of new tokens {' '.join(map(str, lengths))} after a {prompt_len}-token prompt"
    free = free_memory(device)
    if free is not None and total.bytes > free:
        raise ValueError(f"not run: {what} need {fmt_bytes(total.bytes)} of memory, {fmt_bytes(free)} is free; "
                         "lower new tokens or prompt")
    if total.seconds > GENERATION_LIMIT_S:
        raise ValueError(f"not run: {what} take at least {fmt_seconds(total.seconds)} (the limit is "
                         f"{fmt_seconds(GENERATION_LIMIT_S)}); lower repeats, new tokens or prompt")


def _positive(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {text!r}") from None
    if value < 1:
        raise ValueError(f"{name} ({value}) must be >= 1")
    return value

"""Speed's "MHA vs GQA vs MQA" panel: the live model's width, layers and heads built three times, kv_heads =
heads, a divisor, 1, and cached greedy generation measured side by side in one run on the live model's device.

`tui_lab.bench.gqa_speed.compare_kv_heads` measures (the function `benchmarks/speed/gqa_speed.py` runs); this
panel runs it in a thread worker with a progress bar and Cancel, then shows tokens/s and KV cache bytes per
token for each, and how many bytes a decode step reads: the weights once, plus the whole cache (which is
what grouped-query attention shrinks).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Input, Label, ProgressBar, Static

from tui_lab.analysis.format import fmt_bytes
from tui_lab.app.background_job import JobDone, JobPoster, JobView
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.marked_table import MarkedTable
from tui_lab.app.widgets.table_fill import fill_table

COLUMNS = ("attention", "kv heads", "KV/token", "KV cache", "ms/step", "tok/s", "vs MHA")
FIELDS = (("prompt", "kv-prompt", "64"), ("new", "kv-new", "64"), ("repeats", "kv-repeats", "3"),
          ("batch", "kv-batch", "4"))


def measure_kv(poster: JobPoster, config: Any, device: str, sizes: dict[str, int]) -> Any:
    """Worker thread: build the three models and time them."""
    from tui_lab.bench.gqa_speed import compare_kv_heads

    return compare_kv_heads(config, device, sizes["prompt"], sizes["new"], sizes["repeats"], sizes["batch"],
                            on_progress=poster.progress, should_stop=lambda: poster.stopped)


def table_rows(report: Any) -> list[tuple[str, ...]]:
    """One row per attention kind: kv heads, KV bytes per token and for the whole cache, the median step,
    tokens/s and the speed relative to MHA (the first row)."""
    rows, base = [], report.rows[0].tokens_per_s(report.batch) if report.rows else 0.0
    for r in report.rows:
        if not r.step_s:  # cancelled before this one was timed
            rows.append((r.name, str(r.kv_heads), fmt_bytes(r.kv_bytes_per_token), "-", "-", "-", "-"))
            continue
        speed = r.tokens_per_s(report.batch)
        rows.append((r.name, str(r.kv_heads), fmt_bytes(r.kv_bytes_per_token), fmt_bytes(r.cache_bytes),
                     f"{r.median_step_s * 1e3:.2f}", f"{speed:,.0f}", f"{speed / base:.2f}x" if base else "-"))
    return rows


def read_note(report: Any) -> str:
    """What one decode step reads at the run's mid-point: every weight once, and the whole KV cache so far."""
    from tui_lab.analysis.cost import kv_cache_tokens, memory

    weights = memory(report.config).weights
    tokens = report.batch * kv_cache_tokens(report.config, report.prompt_len + report.new_tokens // 2)  # window-bounded
    caches = " / ".join(f"{r.name} {fmt_bytes(r.kv_bytes_per_token * tokens)}" for r in report.rows)
    return f"a step reads {fmt_bytes(weights)} of weights and the cache: {caches}"


def parse_sizes(values: dict[str, str]) -> dict[str, int]:
    """The panel's fields as integers; ValueError with one line naming the field and the rule."""
    sizes = {}
    for name, text in values.items():
        try:
            sizes[name] = int(text.strip())
        except ValueError:
            raise ValueError(f"{name} must be a whole number, got {text!r}") from None
    return sizes


class KVPanel(JobView):
    """Fields, Run/Cancel, a progress bar, one summary line, the three rows and what a step reads."""

    DEFAULT_CSS = """
    KVPanel { height: 1fr; }
    KVPanel #kv-inputs { height: 1; }
    KVPanel .kv-name { padding: 0 1; color: $text-muted; }
    KVPanel Input { width: 7; }  /* six digits and the cursor: more are refused as typed (FieldInput) */
    KVPanel Button { margin-left: 1; width: auto; min-width: 8; }
    KVPanel #kv-progress { height: 1; }
    KVPanel #kv-progress Bar { width: 1fr; }
    KVPanel #kv-summary, KVPanel #kv-note { height: auto; }
    KVPanel #kv-note { color: $text-muted; }
    KVPanel #kv-table { height: auto; }
    """
    JOB_GROUP, JOB_PROGRESS = "speed-kv", "#kv-progress"
    JOB_BUTTONS = {"kv-run": "run", "kv-cancel": "cancel"}
    JOB_CANCEL_BUTTON = "kv-cancel"  # disabled while nothing is timed (the view's x follows: SpeedView.cancellable)

    def job_home(self) -> Button:
        return self.query_one("#kv-run", Button)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report: Any = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="kv-inputs"):
            for title, wid, value in FIELDS:
                yield Label(title, classes="kv-name")
                yield FieldInput(value, id=wid, compact=True)  # an 8-digit batch read "…": it takes six (FieldInput)
            yield Button("Run r", id="kv-run", variant="primary", compact=True)
            yield Button("Cancel x", id="kv-cancel", variant="error", compact=True)
        yield ProgressBar(total=1, id="kv-progress", show_eta=True)
        yield Static("MHA vs GQA vs MQA: the live model's width built 3 times, cached generation: press r",
                     id="kv-summary")
        yield MarkedTable(id="kv-table", zebra_stripes=True, cursor_type="row")
        yield Static("", id="kv-note")

    def on_mount(self) -> None:
        fill_table(self.query_one("#kv-table", DataTable), COLUMNS, [])

    def run(self) -> None:
        """Check the fields and the live model (one line on failure, nothing started), then measure."""
        live = self.app.live
        try:
            if not live.ready:
                raise ValueError(f"the live model is not ready yet ({live.status})")
            sizes = parse_sizes({title: self.query_one(f"#{wid}", Input).value for title, wid, _ in FIELDS})
            from tui_lab.bench.gqa_speed import check_kv_comparison, kv_choices

            config = live.model.config
            check_kv_comparison(config, sizes["prompt"], sizes["new"], sizes["repeats"], sizes["batch"],
                                live.device)
        except ValueError as err:
            # said on the line and as a message: r pressed again with the field unchanged shows the same line,
            # and a press that changes nothing on screen reads as ignored (issue 36's crawler: a dead r)
            self._say(f"not run: {err}")
            self.notify(f"not run: {err}", title="MHA vs GQA vs MQA", severity="warning", timeout=4)
            return
        self.report = None
        kinds = ", ".join(f"{name} {k}" for name, k in kv_choices(config))
        self._say(f"measuring d_model {config.d_model}, {config.decoder_layers} layers, {config.heads} heads with "
                  f"kv heads {kinds} on {live.device}...")
        device = live.device
        self.start_job(lambda poster: measure_kv(poster, config, device, sizes),
                       total=len(kv_choices(config)) * (sizes["repeats"] + 1))

    def cancel(self) -> None:
        if self.cancel_job():
            self._say("cancelling...")

    def job_finished(self, done: JobDone, label: Any) -> None:
        if done.error:
            self._say(f"failed: {done.error}")
            return
        self.report = report = done.result
        fill_table(self.query_one("#kv-table", DataTable), COLUMNS, table_rows(report))
        c = report.config
        self._say(f"{report.device}: d_model {c.d_model}, {c.decoder_layers} layers, {c.heads} heads, batch "
                  f"{report.batch}, {report.prompt_len} + {report.new_tokens} tokens, {report.threads or 'default'} "
                  f"thread(s), median step of {report.repeats} x {report.new_tokens - 1}"
                  + (" (cancelled: what was timed so far)" if report.cancelled else ""))
        self.query_one("#kv-note", Static).update(read_note(report))

    def _say(self, text: str) -> None:
        self.query_one("#kv-summary", Static).update(text)

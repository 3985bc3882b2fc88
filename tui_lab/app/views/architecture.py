"""Architecture: pick a preset, edit it, see counts, shapes, cost and the layer live; Apply rebuilds.

Everything on this page is arithmetic on the config (`tui_lab.analysis`), so it follows every keystroke,
even for 124M parameters, before torch has loaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, Input, Label, Select, Static, TabbedContent, TabPane

from tui_lab.analysis import count_params, flops_per_token, memory, shape_trace
from tui_lab.analysis.cost import kv_cache_variants
from tui_lab.analysis.format import fmt_bytes, fmt_count
from tui_lab.app.guard import guarded
from tui_lab.app.origin import describe_origin
from tui_lab.app.widgets.block_diagram import BlockDiagram
from tui_lab.app.widgets.compare import compare_table
from tui_lab.app.widgets.config_form import ConfigForm
from tui_lab.app.widgets.confirm_apply import ConfirmApply
from tui_lab.app.widgets.ffn_rank import FFNRankNote
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.model_diagram import ModelDiagram
from tui_lab.app.widgets.param_bars import ParamBars
from tui_lab.config import ModelConfig
from tui_lab.loading import shipped_for
from tui_lab.presets import list_presets, load_preset

PAPER_PRESET = "transformer-2017-base"
CURRENT = "(this form)"
DEFAULT_BATCH, DEFAULT_LENGTH = 2, 16  # seed 003's examples use a batch of 2: N is then visibly not 1


def paper_note(config: ModelConfig) -> str:
    """For the 2017 base: the paper's rounded figure next to the exact count, never in place of it."""
    try:
        base = load_preset(PAPER_PRESET)
    except ValueError:
        return ""
    if dataclasses.replace(config, name=base.name) != base:
        return ""
    return (f'Vaswani et al. (2017, Table 3) give "65M" for the base model; counted here, with a shared '
            f"37,000-token embedding and every bias: {count_params(config).total:,}.")


def summary_text(config: ModelConfig, batch: int, seq_len: int) -> Table:
    """FLOPs and memory as a grid; the third column explains and is the first to be cut when narrow."""
    mem = memory(config, batch=batch, seq_len=seq_len)
    flops = flops_per_token(config, seq_len)
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(no_wrap=True, min_width=13)
    table.add_column(justify="right", no_wrap=True, min_width=10)
    table.add_column(style="dim", no_wrap=True, overflow="ellipsis", ratio=1)
    table.add_row("FLOPs / token", f"{fmt_count(flops)}", f"{flops:,} forward, context {seq_len}")
    table.add_row("weights", fmt_bytes(mem.weights), "fp32")
    table.add_row("training", fmt_bytes(mem.training), "AdamW: weights + grads + 2 moments")
    table.add_row("activations", fmt_bytes(mem.activations), f"batch {batch} x {seq_len} tokens")
    table.add_row("KV / token", fmt_bytes(mem.kv_cache_per_token), "2 x layers x kv heads x d_head x 4 B")
    table.add_row("KV cache full", fmt_bytes(mem.kv_cache_full), f"{config.max_len:,} tokens, one sequence")
    return table


def kv_table(config: ModelConfig) -> Table:
    """KV cache bytes with MHA, GQA and MQA side by side, the rest of the config unchanged; ours marked *.

    One row per variant so that it fits the narrow right panel at 80 columns."""
    table = Table(title="KV cache, fp32: MHA / GQA / MQA", title_justify="left", box=None, padding=(0, 1),
                  show_edge=False, title_style="bold")
    table.add_column("", no_wrap=True)
    table.add_column("kv heads", justify="right", no_wrap=True)
    table.add_column("per token", justify="right", no_wrap=True)
    table.add_column(f"{config.max_len:,} tok", justify="right", no_wrap=True)
    for v in kv_cache_variants(config):
        table.add_row(f"{v.name}{' *' if v.current else ''}", f"{v.kv_heads}", fmt_bytes(v.per_token),
                      fmt_bytes(v.full))
    return table


class ArchitectureView(Vertical):
    BINDINGS = [
        Binding("ctrl+s", "apply", "apply"),
        Binding("ctrl+r", "reset", "reset form"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.preset_name = ""
        self._shown_name = ""  # the config the right panel's numbers belong to

    def compose(self) -> ComposeResult:
        live = self.app.live.config
        with Horizontal():
            with VerticalScroll(id="arch-form"):
                yield Label("preset")
                names = list_presets()
                start = live.name if live.name in names else Select.BLANK
                yield Select([(n, n) for n in names], value=start, id="preset", prompt="(custom)", compact=True)
                # Apply sits above the fields: the axis table has grown past a screen's height.
                with Horizontal(id="apply-row"):
                    yield Button("Apply", id="apply", variant="primary", compact=True)
                    yield Button("Reset", id="reset", compact=True)
                yield Label("", id="apply-error", classes="field-error")
                yield ConfigForm(live, id="form")
            with Vertical(id="arch-results"):
                yield Static("", id="arch-total")
                # Batch and lengths above the tabs: the summary's memory, the shapes and the diagram all use them.
                with Horizontal(id="shape-inputs"):
                    yield Label("batch N", id="shape-batch-label")
                    yield FieldInput(str(DEFAULT_BATCH), id="shape-batch", compact=True)
                    yield Label("length L", id="shape-seq-label")
                    yield FieldInput(str(DEFAULT_LENGTH), id="shape-seq", compact=True)
                    yield Label("source S", id="shape-src-label")
                    yield FieldInput(str(DEFAULT_LENGTH), id="shape-src", compact=True)
                yield Label("", id="shape-error", classes="field-error")
                with TabbedContent(id="arch-tabs"):
                    with TabPane("Summary", id="arch-summary"):
                        with VerticalScroll():
                            yield ParamBars(id="bars")
                            yield Static("", id="arch-cost")
                            yield Static("", id="paper-note")
                            yield Static("", id="arch-kv")
                    with TabPane("Model", id="arch-model"):
                        yield ModelDiagram(id="model-diagram")
                    with TabPane("Shapes", id="arch-shapes"):
                        yield DataTable(id="shape-table", zebra_stripes=True, cursor_type="row")
                    with TabPane("Compare", id="arch-compare"):
                        options = [(CURRENT, CURRENT)] + [(n, n) for n in list_presets()]
                        with Horizontal(id="compare-pick"):
                            yield Select(options, value=_default("transformer-2017-base"), id="cmp-a",
                                         allow_blank=False, compact=True)
                            yield Select(options, value=_default("gpt2-small"), id="cmp-b",
                                         allow_blank=False, compact=True)
                        with VerticalScroll():
                            yield Static("", id="compare-table")
                    with TabPane("Layer", id="arch-layer"):
                        with VerticalScroll():
                            yield BlockDiagram(id="diagram")
                            yield FFNRankNote(id="ffn-rank")

    def on_mount(self) -> None:
        table = self.query_one("#shape-table", DataTable)
        # The output shape right after the module: at 80 columns the secondary columns scroll off, not it.
        table.add_columns("module", "output", "params", "input", "kind", "note")
        self.refresh_analysis(self.query_one(ConfigForm).validate())

    # -- public, used by the tour and the app ------------------------------------------------------
    @property
    def form_config(self) -> ModelConfig | None:
        return self.query_one(ConfigForm).config

    def load_preset(self, name: str) -> None:
        self.query_one("#preset", Select).value = name  # on_select_changed loads the form

    def show_tab(self, pane_id: str) -> None:
        self.query_one("#arch-tabs", TabbedContent).active = pane_id

    def shape_inputs(self) -> tuple[int, int, int]:
        """Batch, target length and source length from the Shapes inputs (ValueError if not positive)."""
        out = []
        for name in ("batch", "seq", "src"):
            text = self.query_one(f"#shape-{name}", Input).value.strip()
            if not text.isdigit() or int(text) <= 0 or int(text) > 1_000_000:
                label = self.query_one(f"#shape-{name}-label", Label).render()  # the name the person sees
                raise ValueError(f"{label} must be a positive integer (up to 1,000,000), got {text!r}")
            out.append(int(text))
        return out[0], out[1], out[2]

    # -- reacting ----------------------------------------------------------------------------------
    @guarded
    def on_config_form_changed(self, event: ConfigForm.Changed) -> None:
        self.refresh_analysis(event.config)

    @guarded
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "preset" and isinstance(event.value, str):
            self.preset_name = event.value
            self.query_one(ConfigForm).load(load_preset(event.value))
        elif event.select.id in ("cmp-a", "cmp-b"):
            self.refresh_compare()

    @guarded
    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id and event.input.id.startswith("shape-"):
            self.refresh_analysis(self.form_config)

    @guarded
    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        elif event.button.id == "reset":
            self.action_reset()

    def action_apply(self) -> None:
        config = self.form_config
        if config is None:
            self.app.notify("fix the highlighted fields first", severity="warning")
            return
        origin = describe_origin(self.app.live.origin)
        shipped = shipped_for(config)  # an unedited shipped toy builds with its trained weights
        if not origin.learned or (origin.kind == "shipped" and origin.detail == shipped):
            self.app.rebuild_model(config)  # nothing learned would be lost: no question
            return

        def answered(apply: bool | None) -> None:
            if apply:
                self.app.rebuild_model(config)

        self.app.push_screen(ConfirmApply(origin.text, shipped), answered)

    def action_reset(self) -> None:
        self.query_one(ConfigForm).load(self.app.live.config)

    def live_model_changed(self) -> None:
        """A checkpoint or HF folder brings its own config: show it in the form."""
        live = self.app.live
        if describe_origin(live.origin).kind in ("checkpoint", "hf", "shipped") and self.form_config != live.config:
            self.query_one(ConfigForm).load(live.config)
        if self.query_one("#arch-tabs", TabbedContent).active == "arch-layer":
            self.query_one(FFNRankNote).show(live)

    def palette_commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        commands = [("Apply the form (rebuild the live model)", "ctrl+s", self.action_apply),
                    ("Reset the form to the live model", "ctrl+r", self.action_reset)]
        for pane, title in (("arch-summary", "Summary"), ("arch-model", "Model"), ("arch-shapes", "Shapes"),
                            ("arch-compare", "Compare"), ("arch-layer", "Layer")):
            commands.append((f"Architecture: {title} tab", "", _call(self._show_pane, pane)))
        for name in list_presets():
            commands.append((f"Load preset {name}", "into the Architecture form", _call(self._open_preset, name)))
        return commands

    def _show_pane(self, pane: str) -> None:
        self.app.show_view("architecture")
        self.show_tab(pane)

    def _open_preset(self, name: str) -> None:
        self.app.show_view("architecture")
        self.load_preset(name)

    def refresh_analysis(self, config: ModelConfig | None) -> None:
        """The summary follows every keystroke; the other tabs redraw only while shown (they cost more)."""
        apply = self.query_one("#apply", Button)
        apply.disabled = config is None
        self.query_one("#apply-error", Label).update(
            "" if config is not None else "invalid: the field marked above")
        self.query_one("#arch-results").set_class(config is None, "stale")
        if config is None:  # the numbers stay, dimmed, under a title that says they are not the form's
            self.query_one("#arch-total", Static).update(
                f"[b reverse] stale: form invalid [/] numbers below are for {self._shown_name}")
            return
        counted = count_params(config)
        self._shown_name = config.name
        # A mixture of experts: a token goes through the router and experts_per_token experts only.
        active = f" ([b]{counted.active:,}[/b] active per token)" if counted.active != counted.total else ""
        self.query_one("#arch-total", Static).update(
            f"[b]{counted.total:,}[/b] parameters{active} · {config.name}")  # as first_frame_text
        self.query_one("#bars", ParamBars).show(count_params(config).components())
        self.query_one("#paper-note", Static).update(paper_note(config))
        self._name_lengths(config)
        error = self.query_one("#shape-error", Label)
        try:
            batch, seq, src = self.shape_inputs()
        except ValueError as err:
            error.update(str(err))
            error.display = True
            return
        error.update("")
        error.display = False
        self.query_one("#arch-cost", Static).update(summary_text(config, batch, seq))
        self.query_one("#arch-kv", Static).update(kv_table(config) if config.has_decoder else "")
        self._refresh_tab(config, batch, seq, src)

    def _refresh_tab(self, config: ModelConfig, batch: int, seq: int, src: int) -> None:
        active = self.query_one("#arch-tabs", TabbedContent).active
        if active == "arch-shapes":
            self._fill_shapes(config, batch, seq, src)
        elif active == "arch-compare":
            self.refresh_compare()
        elif active == "arch-layer":
            self.query_one("#diagram", BlockDiagram).show(config)
            self.query_one(FFNRankNote).show(self.app.live)
        elif active == "arch-model":
            self.query_one(ModelDiagram).show(config, batch, seq, src)

    def _name_lengths(self, config: ModelConfig) -> None:
        """Seed 003's letters: one length L for a single stack; target T and source S for the 2017 model."""
        two = config.family == "encoder-decoder"
        self.query_one("#shape-seq-label", Label).update("target T" if two else "length L")
        for sid in ("#shape-src-label", "#shape-src"):
            self.query_one(sid).display = two

    @guarded
    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "arch-tabs":
            event.stop()
            self.refresh_analysis(self.form_config)

    def _fill_shapes(self, config: ModelConfig, batch: int, seq: int, src: int) -> None:
        table = self.query_one("#shape-table", DataTable)
        table.clear()
        for row in shape_trace(config, batch, seq, src):
            table.add_row(_short_path(row.path, row.depth), _shape(row.output_shape), f"{row.params:,}",
                          _shape(row.input_shape), row.kind, row.note)

    def refresh_compare(self) -> None:
        configs = []
        for sid in ("cmp-a", "cmp-b"):
            name = self.query_one(f"#{sid}", Select).value
            config = self.form_config if name == CURRENT else load_preset(str(name))
            if config is None:
                self.query_one("#compare-table", Static).update("the form is invalid")
                return
            configs.append((str(name), config))
        (na, a), (nb, b) = configs
        try:
            context = self.shape_inputs()[1]  # FLOPs per token at the length L above the tabs
        except ValueError:
            context = DEFAULT_LENGTH  # the field shows its own error
        self.query_one("#compare-table", Static).update(compare_table(a, b, na, nb, context))


def _short_path(path: str, depth: int) -> str:
    """A layer's own rows without the layer's name ("decoder.3.ffn.up" -> "  ffn.up"): narrow, still unique
    in order, since the layer's row ("decoder.3") comes right before them."""
    if depth < 2:
        return path
    return "  " + ".".join(path.split(".")[2:])


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ",".join(str(n) for n in shape) + ")"  # no spaces: the column fits at 80x24


def _call(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: fn(*args)


def _default(name: str) -> str:
    return name if name in list_presets() else CURRENT

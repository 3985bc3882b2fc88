"""The Architecture view's right panel: the total, the summary, and whichever tab is shown, for a config.

A widget of its own: the view hands it each config the form yields (None while the form is invalid) with
`show`. The summary follows every keystroke; the Shapes, Compare, Model and Layer tabs cost more, so only
the one on screen is redrawn. The batch and lengths above the tabs feed all of them; a bad one is named under
the inputs and the numbers wait. Only the Summary is composed with the panel: the other tabs' contents mount
one at a time after it (`fill_next_tab`, driven by the view), or at once when their tab is opened first.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static, TabbedContent, TabPane

from tui_lab.analysis import count_params, shape_trace
from tui_lab.analysis.shapes import image_length
from tui_lab.app.guard import guarded
from tui_lab.app.textual_private import ContentTabs
from tui_lab.app.views.architecture.compare import compare_table
from tui_lab.app.views.architecture.ffn_rank import FFNRankNote
from tui_lab.app.views.architecture.model_diagram import ModelDiagram
from tui_lab.app.views.architecture.param_bars import ParamBars
from tui_lab.app.views.architecture.tables import kv_table, paper_note, shape_text, short_path, summary_text
from tui_lab.app.widgets.block_diagram import BlockDiagram
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.narrow_row import NarrowRow
from tui_lab.app.widgets.whole_columns import WholeColumns
from tui_lab.config import ModelConfig
from tui_lab.presets import list_presets, load_preset

CURRENT = "(this form)"
SHAPE_COLUMNS = ("module", "output", "params", "input", "kind", "note")
DEFAULT_BATCH, DEFAULT_LENGTH = 2, 16  # seed 003's examples use a batch of 2: N is then visibly not 1
TABS = (("arch-summary", "Summary"), ("arch-model", "Model"), ("arch-shapes", "Shapes"),
        ("arch-compare", "Compare"), ("arch-layer", "Layer"))


class ArchitectureResults(Vertical):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.config: ModelConfig | None = None  # the form's, as last shown (None: the form is invalid)
        self._shown_name = ""  # the config the numbers on screen belong to (kept, dimmed, while invalid)
        self._unfilled = [pane_id for pane_id, _ in TABS[1:]]  # tabs whose contents are not mounted yet
        self._drawn_inputs: tuple[str, ...] = ()  # the batch and lengths the numbers were drawn for
        self._stale_for: tuple | None = None  # (fallback, inputs) on screen, dimmed, while the form is invalid

    def compose(self) -> ComposeResult:
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
            for pane_id, title in TABS[1:]:
                yield TabPane(title, id=pane_id)  # filled by fill_next_tab

    @property
    def tabs_pending(self) -> bool:
        """Tabs whose contents are still to mount (`fill_next_tab`)."""
        return bool(self._unfilled)

    async def fill_next_tab(self, pane_id: str | None = None) -> None:
        """Mount the contents of `pane_id` (else of the next unfilled tab); drawn at once if it is shown."""
        pane_id = pane_id or next(iter(self._unfilled), None)
        if pane_id not in self._unfilled:
            return
        self._unfilled.remove(pane_id)
        await self.query_one(f"#{pane_id}", TabPane).mount_all(_tab_contents(pane_id))
        if self.query_one("#arch-tabs", TabbedContent).active == pane_id:
            self._draw(self.config)

    def show_tab(self, pane_id: str) -> None:
        """`pane_id` to the front. The focus inside the pane left goes to the tab bar first: hidden, the focused
        widget passed the focus to its neighbour in the same pane, which brought that pane back, and ^t changed
        nothing (Compare's picker focused: the long tier's English 160x48 walk)."""
        tabs = self.query_one("#arch-tabs", TabbedContent)
        focused = self.app.focused
        if focused is not None and pane_id != tabs.active and tabs.active_pane in focused.ancestors:
            tabs.query_one(ContentTabs).focus()
        tabs.active = pane_id

    def _input_texts(self) -> tuple[str, ...]:
        return tuple(self.query_one(f"#shape-{name}", Input).value for name in ("batch", "seq", "src"))

    def shape_inputs(self, two_stacks: bool = True, image_length: int | None = None) -> tuple[int, int, int]:
        """Batch, target length and source length from the Shapes inputs (ValueError if not positive). A single
        stack has one length L, and its source field is hidden: an encoder's source length is L too (the trace
        reads an encoder's length from the source). An image's length is its patches and the class token
        (`image_length`), whatever the hidden length field holds."""
        out = []
        names = ("batch",) if image_length else ("batch", "seq", "src") if two_stacks else ("batch", "seq")
        for name in names:
            text = self.query_one(f"#shape-{name}", Input).value.strip()
            if not text.isdigit() or int(text) <= 0 or int(text) > 1_000_000:
                label = self.query_one(f"#shape-{name}-label", Label).render()  # the name the person sees
                raise ValueError(f"{label} must be a positive integer (up to 1,000,000), got {text!r}")
            out.append(int(text))
        if image_length:
            return out[0], image_length, image_length
        return out[0], out[1], out[-1] if two_stacks else out[1]

    def show(self, config: ModelConfig | None, fallback: ModelConfig | None = None) -> None:
        """The summary follows every keystroke; the other tabs redraw only while shown (they cost more). The same
        valid config with the same batch and lengths is on screen already: nothing to redraw. An invalid form
        (None) shows `fallback`'s numbers, dimmed, where one is given, else keeps the last drawn."""
        if config is not None and config == self.config and self._input_texts() == self._drawn_inputs:
            return
        if config is None and fallback is not None:
            # Still invalid, the same fallback dimmed for the same inputs: each key typed into a wrong field
            # redrew it and toggled "stale" off and on (two restyles of the whole panel, ~0.1 s a key).
            if self.config is None and self._stale_for == (fallback, self._input_texts()):
                return
            self._draw(fallback)
            self.config = None  # the form's next valid config redraws, even this one
        self._draw(config)
        if config is None and fallback is not None:
            self._stale_for = (fallback, self._drawn_inputs)

    def _draw(self, config: ModelConfig | None) -> None:
        self.config = config
        self._stale_for = None
        self._drawn_inputs = self._input_texts()
        self._mark_stale(config is None)
        if config is None:  # the numbers stay, dimmed, under a title that says they are not the form's
            self.query_one("#arch-total", Static).update(Content.from_markup(
                "[b reverse] stale: form invalid [/] numbers below are for $name", name=self._shown_name))
            return
        counted = count_params(config)
        self._shown_name = config.name
        # A mixture of experts: a token goes through the router and experts_per_token experts only.
        active = f" ([b]{counted.active:,}[/b] active per token)" if counted.active != counted.total else ""
        self.query_one("#arch-total", Static).update(
            f"[b]{counted.total:,}[/b] parameters{active} · {config.name}")  # as first_frame_text
        self.query_one("#bars", ParamBars).show(counted.components())
        self.query_one("#paper-note", Static).update(paper_note(config))
        self._name_lengths(config)
        error = self.query_one("#shape-error", Label)
        try:
            batch, seq, src = self.shape_inputs(config.family == "encoder-decoder", image_length(config))
        except ValueError as err:
            error.update(str(err))
            error.display = True
            return
        error.update("")
        error.display = False
        self.query_one("#arch-cost", Static).update(summary_text(config, batch, seq, src))
        self.query_one("#arch-kv", Static).update(kv_table(config) if config.has_decoder else "")
        self._refresh_tab(config, batch, seq, src)

    def _mark_stale(self, stale: bool) -> None:
        """The class at once (what reads it sees it), its restyle after the frame that shows the key: a class change
        restyles every widget of the panel (Textual walks them all), and beside a busy CPU the digit that made the
        form invalid waited ~0.5 s behind that restyle (benchmarks/interface/first_keys.py, `type`)."""
        if stale != self.has_class("stale"):
            self.set_class(stale, "stale", update=False)
            self.call_after_refresh(self.update_node_styles)

    def _refresh_tab(self, config: ModelConfig, batch: int, seq: int, src: int) -> None:
        active = self.query_one("#arch-tabs", TabbedContent).active
        if active in self._unfilled:  # opened before its turn: it mounts now and is drawn then
            self.call_later(self.fill_next_tab, active)
        elif active == "arch-shapes":
            self._fill_shapes(config, batch, seq, src)
        elif active == "arch-compare":
            self.refresh_compare()
        elif active == "arch-layer":
            self.query_one("#diagram", BlockDiagram).show(config)
            self.query_one(FFNRankNote).show(self.app.live)
        elif active == "arch-model":
            self.query_one(ModelDiagram).show(config, batch, seq, src)

    def _name_lengths(self, config: ModelConfig) -> None:
        """Seed 003's letters: one length L for a single stack; target T and source S for the 2017 model. An
        image's length is fixed by its patches: shown, not asked for (the summary once counted a ViT's FLOPs and
        activations at the 16 typed while its trace had 17 tokens)."""
        two, image = config.family == "encoder-decoder", image_length(config)
        label = f"length L {image} (image)" if image else "target T" if two else "length L"
        self.query_one("#shape-seq-label", Label).update(label)
        self.query_one("#shape-seq").display = not image
        for sid in ("#shape-src-label", "#shape-src"):
            self.query_one(sid).display = two

    def _fill_shapes(self, config: ModelConfig, batch: int, seq: int, src: int) -> None:
        # The output shape right after the module: a narrow pane leaves out the secondary columns, whole.
        rows = [(short_path(row.path, row.depth), shape_text(row.output_shape), f"{row.params:,}",
                 shape_text(row.input_shape), row.kind, row.note) for row in shape_trace(config, batch, seq, src)]
        self.query_one("#shape-table", WholeColumns).set_table(SHAPE_COLUMNS, rows)

    def refresh_compare(self) -> None:
        configs = []
        for sid in ("cmp-a", "cmp-b"):
            name = self.query_one(f"#{sid}", Select).value
            config = self.config if name == CURRENT else load_preset(str(name))
            if config is None:
                self.query_one("#compare-table", Static).update("the form is invalid")
                return
            configs.append((str(name), config))
        (na, a), (nb, b) = configs
        try:
            context = self.shape_inputs(two_stacks=False)[1]  # FLOPs per token at the length L above the tabs
        except ValueError:
            context = DEFAULT_LENGTH  # the field shows its own error
        self.query_one("#compare-table", Static).update(compare_table(a, b, na, nb, context))

    # -- reacting ----------------------------------------------------------------------------------
    @guarded
    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id and event.input.id.startswith("shape-"):
            event.stop()
            if self._shown_name and self._input_texts() != self._drawn_inputs:  # not each input's first value
                self.show(self.config)

    @guarded
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id in ("cmp-a", "cmp-b"):
            event.stop()
            self.refresh_compare()

    @guarded
    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "arch-tabs":
            event.stop()
            # The tab now shown; not the first tab's activation as the panel mounts, before the view's first `show`:
            # that drew "stale" (no config yet) and the next draw took it back, and each class change restyles
            # every widget of the panel (~0.1 s of CPU apiece beside a busy CPU, on the first keys' path).
            if self._shown_name:
                self._draw(self.config)


def _tab_contents(pane_id: str) -> list[Widget]:
    if pane_id == "arch-model":
        return [ModelDiagram(id="model-diagram")]
    if pane_id == "arch-shapes":
        return [WholeColumns(id="shape-table", zebra_stripes=True, cursor_type="row")]
    if pane_id == "arch-compare":
        options = [(CURRENT, CURRENT)] + [(n, n) for n in list_presets()]
        pick = NarrowRow(Select(options, value=_default("transformer-2017-base"), id="cmp-a", allow_blank=False,
                                compact=True),
                         Select(options, value=_default("gpt2-small"), id="cmp-b", allow_blank=False, compact=True),
                         id="compare-pick")
        return [pick, VerticalScroll(Static("", id="compare-table"))]
    return [VerticalScroll(BlockDiagram(id="diagram"), FFNRankNote(id="ffn-rank"))]


def _default(name: str) -> str:
    return name if name in list_presets() else CURRENT

"""Architecture: pick a preset, edit it, see counts, shapes, cost and the layer live; Apply rebuilds.

Everything on this page is arithmetic on the config (`tui_lab.analysis`), so it follows every keystroke,
even for 124M parameters, before torch has loaded. The right panel is a widget of its own
(`analysis.ArchitectureResults`); its tables are `tables`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Label, Select, TabbedContent

from tui_lab.app.guard import guarded
from tui_lab.app.modals.confirm_apply import ConfirmApply
from tui_lab.app.origin import describe_origin, short_path
from tui_lab.app.view_contract import LabView, Opening
from tui_lab.app.views.architecture.analysis import TABS, ArchitectureResults
from tui_lab.app.views.architecture.config_form import TEXT_FIELDS, ConfigForm
from tui_lab.app.views.architecture.ffn_rank import FFNRankNote
from tui_lab.app.widgets.menus import menu_open
from tui_lab.config import ModelConfig
from tui_lab.loading import shipped_for
from tui_lab.presets import list_presets, load_preset

# The view's later parts mount once no key has come for this long (a part takes ~0.1 s beside a busy CPU).
PART_QUIET_S = 0.25
WIDE_FORM = 120  # columns from which the form is wide enough for "performer_features" beside its editor


class ArchitectureView(LabView):
    BINDINGS = [
        Binding("ctrl+s", "apply", "apply"),
        Binding("ctrl+r", "reset", "reset"),  # short: the footer keeps f1..f7 and q quit at 80 columns
        # The results' tabs by key, from a field too (a letter would type there): issue 36 item 16.
        Binding("ctrl+t", "next_tab", "tab"),
    ]
    can_focus = True  # the view is its keys' home: it opens focused, not on a field (app.view_focus)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.preset_name = ""
        self._parts_pending = True

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
            yield ArchitectureResults(id="arch-results")

    @property
    def parts_pending(self) -> bool:
        """Parts still mounting after the view (the app mounts no other view meanwhile)."""
        return self._parts_pending

    @property
    def fields_pending(self) -> bool:
        """Form rows still to mount: the app holds a Tab until they are in (it would skip past them)."""
        forms = self.query(ConfigForm)
        return not forms or forms.first().rows_pending  # none yet: the view itself is still composing

    def on_resize(self) -> None:
        # Room for every field's name whole (issue 36 item 20: "performer_featu…" at 160x48); at 80 columns the
        # editors need the columns ("encoder-decoder" whole) and the longest names end in "…".
        self.set_class(self.size.width >= WIDE_FORM, "wide")

    def on_mount(self) -> None:
        self.refresh_analysis(self.query_one(ConfigForm).validate())
        self.call_after_refresh(self._mount_next_part)

    async def _mount_next_part(self) -> None:
        """The form's later rows, then the results' hidden tabs, one part per refresh: ~270 widgets mounted at
        once took 2-3 s beside a busy CPU, and every key waited for them. Drawn first: what the screen shows. Each
        part waits for a pause in the keys (PART_QUIET_S), unless a Tab is waiting for the parts."""
        quiet_for = time.monotonic() - self.lab.last_key_at
        if (quiet_for < PART_QUIET_S or not self.lab.last_key_shown) and not self.lab.waiting_for_parts:
            # keys first: a part waits for a pause, and for the last key's effect on screen
            self.set_timer(max(PART_QUIET_S - quiet_for, 0.05), self._mount_next_part)
            return
        form, results = self.query_one(ConfigForm), self.query_one(ArchitectureResults)
        if form.rows_pending:
            await form.mount_more_rows()
        elif results.tabs_pending:
            await results.fill_next_tab()
        self._parts_pending = form.rows_pending or results.tabs_pending
        self.app.call_later(self.lab.parts_mounted)  # a Tab held for the rows goes on
        if self._parts_pending:
            self.call_after_refresh(self._mount_next_part)

    def refresh_analysis(self, config: ModelConfig | None) -> None:
        """Apply waits for a valid form; the right panel shows the form's numbers (dimmed while invalid)."""
        form = self.query_one(ConfigForm)
        self.query_one("#apply", Button).disabled = config is None
        # The fields are below this line, so it names them (issue 36 item 15: "the field marked above").
        wrong = ", ".join(form.errors) or "a field"
        self.query_one("#apply-error", Label).update("" if config is not None else f"invalid: {wrong} (its rule is "
                                                     "under it, below)")
        # Invalid: the numbers of the config the form was loaded from, never those of a half-typed value that
        # happened to be valid ("heads 1" on the way to 12).
        self.query_one(ArchitectureResults).show(config, fallback=form.base)

    # -- public, used by the tour and the app ------------------------------------------------------
    @property
    def form_config(self) -> ModelConfig | None:
        return self.query_one(ConfigForm).config

    def load_preset(self, name: str) -> None:
        self.query_one("#preset", Select).value = name  # on_select_changed loads the form

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """^s, ^r and ^t off the footer while a field's menu is open (it has the focus and the keys): beside Esc's
        "Dismiss menu" they left the footer no room at 80 columns, its keys drawn over each other (the long tier)."""
        return not menu_open(self.app)

    def first_field(self) -> Widget:
        """`i` enters the form's first text box (its family above, and the preset, are Shift+Tab back)."""
        return self.query_one(f"#f-{TEXT_FIELDS[0]}")

    def show_tab(self, pane_id: str) -> None:
        self.query_one(ArchitectureResults).show_tab(pane_id)

    def open_on(self, opening: Opening) -> None:
        if opening.tab is not None:  # the Tour's g: a results tab
            self.show_tab(opening.tab)


    # -- reacting ----------------------------------------------------------------------------------
    @guarded
    def on_config_form_changed(self, event: ConfigForm.Changed) -> None:
        self.refresh_analysis(event.config)

    @guarded
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "preset" and isinstance(event.value, str):
            self.preset_name = event.value
            self.query_one(ConfigForm).load(load_preset(event.value))

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
        refusal = self.app.build_refusal(config)  # refused for memory before any question about losing weights
        if refusal:
            self.app.notify(refusal, title="not built", severity="error")
            return
        live = self.app.live
        origin = describe_origin(live.origin)
        shipped = shipped_for(config)  # an unedited shipped toy builds with its trained weights
        if origin.kind == "shipped" and origin.detail == shipped and config == live.config:
            # the same toy with the same weights: a rebuild would change nothing, and say nothing (issue 36)
            self.app.notify("nothing changed: the model already matches the form", title="apply")
            return
        if not origin.learned or (origin.kind == "shipped" and origin.detail == shipped):
            # said either way: the numbers beside the form already showed the new shape, and a header that read
            # "random weights" before and after left ^s looking dead (the long tier's walk)
            self.app.notify("the form is unchanged: a new random model of the same shape" if config == live.config
                            else "applied: the form's model builds with random weights", title="apply")
            self.app.rebuild_model(config)  # nothing learned would be lost: no question
            return
        if live.kept_in is not None:  # saved or loaded from a folder: nothing is lost, say where it stays
            self.app.notify(f"the previous weights stay in {short_path(live.kept_in)}", title="apply")
            self.app.rebuild_model(config)
            return

        def answered(apply: bool | None) -> None:
            if apply:
                self.app.rebuild_model(config)

        self.app.push_screen(ConfirmApply(origin.text, shipped), answered)

    def action_next_tab(self) -> None:
        """Summary, Model, Shapes, Compare, Layer, then Summary again."""
        panes = [pane for pane, _ in TABS]
        active = self.query_one("#arch-tabs", TabbedContent).active
        self.show_tab(panes[(panes.index(active) + 1) % len(panes)] if active in panes else panes[0])

    def action_reset(self) -> None:
        if self.form_config == self.app.live.config:  # else the press reads as ignored (issue 36)
            self.app.notify("nothing to reset: the form already matches the live model", title="reset")
            return
        self.query_one(ConfigForm).load(self.app.live.config)

    def live_model_changed(self) -> None:
        """A checkpoint or HF folder brings its own config: show it in the form. A shipped toy arriving at
        start-up leaves a form the person has typed into alone (their keys are never overwritten)."""
        live, form = self.app.live, self.query_one(ConfigForm)
        kind = describe_origin(live.origin).kind
        typed = form.config != form.base  # edited since the form was last loaded
        if kind in ("checkpoint", "hf", "shipped") and self.form_config != live.config and \
                not (kind == "shipped" and typed):
            form.load(live.config)
        if self.query_one("#arch-tabs", TabbedContent).active == "arch-layer":
            for note in self.query(FFNRankNote):  # none while the tab's contents still mount: drawn then
                note.show(live)  # the live model's weights, not the form's config

    def palette_commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        commands = [("Apply the form (rebuild the live model)", "ctrl+s", self.action_apply),
                    ("Reset the form to the live model", "ctrl+r", self.action_reset)]
        for pane, title in TABS:
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


def _call(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: fn(*args)

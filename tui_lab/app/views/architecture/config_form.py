"""The architecture form: one widget per config field, validated on every keystroke.

The first rows (the family and the sizes: where `i` and the first Tabs go) mount with the form; the rest
follow a part at a time (`mount_more_rows`, driven by the view), so a key typed meanwhile waits for one part,
never for ~170 widgets. Until its row exists a field reads as the config the form was loaded with.

Validation is the config's own: each text is parsed with `parse_value`, then a `ModelConfig` is built;
the ValueError's message is shown under the field it names. The form posts `ConfigForm.Changed`
with the config (None while invalid) and the errors by field.
"""

from __future__ import annotations

import dataclasses
import re

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Switch

from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.config import AXES, CHOICES, ModelConfig, parse_value

# The sizes, then every axis in the config's table: a select per string axis, a switch per true/false
# axis, a text box per number axis.
SIZE_FIELDS = ("encoder_layers", "decoder_layers", "d_model", "heads", "d_ff", "vocab", "max_len", "dropout")
NUMBER_AXES = tuple(n for n, a in AXES.items() if not a.is_choice and not isinstance(a.values[0], bool))
TEXT_FIELDS = SIZE_FIELDS + NUMBER_AXES
SELECT_FIELDS = tuple(CHOICES)
SWITCH_FIELDS = tuple(n for n, a in AXES.items() if isinstance(a.values[0], bool))
FORM_FIELDS = SELECT_FIELDS[:1] + SIZE_FIELDS + SELECT_FIELDS[1:] + NUMBER_AXES + SWITCH_FIELDS
FIRST_ROWS = 1 + len(SIZE_FIELDS)  # mounted with the form: what is on screen at 80x24, `i`'s field and the sizes
ROWS_PER_PART = 8  # each later part: ~0.15 s of CPU (selects cost most), so a key waits at most that


def field_of_error(message: str, names: tuple[str, ...] = FORM_FIELDS, edited: str | None = None) -> str | None:
    """The form field a config error belongs under: the one just `edited` if the rule names it (typing
    heads 5 under d_model 128 broke "d_model must be divisible by heads": heads did), else the first named."""
    hits = [(message.find(n), -len(n), n) for n in names if _names(message, n)]
    if edited is not None and any(n == edited for _, _, n in hits):
        return edited
    return min(hits)[2] if hits else None


def _names(message: str, name: str) -> bool:
    """`name` appears as a word (not "d_model" inside "d_model_x", nor "heads" inside "kv_heads")."""
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", message) is not None


def adjust_stacks(family: str, encoder: int, decoder: int) -> tuple[int, int]:
    """Stack sizes that fit `family`, keeping what the person typed where it still makes sense."""
    depth = max(encoder, decoder, 1)
    if family == "decoder-only":
        return 0, decoder or depth
    if family == "encoder-only":
        return encoder or depth, 0
    return encoder or depth, decoder or depth


class ConfigForm(Vertical):
    class Changed(Message):
        def __init__(self, form: ConfigForm, config: ModelConfig | None, errors: dict[str, str]) -> None:
            super().__init__()
            self.form, self.config, self.errors = form, config, errors

        @property
        def control(self) -> ConfigForm:
            return self.form

    def __init__(self, base: ModelConfig, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.base = base
        self.config: ModelConfig | None = base
        self.errors: dict[str, str] = {}
        self._shown_errors: dict[str, str] = {}
        self.edited: str | None = None  # the field the person changed last: a rule naming two fields shows there
        self._editors: dict[str, Input | Select | Switch] = {}  # the rows made so far, by field
        self._error_labels: dict[str, Label] = {}
        self._validated: tuple[dict[str, object], str | None] | None = None  # what validate() last read

    def compose(self) -> ComposeResult:
        yield from self._rows(FORM_FIELDS[:FIRST_ROWS])

    @property
    def rows_pending(self) -> bool:
        """Rows still to mount (`mount_more_rows`)."""
        return len(self._editors) < len(FORM_FIELDS)

    async def mount_more_rows(self) -> None:
        """The next ROWS_PER_PART rows, each built from the config the form holds now."""
        names = FORM_FIELDS[len(self._editors):len(self._editors) + ROWS_PER_PART]
        await self.mount_all(list(self._rows(names)))
        self._show_errors()  # a rule broken by the loaded config may name a field just mounted

    def _rows(self, names: tuple[str, ...]) -> list[Widget]:
        rows: list[Widget] = []
        for name in names:
            self._error_labels[name] = Label("", id=f"e-{name}", classes="field-error")
            rows += [Horizontal(Label(name, classes="field-name"), self._editor(name), classes="field-row"),
                     self._error_labels[name]]
        return rows

    def _editor(self, name: str) -> Input | Select | Switch:
        value = getattr(self.base, name)
        if name in SELECT_FIELDS:
            editor = Select([(v, v) for v in CHOICES[name]], value=value, allow_blank=False, id=f"f-{name}",
                            classes="field-editor", compact=True)
        elif name in SWITCH_FIELDS:
            editor = Switch(value=value, id=f"f-{name}", classes="field-editor")
        else:
            editor = FieldInput(str(value), id=f"f-{name}", classes="field-editor", compact=True)
        self._editors[name] = editor
        return editor

    # -- reading and writing -----------------------------------------------------------------------
    def load(self, config: ModelConfig) -> None:
        """Show `config`; the widgets' change events then revalidate (once they all hold new values)."""
        self.base = config  # rows not mounted yet are built from it
        for name in self._editors:
            self.set_field(name, getattr(config, name))
        self.validate()

    def set_field(self, name: str, value: object) -> None:
        widget = self._editors[name]
        if isinstance(widget, Input):
            widget.value = str(value)
        else:
            widget.value = value

    def texts(self) -> dict[str, object]:
        """Each field's value; a row not mounted yet holds the loaded config's (it is built from it)."""
        out: dict[str, object] = {}
        for name in FORM_FIELDS:
            editor = self._editors.get(name)
            out[name] = editor.value if editor is not None else _text(name, getattr(self.base, name))
        return out

    def validate(self) -> ModelConfig | None:
        errors: dict[str, str] = {}
        values: dict[str, object] = {}
        texts = self.texts()
        self._validated = (texts, self.edited)
        for name, raw in texts.items():
            if name in TEXT_FIELDS:
                try:
                    values[name] = parse_value(name, str(raw))
                except ValueError as err:
                    errors[name] = str(err)
            else:
                values[name] = raw
        config = None
        if not errors:
            try:
                config = self._build(values)
            except (ValueError, TypeError) as err:
                errors[field_of_error(str(err), edited=self.edited) or "family"] = str(err)
        self.config, self.errors = config, errors
        self._show_errors()
        self.post_message(self.Changed(self, config, errors))
        return config

    def _show_errors(self) -> None:
        for name, label in self._error_labels.items():
            text = self.errors.get(name, "")
            if self._shown_errors.get(name, "") != text:  # touch only what changed: each update relayouts
                label.update(text)
                label.display = bool(text)
                self._shown_errors[name] = text

    def _build(self, values: dict[str, object]) -> ModelConfig:
        config = dataclasses.replace(self.base, **values)  # validates in __post_init__
        if config != self.base and not config.name.startswith("custom"):
            config = dataclasses.replace(config, name=f"custom (from {self.base.name})")
        return config

    # -- events ------------------------------------------------------------------------------------
    def _note_edit(self, widget: Input | Select | Switch) -> None:
        if widget.has_focus and widget.id:  # typed by the person, not set by load()
            self.edited = widget.id.removeprefix("f-")

    def _revalidate(self) -> None:
        """Validate, unless nothing it reads has changed since it last ran: each editor reports its first
        value as a change when it mounts (35 validations, and as many analysis redraws, per form mounted)."""
        if self._validated is None or self._validated != (self.texts(), self.edited):
            self.validate()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._note_edit(event.input)
        self._revalidate()

    def on_switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        self._note_edit(event.switch)
        self._revalidate()

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._note_edit(event.select)
        if event.select.id == "f-family" and isinstance(event.value, str):
            self._fit_stacks(event.value)
        self._revalidate()

    def _fit_stacks(self, family: str) -> None:
        try:
            enc = int(self._editors["encoder_layers"].value)
            dec = int(self._editors["decoder_layers"].value)
        except ValueError:
            return
        new_enc, new_dec = adjust_stacks(family, enc, dec)
        if (new_enc, new_dec) != (enc, dec):
            self.set_field("encoder_layers", new_enc)
            self.set_field("decoder_layers", new_dec)


def _text(name: str, value: object) -> object:
    """What the field's editor would hold for `value`: a text box holds text."""
    return str(value) if name in TEXT_FIELDS else value

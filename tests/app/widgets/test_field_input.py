"""A form field's keystrokes repaint the field, not the whole screen; long text still scrolls into view.

Textual's Input lays out every widget on the screen at each key (its `virtual_size` is a layout reactive);
FieldInput does not (tui_lab/app/widgets/field_input.py). The layout pass is counted at the screen."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, view_mounted
from textual.app import App
from textual.screen import Screen
from textual.widgets import Input

from tui_lab.app.widgets.field_input import FieldInput


@pytest.fixture
def layouts(monkeypatch):
    """How many times a screen laid out its widgets (Textual's private hook: skip if it moved)."""
    if not hasattr(Screen, "_refresh_layout"):
        pytest.skip("Textual no longer has Screen._refresh_layout")
    count = [0]
    original = Screen._refresh_layout

    def counted(self, *args, **kwargs):
        count[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    return count


class Form(App):
    CSS = "Input { width: 1fr; max-width: 20; }"  # grows with the screen: takes words of any length
    fields_blink = True  # what a FieldInput asks of its app (view_contract.LabServices)

    def __init__(self, field: type[Input]) -> None:
        super().__init__()
        self.field = field

    def compose(self):
        yield self.field(id="box", compact=True)


async def _typed(app, pilot, layouts, text: str) -> int:
    app.query_one("#box").focus()
    await pilot.pause()
    before = layouts[0]
    await pilot.press(*text)
    await pilot.pause()
    return layouts[0] - before


@pytest.mark.parametrize("field, relayouts", [(Input, True), (FieldInput, False)])
async def test_typing_lays_out_the_screen_only_with_textuals_input(layouts, field, relayouts):
    app = Form(field)
    async with app.run_test(size=(40, 5)) as pilot:
        count = await _typed(app, pilot, layouts, "abcdef")
        assert (count >= 6) if relayouts else (count == 0), count


async def test_long_text_scrolls_so_the_cursor_end_shows(layouts):
    app = Form(FieldInput)
    async with app.run_test(size=(40, 5)) as pilot:
        await _typed(app, pilot, layouts, "0123456789abcdefghijKLMNOPQRST")
        first = screen_lines(app)[0]
        assert "KLMNOPQRST" in first and "0123" not in first, first


async def test_typing_in_the_train_form_lays_out_nothing_and_shows_the_text(layouts):
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await view_mounted(pilot, "train")
        app.show_view("train")
        await pilot.pause()
        box = app.query_one("#tf-folder", Input)
        box.focus()
        box.value = ""
        await pilot.pause()
        before = layouts[0]
        await pilot.press(*"runs/x")
        await pilot.pause()
        assert layouts[0] == before
        assert any("runs/x" in line for line in screen_lines(app))


async def test_a_field_mounted_while_a_run_trains_keeps_its_cursor_still():
    # The Train view stops every cursor on screen from blinking while a run trains (a blink is a frame taken
    # from the trainer), once, when the run starts. Views still mounting then brought fields that blinked on.
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(120, 40)) as pilot:
        view = await view_mounted(pilot, "train")
        view.monitor._blink(False)  # what its tick does while a run trains
        await app.query_one("#views").mount(FieldInput(id="late"))
        assert not app.query_one("#late", Input).cursor_blink
        view.monitor._blink(True)
        await app.query_one("#views").mount(FieldInput(id="later"))
        assert app.query_one("#later", Input).cursor_blink and app.query_one("#late", Input).cursor_blink


class Two(App):
    CSS = "FieldInput { width: 1fr; max-width: 20; }"
    fields_blink = True

    def compose(self):
        yield FieldInput(id="box", compact=True)
        yield FieldInput("", id="other", compact=True)


@pytest.mark.parametrize("typed, shown", [
    ("four hundred thirty two", "four hundred thirty…"),  # free text: whole words, then the mark
    ("0.0003 1000000 123456", "0.0003 1000000 …"),  # never a number cut: "…" after a space
    ("123456789012345678901234", "…"),  # one long number: absent, with the mark, never its head
    ("short one", "short one"),
])
async def test_a_field_left_shows_its_value_from_the_start_or_says_it_is_cut(typed, shown):
    """Typed in, a field scrolls to its cursor (the tail shows); left, it showed the same tail with its head
    hidden and no mark ("hundred thirty two" for "four hundred thirty two")."""
    app = Two()
    async with app.run_test(size=(40, 5)) as pilot:
        app.query_one("#box").focus()
        await pilot.press(*typed)
        await pilot.pause()
        app.query_one("#other").focus()
        await pilot.pause()
        assert screen_lines(app)[0].rstrip() == shown


class Fixed(Two):
    CSS = "FieldInput { width: 20; }"


@pytest.mark.parametrize("typed, kept, shown", [
    ("123456789012345678901234", "1234567890123456789", "1234567890123456789"),  # a word: one cell for the cursor
    ("0 1 2 3 4 5 6 7 8 9 10 11", "0 1 2 3 4 5 6 7 8 9 10 11", "0 1 2 3 4 5 6 7 8 …"),  # a list runs on
])
async def test_a_fixed_width_field_takes_no_word_longer_than_it_shows(typed, kept, shown):
    """The long tier typed 57745774 into a 6-cell field and it read "…": a field a fixed number of cells wide
    refuses the key that would make a word longer than it shows; a list of short words still runs on."""
    app = Fixed()
    async with app.run_test(size=(40, 5)) as pilot:
        app.query_one("#box").focus()
        await pilot.press(*("space" if c == " " else c for c in typed))
        assert app.query_one("#box", Input).value == kept
        app.query_one("#other").focus()
        await pilot.pause()
        assert screen_lines(app)[0].rstrip() == shown

"""The number rule of tests/support/screen_rules.py beside a dialog: a value of the screen under a modal's box ends
against the box's frame ("lr        0█", the Train view's long-run question over its form, the long tier's walk),
which is the mark of what the box hides, not a number cut short; beside no box the same line is one."""

from __future__ import annotations

from app_support import screen_lines
from screen_rules import cut_numbers, dialogs, under_menus
from textual.app import App, ComposeResult
from textual.containers import Container
from textual.screen import ModalScreen
from textual.widgets import Label


class Question(ModalScreen):
    DEFAULT_CSS = "Question { align: left top; } #box { border: tall red; width: 30; height: 6; offset: 11 0; }"

    def compose(self) -> ComposeResult:
        with Container(id="box"):
            yield Label("Start it? 35,123 steps")


class Form(App):
    def compose(self) -> ComposeResult:
        yield Label("lr        0.003\nschedule  cosine")


async def test_a_value_against_a_dialogs_frame_is_not_a_cut_number():
    app = Form()
    async with app.run_test(size=(60, 10)) as pilot:
        await app.push_screen(Question())
        await pilot.pause()
        lines = screen_lines(app)
        assert len(dialogs(app)) == 1
        assert any(line.startswith("lr        0") and "0." not in line for line in lines), lines  # the box hides ".003"
        assert cut_numbers(lines, 60), lines  # read bare, the 0 touches the frame
        assert not cut_numbers(under_menus(app, lines), 60)
        assert any("35,123" in line for line in under_menus(app, lines))  # the box's inside is still read

"""Speed at 80x24, read from the rendered screen: the lengths field shows its numbers whole (issue 36 item 7: it
showed "new tokens 51" while the run measured 512, the buttons' fixed width leaving the field three columns)."""

from __future__ import annotations

from app_support import app_for, screen_lines, view_mounted, wait_for, wait_ready
from screen_rules import cut_numbers
from textual.widgets import Button, Input

SMALL = (80, 24)


async def test_the_lengths_show_whole_at_80x24():
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")
        app.show_view("speed")
        await pilot.pause()
        row = next(line for line in screen_lines(app) if "new tokens" in line)
        assert "new tokens 512 " in row, row  # the demo's length, the placeholder, whole
        app.query_one("#sp-lengths", Input).value = "64 128 512"
        app.query_one("#sp-run", Button).focus()
        await pilot.pause()
        lines = screen_lines(app)
        row = next(line for line in lines if "new tokens" in line)
        assert "new tokens 64 128 512 " in row, row
        assert "Run r" in row and "Cancel x" in row, row
        assert not cut_numbers(lines, SMALL[0]), cut_numbers(lines, SMALL[0])


def toast_text(app) -> str:
    """The text of the toasts as the screen draws them (the rows inside each toast's region), joined."""
    from textual.widgets._toast import Toast

    lines = screen_lines(app)
    rows = [lines[y][toast.region.x + 1:toast.region.right] for toast in app.screen.query(Toast)
            for y in range(toast.region.y, toast.region.bottom)]
    return " ".join(" ".join(rows).split())


async def test_each_field_shows_whole_what_it_takes_and_a_run_that_cannot_end_soon_is_refused():
    """The long tier's walk at 100x30 typed 57745774 into repeats: the field read "…" and r would have started
    57 million repeats. Each field now takes what it shows whole, and r refuses, in one line naming the fields
    and the limit, a measurement whose floor is past ten minutes; nothing starts."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")
        await pilot.press("6")
        view = app.view("speed")
        if view.demo:
            await pilot.press("d")
        for wid, typed, kept in (("#sp-repeats", "57745774", "57745"), ("#sp-prompt", "1234567", "12345"),
                                 ("#sp-lengths", "64 12345678 x9", "64 123456 x9")):
            field = app.query_one(wid, Input)
            field.focus()
            field.value = ""
            await pilot.press(*("space" if c == " " else c for c in typed))
            assert field.value == kept, (wid, field.value)
        app.query_one("#sp-lengths", Input).value = "64 128"
        app.query_one("#sp-prompt", Input).value = "16"
        await pilot.press("escape")
        await pilot.pause()
        row = next(line for line in screen_lines(app) if "new tokens" in line)
        assert "prompt 16 " in row and "repeats 57745 " in row, row
        await pilot.press("r")
        await wait_for(pilot, lambda: "not run: 57745 repeats" in " ".join(screen_lines(app)))
        said = toast_text(app)
        assert "new tokens 64 128 after a 16-token prompt take at least" in said, said
        assert "lower repeats, new tokens or prompt" in said, said
        assert not view.running
        app.query_one("#sp-repeats", Input).value = "1"
        await pilot.press("r")  # the same fields with one repeat run
        await wait_for(pilot, lambda: view.running or view.report is not None)
        await pilot.press("x")
        await wait_for(pilot, lambda: not view.running)


async def test_enter_in_a_field_runs_as_r_does():
    """A person types repeats and presses Enter: the run starts (or its refusal shows), as r would; Enter did nothing
    and a typing field's footer offers no r."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")
        await pilot.press("6")
        view = app.view("speed")
        field = app.query_one("#sp-repeats", Input)
        field.focus()
        field.value = ""
        await pilot.press("0", "enter")
        await wait_for(pilot, lambda: "repeats (0) must be >= 1" in toast_text(app))
        assert not view.running and app.focused is field  # refused in one line; the typist stays in the field
        await pilot.press("backspace", "1", "enter")
        await wait_for(pilot, lambda: view.running or view.report is not None)
        await pilot.press("escape", "x")
        await wait_for(pilot, lambda: not view.running)

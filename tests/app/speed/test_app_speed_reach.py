"""Speed at 80x24, read from the rendered screen: the result's summary stays in sight however the keys scroll the
results below it, and r says something on every press, also when it cannot run (issue 36: the crawler's CI tier
met the summary below the fold after a run, PageUp/Home moving the table's cursor rather than the pane, and an `r`
on the MHA/GQA panel that changed nothing: the same refusal line again)."""

from __future__ import annotations

from app_support import app_for, screen_lines, view_mounted, wait_for, wait_ready
from textual.widgets import DataTable, Input

SMALL = (80, 24)


def summary_shown(app) -> bool:
    return any("the KV cache is" in line for line in screen_lines(app)[:-1])


async def test_the_summary_stays_in_sight_while_the_table_scrolls_at_80x24():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")
        await pilot.press("6")
        await pilot.pause()
        view = app.view("speed")
        if view.demo:
            await pilot.press("d")  # the toy itself: a run of a second or two
        app.query_one("#sp-lengths", Input).value = "8 16 24 32"
        app.query_one("#sp-repeats", Input).value = "1"
        await pilot.press("r")
        await wait_for(pilot, lambda: view.report is not None and not view.running, 60)
        await wait_for(pilot, lambda: summary_shown(app), 10)
        for _ in range(8):  # a person tabs down to the table of lengths
            if isinstance(app.focused, DataTable):
                break
            await pilot.press("tab")
        assert isinstance(app.focused, DataTable), app.focused
        for key in ("down", "end", "pagedown", "pageup", "home", "up"):
            await pilot.press(key)
            await pilot.pause()
            lines = screen_lines(app)
            assert summary_shown(app), f"after {key}:\n" + "\n".join(lines)
            if key == "end":  # the table's last row in sight too: the results scroll below the summary
                assert any(line.split()[:1] == ["32"] for line in lines), "\n".join(lines)


async def test_r_on_the_kv_panel_with_a_bad_field_says_so_on_every_press():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")
        await pilot.press("6", "k")
        await pilot.pause()
        app.query_one("#kv-batch", Input).value = ""  # a person emptied the field and left it (Esc)
        for press in range(2):
            notes = len(app._notifications)
            before = screen_lines(app)
            await pilot.press("r")
            await pilot.pause()
            assert "not run: batch must be a whole number, got ''" in "\n".join(screen_lines(app))
            # the second press draws the same line: the message is what shows it was heard
            said = [n.message for n in list(app._notifications)[notes:]]
            assert said == ["not run: batch must be a whole number, got ''"], (press, said)
            assert press == 1 or screen_lines(app) != before
        assert not app.query_one("#sp-kv").running


async def test_the_mha_gqa_fields_show_every_digit_they_take_at_80x24():
    """An 8-digit batch read "…" in its 4-cell field at 160x48 (the long tier): each field takes six digits, the
    most any model here can use, and shows all of them with the row whole at 80 columns."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        await wait_ready(pilot)
        await view_mounted(pilot, "speed")
        await pilot.press("6", "k")
        field = app.query_one("#kv-batch", Input)
        await wait_for(pilot, lambda: field.region.area > 0)
        field.focus()
        field.value = ""
        await pilot.press(*"22421415")
        assert field.value == "224214"
        await pilot.press("escape")
        await pilot.pause()
        row = next(line for line in screen_lines(app) if "prompt" in line and "batch" in line)
        assert "batch 224214" in row and "Cancel x" in row, row


async def test_a_batch_past_free_memory_is_refused_in_one_line_and_the_app_lives(monkeypatch):
    """The long tier's crawl typed a 5-digit batch here and pressed r: the three models' caches grew the app past
    the machine's memory and the kernel ended it. The run is refused before a model is built."""
    import tui_lab.app.views.speed.gqa
    import tui_lab.devices

    def measured(*args):  # the run started: it would have grown past the memory, so it measures nothing here
        raise ValueError("the run started")

    monkeypatch.setattr(tui_lab.devices, "free_memory", lambda device: 1 << 30)
    monkeypatch.setattr(tui_lab.app.views.speed.gqa, "measure_kv", measured)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        await wait_ready(pilot)
        live = app.live.model
        await view_mounted(pilot, "speed")
        await pilot.press("6", "k")
        app.query_one("#kv-batch", Input).value = "99999"
        await pilot.press("r")
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert said and said[-1].startswith("not run: building 3 models for batch 99,999 x 128 tokens needs"), said
        assert "1.0 GiB is free on cpu; lower batch" in said[-1] and "\n" not in said[-1]
        assert "not run: building 3 models" in "\n".join(screen_lines(app))
        assert not app.query_one("#sp-kv").running and app.live.model is live

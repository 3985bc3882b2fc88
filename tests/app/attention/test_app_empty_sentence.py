"""A new live model with the sentence field emptied: the capture is refused, and the view says why where the grid's
keys were named, the grid's box says how to fill it, and z and # say what they set for the grid to come. (The long
tier's HF 80x24 walk: the field cleared, then a new model; an empty box under a hint line naming z, and z changed
nothing.)"""

from __future__ import annotations

from app_support import app_for, attention_grids, screen_lines, wait_for, wait_ready
from textual.widgets import Input


async def test_an_empty_sentence_says_why_the_box_is_empty_and_the_grid_keys_answer():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await attention_grids(pilot)
        app.query_one("#att-src", Input).value = ""
        app.keeper.rebuild(app.live.config)
        await wait_ready(pilot, generation=2)
        await wait_for(pilot, lambda: "sentence is empty" in "\n".join(screen_lines(app)))
        lines = screen_lines(app)
        shown = "\n".join(lines)
        assert "z dense" not in shown and "# values" not in shown, shown  # keys with no grid to act on: unnamed
        box = next(i for i, line in enumerate(lines) if "╭" in line)
        assert "no grids yet: a sentence above, then r" in lines[box + 1], shown
        grid = app.query_one("#att-map")
        grid.focus()
        for key, said in (("z", "z: dense"), ("number_sign", "#: numbers on")):
            count = len(app._notifications)
            await pilot.press(key)
            await wait_for(pilot, lambda count=count: len(app._notifications) > count)
            assert any(said in str(n.message) for n in app._notifications), key
        app.query_one("#att-src", Input).value = "the old king"
        await pilot.press("r")
        await wait_for(pilot, lambda: "no grids yet" not in "\n".join(screen_lines(app)) and grid.values, 30)
        assert grid.numbers  # what # set waited for the grid

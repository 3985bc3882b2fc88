"""Screenshot tests: export each stable view as SVG and check the text it must show.

`TUI_LAB_SCREENSHOTS=docs/screenshots pytest tests/test_app_screenshots.py` also writes the SVGs there.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

from test_app_support import app_for, wait_for, wait_ready
from textual.widgets import Input, Select


def svg_text(svg: str) -> str:
    """The visible text of a Textual SVG (spaces are written as &#160;)."""
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


# Resolved at import: a test may chdir into its tmp_path before it keeps a screenshot.
FOLDER = Path(os.environ["TUI_LAB_SCREENSHOTS"]).resolve() if os.environ.get("TUI_LAB_SCREENSHOTS") else None


def keep(app, name: str) -> str:
    svg = app.export_screenshot(title=f"tui-lab: {name}")
    if FOLDER is not None:
        FOLDER.mkdir(parents=True, exist_ok=True)
        (FOLDER / f"{name}.svg").write_text(svg)
    return svg_text(svg)


async def test_screenshots_of_architecture_attention_and_tour():
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(pilot)
        attention = app.view("attention")
        await wait_for(pilot, lambda: attention.grids)
        app.view("architecture").load_preset("transformer-2017-base")
        await pilot.pause()
        text = keep(app, "architecture")
        assert "63,082,496 parameters" in text and '"65M"' in text and "Apply" in text
        app.view("architecture").show_tab("arch-model")
        await pilot.pause()
        assert "(N, S, E) = (2, 16, 512)" in keep(app, "architecture-model")
        app.view("architecture").show_tab("arch-compare")
        await pilot.pause()
        text = keep(app, "architecture-compare")
        assert "124,439,808" in text and "63,082,496" in text and "norm_position" in text
        app.view("architecture").show_tab("arch-layer")
        await pilot.pause()
        assert "LN(x + f(x))" in keep(app, "architecture-layer")
        app.show_view("attention")
        app.query_one("#att-kind", Select).value = "cross"
        await pilot.pause()
        attention.point_at("zwei", "two")  # the trained toy's learned alignment: German swaps units and tens
        await pilot.pause()
        text = keep(app, "attention")
        assert "shipped toy" in text and "cross-attention (target x source)" in text and "'two'" in text
        app.query_one("#att-kind", Select).value = "mask-both"
        await pilot.pause()
        assert "causal AND padding" in keep(app, "attention-masks")
        await pilot.press("f3")
        tour = app.view("tour")
        await wait_for(pilot, lambda: tour.ready, timeout=120)  # the shipped toys' pictures, not the loading line
        for _ in range(4):  # step 5: cross-attention from the trained toy
            await pilot.press("n")
        await pilot.pause()
        text = keep(app, "tour")
        assert "Step 5 of 8" in text and "loading the shipped toys" not in text


async def test_screenshots_of_train_generate_and_speed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for()  # the default launch: the shipped English toy
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: bool(app.query("#view-speed")))
        app.show_view("generate")
        await pilot.pause()
        generate = app.view("generate")
        app.query_one("#gen-temperature", Input).value = "0"
        app.query_one("#gen-max_new_tokens", Input).value = "40"
        generate.action_generate()
        await wait_for(pilot, lambda: not generate.running, 60)
        await pilot.press("tab", "y")  # out of the prompt, then shade each token by its probability
        await pilot.pause()
        assert "In the morning, Anna walked to" in keep(app, "generate")
        app.show_view("speed")
        await pilot.pause()
        speed = app.view("speed")
        # Writing the README's picture: the demo model, long enough for the L*d growth to show (about a
        # minute on 2 cores). A plain test run: the live toy at short lengths, a check, not a benchmark.
        if speed.demo != (FOLDER is not None):
            await pilot.press("d")
        app.query_one("#sp-lengths", Input).value = "128, 256, 512" if FOLDER else "16, 32"
        # One timed run per length in a plain run: only the agreement ("identical") is checked; the README's
        # picture keeps 3 (its spread dots). Each repeat is both paths at every length (~4 s CPU).
        app.query_one("#sp-repeats", Input).value = "3" if FOLDER else "1"
        await pilot.press("r")
        await wait_for(pilot, lambda: not speed.running, 290 if FOLDER else 120)
        await pilot.pause()
        assert "identical" in keep(app, "speed")
        app.show_view("train")
        await pilot.pause()
        train = app.view("train")
        for name, value in {"steps": "60", "batch_size": "8", "seq_len": "64"}.items():
            app.query_one(f"#tf-{name}", Input).value = value
        train.action_start()
        # The README's picture: a curve worth looking at; a plain run: a few steps put tokens/s on screen.
        await wait_for(pilot, lambda: len(train.store.current.train_loss) >= (25 if FOLDER else 3), 240)
        train.action_pause()
        await pilot.pause(1.2)  # the plots redraw at 1 Hz
        await wait_for(pilot, lambda: not train.dirty, 60)  # a loaded machine's tick comes late
        await pilot.pause()
        assert "tokens/s" in keep(app, "train")

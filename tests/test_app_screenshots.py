"""Screenshot tests: export each stable view as SVG and check the text it must show.

`TUI_LAB_SCREENSHOTS=docs/screenshots pytest tests/test_app_screenshots.py` also writes the SVGs there.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

from test_app_support import app_for, wait_for, wait_ready
from textual.widgets import Select


def svg_text(svg: str) -> str:
    """The visible text of a Textual SVG (spaces are written as &#160;)."""
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


def keep(app, name: str) -> str:
    svg = app.export_screenshot(title=f"tui-lab: {name}")
    folder = os.environ.get("TUI_LAB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{name}.svg").write_text(svg)
    return svg_text(svg)


async def test_screenshots_of_architecture_attention_and_tour():
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(pilot)
        attention = app.view("attention")
        await wait_for(pilot, lambda: attention.grids)
        app.view("architecture").load_preset("transformer-2017-base")
        await pilot.pause()
        text = keep(app, "architecture")
        assert "63,082,496 parameters" in text and '"65M"' in text and "Apply" in text
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
        attention.point_at("gesehen", "seen")
        await pilot.pause()
        text = keep(app, "attention")
        assert "cross-attention (target x source)" in text and "'gesehen'  ->  key [2] 'seen'" in text
        app.query_one("#att-kind", Select).value = "mask-both"
        await pilot.pause()
        assert "causal AND padding" in keep(app, "attention-masks")
        await pilot.press("f3")
        tour = app.view("tour")
        await wait_for(pilot, lambda: tour.ready, timeout=120)  # the shipped toys' pictures, not the loading line
        await pilot.pause()
        text = keep(app, "tour")
        assert "Step 1 of 8" in text and "loading the shipped toys" not in text

"""The gradient panel's bars (tui_lab/app/views/train/grad_norms.py) keep every group on screen as the total's line
grows a row: the long tier's translator 160x48 walk (seed 463652001) saw "total 0.00873 (before clipping)" wrap in
a 30-cell box and the last group, decoder.1, go under the box's edge with no mark."""

from __future__ import annotations

from app_support import screen_lines
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from tui_lab.app.views.train.grad_norms import GradNorms

NORMS = {"embedding": 0.0076, "encoder.0": 0.0016, "encoder.1": 0.0015, "decoder.0": 0.00079, "decoder.1": 0.0035}


class Box(App):
    CSS = "VerticalScroll { width: 30; height: 12; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield GradNorms(id="grads")


async def test_every_group_stays_drawn_when_the_total_takes_a_second_row():
    app = Box()
    async with app.run_test(size=(40, 14)) as pilot:
        grads = app.query_one(GradNorms)
        grads.show(NORMS, total=0.0087)  # "total 0.0087 (before clipping)": 30 cells, one row
        await pilot.pause()
        assert screen_lines(app)[0].startswith("total 0.0087 (before clipping)")
        grads.show(NORMS, total=0.00873)  # 31 cells: two rows, the same five groups
        await pilot.pause()
        lines = [line[:30].rstrip() for line in screen_lines(app)]
        assert lines[:2] == ["total 0.00873 (before", "clipping)"]
        assert [line.split(" ")[0] for line in lines[2:7]] == list(NORMS)
        grads.show(NORMS, total=0.0087)  # back to one row: no blank row left under the groups' first
        await pilot.pause()
        lines = [line[:30].rstrip() for line in screen_lines(app)]
        assert [line.split(" ")[0] for line in lines[1:6]] == list(NORMS) and lines[6] == ""

"""The compare and side-by-side boxes show a random model's text whole, read off the rendered screen (issue 36's
crawler: Generate 'm' on the toy folded a sampled digit run against the border between two compare columns; its long
tier on a Hugging Face folder at 80x24 and 100x30 saw part of a long run with no space missing, no mark). Each box
keeps its last cell clear of the border (no digit touches it), a run with no space folds with a mark, and every
character of the text is on the screen, the box scrolled page by page."""

from __future__ import annotations

import random

import pytest
from app_support import app_for, screen_lines, view_mounted, wait_for, wait_ready
from model_texts import sampled
from screen_rules import FOLD, _plain, columns, cut_numbers, text_problems
from textual.app import App, ComposeResult

from tui_lab.app.views.generate import jobs
from tui_lab.app.views.generate.versus import SIDES, VersusPanel, VersusResult

SEEDS = range(4)


async def read_box(pilot, box, text_widget) -> tuple[str, list[str]]:
    """The box's text as drawn, scrolled a page at a time (its folds' marks taken out, its lines joined by
    spaces); and the rule findings on each page."""
    app, rows, found = pilot.app, {}, []
    y = 0
    while True:
        box.scroll_to(y=y, animate=False, immediate=True)
        await pilot.pause()
        lines = screen_lines(app)
        found += cut_numbers(lines[:-1], app.size[0]) + text_problems(app, lines)
        view, top = box.content_region, text_widget.region.y
        for row in range(view.y, view.bottom):
            rows[row - top] = columns(lines[row], text_widget.region.x, text_widget.region.right).strip(" ")
        if view.height <= 0 or y + view.height >= text_widget.region.height:
            break
        y += view.height
    read = "".join(line[:-1] if line.endswith(FOLD) else f"{line} " for _, line in sorted(rows.items()))
    return read, found


def same_text(read: str, widget) -> bool:
    return "".join(read.split()) == "".join(_plain(widget).split())


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_the_compare_boxes_show_sampled_text_and_numbers_whole(size):
    app = app_for()
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        view = await view_mounted(pilot, "generate")
        app.query_one("#gen-max_new_tokens").value = "4"
        view.home().focus()
        await pilot.press("m")
        await wait_for(pilot, lambda: not view.running and view.query_one("#gen-compare").display)
        panel = view.query_one("#gen-compare")
        for seed in SEEDS:
            rng = random.Random(seed)
            for mode in jobs.MODES:
                panel.show(jobs.CompareResult(1, mode, sampled(rng), 0.25, f"T 1, k 40, seed {rng.randint(0, 9999)}"))
            await pilot.pause()
            for mode in jobs.MODES:
                widget = view.query_one(f"#gen-mode-{mode}")
                read, found = await read_box(pilot, view.query_one(f"#gen-box-{mode}"), widget)
                assert not found, (seed, mode, found)
                assert same_text(read, widget), (seed, mode, read, _plain(widget))


class _Versus(App):
    CSS_PATH = "../../../tui_lab/app/tui_lab.tcss"

    def compose(self) -> ComposeResult:
        yield VersusPanel(id="gen-versus", classes="-shown")


@pytest.mark.parametrize("size", [(80, 14), (100, 20)])
async def test_the_side_by_side_boxes_show_sampled_text_and_numbers_whole(size):
    app = _Versus()
    async with app.run_test(size=size) as pilot:
        panel = app.query_one(VersusPanel)
        panel.waiting()
        for seed in SEEDS:
            rng = random.Random(50 + seed)
            for side in SIDES:
                panel.show(VersusResult(1, side, f"{side}: at", sampled(rng), "1 decoder pass, 3.1 ms"))
            await pilot.pause()
            for side in SIDES:
                widget = app.query_one(f"#gen-vs-out-{side}")
                read, found = await read_box(pilot, app.query_one(f"#gen-vs-box-{side}"), widget)
                assert not found, (seed, side, found)
                assert same_text(read, widget), (seed, side, read, _plain(widget))


@pytest.mark.parametrize(("seed", "size"), [(3, (80, 24)), (11, (100, 30))])
async def test_a_hugging_face_folders_compare_boxes_show_all_it_wrote(tmp_path, seed, size):
    """A random GPT-2 saved with transformers (its shape drawn from the seed) writes byte-level runs with no space:
    each box shows every character of it, folded with marks, the box scrolled page by page."""
    from hf_fixtures import save_hf_gpt2

    rng = random.Random(seed)
    heads = rng.choice([1, 2, 4])
    save_hf_gpt2(tmp_path / "hf-gpt2", seed=seed, n_layer=rng.randint(1, 3), n_head=heads,
                 n_embd=heads * rng.choice([8, 16]), n_positions=rng.choice([64, 128]))
    app = app_for("--from-hf", str(tmp_path / "hf-gpt2"))
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        view = await view_mounted(pilot, "generate")
        for _ in range(2):  # two presses: top-k and top-p draw new seeds each time
            view.home().focus()
            await pilot.press("m")
            await pilot.pause(0.2)
            await wait_for(pilot, lambda: not view.running and view.query_one("#gen-compare").display)
            await pilot.pause(0.2)
            for mode in jobs.MODES:
                widget = view.query_one(f"#gen-mode-{mode}")
                read, found = await read_box(pilot, view.query_one(f"#gen-box-{mode}"), widget)
                assert not found, (mode, found)
                assert same_text(read, widget), (mode, read, _plain(widget))

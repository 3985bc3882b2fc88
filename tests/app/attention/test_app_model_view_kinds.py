"""The model view (m) draws every layer x head of an attention kind, never a mask: over it k goes round the
attention kinds only, and is dimmed on a model with one (the long tier's HF 80x24 walk at 6f61974, seed
1011294425: k over the model view of a decoder-only model was named and changed nothing; on the shipped toy it
picked a mask and left an empty box under "arrows or mouse: a tile"). A mask picked with the mouse there opens its
grid in the model view's place."""

from __future__ import annotations

from app_support import app_for, attention_grids, screen_lines, wait_for
from footer_support import enabled, footer_says

from tui_lab.app.views.attention.draw import AttentionMap
from tui_lab.app.views.attention.grids import ATTENTION_KINDS
from tui_lab.app.views.attention.small_multiples import SmallMultiples


def box_rows(app) -> list[str]:
    """The rows inside the framed pane the grid or the gallery is drawn in."""
    lines = screen_lines(app)
    top = next(i for i, line in enumerate(lines) if line.lstrip().startswith("╭"))
    bottom = next(i for i in range(top + 1, len(lines)) if lines[i].lstrip().startswith("╰"))
    return [line.strip().strip("│").strip() for line in lines[top + 1:bottom]]


async def open_model_view(pilot):
    view = await attention_grids(pilot)
    await pilot.press("m")
    gallery = view.query_one(SmallMultiples)
    await wait_for(pilot, lambda: gallery.display and any(box_rows(pilot.app)), 30)
    return view, gallery


async def test_k_over_the_model_view_of_a_decoder_only_model_is_dimmed_and_keeps_its_tiles():
    app = app_for()  # the shipped English toy: decoder self-attention is its one attention kind
    async with app.run_test(size=(80, 24)) as pilot:
        view, gallery = await open_model_view(pilot)
        await footer_says(pilot, "grid", False)
        assert enabled(app, "k") is False
        before = view.choice()
        await pilot.press("k")
        await pilot.pause(0.3)
        assert view.choice() == before and gallery.display
        assert any(row.startswith("L0") for row in box_rows(app))
        await pilot.press("m")  # back at the grid k goes round every kind, the masks too
        await wait_for(pilot, lambda: not gallery.display, 10)
        await footer_says(pilot, "grid", True)
        await pilot.press("k")
        await wait_for(pilot, lambda: view.choice()[0] != before[0], 10)


async def test_k_over_the_model_view_of_a_translator_goes_round_its_attention_kinds():
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=(100, 30)) as pilot:
        view, gallery = await open_model_view(pilot)
        await footer_says(pilot, "grid", True)
        seen = [view.choice()[0]]
        for _ in range(3):
            await pilot.press("k")
            await wait_for(pilot, lambda: view.choice()[0] != seen[-1], 10)
            seen.append(view.choice()[0])
            await wait_for(pilot, lambda: any(row.startswith("L0") for row in box_rows(app)), 10)
            assert gallery.display
        assert set(seen) == {"encoder-self", "decoder-self", "cross"} and seen[0] == seen[-1]


async def test_a_mask_picked_over_the_model_view_opens_its_grid_in_its_place():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        view, gallery = await open_model_view(pilot)
        view.pickers.select_kind("mask-causal")  # as a click on the kind picker's menu does
        await wait_for(pilot, lambda: not gallery.display and view.query_one(AttentionMap).display, 10)
        assert view.choice()[0] not in ATTENTION_KINDS
        await footer_says(pilot, "grid", True)

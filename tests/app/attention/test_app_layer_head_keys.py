"""l and h are dimmed on the footer while the grid is a mask (it has no layer or head) and act on an attention
grid (issue 36's crawler: they were named and changed nothing)."""

from __future__ import annotations

from app_support import app_for, attention_grids, screen_text, wait_for
from footer_support import enabled, footer_says

from tui_lab.app.views.attention.grids import ATTENTION_KINDS, MASKS
from tui_lab.app.views.attention.small_multiples import SmallMultiples


async def test_layer_and_head_keys_dim_on_a_mask():
    app = app_for()  # the shipped English toy: 4 layers, 4 heads
    async with app.run_test(size=(80, 24)) as pilot:
        view = await attention_grids(pilot)
        await footer_says(pilot, "layer", True)
        await footer_says(pilot, "head", True)
        layer = view.choice()[1]
        await pilot.press("l")
        await wait_for(pilot, lambda: view.choice()[1] != layer, 10)
        while view.choice()[0] not in MASKS:
            await pilot.press("k")
            await pilot.pause()
        await footer_says(pilot, "layer", False)
        await footer_says(pilot, "head", False)
        assert enabled(app, "l") is False and enabled(app, "h") is False
        while view.choice()[0] not in ATTENTION_KINDS:  # k goes round to the attention grids again
            await pilot.press("k")
            await pilot.pause()
        await footer_says(pilot, "layer", True)
        head = view.choice()[2]
        await pilot.press("h")
        await wait_for(pilot, lambda: view.choice()[2] != head, 10)


async def test_the_model_views_cursor_follows_l_and_h():
    """With the model view (m) shown, l and h pick another layer and head: its cursor tile (the one Enter opens,
    named on its legend line) moves with them; it stayed on the tile it had."""
    app = app_for()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await attention_grids(pilot)
        await pilot.press("m")
        gallery = view.query_one(SmallMultiples)
        await wait_for(pilot, lambda: gallery.display)
        for key in "lhhlh":
            before = view.choice()
            await pilot.press(key)
            await wait_for(pilot, lambda before=before: view.choice() != before, 10)
            _, layer, head = view.choice()
            head = head if head >= 0 else gallery.cursor[1]  # the mean of the heads: the layer, on the same head
            await wait_for(pilot, lambda layer=layer, head=head: f"L{layer} H{head} " in screen_text(app), 10)
            assert gallery.layer_ids[gallery.cursor[0]] == layer and gallery.cursor[1] == head
        await pilot.press("enter")  # Enter opens the tile the cursor is on: the picked head
        await wait_for(pilot, lambda: not gallery.display, 10)
        assert view.choice()[1:] == (layer, head)

"""A ViT's image and its class token's attention: the caption (which image, which grid) is on screen at 80x24 as
well as at a large size. Under the image it was the line a short terminal cut off, with no mark (the long tier's
English 80x24 walk, a ViT built from the vit-base-16 preset)."""

from __future__ import annotations

import pytest
from app_support import app_for, open_view, screen_text, wait_for

from tui_lab.app.views.attention.patch_image import PatchImage


@pytest.mark.parametrize("preset", ["vit-toy", "vit-base-16"])  # 16 and 32 pixels a side: 8 and 16 rows
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_image_caption_is_shown_whatever_the_height(size, preset):
    app = app_for("--preset", preset)
    async with app.run_test(size=size) as pilot:
        await open_view(pilot, "attention", "2")
        image = app.query_one(PatchImage)
        await wait_for(pilot, lambda: image.display and "image " in str(image.render()), 60)
        await pilot.pause()
        caption = next(line for line in str(image.render()).splitlines() if line.startswith("image "))
        assert "[CLS] attention, layer" in caption, caption
        text = " ".join(screen_text(app).split())
        assert " ".join(caption.split()) in text, screen_text(app)

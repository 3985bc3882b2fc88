"""The every-head view's tiles read from the rendered screen at 80x24 when the layers and heads outnumber the
rows and columns: both scrollbars show, and nothing of the tiles is drawn under them (the last head's tile
and caption sit left of the vertical bar, the last layer's caption above the horizontal one)."""

from __future__ import annotations

from app_support import screen_lines
from textual.app import App, ComposeResult

from tui_lab.app.views.attention.small_multiples import SmallMultiples

LAYERS, HEADS = 30, 20


def tiles() -> list[list[tuple[list[list[float]], float]]]:
    """Each head's grid a distinct diagonal; entropy = layer + head / 100, so each caption names its tile."""
    grid = [[1.0 if r == c else 0.0 for c in range(6)] for r in range(6)]
    return [[(grid, layer + head / 100) for head in range(HEADS)] for layer in range(LAYERS)]


class Tiles(App):
    def compose(self) -> ComposeResult:
        yield SmallMultiples()

    def on_mount(self) -> None:
        self.query_one(SmallMultiples).set_tiles(tiles(), list(range(LAYERS)))


async def test_nothing_of_the_tiles_is_drawn_under_the_scrollbars():
    app = Tiles()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(SmallMultiples)
        await pilot.pause()
        for _ in range(HEADS):
            await pilot.press("right")
        for _ in range(LAYERS):
            await pilot.press("down")
        await pilot.pause()
        assert view.show_vertical_scrollbar and view.show_horizontal_scrollbar
        assert view.cursor == (LAYERS - 1, HEADS - 1)
        lines = screen_lines(app)
        bar_w = view.styles.scrollbar_size_vertical
        bar_h = view.styles.scrollbar_size_horizontal
    text = "\n".join(lines)
    inside = [line[:80 - bar_w] for line in lines[:24 - bar_h]]
    heads = inside[1]  # under the key: the heads' labels, then a line per layer
    assert f"H{HEADS - 1} " in heads, "the last head's label is under the vertical scrollbar:\n" + text
    x = heads.index(f"H{HEADS - 1}")  # the last head's label: its tile starts under it
    assert f"H{HEADS - 1}".ljust(view.tile_w) == heads[x:x + view.tile_w], text
    last = next((line for line in inside[2:] if line.startswith(f"L{LAYERS - 1} ")), None)
    assert last is not None, "the last layer is under the horizontal scrollbar:\n" + text
    assert last[x:x + view.tile_w].strip() and len(last[x:x + view.tile_w]) == view.tile_w, text


class Deep(App):
    """A model with layers past 99, shown from layer 420 (the long tier's HF 100x30 walk, seed 129661246, edited
    hf-gpt2 to hundreds of layers: "L423" ran into its tiles, "L423▀▀▀▀")."""

    def compose(self) -> ComposeResult:
        yield SmallMultiples()

    def on_mount(self) -> None:
        grid = [[1.0 if r == c else 0.0 for c in range(6)] for r in range(6)]
        self.query_one(SmallMultiples).set_tiles([[(grid, 0.5)] * 2 for _ in range(12)], list(range(420, 432)))


async def test_a_layer_name_past_99_keeps_a_space_before_its_tiles():
    from screen_rules import cut_numbers

    app = Deep()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
    named = [line for line in lines if line.startswith("L42")]
    assert named and all(line[:5] in {f"L{n} " for n in range(420, 432)} for line in named), "\n".join(lines)
    assert not cut_numbers(lines, 100), cut_numbers(lines, 100)

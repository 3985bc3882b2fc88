"""Architecture > Model: the whole-model diagram with a shape on every arrow, read from the rendered screen at
80x24 and 160x48, following the form; and the form's selects whole at 80x24."""

from __future__ import annotations

import re

import pytest
from app_support import app_for, screen_lines, screen_text
from textual.widgets import Input

from tui_lab.analysis import shape_trace
from tui_lab.app.views.architecture.model_diagram import ModelDiagram, model_diagram, shape_text
from tui_lab.presets import load_preset

# The presets' sizes, written out here rather than read from the code under test: gpt2-toy has d_model 128,
# 4 heads, d_ff 512, vocab 256; transformer-2017-toy d_model 128, 4 heads, d_ff 512, vocab 64.
GPT2_TOY = ["(N, L) = (2, 16)", "(N, L, E) = (2, 16, 128)", "(N,H,L,L) = (2,4,16,16)", "(N,L,F) = (2,16,512)",
            "(N, L, V) = (2, 16, 256)"]
TOY_2017 = ["(N, S) = (2, 12)", "(N, S, E) = (2, 12, 128)", "(N,H,S,S) = (2,4,12,12)", "(N, T) = (2, 16)",
            "(N, T, E) = (2, 16, 128)", "(N,H,T,T) = (2,4,16,16)", "(N,H,T,S) = (2,4,16,12)",
            "(N, T, V) = (2, 16, 64)"]


def test_shape_text_refuses_a_shape_of_another_rank():
    assert shape_text("NLE", (2, 16, 128)) == "(N, L, E) = (2, 16, 128)"
    with pytest.raises(ValueError, match="does not match"):
        shape_text("NL", (2, 16, 128))


@pytest.mark.parametrize("preset,shapes", [("gpt2-toy", GPT2_TOY), ("transformer-2017-toy", TOY_2017)])
@pytest.mark.parametrize("width", [40, 120])
def test_every_arrow_carries_its_shape(preset, shapes, width):
    text = "\n".join(model_diagram(load_preset(preset), 2, 16, 12, width))
    for shape in shapes:
        assert shape in text, shape
    if preset == "transformer-2017-toy":
        # the memory line runs into the cross-attention line: sideways when wide, down a rail when narrow
        cross = next(line for line in text.splitlines() if "cross-attention(" in line)
        assert re.search(r"═►│ LN\(x \+ cross-attention|│◄═*╝$", cross), cross


def test_the_diagram_follows_the_trace_for_every_family_and_axis():
    """Each arrow's numbers are the trace's: the embedding output, the last block's output, the logits."""
    for name, overrides in [("gpt2-small", {}), ("transformer-2017-base", {}), ("gpt2-toy", {"positions": "rope"}),
                            ("transformer-2017-toy", {"family": "encoder-only", "decoder_layers": 0,
                                                      "norm_position": "pre", "final_norm": True})]:
        config = load_preset(name, **overrides)
        rows = shape_trace(config, 3, 20, 7)
        text = "\n".join(model_diagram(config, 3, 20, 7, 40))
        for row in (rows[0], rows[-1]):
            assert " = (" + ", ".join(map(str, row.output_shape)) + ")" in text, (name, row.path)


def _model_tab(app, batch: str = "2", length: str = "16", source: str = "12") -> None:
    view = app.view("architecture")
    for sid, value in (("shape-batch", batch), ("shape-seq", length), ("shape-src", source)):
        app.query_one(f"#{sid}", Input).value = value
    view.show_tab("arch-model")


def _scrolled_text(app, pilot):
    """The diagram's whole text as the screen shows it, scrolling it down a page at a time."""
    async def read() -> str:
        box = app.query_one(ModelDiagram)
        seen = []
        box.scroll_home(animate=False)
        await pilot.pause()
        while True:
            seen.append(screen_text(app))
            if box.scroll_y >= box.max_scroll_y:
                return "\n".join(seen)
            box.scroll_relative(y=box.size.height - 1, animate=False)
            await pilot.pause()
    return read()


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
@pytest.mark.parametrize("preset,shapes", [("gpt2-toy", GPT2_TOY), ("transformer-2017-toy", TOY_2017)])
async def test_the_screen_shows_every_shape_whole(size, preset, shapes):
    app = app_for("--preset", preset, build=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        _model_tab(app)
        await pilot.pause()
        await pilot.pause()
        box = app.query_one(ModelDiagram)
        assert box.max_scroll_x == 0  # no line wider than the panel: nothing needs a sideways scroll
        text = await _scrolled_text(app, pilot)
        for shape in shapes:
            assert shape in text, (size, shape)
        if size == (160, 48):
            assert box.max_scroll_y == 0  # the whole model on one screen
            if preset == "transformer-2017-toy":  # side by side: the memory runs straight into cross-attention
                row = next(line for line in screen_lines(app) if "memory" in line)
                assert "═►│ LN(x + cross-attention(x, memory))" in row
            else:  # the block opened beside the stack
                assert "┈►" in screen_text(app) and "masked self-attn" in screen_text(app)


async def test_a_form_edit_redraws_the_shapes():
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        _model_tab(app)
        app.query_one("#f-d_model", Input).value = "64"
        await pilot.pause()
        await pilot.pause()
        assert "(N, L, E) = (2, 16, 64)" in screen_text(app)
        app.query_one("#f-d_model", Input).focus()
        await pilot.press("end", "backspace", "backspace", "9", "6")  # typed, as a person would
        await pilot.pause()
        text = screen_text(app)
        assert "(N, L, E) = (2, 16, 96)" in text and "(2, 16, 64)" not in text
        app.query_one("#shape-seq", Input).value = "33"
        await pilot.pause()
        assert "(N, L, E) = (2, 33, 96)" in screen_text(app)
        app.query_one("#shape-seq", Input).value = "x"  # a bad length: one line naming it, the diagram stays
        await pilot.pause()
        assert "length L must be a positive integer" in screen_text(app) and "(2, 33, 96)" in screen_text(app)


async def test_the_family_and_every_select_are_whole_at_80x24():
    app = app_for("--preset", "transformer-2017-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        form = app.query_one("#arch-form")
        width = form.region.right
        lines = screen_lines(app)
        family = next(line for line in lines if line.split()[:1] == ["family"])
        assert "encoder-decoder ▼" in family[:width]
        for name in ("embedding_scale", "positions"):
            row = next(line for line in lines if line.split()[:1] == [name])
            value = str(app.query_one(f"#f-{name}").value)
            assert f"{value} " in row[:width] and "▼" in row[:width], name


async def test_an_encoder_reads_the_length_typed_and_grouped_query_heads_draw():
    """The long tier's translator 100x30 walk (seed 22111683): kv_heads typed on the form, then the Model tab,
    and the app died (the diagram read grouped-query attention's note as the scores' shape). And an encoder-only
    model drew the hidden source field's length, not the length L typed above the tabs."""
    app = app_for("--preset", "bert-toy", build=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        _model_tab(app, length="20", source="12")  # the source field is hidden for one stack
        await pilot.pause()
        await pilot.pause()
        text = await _scrolled_text(app, pilot)
        assert "L length 20" in text and "(N, L, E) = (2, 20, 128)" in text and "(2, 12" not in text
        app.query_one("#f-kv_heads", Input).value = "2"
        await pilot.pause()
        await pilot.pause()
        text = await _scrolled_text(app, pilot)
        assert app.is_running and "K kv heads 2" in text and "(N,H,L,L) = (2,4,20,20)" in text

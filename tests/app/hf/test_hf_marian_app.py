"""The Attention view on a Marian folder: type English, see cross-attention over the model's own translation.

The folder is test_hf_marian's trained one (a tiny opus-mt laid out as on the hub). Every label expected on
screen comes from transformers (MarianTokenizer's pieces of the typed sentence, MarianMTModel's greedy
translation), and is found on the RENDERED screen (the SVG export), not in the widget's fields.
"""

from __future__ import annotations

import pytest
from app_support import app_for, wait_for, wait_ready
from marian_fixtures import trained_marian
from screen_reader import find_columns, find_rows, read_svg
from textual.widgets import Input, Select

transformers = pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

TYPED = "we have seen the house"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return trained_marian(tmp_path_factory)


def expected(folder) -> tuple[list[str], list[str], str]:
    """(the source's pieces, the pieces of the greedy translation ending in </s>, its text), by transformers."""
    tokenizer = transformers.MarianTokenizer.from_pretrained(str(folder))
    model = transformers.MarianMTModel.from_pretrained(str(folder)).eval()
    src = tokenizer(TYPED, return_tensors="pt").input_ids
    out = model.generate(src, max_new_tokens=30, do_sample=False, num_beams=1, forced_eos_token_id=None)
    written = out[0, 1:].tolist()
    return (
        tokenizer.convert_ids_to_tokens(src[0].tolist()),
        tokenizer.convert_ids_to_tokens(written),
        tokenizer.decode(written, skip_special_tokens=True, use_source_tokenizer=False),
    )


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_typed_sentence_labels_columns_and_its_translation_labels_rows(folder, size):
    columns, rows, text = expected(folder)
    assert rows[-1] == "</s>" and text == "wir haben das Haus gesehen"  # the fixture really translates
    app = app_for("--from-hf", str(folder))
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        app.show_view("attention")
        view = app.view("attention")
        await wait_for(pilot, lambda: view.captured_generation >= 1)
        assert view.query_one("#att-tgt", Input).value == ""  # a translation model: its target is its own
        source = view.query_one("#att-src", Input)
        source.value = ""
        source.focus()
        await pilot.press(*TYPED, "enter")
        await wait_for(pilot, lambda: len(view.src) == len(columns) and view.tgt)
        await pilot.pause()
        assert view.query_one("#att-kind", Select).value == "cross"  # a translation opens on cross-attention
        shot = read_svg(app.export_screenshot(), *size)
        cols = find_columns(shot, columns)
        assert cols is not None, "the typed sentence's pieces do not label the columns\n" + shot.text()
        ys = find_rows(shot, rows, cols.x0, cols.y + 1)
        shown = [y for y in ys if y >= 0]
        assert len(shown) >= min(len(rows), 6) and shown == sorted(shown), shot.text()
        if size[1] >= 40:  # the whole translation fits: every row, </s> last
            assert -1 not in ys, shot.text()
        said = " ".join(shot.text().split())  # the note may wrap
        assert "decoder input = the model's own greedy translation" in said and text in said, shot.text()
        assert "cross-attention (target x source)" in said

"""The Generate view with a Marian translator live: type English, watch the German stream with its cross-attention.

The folder is test_hf_marian's trained one saved with opus-mt's `bad_words_ids: [[pad]]` and +50 on pad's
final_logits_bias (test_hf_marian_bans), so a view that ignored the folder's ban would stream nothing but pad.
What is checked is read from the RENDERED screen (the SVG export) at 80x24: the labels that say it translates,
the streamed translation (equal to `tui-lab generate --from-hf` for the typed sentence), and the grid's
columns (the sentence's pieces, by transformers' MarianTokenizer) and rows (the translation's pieces).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from app_support import app_for, wait_for, wait_ready
from marian_fixtures import GERMAN, banned_marian
from screen_reader import Screen, find_columns, find_rows, read_svg
from textual.widgets import Input

from tui_lab.app.examples import SOURCE_TEXT, numbers_pair
from tui_lab.app.views.generate.live import DEFAULT_PROMPT
from tui_lab.app.views.generate.stream import ARROW
from tui_lab.app.views.generate.token_stream import TokenStream
from tui_lab.app.widgets.heatmap import Heatmap

transformers = pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

TYPED = "we have seen the house"
SIZE = (80, 24)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return banned_marian(tmp_path_factory, "marian-pad-heavy", [[77]], pad_bias=50.0)


def cli_translation(folder, text: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "tui_lab.cli", "generate", "--from-hf", str(folder), "--prompt", text,
         "--temperature", "0", "--json"],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def shot(app) -> Screen:
    return read_svg(app.export_screenshot(), *app.size)


def streamed(screen: Screen, source: str) -> str:
    """The completion box's text after the line `source →`, up to its summary line, lines joined by a space."""
    head = f"{source} {ARROW}"
    y = next((y for y in range(screen.height) if f"│{head}" in screen.line(y)), None)
    assert y is not None, "the typed source is not on screen:\n" + screen.text()
    left = screen.line(y).index(f"│{head}") + 1
    right = screen.line(y).index("│", left)
    lines = []
    for yy in range(y + 1, screen.height):
        inside = screen.line(yy)[left:right].strip()
        if " tokens in " in inside:
            return " ".join(lines)
        lines.append(inside)
    raise AssertionError("no summary line under the translation:\n" + screen.text())


async def translate(pilot, text: str, max_new: str = "48") -> None:
    """Type `text` into the prompt (greedy, at most `max_new` tokens), press enter, wait for the stream's end."""
    app = pilot.app
    view = app.view("generate")
    app.query_one("#gen-temperature", Input).value = "0"
    app.query_one("#gen-max_new_tokens", Input).value = max_new
    prompt = app.query_one("#gen-prompt", Input)
    prompt.value = ""
    prompt.focus()
    await pilot.press(*text, "enter")
    await wait_for(pilot, lambda: not view.running and bool(app.query_one("#gen-out", TokenStream).note), timeout=60)
    await pilot.pause()


async def test_typed_english_streams_the_cli_translation_with_its_cross_attention_at_80x24(folder):
    expected = cli_translation(folder, TYPED)
    assert expected["completion"] == GERMAN[1]  # the fixture really translates, the ban applied
    tokenizer = transformers.MarianTokenizer.from_pretrained(str(folder))
    columns = tokenizer.convert_ids_to_tokens(tokenizer(TYPED).input_ids)
    rows = tokenizer.convert_ids_to_tokens(expected["ids"])
    app = app_for("--from-hf", str(folder))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        view = app.view("generate")
        assert app.query_one("#gen-prompt", Input).value == SOURCE_TEXT  # seed 000's 'seen' sentence
        said = " ".join(shot(app).text().split())
        assert "source" in said.split(" Translate g")[0] and "Translate g" in said
        assert "translates: type the source sentence, its translation streams token by token" in said
        assert "never writes <pad>" in said  # the folder's generation_config.json ban, named
        assert "Side by side" not in said  # AT vs NAT is for the lab's own models

        await translate(pilot, TYPED, max_new="3")  # the grid grows a row per token: three so far
        assert len(app.query_one("#gen-att", Heatmap).values) == 3 == len(app.query_one("#gen-out", TokenStream).tokens)

        await translate(pilot, TYPED)
        screen = shot(app)
        assert streamed(screen, TYPED) == expected["completion"], screen.text()
        assert [t.id for t in app.query_one("#gen-out", TokenStream).tokens] == expected["ids"]
        assert len(app.query_one("#gen-att", Heatmap).values) == len(rows)  # a row per token, </s> included
        said = " ".join(screen.text().split())
        assert "cross-attention: target x source" in said
        cols = find_columns(screen, columns)
        assert cols is not None, "the typed sentence's pieces do not label the columns\n" + screen.text()
        ys = find_rows(screen, rows, cols.x0, cols.y + 1)
        shown = [y for y in ys if y >= 0]
        assert len(shown) >= min(len(rows), 6) and shown == sorted(shown), screen.text()
        assert view.translating and app.query_one("#gen-att-box").cross


async def test_the_shipped_numbers_toy_translates_its_number_and_a_random_toy_continues_as_before():
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        english = numbers_pair()[0]
        assert app.query_one("#gen-prompt", Input).value == english  # the words it knows, not a story opening
        await translate(pilot, english)
        screen = shot(app)
        assert streamed(screen, english) == numbers_pair()[1], screen.text()
        assert "Side by side v" in screen.text()  # its AT vs NAT comparison stays
    app = app_for("--preset", "transformer-2017-toy")  # random weights, no tokenizer: nothing to translate
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.show_view("generate")
        await pilot.pause()
        assert app.query_one("#gen-prompt", Input).value == DEFAULT_PROMPT
        said = shot(app).text()
        assert "Generate g" in said and "translates:" not in said and "Side by side v" in said

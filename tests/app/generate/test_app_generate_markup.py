"""Generated text and typed prompts are drawn as text, never read as markup: a byte-level model writes a lone "[",
a backslash or "[/]", and the boxes that show it must draw it whole, not raise (which ended the app) or swallow the
settings line after it."""

from __future__ import annotations

import random

from app_support import screen_text
from textual.app import App, ComposeResult
from textual.content import Content

from tui_lab.app.views.generate import jobs
from tui_lab.app.views.generate.compare import ComparePanel
from tui_lab.app.views.generate.live import unknown_note
from tui_lab.app.views.generate.versus import VersusPanel, VersusResult

NASTY = ["\ufffdJJ\ufffd[\ufffd\ufffdp", "a[b", "[", "x\\", "[/]", "[PAD] [b]", "\\[dim]", "[1,2]"]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return NASTY + ["".join(rng.choice("[]\\/ab=#@$ ") for _ in range(rng.randint(1, 9))) for _ in range(count)]


class _Boxes(App):
    def compose(self) -> ComposeResult:
        yield ComparePanel()
        yield VersusPanel()


async def test_compare_and_side_by_side_draw_any_text_whole_with_its_settings_under_it():
    app = _Boxes()
    async with app.run_test(size=(160, 20)) as pilot:
        compare, versus = app.query_one(ComparePanel), app.query_one(VersusPanel)
        for text in _texts(seed=5, count=40):
            for mode in jobs.MODES:
                compare.show(jobs.CompareResult(1, mode, text, 0.25, "T 1, k 40, seed 3"))
            versus.show(VersusResult(1, "live", "live", text, "greedy"))
            await pilot.pause()
            assert compare.results[jobs.MODES[0]] == text
            box = app.query_one(f"#gen-mode-{jobs.MODES[0]}")
            drawn = box.render()
            assert str(drawn).startswith(f"{text}\nT 1, k 40, seed 3\n0.25 s"), (text, str(drawn))
            assert str(app.query_one("#gen-vs-out-live").render()) == f"{text}\ngreedy", text
        assert "0.25 s" in screen_text(app)  # the settings line is on the screen, not eaten by the text


def test_the_unknown_words_note_names_words_with_brackets_as_typed(monkeypatch):
    from tui_lab.app.views.generate import live as live_module

    monkeypatch.setattr(live_module, "unknown_words", lambda tokenizer, prompt: [w for w in prompt.split()
                                                                                 if "[" in w or "\\" in w])

    class Live:
        ready, tokenizer = True, object()  # the words it lacks: unknown_words, above

        class config:  # noqa: N801 - stands in for a ModelConfig
            copy = False

    note = unknown_note(Live(), "the [PAD] and x\\ words")
    assert isinstance(note, Content)
    assert note.plain == "; the prompt's [PAD] x\\ read <unk>: this tokenizer lacks them"

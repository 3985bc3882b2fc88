"""Every example prompt in README.md and in the mechanism commands' hints is whole words of the model it names
(issue 40 item 6): "The old king" read as 'The ␣old ␣k ing' in the English toy, so its lens showed a word the model
never saw. And the app's default patching pair differs mid-sentence, not only in the last token (whose grid is
1.0 in the last column at every layer and shows nothing)."""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path

import pytest

from tui_lab.cli import ablate, attribute, lens, patch
from tui_lab.loading import load_model

README = Path(__file__).resolve().parents[2] / "README.md"
TEXT_FLAGS = ("--prompt", "--corrupt", "--text", "--answer", "--wrong")
MECHANISM = ("lens", "ablate", "patch", "attribute", "heads")


def commands(markdown: str) -> list[str]:
    """Each `tui-lab ...` line of the fenced code blocks, continuation lines (a trailing backslash) joined."""
    lines, out, inside = markdown.splitlines(), [], False
    for line in lines:
        if line.startswith("```"):
            inside = not inside
            continue
        if inside and (line.startswith("tui-lab ") or (out and out[-1].endswith("\\"))):
            if out and out[-1].endswith("\\"):
                out[-1] = out[-1][:-1] + " " + line.strip()
            else:
                out.append(line)
    return out


def examples(command: str) -> tuple[list[str], list[str]]:
    """(the model flags, the text flags' values) of one command line, its trailing comment left out."""
    words = shlex.split(command, comments=True)
    model = [w for i, w in enumerate(words) if words[i - 1] in ("--preset", "--checkpoint", "--from-hf")]
    model_flags = [words[i - 1] for i, w in enumerate(words) if w in model and i > 0]
    texts = [w for i, w in enumerate(words) if i > 0 and words[i - 1] in TEXT_FLAGS]
    return [f"{f} {m}" for f, m in zip(model_flags, model, strict=True)], texts


def whole_words(codec, text: str) -> bool:
    """Each token is one word (with its leading space) or one punctuation mark, in order."""
    pieces = re.findall(r" ?\w+| ?[^\w\s]", text)
    return [codec.decode([i]) for i in codec.encode(text)] == pieces


@functools.cache
def codec_of(preset: str):
    return load_model("preset", preset).codec


def _cases() -> list[tuple[str, str, str]]:
    """(where, preset, text) of every example that names a preset; the README and each command's hint."""
    hints = [("hint " + m.__name__, m.EXAMPLE) for m in (lens, ablate, patch, attribute)]
    found = [("README", c) for c in commands(README.read_text(encoding="utf-8"))] + hints
    cases = []
    for where, command in found:
        models, texts = examples(command)
        for model in models:
            if model.startswith("--preset "):
                cases += [(where, model.split()[1], text) for text in texts]
    return cases


def test_the_examples_are_found():
    cases = _cases()
    assert len(cases) >= 15 and {where for where, _, _ in cases} >= {"README", "hint tui_lab.cli.patch"}


@pytest.mark.parametrize("where, preset, text", _cases())
def test_every_example_prompt_is_whole_words_of_the_model_it_names(where, preset, text):
    codec = codec_of(preset)
    shown = " ".join(codec.decode([i]) for i in codec.encode(text))
    assert whole_words(codec, text), f"{where}: {text!r} is {shown!r} in {preset}"


def test_every_mechanism_example_in_the_readme_names_a_model_the_test_can_read():
    """A mechanism example on a model this test cannot open (a download, a run still to train) would go
    unchecked: each names a preset."""
    for command in commands(README.read_text(encoding="utf-8")):
        if command.split()[1] in MECHANISM and examples(command)[1]:
            models, _ = examples(command)
            assert models and all(m.startswith("--preset ") for m in models), command


def test_the_apps_default_patching_pair_differs_mid_sentence():
    pytest.importorskip("textual")
    from tui_lab.app.views.generate.patch_panel import DEFAULT_CLEAN, DEFAULT_CORRUPT
    from tui_lab.mechanism.readouts import patching_of

    loaded = load_model("preset", "gpt2-toy-english")
    clean, corrupt = (loaded.codec.encode(t) for t in (DEFAULT_CLEAN, DEFAULT_CORRUPT))
    assert whole_words(loaded.codec, DEFAULT_CLEAN) and whole_words(loaded.codec, DEFAULT_CORRUPT)
    differ = [t for t, (a, b) in enumerate(zip(clean, corrupt, strict=True)) if a != b]
    assert differ and differ[-1] < len(clean) - 1  # not the last token
    table = patching_of(loaded.model, loaded.codec, clean, corrupt).table
    assert table.warning is None
    where = differ[-1]
    assert table.values[0][where] > 0.9 and abs(table.values[0][-1]) < 0.1  # layer 0: the place is where it was
    assert table.values[-1][-1] > 0.9 and abs(table.values[-1][where]) < 0.1  # the last layer: it has moved

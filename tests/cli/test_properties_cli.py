"""Property: `tui-lab info` with any flags exits 0 with the exact count, or 2 with one line on stderr.

Never a traceback: whatever a person types after the shortcuts or `--set` is either a config the lab
counts or one line naming what is wrong.
"""

from __future__ import annotations

import contextlib
import io
import json

from hypothesis import event, given, settings
from hypothesis import strategies as st

from tui_lab.analysis import count_params
from tui_lab.cli import main
from tui_lab.cli.config_args import SHORTCUT_FLAGS
from tui_lab.config import ModelConfig, field_names
from tui_lab.presets import list_presets, load_preset

# Text as a person might type it: numbers, words, signs, spaces, unicode, an `=` or a newline.
WORDS = st.one_of(st.integers(-5, 5000).map(str), st.sampled_from(["0", "-1", "1e3", "0.5", "true", "rope", "nan",
                                                                    "", " ", "--", "=", "64 ", "²"]),
                  st.text(max_size=8))
SHORTCUT = st.tuples(st.sampled_from(list(SHORTCUT_FLAGS.values())), WORDS).map(list)
SET = st.tuples(st.sampled_from(field_names() + ("layers", "nope")), WORDS).map(lambda p: ["--set", f"{p[0]}={p[1]}"])
OTHER = st.one_of(st.tuples(st.sampled_from(["--batch", "--seq-len", "--preset"]), WORDS).map(list),
                  st.sampled_from([["--set", "novalue"], ["--json"], ["--frobnicate"], ["--layers"]]))
FLAGS = st.lists(st.one_of(SHORTCUT, SHORTCUT, SET, SET, OTHER), max_size=4).map(lambda groups: sum(groups, []))


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's --help and friends
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=400, deadline=None)
@given(preset=st.sampled_from(list_presets()), flags=FLAGS)
def test_info_with_any_flags_counts_or_says_one_line(preset, flags):
    argv = ["info", "--preset", preset, *flags, "--json"]
    code, out, err = run_cli(argv)
    assert "Traceback" not in out + err
    if code == 2:
        assert err.startswith("tui-lab: error: ") and len(err.strip().splitlines()) == 1, err
        assert out == ""
        event("refused")
        return
    assert code == 0 and err == "", (code, err)
    event("accepted")
    data = json.loads(out)
    config = ModelConfig(**data["config"])  # the config the command reports, counted here independently
    assert data["total_params"] == count_params(config).total
    presets = [t for n, t in zip(argv, argv[1:], strict=False) if n == "--preset"]
    asked = load_preset(presets[-1])  # and it is the preset with what the flags asked for
    assert data["config"]["d_model"] == _last(flags, "--d-model", asked.d_model)


def _last(flags: list[str], flag: str, default: int) -> int:
    """The value the last `flag` (or `--set d_model=`) gave, as argparse and the overrides resolve it."""
    shortcut = [int(t) for n, t in zip(flags, flags[1:], strict=False) if n == flag]
    value = shortcut[-1] if shortcut else default
    for name, text in zip(flags, flags[1:], strict=False):
        if name == "--set" and text.startswith("d_model="):  # applied after the shortcuts
            value = int(text.split("=", 1)[1])
    return value

"""tui_lab/cli/layout.py: lines within the width, broken at spaces or right after a separator, never inside a
number or between a number and its unit; a streamed completion wrapped the same way."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from tui_lab.cli.layout import Flow, wrap

TEXT = ("memory (fp32): weights 474.7 MiB, training with AdamW 1.9 GiB, activations 148.1 MiB, KV cache 72.0 "
        "KiB/token; Touvron et al. 2023 (Llama 2); Hugging Face meta-llama/Llama-2-7b-hf/config.json, "
        "parameters: 124,439,808 lora_alpha=8")


@pytest.mark.parametrize("width", range(16, 121, 7))
def test_wrap_keeps_numbers_whole_and_breaks_after_separators(width):
    lines = wrap(TEXT, width, indent=2)
    assert all(len(line) <= width for line in lines), lines
    assert "".join(TEXT.split()) == "".join("".join(line.split()) for line in lines)  # nothing lost or moved
    for above, below in zip(lines, lines[1:], strict=False):
        assert not (re.search(r"\d[.,]?$", above) and re.match(r"\s*(\d|[KMG]i?B)", below)), (above, below)
        junction = f"{above.split()[-1]} {below.split()[0]}"
        assert junction in TEXT or above[-1] in "/_=:-.,", (above, below)  # at a space, or after a separator
    assert all(line.startswith("  ") for line in lines[1:])


def test_a_streamed_completion_wraps_at_its_spaces():
    out = io.StringIO()
    flow = Flow(Console(file=out, width=30, force_terminal=True, color_system=None))
    for token in ["Anna", " walked", " to", " the", " river.", " Tom", " walked", " to", " the", " hill", " above"]:
        flow.write(token)
    flow.flush()
    lines = out.getvalue().splitlines()
    assert [line.rstrip() for line in lines] == ["Anna walked to the river. Tom", "walked to the hill above"]

"""Defect 8 of issue 36: the Architecture summary at 80x24 with d_model 99996 showed `984,808,079,83` and `2
forward,` on the next line. The exact FLOPs count is whole or absent at every width of its panel."""

from __future__ import annotations

import io
import re

from rich.console import Console

from tui_lab.analysis import flops_per_token
from tui_lab.app.views.architecture.tables import summary_text
from tui_lab.presets import load_preset


def test_the_exact_flops_count_is_never_cut_across_lines():
    config = load_preset("gpt2-toy", d_model=99996, heads=4)
    exact = f"{flops_per_token(config, 128):,}"
    seen_whole = False
    for width in range(24, 90):
        console = Console(width=width, record=True, file=io.StringIO())
        console.print(summary_text(config, 1, 128))
        text = console.export_text()
        first = next(line for line in text.splitlines() if line.startswith("FLOPs / token"))
        groups = re.findall(r"\d{1,3}(?:,\d{3})+|\d{1,3}(?:,\d{1,3})+,?", text)
        assert all(g == exact for g in groups if len(g) > 7), (width, text)  # no fragment of the count
        seen_whole |= exact in first
    assert seen_whole  # a wide panel shows it

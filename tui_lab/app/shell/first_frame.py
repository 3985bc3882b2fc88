"""What the first frame shows while the views mount: the preset's exact parameter count, nothing heavier.

Measured in tmux at 80 x 24 (benchmarks/interface/launch_time.py): composing the Architecture view (~150 widgets:
the form's 9 selects and 11 inputs, the hidden inner tabs) before the first paint cost 3x the CPU of
a bare Textual app's whole start. So the first frame is the tab bar, this line and the footer; the
views mount right after it is on screen (`TuiLabApp.on_ready`), the worker that imports torch after them.
"""

from __future__ import annotations

from textual.widgets import Static

from tui_lab.analysis import count_params
from tui_lab.config import ModelConfig


def first_frame_text(config: ModelConfig) -> str:
    """The same words as the Architecture view's title line, so the count reads the same before and after.

    The family is left to the form's first field, which sits right beside it: with it the line wrapped at 80x24.
    """
    return f"[b]{count_params(config).total:,}[/b] parameters · {config.name}"


class FirstFrame(Static):
    """Stands in the first view's pane until that view has mounted (then it is removed)."""

    DEFAULT_CSS = "FirstFrame { height: auto; background: $boost; padding: 0 1; }"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(first_frame_text(config), id="first-frame")

"""The Attention view's parts never reach for the view: a part hears from it by a call and answers with a message
(issue 22; tests/project/test_no_mixins.py checks that no class in `tui_lab/app` is a mixin)."""

from __future__ import annotations

import ast
from pathlib import Path

import tui_lab

VIEWS = Path(tui_lab.__file__).resolve().parent / "app" / "views"


def test_the_attention_parts_never_reach_for_the_view() -> None:
    """Only view.py names the view or climbs to a parent: a part hears from the view by a call and answers
    with a message."""
    reaching, parts = [], sorted((VIEWS / "attention").glob("*.py"))
    assert len(parts) > 5
    for path in parts:
        if path.stem == "view":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("parent", "ancestors", "screen"):
                reaching.append(f"{path.name}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.Name) and node.id == "AttentionView":
                reaching.append(f"{path.name}:{node.lineno} AttentionView")
    assert reaching == []

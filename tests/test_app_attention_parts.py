"""The Attention view is composed, not mixed: its parts are widgets (or plain objects) it holds, never mixins.

Issue 22 wants no class in `tui_lab/app` with more than one base that is not a Textual class: a mixin reads
the view's private state, and a maintainer cannot see where a part ends. Views whose packages are done are
listed here; the others join as they are recomposed.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import tui_lab

VIEWS = Path(tui_lab.__file__).resolve().parent / "app" / "views"
COMPOSED = ("attention", "architecture")


def package_modules(view: str) -> list[str]:
    return [f"tui_lab.app.views.{view}.{path.stem}" for path in sorted((VIEWS / view).glob("*.py"))
            if path.stem != "__init__"]


def mixed_classes(module_name: str) -> list[str]:
    """Classes defined in the module with more than one base that is not Textual's (nor `object`)."""
    module = importlib.import_module(module_name)
    found = []
    for name, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ != module_name:
            continue
        ours = [b for b in cls.__bases__ if b is not object and b.__module__.split(".")[0] != "textual"]
        if len(ours) > 1:
            found.append(f"{module_name}.{name}({', '.join(b.__name__ for b in ours)})")
    return found


@pytest.mark.parametrize("view", COMPOSED)
def test_no_class_of_a_composed_view_is_a_mixin(view: str) -> None:
    assert "view" in [m.rsplit(".", 1)[1] for m in package_modules(view)]
    assert [c for m in package_modules(view) for c in mixed_classes(m)] == []


def test_the_finder_sees_a_mixin() -> None:
    """The check above can fail: a class with two of our own bases is reported."""
    module = importlib.import_module("tui_lab.app.views.attention.view")

    class Part:
        pass

    class Mixed(Part, module.AttentionView):
        pass

    Mixed.__module__ = module.__name__
    module.Mixed = Mixed
    try:
        assert f"{module.__name__}.Mixed(Part, AttentionView)" in mixed_classes(module.__name__)
    finally:
        del module.Mixed


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

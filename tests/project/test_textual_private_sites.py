"""Textual's private API is used in one module of the app (tui_lab/app/textual_private.py): anywhere else, a
private import, an override of a Textual private method or a read of its private state fails here, with where.
Read from the source (ast), so the check imports nothing."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "tui_lab" / "app"
HOME = APP / "textual_private.py"
# The private methods and state of Textual's classes the app touches (textual_private.py names why).
PRIVATE_METHODS = {"_handle_exception", "_on_exit_app", "_on_tab_pane_focused", "_sequence_to_key_events", "_display"}
PRIVATE_STATE = {"_screen_stack", "_running", "_stop_propagation", "_batch_count", "_driver", "_display", "_registry",
                 "_compositor"}


def private_uses(path: Path, root: Path = REPO) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(root).as_posix()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("textual") \
                and any(part.startswith("_") for part in node.module.split(".")):
            found.append(f"{where}:{node.lineno} imports {node.module}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in PRIVATE_METHODS:
            found.append(f"{where}:{node.lineno} overrides {node.name}")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_STATE:
            found.append(f"{where}:{node.lineno} reads {node.attr}")
    return found


def test_only_textual_private_py_uses_textual_private_names():
    found = [use for path in sorted(APP.rglob("*.py")) if path != HOME for use in private_uses(path)]
    assert found == [], "move these into tui_lab/app/textual_private.py"


def test_the_check_sees_each_kind(tmp_path):
    source = tmp_path / "probe.py"
    source.write_text("from textual.widgets._tabbed_content import ContentTab\n"
                      "class A:\n    def _on_exit_app(self):\n        return self.app._screen_stack\n")
    assert [use.split(" ", 1)[1] for use in private_uses(source, tmp_path)] == [
        "imports textual.widgets._tabbed_content", "overrides _on_exit_app", "reads _screen_stack"]
    assert private_uses(HOME)  # the one module that may: the check reads it the same way

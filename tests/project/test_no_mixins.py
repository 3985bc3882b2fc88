"""Composed, not mixed (issues 22 and 35): no class under tui_lab has more than one base that is not a
library's (Textual's, torch's, the standard library's: typing, abc, enum...).

A view built from mixins spreads one widget's state over several classes that read each other's private
attributes (`_hold`, `_say`...); a part of a view is a widget of its own that posts messages, or a plain
object the view owns and calls. The bases are read from the source (ast), so the check imports nothing.
"""

from __future__ import annotations

import ast
import builtins
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "tui_lab"
ALLOWED_ROOTS = {"textual", "torch", "transformers"} | set(sys.stdlib_module_names)
# Classes still built from mixins; empty since the Train, Attention and Generate views were recomposed (issue 22)
# and the Trainer came to own its run loop and evaluator (issue 35).
KNOWN_MIXED: set[str] = set()


def imported_from(tree: ast.Module) -> dict[str, str]:
    """Each name the module binds by import, at any depth, mapped to the module it comes from."""
    origin = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            origin.update({alias.asname or alias.name: node.module for alias in node.names})
        elif isinstance(node, ast.Import):
            origin.update({alias.asname or alias.name.split(".")[0]: alias.name for alias in node.names})
    return origin


def base_name(base: ast.expr) -> str | None:
    """The name a base is reached by: `Horizontal`, `containers.Horizontal` -> `containers`, `Generic[T]`."""
    while isinstance(base, (ast.Subscript, ast.Attribute, ast.Call)):
        base = base.value if not isinstance(base, ast.Call) else base.func
    return base.id if isinstance(base, ast.Name) else None


def is_ours(name: str | None, origin: dict[str, str]) -> bool:
    """A base is ours unless it comes from Textual or the standard library (builtins included)."""
    if name in origin:
        return origin[name].split(".")[0] not in ALLOWED_ROOTS
    return not (name is not None and hasattr(builtins, name))


def mixed_classes(path: Path, root: Path = REPO) -> list[str]:
    """`file::Class` (file relative to `root`) for each class of `path` with more than one base of ours."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    origin = imported_from(tree)
    where = path.relative_to(root).as_posix()
    # One base of ours beside a Textual one is a mixin too (the old `GenerateView(GenerateStream, Vertical)`)
    return [f"{where}::{node.name}" for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and len(node.bases) > 1 and any(is_ours(base_name(base), origin) for base in node.bases)]


def test_no_class_mixes_in_more_than_one_class_of_ours():
    mixed = {name for path in sorted(PACKAGE.rglob("*.py")) for name in mixed_classes(path)}
    assert mixed - KNOWN_MIXED == set(), "compose these: a part is a widget that posts messages, or an object owned"
    assert KNOWN_MIXED - mixed == set(), "composed now: take these off KNOWN_MIXED"


def test_the_check_sees_a_mixin_and_lets_textual_and_typing_bases_pass(tmp_path):
    source = tmp_path / "view.py"
    source.write_text(
        "from typing import Generic, TypeVar\n"
        "from textual import containers\n"
        "from textual.widgets import Static\n"
        "from tui_lab.app.views.train.files import TrainFiles\n"
        "T = TypeVar('T')\n"
        "class Drawing:\n    pass\n"
        "class Mixed(TrainFiles, Drawing, containers.Horizontal):\n    pass\n"
        "class Half(Drawing, Static):\n    pass\n"
        "class Composed(Static, Generic[T]):\n    pass\n"
        "class Error(ValueError, KeyError):\n    pass\n")
    assert mixed_classes(source, tmp_path) == ["view.py::Mixed", "view.py::Half"]

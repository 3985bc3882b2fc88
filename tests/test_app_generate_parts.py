"""The Generate view is composed, not mixed: every class of its package has at most one base of its own beside
Textual's (issue 22: parts are widgets that post messages, or objects the view calls, never mixins that share the
view's private state)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import tui_lab.app.views.generate as generate


def own_bases(cls: type) -> list[type]:
    """The bases of `cls` that are not Textual's (nor `object`)."""
    return [b for b in cls.__bases__ if b is not object and not b.__module__.startswith("textual")]


def test_no_class_of_the_generate_view_mixes_in_more_than_one_base():
    mixed = []
    for info in pkgutil.iter_modules(generate.__path__):
        module = importlib.import_module(f"{generate.__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            # one base of its own and a Textual one is a mixin too (the old GenerateView(GenerateStream, Vertical))
            if cls.__module__ == module.__name__ and len(cls.__bases__) > 1 and own_bases(cls):
                mixed.append(f"{module.__name__}.{name}{tuple(b.__name__ for b in cls.__bases__)}")
    assert not mixed, mixed

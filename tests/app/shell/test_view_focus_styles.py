"""A view gaining or losing the focus restyles itself alone (`LabView.watch_has_focus`): Textual restyles every
widget in it, because a rule may style a descendant by an ancestor's :focus. That holds while no rule does so for a
view; this test reads the app's whole stylesheet (its file and every widget's DEFAULT_CSS) for one."""

from __future__ import annotations

from app_support import app_for
from textual.css.model import SelectorType

from tui_lab.app.app import VIEWS
from tui_lab.app.view_contract import LabView


def _view_names() -> set[str]:
    names = {"LabView"}
    for spec in VIEWS:
        cls = spec.widget_class()
        names.update(c.__name__ for c in cls.__mro__ if issubclass(c, LabView))
    return names


async def test_no_rule_styles_a_widget_by_its_views_focus():
    views = _view_names()
    view_ids = {f"view-{spec.id}" for spec in VIEWS}
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        while len(app.views()) < len(VIEWS):  # every view's DEFAULT_CSS is in the stylesheet once it mounts
            await pilot.pause(0.05)
        rules = list(app.stylesheet.rules)
    assert len(rules) > 100
    bad = []
    for rule in rules:
        for selector_set in rule.selector_set:
            for selector in selector_set.selectors[:-1]:  # the parts of a selector naming an ancestor
                names_view = (selector.type == SelectorType.TYPE and selector.name in views) or \
                    (selector.type == SelectorType.ID and selector.name in view_ids) or \
                    selector.type == SelectorType.UNIVERSAL
                if names_view and set(selector.pseudo_classes) & {"focus", "blur"}:
                    bad.append(str(selector_set.selectors))
    assert bad == []


"""The crawler's CI tier plans to press every key each view binds (tests/support/crawler.py `plan`, read from the
classes: no app started). A key added to a view or to a widget of its package is crawled without being listed;
one the crawler would skip (a SKIP_ACTIONS action) or not reach at the CI tier's depth fails here, before a
crawl that never presses it passes."""

from __future__ import annotations

import pytest
from crawler import CI_DEPTH, EXTRA_KEYS, SKIP_ACTIONS, declared, plan

from tui_lab.app.app import VIEWS


@pytest.mark.parametrize("view_id", [spec.id for spec in VIEWS])
def test_every_bound_key_is_in_the_ci_plan(view_id):
    planned = plan(CI_DEPTH)[view_id]
    keys = declared(view_id)
    assert keys, f"{view_id} binds no key: the plan reads nothing"
    missing = {key: action for key, action in keys.items() if key not in planned}
    assert not missing, (
        f"{view_id}: keys the crawler's CI tier would not press: {missing} (an action in SKIP_ACTIONS "
        f"{sorted(SKIP_ACTIONS)}, or a widget reached only below depth {CI_DEPTH})"
    )


def test_the_plan_presses_tab_and_enter():
    """Widgets of a view's package are reached by Tab; Enter presses a focused button."""
    assert {"tab", "shift+tab", "escape", "enter"} <= set(EXTRA_KEYS)


def test_a_skipped_action_is_missing_from_the_plan(monkeypatch):
    """The plan has teeth: a view key bound to an action the crawler skips is not planned."""
    import crawler

    view_id = VIEWS[0].id
    action = declared(view_id)[next(iter(declared(view_id)))]
    monkeypatch.setattr(crawler, "SKIP_ACTIONS", SKIP_ACTIONS | {action})
    assert next(iter(declared(view_id))) not in crawler.plan(CI_DEPTH)[view_id]


def test_a_letter_after_a_number_is_its_unit_not_a_key():
    """"about 4 s left" on a run's progress line names no `s` (sort next), though "next-token" is beside it."""
    from crawler import _naming
    from textual.binding import Binding

    sort = Binding("s", "sort_next", "sort", show=False)
    assert _naming("mean ablation: next-token loss change per head... 43/276 · about 4 s left", "s", sort) == []
    assert _naming("heads by score · s sort next", "s", sort) == [17]

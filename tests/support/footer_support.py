"""The footer as drawn, for the tests of which keys apply now (no tests here)."""

from __future__ import annotations

from app_support import screen_lines, wait_for


def footer_keys(app) -> dict[str, bool]:
    """Each key the footer's last screen row shows: its description -> True when live, False when dimmed
    (disabled by the view's check_action). A key not on the row is absent."""
    from textual.widgets._footer import FooterKey

    row = screen_lines(app)[-1]
    return {key.description: not key.has_class("-disabled") for key in app.screen.query(FooterKey)
            if key.description and f"{key.key_display} {key.description}" in row}


async def footer_says(pilot, description: str, live: bool | None) -> None:
    """Until the footer shows `description` live (True), dimmed (False) or not at all (None): it is redrawn a
    refresh after the bindings change."""
    await wait_for(pilot, lambda: footer_keys(pilot.app).get(description) is live, 30)


def enabled(app, key: str) -> bool | None:
    """Whether `key` acts now (None: no binding of the focused chain names it)."""
    active = app.active_bindings.get(key)
    return None if active is None else active.enabled

"""Typing into the app as a person does: the keys of a typed text, one at a time."""

from __future__ import annotations

TYPED = "tqwogcx1256"  # theme, quit, save, load, start, CSV, stop, views


async def _type(pilot, text: str) -> None:
    # One press call: Pilot still sends the keys one by one and waits for the app to go idle after each
    # (as a person types); only its walk of every widget after each key is saved (~40% of this file's CPU).
    await pilot.press(*text)


"""Errors as people read them: one line, never a traceback."""

from __future__ import annotations


def one_line(err: BaseException) -> str:
    """The first line of an error's message, or its type's name when it has none."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__

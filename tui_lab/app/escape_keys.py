"""Esc followed by a key in one read is Esc, then that key (issue 23: Esc then a key "read as alt+key").

A terminal sends alt+x as ESC x, so Textual's parser reads ESC and the next key arriving within its escape
delay as alt+key: ESC x becomes alt+x (no binding: both keys lost) and ESC before a control key (Ctrl+R,
Enter) is dropped. A person types Esc and the next key 70 ms apart, but a busy app reads them late, in
one go: the walk beside a busy CPU typed "Esc ctrl+r 2 ↓ ↓" and the Esc never left the field, so the
view keys after it typed into d_model. tui-lab binds no alt key, so an alt+key from the terminal is read as
what a person most likely pressed: Esc, then the key.

The parser is Textual's own; its Linux drivers name it as a module global, which `install()` replaces.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual._xterm_parser import XTermParser

ESC = "\x1b"


class EscThenKeyParser(XTermParser):
    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if not alt and len(sequence) == 2 and sequence[0] == ESC and sequence[1] not in "[O":
            alt, sequence = True, sequence[1]  # ESC 2 (not the start of a CSI or SS3 sequence): Textual names it
            # "trade_mark_sign", the character option+2 types on a Mac
        if alt:
            yield events.Key("escape", ESC)
        yield from super()._sequence_to_key_events(sequence, alt=False)


def install() -> None:
    """Textual's Linux drivers build this parser (a Textual without them keeps its own)."""
    for name in ("textual.drivers.linux_driver", "textual.drivers.linux_inline_driver"):
        try:
            module = __import__(name, fromlist=["XTermParser"])
        except ImportError:
            continue
        if getattr(module, "XTermParser", None) is XTermParser:
            module.XTermParser = EscThenKeyParser

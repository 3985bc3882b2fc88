"""Text that fits the terminal: wrapped at spaces and right after separators, never inside a number.

Rich wraps at spaces only and folds a word longer than its column mid-word ("…/con" / "fig.json"); a piped
command (no terminal) keeps each message on one line, for grep and paste.
"""

from __future__ import annotations

import re

from rich.console import Console

SEPARATORS = "/_=:-.,"


def pieces(text: str) -> list[str]:
    """`text` cut where a line may break: after each space run, and after each separator inside a word
    ("meta-llama/" "Llama-" "2-" "7b-" "hf/" ...), except a '.' or ',' between two digits (148.1, 124,439,808)."""
    out = []
    for word, space in re.findall(r"(\S*)(\s*)", text):
        start = 0
        for i, char in enumerate(word[:-1]):
            inside_number = char in ".," and word[i - 1 : i].isdigit() and word[i + 1].isdigit()
            if char in SEPARATORS and not inside_number:
                out.append(word[start : i + 1])
                start = i + 1
        if word[start:] or space:
            out.append(word[start:] + space)
    return [p for p in out if p]


# A word, or a number with its unit ("148.1 MiB", "12 s"): a line never ends between the two.
_WORD = re.compile(r"(?:\S*\d\s(?:[KMGTP]?i?B|[KMGT]|s|ms|%)(?=[\s,;:)/]|$)\S*|\S+)[,;:)]*\s*")
_UNIT_SPACE = re.compile(r"(\d) (?=(?:[KMGTP]?i?B|[KMGT]|s|ms|%)(?:[\s,;:)/]|$))")
_GLUE = "\ue000"  # a private-use character: no text of ours holds it, and it is not a space to split at


def wrap(text: str, width: int, indent: int = 0, first: int = 0) -> list[str]:
    """`text` in lines of at most `width` columns, the later lines indented by `indent` (a hanging indent);
    `first` columns of the first line are already taken. A word goes whole to the next line when it fits
    there, else it breaks after its separators; a piece wider than a whole line is cut where it must be."""
    lines, line, room = [], "", width - first

    def new_line() -> None:
        nonlocal line, room
        lines.append(line.rstrip())
        line, room = " " * indent, width

    for word in _WORD.findall(text.strip()):
        if len(line) + len(word.rstrip()) <= room:
            line += word
            continue
        if line.strip() and indent + len(word.rstrip()) <= width:
            new_line()
            line += word
            continue
        glued = _UNIT_SPACE.sub("\\1" + _GLUE, word)  # a number keeps its unit even inside a long word
        for piece in (p.replace(_GLUE, " ") for p in pieces(glued)):
            if line.strip() and len(line) + len(piece.rstrip()) > room:
                new_line()
            while len(line) + len(piece.rstrip()) > room:  # longer than a whole line: no choice but to cut
                cut = max(room - len(line), 1)
                line += piece[:cut]
                piece = piece[cut:]
                new_line()
            line += piece
    lines.append(line.rstrip())
    return lines


def fit(console: Console, text: str, indent: int = 0) -> str:
    """`text` wrapped to the console's width when it is a terminal; one line otherwise (a pipe, a file)."""
    if not console.is_terminal:
        return text
    return "\n".join(wrap(text, console.width, indent))


def say(console: Console, text: str, indent: int = 2, **style) -> None:
    """Print `text` wrapped as `fit` wraps it, no markup read in it, with an optional style."""
    console.print(fit(console, text, indent), markup=False, highlight=False, soft_wrap=True, **style)


class Flow:
    """Text printed as it arrives (a completion token by token), wrapped at spaces as `wrap` wraps it: a word
    is held until its end arrives, then goes on this line or the next. A pipe gets the text unwrapped."""

    def __init__(self, console: Console) -> None:
        self.console, self.column, self.held, self.style = console, 0, "", ""

    def write(self, text: str, style: str = "") -> None:
        if not self.console.is_terminal:
            self.console.print(text, style=style or None, end="", markup=False, highlight=False, soft_wrap=True)
            return
        if style != self.style:
            self.flush()
            self.style = style
        self.held += text
        *done, self.held = re.split(r"(?<=\s)(?=\S)", self.held)  # words ended by a space; the last may go on
        for word in done:
            self._place(word)

    def flush(self) -> None:
        """Print the word held back (the text's end)."""
        if self.held:
            self._place(self.held)
        self.held = ""

    def _place(self, word: str) -> None:
        width = self.console.width
        for line_no, part in enumerate(word.split("\n")):
            if line_no:
                self._out("\n")
                self.column = 0
            if self.column and self.column + len(part.rstrip()) > width:
                self._out("\n")
                self.column = 0
            for piece in [part] if len(part.rstrip()) <= width else pieces(part):
                if self.column and self.column + len(piece.rstrip()) > width:
                    self._out("\n")
                    self.column = 0
                while len(piece.rstrip()) > width:  # longer than a line: cut where it must be
                    self._out(piece[:width] + "\n")
                    piece = piece[width:]
                self._out(piece)
                self.column += len(piece)

    def _out(self, text: str) -> None:
        self.console.print(text, style=self.style or None, end="", markup=False, highlight=False, soft_wrap=True)

"""The rules a screen keeps at any size (no tests here): read from the screen's text, as a person reads it.

- A number is whole or absent: no run of digits touches "…" or a pane's right edge (a border, a scrollbar,
  the screen's last column), where it may have been cut.
- A word is never split: each named word is on one line, whole, or ends in "…", never "encoder-de" over
  "coder". Every text widget (a Static, a Label, a select's value, a hint, a legend) is read against the text
  it was given: no line of it ends in letters that the next line goes on with (the joined word is in its
  text), and no word of its text is missing from its lines unless they show "…" or a scrollbar.
  A drawn widget (a heatmap, the small multiples, a plot) has no text to read against: none of its lines ends
  in two letters touching its right edge (a word cut there; a line too long ends in "…").
- Nothing overlaps: no two widgets side by side in one container share a cell.
- A table's cell is whole: every cell of a row on screen shows its whole text on the row's line, unless the table
  scrolls sideways (its scrollbar is the mark).
- Every footer keeps `q quit` and the view's own keys; a plot has at least 8 rows to draw in.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

ELLIPSIS = "…"
# The mark ending a line where a run of text with no space folds onto the next (widgets/model_text.py's FOLD): the
# run goes on below, so a word of it is seen when the lines joined without their marks hold it.
FOLD = "↵"
# What ends a pane on the right: box and panel borders, Textual's scrollbars and half blocks.
EDGES = set("│┃║▕▏▎▍▌▋▊▉█▐") | {chr(c) for c in range(0x2580, 0x25A0)}
_DIGIT_CUT = re.compile(rf"\d{ELLIPSIS}|{ELLIPSIS}\d")
MIN_PLOT_ROWS = 8


def cells(line: str) -> list[str]:
    """A screen line's cells, as a terminal draws them: a wide character fills two (the second ""), a zero-width
    mark sits on the cell before it. A line's characters are not its columns when it holds either."""
    out: list[str] = []
    for ch in line:
        width = cell_len(ch)
        if width == 0 and out:
            out[-1] += ch
        else:
            out.append(ch)
            out.extend([""] * (width - 1))
    return out


def columns(line: str, start: int, end: int) -> str:
    """The text of a screen line's columns `start` to `end` (a widget's region), read by cells (`cells`)."""
    return "".join(cells(line)[start:end])


def cut_numbers(lines: list[str], width: int) -> list[str]:
    """Lines where a run of digits touches an ellipsis or the right edge of its pane (or of the screen,
    `width` columns: a terminal's capture drops trailing blanks)."""
    found = []
    for y, line in enumerate(lines):
        line = line.ljust(width)
        if _DIGIT_CUT.search(line):
            found.append(f"line {y}: digits touch '{ELLIPSIS}': {line.rstrip()!r}")
        row = cells(line)
        row += [" "] * (width - len(row))
        for x, ch in enumerate(row):
            if not ch[:1].isdigit():
                continue
            after = row[x + 1][:1] if x + 1 < width else None
            if after is None or after in EDGES:
                found.append(f"line {y}: digits touch the pane's edge at column {x}: {line.rstrip()!r}")
                break
    return found


def _segments(line: str) -> list[tuple[int, int]]:
    """The column spans between pane edges on one line."""
    spans, start = [], 0
    for x, ch in enumerate(line + "│"):
        if ch in EDGES or ch == "│":
            if x > start:
                spans.append((start, x))
            start = x + 1
    return spans


def split_words(lines: list[str], words: list[str]) -> list[str]:
    """Named words broken over two lines: a head ending one line's pane, the rest starting the next line's."""
    found = []
    for word in words:
        for y in range(len(lines) - 1):
            for start, end in _segments(lines[y]):
                head = lines[y][start:end].rstrip()
                for k in range(2, len(word)):
                    if not head.endswith(word[:k]) or len(head) < end - start - 1:
                        continue  # the head must fill its pane to the edge, as a fold does
                    below = lines[y + 1][start:end].strip()
                    if below.startswith(word[k:]):
                        found.append(f"'{word}' split over lines {y}-{y + 1}: {head[-k:]!r} / {word[k:]!r}")
    return found


def missing_words(lines: list[str], words: list[str]) -> list[str]:
    """Named words not on the screen whole (an ellipsis-cut prefix counts as whole: it says it was cut)."""
    text = "\n".join(lines)
    missing = []
    for word in words:
        if word in text:
            continue
        if any(f"{word[:k]}{ELLIPSIS}" in text for k in range(1, len(word))):
            continue
        missing.append(word)
    return missing


_TAIL = re.compile(r"[\w'-]*[^\W\d_]$")  # the letters ending a line (a word's head)
_HEAD = re.compile(r"[^\W\d_][\w'-]*")  # the letters starting the next (the word's rest)


def _plain(widget) -> str | None:
    """The text a Static was given (markup stripped), or None for a picture (a table, a bar, a grid)."""
    try:
        visual = widget.visual
    except Exception:  # noqa: BLE001 - a widget that cannot say what it shows is not text
        return None
    plain = getattr(visual, "plain", None)
    return plain if isinstance(plain, str) else None


def folded_words(shown: list[str], text: str) -> list[str]:
    """Lines of one widget where a word of `text` is broken: a line ends in letters, the next goes on in
    letters, and the two joined are a word of the text (so a fold, not two words a line apart)."""
    found, width = [], max((len(line) for line in shown), default=0)
    ends = _line_ends(shown, text)
    for y in range(len(shown) - 1):
        tail, head = _TAIL.search(shown[y].rstrip()), _HEAD.match(shown[y + 1].lstrip())
        if not (tail and head):
            continue
        if ends[y] is not None and (ends[y] >= len(text) or not text[ends[y]].isalnum()):
            continue  # where the line ends, the text goes on with no letter or digit (a space, a newline): a wrap
        joined = tail.group() + head.group()
        # The line's last run and the next's first, joined, are in the text only if the break is a fold: a line
        # break the text holds (a model's sampled newline) puts one between them.
        before, after = shown[y].rstrip().rsplit(" ", 1)[-1], shown[y + 1].lstrip().split(" ", 1)[0]
        if before + after not in text:
            continue
        # A run of text with no space wider than the widget (a random model's sampled characters, a path) can
        # only show folded: it is seen, not split.
        if any(joined in word and len(word) >= width for word in text.split()):
            continue
        if re.search(rf"(?<![\w'-]){re.escape(joined)}", text):
            found.append(f"{joined!r} split over two lines: {tail.group()!r} / {head.group()!r}")
    return found


def _line_ends(shown: list[str], text: str) -> list[int | None]:
    """Where each shown line ends in `text`, the lines found in order (None where a line is not found whole: a
    mark, a cut). A wrap at "tt t" / "the" is no fold although "tthe" is a word elsewhere in a random model's
    text (the long tier's English 100x30 walk at 74677e7)."""
    ends: list[int | None] = []
    at = 0
    for line in shown:
        piece = line.strip()
        found = text.find(piece, at) if piece else -1
        ends.append(None if found < 0 else found + len(piece))
        at = found + len(piece) if found >= 0 else at
    return ends


def hidden_words(shown: list[str], text: str) -> list[str]:
    """Words of `text` not on the widget's lines, where nothing (an ellipsis) says some were cut."""
    seen = " ".join(shown)
    if ELLIPSIS in seen:
        return []
    on_screen = set(seen.split())
    # A word wider than the widget (a saved run's absolute path) can only show folded over lines: it is seen. So
    # is a word folded where its line ends in FOLD, the mark that it goes on below.
    width, joined = max(len(line) for line in shown), "".join(line.strip() for line in shown)
    ends = [line.strip(" ") for line in shown]  # (a no-break space the text holds is kept)
    marked = set("".join(line[:-1] if line.endswith(FOLD) else f"{line} " for line in ends).split())
    return [word for word in text.split()
            if word not in on_screen | marked and not (len(word) > width and word in joined)]


def _scrolls(widget) -> bool:
    return bool(getattr(widget, "show_vertical_scrollbar", False)
                or getattr(widget, "show_horizontal_scrollbar", False))


def _seen_region(widget):
    """The part of `widget`'s content its containers let show, and whether a scrolling one cut it (a scrollbar
    is the mark that there is more; a container merely too small hides the rest with no mark)."""
    region, scrolled = widget.content_region, _scrolls(widget)
    for parent in widget.ancestors:
        box = getattr(parent, "content_region", None)
        if box is None:
            break
        if not box.contains_region(region):
            scrolled = scrolled or _scrolls(parent)
            region = region.intersection(box)
    return region, scrolled


def text_problems(app, lines: list[str]) -> list[str]:
    """Every text widget on screen, read against its own text: no word folded, none hidden unmarked."""
    from textual.widgets import Static

    found, menus = [], open_menus(app)
    for widget in shown_widgets(app, Static):
        text = _plain(widget) if widget.display and widget.visible else None
        if not (text and text.strip()):
            continue
        r, scrolled = _seen_region(widget)
        if r.bottom > len(lines) or not r.area or any(menu.overlaps(r) for menu in menus):
            continue  # (under an open select's framed menu: the frame is the mark; `open_menus`)
        shown = [columns(lines[y], r.x, r.right) for y in range(r.y, r.bottom)]
        problems = folded_words(shown, text)
        hidden = [] if scrolled else hidden_words(shown, text)
        if hidden:
            problems.append(f"hides {' '.join(hidden[:6])!r} with no mark")
        found += [f"{_name(widget)} {p}: {' / '.join(s.rstrip() for s in shown)!r}"[:300] for p in problems]
    return found


def edge_words(app, lines: list[str]) -> list[str]:
    """The drawn widgets (a heatmap, the small multiples, a plot), whose legends, titles and read-outs are no
    Static: no line ends in a word cut by the widget's right edge (two letters touching it); a line too long
    ends in "…". A plot's title flush with its edge is whole: plotext draws a title whole or not at all (the
    Train view's narrow "learning rate" plot at 160x48, the long tier)."""
    from tui_lab.app.views.attention.small_multiples import SmallMultiples
    from tui_lab.app.widgets.heatmap import Heatmap
    from tui_lab.app.widgets.line_plot import LinePlot

    found = []
    for widget in shown_widgets(app, (Heatmap, SmallMultiples, LinePlot)):
        r, _ = _seen_region(widget) if widget.display and widget.visible else (None, False)
        if r is None or not r.area or r.bottom > len(lines) or r.right < widget.content_region.right:
            continue  # hidden, or scrolled sideways out of its pane
        for y in range(r.y, r.bottom):
            end = columns(lines[y], r.right - 2, r.right) if len(cells(lines[y])) >= r.right else ""
            if len(end) == 2 and all(ch.isalpha() for ch in end):
                shown = columns(lines[y], r.x, r.right)
                if whole_title(widget, shown):
                    continue
                found.append(f"{_name(widget)} line {y} ends in a word cut at its edge: {shown!r}")
    return found


def whole_title(widget, shown: str) -> bool:
    """Whether `shown` (a line of a plot) holds the plot's whole title and nothing else."""
    title = getattr(widget, "title", "")
    return isinstance(title, str) and bool(title) and shown.strip() == title


def footer_problems(footer: str, keys: list[str]) -> list[str]:
    """The footer must keep `q quit` and the view's own keys ("g start")."""
    return [f"footer lacks {key!r}: {footer.rstrip()!r}" for key in ["q quit", *keys] if key not in footer]


# A select's open menu with no room below its field is moved up over the field itself (Textual's SelectOverlay
# keeps inside the screen), as a desktop pop-up menu covers its button: the menu, not a clash.
_OWN_MENU = {"SelectCurrent", "SelectOverlay"}


def overlaps(app) -> list[str]:
    """Widgets side by side in one container whose regions share a cell."""
    found = []
    for parent in [app.screen, *shown_widgets(app, object)]:
        shown = [w for w in parent.children if w.display and w.visible and w.region.area]
        for i, a in enumerate(shown):
            for b in shown[i + 1:]:
                if a.region.overlaps(b.region) and {type(a).__name__, type(b).__name__} != _OWN_MENU:
                    found.append(f"{_name(a)} overlaps {_name(b)} inside {_name(parent)}")
    return found


def shown_widgets(app, kind) -> list:
    """The widgets of `kind` the screen lays out over its area (the compositor's visible ones), in the order a
    query finds them: a widget elsewhere (a hidden view's, one scrolled out of its pane) has no cell on screen
    for a rule to read, and a query of the whole app (~700 widgets, its views all mounted) cost each screen
    ~0.1 s."""
    try:
        visible = app.screen._compositor.visible_widgets
    except AttributeError:  # another Textual: the query
        return list(app.screen.query(kind if kind is not object else "*"))
    return [w for w in app.screen.walk_children() if w in visible and isinstance(w, kind)]


def forecast_rooms(app) -> list[str]:
    """Widgets that lay themselves out in the room their own scrollbars will leave (tui_lab/app/widgets/
    scroll_room.py: the Heatmap, the attention's small multiples) where Textual's scrollbars leave another: what
    is drawn to the forecast's edge then lies under a scrollbar, or stops a cell or two short of one. The long
    tier's English 80x24 walk at db2fb17 saw the lens read-out's value against a scrollbar the layout had not
    foreseen, after a theme toggle; this names the widget and both rooms wherever it happens again."""
    from tui_lab.app.views.attention.small_multiples import SmallMultiples
    from tui_lab.app.widgets.heatmap import Heatmap

    found = []
    for widget in shown_widgets(app, Heatmap) + shown_widgets(app, SmallMultiples):
        forecast, textual = widget.inner, widget.scrollable_content_region.size
        if widget.size.area and forecast != textual:
            found.append(f"{_name(widget)} laid out in {forecast.width}x{forecast.height}, its scrollbars leave "
                         f"{textual.width}x{textual.height}")
    return found


def under_menus(app, lines: list[str]) -> list[str]:
    """`lines` with what the open select menus cover blanked (their frame is the mark of what they hide), the
    tables that scroll sideways with their scrollbar on screen (the mark of the columns out of room), and the
    frame of a dialog over the screen: a digit beside any is not a number cut short ("lr 0█" beside the Train
    view's long-run question, the long tier). The dialog's inside stays, for the rules to read."""
    lines = list(lines)
    for menu in open_menus(app):
        _blank(lines, menu.x, menu.y, menu.width, menu.height)
    for table in sideways_tables(app, len(lines)):
        r, _ = _seen_region(table)
        _blank(lines, r.x, r.y, r.width, r.height)
    for box in dialogs(app):
        for x, y, w, h in ((box.x, box.y, box.width, 1), (box.x, box.bottom - 1, box.width, 1),
                           (box.x, box.y, 1, box.height), (box.right - 1, box.y, 1, box.height)):
            _blank(lines, x, y, w, h)
    return lines


def sideways_tables(app, height: int) -> list:
    """The DataTables on screen wider than their room whose sideways scrollbar (their last row) is seen."""
    from textual.widgets import DataTable

    found = []
    for table in shown_widgets(app, DataTable):
        r, _ = _seen_region(table)
        if table.show_horizontal_scrollbar and r.area and r.bottom == table.region.bottom <= height:
            found.append(table)
    return found


def _blank(lines: list[str], x: int, y: int, width: int, height: int) -> None:
    for row in range(max(0, y), min(len(lines), y + height)):
        line = lines[row].ljust(x + width)
        lines[row] = line[:x] + " " * width + line[x + width:]


def dialogs(app) -> list:
    """The regions of what a modal screen shows over the screen under it (its dialog boxes)."""
    from textual.screen import ModalScreen

    if len(app.screen_stack) < 2 or not isinstance(app.screen, ModalScreen):
        return []
    return [child.region for child in app.screen.children if child.display and child.region.area]


def open_menus(app) -> list:
    """The regions of the select menus open over the screen. Each is framed (tui_lab.tcss: a compact select's menu
    had no frame, and its options over the fields below read as their values, "steps char"); the frame must be
    drawn, so a field it covers is hidden with a mark."""
    from textual.widgets._select import SelectOverlay

    # the menus drawn, not the selects shown: a select scrolled out of its form keeps its menu open on screen
    return [menu.region for menu in shown_widgets(app, SelectOverlay) if menu.parent.expanded]


def _name(widget) -> str:
    return f"{type(widget).__name__}#{widget.id}" if widget.id else type(widget).__name__


def plot_rows(app, lines: list[str]) -> list[str]:
    """Each plot on screen has at least 8 rows of canvas: the lines between its frame's top and bottom."""
    from tui_lab.app.widgets.line_plot import LinePlot

    found = []
    for plot in shown_widgets(app, LinePlot):
        r = plot.region
        if not (plot.display and r.area) or r.bottom > len(lines):
            continue  # hidden, or scrolled partly out of view: checked where it shows whole
        inside = [columns(lines[y], r.x, r.right) for y in range(r.y, r.bottom)]
        tops = [i for i, text in enumerate(inside) if "┌" in text]
        bottoms = [i for i, text in enumerate(inside) if "└" in text]
        rows = bottoms[-1] - tops[0] - 1 if tops and bottoms else r.height - 5  # title, frame, ticks, name
        if rows < MIN_PLOT_ROWS:
            found.append(f"{_name(plot)} has {rows} rows to draw in (at least {MIN_PLOT_ROWS})")
    return found


MIN_BOX_ROWS = 4


def squeezed_boxes(lines: list[str], least: int = MIN_BOX_ROWS) -> list[str]:
    """Rounded boxes drawn whole on screen with fewer than `least` rows inside (a box squeezed by a panel
    opened under it: its text cannot be read)."""
    found = []
    for y, line in enumerate(lines):
        for x, ch in enumerate(line):
            if ch != "╭":
                continue
            bottom = next((yy for yy in range(y + 1, len(lines)) if len(lines[yy]) > x and lines[yy][x] == "╰"), None)
            if bottom is not None and bottom - y - 1 < least:
                found.append(f"a box at line {y}, column {x} has {bottom - y - 1} rows inside (at least {least}): "
                             f"{line[x:].rstrip()!r}")
    return found


def input_values(app, lines: list[str]) -> list[str]:
    """Every form field not being typed in shows its whole value from its first character. A field scrolls
    while typed in (by design), but once left it must not keep showing the tail ("hundred thirty two" for
    "four hundred thirty two") or a number's head ("100" for "1000"). Free text wider than its field (a
    prompt, a sentence) may end in "…" after whole words; a value with no space (a number, a name, a path)
    is whole."""
    from textual.widgets import Input

    found = []
    menus = open_menus(app)
    for field in shown_widgets(app, Input):
        if not (field.display and field.visible and field.value) or field.has_focus:
            continue
        r, _ = _seen_region(field)
        if not r.area or r.bottom > len(lines) or r.width < field.content_region.width:
            continue  # hidden, or scrolled out of its pane
        if any(menu.overlaps(r) for menu in menus):
            continue  # under an open select's framed menu (the frame is the mark; `open_menus`)
        shown = columns(lines[r.y], r.x, r.right).rstrip()
        value = field.value.rstrip()  # a trailing space draws nothing (ctrl+backspace leaves one after a word)
        cut = shown.endswith(ELLIPSIS) and " " in value and value.startswith(shown[:-1].rstrip() + " ")
        if shown != value and not cut:
            found.append(f"{_name(field)} shows {shown!r} for its value {field.value!r}")
    return found


def given_widths(table) -> list[int]:
    """The widths a DataTable's columns are drawn at, its cell padding aside (what `fill_table` gave them)."""
    return [column.get_render_width(table) - 2 * table.cell_padding for column in table.ordered_columns]


def table_cells(app, lines: list[str]) -> list[str]:
    """Every DataTable's rows on screen show each cell's whole text on the row's line: a column drawn narrower than
    its cells read "withou" for "without" and "4.77e" for 4.77e-05 with no mark (the long tier's English 160x48
    walk, Experiments' results). A table that scrolls sideways marks its cut with its scrollbar, when that is seen
    (a table taller than its pane kept it out of sight under the rows: the long tier's HF 80x24 walk). A
    MarkedTable marks every line instead (`›`, `‹`), and shows no column in part."""
    from textual.widgets import DataTable

    from tui_lab.app.widgets.marked_table import MarkedTable

    found, menus = [], open_menus(app)
    marked = [table for table in sideways_tables(app, len(lines)) if not isinstance(table, MarkedTable)]
    for table in shown_widgets(app, DataTable):
        r, _ = _seen_region(table)
        if not (table.display and r.area) or r.bottom > len(lines) or table in marked:
            continue
        top = table.content_region.y + (table.header_height if table.show_header else 0)
        y = top - round(table.scroll_y)  # the header stays: rows scrolled above it are hidden under it
        for index, row in enumerate(table.ordered_rows):
            if max(r.y, top) <= y < r.bottom:
                if any(menu.contains(r.x, y) or menu.contains(r.right - 1, y) for menu in menus):
                    y += row.height
                    continue  # under an open select's framed menu (the frame is the mark)
                # a row of several lines (a folded path): each line of a cell on one of the row's lines, those
                # the pane's bottom leaves in sight
                seen = min(y + row.height, r.bottom) - y
                shown = "\n".join(columns(line, r.x, r.right) for line in lines[y:y + seen])
                cells = [str(cell).strip() for cell in table.get_row(row.key)]
                cut = [text for text in cells
                       if any(part.strip() not in shown for part in text.split("\n")[:seen])]
                if isinstance(table, MarkedTable) and _marked_line(shown):
                    cut = [text for text in cut if _part_shown(text, shown, cells)]  # hidden whole, and marked
                found += [f"{_name(table)} row {index} lacks {text!r}: {shown.rstrip()!r}" for text in cut]
            y += row.height
    return found


def _marked_line(shown: str) -> bool:
    """A MarkedTable's line that says columns are hidden: it ends with `›` or holds `‹` (after its fixed columns)."""
    from tui_lab.app.widgets.marked_table import MORE_LEFT, MORE_RIGHT

    return any(line.rstrip().endswith(MORE_RIGHT) for line in shown.split("\n")) or MORE_LEFT in shown


def _part_shown(text: str, shown: str, cells: list[str]) -> bool:
    """Whether a cell hidden from a marked line shows in part at the mark: the word before `›` or after `‹` is a
    piece of it ("0.23" of 0.2326), not another of the row's cells whole (a "2" beside `‹` is the "shuffled to"
    column's, not the start of a hidden 0.1792: the long tier's HF 80x24 walk)."""
    from tui_lab.app.widgets.marked_table import MORE_LEFT, MORE_RIGHT

    words = shown.replace(MORE_LEFT, f" {MORE_LEFT} ").replace(MORE_RIGHT, f" {MORE_RIGHT} ").split()
    edges = [words[i - 1] for i, w in enumerate(words) if w == MORE_RIGHT and i > 0]
    edges += [words[i + 1] for i, w in enumerate(words) if w == MORE_LEFT and i + 1 < len(words)]
    return any(edge != text and edge not in cells and (text.startswith(edge) or text.endswith(edge))
               for edge in edges)


def plot_overruns(app, lines: list[str]) -> list[str]:
    """Nothing a plot draws lies right of its frame: the lines between the frame's top and bottom corners
    ("┐", "┘") hold no ink past the right edge inside the plot's own region."""
    from tui_lab.app.widgets.line_plot import LinePlot

    found = []
    for plot in shown_widgets(app, LinePlot):
        r = plot.region
        if not (plot.display and r.area) or r.bottom > len(lines):
            continue
        inside = [columns(lines[y], r.x, r.right) for y in range(r.y, r.bottom)]
        tops = [(i, text.rfind("┐")) for i, text in enumerate(inside) if "┐" in text]
        bottoms = [i for i, text in enumerate(inside) if "┘" in text]
        if not (tops and bottoms):
            continue
        (top, edge), bottom = tops[0], bottoms[-1]
        for i in range(top, bottom + 1):
            past = inside[i][edge + 1:].strip()
            if past:
                found.append(f"{_name(plot)} draws {past!r} right of its frame on line {r.y + i}")
    return found

"""The heatmap as a person sees it: read back from the SVG export, every cell sits under its label.

A bare app holds one Heatmap; the grid is found in the rendered text by its labels (horizontal or
vertical, whole or ending in an ellipsis), and each column's slot must be one colour on every row line.
"""

from __future__ import annotations

import re

import pytest
from app_support import screen_lines, wait_for
from screen_reader import find_columns, find_rows, read_svg, slot_colours
from textual.app import App, ComposeResult

from tui_lab.app.widgets.grid_cells import fmt_value
from tui_lab.app.widgets.heatmap import Heatmap

WORDS = ["I", "have", "seen", "the", "film", "today", "gesehen", "übermorgen", "Straßenbahn", "x"]


class One(App):
    def __init__(self, values, rows, cols, dense=None, mask=None) -> None:
        super().__init__()
        self.grid = (values, rows, cols, dense, mask)

    def compose(self) -> ComposeResult:
        yield Heatmap(id="map")

    def on_mount(self) -> None:
        values, rows, cols, dense, mask = self.grid
        kwargs = {"mask": mask} if mask is not None else {}
        self.query_one(Heatmap).set_grid(values, rows, cols, dense=dense, **kwargs)


def ramp(n_rows: int, n_cols: int) -> list[list[float]]:
    """Distinct values left to right, so neighbouring slots never share a colour by chance."""
    return [[(c * n_rows + r) / (n_rows * n_cols) for c in range(n_cols)] for r in range(n_rows)]


async def screen_of(app: App, size: tuple[int, int]):
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        return read_svg(app.export_screenshot(), *size)


def assert_aligned(screen, rows: list[str], cols: list[str], lines_per_row: int = 1) -> None:
    found = find_columns(screen, cols)
    assert found is not None, "column labels not found, one per equal slot:\n" + screen.text()
    ys = find_rows(screen, rows, found.x0, found.y + 1)
    assert -1 not in ys, f"row labels missing: {ys}\n" + screen.text()
    for y in ys:
        for j, colours in enumerate(slot_colours(screen, y, found, len(cols))):
            assert len(colours) == 1 and not colours & {None, screen.base}, \
                f"line {y}, column {j} ({cols[j]!r}): slot of {found.slot} holds {colours}\n" + screen.text()


@pytest.mark.parametrize("width", [80, 100, 120, 160, 200, 240])
async def test_cells_sit_under_their_labels_at_every_width(width):
    rows, cols = WORDS[:7], WORDS[:6]
    screen = await screen_of(One(ramp(7, 6), rows, cols), (width, 30))
    assert_aligned(screen, rows, cols)


async def test_a_small_grid_uses_the_space():
    screen = await screen_of(One(ramp(6, 6), WORDS[:6], WORDS[:6]), (150, 40))
    found = find_columns(screen, WORDS[:6])
    assert found is not None and found.slot * 6 >= 48, found  # not 12 characters wide in a 150-column box


async def test_long_labels_are_cut_with_an_ellipsis_and_many_columns_go_vertical():
    cols = [f"{w}{i}" for i, w in enumerate(WORDS * 3)]
    screen = await screen_of(One(ramp(4, len(cols)), WORDS[:4], cols), (80, 30))
    found = find_columns(screen, cols)
    assert found is not None, screen.text()
    assert_aligned(screen, WORDS[:4], cols)


async def test_dense_half_blocks_sit_under_their_labels():
    n = 50
    labels = [f"t{i}" for i in range(n)]
    screen = await screen_of(One(ramp(n, n), labels, labels, dense=True), (120, 40))
    found = find_columns(screen, labels)
    assert found is not None, screen.text()
    y = found.y + 3  # a grid line: two matrix rows, upper in the glyph's colour, lower behind it
    while y < screen.height and "▀" not in screen.line(y):
        y += 1
    for j in range(n):
        xs = range(found.x0 + j * found.slot, found.x0 + (j + 1) * found.slot)
        assert len({screen.bg[y][x] for x in xs}) == 1 and len({screen.fg[y][x] for x in xs}) == 1


async def test_masked_cells_are_hatched_not_coloured():
    n = 5
    values = [[1 / (q + 1) if k <= q else 0.0 for k in range(n)] for q in range(n)]
    mask = [[k > q for k in range(n)] for q in range(n)]
    labels = WORDS[:n]
    screen = await screen_of(One(values, labels, labels, mask=mask), (100, 30))
    found = find_columns(screen, labels)
    ys = find_rows(screen, labels, found.x0, found.y + 1)
    for q, y in enumerate(ys):
        for k in range(n):
            xs = range(found.x0 + k * found.slot, found.x0 + (k + 1) * found.slot)
            if k > q:
                assert not any(screen.painted(y, x) for x in xs) and "╱" in "".join(screen.chars[y][x] for x in xs)
            else:
                assert all(screen.painted(y, x) for x in xs)


@pytest.mark.parametrize("width", [8, 16, 30, 36, 37, 38, 40])
async def test_the_legend_gives_up_detail_before_it_is_cut_and_says_when_it_is(width):
    """Whole, it keeps its last cell free: at 37 columns "masked" touched the edge and read as a word cut (the
    long tier's walk, Generate's grid at 80x24)."""
    n = 5
    values = [[1 / (q + 1) if k <= q else 0.0 for k in range(n)] for q in range(n)]  # unmasked: 0.20 to 1.00
    mask = [[k > q for k in range(n)] for q in range(n)]
    screen = await screen_of(One(values, WORDS[:n], WORDS[:n], mask=mask), (width, 24))
    line = screen.line(0).rstrip()  # the legend, above the column labels
    if width >= 38:  # room for everything: the scale, its max and the masked key, and a free cell after
        assert line.startswith("0.20") and line.endswith("╱╱ masked") and len(line) < width, line
    elif width >= 13:  # the masked key went first, then swatches: min and max still show, nothing is cut
        assert line.startswith("0.20") and line.endswith("1.00") and "mask" not in line and len(line) < width, line
        assert sum(screen.painted(0, x) for x in range(width)) >= 2, "no colour scale left"
    else:  # not even two swatches between min and max: cut, and the ellipsis says so
        assert line.endswith("…") and len(line) == width, line


async def test_numbered_columns_too_narrow_to_write_across_get_whole_numbers_as_ticks():
    """64 positions in an 80-column box: "10" written downwards read "1" over "0"; they are ticks across, each
    over its own column, every 5th (the positional-encoding grid's i axis)."""
    cols = [str(i) for i in range(64)]
    screen = await screen_of(One(ramp(8, 64), [str(r) for r in range(8)], cols, dense=True), (80, 24))
    text = screen.text().splitlines()
    header = next(i for i, line in enumerate(text) if " 5    10   15" in line)
    line = text[header]
    x0 = line.index("0    5")
    for tick in range(0, 64, 5):
        assert line[x0 + tick:x0 + tick + len(str(tick))] == str(tick), line  # over its own column
    assert not any(ch.isdigit() for ch in text[header + 1][x0:x0 + 64]), "a second line of digits: " + text[header + 1]


async def test_nothing_of_a_grid_wider_and_taller_than_its_pane_is_drawn_under_the_scrollbars():
    """30 columns of numbers (`#`) by 40 rows at 80x24: both scrollbars show. Scrolled to the last cell, the
    last column's numbers are whole beside the vertical scrollbar (it covered two columns: "0.98" read "0."),
    and the read-out line sits above the horizontal scrollbar, not under it."""
    rows, cols = [f"r{i}" for i in range(40)], [f"c{i}" for i in range(30)]
    values = ramp(40, 30)
    app = One(values, rows, cols, dense=False)
    async with app.run_test(size=(80, 24)) as pilot:
        heatmap = app.query_one(Heatmap)
        heatmap.action_toggle_numbers()
        await pilot.pause()  # laid out again: the scrollbars know the wider grid
        heatmap.move_cursor(39, 29)
        await pilot.pause()
        assert heatmap.show_vertical_scrollbar and heatmap.show_horizontal_scrollbar
        lines = screen_lines(app)
    text = "\n".join(lines)
    assert "query [39] 'r39'  ->  key [29] 'c29'" in text, text
    shown = [(int(line[1:3]), line) for line in lines if re.match(r"r\d\d ", line)]
    assert len(shown) >= 15, text
    for row, line in shown[:-1]:  # the last row is the cursor's: brackets, no number
        assert line[:78].rstrip().endswith(fmt_value(values[row][29])), line  # 78, 79: the scrollbar


@pytest.mark.parametrize("n_rows", [8, 40])
async def test_scrolling_sideways_with_the_cursor_lands_on_a_column_start(n_rows):
    """30 numbered-cell columns at 80x24 scroll sideways as the cursor walks right: the view's left edge is
    always a column's start, so the first label reads whole (`c15`, not `15`) and the first cell's number
    too (`0.47`, not `47`), and the cursor's column is on screen; up to the last column, with and without
    the vertical scrollbar taking room (40 rows)."""
    rows, cols = [f"r{i}" for i in range(n_rows)], [f"c{i}" for i in range(30)]
    values = ramp(n_rows, 30)
    app = One(values, rows, cols, dense=False)
    async with app.run_test(size=(80, 24)) as pilot:
        heatmap = app.query_one(Heatmap)
        heatmap.action_toggle_numbers()
        heatmap.focus()
        await pilot.pause()
        for col in range(1, 30):
            await pilot.press("right")
            await wait_for(pilot, lambda col=col: heatmap.cursor == (0, col))
            lines = screen_lines(app)
            text, gutter = "\n".join(lines), heatmap.label_width
            first = re.fullmatch(r"c(\d+)", lines[1][gutter:].split()[0])
            assert first is not None, f"cursor on c{col}, the first label is cut:\n{text}"
            assert f"c{col}" in lines[1].split(), text
            shown = int(first.group(1))
            for row in range(1, 8):  # row 0 is the cursor's: its cell may be the bracketed one
                assert lines[2 + row][gutter:].split()[0] == fmt_value(values[row][shown]), text


async def test_a_legend_never_reads_negative_zero():
    """Issue 36 item 23: an ablation's smallest change, -0.0004 nats, made the legend read "-0.00"."""
    values = [[-0.0004, 0.3, 0.62], [0.1, -0.002, 0.5]]
    app = One(values, ["L0", "L1"], ["H0", "H1", "H2"])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: any("0.62" in line for line in screen_lines(app)))
        text = "\n".join(screen_lines(app))
        legend = next(line for line in screen_lines(app) if "0.62" in line)
        assert legend.split()[0] == "0.00" and not re.search(r"-0\.00(?!\d)", text), text  # the read-out: -0.0004


@pytest.mark.parametrize("label", ["3757415741522", "x3757415741522", "45 3757415741522", "3.14159265358979"])
async def test_a_long_number_label_is_never_cut_to_its_head(label):
    """The long tier (HF 160x48, seed 758975829) captured a one-token text whose token was 13 digits: the grid's
    labels read "3757415741…" and "37574157415…", a number cut short. A label's cut never ends in a digit."""
    from screen_rules import cut_numbers

    app = One([[1.0]], [label], [label])
    async with app.run_test(size=(160, 20)) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        assert not cut_numbers(lines, 160), cut_numbers(lines, 160)
        assert any("…" in line for line in lines), "\n".join(lines)  # cut, and marked

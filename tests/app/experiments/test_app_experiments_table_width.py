"""A results table beside the list at 80x24: every cell whole. The long tier's crawl found a sweep's runs table
(positions, seed, params, train loss, val loss) wider than its room: "val loss" ran under the scrollbar and 2.329
read "2.3" with no mark. Headers stack their words, so a column is as wide as its longest word or cell."""

from __future__ import annotations

from app_experiments_support import SMALL, open_view
from app_support import app_for, screen_lines, wait_for
from screen_rules import cut_numbers, given_widths, table_cells
from textual.widgets import Select

from tui_lab.experiments.result import Result, Table

POSITIONS = ["sinusoidal", "learned", "rope", "alibi", "sinusoidal_halves", "none", "relative", "t5"]


def _sweep_result() -> Result:
    """The shape of `experiments/sweep.py`'s runs table, with its widest value."""
    table = Table("runs", ["positions", "seed", "params", "train loss", "val loss"])
    table.rows = [[p, 0, 104128 + 16384 * (p == "learned"), 2.1 + i / 7, 2.3291 + i / 9]
                  for i, p in enumerate(POSITIONS)]
    return Result("sweep", {}, tables={"runs": table})


async def test_a_sweeps_runs_table_shows_every_cell_whole_at_80x24():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        view._show(_sweep_result())
        view.query_one("#ex-figure", Select).value = "table:runs"
        await pilot.pause()
        view.query_one("#ex-figures").scroll_visible(animate=False)
        await pilot.pause()
        lines = screen_lines(app)
        shown = "\n".join(lines)
        assert not cut_numbers(lines, SMALL[0]), shown
        rows = [(row, line) for row in _sweep_result().tables["runs"].rows for line in lines
                if f" {row[0]} " in line and f" {row[2]} " in line]  # the rows the pane has room for
        assert len(rows) >= 3, shown
        for row, line in rows:  # each holds its val loss, whole
            assert f"{row[4]:.4g}" in line, (row, shown)


async def test_home_or_page_up_in_the_results_table_brings_the_notes_back_at_80x24():
    """With the table focused (Tab) its own rows took Home and PageUp, and the run's notes, scrolled off above the
    figure, were out of the keys' reach (the long tier's walk)."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        result = _sweep_result()
        result.notes = ["lowest val loss: positions=alibi (2.1720) after 60 steps"] + [
            f"note {i}: one toy run per value and seed, so small gaps are noise" for i in range(6)]
        for key in ("home", "pageup"):
            view._show(result)
            # an export's status, five lines at 80x24: the notes' column is shorter by as much
            view._status("exported sweep-20261203-140154.json and 2 CSV files to /tmp/pytest-of-someone/pytest-566/"
                         "popen-gw0/exports0")
            view.query_one("#ex-figure", Select).value = "table:runs"
            await pilot.pause()
            view.query_one("#ex-table").focus()
            await pilot.pause()
            view.query_one("#ex-scroll").scroll_end(animate=False)
            await pilot.pause()
            assert "lowest val loss" not in "\n".join(screen_lines(app)), key
            await pilot.press(key)
            await pilot.pause()
            assert "lowest val loss" in "\n".join(screen_lines(app)), key


def test_column_widths_are_the_widest_header_line_or_cell():
    from tui_lab.app.views.experiments.draw import stacked
    from tui_lab.app.widgets.table_fill import column_widths

    labels, _ = stacked(["positions", "seed", "val loss"])
    assert column_widths(labels, [["sinusoidal_halves", "0", "3.121"], ["rope", "12345", "2.3"]]) == [17, 5, 5]
    assert column_widths(labels, []) == [9, 4, 4]  # no rows: the headers' words


async def test_a_table_redrawn_has_its_widths_before_the_app_is_idle():
    """A sweep's partial results redraw the table as each run ends; on a busy app a frame could come before the
    table measured its new rows when idle, and the columns kept the headers' widths ("sinusoida", "3.12": the
    long tier's English 160x48 walk). The widths are given with the columns: right at once, and on screen."""
    from textual.widgets import DataTable

    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(160, 48)) as pilot:
        view = await open_view(pilot)
        result = _sweep_result()
        view._show(result)
        view.query_one("#ex-figure", Select).value = "table:runs"
        await pilot.pause()
        result.tables["runs"].rows.append(["sinusoidal_halves", 0, 104128, 3.1191, 3.1213])
        view._show(result)  # no pause: nothing idle yet
        table = view.query_one("#ex-table", DataTable)
        widths = given_widths(table)
        assert widths[0] == len("sinusoidal_halves") and widths[4] >= len("3.121"), widths
        await pilot.pause()
        view.query_one("#ex-figures").scroll_visible(animate=False)
        await pilot.pause()
        assert table_cells(app, screen_lines(app)) == []


async def test_a_table_wider_than_its_room_shows_its_sideways_scrollbar_under_its_rows():
    """order-blindness's tokens table (six columns) is wider than its room beside the list at 80x24: it scrolls
    sideways, and its scrollbar (the mark) sits under its rows, not below the pane's bottom where the table's
    full height put it (the long tier's HF 80x24 walk read its last column cut with no mark). (Scrolled to
    the one line where its last row is the pane's last, the mark is out of sight still: the rule finds that.)"""
    from screen_rules import sideways_tables, under_menus
    from textual.widgets import DataTable

    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        assert view.selected == "order-blindness"
        await pilot.press("r")
        await wait_for(pilot, lambda: view.finished is not None and not view.running, 60)
        view.query_one("#ex-figure", Select).value = "table:tokens"
        await pilot.pause()
        view.query_one("#ex-figures").scroll_visible(animate=False)
        await pilot.pause()
        table, pane = view.query_one("#ex-table", DataTable), view.query_one("#ex-scroll")
        # the notes scrolled so the line under the table's last row is the pane's last: all its rows in sight
        under_rows = table.region.y + table.header_height + table.row_count + 1
        pane.scroll_to(y=pane.scroll_y + under_rows - pane.content_region.bottom, animate=False)
        await pilot.pause()
        lines = screen_lines(app)
        assert table.show_horizontal_scrollbar and sideways_tables(app, len(lines)) == [table], "\n".join(lines)
        assert table_cells(app, lines) == [] and cut_numbers(under_menus(app, lines[:-1]), SMALL[0]) == []


async def test_the_tokens_table_marks_its_hidden_columns_with_the_notes_in_sight_at_80x24():
    """Right after a run the notes fill the pane and the tokens table's first rows show under them: its sideways
    scrollbar lies below the pane, and the sixth column read cut ("0.23" of 0.2326) with no mark (the long tier's
    translator 80x24 walk). Each line now shows whole columns and ends with `›`; → on the table brings the hidden
    columns whole, with `‹` for those it passed."""
    from textual.widgets import DataTable

    from tui_lab.app.widgets.marked_table import MORE_LEFT, MORE_RIGHT

    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: view.finished is not None and not view.running, 60)
        view.query_one("#ex-figure", Select).value = "table:tokens"
        await pilot.pause()
        table = view.query_one("#ex-table", DataTable)
        view.query_one("#ex-scroll").scroll_home(animate=False)
        await pilot.pause()
        lines = screen_lines(app)
        shown, r = "\n".join(lines), table.region
        assert r.y < len(lines) - 3 < r.bottom, shown  # its header and first rows show, its scrollbar does not
        assert table_cells(app, lines) == [] and not cut_numbers(lines, SMALL[0]), shown
        assert all(line[r.x:r.right].rstrip().endswith(MORE_RIGHT) for line in lines[r.y:len(lines) - 3]), shown
        table.focus()
        last = str(table.get_row_at(0)[-1])
        for _ in range(len(table.columns)):
            await pilot.press("right")
        await pilot.pause()
        view.query_one("#ex-figures").scroll_visible(animate=False)
        await pilot.pause()
        lines = screen_lines(app)
        shown = "\n".join(lines)
        assert table_cells(app, lines) == [] and MORE_LEFT in shown, shown
        assert any(f" {last} " in line for line in lines), (last, shown)


async def test_a_path_wider_than_the_room_folds_at_its_slashes_at_80x24():
    """LoRA's results name the merged checkpoint's folder: at 80x24 the path was wider than the table's room by
    itself, and showed cut at the pane's edge with only the mark (the long tier's HF 80x24 walk). It folds after
    its slashes into lines of its row, read back whole, and unfolds when the terminal is wide."""
    from textual.widgets import DataTable

    path = "/tmp/pytest-of-someone/pytest-167/exports0/lora-merged-20261204-002321"
    result = Result("lora", {}, scalars={"merged_max_diff": 3.1e-07, "checkpoint": path, "rank": 4})
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        view._show(result)
        await pilot.pause()
        view.query_one("#ex-figures").scroll_visible(animate=False)
        await pilot.pause()
        table, lines = view.query_one("#ex-table", DataTable), screen_lines(app)
        shown = "\n".join(lines)
        assert table_cells(app, lines) == [] and not cut_numbers(lines, SMALL[0]), shown
        r = table.region
        rows = [line[r.x:r.right] for line in lines[r.y:r.bottom]]
        start = next(i for i, line in enumerate(rows) if "checkpoint" in line)
        pieces = [line.split("checkpoint", 1)[-1].strip() for line in rows[start:start + 4]]
        assert "".join(pieces).startswith(path) and len(pieces[0]) < len(path), shown
        await pilot.resize_terminal(160, 40)
        await pilot.pause()
        await pilot.pause()
        assert any(path in line for line in screen_lines(app)), "\n".join(screen_lines(app))


async def test_arrows_from_the_list_turn_a_wide_table_a_column_at_80x24():
    """The table sits many Tabs from the list; its › mark points right, and → (focus in the list, where arrows
    sideways did nothing) brings the hidden columns, ← takes them back. The experiment picked stays."""
    from textual.widgets import DataTable

    from tui_lab.app.widgets.marked_table import MORE_LEFT

    table = Table("wide", ["value"] + [f"column {i}" for i in range(9)])
    table.rows = [[f"row {r}"] + [round(0.1 + r + i / 7, 4) for i in range(9)] for r in range(4)]
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SMALL) as pilot:
        view = await open_view(pilot)
        picked = view.selected
        view._show(Result("wide", {}, tables={"wide": table}))
        view.query_one("#ex-figure", Select).value = "table:wide"
        await pilot.pause()
        view.home().focus()
        shown = view.query_one("#ex-table", DataTable)
        assert shown.hidden_sides() == (False, True)
        await pilot.press("right")
        await pilot.pause()
        assert shown.scroll_x > 0 and view.selected == picked
        view.query_one("#ex-figures").scroll_visible(animate=False)
        await pilot.pause()
        lines = screen_lines(app)
        assert table_cells(app, lines) == [] and MORE_LEFT in "\n".join(lines), "\n".join(lines)
        await pilot.press("left")
        await pilot.pause()
        assert shown.scroll_x == 0 and shown.hidden_sides() == (False, True)

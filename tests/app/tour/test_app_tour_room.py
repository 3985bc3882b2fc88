"""Tour pages use their room, read from the rendered screen: at 80x24 the post-LN diagram's foot is reached by
keys, with a scrollbar beside it (issue 36 item 10); at 160x48 the first page's word labels are whole
(item 20: "stre…", "empt…" with half the screen empty)."""

from __future__ import annotations

from app_support import app_for, screen_lines, screen_text, wait_for, wait_ready
from app_tour_support import go_to, open_tour

from tui_lab.app.views.tour.visuals import NormDiagrams

FOOT = "then a final norm"  # the pre-LN block's last line, under the post-LN layer's last norm


async def test_the_norm_diagrams_scroll_by_keys_at_80x24():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        tour = await open_tour(pilot)
        await go_to(pilot, tour, 5)
        await wait_for(pilot, lambda: bool(app.query(NormDiagrams)) and "post-LN: LN" in screen_text(app))
        diagrams = app.query_one(NormDiagrams)
        assert FOOT not in screen_text(app)  # below the fold at this size
        assert diagrams.show_vertical_scrollbar and diagrams.scrollbar_size_vertical >= 1
        assert diagrams.styles.scrollbar_color != diagrams.styles.scrollbar_background
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: FOOT in screen_text(app), timeout=10)
        await pilot.press("home")
        await wait_for(pilot, lambda: FOOT not in screen_text(app) and "post-LN: LN" in screen_text(app), 10)
        for _ in range(12):
            await pilot.press("down")
        await wait_for(pilot, lambda: FOOT in screen_text(app), timeout=10)
        assert tour.step == 5  # the keys scrolled; the page stayed


async def test_the_first_pages_word_labels_are_whole_at_160x48():
    app = app_for()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        await open_tour(pilot)
        await pilot.pause(0.3)
        lines = screen_lines(app)
        header = [line for line in lines if "The" in line and "were" in line]
        assert header, "\n".join(lines)
        for line in header:
            assert "…" not in line and "streets" in line and "empty." in line, line
        assert "attention: 1 step, all pairs at once" in "\n".join(lines)  # the second grid, under the first

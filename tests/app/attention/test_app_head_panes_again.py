"""The Attention view's head panes at 80x24, read from the rendered screen (issue 36's crawler): a, d and j on
the text whose result is drawn say so at once, in one line naming what to change, instead of running again unseen;
the pane's summary line stays on the pane with the inside-one-head box open (it pushed it off, and PageUp/Home did
not bring it back); c and m over a head pane take its place. Each panel's answer fits one line at 80 columns."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, screen_text, wait_for, wait_ready

from tui_lab.app.views.attention.head_detectors import HeadDetectors
from tui_lab.app.views.attention.head_effects import HeadEffects
from tui_lab.app.views.generate.lens_panel import LensPanel
from tui_lab.app.views.generate.patch_panel import PatchPanel
from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.mechanism_panel import MechanismPanel

SUMMARY_ROOM = 76  # columns of a panel's summary line at 80 columns, with a margin


@pytest.fixture(autouse=True)
def one_thread(monkeypatch, tmp_path):
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "1")  # no thread-count measurement inside a test
    monkeypatch.setenv("TUI_LAB_EXPORTS", str(tmp_path))


def _idle(app) -> bool:
    return not any(not w.is_finished for w in app.workers)


def _line_with(app, text: str) -> str | None:
    """The screen line that holds `text` whole, or None."""
    return next((line for line in screen_lines(app) if text in line), None)


async def _attention(pilot) -> None:
    await wait_ready(pilot)
    await pilot.press("2")
    view = pilot.app.view("attention")
    await wait_for(pilot, lambda: view.is_mounted and view.grids and _idle(pilot.app), 60)
    await pilot.pause(0.2)


@pytest.mark.parametrize("panel", [HeadEffects, HeadDetectors, LensPanel, PatchPanel, MechanismPanel])
def test_each_panels_answer_names_its_input_in_one_line_at_80_columns(panel):
    for key in "rjad":
        text = panel.SAME.format(key=key) if panel is not HeadEffects else None
        if text is not None:
            assert len(text) <= SUMMARY_ROOM, text
    assert "i or Tab" not in LensPanel.SAME and "prompt" in LensPanel.SAME  # the Generate prompt, lensed with l
    assert "model" in HeadDetectors.SAME  # the scores read random tokens: only a new model changes them


async def test_a_d_j_on_the_text_drawn_say_so_with_the_inside_head_box_open_at_80x24():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await _attention(pilot)
        await pilot.press("c")  # inside one head: at 80x24 it stands in the grid's place
        await wait_for(pilot, lambda: "inside head" in screen_text(app))
        await pilot.press("a")
        effects = app.query_one(HeadEffects)
        await wait_for(pilot, lambda: effects.result is not None and _idle(app), 60)
        await wait_for(pilot, lambda: "mean ablation" in screen_text(app))  # the summary on the pane, not off it
        assert "inside head" not in screen_text(app)  # the box goes with the grid it explains
        first = effects.result

        await pilot.press("a")  # the same text: said at once, in one line, not run again
        said = "a: the ablation shown is this text's already; edit the text (Tab), then a"
        await wait_for(pilot, lambda: _line_with(app, said) is not None, 10)
        assert effects.result is first and not effects.running
        await pilot.press("r")  # the pane's own Run: the same answer, naming a
        await wait_for(pilot, lambda: _line_with(app, said.replace("a:", "r:", 1)) is not None, 10)
        assert effects.result is first

        await pilot.press("d")  # another measurement: runs
        await wait_for(pilot, lambda: effects.result is not first and effects.result is not None and _idle(app), 60)
        await wait_for(pilot, lambda: "direct logit attribution" in screen_text(app))
        await pilot.press("d")
        said = "d: the attribution shown is this text's already; edit the text (Tab), then d"
        await wait_for(pilot, lambda: _line_with(app, said) is not None, 10)

        await pilot.press("j")
        detectors = app.query_one(HeadDetectors)
        await wait_for(pilot, lambda: detectors.result is not None and _idle(app), 60)
        await wait_for(pilot, lambda: "random tokens repeated" in screen_text(app))  # #detect-summary on screen
        scores = detectors.result
        await pilot.press("j")
        said = HeadDetectors.SAME.format(key="j")
        await wait_for(pilot, lambda: _line_with(app, said) is not None, 10)
        assert detectors.result is scores and not detectors.running

        await pilot.press("escape")  # the grids' place back, and the inside-head box in it
        await wait_for(pilot, lambda: "inside head" in screen_text(app))
        assert "query ↑↓" in screen_text(app)  # its hint, its arrows
        assert app.focused is app.query_one("#att-inside")

        app.query_one("#att-src").value = "the cat sat on the mat"
        await pilot.press("a")  # new text: measured
        await wait_for(pilot, lambda: effects.result is not None and effects.result is not first and _idle(app), 60)
        assert "on 7 tokens" not in " ".join(screen_text(app).split())


async def test_c_and_m_over_a_head_pane_take_its_place_at_80x24():
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await _attention(pilot)
        await pilot.press("a")
        effects = app.query_one(HeadEffects)
        await wait_for(pilot, lambda: effects.result is not None and _idle(app), 60)
        await pilot.press("c")  # it opened under the pane and pushed the pane's summary off
        await wait_for(pilot, lambda: "inside head" in screen_text(app))
        assert not effects.has_class("-shown") and "mean ablation" not in screen_text(app)
        await pilot.press("c")  # back to the grid
        await wait_for(pilot, lambda: "inside head" not in screen_text(app))
        await pilot.press("j")
        detectors = app.query_one(HeadDetectors)
        await wait_for(pilot, lambda: detectors.result is not None and _idle(app), 60)
        await pilot.press("m")  # every layer x head, in the pane's place (it toggled the gallery unseen under it)
        await wait_for(pilot, lambda: app.query_one("#att-model").display)
        await pilot.pause(0.2)
        _, layer, head = app.view("attention").choice()
        gallery = app.query_one("#att-model")  # its legend names its cursor's tile: the picked layer and head
        tile = f"L{layer} H{head if head >= 0 else gallery.cursor[1]} "
        assert "random tokens repeated" not in screen_text(app) and tile in screen_text(app)


async def test_the_keys_named_act_with_a_pickers_menu_open_at_80x24():
    """With a picker's menu open the letters went to the menu (type-to-search; on gpt2-toy's head menu no choice
    starts with e): `e`, named on the hint line ("e JSON"), exported nothing, a dead press (the long tier). They
    reach the view's keys now: e exports, r on the text drawn says so."""
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await _attention(pilot)
        await pilot.press("shift+tab", "enter")  # the head picker's menu
        await wait_for(pilot, lambda: app.query_one("#att-head").expanded)
        await pilot.pause(0.2)
        assert "e JSON" in screen_text(app) and "Run r" in screen_text(app)
        footer = screen_lines(app)[-1]  # Esc for the menu, and room for q quit: k, l and h leave it meanwhile
        assert "esc" in footer and "q quit" in footer and "k grid" not in footer, footer
        notes = len(app._notifications)
        await pilot.press("e")
        await wait_for(pilot, lambda: any("grid written to" in n.message for n in list(app._notifications)[notes:]))
        await pilot.press("r")
        await wait_for(pilot, lambda: "the grids shown are this text's already" in screen_text(app), 10)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "k grid" in screen_lines(app)[-1])  # the menu closed: the pickers' keys back


async def test_a_on_an_empty_sentence_is_refused_and_leaves_the_grid_and_its_keys():
    """`a` on an empty sentence hid the grids, showed no pane and left the focus nowhere: every key of the view was
    dead after it (the crawler's random walk). It is refused with the grid and its keys where they were."""
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await _attention(pilot)
        app.query_one("#att-src").value = ""
        grid = app.query_one("#att-map")
        notes = len(app._notifications)
        await pilot.press("a")
        await wait_for(pilot, lambda: any("empty" in n.message for n in list(app._notifications)[notes:]))
        await pilot.pause(0.2)
        assert grid.display and app.focused is grid and "query [0]" in screen_text(app)
        await pilot.press("k")  # the view's keys still act
        await wait_for(pilot, lambda: "mask" in screen_text(app))


async def test_enter_on_a_detected_head_while_the_grids_are_captured_anew_opens_it_when_they_arrive(monkeypatch):
    """The crawler's long tier (seed 23): the live model changed with the detectors table shown; the table stays while
    the detectors measure the new model and the grids are captured anew, and Enter on its L2H1 set a layer the
    emptied picker lacked (a traceback: InvalidSelectValueError). It now opens that head when the grids arrive. The
    new model's capture is held until Enter is in, so the case does not hang on the machine's speed."""
    import threading

    from tui_lab import load_preset
    from tui_lab.app.views.attention import jobs

    held, release = threading.Event(), threading.Event()
    capture_job = jobs.capture_job

    def holding(live, inputs, post):
        job, doing = capture_job(live, inputs, post)
        if live.config.name != "gpt2-toy":
            return job, doing

        def run():
            held.set()
            release.wait(60)
            job()
        return run, doing

    monkeypatch.setattr(jobs, "capture_job", holding)
    app = app_for()
    async with app.run_test(size=(100, 30)) as pilot:
        await _attention(pilot)
        await pilot.press("j")
        detectors = app.query_one(HeadDetectors)
        await wait_for(pilot, lambda: detectors.result is not None and _idle(app), 60)
        view = app.view("attention")
        l2h1 = next(i for i, r in enumerate(detectors.rows) if (r["layer"], r["head"]) == (2, 1))
        detectors.grid.move_cursor(row=l2h1)
        app.rebuild_model(load_preset("gpt2-toy"))  # another model: the grids are captured again
        await wait_for(pilot, lambda: held.is_set(), 60)
        await wait_for(pilot, lambda: detectors.result is not None, 60)  # the new model's table
        at = detectors.rows[detectors.grid.cursor_row]
        assert (at["layer"], at["head"]) == (2, 1)  # the cursor kept its head through the new scores
        await pilot.press("enter")
        await wait_for(pilot, lambda: "L2H1: its grid opens when" in screen_text(app), 10)
        release.set()
        await wait_for(pilot, lambda: view.grids and view.choice() == ("decoder-self", 2, 1), 60)
        assert app.is_running


async def test_coming_back_to_the_view_gives_the_pane_on_screen_the_keys_at_80x24():
    """With the attribution pane in the grid's place, 6 then 2 focused the grid under the pane: z and # then
    changed the hidden grid and the screen not at all (the crawler's random walk, `d 6 2 z`)."""
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await _attention(pilot)
        await pilot.press("d")
        effects = app.query_one(HeadEffects)
        await wait_for(pilot, lambda: effects.has_class("-shown") and _idle(app) and "direct logit" in screen_text(app))
        for key in "62":
            await pilot.press(key)
            await pilot.pause(0.3)
        assert app.focused is effects.grid
        before = screen_text(app)
        await pilot.press("z")
        await pilot.pause(0.3)
        assert screen_text(app) != before  # the 4x4 head grid drawn dense


async def test_the_grids_z_and_hash_act_with_the_focus_off_the_grid():
    """The hint line names z and # while a picker or the Run button has the focus: they acted on the grid only when
    it had the focus (the long tier's walk at 100x30: z named and bound nowhere)."""
    app = app_for()
    async with app.run_test(size=(100, 30)) as pilot:
        await _attention(pilot)
        grid = app.query_one("#att-map", Heatmap)
        app.query_one("#att-run").focus()
        await pilot.pause()
        dense, numbers = grid.dense, grid.numbers
        await pilot.press("z")
        assert grid.dense != dense
        await pilot.press("number_sign")
        assert grid.numbers != numbers


async def test_a_as_its_answer_runs_out_shows_something_on_the_screen():
    """The long tier's English 100x30 walk at f80c0fe (seed 223875204): `a` on the ablation drawn came as the
    answer's four seconds ran out, before the screen had shown the line back; the answer said again left every
    row as it was and no notification came."""
    app = app_for()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await _attention(pilot)
        await pilot.press("a")
        effects = app.query_one(HeadEffects)
        await wait_for(pilot, lambda: effects.result is not None and _idle(app), 60)
        await pilot.press("a")
        said = "a: the ablation shown is this text's already"
        await wait_for(pilot, lambda: _line_with(app, said) is not None, 10)
        before = screen_lines(app)
        effects.answer.timer.stop()
        effects.answer._back()  # the answer's time is up, and the key comes before the screen showed it
        await pilot.press("a")
        await pilot.pause(0.3)
        assert screen_lines(app) != before
        assert any("already shown" in line for line in screen_lines(app))

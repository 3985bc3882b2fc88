"""The Architecture view mounts in parts (issue 23: its ~270 widgets at once took 2-3 s beside a busy CPU, and
every key waited): the form's first rows and the Summary with the view, the lower rows and the other tabs
after. Keys and commands that reach a part before it exists wait for it or act on what it will hold."""

from __future__ import annotations

import dataclasses

from app_support import app_for, screen_lines, wait_for
from textual.widgets import Input

from tui_lab.app.views.architecture.analysis import ArchitectureResults
from tui_lab.app.views.architecture.config_form import FIRST_ROWS, FORM_FIELDS, NUMBER_AXES
from tui_lab.presets import load_preset


async def _view_in_parts(pilot):
    app = pilot.app
    await wait_for(pilot, lambda: bool(app.query("#view-architecture #form")))
    view = app.view("architecture")
    assert view.fields_pending  # the test reaches the view while its lower rows are still to come
    return view


async def test_a_tab_typed_before_the_lower_rows_exist_lands_on_the_field_it_names():
    app = app_for("--preset", "gpt2-toy", build=False)
    target = NUMBER_AXES[0]  # the first text box below the first rows: Tab stops = fields between
    tabs = FORM_FIELDS.index(target) - 1
    assert FORM_FIELDS.index(target) >= FIRST_ROWS
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _view_in_parts(pilot)
        await pilot.press("i", *["tab"] * tabs, "7")
        await wait_for(pilot, lambda: not view.fields_pending)
        field = app.query_one(f"#f-{target}", Input)
        await wait_for(pilot, lambda: app.focused is field and field.value.endswith("7"))
        others = {n: app.query_one(f"#f-{n}").value for n in FORM_FIELDS if n != target}
        base = load_preset("gpt2-toy")
        assert all(str(v) == str(getattr(base, n)) for n, v in others.items())  # no key went elsewhere


async def test_a_preset_loaded_while_rows_mount_fills_every_row():
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _view_in_parts(pilot)
        want = load_preset("moe-toy")
        assert view.form_config == load_preset("gpt2-toy")  # rows not there yet read as the loaded config
        view.load_preset("moe-toy")
        await wait_for(pilot, lambda: not view.parts_pending)
        await pilot.pause()
        shown = {n: app.query_one(f"#f-{n}").value for n in FORM_FIELDS}
        assert {n: str(v) for n, v in shown.items()} == {n: str(getattr(want, n)) for n in FORM_FIELDS}
        assert view.form_config == dataclasses.replace(want)


async def test_a_tab_opened_before_its_contents_mount_shows_them_and_the_form_validates_once():
    app = app_for("--preset", "gpt2-toy", build=False)
    drawn = []
    draw = ArchitectureResults._draw

    def counting(self, config):
        drawn.append(config)
        draw(self, config)

    ArchitectureResults._draw = counting
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            view = await _view_in_parts(pilot)
            view.show_tab("arch-compare")
            await wait_for(pilot, lambda: any("▕ params " in line for line in screen_lines(app)))  # Compare's rows
            await wait_for(pilot, lambda: not view.parts_pending)
            # Each editor reports its first value as it mounts: that was ~40 analysis redraws, each counting the model.
            assert len(drawn) <= 4, drawn
    finally:
        ArchitectureResults._draw = draw

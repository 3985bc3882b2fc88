"""Typing never triggers a shortcut: in every Input of every view, letters and digits are text; Enter in the
Generate prompt generates and keeps focus in the prompt (entered with i: the view opens on its completion)."""

from __future__ import annotations

import pytest
from app_keys_support import TYPED, _type
from app_support import app_for, view_mounted, wait_for, wait_ready
from textual.widgets import Input, TabbedContent

from tui_lab.app.app import VIEWS


async def test_enter_in_the_prompt_generates_and_keeps_focus():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f5", "i")
        prompt = app.query_one("#gen-prompt", Input)
        await wait_for(pilot, lambda: app.focused is prompt)
        view, theme = app.view("generate"), app.theme
        await pilot.press("enter")
        await wait_for(pilot, lambda: view.job == 1)
        assert app.focused is prompt
        prompt.value = ""
        await _type(pilot, TYPED)
        await wait_for(pilot, lambda: not view.running)
        assert prompt.value == TYPED and app.focused is prompt
        assert app.theme == theme and app.query_one("#views", TabbedContent).active == "generate"
        assert app.return_code is None


# The views in two groups, each in its own app: the longest test of the suite in halves that the two CI workers
# run side by side. Each group names the fields it must have reached.
GROUPS = {("architecture", "tour", "experiments"): {"f-d_model", "shape-seq"},
          ("attention", "train", "generate", "speed"): {"gen-prompt", "tf-steps", "tf-folder", "sp-prompt"}}


def test_the_groups_cover_every_view():
    assert sorted(view for group in GROUPS for view in group) == sorted(spec.id for spec in VIEWS)


@pytest.mark.parametrize("group", list(GROUPS), ids=["forms", "the-rest"])
async def test_typing_in_any_input_of_any_view_is_text(group):
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        for spec in VIEWS:
            await view_mounted(pilot, spec.id)
        theme, checked = app.theme, []
        for spec in (spec for spec in VIEWS if spec.id in group):
            app.show_view(spec.id)
            await pilot.pause()
            for field in app.view(spec.id).query(Input):
                if not field.display or not field.parent.display or field.disabled:
                    continue
                before = field.value
                field.focus()
                await pilot.pause()
                field.value = ""
                await _type(pilot, TYPED)
                # every key typed as text; a field's cap (max_length, or a fixed width's word rule) keeps the head
                capped = bool(field.max_length or field.restrict)
                assert field.value == TYPED or capped and field.value and TYPED.startswith(field.value), field.id
                assert app.query_one("#views", TabbedContent).active == spec.id, field.id
                assert app.theme == theme and app.return_code is None, field.id
                field.value = before
                checked.append(field.id)
        assert GROUPS[group] <= set(checked)

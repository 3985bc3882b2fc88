"""Property: whatever is typed into a field of the Architecture form, the app lives on and either shows the
exact count of the config typed or a one-line rule beside the field, with Apply held back.

The app runs without building a model (no torch); Pilot types key by key, as a person would, and the
expected outcome is computed here from the config module alone.
"""

from __future__ import annotations

import asyncio
import dataclasses

from app_support import app_for, view_mounted, wait_for
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from textual.widgets import Button, Input, Label, Static

from tui_lab.analysis import count_params
from tui_lab.app.views.architecture.config_form import FORM_FIELDS, TEXT_FIELDS, ConfigForm
from tui_lab.config import parse_value
from tui_lab.presets import load_preset

# Typable characters (no control codes, no unassigned or private code points: a keyboard cannot send them).
TYPED = st.characters(exclude_categories=("Cc", "Cs", "Cn", "Co"))
TEXTS = st.one_of(st.integers(-10, 5000).map(str), st.sampled_from(["0.5", "1e3", "nan", "inf", "-0", "08", "64 "]),
                  st.text(TYPED, max_size=6))


def expected_config(field: str, text: str):
    """The config the form should accept for `text` in `field` of gpt2-toy, or None if it must refuse it."""
    try:
        return dataclasses.replace(load_preset("gpt2-toy"), **{field: parse_value(field, text)})
    except ValueError:
        return None


async def type_into(pilot, field: str, text: str) -> str:
    app = pilot.app
    form = app.query_one(ConfigForm)
    form.load(load_preset("gpt2-toy"))  # every example starts from the same form
    await pilot.pause()
    box = app.query_one(f"#f-{field}", Input)
    box.focus()
    box.value = ""
    await pilot.press(*text)
    await pilot.pause()
    assert app.is_running and app.return_code is None  # no key quit or killed the app
    typed = box.value  # what the field holds is what the form validates
    expected = expected_config(field, typed)
    apply = app.query_one("#apply", Button)
    if expected is None:
        shown = [str(app.query_one(f"#e-{name}", Label).render()) for name in FORM_FIELDS]
        shown = [line for line in shown if line]
        assert form.errors and shown and apply.disabled, (typed, form.errors)
        assert all(len(line.splitlines()) == 1 for line in shown), shown
        return "refused"
    assert not form.errors and not apply.disabled, (typed, form.errors)
    total = str(app.query_one("#arch-total", Static).render())
    assert f"{count_params(expected).total:,}" in total, (typed, total)
    return "accepted"


async def test_any_text_in_a_field_is_counted_or_refused_in_one_line():
    # One app for every example (an app takes seconds to start here): Hypothesis runs in a thread and
    # hands each example to the app's event loop, where Pilot types it.
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:  # the app's own size; a bigger screen only costs renders
        # Every row of the form in first: a load() into a Select not yet composed raised NoMatches (#label) on
        # the first example of a loaded machine, and the rerun cost the whole test again.
        view = await view_mounted(pilot, "architecture")
        await wait_for(pilot, lambda: not view.parts_pending)
        await pilot.pause()
        loop = asyncio.get_running_loop()

        @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(field=st.sampled_from(TEXT_FIELDS), text=TEXTS)
        def example(field: str, text: str) -> None:
            event(asyncio.run_coroutine_threadsafe(type_into(pilot, field, text), loop).result(timeout=60))

        await asyncio.to_thread(example)

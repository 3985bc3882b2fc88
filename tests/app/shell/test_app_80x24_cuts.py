"""Nothing cut silently at 80x24: the Train form's checkbox label, the Attention title line, the Train footer.

Each test reads the RENDERED screen (what a person sees), not the widgets' fields."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from app_train_support import train_view
from screen_reader import ELLIPSIS, shows
from textual.widgets import Select, TabbedContent

from tui_lab.app.app import VIEWS
from tui_lab.app.views.attention.grids import KIND_TITLES, SHORT_KINDS, fit_title
from tui_lab.app.widgets.toggle import OnOffCheckbox

SIZE = (80, 24)


def _line_with(app, words: str) -> str:
    return next(line for line in screen_lines(app) if words in line)


async def test_train_checkbox_label_is_whole_at_80x24():
    app = app_for("--preset", "transformer-2017-toy", build=False)
    async with app.run_test(size=SIZE) as pilot:
        await train_view(pilot)
        label = str(app.query_one("#tf-continue", OnOffCheckbox).label)
        assert label in _line_with(app, label[:8]), label


async def test_train_footer_keeps_every_view_key_and_quit_and_the_hidden_keys_still_work():
    app = app_for("--preset", "transformer-2017-toy", build=False)
    async with app.run_test(size=SIZE) as pilot:
        train = await train_view(pilot)
        # The footer recomposes a frame after the view's keys change (later on a loaded machine).
        await wait_for(pilot, lambda: "q quit" in screen_lines(app)[-1])
        footer = screen_lines(app)[-1]
        assert "f1 f2 f3 f4 f5 f6 f7 views" in footer and "q quit" in footer, footer
        assert "g start  p pause" in footer  # the view's own first keys stay on the footer
        # n, x and w left the footer (their buttons name them) but still answer: w says why it cannot save (n
        # is dimmed with its button until a run is paused: tests/app/train/test_app_train_step_key.py)
        said = [str(n.message) for n in app._notifications]
        await pilot.press("w")
        await wait_for(pilot, lambda: [str(n.message) for n in app._notifications] != said)
        keys = {b.binding.key for b in app.active_bindings.values()}
        assert {"n", "x", "w", "o", "c", "v"} <= keys
        assert not train.training
        # the other views with keys of their own fit too
        for key in ("f1", "f2", "f3", "f6", "f7"):
            await pilot.press(key)
            shown = VIEWS[int(key[1:]) - 1].id  # a loaded machine switches a turn late
            await wait_for(pilot, lambda v=shown: app.query_one("#views", TabbedContent).active == v)
            await wait_for(pilot, lambda: "q quit" in screen_lines(app)[-1])
            footer = screen_lines(app)[-1]
            assert "f1 f2 f3 f4 f5 f6 f7 views" in footer and "q quit" in footer, (key, footer)


def _title_line(app, lead: str) -> str:
    return next(line.strip() for line in screen_lines(app) if line.strip().startswith(f"{lead} · "))


async def test_attention_title_fits_or_ends_in_an_ellipsis_at_80x24():
    app = app_for()  # the shipped toy: its weights drew the grid, so the title starts with "shipped toy"
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("f2")
        view = app.view("attention")
        await wait_for(pilot, lambda: view.captured_generation >= 1 and bool(view.grids), 60)
        await pilot.pause()
        kind, layer, head = view.choice()
        assert kind == "decoder-self" and head >= 0
        line = _title_line(app, "shipped toy")
        # the numbers the pickers do not show are on screen: size and entropy, after layer and head
        assert f"layer {layer} · head {head} · " in line and line.endswith(" nats"), line
        assert line.startswith(f"shipped toy · {SHORT_KINDS[kind]} · ")  # the picker above names it in full
        # the mean of the heads does not fit in 78 columns: its end is cut with an ellipsis, never silently
        view.query_one("#att-head", Select).value = -1
        await wait_for(pilot, lambda: "mean of heads" in _title_line(app, "shipped toy"))
        line = _title_line(app, "shipped toy")
        whole = f"shipped toy · {view.current_spec().title}".replace(KIND_TITLES[kind], SHORT_KINDS[kind])
        assert line.endswith(ELLIPSIS) and shows(whole, line), line
        # wide enough, the whole title with the kind's full name
        await pilot.resize_terminal(140, 24)
        await pilot.pause()
        assert _title_line(app, "shipped toy") == f"shipped toy · {view.current_spec().title}"


def test_fit_title_keeps_the_whole_then_shortens_the_kind_then_cuts():
    title = f"trained here · {KIND_TITLES['cross']} · layer 1 · head 0 · 5 x 6 · entropy 1.20 nats"
    assert fit_title(title, "cross", len(title)) == title
    assert fit_title(title, "cross", 0) == title  # not laid out yet
    short = fit_title(title, "cross", len(title) - 1)
    assert short == "trained here · cross-attention · layer 1 · head 0 · 5 x 6 · entropy 1.20 nats"
    cut = fit_title(title, "cross", 40)
    assert len(cut) <= 40 and cut.endswith(ELLIPSIS) and short.startswith(cut[:-1])
    assert fit_title("mask: causal (1 = may attend)", "mask-causal", 10) == "mask…"  # at a space (issue 25)
    assert fit_title("layer 0 · entropy 1.75 nats", "x", 20) == "layer 0 · entropy…"  # never "entropy 1.7…"

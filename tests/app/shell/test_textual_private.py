"""Each private name of Textual that tui_lab/app/textual_private.py relies on still exists with the shape it uses.

A Textual release that renames or reshapes one fails here, naming it, and nothing else has to be searched: the
rest of the app uses no private name (tests/project/test_textual_private_sites.py). Written for Textual 8.2.
"""

from __future__ import annotations

import importlib
import inspect

import pytest
from textual import events
from textual.app import App
from textual.widgets import Button, Input, TabbedContent


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_the_xterm_parser_and_the_drivers_that_build_it():
    parser = importlib.import_module("textual._xterm_parser").XTermParser
    method = parser._sequence_to_key_events
    assert _parameters(method) == ["self", "sequence", "alt"]
    assert inspect.signature(method).parameters["alt"].default is False
    for name in ("textual.drivers.linux_driver", "textual.drivers.linux_inline_driver"):
        assert hasattr(importlib.import_module(name), "XTermParser"), f"{name} no longer names XTermParser"


def test_the_scrollbar_decision_it_asks_for_again():
    from textual.widget import Widget

    assert _parameters(Widget._refresh_scrollbars) == ["self"]
    assert "self.virtual_size.height > height" in inspect.getsource(Widget._refresh_scrollbars)


def test_the_scroll_view_size_update_it_extends():
    """SizeHookScrollView calls `size_set` after Textual's own size update, when `_size` has changed."""
    from textual.scroll_view import ScrollView

    assert _parameters(ScrollView._size_updated) == ["self", "size", "virtual_size", "container_size", "layout"]
    source = inspect.getsource(ScrollView._size_updated)
    assert "self._size = size" in source and "self._scroll_update(" in source


def test_the_app_hooks_it_overrides():
    assert _parameters(App._handle_exception) == ["self", "error"]
    assert inspect.iscoroutinefunction(App._on_exit_app) and _parameters(App._on_exit_app) == ["self"]
    assert _parameters(App._display) == ["self", "screen", "renderable"]  # LabAppBase counts the frames there
    assert _parameters(App.update_styles) == ["self", "node", "animate"]
    # LabAppBase skips restyling a widget not registered yet: registering one must apply the stylesheet to it
    assert "apply_stylesheet(widget" in inspect.getsource(App._register)


async def test_a_class_set_before_mount_is_styled_once_mounted():
    """A widget composed `compact` (its class set before it is registered, where LabAppBase skips the restyle)
    is styled as one whose class was set after it mounted."""
    from tui_lab.app.textual_private import LabAppBase

    class Probe(LabAppBase):
        def compose(self):
            yield Input("a", id="early", compact=True)
            yield Input("b", id="late")
            yield Button("c", id="button", compact=True)

    app = Probe()
    async with app.run_test() as pilot:
        early, late = app.query_one("#early", Input), app.query_one("#late", Input)
        late.compact = True
        await pilot.pause()
        assert early.has_class("-textual-compact") and app.query_one("#button").has_class("-textual-compact")
        assert early.styles.border == late.styles.border and early.styles.height == late.styles.height
        assert early.styles.height.value == 1  # compact: no border, one row


def test_the_tab_bar():
    module = importlib.import_module("textual.widgets._tabbed_content")
    assert callable(module.ContentTab.add_prefix)
    assert issubclass(module.ContentTabs, importlib.import_module("textual.widgets").Tabs)
    assert _parameters(TabbedContent._on_tab_pane_focused) == ["self", "event"]


async def test_the_private_state_it_reads():
    app = App()
    async with app.run_test():
        assert app._running is True and list(app._screen_stack) == app.screen_stack
        assert app.screen in app._registry and Button() not in app._registry  # LabAppBase.update_styles
    key = events.Key("x", "x")
    assert key._stop_propagation is False
    key.stop()
    assert key._stop_propagation is True


@pytest.mark.parametrize("name", ["no_screens", "app_running", "key_stopped", "install_parser"])
def test_the_module_offers_each_read(name):
    from tui_lab.app import textual_private

    assert callable(getattr(textual_private, name))


def test_the_tests_own_shortcuts_fit_this_textual():
    """tests/conftest.py replaces three private functions of Textual for the tests' time (each parse of the same
    CSS, Pilot's wait on every widget, its idle wait on every thread) and leaves Textual as it is when the shape it
    copies has changed: a release that changes one fails here, where the suite would only have got slower."""
    import textual.app as textual_app
    import textual.pilot as textual_pilot
    from textual.css.stylesheet import Stylesheet
    from textual.pilot import Pilot

    assert Stylesheet._parse_rules.__qualname__ == "_share_parsed_css.<locals>.shared"
    assert Pilot._wait_for_screen.__qualname__ == "_cheaper_pilot_waits.<locals>._wait_for_screen"
    for module in (textual_app, textual_pilot):  # Pilot's press and pause wait on the event loop's thread only
        assert module.wait_for_idle.__qualname__ == "_loop_idle_waits.<locals>.wait_for_idle", module.__name__


async def test_the_screen_strips_read_from_the_compositor():
    """tui_lab/app/textual_private.screen_strips: the screen's compositor and its render_strips, one Strip a row."""
    from textual.widgets import Label

    from tui_lab.app.textual_private import screen_strips

    class One(App):
        def compose(self):
            yield Label("hello there")

    app = One()
    async with app.run_test(size=(30, 4)) as pilot:
        await pilot.pause()
        rows = screen_strips(app.query_one(Label))
        assert len(rows) == 4 and rows[0].text.startswith("hello there") and rows[0].cell_length == 30

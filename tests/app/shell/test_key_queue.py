"""The app's key queue: keys wait their turn; view keys held back to back collapse to the last one."""

from textual import events

from tui_lab.app.shell.key_queue import KeyQueue


def test_view_keys_back_to_back_collapse_and_typed_keys_never_do():
    queue = KeyQueue(collapsible=frozenset({"f1", "f2", "f3"}))
    keys = [events.Key(name, None) for name in ("f1", "f2", "f3", "1", "2", "f1", "f2", "a")]
    queue.open = True
    assert not queue.hold(keys[0])  # nothing in flight: it goes at once
    queue.in_flight = keys[0]
    assert all(queue.hold(key) for key in keys[1:])
    assert [key.key for key in queue.held] == ["f3", "1", "2", "f2", "a"]

"""Keep the app alive: an exception in a handler becomes a notification, never a crash."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from tui_lab.errors import one_line


def guarded(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a widget method (sync or async) so that any error is shown with `notify` and swallowed."""
    if inspect.iscoroutinefunction(handler):
        @functools.wraps(handler)
        async def run_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(self, *args, **kwargs)
            except Exception as err:  # noqa: BLE001 - the point is to catch everything
                _report(self, err)
        return run_async

    @functools.wraps(handler)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return handler(self, *args, **kwargs)
        except Exception as err:  # noqa: BLE001
            _report(self, err)
    return run


def _report(node: Any, err: Exception) -> None:
    message = one_line(err)
    try:
        node.app.notify(message, title="error", severity="error")
    except Exception:  # noqa: BLE001 - no app (unit tests calling the method directly)
        pass


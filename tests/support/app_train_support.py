"""The Train view driven by Pilot: open it on a small model, start a run paused, step it, stop it."""

from __future__ import annotations

from app_support import view_mounted, wait_for
from textual.widgets import Input

SIZE = (120, 40)


TINY = {"steps": "40", "batch_size": "4", "seq_len": "16", "lr": "0.003"}


async def train_view(pilot, fields: dict[str, str] | None = None, **more: str):
    """The Train view shown, its form filled with TINY (or `fields`) updated by `more`."""
    app = pilot.app
    await view_mounted(pilot, "train")
    app.show_view("train")
    await pilot.pause()
    for name, value in ((TINY if fields is None else fields) | more).items():
        app.query_one(f"#tf-{name}", Input).value = value
    return app.view("train")


async def start_paused(pilot, view) -> None:
    view.action_start(paused=True)
    await wait_for(pilot, lambda: view.session.ready and "params" in view.message, 120)


async def steps(pilot, view, n: int) -> None:
    """`n` single steps (`n`), each waited for, then the 1 Hz redraw."""
    for _ in range(n):
        before = len(view.store.current.train_loss)
        await pilot.press("n")
        await wait_for(pilot, lambda b=before: len(view.store.current.train_loss) > b, 60)
    # The 1 Hz timer's next draw, waited for rather than timed: on a loaded machine a tick comes late, and the
    # loss plot may wait several ticks for its share of the UI thread (dirty until it is drawn).
    drawn = view.monitor.redraws
    await wait_for(pilot, lambda: view.monitor.redraws > drawn and not view.dirty, 60)
    await pilot.pause()


async def stop(pilot, view) -> None:
    view.action_stop()
    await wait_for(pilot, lambda: not view.training, 60)


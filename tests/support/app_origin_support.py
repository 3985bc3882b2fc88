"""A few training steps in the app, so the live model holds learned weights."""

from __future__ import annotations

from app_support import view_mounted, wait_for
from textual.widgets import Input


async def _train_steps(pilot, n: int) -> None:
    """A few optimizer steps in the Train view (step mode), then stop: the trained weights become live."""
    app = pilot.app
    await view_mounted(pilot, "train")
    app.show_view("train")
    await pilot.pause()
    for name, value in {"steps": "40", "batch_size": "4", "seq_len": "16", "lr": "0.003"}.items():
        app.query_one(f"#tf-{name}", Input).value = value
    view = app.view("train")
    view.action_start(paused=True)
    await wait_for(pilot, lambda: view.session.ready and "params" in view.message, 60)
    for _ in range(n):
        before = len(view.store.current.train_loss)
        await pilot.press("n")
        await wait_for(pilot, lambda b=before: len(view.store.current.train_loss) > b, 60)
    await pilot.press("x")
    await wait_for(pilot, lambda: app.live.origin.startswith("trained") and not app.live.building, 60)


"""Train view files: every save and load says where it wrote / what it loaded, or why not; "Save and quit"
stops the run, saves, then quits; the CSV export goes to the exports folder and says so."""

from __future__ import annotations

from pathlib import Path

from app_support import app_for, wait_for
from app_train_support import SIZE, start_paused, steps, train_view
from textual.widgets import Button, Input

from tui_lab.app.modals.quit import QuitWhileTraining


def notes(app, title: str) -> list[str]:
    return [str(n.message) for n in app._notifications if n.title == title]


async def test_every_save_and_load_reports_where(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await train_view(pilot)
        assert app.query_one("#tf-folder", Input).value == "runs/run-1"  # the default, shown and editable
        await start_paused(pilot, view)
        await steps(pilot, view, 2)
        view.action_stop()
        await wait_for(pilot, lambda: app.live.origin.startswith("trained run #1") and not app.live.building)
        where = str((tmp_path / "runs" / "run-1").resolve())
        saves = [lambda: pilot.press("w"), lambda: _press(app, "#tf-save"), lambda: _palette(view, "save")]
        for i, save in enumerate(saves, 1):
            await save()
            await wait_for(pilot, lambda i=i: len(notes(app, "saved")) == i)
            assert where in notes(app, "saved")[-1]
        assert (tmp_path / "runs" / "run-1" / "train_state.json").exists()
        (tmp_path / "a-file").write_text("not a folder")
        app.query_one("#tf-folder", Input).value = "a-file/ckpt"
        await pilot.press("w")
        await wait_for(pilot, lambda: bool(notes(app, "not saved")))
        assert "a-file" in notes(app, "not saved")[0] and "\n" not in notes(app, "not saved")[0]
        await pilot.press("o")  # not a folder: the reason, naming it
        await wait_for(pilot, lambda: any("is not a folder" in n for n in notes(app, "error")))
        app.query_one("#tf-folder", Input).value = "runs/run-1"
        generation = app.live.generation
        await pilot.press("o")
        await wait_for(pilot, lambda: app.live.generation > generation and bool(notes(app, "loaded")))
        assert where in notes(app, "loaded")[0] and "params" in notes(app, "loaded")[0]
        await pilot.press("c")
        await wait_for(pilot, lambda: bool(notes(app, "CSV export")))
        from tui_lab.paths import exports_dir

        assert view.last_export.parent == exports_dir() and str(view.last_export) in notes(app, "CSV export")[0]
        assert not list(tmp_path.glob("*.csv"))  # never in the folder the app was started from


async def test_save_and_quit_stops_saves_and_quits(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await train_view(pilot)
        await start_paused(pilot, view)
        await steps(pilot, view, 1)
        await pilot.press("q")
        assert isinstance(app.screen, QuitWhileTraining)
        await pilot.press("s")
        await wait_for(pilot, lambda: app.return_code is not None, 60)
    assert view.session.ended
    assert (Path(tmp_path) / "runs" / "run-1" / "train_state.json").exists()


async def _press(app, selector: str) -> None:
    app.query_one(selector, Button).press()


async def _palette(view, word: str) -> None:
    [callback] = [cb for title, _, cb in view.palette_commands() if "checkpoint" in title and word in title]
    callback()

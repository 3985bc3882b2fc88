"""The app opens an uncached Hugging Face id with consent: a confirmation (files, total), a cancellable
download with a progress bar, the previous live model kept until the new one is installed.

The Hub is the stand-in of tests/support/hub_server.py; a gate pauses the real fetch at the weights so the test
sees the bar mid-download and can cancel there.
"""

from __future__ import annotations

import threading

import hub_fixtures
import pytest
from app_support import app_for, wait_for, wait_ready
from screen_rules import given_widths
from textual.widgets import Button, DataTable, Input, ProgressBar, Static

from tui_lab.analysis.format import fmt_bytes
from tui_lab.app.modals import download as download_modal
from tui_lab.app.modals.download import DownloadModal
from tui_lab.app.modals.hub_id import HubIdModal
from tui_lab.cli.launch import DEFAULT_PRESET
from tui_lab.hf import hub as hub_module
from tui_lab.hf.hub import locate

# The fixtures of test_hf_hub: a private HF cache (autouse) and the stand-in Hub serving tiny GPT-2 repos.
cache, hub, sources = hub_fixtures.cache, hub_fixtures.hub, hub_fixtures.sources
SIZE = (80, 24)
ID = "tiny-gpt2"
WEIGHTS = "model.safetensors"


class Gate:
    """Wraps the modal's fetch: pauses it once, when the weights start, until the test releases it."""

    def __init__(self, monkeypatch) -> None:
        self.reached, self.release = threading.Event(), threading.Event()
        monkeypatch.setattr(download_modal, "fetch", self.fetch)

    def fetch(self, plan, on_progress, should_stop, *args):
        def progress(p) -> None:
            on_progress(p)
            if p.file == WEIGHTS and p.done > plan.total_bytes - plan.files[-1].size and not self.reached.is_set():
                self.reached.set()
                self.release.wait(20)

        return hub_module.fetch(plan, progress, should_stop, *args)


async def _modal(pilot) -> DownloadModal:
    def listed() -> bool:  # the modal is on the stack a frame before its table is composed
        screen = pilot.app.screen
        return isinstance(screen, DownloadModal) and any(table.row_count for table in screen.query(DataTable))

    await wait_for(pilot, listed)
    return pilot.app.screen


async def test_confirm_then_download_shows_progress_and_installs_the_model(hub, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 4096)  # the weights come in several chunks
    gate = Gate(monkeypatch)
    app = app_for("--from-hf", ID)
    async with app.run_test(size=SIZE) as pilot:
        modal = await _modal(pilot)
        table = modal.query_one(DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        plan = hub_module.plan_download(ID)
        assert rows == [list(row) for row in plan.rows()] + [["total", fmt_bytes(plan.total_bytes)]]
        # the widths come with the rows: a frame before the table measured them drew "file" wide, names cut
        assert given_widths(table) == [max(len(str(row[i])) for row in rows + [["file", "size"]]) for i in (0, 1)]
        assert "5 files" in str(modal.query_one("#hub-summary", Static).render())
        assert hub.fetched() == []  # nothing moves before the person says yes
        await wait_ready(pilot)  # meanwhile the default preset (the shipped English toy) is live
        assert app.live.origin == f"shipped {DEFAULT_PRESET}"

        await pilot.click("#hub-download")
        await wait_for(pilot, gate.reached.is_set)
        await pilot.pause(0.2)
        bar = modal.query_one(ProgressBar)
        assert 0 < bar.progress < bar.total == plan.total_bytes
        assert "4 of 5 files done" in str(modal.query_one("#hub-progress", Static).render())
        gate.release.set()
        await wait_ready(pilot, generation=2)
        assert app.live.origin == f"hf {ID}" and ID in app.sub_title and app.live.tokenizer is not None
        assert not isinstance(app.screen, DownloadModal) and locate(ID) is not None


async def test_cancel_mid_download_keeps_the_previous_live_model(hub, monkeypatch, cache):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 4096)
    gate = Gate(monkeypatch)
    app = app_for("--from-hf", ID, "--download")  # --download skips the question, not the bar or Cancel
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        model = app.live.model
        await wait_for(pilot, gate.reached.is_set)
        modal = app.screen
        assert isinstance(modal, DownloadModal) and modal.query_one("#hub-download", Button).disabled
        await pilot.press("escape")
        assert "cancelling" in str(modal.query_one("#hub-progress", Static).render())
        gate.release.set()
        await wait_for(pilot, lambda: not isinstance(app.screen, DownloadModal))
        await pilot.pause(0.2)
        assert app.live.model is model and app.live.generation == 1 and not app.live.building
        assert "download cancelled" in app.sub_title
        assert locate(ID) is None and not list(cache.rglob("*.incomplete"))


async def test_the_palette_asks_for_an_id_and_a_failure_is_one_line(hub):
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        (command,) = [c for c in app.get_system_commands(app.screen) if c.title == "Open a Hugging Face model..."]
        command.callback()
        await wait_for(pilot, lambda: isinstance(app.screen, HubIdModal) and app.screen.query(Input))
        app.screen.query_one(Input).value = "nobody/nothing"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "no such model" in app.sub_title)
        assert "\n" not in app.sub_title and app.live.origin == f"shipped {DEFAULT_PRESET}"  # kept
        assert not isinstance(app.screen, DownloadModal)

        command.callback()
        await wait_for(pilot, lambda: isinstance(app.screen, HubIdModal) and app.screen.query(Input))
        app.screen.query_one(Input).value = ID
        await pilot.press("enter")
        await _modal(pilot)
        await pilot.click("#hub-download")
        await wait_ready(pilot, generation=2)
        assert app.live.origin == f"hf {ID}"


@pytest.mark.parametrize("argv", [["--from-hf", ID], ["--from-hf", ID, "--download"]])
async def test_a_cached_id_opens_without_asking(hub, argv):
    hub_module.resolve(ID, download=True)
    seen = len(hub.requests)
    app = app_for(*argv)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.live.origin == f"hf {ID}" and app.live.generation == 1
        assert not isinstance(app.screen, DownloadModal) and len(hub.requests) == seen

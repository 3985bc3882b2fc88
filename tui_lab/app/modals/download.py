"""Fetching a model from the Hugging Face Hub, with consent: the files and their size first, then a
progress bar, cancellable at any point.

The list and the bytes come from `tui_lab.hf.hub` in thread workers (the network never blocks the UI);
the workers only post messages. The screen dismisses with a `DownloadOutcome`; the live model is not
touched here (app/hub_open.py loads the fetched folder, so the previous model stays live until then).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Label, ProgressBar, Static

from tui_lab.analysis.format import fmt_bytes
from tui_lab.app.widgets.marked_table import MarkedTable
from tui_lab.app.widgets.table_fill import fill_table
from tui_lab.errors import one_line
from tui_lab.hf.hub import DownloadCancelled, DownloadPlan, Progress, fetch, hub_logs_to, plan_download


@dataclass(frozen=True)
class DownloadOutcome:
    repo_id: str
    folder: Path | None = None  # the complete snapshot in the cache
    error: str | None = None  # one line: why nothing was fetched (or why the fetch stopped)
    cancelled: bool = False


class Planned(Message):
    def __init__(self, plan: DownloadPlan) -> None:
        super().__init__()
        self.plan = plan


class Progressed(Message):
    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress


class Finished(Message):
    def __init__(self, outcome: DownloadOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class DownloadModal(ModalScreen[DownloadOutcome]):
    """Asks the Hub for the file list, shows it with the total, and on Download (or at once with `start`)
    fetches it with a progress bar. Cancel or Escape stops at any point."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    DownloadModal { align: center middle; }
    DownloadModal > Vertical { width: 78; max-width: 100%; height: auto; max-height: 100%; border: thick $accent;
                               background: $surface; padding: 0 1; }
    DownloadModal #hub-title { text-style: bold; }
    DownloadModal DataTable { height: auto; max-height: 12; margin-top: 1; }
    DownloadModal ProgressBar { margin-top: 1; }
    DownloadModal Horizontal { height: auto; margin-top: 1; }
    DownloadModal Button { margin-right: 1; }
    """

    def __init__(self, repo_id: str, allow_pickle: bool = False, start: bool = False) -> None:
        super().__init__()
        self.repo_id, self.allow_pickle, self.start = repo_id, allow_pickle, start
        self.plan: DownloadPlan | None = None
        self.downloading = False
        self._stop = threading.Event()  # read by the fetch between chunks

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Open {self.repo_id} from the Hugging Face Hub", id="hub-title")
            yield Static("asking the Hub which files it has (nothing is downloaded yet)...", id="hub-summary")
            yield MarkedTable(id="hub-files", show_cursor=False, zebra_stripes=True)
            yield ProgressBar(id="hub-bar", show_eta=False)
            yield Static("", id="hub-progress")
            with Horizontal():
                yield Button("Download", id="hub-download", variant="success", disabled=True)
                yield Button("Cancel (esc)", id="hub-cancel", variant="error")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("file")
        table.add_column("size")
        self.query_one(ProgressBar).display = False
        self.run_worker(self._plan, name=f"plan {self.repo_id}", group="hub-download", thread=True,
                        exit_on_error=False)

    def on_unmount(self) -> None:
        self._stop.set()  # the app quit or the screen went: the fetch thread stops after its chunk

    # -- worker threads: they only post messages ---------------------------------------------------
    def _plan(self) -> None:
        try:
            with hub_logs_to(_AppLog(self.app)):
                plan = plan_download(self.repo_id, allow_pickle=self.allow_pickle)
        except Exception as err:  # noqa: BLE001 - every failure is one line for the person, never a crash
            self.post_message(Finished(DownloadOutcome(self.repo_id, error=one_line(err))))
            return
        self.post_message(Planned(plan))

    def _fetch(self, plan: DownloadPlan) -> None:
        try:
            with hub_logs_to(_AppLog(self.app)):
                folder = fetch(plan, lambda p: self.post_message(Progressed(p)), self._stop.is_set)
        except DownloadCancelled as err:
            outcome = DownloadOutcome(self.repo_id, error=one_line(err), cancelled=True)
        except Exception as err:  # noqa: BLE001
            outcome = DownloadOutcome(self.repo_id, error=one_line(err))
        else:
            outcome = DownloadOutcome(self.repo_id, folder=folder)
        self.post_message(Finished(outcome))

    # -- UI thread ---------------------------------------------------------------------------------
    @on(Planned)
    def _show_plan(self, message: Planned) -> None:
        self.plan = plan = message.plan
        self.query_one("#hub-summary", Static).update(plan.summary())
        # widths given with the rows: a frame before the table measured them cut none (table_fill)
        fill_table(self.query_one(DataTable), ["file", "size"], [*plan.rows(), ("total", fmt_bytes(plan.total_bytes))])
        if self._stop.is_set():
            return
        self.query_one("#hub-download", Button).disabled = False
        if self.start:  # --download: the person has already said yes
            self._start_download()
        else:
            self.query_one("#hub-download", Button).focus()

    @on(Progressed)
    def _show_progress(self, message: Progressed) -> None:
        p = message.progress
        self.query_one(ProgressBar).update(total=p.total or 1, progress=p.done)
        if not self._stop.is_set():
            self.query_one("#hub-progress", Static).update(p.line())

    @on(Finished)
    def _finished(self, message: Finished) -> None:
        self.dismiss(message.outcome)

    @on(Button.Pressed, "#hub-download")
    def _download_pressed(self) -> None:
        self._start_download()

    @on(Button.Pressed, "#hub-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    def _start_download(self) -> None:
        if self.plan is None or self.downloading:
            return
        self.downloading = True
        self.query_one("#hub-download", Button).disabled = True
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=self.plan.total_bytes or 1, progress=self.plan.total_bytes - self.plan.to_fetch_bytes)
        self.query_one("#hub-cancel", Button).focus()
        self.run_worker(lambda: self._fetch(self.plan), name=f"fetch {self.repo_id}", group="hub-download",
                        thread=True, exit_on_error=False)

    def action_cancel(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        if self.downloading:  # the fetch stops after the chunk in flight and reports back (Finished)
            self.query_one("#hub-cancel", Button).disabled = True
            self.query_one("#hub-progress", Static).update("cancelling after the chunk in flight...")
            return
        self.dismiss(DownloadOutcome(self.repo_id, error=f"{self.repo_id}: not downloaded", cancelled=True))


class _AppLog(logging.Handler):
    """huggingface_hub's log lines to the app's log (textual console), never over the screen."""

    def __init__(self, app: Any) -> None:
        super().__init__()
        self.app = app

    def emit(self, record: logging.LogRecord) -> None:
        self.app.log.logging(self.format(record))

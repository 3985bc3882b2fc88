"""The bytes of one fetch: progress over the whole plan, a stop between chunks, plain HTTP so the stop works.

`tui_lab.hf.hub.fetch` drives these: huggingface_hub calls the progress-bar class a `Tracker` hands it, the
tracker reports `Progress` and raises `DownloadCancelled` when asked to stop. Importing this module imports
neither torch nor huggingface_hub.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tui_lab.analysis.format import fmt_bytes
from tui_lab.hf.hub_plan import DownloadPlan, RemoteFile

_FETCH_LOCK = threading.Lock()  # one fetch at a time: it switches a huggingface_hub flag (see plain_http)


@dataclass(frozen=True)
class Progress:
    """Handed to `on_progress` from the downloading thread, after each chunk and each file."""

    file: str
    done: int  # bytes over the whole plan, files already cached included
    total: int
    files_done: int
    files_total: int

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 1.0

    def line(self) -> str:
        return (f"{self.file}: {fmt_bytes(self.done)} of {fmt_bytes(self.total)} ({self.fraction:.0%}), "
                f"{self.files_done} of {self.files_total} files done")


class DownloadCancelled(Exception):
    """`should_stop` said stop: finished files stay cached, the one in flight is discarded."""

@contextmanager
def plain_http() -> Iterator[None]:
    """Fetch over plain HTTP, where our progress hook runs between chunks and can stop the transfer.

    hf_xet (huggingface_hub's default for Xet-backed repos, which include gpt2) logs and swallows an
    exception raised in its progress callback, so a file it fetches cannot be stopped midway. The Hub
    serves the same bytes over HTTP; huggingface_hub reads this flag at each call, so we set it for the
    duration of a fetch, one fetch at a time in this process.
    """
    from huggingface_hub import constants

    with _FETCH_LOCK:
        before, constants.HF_HUB_DISABLE_XET = constants.HF_HUB_DISABLE_XET, True
        try:
            yield
        finally:
            constants.HF_HUB_DISABLE_XET = before


class Tracker:
    """Bytes done over the plan, fed by huggingface_hub's progress-bar calls; stops the transfer when asked."""

    def __init__(self, plan: DownloadPlan, on_progress, should_stop) -> None:
        self.plan, self.on_progress, self.should_stop = plan, on_progress, should_stop
        self.finished_bytes, self.files_done, self.in_file, self.file = 0, 0, 0, ""

    def begin(self, file: RemoteFile) -> None:
        self.file, self.in_file = file.name, 0
        self.check()
        self.report()

    def advance(self, n: int) -> None:
        self.in_file += n  # negative when huggingface_hub restarts a file the server would not resume
        self.report()
        self.check()  # raising here unwinds hf_hub_download, which deletes its temporary file

    def end(self, file: RemoteFile) -> None:
        self.finished_bytes += file.size
        self.files_done += 1
        self.in_file = 0
        self.report()

    def check(self) -> None:
        if self.should_stop is not None and self.should_stop():
            done = fmt_bytes(self.finished_bytes + self.in_file)
            raise DownloadCancelled(f"--from-hf {self.plan.repo_id}: download cancelled at {done} of "
                                    f"{fmt_bytes(self.plan.total_bytes)}; finished files stay in the cache "
                                    "(--download picks up from there), nothing partial was kept")

    def report(self) -> None:
        if self.on_progress is not None:
            done = self.finished_bytes + max(0, self.in_file)
            self.on_progress(Progress(self.file, done, self.plan.total_bytes, self.files_done, len(self.plan.files)))

    def bar_class(self) -> type:
        """A class with the tqdm surface huggingface_hub drives (plain HTTP and hf_xet), reporting to us."""
        tracker = self

        class Bar:
            def __init__(self, *args, total: int | None = None, **kwargs) -> None:
                self.total = total  # hf_xet's reporter reads and grows it

            def __enter__(self) -> Bar:
                return self

            def __exit__(self, *exc) -> None:
                return None

            def update(self, n: float | None = 1) -> None:
                tracker.advance(int(n or 0))

            def update_transfer(self, n: float | None = 1) -> None:
                """Network bytes (before hf_xet reassembles them): `update` already counts the file's bytes."""

            def set_postfix_str(self, *args, **kwargs) -> None:
                """Speed text for a terminal bar: not ours to show."""

            set_transfer_postfix_str = set_postfix_str

            def refresh(self) -> None:
                """Nothing is drawn."""

            def close(self) -> None:
                """Nothing to release."""

        return Bar

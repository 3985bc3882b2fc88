"""A browser session's limits: what `tui-lab serve` allows each app process it starts, and the one check of every
path a page can name.

`serve` hands the policy to the app through the environment (`TUI_LAB_SERVED`, JSON); an app started without it
is a terminal app and none of this applies. A served session is a guest: every path it names is relative to its
own folder (`<root>/sessions/<token>`), never absolute, never `~`, never `..`, never through a link out; its
folder has a disk quota, and the sessions' folders together another (checked before a write starts); downloads
and pickles are the operator's choice, which the page cannot widen (a cached pickle-only model is refused too).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from tui_lab.analysis.format import fmt_bytes

ENV = "TUI_LAB_SERVED"


@dataclass(frozen=True)
class ServedPolicy:
    folder: str  # this session's own folder: every path the page names lives inside it
    download: bool = False  # serve --download: the --from-hf id may be fetched
    download_any: bool = False  # serve --allow-download-any: any Hub id may be fetched
    allow_pickle: bool = False  # serve --allow-pickle: pytorch_model.bin-only weights may be fetched
    from_hf: str | None = None  # the id the operator named
    quota: int = 1024**3  # bytes this session's folder may hold
    train_slots: int = 0  # training runs the whole server allows at once (one per core); 0: no limit
    root: str = ""  # the server's root: its `.train-slot-K.lock` files are shared by every session
    total_quota: int = 0  # bytes every session's folder (<root>/sessions) may hold together; 0: no limit

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> ServedPolicy | None:
        text = (os.environ if environ is None else environ).get(ENV)
        return cls(**json.loads(text)) if text else None

    @property
    def home(self) -> Path:
        return Path(self.folder).resolve()

    def path(self, text: str, field: str = "folder") -> Path:
        """The page's `text` as a path inside this session's folder, or one ValueError line naming `field`."""
        text = text.strip()
        if not text:
            raise ValueError(f"{field}: give a name inside this session's folder")
        given = Path(text)
        if given.is_absolute() or text.startswith(("~", "\\")) or (len(text) > 1 and text[1] == ":"):
            raise ValueError(f"{field} ({text}) must be a name inside this session's folder: no absolute path or ~")
        if ".." in given.parts:
            raise ValueError(f"{field} ({text}) must stay inside this session's folder: no ..")
        path = (self.home / given).resolve()  # links followed: one pointing out is refused below
        if not path.is_relative_to(self.home):
            raise ValueError(f"{field} ({text}) leads out of this session's folder through a link")
        return path

    def check_download(self, repo_id: str, allow_pickle: bool = False) -> None:
        """The operator's choices bind the page: no download without serve --download, only its id unless
        --allow-download-any, and no pickle weights without --allow-pickle."""
        if not self.download:
            raise ValueError(f"{repo_id}: this server does not download models (the operator started it without "
                             "--download); open one already in its cache")
        if not self.download_any and repo_id != self.from_hf:
            raise ValueError(f"{repo_id}: this server downloads only {self.from_hf or 'the model it was started with'}"
                             " (the operator did not give --allow-download-any)")
        if allow_pickle and not self.allow_pickle:
            raise ValueError(f"{repo_id}: pickle weights are not accepted here (the operator did not give "
                             "--allow-pickle)")

    def check_weights(self, folder: Path, spec: str) -> None:
        """The banner's promise: without serve --allow-pickle no session opens pickle weights, cached or not."""
        from tui_lab.hf.folder import weights_file

        found = weights_file(folder)
        if found is not None and found.name.startswith("pytorch_model") and not self.allow_pickle:
            raise ValueError(f"{spec}: its weights are only a pickle ({found.name}) and this server refuses pickle "
                             "weights (the operator did not give --allow-pickle)")

    def used(self) -> int:
        """Bytes this session's folder holds now."""
        return folder_bytes(self.home)

    def check_quota(self, needed: int, what: str = "the checkpoint") -> None:
        used = self.used()
        if used + needed > self.quota:
            raise ValueError(f"{what} needs about {fmt_bytes(needed)} but this session's folder holds "
                             f"{fmt_bytes(used)} of its {fmt_bytes(self.quota)} quota; delete a run first")
        if self.total_quota and self.root:
            together = folder_bytes(Path(self.root) / "sessions")
            if together + needed > self.total_quota:
                raise ValueError(f"{what} needs about {fmt_bytes(needed)} but the sessions' folders on this server "
                                 f"hold {fmt_bytes(together)} of the {fmt_bytes(self.total_quota)} they share "
                                 "(serve --total-quota-mb); delete a run first")


def folder_bytes(folder: Path) -> int:
    """Bytes the files under `folder` hold (links counted as links, never followed)."""
    total = 0
    for base, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                pass
    return total


def check_room(needed: int, what: str) -> None:
    """Before a served session writes `needed` bytes: one ValueError line when its quota (or the server's) would
    pass. A terminal app writes where it is told."""
    policy = ServedPolicy.from_env()
    if policy is not None:
        policy.check_quota(needed, what)


@contextmanager
def training_slot(policy: ServedPolicy | None) -> Iterator[None]:
    """One of the server's training slots (one per core) for the block, or one ValueError line when all are taken.

    Each slot is a flock on `<root>/.train-slot-K.lock`: held by the app process while its run trains, released by
    the kernel when the run ends or the app dies, however it dies."""
    if policy is None or policy.train_slots <= 0:
        yield
        return
    import fcntl

    for k in range(policy.train_slots):
        fd = os.open(Path(policy.root) / f".train-slot-{k}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield
        finally:
            os.close(fd)
        return
    raise ValueError(f"all {policy.train_slots} training slots of this server are in use (one run per core); "
                     "try again when a run ends")


def page_path(text: str, field: str) -> Path:
    """A path a person typed into the app: in a served session checked by its policy (inside its folder), in a
    terminal with `~` expanded. Absolute either way, so a message can name the folder really used."""
    policy = ServedPolicy.from_env()
    if policy is not None:
        return policy.path(text, field)
    return Path(text.strip()).expanduser().absolute()


def exports_folder() -> Path:
    """Where the app writes exports: a served session's own `exports/`, else the lab's exports folder."""
    policy = ServedPolicy.from_env()
    if policy is not None:
        return policy.home / "exports"
    from tui_lab.paths import exports_dir

    return exports_dir()


def output_folder(text: str, default_name: str, field: str = "out") -> str:
    """The folder an experiment's `out` option names, as the app passes it on: the page's name checked like any
    other path (`page_path`), or when empty a new folder in the exports (a served session's own)."""
    if text.strip():
        return str(page_path(text, field))
    import time

    return str(exports_folder() / f"{default_name}-{time.strftime('%Y%m%d-%H%M%S')}")

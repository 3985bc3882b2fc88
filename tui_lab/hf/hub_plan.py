"""What a download will fetch: the files, their sizes and what is already cached (`hub.plan_download` makes it,
`hub_transfer` reports progress over it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui_lab.analysis.format import fmt_bytes


@dataclass(frozen=True)
class RemoteFile:
    name: str
    size: int  # bytes
    cached: bool  # already complete in the snapshot: fetch skips it


@dataclass(frozen=True)
class DownloadPlan:
    """What `fetch` would download, for the CLI to print and the app to confirm."""

    repo_id: str
    revision: str  # what was asked for ("main")
    commit: str  # the commit every file is taken from, so a retry cannot mix two versions
    files: tuple[RemoteFile, ...]  # in fetch order: small files first, the weights last
    left_out: tuple[str, ...]  # repo files the lab does not read
    pickle: bool  # the weights are pytorch_model.bin (allowed with allow_pickle)
    endpoint: str
    cache: Path

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def to_fetch_bytes(self) -> int:
        return sum(f.size for f in self.files if not f.cached)

    @property
    def folder(self) -> Path:
        return self.cache / f"models--{self.repo_id.replace('/', '--')}" / "snapshots" / self.commit

    def summary(self) -> str:
        """One line for the CLI and the app's confirmation.

        'gpt2 (commit 607a30d) from https://huggingface.co: 5 files, 522.7 MiB; 9 files the lab does not read left out'
        """
        cached = sum(f.cached for f in self.files)
        size = fmt_bytes(self.total_bytes)
        if cached:
            size += f", {fmt_bytes(self.to_fetch_bytes)} still to fetch ({_files(cached)} already cached)"
        left = f"; {_files(len(self.left_out))} the lab does not read left out" if self.left_out else ""
        kind = ", weights as a pickle (read with weights_only)" if self.pickle else ""
        where = f"{self.repo_id} (commit {self.commit[:7]}) from {self.endpoint}"
        return f"{where}: {_files(len(self.files))}, {size}{kind}{left}"

    def rows(self) -> list[tuple[str, str]]:
        """(file, size) for a table, 'cached' where nothing needs fetching."""
        return [(f.name, "cached" if f.cached else fmt_bytes(f.size)) for f in self.files]


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"

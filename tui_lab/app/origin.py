"""Where the live model's weights came from, said the same way on every view.

`LiveModel.origin` stays the short string the loaders already write ("preset gpt2-toy", "checkpoint DIR",
"hf DIR", "trained run #2 (numbers-de, step 200)"); `describe_origin` is the one place that reads it into a
`ModelOrigin(kind, detail)`, so the header, the attention grids and the Apply warning never parse it again.
No torch and no Textual here: the first frame and the tests use it directly.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# random: a preset or the form's config with freshly drawn weights; trained: a run in this app's Train view;
# shipped: a trained toy inside the package; checkpoint: a folder on disk; hf: a Hugging Face model.
# other: a string this module does not know, shown as written.
ORIGIN_KINDS = ("random", "trained", "shipped", "checkpoint", "hf", "other")
# The header has ~50 columns for the sub-title at 80x24: a longer folder keeps its tail ("…/runs/run-3").
PATH_CHARS = 30

_TRAINED = re.compile(r"run #(?P<run>\d+) \((?:(?P<task>.+), )?step (?P<step>\d+)\)")
_PACKAGE = Path(__file__).resolve().parent.parent  # tui_lab/: a checkpoint inside it shipped with the lab


@dataclass(frozen=True)
class ModelOrigin:
    kind: str  # one of ORIGIN_KINDS
    detail: str  # the preset name, "numbers-de, 200 steps", a folder, a model id

    @property
    def lead(self) -> str:
        """The kind in words ("random weights", "trained here"...): where a line has no room for the detail."""
        return {"random": "random weights", "trained": "trained here", "shipped": "shipped toy",
                "checkpoint": "checkpoint", "hf": "Hugging Face"}.get(self.kind, self.detail)

    @property
    def text(self) -> str:
        """One short phrase: "random weights: gpt2-toy", "trained here: numbers-de, 200 steps"..."""
        if self.kind == "other" or not self.detail:
            return self.lead
        return f"{self.lead}: {self.detail}"

    @property
    def learned(self) -> bool:
        """Anything but fresh random weights: replacing it throws training away."""
        return self.kind != "random"


def trained_origin(run: int, step: int, task: str) -> str:
    """The origin string of weights trained in the app: run number, what it learned, how many steps."""
    return f"trained run #{run} ({task}, step {step})"


def task_label(task: str | None, data: str | None) -> str:
    """What a run trained on: the seq2seq task, the text file's name, or the built-in corpus."""
    if task:
        return task
    return f"text {Path(data).name}" if data else "built-in text"


def describe_origin(origin: str) -> ModelOrigin:
    """Read a `LiveModel.origin` string (see the module docstring) into kind + detail."""
    kind, _, rest = origin.partition(" ")
    if kind in ("preset", "config") or not origin:
        return ModelOrigin("random", rest.removesuffix(" (tour)"))
    if kind == "shipped":
        return ModelOrigin("shipped", rest)
    if kind == "checkpoint":
        return _checkpoint(rest)
    if kind == "hf":
        return ModelOrigin("hf", _hf_name(rest))
    if kind == "trained":
        hit = _TRAINED.fullmatch(rest)
        if hit is None:
            return ModelOrigin("trained", rest)
        steps = int(hit["step"])
        what = f"{hit['task']}, " if hit["task"] else ""
        return ModelOrigin("trained", f"{what}{steps:,} step{'s' if steps != 1 else ''}")
    return ModelOrigin("other", origin)  # unknown: shown as written, and Apply still asks before replacing it


def origin_subtitle(live: Any) -> str:
    """The app header's sub-title for a `LiveModel`: what every view shows and where it runs (one line at 80
    columns; the size is on the Architecture view)."""
    return f"{describe_origin(live.origin).text} · {live.device}"


def _checkpoint(folder: str) -> ModelOrigin:
    path = Path(folder).expanduser()
    try:
        if path.resolve().is_relative_to(_PACKAGE):  # shipped inside the installed package
            return ModelOrigin("shipped", path.name)
    except OSError:
        pass
    return ModelOrigin("checkpoint", short_path(folder))


def _hf_name(source: str) -> str:
    """A model id stays as typed; a hub cache folder (".../models--org--name/snapshots/<hash>") reads as its id."""
    hit = re.search(r"models--([^/\\]+)", source)
    if hit:
        return hit[1].replace("--", "/")
    return short_path(source) if os.sep in source else source


def short_path(folder: str, limit: int = PATH_CHARS) -> str:
    """A folder as a person would type it: relative to here or to ~, and its tail when still too long."""
    path = Path(folder).expanduser()
    text = folder
    if path.is_absolute():
        for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
            if path.is_relative_to(base) and path != base:
                text = prefix + str(path.relative_to(base))
                break
    return text if len(text) <= limit else "…" + text[-(limit - 1):]

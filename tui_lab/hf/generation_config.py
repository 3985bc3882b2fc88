"""The tokens a Hugging Face folder forbids its generation to write: `bad_words_ids`, read as transformers reads it.

Helsinki-NLP's opus-mt folders say `"bad_words_ids": [[pad_token_id]]`: Marian's decoder starts from its pad
token and must never write it (transformers PR 4290: before the ban, pad kept a finite score and long
translations lost BLEU). transformers' `generate` turns the list into `NoBadWordsLogitsProcessor`, which sets
the banned ids' logits to -inf before any sampling or beam step. We do the same for bans of one token
(`generation.decoder_state`, beside the `vocab_limit` mask) and leave longer ones (a banned sequence of
several tokens) out, each named in a note, rather than refuse a model that is otherwise fine.

Where the list comes from, as `from_pretrained` decides: `generation_config.json` when the folder has one
(its `bad_words_ids`, or none), else config.json's legacy key. A ban of the eos token is dropped, as
transformers drops it (a model must be able to stop). No torch here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_lab.errors import one_line

FILE = "generation_config.json"
KEY = "bad_words_ids"


@dataclass(frozen=True)
class Bans:
    """Single token ids generation may never choose, where they were read, and what was left out."""

    ids: tuple[int, ...] = ()
    source: str = ""  # "generation_config.json" or "config.json"; "" when the folder bans nothing
    notes: tuple[str, ...] = ()  # one sentence per ban left out

    def summary(self) -> str:
        """One line for people: `bans 58100 (generation_config.json bad_words_ids)`, plus the notes."""
        if not self.ids and not self.notes:
            return ""
        said = f"bans {', '.join(map(str, self.ids))} ({self.source} {KEY})" if self.ids else ""
        return "; ".join([s for s in (said, *self.notes) if s])


def read_bans(folder: Path, hf: dict[str, Any], vocab: int) -> Bans:
    """The folder's single-token bans; ValueError (one line naming the file and key) for a malformed list.
    `hf` is config.json's dict."""
    source, data = _settings(folder, hf)
    raw, eos = data.get(KEY), _eos_ids(data.get("eos_token_id", hf.get("eos_token_id")))
    if raw is None:
        return Bans()
    field = f"{source}: {KEY}"
    if not isinstance(raw, list) or not raw or not all(isinstance(seq, list) and seq for seq in raw):
        raise ValueError(f"{field} must be a non-empty list of non-empty lists of token ids, got {_short(raw)}")
    ids, notes = [], []
    for seq in raw:
        bad = [i for i in seq if not _is_id(i) or i >= vocab]
        if bad:
            raise ValueError(f"{field} must hold token ids in 0..{vocab - 1} (the model's vocab), got {bad[0]!r}")
        if len(seq) > 1:
            notes.append(f"{KEY} {seq} left out: only bans of one token are applied here")
        elif seq[0] in eos:
            notes.append(f"{KEY} {seq} left out: it is eos, which transformers never bans either")
        elif seq[0] not in ids:
            ids.append(seq[0])
    return Bans(tuple(ids), source, tuple(notes))


def _settings(folder: Path, hf: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(where generation settings are read, their dict): generation_config.json wins when it exists, even
    without the key (transformers then bans nothing, whatever config.json says)."""
    path = folder / FILE
    if not path.is_file():
        return "config.json", hf
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{FILE}: cannot read it ({one_line(err)})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{FILE}: must be a JSON object")
    return FILE, data


def _eos_ids(value: Any) -> set[int]:
    """eos_token_id may be one id or a list of them (Llama 3)."""
    return {i for i in (value if isinstance(value, list) else [value]) if _is_id(i)}


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."

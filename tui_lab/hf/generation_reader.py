"""Reading a Hugging Face folder's generation settings as values: which file they come from (generation_config.json,
else config.json) and each key read as the type transformers needs, a bad value one ValueError naming the file and
the key. What the values mean for a run is generation_config.py's. No torch here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui_lab.errors import one_line

FILE = "generation_config.json"
KEY = "bad_words_ids"


def settings(folder: Path, hf: dict[str, Any]) -> tuple[str, dict[str, Any]]:
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


def eos_ids(value: Any) -> set[int]:
    """eos_token_id may be one id or a list of them (Llama 3)."""
    return {i for i in (value if isinstance(value, list) else [value]) if is_id(i)}


def is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Reader:
    """Typed reads of one settings dict; each bad value is one ValueError naming the file and key."""

    def __init__(self, source: str, data: dict[str, Any], vocab: int) -> None:
        self.source, self.data, self.vocab = source, data, vocab

    def fail(self, key: str, rule: str) -> ValueError:
        return ValueError(f"{self.source}: {key} {rule}, got {short(self.data[key])}")

    def ids(self, key: str, anywhere: bool = False) -> list[int]:
        """One id or a list of them; `anywhere`: ids past the vocab are kept (transformers accepts an eos the model
        cannot write, GPT-2's default 50256 in a small vocab: a run simply never stops on it)."""
        value = self.data.get(key)
        values = value if isinstance(value, list) else ([] if value is None else [value])
        if not all(is_id(i) and (anywhere or i < self.vocab) for i in values):
            rule = "a token id >= 0" if anywhere else f"a token id in 0..{self.vocab - 1}"
            raise self.fail(key, f"must be {rule} or a list of them")
        return list(dict.fromkeys(values))

    def forced_eos(self) -> int | tuple[int, ...] | None:
        """forced_eos_token_id: one id, or a list (transformers' ForcedEOSTokenLogitsProcessor takes either)."""
        value = self.data.get("forced_eos_token_id")
        if not isinstance(value, list):
            return self.one_id("forced_eos_token_id")
        if not value or not all(is_id(i) and i < self.vocab for i in value):
            raise self.fail("forced_eos_token_id", f"must be a token id in 0..{self.vocab - 1} or a list of them")
        return tuple(value)

    def one_id(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not is_id(value) or value >= self.vocab:
            raise self.fail(key, f"must be a token id in 0..{self.vocab - 1}")
        return value

    def count(self, key: str, minimum: int = 0) -> int:
        value = self.data.get(key, 0)
        if value is None:
            return 0
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise self.fail(key, f"must be an integer >= {minimum}")
        return value

    def number(self, key: str, default: float) -> float:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise self.fail(key, "must be a number")
        return float(value)

    def fraction(self, key: str) -> float | None:
        if self.data.get(key) is None:
            return None
        value = self.number(key, 0.0)
        if not 0 <= value <= 1:
            raise self.fail(key, "must be in [0, 1]")
        return value

    def positive(self, key: str, default: float) -> float:
        value = self.number(key, default)
        if value <= 0:
            raise self.fail(key, "must be > 0")
        return value

    def flag(self, key: str) -> bool:
        if not isinstance(self.data[key], bool):
            raise self.fail(key, "must be true or false")
        return self.data[key]

    def early_stopping(self) -> bool | str:
        value = self.data.get("early_stopping")
        if value is None:
            return False
        if value not in (True, False, "never"):
            raise self.fail("early_stopping", 'must be true, false or "never"')
        return value

    def bad_words(self) -> tuple[tuple[int, ...], ...]:
        raw = self.data.get(KEY)
        if raw is None:
            return ()
        if not isinstance(raw, list) or not raw or not all(isinstance(seq, list) and seq for seq in raw):
            raise self.fail(KEY, "must be a non-empty list of non-empty lists of token ids")
        if not all(is_id(i) and i < self.vocab for seq in raw for i in seq):
            raise self.fail(KEY, f"must hold token ids in 0..{self.vocab - 1} (the model's vocab)")
        return tuple(tuple(seq) for seq in raw)

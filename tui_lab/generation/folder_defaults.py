"""A person's settings over a Hugging Face folder's generation defaults: what they set wins, the folder fills
the rest (no torch; the CLI and the app share it).

`given` names the `GenerationSettings` fields the person set (a flag on the command line, a field the Generate
view's person changed). The folder's `max_length` counts the whole sequence, as in transformers, so it becomes
max_new_tokens = max_length - what the decoder starts from (the prompt, or an encoder-decoder's start token).
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from tui_lab.generation.settings import GenerationSettings

FIELDS = ("max_new_tokens", "temperature", "top_k", "top_p", "beam_size", "use_cache")


def with_folder_defaults(settings: GenerationSettings, given: set[str], folder: Any,
                         start_len: int) -> tuple[GenerationSettings, list[str]]:
    """(settings with the folder's defaults where the person gave none, the fields the folder changed).

    `folder` is a `hf.generation_config.FolderGeneration` or None (a lab model: settings unchanged)."""
    if folder is None:
        return settings, []
    proposed = {k: v for k, v in folder.defaults.items() if k in FIELDS}
    if "max_length" in folder.defaults:
        proposed["max_new_tokens"] = max(1, folder.defaults["max_length"] - start_len)
    if "temperature" in proposed and "temperature" in given:
        # A person who chose a temperature chose whether to sample: the folder's top-k/top-p then apply
        # only when they sample too, as transformers' warpers would.
        if settings.temperature == 0:
            proposed.pop("top_k", None), proposed.pop("top_p", None)
    taken = {k: v for k, v in proposed.items() if k not in given and getattr(settings, k) != v}
    if taken.get("beam_size", 1) > 1 or settings.beam_size > 1:
        taken.pop("temperature", None)  # beam search is deterministic here; sampling knobs do not apply
    return replace(settings, **taken), sorted(taken, key=FIELDS.index)


def given_fields(values: dict[str, Any]) -> set[str]:
    """The settings fields whose value is not None: the command line's flags default to None for this."""
    names = {f.name for f in fields(GenerationSettings)}
    return {k for k, v in values.items() if k in names and v is not None}

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

FIELDS = ("max_new_tokens", "temperature", "top_k", "top_p", "beam_size", "use_cache", "beam_sample")


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
        # only when they sample too, as transformers' warpers would; greedy beams are beam search.
        if settings.temperature == 0:
            proposed.pop("top_k", None), proposed.pop("top_p", None), proposed.pop("beam_sample", None)
    taken = {k: v for k, v in proposed.items() if k not in given and getattr(settings, k) != v}
    beams = taken.get("beam_size", settings.beam_size) > 1
    if beams and not taken.get("beam_sample", settings.beam_sample):
        taken.pop("temperature", None)  # beam search is deterministic; sampling knobs do not apply
    if not beams:
        taken.pop("beam_sample", None)  # one beam: plain sampling
    return replace(settings, **taken), sorted(taken, key=FIELDS.index)


def decoding_mode(settings: GenerationSettings, given: set[str], taken: list[str], folder: Any) -> dict[str, str]:
    """{"mode": greedy | sample | beam | beam-sample, "from": what chose it}, for `generate --json`: a person's
    flag, the folder's key (do_sample, num_beams), or the lab's or transformers' default."""
    chose = [f"--{name.replace('_', '-')}" for name in ("temperature", "beam_size") if name in given]
    if folder is not None and ({"temperature", "beam_sample", "beam_size"} & set(taken) or not chose):
        chose.append(f"{folder.source} do_sample" if "do_sample" in folder.applied else
                     f"transformers' default (no do_sample in {folder.source or 'the folder'}: false)")
        if "beam_size" in taken:
            chose.append(f"{folder.source} num_beams")
    if not chose:
        chose.append("the lab's default (temperature 1, one beam)")
    return {"mode": settings.mode, "from": ", ".join(chose)}


def given_fields(values: dict[str, Any]) -> set[str]:
    """The settings fields whose value is not None: the command line's flags default to None for this."""
    names = {f.name for f in fields(GenerationSettings)}
    return {k for k, v in values.items() if k in names and v is not None}

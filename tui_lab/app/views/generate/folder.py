"""A Hugging Face folder's generation defaults in the Generate view's form, and the line that says so.

When the live model comes from a folder whose generation_config.json proposes settings (temperature, top-k,
top-p, beams, length), the form's fields take them, as `tui-lab generate` takes them for flags left out; the
person then edits any field and the edit wins. The rules every run obeys (an eos list, a repetition penalty,
forced eos...) are named in the note. Switching to another model puts back the view's own values in the
fields the folder had set and the person had not touched since. No torch.
"""

from __future__ import annotations

from typing import Any

from tui_lab.generation.folder_defaults import with_folder_defaults
from tui_lab.generation.settings import GenerationSettings

TITLES = {"temperature": "temp", "top_k": "top-k", "top_p": "top-p", "beam_size": "beam",
          "max_new_tokens": "max", "use_cache": "cache"}
TOKEN_KEYS = ("bos_token_id", "decoder_start_token_id", "pad_token_id")


def folder_form(folder: Any, base: GenerationSettings, start_len: int) -> dict[str, Any]:
    """field -> the value the folder proposes, for the form's fields it changes (none without a folder)."""
    if folder is None:
        return {}
    settings, taken = with_folder_defaults(base, set(), folder, start_len)
    return {name: getattr(settings, name) for name in taken if name in TITLES}  # the form has no beam_sample field


def field_text(value: Any) -> str:
    """A form field's text for a settings value (None: empty, an unset optional field)."""
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def folder_note(folder: Any, form: dict[str, Any]) -> str:
    """'; generation_config.json set temp 0.6, top-p 0.9; obeys eos_token_id, repetition_penalty' ('' without)."""
    if folder is None or not folder.applied:
        return ""
    parts = []
    if "do_sample" not in folder.applied:  # temp 0 is transformers' default there, not the file's: not named
        form = {k: v for k, v in form.items() if k != "temperature"}
    if form:
        parts.append(f"{folder.source} set " + ", ".join(f"{TITLES[k]} {field_text(v)}" for k, v in form.items()))
    rules = [k for k in folder.applied if k in ("eos_token_id", "min_length", "min_new_tokens", "repetition_penalty",
                                                "no_repeat_ngram_size", "forced_bos_token_id", "forced_eos_token_id",
                                                "bad_words_ids", "length_penalty", "early_stopping", "min_p",
                                                "renormalize_logits")]
    if rules:
        parts.append(("obeys " if form else f"{folder.source}: obeys ") + ", ".join(rules))
    if folder.ignored:
        parts.append(f"{len(folder.ignored)} key{'s' if len(folder.ignored) != 1 else ''} ignored")
    return "; " + "; ".join(parts) if parts else ""

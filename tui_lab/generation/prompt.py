"""How a prompt's text becomes ids: the one rule the CLI and the app share (no torch)."""

from __future__ import annotations

from typing import Any


def prompt_ids(codec: Any, prompt: str, family: str, field: str = "prompt") -> list[int]:
    """Encode the prompt, saying clearly what the tokenizer cannot represent.

    Text the tokenizer lacks is refused unless it has an <unk> token; an empty prompt starts a
    decoder-only model from bos. `field` names the input in messages ("--prompt" for the CLI).
    """
    unknown = codec.unknown(prompt)
    if unknown and codec.unk_id is None:
        raise ValueError(f"{field} has text the tokenizer lacks: {' '.join(unknown)}")
    ids = codec.encode(prompt)
    if not ids and family == "decoder-only" and codec.bos_id is not None:
        ids = [codec.bos_id]  # an empty prompt starts from bos
    if not ids:
        raise ValueError(f"{field} must not be empty")
    return ids


def task_prompt(tokenizer: Any) -> str | None:
    """A held-out source of the task whose tokenizer `tokenizer` is, for a model that came without one (a
    checkpoint folder): the longest in tokens, as the Train view's alignment example (`train.watch`) (for numbers-de a
    three-digit number, whose German reorders the units). None when it is no task's (a corpus model)."""
    from tui_lab.data.tasks import TASKS, load_task  # torch, via tui_lab.data: only when asked

    for name in TASKS:
        task = load_task(name)
        if task.tokenizer == tokenizer:
            longest = max(range(len(task.val)), key=lambda i: len(task.val[i][0]))  # in tokens, the first of a tie
            return task.examples("val")[longest][0]
    return None


def unknown_words(codec: Any, prompt: str) -> list[str]:
    """The prompt's pieces the tokenizer lacks (each reads <unk>); none for a codec that cannot lack any."""
    unknown = getattr(codec, "unknown", None)
    return list(unknown(prompt)) if unknown is not None else []

"""What `tui-lab lens`, `ablate`, `patch`, `attribute` and `heads` share: the model they open, answer tokens, the
thread count they run on, the JSON frame."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tui_lab.cli.model_args import add_model_arguments, load_from_args
from tui_lab.loading import LoadedModel


def add_common(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object")


def add_token(parser: argparse.ArgumentParser, name: str, help_text: str) -> None:
    """`--NAME TEXT` (one token of the model's tokenizer) or `--NAME-id ID`."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(f"--{name}", metavar="TEXT", help=f"{help_text}: text that is one token")
    group.add_argument(f"--{name}-id", dest=f"{name}_id", type=int, metavar="ID", help=f"{help_text}: a token id")


def token_from_args(args: argparse.Namespace, loaded: LoadedModel, name: str) -> int | None:
    """The id `--NAME` or `--NAME-id` gives, checked against the vocabulary; None when neither is given."""
    from tui_lab.mechanism.tokens import single_token

    text, given = getattr(args, name), getattr(args, f"{name}_id")
    if text is not None:
        return single_token(loaded.codec, text, f"--{name}")
    if given is not None and not 0 <= given < loaded.config.vocab:
        raise ValueError(f"--{name}-id must be a token id in 0..{loaded.config.vocab - 1}, got {given}")
    return given


def load_causal(args: argparse.Namespace, tool: str) -> LoadedModel:
    """The model of --preset / --checkpoint / --from-hf, refused in one line unless part 1 covers it."""
    from tui_lab.mechanism.cache import require_causal

    loaded = load_from_args(args)
    require_causal(loaded.config, tool)
    return loaded


def window(loaded: LoadedModel) -> int:
    """The longest input: learned positions stop at max_len, the others do not."""
    return loaded.config.max_len if loaded.config.positions == "learned" else 0


@contextmanager
def chosen_threads(loaded: LoadedModel, rows: int = 1) -> Iterator[dict[str, Any] | None]:
    """The block on the thread count chosen now for its passes, as `generate` chooses (issue 39): an uncached pass
    of `rows` rows of the model (generation/threads.py, the rule in tui_lab/cpu_threads.py: a toy's ops are too
    small to share out, a larger model takes the cores others leave free now); torch's count comes back after.
    Yields the choice and why, as `--json` says it (None off the CPU: torch's setting is kept)."""
    from tui_lab.generation.threads import decode_choice, torch_threads

    choice = decode_choice(loaded.model, use_cache=False, rows=rows)
    with torch_threads(choice.threads if choice is not None else None):
        yield choice.to_dict() if choice is not None else None


def dump(loaded: LoadedModel, result: dict[str, Any], threads: dict[str, Any] | None = None) -> None:
    """The command's JSON object; `threads`: the count it ran on and why (`chosen_threads`)."""
    device = str(next(loaded.model.parameters()).device)
    print(json.dumps({"model": loaded.label, "device": device, "tokenizer": loaded.codec.kind, **result,
                      "threads": threads}))

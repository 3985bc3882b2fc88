"""One loaded model and its tokenizer, with the calls a notebook or a script makes on them, as TransformerLens's
`HookedTransformer` has them: `to_tokens`, `to_str_tokens`, `run_with_cache` (a `LabCache`), `run_with_hooks`.

    lab = tui_lab.open("gpt2-toy-english")     # a preset, a shipped toy, a checkpoint folder (kind="hf": HF)
    logits, cache = lab.run_with_cache("Anna walked to the river. Tom walked to the")

No BOS token is put in front (the lab's models are trained without one). Text or ids go in alike; a list of
texts is one batch and must tokenize to one length. Decoder-only language models (GPT-2 and Llama shapes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from tui_lab.checkpoint_files import is_checkpoint
from tui_lab.loading import load_model
from tui_lab.mechanism.cache import HookFn, Names, require_causal, run_with_cache, run_with_hooks
from tui_lab.mechanism.lab_cache import LabCache
from tui_lab.mechanism.tokens import single_token, token_text

Input = str | list[str] | Tensor | list[int]


@dataclass
class Lab:
    """`model` (a tui_lab Transformer, decoder-only) and `codec`, its tokenizer."""

    model: Any
    codec: Any
    label: str = ""

    def __post_init__(self) -> None:
        require_causal(self.model.config, "Lab")

    @property
    def config(self):
        return self.model.config

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def to_tokens(self, text: Input) -> Tensor:
        """(N, L) ids on the model's device: one text is one row; a list of texts, one row each (one length)."""
        if isinstance(text, Tensor):
            ids = text if text.dim() == 2 else text[None]
            return ids.to(self.device)
        if isinstance(text, list) and text and all(isinstance(t, int) for t in text):
            return torch.tensor([text], device=self.device)
        rows = [self.codec.encode(t) for t in ([text] if isinstance(text, str) else text)]
        if not rows or not all(rows):
            raise ValueError("text is empty after tokenizing")
        if len({len(r) for r in rows}) > 1:
            raise ValueError(f"texts: a batch needs one length; these are {', '.join(str(len(r)) for r in rows)} "
                             "tokens long")
        limit = self.config.max_len if self.config.positions == "learned" else 0
        if limit and len(rows[0]) > limit:
            raise ValueError(f"text is {len(rows[0])} tokens; this model reads at most {limit}")
        return torch.tensor(rows, device=self.device)

    def to_str_tokens(self, text: str | Tensor | Iterable[int]) -> list[str]:
        """Each token of a text (or of ids, one row) as the tokenizer shows it."""
        ids = self.to_tokens(text)[0].tolist() if isinstance(text, str) else torch.as_tensor(text).flatten().tolist()
        return [token_text(self.codec, int(i)) for i in ids]

    def to_single_token(self, text: str) -> int:
        """The id of a text that is one token (refused in one line otherwise)."""
        return single_token(self.codec, text, "token")

    @torch.no_grad()
    def run_with_cache(self, text: Input, names: Names = None) -> tuple[Tensor, LabCache]:
        """Logits (N, L, V) and the activations at `names` (a list, or a callable that filters). None: every point
        but `attn.hook_result`, which only a name asks for: (N, L, H, E) is H times the stream, and
        `stack_head_results` computes it from `hook_z` (TransformerLens leaves it off by default too)."""
        if names is None:
            names = lambda name: not name.endswith("hook_result")  # noqa: E731 - one filter
        logits, cache = run_with_cache(self.model, self.to_tokens(text), names=names)
        return logits, LabCache(cache, self.model, self.codec)

    def run_with_hooks(self, text: Input, hooks: Iterable[tuple[str, HookFn]]) -> Tensor:
        """Logits (N, L, V) with `hooks` ((name, fn(value, name) -> None | replacement)) attached."""
        with torch.no_grad():
            return run_with_hooks(self.model, self.to_tokens(text), hooks=hooks)

    def load_cache(self, path: str | Path) -> LabCache:
        """A cache `LabCache.save` wrote from this model."""
        return LabCache.load(path, self.model, self.codec)


def open_lab(source: str | Path, kind: str | None = None, device: str | None = "cpu", seed: int | None = 0) -> Lab:
    """The model at `source` as a Lab: a preset or shipped toy by name, a checkpoint folder (found by its files),
    or with `kind` one of tui_lab.loading.SOURCE_KINDS ("hf": a Hugging Face folder, no download)."""
    if kind is None:
        kind = "checkpoint" if is_checkpoint(source) else "preset"
    loaded = load_model(kind, source, device, seed=seed) if kind in ("preset", "config") else \
        load_model(kind, source, device)
    return Lab(loaded.model, loaded.codec, loaded.label)

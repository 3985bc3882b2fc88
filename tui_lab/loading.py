"""A model and its codec from where a person points: a preset, a config, a checkpoint, a Hugging Face folder.

The one place that knows the sources; the CLI (`generate`, `bench`, `export`) and the app's live model
both call `load_model`. A model without a tokenizer (random weights) gets the one fallback codec,
`ByteCodec`. Importing this module imports no torch; loading does.

`hf_options` (keyword-only: `download=`, `allow_pickle=`) go to the Hugging Face side untouched. A preset
that ships trained weights (`tui_lab/shipped/`), or a config equal to one, resolves here to its
checkpoint instead of random weights: an edited copy is a new model and gets random weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_lab.config import ModelConfig
from tui_lab.devices import fit_problem, free_memory, out_of_memory, pick_device
from tui_lab.shipped import shipped_checkpoint

SOURCE_KINDS = ("preset", "config", "checkpoint", "hf")


@dataclass
class LoadedModel:
    model: Any  # tui_lab.model.Transformer in eval mode, on `device`
    codec: Any  # the model's tui_lab Tokenizer, or ByteCodec when it has none
    label: str  # what was loaded, for people: "preset gpt2-toy (random weights)"
    device: str  # where it lives ("auto" resolved)

    @property
    def config(self) -> ModelConfig:
        return self.model.config

    @property
    def fallback(self) -> bool:
        """True when the codec is the byte fallback rather than a trained tokenizer."""
        from tui_lab.data.byte_codec import ByteCodec

        return isinstance(self.codec, ByteCodec)

    @property
    def tokenizer(self) -> Any:
        """The model's own tokenizer, None for random weights."""
        return None if self.fallback else self.codec


def load_model(kind: str, source: str | Path | ModelConfig, device: str | None = "cpu", seed: int | None = 0,
               **hf_options: Any) -> LoadedModel:
    """Load from `kind` in SOURCE_KINDS: a preset name, a ModelConfig, a checkpoint folder, an HF folder or id.

    Random weights (preset, config) are drawn with `seed` without touching the global RNG (None: from
    the global RNG as it stands). ValueError with one line for a bad source, device or a model too big,
    and for running out of memory on the device while loading (naming the device).
    """
    device = pick_device(device)
    name = source.name if isinstance(source, ModelConfig) else str(source)
    doing = f"building {name!r}" if kind in ("preset", "config") else f"loading {name}"
    with out_of_memory(device, doing, "try a smaller model or another device"):
        return _load(kind, source, device, seed, **hf_options)


def _load(kind: str, source: str | Path | ModelConfig, device: str, seed: int | None,
          **hf_options: Any) -> LoadedModel:
    if kind == "hf":
        return _load_hf(source, device, **hf_options)
    if hf_options:
        raise ValueError(f"{', '.join(hf_options)}: only for a Hugging Face source, not a {kind}")
    if kind == "checkpoint":
        return _load_checkpoint(source, device)
    if kind == "preset":
        from tui_lab.presets import load_preset

        source = load_preset(source)
    if kind in ("preset", "config"):
        shipped = shipped_for(source)
        if shipped is not None:
            return _load_checkpoint(shipped_checkpoint(shipped), device, f"shipped toy {shipped} (trained)")
        return _random(source, device, seed, f"{kind} {source.name} (random weights)")
    raise ValueError(f"source kind ({kind!r}) must be one of {', '.join(SOURCE_KINDS)}")


def _random(config: ModelConfig, device: str, seed: int | None, label: str) -> LoadedModel:
    import torch

    from tui_lab.analysis import memory
    from tui_lab.data.byte_codec import ByteCodec
    from tui_lab.model import build_model

    problem = fit_problem(memory(config).weights, free_memory(device), device)
    if problem:
        raise ValueError(problem)
    cuda = [device] if device.startswith("cuda") else []
    with torch.random.fork_rng(devices=cuda, device_type="cuda"):
        if seed is not None:
            torch.manual_seed(seed)  # the same config and seed give the same weights
        model = build_model(config, device=device)
    return LoadedModel(model.eval(), ByteCodec(config.vocab), label, device)


def shipped_for(config: ModelConfig) -> str | None:
    """The shipped toy whose trained weights `config` names, unedited; None for anything else."""
    from tui_lab.presets import load_preset

    if shipped_checkpoint(config.name) is None:
        return None
    return config.name if load_preset(config.name) == config else None


def _load_checkpoint(folder: str | Path, device: str, label: str | None = None) -> LoadedModel:
    from tui_lab.checkpoint import load_checkpoint

    ckpt = load_checkpoint(folder, device=device)
    label = label or f"checkpoint {folder} (step {ckpt.step})"
    return LoadedModel(ckpt.model.eval(), ckpt.tokenizer, label, device)


def _load_hf(source: str | Path, device: str, **hf_options: Any) -> LoadedModel:
    from tui_lab.data.byte_codec import ByteCodec
    from tui_lab.hf.load import open_hf

    opened = open_hf(source, device=device, **hf_options)
    model, label = opened.model, f"Hugging Face {opened.family} {source}"
    if opened.weights_note:  # the weights overrule config.json (a stored head kept apart): say it where the label is
        label += f" ({opened.weights_note})"
    if opened.tokenizer is None:  # real weights; text goes through the byte fallback until a tokenizer exists
        return LoadedModel(model, ByteCodec(model.config.vocab), f"{label} (no tokenizer: {opened.note})", device)
    return LoadedModel(model, opened.tokenizer, label, device)

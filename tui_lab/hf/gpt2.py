"""Real GPT-2 in the lab: open a Hugging Face GPT-2 folder (or cache root) safely, and export ours to one.

    model, tokenizer = load_hf_gpt2("gpt2")                 # a folder, a cache root or a cached model id
    model, tokenizer = load_hf_gpt2("gpt2", download=True)  # an uncached id is fetched (tui_lab.hf.hub)
    config = hf_gpt2_config(path)            # config.json only: instant, no torch
    export_hf_gpt2(model, tokenizer, "out")  # GPT2LMHeadModel.from_pretrained("out") gives the same logits

A checkpoint is untrusted input: safetensors cannot run code, and `pytorch_model.bin` is only read
with `torch.load(weights_only=True)`, which refuses any pickle that asks for more than tensors.
Where a path comes from is `tui_lab.hf.hub.resolve`'s business: its keyword options (`download`,
`allow_pickle`, `on_plan`, `on_progress`, `should_stop`, `timeout`) pass through untouched, and without
`download=True` nothing touches the network.
Importing this module imports no torch; loading does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_lab.config import ModelConfig
from tui_lab.hf.config import model_config_from_hf, read_config_json
from tui_lab.hf.folder import find_checkpoint
from tui_lab.hf.hub import resolve

if TYPE_CHECKING:
    import torch

    from tui_lab.data.tokenizers import Tokenizer
    from tui_lab.model import Transformer

__all__ = ["export_hf_gpt2", "hf_gpt2_config", "hf_gpt2_folder", "load_hf_gpt2"]


def hf_gpt2_folder(path: str | Path) -> Path:
    """The folder whose files would be read (a cache root resolves to its snapshot)."""
    return find_checkpoint(path).folder


def hf_gpt2_config(path: str | Path, **hub_options: Any) -> ModelConfig:
    """Our ModelConfig for a GPT-2 folder, from its config.json alone (with download=True, after fetching the model)."""
    files = find_checkpoint(resolve(path, **hub_options))
    return model_config_from_hf(read_config_json(files.config), files.name)


def load_hf_gpt2(
    path: str | Path, device: str | torch.device = "cpu", dtype: torch.dtype | None = None, **hub_options: Any
) -> tuple[Transformer, Tokenizer]:
    """An ordinary model of ours (in eval mode) with GPT-2's weights, and GPT-2's tokenizer.

    `hub_options` go to `tui_lab.hf.hub.resolve` (an uncached model id is fetched only with download=True).
    """
    import torch

    from tui_lab.hf.tokenizer import gpt2_hf_tokenizer, wrap_gpt2
    from tui_lab.hf.weights import open_weights, our_state_dict, untie_stored_head
    from tui_lab.model import build_model

    files = find_checkpoint(resolve(path, **hub_options))  # before torch work: the download, if asked for
    raw_config = read_config_json(files.config)
    config = model_config_from_hf(raw_config, files.name)
    hf_tokenizer = gpt2_hf_tokenizer(files.folder)  # before the weights: a missing tokenizer fails fast
    if hf_tokenizer.get_vocab_size() > config.vocab:
        raise ValueError(f"the tokenizer has {hf_tokenizer.get_vocab_size()} tokens but config.json vocab_size "
                         f"is {config.vocab}")
    tokenizer = wrap_gpt2(hf_tokenizer, _int_or_none(raw_config.get("eos_token_id")))
    weights = open_weights(files.weights)
    config, _ = untie_stored_head(weights, config, None, dtype or torch.float32)  # as transformers: both kept
    state = our_state_dict(weights, config, device, dtype or torch.float32)
    model = build_model(config, device="meta")  # no random init of weights that are about to be replaced
    model.load_state_dict(state, strict=True, assign=True)
    if config.tie_embeddings:
        model.lm_head.weight = model.tok_embed.weight  # assign=True gave each key its own Parameter
    return model.eval(), tokenizer


def export_hf_gpt2(model: Any, tokenizer: Any, out_dir: str | Path, overwrite: bool = False) -> Path:
    """Write `model` (a gpt2-family model of ours) and its tokenizer as a Hugging Face GPT-2 folder."""
    from tui_lab.hf.export import export_hf_gpt2 as export

    return export(model, tokenizer, out_dir, overwrite)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None

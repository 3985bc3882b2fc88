"""`load_hf`: any Hugging Face folder of a family the lab opens -> an ordinary model of ours and its tokenizer.

    model, tokenizer = load_hf("path/to/folder")   # a folder, a cache root or a cached model id
    config = hf_config("path/to/folder")           # config.json only: instant, no torch

The same safety rules as GPT-2 (`tui_lab.hf.weights`): safetensors, or pickles read with
weights_only; `hub_options` go to `tui_lab.hf.hub.resolve` untouched (nothing touches the network
without download=True). A folder without tokenizer files gives tokenizer None. The tokens the folder's
generation config bans (`bad_words_ids`, `generation_config.py`) ride on the model as `model.banned_ids`,
which the decoding loop never chooses, and all its generation settings as `model.folder_generation`
(`FolderGeneration`: the rules every run obeys, the defaults a person's settings override).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_lab.config import ModelConfig
from tui_lab.hf.chat import read_chat_template
from tui_lab.hf.config import read_config_json
from tui_lab.hf.families import family_of
from tui_lab.hf.folder import find_checkpoint
from tui_lab.hf.generation_config import Bans, FolderGeneration, read_bans, read_generation
from tui_lab.hf.hub import resolve

if TYPE_CHECKING:
    import torch

    from tui_lab.data.tokenizers import Tokenizer
    from tui_lab.model import Transformer


def hf_config(path: str | Path, **hub_options: Any) -> ModelConfig:
    """Our ModelConfig for a supported HF folder, from its config.json alone."""
    files = find_checkpoint(resolve(path, **hub_options))
    raw = read_config_json(files.config)
    return family_of(raw).config(raw, files.name)


def hf_generation(path: str | Path, **hub_options: Any) -> FolderGeneration:
    """A folder's generation settings (`generation_config.read_generation`), from its JSON files alone: no torch."""
    files = find_checkpoint(resolve(path, **hub_options))
    raw = read_config_json(files.config)
    config = family_of(raw).config(raw, files.name)
    return read_generation(files.folder, raw, config.vocab, config.family == "encoder-decoder")


def load_hf(path: str | Path, device: str | torch.device = "cpu", dtype: torch.dtype | None = None,
            **hub_options: Any) -> tuple[Transformer, Tokenizer | None]:
    """An ordinary model of ours (eval mode) with the checkpoint's weights, and its tokenizer or None."""
    opened = open_hf(path, device, dtype, **hub_options)
    return opened.model, opened.tokenizer


@dataclass
class OpenedHF:
    model: Transformer
    tokenizer: Tokenizer | None
    family: str  # for people: "Llama", "Marian"
    note: str  # why the tokenizer is None ("" when there is one)
    bans: Bans = Bans()  # generation_config.json's single-token bad_words_ids, and what was left out
    generation: FolderGeneration = FolderGeneration()  # the folder's generation settings (also model.folder_generation)
    weights_note: str = ""  # one line when the weights overrule config.json (a stored head kept apart), else ""


def open_hf(path: str | Path, device: str | torch.device = "cpu", dtype: torch.dtype | None = None,
            **hub_options: Any) -> OpenedHF:
    """`load_hf` plus the family's name and why the tokenizer is None, for the faces' labels."""
    import torch

    from tui_lab.hf.family_tokenizer import family_tokenizer
    from tui_lab.hf.weights import open_weights, our_state_dict, untie_stored_head
    from tui_lab.model import build_model

    files = find_checkpoint(resolve(path, **hub_options))  # before torch work: the download, if asked for
    raw = read_config_json(files.config)
    family = family_of(raw)
    config = family.config(raw, files.name)
    tokenizer, note = family_tokenizer(files.folder, raw, config)  # before the weights: a bad one fails fast
    if getattr(tokenizer, "model_vocab", 0) is None and config.vocab > tokenizer.vocab_size:
        tokenizer.model_vocab = config.vocab  # a padded vocab: generation may choose rows it cannot decode
    bans = read_bans(files.folder, raw, config.vocab)
    generation = read_generation(files.folder, raw, config.vocab, config.family == "encoder-decoder")
    chat = read_chat_template(files.folder, getattr(tokenizer, "chat_special", None))  # its bos_token, ...
    weights = open_weights(files.weights)
    config, weights_note = untie_stored_head(weights, config, family, dtype or torch.float32)
    state = our_state_dict(weights, config, device, dtype or torch.float32, family)
    model = build_model(config, device="meta")  # no random init of weights that are about to be replaced
    model.load_state_dict(state, strict=True, assign=True)
    if config.tie_embeddings:
        model.lm_head.weight = model.tok_embed.weight  # assign=True gave each key its own Parameter
    _rebuild_buffers(model, device)
    model.banned_ids = bans.ids  # the folder's, as transformers' generate applies them (decoder_state.py)
    model.folder_generation = generation  # its rules and defaults, which `generation.session.complete` applies
    model.chat_template = chat  # `generate --chat` renders a conversation with it (`hf/chat.py`)
    return OpenedHF(model.eval(), tokenizer, family.label, note, bans, generation, weights_note)


def _rebuild_buffers(model: Any, device: Any) -> None:
    """Non-persistent buffers (the sinusoidal table) were built on the meta device: rebuild them for real."""
    pos = getattr(model, "pos_embed", None)
    if pos is not None and hasattr(pos, "make_table"):
        pos.table = pos.make_table(pos.table.shape[0], pos.d_model).to(device)

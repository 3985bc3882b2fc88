"""The tokenizer a Hugging Face folder carries, for any family the lab opens, or None with the reason.

GPT-2 keeps its own builder (`tokenizer.py`: vocab.json + merges.txt or tokenizer.json), and reopens the
lab's own exports whose tokenizer.json is a char or word vocabulary (`exported_tokenizer`). Every other
family is read from `tokenizer.json` with HF `tokenizers` (what transformers' fast tokenizers load);
special ids come from config.json, or BERT's [CLS]/[SEP]/[PAD]/[UNK] tokens where it names none
(its tokenizer.json is WordPiece; `bpe` is only the wrapper's kind, its decode is the file's own).
Marian ships sentencepiece files (source.spm, target.spm) and vocab.json, no tokenizer.json: those are read
with the `sentencepiece` package (`marian_tokenizer.py`); without it, or without one of the three files,
the model loads with tokenizer None and the note says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_lab.config import ModelConfig
from tui_lab.data.tokenizers import Tokenizer

if TYPE_CHECKING:
    from tui_lab.hf.marian_tokenizer import MarianTokenizer


def family_tokenizer(folder: Path, hf: dict[str, Any],
                     config: ModelConfig) -> tuple[Tokenizer | MarianTokenizer | None, str]:
    """(tokenizer or None, a note for people when None)."""
    if hf.get("model_type") == "gpt2":
        if not (folder / "tokenizer.json").is_file() and not (folder / "vocab.json").is_file():
            return None, "no tokenizer files (vocab.json + merges.txt or tokenizer.json)"
        return _gpt2(folder, hf, config), ""
    if getattr(config, "input", "tokens") == "patches":
        return None, "an image model: it reads pixel_values, not text"
    if hf.get("model_type") == "marian" and (folder / "source.spm").is_file():
        return _marian(folder, hf, config)
    if hf.get("model_type") == "t5":  # read as AutoTokenizer reads it (spiece.model or tokenizer.json)
        from tui_lab.hf.t5_tokenizer import t5_tokenizer

        return t5_tokenizer(folder, hf, config.vocab)
    if not (folder / "tokenizer.json").is_file():
        return None, "no tokenizer.json"
    from tui_lab.hf.tokenizer import _read

    path = folder / "tokenizer.json"
    from tokenizers import Tokenizer as HFTokenizer

    tokens = _read(path, lambda: HFTokenizer.from_file(str(path)))
    _check_fits(tokens.get_vocab_size(), config)
    eos = _first_id(hf.get("eos_token_id"))
    # Marian's decoder starts from decoder_start_token_id (its pad); others from bos.
    bos = _first_id(hf.get("decoder_start_token_id" if config.family == "encoder-decoder" else "bos_token_id"))
    pad = _first_id(hf.get("pad_token_id"))
    # BERT's config.json names only pad: its WordPiece vocabulary spells the others ([CLS] ... [SEP]).
    bos = bos if bos is not None else tokens.token_to_id("[CLS]")
    eos = eos if eos is not None else tokens.token_to_id("[SEP]")
    pad = pad if pad is not None else tokens.token_to_id("[PAD]")
    eos = eos if eos is not None else bos
    bos = bos if bos is not None else eos
    if eos is None:
        return None, "config.json names no bos_token_id or eos_token_id for its tokenizer"
    unk = next((i for i in map(tokens.token_to_id, ("<unk>", "[UNK]")) if i is not None), None)
    return Tokenizer(tokens, "bpe", pad_id=pad if pad is not None else eos, bos_id=bos, eos_id=eos, unk_id=unk), ""


def _gpt2(folder: Path, hf: dict[str, Any], config: ModelConfig) -> Tokenizer:
    from tui_lab.hf.tokenizer import exported_tokenizer, gpt2_hf_tokenizer, wrap_gpt2

    own = exported_tokenizer(folder)  # the lab's own export of a char or word model (WordLevel tokenizer.json)
    if own is not None:
        _check_fits(own.vocab_size, config)
        return own
    tokens = gpt2_hf_tokenizer(folder)
    _check_fits(tokens.get_vocab_size(), config)
    return wrap_gpt2(tokens, _first_id(hf.get("eos_token_id")))


def folder_tokenizer(path: str | Path, **hub_options: Any) -> tuple[Tokenizer | MarianTokenizer | None, str]:
    """The tokenizer of an HF folder without its weights (no torch): for `info`, which reads config.json alone."""
    from tui_lab.hf.config import read_config_json
    from tui_lab.hf.families import family_of
    from tui_lab.hf.folder import find_checkpoint
    from tui_lab.hf.hub import resolve

    files = find_checkpoint(resolve(path, **hub_options))
    raw = read_config_json(files.config)
    return family_tokenizer(files.folder, raw, family_of(raw).config(raw, files.name))


def _marian(folder: Path, hf: dict[str, Any], config: ModelConfig) -> tuple[MarianTokenizer | None, str]:
    from tui_lab.hf.marian_tokenizer import marian_tokenizer, missing_files

    missing = missing_files(folder)
    if missing:
        return None, f"its sentencepiece tokenizer is incomplete: no {', '.join(missing)}"
    try:
        tokenizer = marian_tokenizer(folder, hf)
    except ImportError:
        return None, "its tokenizer is sentencepiece (source.spm), which needs the sentencepiece package"
    _check_fits(tokenizer.vocab_size, config)
    return tokenizer, ""


def describe(tokenizer: Any, note: str) -> str:
    """One line for people: what tokenizer a folder has ('sentencepiece, 58,101 pieces'), or why none."""
    if tokenizer is None:
        return f"none ({note})"
    kind = "sentencepiece (source.spm, target.spm, vocab.json)" if tokenizer.kind == "sentencepiece" else tokenizer.kind
    return f"{kind}, {tokenizer.vocab_size:,} tokens"


def _check_fits(size: int, config: ModelConfig) -> None:
    if size > config.vocab:
        raise ValueError(f"the tokenizer has {size} tokens but config.json vocab_size is {config.vocab}")


def _first_id(value: Any) -> int | None:
    """An id, or the first of a list of ids (Llama 3 lists several eos ids)."""
    if isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

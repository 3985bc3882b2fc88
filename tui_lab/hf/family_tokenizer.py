"""The tokenizer a Hugging Face folder carries, for any family the lab opens, or None with the reason.

GPT-2 keeps its own builder (`tokenizer.py`: vocab.json + merges.txt or tokenizer.json), and reopens the
lab's own exports whose tokenizer.json is a char or word vocabulary (`exported_tokenizer`). Every other
family's tokenizer is built by transformers' AutoTokenizer (`auto_tokenizer.py`: offline, no remote code), or,
where it cannot build one, read from `tokenizer.json` as stored, saying why. Special ids come from config.json,
then the tokenizer (tokenizer_config.json, special_tokens_map.json, its class's defaults), then BERT's
[CLS]/[SEP]/[PAD] tokens (`bpe` is only the wrapper's kind, its decode is the pipeline's own).
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
    from tui_lab.hf.auto_tokenizer import FolderTokenizer
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
    return _built(folder, hf, config)


def _built(folder: Path, hf: dict[str, Any], config: ModelConfig) -> tuple[FolderTokenizer | None, str]:
    """transformers' AutoTokenizer where it builds one (`auto_tokenizer.py`), else tokenizer.json as stored."""
    from tui_lab.hf.auto_tokenizer import LAB, FolderTokenizer, _settled, auto_tokenizer, from_auto
    from tui_lab.hf.tokenizer import _read, _special_names

    if not any((folder / name).is_file() for name in ("tokenizer.json", "tokenizer.model")):
        return None, "no tokenizer.json"
    # Marian's decoder starts from decoder_start_token_id (its pad); others from bos.
    start = "decoder_start_token_id" if config.family == "encoder-decoder" else "bos_token_id"
    ids = {"bos": _first_id(hf.get(start)), "eos": _first_id(hf.get("eos_token_id")),
           "pad": _first_id(hf.get("pad_token_id")), "unk": None}
    add_bos = _add_bos_named(folder)
    auto, why = auto_tokenizer(folder)
    if auto is not None:
        theirs = {key: value if value is not None else getattr(auto, f"{key}_token_id", None)
                  for key, value in ids.items()}  # config.json's ids first, as the lab's models read them
        tokenizer = from_auto(auto, _with_wordpiece(theirs, auto.backend_tokenizer), add_bos)
        _check_fits(tokenizer.vocab_size, config)
        return tokenizer, ""
    if not (folder / "tokenizer.json").is_file():
        return None, why
    path = folder / "tokenizer.json"
    from tokenizers import Tokenizer as HFTokenizer

    tokens = _read(path, lambda: HFTokenizer.from_file(str(path)))
    _check_fits(tokens.get_vocab_size(), config)
    # tokenizer_config.json's names where config.json has no id (a Qwen2 folder names its eos only there)
    named = {key: tokens.token_to_id(name) for key, name in _special_names(folder).items()}
    ids = {key: value if value is not None else named.get(key) for key, value in ids.items()}
    ids = _with_wordpiece(ids, tokens)
    if ids["eos"] is None and ids["bos"] is None:
        return None, "config.json names no bos_token_id or eos_token_id for its tokenizer"
    ids["unk"] = next((i for i in map(tokens.token_to_id, ("<unk>", "[UNK]")) if i is not None), None)
    return FolderTokenizer(tokens, _settled(ids), LAB, f"tokenizer.json as stored: {why}", None, add_bos), ""


def _with_wordpiece(ids: dict[str, int | None], tokens: Any) -> dict[str, int | None]:
    """BERT's config.json names only pad: its WordPiece vocabulary spells the others ([CLS] ... [SEP])."""
    spelled = {"bos": "[CLS]", "eos": "[SEP]", "pad": "[PAD]"}
    return {key: value if value is not None or key not in spelled else tokens.token_to_id(spelled[key])
            for key, value in ids.items()}


def _gpt2(folder: Path, hf: dict[str, Any], config: ModelConfig) -> Tokenizer:
    from tui_lab.hf.tokenizer import exported_tokenizer, gpt2_hf_tokenizer, wrap_gpt2

    own = exported_tokenizer(folder)  # the lab's own export of a char or word model (WordLevel tokenizer.json)
    if own is not None:
        _check_fits(own.vocab_size, config)
        return own
    from tui_lab.hf.auto_tokenizer import LAB, FolderTokenizer

    # The lab's builder, as load_hf_gpt2 reads GPT-2 (the same object both ways): its pipeline encodes as
    # transformers' GPT2Tokenizer does, keeping a stored post-processor (a bos it adds) as transformers keeps it.
    tokens = gpt2_hf_tokenizer(folder)
    _check_fits(tokens.get_vocab_size(), config)
    wrapped = wrap_gpt2(tokens, _first_id(hf.get("eos_token_id")))
    ids = {"bos": wrapped.bos_id, "eos": wrapped.eos_id, "pad": wrapped.pad_id, "unk": None}
    return FolderTokenizer(tokens, ids, LAB, "the lab's GPT-2 reader (tokenizer.json, or vocab.json + merges.txt "
                           "as GPT2Tokenizer builds them)", _template_specials(folder), _add_bos_named(folder),
                           kind="gpt2")


def _template_specials(folder: Path) -> dict[str, Any] | None:
    """For a folder with a chat template, the special tokens by name as transformers gives them to it (its class's
    defaults and special_tokens_map.json included); None without a template, or where transformers cannot say."""
    from tui_lab.hf.chat import JINJA
    from tui_lab.hf.tokenizer import tokenizer_config

    if not (folder / JINJA).is_file() and "chat_template" not in tokenizer_config(folder):
        return None
    from tui_lab.hf.auto_tokenizer import auto_tokenizer, chat_special

    auto, _ = auto_tokenizer(folder)
    return None if auto is None else chat_special(auto)


def _add_bos_named(folder: Path) -> bool | None:
    """tokenizer_config.json's add_bos_token, None where it names none."""
    from tui_lab.hf.tokenizer import tokenizer_config

    value = tokenizer_config(folder).get("add_bos_token")
    return value if isinstance(value, bool) else None


def folder_tokenizer(path: str | Path, **hub_options: Any) -> tuple[Tokenizer | MarianTokenizer | None, str]:
    """The tokenizer of an HF folder without its weights: for `info`, which reads config.json alone."""
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

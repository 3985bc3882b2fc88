"""GPT-2's byte-level BPE, built with HF `tokenizers` from a checkpoint's files, and written back.

Built exactly as `transformers` builds GPT-2's: BPE without dropout, prefixes or suffixes; a ByteLevel
pre-tokenizer without a prefix space (so " Hello" and "Hello" differ, as in GPT-2), a ByteLevel
decoder; `<|endoftext|>` (50256 in GPT-2) is both bos and eos, and stands in for pad, which GPT-2 lacks.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, processors

from tui_lab.data.tokenizers import Tokenizer
from tui_lab.errors import one_line

END_OF_TEXT = "<|endoftext|>"


def gpt2_hf_tokenizer(folder: Path) -> HFTokenizer:
    """tokenizer.json if present (what `transformers` itself loads first), else vocab.json + merges.txt."""
    if (folder / "tokenizer.json").is_file():
        hf = _read(folder / "tokenizer.json", lambda: HFTokenizer.from_file(str(folder / "tokenizer.json")))
        if not isinstance(hf.model, models.BPE):
            raise ValueError(f"tokenizer.json: model is {type(hf.model).__name__}, GPT-2's is BPE")
        return hf
    vocab, merges = folder / "vocab.json", folder / "merges.txt"
    if not (vocab.is_file() and merges.is_file()):
        raise ValueError(f"{folder} has no tokenizer: expected vocab.json + merges.txt or tokenizer.json")
    return _read(merges, lambda: byte_level_bpe(*models.BPE.read_file(str(vocab), str(merges))))


def exported_tokenizer(folder: Path) -> Tokenizer | None:
    """A tokenizer.json whose model is WordLevel, as `export_hf_gpt2` writes a char or word model's, with its
    special tokens named in tokenizer_config.json (what transformers' PreTrainedTokenizerFast reads); None
    for any other folder. A char vocabulary splits every code point (`data.tokenizers.char_tokenizer`)."""
    path = folder / "tokenizer.json"
    if not path.is_file():
        return None
    hf = _read(path, lambda: HFTokenizer.from_file(str(path)))
    if not isinstance(hf.model, models.WordLevel):
        return None
    names = _special_names(folder)
    ids = {key: hf.token_to_id(names[key]) if key in names else None for key in ("pad", "bos", "eos", "unk")}
    missing = [f"{key}_token" for key in ("bos", "eos") if ids[key] is None]
    if missing:
        raise ValueError(f"tokenizer_config.json: a WordLevel tokenizer.json needs {' and '.join(missing)} "
                         f"naming tokens of its vocabulary")
    kind = "char" if isinstance(hf.pre_tokenizer, pre_tokenizers.Split) else "word"
    pad = ids["pad"] if ids["pad"] is not None else ids["eos"]
    return Tokenizer(hf, kind, pad_id=pad, bos_id=ids["bos"], eos_id=ids["eos"], unk_id=ids["unk"])


def tokenizer_config(folder: Path) -> dict:
    """tokenizer_config.json as a dict ({} without one); ValueError in one line when it cannot be read."""
    path = folder / "tokenizer_config.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"tokenizer_config.json: cannot read it ({one_line(err)})") from None
    return data if isinstance(data, dict) else {}


def _special_names(folder: Path) -> dict[str, str]:
    """{"bos": "<bos>", ...} from tokenizer_config.json (a token is a string or an AddedToken dict)."""
    data = tokenizer_config(folder)
    names = {}
    for key in ("pad", "bos", "eos", "unk"):
        value = data.get(f"{key}_token")
        value = value.get("content") if isinstance(value, dict) else value
        if isinstance(value, str):
            names[key] = value
    return names


def byte_level_bpe(vocab: dict[str, int], merges: list[tuple[str, str]]) -> HFTokenizer:
    """GPT-2's tokenizer from its vocabulary and merges, as `transformers`' GPT2Tokenizer builds it."""
    bpe = models.BPE(vocab, merges, dropout=None, continuing_subword_prefix="", end_of_word_suffix="",
                     fuse_unk=False)
    hf = HFTokenizer(bpe)
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.post_processor = processors.ByteLevel(trim_offsets=False)
    if END_OF_TEXT in vocab:
        hf.add_special_tokens([END_OF_TEXT])
    return hf


def wrap_gpt2(hf: HFTokenizer, fallback_eos: int | None = None) -> Tokenizer:
    """Our Tokenizer of kind 'gpt2': bos = eos = pad = <|endoftext|> (or config.json's eos_token_id)."""
    eos = hf.token_to_id(END_OF_TEXT)
    if eos is None and isinstance(fallback_eos, int) and 0 <= fallback_eos < hf.get_vocab_size():
        eos = fallback_eos
    return Tokenizer(hf, "gpt2", pad_id=eos, bos_id=eos, eos_id=eos, unk_id=None)


def save_hf_tokenizer(tokenizer: Tokenizer, folder: Path, max_len: int) -> list[str]:
    """tokenizer.json (+ vocab.json and merges.txt for BPE) and tokenizer_config.json, for AutoTokenizer."""
    hf = tokenizer.hf
    hf.save(str(folder / "tokenizer.json"))
    written = ["tokenizer.json"]
    if isinstance(hf.model, models.BPE):
        written += [Path(p).name for p in hf.model.save(str(folder))]
    names = {key: _token(hf, getattr(tokenizer, f"{key}_id")) for key in ("bos", "eos", "pad", "unk")}
    config = {
        # GPT2Tokenizer rebuilds GPT-2's pipeline; any other kind of ours is loaded from tokenizer.json as is.
        "tokenizer_class": "GPT2Tokenizer" if tokenizer.kind == "gpt2" else "PreTrainedTokenizerFast",
        "model_max_length": max_len, "add_prefix_space": False, "add_bos_token": False,
        **{f"{key}_token": value for key, value in names.items() if value is not None},
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return [*written, "tokenizer_config.json"]


def _token(hf: HFTokenizer, token_id: int | None) -> str | None:
    return None if token_id is None else hf.id_to_token(token_id)


def _read(path: Path, build):
    try:
        return build()
    except Exception as err:  # tokenizers raises a bare Exception for malformed files
        raise ValueError(f"{path.name}: cannot read the tokenizer ({one_line(err)})") from None

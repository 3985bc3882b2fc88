"""Tokenizers: round trips, vocabulary sizes, save/load, the unknown-character fallback."""

from __future__ import annotations

import json

import pytest
import tokenizers

from tui_lab.data.corpus import builtin_corpus
from tui_lab.data.tokenizers import (
    Tokenizer,
    bpe_tokenizer,
    char_tokenizer,
    load_tokenizer,
    word_tokenizer,
)

UNICODE = "Grüße aus Köln!\n\tnaïve café — 東京 🙂 e\u0301\r\n<eos> literally"


@pytest.fixture(scope="module")
def bpe() -> Tokenizer:
    return bpe_tokenizer(builtin_corpus()[:60_000], 400)


def test_char_round_trip_unicode() -> None:
    tok = char_tokenizer(UNICODE)
    ids = tok.encode(UNICODE)
    assert len(ids) == len(UNICODE)  # one id per code point, newlines and combining marks included
    assert tok.decode(ids) == UNICODE
    assert tok.unknown(UNICODE) == []


def test_char_vocab_is_specials_then_every_character() -> None:
    tok = char_tokenizer("banana")
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (0, 1, 2, 3)
    assert tok.vocab_size == 4 + 3
    assert tok.token_strings(list(range(tok.vocab_size))) == ["<pad>", "<bos>", "<eos>", "<unk>", "a", "b", "n"]


def test_literal_special_text_is_not_a_special_token() -> None:
    tok = char_tokenizer("<eos> and more")
    ids = tok.encode("<eos>")
    assert len(ids) == 5 and tok.eos_id not in ids
    assert tok.decode(ids) == "<eos>"


def test_decode_drops_special_tokens() -> None:
    tok = char_tokenizer("abc")
    ids = [tok.bos_id, *tok.encode("cab"), tok.eos_id, tok.pad_id, tok.pad_id]
    assert tok.decode(ids) == "cab"


def test_unknown_characters_map_to_unk_and_are_listed() -> None:
    tok = char_tokenizer("hello world")
    ids = tok.encode("hello, wörld!")
    assert ids.count(tok.unk_id) == 3
    assert tok.unknown("hello, wörld! ö") == [",", "ö", "!"]  # each once, in order of appearance
    assert tok.decode(tok.encode("hello")) == "hello"


def test_token_strings_make_whitespace_visible() -> None:
    tok = char_tokenizer("a b\n")
    assert tok.token_strings(tok.encode("a b\n")) == ["a", "␣", "b", "↵"]


@pytest.mark.parametrize("size", [259, 300, 400])
def test_bpe_vocab_size_is_what_was_asked(size: int) -> None:
    tok = bpe_tokenizer(builtin_corpus()[:60_000], size)
    assert tok.vocab_size == size
    assert tok.kind == "bpe" and tok.unk_id is None


def test_bpe_more_vocab_means_fewer_tokens() -> None:
    text = builtin_corpus()[:60_000]
    small, large = bpe_tokenizer(text, 300), bpe_tokenizer(text, 600)
    assert len(large.encode(text)) < len(small.encode(text)) < len(text)


def test_bpe_round_trips_any_unicode(bpe: Tokenizer) -> None:
    assert bpe.decode(bpe.encode(UNICODE)) == UNICODE
    assert bpe.unknown(UNICODE) == []  # byte level: nothing is unknown
    assert bpe.special_ids.isdisjoint(bpe.encode(UNICODE))


def test_bpe_token_strings_show_bytes_of_split_characters(bpe: Tokenizer) -> None:
    strings = bpe.token_strings(bpe.encode(" 🙂"))
    assert "".join(strings).startswith("␣")
    assert all("\ufffd" not in s for s in strings)


@pytest.mark.parametrize("size", [0, 100, 258])
def test_bpe_vocab_too_small_is_a_clear_error(size: int) -> None:
    with pytest.raises(ValueError, match=r"^vocab: .*259"):
        bpe_tokenizer("some text", size)


def test_bpe_vocab_larger_than_the_text_supports_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"^vocab: this text supports at most \d+"):
        bpe_tokenizer("tiny text", 5000)


def test_word_round_trip_and_unknown_words() -> None:
    tok = word_tokenizer(["drei", "hundert", "zwölf", "drei"])
    assert tok.vocab_size == 4 + 3
    text = "drei hundert zwölf"
    assert tok.decode([tok.bos_id, *tok.encode(text), tok.eos_id]) == text
    assert tok.unknown("drei vier hundert fünf vier") == ["vier", "fünf"]
    assert tok.encode("vier") == [tok.unk_id]


def test_word_rejects_words_with_spaces() -> None:
    with pytest.raises(ValueError, match="^words:"):
        word_tokenizer(["two words"])


@pytest.mark.parametrize("make", [lambda: char_tokenizer(UNICODE), lambda: word_tokenizer(["a", "ü", "東京"])])
def test_save_load_round_trip(tmp_path, make) -> None:
    tok = make()
    tok.save(tmp_path / "tok")
    loaded = load_tokenizer(tmp_path / "tok")
    assert loaded == tok
    assert loaded.hf.to_str() == tok.hf.to_str()
    sample = "a ü 東京 x" if tok.kind == "word" else UNICODE
    assert loaded.encode(sample) == tok.encode(sample)
    assert loaded.decode(loaded.encode(sample)) == tok.decode(tok.encode(sample))
    meta = json.loads((tmp_path / "tok" / "tokenizer_meta.json").read_text())
    assert meta["kind"] == tok.kind and meta["unk_id"] == tok.unk_id


def test_save_load_bpe_keeps_literal_specials(tmp_path, bpe: Tokenizer) -> None:
    bpe.save(tmp_path)
    loaded = Tokenizer.load(tmp_path)
    assert loaded == bpe and loaded.unk_id is None
    assert loaded.encode(UNICODE) == bpe.encode(UNICODE)
    assert loaded.eos_id not in loaded.encode("<eos>")


def test_load_missing_files_names_them(tmp_path) -> None:
    with pytest.raises(ValueError, match="tokenizer.json"):
        load_tokenizer(tmp_path)
    char_tokenizer("ab").save(tmp_path)
    (tmp_path / "tokenizer_meta.json").unlink()
    with pytest.raises(ValueError, match="tokenizer_meta.json"):
        load_tokenizer(tmp_path)


def test_wraps_any_hf_tokenizer_with_its_special_ids() -> None:
    # The GPT-2 wrapper's path: an arbitrary tokenizers.Tokenizer plus the ids of its specials.
    hf = tokenizers.Tokenizer(tokenizers.models.WordLevel({"<|endoftext|>": 0, "hi": 1}, unk_token="<|endoftext|>"))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tok = Tokenizer(hf, "gpt2", pad_id=0, bos_id=0, eos_id=0)
    assert tok.vocab_size == 2 and tok.unk_id is None
    assert tok.decode([0, 1, 0]) == "hi"


def test_bad_kind_and_ids_are_clear_errors() -> None:
    hf = char_tokenizer("ab").hf
    with pytest.raises(ValueError, match="^kind:"):
        Tokenizer(hf, "sentencepiece", 0, 1, 2)
    with pytest.raises(ValueError, match="^eos_id:"):
        Tokenizer(hf, "char", 0, 1, 99)
    with pytest.raises(ValueError, match="^ids: 42"):
        char_tokenizer("ab").decode([4, 42])

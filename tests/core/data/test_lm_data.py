"""Language-model batches: shapes, the shift by one, the split, determinism, clear errors."""

from __future__ import annotations

import pytest
import torch

from tui_lab.data.lm import LMData, lm_data
from tui_lab.data.tokenizers import char_tokenizer

TEXT = "".join(chr(ord("a") + i % 26) for i in range(1000))  # abc...zabc...: each id's successor is known


@pytest.fixture(scope="module")
def data() -> LMData:
    return lm_data(TEXT, char_tokenizer(TEXT), val_fraction=0.1)


def test_split_sizes_and_order(data: LMData) -> None:
    assert data.train.dtype == torch.long and data.train.ndim == 1
    assert (len(data.train), len(data.val)) == (900, 100)
    assert torch.equal(torch.cat([data.train, data.val]), torch.tensor(data.tokenizer.encode(TEXT)))


def test_batch_shapes_and_shift_by_one(data: LMData) -> None:
    x, y = data.batch("train", 8, 16, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (8, 16) and x.dtype == y.dtype == torch.long
    assert torch.equal(x[:, 1:], y[:, :-1])  # y is x shifted left by one
    # Every target is the next letter of the alphabet: windows are contiguous runs of the text.
    letters = data.tokenizer.decode
    for row_x, row_y in zip(x.tolist(), y.tolist(), strict=True):
        assert [chr((ord(c) - ord("a") + 1) % 26 + ord("a")) for c in letters(row_x)] == list(letters(row_y))


def test_windows_come_from_their_split(data: LMData) -> None:
    text_val = data.tokenizer.decode(data.val.tolist())
    x, y = data.batch("val", 32, 20, torch.Generator().manual_seed(1))
    for row_x, row_y in zip(x.tolist(), y.tolist(), strict=True):
        window = data.tokenizer.decode([*row_x, row_y[-1]])
        assert window in text_val


def test_batches_are_deterministic_given_the_generator(data: LMData) -> None:
    a = data.batch("train", 4, 10, torch.Generator().manual_seed(7))
    b = data.batch("train", 4, 10, torch.Generator().manual_seed(7))
    c = data.batch("train", 4, 10, torch.Generator().manual_seed(8))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], c[0])


def test_every_start_is_reachable_including_the_last() -> None:
    text = "abcdef"
    data = lm_data(text * 2, char_tokenizer(text), val_fraction=0.5)  # 6 train tokens
    x, y = data.batch("train", 200, 4, torch.Generator().manual_seed(0))
    assert set(x[:, 0].tolist()) == set(data.train[:2].tolist())  # starts 0 and 1: "a" and "b"
    assert data.train[-1].item() in y[:, -1].tolist()  # the last train token is a target


def test_seq_len_too_long_names_seq_len(data: LMData) -> None:
    with pytest.raises(ValueError, match=r"^seq_len: 100 needs 101 tokens but the val split has 100"):
        data.batch("val", 2, 100)
    assert data.batch("val", 2, 99)[0].shape == (2, 99)  # exactly one window fits


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"split": "test"}, "split"), ({"batch_size": 0}, "batch_size"), ({"seq_len": 0}, "seq_len")],
)
def test_bad_batch_arguments(data: LMData, kwargs: dict, field: str) -> None:
    args = {"split": "train", "batch_size": 2, "seq_len": 8, **kwargs}
    with pytest.raises(ValueError, match=f"^{field}:"):
        data.batch(**args)


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 1.5])
def test_bad_val_fraction(fraction: float) -> None:
    with pytest.raises(ValueError, match="^val_fraction:"):
        lm_data(TEXT, char_tokenizer(TEXT), val_fraction=fraction)


def test_text_too_short_to_split() -> None:
    with pytest.raises(ValueError, match="^text:"):
        lm_data("a", char_tokenizer("a"))

"""Seq2seq tasks: German number words, held-out splits, padding, masks and ignore_index."""

from __future__ import annotations

import pytest
import torch

from tui_lab.data.numbers import english_words, german_words
from tui_lab.data.tasks import IGNORE_INDEX, SYMBOLS, TASKS, Seq2SeqTask, collate, load_task


@pytest.fixture(scope="module", params=TASKS)
def task(request) -> Seq2SeqTask:
    return load_task(request.param, seed=0)


@pytest.mark.parametrize(
    ("n", "english", "german"),
    [
        (0, "zero", "null"),
        (1, "one", "eins"),
        (11, "eleven", "elf"),
        (12, "twelve", "zwölf"),
        (13, "thirteen", "dreizehn"),
        (16, "sixteen", "sechzehn"),
        (17, "seventeen", "siebzehn"),
        (20, "twenty", "zwanzig"),
        (21, "twenty one", "ein und zwanzig"),
        (30, "thirty", "dreißig"),
        (67, "sixty seven", "sieben und sechzig"),
        (100, "one hundred", "ein hundert"),
        (101, "one hundred one", "ein hundert eins"),
        (111, "one hundred eleven", "ein hundert elf"),
        (200, "two hundred", "zwei hundert"),
        (321, "three hundred twenty one", "drei hundert ein und zwanzig"),
        (999, "nine hundred ninety nine", "neun hundert neun und neunzig"),
    ],
)
def test_number_words(n: int, english: str, german: str) -> None:
    assert english_words(n) == english
    assert german_words(n) == german


def test_german_units_come_before_tens_everywhere() -> None:
    for n in range(21, 1000):
        tens, units = divmod(n % 100, 10)
        if tens >= 2 and units:
            unit = "ein" if units == 1 else german_words(units)
            assert german_words(n).split()[-3:] == [unit, "und", german_words(tens * 10)]


def test_number_words_outside_range() -> None:
    with pytest.raises(ValueError, match="^number:"):
        german_words(1000)


def test_load_task_unknown_name() -> None:
    expected = r"^task: unknown task 'sort'; choose one of copy, reverse, numbers-de, names$"
    with pytest.raises(ValueError, match=expected):
        load_task("sort")


def test_numbers_split_is_disjoint_complete_and_seeded() -> None:
    task = load_task("numbers-de", seed=0)
    train = {src for src, _ in task.examples("train")}
    val = {src for src, _ in task.examples("val")}
    assert len(val) == 100 and len(train) == 900
    assert train.isdisjoint(val)
    assert train | val == {english_words(n) for n in range(1000)}
    assert load_task("numbers-de", seed=0).val == task.val  # deterministic given the seed
    assert load_task("numbers-de", seed=1).val != task.val


def test_numbers_examples_are_english_to_german() -> None:
    task = load_task("numbers-de")
    pairs = dict(task.examples("train") + task.examples("val"))
    assert pairs["three hundred twenty one"] == "drei hundert ein und zwanzig"
    assert pairs["seventeen"] == "siebzehn"
    assert task.tokenizer.unknown(" ".join(pairs) + " " + " ".join(pairs.values())) == []


def test_shared_vocabulary_with_specials(task: Seq2SeqTask) -> None:
    tok = task.tokenizer
    assert tok.kind == "word" and (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (0, 1, 2, 3)
    src_ids = {i for src, _ in task.train for i in src}
    tgt_ids = {i for _, tgt in task.train for i in tgt}
    # Pairs hold plain words; collate adds specials. A task with texts holds <unk> for words beyond the vocabulary.
    allowed = {tok.unk_id} if task.texts is not None else set()
    assert (tok.special_ids - allowed).isdisjoint(src_ids | tgt_ids)
    if task.name in ("copy", "reverse"):
        assert src_ids == tgt_ids  # one vocabulary, one embedding for both sides


@pytest.mark.parametrize("name", ["copy", "reverse"])
def test_symbol_tasks(name: str) -> None:
    task = load_task(name, seed=0)
    assert (len(task.train), len(task.val)) == (10_000, 500)
    decode = task.tokenizer.decode
    for src, tgt in task.train[:200] + task.val:
        words, tgt = decode(src).split(), decode(tgt)
        assert 3 <= len(words) <= 10 and set(words) <= set(SYMBOLS)
        assert tgt.split() == (words if task.name == "copy" else words[::-1])
    held_out = {tuple(src) for src, _ in task.val}
    assert len(held_out) == 500
    assert held_out.isdisjoint(tuple(src) for src, _ in task.train)  # never trained on
    assert load_task(task.name, seed=0).train == task.train
    assert load_task(task.name, seed=3).val != task.val


def test_batch_padding_masks_and_ignore_index(task: Seq2SeqTask) -> None:
    tok = task.tokenizer
    pairs = task.train[:6]
    batch = collate(pairs, tok)
    n = len(pairs)
    s = max(len(src) for src, _ in pairs)
    t = max(len(tgt) for _, tgt in pairs) + 1
    assert batch.src.shape == batch.src_mask.shape == (n, s)
    assert batch.tgt_in.shape == batch.tgt_out.shape == batch.tgt_mask.shape == (n, t)
    assert batch.src_mask.dtype == batch.tgt_mask.dtype == torch.bool
    for row, (src, tgt) in enumerate(pairs):
        k = len(tgt) + 1
        assert batch.src[row].tolist() == src + [tok.pad_id] * (s - len(src))
        assert batch.src_mask[row].tolist() == [True] * len(src) + [False] * (s - len(src))
        assert batch.tgt_in[row].tolist() == [tok.bos_id, *tgt] + [tok.pad_id] * (t - k)
        assert batch.tgt_out[row].tolist() == [*tgt, tok.eos_id] + [IGNORE_INDEX] * (t - k)
        assert batch.tgt_mask[row].tolist() == [True] * k + [False] * (t - k)
    # Teacher forcing: the decoder input is the output shifted right by one, bos in front.
    real = batch.tgt_mask
    assert torch.equal(batch.tgt_in[:, 1:][real[:, 1:]], batch.tgt_out[:, :-1][real[:, 1:]])
    assert torch.equal(batch.tgt_out == IGNORE_INDEX, ~real)


def test_batch_loss_skips_padding(task: Seq2SeqTask) -> None:
    batch = task.batch("train", 16, torch.Generator().manual_seed(0))
    logits = torch.randn(*batch.tgt_out.shape, task.tokenizer.vocab_size)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten())
    real = batch.tgt_mask.flatten()
    manual = torch.nn.functional.cross_entropy(logits.flatten(0, 1)[real], batch.tgt_out.flatten()[real])
    assert torch.allclose(loss, manual)


def test_batch_is_deterministic_given_the_generator(task: Seq2SeqTask) -> None:
    a = task.batch("train", 8, torch.Generator().manual_seed(5))
    b = task.batch("train", 8, torch.Generator().manual_seed(5))
    same = (x is y is None or torch.equal(x, y) for x, y in zip(vars(a).values(), vars(b).values(), strict=True))
    assert all(same)
    moved = a.to("cpu")
    assert type(moved) is type(a) and torch.equal(moved.tgt_out, a.tgt_out)


def test_batches_cover_the_split_in_order(task: Seq2SeqTask) -> None:
    batches = list(task.batches("val", 64))
    assert sum(len(b.src) for b in batches) == len(task.val)
    first = batches[0]
    assert first.src[0][first.src_mask[0]].tolist() == task.val[0][0]
    assert task.max_target_len == max(len(tgt) for _, tgt in task.train + task.val) + 1


def test_bad_split_and_batch_size(task: Seq2SeqTask) -> None:
    with pytest.raises(ValueError, match="^split:"):
        task.batch("test", 4)
    with pytest.raises(ValueError, match="^batch_size:"):
        task.batch("train", 0)

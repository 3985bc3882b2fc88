"""The names task and the per-example extended vocabulary the copy mechanism points with."""

from __future__ import annotations

import pytest

from tui_lab.data import extended, names
from tui_lab.data.tasks import IGNORE_INDEX, load_task
from tui_lab.data.tokenizers import word_tokenizer
from tui_lab.train.config import SEQ2SEQ_TASKS, train_config_for


@pytest.fixture(scope="module")
def task():
    return load_task("names", seed=0)


def _names_in(texts: list[tuple[str, str]], pool: set[str]) -> set[str]:
    return {w for src, tgt in texts for w in (src + " " + tgt).split() if w in pool}


def test_name_sets_are_disjoint_and_seeded():
    common, rare, held_out = names.name_sets(0)
    assert len(set(common) | set(rare) | set(held_out)) == len(common) + len(rare) + len(held_out)
    assert names.name_sets(0) == (common, rare, held_out)
    assert names.name_sets(1)[2] != held_out
    assert not (set(common) | set(rare) | set(held_out)) & set(names.template_words())


def test_held_out_names_never_train_and_never_enter_the_vocabulary(task):
    common, rare, held_out = (set(s) for s in names.name_sets(0))
    vocab = set(task.tokenizer.hf.get_vocab())
    assert not held_out & vocab and not rare & vocab and common <= vocab
    assert not _names_in(task.examples("train"), held_out)
    val_names = _names_in(task.examples("val"), held_out | common | rare)
    assert val_names and val_names <= held_out  # every validation name is a held-out one
    for src, _ in task.examples("val"):
        assert task.tokenizer.unknown(src)  # so without copying, each is an unknown word


def test_templates_vary_and_carry_the_name(task):
    assert len(names.TEMPLATES) >= 8
    positions = {en.split().index("{}") for en, _ in names.TEMPLATES}
    assert {0, 2} <= positions and any(en.split()[-1] == "{}" for en, _ in names.TEMPLATES)
    for src, tgt in task.examples("train")[:500]:
        person = [w for w in src.split() if w not in names.template_words()]
        assert person and all(p in tgt.split() for p in person)


def test_extended_ids_point_at_the_source_word():
    tok = word_tokenizer("hello i am hallo ich bin".split())
    src, oov = extended.source_ids(tok, "hello i am zorblax")
    assert oov == ["zorblax"] and src[-1] == tok.vocab_size
    tgt = extended.target_ids(tok, "hallo ich bin zorblax quux", oov)
    assert tgt[-2] == tok.vocab_size and tgt[-1] == tok.unk_id  # quux is not in the source: stays <unk>
    assert extended.base_ids(tok, src)[-1] == tok.unk_id
    assert extended.decode(tok, tgt[:-1], oov) == "hallo ich bin zorblax"
    assert extended.token_strings(tok, tgt[-2:], oov) == ["zorblax", "<unk>"]
    with pytest.raises(ValueError, match="^ids: "):
        extended.decode(tok, [tok.vocab_size + 1], oov)


def test_batches_carry_extended_ids(task):
    batch = task.batch("val", 16)
    vocab = task.tokenizer.vocab_size
    assert batch.src_ext.shape == batch.src.shape and batch.tgt_ext.shape == batch.tgt_out.shape
    assert bool((batch.src_ext >= vocab).any()) and bool((batch.tgt_ext >= vocab).any())
    assert bool(((batch.src_ext >= vocab) == (batch.src == task.tokenizer.unk_id)).all())
    assert bool(((batch.tgt_ext == IGNORE_INDEX) == (batch.tgt_out == IGNORE_INDEX)).all())


def test_names_is_a_trainable_task():
    assert "names" in SEQ2SEQ_TASKS
    assert train_config_for("names").task == "names"

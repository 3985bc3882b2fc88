"""Masked language modelling (BERT's objective): the 15% / 80-10-10 masking, the baselines, the trainer's
reports, and a short run that beats the context-free baselines."""

from __future__ import annotations

import pytest
import torch

from tui_lab import load_preset
from tui_lab.data.masking import MASK, TYPED_MASK, mask_id, mask_text_ids, with_mask_token
from tui_lab.data.tokenizers import char_tokenizer
from tui_lab.train import Trainer, train_config_for
from tui_lab.train.mlm import mask_tokens, unigram_baselines
from tui_lab.train.sources import IGNORE_INDEX


def test_masking_chooses_15_percent_and_splits_them_80_10_10():
    ids = torch.randint(5, 60, (400, 250))
    inputs, targets = mask_tokens(ids, 63, 64, torch.Generator().manual_seed(0))
    chosen = targets != IGNORE_INDEX
    assert abs(chosen.float().mean().item() - 0.15) < 0.01
    assert torch.equal(targets[chosen], ids[chosen]) and torch.equal(inputs[~chosen], ids[~chosen])
    as_mask = (inputs[chosen] == 63).float().mean().item()
    kept = (inputs[chosen] == ids[chosen]).float().mean().item()
    assert abs(as_mask - 0.8) < 0.01
    assert abs(kept - (0.1 + 0.1 / 64)) < 0.01  # 10% kept, plus random draws that hit the same id


def test_every_row_has_a_masked_position():
    _, targets = mask_tokens(torch.randint(0, 9, (64, 3)), 9, 10, torch.Generator().manual_seed(1))
    assert ((targets != IGNORE_INDEX).sum(1) >= 1).all()


def test_unigram_baselines_are_exact():
    train, val = torch.tensor([1, 1, 1, 2]), torch.tensor([1, 2, 2, 3])
    most_frequent, unigram = unigram_baselines(train, val)
    assert most_frequent == 0.25  # token 1, a quarter of val
    assert unigram == pytest.approx(0.75 * 0.25 + 0.25 * 0.5)


def test_the_mask_token_is_added_once_and_typed_as_MASK():
    tok = with_mask_token(char_tokenizer("a cat"))
    assert mask_id(tok) == tok.vocab_size - 1 and with_mask_token(tok) is tok
    assert mask_id(char_tokenizer("a cat")) is None
    ids, labels = mask_text_ids(f"a {TYPED_MASK}at", tok)
    assert ids[2] == mask_id(tok) and labels[2] == TYPED_MASK and len(ids) == 5
    assert tok.decode(ids) == f"a {MASK}at"  # decoded text shows where the mask is


def test_a_short_mlm_run_beats_the_unigram_baselines():
    config = load_preset("bert-toy", encoder_layers=2, d_model=64, d_ff=128, max_len=32)
    train = train_config_for(None, steps=150, batch_size=32, seq_len=32, lr=3e-3, warmup=20, eval_every=0,
                             sample_every=0, eval_batches=4)
    events = []
    done = Trainer(config, train, on_event=events.append).run()
    assert done.masked_accuracy > done.baseline_accuracy + 0.05, done
    assert done.baseline_accuracy > done.unigram_accuracy
    evals = [e for e in events if e.kind == "eval"]
    assert evals and evals[-1].to_dict()["masked_accuracy"] == done.masked_accuracy


def test_language_modelling_refuses_an_encoder_only_lm_head_in_one_line():
    config = load_preset("bert-toy", head="lm")
    expected = r"^language modelling needs a decoder-only model; 'bert-toy' is encoder-only$"
    with pytest.raises(ValueError, match=expected):
        Trainer(config, train_config_for(None, steps=1))

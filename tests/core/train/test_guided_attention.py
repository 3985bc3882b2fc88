"""Guided attention (Tachibana et al. 2017): the diagonal prior, its loss, the trainer's use of it."""

import pytest
import torch
from train_helpers import lm_config, small_lm_data, tiny_lm, tiny_seq2seq

from tui_lab.cli import main
from tui_lab.data import load_task
from tui_lab.train import TrainConfig, Trainer, train_config_for
from tui_lab.train.guided_attention import diagonal_agreement, diagonal_prior, guided_loss_sum


def one_hot_grid(cols: list[int], s: int) -> torch.Tensor:
    """(1, 1, T, S): row t puts all its weight on source position cols[t]."""
    grid = torch.zeros(1, 1, len(cols), s)
    grid[0, 0, torch.arange(len(cols)), torch.tensor(cols)] = 1.0
    return grid


def test_prior_matches_the_formula():
    w = diagonal_prior(torch.tensor([4]), torch.tensor([5]), 4, 5, 0.2)[0]
    for t in range(4):
        for s in range(5):
            expected = 1 - torch.exp(torch.tensor(-((s / 5 - t / 4) ** 2) / (2 * 0.2 ** 2)))
            assert w[t, s].item() == pytest.approx(expected.item(), abs=1e-6)
    assert w[0, 0] == 0 and w.max() < 1


@pytest.mark.parametrize("n", [1, 3, 8])
def test_loss_is_zero_for_a_perfectly_diagonal_grid_and_positive_otherwise(n):
    real = torch.ones(1, n, dtype=torch.bool)
    diagonal = one_hot_grid(list(range(n)), n)
    assert guided_loss_sum([diagonal, diagonal], real, None, 0.2).item() == pytest.approx(0.0, abs=1e-7)
    if n > 1:
        flipped = one_hot_grid(list(reversed(range(n))), n)
        uniform = torch.full((1, 1, n, n), 1 / n)
        assert guided_loss_sum([flipped], real, None, 0.2).item() > 0
        assert guided_loss_sum([uniform], real, None, 0.2).item() > 0
        # half the layers off the diagonal: half the penalty of all of them (the mean over layers)
        assert guided_loss_sum([diagonal, flipped], real, None, 0.2).item() == \
            pytest.approx(guided_loss_sum([flipped], real, None, 0.2).item() / 2)


def test_padding_rows_and_columns_do_not_count():
    # example 0: 3 target rows, 3 source tokens, padded to 5 x 4; diagonal on its real part
    grid = torch.zeros(1, 1, 5, 4)
    grid[0, 0, :3, :3] = torch.eye(3)
    grid[0, 0, 3:, 3] = 1.0  # rows that are padding, looking at a padded column: ignored
    tgt_real = torch.tensor([[True, True, True, False, False]])
    src_real = torch.tensor([[True, True, True, False]])
    assert guided_loss_sum([grid], tgt_real, src_real, 0.2).item() == pytest.approx(0.0, abs=1e-7)
    assert diagonal_agreement(grid[:, 0], tgt_real, src_real) == 1.0  # rows 0, 1 (row 2 is eos)


def test_bad_values_are_one_line():
    with pytest.raises(ValueError, match=r"^guided_attention \(-1\) must be 0 \(off\) or more$"):
        TrainConfig(task="copy", guided_attention=-1)
    with pytest.raises(ValueError, match=r"^guided_attention_g \(0\) must be a positive number$"):
        TrainConfig(task="copy", guided_attention_g=0)
    with pytest.raises(ValueError, match="^guided_attention applies to seq2seq tasks only"):
        Trainer(tiny_lm(), lm_config(guided_attention=1.0), data=small_lm_data())


def test_cli_bad_weight_exits_2(capsys):
    assert main(["train", "--task", "copy", "--device", "cpu", "--json", "--set", "guided_attention=-2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.count("guided_attention") >= 1 and "Traceback" not in err


def test_trainer_reports_the_penalty_and_it_moves_attention_toward_the_diagonal():
    task = load_task("copy")
    base = train_config_for("copy", steps=1, batch_size=16, eval_every=0, sample_every=0, eval_examples=4)
    events = []
    trainer = Trainer(tiny_seq2seq(), base.replace(guided_attention=1.0), data=task, on_event=events.append)
    plain = Trainer(tiny_seq2seq(), base, data=task)
    assert all(torch.equal(a, b) for a, b in zip(trainer.model.parameters(), plain.model.parameters(), strict=True))
    step = trainer.step().to_dict()
    assert step["guided_attention_loss"] > 0 and step["teacher_forcing"] == 1.0
    plain_step = plain.step()
    assert step["train_loss"] == pytest.approx(plain_step.train_loss, rel=1e-5)  # the cross-entropy alone
    # the penalty's gradient reached the cross-attention's query projection
    moved = [not torch.equal(a, b) for a, b in zip(trainer.model.parameters(), plain.model.parameters(), strict=True)]
    assert any(moved)

"""Scheduled sampling (Bengio et al. 2015): the formulas, the mixing of decoder inputs, the trainer, bad input."""

import math

import pytest
import torch
from train_helpers import lm_config, small_lm_data, tiny_lm, tiny_seq2seq

from tui_lab.cli import main
from tui_lab.data import load_task
from tui_lab.model import build_model
from tui_lab.train import TrainConfig, Trainer, train_config_for
from tui_lab.train.scheduled_sampling import default_rate, rate, sampled_inputs, teacher_forcing
from tui_lab.train.sources import Seq2SeqSource


def config(schedule: str, k: float | None = None, **changes) -> TrainConfig:
    return TrainConfig(task="copy", steps=400, scheduled_sampling=schedule, scheduled_sampling_k=k, **changes)


@pytest.mark.parametrize("step", [0, 1, 7, 50, 199, 399])
def test_probability_follows_each_formula(step):
    assert teacher_forcing(step, config("none")) == 1.0
    assert teacher_forcing(step, config("linear", 0.004, scheduled_sampling_min=0.1)) == \
        pytest.approx(max(0.1, 1 - 0.004 * step))
    assert teacher_forcing(step, config("exponential", 0.99)) == pytest.approx(0.99 ** step)
    assert teacher_forcing(step, config("inverse_sigmoid", 20.0)) == pytest.approx(20 / (20 + math.exp(step / 20)))


def test_defaults_fit_the_run_length():
    steps = 400
    assert teacher_forcing(steps, config("linear")) == pytest.approx(0.0)
    assert teacher_forcing(steps, config("linear", scheduled_sampling_min=0.2)) == pytest.approx(0.2)
    assert teacher_forcing(steps, config("exponential")) == pytest.approx(0.01)
    k = default_rate("inverse_sigmoid", steps)
    assert teacher_forcing(round(0.4 * steps), config("inverse_sigmoid")) == pytest.approx(0.5, abs=0.01)
    assert k >= 1 and rate(config("inverse_sigmoid")) == k and rate(config("none")) is None
    # every schedule decays: never increases from one step to the next
    for schedule in ("linear", "exponential", "inverse_sigmoid"):
        ps = [teacher_forcing(i, config(schedule)) for i in range(steps)]
        assert all(a >= b for a, b in zip(ps, ps[1:], strict=False)) and ps[0] > 0.9


@pytest.mark.parametrize("changes, field", [
    (dict(scheduled_sampling="foo"), "scheduled_sampling ('foo') must be one of"),
    (dict(scheduled_sampling="exponential", scheduled_sampling_k=1.5), "must be in (0, 1)"),
    (dict(scheduled_sampling="inverse_sigmoid", scheduled_sampling_k=0.5), "at least 1"),
    (dict(scheduled_sampling="linear", scheduled_sampling_k=0.0), "must be > 0"),
    (dict(scheduled_sampling_k=0.5), "scheduled_sampling_k needs"),
    (dict(scheduled_sampling_min=2.0), "scheduled_sampling_min"),
])
def test_bad_settings_are_one_line_naming_the_field(changes, field):
    with pytest.raises(ValueError, match="^scheduled_sampling") as err:
        TrainConfig(task="copy", **changes)
    assert field in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("value, message", [("foo", "scheduled_sampling ('foo') must be one of"),
                                            ("linear --set scheduled_sampling_k=x", "scheduled_sampling_k must be")])
def test_cli_bad_value_exits_2_with_one_line(capsys, value, message):
    name, _, rest = value.partition(" --set ")
    extra = ["--set", f"scheduled_sampling={name}"] + (["--set", rest] if rest else [])
    assert main(["train", "--task", "copy", "--device", "cpu", "--json", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err


def test_language_model_refuses_scheduled_sampling():
    with pytest.raises(ValueError, match="^scheduled_sampling applies to seq2seq tasks only"):
        Trainer(tiny_lm(), lm_config(scheduled_sampling="linear"), data=small_lm_data())


def batch_and_model():
    torch.manual_seed(0)
    source = Seq2SeqSource(load_task("copy"))
    model = build_model(tiny_seq2seq(vocab=source.tokenizer.vocab_size)).eval()
    return source.batch("train", 16, torch.Generator().manual_seed(0)), model


def test_mixing_feeds_own_argmax_with_probability_one_minus_p():
    batch, model = batch_and_model()
    assert sampled_inputs(model, batch, 1.0) is batch
    mixed = sampled_inputs(model, batch, 0.0)  # every real input after bos is the model's own prediction
    own = model(batch.inputs, batch.tgt_in, src_mask=batch.src_mask).argmax(-1)
    real = batch.targets[:, :-1] != -100
    assert torch.equal(mixed.tgt_in[:, 0], batch.tgt_in[:, 0])  # bos stays
    assert torch.equal(mixed.tgt_in[:, 1:][real], own[:, :-1][real])
    assert torch.equal(mixed.tgt_in[:, 1:][~real], batch.tgt_in[:, 1:][~real])  # padding stays
    assert torch.equal(mixed.targets, batch.targets)  # the loss still asks for the gold tokens
    torch.manual_seed(1)
    half = sampled_inputs(model, batch, 0.5)
    differs = own[:, :-1][real] != batch.tgt_in[:, 1:][real]  # positions where swapping shows
    swapped = (half.tgt_in[:, 1:][real] != batch.tgt_in[:, 1:][real])[differs].float().mean().item()
    assert 0.3 < swapped < 0.7


def test_step_events_carry_teacher_forcing():
    task = load_task("copy")
    events = []
    c = train_config_for("copy", steps=3, batch_size=8, eval_every=0, sample_every=0, eval_examples=4,
                         scheduled_sampling="exponential", scheduled_sampling_k=0.5)
    Trainer(tiny_seq2seq(), c, data=task, on_event=events.append).run()
    steps = [e.to_dict() for e in events if e.kind == "step"]
    assert [d["teacher_forcing"] for d in steps] == pytest.approx([1.0, 0.5, 0.25])
    events.clear()
    Trainer(tiny_seq2seq(), c.replace(scheduled_sampling="none", scheduled_sampling_k=None), data=task,
            on_event=events.append).step()
    assert events[-1].to_dict()["teacher_forcing"] == 1.0 and "guided_attention_loss" not in events[-1].to_dict()
    events.clear()
    Trainer(tiny_lm(), lm_config(), data=small_lm_data(), on_event=events.append).step()
    assert "teacher_forcing" not in events[-1].to_dict()

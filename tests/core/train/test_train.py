import math
import threading

import pytest
import torch
from train_helpers import lm_config, small_lm_data, tiny_lm, tiny_seq2seq

from tui_lab.data import load_task
from tui_lab.train import ErrorEvent, EvalEvent, StepEvent, StoppedEvent, TrainConfig, Trainer, train_config_for
from tui_lab.train import objective as objective_module  # where the step computes its loss

PEAK = 1e11  # skip measuring the matmul peak in every test


def make(train_config=None, model_config=None, events=None, data=None):
    data = data if data is not None else small_lm_data()
    return Trainer(model_config or tiny_lm(), train_config or lm_config(), on_event=events, data=data,
                   peak_flops=PEAK)


def losses(events):
    return [e.train_loss for e in events if isinstance(e, StepEvent)]


def test_language_model_learns_and_reports_events():
    events = []
    last = make(lm_config(steps=30), events=events.append).run()
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done" and last.kind == "done"
    steps = [e for e in events if isinstance(e, StepEvent)]
    assert [e.step for e in steps] == list(range(1, 31))
    assert steps[-1].train_loss < steps[0].train_loss - 0.5
    first = steps[0]
    assert first.grad_norm > 0 and first.tokens == 8 * 32 and first.tokens_per_s > 0 and 0 < first.mfu < 1
    assert set(first.layer_grad_norms) == {"embedding", "decoder.0", "decoder.1", "final_norm"}
    total = math.sqrt(sum(v * v for v in first.layer_grad_norms.values()))
    assert first.grad_norm == pytest.approx(total, rel=1e-5)
    evals = [e for e in events if isinstance(e, EvalEvent)]
    assert [e.step for e in evals] == [10, 20, 30] and evals[0].exact_match is None
    assert last.to_dict().keys() == {"event", "step", "train_loss", "val_loss", "tokens_per_s", "mfu"}


def test_model_vocab_follows_the_tokenizer_and_says_so():
    events = []
    trainer = make(lm_config(steps=1), events=events.append)
    trainer.step()
    assert trainer.model_config.vocab == trainer.tokenizer.vocab_size != 64
    assert trainer.model.tok_embed.num_embeddings == trainer.tokenizer.vocab_size
    assert "vocab set to" in events[0].notes[0]


def test_same_seed_same_run_even_if_the_global_rng_is_used_between_steps():
    a, b = [], []
    make(lm_config(steps=8, seed=3), events=a.append).run()
    trainer = make(lm_config(steps=8, seed=3), events=b.append)
    for _ in range(8):
        torch.rand(100)  # the app sampling text between steps must not change training
        trainer.step()
    assert losses(a) == losses(b)
    c = []
    make(lm_config(steps=8, seed=4), events=c.append).run()
    assert losses(a) != losses(c)


def test_dropout_switches_with_train_and_eval():
    trainer = make(lm_config(steps=1), model_config=tiny_lm(dropout=0.5))
    trainer.step()
    assert trainer.model.training  # back in train mode after the step
    trainer.evaluate()
    assert trainer.model.training  # and after evaluation, which ran in eval mode
    ids = torch.zeros(1, 8, dtype=torch.long)
    trainer.model.eval()
    assert torch.equal(trainer.model(ids), trainer.model(ids))


def test_pause_resume_and_stop_from_another_thread():
    events = []
    trainer = make(lm_config(steps=10_000, eval_every=0), events=events.append)
    paused = threading.Event()

    def on_event(e):
        events.append(e)
        if isinstance(e, StepEvent) and e.step == 3:
            trainer.pause()
            paused.set()

    trainer.on_event = on_event
    worker = threading.Thread(target=trainer.run)
    worker.start()
    assert paused.wait(30)
    worker.join(0.3)
    assert worker.is_alive() and trainer.step_count == 3  # paused between steps
    trainer.resume()
    trainer.stop()
    worker.join(30)
    assert not worker.is_alive()
    assert isinstance(events[-1], StoppedEvent) and events[-1].step == trainer.step_count < 10_000


def test_step_runs_exactly_one_update():
    trainer = make(lm_config(steps=5))
    before = [p.detach().clone() for p in trainer.model.parameters()]
    event = trainer.step()
    assert isinstance(event, StepEvent) and event.step == 1 == trainer.step_count
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters(), strict=True))


def test_non_finite_loss_stops_and_keeps_the_last_good_weights(monkeypatch):
    events = []
    trainer = make(lm_config(steps=10), events=events.append)
    real = objective_module.token_loss_sum
    calls = {"n": 0}

    def poisoned(model, batch, smoothing):
        calls["n"] += 1
        loss = real(model, batch, smoothing)
        return loss * float("nan") if calls["n"] == 4 else loss

    monkeypatch.setattr(objective_module, "token_loss_sum", poisoned)
    for _ in range(3):
        trainer.step()
    good = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    last = trainer.run()
    assert isinstance(last, ErrorEvent) and "not finite" in last.message and last.step == 3
    assert trainer.step_count == 3
    assert all(torch.equal(good[k], v) for k, v in trainer.model.state_dict().items())
    assert events[-1] is last


def test_seq2seq_trains_with_teacher_forcing_and_reports_exact_match():
    task = load_task("copy")
    config = train_config_for("copy", steps=60, batch_size=32, eval_every=30, eval_examples=40, sample_every=30,
                              lr=3e-3, schedule="constant", warmup=10, label_smoothing=0.1)
    events = []
    done = make(config, tiny_seq2seq(), events.append, data=task).run()
    assert done.exact_match is not None and 0.0 <= done.exact_match <= 1.0
    assert "exact_match" in done.to_dict()
    steps = losses(events)
    assert steps[-1] < steps[0] - 0.3
    sample = next(e for e in events if e.kind == "sample")
    assert sample.target is not None and sample.prompt


def test_exact_match_is_one_for_a_perfect_model():
    task = load_task("copy")
    trainer = make(train_config_for("copy", steps=1, eval_examples=8), tiny_seq2seq(), data=task)
    source = trainer.source
    pairs = task.val[:8]

    def oracle(model, src, src_mask, bos, eos, max_new, *copy_args):  # emits each source's own tokens, then eos
        rows = [[bos, *s, eos] + [eos] * (max_new - len(s)) for s, _ in pairs]
        return torch.tensor(rows)

    import tui_lab.train.sources as sources

    original = sources.greedy_seq2seq
    sources.greedy_seq2seq = oracle
    try:
        assert source.exact_match(trainer.model, "cpu", 8) == 1.0
    finally:
        sources.greedy_seq2seq = original


def test_family_and_length_mismatches_are_one_line_errors():
    with pytest.raises(ValueError, match="needs a decoder-only model"):
        make(lm_config(), tiny_seq2seq())
    with pytest.raises(ValueError, match="max_len"):
        make(lm_config(seq_len=65))
    assert isinstance(make(lm_config(seq_len=64, batch_size=2)).step(), StepEvent)  # max_len itself fits


@pytest.mark.parametrize("field, value", [("steps", 0), ("lr", 0.0), ("batch_size", -1), ("schedule", "linear"),
                                          ("label_smoothing", 1.0), ("tokenizer", "word"), ("task", "sort")])
def test_train_config_rejects_bad_values_naming_the_field(field, value):
    with pytest.raises(ValueError, match=f"^{field}"):
        TrainConfig(**{field: value})


def test_task_defaults():
    c = train_config_for("numbers-de")
    assert c.warmup > 0 and c.label_smoothing > 0 and c.task == "numbers-de"  # post-LN needs the warmup
    assert train_config_for(None, steps=7).steps == 7

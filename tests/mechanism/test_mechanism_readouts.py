"""What the app's mechanism panels compute (`tui_lab.mechanism.readouts`): the same numbers as part 1's tools,
on a private copy, so the live model never carries a panel's hooks while another thread runs it."""

from __future__ import annotations

import pytest
import torch

from tui_lab.config import ModelConfig
from tui_lab.data.byte_codec import ByteCodec
from tui_lab.mechanism import ablation, readouts
from tui_lab.mechanism.ablation import head_ablation
from tui_lab.mechanism.attribution import head_logit_attribution
from tui_lab.model import Transformer

TINY = ModelConfig(name="mech-tiny", family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=64,
                   vocab=64, max_len=32, dropout=0.0)
IDS = [5, 9, 12, 40, 7, 9, 12, 40]


@pytest.fixture()
def model():
    torch.manual_seed(0)
    return Transformer(TINY).eval()


def test_ablation_is_part_one_table_and_the_live_model_never_carries_the_hooks(model, monkeypatch):
    """Each ablated pass also runs the live model, as a generation on another thread would at that moment:
    it must give the clean logits (it would give the ablated ones if the panel hooked the live model)."""
    clean = model(torch.tensor([IDS]))
    seen = []
    real = ablation.run_with_hooks

    def beside(twin, ids, hooks):
        from tui_lab.model.hooks import attached

        with attached(twin, hooks):
            seen.append(torch.equal(model(torch.tensor([IDS])), clean) and model.hooks is None)
            return twin(ids)

    monkeypatch.setattr(ablation, "run_with_hooks", beside)
    steps = []
    table = readouts.ablation_of(model, IDS, "mean", on_step=lambda d, t: steps.append((d, t)))
    monkeypatch.setattr(ablation, "run_with_hooks", real)
    assert len(seen) == 8 and all(seen)
    assert steps[-1] == (8, 8)
    expected = head_ablation(model, torch.tensor([IDS]), "mean")
    assert torch.allclose(torch.tensor(table.values), torch.tensor(expected.values), atol=1e-6)
    assert any(abs(v) > 1e-4 for row in table.values for v in row)  # a measured change, not zeros


def test_a_step_that_raises_stops_the_ablation_between_passes(model):
    passes = []

    class Stop(Exception):
        pass

    def step(done: int, total: int) -> None:
        passes.append(done)
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        readouts.ablation_of(model, IDS, on_step=step)
    assert passes == [0, 1, 2]  # 0: the passes start (a caller times them from there)


def test_attribution_names_the_model_top_two_and_matches_part_one(model):
    codec = ByteCodec(TINY.vocab)
    result = readouts.attribution_of(model, codec, IDS)
    last = model(torch.tensor([IDS]))[0, -1].detach()
    top, second = last.topk(2).indices.tolist()
    assert result.total == pytest.approx(float(last[top] - last[second]), abs=1e-5)
    assert result.answer == codec.decode([top]) or result.answer.startswith("\\")
    expected = head_logit_attribution(model, torch.tensor(IDS), top, second)
    assert torch.allclose(torch.tensor(result.values), expected.float(), atol=1e-6)
    assert readouts.attribution_of(model, None, IDS).answer == f"#{top}"  # no tokenizer: named by id


def test_patching_defaults_to_each_run_own_top_token_and_restores_all_at_the_changed_token(model):
    codec = ByteCodec(TINY.vocab)
    with torch.no_grad():
        a = int(model(torch.tensor([IDS]))[0, -1].argmax())
        corrupts = ([*IDS[:7], t] for t in range(TINY.vocab))  # the last token changed: the answer moves
        corrupt = next(c for c in corrupts if int(model(torch.tensor([c]))[0, -1].argmax()) != a)
    steps = []
    result = readouts.patching_of(model, codec, IDS, corrupt, on_step=lambda d, t: steps.append(d))
    assert steps == [1, 2]
    assert len(result.table.values) == 2 and len(result.table.values[0]) == len(IDS)
    assert result.table.values[0][7] == pytest.approx(1.0, abs=1e-5)  # layer 0 at the one changed token: all of it
    assert result.table.values[0][:7] == pytest.approx([0.0] * 7, abs=1e-5)  # the others are the same in both
    with pytest.raises(ValueError, match="both"):  # an answer that is the wrong one too: one line, why
        readouts.patching_of(model, codec, IDS, IDS)

"""The copy mechanism (pointer-generator): the mixed distribution, the extended vocabulary, decoding, errors."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.cli import main
from tui_lab.config import ModelConfig
from tui_lab.data import extended
from tui_lab.data.tokenizers import word_tokenizer
from tui_lab.generation import generate, stream
from tui_lab.model.copy import p_gen_of
from tui_lab.train.sources import Batch, token_loss_sum

V = 12


def tiny(copy: bool = True, **changes) -> torch.nn.Module:
    config = ModelConfig(family="encoder-decoder", encoder_layers=1, decoder_layers=2, d_model=16, heads=2, d_ff=32,
                         vocab=V, max_len=16, positions="sinusoidal", dropout=0.0, copy=copy).replace(**changes)
    torch.manual_seed(0)
    return build_model(config).eval()


def set_gate(model, bias: float) -> None:
    """p_gen = sigmoid(bias) whatever the inputs: bias -30 copies only, +30 generates only."""
    with torch.no_grad():
        model.copy_gate.gate.weight.zero_()
        model.copy_gate.gate.bias.fill_(bias)


SRC = torch.tensor([[4, 5, 3, 6]])  # the third word is out of the vocabulary: <unk> (3) for the encoder
SRC_EXT = torch.tensor([[4, 5, V, 6]])  # ... and temporary id V (vocab + 0) for the pointer
TGT = torch.tensor([[1, 7, 8]])


def test_copy_puts_probability_on_an_out_of_vocabulary_source_word():
    model = tiny()
    out = model.run(SRC, TGT, need_weights=True, src_ext=SRC_EXT)
    probs = out.logits.exp()  # (1, T, V + 1)
    assert probs.shape == (1, 3, V + 1)
    assert torch.allclose(probs.sum(-1), torch.ones(1, 3), atol=1e-5)
    copy = next(c for c in out.attentions if c.kind == "copy")  # (1, 1, T, S): (1 - p_gen) * attention
    assert torch.allclose(probs[0, :, V], copy.weights[0, 0, :, 2], atol=1e-6)
    assert bool((probs[0, :, V] > 0.01).all())  # the name itself, not <unk>, gets the copied mass
    cross = next(c for c in out.attentions if c.kind == "cross" and c.layer == 1).weights.mean(1)  # (1, T, S)
    p_gen = p_gen_of(copy)
    assert torch.allclose(copy.weights[0, 0], cross[0] * (1 - p_gen[0])[:, None], atol=1e-6)


def test_p_gen_one_is_the_plain_vocabulary_distribution():
    model, plain = tiny(), tiny(copy=False)
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("copy_gate")})
    set_gate(model, 30.0)
    mixed = model(SRC, TGT, src_ext=SRC_EXT).exp()[..., :V]
    assert torch.allclose(mixed, torch.softmax(plain(SRC, TGT), -1), atol=1e-5)


def test_a_copying_model_emits_the_unknown_word_and_its_text_is_the_name():
    tok = word_tokenizer("hello i am hallo ich bin".split())
    model = tiny(vocab=tok.vocab_size)
    set_gate(model, -30.0)  # copy only: each step emits the source word it attends to most
    ids, oov = extended.source_ids(tok, "zorblax")
    src = torch.tensor([extended.base_ids(tok, ids)])
    out = generate(model, src, 2, temperature=0.0, bos_id=tok.bos_id, src_ext=torch.tensor([ids]),
                   unk_id=tok.unk_id)
    assert out[0, 1:].tolist() == [tok.vocab_size] * 2  # one source position: all attention, all copy
    assert extended.decode(tok, out[0, 1:].tolist(), oov) == "zorblax zorblax"


def test_cached_uncached_and_beam_agree_and_steps_carry_p_gen():
    model = tiny()
    kwargs = dict(temperature=0.0, bos_id=1, src_ext=SRC_EXT, unk_id=3)
    cached = generate(model, SRC, 6, use_cache=True, **kwargs)
    assert torch.equal(cached, generate(model, SRC, 6, use_cache=False, **kwargs))
    assert generate(model, SRC, 6, beam_size=3, bos_id=1, src_ext=SRC_EXT, unk_id=3).shape[0] == 1
    steps = list(stream(model, SRC, 3, need_attention=True, **kwargs))
    assert all(s.p_gen is not None and 0 < float(s.p_gen[0]) < 1 for s in steps)
    assert any(c.kind == "copy" for c in steps[0].attentions)


def test_loss_is_the_nll_of_the_mixed_distribution_and_trains_the_gate():
    model = tiny().train()
    targets = torch.tensor([[7, V, 2]])  # the second target word is the copied one
    batch = Batch(SRC, targets, TGT, torch.ones_like(SRC, dtype=torch.bool), SRC_EXT, targets)
    loss = token_loss_sum(model, batch, 0.0)
    log_p = model(SRC, TGT, src_mask=batch.src_mask, src_ext=SRC_EXT)
    assert torch.allclose(loss, -log_p[0, torch.arange(3), targets[0]].sum(), atol=1e-5)
    loss.backward()
    assert model.copy_gate.gate.weight.grad.abs().sum() > 0


def test_gate_parameters_are_counted_exactly():
    for copy in (False, True):
        model = tiny(copy=copy)
        assert sum(p.numel() for p in model.parameters()) == count_params(model.config).total
    assert count_params(tiny().config).copy == 3 * 16 + 1


def test_copy_without_its_inputs_is_one_line():
    model = tiny()
    memory = model.encode(SRC)
    with pytest.raises(ValueError, match="^copy: a copy model needs"):
        model.decode(TGT, memory)


@pytest.mark.parametrize(("extra", "message"), [
    (["--set", "copy=maybe"], "copy must be true or false, got 'maybe'"),
    (["--preset", "gpt2-toy", "--set", "copy=true"], "copy (True) applies to encoder-decoder models only"),
])
def test_bad_copy_values_exit_2_with_one_line(capsys, extra, message):
    assert main(["train", "--task", "names", "--device", "cpu", "--json", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err


def test_generate_json_outputs_the_copied_name_and_p_gen(capsys, tmp_path):
    import json

    from tui_lab.checkpoint import save_checkpoint
    from tui_lab.data.tasks import load_task

    tok = load_task("names").tokenizer
    model = tiny(vocab=tok.vocab_size)
    set_gate(model, -30.0)  # copy only: one source word, so every token is that word
    save_checkpoint(tmp_path / "ckpt", model, tok)
    args = ["generate", "--checkpoint", str(tmp_path / "ckpt"), "--prompt", "zorblax", "--temperature", "0",
            "--max-new-tokens", "2", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["completion"] == "zorblax zorblax" and out["copied_words"] == ["zorblax"]
    assert len(out["p_gen"]) == 2 and all(p < 1e-6 for p in out["p_gen"])

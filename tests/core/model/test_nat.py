"""Non-autoregressive decoding (decoder_mode nat-*): one decoder pass, the length from the classifier or the
first END, a person's length override, exact counts, the NAT loss, and the CLI's flags and refusals."""

from __future__ import annotations

import json

import pytest
import torch

from tui_lab import build_model
from tui_lab.analysis import count_params
from tui_lab.analysis.shapes import shape_trace
from tui_lab.cli import main
from tui_lab.config import ModelConfig
from tui_lab.generation import generate
from tui_lab.generation.settings import GenerationSettings

BOS, EOS = 1, 2
SRC = torch.tensor([[5, 6, 7, 8]])


def tiny(mode: str, **changes) -> ModelConfig:
    fields = dict(family="encoder-decoder", encoder_layers=1, decoder_layers=1, d_model=16, heads=2, d_ff=32,
                  vocab=20, max_len=12, dropout=0.0, decoder_mode=mode)
    return ModelConfig(**(fields | changes))


def model_for(mode: str):
    torch.manual_seed(0)
    return build_model(tiny(mode)).eval()


def force_length(model, length: int) -> None:
    """Make the length classifier say `length` whatever the source."""
    with torch.no_grad():
        model.length_classifier.proj.weight.zero_()
        model.length_classifier.proj.bias.zero_()
        model.length_classifier.proj.bias[length] = 100.0


def force_end_at(model, position: int) -> None:
    """Make the decoder's argmax END at `position` and never before it."""
    def hook(_module, _inputs, out):
        out = out.clone()
        out[:, :, EOS] = -1e4
        out[:, position, EOS] = 1e4
        return out
    model.lm_head.register_forward_hook(hook)


def run(model, **kw) -> tuple[list[int], list]:
    steps: list = []
    out = generate(model, SRC, kw.pop("max_new", 30), temperature=0.0, bos_id=BOS, eos_id=EOS, on_step=steps.append,
                   **kw)
    return out[0].tolist(), steps


@pytest.mark.parametrize("mode", ["nat-length-classifier", "nat-max-length"])
def test_nat_decodes_in_one_decoder_pass(mode):
    model = model_for(mode)
    calls = []
    model.decoder[0].register_forward_hook(lambda *_: calls.append(1))
    _, steps = run(model)
    assert len(calls) == 1 and steps and all(s.passes == 1 for s in steps)


def test_autoregressive_takes_one_pass_per_new_token():
    _, steps = run(model_for("autoregressive"), max_new=6)
    assert [s.passes for s in steps] == list(range(1, len(steps) + 1))


@pytest.mark.parametrize("length", [2, 5])
def test_the_output_length_follows_the_length_classifier(length):
    model = model_for("nat-length-classifier")
    force_length(model, length)
    ids, steps = run(model)
    assert ids[0] == BOS and EOS not in ids[1:length + 1] and ids[length + 1] == EOS
    assert int(steps[-1].predicted_length[0]) == length == int(steps[-1].begins[0])


@pytest.mark.parametrize("position", [0, 3, 7])
def test_max_length_decoding_cuts_at_the_first_end(position):
    model = model_for("nat-max-length")
    force_end_at(model, position)
    ids, steps = run(model)
    assert EOS not in ids[1:position + 1] and ids[position + 1] == EOS and len(ids) == position + 2
    assert int(steps[0].begins[0]) == model.config.max_len  # it read its whole row of BEGINs


@pytest.mark.parametrize("mode", ["nat-length-classifier", "nat-max-length"])
def test_a_length_override_sets_the_output_length(mode):
    model = model_for(mode)
    if mode == "nat-length-classifier":
        force_length(model, 4)
    else:
        force_end_at(model, 4)
    lengths = {}
    for n in (2, 7):
        ids, _ = run(model, nat_length=n)
        lengths[n] = ids.index(EOS) - 1
    assert lengths == {2: 2, 7: 7}


def test_nat_settings_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^nat_length applies to NAT models only"):
        run(model_for("autoregressive"), nat_length=3)
    with pytest.raises(ValueError, match=r"^nat_length \(13\) must be an integer in 1..12"):
        run(model_for("nat-max-length"), nat_length=13)
    with pytest.raises(ValueError, match=r"^beam_size \(3\) must be 1 for a NAT model"):
        generate(model_for("nat-max-length"), SRC, 4, beam_size=3, bos_id=BOS, eos_id=EOS)
    with pytest.raises(ValueError, match=r"^nat_length \(0\) must be an integer >= 1"):
        GenerationSettings(nat_length=0)
    with pytest.raises(ValueError, match=r"^decoder_mode \('nat-max-length'\) applies to encoder-decoder models"):
        ModelConfig(decoder_mode="nat-max-length")


def test_the_length_classifier_is_counted_exactly_and_traced():
    ar, lc, ml = (tiny(m) for m in ("autoregressive", "nat-length-classifier", "nat-max-length"))
    for c in (ar, lc, ml):
        assert count_params(c).total == sum(p.numel() for p in build_model(c, device="meta").parameters())
    assert count_params(lc).total - count_params(ar).total == 16 * 12 + 12 == count_params(lc).length_classifier
    assert count_params(ml).total == count_params(ar).total
    rows = {r.path: r for r in shape_trace(lc, batch=2, seq_len=5, src_len=4)}
    assert rows["length_classifier"].output_shape == (2, 12) and rows["length_classifier"].params == 204
    assert rows["decoder.0.attn"].kind == "self-attention"  # no causal mask


@pytest.mark.parametrize("mode", ["nat-length-classifier", "nat-max-length"])
def test_the_nat_loss_trains_the_decoder_and_the_classifier(mode):
    from tui_lab.data.tasks import load_task
    from tui_lab.train.sources import Seq2SeqSource, token_loss_sum

    source = Seq2SeqSource(load_task("copy"))
    torch.manual_seed(0)
    model = build_model(tiny(mode, vocab=source.tokenizer.vocab_size))
    batch = source.batch("train", 8, torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        loss = token_loss_sum(model, batch, 0.0) / batch.count()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    if mode == "nat-length-classifier":
        assert model.length_classifier.proj.weight.grad.abs().sum() > 0


def test_the_trainer_reports_exact_match_for_a_nat_model():
    from tui_lab.train import Trainer, train_config_for

    config = tiny("nat-length-classifier", max_len=16)
    done = Trainer(config, train_config_for("copy", steps=2, eval_examples=10, eval_batches=1), device="cpu").run()
    assert done.exact_match is not None and 0.0 <= done.exact_match <= 1.0


@pytest.fixture(scope="module")
def nat_checkpoint(tmp_path_factory):
    from tui_lab.checkpoint import save_checkpoint
    from tui_lab.data.tasks import load_task

    tokenizer = load_task("copy").tokenizer
    torch.manual_seed(0)
    model = build_model(tiny("nat-length-classifier", vocab=tokenizer.vocab_size))
    force_length(model, 3)
    folder = tmp_path_factory.mktemp("nat") / "ckpt"
    save_checkpoint(folder, model, tokenizer)
    return str(folder)


def cli_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_generate_json_says_how_many_decoder_passes(capsys, nat_checkpoint):
    args = ["generate", "--checkpoint", nat_checkpoint, "--prompt", "alpha beta gamma", "--temperature", "0", "--json"]
    nat = cli_json(capsys, *args)
    assert nat["decoder_passes"] == 1 and nat["predicted_length"] == 3 and nat["new_tokens"] == 4
    longer = cli_json(capsys, *args, "--nat-length", "6")
    assert longer["decoder_passes"] == 1 and longer["new_tokens"] == 7 and longer["nat_length"] == 6
    assert longer["ids"][-1] == nat["ids"][-1] == 2 and 2 not in longer["ids"][:6]  # six tokens, then END
    at = cli_json(capsys, "generate", "--preset", "transformer-2017-toy", "--prompt", "drei", "--max-new-tokens", "5",
                  "--temperature", "0", "--json")
    assert at["decoder_passes"] == len(at["ids"]) and at["predicted_length"] is None


@pytest.mark.parametrize("argv, message", [
    (["train", "--preset", "gpt2-toy", "--set", "decoder_mode=nat"], "decoder_mode ('nat') must be one of"),
    (["train", "--preset", "gpt2-toy", "--set", "decoder_mode=nat-max-length"], "applies to encoder-decoder models"),
    (["generate", "--preset", "transformer-2017-toy", "--prompt", "drei", "--nat-length", "3"],
     "--nat-length applies to NAT models only"),
    (["generate", "--preset", "transformer-2017-toy", "--prompt", "drei", "--nat-length", "0"],
     "--nat-length (0) must be an integer >= 1"),
])
def test_bad_nat_values_exit_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err

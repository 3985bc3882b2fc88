"""`tui_lab.loading` and `tui_lab.devices`: the one loader and the one device check the CLI and the app share."""

from __future__ import annotations

import pytest
import torch
from hf_fixtures import save_hf_gpt2

from tui_lab.checkpoint import save_checkpoint
from tui_lab.data import char_tokenizer
from tui_lab.data.byte_codec import ByteCodec
from tui_lab.devices import device_problem, pick_device
from tui_lab.generation.prompt import prompt_ids
from tui_lab.loading import load_model
from tui_lab.model import build_model
from tui_lab.presets import load_preset


def test_a_preset_is_seeded_random_weights_with_the_byte_codec():
    state = torch.get_rng_state()
    one, again = load_model("preset", "gpt2-toy", seed=3), load_model("preset", "gpt2-toy", seed=3)
    other = load_model("preset", "gpt2-toy", seed=4)
    assert torch.equal(state, torch.get_rng_state())  # the global RNG is left alone
    w = [m.model.tok_embed.weight for m in (one, again, other)]
    assert torch.equal(w[0], w[1]) and not torch.equal(w[0], w[2])
    assert isinstance(one.codec, ByteCodec) and one.fallback and one.tokenizer is None
    assert one.label == "preset gpt2-toy (random weights)" and one.device == "cpu" and not one.model.training


def test_a_config_builds_the_same_weights_as_its_preset():
    config = load_preset("transformer-2017-toy")
    a, b = load_model("config", config), load_model("preset", "transformer-2017-toy")
    assert a.config == config and torch.equal(a.model.tok_embed.weight, b.model.tok_embed.weight)


def test_a_checkpoint_comes_with_its_tokenizer(tmp_path):
    tokenizer = char_tokenizer("hello world")
    model = build_model(load_preset("gpt2-toy", vocab=tokenizer.vocab_size, layers=1, d_model=32, d_ff=64))
    save_checkpoint(tmp_path / "ck", model, tokenizer)
    loaded = load_model("checkpoint", tmp_path / "ck")
    assert loaded.tokenizer is loaded.codec and loaded.codec.kind == "char" and not loaded.fallback
    assert loaded.label.startswith("checkpoint") and "(step 0)" in loaded.label
    assert torch.equal(loaded.model.tok_embed.weight, model.tok_embed.weight)


def test_a_hugging_face_folder_comes_with_gpt2s_tokenizer(tmp_path):
    save_hf_gpt2(tmp_path, n_embd=16, n_head=2, n_layer=1, n_positions=16)
    loaded = load_model("hf", tmp_path)
    assert loaded.codec.kind == "gpt2" and loaded.config.d_model == 16 and loaded.label.startswith("Hugging Face")


@pytest.mark.parametrize("kind, source, needle", [
    ("preset", "no-such", "no-such"), ("checkpoint", "no/such/folder", "no/such/folder"),
    ("hf", "no/such/folder", "no/such/folder"), ("url", "x", "source kind"),
])
def test_bad_sources_are_one_line_value_errors(kind, source, needle):
    with pytest.raises(ValueError, match=needle) as err:
        load_model(kind, source)
    assert len(str(err.value).splitlines()) == 1


def test_hf_options_are_refused_for_other_sources():
    with pytest.raises(ValueError, match="download"):
        load_model("preset", "gpt2-toy", download=True)


def test_too_big_for_memory_is_refused_before_building():
    huge = load_preset("gpt2-small", layers=1000, d_model=2048, heads=16, d_ff=8192)  # ~200 GB of fp32 weights
    with pytest.raises(ValueError, match="refused: the weights need"):
        load_model("config", huge)


def test_the_two_device_checks_agree():
    for bad in ("tpu", "gpu0", "cuda:x", "CPU"):
        problem = device_problem(bad)
        with pytest.raises(ValueError) as err:
            pick_device(bad)
        assert problem == str(err.value) and "must be cpu, cuda, cuda:N, mps or auto" in problem
    assert device_problem("cpu") is None and pick_device("cpu") == "cpu"
    assert device_problem("auto") is None and pick_device("auto") in ("cpu", "cuda", "mps")
    assert "--device" in device_problem("tpu", field="--device")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available") as err:
            pick_device("cuda:1")
        assert device_problem("cuda:1") in (None, str(err.value))  # None only where a driver lists GPUs


def test_prompt_rules():
    codec = ByteCodec(256)
    assert prompt_ids(codec, "", "decoder-only") == [0]  # an empty prompt starts from bos
    with pytest.raises(ValueError, match="--prompt must not be empty"):
        prompt_ids(codec, "", "encoder-decoder", field="--prompt")
    chars = char_tokenizer("abc")
    assert prompt_ids(chars, "az", "decoder-only") == chars.encode("az")  # z maps to <unk>

    class NoUnk(ByteCodec):  # a tokenizer without <unk> that lacks "z"
        def unknown(self, text: str) -> list[str]:
            return [c for c in text if c == "z"]

    with pytest.raises(ValueError, match="prompt has text the tokenizer lacks: z"):
        prompt_ids(NoUnk(256), "az", "decoder-only")


def test_a_shipped_preset_loads_its_trained_weights_and_an_edited_copy_does_not():
    from tui_lab.loading import load_model, shipped_for
    from tui_lab.presets import load_preset

    loaded = load_model("preset", "transformer-2017-toy-numbers-de")
    assert not loaded.fallback and loaded.label.startswith("shipped toy transformer-2017-toy-numbers-de")
    config = load_preset("transformer-2017-toy-numbers-de")
    assert shipped_for(config) == "transformer-2017-toy-numbers-de"
    edited = config.replace(dropout=0.0 if config.dropout else 0.1)
    assert shipped_for(edited) is None and load_model("config", edited).fallback


def test_generate_cli_translates_with_the_shipped_toy(capsys):
    import json

    from tui_lab.cli import main

    assert main(["generate", "--preset", "transformer-2017-toy-numbers-de", "--prompt", "three hundred forty two",
                 "--temperature", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["completion"] == "drei hundert zwei und vierzig"

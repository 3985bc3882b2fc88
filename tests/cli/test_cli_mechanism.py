"""`tui-lab lens`, `ablate` and `patch` with --json on a preset, the shipped trained toy, a run trained here and
Hugging Face folders; each number is the core's on the same model; encoder-decoders and bad input are one line."""

from __future__ import annotations

import json

import pytest
import torch
from cli_support import run_cli
from hf_family_fixtures import save_causal
from hf_fixtures import save_hf_gpt2
from train_helpers import TEXT

from tui_lab.cli import main
from tui_lab.loading import load_model
from tui_lab.mechanism.ablation import head_ablation
from tui_lab.mechanism.attribution import head_logit_attribution
from tui_lab.mechanism.data import held_out_batch
from tui_lab.mechanism.lens import lens_logits
from tui_lab.mechanism.patching import patch_residual

transformers = pytest.importorskip("transformers")


def _json(capsys, *args: str) -> dict:
    out = run_cli(capsys, *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_lens_of_the_shipped_trained_toy_is_the_cores(capsys):
    data = _json(capsys, "lens", "--preset", "gpt2-toy-english", "--prompt", "The old king", "--top", "3", "--json")
    loaded = load_model("preset", "gpt2-toy-english")
    ids = loaded.codec.encode("The old king")
    _, lens = lens_logits(loaded.model, torch.tensor([ids]))
    probs = torch.softmax(lens[:, 0], dim=-1)
    assert "trained" in data["model"] and data["ids"] == ids and len(data["rows"]) == 5  # 4 blocks + the last
    last = data["rows"][-1]["cells"][-1]
    assert last["top_id"] == int(probs[-1, -1].argmax()) and abs(last["top_prob"] - float(probs[-1, -1].max())) < 1e-6
    assert len(last["top_k"]) == 3 and last["token"] == data["tokens"][-1]


def test_ablate_a_run_trained_here_on_its_held_out_text(capsys, tmp_path):
    text = tmp_path / "prose.txt"
    text.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "run"
    assert main(["train", "--preset", "gpt2-toy", "--layers", "2", "--d-model", "32", "--heads", "2", "--d-ff", "64",
                 "--batch-size", "4", "--seq-len", "16", "--device", "cpu", "--data", str(text), "--steps", "3",
                 "--out", str(out), "--json"]) == 0
    data = _json(capsys, "ablate", "--checkpoint", str(out), "--data", str(text), "--seq-len", "16", "--batch", "3",
                 "--mode", "mean", "--json")
    loaded = load_model("checkpoint", str(out))
    table = head_ablation(loaded.model, held_out_batch(loaded.codec, 16, 3, str(text)), "mean")
    assert data["mode"] == "mean" and data["metric"] == "loss" and (data["layers"], data["heads"]) == (2, 2)
    assert torch.allclose(torch.tensor(data["delta"]), torch.tensor(table.values), atol=1e-6)
    assert data["clean"] == pytest.approx(table.clean)
    assert (data["windows"], data["tokens_per_window"]) == (3, 16)
    assert data["rows"] == ["L0", "L1"]  # issue 40 item 2: the row labels stay beside the batch's size
    assert torch.allclose(torch.tensor(data["spread"]), torch.tensor(table.spread), atol=1e-6)


def test_patch_a_gpt2_folder_with_answers_as_text(capsys, tmp_path):
    folder = tmp_path / "gpt2"
    save_hf_gpt2(folder, n_embd=32, n_head=4, n_layer=2, n_positions=48)
    args = ["patch", "--from-hf", str(folder), "--prompt", "The quick brown", "--corrupt", "The lazy brown",
            "--answer", " spaces", "--wrong", ".", "--json"]
    data = _json(capsys, *args)
    loaded = load_model("hf", str(folder))
    encode = loaded.codec.encode
    assert len(encode("The quick brown")) == len(encode("The lazy brown"))
    clean, corrupt = torch.tensor(encode("The quick brown")), torch.tensor(encode("The lazy brown"))
    table = patch_residual(loaded.model, clean, corrupt, encode(" spaces")[0], encode(".")[0])
    assert torch.allclose(torch.tensor(data["recovery"]), torch.tensor(table.values), atol=1e-6)
    assert len(data["recovery"]) == 2
    assert data["points"] == ["blocks.0.hook_resid_pre", "blocks.1.hook_resid_pre"]
    assert data["tokens"] == [loaded.codec.token_strings([i])[0] for i in encode("The quick brown")]
    attribution = head_logit_attribution(loaded.model, clean, encode(" spaces")[0], encode(".")[0])
    assert torch.allclose(torch.tensor(data["head_attribution"]), attribution, atol=1e-6)


def test_every_tool_takes_a_llama_folder_and_a_preset(capsys, tmp_path):
    save_causal("llama-gqa", tmp_path / "llama")
    for source in (["--from-hf", str(tmp_path / "llama")], ["--preset", "gpt2-toy"]):
        lens = _json(capsys, "lens", *source, "--prompt", "abc", "--json")
        text = ["--text", "abcdefgh", "--answer-id", "7"] if source[0] == "--from-hf" else ["--batch", "2"]
        ablate = _json(capsys, "ablate", *source, *text, "--json")  # a preset: held-out built-in corpus
        patch = _json(capsys, "patch", *source, "--prompt", "abc", "--corrupt", "abd", "--answer-id", "3",
                      "--wrong-id", "4", "--json")
        assert len(lens["rows"][0]["cells"]) == 3 and len(patch["recovery"][0]) == 3
        assert ablate["metric"] == ("logit" if text[0] == "--text" else "loss")


@pytest.mark.parametrize("command", ["lens", "ablate", "patch", "attribute"])
def test_an_encoder_decoder_is_refused_in_one_line_naming_where_it_is_covered(capsys, command):
    extra = {"lens": ["--prompt", "a"], "ablate": [], "patch": ["--prompt", "a", "--corrupt", "b", "--answer-id", "1",
                                                                 "--wrong-id", "2"],
             "attribute": ["--prompt", "a", "--answer-id", "1"]}[command]
    out = run_cli(capsys, command, "--preset", "transformer-2017-toy", *extra, "--json")
    assert out.returncode == 2 and out.stdout == "" and len(out.stderr.strip().splitlines()) == 1
    assert f"{command}: covers decoder-only models; for an encoder-decoder the lens, ablation and patching read its " \
        "decoder stream (the core's src=, the app's Attention view)" in out.stderr


@pytest.mark.parametrize("args, message", [
    (["patch", "--prompt", "abc", "--corrupt", "ab", "--answer-id", "1", "--wrong-id", "2"],
     "as long as each other (3 and 2 tokens)"),
    (["patch", "--prompt", "abc", "--corrupt", "abd", "--answer", "xy", "--wrong-id", "2"],
     "--answer must be one token; 'xy' is 2"),
    (["patch", "--prompt", "abc", "--corrupt", "abd", "--answer-id", "1"], "--wrong (or its -id form) is required"),
    (["ablate", "--answer-id", "999"], "--answer-id must be a token id in 0..255"),
    (["ablate", "--seq-len", "1"], "seq_len must be at least 2"),
    (["lens", "--prompt", "a", "--top", "0"], "--top must be at least 1"),
    (["lens", "--prompt", ""], "--prompt is empty"),
    (["attribute", "--prompt", "abc"], "--answer (or --answer-id) is required"),
])
def test_bad_input_is_one_line(capsys, args, message):
    out = run_cli(capsys, *args, "--preset", "gpt2-toy", "--json")
    assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_attribute_gives_the_cores_head_attribution_and_composition(capsys):
    from tui_lab.mechanism.attribution import composition_scores

    data = _json(capsys, "attribute", "--preset", "gpt2-toy-english", "--prompt", "The old king", "--answer-id", "5",
                 "--wrong-id", "7", "--composition", "all", "--json")
    loaded = load_model("preset", "gpt2-toy-english")
    ids = torch.tensor(loaded.codec.encode("The old king"))
    expected = head_logit_attribution(loaded.model, ids, 5, 7)
    assert torch.allclose(torch.tensor(data["head_attribution"], dtype=expected.dtype), expected, atol=1e-6)
    assert abs(data["total"] - float(expected.sum())) < 1e-5
    for kind in ("Q", "K", "V"):
        got = torch.tensor(data["composition"][kind], dtype=torch.float64)
        assert torch.allclose(got, composition_scores(loaded.model, kind), atol=1e-9)
    assert got[1, 0, 0, 0] == 0 and got[0, 0, 1, 0] > 0  # only an earlier layer's head composes into a later one
    text = run_cli(capsys, "attribute", "--preset", "gpt2-toy-english", "--prompt", "The old king",
                   "--answer-id", "5")
    assert text.returncode == 0 and "direct logit attribution" in text.stdout and "K-composition" in text.stdout

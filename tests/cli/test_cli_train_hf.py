"""`tui-lab train --from-hf ID --download`: fine-tune a real GPT-2 with its own tokenizer, keep it, go on.

The Hub is the stand-in of tests/support/hub_server.py serving a tiny random GPT-2 (fixtures from test_hf_hub): no
test reaches the internet. The refusal without --download is in test_hf_hub_cli (every command at once).
"""

from __future__ import annotations

import json

import hub_fixtures
import pytest
import torch
from hf_fixtures import MIXED_TEXT

from tui_lab.checkpoint import load_checkpoint
from tui_lab.cli import main
from tui_lab.hf import load_hf_gpt2
from tui_lab.hf.hub import locate
from tui_lab.train import Trainer, train_config_for

cache, hub, sources = hub_fixtures.cache, hub_fixtures.hub, hub_fixtures.sources
transformers = pytest.importorskip("transformers")
ID = "tiny-gpt2"
REPEATED = "The quick brown fox jumps over the lazy dog.\n" * 200
SMALL = ["--seq-len", "16", "--batch-size", "4", "--device", "cpu", "--json"]


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "fox.txt"
    path.write_text(REPEATED, encoding="utf-8")
    return path


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.strip().splitlines()]


def _train(*flags: str) -> list[str]:
    return ["train", "--from-hf", ID, *SMALL, *flags]


def test_download_fine_tunes_lowers_the_loss_and_the_checkpoint_generates_and_resumes(hub, text_file, tmp_path,
                                                                                     capsys):
    out = tmp_path / "tuned"
    argv = _train("--download", "--data", str(text_file), "--steps", "20", "--lr", "3e-2", "--set", "warmup=2",
                  "--out", str(out))
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(f"downloading {ID} (commit ") and hub.fetched()[-1] == "model.safetensors"
    lines = json_lines(captured.out)  # stdout: only the run's JSON lines
    start, steps, done = lines[0], [d for d in lines if d["event"] == "step"], lines[-1]
    hf_vocab = transformers.GPT2Config.from_pretrained(locate(ID)).vocab_size
    assert start["model"]["vocab"] == hf_vocab  # not resized to the tokenizer's (the stand-in pads its vocab)
    assert start["notes"][0].startswith(f"starting from Hugging Face GPT-2 {ID}")
    assert done["event"] == "done" and done["step"] == 20 and done["checkpoint"] == str(out)
    first, last = sum(s["train_loss"] for s in steps[:3]) / 3, sum(s["train_loss"] for s in steps[-3:]) / 3
    # The stand-in's weights are random (loss ~ ln(vocab) at first); a repeated sentence is quickly learnt.
    assert last < 0.7 * first and done["val_loss"] < 0.7 * steps[0]["train_loss"], (first, last, done)

    prompt = "The quick brown"
    assert main(["generate", "--checkpoint", str(out), "--prompt", prompt, "--temperature", "0",
                 "--max-new-tokens", "6", "--json"]) == 0
    generated = json.loads(capsys.readouterr().out)
    reference = transformers.AutoTokenizer.from_pretrained(locate(ID))
    assert generated["prompt_ids"] == reference(prompt)["input_ids"] and generated["new_tokens"] == 6
    assert generated["tokenizer"] == "gpt2"
    assert generated["completion"] == reference.decode(generated["ids"])  # decoded by GPT-2's tokenizer, not a fallback

    exported = tmp_path / "exported"  # back to a Hugging Face folder: transformers continues greedily the same
    assert main(["export", "--checkpoint", str(out), "--hf", str(exported), "--json"]) == 0
    capsys.readouterr()
    tuned = transformers.GPT2LMHeadModel.from_pretrained(exported).eval()
    ids = torch.tensor([generated["prompt_ids"]])
    theirs = tuned.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=6, do_sample=False,
                            eos_token_id=None, pad_token_id=0)
    assert theirs[0, ids.shape[1]:].tolist() == generated["ids"]

    assert main(["train", "--resume", str(out), "--steps", "23", "--json"]) == 0
    resumed = json_lines(capsys.readouterr().out)
    assert [d["step"] for d in resumed if d["event"] == "step"] == [21, 22, 23] and resumed[-1]["event"] == "done"
    assert len(hub.fetched()) == 5  # resume and generate read the checkpoint, never the Hub


def test_the_saved_gpt2_tokenizer_round_trips(hub, text_file, tmp_path, capsys):
    out = tmp_path / "kept"
    assert main(_train("--download", "--data", str(text_file), "--steps", "1", "--out", str(out))) == 0
    capsys.readouterr()
    saved = load_checkpoint(out).tokenizer
    _, original = load_hf_gpt2(ID)
    reference = transformers.AutoTokenizer.from_pretrained(locate(ID))
    assert saved.kind == "gpt2" and saved == original
    for text in (MIXED_TEXT, "The quick brown fox.", " leading space\n\ttab"):
        ids = saved.encode(text)
        assert ids == original.encode(text) == reference(text)["input_ids"]
        assert saved.decode(ids) == text and saved.token_strings(ids) == original.token_strings(ids)
    assert (saved.bos_id, saved.eos_id, saved.pad_id) == (original.eos_id,) * 3


def test_the_trainer_starts_from_the_given_weights_and_keeps_the_vocab(hub):
    model, tokenizer = load_hf_gpt2(ID, download=True)
    before = {name: t.clone() for name, t in model.state_dict().items()}
    assert tokenizer.vocab_size < model.config.vocab  # the fixture pads its vocab, as GPT-2 folders may
    config = train_config_for(None, steps=1, batch_size=2, seq_len=8, eval_every=0, sample_every=0)
    trainer = Trainer(None, config, tokenizer=tokenizer, model=model)
    assert trainer.model_config == model.config and trainer.notes == []
    assert all(torch.equal(t, before[name]) for name, t in trainer.model.state_dict().items())
    trainer.step()
    assert not torch.equal(trainer.model.tok_embed.weight, before["tok_embed.weight"])
    with pytest.raises(ValueError, match="^tokenizer: starting weights"):
        Trainer(None, config, model=model)
    with pytest.raises(ValueError, match="^model_config:"):
        Trainer(model.config.replace(d_ff=8), config, tokenizer=tokenizer, model=model)


def test_a_changed_dropout_rebuilds_the_model_around_the_same_weights(hub):
    model, tokenizer = load_hf_gpt2(ID, download=True)
    config = train_config_for(None, steps=1, batch_size=2, seq_len=8, dropout=0.0)
    trainer = Trainer(None, config, tokenizer=tokenizer, model=model)
    assert trainer.model_config.dropout == 0.0 and trainer.model is not model
    assert all(torch.equal(t, model.state_dict()[name]) for name, t in trainer.model.state_dict().items())
    assert trainer.model.lm_head.weight is trainer.model.tok_embed.weight  # still tied


def test_cached_model_trains_without_the_flag_and_without_the_hub(hub, text_file, capsys):
    assert main(_train("--download", "--data", str(text_file), "--steps", "1")) == 0
    hub.stop()
    capsys.readouterr()
    assert main(_train("--data", str(text_file), "--steps", "1")) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and json_lines(captured.out)[-1]["event"] == "done"


@pytest.mark.parametrize("extra, needle", [
    (["--preset", "gpt2-toy"], "drop --preset"),
    (["--task", "copy"], "drop --task"),
    (["--set", "task=copy"], "drop --task"),
    (["--tokenizer", "bpe"], "drop --tokenizer"),
    (["--vocab", "600"], "drop --vocab"),
    (["--layers", "2"], "drop --layers"),
    (["--set", "d_model=64"], "drop --d-model"),
    (["--resume", "somewhere"], "--resume continues the saved model"),
    (["--data", "missing.txt"], "does not exist"),
    (["--seq-len", "64"], "lower seq_len (the given weights fix max_len)"),  # the stand-in's 32 positions
])
def test_what_cannot_go_with_from_hf_is_one_line_before_the_weights_move(extra, needle, hub, capsys):
    assert main([*_train("--download"), *extra]) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.strip().splitlines() if line.startswith("tui-lab:")]
    assert len(lines) == 1 and needle in lines[0] and captured.out == "" and "Traceback" not in captured.err
    assert hub.requests == [] or extra[0] == "--seq-len"  # the model's own limit is known once it is here


def test_pickle_only_weights_need_allow_pickle_to_train(hub, capsys):
    argv = ["train", "--from-hf", "lab/pickle-only", *SMALL, "--download", "--steps", "1"]
    assert main(argv) == 2
    assert "a pickle; add --allow-pickle" in capsys.readouterr().err and hub.fetched() == []
    assert main([*argv, "--allow-pickle"]) == 0
    assert json_lines(capsys.readouterr().out)[-1]["event"] == "done" and hub.fetched()[-1] == "pytorch_model.bin"


@pytest.mark.parametrize("files", ["vocab.json + merges.txt", "tokenizer.json"])
def test_a_gpt2_tokenizer_from_either_file_layout_round_trips(files, sources, tmp_path):
    from tui_lab.data.tokenizers import Tokenizer
    from tui_lab.hf.tokenizer import gpt2_hf_tokenizer, wrap_gpt2

    folder = sources["safetensors"]
    if files == "tokenizer.json":  # what transformers writes (and the Hub's gpt2 repo holds)
        folder = tmp_path / "fast"
        transformers.GPT2TokenizerFast.from_pretrained(sources["safetensors"]).save_pretrained(folder)
        assert (folder / "tokenizer.json").is_file()  # read before vocab.json + merges.txt
    original = wrap_gpt2(gpt2_hf_tokenizer(folder))
    original.save(tmp_path / "saved")
    loaded = Tokenizer.load(tmp_path / "saved")
    ids = original.encode(MIXED_TEXT)
    assert loaded == original and loaded.kind == "gpt2" and loaded.encode(MIXED_TEXT) == ids
    assert loaded.decode(ids) == MIXED_TEXT and loaded.eos_id == original.eos_id is not None

"""`--download` on every command with `--from-hf`: refused without it (one line, exit 2, no request), the size
then progress on stderr with it (stdout stays the command's), Ctrl-C a clean stop. The Hub is the stand-in
of tests/support/hub_server.py (fixtures from test_hf_hub): no test reaches the internet.
"""

from __future__ import annotations

import json
import os
import signal

import hub_fixtures
import pytest
import torch

from tui_lab.cli import main
from tui_lab.hf.hub import locate

# The fixtures of test_hf_hub: a private HF cache (autouse) and the stand-in Hub serving tiny GPT-2 repos.
cache, hub, sources = hub_fixtures.cache, hub_fixtures.hub, hub_fixtures.sources
transformers = pytest.importorskip("transformers")
ID = "tiny-gpt2"
COMMANDS = {
    "info": ["info", "--from-hf", ID, "--json"],
    "generate": ["generate", "--from-hf", ID, "--prompt", "The quick", "--max-new-tokens", "3", "--json"],
    "bench": ["bench", "generate", "--from-hf", ID, "--new-tokens", "2", "--prompt-len", "2", "--repeats", "1",
              "--json"],
    "lens": ["lens", "--from-hf", ID, "--prompt", "The quick", "--json"],
    "ablate": ["ablate", "--from-hf", ID, "--text", "The quick brown fox", "--json"],
    "patch": ["patch", "--from-hf", ID, "--prompt", "a", "--corrupt", "b", "--answer-id", "1", "--wrong-id", "2",
              "--json"],
}

# train prints many JSON lines (tests/cli/test_cli_train_hf.py covers its download); the refusal is the same.
REFUSED = COMMANDS | {"train": ["train", "--from-hf", ID, "--steps", "1", "--seq-len", "8", "--json"]}


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tui-lab: error:") and captured.out == ""
    return lines[0]


@pytest.mark.parametrize("command", REFUSED)
def test_an_uncached_id_is_refused_without_download_and_the_hub_is_not_asked(command, hub, cache, capsys):
    assert main(REFUSED[command]) == 2
    line = _one_error_line(capsys)
    assert f"--from-hf {ID}: not in the local cache" in line and "add --download" in line
    assert hub.requests == []


@pytest.mark.parametrize("command", COMMANDS)
def test_download_prints_the_size_then_progress_on_stderr_and_stdout_stays_json(command, hub, capsys):
    assert main([*COMMANDS[command], "--download"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)  # the command's one JSON object, nothing else
    err = captured.err.splitlines()
    assert err[0].startswith(f"downloading {ID} (commit ") and "5 files, " in err[0] and "KiB" in err[0]
    assert err[-1].endswith("(100%), 5 of 5 files done")  # a pipe: one line per finished file
    assert hub.fetched()[-1] == "model.safetensors" and locate(ID) is not None
    assert main(COMMANDS[command]) == 0  # cached now: no flag needed, nothing asked of the Hub
    assert capsys.readouterr().err == "" and len(hub.fetched()) == 5


def test_generate_download_is_greedy_like_transformers_on_the_same_folder(hub, capsys):
    argv = ["generate", "--from-hf", ID, "--download", "--prompt", "The quick brown", "--temperature", "0",
            "--max-new-tokens", "10", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    reference = transformers.GPT2LMHeadModel.from_pretrained(locate(ID)).eval()
    prompt = torch.tensor([out["prompt_ids"]])
    theirs = reference.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=10, do_sample=False,
                                eos_token_id=None, pad_token_id=0)
    assert out["ids"] == theirs[0, prompt.shape[1]:].tolist() and out["new_tokens"] == 10


def test_flags_without_from_hf_and_pickles_are_refused_in_one_line(hub, capsys):
    assert main(["info", "--preset", "gpt2-toy", "--download"]) == 2
    assert "--download only goes with --from-hf" in _one_error_line(capsys)
    assert main(["generate", "--preset", "gpt2-toy", "--prompt", "x", "--allow-pickle"]) == 2
    assert "--allow-pickle only goes with --from-hf" in _one_error_line(capsys)
    assert main(["train", "--steps", "1", "--download"]) == 2
    assert "--download only goes with --from-hf" in _one_error_line(capsys)
    assert main(["info", "--from-hf", "lab/pickle-only", "--download"]) == 2
    assert "a pickle; add --allow-pickle" in _one_error_line(capsys)
    assert hub.fetched() == []
    assert main(["info", "--from-hf", "lab/pickle-only", "--download", "--allow-pickle", "--json"]) == 0
    assert hub.fetched()[-1] == "pytorch_model.bin"


def test_offline_and_uncached_is_refused_without_a_request(hub, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main([*COMMANDS["info"], "--download"]) == 2
    assert "HF_HUB_OFFLINE is set" in _one_error_line(capsys)
    assert main(["--from-hf", ID]) == 2  # the app refuses before it starts: its modal could only fail
    assert "HF_HUB_OFFLINE is set" in _one_error_line(capsys)
    assert hub.requests == []


def test_the_app_launch_refuses_what_is_neither_a_folder_nor_an_id(hub, tmp_path, capsys):
    assert main(["--from-hf", "no/such/folder"]) == 2
    assert "does not exist" in _one_error_line(capsys)
    assert main(["--from-hf", str(tmp_path)]) == 2
    assert "not a GPT-2 checkpoint folder" in _one_error_line(capsys)
    assert main(["--preset", "gpt2-toy", "--download"]) == 2
    assert "--download only goes with --from-hf" in _one_error_line(capsys)
    assert hub.requests == []


def test_ctrl_c_stops_the_download_cleanly_and_a_rerun_finishes_it(hub, monkeypatch, capsys):
    from huggingface_hub import constants

    from tui_lab.cli import model_args

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 4096)  # the weights come in many chunks
    show = model_args._ProgressPrinter.progress

    def progress(self, p) -> None:
        show(self, p)
        if p.file == "model.safetensors" and p.files_done == 4 and p.done > 30_000:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends, mid-weights

    monkeypatch.setattr(model_args._ProgressPrinter, "progress", progress)
    before = signal.getsignal(signal.SIGINT)
    assert main([*COMMANDS["generate"], "--download"]) == 130
    err = capsys.readouterr().err
    assert "download cancelled at" in err and "nothing partial was kept" in err and "Traceback" not in err
    assert locate(ID) is None
    assert signal.getsignal(signal.SIGINT) is before  # Ctrl-C means interrupt again after the download
    assert main(COMMANDS["generate"]) == 2  # still refused: nothing half-loaded counts as cached
    monkeypatch.setattr(model_args._ProgressPrinter, "progress", show)
    assert main([*COMMANDS["generate"], "--download"]) == 0
    assert hub.fetched().count("config.json") == 1  # the finished files were kept, not fetched again
